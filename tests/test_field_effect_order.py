"""A field written after the object was made, then read (`p = C(x); p.v = x * x; return
p.v`): the pullback of the read puts the field's gradient where the object keeps it, and
the reverse of the write takes it from there. The clean-up pass folded the read's
pullback call into a later line, after the write's reverse: the write took nothing and
the gradient was the constructor's (1 where it is 2x). A pullback line that may read or
change those gradients no longer moves past another that may (cleanup._use_of)."""
import numpy as np
import pytest

import adjoint_s2s as ad


class C:
    def __init__(self, v):
        self.v = v


class Outer:
    def __init__(self, s):
        self.sub = s


class Base:
    def __init__(self, w):
        self.w = w


class Child(Base):
    def __init__(self, w, b):
        super().__init__(w)
        self.b = b


def field_written_after_the_constructor(x):
    p = C(x)
    p.v = x * x
    return p.v


def field_given_a_constant(x):
    p = C(x)
    p.v = 3.0
    return p.v + x


def written_through_another_name(x):
    s = C(x)
    t = s
    t.v = x * x
    return s.v


def read_through_an_outer_object(x):
    s = C(x * 1.0)
    o = Outer(s)
    s.v = x * x
    return float(np.sum(o.sub.v))


def written_through_a_dict(x):
    ps = {"a": C(x[0])}
    pa = ps["a"]
    ps["a"].v = x[1] ** 2
    return pa.v


def field_of_a_subclass(x):
    c = Child(x, 1.5)
    c.b = x * x
    return c.b


@pytest.mark.parametrize("f,x", [
    (field_written_after_the_constructor, 2.0),
    (field_given_a_constant, 2.0),
    (written_through_another_name, 2.0),
    (read_through_an_outer_object, np.array([0.5, -1.0])),
    (written_through_a_dict, np.array([0.5, -1.0])),
    (field_of_a_subclass, 0.5),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_field_written_then_read_has_the_written_gradient(f, x):
    y, pb = ad.pullback(f, x)
    assert y == f(x)
    got = pb(1.0)[0]
    if isinstance(x, float):
        want = (f(x + 1e-6) - f(x - 1e-6)) / 2e-6
    else:
        want = np.array([(f(x + e) - f(x - e)) / 2e-6 for e in np.eye(x.size) * 1e-6])
    got = np.zeros_like(x) if got is None else got
    assert np.allclose(got, want, rtol=1e-6, atol=1e-8)
