"""Record arguments: their fields read once, at the entry (passes/param_fields.py).

A function of a parameters object (a dataclass, a plain class) gets code specialised on
the kinds of the fields it reads, checked at every call; each case here is checked
against central differences, against the plain call's value, and, where the reads must
not move, against the code that keeps them in place.
"""
import dataclasses
import functools
import math
import sys
import warnings

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.kinds import field_kinds


@dataclasses.dataclass
class Params:
    k: float
    c: float


class Plain:
    def __init__(self, k, c):
        self.k = k
        self.c = c


def damped(p, x):
    s = 0.0
    for _ in range(30):
        x = x + 0.01 * (-p.k * x - p.c * math.sin(x))
        s = s + x * x
    return s


def damped_scalars(k, c, x):
    s = 0.0
    for _ in range(30):
        x = x + 0.01 * (-k * x - c * math.sin(x))
        s = s + x * x
    return s


def central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def field_grads(g):
    """(dk, dc) of a record's tangent."""
    return g.k, g.c


@pytest.mark.parametrize("cls", [Params, Plain])
def test_fields_read_once_give_the_scalar_forms_gradients(cls):
    p = cls(2.0, 0.5)
    gp, gx = ad.gradient(damped, p, 0.3)
    want = ad.gradient(damped_scalars, 2.0, 0.5, 0.3)
    assert field_grads(gp) == pytest.approx(want[:2], rel=1e-12)
    assert gx == pytest.approx(want[2], rel=1e-12)
    assert gx == pytest.approx(central(lambda x: damped(p, x), 0.3), rel=1e-6)
    assert gp.k == pytest.approx(central(lambda k: damped(cls(k, 0.5), 0.3), 2.0), rel=1e-6)
    text = ad.show_adjoint(damped, p, 0.3)
    # a plain read at the entry, its gradient handed to the record once in the pullback
    assert "p_k = p.k" in text and "_rt.entry_field_grad(p, 'k', " in text
    assert "getattr_pair" not in text and "_rt.binop" not in text


def scaled(p, x):
    return np.sum(p.k * x * x) + p.c * x


def test_a_field_changing_kind_between_calls_makes_the_code_again():
    p = Plain(2.0, 0.5)
    first = ad.gradient(scaled, p, 0.3)
    assert (first[0].k, first[0].c, first[1]) == pytest.approx((0.09, 0.3, 2 * 2.0 * 0.3 + 0.5))
    p.k = np.array([2.0, 1.0])  # an array now
    gp, gx = ad.gradient(scaled, p, 0.3)
    assert np.allclose(gp.k, [0.09, 0.09]) and gp.c == pytest.approx(0.3)
    assert gx == pytest.approx(2 * 3.0 * 0.3 + 0.5)
    assert "p_k = p.k" in ad.show_adjoint(scaled, p, 0.3)
    p.k = 2.0
    again = ad.gradient(scaled, p, 0.3)
    assert (again[0].k, again[0].c, again[1]) == (first[0].k, first[0].c, first[1])


def test_a_field_added_or_removed_between_calls():
    p = Plain(2.0, 0.5)
    want = ad.gradient(damped, p, 0.3)
    p.extra = 1.0  # another field: another key, the same gradients
    got = ad.gradient(damped, p, 0.3)
    assert field_grads(got[0]) == field_grads(want[0]) and got[1] == want[1]
    del p.c
    with pytest.raises(AttributeError):
        ad.gradient(damped, p, 0.3)


SHARED = Plain(2.0, 0.5)


def bump():
    SHARED.k = SHARED.k + 1.0


def reads_after_a_helper_rebinds(p, x):
    y = p.k * x
    bump()
    return y + p.k * x


def test_a_helper_that_rebinds_the_field_keeps_the_reads_in_place():
    SHARED.k = 2.0
    plain = reads_after_a_helper_rebinds(SHARED, 0.3)
    SHARED.k = 2.0
    y, back = ad.pullback(reads_after_a_helper_rebinds, SHARED, 0.3)
    assert y == plain  # 2.0 * 0.3 + 3.0 * 0.3
    assert back(1.0)[1] == pytest.approx(5.0)
    assert "read once" not in ad.show_adjoint(reads_after_a_helper_rebinds, SHARED, 0.3)


def writes_a_field(p, x):
    p.c = p.k * x
    return p.c * x


def test_a_function_writing_a_field_keeps_its_reads():
    p = Plain(2.0, 0.5)
    gp, gx = ad.gradient(writes_a_field, p, 0.3)
    assert gx == pytest.approx(central(lambda x: writes_a_field(Plain(2.0, 0.5), x), 0.3), rel=1e-6)
    assert "read once" not in ad.show_adjoint(writes_a_field, Plain(2.0, 0.5), 0.3)


class Shadowed:
    """`k` is a property over the field `_k`: a data descriptor wins over the instance dict."""

    def __init__(self, k):
        self._k = k

    @property
    def k(self):
        return 2.0 * self._k


