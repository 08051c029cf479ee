"""``sum`` of a generator expression (issue 15: the items went into a list, appended and
taken back one by one, and `sum` was dispatched: 30 to 60 times the plain call in a
loop). With Python's own sum (the builtin, before 3.12) the normaliser adds each item as
it is made (anf.total): Python 3.11's sum adds ints and floats in order too, so the value
is the plain call's bit for bit. A loop over ``enumerate(...)`` or ``zip(...)`` inside a
comprehension is rewritten as a statement's is (targets.py): its items keep their kinds."""
import sys

import numpy as np
import pytest

import adjoint_s2s as ad

from .gradcheck import close_to_differences
from .source_modules import registered_module

SOURCE = '''
import math

COEF = [1.0, -2.0, 0.5, 0.1]
BIG = [1e16, 1.0, -1e16, 3.0]
LABELS = [0.5, -0.2, 0.1, 0.3]


def poly(x):
    return sum(c * x ** i for i, c in enumerate(COEF))


def with_start(x):
    return sum((math.sin(x * k) for k in (1.0, 2.0, 3.0)), 10.0)


def filtered(x):
    return sum(x * k for k in range(8) if k % 3)


def nested(x):
    return sum(x * a * b for a in (1.0, 2.0) for b in COEF if b > 0)


def rounding(x):
    return sum(b * x for b in BIG)  # (1e16 + 1.0 rounds away: the order of the adds shows)


def in_a_loop(k):
    s = 0.0
    for i in range(20):
        s = s + sum(k * j for j in (1.0, 2.0, 3.0)) * 0.01
    return s


def zipped(w):
    return sum((w * c - b) ** 2 for c, b in zip(COEF, LABELS))


def second(x):
    return sum(math.sin(x * c) for c in COEF)


def fails_midway(x):
    return sum(x / (c - 0.5) for c in (1.0, 0.5, 2.0))
'''

SHADOWED = '''
def sum(items, start=0):
    total = start
    for v in items:
        total = total + 2.0 * v
    return total


def doubled(x):
    return sum(x * k for k in (1.0, 2.0))
'''


@pytest.fixture
def mod(tmp_path):
    with registered_module(tmp_path, "sum_generators_mod", SOURCE) as m:
        yield m


@pytest.mark.parametrize("name", ["poly", "with_start", "filtered", "nested", "in_a_loop", "zipped"])
def test_a_summed_generator_gives_the_plain_value_and_gradient(mod, name):
    f = getattr(mod, name)
    close_to_differences(f, 0.7)
    close_to_differences(f, -1.3)
    text = ad.show_adjoint(f, 0.7)
    if sys.version_info < (3, 12):
        assert "_rt.call(sum" not in text and "_rt.binop" not in text and "_rt.append" not in text


def test_the_order_of_the_adds_is_python_s(mod):
    assert ad.pullback(mod.rounding, 1.0)[0] == mod.rounding(1.0)
    assert ad.pullback(mod.rounding, 1.0)[0] == sum([1e16, 1.0, -1e16, 3.0])


def test_second_order(mod):
    def hessian_diagonal(x):
        return ad.gradient(mod.second, x)[0]

    got = ad.gradient(hessian_diagonal, 0.7)[0]
    want = sum(-c * c * np.sin(0.7 * c) for c in mod.COEF)
    assert got == pytest.approx(want, rel=1e-9)


def test_an_item_that_raises_raises_as_python_does(mod):
    with pytest.raises(ZeroDivisionError):
        mod.fails_midway(0.7)
    with pytest.raises(ZeroDivisionError):
        ad.gradient(mod.fails_midway, 0.7)


def test_a_sum_of_the_module_s_own_is_called(tmp_path):
    with registered_module(tmp_path, "sum_shadowed_mod", SHADOWED) as m:
        assert ad.gradient(m.doubled, 0.7)[0] == pytest.approx(6.0)
        assert ad.pullback(m.doubled, 0.7)[0] == m.doubled(0.7)
