"""The rules of Python's builtins, one row per rule, against finite differences.

Same table as test_math.py (its helpers are shared): numeric builtins are templates
(inlined), ``sum``, ``min``, ``max``, ``map``, ... are run-time rules. A row's ``more``
lists further ways of calling the same rule (keywords, generators, loops), checked with
the generated pullback too.
"""
import itertools
import math

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import isapprox

from tests.rules.test_math import (
    Arr,
    C,
    Row,
    Seq,
    U,
    check_coverage,
    check_dispatch,
    check_inline,
    check_second_order,
)


# ----- the functions under test ------------------------------------------------------------

def b_abs(x): return abs(x)
def b_float(x): return float(x)


class _Holder:
    def __init__(self, v):
        self.v = v


def b_getattr(x): return getattr(_Holder(x), "v") * getattr(_Holder(x), "w", 2.0)
class _Base:
    def __init__(self, v):
        self.v = v

    def get(self, t):
        return self.v * t


class _Kid(_Base):
    def get(self, t):
        return super().get(t) + super(_Kid, self).get(2.0)


def b_super(x): return _Kid(x).get(x)
def b_complex1(x): return complex(x)
def b_dict_copy(x, y): return dict({"a": x, "b": y})["a"] * y
def b_dict_fields(x, y): return dict(a=x * y, b=y)["a"] + dict(a=x)["a"] ** 2
def b_complex2(a, b): return complex(a, b)
def b_complex_kw(a, b): return complex(real=a, imag=b)
def b_pow(a, b): return pow(a, b)
def b_pow_kw(a, b): return pow(base=a, exp=b)
def b_pow3(a, b, m): return pow(a, b, m)
def b_divmod(a, b): return divmod(a, b)


def b_divmod_unpacked(a, b):
    q, r = divmod(a, b)
    return r * r + q


def s_sum(xs): return sum(xs)
def s_sum_start(xs, s): return sum(xs, s)
def s_sum_start_kw(xs, s): return sum(xs, start=s)
def s_sum_generator(xs): return sum(x * x for x in xs)
def s_sum_lists(a, b): return sum([a, b, [a[0] * b[1]]], [])
def s_sum_tuples(a, b): return sum((a, b), ())

def s_min(a, b): return min(a, b)
def s_min3(a, b, c): return min(a, b, c)
def s_min_iterable(xs): return min(xs)
def s_min_key(xs): return min(xs, key=abs)
def s_min_default(xs, d): return min(xs, default=d)
def s_max(a, b): return max(a, b)
def s_max3(a, b, c): return max(a, b, c)
def s_max_iterable(xs): return max(xs)
def s_max_key(xs): return max(xs, key=abs)
def s_max_default(xs, d): return max(xs, default=d)
def s_max_generator(xs): return max(x * x for x in xs)


def m_square(v): return v * v
def m_mul(a, b): return a * b
def is_positive(v): return v > 0


def s_map(fn, xs): return list(map(fn, xs))
def s_map2(fn, xs, ys): return list(map(fn, xs, ys))
def s_map_builtin(xs): return list(map(math.sin, xs))
def s_map_closure(xs, w): return sum(map(lambda v: v * w, xs))


def s_map_loop(xs):
    t = 0.0
    for v in map(m_square, xs):
        t = t + v
    return t


def s_enumerate(xs): return list(enumerate(xs))
def s_enumerate_start(xs): return list(enumerate(xs, 1))


def s_enumerate_loop(xs):
    t = 0.0
    for i, x in enumerate(xs):
        t = t + (i + 1) * x * x
    return t


def s_zip(xs, ys): return list(zip(xs, ys))
def s_zip3(xs, ys, zs): return list(zip(xs, ys, zs))


def s_zip_loop(xs, ys):
    t = 0.0
    for a, b in zip(xs, ys):
        t = t + a * b
    return t


def s_reversed(xs): return list(reversed(xs))


def s_reversed_loop(xs):
    t = 0.0
    k = 1.0
    for x in reversed(xs):
        t = t + k * x
        k = k * 2.0
    return t


def s_filter(p, xs): return list(filter(p, xs))
def s_filter_none(xs): return list(filter(None, xs))
def s_iter(xs): return list(iter(xs))


def s_iter_loop(xs):
    t = 0.0
    for x in iter(xs):
        t = t + x * x
    return t


def s_next(xs):
    it = iter(xs)
    a = next(it)
    b = next(it)
    return a * 2.0 + b * b


