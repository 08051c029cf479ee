"""Kinds that flow through ordinary code (issue 15): the results of calls to the user's
own functions, tuples unpacked from them, dict items, global lists of arrays and builtin
min/max of numbers keep their kinds, so loops get inline code instead of pairs taken from
the run time. Each static kind rests on something the cache checks: the tests change it
(a callee redefined, a global rebound, a rule registered, other argument kinds) and ask
for the right gradient again."""
import fractions
import math
import sys
import types

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import rules
from adjoint_s2s.testing import numerical_gradient

SOURCE = '''
import math
import numpy as np

SCALE = 2.0
XS = [np.linspace(-1.0, 1.0, 4) * (t + 1) for t in range(5)]


def step(theta, omega, k):
    omega = omega - 0.01 * k * math.sin(theta)
    theta = theta + 0.01 * omega
    return theta, omega


def step_other(theta, omega, k):
    return theta + 0.02 * omega, omega - 0.02 * k * theta


def pendulum(k):
    theta = 1.0
    omega = 0.0
    for _ in range(100):
        theta, omega = step(theta, omega, k)
    return theta


def scaled(x):
    return x * SCALE


def energy(x):
    y = scaled(x)
    return np.sum(y * y)


def relax(x, a):
    return x - 0.01 * a * math.sin(x)


def relaxed(a):
    x = 1.0
    for _ in range(50):
        x = relax(x, a)
    return x


def power(x, n):
    if n <= 1:
        return x
    return x * power(x, n - 1)


def uses_power(x):
    return power(x, 4) + 1.0


def capped(k):
    y = 1.0
    h = 0.1
    for _ in range(40):
        y = y - h * k * y
        h = min(1.3 * h, 0.5)
        y = max(y, -2.0)
    return y


def params(a, b):
    p = {"decay": a, "gain": b}
    x = 1.0
    for _ in range(50):
        x = p["decay"] * x + p["gain"] * math.sin(x)
    return x


def params_changed(a, b):
    p = {"decay": a, "gain": b}
    p["gain"] = 2.0 * b
    x = 1.0
    for _ in range(5):
        x = p["decay"] * x + p["gain"] * math.sin(x)
    return x


def params_changed_at_a_computed_key(a, b):
    p = {"decay": a, "gain": b}
    key = "gain"
    p[key] = 2.0 * b
    x = 1.0
    for _ in range(5):
        x = p["decay"] * x + p["gain"] * math.sin(x)
    return x


def over_list(w):
    s = 0.0
    for t in range(len(XS)):
        s = s + np.sum(np.tanh(XS[t] * w))
    return s


def sin_cos(x):
    y, z = np.sin(x), np.cos(x)
    return y, z


def outer_arrays(x):
    y, z = sin_cos(x)
    y[0] = 2.0  # written into: the item keeps its own object
    return np.sum(y * z)


def over_items(x, vs):
    s = 0.0
    for v in vs:
        s = s + v * x
    return s
'''


@pytest.fixture(params=["direct", "inlined"])
def mod(tmp_path, request):
    """The module, with the helpers called by their pairs (inlining off) or inlined."""
    from adjoint_s2s.passes import inline

    inline.ENABLED[0] = request.param == "inlined"
    ad.refresh()
    request.addfinalizer(lambda: (inline.ENABLED.__setitem__(0, True), ad.refresh()))
    path = tmp_path / "kinds_flow_mod.py"
    path.write_text(SOURCE)
    m = types.ModuleType("kinds_flow_mod")
    m.__file__ = str(path)
    exec(compile(SOURCE, str(path), "exec"), m.__dict__)
    sys.modules["kinds_flow_mod"] = m
    yield m
    sys.modules.pop("kinds_flow_mod", None)


def _direct():
    from adjoint_s2s.passes import inline

    return not inline.ENABLED[0]


def _close(f, *args, rel=1e-6):
    got = ad.gradient(f, *args)
    want = numerical_gradient(f, *args)
    for g, w in zip(got, want):
        assert np.allclose(g, w, rtol=rel, atol=1e-8), (g, w)
    return got


