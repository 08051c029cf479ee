"""A tuple of numbers made in the function and read with a key that is no constant
(`(a, b)[i]`, `t[i]` in a loop): the check that it is read only by constant keys took
every key for a constant (an AttributeError from inside adjoint_s2s)."""
import pytest

import adjoint_s2s as ad


def pick(a, b, i):
    return (a, b)[i]


def weighted(a, b):
    t = (a, b)
    s = 0.0
    for i in range(2):
        s = s + t[i] * (i + 1)
    return s


def test_a_literal_tuple_read_at_a_variable_index():
    assert ad.gradient(pick, 0.5, 0.7, 1) == (0.0, 1.0, None)
    assert ad.gradient(pick, 0.5, 0.7, 0)[:2] == (1.0, 0.0)


def test_a_tuple_read_by_a_loop_index():
    assert ad.gradient(weighted, 0.5, 0.7) == pytest.approx((1.0, 2.0))
    assert ad.pullback(weighted, 0.5, 0.7)[0] == weighted(0.5, 0.7)
