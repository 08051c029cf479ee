"""A module global holding data, rebound while the forward pass runs by code that runs as
it is (a function marked non-differentiable): each use gets the value it read. The
pullback took the end-of-forward value for every use (passes/rebound_globals.py)."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient

SCALE = 1.0
STEP = 0
TABLE = np.array([1.0, 2.0])


def reset():
    global SCALE, STEP, TABLE
    SCALE, STEP, TABLE = 1.0, 0, np.array([1.0, 2.0])


@pytest.fixture(autouse=True)
def _fresh_globals():
    reset()
    yield
    reset()


@ad.non_differentiable
def bump():
    global SCALE
    SCALE = SCALE + 1.0


@ad.non_differentiable
def set_scale(v):
    global SCALE
    SCALE = v


@ad.non_differentiable
def tick(_=None):
    global STEP
    STEP += 1
    return STEP


@ad.non_differentiable
def new_table():
    global TABLE
    TABLE = TABLE * 3.0


def read_bump_read(x):
    y = x * SCALE
    bump()
    return y * SCALE


def set_and_set_back(x):
    a = x * SCALE
    set_scale(2.5)
    b = a * SCALE + x * x * SCALE
    set_scale(1.0)
    return b * SCALE


def decayed_steps(x):
    total = 0.0
    for _ in range(3):
        total = total + x * 0.5 ** STEP
        tick()
    return total


def table_rebound(x):
    y = np.sum(x * TABLE)
    new_table()
    return y * np.sum(x * TABLE)


def in_a_branch(x):
    y = x * SCALE
    if x > 0:
        bump()
    return y + x * SCALE


def through_map(x):
    y = x * SCALE
    steps = list(map(tick, [1, 2]))
    return y * 0.5 ** STEP + len(steps)


def while_steps(x):
    y = x
    while STEP < 3:
        y = y * (1.0 + 0.1 * STEP) + x * SCALE
        tick()
        bump()
    return y


def nested_helper(x):
    return x * SCALE + read_bump_read(x) * SCALE


CASES = [read_bump_read, set_and_set_back, decayed_steps, table_rebound, in_a_branch, through_map, while_steps,
         nested_helper]


@pytest.mark.parametrize("fn", CASES)
def test_each_use_gets_the_value_it_read(fn):
    x = np.array([0.7, -0.4]) if fn is table_rebound else 0.7
    want_y = fn(x)
    reset()
    y, back = ad.pullback(fn, x)
    reset()
    got = back(1.0)[0]
    reset()
    want = numerical_gradient(lambda v: (reset(), fn(v))[1], x)[0]
    assert np.allclose(y, want_y)
    assert np.allclose(got, want, rtol=1e-6, atol=1e-8), (got, want)
    reset()
    assert np.allclose(ad.gradient(fn, x)[0], want, rtol=1e-6, atol=1e-8)  # (the fused form)


def test_second_derivative_with_a_rebound_global():
    def f(x):
        set_scale(1.0)
        y = x * x * SCALE
        bump()
        return y * SCALE  # 2 x**2

    assert ad.hessian(f, 0.3) == pytest.approx(4.0)
    assert ad.gradient(lambda v: ad.gradient(f, v)[0], 0.3)[0] == pytest.approx(4.0)


def plain_numpy(x):
    return np.sum(x * TABLE) * SCALE


def test_a_function_without_such_calls_reads_the_global_as_it_is():
    text = ad.show_adjoint(plain_numpy, np.array([1.0, 2.0]))
    assert "SCALE_1" not in text and "TABLE_1" not in text, text
    assert "SCALE=SCALE" in text


def test_the_generated_code_reads_the_global_before_each_statement():
    text = ad.show_adjoint(read_bump_read, 0.7)
    lines = [line.strip() for line in text.splitlines()]
    assert lines.count("SCALE_1 = SCALE") == 2, text
    heading, read = lines.index("# return y * SCALE"), lines.index("result = y * SCALE_1")
    assert "SCALE_1 = SCALE" in lines[heading:read], text  # (under the heading of its line)
