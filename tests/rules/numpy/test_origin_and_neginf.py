"""Points where a rule's partial derivative is 0/0 or exp(-inf - -inf): np.arctan2 and
np.hypot at the origin take the subgradient 0, as math.atan2 and math.hypot do (arrays
gave NaN, Python floats a ZeroDivisionError from generated code), and a log-sum-exp whose
terms are all -inf gives its terms weight 0 (NaN before, carried on by a zero cotangent
into every gradient: an HMM forward pass in log space that starts in one state)."""
import numpy as np
import pytest
from scipy import special

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient

NEG = -np.inf


def heading(vx, vy):
    cost = 0.0
    for _ in range(3):
        cost += np.arctan2(vy, vx) ** 2
        vx, vy = vx + 0.03, vy + 0.01
    return cost


def test_arctan2_of_python_floats_at_the_origin():
    got = ad.gradient(heading, 0.0, 0.0)
    # the first step sits at the origin (subgradient 0); the later ones are smooth
    want = ad.gradient(lambda a, b: heading(a, b) - np.arctan2(b, a) ** 2, 0.0, 0.0)
    assert np.allclose(got, want) and np.all(np.isfinite(got))


def pairwise(p):
    d = np.hypot(p[:, None, 0] - p[None, :, 0], p[:, None, 1] - p[None, :, 1])
    return np.sum(d)


def test_hypot_of_arrays_at_the_origin_is_the_norms_subgradient():
    p = np.array([[0.0, 0.0], [0.3, 0.4], [1.0, -0.5]])
    got = ad.gradient(pairwise, p)[0]
    want = numerical_gradient(pairwise, p)[0]
    assert np.allclose(got, want, atol=1e-6)
    assert ad.gradient(lambda a, b: np.hypot(a, b), 0.0, 0.0) == (0.0, 0.0)


@pytest.mark.parametrize("lse", [
    lambda w: np.logaddexp(np.logaddexp(NEG + w, NEG), 0.0) + w,
    lambda w: np.logaddexp2(np.logaddexp2(NEG + w, NEG), 0.0) + w,
    lambda w: special.logsumexp(np.array([special.logsumexp(np.array([NEG + w, NEG])), 0.0])) + w,
    lambda w: np.logaddexp.reduce(np.array([np.logaddexp.reduce(np.array([NEG + w, NEG])), 0.0])) + w,
])
def test_a_log_sum_exp_of_minus_infinities_weights_them_zero(lse):
    assert ad.gradient(lse, 0.7)[0] == pytest.approx(1.0)


def hmm_forward(w):
    logA = np.log(np.array([[0.6, 0.4, 0.0], [0.0, 0.7, 0.3], [0.0, 0.0, 1.0]]) + 0.0)
    alpha = np.array([0.0, NEG, NEG]) + np.array([w[0], w[1], w[2]])
    for t in range(3):
        alpha = np.array([np.logaddexp.reduce(alpha + logA[:, j]) for j in range(3)]) + w[t]
    return np.logaddexp.reduce(alpha)


def test_a_left_to_right_forward_pass_in_log_space():
    w = np.array([0.3, -0.2, 0.1])
    with np.errstate(divide="ignore"):
        got = ad.gradient(hmm_forward, w)[0]
        want = numerical_gradient(hmm_forward, w)[0]
    assert np.all(np.isfinite(got)) and np.allclose(got, want, atol=1e-6)


def test_second_order_through_logaddexp_at_dead_entries():
    def f(w):
        return np.log(np.sum(np.exp(np.logaddexp(np.array([NEG, w]), np.array([NEG, 0.0])))))

    got = ad.hessian(f, 0.5)
    want = numerical_gradient(lambda v: ad.gradient(f, v)[0], 0.5)[0]
    assert np.isfinite(got) and got == pytest.approx(want, rel=1e-5)
