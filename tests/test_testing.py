"""adjoint_s2s.testing: test_rrule (after ChainRulesTestUtils) and numerical_gradient.

Every function handed to the transformer is defined here, at module level, so its source
can be read. Rules are registered on functions private to this module.
"""
import math
import re
import warnings
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads, isapprox, numerical_gradient


@dataclass
class Foo:
    a: float
    b: float


Pair = namedtuple("Pair", "u v")


class Box:
    """A plain class: its tangent walks __dict__."""

    def __init__(self, w, label):
        self.w = w
        self.label = label


def fails(fn, *args, **kwargs):
    """The AssertionError message of test_rrule, or pytest.fail if it passed."""
    with pytest.raises(AssertionError) as info:
        ad.test_rrule(fn, *args, **kwargs)
    return str(info.value)


# ----- correct rules pass -------------------------------------------------------------------


def foo_f(x, y, z):
    return 2 * x + y.a


@ad.rrule(foo_f)
def _foo_f_rrule(x, y, z):
    def foo_f_pullback(dout):
        return ad.NoTangent(), 2 * dout, ad.Tangent(Foo, a=dout), ad.ZeroTangent()

    return foo_f(x, y, z), foo_f_pullback


def test_the_converting_adjoint_to_rrule_example_passes():
    ad.test_rrule(foo_f, 2.5, Foo(9.9, 7.2), 31.0)


def foo_natural(x, y, z):
    return 2 * x + y.a


@ad.rrule(foo_natural)
def _foo_natural_rrule(x, y, z):
    # a natural tangent (a Foo) and a dict are accepted as well as Tangent(Foo, ...)
    return foo_natural(x, y, z), lambda d: (ad.NoTangent(), 2 * d, Foo(d, 0.0), None)


def foo_dict(x, y, z):
    return 2 * x + y.a


@ad.rrule(foo_dict)
def _foo_dict_rrule(x, y, z):
    return foo_dict(x, y, z), lambda d: (ad.NoTangent(), 2 * d, {"a": d}, None)


def test_natural_and_dict_tangents_of_a_structured_argument_pass():
    ad.test_rrule(foo_natural, 2.5, Foo(9.9, 7.2), 31.0)
    ad.test_rrule(foo_dict, 2.5, Foo(9.9, 7.2), 31.0)


def foo_adj(x, y, z):
    return 2 * x + y.a


@ad.adjoint(foo_adj)
def _foo_adj_adjoint(x, y, z):
    # Zygote's form of the same rule: one gradient per argument, no function tangent
    return foo_adj(x, y, z), lambda d: (2 * d, {"a": d, "b": None}, None)


def test_adjoint_style_rule_passes():
    ad.test_rrule(foo_adj, 2.5, Foo(9.9, 7.2), 31.0)


def matvec(A, x):
    return np.tanh(A @ x)


@ad.rrule(matvec)
def _matvec_rrule(A, x):
    y = matvec(A, x)

    def matvec_pullback(dy):
        g = dy * (1 - y * y)
        return ad.NoTangent(), np.outer(g, x), A.T @ g

    return y, matvec_pullback


A23 = np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]])
X3 = np.array([0.7, -1.1, 0.4])


def test_array_rule_passes():
    ad.test_rrule(matvec, A23, X3)


def cmul(z, w):
    return z * w + z * z


@ad.rrule(cmul)
def _cmul_rrule(z, w):
    # holomorphic: the pullback multiplies by the conjugate derivative
    return cmul(z, w), lambda d: (
        ad.NoTangent(),
        d * (w + 2 * z).conjugate(),
        d * z.conjugate(),
    )


def test_complex_rule_passes():
    ad.test_rrule(cmul, 1.0 + 2.0j, 0.5 - 1.5j)


def scaled(xs, k):
    return [x * k for x in xs]


