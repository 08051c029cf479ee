"""Objects that stay local become local variables (passes/local_objects.py).

An object made in the differentiated function and read only as ``o.attr`` has its
``__init__`` and methods inlined and its fields turned into variables: the gradient is
what central differences give, the value what the plain call gives, and the generated
code does arithmetic on numbers (no field store, no dispatch per operation). Where the
object's identity could show, or Python's attribute lookup could differ from a
variable's, it stays an object (dispatched at run time, still right). What the code
rests on (the class, the functions inlined) is checked at each call.
"""
import math

import numpy as np
import pytest

import adjoint_s2s as ad

from .refusals import agrees


class Osc:
    damping = 0.1  # a constant of the class, read through self

    def __init__(self, k, x0=1.0):
        self.k = k
        self.x = x0
        self.v = 0.0

    def accel(self):
        return -self.k * self.x - self.damping * self.v

    def step(self, dt):
        a = self.accel()
        self.x = self.x + dt * self.v
        self.v = self.v + dt * a

    def energy(self):
        return 0.5 * self.v ** 2 + 0.5 * self.k * self.x ** 2


def simulate(k):
    o = Osc(k)
    for _ in range(50):
        o.step(0.01)
    return o.x


def simulate_energy(k):
    o = Osc(k, x0=0.5)
    e = 0.0
    for _ in range(20):
        o.step(dt=0.02)
        e = e + o.energy()
    return e


def helper_scale(v):
    return 2.0 * math.sin(v)


class Acc:
    def __init__(self, w):
        self.w = w
        self.total = 0.0
        self.hist = np.zeros(3)

    def add(self, v):
        self.total += helper_scale(v) * self.w
        self.hist[0] = self.hist[0] + v * self.w
        self.hist += v
        return self.total


def accumulate(x):
    acc = Acc(x)
    s = 0.0
    for i in range(4):
        s = s + acc.add(x * i)
    return s + acc.hist.sum()


@pytest.mark.parametrize("fn, x", [(simulate, 0.7), (simulate_energy, 1.3), (accumulate, 0.4)])
def test_local_object_replaced_and_right(fn, x):
    text = ad.show_adjoint(fn, x)
    assert "getattr_pair" not in text and "call_method" not in text and "_rt.binop" not in text, text
    assert "(inlined " in text
    assert ad.pullback(fn, x)[0] == fn(x)
    agrees(fn, x)


def test_fields_become_named_variables():
    text = ad.show_adjoint(simulate, 0.7)
    assert "o_x = " in text and "b_o_k" in text


def test_second_order_through_a_replaced_object():
    def d(k):
        return ad.gradient(simulate_energy, k)[0]

    got = ad.gradient(d, 1.3)[0]
    h = 1e-4
    assert np.isclose(got, (d(1.3 + h) - d(1.3 - h)) / (2 * h), rtol=1e-5, atol=1e-7)


# ----- objects that stay objects: still right --------------------------------------------------

def passed_on(k):
    o = Osc(k)
    o.step(0.1)
    return read_x(o)


def read_x(o, *rest):  # (*rest: never inlined, so o is passed on)
    return o.x * 2.0


def read_x_inlined(o):
    return o.x * 2.0


def handed_to_a_helper_inlined(k):
    o = Osc(k)
    o.step(0.1)
    o.step(0.1)
    return read_x_inlined(o)


def test_an_object_handed_to_a_helper_inlined_is_replaced_there():
    text = ad.show_adjoint(handed_to_a_helper_inlined, 0.8)
    assert "(inlined read_x_inlined)" in text and "getattr_pair" not in text and "_rt.call" not in text, text
    agrees(handed_to_a_helper_inlined, 0.8)


def returned_field_and_identity(k):
    o = Osc(k)
    o.step(0.1)
    same = isinstance(o, Osc)
    return o.x if same else 0.0


def read_before_call_in_one_statement(k):
    o = Osc(k)
    return o.x + stepped(o, 0.5)


def stepped(o, dt):
    o.step(dt)
    return o.x


def order_in_one_statement(k):
    o = Osc(k)
    o.v = 1.0
    return o.x * 3.0 + o.step_and_read(0.5)


class Counter:
    count = 0.0  # a class default the instance then shadows

    def __init__(self, w):
        self.w = w

    def bump(self, v):
        self.count = self.count + v * self.w


def class_default_shadowed(x):
    c = Counter(x)
    c.bump(x)
    c.bump(2.0)
    return c.count


class Prop:
    def __init__(self, w):
        self._w = w

    @property
    def w(self):
        return self._w * 2.0


def with_property(x):
    p = Prop(x)
    return p.w * x


class Base:
    def __init__(self, w):
        self.w = w


