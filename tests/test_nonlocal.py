"""A function defined in the differentiated one that writes its variables (`nonlocal`).

Such a local function, called there by name only, is inlined at each call: its body
assigns the caller's variables themselves, as the call would, and its def goes. Where a
call stays a call (the function passed to `map`, say), the `nonlocal` is refused, with
the way out. Checked against central differences, first and second order, and the value
against the plain call."""
import math

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import UnsupportedSyntaxError


def running_sum(x, y):
    acc = 0.0

    def add(z):
        nonlocal acc
        acc = acc * 0.5 + z * z

    add(x)
    add(x * y)
    add(math.sin(y))
    return acc


def counted_pushes(x, v):
    total = np.zeros(3)
    n = 0

    def push(u):
        nonlocal total, n
        total += u * x
        n += 1

    for i in range(3):
        push(v * i)
    return np.sum(total * total) / n


def stepper(x):
    acc = x

    def step(h):
        nonlocal acc
        acc = acc + h * math.sin(acc)
        return acc

    a = step(0.1)
    b = step(0.2) + a
    return b * acc


def read_by_another_closure(x):
    acc = x
    scale = lambda t: t * acc  # noqa: E731 - reads acc when called

    def bump(h):
        nonlocal acc
        acc = acc * h

    bump(x)
    first = scale(2.0)
    bump(3.0)
    return first + scale(x)


def parameter_written(x, y):
    def halve():
        nonlocal x
        x = x * 0.5 + y

    halve()
    halve()
    return x * y


def central(f, x, *rest, h=1e-6):
    return (f(x + h, *rest) - f(x - h, *rest)) / (2 * h)


CASES = [
    (running_sum, 0.5, (0.7,)),
    (counted_pushes, 0.5, (np.array([1.0, 2.0, -0.5]),)),
    (stepper, 0.5, ()),
    (read_by_another_closure, 0.6, ()),
    (parameter_written, 0.4, (1.3,)),
]


@pytest.mark.parametrize("f, x, rest", CASES, ids=[c[0].__name__ for c in CASES])
def test_first_and_second_order(f, x, rest):
    value, _ = ad.pullback(f, x, *rest)
    assert value == f(x, *rest)
    assert ad.gradient(f, x, *rest)[0] == pytest.approx(central(f, x, *rest), rel=1e-6)

    def df(y):
        return ad.gradient(f, y, *rest)[0]

    assert ad.gradient(df, x)[0] == pytest.approx(central(df, x), rel=1e-5, abs=1e-7)


def test_the_generated_code_assigns_the_callers_variable():
    text = ad.show_adjoint(running_sum, 0.5, 0.7)
    code = [ln.strip() for ln in text.splitlines() if not ln.strip().startswith("#")]
    assert not any(ln.startswith(("nonlocal", "def add")) for ln in code)
    assert "acc = acc * 0.5 + x * x" in code


def passed_to_map(x):
    acc = 0.0

    def add(z):
        nonlocal acc
        acc = acc + z * z

    list(map(add, [x, 2.0 * x]))
    return acc


def test_a_local_function_passed_elsewhere_is_refused_with_the_way_out():
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.gradient(passed_to_map, 0.5)
    msg = str(info.value)
    assert "nonlocal" in msg and "only called there by name" in msg and "line" in msg


class Affine:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, z):
        return self.w * z + self.b


def after_an_object(x, v):
    m = Affine(np.dot(v, v), 0.48)
    s = np.sum(m(v[np.array([2, 2, 0])]))
    acc = x

    def add(z):
        nonlocal acc
        acc = acc * 0.62 + z * z

    add(float(np.tanh(s)))
    add(v[1] * x)
    return s + acc


def test_local_functions_are_inlined_after_an_object_of_the_function_is_kept():
    # an object the transformer gave up replacing left copies of the statements: the
    # local functions are looked for again among them (before, not inlined: refused)
    v = np.array([0.3, -0.2, 0.5])
    got = ad.gradient(after_an_object, 0.4, v)
    assert got[0] == pytest.approx(central(after_an_object, 0.4, v), rel=1e-6)
    assert ad.pullback(after_an_object, 0.4, v)[0] == after_an_object(0.4, v)


def bump_in_an_expression(x):
    acc = x

    def bump(v):
        nonlocal acc
        acc = acc * v
        return v

    return acc + bump(2.0)  # Python reads acc first: x + 2


def bump_in_a_display(x):
    acc = x

    def bump():
        nonlocal acc
        acc = acc * 2.0
        return acc

    items = [acc, bump()]
    return items[0] + 10.0 * items[1]


@pytest.mark.parametrize("f", [bump_in_an_expression, bump_in_a_display], ids=lambda f: f.__name__)
def test_a_call_inside_a_larger_expression_is_refused(f):
    # inlined before the statement, the body would change what the statement read
    # before the call: kept a call, and the nonlocal refused
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.gradient(f, 0.7)
    assert "not inside an expression that also reads a variable it writes" in str(info.value)
