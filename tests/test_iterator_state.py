"""Iterators are used up as they are read, and `any`/`all` stop at the item that decides.

An iterator kept in a name (`iter(...)`, a generator expression, `zip`, `map`,
`enumerate`, `reversed`) and read twice (`next(it)` then a loop, `zip(it, it)`, two
loops, a read in a loop's body or a lambda; `next(it)` alone, as often as it comes, is
differentiated) is refused: Python's second read goes on
where the first stopped, where adjoint_s2s took the items when the iterator was made (the
value or the gradient came out wrong: 5.6 for 7.0, a value 0 for 3.5). `any(...)` and
`all(...)` of a generator expression run as a loop that stops at the deciding item, as
Python does (the items after it may raise, or never end)."""
import itertools

import numpy as np
import pytest

import adjoint_s2s as ad

from .refusals import agrees, refused


def next_then_loop(x):
    it = iter([x, 2.0 * x, 3.0 * x])
    first = next(it)
    s = 0.0
    for v in it:
        s = s + v * first
    return s


def zip_of_itself(xs):
    it = iter(xs)
    return sum(a * b for a, b in zip(it, it))


def listed_twice(x):
    g = (x * k for k in range(3))
    l1 = list(g)
    l2 = list(g)
    return sum(l1) + len(l2)


def enumerate_advanced(xs):
    e = enumerate(xs)
    i0, v0 = next(e)
    return sum(i * v for i, v in e) + v0


def loop_broken_then_summed(x):
    it = iter([x, 2.0 * x, 3.0 * x])
    for v in it:
        break
    return sum(it)


def next_in_a_loop(x):
    it = iter([x, 2.0 * x, 3.0 * x])
    s = 0.0
    for _ in range(2):
        s = s + next(it)
    return s


def next_in_a_lambda(x):
    it = iter([x, 2.0 * x, None])
    s = 0.0
    for v in iter(lambda: next(it), None):
        s = s + v
    return s


def endless(x):
    g = (x * i for i in itertools.count())
    return next(g) + next(g)


@pytest.mark.parametrize("fn, arg", [
    (next_then_loop, 0.7), (zip_of_itself, np.array([0.1, 0.7, 0.2, 0.4])), (listed_twice, 0.7),
    (enumerate_advanced, np.array([0.1, 0.7, 0.2, 0.4])), (loop_broken_then_summed, 0.7),
    (next_in_a_lambda, 0.7), (endless, 0.7),
])
def test_an_iterator_read_twice_is_refused(fn, arg):
    import inspect
    src = inspect.getsource(fn).splitlines()
    bound = next(line.strip() for line in src[1:] if " = " in line and ("iter(" in line or "(x * " in line
                                                                        or "enumerate(" in line))
    refused(fn, arg, bound, "read more than once", "list(...)", "by index")


def summed_once(x):
    g = (x * k for k in range(3))
    return sum(g)


def zipped_once(xs):
    pairs = zip(xs, xs[::-1])
    total = 0.0
    for a, b in pairs:
        total = total + a * b
    return total


def made_in_a_loop(x):
    s = 0.0
    for k in range(3):
        it = iter([x * k, x])
        s = s + next(it)
    return s


def next_twice(xs):
    it = map(lambda v: v * v, xs)
    a = next(it)
    return a * next(it, 0.0)


@pytest.mark.parametrize("fn, arg", [(summed_once, 0.7), (zipped_once, np.array([0.1, 0.7, 0.2])),
                                     (made_in_a_loop, 0.7), (next_in_a_loop, 0.7),
                                     (next_twice, np.array([0.3, 0.7, 0.2]))])
def test_an_iterator_read_once_or_by_next_is_differentiated(fn, arg):
    """(`next` takes the items one by one, as Python does)"""
    agrees(fn, arg)


def any_with_side_effects(x):
    log = []

    def note(v):
        log.append(v)
        return v > 0.5

    any(note(v) for v in [x, 2.0 * x, 3.0 * x])
    return x * len(log)


def any_that_would_divide_by_zero(x):
    vals = [1.0, 0.0]
    return any(x / v > 0.1 for v in vals) * x


def all_stops_at_the_first_false(x):
    vals = [2.0, 0.0, -1.0]
    ok = all(x / v < 10.0 for v in vals if v != 0.0)
    none = all(x * v > 0.0 for v in vals)
    return x * x * ok + x * none


def any_over_an_endless_generator(x):
    return any(x * i > 2.0 for i in itertools.count()) * x


def any_with_a_condition(xs):
    return xs[0] * any(v > 0.5 for v in xs if v < 0.65) + np.sum(xs)


@pytest.mark.parametrize("fn, arg", [
    (any_with_side_effects, 0.7), (any_that_would_divide_by_zero, 0.7), (all_stops_at_the_first_false, 0.7),
    (any_over_an_endless_generator, 0.7), (any_with_a_condition, np.array([0.3, 0.6, 0.9])),
])
def test_any_and_all_stop_at_the_deciding_item(fn, arg):
    want = fn(arg)
    y, _ = ad.pullback(fn, arg)
    assert np.allclose(y, want)
    agrees(fn, arg)


def test_any_of_a_generator_expression_twice_differentiated():
    def f(x):
        return x ** 3 * any(x * v > 0.1 for v in [1.0, 2.0])

    assert ad.hessian(f, 0.7) == pytest.approx(6 * 0.7)


def first_over_an_endless_generator(x):
    return next(x * i for i in itertools.count(1) if x * i > 2.0)


def first_before_a_division_by_zero(x):
    vals = [1.0, 0.0]
    return next((x / v for v in vals if v != 0.5), 0.0) * x


def first_or_the_default(x):
    return next((v for v in [x, 2.0 * x] if v > 5.0), 3.0) * x


@pytest.mark.parametrize("fn", [first_over_an_endless_generator, first_before_a_division_by_zero,
                                first_or_the_default])
def test_next_of_a_generator_expression_takes_the_first_item_only(fn):
    y, _ = ad.pullback(fn, 0.7)
    assert np.allclose(y, fn(0.7))
    agrees(fn, 0.7)


def no_item(x):
    return next(v * v for v in [x, 2.0 * x] if v > 5.0)


def test_next_of_an_empty_generator_expression_raises_stop_iteration():
    with pytest.raises(StopIteration):
        no_item(0.7)
    with pytest.raises(StopIteration):
        ad.gradient(no_item, 0.7)


def test_next_of_a_generator_expression_twice_differentiated():
    def f(x):
        return next(x ** 3 for i in range(5) if i > 1)

    assert ad.hessian(f, 0.7) == pytest.approx(6 * 0.7)
