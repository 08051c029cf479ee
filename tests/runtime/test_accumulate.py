"""runtime/accumulate.py: acc, and the gradients of indexing."""
import numpy as np

from adjoint_s2s.runtime.accumulate import (
    acc, acc_getitem_grad, getitem_grad, item_grad, part_adjoint, setitem_grad,
)
from adjoint_s2s.runtime.structure import GradList
from adjoint_s2s.tangents import Tangent


def test_acc_adds_in_place_only_into_an_array_nobody_else_holds():
    def private():
        a = np.zeros(3)
        out = acc(a, np.ones(3))
        return out is a

    assert private()
    held = np.zeros(3)
    alias = held  # a second reference: the caller's array must not change
    out = acc(held, np.ones(3))
    assert out is not held and alias.tolist() == [0.0, 0.0, 0.0] and out.tolist() == [1.0] * 3
    assert acc(None, 2.0) == 2.0 and acc(1.0, 2.0) == 3.0


def test_getitem_grad_scatters_and_repeated_indices_accumulate():
    x = np.zeros(4)
    np.testing.assert_array_equal(getitem_grad(x, np.array([1, 1, 3]), np.ones(3)), [0, 2, 0, 1])
    assert getitem_grad([1.0, 2.0], 1, 5.0) == [None, 5.0]
    assert isinstance(getitem_grad([1.0, 2.0], 1, 5.0), GradList)
    assert getitem_grad((1.0, 2.0), slice(0, 2), (3.0, 4.0)) == (3.0, 4.0)
    assert getitem_grad({"a": 1.0}, "a", 2.0) == {"a": 2.0}
    assert getitem_grad(x, 0, None) is None


def test_acc_getitem_grad_equals_acc_of_getitem_grad():
    x = np.arange(4.0)
    a = np.ones(4)
    want = acc(a.copy(), getitem_grad(x, 2, 5.0))
    np.testing.assert_array_equal(acc_getitem_grad(a.copy(), x, 2, 5.0), want)


def test_item_grad_builds_the_gradient_of_a_sequence_iterated_over():
    g = None
    for k, gk in enumerate([1.0, 2.0, 3.0]):
        g = item_grad(g, [0.0] * 3, k, gk)
    assert list(g) == [1.0, 2.0, 3.0]
    a = item_grad(None, np.zeros(2), 1, 4.0)
    assert a.tolist() == [0.0, 4.0]


def test_part_adjoint_places_g_in_a_tangent_shaped_like_v():
    assert part_adjoint((1.0, 2.0), 1, 3.0) == (None, 3.0)
    assert part_adjoint({"a": 1.0}, "a", 3.0) == {"a": 3.0}
    t = part_adjoint(Tangent(tuple, 1.0, 2.0), 0, 5.0)
    assert t[0] == 5.0


def test_setitem_grad_splits_the_gradient_between_the_old_container_and_the_value():
    b_old, g_v = setitem_grad(np.array([1.0, 2.0, 3.0]), np.zeros(3), 1, 0.0)
    assert b_old.tolist() == [1.0, 0.0, 3.0] and g_v == 2.0
