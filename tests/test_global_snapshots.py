"""A module global holding data (a number, an array, a list of arrays) that the module
rebinds between the forward pass and the pullback's call: the pullback computes with the
value the forward pass saw, as the value did (Zygote's closures capture values; so does
the pullback adjoint_s2s generates, as default arguments). Before, the pullback read the
global when it ran: `back(1.0)` after `DT = 2.0` gave 3.25 for 1.3."""
import importlib.util
import sys

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient

SOURCE = '''
import math
import numpy as np

DT = 0.5
W = np.array([[0.5, -0.2], [0.1, 0.3]])
XS = [np.array([0.2, -0.1]), np.array([0.4, 0.3]), np.array([-0.3, 0.5])]


def scale(k):
    return DT * k * k


def loop(k):
    s = 0.0
    for _ in range(3):
        s = s + DT * math.sin(k * s + k)
    return s


def layer(x):
    return np.sum(np.tanh(W @ x) ** 2)


def over_list(w):
    h = 0.0
    for t in range(3):
        h = math.tanh(h * w + np.sum(XS[t]) * w)
    return h
'''


@pytest.fixture
def mod(tmp_path):
    path = tmp_path / "global_snapshots_mod.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("global_snapshots_mod", path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = m
    spec.loader.exec_module(m)
    yield m
    del sys.modules[spec.name]


CASES = [
    ("scale", 1.3, "DT", 2.0),
    ("loop", 0.7, "DT", 2.0),
    ("layer", np.array([0.3, -0.8]), "W", np.array([[2.0, 1.0], [-1.0, 0.5]])),
    ("over_list", 0.6, "XS", [np.array([1.0, 1.0])] * 3),
]


@pytest.mark.parametrize("name, x, glob, other", CASES, ids=[c[0] for c in CASES])
def test_rebound_between_forward_and_pullback(mod, name, x, glob, other):
    f = getattr(mod, name)
    want = numerical_gradient(f, x)[0]  # (with the module's own value)
    y, back = ad.pullback(f, x)
    assert y == pytest.approx(f(x))
    old = getattr(mod, glob)
    setattr(mod, glob, other)  # the module rebinds the name before the pullback runs
    try:
        got = back(1.0)[0]
    finally:
        setattr(mod, glob, old)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name, x, glob, other", CASES, ids=[c[0] for c in CASES])
def test_gradient_after_rebinding_uses_the_new_value(mod, name, x, glob, other):
    """The snapshot is per call: a later call computes with the global's new value."""
    f = getattr(mod, name)
    ad.gradient(f, x)
    setattr(mod, glob, other)
    got = ad.gradient(f, x)[0]
    np.testing.assert_allclose(got, numerical_gradient(f, x)[0], rtol=1e-6, atol=1e-9)


def test_second_order_through_a_global(mod):
    """The pullback's default argument is differentiated again like the other captured
    values: the second derivative of DT * k * k is 2 * DT, and of the loop by finite
    differences of its gradient."""
    d2 = ad.gradient(lambda k: ad.gradient(mod.scale, k)[0], 1.3)[0]
    assert d2 == pytest.approx(2 * mod.DT)
    d2 = ad.gradient(lambda k: ad.gradient(mod.loop, k)[0], 0.7)[0]
    assert d2 == pytest.approx(numerical_gradient(lambda k: ad.gradient(mod.loop, k)[0], 0.7)[0], rel=1e-5)


def test_shown_code_passes_the_global(mod):
    """The generated pullback receives the global it reads as a default argument, as it
    receives the locals it reads; the forward pass reads the global itself."""
    text = ad.show_adjoint(mod.scale, 1.3)
    assert "def scale_pullback(b_result, DT=DT, k=k, mul=mul):" in text
    assert "DT = None" not in text


@pytest.mark.parametrize("name, x", [("scale", 1.3), ("layer", np.array([0.3, -0.8]))])
def test_fused_form_reads_the_global_itself(mod, name, x):
    """gradient() runs the forward and pullback lines at once (fuse.py): no time passes
    between them, so the fused form reads the global and keeps its fused form."""
    text = ad.show_adjoint(getattr(mod, name), x, fused=True)
    assert not text.startswith("# no fused form"), text.splitlines()[0]
