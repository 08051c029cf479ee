"""The API people coming from JAX expect (grad, value_and_grad with argnums and has_aux),
gradients that keep the structure of their arguments, and misuse named at the user's call."""
import math

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient


def loss(w, b):
    return math.sin(w) * b + b * b


def loss_and_aux(w, b):
    y = math.sin(w) * b
    return y * y, {"y": y, "label": "fit"}


def mlp_loss(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return np.sum((h @ params["W2"]) ** 2)


def _params():
    rng = np.random.default_rng(0)
    # the insertion order is deliberate: not alphabetical, one entry unused (b2)
    return {"W1": rng.normal(size=(3, 4)), "b2": np.zeros(2), "b1": rng.normal(size=4),
            "W2": rng.normal(size=(4, 2)), "name": "mlp"}


# ----- grad and value_and_grad ---------------------------------------------------------

def test_grad_of_the_first_argument_by_default():
    g = ad.grad(loss)(0.3, 2.0)
    assert g == pytest.approx(math.cos(0.3) * 2.0)


def test_grad_with_a_tuple_of_argnums_gives_a_tuple():
    gw, gb = ad.grad(loss, argnums=(0, 1))(0.3, 2.0)
    num = numerical_gradient(loss, 0.3, 2.0)
    assert (gw, gb) == pytest.approx(num)
    assert ad.grad(loss, argnums=1)(0.3, 2.0) == pytest.approx(num[1])
    assert ad.grad(loss, argnums=[1])(0.3, 2.0) == pytest.approx((num[1],))


def test_value_and_grad_returns_the_value_and_the_gradient():
    value, g = ad.value_and_grad(loss, argnums=(0, 1))(0.3, 2.0)
    assert value == loss(0.3, 2.0)
    assert g == pytest.approx(numerical_gradient(loss, 0.3, 2.0))


def test_has_aux_passes_the_auxiliary_output_through():
    g, aux = ad.grad(loss_and_aux, has_aux=True)(0.3, 2.0)
    assert aux == {"y": math.sin(0.3) * 2.0, "label": "fit"}
    assert g == pytest.approx(numerical_gradient(lambda w: loss_and_aux(w, 2.0)[0], 0.3)[0])
    (value, aux2), g2 = ad.value_and_grad(loss_and_aux, has_aux=True)(0.3, 2.0)
    assert value == loss_and_aux(0.3, 2.0)[0] and aux2 == aux and g2 == g


def test_has_aux_needs_a_pair():
    with pytest.raises(TypeError, match=r"has_aux=True needs loss to return a pair"):
        ad.grad(loss, has_aux=True)(0.3, 2.0)


def test_an_unused_argument_gets_zeros_of_its_shape_from_grad():
    def uses_a(a, b):
        return a * 2.0

    ga, gb = ad.grad(uses_a, argnums=(0, 1))(1.5, np.ones((2, 3)))
    assert ga == 2.0
    assert isinstance(gb, np.ndarray) and gb.shape == (2, 3) and not gb.any()
    # gradient keeps Zygote's convention: nothing flowed, None
    assert ad.gradient(uses_a, 1.5, np.ones((2, 3)))[1] is None


def test_grad_composes_for_higher_derivatives():
    d3 = ad.grad(ad.grad(ad.grad(lambda x: x ** 4)))
    assert d3(1.5) == pytest.approx(24 * 1.5)


def test_argnums_is_checked():
    with pytest.raises(TypeError, match=r"argnums must be a non-negative int"):
        ad.grad(loss, argnums=-1)
    with pytest.raises(TypeError, match=r"argument 2 of loss\(w, b\)"):
        ad.grad(loss, argnums=2)(0.3, 2.0)


# ----- gradients keep the structure of their arguments ---------------------------------

def test_a_dict_of_parameters_gets_a_dict_with_its_keys_in_its_order():
    p = _params()
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    (g, _) = ad.gradient(mlp_loss, p, x)
    assert list(g) == list(p)
    assert g["b2"].shape == (2,) and not g["b2"].any()  # unused: zeros
    assert g["name"] is None  # no tangent space
    for k in ("W1", "b1", "W2"):
        def f(v, k=k):
            q = dict(p)
            q[k] = v
            return mlp_loss(q, x)
        assert np.allclose(g[k], numerical_gradient(f, p[k])[0], atol=1e-6)
    # the update users write works
    new = {k: p[k] - 0.1 * g[k] for k in p if k != "name"}
    assert set(new) == set(p) - {"name"}


def test_grad_of_a_dict_argument_keeps_the_dict():
    p = _params()
    x = np.ones((2, 3))
    g = ad.grad(mlp_loss)(p, x)
    assert list(g) == list(p)


def test_a_list_of_arrays_gets_zeros_for_unused_entries():
    g = ad.gradient(lambda ws: np.sum(ws[0] * 3.0), [np.ones(2), np.ones(3), 2.0])[0]
    assert np.allclose(g[0], 3.0) and np.array_equal(g[1], np.zeros(3)) and g[2] == 0.0


def test_zero_like_follows_the_structure():
    z = ad.zero_like({"a": 1.0, "b": [np.ones(2), 3], "c": "s", "d": (1j,)})
    assert z["a"] == 0.0 and np.array_equal(z["b"][0], np.zeros(2)) and z["b"][1] == 0.0
    assert z["c"] is None and z["d"] == (0j,)


# ----- misuse named at the user's call -------------------------------------------------

def test_gradient_without_arguments_names_the_users_function():
    with pytest.raises(TypeError) as info:
        ad.gradient(loss)
    text = str(info.value)
    assert "loss(w, b)" in text and "gradient(loss, w, b)" in text and "_pair" not in text


def test_gradient_with_too_few_arguments_names_the_users_function():
    with pytest.raises(TypeError, match=r"loss\(w, b\) was given 1 positional argument"):
        ad.gradient(loss, 1.0)
    with pytest.raises(TypeError, match=r"loss\(w, b\)"):
        ad.pullback(loss, 1.0, 2.0, 3.0)


def test_a_function_that_is_not_callable_is_named():
    with pytest.raises(TypeError, match=r"must be callable, not float"):
        ad.gradient(1.0, loss)


def test_a_loss_with_aux_given_to_gradient_points_to_withgradient():
    with pytest.raises(TypeError, match=r"withgradient\(loss_and_aux, x\) or grad\(loss_and_aux, has_aux=True\)"):
        ad.gradient(loss_and_aux, 0.3, 2.0)


def target(x, y):
    return x * y


def test_a_bare_adjoint_decorator_is_named_when_its_rule_is_called():
    @ad.adjoint
    def target_rule(x, y):
        return target(x, y), lambda d: (d * y, d * x)

    with pytest.raises(TypeError, match=r"without the function it gives a rule for: target_rule"):
        target_rule(1.0, 2.0)


@pytest.mark.parametrize("style", ["adjoint", "rrule"])
def test_a_rule_whose_signature_does_not_match_is_refused_when_registered(style):
    register = getattr(ad, style)(target)
    with pytest.raises(TypeError) as info:
        @register
        def one_arg_rule(x):
            return target(x, 1.0), lambda d: (d,)
    text = str(info.value)
    assert "one_arg_rule(x)" in text and "target(x, y)" in text
    with pytest.raises(TypeError, match=r"needs 3 positional arguments"):
        @register
        def three_arg_rule(x, y, z):
            return target(x, y), lambda d: (d, d, d)
    assert ad.gradient(target, 2.0, 3.0) == (3.0, 2.0)  # nothing was registered


def test_a_rule_with_config_takes_the_config_first():
    def scaled(x):
        return 3.0 * x

    with pytest.raises(TypeError, match=r"scaled\(x\)"):
        @ad.rrule(scaled, config=True)
        def no_config(x):  # config=True, but the rule takes only the function's argument
            return scaled(x), lambda d: (ad.NoTangent(), 3.0 * d)

    try:
        @ad.rrule(scaled, config=True)
        def with_config(cfg, x):
            return scaled(x), lambda d: (ad.NoTangent(), 30.0 * d)

        assert ad.gradient(scaled, 1.0) == (30.0,)
    finally:
        from adjoint_s2s import rules

        rules.USER_RULES.pop(scaled, None)
        rules.bump(scaled)


def test_rules_of_functions_without_a_signature_are_not_checked():
    # ufuncs and builtins have no introspectable signature: registration goes through
    @ad.adjoint(math.erfc)
    def erfc_rule(x):
        y = math.erfc(x)
        return y, lambda d: (-2.0 / math.sqrt(math.pi) * math.exp(-x * x) * d,)

    try:
        assert ad.gradient(lambda x: math.erfc(x), 0.5)[0] == pytest.approx(
            -2.0 / math.sqrt(math.pi) * math.exp(-0.25))
    finally:
        from adjoint_s2s import rules

        rules.USER_RULES.pop(math.erfc, None)
        rules.bump(math.erfc)


LOG = []


def logs_a_detached_value(x):
    y = x * x
    LOG.append(ad.dropgrad(y))
    return y


def logs_the_value_itself(x):
    y = x * x
    LOG.append(y)
    return y


def test_a_global_list_for_logging_takes_a_dropgrad_value():
    LOG.clear()
    assert ad.gradient(logs_a_detached_value, 2.0) == (4.0,)
    assert LOG == [4.0]


def test_a_global_list_given_a_differentiated_value_is_not_sent_to_a_rule_for_append():
    with pytest.raises(ad.MutationError) as info:
        ad.gradient(logs_the_value_itself, 2.0)
    text = str(info.value)
    assert "dropgrad(value)" in text and "test_api_functional.py, line" in text
    assert "@adjoint_s2s.adjoint(list.append)" not in text
