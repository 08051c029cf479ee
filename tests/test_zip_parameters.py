"""Loops over ``zip(xs, ys)`` of list or tuple arguments of numbers (issue 15: the zip's
tuples had no kinds, so the loop body was dispatched at run time, about 115 times the
plain call). Where the cache key knows the lists' items and the function only reads them
(param_fields.known_items), the loop reads them by position (targets.zip_loop): the same
items in the same order, the gradient of each list at its positions, and a zip that is
not the builtin, or a list rebound, keeps the loop as written."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient

from .gradcheck import close_to_differences, code_lines
from .source_modules import registered_module

SOURCE = '''
import math


def fit(w, b, xs, ys):
    loss = 0.0
    for x, y in zip(xs, ys):
        loss = loss + (w * x + b - y) ** 2
    return loss


def as_tuples(w, xs, ys):
    loss = 0.0
    for pair in zip(xs, ys):
        loss = loss + math.sin(w * pair[0]) * pair[1]
    return loss


def three(w, xs, ys, zs):
    loss = 0.0
    for x, (y, z) in zip(xs, zip(ys, zs)):
        loss = loss + w * x * y - z
    return loss


def stops_early(w, xs, ys):
    loss = 0.0
    for x, y in zip(xs, ys):
        if x > 0.5:
            break
        loss = loss + w * x * y
    else:
        loss = loss * 2.0
    return loss + x


def rebinds(w, xs, ys):
    xs = [2.0 * v for v in xs]
    loss = 0.0
    for x, y in zip(xs, ys):
        loss = loss + w * x * y
    return loss
'''

SHADOWED = '''
def zip(*seqs):
    return [tuple(reversed(items)) for items in __builtins__["zip"](*seqs)] if isinstance(__builtins__, dict) \\
        else [tuple(reversed(items)) for items in __builtins__.zip(*seqs)]


def fit(w, xs, ys):
    loss = 0.0
    for x, y in zip(xs, ys):
        loss = loss + (w * x - y) ** 2
    return loss
'''

XS = [0.1, 0.4, 0.3, 0.9, 0.2]
YS = [1.0, 0.0, 0.5, 1.0]


@pytest.fixture
def mod(tmp_path):
    with registered_module(tmp_path, "zip_parameters_mod", SOURCE) as m:
        yield m


def test_zip_of_two_lists_reads_by_position(mod):
    got = close_to_differences(mod.fit, 0.7, 0.1, XS, YS)
    assert type(got[2]) is list and len(got[2]) == len(XS) and got[2][-1] == 0.0  # (past the shorter one)
    text = ad.show_adjoint(mod.fit, 0.7, 0.1, XS, YS)
    assert "zip(" not in code_lines(text)
    assert "_rt.binop" not in text and "dispatched at run time" not in text


@pytest.mark.parametrize("kind", [list, tuple])
def test_lists_and_tuples(mod, kind):
    got = close_to_differences(mod.as_tuples, 0.7, kind(XS), kind(YS))
    assert type(got[1]) is kind


def test_a_zip_of_a_zip(mod):
    close_to_differences(mod.three, 0.7, XS, YS, [0.3, 0.2, 0.1])


def test_break_and_else_as_python_runs_them(mod):
    close_to_differences(mod.stops_early, 0.7, XS, YS)  # breaks at 0.9
    close_to_differences(mod.stops_early, 0.7, [0.1, 0.2], YS)  # runs out: the else clause


def test_a_rebound_list_keeps_its_zip(mod):
    close_to_differences(mod.rebinds, 0.7, XS, YS)
    assert "zip, xs, ys)" in code_lines(ad.show_adjoint(mod.rebinds, 0.7, XS, YS))


def test_a_zip_of_the_module_s_own_is_called(tmp_path):
    with registered_module(tmp_path, "zip_shadowed_mod", SHADOWED) as m:
        got = ad.gradient(m.fit, 0.7, XS, YS)
        want = numerical_gradient(m.fit, 0.7, XS, YS)
        assert np.allclose(got[0], want[0]) and np.allclose(got[1], want[1]) and np.allclose(got[2], want[2])
        assert ad.pullback(m.fit, 0.7, XS, YS)[0] == m.fit(0.7, XS, YS)
