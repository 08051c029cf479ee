"""The construct corpus: every function of ``corpus_funcs`` against finite differences.

One row per function call. ``grad`` rows run ``check_grads`` (scalar output);
``pullback`` rows seed a non-scalar output and compare with the numerical gradient of
``re(conj(seed) · output)``; ``closure`` rows build a closure and compare the tangent
of its captured variables (from ``_pullback``) with the numerical gradient with respect
to the values captured. Every row also checks the primal value and the type of each
gradient: real (int or float) arguments get float gradients, complex arguments complex
ones, and str / bool / None arguments get None.
"""
import math
import numbers

import pytest

import adjoint_s2s as ad
from adjoint_s2s import runtime
from adjoint_s2s.testing import check_grads, isapprox, numerical_gradient

from . import corpus_funcs as C


def xfail(reason):
    return pytest.mark.xfail(strict=True, reason=reason)


def grad(fn, *args, marks=(), id=None):
    return pytest.param("grad", fn, args, None, marks=marks, id=id or fn.__name__)


def pullback(fn, args, seed, marks=(), id=None):
    return pytest.param("pullback", fn, args, seed, marks=marks, id=id or fn.__name__)


def closure(factory, captured, args, marks=(), id=None):
    return pytest.param("closure", factory, args, captured, marks=marks,
                        id=id or factory.__name__)


