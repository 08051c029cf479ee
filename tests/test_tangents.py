"""Tangent types: zeros, structural Tangents, thunks, and the accumulation helper `add`."""
import math
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.tangents import (
    InplaceableThunk,
    NoTangent,
    Tangent,
    Thunk,
    ZeroTangent,
    add,
    iszero,
    unthunk,
)


@dataclass
class Point:
    x: float
    y: float


NT = namedtuple("NT", "a b")


def width(p):
    return p.x


def height(p):
    return p.y


def dist(p):
    return math.sqrt(width(p) ** 2 + height(p) ** 2)


class Counter:
    """A thunk body that records how often it ran."""

    def __init__(self, value):
        self.value = value
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return self.value


# ----- printing ---------------------------------------------------------------------------------


def test_tangent_prints_readably_in_field_order():
    (g,) = ad.gradient(dist, Point(1.0, 2.0))
    assert repr(g) == "Tangent(Point, x=0.447, y=0.894)"
    assert repr(Tangent(Point, y=2.0, x=1.0)) == "Tangent(Point, x=1.0, y=2.0)"
    assert repr(Tangent(Point, x=-12345.678)) == "Tangent(Point, x=-1.23e+04)"
    assert repr(Tangent(Point)) == "Tangent(Point)"
    assert repr(Tangent(Point, x=None, y=ZeroTangent())) == "Tangent(Point)"  # zeros dropped
    assert repr(Tangent(NT, b=1.5, a=0.25)) == "Tangent(NT, a=0.25, b=1.5)"
    assert repr(Tangent(tuple, 1.0, 0.5)) == "Tangent(tuple, 1.0, 0.5)"
    assert repr(Tangent(Point, x=np.array([1.0, 2.0]))) == "Tangent(Point, x=array([1., 2.]))"
    assert str(Tangent(Point, x=1j)) == "Tangent(Point, x=(0+1j))"
    assert repr(Tangent(Point, x=np.float32(0.5), y=np.float64(2.0))) == "Tangent(Point, x=0.5, y=2.0)"


def test_printing_does_not_force_a_thunk():
    body = Counter(1.0)
    t = Tangent(Point, x=Thunk(body))
    assert repr(t) == "Tangent(Point, x=Thunk(...))"
    assert body.calls == 0
    assert repr(InplaceableThunk(lambda acc: acc, body)) == "InplaceableThunk(...)"
    assert body.calls == 0


# ----- field access -----------------------------------------------------------------------------


def test_unlisted_fields_are_zero_tangents():
    t = Tangent(Point, x=1.0)
    assert t.x == 1.0 and t["x"] == 1.0
    assert isinstance(t.y, ZeroTangent) and isinstance(t["y"], ZeroTangent)
    assert isinstance(t.anything, ZeroTangent)
    assert t.fields() == {"x": 1.0}
    with pytest.raises(AttributeError):
        t.x = 2.0
    with pytest.raises(AttributeError):
        t.__array_priority_nope__  # dunder lookups are not fields


def test_namedtuple_tangent_indexes_and_unpacks_like_the_namedtuple():
    t = Tangent(NT, b=2.0)
    assert isinstance(t[0], ZeroTangent) and t[1] == 2.0
    a, b = t
    assert iszero(a) and b == 2.0
    p = Tangent(tuple, 1.0, 2.0)
    assert p[1] == 2.0 and list(p) == [1.0, 2.0]


# ----- vector space -----------------------------------------------------------------------------


def test_addition_of_tangents_and_zeros():
    a, b = Tangent(Point, x=1.0), Tangent(Point, x=0.5, y=2.0)
    s = a + b
    assert isinstance(s, Tangent) and s.primal_type is Point
    assert (s.x, s.y) == (1.5, 2.0)
    for z in (None, ZeroTangent(), NoTangent()):
        assert a + z is a
        assert z + a is a
        assert add(a, z) is a and add(z, a) is a
    assert (a + {"y": 3.0}).y == 3.0 and ({"y": 3.0} + a).x == 1.0
    assert sum([a, b, a]).x == 2.5  # sum() starts from 0
    t = Tangent(tuple, 1.0, None) + (1.0, 2.0)
    assert list(t) == [2.0, 2.0]
    assert add(Tangent(Point, x=1.0), Tangent(Point, y=1.0)) == Tangent(Point, x=1.0, y=1.0)


