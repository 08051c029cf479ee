"""`a, b = value` is Python's iteration of value, which adjoint_s2s reads by position
(value[0], value[1]): the same for a tuple, a list and an array. The count is checked as
Python checks it (a ValueError, where the extra items were dropped or an IndexError came
out of generated code), and a value whose iteration is not its indexing (a dict's keys,
a set, a dict view, a class with its own __iter__) is refused with the way out, where it
gave wrong values silently (`a, b = {1: 5, 0: 7}`: 9.9 for 0.7) or crashed inside
adjoint_s2s."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import NotDifferentiableError

from .refusals import agrees


def too_many(xs):
    a, b = xs
    return a * b


def too_few(x, y):
    a, b, c = (x, y)
    return a * b


def star_too_few(x, y):
    a, *b, c, d = [x, y]
    return a


@pytest.mark.parametrize("fn, args", [(too_many, (np.array([0.5, 0.7, 0.1]),)), (too_few, (0.5, 0.7)),
                                      (star_too_few, (0.5, 0.7))])
def test_the_count_is_checked_as_python_checks_it(fn, args):
    with pytest.raises(ValueError) as plain:
        fn(*args)
    with pytest.raises(ValueError) as got:
        ad.pullback(fn, *args)
    assert str(got.value) == str(plain.value)


class Reversed:
    def __init__(self, data):
        self.data = data

    def __iter__(self):
        return iter(self.data[::-1])

    def __getitem__(self, i):
        return self.data[i]

    def __len__(self):
        return len(self.data)


def own_iteration(x, y):
    a, b = Reversed([x, y])
    return a * 3.0 + b


def dict_keys(x):
    d = {1: 5, 0: 7}
    a, b = d
    return x * a + b


def dict_values(x, y):
    a, b = {"p": x, "q": y}.values()
    return a * b


def a_set(x):
    a, b = {1, 2}
    return x * (a + b)


@pytest.mark.parametrize("fn, args", [(own_iteration, (0.7, 1.3)), (dict_keys, (0.7,)), (dict_values, (0.7, 1.3)),
                                      (a_set, (0.7,))])
def test_what_python_iterates_otherwise_is_refused(fn, args):
    with pytest.raises(NotDifferentiableError) as info:
        ad.gradient(fn, *args)
    msg = str(info.value)
    assert "unpacking a " in msg and "list(value)" in msg and "line " in msg, msg


def values_listed(x, y):
    a, b = list({"p": x, "q": y}.values())
    return a * b


def keys_listed(x):
    a, b = list({1: 5, 0: 7})
    return x * a + b


def rows_of_an_array(m):
    top, bottom = m
    return np.sum(top * bottom)


def helper_pair(x):
    return x * x, 2.0 * x


def from_a_helper(x):
    a, b = helper_pair(x)
    return a * b


def nested(x, y):
    (a, b), c = (x, y), x * y
    return a * b * c


def starred(xs):
    first, *rest = xs
    return first * np.sum(np.array(rest))


@pytest.mark.parametrize("fn, args", [(values_listed, (0.7, 1.3)), (keys_listed, (0.7,)),
                                      (rows_of_an_array, (np.arange(6.0).reshape(2, 3) + 1.0,)),
                                      (from_a_helper, (0.7,)), (nested, (0.7, 1.3)),
                                      (starred, (np.array([0.5, 0.7, 0.1]),))])
def test_sequences_and_the_way_out_are_differentiated(fn, args):
    want = fn(*args)
    y, _ = ad.pullback(fn, *args)
    assert np.allclose(y, want)
    for i in range(len(args)):
        agrees(lambda v, i=i: fn(*args[:i], v, *args[i + 1:]), args[i])


def test_a_known_tuple_needs_no_check():
    text = ad.show_adjoint(from_a_helper, 0.7)
    assert "check_unpack" not in text, text