@ad.rrule(scaled, config=True)
def _scaled_rrule(config, xs, k):
    assert isinstance(config, ad.RuleConfig)
    pairs = [ad.rrule_via_ad(config, mul, x, k) for x in xs]

    def scaled_pullback(dys):
        grads = [pb(dy) for (_, pb), dy in zip(pairs, dys)]
        return ad.NoTangent(), [g[1] for g in grads], sum(g[2] for g in grads)

    return [y for y, _ in pairs], scaled_pullback


def mul(a, b):
    return a * b


def test_rule_with_config_calls_back_into_ad_and_passes():
    ad.test_rrule(scaled, [1.0, -2.0, 0.5], 3.0)


def test_test_rrule_is_not_collected_and_returns_none():
    assert ad.test_rrule.__test__ is False
    assert ad.test_rrule(foo_f, 2.5, Foo(9.9, 7.2), 31.0) is None


# ----- wrong rules fail with a readable message ----------------------------------------------


def square(x):
    return x ** 2


@ad.rrule(square)
def _square_wrong(x):
    return square(x), lambda d: (ad.NoTangent(), 3 * x * d)  # should be 2x


def test_wrong_value_fails_and_names_the_argument():
    msg = fails(square, 1.5)
    assert "argument 0 (x)" in msg
    assert "expected" in msg and "finite differences" in msg
    # the numbers shown are the finite difference (2x·dy) and the rule's value (3x·dy)
    dy = float(re.search(r"output tangent (\S+?);", msg).group(1))
    expected, got = map(float, re.search(r"expected (\S+) \(finite.*got (\S+)", msg).groups())
    assert expected == pytest.approx(3.0 * dy, rel=1e-9)
    assert got == pytest.approx(4.5 * dy, rel=1e-12)


def short_pb(x):
    return 2.0 * x


@ad.rrule(short_pb)
def _short_pb_rrule(x):
    return short_pb(x), lambda d: (2.0 * d,)  # forgot the function's own tangent


def test_wrong_count_of_tangents_fails():
    msg = fails(short_pb, 1.5)
    assert "returned 1 tangents, expected 2" in msg
    assert "function's own tangent first" in msg


def long_adj(x):
    return 2.0 * x


@ad.adjoint(long_adj)
def _long_adj_adjoint(x):
    return long_adj(x), lambda d: (None, 2.0 * d)  # an @adjoint rule has no df


def test_wrong_count_for_an_adjoint_rule_fails():
    msg = fails(long_adj, 1.5)
    assert "returned 2 tangents, expected 1 (one per argument)" in msg


def bare_pb(x):
    return 2.0 * x


@ad.rrule(bare_pb)
def _bare_pb_rrule(x):
    return bare_pb(x), lambda d: 2.0 * d  # not a tuple


def test_pullback_not_returning_a_tuple_fails():
    msg = fails(bare_pb, 1.5)
    assert "must return a tuple of 2 tangents, got float" in msg


def no_pair(x):
    return x


@ad.rrule(no_pair)
def _no_pair_rrule(x):
    return x  # not (value, pullback)


def test_rule_not_returning_a_pair_fails():
    assert "must return (value, pullback)" in fails(no_pair, 1.5)


def foo_wrong_field(x, y, z):
    return 2 * x + y.a


@ad.rrule(foo_wrong_field)
def _foo_wrong_field_rrule(x, y, z):
    return foo_wrong_field(x, y, z), lambda d: (
        ad.NoTangent(),
        2 * d,
        ad.Tangent(Foo, b=d),  # should be a=
        ad.ZeroTangent(),
    )


def test_wrong_field_of_a_structured_argument_fails_per_field():
    msg = fails(foo_wrong_field, 2.5, Foo(9.9, 7.2), 31.0)
    lines = msg.splitlines()
    assert any(ln.strip().startswith("argument 1 (y).a: expected") and "got 0.0" in ln
               for ln in lines)
    assert any(ln.strip().startswith("argument 1 (y).b: expected") for ln in lines)
    assert "argument 0" not in msg and "argument 2" not in msg  # those are right


def foo_bad_type(x, y):
    return x * y.a