def test_a_helper_returning_a_tuple_keeps_real_kinds(mod):
    text = ad.show_adjoint(mod.pendulum, 9.81)
    # the callee's pair is called by name (or its body inlined); its tuple is unpacked
    # without run-time pairs
    if _direct():
        assert "step_pair(theta, omega, k)" in text
    else:
        assert "# (inlined step)" in text and "step_pair" not in text
    for dispatched in ("_rt.call(", "_rt.getitem_pair", "_rt.binop", "_rt.acc("):
        assert dispatched not in text
    _close(mod.pendulum, 9.81)


def test_a_helper_returning_a_number_is_called_by_its_pair(mod):
    text = ad.show_adjoint(mod.relaxed, 0.8)
    assert ("relax_pair(x, a)" in text if _direct() else "# (inlined relax)" in text)
    assert "_rt.call(" not in text
    _close(mod.relaxed, 0.8)


def test_a_redefined_callee_gets_code_made_again(mod):
    first = _close(mod.pendulum, 9.81)
    mod.step = mod.step_other  # the caller reads `step` by name: its code assumed the old one
    second = _close(mod.pendulum, 9.81)
    assert second != first


def test_a_global_the_callee_reads_is_guarded_for_the_caller(mod):
    _close(mod.energy, 0.7)
    assert "_rt.binop" not in ad.show_adjoint(mod.energy, 0.7)
    mod.SCALE = np.array([1.0, -2.0, 3.0])  # scaled now returns an array, not a number
    got = _close(mod.energy, 0.7)
    assert got[0] == pytest.approx(2.0 * 0.7 * 14.0)
    mod.SCALE = 3.0
    assert _close(mod.energy, 0.7)[0] == pytest.approx(2.0 * 0.7 * 9.0)


def test_other_argument_kinds_get_the_callee_specialised_again(mod):
    _close(mod.energy, 0.7)
    x = np.array([0.5, -1.5])
    got = ad.gradient(mod.energy, x)[0]
    assert np.allclose(got, 2.0 * x * 4.0)
    assert _close(mod.energy, 0.7)[0] == pytest.approx(2.0 * 0.7 * 4.0)


def test_a_rule_registered_for_the_callee_takes_effect(mod):
    _close(mod.relaxed, 0.8)
    ad.adjoint(mod.relax)(lambda x, a: (mod.relax(x, a), lambda d: (0.0 * d, 1.0 * d)))
    try:
        # with the rule, x's gradient is cut at every step and a's is 1 per step
        assert ad.gradient(mod.relaxed, 0.8)[0] == pytest.approx(1.0)
    finally:
        rules.USER_RULES.pop(mod.relax)
        rules.bump(mod.relax)
    _close(mod.relaxed, 0.8)


def test_refresh_and_a_recursive_callee(mod):
    assert _close(mod.uses_power, 1.3)[0] == pytest.approx(4 * 1.3 ** 3)
    ad.refresh()
    assert _close(mod.uses_power, 1.3)[0] == pytest.approx(4 * 1.3 ** 3)


def test_min_and_max_of_numbers_are_inline(mod):
    text = ad.show_adjoint(mod.capped, 0.5)
    assert "_rt.call(" not in text and "_rt.binop" not in text
    for k in (0.5, 3.0, 30.0):
        _close(mod.capped, k, rel=1e-5)


def test_min_and_max_split_a_tie_and_give_nan_to_the_first_like_python():
    def f(x, y):
        return min(x, y) + 2.0 * max(x, y)

    assert ad.gradient(f, 1.0, 1.0) == (1.5, 1.5)  # a tie: split, as np.minimum/np.maximum
    assert ad.gradient(f, 1.0, 2.0) == (1.0, 2.0)
    assert ad.gradient(f, 2.0, 1.0) == (2.0, 1.0)
    nan = ad.gradient(f, float("nan"), 1.0)  # min(nan, 1.0) is nan: the first, as Python picks
    assert nan == (3.0, 0.0)


def test_dict_items_keep_their_kinds(mod):
    text = ad.show_adjoint(mod.params, 0.97, 0.02)
    assert "_rt.getitem_pair" not in text and "_rt.binop" not in text and "_rt.call(" not in text
    _close(mod.params, 0.97, 0.02)


