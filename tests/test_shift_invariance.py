"""The max a softmax, log-softmax or logsumexp subtracts has no gradient (passes/invariance.py).

Where the pass proves that no result depends on the max's value, the generated code has
no adjoint for it (no ``_extremum_adjoint``); the gradients still match central
differences and the gradient of the same function written without the shift, first and
second order, ties included. Where it cannot prove it (another axis, a free array that
broadcasts, the shifted values returned or squared, a loop, a closure), the max keeps
its adjoint, and the gradient is right as well.
"""
import numpy as np
import pytest

import adjoint_s2s as ad

_rng = np.random.default_rng(3800001)
W = _rng.standard_normal((7, 5))
W3 = _rng.standard_normal((2, 7, 5))


def log_softmax(x):
    z = x - np.max(x, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return np.sum(logp * W)


def log_softmax_methods(x):
    z = x - x.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return np.sum(logp * W)


def softmax(x):
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    p = e / np.sum(e, axis=0, keepdims=True)
    return np.sum(p * W)


def softmax_min_shift(x):
    e = np.exp(x - np.min(x, axis=1, keepdims=True))
    return np.sum(e / e.sum(axis=1, keepdims=True) * W)


def softmax_all(x):
    e = np.exp(x - np.max(x))
    return np.sum(e / np.sum(e) * W)


def softmax_tempered(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True)) * 2.0
    p = e / (np.sum(e, axis=1, keepdims=True) * 2.0)
    return np.sum(p * W)


def logsumexp(x):
    m = np.max(x, axis=1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True))
    return np.sum(lse * W[:, :1])


def logmeanexp_all(x):
    m = np.max(x)
    return m + np.log(np.mean(np.exp(x - m)))


def log_softmax_3d(x3):
    z = x3 - np.max(x3, axis=2, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=2, keepdims=True))
    return np.sum(logp * W3)


def in_a_loop(x):
    s = 0.0
    for k in range(2):
        m = np.max(x, axis=1, keepdims=True)
        e = np.exp(x - m)
        s = s + np.sum(e / np.sum(e, axis=1, keepdims=True) * W) * (k + 1)
    return s


FREE = [log_softmax, log_softmax_methods, softmax, softmax_min_shift, softmax_all,
        softmax_tempered, logsumexp, logmeanexp_all, in_a_loop]

# the same functions without the shift (fine for inputs of moderate size)
UNSHIFTED = {
    log_softmax: lambda x: np.sum((x - np.log(np.sum(np.exp(x), axis=1, keepdims=True))) * W),
    softmax: lambda x: np.sum(np.exp(x) / np.sum(np.exp(x), axis=0, keepdims=True) * W),
    logsumexp: lambda x: np.sum(np.log(np.sum(np.exp(x), axis=1, keepdims=True)) * W[:, :1]),
    logmeanexp_all: lambda x: np.log(np.mean(np.exp(x))),
}


def returns_z(x):
    z = x - np.max(x, axis=1, keepdims=True)
    return np.sum(z * W)


def squares_z(x):
    z = x - np.max(x, axis=1, keepdims=True)
    return np.sum(z * z)


def sums_other_axis(x):
    z = x - np.max(x, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=0, keepdims=True))
    return np.sum(logp * W)


def sum_without_keepdims(x):
    z = x - np.max(x, axis=0, keepdims=True)
    e = np.exp(z)
    return np.sum(e[0] / np.sum(e, axis=0) * W[0])


def times_free_array(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return np.sum(e * W / np.sum(e, axis=1, keepdims=True))


def broadcasts_to_more_axes(x):
    z = x - np.max(x, axis=1, keepdims=True)
    zz = z + W3  # (2, 7, 5): axis 1 is no longer the max's axis
    logp = zz - np.log(np.sum(np.exp(zz), axis=1, keepdims=True))
    return np.sum(logp)


def tempered_inside(x):
    z = x - np.max(x, axis=1, keepdims=True)
    e = np.exp(z * 0.5)
    return np.sum(e / np.sum(e, axis=1, keepdims=True) * W)


def max_returned_too(x):
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(x - m)
    return np.sum(e / np.sum(e, axis=1, keepdims=True) * W) + np.sum(m)


def read_after_the_loop(x):
    for _ in range(2):
        m = np.max(x, axis=1, keepdims=True)
        z = x - m
    return np.sum((z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))) * W)


