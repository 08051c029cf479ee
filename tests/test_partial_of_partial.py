"""functools.partial of a functools.partial: Python makes one partial of the inner one's
function (its bound arguments first), which the constructor's pullback did not expect: a
ValueError from generated code (by position), or a lost gradient (by keyword: 0.91 for
1.82)."""
import functools

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient


def g(a, b, c):
    return a * b + c


def g3(a, b=1.0, *, c=2.0):
    return a * b * c


def by_position(x, y):
    p = functools.partial(functools.partial(g, x), y)
    return p(x * y)


def by_keyword(x, y):
    return functools.partial(functools.partial(g3, c=x), b=y)(x)


def mixed(x, y):
    inner = functools.partial(g3, x, c=y)
    outer = functools.partial(inner, b=x * y)
    return outer() + inner(2.0)


def three_deep(x, y):
    p = functools.partial(functools.partial(functools.partial(g, x), y), x * x)
    return p()


@pytest.mark.parametrize("fn", [by_position, by_keyword, mixed, three_deep])
def test_a_partial_of_a_partial(fn):
    args = (0.7, 1.3)
    y, back = ad.pullback(fn, *args)
    assert np.isclose(y, fn(*args))
    assert np.allclose(back(1.0), numerical_gradient(fn, *args), rtol=1e-6)


def test_a_partial_of_a_partial_twice_differentiated():
    def f(x):
        return functools.partial(functools.partial(g, x), x * x)(x)  # x**3 + x

    assert ad.hessian(f, 0.7) == pytest.approx(6 * 0.7)
