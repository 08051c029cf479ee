"""runtime/numeric.py: digamma and its derivatives, the adjoints of a @ b."""
import math

import numpy as np
import pytest

from adjoint_s2s.runtime.numeric import (
    digamma, matmul_adjoint_a, matmul_adjoint_b, polygamma2, trigamma, trunc_div,
)


@pytest.mark.parametrize("x", [0.3, 1.0, 2.5, 12.0, -0.5])
def test_digamma_is_the_derivative_of_lgamma_and_trigamma_of_digamma(x):
    h = 1e-6
    assert digamma(x) == pytest.approx((math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h), rel=1e-6)
    assert trigamma(x) == pytest.approx((digamma(x + h) - digamma(x - h)) / (2 * h), rel=1e-5)
    assert polygamma2(x) == pytest.approx((trigamma(x + h) - trigamma(x - h)) / (2 * h), rel=1e-4)


def test_digamma_known_values_and_poles():
    assert digamma(1.0) == pytest.approx(-0.5772156649015329, abs=1e-12)
    assert math.isnan(digamma(-2.0)) and math.isnan(trigamma(0.0))
    assert trunc_div(-7.0, 2.0) == -3.0


def test_matmul_adjoints_are_the_transposed_products():
    rng = np.random.default_rng(0)
    a, b, g = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(3, 2))
    np.testing.assert_allclose(matmul_adjoint_a(g, a, b), g @ b.T)
    np.testing.assert_allclose(matmul_adjoint_b(g, a, b), a.T @ g)
    v = rng.normal(size=4)
    np.testing.assert_allclose(matmul_adjoint_b(g[:, 0], a, v), a.T @ g[:, 0])
    np.testing.assert_allclose(matmul_adjoint_a(g[:, 0], a, v), np.outer(g[:, 0], v))
