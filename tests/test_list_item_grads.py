"""Reading items of a list by index in a loop: each read's gradient is one item
(runtime OneItem), added into the list's gradient in place, so n reads of a list cost
O(n), not O(n * len) (a gradient of a 300-item list read by index took 130 ms, of a list
read as it grows by append 340 ms; bench: `make bench` is unaffected, this is the
dispatched path). The gradients are checked against central differences, at first and
second order, and a gradient handed out is never changed afterwards."""
import math

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.runtime.accumulate import acc, getitem_grad
from adjoint_s2s.runtime.structure import GradList, OneItem
from adjoint_s2s.testing import check_grads, numerical_gradient


def nll_index(mu, s, data):
    tot = 0.0
    for i in range(len(data)):
        tot += (data[i] - mu) ** 2 / (s * s) + math.log(s)
    return tot


def grown_and_read(x0, v0):
    xs = [x0]
    v = v0
    for i in range(12):
        v = v - 0.1 * xs[-1]
        xs.append(xs[-1] + 0.1 * v)
    return sum(xs) + xs[3] * xs[-2]


def read_twice_and_backwards(x, y):
    vals = [x, y, x * y, 2.0]
    s = 0.0
    for i in range(len(vals)):
        s = s + vals[i] * vals[-1 - i] + vals[i] ** 2
    return s


def test_a_list_argument_read_by_index():
    data = [math.sin(0.3 * i) for i in range(15)]
    got = ad.gradient(nll_index, 0.1, 0.9, data)
    want = numerical_gradient(nll_index, 0.1, 0.9, data)
    assert got[0] == pytest.approx(want[0], rel=1e-6)
    assert got[1] == pytest.approx(want[1], rel=1e-6)
    assert np.allclose(got[2], want[2], rtol=1e-6, atol=1e-8)
    check_grads(lambda mu, s: nll_index(mu, s, data), 0.1, 0.9, order=2)


@pytest.mark.parametrize("f, args", [(grown_and_read, (1.0, 0.3)), (read_twice_and_backwards, (0.7, 1.3))])
def test_items_read_while_the_list_grows_or_twice(f, args):
    check_grads(f, *args, order=2)


def test_one_items_gradient_goes_into_a_private_accumulator_in_place():
    xs = [1.0, 2.0, 3.0, 4.0]
    a = getitem_grad(xs, 1, 0.5)
    assert type(a) is OneItem and list(a) == [None, 0.5, None, None]
    b = getitem_grad(xs, -1, 2.0)
    a = acc(a, b)  # a: only this frame holds it
    assert type(a) is GradList and list(a) == [None, 0.5, None, 2.0]
    assert list(b) == [None, None, None, 2.0]  # what was added is unchanged


def test_a_gradient_held_elsewhere_is_not_changed():
    xs = [1.0, 2.0, 3.0]
    kept = getitem_grad(xs, 0, 1.0)
    also = kept  # held twice: not the caller's alone
    total = acc(kept, getitem_grad(xs, 0, 2.0))
    assert list(also) == [1.0, None, None] and type(also) is OneItem
    assert list(total) == [3.0, None, None]
    # an accumulated OneItem is a whole list: adding it adds every item
    merged = acc(getitem_grad(xs, 2, 1.0), getitem_grad(xs, 1, 1.0))
    assert list(acc(GradList([1.0, 1.0, 1.0]), merged)) == [1.0, 2.0, 2.0]
