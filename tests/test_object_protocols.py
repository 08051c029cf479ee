"""Objects of user classes reached through Python's protocols rather than a method call.

Each case gave a zero gradient (or a bare internal exception) before: a builtin given an
object (``float(m)``, ``abs(m)``, ``math.sqrt(m)``, ``operator.add(v, w)``, ``sum(bag)``)
ran the object's methods as plain Python and handed the gradient back as a number; a
method called through ``super()`` read ``self`` without a gradient; an object updated
through ``__call__``, a descriptor's ``__get__``, a ``cached_property``, ``__getattr__``
and a write into ``obj.__dict__`` were read as constants; iterating an object (its
``__iter__``, or ``__getitem__`` from 0) lost its items' gradients. Now the methods run
through AD and the gradients agree with central differences; what cannot be followed is
refused with the construct, the user's line and the way out.
"""
import collections.abc
import enum
import functools
import math
import operator

import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import AdjointError, MissingAdjointError, NotDifferentiableError

from .refusals import agrees

X = 0.7


# ----- super() --------------------------------------------------------------------------


class Base:
    def v(self):
        return self.w * self.s

    def g(self, t):
        return self.w * t


class Kid(Base):
    def __init__(self, w, s):
        self.w = w
        self.s = s

    def v(self):
        return super().v()

    def g(self, t):
        return super().g(t) + self.s


class Kid2(Base):
    def __init__(self, w, s):
        self.w = w
        self.s = s

    def v(self):
        return super(Kid2, self).v() * 2.0


def super_fields(a):
    return Kid(a, a * a).v()


def super_argument(a):
    return Kid(a, 2.0).g(a * 3.0)


def super_explicit(a):
    return Kid2(a, 1.5).v()


@pytest.mark.parametrize("fn", [super_fields, super_argument, super_explicit])
def test_super_reads_self(fn):
    agrees(fn, X)


# ----- __call__ updating the object -------------------------------------------------------


class Counter:
    def __init__(self):
        self.total = 0.0

    def __call__(self, v):
        self.total += v
        return v


def call_updates(x):
    c = Counter()
    c(x)
    c(x * x)
    return c.total


def test_call_updates_object():
    agrees(call_updates, X)


# ----- builtins that call a dunder method ---------------------------------------------------


class Money:
    def __init__(self, amt):
        self.amt = amt

    def __abs__(self):
        return Money(abs(self.amt) * 2.0)

    def __float__(self):
        return float(self.amt * 3.0)

    def __pow__(self, p):
        return Money(self.amt ** p)

    def __round__(self, n=None):
        return Money(self.amt * 1.5)

    def __add__(self, o):
        return Money(self.amt + (o.amt if isinstance(o, Money) else o))

    def __radd__(self, o):
        return Money(self.amt + o)

    def __floor__(self):
        return self.amt * 4.0


def b_sum_start(a):
    return sum([Money(a)], Money(a * a)).amt


def b_sum_radd(a):
    return sum([Money(a), Money(2 * a)]).amt


def b_abs(a):
    return abs(Money(a)).amt


def b_float(a):
    return float(Money(a))


def b_pow(a):
    return pow(Money(a), 2).amt


def b_round(a):
    return round(Money(a), 3).amt


def b_floor(a):
    return math.floor(Money(a))


def b_sqrt(a):
    return math.sqrt(Money(a))


def b_exp(a):
    return math.exp(Money(a))


def b_operator(a):
    return operator.add(Money(a), Money(a * a)).amt


@pytest.mark.parametrize("fn", [b_sum_start, b_sum_radd, b_abs, b_float, b_pow, b_round,
                                b_floor, b_sqrt, b_exp, b_operator])
def test_builtin_runs_the_dunder(fn):
    agrees(fn, X)


class Plain:
    def __init__(self, v):
        self.v = v


def b_unknown(a):
    return math.hypot(Plain(a), 1.0)


def test_builtin_without_the_method_is_refused():
    # math.hypot of an object without __float__: Python's own TypeError, never a zero
    with pytest.raises(TypeError):
        ad.gradient(b_unknown, X)


class Bits:
    def __init__(self, v):
        self.v = v

    def __index__(self):
        return 3


def b_index(a):
    b = Bits(a)
    return math.sqrt(b) * a


def test_builtin_through_a_method_not_followed_is_refused():
    with pytest.raises(AdjointError) as info:
        ad.gradient(b_index, X)
    msg = str(info.value)
    assert "Bits" in msg and "sqrt" in msg and "test_object_protocols.py" in msg, msg


# ----- iterating an object -----------------------------------------------------------------


class Bag:
    def __init__(self, v):
        self.vals = list(v)

    def __iter__(self):
        return iter(self.vals)


class Seq:
    def __init__(self, v):
        self.vals = list(v)

    def __getitem__(self, i):
        return self.vals[i] * 2.0

    def __len__(self):
        return len(self.vals)


def it_sum(x):
    return sum(Bag([x, 2.0]))


def it_for(x):
    s = 0.0
    for v in Bag([x, x * x]):
        s = s + v * v
    return s


def it_for_indexed(x):
    s = 0.0
    for v in Seq([x, x * x]):
        s = s + v * 3.0
    return s


def it_max(x):
    return max(Bag([x * 3.0, 2.0]))


def it_list(x):
    return list(Bag([x, 2.0]))[0] * x


def it_next_of_iter(x):
    return next(iter(Bag([x * x, 2.0])))


def it_zip(x):
    return sum(a * b for a, b in zip(Bag([x, 2.0]), [1.0, 3.0]))


def it_enumerate(x):
    return sum(i * v for i, v in enumerate(Bag([x, x * x])))


