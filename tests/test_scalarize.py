"""Items of a dict of parameters read as the names they were made from (passes/scalarize.py).

Where every read of ``p[key]`` can only give the object the display's value names, the
generated code reads the name (no item read, no item adjoint, nothing saved per trip);
the gradients are those of the same function written with the names, and match central
differences. Where a value's name is bound again, the dict is written into or passed on,
a read comes before the display, keys collide or a name comes from elsewhere, the reads
stay, and the value and gradient are still the plain call's.
"""
import math

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import AdjointError

_rng = np.random.default_rng(3820001)

# (these shapes are turned into names before scalarize runs, passes/item_vars.py: the
# tests of this pass keep the dicts)
pytestmark = pytest.mark.usefixtures("containers_kept")


def by_names(a, b):
    x = 1.0
    for _ in range(50):
        x = a * x + b * math.sin(x)
    return x


def by_dict(a, b):
    p = {"decay": a, "gain": b}
    x = 1.0
    for _ in range(50):
        x = p["decay"] * x + p["gain"] * math.sin(x)
    return x


def by_dict_named_values(a, b):
    decay = a * 0.5 + 0.45
    p = {"decay": decay, "gain": b, "scale": 2.0}
    x = 1.0
    for _ in range(20):
        x = p["decay"] * x + p["gain"] * math.sin(x) * p["scale"]
    return x


def by_dict_expressions(a, b):
    # (a value computed in the display is the normaliser's temporary: the reads stay)
    p = {"decay": a * 0.5 + 0.45, "gain": b, "scale": 2.0}
    x = 1.0
    for _ in range(20):
        x = p["decay"] * x + p["gain"] * math.sin(x) * p["scale"]
    return x


def mlp_params(W1, b1, W2):
    X = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    params = {"W1": W1, "b1": b1, "W2": W2}
    h = np.tanh(X @ params["W1"] + params["b1"])
    return np.sum((h @ params["W2"]) ** 2)


def rebound_after(a, b):
    p = {"a": a, "b": b}
    a = a * 3.0
    return p["a"] * a + p["b"]


def written_into(a, b):
    p = {"a": a, "b": b}
    p["a"] = b * 2.0
    return p["a"] * a + p["b"]


def passed_on(a, b):
    p = {"a": a, "b": b}
    return _total(p) * p["a"]


def _total(d, *, scale=2.0):
    return d["a"] + scale * d["b"]  # (a keyword-only parameter: called, never inlined)


def passed_to_an_inlined_helper(a, b):
    p = {"a": a, "b": b}
    return _total_inlined(p) * p["a"]  # the helper's body reads p["a"], p["b"] in place


def _total_inlined(d):
    return d["a"] + 2.0 * d["b"]


def duplicate_keys(a, b):
    p = {"k": a, "k": b}  # noqa: F601 - the last one wins
    return p["k"] * a


def int_and_bool_keys(a, b):
    p = {1: a, True: b}  # one key: 1 == True, the value b
    return p[1] * a


G = 1.5


def global_value(a, b):
    p = {"g": G, "a": a}  # a global: something called could bind it again
    return p["g"] * p["a"] * b


def nested_display(a, b):
    if a > -100.0:
        p = {"a": a, "b": b}
    return p["a"] * p["b"]


def read_before_display(a, b):
    if a > 0.0:
        y = p["a"] * b  # noqa: F821 - p is a local bound below: UnboundLocalError
    p = {"a": a}
    return p["a"] * b


REWRITTEN = [by_dict, by_dict_named_values]
KEPT = [by_dict_expressions, rebound_after, written_into, passed_on, duplicate_keys, int_and_bool_keys,
        global_value, nested_display]


def _fd(f, args, eps=1e-6):
    out = []
    for i in range(len(args)):
        up = list(args)
        dn = list(args)
        up[i] = up[i] + eps
        dn[i] = dn[i] - eps
        out.append((f(*up) - f(*dn)) / (2 * eps))
    return out