@ad.rrule(foo_bad_type)
def _foo_bad_type_rrule(x, y):
    return foo_bad_type(x, y), lambda d: (ad.NoTangent(), d * y.a, ad.Tangent(Pair, a=d * x))


def foo_bad_key(x, y):
    return x * y.a


@ad.rrule(foo_bad_key)
def _foo_bad_key_rrule(x, y):
    return foo_bad_key(x, y), lambda d: (
        ad.NoTangent(), d * y.a, ad.Tangent(Foo, a=d * x, c=1.0))


def test_tangent_of_the_wrong_type_or_with_unknown_fields_fails():
    assert "a Tangent of Pair for a Foo" in fails(foo_bad_type, 2.0, Foo(1.0, 3.0))
    assert "c: not a field of Foo" in fails(foo_bad_key, 2.0, Foo(1.0, 3.0))


def matvec_wrong(A, x):
    return np.tanh(A @ x)


@ad.rrule(matvec_wrong)
def _matvec_wrong_rrule(A, x):
    y = matvec_wrong(A, x)

    def matvec_wrong_pullback(dy):
        g = dy * (1 - y * y)
        dA = np.outer(g, x)
        dA[1, 2] += 0.25  # one wrong entry
        return ad.NoTangent(), dA, A.T @ g

    return y, matvec_wrong_pullback


def test_wrong_tangent_for_an_array_input_fails_at_that_entry():
    msg = fails(matvec_wrong, A23, X3)
    assert "argument 0 (A): 1 of 6 entries differ" in msg
    assert "[1, 2]: expected" in msg
    assert "argument 1 (x)" not in msg


def vec_shape(x):
    return x * 2.0


@ad.rrule(vec_shape)
def _vec_shape_rrule(x):
    return vec_shape(x), lambda d: (ad.NoTangent(), float(np.sum(2.0 * d)))


def test_scalar_tangent_for_an_array_input_fails():
    msg = fails(vec_shape, np.array([1.0, 2.0]))
    assert "expected an array of shape (2,), got float" in msg


def off_primal(x):
    return math.sin(x)


@ad.rrule(off_primal)
def _off_primal_rrule(x):
    return math.sin(x) + 1e-6, lambda d: (ad.NoTangent(), d * math.cos(x))


def test_wrong_primal_fails():
    msg = fails(off_primal, 0.3)
    assert msg.count("\n") == 1 and "primal: off_primal(*args) = " in msg


def slightly_off(x):
    return math.exp(x)


@ad.rrule(slightly_off)
def _slightly_off_rrule(x):
    return math.exp(x), lambda d: (ad.NoTangent(), d * math.exp(x) * (1 + 1e-6))


def test_rtol_is_honoured_on_top_of_the_finite_difference_error():
    fails(slightly_off, 0.7)  # 1e-6 relative error: caught at the default rtol=1e-9
    ad.test_rrule(slightly_off, 0.7, rtol=1e-5)  # and tolerated when asked


# ----- arguments without a tangent space -------------------------------------------------------


def pick(xs, i, name, flag):
    return xs[i] * 2.0 if flag else xs[i]


@ad.rrule(pick)
def _pick_rrule(xs, i, name, flag):
    def pick_pullback(d):
        dxs = [0.0] * len(xs)
        dxs[i] = 2.0 * d if flag else d
        return ad.NoTangent(), dxs, ad.NoTangent(), None, ad.ZeroTangent()

    return pick(xs, i, name, flag), pick_pullback


def pick_bad(xs, i, name, flag):
    return xs[i] * 2.0 if flag else xs[i]


@ad.rrule(pick_bad)
def _pick_bad_rrule(xs, i, name, flag):
    def pick_bad_pullback(d):
        dxs = [0.0] * len(xs)
        dxs[i] = 2.0 * d
        return ad.NoTangent(), dxs, 1.0, 0.5, 0.0  # tangents for an index and a str

    return pick_bad(xs, i, name, flag), pick_bad_pullback


