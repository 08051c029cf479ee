"""Loops over a dict argument of numbers by string keys (issue 15: `for k, v in
p.items()`, `for v in p.values()` and `for k in p: p[k]` were dispatched at run time, 120
to 160 times the plain call). Where the key holds the values' kind and the function only
reads the dict, its keys are strings to the analysis and the loop over `.items()` or
`.values()` is a loop over the keys reading each value by key (targets.dict_loop): the
same pairs in the same order, the gradient a dict of the same keys."""
import pytest

import adjoint_s2s as ad

from .gradcheck import close_to_differences, code_lines
from .source_modules import registered_module

SOURCE = '''
import math


def items(x, p):
    s = 0.0
    for k, v in p.items():
        s = s + v * math.sin(x * len(k))
    return s


def values(x, p):
    s = 0.0
    for v in p.values():
        s = s * 0.5 + v * math.sin(x)
    return s


def keys(x, p):
    s = 0.0
    for k in p:
        s = s + p[k] * math.cos(x * p[k])
    return s


def pairs(x, p):
    s = 0.0
    for kv in p.items():
        s = s + kv[1] * x + len(kv[0])
    return s


def rebound(x, p):
    p = dict(p, extra=1.0)
    s = 0.0
    for k, v in p.items():
        s = s + v * x
    return s
'''

P = {"a": 0.5, "bb": 1.5, "ccc": -0.3}


@pytest.fixture
def mod(tmp_path):
    with registered_module(tmp_path, "dict_argument_loops_mod", SOURCE) as m:
        yield m


@pytest.mark.parametrize("name", ["items", "values", "keys", "pairs"])
def test_loops_over_a_dict_argument_read_it_by_key(mod, name):
    f = getattr(mod, name)
    got = close_to_differences(f, 0.7, dict(P))
    assert list(got[1]) == list(P)  # the same keys, in the same order
    text = code_lines(ad.show_adjoint(f, 0.7, dict(P)))
    assert "_rt.binop" not in text and "call_method" not in text
    if name != "pairs":  # (`kv[1]` of the pair a loop target holds: read when it runs)
        assert "getitem_pair" not in text


def test_a_rebound_dict_keeps_its_loop(mod):
    close_to_differences(mod.rebound, 0.7, dict(P))
    assert "call_method" in code_lines(ad.show_adjoint(mod.rebound, 0.7, dict(P)))
