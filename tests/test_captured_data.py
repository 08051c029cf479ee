"""A closure made over a list or tuple of numbers (``make_loss(data)`` returning
``loss(w)``; issue 15: the captured list had no item kind, and the whole loop over it was
dispatched at run time, 300 times the plain call). The key notes a captured list or
tuple of numbers (kinds.REAL_SEQ, checked at each call); where the closure only reads
it, its items are numbers. A closure that writes into it keeps the general code."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import UnsupportedSyntaxError

from .gradcheck import close_to_differences
from .source_modules import registered_module

SOURCE = '''
import math


def make_loss(data):
    def loss(w):
        s = 0.0
        for x in data:
            s = s + (w * x - 1.0) ** 2
        return s
    return loss


def make_indexed(data, labels):
    def loss(w):
        s = 0.0
        for i in range(len(data)):
            s = s + math.log(1.0 + math.exp(-labels[i] * w * data[i]))
        return s
    return loss


def make_writer(data):
    def loss(w):
        data[0] = w
        return sum(v * v for v in data)
    return loss
'''


@pytest.fixture
def mod(tmp_path):
    with registered_module(tmp_path, "captured_data_mod", SOURCE) as m:
        yield m


@pytest.mark.parametrize("kind", [list, tuple])
def test_a_closure_over_numbers_reads_numbers(mod, kind):
    loss = mod.make_loss(kind([0.1 * i for i in range(12)]))
    close_to_differences(loss, 0.7)
    text = ad.show_adjoint(loss, 0.7)
    assert "_rt.binop" not in text and "dispatched at run time" not in text
    indexed = mod.make_indexed(kind([0.1 * i for i in range(6)]), kind([1.0, -1.0] * 3))
    close_to_differences(indexed, 0.7)
    assert "_rt.binop" not in ad.show_adjoint(indexed, 0.7)


def test_the_captured_list_is_checked_at_each_call(mod):
    data = [0.1 * i for i in range(6)]
    loss = mod.make_loss(data)
    first = close_to_differences(loss, 0.7)
    close_to_differences(loss, 0.7)
    data.append(2.0)  # still numbers: the same code, reading the list as it is now
    assert close_to_differences(loss, 0.7) != first
    data.append(np.array([1.0, 2.0]))  # an array among them: code made for what it holds
    with pytest.raises(TypeError):  # (the loss is an array: not a scalar's gradient, as said)
        ad.gradient(loss, 0.7)
    assert np.allclose(ad.pullback(loss, 0.7)[0], loss(0.7))
    data[-1] = "a"
    with pytest.raises(TypeError):
        loss(0.7)
    with pytest.raises(TypeError):
        ad.gradient(loss, 0.7)


def test_a_closure_writing_a_gradient_into_its_list_is_refused_as_before(mod):
    loss = mod.make_writer([0.5, 0.25, 2.0])
    with pytest.raises(UnsupportedSyntaxError, match="`data` .captured from an enclosing function"):
        ad.gradient(loss, 0.7)
