"""Gaps found by a probe in checkpoint and in user rules: each a gradient checked against
central differences, or a refusal checked for its error type, place and words."""
import inspect
import math

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import MutationError, NotDifferentiableError
from adjoint_s2s.testing import numerical_gradient

from .refusals import agrees, line_of


def refused_at(error, fn, x, statement, *words):
    """gradient(fn, x) raises error, naming fn's file and the line of statement."""
    with pytest.raises(error) as info:
        ad.gradient(fn, x)
    msg = str(info.value)
    assert f"{inspect.getsourcefile(fn)}, line {line_of(fn, statement)}" in msg, msg
    for w in words:
        assert w in msg, (w, msg)


# -- checkpoint: the replay runs with the state the forward pass saw ---------------------

def ckpt_loop_rebound(x):
    h = x
    for k in range(3):
        scale = 0.5 * (k + 1)  # rebound each step: the replay reads the one it had
        h = ad.checkpoint(lambda t: math.tanh(scale * t), h)
    return h


def ckpt_loop_rebound_array(v):
    h = v
    for k in range(3):
        w = np.array([0.5, 1.5]) * (k + 1)
        h = ad.checkpoint(lambda t: np.tanh(w * t), h)
    return float(np.sum(h))


def ckpt_default_bound(x):
    h = x
    for k in range(3):
        h = ad.checkpoint(lambda t, s=0.5 * (k + 1): math.tanh(s * t), h)
    return h


def ckpt_captured_active(x):
    w = x * 2.0
    return ad.checkpoint(lambda t: math.sin(w * t), x) * x


@pytest.mark.parametrize("fn, x", [
    (ckpt_loop_rebound, 0.8),
    (ckpt_loop_rebound_array, np.array([0.3, -0.6])),
    (ckpt_default_bound, 0.8),
    (ckpt_captured_active, 0.8),
])
def test_checkpoint_replays_the_closure_as_it_was(fn, x):
    agrees(fn, x)


def test_checkpoint_rebound_closure_second_order():
    def f(x):
        h = x
        for k in range(2):
            scale = 0.5 * (k + 1)
            h = ad.checkpoint(lambda t: math.tanh(scale * t) * x, h)
        return h

    with pytest.raises(NotDifferentiableError) as info:
        ad.hessian(f, 0.8)
    assert "differentiated twice" in str(info.value)
    assert "arguments of checkpoint" in str(info.value)

    def passed(x):  # the way out
        h = x
        for k in range(2):
            h = ad.checkpoint(lambda t, s: math.tanh(s * t) * x, h, 0.5 * (k + 1))
        return h

    want = numerical_gradient(lambda x: ad.gradient(passed, x)[0], 0.8)[0]
    assert np.isclose(ad.hessian(passed, 0.8), want, rtol=1e-5)


class Layer:
    def __init__(self, w):
        self.w = w

    def __call__(self, t):
        return math.tanh(self.w * t)


def ckpt_object_field_set(x):
    lay = Layer(1.0)
    h = x
    for k in range(3):
        lay.w = 0.5 * (k + 1)
        h = ad.checkpoint(lay, h)
    return h


def ckpt_buffer_written(x):
    buf = np.array([1.0])
    h = x
    for k in range(3):
        buf[0] = 0.5 * (k + 1)
        h = ad.checkpoint(lambda t: math.tanh(buf[0] * t), h)
    return h


G = [1.0]


def _body_reading_global(t):
    return G[0] * t * t


def ckpt_global_set_after(x):
    y = ad.checkpoint(_body_reading_global, x)
    G[0] = 5.0
    return y * 1.0


def ckpt_nested_closure_rebound(x):
    scale = 0.5
    g = lambda t: scale * t  # noqa: E731
    h = x
    for k in range(2):
        scale = 0.5 * (k + 1)
        h = ad.checkpoint(lambda t: math.tanh(g(t)), h)
    return h


