"""The max-shift ``z = a - np.max(a, axis, keepdims=True)`` (passes/reverse/shifted.py):
the forward keeps ``_rt.shifted_zeros(z, a, m)`` (where z is 0) and the max's adjoint
reads it in place of the comparison ``a == m``.

Checked: shifted_zeros is ``a == m`` wherever it is not None, and None for anything it
does not recognise; the gradients with it are bit for bit those without it (ties, -0.0
and 0.0, infinities, NaN, subnormals, float32, 2-D and 3-D, axes, max and min), and
match finite differences and second order; the pass hands it over only where z surely
is a - m of the very arrays the adjoint receives.
"""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.rules.numpy import extremum as ext

_rng = np.random.default_rng(3400001)


def _data(shape, dtype, trial):
    """Random rows, some with ties, signed zeros, infinities, NaN or subnormals."""
    if trial % 3 == 0:
        a = _rng.integers(-3, 3, size=shape).astype(dtype)  # many ties
    else:
        a = _rng.standard_normal(shape).astype(dtype)
    flat = a.reshape(-1)
    k = trial % 6
    if k == 1:
        flat[_rng.integers(0, a.size, 6)] = -0.0
        flat[_rng.integers(0, a.size, 6)] = 0.0
    elif k == 2:
        flat[_rng.integers(0, a.size, 2)] = np.inf
    elif k == 3:
        flat[_rng.integers(0, a.size, 2)] = np.nan
    elif k == 4:
        flat[_rng.integers(0, a.size, 2)] = -np.inf
    elif k == 5:
        tiny = np.finfo(dtype).smallest_subnormal
        flat[:4] = [tiny, 2 * tiny, -tiny, 0.0]
    return a


