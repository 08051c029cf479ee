"""Custom types: structural tangents, constructors, methods, dunders, mutation."""
import math
from collections import namedtuple
from dataclasses import dataclass
from typing import NamedTuple

import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads, numerical_gradient

approx = pytest.approx


@dataclass
class Rect:
    w: float
    h: float = 2.0

    def area(self):
        return self.w * self.h

    @property
    def perimeter(self):
        return 2 * (self.w + self.h)

    @staticmethod
    def unit():
        return 1.0

    @classmethod
    def square(cls, s):
        return cls(s, s)

    def __neg__(self):
        return Rect(-self.w, -self.h)

    def __mul__(self, c):
        return Rect(self.w * c, self.h * c)

    __rmul__ = __mul__

    def __add__(self, other):
        return Rect(self.w + other.w, self.h + other.h)


def uses_rect(x):
    r = Rect(x, 3.0)
    q = Rect.square(x)
    s = -(2.0 * r) + q
    return r.area() + r.perimeter * Rect.unit() + q.area() + s.w * s.h


def test_dataclass_methods_property_static_class_and_dunders():
    check_grads(uses_rect, 1.3)


def test_gradient_of_a_dataclass_argument_is_a_structural_tangent():
    (g,) = ad.gradient(lambda r: r.area() + r.perimeter, Rect(1.0, 2.0))
    assert isinstance(g, ad.Tangent) and not isinstance(g, Rect)
    assert (g.w, g.h) == approx((4.0, 3.0))
    assert repr(g) == "Tangent(Rect, w=4.0, h=3.0)"


def test_unlisted_fields_are_zero():
    (g,) = ad.gradient(lambda r: r.w * 3.0, Rect(1.0, 2.0))
    assert g.w == 3.0 and ad.iszero(g.h)


P = namedtuple("P", "x y")


class Q(NamedTuple):
    a: float
    b: float


def uses_namedtuples(x):
    p = P(x, 2.0 * x)
    q = Q(a=x, b=3.0)
    return p.x * p[1] + q.a * q.b


def test_namedtuples():
    check_grads(uses_namedtuples, 0.7)
    (g,) = ad.gradient(lambda p: p.x * p.y, P(2.0, 3.0))
    assert (g.x, g.y) == approx((3.0, 2.0))


class Accumulator:
    """A mutable plain class: __init__ and a method write attributes."""

    def __init__(self, start):
        self.total = start
        self.count = 0

    def add(self, v):
        self.total = self.total + v * v
        self.count += 1
        return self


def accumulate(x, y):
    a = Accumulator(x)
    a.add(y)
    a.add(x)
    return a.total * 2.0 + a.count


def test_mutable_plain_class_attribute_writes():
    assert ad.gradient(accumulate, 1.5, 0.5) == approx(numerical_gradient(accumulate, 1.5, 0.5))


def test_mutation_through_an_argument_object():
    def f(acc, v):
        acc.add(v)
        return acc.total

    (g_acc, g_v) = ad.gradient(f, Accumulator(1.0), 3.0)
    assert g_v == approx(6.0)
    assert g_acc.total == approx(1.0)


class Poly:
    def __init__(self, coeffs):
        self.coeffs = coeffs

    def __call__(self, x):
        s = 0.0
        for c in self.coeffs:
            s = s * x + c
        return s


def test_object_with_call_used_as_a_function():
    check_grads(lambda x: Poly([1.0, x, 2.0])(x), 0.9)
    p = Poly([1.0, 2.0, 3.0])
    df, dx = ad._pullback(p, 2.0)[1](1.0)
    assert dx == approx(2 * 2.0 + 2.0)
    assert df.coeffs == approx([4.0, 2.0, 1.0])


@dataclass
class Square:
    side: float

    def __post_init__(self):
        self.area = self.side * self.side


@dataclass(frozen=True)
class Frozen:
    a: float


def test_post_init_and_frozen_dataclasses():
    assert ad.gradient(lambda s: Square(s).area, 3.0) == (6.0,)
    (g,) = ad.gradient(lambda f: f.a ** 2, Frozen(3.0))
    assert g.a == 6.0