def closure_reads_z(x):
    z = x - np.max(x, axis=1, keepdims=True)
    f = lambda t: t + z  # noqa: E731
    return np.sum(np.exp(f(0.0)) * W)


def a_rebound(x):
    y = x * 1.0
    m = np.max(y, axis=1, keepdims=True)
    y = y * 2.0
    z = y - m
    return np.sum((z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))) * W)


KEPT = [returns_z, squares_z, sums_other_axis, sum_without_keepdims, times_free_array,
        broadcasts_to_more_axes, tempered_inside, max_returned_too, read_after_the_loop,
        closure_reads_z, a_rebound]


def _x(f, trial):
    shape = (7, 5)
    if f is log_softmax_3d:
        shape = (2, 7, 5)
    if f is broadcasts_to_more_axes:
        shape = (7, 5)
    if trial % 2:
        return _rng.integers(-2, 3, size=shape).astype(float)  # many ties in every row
    return 2.0 * _rng.standard_normal(shape)


def _fd_directional(f, x, v, eps=1e-6):
    return (f(x + eps * v) - f(x - eps * v)) / (2 * eps)


def _check_against_differences(f, x):
    g = ad.gradient(f, x)[0]
    assert g.shape == x.shape and np.all(np.isfinite(g))
    for _ in range(3):
        v = _rng.standard_normal(x.shape)
        np.testing.assert_allclose(np.sum(g * v), _fd_directional(f, x, v), rtol=1e-6, atol=1e-8)
    v = _rng.standard_normal(x.shape)
    hv = ad.hvp(f, x, v)
    hv = np.zeros_like(x) if hv is None else hv  # a gradient that does not depend on x
    fd2 = _fd_directional(lambda y: ad.gradient(f, y)[0], x, v, eps=1e-5)
    np.testing.assert_allclose(hv, fd2, rtol=1e-5, atol=1e-6)
    return g


@pytest.mark.parametrize("f", FREE + [log_softmax_3d], ids=lambda f: f.__name__)
def test_the_max_of_a_softmax_has_no_adjoint(f):
    x = _x(f, 0)
    for fused in (False, True):
        text = ad.show_adjoint(f, x, fused=fused)
        assert "_extremum_adjoint" not in text and "shifted_zeros" not in text, text
        assert "b_m " not in text and "b_max_" not in text


@pytest.mark.parametrize("f", FREE + [log_softmax_3d], ids=lambda f: f.__name__)
@pytest.mark.parametrize("trial", range(4))
def test_free_forms_match_differences_first_and_second_order(f, trial):
    x = _x(f, trial)
    value, pb = ad.pullback(f, x)
    assert value == f(x)
    g = _check_against_differences(f, x)
    np.testing.assert_array_equal(pb(1.0)[0], g)
    if f in UNSHIFTED:
        np.testing.assert_allclose(g, ad.gradient(UNSHIFTED[f], x)[0], rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("f", KEPT, ids=lambda f: f.__name__)
def test_forms_not_free_of_the_shift_keep_the_max_adjoint(f):
    x = _x(f, 0)
    text = ad.show_adjoint(f, x)
    assert "_extremum_adjoint" in text, text


@pytest.mark.parametrize("f", KEPT, ids=lambda f: f.__name__)
def test_forms_not_free_of_the_shift_match_differences(f):
    # random rows: no ties, so the max is differentiable where it matters
    x = _x(f, 0)
    value, pb = ad.pullback(f, x)
    assert value == f(x)
    _check_against_differences(f, x)


def test_float32_and_large_logits():
    # the shift is what keeps exp finite: the gradient stays finite and right
    x = (300.0 * _rng.standard_normal((7, 5))).astype(np.float32)
    g = ad.gradient(log_softmax, x)[0]
    assert g.dtype == np.float32 and np.all(np.isfinite(g))
    z = x.astype(np.float64) - x.max(axis=1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    want = W - p * W.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
