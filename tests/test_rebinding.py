"""A module-level name the generated code resolved at transform time, rebound after the
first gradient: the next gradient must be that of the code as it now reads.

Notebook users switch an activation held in a global (``act = math.sin``, later
``act = math.cos``), alias a NumPy function, replace a module, or define a function that
shadows a builtin. The generated code inlined the adjoint of what the name held when it
was written, so every cached path (``gradient``'s memo of the last call, its cache
entry, ``grad``, ``value_and_grad``, ``pullback``, a caller's pair calling the function)
checks that each such name still holds the same object, and writes the code again when
it does not. Each test first takes the cached paths (three calls), rebinds, and compares
with finite differences of the plain call."""
import math
import sys
import types

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import emit
from adjoint_s2s.testing import numerical_gradient

SOURCE = '''
import math
import numpy as np

act = math.sin
npact = np.tanh


def f(x):
    return act(x) * 2.0


def two(x, y):
    return act(x) * y + math.exp(y)


def g(w):
    return np.sum(npact(w) * w)


def caller(x):
    return f(x) + x * x


def magnitude(x):
    return abs(x) * 3.0


def loop(x):
    for _ in range(3):
        x = act(x) + 0.5 * x
    return x


def square(v):
    return v * v


def four_times(v):
    return 4.0 * v


class Model:
    def __init__(self, W):
        self.W = W


model = Model(np.ones(3))


def uses_model(x):
    return np.sum(np.tanh(model.W * x))


def via_module(x):
    return helpers.act(x) * 2.0 + helpers.SCALE * x


class Acts:
    act = math.sin
    scale = 2.0

    @staticmethod
    def kept(v):
        return v * v


def via_class(x):
    return Acts.act(x) * Acts.scale + Acts.kept(x)
'''

HELPERS = '''
import math

act = math.sin
SCALE = 0.5
'''


@pytest.fixture
def mod(tmp_path):
    ad.refresh()
    path = tmp_path / "rebinding_mod.py"
    path.write_text(SOURCE)
    m = types.ModuleType("rebinding_mod")
    m.__file__ = str(path)
    helpers_path = tmp_path / "rebinding_helpers.py"
    helpers_path.write_text(HELPERS)
    h = types.ModuleType("rebinding_helpers")
    h.__file__ = str(helpers_path)
    exec(compile(HELPERS, str(helpers_path), "exec"), h.__dict__)
    sys.modules["rebinding_helpers"] = h
    m.helpers = h  # import rebinding_helpers as helpers
    exec(compile(SOURCE, str(path), "exec"), m.__dict__)
    sys.modules["rebinding_mod"] = m
    yield m
    sys.modules.pop("rebinding_mod", None)
    sys.modules.pop("rebinding_helpers", None)
    ad.refresh()


def _generations(monkeypatch):
    """The functions whose code is written from now on (a spy on emit._generate)."""
    made = []
    generate = emit._generate
    monkeypatch.setattr(emit, "_generate", lambda fn, key: made.append(fn) or generate(fn, key))
    return made


def _check(fn, *args):
    """Three calls of each cached path, every one equal to finite differences."""
    want = numerical_gradient(fn, *args)
    nums = tuple(range(len(args)))
    for _ in range(3):
        for got in (ad.gradient(fn, *args), ad.grad(fn, nums)(*args), ad.value_and_grad(fn, nums)(*args)[1],
                    (ad.grad(fn)(*args),) if len(args) == 1 else ad.gradient(fn, *args)):
            assert len(got) == len(want)
            for a, b in zip(got, want):
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)
        y, back = ad.pullback(fn, *args)
        assert y == pytest.approx(fn(*args))
        got = back(1.0)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)
    return want


def test_a_global_alias_of_a_math_function_rebound(mod):
    _check(mod.f, 0.7)
    mod.act = math.cos
    assert _check(mod.f, 0.7)[0] == pytest.approx(-2.0 * math.sin(0.7))


