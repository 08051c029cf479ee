"""runtime/mutation.py: list methods and their inverses, setitem on a copy."""
import numpy as np

from adjoint_s2s.runtime.mutation import (
    append, extend, insert, pop, setitem, unappend, unappend_adjoint, unextend, uninsert, unpop,
)


def test_append_and_unappend_are_inverse_on_the_gradient():
    lst = [1.0]
    n = append(lst, 2.0)
    assert lst == [1.0, 2.0] and n == 1
    head, item = unappend([10.0, 20.0], n)
    assert list(head) == [10.0] and item == 20.0
    assert unappend(None, n) == (None, None)
    assert unappend_adjoint((None, 5.0), [10.0, 20.0], 1) == [None, 5.0]


def test_extend_insert_pop_and_their_inverses():
    lst = [1.0]
    where = extend(lst, (2.0, 3.0))
    head, g_vs = unextend([1.0, 2.0, 3.0], where, (2.0, 3.0))
    assert list(head) == [1.0] and g_vs == (2.0, 3.0)
    lst = [1.0, 3.0]
    pos = insert(lst, 1, 2.0)
    assert lst == [1.0, 2.0, 3.0]
    head, item = uninsert([10.0, 20.0, 30.0], pos)
    assert list(head) == [10.0, 30.0] and item == 20.0
    lst = [1.0, 2.0, 3.0]
    v, where = pop(lst)
    assert v == 3.0 and lst == [1.0, 2.0]
    assert list(unpop([10.0, 20.0], where, 5.0)) == [10.0, 20.0, 5.0]


def test_setitem_copies_an_array_someone_else_holds():
    a = np.zeros(3)
    held = a
    out = setitem(a, 1, 5.0)
    assert held.tolist() == [0.0, 0.0, 0.0] and out.tolist() == [0.0, 5.0, 0.0]
    out = setitem(np.zeros(2), 0, 1j)  # a complex value makes a complex copy
    assert out.dtype.kind == "c"
    d = {"a": 1.0}
    out = setitem(d, "b", 2.0)
    assert d == {"a": 1.0} and out == {"a": 1.0, "b": 2.0}
