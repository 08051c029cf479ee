"""NumPy functions given Python lists of numbers, as NumPy takes them (the array
np.asarray makes). The rules computed on the raw list: `2 * [a, b]` repeats it, `1 +
[a]` raises; at the second order np.prod, np.var and np.linalg.norm of a list gave nan.
Found by a probe written in the style of other AD libraries' test suites."""
import numpy as np
import pytest

import adjoint_s2s as ad


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