def test_addition_with_a_natural_tangent_gives_the_natural_type():
    s = Tangent(Point, x=1.0) + Point(0.5, 0.5)
    assert s == Point(1.5, 0.5)
    assert Point(0.5, 0.5) + Tangent(Point, y=1.0) == Point(0.5, 1.5)
    assert NT(1.0, 2.0) + Tangent(NT, b=1.0) == NT(1.0, 3.0)
    assert add(Point(0.5, 0.5), Tangent(Point, x=1.0)) == Point(1.5, 0.5)
    with pytest.raises(TypeError):
        Point(0.5, 0.5) + Tangent(Point, z=1.0)  # not a field of Point: no silent drop


def test_scalar_multiplication_division_negation_and_subtraction():
    t = Tangent(Point, x=1.0, y=-2.0)
    for u in (2 * t, t * 2, np.float64(2.0) * t, t * np.float64(2.0)):
        assert isinstance(u, Tangent) and (u.x, u.y) == (2.0, -4.0)
    assert ((t / 4).x, (t / 4).y) == (0.25, -0.5)
    assert ((-t).x, (-t).y) == (-1.0, 2.0)
    d = t - Tangent(Point, x=1.0)
    assert iszero(d.x) and d.y == -2.0
    assert t - None is t and t - ZeroTangent() is t
    nested = Tangent(Point, x=Tangent(NT, a=1.0)) * 3
    assert nested.x.a == 3.0
    arr = Tangent(Point, x=np.array([1.0, 2.0])) * 0.5
    assert np.array_equal(arr.x, [0.5, 1.0])


def test_equality_and_isapprox():
    t = Tangent(Point, x=0.1 + 0.2)
    assert t != Tangent(Point, x=0.3)  # == is exact
    assert t.isapprox(Tangent(Point, x=0.3))
    assert t.isapprox({"x": 0.3}) and t.isapprox(Point(0.3, 0.0))
    assert not t.isapprox(Tangent(Point, x=0.3001))
    assert t.isapprox(Tangent(Point, x=0.3001), rtol=1e-3)
    assert not t.isapprox(Tangent(Point, x=0.3, y=1e-3))
    assert Tangent(Point, x=np.array([1.0, 2.0])).isapprox(
        Tangent(Point, x=np.array([1.0, 2.0 + 1e-12])))
    assert not Tangent(Point, x=np.array([1.0, 2.0])).isapprox(Tangent(Point, x=np.array([1.0])))
    assert Tangent(Point, x=0.0) == ZeroTangent() and Tangent(Point) == NoTangent()
    assert Tangent(Point, x=1.0) != ZeroTangent()


def test_iszero():
    assert iszero(None) and iszero(ZeroTangent()) and iszero(NoTangent())
    assert iszero(0.0) and iszero(0j) and not iszero(1e-300)
    assert iszero(Tangent(Point)) and iszero(Tangent(Point, x=0.0))
    assert iszero(Tangent(Point, x=Tangent(NT, a=0.0)))
    assert not iszero(Tangent(Point, y=1.0))
    assert iszero(np.zeros(3)) and not iszero(np.array([0.0, 1.0]))
    assert iszero((None, 0.0, [ZeroTangent()])) and not iszero((None, 1.0))
    assert iszero({"a": None}) and not iszero({"a": 2.0})
    assert iszero(Thunk(lambda: 0.0)) and not iszero(Thunk(lambda: 1.0))
    assert not iszero("a string")


def test_zeros_are_inert():
    z = ZeroTangent()
    assert z * 3.0 is z and 3.0 * z is z and -z is z and z / 2.0 is z
    assert z + 2.0 == 2.0 and 2.0 - z == 2.0 and z - 2.0 == -2.0
    assert not z and not NoTangent()
    assert z.some_field is z
    assert list(z) == []
    assert repr(z) == "ZeroTangent()" and repr(NoTangent()) == "NoTangent()"


# ----- thunks -------------------------------------------------------------------------------------


def test_a_thunk_never_runs_unless_its_value_is_needed():
    body = Counter(2.0)
    th = Thunk(body)
    assert add(None, th) is th and add(th, None) is th
    assert add(ZeroTangent(), th) is th and add(th, NoTangent()) is th
    assert ZeroTangent() + th is th
    t = Tangent(Point, x=th) + Tangent(Point, y=1.0)
    assert t.x is th
    assert (NoTangent(), th)[1] is th
    assert body.calls == 0
    assert unthunk(t).x == 2.0  # now it is needed
    assert body.calls == 1


