"""A list built by appending (a comprehension, a generator expression given to sum, or
`hist.append(x)` in a loop) and then only read gives its items' kind to a loop over it
and to `sum`, `min` and `max` of it (passes/appended.py); a tuple of numbers gives
theirs to a loop over it. Everything computed from them was dispatched at run time
(114 to 270 times the plain call, issue 15). Lists used another way keep run-time
dispatch, and every value and gradient is the plain call's."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads

from .source_modules import module_from_source

SOURCE = '''
import dataclasses
import math
import numpy as np


@dataclasses.dataclass
class Params:
    k: float
    c: float
    ws: list


def list_field_of_a_local_record(k):
    p = Params(k, 0.1, [0.5, 0.25])  # (its fields become variables: p_ws = ws, a copy of the name)
    x, v = 1.0, 0.0
    for _ in range(30):
        v = v - 0.01 * (p.k * x + p.c * v) * p.ws[0]
        x = x + 0.01 * v * p.ws[-1]
    return x


def a_named_again_list_written_into(k):
    ws = [0.5, 0.25]
    vs = ws
    vs[0] = np.array([k, 1.0])  # (an array among numbers now)
    return float(np.sum(ws[0] * k)) + ws[1]


def comprehension_summed(k):
    vs = [0.1, 0.2, 0.3]
    s = 0.0
    for _ in range(20):
        ys = [k * v + s * 0.01 for v in vs]
        s = s * 0.5 + sum(ys)
    return s


def generator_summed(k):
    s = 0.0
    for _ in range(20):
        s = s + sum(k * j for j in (1.0, 2.0, 3.0))
    return s


def zipped(k):
    xs = [0.1 * i for i in range(20)]
    ys = [math.sin(x) for x in xs]
    s = 0.0
    for x, y in zip(xs, ys):
        s = s + (k * x - y) ** 2
    return s


def history(k):
    hist = []
    x = 1.0
    for _ in range(30):
        x = x * 0.9 + 0.1 * math.sin(k * x)
        hist.append(x)
    return sum(hist) / len(hist) + max(hist) - min(hist)


def arrays_appended(w):
    outs = []
    h = w
    for _ in range(3):
        h = np.tanh(h * 0.5 + 0.1)
        outs.append(h)
    total = sum(outs)
    return float(np.sum(total * total))


def horner_reversed(k):
    coefs = (1.0, -0.5, 0.25, -0.125)
    s = 0.0
    for i in range(10):
        x = 0.1 * i * k
        y = 0.0
        for c in reversed(coefs):
            y = y * x + c
        s = s + y
    return s


def reversed_and_copied(k):
    ys = [k * v for v in (0.3, -1.0, 2.0)]
    s = 0.0
    for y in reversed(ys):
        s = s * 0.5 + y
    for y in tuple(ys):
        s = s + y * y
    return s


def a_copy_written_into(k):
    ys = [k * v for v in (0.3, -1.0, 2.0)]
    zs = list(ys)
    zs.append(np.array([k, k]))  # (the copy's items are not ys's: an array among numbers)
    s = 0.0
    for z in zs:
        s = s + float(np.sum(z * z))
    return s


# ----- left to run-time dispatch -----

def mixed_kinds(k):
    parts = [k]
    parts.append(np.array([k, 2.0 * k]))
    s = 0.0
    for p in parts:
        s = s + float(np.sum(p))
    return s


def passed_on(k):
    ys = [k * v for v in (1.0, 2.0)]
    return _total(ys) * k


def _total(xs):
    xs.append(1.0)  # (writes into it: called, not inlined)
    out = 0.0
    for x in xs:
        out = out + x
    return out


def read_while_building(k):
    hist = [k]
    for _ in range(5):
        hist.append(sum(hist) * 0.5)
    return hist[-1]
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return module_from_source(tmp_path_factory.mktemp("appended_lists"), "appended_lists_mod", SOURCE)


@pytest.mark.parametrize("name", ["comprehension_summed", "generator_summed", "zipped", "history", "horner_reversed",
                                  "reversed_and_copied", "list_field_of_a_local_record"])
def test_items_of_appended_lists_keep_their_kind(mod, name):
    f = getattr(mod, name)
    text = ad.show_adjoint(f, 0.9)
    assert "_rt.binop" not in text
    assert ad.pullback(f, 0.9)[0] == f(0.9)
    check_grads(f, 0.9, order=2)


def test_arrays_appended(mod):
    w = np.array([0.3, -0.6, 1.2])
    assert "_rt.binop" not in ad.show_adjoint(mod.arrays_appended, w)
    assert ad.pullback(mod.arrays_appended, w)[0] == mod.arrays_appended(w)
    check_grads(mod.arrays_appended, w)


@pytest.mark.parametrize("name", ["mixed_kinds", "passed_on", "read_while_building", "a_copy_written_into",
                                  "a_named_again_list_written_into"])
def test_lists_used_another_way_stay_dispatched_and_right(mod, name):
    f = getattr(mod, name)
    assert ad.pullback(f, 0.9)[0] == f(0.9)
    check_grads(f, 0.9)


def test_a_list_passed_on_or_of_mixed_kinds_is_not_taken_by_kind(mod):
    assert "_rt.binop" in ad.show_adjoint(mod.passed_on, 0.9)
    assert "# dispatched at run time: kind of p unknown" in ad.show_adjoint(mod.mixed_kinds, 0.9)
