"""super(): `super().__init__()` (and `Base.__init__(self)`) that reaches object's __init__, in a
class hierarchy whose base defines none: object.__init__ does nothing, and was refused
as a function without a rule."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient


class Module:
    def parameters(self):
        return [self.w]


class Dense(Module):
    def __init__(self, w):
        super().__init__()
        self.w = w

    def __call__(self, x):
        return np.sum(np.tanh(self.w * x))


class Explicit(Module):
    def __init__(self, w):
        Module.__init__(self)
        self.w = w


class Base:
    def __init__(self, s):
        self.s = s


class Middle(Base):
    pass


class Leaf(Middle):
    def __init__(self, w):
        super().__init__(w * 2.0)  # Base's, past a class without one
        self.w = w


class TooMany(Module):
    def __init__(self, w):
        super().__init__(w)  # object.__init__ takes no arguments: Python's TypeError
        self.w = w


X = np.array([0.1, 0.5])


def layered(w):
    return Dense(w)(X) * Explicit(w).w * Leaf(w).s


def test_object_init_through_super_does_nothing():
    got = ad.gradient(layered, 0.7)[0]
    assert np.isclose(got, numerical_gradient(layered, 0.7)[0], rtol=1e-7)
    h = ad.hessian(layered, 0.7)
    fd = numerical_gradient(lambda v: ad.gradient(layered, v)[0], 0.7)[0]
    assert np.isclose(h, fd, rtol=1e-5)


def test_object_init_given_arguments_raises_pythons_type_error():
    with pytest.raises(TypeError) as plain:
        TooMany(0.7)
    with pytest.raises(TypeError) as got:
        ad.gradient(lambda w: TooMany(w).w, 0.7)
    assert str(got.value) == str(plain.value)


class Square:
    def __init__(self, w):
        self.w = w

    @property
    def w2(self):
        return self.w * self.w


class SquarePlus(Square):
    @property
    def w2(self):
        return super().w2 + self.w  # the base's property, read on the object


class SquareTwice(Square):
    def total(self):
        return super(SquareTwice, self).w2 * 2.0


def test_a_property_read_through_super_is_differentiated():
    # (it was read as a plain value: the base's part of the gradient was lost, 1.0 for 2.4)
    f = lambda w: SquarePlus(w).w2  # noqa: E731
    assert ad.gradient(f, 0.7)[0] == pytest.approx(2 * 0.7 + 1)
    g = lambda w: SquareTwice(w).total()  # noqa: E731
    assert ad.gradient(g, 0.7)[0] == pytest.approx(4 * 0.7)
    assert ad.hessian(f, 0.7) == pytest.approx(2.0)


class Doubled:
    """A descriptor written in Python: its value is computed from the object."""

    def __get__(self, obj, cls=None):
        return obj.w * 2.0 if obj is not None else self


class WithDescriptor(Square):
    twice = Doubled()


class ReadsItThroughSuper(WithDescriptor):
    def total(self):
        return super().twice * self.w


def test_another_descriptor_read_through_super_is_refused():
    from adjoint_s2s.errors import NotDifferentiableError
    with pytest.raises(NotDifferentiableError, match=r"super\(\)\.twice"):
        ad.gradient(lambda w: ReadsItThroughSuper(w).total(), 0.7)
