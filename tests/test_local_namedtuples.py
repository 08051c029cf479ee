"""A namedtuple made in the function and read only by field (`p = NP(k, c)`, then `p.k`)
becomes its fields, as a frozen dataclass does (passes/local_objects.py): it stayed a
tuple, and every operation on its fields was dispatched at run time (330 times slower
in a loop). One that is iterated, indexed or unpacked stays a tuple."""
import math
from collections import namedtuple

import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads

Params = namedtuple("Params", "k c dt m", defaults=(0.01, 1.0))
log = []


def spring(x, v, k, c):
    p = Params(k, c)
    for _ in range(30):
        a = (-p.k * x - p.c * v) / p.m
        v = v + p.dt * a
        x = x + p.dt * v
    return x


def by_keyword(k):
    p = Params(c=0.5, k=k, m=2.0)
    return p.k * p.c / p.m + p.dt + math.sin(p.k)


def iterated(k):
    p = Params(k, 0.5)
    return sum(p) + p.k


def unpacked(k):
    p = Params(k, 0.5)
    a, b, dt, m = p
    return p[0] * a + b * m


@ad.non_differentiable
def _note(tag):
    log.append(tag)


def in_order(x):
    p = Params(c=(_note("c"), x * 2.0)[1], k=(_note("k"), x)[1])
    return p.k * p.c


@pytest.mark.parametrize("f, args, replaced", [
    (spring, (1.0, 0.0, 2.0, 0.1), True), (by_keyword, (2.0,), True),
    (iterated, (2.0,), False), (unpacked, (2.0,), False),
])
def test_a_local_namedtuple(f, args, replaced):
    src = ad.show_adjoint(f, *args)
    assert ("p_k = " in src) == replaced  # its field k a variable of the function
    if replaced:
        assert "_rt.getattr" not in src and "dispatched at run time" not in src
    assert ad.pullback(f, *args)[0] == pytest.approx(f(*args))
    check_grads(f, *args, order=2)


def test_the_arguments_run_in_the_order_written():
    log.clear()
    in_order(0.5)
    plain = list(log)
    log.clear()
    assert ad.gradient(in_order, 0.5)[0] == pytest.approx(4 * 0.5)
    assert log == plain == ["c", "k"]
