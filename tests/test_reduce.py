"""``functools.reduce`` (rules/folds.py; it was refused: no source, no rule): the function
called on the running value and each item in turn, each call differentiated as any call
is, the gradient flowing back through the same calls; to the items, to an initial value,
and to what the function captures. Checked against central differences at first and
second order, and the value against the plain call."""
import functools
import math
import operator
from functools import reduce

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads


def product(x):
    return functools.reduce(lambda a, b: a * b, [x, 2.0 * x, 0.5, x * x])


def summed_with_initial(x):
    return reduce(operator.add, [math.sin(x * i) for i in range(5)], 1.0)


def arrays(x, v):
    return float(np.sum(reduce(np.multiply, (v, v * x, np.cos(v)))))


def captured(x, k):
    return reduce(lambda a, b: a * k + math.tanh(b), (x, 0.3, x * 2.0, 0.7))


def of_a_generator(x):
    return reduce(lambda a, b: a + b * b, (x * i for i in range(4)), 0.5)


def an_initial_value_differentiated(x, y):
    return reduce(lambda a, b: a * b + 1.0, [x, 0.5, x], y)


@pytest.mark.parametrize("f, args", [
    (product, (0.7,)),
    (summed_with_initial, (0.7,)),
    (arrays, (0.7, np.array([0.3, 0.9]))),
    (captured, (0.7, 1.3)),
    (of_a_generator, (0.7,)),
    (an_initial_value_differentiated, (0.7, 1.2)),
])
def test_reduce_against_differences(f, args):
    check_grads(f, *args, order=2)
    y = ad.pullback(f, *args)[0]
    assert np.array_equal(y, f(*args))


def test_an_empty_iterable_without_an_initial_value_raises_as_python_does():
    def empty(x):
        return reduce(operator.add, [x for _ in range(0)])

    with pytest.raises(TypeError) as plain:
        empty(0.7)
    with pytest.raises(TypeError) as ours:
        ad.gradient(empty, 0.7)
    assert str(ours.value) == str(plain.value)


def test_the_gradient_of_a_reduced_list_is_a_list():
    def over(xs):
        return reduce(lambda a, b: a * b, xs)

    got = ad.gradient(over, [2.0, 3.0, 4.0])[0]
    assert got == [12.0, 8.0, 6.0]
    got = ad.gradient(over, (2.0, 3.0))[0]
    assert got == (3.0, 2.0)


def test_a_call_that_passes_no_gradient_back_stops_it():
    def reset(x):
        return reduce(lambda a, b: b * 2.0 if b > 0.5 else a * b, [x, 0.3, 0.9, x * x])

    check_grads(reset, 0.7, order=2)
    assert ad.gradient(reset, 0.7)[0] == pytest.approx(3.6 * 0.7)  # (1.8 * x * x: 0.9 resets it)