def it_reversed(x):
    return list(reversed(Seq([x, x * x])))[0]


def it_map(x):
    return sum(map(lambda v: v * v, Bag([x, 2.0])))


def it_sum_indexed(x):
    return sum(Seq([x, 2.0]))


def unpack_object(x):
    p, q = Bag([x, 2.0])
    return p * q


def unpack_starred(x):
    a, *b = Bag([x, 2.0, x * x])
    return a * b[1]


def unpack_starred_unused(x):
    a, *b = Bag([x, 2.0, x * x])
    return a * 2.0


def unpack_zip(x):
    xs, ys = zip(*[(x, 1.0), (2.0, x)])
    return xs[0] * ys[1]


class AbcSeq(collections.abc.Sequence):
    """Its __iter__ is the library's mixin, reading self[0], self[1], ..."""

    def __init__(self, v):
        self.vals = v

    def __getitem__(self, i):
        return self.vals[i] * 3.0

    def __len__(self):
        return len(self.vals)


def it_abc_sum(x):
    return sum(AbcSeq([x, 2.0 * x]))


def it_abc_for(x):
    s = 0.0
    for v in AbcSeq([x, x * x]):
        s += v
    return s


def it_abc_comprehension(x):
    a = [v * v for v in AbcSeq([x, 2.0])]
    return a[0] + a[1]


@pytest.mark.parametrize("fn", [it_abc_sum, it_abc_for, it_abc_comprehension])
def test_iterating_a_library_sequence(fn):
    agrees(fn, X)


@pytest.mark.parametrize("fn", [it_sum, it_for, it_for_indexed, it_max, it_list, it_next_of_iter,
                                it_zip, it_enumerate, it_reversed, it_map, it_sum_indexed,
                                unpack_object, unpack_starred, unpack_starred_unused,
                                unpack_zip])
def test_iterating_an_object(fn):
    agrees(fn, X)


class Countdown:
    """An iterator written in Python: its __next__ changes it."""

    def __init__(self, v):
        self.v = v
        self.n = 2

    def __iter__(self):
        return self

    def __next__(self):
        if self.n == 0:
            raise StopIteration
        self.n -= 1
        return self.v


def it_iterator(x):
    return sum(Countdown(x))


def it_iterator_loop(x):
    s = 0.0
    for v in Countdown(x):
        s = s + v
    return s


def it_next(x):
    return next(Countdown(x * x)) + x  # __next__ called once, through AD


def test_next_of_an_iterator_class():
    agrees(it_next, X)


@pytest.mark.parametrize("fn", [it_iterator, it_iterator_loop])
def test_iterator_class_is_refused(fn):
    with pytest.raises(NotDifferentiableError) as info:
        ad.gradient(fn, X)
    msg = str(info.value)
    assert "Countdown" in msg and "__iter__" in msg and "test_object_protocols.py" in msg, msg


# ----- attributes computed by the class ----------------------------------------------------


class Lazy:
    def __init__(self, t):
        self._t = t

    def __getattr__(self, name):
        return self._t * 2.0


class Level:
    def __get__(self, obj, typ=None):
        return obj._level * 1.5


class Tank:
    level = Level()

    def __init__(self, lvl):
        self._level = lvl


class Cached:
    def __init__(self, xs):
        self.xs = xs

    @functools.cached_property
    def total(self):
        return sum(self.xs)


class Direct:
    def __init__(self, lr):
        self.__dict__["lr"] = lr


def a_getattr(x):
    return Lazy(x).anything * x


def a_descriptor(x):
    return Tank(x).level


def a_cached(x):
    c = Cached([x, x * x])
    return c.total + c.total * x


def a_dict_write(x):
    return Direct(x).lr * 3.0


@pytest.mark.parametrize("fn", [a_getattr, a_descriptor, a_cached, a_dict_write])
def test_attribute_computed_by_the_class(fn):
    agrees(fn, X)


# ----- crashes: staticmethod through an instance, an enum global -------------------------------


class Units:
    @staticmethod
    def sq(x):
        return x * x


def static_through_instance(x):
    return Units().sq(x) + x


class Mode(enum.Enum):
    QUAD = 1
    LIN = 2


MODE = Mode.QUAD


def enum_global(x):
    return x * x if MODE is Mode.QUAD else x


@pytest.mark.parametrize("fn", [static_through_instance, enum_global])
def test_no_crash(fn):
    agrees(fn, X)
    agrees(fn, X)  # (the cached entry: its guards checked again)


def test_refusal_names_the_builtin():
    # a builtin that has a rule for numbers and no route to an object's method
    class Box:
        def __init__(self, v):
            self.v = v

    def f(x):
        return math.atan2(Box(x), 1.0)

    with pytest.raises((MissingAdjointError, TypeError)):
        ad.gradient(f, X)


# ----- second order -------------------------------------------------------------------------


def second_float(x):
    return float(Money(x * x))


def second_abs(x):
    return abs(Money(x)).amt * x


def second_sum(x):
    return sum(Bag([x * x, x])) * x


def second_math(x):
    return math.exp(Money(x))


def _first(fn):
    return lambda x: ad.gradient(fn, x)[0]


@pytest.mark.parametrize("fn", [second_float, second_abs, second_sum, second_math])
def test_second_order(fn):
    agrees(_first(fn), X)


def second_loop(x):
    t = 0.0
    for v in Bag([x * x, x]):
        t = t + v * v
    return t


def test_second_order_loop_over_object_is_refused():
    with pytest.raises(NotDifferentiableError) as info:
        ad.gradient(_first(second_loop), X)
    assert "Bag" in str(info.value) and "list(obj)" in str(info.value)
