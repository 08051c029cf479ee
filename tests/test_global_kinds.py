"""A global number is typed by its value (REAL for an int or a float, COMPLEX for a
complex), so scalar code using module constants gets inline templates; every call checks
that the global still has that type, and code is made again when a module rebinds it."""
import math
import sys
import types

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient

SOURCE = '''
import math
DT = 0.01
G = 9.81

def pendulum(theta0):
    theta = theta0
    omega = 0.0
    for i in range(200):
        omega = omega - G * math.sin(theta) * DT
        theta = theta + omega * DT
    return theta
'''


@pytest.fixture
def mod(tmp_path):
    path = tmp_path / "pendulum_globals.py"
    path.write_text(SOURCE)
    m = types.ModuleType("pendulum_globals")
    m.__file__ = str(path)
    exec(compile(SOURCE, str(path), "exec"), m.__dict__)
    sys.modules["pendulum_globals"] = m
    yield m
    sys.modules.pop("pendulum_globals", None)


def test_global_numbers_give_inline_scalar_code(mod):
    text = ad.show_adjoint(mod.pendulum, 0.3)
    assert "_rt.binop" not in text and "_rt.call(" not in text  # nothing dispatched at run time
    assert ad.gradient(mod.pendulum, 0.3)[0] == pytest.approx(numerical_gradient(mod.pendulum, 0.3)[0], rel=1e-6)


def test_a_rebound_global_gets_code_made_again(mod):
    before = ad.gradient(mod.pendulum, 0.3)[0]
    mod.G = 3  # an int: still a real number
    g_int = ad.gradient(mod.pendulum, 0.3)[0]
    assert g_int == pytest.approx(numerical_gradient(mod.pendulum, 0.3)[0], rel=1e-6) and g_int != before
    mod.DT = np.float64(0.02)  # another type: the code assumed a float, it is made again
    g_np = ad.gradient(mod.pendulum, 0.3)[0]
    assert g_np == pytest.approx(numerical_gradient(mod.pendulum, 0.3)[0], rel=1e-6)


def test_a_complex_global_is_complex():
    src = "C = 1.0 + 2.0j\n\ndef rot(x):\n    return (C * x).real\n"
    m = types.ModuleType("complex_global")
    exec(compile(src, "<complex_global>", "exec"), m.__dict__)
    # (no file: the source is read through linecache)
    import linecache
    linecache.cache["<complex_global>"] = (len(src), None, src.splitlines(True), "<complex_global>")
    try:
        assert ad.gradient(m.rot, 0.7) == (1.0,)
    finally:
        linecache.cache.pop("<complex_global>", None)


def adaptive_decay(k):
    y, h = 1.0, 0.5
    for i in range(100):
        y = y - h * k * y
        h = min(h * (1.0 + 0.01 * k), 0.05)
    return y


def test_min_of_real_numbers_keeps_the_kind_downstream():
    text = ad.show_adjoint(adaptive_decay, 0.7)
    assert "_rt.binop" not in text  # only min itself is dispatched, not what follows it
    assert ad.gradient(adaptive_decay, 0.7)[0] == pytest.approx(
        numerical_gradient(adaptive_decay, 0.7)[0], rel=1e-6)
    assert ad.hessian(adaptive_decay, 0.7) == pytest.approx(
        numerical_gradient(lambda k: ad.gradient(adaptive_decay, k)[0], 0.7)[0], rel=1e-5)