def test_two_arguments_and_the_alias_rebound_twice(mod):
    _check(mod.two, 0.7, 1.3)
    mod.act = math.tanh
    _check(mod.two, 0.7, 1.3)
    mod.act = math.sin
    assert _check(mod.two, 0.7, 1.3)[0] == pytest.approx(math.cos(0.7) * 1.3)


def test_a_global_alias_of_a_ufunc_rebound(mod):
    w = np.array([0.5, -1.0, 2.0])
    _check(mod.g, w)
    mod.npact = np.sin
    got = _check(mod.g, w)[0]
    np.testing.assert_allclose(got, np.cos(w) * w + np.sin(w))


def test_the_caller_of_a_function_whose_alias_was_rebound(mod):
    _check(mod.caller, 0.4)
    mod.act = math.cos
    assert _check(mod.caller, 0.4)[0] == pytest.approx(-2.0 * math.sin(0.4) + 0.8)


def test_a_loop_over_an_alias_rebound(mod):
    _check(mod.loop, 0.3)
    mod.act = math.atan
    _check(mod.loop, 0.3)


def test_a_module_replaced(mod):
    _check(mod.two, 0.7, 1.3)
    mod.math = types.SimpleNamespace(exp=mod.four_times)
    mod.act = np.sin
    assert _check(mod.two, 0.7, 1.3)[1] == pytest.approx(math.sin(0.7) + 4.0)


def test_a_builtin_shadowed_by_a_module_function_defined_later(mod):
    _check(mod.magnitude, -0.6)
    mod.abs = mod.square
    assert _check(mod.magnitude, -0.6)[0] == pytest.approx(3.0 * 2.0 * -0.6)


def test_an_object_rebound_to_another_of_its_class_reuses_the_code(mod, monkeypatch):
    # a training loop that rebuilds a global object between calls: its fields are read
    # when the code runs, so only its type is checked, and no call writes code again
    x = np.linspace(0.0, 1.0, 3)
    _check(mod.uses_model, x)
    made = _generations(monkeypatch)
    for i in range(5):
        mod.model = mod.Model(np.full(3, 0.5 + i))
        _check(mod.uses_model, x)
    assert made == []
    mod.model = types.SimpleNamespace(W=np.full(3, 2.0))  # another type: checked again
    _check(mod.uses_model, x)


def test_an_attribute_of_the_users_module_rebound(mod, monkeypatch):
    # helpers.act read through `import rebinding_helpers as helpers`: the attribute of a
    # module of the user's own is checked like a global
    _check(mod.via_module, 0.7)
    mod.helpers.act = math.cos
    assert _check(mod.via_module, 0.7)[0] == pytest.approx(-2.0 * math.sin(0.7) + 0.5)
    made = _generations(monkeypatch)
    for scale in (1.5, 2.5, 3.0):  # data: its type is checked, the code is kept
        mod.helpers.SCALE = scale
        assert _check(mod.via_module, 0.7)[0] == pytest.approx(-2.0 * math.sin(0.7) + scale)
    assert made == []
    mod.helpers.SCALE = np.float64(3.0)  # another type: checked again
    assert _check(mod.via_module, 0.7)[0] == pytest.approx(-2.0 * math.sin(0.7) + 3.0)


def test_an_attribute_of_the_users_class_rebound(mod, monkeypatch):
    _check(mod.via_class, 0.7)
    mod.Acts.act = math.cos
    assert _check(mod.via_class, 0.7)[0] == pytest.approx(-2.0 * math.sin(0.7) + 1.4)
    made = _generations(monkeypatch)
    for scale in (1.5, 2.5):  # data: its type is checked, the code is kept
        mod.Acts.scale = scale
        assert _check(mod.via_class, 0.7)[0] == pytest.approx(-scale * math.sin(0.7) + 1.4)
    assert made == []
    mod.Acts.kept = staticmethod(mod.square)  # a static method's function replaced
    mod.Acts.kept = staticmethod(mod.four_times)
    assert _check(mod.via_class, 0.7)[0] == pytest.approx(-2.5 * math.sin(0.7) + 4.0)
