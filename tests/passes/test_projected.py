"""passes/projected.py: an unbroadcast onto what its adjoint was last projected onto becomes
an identity test, only where every path says so; the gradients stay the same bit for bit."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient
from adjoint_s2s.passes import projected
from adjoint_s2s.passes.cleanup import blank_likes
from adjoint_s2s.runtime import unbroadcast

LIKES = {"a", "a1", "m", "m1"}


def rewrite(text, likes=LIKES):
    lines = text.strip("\n").split("\n")
    return "\n".join(projected.reuse_projections(lines, likes, set()))


CHAIN = """
if b_h is not None:
    b_a1 = _rt.unbroadcast(b_h * 2.0, a1)
else:
    b_a1 = None
h = _tape[_i]
if b_a1 is not None:
    b_a = _rt.unbroadcast(b_a1, a)
    b_b = _rt.acc(b_b, _rt.unbroadcast(b_a1, b))
else:
    b_a = None
a1 = _tape[_i - 1]
if b_a is not None:
    b_m = _rt.unbroadcast(b_a, m)
    b_m1 = _rt.unbroadcast(b_a, m1)
"""


def test_a_chain_of_projections_becomes_identity_tests():
    out = rewrite(CHAIN)
    assert "    b_a = b_a1 if a is a1 else _rt.unbroadcast(b_a1, a)" in out
    assert "    b_m = b_a if m is a else _rt.unbroadcast(b_a, m)" in out
    assert "    b_m1 = b_a if m1 is a else _rt.unbroadcast(b_a, m1)" in out
    assert "_rt.acc(b_b, _rt.unbroadcast(b_a1, b))" in out  # b: no stand-in


def test_a_like_rebound_in_between_is_tested_no_more():
    out = rewrite(CHAIN.replace("h = _tape[_i]", "a1 = _tape[_i]"))
    assert "b_a = _rt.unbroadcast(b_a1, a)" in out
    assert "b_m = b_a if m is a" in out  # (b_a's own projection still holds)


@pytest.mark.parametrize("between", [
    "b_a1 = _rt.acc(b_a1, g)",  # the adjoint is rebound
    "b_a1 += g",
    "b_a1, c = f(g)",
    "x = b_a1 = g",
    "del x",
])
def test_a_rebound_adjoint_is_tested_no_more(between):
    out = rewrite(CHAIN.replace("h = _tape[_i]", between))
    assert "b_a = _rt.unbroadcast(b_a1, a)" in out


def test_a_branch_that_does_not_project_keeps_the_call():
    out = rewrite("""
b_a1 = g
if c:
    b_a1 = _rt.unbroadcast(g, a1)
b_a = _rt.unbroadcast(b_a1, a)
""")
    assert "b_a = _rt.unbroadcast(b_a1, a)" in out
    out = rewrite("""
if c:
    b_a1 = _rt.unbroadcast(g, a1)
elif d:
    b_a1 = _rt.unbroadcast(g, m)
else:
    b_a1 = None
b_a = _rt.unbroadcast(b_a1, a)
""")
    assert "b_a = _rt.unbroadcast(b_a1, a)" in out  # projected onto a1 or onto m


def test_loops_start_and_end_knowing_nothing():
    out = rewrite("""
b_a1 = _rt.unbroadcast(g, a1)
for _i in range(n):
    b_a = _rt.unbroadcast(b_a1, a)
    b_a1 = _rt.unbroadcast(b_a, a1)