@pytest.mark.parametrize("fn, words", [
    (ckpt_object_field_set, ("field `w`", "Layer", "arguments of checkpoint")),
    (ckpt_buffer_written, ("replay returned another value", "arguments of checkpoint")),
    (ckpt_global_set_after, ("replay returned another value", "global")),
    (ckpt_nested_closure_rebound, ("rebound", "arguments of checkpoint")),
])
def test_checkpoint_state_changed_in_place_is_refused(fn, words):
    G[0] = 1.0
    try:
        refused_at(MutationError, fn, 0.8, "ad.checkpoint(", "checkpoint of", *words)
    finally:
        G[0] = 1.0


def _doubles_in_place(a):
    a *= 2.0
    return np.sum(a ** 2)


def ckpt_argument_written(v):
    a = v.copy()
    s = ad.checkpoint(_doubles_in_place, a)
    return float(s + a[0])


def _appends(xs):
    xs.append(1.0)
    return xs[0] * xs[0]


def ckpt_list_argument_grown(x):
    xs = [x]
    return ad.checkpoint(_appends, xs) * len(xs)


def _item_written(a):
    a[0] = 3.0
    return float(np.sum(a))


def ckpt_argument_item_written(v):
    return ad.checkpoint(_item_written, v * 1.0)


@pytest.mark.parametrize("fn, x, word", [
    (ckpt_argument_written, np.array([0.7, 1.0]), "`a`"),
    (ckpt_list_argument_grown, 0.7, "`xs`"),
    (ckpt_argument_item_written, np.array([0.7, 1.0]), "`a`"),
])
def test_checkpoint_of_a_function_changing_its_argument_is_refused(fn, x, word):
    refused_at(MutationError, fn, x, "ad.checkpoint(", "changes its argument", word,
               "a.copy()")


def test_checkpoint_leaves_its_arguments_writeable():
    a = np.array([1.0, 2.0])
    ad.gradient(lambda v: ad.checkpoint(lambda t: float(np.sum(t * t)), v), a)
    a[0] = 3.0  # (was made read-only only while the checkpointed function ran)
    assert a.flags.writeable


def test_checkpoint_of_an_unchanged_closure_second_order():
    def f(x):
        return ad.checkpoint(lambda t: math.sin(t) * x, x)

    assert np.isclose(ad.hessian(f, 0.5), 2 * math.cos(0.5) - 0.5 * math.sin(0.5), rtol=1e-9)


# -- thunks made in a rule's pullback, differentiated again -------------------------------

def mul_thunk_b(a, b):
    return a * b


@ad.rrule(mul_thunk_b)
def _(a, b):
    def back(dy):
        return ad.NoTangent(), dy * b, ad.Thunk(lambda: dy * a)
    return a * b, back


def mul_unthunked(a, b):
    return a * b


@ad.rrule(mul_unthunked)
def _(a, b):
    def back(dy):
        t = ad.Thunk(lambda: dy * a)
        return ad.NoTangent(), dy * b, ad.unthunk(t)
    return a * b, back


def mul_two_thunks(a, b):
    return a * b


@ad.rrule(mul_two_thunks)
def _(a, b):  # two thunks in one lambda, on one line
    return a * b, lambda dy: (ad.NoTangent(), ad.Thunk(lambda: b * dy), ad.Thunk(lambda: dy * a))


def square_inplaceable(v):
    return v * v


@ad.rrule(square_inplaceable)
def _(v):
    def back(dy):
        return ad.NoTangent(), ad.InplaceableThunk(lambda acc: acc + 2.0 * v * dy,
                                                   lambda: 2.0 * v * dy)
    return v * v, back


def second_derivative_agrees(f, x):
    got = ad.gradient(lambda t: ad.gradient(f, t)[0], x)[0]
    want = numerical_gradient(lambda t: ad.gradient(f, t)[0], x)[0]
    assert np.allclose(got, want, rtol=1e-6, atol=1e-6), (got, want)


