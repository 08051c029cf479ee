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
from adjoint_s2s.testing import check_grads, numerical_gradient


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