def test_a_thunk_runs_once_and_then_behaves_like_its_value():
    body = Counter(np.array([1.0, 2.0]))
    th = Thunk(body)
    assert np.array_equal(th + 1.0, [2.0, 3.0])
    assert np.array_equal(2.0 * th, [2.0, 4.0]) and np.array_equal(th * 2.0, [2.0, 4.0])
    assert np.array_equal(th - 1.0, [0.0, 1.0]) and np.array_equal(1.0 - th, [0.0, -1.0])
    assert np.array_equal(th / 2.0, [0.5, 1.0]) and np.array_equal(-th, [-1.0, -2.0])
    assert th[1] == 2.0 and th.shape == (2,) and th @ np.ones(2) == 3.0
    assert np.array_equal(np.asarray(th), [1.0, 2.0])
    assert th == Thunk(lambda: np.array([1.0, 2.0]))
    assert body.calls == 1
    s = Thunk(lambda: 3.0)
    assert float(s) == 3.0 and s ** 2 == 9.0 and abs(Thunk(lambda: -3.0)) == 3.0
    assert 6.0 / s == 2.0 and s == 3.0 and s != 4.0


def test_unthunk_goes_through_containers_and_leaves_the_rest_alone():
    inner = Thunk(lambda: Thunk(lambda: 5.0))  # a thunk that returns a thunk
    assert unthunk(inner) == 5.0
    v = unthunk((Thunk(lambda: 1.0), [Thunk(lambda: 2.0)], {"k": Thunk(lambda: 3.0)}))
    assert v == (1.0, [2.0], {"k": 3.0})
    t = unthunk(Tangent(Point, x=Thunk(lambda: 4.0)))
    assert isinstance(t, Tangent) and t.x == 4.0 and not isinstance(t.x, Thunk)
    plain = (1.0, 2.0)
    assert unthunk(plain) is plain  # nothing to force: no copy
    arr = np.ones(2)
    assert unthunk(arr) is arr and unthunk(None) is None


def test_gradient_results_come_unthunked_and_unused_thunks_stay_unforced():
    body = Counter(None)

    def scaled(x, c):
        return x * c

    @ad.rrule(scaled)
    def _(x, c):
        def back(d):
            body.value = d * x
            return ad.NoTangent(), d * c, ad.Thunk(body)

        return scaled(x, c), back

    (g,) = ad.gradient(lambda x: scaled(x, 3.0), 2.0)
    assert g == 3.0 and body.calls == 0
    assert ad.gradient(scaled, 2.0, 3.0) == (3.0, 2.0) and body.calls == 1


def test_inplaceable_thunk_adds_without_touching_the_callers_arrays():
    calls = []

    def add_into(acc):
        calls.append("add_fn")
        acc[0] += 10.0
        return acc

    def value():
        calls.append("fn")
        return np.array([10.0, 0.0])

    held = np.array([1.0, 2.0])
    ith = InplaceableThunk(add_into, value)
    out = add(held, ith)
    assert np.array_equal(out, [11.0, 2.0]) and out is not held
    assert np.array_equal(held, [1.0, 2.0])  # the accumulator a caller holds is intact
    assert calls == ["add_fn"]  # the dense value was never built
    out = add(InplaceableThunk(add_into, value), held)
    assert np.array_equal(out, [11.0, 2.0]) and np.array_equal(held, [1.0, 2.0])
    calls.clear()
    assert add(None, ith) is ith and calls == []
    assert add(1.0, InplaceableThunk(add_into, lambda: 2.5)) == 3.5  # scalars: the value
    assert np.array_equal(unthunk(InplaceableThunk(add_into, value)), [10.0, 0.0])


# ----- add: the accumulation helper ---------------------------------------------------------------


def test_add_numbers_arrays_and_containers():
    assert add(1.0, 2.0) == 3.0 and type(add(1.0, 2.0)) is float
    assert add(1 + 1j, 1.0) == 2 + 1j
    assert add(None, None) is None and add(None, ZeroTangent()) is None
    assert add(ZeroTangent(), 1.5) == 1.5 and add(1.5, NoTangent()) == 1.5
    a = np.array([1.0, 2.0])
    assert np.array_equal(add(a, a), [2.0, 4.0]) and np.array_equal(a, [1.0, 2.0])
    assert add((1.0, None), (None, 2.0, 3.0)) == (1.0, 2.0, 3.0)
    assert add([1.0, None], [1.0, 1.0]) == [2.0, 1.0]
    assert add({"a": 1.0}, {"a": 1.0, "b": 2.0}) == {"a": 2.0, "b": 2.0}
    assert add(1.0, Thunk(lambda: 2.0)) == 3.0
    assert add((1.0, 2.0), Tangent(tuple, 1.0, 1.0)) == (2.0, 3.0)
