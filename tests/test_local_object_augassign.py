"""An object made in the function whose method is called inside an augmented assignment
(`v += dt * m.force(x)`, `self.v += dt * self.force()` in a method) is replaced by its
fields, as with `v = v + ...`: it was left an object, every operation on it and on what
it touched dispatched at run time (240 times slower). Python's order is kept: the
target is read before the call, which may change it."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads


class Spring:
    def __init__(self, k):
        self.k = k

    def force(self, x):
        return -self.k * x


class Sim:
    def __init__(self, k, c):
        self.k = k
        self.c = c
        self.x = 1.0
        self.v = 0.0

    def force(self):
        return -self.k * self.x - self.c * self.v

    def halve(self):
        self.v = self.v * 0.5
        return 1.0

    def step(self, dt):
        self.v += dt * self.force()
        self.x += dt * self.v


class Acc:
    def __init__(self, w):
        self.h = np.zeros(3)
        self.w = w

    def update(self, x):
        return self.w * x


def spring(k):
    m = Spring(k)
    x = 1.0
    v = 0.0
    for _ in range(30):
        v += 0.01 * m.force(x)
        x += 0.01 * v
    return x


def simulation(k, c):
    s = Sim(k, c)
    for _ in range(30):
        s.step(0.01)
    return s.x


def read_before_the_call(k, c):
    s = Sim(k, c)
    s.v = 2.0 * c
    s.v += s.halve() * k  # Python reads s.v before halve() halves it
    return s.v + s.x * c


def array_field_in_place(w):
    a = Acc(w)
    h0 = a.h
    a.h += a.update(np.ones(3))  # in place: h0 sees it, as in Python
    return np.sum(h0 * a.h) + np.sum(a.h)


@pytest.mark.parametrize("f, args", [(spring, (2.0,)), (simulation, (2.0, 0.1)), (read_before_the_call, (2.0, 0.1))])
def test_the_object_becomes_its_fields(f, args):
    src = ad.show_adjoint(f, *args)
    assert "_rt.call_method" not in src and "dispatched at run time" not in src
    assert ad.pullback(f, *args)[0] == pytest.approx(f(*args))
    check_grads(f, *args, order=2)


def test_an_array_field_changed_in_place():
    w = np.array([1.0, 2.0, 3.0])
    assert ad.pullback(array_field_in_place, w)[0] == pytest.approx(array_field_in_place(w))
    check_grads(array_field_in_place, w, order=2)
