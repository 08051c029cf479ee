"""A dict display whose keys repeat keeps the last value of each key: the values it
replaced get no gradient (they are not in the dict). Constant keys equal by Python's
dict equality (``1``, ``1.0``, ``True``), keys computed at run time, and ``**`` entries
that a later key replaces (or that replace an earlier key); ``dict(mapping, k=v)``
whose keyword replaces the mapping's value."""
import numpy as np
import pytest

import adjoint_s2s as ad


def same_constant_key(a, b):
    d = {"k": a, "k": b}  # noqa: F601
    return d["k"] * a


def equal_numbers(a, b):
    d = {1: a, 1.0: b * 2.0, True: b}
    return d[1] * a


def computed_keys(a, b, i, j):
    d = {i: a, j: b}
    return d[i] * a + d[j]


def star_then_key(a, b):
    base = {"k": a, "m": a * 3.0}
    d = {**base, "k": b}
    return d["k"] * a + d["m"]


def key_then_star(a, b):
    over = {"k": b * b}
    d = {"k": a, "j": a, **over}
    return d["k"] * a + d["j"]


def dict_call_keyword_replaces(a, b):
    base = {"k": a, "m": a * 3.0}
    d = dict(base, k=b)
    return d["k"] * a + d["m"]


CASES = [
    (dict_call_keyword_replaces, (0.7, 0.3)),
    (same_constant_key, (0.7, 0.3)),
    (equal_numbers, (0.7, 0.3)),
    (computed_keys, (0.7, 0.3, 2, 2)),
    (computed_keys, (0.7, 0.3, 2, 5)),
    (star_then_key, (0.7, 0.3)),
    (key_then_star, (0.7, 0.3)),
]


def _fd(f, args, eps=1e-6):
    out = []
    for i in range(2):
        up, dn = list(args), list(args)
        up[i] += eps
        dn[i] -= eps
        out.append((f(*up) - f(*dn)) / (2 * eps))
    return out


@pytest.mark.parametrize("f,args", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_replaced_values_get_no_gradient(f, args):
    y, pb = ad.pullback(f, *args)
    assert y == f(*args)
    g = [0.0 if v is None else v for v in pb(1.0)[:2]]
    np.testing.assert_allclose(g, _fd(f, args), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("f,args", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_second_order(f, args):
    def da(*xs):
        return ad.gradient(f, *xs)[0]

    h = ad.gradient(da, *args)
    h = [0.0 if v is None else v for v in h[:2]]
    np.testing.assert_allclose(h, _fd(da, args, 1e-5), rtol=1e-5, atol=1e-7)
