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


@pytest.mark.parametrize("dts", [
    (np.float64, np.float64, np.float64),  # the float64 matrices' shortcut
    (np.float32, np.float64, np.float64),  # the others: the dtype tested after the product
    (np.float64, np.float32, np.float32),
    (np.float32, np.float32, np.float32),
    (np.complex128, np.float64, np.complex128),
])
def test_matmul_adjoints_keep_their_arguments_dtypes(dts):
    rng = np.random.default_rng(1)
    a, b, g = (rng.normal(size=s).astype(d) for s, d in zip([(3, 4), (4, 2), (3, 2)], dts))
    ga, gb = matmul_adjoint_a(g, a, b), matmul_adjoint_b(g, a, b)
    assert ga.shape == a.shape and gb.shape == b.shape
    assert ga.dtype == a.dtype and gb.dtype == b.dtype
    want_a, want_b = g @ b.conj().T, a.conj().T @ g
    want_a, want_b = (w if np.iscomplexobj(x) else w.real for w, x in ((want_a, a), (want_b, b)))
    np.testing.assert_allclose(ga, want_a.astype(a.dtype), rtol=1e-5)
    np.testing.assert_allclose(gb, want_b.astype(b.dtype), rtol=1e-5)
    if dts == (np.float64,) * 3:  # the product itself, bit for bit
        assert np.array_equal(ga, g @ b.T) and np.array_equal(gb, a.T @ g)
