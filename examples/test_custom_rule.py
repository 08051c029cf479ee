"""A custom rule and its tests, as a pytest file: `pytest examples/test_custom_rule.py`.

`logsumexp` computed the naive way overflows for large inputs; the stable form shifts by
the maximum, and its derivative is the softmax. The rule below keeps the softmax from
the forward pass, so the pullback is one multiplication. `ad.test_rrule` checks the rule
against finite differences (value, number of tangents, every tangent, thunked input);
`ad.check_grads` checks a whole model that uses it.
"""
import numpy as np
import pytest

import adjoint_s2s as ad


def logsumexp(z, *, axis=-1):
    """log(sum(exp(z))) along axis, without overflow."""
    m = np.max(z, axis=axis, keepdims=True)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(z - m), axis=axis))


# `axis` is keyword-only: keyword arguments get no tangent, so the pullback returns the
# function's own tangent and one for `z`. (With `axis` positional, the pullback would
# have to return a tangent for it only when the caller passes it positionally.)
@ad.rrule(logsumexp)
def _(z, *, axis=-1):
    m = np.max(z, axis=axis, keepdims=True)
    e = np.exp(z - m)
    s = np.sum(e, axis=axis, keepdims=True)
    softmax = e / s

    def logsumexp_pullback(dy):
        return ad.NoTangent(), np.expand_dims(dy, axis) * softmax

    return np.squeeze(m + np.log(s), axis=axis), logsumexp_pullback


def cross_entropy(w, x, labels):
    logits = x @ w
    picked = logits[np.arange(len(labels)), labels]
    return np.mean(logsumexp(logits, axis=1) - picked)


RNG = np.random.default_rng(0)


def test_logsumexp_rule():
    ad.test_rrule(logsumexp, RNG.normal(size=5))
    ad.test_rrule(logsumexp, RNG.normal(size=(3, 4)))


@pytest.mark.parametrize("axis", [0, 1])
def test_logsumexp_rule_along_an_axis(axis):
    # test_rrule passes positional arguments only: a lambda fixes the keyword
    ad.test_rrule(lambda z: logsumexp(z, axis=axis), RNG.normal(size=(3, 4)))


def test_logsumexp_rule_for_large_inputs():
    z = np.array([1000.0, 1001.0, 999.0])
    assert np.isfinite(logsumexp(z))
    ad.test_rrule(logsumexp, z)


def test_model_gradient_matches_finite_differences():
    x = RNG.normal(size=(8, 3))
    labels = np.array([0, 1, 2, 1, 0, 2, 2, 1])
    ad.check_grads(cross_entropy, RNG.normal(size=(3, 3)), x, labels)


def test_a_wrong_rule_is_caught():
    def halfsquare(x):
        return 0.5 * x * x

    @ad.rrule(halfsquare)
    def _(x):
        return halfsquare(x), lambda dy: (ad.NoTangent(), 2.0 * dy * x)   # should be dy * x

    with pytest.raises(AssertionError, match="halfsquare"):
        ad.test_rrule(halfsquare, 1.5)
