"""passes/reverse/plain.py: a plain statement skips the per-statement checks; the code
generated for it is exactly what the general path generates."""
import math

import numpy as np

from adjoint_s2s import emit, runtime
from adjoint_s2s.passes.reverse import generator
from adjoint_s2s.passes.reverse.plain import plain_statement
from adjoint_s2s.passes.activity import REAL
from tests import test_corpus, test_mutation

from .pipeline import analysed


def calls_and_operators(x, y):
    a = x * y - math.sin(x)
    b = -a + np.tanh(y) ** 2
    c = abs(b) + max(a, b)
    return c * a


def writes(x, y):
    d = {}
    d.setdefault("k", x)
    lst = [x]
    z = lst.pop()
    s = set()
    s.add(1.0)
    return z * y + d["k"]


def _plain_targets(fn):
    facts = analysed(fn, REAL, REAL)
    return [s.targets[0].id for s in facts.fn.body if plain_statement(s, facts.resolve)]


def test_operators_and_primitive_calls_on_atoms_are_plain():
    # normalised: mul = x * y; sin_x = math.sin(x); a = mul - sin_x; neg = -a;
    # tanh_y = np.tanh(y); pow_1 = tanh_y ** 2; b = neg + pow_1; abs_b = abs(b);
    # max_1 = max(a, b); c = abs_b + max_1; result = c * a
    plain = _plain_targets(calls_and_operators)
    assert {"mul", "sin_x", "a", "neg", "tanh_y", "pow_1", "b", "abs_b", "c"} <= set(plain)
    assert "max_1" not in plain  # max is no primitive of the rules (min_max inlines it)


def test_writes_and_containers_are_not_plain():
    # d = {}; d.setdefault(...) (no assignment); lst = [x]; z = lst.pop(); s = set();
    # s.add(1.0) (no assignment); the return's arithmetic
    plain = _plain_targets(writes)
    assert not {"d", "lst", "z", "s"} & set(plain)


def _texts(rows):
    out = {}
    for name, fn, kinds in rows:
        emit.refresh()
        try:
            out[name] = emit.source_of(fn, kinds).source.split("\n", 1)[1]
        except Exception as exc:  # a refusal is part of what is compared
            out[name] = f"{type(exc).__name__}: {exc}"
    return out


def test_the_plain_lane_generates_what_the_checks_would(monkeypatch):
    rows = [(p.id, p.values[1], runtime.kinds_of(p.values[2])) for p in test_corpus.ROWS]
    rows += [(p.id, p.values[0], runtime.kinds_of(p.values[1])) for p in test_mutation.ROWS]
    fast = _texts(rows)
    monkeypatch.setattr(generator, "plain_statement", lambda s, resolve: False)
    general = _texts(rows)
    emit.refresh()
    assert fast == general