@pytest.fixture
def every_size(monkeypatch):
    monkeypatch.setattr(ext, "_SHIFT_MIN", 1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("top", [True, False])
def test_shifted_zeros_is_the_comparison_or_none(every_size, dtype, top):
    for trial in range(36):
        shape = [(40, 7), (5, 6, 4), (3, 50)][trial % 3]
        a = _data(shape, dtype, trial)
        for axis in range(a.ndim):
            with np.errstate(invalid="ignore"):
                m = np.max(a, axis, keepdims=True) if top else np.min(a, axis, keepdims=True)
                z = a - m
            got = ext.shifted_zeros(z, a, m)
            if np.isfinite(m).all():
                assert got is not None and got.dtype == bool
                assert np.array_equal(got, a == m)
            else:
                assert got is None


def test_shifted_zeros_refuses_what_it_does_not_recognise(every_size):
    a = _rng.standard_normal((20, 5))
    m = a.max(1, keepdims=True)
    z = a - m
    assert ext.shifted_zeros(z, a, m) is not None
    assert ext.shifted_zeros(z, a, a.max(1)) is None  # not kept: a - m paired other elements
    assert ext.shifted_zeros(z.astype(np.float32), a, m) is None
    assert ext.shifted_zeros(z, a.astype(np.float32), m) is None
    assert ext.shifted_zeros(z[:, :4], a, m) is None
    assert ext.shifted_zeros(z.view(np.matrix), a, m) is None
    assert ext.shifted_zeros(z.tolist(), a, m) is None
    ai = np.arange(100).reshape(20, 5)
    mi = ai.max(1, keepdims=True)
    assert ext.shifted_zeros(ai - mi, ai, mi) is None
    ac = a.astype(complex)
    assert ext.shifted_zeros(ac - ac[:, :1], ac, ac[:, :1]) is None
    m2 = m.copy()
    m2[3] = np.nan
    assert ext.shifted_zeros(a - m2, a, m2) is None
    e = np.zeros((0, 5))
    assert ext.shifted_zeros(e, e, np.zeros((0, 1))) is None


def test_small_arrays_keep_the_comparison():
    a = _rng.standard_normal((8, 5))
    m = a.max(1, keepdims=True)
    assert ext.shifted_zeros(a - m, a, m) is None  # (fewer than _SHIFT_MIN elements)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_adjoints_with_zeros_are_those_without(every_size, monkeypatch, dtype):
    for trial in range(30):
        shape = [(64, 9), (4, 5, 6), (2, 300)][trial % 3]
        a = _data(shape, dtype, trial)
        for axis in (-1, 0, 1):
            for top in (True, False):
                monkeypatch.setattr(ext, "_HINT", [None])
                with np.errstate(invalid="ignore"):
                    m = (ext.np_max if top else ext.np_min)(a, axis, keepdims=True)
                    zeros = ext.shifted_zeros(a - m, a, m)
                g = _rng.standard_normal(m.shape).astype(dtype)
                acc = _rng.standard_normal(a.shape).astype(dtype)
                with np.errstate(all="ignore"):
                    want = ext.np_extremum_adjoint(g, a, m, axis, True)
                    got = ext.np_extremum_adjoint(g, a, m, axis, True, zeros)
                    want_acc = ext.acc_extremum_adjoint(acc.copy(), g, a, m, axis, True)
                    got_acc = ext.acc_extremum_adjoint(acc.copy(), g, a, m, axis, True, zeros)
                for w, x in ((want, got), (want_acc, got_acc)):
                    assert w.dtype == x.dtype and w.shape == x.shape
                    assert w.tobytes() == x.tobytes()


W = _rng.standard_normal(9)


def shift_max_last(x):
    m = np.max(x, axis=-1, keepdims=True)
    z = x - m
    return np.sum(np.exp(z) * W)


def shift_min_1(x):
    z = x - np.min(x, axis=1, keepdims=True)
    return np.sum(np.exp(-z) * W)


def shift_max_0(x):
    z = x - np.max(x, axis=0, keepdims=True)
    return np.sum(np.tanh(z) * W)


def shift_max_all(x):
    z = x - np.max(x, keepdims=True)
    return np.sum(np.exp(z) * W)


def softmax_xent(x):
    z = x - np.max(x, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(logp * W)


# (a log-softmax's max has no adjoint at all: tests/test_shift_invariance.py)
_SHIFTED = [shift_max_last, shift_min_1, shift_max_0, shift_max_all]


@pytest.mark.parametrize("f", _SHIFTED, ids=lambda f: f.__name__)
def test_the_pass_hands_the_zeros_over(f):
    x = _rng.standard_normal((30, 9))
    for fused in (False, True):
        text = ad.show_adjoint(f, x, fused=fused)
        assert "_rt.shifted_zeros(z, x, " in text
        assert "_extremum_adjoint(" in text and "z_zeros)" in text


@pytest.mark.parametrize("f", _SHIFTED, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradients_are_those_of_the_comparison(f, dtype, monkeypatch):
    for trial in range(12):
        shape = [(600, 9), (30, 4, 9)][trial % 2] if f is not shift_min_1 or trial % 2 == 0 else (600, 9)
        x = _data(shape, dtype, trial)
        with np.errstate(all="ignore"):
            monkeypatch.setattr(ext, "_SHIFT_MIN", 1)
            got = ad.gradient(f, x)
            value, pb = ad.pullback(f, x)
            got_pb = pb(1.0)
            monkeypatch.setattr(ext, "_SHIFT_MIN", 1 << 62)  # shifted_zeros gives None
            want = ad.gradient(f, x)
            want_pb = ad.pullback(f, x)[1](1.0)
        for w, g in ((want, got), (want_pb, got_pb)):
            assert w[0].dtype == g[0].dtype and w[0].tobytes() == g[0].tobytes()


def test_softmax_xent_matches_finite_differences_and_second_order():
    x = _rng.standard_normal((500, 9))
    g = ad.gradient(softmax_xent, x)[0]
    v = _rng.standard_normal(x.shape)
    eps = 1e-6
    fd = (softmax_xent(x + eps * v) - softmax_xent(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * v), fd, rtol=1e-6)
    hv = ad.hvp(softmax_xent, x, v)
    fd2 = (ad.gradient(softmax_xent, x + eps * v)[0] - ad.gradient(softmax_xent, x - eps * v)[0]) / (2 * eps)
    np.testing.assert_allclose(hv, fd2, rtol=1e-5, atol=1e-7)


def _rebinds_a(x):
    m = np.max(x, axis=1, keepdims=True)
    z = x - m
    x = x * 2.0
    return np.sum(np.exp(z) * x)


def _writes_z(x):
    m = np.max(x, axis=1, keepdims=True)
    z = x - m
    z[0, 0] = 1.0
    return np.sum(np.exp(z))


def _writes_a(x):
    x = x * 1.0
    m = np.max(x, axis=1, keepdims=True)
    x[0, 0] = 5.0
    z = x - m
    return np.sum(np.exp(z))


def _out_into_m(x):
    m = np.max(x, axis=1, keepdims=True)
    np.exp(m, out=m)
    z = x - m
    return np.sum(np.exp(z))


def _view_of_a(x):
    m = np.max(x, axis=1, keepdims=True)
    v = x.T
    z = x - m
    return np.sum(np.exp(z)) + np.sum(v)


def _in_a_loop(x):
    s = 0.0
    for _ in range(2):
        m = np.max(x, axis=1, keepdims=True)
        z = x - m
        s = s + np.sum(np.exp(z))
    return s


def _reversed(x):
    m = np.max(x, axis=1, keepdims=True)
    z = m - x
    return np.sum(np.exp(z))


def _passed_on(x):
    m = np.max(x, axis=1, keepdims=True)
    z = x - m
    return np.sum(_user(z))


def _user(z):
    z += 1.0
    return z


def _under_if(x):
    if x.shape[0] > 1:
        m = np.max(x, axis=1, keepdims=True)
        z = x - m
    else:
        z = x
    return np.sum(np.exp(z))


@pytest.mark.parametrize("f", [_rebinds_a, _writes_z, _writes_a, _out_into_m, _view_of_a,
                               _in_a_loop, _reversed, _passed_on, _under_if],
                         ids=lambda f: f.__name__)
def test_no_zeros_where_z_may_not_be_a_minus_m(f):
    x = _rng.standard_normal((600, 9))
    try:
        text = ad.show_adjoint(f, x, fused=True)
    except Exception:  # (a refused function: no pair at all)
        return
    assert "shifted_zeros" not in text
