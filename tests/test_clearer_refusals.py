"""Calls that were refused naming something the user never wrote, and now either work or
name what the user wrote: `x.__abs__()` (refused as `_operator.abs`), `np.logaddexp.reduce`
(named `ufunc.reduce`), a write into a view the normaliser named (`b.T[0] = v`, named `T`),
and `.update(...)` of a dict."""
import operator

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import MissingAdjointError, MutationError
from adjoint_s2s.testing import numerical_gradient

from .refusals import agrees, refused


def dunder_abs(x):
    return np.sum(x.__abs__() * x)


def operator_abs(x):
    return np.sum(operator.abs(x) ** 3)


@pytest.mark.parametrize("fn", [dunder_abs, operator_abs])
@pytest.mark.parametrize("x", [-1.5, 0.75, np.array([-1.0, 2.0, -0.25])])
def test_abs_through_operator_and_the_dunder(fn, x):
    agrees(fn, x)
    y, _ = ad.pullback(fn, x)
    assert np.array_equal(y, fn(x))


def test_abs_of_complex_through_operator():
    # |z| is not holomorphic: the gradient is conj-free z/|z| times real(g), as for abs
    got = ad.gradient(lambda z: operator.abs(z), 3.0 + 4.0j)[0]
    assert got == pytest.approx(0.6 + 0.8j)


def test_second_derivative_through_operator_abs():
    assert ad.hessian(lambda x: operator.abs(x) ** 3, -1.5) == pytest.approx(9.0)


def lse_all(a):
    return np.logaddexp.reduce(a)


def lse_rows(a):
    return np.sum(np.logaddexp.reduce(a, axis=1) ** 2)


def lse_none(a):
    return np.logaddexp.reduce(a, axis=None) * 2.0


def lse_keep(a):
    return np.sum(np.logaddexp.reduce(a, axis=(0, 1), keepdims=True) * 3.0)


def lse_two(a):
    return np.sum(np.logaddexp2.reduce(a, axis=-1) ** 2)


def lse_positional(a):
    return np.sum(np.logaddexp.reduce(a, 0) ** 2)


@pytest.mark.parametrize("fn", [lse_all, lse_rows, lse_none, lse_keep, lse_two, lse_positional])
def test_logaddexp_reduce_against_differences(fn):
    a = np.random.default_rng(3).normal(size=(3, 4))
    if fn is lse_all:
        a = a[0]
    got = ad.gradient(fn, a)[0]
    want = numerical_gradient(fn, a)[0]
    assert np.allclose(got, want, rtol=1e-6, atol=1e-8)
    y, _ = ad.pullback(fn, a)
    assert np.array_equal(y, fn(a))


def test_logaddexp_reduce_hessian_is_the_softmax_jacobian():
    a = np.array([0.1, 0.5, -0.3])
    s = np.exp(a) / np.sum(np.exp(a))
    got = ad.hessian(lse_all, a)
    assert np.allclose(got, np.diag(s) - np.outer(s, s), atol=1e-12)


def hypot_reduce(a):
    return np.hypot.reduce(a)


def test_a_ufunc_method_without_a_rule_is_named_by_its_ufunc():
    with pytest.raises(MissingAdjointError) as info:
        ad.gradient(hypot_reduce, np.array([3.0, 4.0]))
    msg = str(info.value)
    assert "numpy.hypot.reduce" in msg and "ufunc.reduce" not in msg, msg
    assert "docs/numpy.md" in msg and "hypot_reduce" in msg, msg


def write_into_transpose(a):
    b = a.copy()
    b.T[0] = a[0, 1]
    return np.sum(b ** 2)


def write_into_row_of_slice(a):
    b = a.copy()
    b[1:][0] = a[0, 1]
    return np.sum(b ** 2)


def test_a_write_into_a_view_names_the_users_expression():
    refused(write_into_transpose, np.ones((2, 2)), "b.T[0] =", "`b.T`", "a view of `b`", "b[:, 0] = v")


def test_a_write_into_a_slice_of_a_slice_is_followed():
    agrees(write_into_row_of_slice, np.arange(4.0).reshape(2, 2) + 1.0)


GLOBAL_D = {}


def update_a_global_dict(x):
    GLOBAL_D.update({"b": 2.0 * x})
    return GLOBAL_D["b"] * x