def test_index_string_and_bool_arguments_need_zero_tangents():
    ad.test_rrule(pick, [1.0, 2.0, 3.0], 1, "name", True)
    msg = fails(pick_bad, [1.0, 2.0, 3.0], 1, "name", True)
    assert "argument 1 (i): has no tangent space" in msg
    assert "argument 2 (name): has no tangent space" in msg
    assert "argument 3 (flag)" not in msg  # a numeric zero is a zero


def power(x, n):
    return x ** n


@ad.rrule(power)
def _power_rrule(x, n):
    return power(x, n), lambda d: (ad.NoTangent(), d * n * x ** (n - 1), d * x ** n * math.log(x))


def power_notangent(x, n):
    return x ** n


@ad.rrule(power_notangent)
def _power_notangent_rrule(x, n):
    return power_notangent(x, n), lambda d: (ad.NoTangent(), d * n * x ** (n - 1), ad.NoTangent())


def test_an_integer_the_function_takes_as_real_is_checked_as_real():
    ad.test_rrule(power, 1.7, 3)
    msg = fails(power_notangent, 1.7, 3)
    assert "argument 1 (n): expected" in msg and "got 0.0" in msg


# ----- thunks ------------------------------------------------------------------------------------


def lazy(x, c):
    return x * c


@ad.rrule(lazy)
def _lazy_rrule(x, c):
    return lazy(x, c), lambda d: (ad.NoTangent(), ad.Thunk(lambda: d * c), ad.Thunk(lambda: d * x))


def test_rule_returning_thunks_passes():
    ad.test_rrule(lazy, 1.5, -0.5)


def picky(x):
    return 2.0 * x


@ad.rrule(picky)
def _picky_rrule(x):
    # only right when the output tangent is a plain float
    return picky(x), lambda d: (ad.NoTangent(), 2.0 * d if isinstance(d, float) else 0.0)


def test_pullback_must_give_the_same_for_a_thunked_output_tangent():
    msg = fails(picky, 1.5)
    assert "pullback(Thunk(dy)) gave 0.0" in msg
    ad.test_rrule(picky, 1.5, check_thunked_output_tangent=False)


def thunk_hater(x):
    return 2.0 * x


@ad.rrule(thunk_hater)
def _thunk_hater_rrule(x):
    def back(d):
        if isinstance(d, ad.Thunk):
            raise TypeError("no thunks here")
        return ad.NoTangent(), 2.0 * d

    return thunk_hater(x), back


def test_pullback_failing_on_a_thunk_is_reported():
    assert "fails when the output tangent is a Thunk: TypeError: no thunks here" in fails(
        thunk_hater, 1.5
    )


# ----- the output tangent -------------------------------------------------------------------------


def ignores_dy(x):
    return 2.0 * x


@ad.rrule(ignores_dy)
def _ignores_dy_rrule(x):
    return ignores_dy(x), lambda d: (ad.NoTangent(), 2.0)  # forgot to multiply by d


def test_random_output_tangent_catches_a_pullback_ignoring_it():
    fails(ignores_dy, 1.5)
    ad.test_rrule(ignores_dy, 1.5, output_tangent=1.0)  # invisible with dy = 1


def test_same_seed_same_output_tangent():
    m1, m2 = fails(square, 1.5, rng=7), fails(square, 1.5, rng=7)
    assert m1 == m2
    assert fails(square, 1.5, rng=8) != m1


def test_output_tangent_that_does_not_fit_is_a_value_error():
    with pytest.raises(ValueError, match="does not fit the output"):
        ad.test_rrule(matvec, A23, X3, output_tangent=np.ones(5))


def test_no_global_state_is_touched():
    state = np.random.get_state()[1].copy()
    filters = list(warnings.filters)
    rules = dict(ad.rules.USER_RULES) if hasattr(ad, "rules") else None
    ad.test_rrule(matvec, A23, X3)
    fails(square, 1.5)
    assert (np.random.get_state()[1] == state).all()
    assert list(warnings.filters) == filters
    if rules is not None:
        assert dict(ad.rules.USER_RULES) == rules


