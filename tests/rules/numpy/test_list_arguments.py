"""NumPy functions given Python lists of numbers, as NumPy takes them (the array
np.asarray makes). The rules computed on the raw list: `2 * [a, b]` repeats it, `1 +
[a]` raises; at the second order np.prod, np.var and np.linalg.norm of a list gave nan.
Found by a probe written in the style of other AD libraries' test suites."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient


def arctan_of_list(a, b):
    return np.sum(np.arctan([a, 0.25, b]))


def square_of_nested(a, b):
    return np.sum(np.square([[a, b], [b, 1.5]]))


def divide_lists(a, b):
    return np.sum(np.divide([a, 2.0], [b, 0.3]))


def log1p_of_tuple(a, b):
    return np.sum(np.log1p((a, b * b)))


def arctan2_lists(a, b):
    return np.sum(np.arctan2([a, 2.0], [b, 0.3]))


def prod_with_constant(a, b):
    return np.prod([a, 2.0, b])


def norm_of_list(a, b):
    return np.linalg.norm([a, b, 1.0])


def var_of_list(a, b):
    return np.var([a, 2.0, b])


def power_lists(a, b):
    return np.sum(np.power([a, 1.5], [b, 2.0]))


def prod_axis(a, b):
    return np.sum(np.prod([[a, b], [2.0, a]], axis=1))


def concatenate_arrays(a, b):  # (a list of arrays: as before)
    return np.sum(np.concatenate([np.array([a, b]), np.array([b * b])]) ** 2)


FUNCS = [arctan_of_list, square_of_nested, divide_lists, log1p_of_tuple, arctan2_lists,
         prod_with_constant, norm_of_list, var_of_list, power_lists, prod_axis, concatenate_arrays]
A, B = 0.7, 0.4
EPS = 1e-6


def _fd(f, a, b):
    return ((f(a + EPS, b) - f(a - EPS, b)) / (2 * EPS), (f(a, b + EPS) - f(a, b - EPS)) / (2 * EPS))


@pytest.mark.parametrize("f", FUNCS, ids=[f.__name__ for f in FUNCS])
def test_first_order(f):
    y, back = ad.pullback(f, A, B)
    assert y == pytest.approx(f(A, B))
    assert back(1.0) == pytest.approx(_fd(f, A, B), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("f", FUNCS, ids=[f.__name__ for f in FUNCS])
def test_second_order(f):
    def d_a(a, b):
        return ad.gradient(f, a, b)[0]

    got = ad.gradient(d_a, A, B)
    assert got == pytest.approx(_fd(d_a, A, B), rel=1e-5, abs=1e-6)


def test_rows_of_ints_beside_rows_of_floats():
    def f(a, b):
        return np.sum(np.square([[a, b], [1, 2]]))

    assert ad.gradient(f, A, B) == pytest.approx((2 * A, 2 * B))


V3 = np.array([0.3, -0.5, 1.2])


def array_times_list(v, a):
    return np.sum(v * [a, 2.0, 1.0])


def list_minus_array(v, a):
    return np.sum([a, 1.0, 0.5] - v ** 2)


def array_times_int_list(v, a):
    return np.sum(v * [1, 2, 3]) * a


@pytest.mark.parametrize("f", [array_times_list, list_minus_array, array_times_int_list])
def test_array_and_list_operands(f):
    """`v * [a, 2.0]`: NumPy takes the list as an array; under adjoint_s2s it was refused
    ("ndarray Mult list is not written in Python", naming _operator.mul)."""
    got = ad.gradient(f, V3, A)
    want = numerical_gradient(f, V3, A)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-9)
    assert got[1] == pytest.approx(want[1], rel=1e-6)
    mixed = ad.gradient(lambda v: ad.gradient(f, v, A)[1], V3)[0]
    np.testing.assert_allclose(mixed, numerical_gradient(lambda v: ad.gradient(f, v, A)[1], V3)[0], rtol=1e-5, atol=1e-8)
