"""The standard library's copy.copy of lists, dicts and arrays: it calls the type's copy
method unbound (`list.copy(x)`, `ndarray.__copy__(x)`), which had no rule, so the call
was refused with a message calling copy.copy adjoint_s2s's own function."""
import copy
import dataclasses

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import MissingAdjointError


@dataclasses.dataclass
class Pair:
    a: float
    b: float


def first_of_copy(x, y):
    return copy.copy([x, y])[0] * y


def dict_copy(x, y):
    d = copy.copy({"a": x, "b": y})
    return d["a"] * d["b"] + d["a"]


def array_copy(v):
    return np.sum(copy.copy(v) * v)


def copy_then_add(v):
    a = v * 1.0
    b = copy.copy(a)
    b += v  # (b is a copy: a keeps its values)
    return np.sum(a * b)


def copy_then_rebind_item(x, y):
    lst = [x, y]
    c = copy.copy(lst)
    c[0] = c[0] * 3.0
    return lst[0] * c[0] + c[1]


def object_copy(x, y):
    p = copy.copy(Pair(x, y))
    return p.a * p.b


def _fd(f, args, i, eps=1e-6):
    args = list(args)
    x = args[i]
    if isinstance(x, np.ndarray):
        g = np.zeros_like(x)
        for k in range(x.size):
            d = np.zeros_like(x)
            d.flat[k] = eps
            g.flat[k] = (f(*args[:i], x + d, *args[i + 1:]) - f(*args[:i], x - d, *args[i + 1:])) / (2 * eps)
        return g
    return (f(*args[:i], x + eps, *args[i + 1:]) - f(*args[:i], x - eps, *args[i + 1:])) / (2 * eps)


CASES = [
    (first_of_copy, (0.7, 1.3)),
    (dict_copy, (0.7, 1.3)),
    (array_copy, (np.array([0.5, 1.5]),)),
    (copy_then_add, (np.array([0.5, 1.5]),)),
    (copy_then_rebind_item, (0.7, 1.3)),
]


@pytest.mark.parametrize("f, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_copy_copy_against_finite_differences(f, args):
    y, back = ad.pullback(f, *args)
    assert y == pytest.approx(f(*args))
    got = back(1.0)
    for i in range(len(args)):
        np.testing.assert_allclose(got[i], _fd(f, args, i), rtol=1e-6, atol=1e-8)


def test_copy_copy_second_order():
    # d/dx of d(first_of_copy)/dy = d/dx (x) = 1
    assert ad.gradient(lambda x: ad.gradient(first_of_copy, x, 1.3)[1], 0.7) == pytest.approx((1.0,))
    # d/dx of d(dict_copy)/dx = d/dx (y + 1) = 0, and d/dy of it = 1
    assert ad.gradient(lambda y: ad.gradient(dict_copy, 0.7, y)[0], 1.3) == pytest.approx((1.0,))


def test_copy_of_an_object_refused_naming_the_library():
    with pytest.raises(MissingAdjointError) as info:
        ad.gradient(object_copy, 0.7, 1.3)
    msg = str(info.value)
    assert "copy.py, a library's function it calls" in msg
    assert "adjoint_s2s's copy" not in msg
