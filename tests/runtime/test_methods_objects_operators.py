"""runtime/methods.py, objects.py, operators.py: methods, attribute and item reads, and
operators on values whose kinds the generator did not know."""
import numpy as np
import pytest

from adjoint_s2s.errors import MissingAdjointError
from adjoint_s2s.runtime.methods import call_method
from adjoint_s2s.runtime.objects import getattr_pair, getitem_pair
from adjoint_s2s.runtime.operators import binop, unop


class Vec:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        return Vec(self.v + other.v)

    def scaled(self, k):
        return self.v * k


def test_call_method_differentiates_a_python_method_and_a_method_rule():
    y, pb = call_method(Vec(2.0), "scaled", 3.0)
    assert y == 6.0
    assert pb(1.0)[1] == 2.0  # d/dk
    y, pb = call_method([1.0, 2.0], "copy")
    assert y == [1.0, 2.0] and pb([3.0, 4.0]) == ([3.0, 4.0],)


def test_numbers_attributes_by_table():
    y, pb = getattr_pair(1 + 2j, "imag")
    assert y == 2.0 and pb(1.0) == 1j
    y, pb = getattr_pair(np.ones((2, 3)), "shape")
    assert y == (2, 3) and pb(1.0) is None
    _, pb = getattr_pair(np.ones(2), "T")
    np.testing.assert_array_equal(pb(np.array([1.0, 2.0])), [1.0, 2.0])
    _, pb = getattr_pair(np.ones(2), "nbytes")
    assert pb(1.0) is None
    with pytest.raises(MissingAdjointError):
        getattr_pair(np.ones(2), "flat")[1](np.ones(2))


def test_getitem_pair_of_a_list_gives_the_gradient_at_the_index():
    y, pb = getitem_pair([1.0, 2.0, 3.0], 1)
    assert y == 2.0 and list(pb(5.0)) == [None, 5.0, None]


def test_binop_on_objects_and_numbers_and_unop():
    y, pb = binop("Add", Vec(1.0), Vec(2.0))
    assert y.v == 3.0
    y, pb = binop("Mult", 3.0, 4.0)
    assert y == 12.0 and pb(1.0) == (4.0, 3.0)
    y, pb = binop("BitOr", {"a": 1.0}, {"b": 2.0})
    assert y == {"a": 1.0, "b": 2.0}
    y, pb = unop("USub", 2.0)
    assert y == -2.0 and pb(1.0) in (-1.0, (-1.0,))
