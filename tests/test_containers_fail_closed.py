"""Fail closed on containers and objects: dict keys, dict(pairs), dataclasses.

A dict's keys are its structure (its tangent is keyed by them), like the keys of a pytree
in JAX: a key computed from a differentiated value is refused where it becomes a key
(with the line), never handed back by iterating the dict without its gradient. Constant
keys (names, integer labels, constant numbers) iterated over and used as numbers are
constants. Each working case is checked against finite differences at first order and
against differences of the gradient at second order.
"""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import NotDifferentiableError
from adjoint_s2s.testing import check_grads, isapprox, numerical_gradient


def _second(f, x):
    got = ad.gradient(lambda t: ad.gradient(f, t)[0], x)[0]
    want = numerical_gradient(lambda t: ad.gradient(f, t)[0], x)[0]
    got = 0.0 if got is None else got
    assert np.allclose(got, want, rtol=1e-5, atol=1e-6), (got, want)


# ----- a key computed from the inputs: refused where it becomes a key ----------------------


def key_iterated(x):
    d = {x: 1.0}
    s = 0.0
    for k in d:
        s += k * k
    return s


def keys_method(x):
    d = {x: 1.0, 2.0 * x: 3.0}
    s = 0.0
    for k in d.keys():
        s += k * k
    return s


def items_method(x):
    d = {x: 1.0, 2.0 * x: 3.0}
    s = 0.0
    for k, v in d.items():
        s += k * v
    return s


def sorted_keys(x):
    d = {x: 1.0, 2.0 * x: 3.0}
    return sum(sorted(d))


def max_key(x):
    d = {x: 1.0, 2.0 * x: 3.0}
    return max(d) * x


def list_of_keys(x):
    d = {x: 1.0, 2.0 * x: 3.0}
    return list(d)[1] ** 2


def comprehension_keys(x):
    e = {k: 2.0 for k in [x, 3.0 * x]}
    return sum(e)


def setitem_key(x):
    d = {}
    d[x * x] = 1.0
    return sum(d)


def setdefault_key(x):
    d = {}
    d.setdefault(x, 0.0)
    return sum(d)


def zip_keys(x):
    d = dict(zip([x, 2 * x], [1.0, 2.0]))
    return sum(k * v for k, v in d.items())


@pytest.mark.parametrize(
    "f",
    [key_iterated, keys_method, items_method, sorted_keys, max_key, list_of_keys,
     comprehension_keys, setitem_key, setdefault_key, zip_keys],
)
def test_a_key_from_the_inputs_is_refused_with_its_line(f):
    # before: a None gradient (max_key: half of it), silently
    for order in (1, 2):
        with pytest.raises(NotDifferentiableError, match=r"key.*line \d+.*(pairs)"):
            if order == 1:
                ad.gradient(f, 1.5)
            else:
                ad.gradient(lambda t: ad.gradient(f, t)[0], 1.5)


# ----- constant keys: their values carry the gradient, the keys are constants --------------


def int_keys_used_as_numbers(x):
    d = {0: x, 1: 2.0 * x * x}
    s = 0.0
    for k in d:
        s += k * d[k]
    return s


def float_keys_used_as_numbers(x):
    d = {1.0: x, 2.0: 3.0 * x * x}
    s = 0.0
    for k, v in d.items():
        s += k * v
    return s


def keys_of_a_copy(x):
    d = {1.0: x, 2.0: 3.0 * x * x}
    e = dict(d)
    return sum(k * e[k] for k in e)


def enumerate_keys(x):
    v = [x, x * x, 3.0]
    d = {i: t ** 2 for i, t in enumerate(v)}
    return sum(d[k] * v[k] for k in d)


def key_lookup(x):
    d = {"a": x * x}
    k = "a"
    d[k] = d[k] * x
    return d["a"]


def pairs_with_names(x):
    d = dict(zip(["a", "b"], [x, x * x]), c=3.0 * x)
    return d["a"] * d["b"] + d["c"] ** 2


def pairs_repeated_name(x):
    d = dict([("a", x), ("b", x * x), ("a", 2.0 * x)])  # the last "a" wins
    return d["a"] * d["b"]


@pytest.mark.parametrize(
    "f",
    [int_keys_used_as_numbers, float_keys_used_as_numbers, keys_of_a_copy, enumerate_keys,
     key_lookup, pairs_with_names, pairs_repeated_name],
)
def test_constant_keys_iterated_over(f):
    # before: int_keys_used_as_numbers and keys_of_a_copy crashed ('GradList' object has
    # no attribute 'items'); at second order the keys' cotangents were refused; dict(pairs)
    # was refused
    check_grads(f, 1.3)
    _second(f, 1.3)


def test_pairs_with_number_keys_are_refused_with_the_line():
    def number_pairs(x):
        return dict(zip([1.0, 2.0], [x, x * x]))[2.0]

    with pytest.raises(NotDifferentiableError, match=r"dict\(pairs\).*line \d+"):
        ad.gradient(number_pairs, 1.3)


# ----- frozen dataclasses with __post_init__, replace, namedtuple _replace -----------------

from collections import namedtuple  # noqa: E402
from dataclasses import asdict, astuple, dataclass, replace  # noqa: E402


@dataclass(frozen=True)
class _Checked:
    a: float
    b: float = 2.0

    def __post_init__(self):
        if self.a < -1e9:
            raise ValueError("a")

    def m(self):
        return self.a * self.b ** 2


