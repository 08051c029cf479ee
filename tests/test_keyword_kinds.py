"""Keyword-only parameters and arguments passed by keyword keep their kinds (issue 15: a
float keyword-only parameter made the whole loop dispatched, 45-69 times the plain form).
The key of the code holds the kinds of the defaults a call leaves to the function and of
the keywords it passes, so a default changed to another kind, or a keyword of another
kind, gets code made again."""
import functools
import math

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads, numerical_gradient

from .source_modules import registered_module

SOURCE = '''
import math


def sim(k, *, dt=0.01, n=200):
    theta, omega = 1.0, 0.0
    for _ in range(n):
        omega = omega - dt * k * math.sin(theta)
        theta = theta + dt * omega
    return theta


def by_keyword(k):
    return (sim(k, dt=0.02) - 0.5) ** 2


def positional_by_keyword(k, c):
    return damped(c=c, k=k)


def damped(k, c=0.1, *, steps=50):
    x, v = 1.0, 0.0
    for _ in range(steps):
        v = v - 0.05 * (k * x + c * v)
        x = x + 0.05 * v
    return x


def required(k, *, dt):
    return sim(k, dt=dt) * dt


def gathered(k, **options):
    return sim(k, **options)
'''


@pytest.fixture
def mod(tmp_path):
    with registered_module(tmp_path, "keyword_kinds_mod", SOURCE) as m:
        yield m


def test_a_keyword_only_default_keeps_its_kind(mod):
    text = ad.show_adjoint(mod.sim, 2.0)
    assert "dispatched at run time" not in text and "_rt.binop" not in text, text
    check_grads(mod.sim, 2.0)


def test_keywords_passed_by_a_caller_or_a_partial(mod):
    check_grads(mod.by_keyword, 2.0)
    check_grads(functools.partial(mod.sim, dt=0.02), 2.0)
    check_grads(mod.positional_by_keyword, 2.0, 0.3)
    # the callee's code for these keyword kinds is inline
    entry = ad.emit.entry_for(mod.sim, ad.kinds.keyword_call_key(mod.sim, (2.0,), {"dt": 0.02}))
    assert "_rt.binop" not in entry.source and "dispatched at run time" not in entry.source


def test_a_keyword_of_another_kind_gets_its_own_code(mod):
    check_grads(mod.by_keyword, 2.0)
    want = numerical_gradient(lambda k: mod.sim(k, dt=0.02), 2.0)[0]
    assert ad.gradient(lambda k: mod.sim(k, dt=np.float64(0.02)), 2.0)[0] == pytest.approx(want, rel=1e-6)
    assert ad.gradient(lambda k: mod.sim(k, dt=np.array(0.02)), 2.0)[0] == pytest.approx(want, rel=1e-6)
    required = functools.partial(mod.required, dt=0.02)
    assert ad.gradient(required, 2.0)[0] == pytest.approx(numerical_gradient(required, 2.0)[0], rel=1e-6)


def test_a_default_changed_in_place_to_another_kind(mod):
    before = check_grads(mod.sim, 2.0)[0]
    mod.sim.__kwdefaults__["dt"] = np.array(0.01)  # a 0-d array: another kind
    after = ad.gradient(mod.sim, 2.0)[0]
    assert float(after) == pytest.approx(before, rel=1e-9)
    mod.sim.__kwdefaults__["dt"] = 0.02
    check_grads(mod.sim, 2.0)
    assert ad.gradient(mod.sim, 2.0)[0] == pytest.approx(numerical_gradient(
        lambda k: mod.sim(k, dt=0.02), 2.0)[0], rel=1e-6)


def test_gathered_keywords_still_work(mod):
    check_grads(lambda k: mod.gathered(k, dt=0.02, n=100), 2.0)
    assert math.isfinite(ad.gradient(mod.damped, 2.0)[0])
