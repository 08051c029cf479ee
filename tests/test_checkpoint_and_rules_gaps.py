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
