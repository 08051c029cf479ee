"""Axis forms the rules crashed on (an AxisError or a TypeError inside adjoint_s2s): a
1-D `x` for `np.trapezoid` along another axis than the last of a 2-D y, and a tuple of
axes for `np.median`, `np.percentile`, `np.quantile`. Found by a probe of numerical
programs."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient

Y = np.array([[0.3, 1.2, -0.5, 0.8], [1.1, -0.7, 0.4, 0.2], [0.9, 0.6, -1.3, 0.5]])
XS = np.array([0.0, 0.4, 1.1, 1.5])
T = np.random.default_rng(3).standard_normal((3, 4, 5))


def trap_y(y):
    return np.sum(np.trapezoid(y * y, x=XS, axis=1))


def trap_x(x):
    return np.sum(np.trapezoid(Y, x=np.cumsum(x), axis=1) ** 2)


def trap_x_axis0(x):
    return np.sum(np.trapezoid(Y.T, x=np.cumsum(x), axis=0) ** 2)


def median_02(t):
    return np.sum(np.median(t * t, axis=(0, 2)) * np.array([1.0, -2.0, 0.5, 3.0]))


def median_neg_keepdims(t):
    return np.sum(np.median(np.sin(t), axis=(-1, 0), keepdims=True) ** 2)


def percentile_12(t):
    return np.sum(np.percentile(t, [25.0, 80.0], axis=(1, 2)) * np.array([[1.0], [2.0]]))


def quantile_01(t):
    return np.sum(np.quantile(np.tanh(t), 0.3, axis=(0, 1)))


CASES = [
    (trap_y, Y), (trap_x, np.array([0.0, 0.4, 0.7, 0.4])), (trap_x_axis0, np.array([0.0, 0.4, 0.7, 0.4])),
    (median_02, T), (median_neg_keepdims, T), (percentile_12, T), (quantile_01, T),
]


@pytest.mark.parametrize("f, x", CASES, ids=[c[0].__name__ for c in CASES])
def test_against_finite_differences(f, x):
    np.testing.assert_allclose(ad.gradient(f, x)[0], numerical_gradient(f, x)[0], rtol=1e-5, atol=1e-7)


def test_tuple_axis_second_order():
    u = np.random.default_rng(4).standard_normal(T.shape)
    got = ad.hvp(median_02, T, u)
    want = numerical_gradient(lambda t: float(np.sum(ad.gradient(median_02, t)[0] * u)), T)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