ROWS = [
    # ----- expressions: arithmetic --------------------------------------------------------
    grad(C.arith_mix, 1.3, 0.7),
    grad(C.floordiv_mod, 7.3, 2.1),
    grad(C.mod_negative_operand, 1.2),
    grad(C.cancelling_terms, 1.2),
    grad(C.pow_int_and_float, 1.7),
    grad(C.pow_negative_base, -1.7),
    grad(C.pow_variable_exponent, 1.3, 2.2),
    grad(C.unary_ops, 0.9, -1.4),
    grad(C.operator_precedence, 0.6, 1.9),
    # ----- expressions: comparisons, and / or / not ---------------------------------------
    grad(C.chained_compare, 0.5, 2.0, id="chained_compare-true"),
    grad(C.chained_compare, 2.5, 2.0, id="chained_compare-false"),
    grad(C.or_passes_first, 1.5, 0.25),
    grad(C.or_passes_first, None, 0.25, id="or_passes_first-none"),
    grad(C.or_falls_through, 1.1, 0.8),
    grad(C.and_passes_last, 1.5, -0.4),
    grad(C.and_or_chain, 6.0, 0.3, 2.0, id="and_or_chain-and"),
    grad(C.and_or_chain, 1.0, 0.3, 2.0, id="and_or_chain-or"),
    grad(C.not_branch, 1.5, id="not_branch-not"),
    grad(C.not_branch, 2.5, id="not_branch-else"),
    grad(C.compare_values_used, 1.5, 0.5),
    # ----- expressions: ternaries ---------------------------------------------------------
    grad(C.ternary, 1.2, id="ternary-pos"),
    grad(C.ternary, -1.2, id="ternary-neg"),
    grad(C.nested_ternary, 0.5, 2.0),
    # ----- expressions: displays ----------------------------------------------------------
    grad(C.tuple_display, 1.1, 0.4),
    grad(C.list_display, 0.8),
    grad(C.dict_display, 0.9, 1.3),
    grad(C.nested_display, 0.9, 1.3),
    pullback(C.tuple_output, (0.7, 1.6), (1.0, -2.0, 0.5)),
    pullback(C.list_output, (0.7,), [0.3, 1.0, -1.5]),
    pullback(C.dict_output, (0.7, 1.6), {"prod": 1.0, "ratio": 2.0}),
    # ----- expressions: unpacking ---------------------------------------------------------
    grad(C.tuple_unpack_arg, (1.2, 0.3)),
    grad(C.starred_head, [1.5, 2.0, -0.5, 0.25]),
    grad(C.starred_middle, (1.5, 2.0, -0.5, 0.25)),
    grad(C.swap_update, 1.2, 0.7),
    grad(C.nested_unpack, 1.2, 0.7, -0.3),
    # ----- expressions: subscripts and slices ---------------------------------------------
    grad(C.list_slices, [1.0, 2.0, 3.0, 4.0]),
    grad(C.tuple_step_slice, (1.0, 2.0, 3.0, 4.0)),
    grad(C.negative_index, [0.5, 1.5, 2.5]),
    grad(C.dict_subscript, {"w": 0.5, "x": 1.5, "b": -1.0}),
    grad(C.nested_subscript, {"p": [0.5, 1.5], "q": {"r": 2.0}}),
    grad(C.computed_index, [0.5, 1.5, 2.5, -1.0]),
    # ----- expressions: attributes --------------------------------------------------------
    grad(C.complex_real_imag, 1.2 - 0.7j),
    grad(C.conj_times_z, 1.2 - 0.7j),
    grad(C.float_attributes, 1.7),
    # ----- expressions: comprehensions ----------------------------------------------------
    grad(C.listcomp_reduced_by_loop, 0.7),
    grad(C.listcomp_with_filter, [1.5, -2.0, 0.5]),
    grad(C.nested_listcomp, 0.7),
    grad(C.dictcomp, 0.7, 1.3),
    grad(C.listcomp_sum, 0.7),
    grad(C.genexp_sum, [0.5, 1.5, -2.0]),
    grad(C.genexp_sum_zip, [0.5, 1.5], [2.0, -1.0]),
    # ----- expressions: strings -----------------------------------------------------------
    grad(C.fstring_label, 1.25),
    grad(C.string_argument, 1.25, "abc"),
    grad(C.string_format_split, 1.25),
    # ----- statements: assignment ---------------------------------------------------------
    grad(C.multiple_targets, 0.9),
    grad(C.tuple_target, 0.9, 0.3),
    grad(C.augmented_assign, 0.9, 1.7),
    grad(C.augmented_subscript, [0.9, 1.7]),
    grad(C.reassignment_chain, 0.9),
    # ----- statements: if / elif / else ---------------------------------------------------
    grad(C.piecewise, -1.5, id="piecewise-if"),
    grad(C.piecewise, 0.5, id="piecewise-elif"),
    grad(C.piecewise, 1.5, id="piecewise-else"),
    grad(C.nested_if, 0.5, 2.0, id="nested_if-pp"),
    grad(C.nested_if, 0.5, -2.0, id="nested_if-pn"),
    grad(C.nested_if, -0.5, 2.0, id="nested_if-n"),
    grad(C.if_without_else, 1.5, id="if_without_else-taken"),
    grad(C.if_without_else, 0.5, id="if_without_else-skipped"),
    # ----- statements: for loops ----------------------------------------------------------
    grad(C.for_range, 0.8),
    grad(C.for_list, [0.8, 1.5, -2.0]),
    grad(C.horner_tuple, 0.8),
    grad(C.for_tuple_arg, (1.0, -2.0, 0.5), 0.8),
    grad(C.for_enumerate, [0.8, 1.5, -2.0]),
    grad(C.for_zip, [0.8, 1.5, -2.0], [1.0, 0.5, 0.25]),
    grad(C.for_dict_items, {"a": 0.5, "skip": 3.0, "b": -1.5}),
    grad(C.for_dict_keys, {"a": 0.5, "b": -1.5}, 1.2),
    grad(C.nested_loops, 0.8, 1.3),
    grad(C.loop_carried_pair, 0.8),
    # ----- statements: while loops --------------------------------------------------------
    grad(C.newton_sqrt, 2.0),
    grad(C.while_halving, 5.0),
    grad(C.while_accumulate, 1.3),
    # ----- statements: break / continue / return ------------------------------------------
    grad(C.for_break, [0.5, 1.5, 2.0, 3.0], 5.0),
    grad(C.for_continue, [0.5, 1.5, -1.0, 2.0]),
    grad(C.return_in_loop, [0.5, 0.8, 1.5], 0.9, id="return_in_loop-returns"),
    grad(C.return_in_loop, [0.5, 0.6], 0.9, id="return_in_loop-falls-off"),
    grad(C.return_in_nested_loop, 0.8),
    grad(C.break_inner_loop, 0.8),
    grad(C.while_true_return, 1.0),
    grad(C.while_break_continue, 0.7),
    grad(C.early_returns, -0.5, id="early_returns-first"),
    grad(C.early_returns, 2.5, id="early_returns-second"),
    grad(C.early_returns, 1.5, id="early_returns-end"),
    # ----- statements: nested defs, lambdas, pass, assert, print, side lists --------------
    grad(C.nested_def, 0.8, 1.3),
    grad(C.nested_def_in_loop, 0.8),
    grad(C.closure_rebound_after_call, 0.8),
    grad(C.lambda_local, 0.8),
    grad(C.pass_and_assert, 1.5),
    grad(C.print_and_log_list, 0.8),
    grad(C.side_list_of_strings, 0.8, 1.3),
    # ----- calls: user functions ----------------------------------------------------------
    grad(C.calls_helpers, 0.8),
    grad(C.calls_chain, 0.8),
    grad(C.power_five, 1.1),
    grad(C.poly_eval, 0.5, -1.5, 0.8),
    grad(C.default_args, 0.8),
    grad(C.keyword_call, 0.8, 1.3),
    grad(C.keyword_only_call, 0.8, 1.3),
    grad(C.varargs_call, 0.8, 1.3),
    grad(C.star_args_call, 0.8, 1.3),
    grad(C.kwargs_call, 0.8, 1.3),
    grad(C.double_star_call, 0.8, 1.3),
    grad(C.function_argument, 0.8),
    grad(C.lambda_argument, 0.8, 1.3),
    grad(C.map_user_function_loop, [0.8, -1.3]),
    grad(C.map_sum, [0.8, -1.3]),
    # ----- calls: closures ----------------------------------------------------------------
    closure(C.make_scaler, (1.7,), (0.9,)),
    closure(C.make_poly, (1.7, -0.6), (0.9,)),
    closure(C.make_lambda, (0.4,), (0.9,)),
    # ----- calls: builtins ----------------------------------------------------------------
    grad(C.abs_min_max, 0.8, 1.3),
    grad(C.abs_only, 0.8, -1.3),
    grad(C.min_max_list, [0.8, -1.3, 2.5]),
    grad(C.sum_list, [0.8, -1.3, 2.5]),
    grad(C.pow_builtin, 1.3, 0.7),
    grad(C.float_builtin, 1.3),
    grad(C.complex_builtin, 1.3, -0.4),
    grad(C.divmod_builtin, 2.3),
    grad(C.nondiff_builtins, 1.33, [0.5, 1.5]),
    # ----- math ---------------------------------------------------------------------------
    grad(C.math_trig, 0.7),
    grad(C.math_inverse_trig, 0.3),
    grad(C.math_hyperbolic, 0.7),
    grad(C.math_inverse_hyperbolic, 0.4),
    grad(C.math_exp_log, 0.7),
    grad(C.math_log_bases, 1.7),
    grad(C.math_log_active_base, 5.0, 2.5),
    grad(C.math_roots, 1.7),
    grad(C.math_special, 1.7),
    grad(C.math_two_args, 0.6, 1.3),
    grad(C.math_piecewise, 2.7, 1.2),
    grad(C.math_scaling, 0.7),
    grad(C.math_nondiff, 1.7),
    grad(C.math_fsum, [0.5, 1.5, -2.0]),
    grad(C.math_prod, [0.5, 1.5, -2.0]),
    grad(C.math_dist, (0.5, 1.5), (2.0, -1.0)),
    grad(C.math_modf, 2.3),
    grad(C.math_frexp, 2.3),
    # ----- cmath --------------------------------------------------------------------------
    grad(C.cmath_exp_log, 0.8 + 0.6j),
    grad(C.cmath_log_base, 0.8 + 0.6j),
    grad(C.cmath_trig, 0.8 + 0.6j),
    grad(C.cmath_inverse_trig, 0.3 + 0.2j),
    grad(C.cmath_hyperbolic, 0.8 + 0.6j),
    grad(C.cmath_inverse_hyperbolic, 0.3 + 0.2j),
    grad(C.cmath_sqrt_phase, 0.8 + 0.6j),
    grad(C.cmath_polar, 0.8 + 0.6j),
    grad(C.cmath_rect, 1.5, 0.4),
    # ----- complex numbers ----------------------------------------------------------------
    grad(C.abs_squared, 1.2 - 0.7j),
    grad(C.abs_of_exp, 1.2 - 0.7j),
    grad(C.complex_poly_real_part, 1.2 - 0.7j),
    grad(C.complex_quotient, 1.2 - 0.7j, 0.4 + 0.9j),
    grad(C.complex_from_reals, 1.2, -0.7),
    grad(C.complex_intermediate, 1.2, -0.7),
    grad(C.real_times_complex_literal, 0.7),
    grad(C.complex_loop, 0.6 + 0.3j),
    pullback(C.complex_output, (0.6 + 0.3j,), 1.0, id="complex_output-seed-re"),
    pullback(C.complex_output, (0.6 + 0.3j,), 1j, id="complex_output-seed-im"),
    # ----- argument types -----------------------------------------------------------------
    grad(C.int_and_float, 3, 0.5),
    grad(C.all_ints, 3, 2),
    grad(C.int_division, 3, 0.5),
    grad(C.str_bool_none_args, 1.5, "name", True, None),
    grad(C.bool_flag, 0.4, True, id="bool_flag-true"),
    grad(C.bool_flag, 0.4, False, id="bool_flag-false"),
    grad(C.constant_output, 1.5),
    # ----- combinations -------------------------------------------------------------------
    grad(C.append_active_then_read, 0.8),
    grad(C.setitem_in_loop, [0.8, -1.3, 2.5]),
    grad(C.slice_assignment, 0.8, 1.3),
    grad(C.list_concat_and_repeat, 0.8, 1.3),
    grad(C.floordiv_mod_augmented, 7.3, 2.1),
    grad(C.fib_poly_five, 0.8),
    grad(C.while_tuple_state, 1.3),
    grad(C.return_inside_while_inside_for, [0.5, 1.2, 2.0]),
    grad(C.break_while_in_for, [1.3, 1.6]),
    grad(C.genexp_with_condition_sum, [0.8, -1.3, 2.5], 0.7),
    grad(C.max_with_key, [0.8, -1.3, 2.5]),
    grad(C.min_max_several_args, 0.8, -1.3, 2.5),
    grad(C.dictcomp_over_items, {"a": 0.8, "b": -1.3, "c": 2.5}, 0.7),
    grad(C.sum_dict_values, {"a": 0.8, "b": -1.3}),
    grad(C.zip_three_enumerate_start, [0.8, -1.3], [2.5, 0.5], [1.0, 2.0]),
    grad(C.lambda_default_captures, 0.8),
    grad(C.forwarding_calls, 0.8, 1.3),
    grad(C.map_two_iterables, [0.8, -1.3], [2.5, 0.5]),
    grad(C.ternary_in_comprehension, [0.8, -1.3, 2.5]),
    grad(C.fstring_conversions, 1.25),
    grad(C.int_conversions, 2.3, 3),
    grad(C.complex_power, 1.2 - 0.7j, 0.5 + 0.3j),
    grad(C.unit_phase, 0.7),
    grad(C.complex_arith_from_reals, 1.2, -0.7),
    grad(C.isinstance_dispatch, 1.2 - 0.7j, 0.9, id="isinstance_dispatch-complex"),
    grad(C.isinstance_dispatch, 1.2, 0.9, id="isinstance_dispatch-real"),
    grad(C.math_on_ints, 3, 0.9),
    grad(C.while_return_and_test, 0.3, False),
    grad(C.for_else, [0.8, -1.3], 0.7, id="for_else-no-break"),
    grad(C.for_else, [0.8, 11.0, -1.3], 0.7, id="for_else-break"),
    grad(C.while_else, 0.7),
    grad(C.walrus, [0.8, -1.3, 2.5]),
    grad(C.chained_tuple_assign, 0.8, 1.3),
    grad(C.subscript_multiple_targets, 0.8),
    grad(C.starred_displays, [0.8, -1.3], 2.5),
    grad(C.starred_call_args, 0.8, -1.3, 2.5),
    grad(C.nested_for_comprehension, [0.8, 2.5], [0.5, 1.3]),
    grad(C.variable_slice_bounds, [0.8, -1.3, 2.5, 0.4]),
    grad(C.membership_tests, 1.3, "cat"),
    grad(C.while_or_condition, 0.7),
    grad(C.assert_active_message, 0.7),
    grad(C.lambda_returning_lambda, 0.8, 1.3),
    grad(C.mean_of_list, [0.8, -1.3, 2.5]),
    grad(C.recursive_nested_def, 0.8),
    grad(C.closure_appends_to_outer, 0.8),
    grad(C.real_through_csqrt, 0.7),
    grad(C.complex_methods, 1.2 - 0.7j),
    grad(C.abs_round_int, -3, 0.7),
    grad(C.builtin_keywords, 1.33, 0.7, [0.8, -1.3]),
    grad(C.field_written_twice_inline, 0.7),
    grad(C.method_mutates_self_twice, 0.7),
    grad(C.object_returned_by_helper, 0.7),
    grad(C.helper_mutates_object_argument, 0.7),
    grad(C.helper_appends_to_list_argument, 0.7),
    grad(C.field_updated_in_loop, 0.7),
    grad(C.dict_through_starred_call, 0.7, 1.3),
    closure(C.make_applier, (0.6,), (0.9,)),
    closure(C.make_counter_poly, (0.6, -1.1), (0.9,)),
]


