"""Helpers under a decorator whose wrapper only forwards its arguments (issue 15: a
``functools.wraps`` wrapper around ``f(*args, **kwargs)`` kept every kind from flowing
through the call, 250 times the plain call in a loop). Such a wrapper is seen through:
the function it calls is inlined or called directly, as an undecorated helper is, and
everything that rests on is checked at each call (the global still names the wrapper,
the wrapper's cell still names the function, neither changed in place, no rule
registered for either). A wrapper that does anything else keeps its call."""
import functools

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import kinds, rules
from adjoint_s2s.passes import inline
from adjoint_s2s.testing import numerical_gradient

from .gradcheck import close_to_differences
from .source_modules import registered_module

SOURCE = '''
import functools
import math


def forwards(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)
    return wrapper


def positional(f):
    def w(*a):
        return f(*a)
    return w


CALLS = [0]


def counts(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        CALLS[0] += 1
        return f(*args, **kwargs)
    return wrapper


def swappable(f):
    def w(*a):
        return f(*a)

    def swap(g):
        nonlocal f
        f = g
    w.swap = swap
    return w


registered = []


def register(f):
    registered.append(f)
    return f


@forwards
def accel(th, k):
    return -k * math.sin(th)


@positional
@forwards
def accel_twice_wrapped(th, k):
    return -k * math.sin(th)


@counts
def accel_counted(th, k):
    return -k * math.sin(th)


@swappable
def accel_swappable(th, k):
    return -k * math.sin(th)


@register
def accel_registered(th, k):
    return -k * math.sin(th)


@forwards
def accel_looping(th, k):
    s = 0.0
    for j in range(3):
        s = s + math.sin(th + 0.1 * j)
    return -k * s


def keyword_to_positional(k):
    return accel_twice_wrapped(0.5, k=k)  # (`positional` takes no keywords)


''' + "".join(f'''
def pendulum{name}(k):
    th, om = 1.0, 0.0
    for _ in range(40):
        om = om + 0.05 * accel{name}(th, k)
        th = th + 0.05 * om
    return th

''' for name in ("", "_twice_wrapped", "_counted", "_swappable", "_registered", "_looping"))


@pytest.fixture
def mod(tmp_path):
    with registered_module(tmp_path, "forwarding_mod", SOURCE) as m:
        yield m


@pytest.mark.parametrize("name", ["pendulum", "pendulum_twice_wrapped", "pendulum_registered"])
def test_a_forwarding_wrapper_is_seen_through_and_inlined(mod, name):
    f = getattr(mod, name)
    close_to_differences(f, 0.9)
    assert ad.pullback(f, 0.9)[0] == f(0.9)
    text = ad.show_adjoint(f, 0.9)
    assert "# (inlined accel" in text
    assert "_rt.call" not in text and "_rt.binop" not in text  # every kind known


def test_a_longer_helper_under_a_wrapper_is_called_directly(mod, monkeypatch):
    monkeypatch.setattr(inline, "ENABLED", [False])
    ad.refresh()
    close_to_differences(mod.pendulum_looping, 0.9)
    text = ad.show_adjoint(mod.pendulum_looping, 0.9)
    assert "accel_looping_pair(th, k)" in text
    assert "_rt.call" not in text and "dispatched at run time" not in text


def test_a_wrapper_that_does_more_keeps_its_call(mod):
    mod.CALLS[0] = 0
    close_to_differences(mod.pendulum_counted, 0.9)
    text = ad.show_adjoint(mod.pendulum_counted, 0.9)
    assert "inlined accel_counted" not in text
    mod.CALLS[0] = 0
    ad.gradient(mod.pendulum_counted, 0.9)
    assert mod.CALLS[0] == 40  # its effect, once a call, as the plain call has it


def test_the_wrapper_s_cell_is_checked_at_each_call(mod):
    first = close_to_differences(mod.pendulum_swappable, 0.9)
    close_to_differences(mod.pendulum_swappable, 0.9)  # (the cached fast path is taken now)
    mod.accel_swappable.swap(lambda th, k: -k * th)
    second = close_to_differences(mod.pendulum_swappable, 0.9)
    assert second != first
    assert ad.gradient(mod.pendulum_swappable, 0.9) == second


def test_the_wrapped_function_changed_in_place_makes_the_code_again(mod):
    first = close_to_differences(mod.pendulum, 0.9)
    close_to_differences(mod.pendulum, 0.9)
    inner = mod.accel.__wrapped__
    inner.__code__ = (lambda th, k: -k * th).__code__
    second = close_to_differences(mod.pendulum, 0.9)
    assert second != first


def test_a_rebound_global_makes_the_code_again(mod):
    first = close_to_differences(mod.pendulum, 0.9)
    mod.accel = mod.forwards(lambda th, k: -k * th * th)
    second = close_to_differences(mod.pendulum, 0.9)
    assert second != first


@pytest.mark.parametrize("which", ["wrapper", "wrapped"])
def test_a_rule_for_the_wrapper_or_the_wrapped_function_takes_effect(mod, which):
    close_to_differences(mod.pendulum, 0.9)
    target = mod.accel if which == "wrapper" else mod.accel.__wrapped__

    def rule(th, k):
        return target(th, k), lambda d: (0.0, -d)  # a deliberately different gradient

    ad.adjoint(target)(rule)
    try:
        text = ad.show_adjoint(mod.pendulum, 0.9)
        assert "inlined accel" not in text
        got = ad.gradient(mod.pendulum, 0.9)[0]
        assert got != pytest.approx(numerical_gradient(mod.pendulum, 0.9)[0])
    finally:
        rules.USER_RULES.pop(target)
        rules.bump(target)
    close_to_differences(mod.pendulum, 0.9)


def test_keywords_to_a_wrapper_without_them_fail_as_python_does(mod):
    with pytest.raises(TypeError) as plain:
        mod.keyword_to_positional(0.9)
    with pytest.raises(TypeError) as ours:
        ad.gradient(mod.keyword_to_positional, 0.9)
    assert "keyword" in str(plain.value) and "keyword" in str(ours.value)


def test_which_wrappers_forward():
    def f(x):
        return x

    def plain(g):
        def w(*a):
            return g(*a)
        return w

    def keywords(g):
        def w(*a, **k):
            "A docstring is not code."
            return g(*a, **k)
        return w

    def drops_one(g):
        def w(*a):
            return g(*a[1:])
        return w

    def names_one(g):
        def w(x, *a):
            return g(x, *a)
        return w

    def keywords_only(g):
        def w(**k):
            return g(**k)
        return w

    def of_a_method(g):
        def w(*a):
            return g.__call__(*a)
        return w

    w = plain(f)
    assert kinds.forwarding_chain(w) == [w, f]
    assert kinds.forwarding_chain(keywords(plain(f)))[-1] is f
    assert len(kinds.forwarding_chain(keywords(plain(f)))) == 3
    for deco in (drops_one, names_one, keywords_only, of_a_method):
        assert kinds.forwarding_cell(deco(f)) is None, deco.__name__
    assert kinds.forwarding_cell(plain(np.sin)) is None  # (a ufunc: not a Python function)
    assert kinds.forwarding_cell(f) is None
