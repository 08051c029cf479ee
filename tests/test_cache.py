"""The cache of generated code: keyed weakly, invalidated by new rules, refresh()."""
import gc
import inspect
import linecache
import math
import traceback
import weakref

import pytest

import adjoint_s2s as ad
from adjoint_s2s import emit
from adjoint_s2s.runtime import kinds_of


def square_plus_sin(x):
    return x * x + math.sin(x)


def test_generated_code_is_reused():
    ad.gradient(square_plus_sin, 1.0)
    e1 = emit.entry_for(square_plus_sin, kinds_of((1.0,)))
    ad.gradient(square_plus_sin, 2.0)
    assert emit.entry_for(square_plus_sin, kinds_of((1.0,))) is e1


def test_specialised_on_argument_kinds():
    real = emit.entry_for(square_plus_sin, kinds_of((1.0,)))
    cplx = emit.entry_for(square_plus_sin, kinds_of((1.0j,)))
    assert real is not cplx and real.source != cplx.source


def test_a_rule_for_an_inlined_primitive_invalidates_exactly_its_dependents():
    def uses_exp(x):
        return math.exp(x) * 2.0

    def no_exp(x):
        return x * 3.0

    assert ad.gradient(uses_exp, 0.0) == (2.0,)
    other = emit.entry_for(no_exp, kinds_of((0.0,)))
    ad.adjoint(math.exp)(lambda x: (math.exp(x), lambda d: (100.0 * d,)))
    try:
        assert ad.gradient(uses_exp, 0.0) == (200.0,)  # no refresh() needed
        assert emit.entry_for(no_exp, kinds_of((0.0,))) is other  # untouched
    finally:
        from adjoint_s2s import rules

        rules.USER_RULES.pop(math.exp)
        rules.bump(math.exp)
    assert ad.gradient(uses_exp, 0.0) == (2.0,)


def test_replacing_a_rule_takes_effect():
    def k(x):
        return x

    def uses_k(x):
        return k(x) * 1.0

    ad.adjoint(k)(lambda x: (x, lambda d: (2.0 * d,)))
    assert ad.gradient(uses_k, 1.0) == (2.0,)
    ad.adjoint(k)(lambda x: (x, lambda d: (5.0 * d,)))
    assert ad.gradient(uses_k, 1.0) == (5.0,)


def test_refresh_clears_everything_and_is_harmless():
    ad.gradient(square_plus_sin, 1.0)
    ad.refresh()
    assert square_plus_sin.__code__ not in emit._CACHE
    assert ad.gradient(square_plus_sin, 1.0) == (2.0 + math.cos(1.0),)


def test_cache_is_weak_on_code_objects():
    ns = {}
    src = "def temp(x):\n    return x * 3.0\n"
    filename = "<adjoint_s2s test: weak cache>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), ns)
    fn = ns.pop("temp")
    assert ad.gradient(fn, 1.0) == (3.0,)
    ref = weakref.ref(fn.__code__)
    del fn, ns
    gc.collect()
    assert ref() is None


def test_generated_source_is_in_linecache_and_inspectable():
    entry = emit.entry_for(square_plus_sin, kinds_of((1.0,)))
    assert "".join(linecache.getlines(entry.filename)) == entry.source
    pair = emit.raw_pair_for(square_plus_sin, kinds_of((1.0,)))
    assert "def square_plus_sin_pair" in inspect.getsource(pair)


def test_errors_in_the_backward_pass_show_generated_lines():
    def bad_rule_user(x):
        return bad(x) * 2.0

    def bad(x):
        return x

    ad.adjoint(bad)(lambda x: (x, lambda d: (d / 0.0,)))
    with pytest.raises(ZeroDivisionError) as err:
        ad.gradient(bad_rule_user, 1.0)
    text = "".join(traceback.format_exception(err.value))
    assert "bad_rule_user_pullback" in text  # the generated frame is named and shown