# ----- helpers ----------------------------------------------------------------------------


def contract(seed, y):
    """re(conj(seed) · y), summed over matching structure."""
    if isinstance(seed, (list, tuple)):
        return sum(contract(s, v) for s, v in zip(seed, y))
    if isinstance(seed, dict):
        return sum(contract(seed[k], y[k]) for k in seed)
    return (complex(seed).conjugate() * y).real


def same_value(a, b):
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same_value, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            same_value(a[k], b[k]) for k in a)
    return a == b or abs(a - b) <= 1e-12 * max(1.0, abs(a))


def check_types(got, arg, want):
    """Gradient types: floats for real numbers, complex for complex, None for inactive."""
    if isinstance(arg, bool) or arg is None or isinstance(arg, str):
        assert got is None, f"{arg!r} must get None, got {got!r}"
    elif isinstance(arg, (int, float)):
        if got is None:
            assert abs(want) < 1e-8, f"{arg!r} got None but its gradient is {want!r}"
        else:
            assert type(got) is float, f"{arg!r} must get a float gradient, got {got!r}"
    elif isinstance(arg, complex):
        if got is None:
            assert abs(want) < 1e-8, f"{arg!r} got None but its gradient is {want!r}"
        else:
            assert isinstance(got, complex), f"{arg!r} must get a complex gradient, got {got!r}"
    elif isinstance(arg, (list, tuple)):
        assert got is None or isinstance(got, (list, tuple)), got
        if got is not None:
            assert len(got) == len(arg)
            for g, a, w in zip(got, arg, want):
                check_types(g, a, w)
    elif isinstance(arg, dict):
        assert got is None or isinstance(got, dict), got
        for k, g in (got or {}).items():
            check_types(g, arg[k], want[k])
    else:
        assert isinstance(got, numbers.Number) or got is None