def test_dict_update_refusal_says_to_write_item_by_item():
    with pytest.raises(MutationError) as info:
        ad.gradient(update_a_global_dict, 1.5)
    msg = str(info.value)
    assert "`d[k] = v`" in msg and "item by item" in msg, msg


def calls_a_function_without_a_rule(x):
    y = x * 2.0
    # a comment between the def and the call
    z = np.unwrap(y)
    return np.sum(z)


def test_a_missing_rule_names_the_line_of_the_call():
    with pytest.raises(MissingAdjointError) as info:
        ad.gradient(calls_a_function_without_a_rule, np.ones(3))
    import inspect
    lines, start = inspect.getsourcelines(calls_a_function_without_a_rule)
    call_line = start + next(i for i, line in enumerate(lines) if "np.unwrap" in line)
    assert f"line {call_line})" in str(info.value), str(info.value)


def residual_and_penalty(x):
    return x ** 2 - 1.0, 0.1 * np.sum(x ** 2)


def residual_dict(x):
    return {"r": x ** 2 - 1.0, "p": 0.1 * np.sum(x ** 2)}


@pytest.mark.parametrize("fn", [residual_and_penalty, residual_dict])
def test_jacobian_of_parts_of_different_shapes_says_to_take_each(fn):
    # (a raw NumPy ValueError, or a message blaming a rule the user never wrote)
    from adjoint_s2s.errors import NotDifferentiableError
    with pytest.raises(NotDifferentiableError, match="Jacobian of each part"):
        ad.jacobian(fn, np.array([1.0, 2.0]))


def test_jacobian_of_parts_of_one_shape_stacks_them_and_nests():
    x = np.array([1.0, 2.0])
    assert ad.jacobian(lambda v: (v ** 2, 2.0 * v), x)[0].shape == (2, 2, 2)
    got = ad.gradient(lambda s: np.sum(ad.jacobian(lambda v: v ** 2 * s, x)[0]), 1.5)[0]
    assert got == pytest.approx(2.0 * (1.0 + 2.0))


def log_without_warnings(x):
    with np.errstate(divide="ignore"):
        y = np.log(x)
    return np.sum(y)


def test_a_with_of_settings_says_to_put_it_around_the_call():
    refused(log_without_warnings, np.array([1.0, 2.0]), "with np.errstate", "a with statement",
            "around the call of adjoint_s2s")
    with np.errstate(divide="ignore"):  # the way out it names
        assert np.allclose(ad.gradient(lambda v: np.sum(np.log(v)), np.array([1.0, 0.0]))[0], [1.0, np.inf])


def read_through_locals(x):
    y = x * 2.0
    return locals()["y"] * x


def read_through_vars(x):
    y = x * 2.0
    return vars()["y"] * x


@pytest.mark.parametrize("fn, name", [(read_through_locals, "locals"), (read_through_vars, "vars")])
def test_locals_and_vars_are_refused_where_values_are_differentiated(fn, name):
    # (the dict they give carries no gradient: 1.4 for 2.8, silently)
    refused(fn, 0.7, f"{name}()", f"`{name}()`", "read the variables by name")



# ----- the user's expressions, not the normaliser's temporaries, in messages --------------


def grid_dict(D, u0):
    grid = {"u": u0.copy()}
    for _ in range(2):
        u = grid["u"]
        lap = u[2:] + u[:-2] - 2 * u[1:-1]
        grid["u"][1:-1] += D * lap
    return np.sum(grid["u"] ** 2)


def nested_state(w, x):
    state = {"layers": [{"h": 0.0} for _ in range(2)]}
    inp = x
    for layer in state["layers"]:
        layer["h"] = np.tanh(w * inp)
        inp = layer["h"]
    return sum(layer["h"] for layer in state["layers"])


@pytest.mark.usefixtures("containers_kept")
def test_messages_name_the_users_expressions():
    with pytest.raises(ad.AdjointError) as info:
        ad.gradient(grid_dict, 0.1, np.array([0.0, 1.0, 0.5, 0.2, 0.0]))
    assert "`grid['u'][1:-1]`" in str(info.value) and "grid_i" not in str(info.value)
    with pytest.raises(ad.AdjointError) as info:
        ad.gradient(nested_state, 0.7, 0.4)
    assert "`state['layers']`" in str(info.value) and "state_i" not in str(info.value)
