"""Second order through the scalar adjoints whose array branches silence NumPy's division
warnings (rules/scalar_adjoints.py's `_quiet`, a `with` block): the builtin `abs` of an
array, `1 / a`, `a ** b` of arrays. Differentiated again they were refused with a
message naming adjoint_s2s's own helper; `_quiet` has a rule now."""
import numpy as np
import pytest

import adjoint_s2s as ad


def central(f, x, h=1e-6):
    g = np.zeros(x.shape)
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def cube_of_abs(a):
    return np.sum(abs(a) ** 3)


def reciprocal(a):
    return np.sum(1.0 / a)


def power_of_arrays(a):
    return np.sum(a ** (a * 0.5 + 1.0))


@pytest.mark.parametrize("f, a", [
    (cube_of_abs, np.array([0.7, -1.3, 2.0])),
    (reciprocal, np.array([0.7, -1.3, 2.0])),
    (power_of_arrays, np.array([0.7, 1.3, 2.0])),
], ids=lambda v: getattr(v, "__name__", None))
def test_hessian_vector_products(f, a):
    w = np.array([0.3, -0.5, 0.8])

    def hv(x):
        return np.sum(ad.gradient(f, x)[0] * w)

    assert np.allclose(ad.gradient(hv, a)[0], central(hv, a), rtol=1e-5, atol=1e-7)
