"""np.where(condition, x, y): the adjoint is selected by the condition's truth. It was g
times the condition (and g times `not condition`): a float or int condition scaled the
gradient by its values (`np.where(w, a, b)` with weights w, labels, counts), and an inf
or nan of g where the other branch was taken came back as nan (`np.sqrt(np.where(v > 0,
v, 0))` at v <= 0), where JAX's where, which selects, gives 0."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient

V = np.array([0.7, -1.2, 2.6, -2.2, 0.4, 1.5])
W = np.array([0.0, 2.0, 0.5, 0.0, -1.5, 1.0])  # float weights used as the condition
LABELS = np.array([0, 1, 2, 0, 3, 1])


def float_condition(v):
    return np.sum(np.where(W, v ** 2, np.sin(v)))


def int_condition(v):
    return np.sum(np.where(LABELS, v * 3.0, v ** 3))


def count_condition(a):
    counts = np.sum(a > 0, axis=1, keepdims=True)  # 0, 1 or 2 per row: an int condition
    return np.sum(np.where(counts, a * a, -a))


def truthy_scalar(x):
    return np.where(2.0, x ** 2, x)


def sqrt_of_where(v):
    return np.sum(np.sqrt(np.where(v > 0, v, 0.0)))


def nansum_of_where(v):
    return np.nansum(np.where(v > 0, v * v, np.nan))


def condition_argument(v, c):
    return np.sum(np.where(c, np.tanh(v), v * v))


CASES = [
    (float_condition, V),
    (int_condition, V),
    (count_condition, np.array([[0.5, -1.0, 2.0], [-0.3, -0.4, -2.0], [1.5, 0.2, 0.9]])),
    (truthy_scalar, 0.7),
    (sqrt_of_where, V),
    (nansum_of_where, V),
]


@pytest.mark.parametrize("f, x", CASES, ids=[c[0].__name__ for c in CASES])
def test_where_against_finite_differences(f, x):
    got = ad.gradient(f, x)[0]
    np.testing.assert_allclose(got, numerical_gradient(f, x)[0], rtol=1e-6, atol=1e-8)


def test_condition_passed_in():
    c = np.array([1.0, 0.0, 2.5, 0.0, -1.0, 0.0])
    got = ad.gradient(condition_argument, V, c)
    np.testing.assert_allclose(got[0], numerical_gradient(lambda v: condition_argument(v, c), V)[0], rtol=1e-6)
    assert got[1] is None or not np.any(got[1])  # no gradient to the condition


@pytest.mark.parametrize("f", [float_condition, int_condition])
def test_where_second_order(f):
    u = np.array([0.3, -0.1, 0.2, 0.5, -0.4, 0.1])
    got = ad.hvp(f, V, u)
    want = numerical_gradient(lambda v: float(np.dot(ad.gradient(f, v)[0], u)), V)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