@pytest.mark.parametrize("f", REWRITTEN, ids=lambda f: f.__name__)
def test_reads_by_key_become_the_names(f):
    for fused in (False, True):
        text = ad.show_adjoint(f, 0.9, 0.05, fused=fused)
        assert "p[" not in text.replace("p['", "§") or "getitem" not in text
        assert "getitem_pair" not in text and "_rt.part(" not in text, text
        body = text.split("for _ in range_1:")[1].split("\n\n")[0]
        assert "p['" not in body


def test_a_dict_passed_to_an_inlined_helper_is_read_by_its_names():
    text = ad.show_adjoint(passed_to_an_inlined_helper, 0.9, 0.05)
    assert "# (inlined _total_inlined)" in text
    code = "\n".join(ln for ln in text.splitlines() if not ln.strip().startswith("#"))
    assert "p[" not in code.split("p = {")[1] and "getitem" not in code, text


def test_the_dict_form_is_the_names_form():
    args = (0.97, 0.02)
    assert ad.gradient(by_dict, *args) == ad.gradient(by_names, *args)
    y, pb = ad.pullback(by_dict, *args)
    assert y == by_names(*args) and pb(1.0) == ad.gradient(by_names, *args)


@pytest.mark.parametrize("f", REWRITTEN + KEPT + [passed_to_an_inlined_helper], ids=lambda f: f.__name__)
def test_values_and_gradients_match_the_plain_call_and_differences(f):
    for args in ((0.9, 0.05), (0.6, -0.3), (0.8, 0.4)):
        y, pb = ad.pullback(f, *args)
        assert y == f(*args)
        g = pb(1.0)
        fd = []
        for i in range(2):
            def along(t, i=i):
                a = list(args)
                a[i] = t
                return f(*a)
            fd.append((along(args[i] + 1e-6) - along(args[i] - 1e-6)) / 2e-6)
        np.testing.assert_allclose([0.0 if v is None else v for v in g], fd, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("f", KEPT, ids=lambda f: f.__name__)
def test_kept_reads_still_read_the_dict(f):
    code = [ln for ln in ad.show_adjoint(f, 0.9, 0.05).splitlines() if not ln.strip().startswith("#")]
    assert any("getitem_pair(p, " in ln or "p['" in ln or "p[1]" in ln for ln in code), "\n".join(code)


def test_a_read_before_the_display_still_raises():
    with pytest.raises(UnboundLocalError):
        read_before_display(0.5, 1.0)
    with pytest.raises((UnboundLocalError, AdjointError)):
        ad.gradient(read_before_display, 0.5, 1.0)


def test_arrays_in_a_params_dict():
    W1 = _rng.standard_normal((3, 5))
    b1 = _rng.standard_normal(5)
    W2 = _rng.standard_normal((5, 2))
    text = ad.show_adjoint(mlp_params, W1, b1, W2)
    assert "params['" not in text.split("def mlp_params_pullback")[0].split("params = ")[1]
    g = ad.gradient(mlp_params, W1, b1, W2)
    for i, x in enumerate((W1, b1, W2)):
        v = _rng.standard_normal(x.shape)
        args = [W1, b1, W2]
        up = list(args)
        dn = list(args)
        up[i] = x + 1e-6 * v
        dn[i] = x - 1e-6 * v
        fd = (mlp_params(*up) - mlp_params(*dn)) / 2e-6
        np.testing.assert_allclose(np.sum(g[i] * v), fd, rtol=1e-6)


G = 2.0


def global_value_and_a_lambda_parameter_of_its_name(a, b):
    p = {"g": G, "a": a}
    f = lambda G: G * 2.0  # noqa: E731 - a parameter named as the global, in a nested scope
    return p["g"] * p["a"] * f(b)


def test_a_nested_parameter_does_not_make_a_global_a_parameter():
    code = [ln for ln in ad.show_adjoint(global_value_and_a_lambda_parameter_of_its_name, 0.9, 0.05).splitlines()
            if not ln.strip().startswith("#")]
    assert any("getitem_pair(p, 'g')" in ln or "p['g']" in ln for ln in code), "\n".join(code)