def s_next_default(xs, d):
    it = iter(xs)
    a = next(it)
    return a * next(it, d)


def s_next_map(xs):
    it = map(m_square, xs)
    next(it)
    return next(it) * 3.0


def s_next_enumerate(xs):
    it = enumerate(xs)
    i, a = next(it)
    j, b = next(it)
    return a * b + j


def s_sorted(xs): return sorted(xs)
def s_sorted_key(xs): return sorted(xs, key=abs)
def s_sorted_reverse(xs): return sorted(xs, key=abs, reverse=True)
def s_list(xs): return list(xs)
def s_list_generator(xs): return list(x * 2.0 for x in xs)
def s_tuple(xs): return tuple(xs)
def s_tuple_of_zip(xs, ys): return tuple(zip(xs, ys))
def d_values(d): return sum(d.values())
def d_values_list(d): return list(d.values())


def d_items(d):
    t = 0.0
    for k, v in d.items():
        t = t + v * v
    return t


def d_keys(d): return [d[k] * 2.0 for k in d.keys()]
def d_get(d): return d.get("k1") * d.get("k0", 1.0)
def d_get_default(d, x): return d.get("missing", x) * d["k0"]


# ----- the table ---------------------------------------------------------------------------

R3 = (U(-3, 3),)
L4 = Seq(4, U(-3, 3))


def lists(n=4, lo=-3, hi=3):
    """The same n-item iterable as a list, a tuple and an array."""
    return [(Seq(n, U(lo, hi)),), (Seq(n, U(lo, hi), tuple),), (Seq(n, U(lo, hi), np.ndarray),)]