class Derived(Base):
    def twice(self):
        return 2.0 * self.w


def inherited(x):
    d = Derived(x)
    return d.twice() * x


class Rec:
    def __init__(self, w):
        self.w = w

    def power(self, n):
        if n == 0:
            return 1.0
        return self.w * self.power(n - 1)


def recursive_method(x):
    r = Rec(x)
    return r.power(3)


def captured(x):
    o = Osc(x)
    f = lambda: o.x * 2.0  # noqa: E731
    o.step(0.1)
    return f()


Osc.step_and_read = lambda self, dt: (self.step(dt), self.x)[1]


@pytest.mark.parametrize("fn", [passed_on, returned_field_and_identity, read_before_call_in_one_statement,
                                order_in_one_statement, class_default_shadowed, inherited,
                                recursive_method, captured])
def test_objects_whose_identity_or_lookup_shows_stay_objects(fn):
    text = ad.show_adjoint(fn, 0.8)
    assert "(inlined __init__)" not in text, text
    assert ad.pullback(fn, 0.8)[0] == fn(0.8)
    agrees(fn, 0.8)


def test_a_statement_reading_the_object_before_its_method_runs_keeps_the_order():
    # Python reads o.x (1.0) before o.step_and_read changes it: not hoisted
    o = Osc(0.8)
    o.v = 1.0
    want = o.x * 3.0 + o.step_and_read(0.5)
    assert ad.pullback(order_in_one_statement, 0.8)[0] == want


# ----- what the code rests on is checked at each call -------------------------------------------

class Spring:
    def __init__(self, k):
        self.k = k

    def force(self, x):
        return -self.k * x


def spring_force(k):
    s = Spring(k)
    return s.force(2.0)


def test_method_replaced_on_the_class_makes_the_code_again():
    assert ad.gradient(spring_force, 1.5)[0] == -2.0
    old = Spring.force
    try:
        Spring.force = lambda self, x: -self.k * x * x
        assert ad.gradient(spring_force, 1.5)[0] == -4.0
    finally:
        Spring.force = old
    assert ad.gradient(spring_force, 1.5)[0] == -2.0


def test_class_rebound_makes_the_code_again():
    global Spring
    assert ad.gradient(spring_force, 1.5)[0] == -2.0
    old = Spring

    class Spring:  # noqa: F811 - rebinding the global is the point
        def __init__(self, k):
            self.k = 3.0 * k

        def force(self, x):
            return -self.k * x

    try:
        assert ad.gradient(spring_force, 1.5)[0] == -6.0
    finally:
        Spring = old
    assert ad.gradient(spring_force, 1.5)[0] == -2.0


def two_objects_first_kept(x):
    a = Osc(x)
    b = Osc(2.0 * x)
    print_free = read_x(a)  # a is passed on: it stays an object
    b.step(0.1)
    return print_free + b.x


def test_an_object_kept_leaves_the_next_one_replaced():
    text = ad.show_adjoint(two_objects_first_kept, 0.8)
    assert "x_of_b = " in text and "(inlined step, accel)" in text, text
    agrees(two_objects_first_kept, 0.8)


class Buf:
    def __init__(self, arr):
        self.arr = arr

    def bump(self, v):
        self.arr[0] = self.arr[0] + v
        return 1.0


def value_read_before_a_method_that_writes(x):
    a = np.array([x, 2.0]) * 1.0
    b = Buf(a)
    return a[0] * 2.0 + b.bump(10.0)  # Python reads a[0] before bump writes it


def name_read_before_a_method(x):
    a = Osc(x)
    s = x * 1.0
    return s + a.energy()  # only a name before the call: taken out, same order


def test_a_method_is_taken_out_of_an_expression_only_after_names():
    text = ad.show_adjoint(name_read_before_a_method, 0.8)
    assert "(inlined energy)" in text
    agrees(name_read_before_a_method, 0.8)
    assert "(inlined __init__)" not in ad.show_adjoint(value_read_before_a_method_that_writes, 0.8)
    try:
        y, pb = ad.pullback(value_read_before_a_method_that_writes, 0.8)
    except ad.AdjointError:
        return  # refused: fine
    assert y == value_read_before_a_method_that_writes(0.8) == 2 * 0.8 + 1.0
    assert pb(1.0)[0] == pytest.approx(2.0)


# ----- dataclasses, and a name bound to a new object of the class at each step ---------------

from dataclasses import dataclass, field  # noqa: E402


@dataclass
class State:
    x: float
    v: float = 0.0

    def step(self, k, dt):
        a = -k * self.x - 0.1 * self.v
        return State(self.x + dt * self.v, self.v + dt * a)


