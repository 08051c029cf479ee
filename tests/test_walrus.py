"""Assignment expressions (`a := e`), in the order Python evaluates a statement.

A `:=` binds its name at its place in the statement's left-to-right evaluation: a read of
the name before it sees the old value, after it the new one (`a + (a := 3 * a)` is 4a).
The normaliser copies such reads where they stand (passes/walrus.py). Before, every read
saw the new value (a wrong value and gradient), and `a := a * 2` outside a loop lost the
gradient (None). Each case: the value under pullback against the plain call, the gradient
against central differences, first and second order."""
import math

import numpy as np
import pytest

import adjoint_s2s as ad


def self_rebind(x):
    a = x
    b = (a := a * 2.0) + 1.0
    return b * a


def in_a_test(x):
    a = x
    if (a := math.sin(a)) > 0.1:
        return a * x
    return -a


def binop(x):
    a = x
    return a + (a := a * 3.0)


def compare(x):
    a = x
    s = 0.0
    if a < (a := a * 2.0):
        s = a
    return s + a


def conditional(x):
    a = x
    return a if (a := a * 2.0) > 0 else -a


def call_arguments(x):
    a = x
    return math.atan2(a, (a := a + 1.0)) + a


def three(p, q, r):
    return p * q + r * r


def helper_arguments(x):
    a = x
    return three(a, (a := 2.0 * a), a)


def list_display(x):
    a = x
    items = [a, (a := a * a), a]
    return items[0] + 10.0 * items[1] + 100.0 * items[2]


def augmented(x):
    a = x
    a += (a := a * 2.0)
    return a


def boolean_or(x):
    a = x
    b = (a > 5.0) or (a := a * 3.0) + a
    return b + a


def in_a_loop(x):
    a = x
    s = 0.0
    for i in range(3):
        s = s + a * (a := math.sin(a) + x)
    return s


def while_test(x):
    a = x
    k = 0
    while (a := a * 0.5) > 0.05 and k < 10:
        k += 1
    return a * x


def arrays(x):
    a = np.array([x, 2.0 * x])
    return float(np.sum(a * (a := np.tanh(a))))


CASES = [self_rebind, in_a_test, binop, compare, conditional, call_arguments, helper_arguments,
         list_display, boolean_or, in_a_loop, while_test, arrays]


def central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_value_and_first_and_second_order(f):
    x = 0.7
    value, _ = ad.pullback(f, x)
    assert value == pytest.approx(f(x), rel=1e-12)
    assert ad.gradient(f, x)[0] == pytest.approx(central(f, x), rel=1e-6, abs=1e-9)

    def df(y):
        return ad.gradient(f, y)[0]

    assert ad.gradient(df, x)[0] == pytest.approx(central(df, x), rel=1e-5, abs=1e-7)


def int_or_value(x):
    q = (x > 5.0) or x * 2
    return q * x


def test_second_order_through_an_int_constants_method():
    # the first-order pullback holds `(2).conjugate()`; printed again for the second
    # order it read `2.conjugate()`, which does not compile
    assert ad.gradient(lambda y: ad.gradient(int_or_value, y)[0], 0.7)[0] == pytest.approx(4.0)


def test_an_augmented_assignment_whose_value_rebinds_its_target_is_refused():
    # Python reads the target, then the value (which rebinds it), then adds in place
    with pytest.raises(ad.UnsupportedSyntaxError) as info:
        ad.gradient(augmented, 0.7)
    msg = str(info.value)
    assert "`a op= ...` whose value rebinds `a` with `:=`" in msg and "line 70" in msg