class Hooked:
    def __init__(self, k):
        self.k = k

    def __getattr__(self, name):
        return 1.0


def times_k(p, x):
    return p.k * x * x


@pytest.mark.parametrize("make", [lambda: Shadowed(1.5), lambda: Hooked(3.0)])
def test_properties_and_hooks_are_never_read_as_fields(make):
    p = make()
    assert ad.gradient(times_k, p, 0.3)[1] == pytest.approx(2 * 0.3 * p.k)
    assert "read once" not in ad.show_adjoint(times_k, p, 0.3)


def test_the_key_names_only_plain_fields():
    p = Shadowed(1.0)
    p.__dict__["k"] = 5.0  # the property still wins: no readable kind
    assert dict(field_kinds((p,))[0][1])["k"] == "other"
    assert field_kinds((Hooked(1.0), 1.0, [1.0, "s"], np.ones((2, 2)), len)) == ()
    assert field_kinds((np.ones(2),)) == ((0, (("[i]", "real"),)),)  # a 1-D float64 array
    # (a list of numbers is keyed by the kind of its items: tests/test_item_kinds.py)
    assert field_kinds((Hooked(1.0), [1.0], (np.ones(2),))) == ((1, (("[]", "real"),)), (2, (("()", "array"),)))


class Model:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def loss(self, x):
        h = np.tanh(self.w @ x + self.b)
        return np.sum(h * h)


def test_a_methods_self_and_array_fields():
    rng = np.random.default_rng(0)
    m = Model(rng.normal(size=(3, 4)), rng.normal(size=3))
    x = rng.normal(size=4)
    (gx,) = ad.gradient(m.loss, x)
    h = 1e-6
    for i in range(4):
        e = np.zeros(4)
        e[i] = h
        assert gx[i] == pytest.approx((m.loss(x + e) - m.loss(x - e)) / (2 * h), rel=1e-5, abs=1e-8)
    gm, _ = ad.gradient(Model.loss, m, x)
    for i in range(3):
        e = np.zeros(3)
        e[i] = h
        fd = (Model(m.w, m.b + e).loss(x) - Model(m.w, m.b - e).loss(x)) / (2 * h)
        assert gm.b[i] == pytest.approx(fd, rel=1e-5, abs=1e-8)
    assert "read once" in ad.show_adjoint(Model.loss, m, x)


def test_second_order_through_a_record():
    p = Params(2.0, 0.5)

    def dx(x):
        return ad.gradient(damped, p, x)[1]

    got = ad.gradient(dx, 0.3)[0]
    assert got == pytest.approx(central(dx, 0.3, 1e-5), rel=1e-5)


def sums_a_list(p, x):
    xs = [x, p.k * x]
    return sum(xs) * p.c


def test_code_still_dispatched_takes_the_reads_back():
    p = Plain(2.0, 0.5)
    gp, gx = ad.gradient(sums_a_list, p, 0.3)
    assert gx == pytest.approx(central(lambda x: sums_a_list(p, x), 0.3), rel=1e-6)
    assert (gp.k, gp.c) == pytest.approx((0.5 * 0.3, 0.3 + 2.0 * 0.3))
    assert "read once" not in ad.show_adjoint(sums_a_list, p, 0.3)


def two_records(p, q, x):
    return p.k * x + q.k * x * x


def test_two_records_and_the_same_one_twice():
    p, q = Plain(2.0, 0.5), Plain(3.0, 0.5)
    gp, gq, gx = ad.gradient(two_records, p, q, 0.3)
    assert (gp.k, gq.k, gx) == pytest.approx((0.3, 0.09, 2.0 + 2 * 3.0 * 0.3))
    # the same object twice: its whole gradient once, as with the reads in place
    got = ad.gradient(two_records, p, p, 0.3)
    kept = ad.gradient(two_records_kept, p, p, 0.3, Opaque())
    assert got[2] == kept[2] == pytest.approx(2.0 + 2 * 2.0 * 0.3)
    assert [g if g is None else g.k for g in got[:2]] == [g if g is None else g.k for g in kept[:2]]
    assert sum(g.k for g in got[:2] if g is not None) == pytest.approx(0.3 + 0.09)


class Opaque:
    """An object argument: its presence keeps the reads in place (the module's docstring)."""


def two_records_kept(p, q, x, o):
    return p.k * x + q.k * x * x


def with_an_object(p, o, x):
    return p.k * x + o.scale * x


def test_another_object_argument_keeps_the_reads_in_place():
    class Other:
        scale = 4.0

    p = Plain(2.0, 0.5)
    assert ad.gradient(with_an_object, p, Other(), 0.3)[2] == pytest.approx(6.0)
    assert "read once" not in ad.show_adjoint(with_an_object, p, Other(), 0.3)


# ----- where code of the user's could run in the function, the fields stay read in place
# (found by probing: each of these rebinds p.k between the two reads; hoisted, the value
# and the gradient were those of the first read)