# ----- functions without rules: the generated pullback is checked ----------------------------


def poly(x, y):
    return x * x * y + math.sin(y)


def struct_in(p, q, d, xs):
    return p.a * p.b + q.u * 3.0 + d["k"] ** 2 + xs[1] * xs[0]


def struct_out(x):
    return Foo(x, x * x)


def tuple_out(x, y):
    return (x * y, "label", [x, 2.0 * y])


def box_fn(b, x):
    return b.w * x


def loop_sum(x, n):
    s = 0.0
    for i in range(n):
        s = s + math.sin(x * i)
    return s


def make_closure(c):
    def closure(x):
        return x * c + math.cos(c)

    return closure


def array_fn(A, x):
    return np.sin(A @ x) * x[0]


def complex_fn(z):
    return z * z + 1j * z


def log_near_zero(x):
    return math.log(x)


def float32_fn(a):
    return np.sin(a) * a


@pytest.mark.parametrize(
    "fn, args",
    [
        (poly, (1.3, -0.4)),
        (struct_in, (Foo(1.0, 2.0), Pair(0.5, 4.0), {"k": 3.0, "z": "s"}, [1.5, -2.0])),
        (struct_out, (1.5,)),
        (tuple_out, (1.5, -0.5)),
        (box_fn, (Box(3.0, "w"), 2.0)),
        (loop_sum, (0.7, 4)),
        (make_closure(1.5), (2.0,)),
        (array_fn, (A23, X3)),
        (complex_fn, (1.0 + 2.0j,)),
        (log_near_zero, (1e-3,)),  # the step shrinks to stay in the domain
        (float32_fn, (np.array([0.5, 1.0, 2.0], dtype=np.float32),)),
        (math.sin, (0.5,)),
        (Foo, (1.0, 2.0)),
    ],
    ids=lambda v: getattr(v, "__name__", None) if callable(v) else None,
)
def test_generated_pullbacks_pass(fn, args):
    ad.test_rrule(fn, *args)


def test_closure_tangent_is_checked_against_its_captured_variables():
    closure = make_closure(1.5)
    _, back = ad._pullback(closure, 2.0)
    df = back(1.0)[0]
    assert df.c == pytest.approx(2.0 - math.sin(1.5))
    ad.test_rrule(closure, 2.0)  # includes df.c against finite differences


def closure_rule_target(c):
    def target(x):
        return x * c

    return target


CLOSED = closure_rule_target(4.0)


@ad.rrule(CLOSED)
def _closed_rrule(x):
    return CLOSED(x), lambda d: (ad.NoTangent(), 4.0 * d)


CLOSED_BAD = closure_rule_target(4.0)


@ad.rrule(CLOSED_BAD)
def _closed_bad_rrule(x):
    return CLOSED_BAD(x), lambda d: (ad.Tangent(type(CLOSED_BAD), c=3.0 * d), 4.0 * d)


def test_rule_may_declare_no_tangent_for_the_function_but_a_given_one_is_checked():
    ad.test_rrule(CLOSED, 2.0)
    msg = fails(CLOSED_BAD, 2.0)
    assert "the function's own tangent.c: expected" in msg


def nd(x):
    return x * 2.0


ad.non_differentiable(nd)


def test_non_differentiable_function_checks_primal_and_zero_tangents():
    ad.test_rrule(nd, 1.5)


class Scale:
    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return self.w * x

    def __call__(self, x):
        return self.w * x * x


@pytest.mark.parametrize("which", ["bound method", "callable object"])
def test_bound_methods_and_callable_objects(which):
    s = Scale(3.0)
    ad.test_rrule(s.apply if which == "bound method" else s, 2.0)