def test_a_dict_changed_in_the_function_is_read_at_run_time(mod):
    # (changed at a key the code computes: a dict; at constant keys only, its items are
    # variables, passes/item_vars.py)
    assert "_rt.getitem_pair" in ad.show_adjoint(mod.params_changed_at_a_computed_key, 0.9, 0.1)
    _close(mod.params_changed_at_a_computed_key, 0.9, 0.1)
    text = ad.show_adjoint(mod.params_changed, 0.9, 0.1)
    assert "_rt.getitem_pair" not in text and "_rt.binop" not in text
    _close(mod.params_changed, 0.9, 0.1)


def test_a_global_list_of_arrays_gives_arrays(mod):
    text = ad.show_adjoint(mod.over_list, 0.3)
    assert "_rt.binop" not in text and "_rt.call(" not in text
    _close(mod.over_list, 0.3)
    mod.XS.append(0.5)  # in place: no longer arrays only; every call checks the items
    assert "_rt.binop" in ad.show_adjoint(mod.over_list, 0.3)
    _close(mod.over_list, 0.3)
    mod.XS[:] = [np.ones(3)]
    assert _close(mod.over_list, 0.3)[0] == pytest.approx(3.0 * (1.0 - math.tanh(0.3) ** 2))


def test_a_loop_that_still_dispatches_says_why(mod):
    # (a list of numbers gives its items' kind: tests/test_item_kinds.py; one of numbers
    # of two types, a Fraction among floats, has no kind of item)
    vs = [1.0, fractions.Fraction(2)]
    text = ad.show_adjoint(mod.over_items, 1.0, vs)
    lines = [ln.strip() for ln in text.splitlines()]
    i = lines.index("# s = s + v * x")
    assert lines[i + 1] == "# dispatched at run time: kind of v, s unknown"
    assert sum(ln.startswith("# dispatched at run time") for ln in lines) == 1
    assert ad.gradient(mod.over_items, 1.0, vs)[0] == pytest.approx(3.0)


def test_a_dict_written_through_a_shared_name_node_is_read_at_run_time():
    def aug(x, v):
        d = {"a": x, "b": v}
        d["a"] += v  # the normalised code reads and writes d["a"] through one node
        return d["a"] * d["b"]

    assert "_rt.setitem" in ad.show_adjoint(aug, 0.7, 1.3)
    assert ad.gradient(aug, 0.7, 1.3) == pytest.approx((1.3, 0.7 + 2 * 1.3))


def test_a_tuple_of_arrays_from_a_callee_keeps_array_kinds(mod):
    x = np.array([0.3, -0.4, 1.1])
    text = ad.show_adjoint(mod.outer_arrays, x)
    assert ("sin_cos_pair(x)" in text if _direct() else "# (inlined sin_cos)" in text)
    assert "_rt.binop" not in text
    _close(mod.outer_arrays, x)


@pytest.mark.parametrize(
    "seed",
    [
        (1.0, -0.5),  # floats: the fast path
        (1, 0),  # ints, a NumPy float, a zero, None: the general way, the same gradients
        (np.float64(1.0), -0.5),
        (ad.ZeroTangent(), 2.0),
        (None, 2.0),
        [1.0, -0.5],  # a list seed and a short tuple take the general way too
        (1.0,),
        None,
    ],
)
def test_a_tuple_of_reals_result_takes_its_seed_apart(mod, seed):
    """A callee returning a tuple of real numbers reads a seed of floats without run-time
    helpers; every other seed (ints, NumPy scalars, zeros, lists) gives what the general
    code gives."""
    ad.gradient(mod.pendulum, 9.81)  # the step pair specialised for real numbers
    _, back = ad.pullback(mod.step, 1.0, 0.3, 9.81)
    got = back(seed)
    items = [0.0, 0.0] if seed is None else [
        0.0 if s is None or isinstance(s, ad.ZeroTangent) else float(s) for s in seed
    ]
    items += [0.0] * (2 - len(items))
    eps = 1e-6

    def proj(t, o, k):
        th, om = mod.step(t, o, k)
        return items[0] * th + items[1] * om

    want = numerical_gradient(proj, 1.0, 0.3, 9.81)
    for g, w in zip(got, want):
        assert g == pytest.approx(w, rel=1e-6, abs=eps)
    text = ad.show_adjoint(mod.step, 1.0, 0.3, 9.81)
    assert "type(b_result) is tuple and len(b_result) == 2" in text
