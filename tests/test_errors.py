"""Unsupported input gets a clear error: the construct, file:line, and the way out."""
import math
import os

import numpy as np
import pytest

import adjoint_s2s as ad
from tests.fixtures import unsupported as U

HERE = os.path.join("tests", "fixtures", "unsupported.py")


@pytest.mark.parametrize(
    "fn, construct, line",
    [
        (U.generator, "yield", 6),
        (U.coroutine, "async def", 9),
        (U.writes_global, "global statement", 14),
        (U.writes_nonlocal, "nonlocal statement", 23),
        (U.defines_class, "class definition", 31),
        (U.uses_try, "a try statement", 38),
    ],
    ids=["generator", "async", "global", "nonlocal", "class", "try"],
)
def test_unsupported_syntax_names_construct_file_and_line(fn, construct, line):
    with pytest.raises(ad.UnsupportedSyntaxError) as err:
        ad.gradient(fn, 1.0)
    msg = str(err.value)
    assert construct in msg
    assert HERE in msg and f"line {line}" in msg
    assert "; " in msg  # the way out follows the place
    assert isinstance(err.value, SyntaxError)


def test_differentiable_rejects_at_definition_with_the_line():
    with pytest.raises(ad.UnsupportedSyntaxError, match="yield"):
        ad.differentiable(U.generator)


def test_missing_rule_names_the_function_and_the_fix():
    vectorized = np.frompyfunc(math.sin, 1, 1)

    def f(x):
        return vectorized(x)

    with pytest.raises(ad.MissingAdjointError) as err:
        ad.gradient(f, 1.0)
    msg = str(err.value)
    assert "@adjoint_s2s.adjoint(" in msg and "non_differentiable(" in msg
    assert isinstance(err.value, NotImplementedError)


def test_missing_method_rule_says_which_method():
    def f(xs):
        ys = xs.copy()
        ys.sort()
        return ys[0]

    with pytest.raises(ad.AdjointError) as err:
        ad.gradient(f, [3.0, 1.0])
    assert "sort" in str(err.value)


def test_gradient_of_non_scalar_points_to_pullback_and_jacobian():
    with pytest.raises(TypeError) as err:
        ad.gradient(lambda x: x * 2.0, np.ones(3))
    msg = str(err.value)
    assert "scalar" in msg and "pullback" in msg and "jacobian" in msg


def test_function_without_source_is_a_clear_error():
    ns = {}
    exec("def made_by_exec(x):\n    return x * 2\n", ns)
    with pytest.raises(ad.NoSourceError) as err:
        ad.gradient(ns["made_by_exec"], 1.0)
    assert "made_by_exec" in str(err.value) and "exec" in str(err.value)


def test_user_exceptions_keep_their_type():
    with pytest.raises(KeyError, match="raised by the user"):
        ad.gradient(U.raises_its_own, 2.0)
    assert ad.gradient(U.raises_its_own, 0.5) == (1.0,)


def test_wrong_number_of_gradients_from_a_rule_names_the_rule():
    def g(a, b):
        return a * b

    @ad.adjoint(g)
    def _(a, b):
        return g(a, b), lambda d: (d * b,)  # one gradient for two arguments

    with pytest.raises(ad.RuleError) as err:
        ad.gradient(g, 2.0, 3.0)
    msg = str(err.value)
    assert "@adjoint rule for" in msg and "g" in msg and "expected 2" in msg and "returned 1" in msg


def test_rule_returning_a_bare_value_is_a_clear_error():
    def h(x):
        return x

    @ad.rrule(h)
    def _(x):
        return h(x)  # forgot the pullback

    with pytest.raises(ad.RuleError, match=r"must return \(value, pullback\)"):
        ad.gradient(h, 1.0)


