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
