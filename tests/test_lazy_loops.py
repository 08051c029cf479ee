"""A for loop over a generator expression, map or filter computes each item when it takes
it, as Python does (passes/lazy_loops.py): the body's changes show in the next item, and
a break leaves the later items uncomputed. A list made first gave a wrong value (2.8 for
4.2), an error Python never raises, or a loop that never ended."""
import itertools
import math
import signal

import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads

from .refusals import agrees, refused


def body_rebinds_what_items_read(x):
    s = x
    for a in (s * v for v in [1.0, 2.0]):
        s = s + a
    return s


def enumerate_of_items(x):
    s = x
    for i, a in enumerate((s * v for v in [1.0, 2.0, 3.0]), 1):
        s = s + a * i
    return s


def several_clauses(x):
    s = x
    for a in (s * v * w for v in [1.0, 2.0] for w in [1.0, 3.0] if w > v - 1.5):
        s = s + a
    return s


def with_else_and_inner_break(x):
    s = x
    for a in (s * v for v in [1.0, 2.0, 3.0] if v > 1.5):
        for j in range(3):
            if j > 1:
                break
            s = s + a * 0.1
    else:
        s = s * 2.0
    return s


def first_iterable_named_as_the_variable(x):
    v = [x, 2.0 * x]
    s = 0.0
    for a in (v * 2.0 for v in v):
        s = s + a
    return s + sum(v * v for v in v) + sum([v + 1.0 for v in v])


@pytest.mark.parametrize("f, value", [
    (body_rebinds_what_items_read, 6 * 0.7),
    (enumerate_of_items, 100 * 0.7),  # s: x, 2x, 10x, 100x
    (several_clauses, None),
    (with_else_and_inner_break, None),
    (first_iterable_named_as_the_variable, None),
])
def test_items_are_computed_as_the_loop_takes_them(f, value):
    y, _ = ad.pullback(f, 0.7)
    assert y == pytest.approx(f(0.7))
    if value is not None:
        assert y == pytest.approx(value)
    agrees(f, 0.7)
    check_grads(f, 0.7, order=2)


def stops_before_a_zero(x):
    s = 0.0
    for a in (x / v for v in [1.0, 2.0, 0.0]):
        s += a
        if s > 0.5:
            break
    return s


def endless(x):
    s = 0.0
    for a in (x * i for i in itertools.count()):
        s += a
        if s > 3.0:
            break
    return s


def map_stops_before_a_zero(x):
    s = 0.0
    for a in map(lambda v: x / v, [1.0, 2.0, 0.0]):
        s += a
        if s > 0.5:
            break
    return s


def filter_stops_before_a_zero(x):
    s = 0.0
    for a in filter(lambda a: a < 10.0, (x / v for v in [1.0, 2.0, 0.0])):
        s += a
        break
    return s


def _log_shift(v):
    return math.log(v - 0.5)


def map_of_a_helper(x):
    s = 0.0
    for a in map(_log_shift, [x + 1.0, x + 2.0, 0.0]):
        s += a * x
        if s > 0.1:
            break
    return s


def enumerate_stops(x):
    s = 0.0
    for i, a in enumerate(x / v for v in [1.0, 2.0, 0.0]):
        s += a * i
        if i == 1:
            break
    return s


@pytest.mark.parametrize("f", [stops_before_a_zero, endless, map_stops_before_a_zero,
                               filter_stops_before_a_zero, map_of_a_helper, enumerate_stops])
def test_a_break_leaves_the_later_items_uncomputed(f):
    def endless_loop(*_):
        raise AssertionError("every item of an endless iterable computed first")

    previous = signal.signal(signal.SIGALRM, endless_loop)
    signal.alarm(60)
    try:
        y, _ = ad.pullback(f, 0.7)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert y == pytest.approx(f(0.7))
    agrees(f, 0.7)


def several_clauses_broken(x):
    s = x
    for a in (s * v * w for v in [1.0, 2.0] for w in [1.0, 3.0]):
        s = s + a
        if s > 5.0:
            break
    return s


def zipped_items(x):
    s = x
    for a, w in zip((s * v for v in [1.0, 2.0]), [1.0, 1.0]):
        s = s + a * w
    return s


def zipped_items_changed_in_place(x):
    xs = [x, 2.0]
    t = 0.0
    for a, w in zip((v * 2.0 for v in xs), [1.0, 1.0]):
        xs.append(a)
        t = t + a * w
    return t


def test_a_break_out_of_several_clauses_is_refused():
    refused(several_clauses_broken, 0.7, "for a in", "`break`", "several `for` clauses",
            "write the nested loops out")


@pytest.mark.parametrize("f, name", [(zipped_items, "s"), (zipped_items_changed_in_place, "xs")])
def test_items_inside_the_iterable_read_what_the_body_changes_refused(f, name):
    refused(f, 0.7, "for a, w in", "inside `zip(...)`", f"changes `{name}`",
            "Loop over the generator expression itself")


def sorted_items(x):
    s = x
    for a in sorted(s * v for v in [1.0, 2.0]):
        s = s + a
    return s


def test_items_taken_at_once_are_not_refused():
    # sorted takes every item where the iterable is made: nothing runs between two
    assert ad.pullback(sorted_items, 0.7)[0] == pytest.approx(sorted_items(0.7))
    agrees(sorted_items, 0.7)


def map_of_a_name_the_body_rebinds(x):
    g = math.sin
    s = 0.0
    for a in map(g, [x, 2.0 * x]):
        s = s + a
        g = math.cos  # map holds the function it was given
    return s


def test_map_keeps_the_function_it_was_given():
    assert ad.pullback(map_of_a_name_the_body_rebinds, 0.5)[0] == pytest.approx(map_of_a_name_the_body_rebinds(0.5))
    check_grads(map_of_a_name_the_body_rebinds, 0.5, order=2)
