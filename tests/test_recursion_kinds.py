"""A function that calls itself for the kinds it was called with (issue 15: the recursive
call's result had no kind, so everything computed from it was dispatched at run time,
about 300 times the plain call). The analysis assumes such a call returns a number and
keeps the assumption where the function's returns then join to a number (by induction
on the depth of the recursion, every call does); otherwise (an array, a complex number,
a tuple comes back) the kinds are made again with the call's result unknown."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads

from .source_modules import registered_module

SOURCE = '''
import math

import numpy as np


def fib(x, n=10):
    if n <= 1:
        return x
    return fib(x, n - 1) * 0.5 + fib(x, n - 2) * 0.25 + math.sin(x) * 0.01


def descend(x, n):
    if n == 0:
        return x
    return descend(math.sin(x) * 0.9 + 0.1, n - 1)


def to_array(x, n):
    if n == 0:
        return np.array([x, 2.0 * x])
    return to_array(x * 0.5, n - 1) * x


def to_complex(x, n):
    if n == 0:
        return complex(x, 1.0)
    return to_complex(x * 0.5, n - 1) * x


def pair(x, n):
    if n == 0:
        return x, 1.0
    a, b = pair(x * 0.5, n - 1)
    return a * x, b + a


def other_kinds(x, n):
    if n == 0:
        return x
    return other_kinds(np.array([x, x]) if n == 3 else x * 1.1, n - 1) * 0.5
'''


@pytest.fixture
def mod(tmp_path):
    with registered_module(tmp_path, "recursion_kinds_mod", SOURCE) as m:
        yield m


def test_a_recursion_of_numbers_computes_with_numbers(mod):
    check_grads(mod.fib, 0.7, order=2)
    assert ad.pullback(mod.fib, 0.7)[0] == mod.fib(0.7)
    text = ad.show_adjoint(mod.fib, 0.7)
    assert "_rt.binop" not in text and "dispatched at run time" not in text
    check_grads(mod.descend, 0.7, 6, order=2)


def test_an_array_a_complex_number_or_a_tuple_coming_back_is_known_when_it_runs(mod):
    got = ad.gradient(lambda x: float(np.sum(mod.to_array(x, 3))), 0.7)[0]
    h = 1e-6
    want = (np.sum(mod.to_array(0.7 + h, 3)) - np.sum(mod.to_array(0.7 - h, 3))) / (2 * h)
    assert got == pytest.approx(want, rel=1e-6)
    got = ad.gradient(lambda x: mod.to_complex(x, 3).real, 0.7)[0]
    want = (mod.to_complex(0.7 + h, 3).real - mod.to_complex(0.7 - h, 3).real) / (2 * h)
    assert got == pytest.approx(want, rel=1e-6)
    check_grads(lambda x: mod.pair(x, 3)[1], 0.7, order=2)


def test_a_recursive_call_for_other_kinds_is_not_assumed_a_number(mod):
    got = ad.gradient(lambda x: float(np.sum(mod.other_kinds(x, 5))), 0.7)[0]
    h = 1e-6
    want = (np.sum(mod.other_kinds(0.7 + h, 5)) - np.sum(mod.other_kinds(0.7 - h, 5))) / (2 * h)
    assert got == pytest.approx(want, rel=1e-6)