def test_custom_adjoints_on_getters_give_a_natural_tangent():
    @dataclass
    class Pt:
        x: float
        y: float

        def __add__(self, o):
            return Pt(self.x + o.x, self.y + o.y)

    def width(p):
        return p.x

    def height(p):
        return p.y

    ad.adjoint(width)(lambda p: (p.x, lambda d: (Pt(d, 0.0),)))
    ad.adjoint(height)(lambda p: (p.y, lambda d: (Pt(0.0, d),)))
    (g,) = ad.gradient(lambda p: math.hypot(width(p), height(p)), Pt(3.0, 4.0))
    assert isinstance(g, Pt) and (g.x, g.y) == approx((0.6, 0.8))


def test_rrule_and_adjoint_for_the_same_function_adjoint_wins():
    def f(x):
        return x

    ad.rrule(f)(lambda x: (x, lambda d: (ad.NoTangent(), 2.0 * d)))
    ad.adjoint(f)(lambda x: (x, lambda d: (3.0 * d,)))
    assert ad.gradient(f, 1.0) == (3.0,)  # the last registration wins; one table


def test_thunk_for_an_unneeded_gradient_never_runs():
    ran = []

    def scale(x, c):
        return x * c

    def thunked_rule(x, c):
        def back(d):
            return ad.NoTangent(), d * c, ad.Thunk(lambda: ran.append(1) or d * x)

        return scale(x, c), back

    ad.rrule(scale)(thunked_rule)
    c = 3.0
    assert ad.gradient(lambda x: scale(x, c) * 2.0, 1.0) == (6.0,)
    assert ran == []


def test_rrule_via_ad_for_map():
    def mymap(f, xs):
        return [f(x) for x in xs]

    @ad.rrule(mymap, config=True)
    def _(config, f, xs):
        results = [ad.rrule_via_ad(config, f, x) for x in xs]

        def back(dys):
            return ad.NoTangent(), ad.NoTangent(), [pb(dy)[1] for (_, pb), dy in zip(results, dys)]

        return [y for y, _ in results], back

    (g,) = ad.gradient(lambda xs: sum(mymap(lambda v: v ** 3, xs)), [1.0, 2.0])
    assert g == approx([3.0, 12.0])


def test_non_differentiable_forms():
    def a(x):
        return x

    def b(x):
        return x

    ad.non_differentiable([a, b])

    @ad.non_differentiable
    def c(x):
        return x

    assert ad.gradient(lambda x: a(x) * b(x) * c(x) + x, 2.0) == (1.0,)
    assert ad.gradient(lambda x: ad.dropgrad(x) * x, 3.0) == (3.0,)


def test_mutable_objects_inside_containers_and_objects_get_their_field_gradients():
    @dataclass
    class Cell:
        v: float

    @dataclass
    class Holder:
        inner: Cell
        w: float

    (g,) = ad.gradient(lambda cs: cs[0].v * 2.0 + cs[1].v, [Cell(1.0), Cell(2.0)])
    assert g[0].v == 2.0 and g[1].v == 1.0
    (h,) = ad.gradient(lambda o: o.inner.v * o.w, Holder(Cell(3.0), 2.0))
    assert h.w == 3.0 and h.inner.v == 2.0


def test_a_tangent_seeded_for_a_returned_mutated_object():
    class Acc2:
        def __init__(self, v):
            self.total = v * v

        def bump(self, d):
            self.total += d
            return self

    y, back = ad.pullback(lambda x: Acc2(x).bump(x), 3.0)
    assert back(ad.Tangent(Acc2, total=1.0)) == (7.0,)


def test_augmented_assignment_uses_iadd_when_the_class_has_it():
    class Bag:
        def __init__(self, v):
            self.total = v

        def __iadd__(self, d):
            self.total = self.total + 2.0 * d
            return self

    def f(x):
        b = Bag(x)
        b += x * x
        return b.total

    assert ad.gradient(f, 3.0) == (13.0,)


def test_dataclasses_replace_is_differentiated():
    import dataclasses

    (g,) = ad.gradient(lambda x: (lambda p: p.w * p.h)(dataclasses.replace(Rect(1.0, 2.0), w=x)), 3.0)
    assert g == 2.0