@dataclass(frozen=True)
class Frozen:
    x: float
    v: float

    def step(self, k, dt):
        return Frozen(self.x + dt * self.v, self.v - dt * k * math.sin(self.x))


def functional_steps(k):
    s = State(1.0)
    for _ in range(30):
        s = s.step(k, 0.02)
    return s.x


def frozen_steps(k):
    s = Frozen(1.0, 0.0)
    for _ in range(30):
        s = s.step(k, 0.02)
    return s.x + s.v


def dataclass_fields_written(k):
    s = State(k, v=2.0)
    s.v = s.v * k
    s.x += s.v
    return s.x * s.v


@pytest.mark.parametrize("fn", [functional_steps, frozen_steps, dataclass_fields_written])
def test_dataclasses_and_new_objects_each_step_replaced(fn):
    text = ad.show_adjoint(fn, 1.3)
    assert "(inlined __init__)" in text and "call_method" not in text and "_rt.call(" not in text, text
    assert ad.pullback(fn, 1.3)[0] == fn(1.3)
    agrees(fn, 1.3)


@dataclass
class WithFactory:
    xs: list = field(default_factory=list)


class Grows:
    def __init__(self, x):
        self.x = x

    def more(self):
        g = Grows(self.x * 2.0)
        g.extra = self.x
        return g

    def then(self):
        return self

    def other(self):
        return Osc(self.x)


def frozen_written(k):
    s = Frozen(k, 0.0)
    object.__setattr__(s, "v", k)  # (s passed on: stays an object)
    return s.v


def factory_default(k):
    w = WithFactory()
    w.xs.append(k * k)
    return w.xs[0]


def bound_again_without_a_field(k):
    g = Grows(k)
    g = g.more()  # the new object has `extra` from a store after its __init__
    return g.extra * g.x


def bound_again_to_itself(k):
    g = Grows(k)
    g = g.then()
    return g.x * k


def bound_again_to_another_class(k):
    g = Grows(k)
    g = g.other()
    return g.x * k


@pytest.mark.parametrize("fn", [frozen_written, factory_default, bound_again_without_a_field,
                                bound_again_to_itself, bound_again_to_another_class])
def test_new_objects_that_could_differ_from_variables_stay_objects(fn):
    try:
        text = ad.show_adjoint(fn, 1.3)
    except ad.AdjointError:
        return  # refused on the object path: fine (never wrong)
    assert "call_method" in text or "_rt.call(" in text or "getattr_pair" in text, text
    try:
        y, pb = ad.pullback(fn, 1.3)
    except ad.AdjointError:
        return
    assert y == fn(1.3)
    agrees(fn, 1.3)


def test_a_frozen_dataclass_field_store_still_raises():
    def store(k):
        s = Frozen(k, 0.0)
        s.v = k
        return s.v

    import dataclasses
    with pytest.raises((dataclasses.FrozenInstanceError, ad.AdjointError)):
        ad.gradient(store, 1.3)


class Layer:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    @property
    def scale(self):
        return self.w * self.w

    def __call__(self, v):
        return math.tanh(self.w * v + self.b)


def called_and_property(x):
    layer = Layer(x, 0.5)
    h = layer(2.0)
    return layer(h) * layer.scale + with_property(x)


def test_calls_of_the_object_and_its_properties_inlined():
    text = ad.show_adjoint(called_and_property, 0.8)
    assert "(inlined __call__)" in text and "(inlined scale)" in text and "getattr_pair" not in text, text
    assert ad.pullback(called_and_property, 0.8)[0] == called_and_property(0.8)
    agrees(called_and_property, 0.8)
    agrees(with_property, 0.8)


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b * a

    def swap(self):
        self.a, self.b = self.b, self.a


def fields_by_tuple(x):
    p = Pair(x, 2.0)
    p.swap()
    return p.a * math.sin(p.b)


def test_fields_stored_by_tuple_assignment():
    assert "(inlined __init__)" in ad.show_adjoint(fields_by_tuple, 0.8)
    assert ad.pullback(fields_by_tuple, 0.8)[0] == fields_by_tuple(0.8)
    agrees(fields_by_tuple, 0.8)


def made_and_called_at_once(x):
    return Layer(x, 0.5)(2.0) + Osc(x).energy() * Pair(x, 3.0).a


def test_an_object_made_and_used_in_one_expression_is_replaced():
    text = ad.show_adjoint(made_and_called_at_once, 0.8)
    assert text.count("(inlined __init__)") == 3 and "call_method" not in text, text
    assert ad.pullback(made_and_called_at_once, 0.8)[0] == made_and_called_at_once(0.8)
    agrees(made_and_called_at_once, 0.8)