def test_bound_method_tangent_is_the_tangent_of_its_object(monkeypatch):
    # what test_rrule expects of a bound method: df is the tangent of the object bound
    s = Scale(3.0)

    def correct(f, x):
        return f(x), lambda d: (ad.Tangent(Scale, w=d * x), d * f.__self__.w)

    def object_lost(f, x):
        return f(x), lambda d: (None, d * f.__self__.w)

    monkeypatch.setattr(ad.api, "_pullback", correct)
    ad.test_rrule(s.apply, 2.0)
    monkeypatch.setattr(ad.api, "_pullback", object_lost)
    assert "the function's own tangent.w: expected" in fails(s.apply, 2.0)


# ----- numerical_gradient ----------------------------------------------------------------------


def test_numerical_gradient_of_complex_numbers_uses_the_re_plus_i_im_convention():
    (g,) = numerical_gradient(lambda z: abs(z) ** 2, 1.0 + 2.0j)
    assert isinstance(g, complex)
    assert g == pytest.approx(2.0 + 4.0j, rel=1e-9)
    (g,) = numerical_gradient(lambda z: (z * z).real, 1.0 + 2.0j)  # re(z²) = x² − y²
    assert g == pytest.approx(2.0 - 4.0j, rel=1e-9)


def test_numerical_gradient_of_arrays():
    a = np.array([[1.0, 2.0], [3.0, -1.0]])
    (g,) = numerical_gradient(lambda m: float(np.sum(m ** 3)), a)
    assert g.shape == a.shape and np.allclose(g, 3 * a ** 2, rtol=1e-9)
    (g,) = numerical_gradient(lambda v: float(np.sum(np.abs(v) ** 2)), np.array([1 + 1j, 2 - 1j]))
    assert np.allclose(g, 2 * np.array([1 + 1j, 2 - 1j]), rtol=1e-8)
    (g,) = numerical_gradient(lambda v: float(v[0]), np.array([1, 2]))
    assert g is None  # integer arrays have no tangent


def test_numerical_gradient_of_lists_tuples_and_dicts():
    g_list, g_tuple, g_dict = numerical_gradient(
        lambda xs, t, d: xs[0] * xs[1] + t[0] ** 2 + d["a"] * 3.0,
        [2.0, 5.0],
        (1.5, "s"),
        {"a": 1.0, "b": 7.0},
    )
    assert isinstance(g_list, list) and g_list == pytest.approx([5.0, 2.0])
    assert isinstance(g_tuple, tuple) and g_tuple[0] == pytest.approx(3.0) and g_tuple[1] is None
    assert g_dict["a"] == pytest.approx(3.0) and g_dict["b"] == pytest.approx(0.0, abs=1e-9)


def test_numerical_gradient_of_dataclasses_and_namedtuples():
    gp, gq = numerical_gradient(lambda p, q: p.a * p.b + q.v, Foo(2.0, 3.0), Pair(1.0, 4.0))
    assert gp == pytest.approx({"a": 3.0, "b": 2.0})
    assert gq["u"] == pytest.approx(0.0, abs=1e-9) and gq["v"] == pytest.approx(1.0)


def test_numerical_gradient_of_integers_indices_and_reals():
    g_xs, g_i, g_n = numerical_gradient(lambda xs, i, n: xs[i] ** n, [1.0, 2.0], 1, 3)
    assert g_xs == pytest.approx([0.0, 12.0], abs=1e-8)
    assert g_i is None  # used as an index: no tangent
    assert g_n == pytest.approx(8.0 * math.log(2.0), rel=1e-9)  # used as a real


def test_numerical_gradient_skips_strings_bools_and_none():
    assert numerical_gradient(lambda x, s, b, n: x * 2.0, 1.0, "s", True, None)[1:] == (
        None, None, None)


def test_isapprox_matches_tangent_dict_and_natural_forms():
    t = ad.Tangent(Foo, a=1.0)
    assert isapprox(t, {"a": 1.0 + 1e-12, "b": None})
    assert isapprox(t, Foo(1.0, 0.0))
    assert not isapprox(t, Foo(1.0, 0.5))
    assert not isapprox(t, {"a": 1.1})
    assert isapprox(("label", 1.0), ("label", 1.0 + 1e-12))
    assert not isapprox(("label", 1.0), ("other", 1.0))
    assert not isapprox(np.ones(2), 1.0)  # no broadcasting between gradients
    assert not isapprox(np.ones(2), np.ones(3))


