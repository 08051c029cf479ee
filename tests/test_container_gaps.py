"""Lists and dicts whose gradient or value a probe of user-style programs found wrong:
each case is checked against central differences (or its value against the plain call).

* W7: a list tested by its truth (``if st:``, ``while st:``, ``a if st else b``) and
  changed in place after (``st.pop()``): the pullback tested the list again, emptied by
  then, and took the other branch (a gradient of 0). The decision is kept now.
"""
import collections

import numpy as np
import pytest

import adjoint_s2s as ad
from tests.refusals import agrees


# ----- W7: the truth of a list, then a pop --------------------------------------------
def if_list_pop(x):
    st = [x]
    if st:
        return st.pop()
    return 0.0


def while_list_pop(x):
    st = [x, x * 2.0]
    acc = 0.0
    while st:
        acc += st.pop()
    return acc


def while_queue_pop(x):
    q = [x, x * 3.0]
    t = 1.0
    while q:
        t = t * 0.5 + q.pop(0)
    return t


def ifexp_list_pop(x):
    st = [x * 2.0]
    return st.pop() if st else 0.0


def while_list_and(x):
    q = [x, x * x]
    t = 0.0
    while q and t < 100.0:
        t = t * 2.0 + q.pop()
    return t


def or_list_then_append(x):
    q = []
    t = q or [1.0]
    q.append(x)
    return t[0] * x + q[0]


class _Stack:
    def __init__(self, v):
        self.items = [v, v * v]

    def take(self):
        if self.items:
            return self.items.pop()
        return 0.0


def method_if_pop(x):
    s = _Stack(x * 3.0)
    return s.take() + s.take() * 2.0 + s.take()


@pytest.mark.parametrize(
    "fn",
    [if_list_pop, while_list_pop, while_queue_pop, ifexp_list_pop, while_list_and,
     or_list_then_append, method_if_pop],
)
def test_truth_of_a_list_changed_after(fn):
    assert ad.pullback(fn, 0.7)[0] == fn(0.7)
    agrees(fn, 0.7)


def test_truth_of_a_list_second_order():
    # t = 2 x^2 + x: its second derivative is 4
    assert np.allclose(ad.gradient(lambda x: ad.gradient(while_list_and, x)[0], 0.7)[0], 4.0)