CURRENT = [None]


def bump_current():
    CURRENT[0].k = CURRENT[0].k + 1.0


def via_sys_modules(p, x):
    y = p.k * x
    sys.modules[__name__].bump_current()
    return y + p.k * x


BUMP = functools.partial(bump_current)


def via_partial(p, x):
    y = p.k * x
    BUMP()
    return y + p.k * x


def via_warnings(p, x):
    y = p.k * x
    warnings.warn("step")
    return y + p.k * x


class BumpingStr(str):
    def __eq__(self, other):
        bump_current()
        return str.__eq__(self, other)

    __hash__ = str.__hash__


MODE = BumpingStr("a")


def via_a_str_subclass(p, x):
    y = p.k * x
    if MODE == "a":
        y = y + x
    return y + p.k * x


def expected_after_bump(f, x=0.5):
    """(value, d/dx) of the plain call, where the field is rebound between the reads."""
    h = 1e-6

    def run(x):
        p = Plain(1.5, 0.0)
        CURRENT[0] = p
        return f(p, x)

    return run(x), (run(x + h) - run(x - h)) / (2 * h)


@pytest.mark.parametrize("f", [via_sys_modules, via_partial, via_warnings, via_a_str_subclass])
def test_user_code_reached_in_the_function_keeps_the_reads(f):
    with warnings.catch_warnings():  # (a warnings hook of the user's: it rebinds p.k)
        warnings.simplefilter("always")
        old = warnings.showwarning
        warnings.showwarning = lambda *a, **k: bump_current()
        try:
            want_y, want_dx = expected_after_bump(f)
            p = Plain(1.5, 0.0)
            CURRENT[0] = p
            y, back = ad.pullback(f, p, 0.5)
            got_dx = back(1.0)[1]
            CURRENT[0] = Plain(1.5, 0.0)
            text = ad.show_adjoint(f, CURRENT[0], 0.5)
        finally:
            warnings.showwarning = old
    assert y == pytest.approx(want_y) and got_dx == pytest.approx(want_dx, rel=1e-6)
    assert "read once" not in text


class Bumps:
    def __rmul__(self, other):
        bump_current()
        return 0.0


def with_objects_in_an_array(p, objs, x):
    y = p.k * x
    2.0 * objs
    return y + p.k * x


def test_an_array_of_objects_keeps_the_reads():
    objs = np.array([Bumps()], dtype=object)
    assert field_kinds((Plain(1.0, 0.0), objs, 0.5)) == ()
    p = Plain(1.5, 0.0)
    CURRENT[0] = p
    plain = with_objects_in_an_array(p, objs, 0.5)
    p = Plain(1.5, 0.0)
    CURRENT[0] = p
    assert ad.pullback(with_objects_in_an_array, p, objs, 0.5)[0] == pytest.approx(plain)


class HidingMeta(type):
    """Answers `cls.__getattribute__` with object's, hiding the class's own."""

    def __getattribute__(cls, name):
        if name == "__getattribute__":
            return object.__getattribute__
        return type.__getattribute__(cls, name)


class Counting(metaclass=HidingMeta):
    def __init__(self, k):
        self.k = k

    def __getattribute__(self, name):
        v = object.__getattribute__(self, name)
        if name == "k":
            object.__setattr__(self, "k", v + 1.0)
        return v


def test_a_metaclass_does_not_hide_the_classs_own_lookup():
    assert field_kinds((Counting(1.0),)) == ()
    got = ad.pullback(times_k, Counting(1.5), 0.3)[0]
    assert got == pytest.approx(times_k(Counting(1.5), 0.3))


@dataclasses.dataclass(frozen=True)
class Frozen:
    k: float
    c: float
    W: np.ndarray


def frozen_loss(p, x):
    return np.sum(np.tanh(p.W * x) * p.k) + p.c * x * x


def test_a_frozen_record_gets_its_tangent_from_the_fields_read_at_the_entry():
    # a frozen dataclass keeps no field store: its fields' gradients make its Tangent
    p = Frozen(1.5, 0.5, np.array([0.3, -0.7]))
    assert "read once" in ad.show_adjoint(frozen_loss, p, 0.4)
    gp, gx = ad.gradient(frozen_loss, p, 0.4)
    assert gp.k == pytest.approx(central(lambda k: frozen_loss(Frozen(k, 0.5, p.W), 0.4), 1.5), rel=1e-6)
    assert gp.c == pytest.approx(0.16)
    assert np.allclose(gp.W, [central(lambda w: frozen_loss(Frozen(1.5, 0.5, np.array([w, -0.7])), 0.4), 0.3),
                              central(lambda w: frozen_loss(Frozen(1.5, 0.5, np.array([0.3, w])), 0.4), -0.7)])
    assert gx == pytest.approx(central(lambda x: frozen_loss(p, x), 0.4), rel=1e-6)
