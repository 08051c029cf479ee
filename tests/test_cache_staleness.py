"""The cache of generated code never serves code that no longer matches the plain call.

A function's code or defaults assigned in place (IPython's ``%autoreload`` sets
``__code__`` and ``__defaults__`` of the functions it reloads), a library's function
monkeypatched (``math.exp = ...``, ``np.tanh = ...``, ``builtins.max = ...``), a global
deleted (the builtin of its name is seen again), an instance attribute that shadows a
method: after a first gradient has cached code, each of these makes the next gradient
that of the code as it now runs. Each test takes the cached paths first (three calls
of ``gradient``, ``grad``, ``value_and_grad`` and ``pullback``), changes what the code
rests on, and compares value and gradient with the plain call and central differences.
"""
import builtins
import math
import sys
import types

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import MissingAdjointError
from adjoint_s2s.testing import numerical_gradient

SOURCE = '''
import math
import numpy as np


def wobble(x):
    return x * 2.0


def _five(x):
    return x * 5.0


def use(x):
    return wobble(x) ** 2


def damp(x, c=1.0):
    return c * x * x


def damp_caller(x):
    return damp(x) + x


def kw(x, *, c=1.0):
    return c * x * x


def kw_caller(x):
    return kw(x) * 2.0


def exp_of(x):
    return math.exp(x)


def exp_caller(x):
    return exp_of(x) + x


def tanh_of(x):
    return float(np.tanh(x))


def tanh_sum(w):
    return np.sum(np.tanh(w) * w)


def peak(x):
    return max(x, 0.1) * 3.0


def magnitude(x):
    return abs(x) * 2.0


abs = lambda v: v * v  # a global shadowing the builtin (deleted by a test)
'''

CLASSES = '''
import math


class Layer:
    def __init__(self, act=None):
        if act is not None:
            self.act = act  # a per-instance activation shadows the default method

    def act(self, z):
        return z

    def __call__(self, x):
        return self.act(2.0 * x)


class Held:
    def __init__(self, act):
        self.act = act  # a callable held in a field, no method of that name

    def __call__(self, x):
        return self.act(2.0 * x)


class Stored:
    def __init__(self):
        self.__dict__["g"] = lambda v: math.exp(v)

    def g(self, v):
        return v


class Described:
    @property
    def act(self):  # a data descriptor: it wins over the instance's __dict__
        return math.sin

    def __init__(self):
        self.__dict__["act"] = math.cos

    def __call__(self, x):
        return self.act(x) * 2.0


class Scaled:
    def __init__(self):
        self.scale = lambda v: v + 1.0  # held, and called on a constant only

    def scale(self, v):
        return v

    def __call__(self, x):
        return self.scale(2.0) * x


def through_layer(x):
    return Layer(math.tanh)(x)


def through_default(x):
    return Layer()(x)


def through_held(x):
    return Held(math.tanh)(x)


def through_stored(x):
    return Stored().g(x)


def through_property(x):
    return Described()(x)


def through_scaled(x):
    return Scaled()(x)


def set_in_body(x):
    layer = Layer()
    layer.act = math.sin
    return layer.act(x) + layer(x)
'''


def _module(tmp_path, name, text):
    path = tmp_path / (name + ".py")
    path.write_text(text)
    m = types.ModuleType(name)
    m.__file__ = str(path)
    exec(compile(text, str(path), "exec"), m.__dict__)
    sys.modules[name] = m
    return m


@pytest.fixture
def mod(tmp_path):
    ad.refresh()
    yield _module(tmp_path, "staleness_mod", SOURCE)
    sys.modules.pop("staleness_mod", None)
    ad.refresh()


@pytest.fixture
def cls(tmp_path):
    ad.refresh()
    yield _module(tmp_path, "staleness_classes", CLASSES)
    sys.modules.pop("staleness_classes", None)
    ad.refresh()


def _check(fn, x, every_path=True):
    """Three calls of each cached path: the plain call's value, the central differences'
    gradient. Returns the gradient."""
    want = numerical_gradient(fn, x)[0]
    for _ in range(3):
        got = [ad.gradient(fn, x)[0]]
        if every_path:
            got += [ad.grad(fn)(x), ad.value_and_grad(fn)(x)[1]]
        value, grads = ad.withgradient(fn, x)
        assert value == pytest.approx(fn(x))
        y, back = ad.pullback(fn, x)
        assert y == pytest.approx(fn(x))
        for g in got + [grads[0], back(1.0)[0]]:
            np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)
    return want


# ----- a function's code and defaults assigned in place ----------------------------------


def test_a_callees_code_assigned_in_place(mod):
    _check(mod.use, 1.0)
    _check(mod.wobble, 1.0)
    mod.wobble.__code__ = mod._five.__code__  # what %autoreload does
    assert _check(mod.use, 1.0) == pytest.approx(50.0)
    assert _check(mod.wobble, 1.0) == pytest.approx(5.0)
    assert _check(lambda x: mod.wobble(x) * x, 1.0) == pytest.approx(10.0)  # a fresh caller


def test_the_code_put_back(mod):
    old = mod.wobble.__code__
    _check(mod.use, 0.5)
    mod.wobble.__code__ = mod._five.__code__
    _check(mod.use, 0.5)
    mod.wobble.__code__ = old
    assert _check(mod.use, 0.5) == pytest.approx(8.0 * 0.5)


def test_defaults_assigned_in_place(mod):
    _check(mod.damp, 0.5)
    _check(mod.damp_caller, 0.5)
    mod.damp.__defaults__ = (4.0,)
    assert _check(mod.damp, 0.8) == pytest.approx(6.4)
    assert _check(mod.damp_caller, 0.8) == pytest.approx(7.4)


