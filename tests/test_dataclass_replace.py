"""dataclasses.replace in differentiated code is what it does in Python, the class called
with the fields it keeps and the changes (rules/copies.py), at first and second order; a
class with init=False fields or InitVars goes through dataclasses' own source, as before."""
import dataclasses
from dataclasses import dataclass, field

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads


@dataclass(frozen=True)
class State:
    x: float
    v: float


@dataclass
class Model:
    w: np.ndarray
    b: float


@dataclass
class Derived:
    a: float
    twice: float = field(init=False)

    def __post_init__(self):
        self.twice = 2.0 * self.a


def stepped(k):
    s = State(1.0, 0.0)
    for _ in range(20):
        s = dataclasses.replace(s, v=s.v - 0.01 * k * s.x)
        s = dataclasses.replace(s, x=s.x + 0.01 * s.v)
    return s.x


def of_an_argument(s, k):
    t = dataclasses.replace(s, v=s.v * k)
    return t.x * t.v + s.x


def with_an_array(w, b):
    m = Model(w, b)
    m2 = dataclasses.replace(m, b=m.b * 2.0)
    return np.sum(m2.w * m2.b) + m.b


def post_init(a):
    d = dataclasses.replace(Derived(a), a=a * 3.0)
    return d.twice + d.a


@pytest.mark.parametrize("f, args", [(stepped, (2.0,)), (with_an_array, (np.array([1.0, 2.0]), 0.5)),
                                     (post_init, (0.7,))])
def test_replace(f, args):
    assert ad.pullback(f, *args)[0] == pytest.approx(f(*args))
    check_grads(f, *args, order=2)


def test_replace_of_a_record_argument():
    g = ad.gradient(of_an_argument, State(0.5, 0.3), 2.0)
    assert (g[0].x, g[0].v, g[1]) == pytest.approx((0.6 + 1.0, 0.5 * 2.0, 0.5 * 0.3))


def test_a_field_replace_does_not_know_is_python_s_error():
    def wrong(x):
        return dataclasses.replace(State(x, 0.0), speed=1.0).x

    with pytest.raises(TypeError, match="speed"):
        ad.gradient(wrong, 1.0)
