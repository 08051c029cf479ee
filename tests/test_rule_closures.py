"""A rule's pullback that closes over a variable named `self` (the rule of a method),
differentiated again: the closure's tangent has a field `self`, which collided with
Tangent's own parameter (a TypeError from inside adjoint_s2s)."""
import pytest

import adjoint_s2s as ad
from adjoint_s2s.tangents import Tangent


class Spring:
    def __init__(self, k):
        self.k = k

    def energy(self, x):
        return 0.5 * self.k * x * x


@ad.adjoint(Spring.energy)
def _spring_energy_rule(self, x):
    e = self.energy(x)

    def back(de):
        return None, de * self.k * x

    return e, back


def stretched(x):
    return Spring(1.7).energy(x)


def test_second_order_through_a_method_rule_closing_over_self():
    assert ad.gradient(stretched, 0.8)[0] == pytest.approx(1.36)
    assert ad.gradient(lambda t: ad.gradient(stretched, t)[0], 0.8)[0] == pytest.approx(1.7)


def test_a_tangent_may_have_fields_named_self_and_primal_type():
    t = Tangent(object, self=1.0, primal_type=2.0)
    assert t.primal_type is object
    assert t["self"] == 1.0 and t["primal_type"] == 2.0


class Box:
    def __init__(self, w, h):
        self.w = w
        self.h = h


def box_from(x):
    return Box(x * x, x + 1.0)


@ad.adjoint(box_from)
def _box_from_rule(x):
    def back(db):
        return (2 * x * db.w + db.h,)

    return box_from(x), back


def area_like(x):
    b = box_from(x)
    return b.w * 3.0 + b.h * b.w  # 3x^2 + x^3 + x^2


def test_second_order_through_a_rule_returning_a_mutable_object():
    # the rule's seed (the object's field gradients, taken from the field store) was
    # a constant when differentiated again: 10.6 where 8 + 6x = 15.8 is right
    x = 1.3
    assert ad.gradient(area_like, x)[0] == pytest.approx(8 * x + 3 * x * x)
    assert ad.gradient(lambda t: ad.gradient(area_like, t)[0], x)[0] == pytest.approx(8 + 6 * x)