@pytest.mark.parametrize("f", [
    lambda x: mul_thunk_b(math.sin(x), x * x),
    lambda x: mul_thunk_b(3.0, x * x),
    lambda x: mul_thunk_b(x * x, 3.0),
    lambda x: mul_unthunked(math.sin(x), x * x),
    lambda x: mul_two_thunks(x, math.sin(x)),
    lambda x: float(np.sum(square_inplaceable(np.array([x, 2 * x])))),
    lambda x: float(np.sum(square_inplaceable(np.array([x, 2 * x])) + np.array([x, x]) ** 3)),
])
def test_thunk_in_a_rule_differentiated_twice(f):
    second_derivative_agrees(f, 0.7)


def test_thunk_rule_check_grads_second_order():
    ad.check_grads(lambda x: mul_thunk_b(x, x * x), 0.7, order=2)
    # first order stays lazy: the thunk of an argument nobody asks for never runs
    ran = []

    def lazy(a, b):
        return a * b

    @ad.rrule(lazy)
    def _(a, b):
        return a * b, lambda dy: (ad.NoTangent(), dy * b, ad.Thunk(lambda: ran.append(1) or dy * a))

    assert ad.gradient(lambda x: lazy(x, 2.0), 0.7) == (2.0,)
    assert ran == []


# -- lambdas nested in lambdas -------------------------------------------------------------

def nested_thunk_maker(x):
    mk = lambda p: lambda: p * p  # noqa: E731
    return mk(x)()


def nested_iife(x):
    return (lambda: x * 2.0)()


def nested_curry(x):
    curry = lambda p: lambda q: p * q + x  # noqa: E731
    return curry(x)(2.0)


def nested_reads_outer_param(x):
    h = lambda d: (lambda: d)()  # noqa: E731
    return h(x) * x


def nested_in_list(x):
    h = lambda d: [lambda: d * x][0]()  # noqa: E731
    return h(2.0)


@pytest.mark.parametrize("fn", [nested_thunk_maker, nested_iife, nested_curry,
                                nested_reads_outer_param, nested_in_list,
                                lambda x: (lambda: x * 2.0)(),
                                lambda x: (lambda d: (lambda: d * x)())(2.0)])
def test_lambda_nested_in_a_lambda(fn):
    agrees(fn, 0.7)


# -- an @rrule's pullback gets ZeroTangent() for an output item nobody uses ----------------

def polar_to_xy(r, t):
    return r * math.cos(t), r * math.sin(t)


@ad.rrule(polar_to_xy)
def _(r, t):
    c, s = math.cos(t), math.sin(t)

    def back(dout):
        dx, dy = dout
        assert dx is not None and dy is not None
        return ad.NoTangent(), dx * c + dy * s, -dx * r * s + dy * r * c
    return (r * c, r * s), back


def polar_y_unpacked(r, t):
    x, y = polar_to_xy(r, t)
    return y


@pytest.mark.parametrize("fn", [polar_y_unpacked, lambda r, t: polar_to_xy(r, t)[1],
                                lambda r, t: polar_to_xy(r, t)[0]])
def test_rrule_unused_output_item_is_zero_tangent(fn):
    got = ad.gradient(fn, 2.0, 0.4)
    want = numerical_gradient(fn, 2.0, 0.4)
    assert np.allclose(got, want), (got, want)


def test_rrule_unused_output_item_second_order():
    f = lambda t: polar_y_unpacked(2.0, t)  # noqa: E731
    second_derivative_agrees(f, 0.4)


def test_adjoint_rule_still_gets_none():
    def pair(a):
        return a, 2.0 * a

    seen = []

    @ad.adjoint(pair)
    def _(a):
        def back(d):
            seen.append(d)
            return (sum(0.0 if v is None else v for v in d),)
        return pair(a), back

    ad.gradient(lambda a: pair(a)[1], 1.0)
    assert seen[0][0] is None


# -- a rule's gradient of the wrong shape ------------------------------------------------