def test_keyword_defaults_assigned_in_place(mod):
    _check(mod.kw, 1.0)
    _check(mod.kw_caller, 1.0)
    mod.kw.__kwdefaults__ = {"c": 3.0}
    assert _check(mod.kw, 1.0) == pytest.approx(6.0)
    assert _check(mod.kw_caller, 1.0) == pytest.approx(12.0)


def test_code_and_defaults_together_as_autoreload_sets_them(mod):
    _check(mod.damp_caller, 0.5)
    mod.damp.__code__ = (lambda x, c=1.0: c * x * x * x).__code__
    mod.damp.__defaults__ = (2.0,)
    assert _check(mod.damp_caller, 0.5) == pytest.approx(6.0 * 0.25 + 1.0)


def test_a_callee_deleted_fails_as_the_plain_call(mod):
    _check(mod.use, 1.0)
    del mod.wobble
    with pytest.raises(NameError):
        mod.use(1.0)
    with pytest.raises(NameError):
        ad.gradient(mod.use, 1.0)


# ----- library functions monkeypatched -----------------------------------------------------


def test_math_exp_monkeypatched(mod, monkeypatch):
    _check(mod.exp_of, 0.5)
    _check(mod.exp_caller, 0.5)
    monkeypatch.setattr(math, "exp", lambda v: v ** 4)
    assert _check(mod.exp_of, 0.5) == pytest.approx(0.5)
    assert _check(mod.exp_caller, 0.5) == pytest.approx(1.5)  # through a callee
    monkeypatch.undo()
    assert _check(mod.exp_of, 0.5) == pytest.approx(math.exp(0.5))


def test_np_tanh_monkeypatched(mod, monkeypatch):
    w = np.array([0.5, -1.0, 2.0])
    _check(mod.tanh_of, 0.5)
    ad.gradient(mod.tanh_sum, w)
    monkeypatch.setattr(np, "tanh", np.sin)
    assert _check(mod.tanh_of, 0.5) == pytest.approx(math.cos(0.5))
    np.testing.assert_allclose(ad.gradient(mod.tanh_sum, w)[0], np.cos(w) * w + np.sin(w))


def test_a_builtin_monkeypatched(mod):
    # adjoint_s2s's own code and pytest call max too: only gradient and withgradient
    # while it is patched, and the assertions after it is put back
    _check(mod.peak, 0.5, every_path=False)
    kept = builtins.max
    builtins.max = lambda a, b: a * b
    try:
        got = (mod.peak(0.5), ad.gradient(mod.peak, 0.5), ad.withgradient(mod.peak, 0.5))
    finally:
        builtins.max = kept
    assert [got[0], got[1][0], got[2][0], got[2][1][0]] == pytest.approx([0.15, 0.3, 0.15, 0.3])
    assert _check(mod.peak, 0.5) == pytest.approx(3.0)


# ----- a global deleted ------------------------------------------------------------------------


def test_a_global_deleted_shows_the_builtin_again(mod):
    assert _check(mod.magnitude, 0.5) == pytest.approx(2.0)  # the global lambda: 2 v^2
    del mod.abs  # nothing else holds the lambda: its weak reference dies with it
    assert mod.magnitude(0.5) == pytest.approx(1.0)
    assert _check(mod.magnitude, 0.5) == pytest.approx(2.0)
    value, (grad,) = ad.withgradient(mod.magnitude, -0.5)
    assert (value, grad) == pytest.approx((1.0, -2.0))


# ----- an instance attribute and a method of its class ---------------------------------------


def test_an_instance_attribute_shadows_the_method(cls):
    assert cls.through_layer(0.5) == pytest.approx(math.tanh(1.0))
    assert _check(cls.through_layer, 0.5) == pytest.approx(2.0 * (1.0 - math.tanh(1.0) ** 2))
    assert _check(cls.through_default, 0.5) == pytest.approx(2.0)  # no instance attribute


def test_a_builtin_held_in_a_field_is_called_with_its_rule(cls):
    assert _check(cls.through_held, 0.5) == pytest.approx(2.0 * (1.0 - math.tanh(1.0) ** 2))


def test_the_instance_dict_written_directly(cls):
    assert _check(cls.through_stored, 0.7) == pytest.approx(math.exp(0.7))


def test_a_data_descriptor_wins_over_the_instance_dict(cls):
    assert cls.through_property(0.7) == pytest.approx(2.0 * math.sin(0.7))
    assert _check(cls.through_property, 0.7) == pytest.approx(2.0 * math.cos(0.7))


def test_a_held_callable_called_on_a_constant(cls):
    assert _check(cls.through_scaled, 0.7) == pytest.approx(3.0)


def test_an_attribute_set_in_the_body(cls):
    # layer.act(x) and, inside layer(x), self.act(2x): both math.sin
    assert _check(cls.set_in_body, 0.3) == pytest.approx(math.cos(0.3) + 2.0 * math.cos(0.6))


def test_a_method_bound_by_hand_is_refused_with_a_way_out(cls):
    # types.MethodType(fn, obj) has no Python constructor: refused, never a wrong gradient
    def bound_by_hand(x):
        layer = cls.Layer()
        layer.act = types.MethodType(lambda self, z: z ** 3, layer)
        return layer(x)

    with pytest.raises(MissingAdjointError) as info:
        ad.gradient(bound_by_hand, 0.5)
    assert "@adjoint" in str(info.value)