@dataclass(frozen=True)
class _Derived:
    a: float
    b: float

    def __post_init__(self):
        object.__setattr__(self, "c", self.a * self.b)

    def m(self):
        return self.c * self.a + self.b ** 2


@dataclass
class _Plain:
    a: float
    b: float


_NT = namedtuple("_NT", "a b")


def _hessian_check(f, p):
    got = ad.hessian(f, p)
    g = lambda q: ad.gradient(f, q)[0]  # noqa: E731
    e = 1e-5
    want = np.array([(g(p + u * e) - g(p - u * e)) / (2 * e) for u in np.eye(p.size)])
    assert np.allclose(got, want, rtol=1e-5, atol=1e-6), (got, want)


def frozen_post_init_method(p):
    return _Checked(p[0], p[1]).m()


def frozen_post_init_fields(p):
    q = _Checked(p[0], p[1])
    return q.a * q.b ** 3


def frozen_post_init_keywords_default(p):
    return _Checked(a=p[0]).m() + _Checked(p[1], b=p[0]).m()


def frozen_post_init_replaced(p):
    q = _Checked(p[0], p[1])
    return replace(q, a=q.b * q.a).m()


@pytest.mark.parametrize(
    "f",
    [frozen_post_init_method, frozen_post_init_fields, frozen_post_init_keywords_default,
     frozen_post_init_replaced],
)
def test_frozen_dataclass_with_post_init(f):
    # before: the Hessian was all zeros (the constructor pullback, differentiated again,
    # took the field gradients from the store only, where a frozen object's reads put none)
    p = np.array([1.3, 0.7])
    check_grads(f, p)
    _hessian_check(f, p)


def post_init_setting_a_field_of_a_frozen_object(p):
    return _Derived(p[0], p[1]).m()


def namedtuple_replaced(p):
    t = _NT(p[0], p[1])
    return t._replace(b=t.a * t.b).b * t.a


def dataclass_asdict(p):
    d = asdict(_Plain(p[0], p[1]))
    return d["a"] * d["b"]


def dataclass_astuple(p):
    a, b = astuple(_Plain(p[0], p[1]))
    return a * b


@pytest.mark.parametrize(
    "f",
    [post_init_setting_a_field_of_a_frozen_object, namedtuple_replaced, dataclass_asdict,
     dataclass_astuple],
)
def test_object_helpers_without_a_rule_are_refused_with_a_line(f):
    # never a zero: refused (with the user's line) at first and second order
    p = np.array([1.3, 0.7])
    with pytest.raises(ad.AdjointError, match=r"line \d+"):
        ad.gradient(f, p)
    with pytest.raises(ad.AdjointError, match=r"line \d+"):
        ad.hessian(f, p)


# ----- `a op= v` in a loop on a value of unknown kind with another name for it -------------
# (fuzz seeds 20149, 20238, 30045: [dict, class, zip] programs crashed with "'bool' object
# is not callable": the in-place flag was saved on the tape each step but never restored,
# so every later restore read the wrong entry)


class _Const:
    def __call__(self, z):
        return 0.5


def alias_of_a_call_result(x, v):
    s5 = _Const()(x)
    s6 = s5
    for t8, t9 in zip(v, v):
        s6 += t8 * x
    return s6 * x + s5


def alias_of_an_unpacked_int(x, v):
    p1, q2 = (x, 3)
    s6 = q2
    for i7 in range(3):
        s6 += i7 * x
    return q2 * x + s6


def alias_of_an_unpacked_list(x, v):
    p1, q2 = (x, [3.0])
    s6 = q2
    for i7 in range(3):
        s6 += [x * i7]
    return q2[0] * x + sum(s6) * x


@pytest.mark.parametrize("f", [alias_of_a_call_result, alias_of_an_unpacked_int])
def test_in_place_update_of_an_alias_in_a_loop(f):
    v = np.array([0.3, -1.2, 0.8])
    check_grads(f, 1.3, v)

    def directional(x):
        return ad.gradient(f, x, v)[0]

    assert isapprox(ad.gradient(directional, 1.3)[0], numerical_gradient(directional, 1.3)[0],
                    rtol=1e-5, atol=1e-7)


def test_in_place_update_of_a_list_alias_in_a_loop_is_refused_with_its_line():
    # the loop rebinds `s6` (`s6 = s6 + ...` once normalised), so at its start `s6` and
    # `q2` are not known to be one list: the write is checked when it runs, and refused
    with pytest.raises(ad.MutationError) as info:
        ad.pullback(alias_of_an_unpacked_list, 1.3, np.array([0.3, -1.2, 0.8]))
    assert "test_containers_fail_closed.py, line" in str(info.value)


class _Holder:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, x):
        return self.fn(x)


def _through_a_held_closure(x, w):
    h = _Holder(lambda t: np.sin(t * w) * t)
    return h(x) + h.fn(x)


def test_a_closure_held_in_a_field_passes_its_captured_gradient():
    # the closure's tangent (its captured w) was dropped when the field was called: a
    # silent zero for w
    got = check_grads(_through_a_held_closure, 0.3, 0.7)
    assert got[1] != 0.0
    h = ad.hessian(lambda v: _through_a_held_closure(v[0], v[1]), np.array([0.3, 0.7]))
    want = numerical_gradient(
        lambda v: ad.gradient(lambda a, b: _through_a_held_closure(a, b), v[0], v[1])[1], np.array([0.3, 0.7]))[0]
    np.testing.assert_allclose(h[1], want, rtol=1e-5, atol=1e-7)