def square_bad(x):
    return x * x


@ad.rrule(square_bad)
def _(x):
    return square_bad(x), lambda d: (ad.NoTangent(), np.array([2 * x * d, 1.0]))


def square_scalar_array(x):
    return x * x


@ad.rrule(square_scalar_array)
def _(x):
    return square_scalar_array(x), lambda d: (ad.NoTangent(), np.array(2 * x * d))


def test_rule_array_gradient_for_a_number_is_refused():
    for f in (square_bad, lambda x: square_bad(x) + x):
        with pytest.raises(ad.RuleError) as info:
            ad.gradient(f, 1.5)
        assert "argument 0 is an array of shape (2,)" in str(info.value)
        assert "return a number" in str(info.value)
    assert np.isclose(ad.gradient(square_scalar_array, 1.5)[0], 3.0)  # shape (): accepted


def mul_same_names(a, b):
    return a * b


@ad.rrule(mul_same_names)
def _(a, b):  # two lambdas on one line that read the same names: not told apart
    return a * b, lambda dy: (ad.NoTangent(), ad.Thunk(lambda: dy * b), ad.Thunk(lambda: b * dy))


def test_lambdas_on_one_line_not_told_apart_are_refused():
    assert ad.gradient(lambda x: mul_same_names(x, 3.0), 0.7) == (3.0,)  # (first order: fine)
    with pytest.raises(ad.NoSourceError) as info:
        ad.gradient(lambda x: ad.gradient(lambda t: mul_same_names(t, t * t), x)[0], 0.7)
    msg = str(info.value)
    assert f"{__file__}, line {line_of(_same_names_rule, 'lambda dy')}" in msg, msg
    assert "lines of their own" in msg


_same_names_rule = _


# -- a rule in the documented style (`return f(A, x), back`) differentiated twice ----------

def quad_form(A, x):
    return float(x @ A @ x)


@ad.rrule(quad_form)
def _(A, x):
    def back(d):
        return ad.NoTangent(), d * np.outer(x, x), d * (A + A.T) @ x
    return quad_form(A, x), back


_A = np.array([[1.0, 0.3], [0.2, 2.0]])


def test_rule_reading_its_array_argument_second_order():
    f = lambda v: quad_form(_A * v[0], np.sin(v))  # noqa: E731
    v = np.array([0.5, 1.2])
    ad.check_grads(f, v, order=2)
    e = 1e-6
    want = np.array([(ad.gradient(f, v + e * d)[0] - ad.gradient(f, v - e * d)[0]) / (2 * e)
                     for d in np.eye(2)])
    assert np.allclose(ad.hessian(f, v), want, rtol=1e-6, atol=1e-6)


def _quad_writes(A, x):
    A[0, 0] = 5.0
    return float(x @ A @ x)


def _pair_writing(A, x):
    def back(d):
        return float(np.sum(d * (A + A.T) @ x))
    return _quad_writes(A, x), back


def late_read_after_write(v):
    y, back = _pair_writing(_A * v[0], np.sin(v))
    return y + back(1.0)


def test_late_binding_still_refuses_a_callee_that_writes():
    from .refusals import refused
    refused(late_read_after_write, np.array([0.5, 1.2]), "return _quad_writes(A, x), back",
            "`back`", "`A`", "given to a call that may change it in place", where=_pair_writing)


def pair_product(xs):
    return xs[0] * xs[1]


@ad.rrule(pair_product)
def _(xs):
    return pair_product(xs), lambda d: (ad.NoTangent(), [d * xs[1], d * xs[0], 1.0])


def test_rule_list_gradient_of_another_length_is_refused():
    for f, x in ((pair_product, [1.5, 2.0]), (lambda a: pair_product([a, 2.0]), 1.5)):
        with pytest.raises(ad.RuleError) as info:
            ad.gradient(f, x)
        assert "has 3 items, but the argument has 2" in str(info.value)
