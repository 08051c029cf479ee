"""Second order through objects: dataclasses (with and without __post_init__), a field
written then read by a method, keywords to a constructor; Hessians and gradients of
gradients against finite differences of the gradient.

A dataclass's constructor pair takes the gradients of the fields out of the identity
store one by one (take_field_grad, which has a rule), so differentiating it again sees
the reads of the fields that the methods made.
"""
from dataclasses import dataclass

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import NotDifferentiableError
from adjoint_s2s.testing import isapprox, numerical_gradient


@dataclass
class Pt:
    x: float
    y: float

    def norm2(self):
        return self.x ** 2 + self.x * self.y + self.y ** 3


@dataclass
class PostPt:
    x: float
    y: float

    def __post_init__(self):
        self.z = self.x * self.y

    def norm2(self):
        return self.x ** 2 + self.z * self.y + self.y ** 3


@dataclass(frozen=True)
class FrozenPt:
    x: float
    y: float = 2.0

    def dot(self):
        return self.x * self.y * self.x


def dataclass_method(a, b):
    return Pt(a, b).norm2()


def dataclass_fields(a, b):
    p = Pt(a, b)
    return p.x ** 2 + p.x * p.y + p.y ** 3


def dataclass_post_init(a, b):
    return PostPt(a, b).norm2()


def dataclass_field_written(a, b):
    p = Pt(a, b)
    p.x = p.x * b
    return p.norm2()


def dataclass_keywords(a, b):
    p = Pt(x=a, y=b)
    return p.norm2() * a


def frozen_with_default(a, b):
    return FrozenPt(a).dot() * b + FrozenPt(a, b).dot()


@pytest.mark.parametrize("fn", [
    dataclass_method,
    dataclass_fields,
    dataclass_post_init,
    dataclass_field_written,
    dataclass_keywords,
    frozen_with_default,
], ids=lambda v: getattr(v, "__name__", None))
def test_hessian_through_a_dataclass(fn):
    p = np.array([0.3, 0.8])

    def f(q):
        return fn(q[0], q[1])

    got = ad.hessian(f, p)
    want = np.array([
        numerical_gradient(lambda q, i=i: ad.gradient(f, q)[0][i], p)[0] for i in range(len(p))
    ])
    assert isapprox(got, want, rtol=1e-6, atol=1e-7), (got, want)
    assert isapprox(ad.gradient(f, p)[0], numerical_gradient(f, p)[0], rtol=1e-6, atol=1e-8)


@dataclass(frozen=True)
class FrozenPost:
    x: float
    y: float = 2.0

    def __post_init__(self):
        pass

    def dot(self):
        return self.x * self.y * self.x


def frozen_with_post_init(a, b):
    return FrozenPost(a, b).dot()


def test_frozen_dataclass_with_post_init_first_and_second_order():
    # the second order was refused here (a zero before that); objects2 made it right
    got = ad.gradient(frozen_with_post_init, 0.3, 0.8)
    want = numerical_gradient(frozen_with_post_init, 0.3, 0.8)
    for g, w in zip(got, want):
        assert isapprox(g, w, rtol=1e-6, atol=1e-8)
    d_a = lambda a, b: ad.gradient(frozen_with_post_init, a, b)[0]  # noqa: E731
    got = ad.gradient(d_a, 0.3, 0.8)
    want = numerical_gradient(d_a, 0.3, 0.8)
    for g, w in zip(got, want):
        assert isapprox(g, w, rtol=1e-5, atol=1e-7), (got, want)


# ----- bound methods of a mutable object (`m = q.sq; m()`) -------------------------------
#
# The fields' gradients of the object a bound method reads stay in the identity store, as
# for q.sq() (call_method): a write of the field before the call takes them. Where a
# structural tangent of such an object goes back into the store (a constructor's or a
# pullback's seed), seed_fields' rule keeps the path for the second derivative.


class Box:
    def __init__(self, a):
        self.a = a

    def sq(self):
        return self.a ** 2 * 3.0

    def scaled(self, s):
        self.a = self.a * s
        return self


def make_box(x):
    return Box(x)


def call_it(m):
    return m()


def bound_method_and_field(x):
    q = Box(x)
    m = q.sq
    return m() + q.a


def bound_method_of_returned_box(x):
    q = make_box(x)
    m = q.sq
    return m() * x


def bound_method_by_getattr(x):
    q = Box(x)
    m = getattr(q, "sq")
    return m()


def bound_method_passed_on(x):
    q = Box(x)
    m = q.sq
    return call_it(m) + q.a * x


def bound_method_of_returned_self(x):
    q = Box(x)
    r = q.scaled(x)
    m = r.sq
    return m() + q.a


def bound_method_twice(x):
    q = Box(x)
    m = q.sq
    return m() * m()


def bound_method_after_field_written(x):
    q = Box(x)
    m = q.sq
    y = m()
    q.a = x * 2.0
    return y + m()


@pytest.mark.parametrize("fn", [
    bound_method_and_field,
    bound_method_of_returned_box,
    bound_method_by_getattr,
    bound_method_passed_on,
    bound_method_of_returned_self,
    bound_method_twice,
    bound_method_after_field_written,
], ids=lambda v: getattr(v, "__name__", None))
def test_bound_method_of_a_mutable_object(fn):
    x = 1.3
    assert isapprox(ad.gradient(fn, x)[0], numerical_gradient(fn, x)[0], rtol=1e-6, atol=1e-8)

    def g(y):
        return ad.gradient(fn, y)[0]

    assert isapprox(ad.gradient(g, x)[0], numerical_gradient(g, x)[0], rtol=1e-5, atol=1e-6)


def box_sq(q):
    return q.sq()


def first_box_sq(boxes):
    return boxes[0].sq()


def gradient_for_a_box(x):
    q = Box(x)
    g = ad.gradient(box_sq, q)[0]
    return g.a * x


def gradient_for_a_list_of_boxes(x):
    g = ad.gradient(first_box_sq, [Box(x)])[0]
    return g[0].a * x


def test_gradient_with_respect_to_an_object_differentiated():
    # the field gradients the inner gradient takes from the store depend on x too
    x = 1.5
    got = ad.gradient(gradient_for_a_box, x)[0]
    assert isapprox(got, numerical_gradient(gradient_for_a_box, x)[0], rtol=1e-6, atol=1e-8)
    # an object held by the argument: refused, not a gradient missing that part
    with pytest.raises(NotDifferentiableError, match="Box"):
        ad.gradient(gradient_for_a_list_of_boxes, x)