b_m = _rt.unbroadcast(b_a1, m)
""")
    assert "b_a = _rt.unbroadcast(b_a1, a)" in out
    assert "    b_a1 = b_a if a1 is a else _rt.unbroadcast(b_a, a1)" in out
    assert "b_m = _rt.unbroadcast(b_a1, m)" in out


def test_the_same_like_again_is_a_copy():
    out = rewrite("b_a1 = _rt.unbroadcast(g, a)\nb_a = _rt.unbroadcast(b_a1, a)")
    assert out.endswith("b_a = b_a1")


def test_only_stand_ins_are_tested():
    out = rewrite(CHAIN, likes={"a", "m", "m1"})  # a1: no stand-in
    assert "b_a = _rt.unbroadcast(b_a1, a)" in out and out.count(" else _rt.unbroadcast(") == 2


@pytest.mark.parametrize("odd", [
    "with c:\n    pass",
    "try:\n    pass\nexcept E:\n    pass",
    "def f():\n    pass",
    "x = f(1,\n      2)",
    "if (y := g):\n    pass",
    "if c: x = 1",
])
def test_code_the_walk_does_not_follow_is_left_as_it_is(odd):
    text = CHAIN + odd
    assert rewrite(text) == text.strip("\n")


def test_the_test_reads_its_names_for_their_shape_alone():
    line = "b_a = b_a1 if a is a1 else _rt.unbroadcast(b_a1, a)"
    assert "a1" not in blank_likes(line).replace("b_a1", "")


@pytest.mark.parametrize("g, like", [
    (np.ones((3, 4)), np.zeros((3, 4))),
    (np.ones((3, 4)), np.zeros(4)),
    (np.ones((3, 4)), np.zeros((3, 1))),
    (np.ones((3, 4), complex), np.zeros(4)),
    (np.ones((3, 4)), np.zeros(4, np.float32)),
    (np.ones((3, 4), np.int8), np.zeros(4, np.int8)),
    (np.ones(3), 2.0),
    (np.ones(3), 2),
    (np.ones(3), True),
    (1 + 2j, 2.0),
    (np.complex128(1 + 2j), 2),
    (np.ones(2), [1.0, 2.0]),
    (None, np.zeros(3)),
    (2.5, None),
])
def test_projecting_twice_onto_one_value_is_projecting_once(g, like):
    once = unbroadcast(g, like)
    twice = unbroadcast(once, like)
    assert type(twice) is type(once)
    if isinstance(once, np.ndarray):
        assert twice.dtype == once.dtype and np.array_equal(twice, once)
    else:
        assert twice == once


_rng = np.random.default_rng(7)
XS = _rng.standard_normal((6, 5, 3))


def chain(W, v, b, c):
    h = np.zeros((5, 4))
    for t in range(6):
        h = np.tanh(XS[t] @ W + h * v + b + c)
    return np.sum(h * h)


@pytest.mark.parametrize("shapes", [
    ((3, 4), (5, 4), (4,), (5, 4)),  # the sums' operands of one shape: identity tests true
    ((3, 4), (4,), (5, 1), (1, 4)),  # broadcast operands: the calls are taken
    ((3, 4), (), (), ()),
])
def test_gradients_are_those_of_the_calls(shapes, monkeypatch):
    args = [_rng.standard_normal(s) if s else 0.3 for s in shapes]
    assert " else _rt.unbroadcast(" in ad.show_adjoint(chain, *args)
    got = ad.gradient(chain, *args)
    monkeypatch.setattr(projected, "reuse_projections", lambda lines, *a: lines)
    ad.refresh()
    assert " else _rt.unbroadcast(" not in ad.show_adjoint(chain, *args)
    want = ad.gradient(chain, *args)
    ad.refresh()
    for x, y in zip(got, want):
        assert type(x) is type(y) and np.array_equal(x, y)


def test_second_order_through_the_identity_tests():
    W, b = _rng.standard_normal((3, 4)), _rng.standard_normal(4)

    def f(b):
        return np.sum(ad.gradient(chain, W, 0.5, b, np.ones((5, 4)))[2])

    got = ad.gradient(f, b)[0]
    np.testing.assert_allclose(got, numerical_gradient(f, b)[0], rtol=1e-6, atol=1e-8)


def test_a_projection_read_inside_an_expression_is_tested_in_parentheses():
    out = rewrite("""
b_a = _rt.unbroadcast(g, a)
b_w = _rt.acc(b_w, _rt.matmul_adjoint_b(_rt.unbroadcast(b_a, m), x, _rt.unbroadcast(b_a, a)))
""")
    assert out.endswith("b_w = _rt.acc(b_w, _rt.matmul_adjoint_b((b_a if m is a else _rt.unbroadcast(b_a, m)), x, b_a))")


@pytest.mark.parametrize("late", [
    "k = lambda: _rt.unbroadcast(b_a, m)",
    "k = (_rt.unbroadcast(b_a, m) for _ in r)",
])
def test_a_projection_that_may_run_later_keeps_the_call(late):
    out = rewrite(f"b_a = _rt.unbroadcast(g, a)\n{late}")
    assert out.endswith(late)


def test_a_call_whose_name_only_ends_like_the_helper_is_left_alone():
    """`my_rt.unbroadcast(` inside a line is not `_rt.unbroadcast(`: never rewritten."""
    lines = [
        "b_add_1 = _rt.unbroadcast(b_h, add_1)",
        "b_x = my_rt.unbroadcast(b_add_1, add)",
        "b_y = f(my_rt.unbroadcast(b_add_1, add))",
    ]
    assert projected.reuse_projections(lines, {"add", "add_1"}, set()) == lines