class Row_(Row):
    """A row with further call forms of the same rule (checked with pullback only)."""

    def __init__(self, *args, more=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.more = [Row(f"{self.id}:{f.__name__}", self.fn, f, sets) for f, sets in more]


ROWS = [
    # numbers: templates
    Row_("abs", abs, b_abs, [(U(-3, 3, away=(0,)),), (C(),), (Arr((3,)),), (Arr((2, 2), complex_=True),)]),
    Row_("float", float, b_float, [R3, (U(-3, 3),)]),
    Row_("getattr", getattr, b_getattr, [R3], rule="special", dispatch=False),
    Row_("super", super, b_super, [R3], rule="special", dispatch=False),
    Row_("dict", dict, b_dict_copy, [(U(-3, 3), U(-3, 3))], rule="special", dispatch=False,
         more=[(b_dict_fields, (U(-3, 3), U(-3, 3)))]),
    Row_("complex/1", complex, b_complex1, [R3, (C(),)]),
    Row_("complex/2", complex, b_complex2, [(U(-3, 3), U(-3, 3)), (C(), C()), (U(-3, 3), C())],
         more=[(b_complex_kw, (U(-3, 3), U(-3, 3)))]),
    # pow: positive bases; negative bases with integer exponents; a negative base with a
    # fractional exponent (a complex result); complex bases; arrays
    Row_("pow/2", pow, b_pow,
         [(U(0.2, 3), U(-2, 3)), (U(-3, -0.2), 3), (U(-3, -0.2), U(0.2, 0.8)), (C(), C(min_im=0.1)),
          (C(), U(-2, 2)), (Arr((3,), 0.2, 3), U(-2, 2)), (U(0.2, 3), Arr((3,)))],
         n=7, more=[(b_pow_kw, (U(0.2, 3), U(-2, 3)))]),
    Row_("pow/3", pow, b_pow3, [(U(0.2, 3), U(-2, 3), None), (7, 3, 5), (C(), 2, None),
                                (C(), U(-2, 2), None)], n=8),
    Row_("divmod", divmod, b_divmod,
         [(U(-10, 10), U(0.5, 3)), (U(-10, 10), U(-3, -0.5)), (Arr((3,), -10, 10), U(0.5, 3))],
         more=[(b_divmod_unpacked, (U(-10, 10), U(0.5, 3)))]),
    # run-time rules
    Row_("sum", sum, s_sum,
         lists() + [([1.0, 2.0j, 3.0],), (Arr((3, 2)),), (Seq(3, Arr((2,))),), ([],)],
         rule="special", n=7,
         more=[(s_sum_start, (L4, U(-3, 3))), (s_sum_start_kw, (L4, U(-3, 3))),
               (s_sum_generator, (L4,)), (s_sum_lists, (Seq(2, U(-3, 3)), Seq(2, U(-3, 3)))),
               (s_sum_tuples, (Seq(2, U(-3, 3), tuple), Seq(3, U(-3, 3), tuple)))]),
    Row_("min", min, s_min, [(U(-3, 3), U(-3, 3))], rule="special",
         more=[(s_min3, (U(-3, 3),) * 3), (s_min_iterable, lists()[0]), (s_min_key, lists()[1]),
               (s_min_default, ([], U(-3, 3))), (s_min_default, (L4, U(-3, 3)))]),
    Row_("max", max, s_max, [(U(-3, 3), U(-3, 3))], rule="special",
         more=[(s_max3, (U(-3, 3),) * 3), (s_max_iterable, lists()[2]), (s_max_key, lists()[0]),
               (s_max_default, ([], U(-3, 3))), (s_max_default, (L4, U(-3, 3))),
               (s_max_generator, (L4,))]),
    Row_("map", map, s_map, [(m_square, L4), (math.sin, Seq(3, U(-3, 3), tuple)),
                             (m_square, Seq(3, U(-3, 3), np.ndarray))],
         rule="special",
         more=[(s_map2, (m_mul, L4, Seq(3, U(-3, 3)))), (s_map_builtin, (L4,)),
               (s_map_closure, (L4, U(-3, 3))), (s_map_loop, (L4,))]),
    Row_("enumerate", enumerate, s_enumerate, lists(), rule="special",
         more=[(s_enumerate_start, (L4,)), (s_enumerate_loop, (L4,))]),
    Row_("zip", zip, s_zip, [(L4, Seq(3, U(-3, 3), tuple)), (Seq(3, U(-3, 3), np.ndarray), L4)],
         rule="special",
         more=[(s_zip3, (L4, L4, Seq(2, U(-3, 3)))), (s_zip_loop, (L4, Seq(4, U(-3, 3), tuple)))]),
    Row_("reversed", reversed, s_reversed, lists(), rule="special",
         more=[(s_reversed_loop, (L4,))]),
    Row_("filter", filter, s_filter, [(is_positive, L4), (is_positive, Seq(5, U(-3, 3), np.ndarray))],
         rule="special", more=[(s_filter_none, (L4,))]),
    Row_("iter", iter, s_iter, lists(), rule="special", more=[(s_iter_loop, (L4,))]),
    Row_("next", next, s_next, lists(), rule="special", dispatch=False,
         more=[(s_next_default, ([1.5], U(-3, 3))), (s_next_default, (L4, U(-3, 3))),
               (s_next_map, (L4,)), (s_next_enumerate, (L4,))]),
    Row_("sorted", sorted, s_sorted, lists(), rule="special",
         more=[(s_sorted_key, (L4,)), (s_sorted_reverse, (Seq(4, U(-3, 3), tuple),))]),
    Row_("list", list, s_list, lists() + [({"a": 1.0, "b": 2.0},)], rule="special",
         more=[(s_list_generator, (L4,))]),
    Row_("tuple", tuple, s_tuple, lists(), rule="special",
         more=[(s_tuple_of_zip, (L4, L4))]),
    # methods of dict (runtime.call_method's table)
    Row_("dict.values", dict.values, d_values, (Seq(3, U(-3, 3), dict),), rule="method",
         dispatch=False, more=[(d_values_list, (Seq(3, U(-3, 3), dict),))]),
    Row_("dict.items", dict.items, d_items, (Seq(3, U(-3, 3), dict),), rule="method",
         dispatch=False),
    Row_("dict.keys", dict.keys, d_keys, (Seq(3, U(-3, 3), dict),), rule="method",
         dispatch=False),
    Row_("dict.get", dict.get, d_get, (Seq(3, U(-3, 3), dict),), rule="method", dispatch=False,
         more=[(d_get_default, (Seq(2, U(-3, 3), dict), U(-3, 3)))]),
]


@pytest.mark.parametrize("row", [r.param() for r in ROWS])
def test_inline(row):
    check_inline(row)
    for extra in row.more:
        check_inline(extra)


@pytest.mark.parametrize("row", [r.param() for r in ROWS if r.dispatch])
def test_dispatch(row):
    check_dispatch(row)


@pytest.mark.parametrize("row", [r.second_param() for r in ROWS if r.second])
def test_second_order(row):
    check_second_order(row)
    for extra in row.more:
        check_second_order(extra, require_points=False)


def test_every_builtin_rule_has_a_row():
    check_coverage(ROWS, ("builtins",))


# ----- selection: min and max split a tie evenly among the equal numbers (as np.maximum:
# max(a, c) + min(a, c) then has a + c's gradient); with key=, the element Python picks
# gets it; sorted is stable -------------------------------------------------------------


def t_max_tie(xs): return max(xs)
def t_min_tie(xs): return min(xs)
def t_max_args_tie(a, b): return max(a, b)
def t_min_key_tie(xs): return min(xs, key=abs)
def t_sorted_tie(xs): return sorted(xs)[1] * 10.0 + sorted(xs)[2]
def t_sorted_reverse_tie(xs): return sorted(xs, reverse=True)[0] * 10.0 + sorted(xs, reverse=True)[1]


@pytest.mark.parametrize(
    "f, args, want",
    [
        pytest.param(t_max_tie, ([1.0, 3.0, 3.0],), ([0.0, 0.5, 0.5],), id="max-iterable"),
        pytest.param(t_min_tie, ([2.0, 1.0, 1.0],), ([0.0, 0.5, 0.5],), id="min-iterable"),
        pytest.param(t_max_args_tie, (2.0, 2.0), (0.5, 0.5), id="max-args"),
        pytest.param(t_min_key_tie, ([2.0, -1.0, 1.0],), ([0.0, 1.0, 0.0],), id="min-key"),
        pytest.param(t_sorted_tie, ([2.0, 1.0, 2.0],), ([10.0, 0.0, 1.0],), id="sorted-stable"),
        pytest.param(t_sorted_reverse_tie, ([2.0, 1.0, 2.0],), ([10.0, 0.0, 1.0],),
                     id="sorted-reverse-stable"),
    ],
)
def test_ties(f, args, want):
    got = ad.gradient(f, *args)
    assert all(isapprox(g, w) for g, w in zip(got, want)), got


# ----- laziness: map, zip, enumerate accept infinite iterables ----------------------------


def lazy_zip_count(xs, counter):
    t = 0.0
    for x, k in zip(xs, counter):
        t = t + k * x
    return t


def lazy_map_next(xs):
    it = map(m_square, xs)
    return next(it) * 3.0


def test_lazy_iterators():
    # the counter is passed in: its items are numbers too, so they get gradients as well
    assert ad.gradient(lazy_zip_count, [1.0, 2.0, 3.0], itertools.count(1))[0] == [1.0, 2.0, 3.0]
    # a list of numbers is a vector: the unused entry is 0.0
    assert ad.gradient(lazy_map_next, [2.0, 5.0]) == ([12.0, 0.0],)


# ----- no gradient -------------------------------------------------------------------------


def nd_round(x): return round(x) * x
def nd_round_digits(x): return round(x, 1) * x
def nd_int(x): return int(x) * x
def nd_len(xs): return len(xs) * xs[0]


@pytest.mark.parametrize(
    "f, args, want",
    [
        pytest.param(nd_round, (2.7,), (3.0,), id="round"),
        pytest.param(nd_round_digits, (2.74,), (2.7,), id="round-ndigits"),
        pytest.param(nd_int, (-2.7,), (-2.0,), id="int"),
        pytest.param(nd_len, ([1.5, 2.0, 4.0],), ([3.0, None, None],), id="len"),
    ],
)
def test_no_gradient(f, args, want):
    got = ad.gradient(f, *args)
    assert all(isapprox(g, w) for g, w in zip(got, want)), got


def dict_copy_and_fields(x, y):
    d = {"a": x, "b": y * y}
    c = dict(d)
    e = dict(a=x * y, b=c["b"])
    return c["a"] * e["a"] + e["b"]


def test_dict_constructor_copies_gradients():
    from adjoint_s2s.testing import check_grads

    check_grads(dict_copy_and_fields, 0.7, 1.3)
    g = ad.gradient(dict_copy_and_fields, 0.7, 1.3)
    assert isapprox(g, (2 * 0.7 * 1.3, 0.7 * 0.7 + 2 * 1.3))


def test_dict_from_pairs_with_names_is_differentiated():
    # dict(pairs) with names for keys works (it was refused); a number for a key is
    # refused with the line, as its dependence on the inputs is not known there
    from adjoint_s2s.errors import NotDifferentiableError
    from adjoint_s2s.testing import check_grads

    def from_pairs(x):
        return dict([("a", x)])["a"] * x

    check_grads(from_pairs, 0.5)

    def from_number_pairs(x):
        return dict([(1.5, x)])[1.5]

    with pytest.raises(NotDifferentiableError, match=r"dict\(pairs\).*line \d+"):
        ad.gradient(from_number_pairs, 0.5)