# ----- the test ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode, fn, args, extra", ROWS)
def test_corpus(mode, fn, args, extra):
    if mode == "grad":
        y, _ = ad.pullback(fn, *args)
        assert same_value(y, fn(*args))
        got = check_grads(fn, *args)
        want = numerical_gradient(fn, *args)
        assert len(got) == len(args)
        for g, a, w in zip(got, args, want):
            check_types(g, a, w)

    elif mode == "pullback":
        seed = extra
        y, back = ad.pullback(fn, *args)
        assert same_value(y, fn(*args))
        got = back(seed)
        want = numerical_gradient(lambda *a: contract(seed, fn(*a)), *args)
        assert len(got) == len(args)
        for g, a, w in zip(got, args, want):
            assert isapprox(g, w, rtol=1e-6, atol=1e-8), f"got {g!r}, want {w!r}"
            check_types(g, a, w)

    elif mode == "closure":
        factory, captured = fn, extra
        f = factory(*captured)
        y, back = ad._pullback(f, *args)
        assert same_value(y, f(*args))
        df, *dargs = back(1.0)
        want_args = numerical_gradient(f, *args)
        for g, w in zip(dargs, want_args):
            assert isapprox(g, w, rtol=1e-6, atol=1e-8), f"got {g!r}, want {w!r}"
        want_captured = numerical_gradient(lambda *c: factory(*c)(*args), *captured)
        names = factory.__code__.co_varnames[: factory.__code__.co_argcount]
        for name, w in zip(names, want_captured):
            g = runtime.field(df, name)
            assert g is not None, f"no gradient for captured {name!r} (df={df!r})"
            assert math.isclose(g, w, rel_tol=1e-6, abs_tol=1e-8), (
                f"captured {name!r}: got {g!r}, want {w!r}")

    else:  # pragma: no cover
        raise AssertionError(mode)


def test_corpus_size():
    assert len(ROWS) >= 90
    names = {p.values[1].__name__ for p in ROWS}
    assert len(names) >= 90