def test_check_grads_agrees_and_disagrees():
    check_grads(poly, 1.3, -0.4)
    with pytest.raises(AssertionError, match="argument 1: adjoint_s2s gave Tangent"):
        check_grads(foo_wrong_field, 2.5, Foo(9.9, 7.2), 31.0)


def test_a_wrong_generated_pullback_would_be_caught(monkeypatch):
    # test_rrule on a function without a rule really checks adjoint_s2s's own pullback:
    # corrupt it and the check fails, per argument and per field
    real = ad.api._pullback

    def corrupted(f, *args):
        y, back = real(f, *args)

        def corrupted_back(dy):
            df, dp, dq, dd, dxs = back(dy)
            return df, dp, dq, {"k": dd["k"] * 1.5, "z": None}, dxs

        return y, corrupted_back

    monkeypatch.setattr(ad.api, "_pullback", corrupted)
    args = (Foo(1.0, 2.0), Pair(0.5, 4.0), {"k": 3.0, "z": "s"}, [1.5, -2.0])
    msg = fails(struct_in, *args)
    assert "the pullback adjoint_s2s generates for struct_in" in msg
    assert "argument 2 (d)['k']: expected" in msg
    assert "argument 0" not in msg and "argument 1" not in msg and "argument 3" not in msg


def dict_out(x, y):
    return {"sum": x + y, "prod": x * y, "name": "n"}


def test_dict_outputs_get_a_random_dict_tangent():
    ad.test_rrule(dict_out, 1.5, -2.0)


def root(x):
    return math.sqrt(x)


@ad.rrule(root)
def _root_rrule(x):
    return root(x), lambda d: (ad.NoTangent(), 0.0)  # one-sided at 0: cannot be checked


def test_a_point_where_finite_differences_cannot_evaluate_warns_instead_of_failing():
    with pytest.warns(UserWarning, match=r"argument 0 \(x\): finite differences could not "
                                         r"evaluate the function near 0.0 \(ValueError"):
        ad.test_rrule(root, 0.0)
    ad.test_rrule(root, 4.0, output_tangent=0.0)  # the zero output tangent: all zeros
    assert "argument 0 (x)" in fails(root, 4.0)  # away from 0 it is checked (and wrong)


def test_check_grads_order_two_compares_hessian_vector_products():
    def f(x, w):
        return np.sum(np.tanh(x * w) ** 2) + np.sin(w[0]) * x[1]

    x, w = np.array([0.3, 0.5, 0.7]), np.array([1.1, 0.4, -0.2])
    got = check_grads(f, x, w, order=2)
    assert isapprox(got, numerical_gradient(f, x, w), rtol=1e-6, atol=1e-8)
    check_grads(f, x, w, order=3, rtol=1e-4, atol=1e-6)
    check_grads(lambda p: p["a"] ** 3 * p["b"], {"a": 1.2, "b": 0.5}, order=2)
    check_grads(lambda z: abs(z * z) + z.real, 1.0 + 2.0j, order=2, rtol=1e-5)


def test_check_grads_order_two_catches_a_pullback_whose_own_derivative_is_wrong():
    def cube(x):
        return x * x * x

    @ad.adjoint(cube)
    def cube_adjoint(x):
        # 3 x^2, right at first order; one factor hidden from AD: its derivative is 3 x, not 6 x
        return cube(x), lambda d: (d * 3.0 * ad.dropgrad(x) * x,)

    try:
        check_grads(lambda x: cube(x), 0.7)  # right at first order
        with pytest.raises(AssertionError, match=r"order 2 of <lambda>: gradient of <v, gradient"):
            check_grads(lambda x: cube(x), 0.7, order=2)
    finally:
        from adjoint_s2s import rules

        rules.USER_RULES.pop(cube, None)
        rules.bump(cube)