def test_wrong_tangent_shape_from_a_rule_names_rule_argument_and_shapes():
    import numpy as np

    def total(x):
        return x.sum()

    ad.adjoint(total)(lambda x: (x.sum(), lambda g: (np.ones(2) * g,)))
    with pytest.raises(ad.RuleError) as err:
        ad.gradient(total, np.ones(3))
    msg = str(err.value)
    assert "@adjoint rule for" in msg and "argument 0" in msg
    assert "(2,)" in msg and "(3,)" in msg


VECTORIZED_SIN = np.frompyfunc(math.sin, 1, 1)


def test_rule_not_differentiable_again_says_where():
    def h(x):
        return x

    @ad.adjoint(h)
    def _(x):
        return h(x), lambda g: (g * float(VECTORIZED_SIN(x)) / math.sin(x) * math.cos(x),)

    assert ad.gradient(h, 0.3) == pytest.approx((math.cos(0.3),))
    with pytest.raises(ad.MissingAdjointError) as err:
        ad.gradient(lambda x: ad.gradient(h, x)[0], 0.3)
    msg = str(err.value)
    assert "test_errors.py" in msg and "nested gradient" in msg


# ----- an error met in code that is not the user's names the user's call -------------------

FAKE_LIB = "def scale(v):\n    try:\n        return v * 2.0\n    except TypeError:\n        return v\n"
USER = (
    "import adjoint_s2s_fake_lib as lib\n"
    "\n"
    "\n"
    "def uses_lib(x):\n"
    "    return lib.scale(x) * x\n"
)


def _import(path, name, text):
    import importlib.util
    import sys

    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_a_library_function_that_cannot_be_transformed_names_the_users_call(tmp_path, monkeypatch):
    import sys

    from adjoint_s2s import runtime

    lib = _import(tmp_path / "adjoint_s2s_fake_lib.py", "adjoint_s2s_fake_lib", FAKE_LIB)
    monkeypatch.setitem(runtime._LIBRARY_FILES, lib.__file__, True)  # as if installed
    try:
        user = _import(tmp_path / "fake_user.py", "adjoint_s2s_fake_user", USER)
        with pytest.raises(ad.UnsupportedSyntaxError) as err:
            ad.gradient(user.uses_lib, 0.5)
    finally:
        sys.modules.pop("adjoint_s2s_fake_lib", None)
        sys.modules.pop("adjoint_s2s_fake_user", None)
    e = err.value
    msg = str(e)
    # the line of the call (5), not the def (4)
    assert msg.startswith(f"while differentiating uses_lib ({user.__file__}, line 5)")
    assert "adjoint_s2s_fake_lib.scale" in msg and "a try statement" in msg
    assert "non_differentiable(adjoint_s2s_fake_lib.scale)" in msg
    assert (e.filename, e.lineno) == (user.__file__, 5)  # the traceback points at the user


def test_a_runtime_helper_reaching_numpy_at_second_order_names_the_users_function(monkeypatch):
    """The pullback of enumerate calls np.issubdtype. Were it transformed (as before: no
    rule, and NumPy's source has a try), the error must name the user's function, not
    numpy/_core/numerictypes.py."""
    from adjoint_s2s import rules, runtime

    monkeypatch.delitem(rules.NONDIFF, np.issubdtype)
    monkeypatch.setattr(runtime.sites, "is_library_code", lambda code: False)
    monkeypatch.setattr(runtime.dispatch, "is_library_code", lambda code: False)  # call_primal's
    ad.refresh()  # the run time's helpers are generated again, without the rule

    def weighted_cubes(v):
        pairs = enumerate(v)  # (a loop over enumerate(v) itself is a loop over v: targets.py)
        return sum(k * t ** 3 for k, t in pairs)

    with pytest.raises(ad.UnsupportedSyntaxError) as err:
        ad.hessian(weighted_cubes, np.array([0.7, 1.3]))
    e = err.value
    assert str(e).startswith(f"while differentiating weighted_cubes ({__file__}, line ")
    assert "reached numpy." in str(e)  # (np.issubdtype or the helper it calls)
    assert e.filename == __file__
    ad.refresh()  # the entries made while the rule was missing go
