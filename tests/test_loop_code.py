"""The code generated for loops: the trip count of a range loop known before it, the
forward body folded back into the user's lines (past tape pushes), the pullback's adjoint
copies and single uses folded inside the reversed body, and the tape read by trip.

Every shape of the generated code is checked for what it computes too: gradients at
first and second order against finite differences, and a pullback called twice gives the
same gradients (it reads the tape without changing it)."""
import math
import re

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.passes.blockclean import clean_blocks, fold_pure_temps
from adjoint_s2s.testing import check_grads


def contraction(x):
    for _ in range(100):
        x = 0.99 * x + 0.01 * math.sin(x)
    return x


def contraction_with_break(x):
    for _ in range(100):
        x = 0.99 * x + 0.01 * math.sin(x)
        if x < 0.1:
            break
    return x


def carried_pair(a, b):
    for _ in range(6):
        a, b = a * b + 0.5, math.sin(a)
    return a + 2.0 * b


def nested(x):
    for i in range(3):
        for j in range(4):
            x = x * math.sin(x) + 0.1 * j
        x = x + 1.0 * i
    return x


def branch_in_loop(x):
    for i in range(8):
        if x > 0.5:
            x = x * 0.9
        else:
            x = math.sin(x) + 0.3
    return x


X = np.random.default_rng(3).standard_normal((7, 4, 3))


def rows(W, b):
    T = X.shape[0]
    H = np.zeros((T, 4, 5))
    h = np.zeros((4, 5))
    for t in range(T):
        h = np.tanh(X[t] @ W + h * 0.5 + b)
        H[t] = h
    return np.sum(H * H)


def _pullback_lines(src):
    return src[src.index("_pullback(") :].splitlines()


def test_a_range_loop_knows_its_trip_count_before_it_runs():
    src = ad.show_adjoint(contraction, 0.3)
    assert re.search(r"\n +n\w* = len\(range\w*\)\n", src)
    assert "+= 1" not in src


def test_a_loop_that_may_break_counts_its_trips():
    src = ad.show_adjoint(contraction_with_break, 0.3)
    assert "+= 1" in src and "len(range" not in src
    for x in (0.3, 2.0):  # breaks early, runs to the end
        check_grads(contraction_with_break, x, order=2)


def test_the_forward_body_reads_as_the_users_line_past_the_tape_push():
    src = ad.show_adjoint(contraction, 0.3)
    body = src[src.index("for _ in range_1:") :].splitlines()[2:4]  # (after the heading comment)
    assert [line.strip() for line in body] == ["_tape.append(x)", "x = 0.99 * x + 0.01 * math.sin(x)"]


def test_the_pullback_reads_one_pop_a_trip_as_its_loop_variable():
    src = ad.show_adjoint(contraction, 0.3)
    pb = _pullback_lines(src)
    assert any(re.match(r" +for x in reversed\(_tape\[_pos - n\w*:_pos\]\):", line) for line in pb)
    assert not any("_pos -= 1" in line for line in pb)
    # the adjoint copy and the single-use temporary of the body are gone
    assert not any(re.match(r" +b_mul_1 = ", line) or "b_sin_x" in line for line in pb)
    check_grads(contraction, 0.3, order=2)


def test_several_pops_a_trip_are_read_by_their_position():
    src = ad.show_adjoint(carried_pair, 0.4, 0.7)
    pb = _pullback_lines(src)
    assert any(re.match(r" +for _i\w* in range\(_pos - 1, _pos - 1 - \d+ \* n\w*, -\d+\):", line) for line in pb)
    assert any("_tape[_i - 1]" in line for line in pb) and not any("_pos -= 1" in line for line in pb)
    check_grads(carried_pair, 0.4, 0.7, order=2)


def carried_with_k_in_names(bk, kick):
    # names holding the letters of the reversed loop's counter (`k`): no counter is read
    for _ in range(5):
        bk, kick = bk * kick + 0.5, math.sin(bk) * kick
    return bk + 2.0 * kick


def test_the_tape_is_read_by_position_whatever_the_names_hold():
    pb = _pullback_lines(ad.show_adjoint(carried_with_k_in_names, 0.4, 0.7))
    assert any("_tape[_i - 1]" in line for line in pb) and not any("_pos -= 1" in line for line in pb)
    check_grads(carried_with_k_in_names, 0.4, 0.7, order=2)


def test_nested_loops_read_the_inner_trips_by_position_and_the_outer_one_by_one():
    pb = _pullback_lines(ad.show_adjoint(nested, 0.6))
    assert any("reversed(_tape[" in line or "in range(_pos - 1" in line for line in pb)
    assert any("_pos -= 1" in line for line in pb)  # the outer loop pops around the inner one
    check_grads(nested, 0.6, order=2)


def test_pops_under_a_branch_stay_one_by_one():
    pb = _pullback_lines(ad.show_adjoint(branch_in_loop, 0.7))
    assert any("_pos -= 1" in line for line in pb) and not any("_tape[_i" in line for line in pb)
    check_grads(branch_in_loop, 0.7, order=2)


@pytest.mark.parametrize("f, args", [
    (contraction, (0.3,)),
    (contraction_with_break, (2.0,)),
    (carried_pair, (0.4, 0.7)),
    (nested, (0.6,)),
    (branch_in_loop, (0.7,)),
    (rows, (np.random.default_rng(4).standard_normal((3, 5)), np.random.default_rng(5).standard_normal(5))),
])
def test_a_pullback_called_twice_gives_the_same_gradients(f, args):
    value, pb = ad.pullback(f, *args)
    first, second = pb(1.0), pb(1.0)
    assert len(first) == len(args)
    for g1, g2, want in zip(first, second, ad.gradient(f, *args)):
        np.testing.assert_array_equal(g1, g2)
        np.testing.assert_array_equal(g1, want)


def test_an_array_loop_reads_its_rows_by_position_and_is_exact():
    W, b = np.random.default_rng(4).standard_normal((3, 5)), np.random.default_rng(5).standard_normal(5)
    pb = _pullback_lines(ad.show_adjoint(rows, W, b))
    assert any(re.match(r" +for _i\w* in range\(_pos - 1, ", line) for line in pb)
    check_grads(rows, W, b, order=2, rtol=1e-5)


# ----- the clean-ups inside blocks, line by line -------------------------------------------------


def test_a_forward_temporary_folds_inside_its_block_past_a_push_only():
    lines = ["for _ in r:", "    t = x * 2.0", "    _tape.append(x)", "    x = t + 1.0"]
    assert fold_pure_temps(lines, {"t"}, {"x", "t"}, "_tape") == [
        "for _ in r:", "    _tape.append(x)", "    x = x * 2.0 + 1.0"]
    # another effect in between, or the use in another block: left alone
    other = ["for _ in r:", "    t = x * 2.0", "    print(x)", "    x = t + 1.0"]
    assert fold_pure_temps(other, {"t"}, {"x", "t"}, "_tape") == other
    split = ["for _ in r:", "    t = x * 2.0", "    if c:", "        x = t + 1.0"]
    assert fold_pure_temps(split, {"t"}, {"x", "t", "c"}, "_tape") == split


def test_an_adjoint_copy_inside_a_block_is_read_through():
    lines = ["for _ in r:", "    b_a = b_x", "    b_y = b_a * 2.0", "    b_x = b_x * 3.0"]
    assert clean_blocks(lines, "b_r", set()) == ["for _ in r:", "    b_y = b_x * 2.0", "    b_x = b_x * 3.0"]
    # b_x bound again before the copy is read: the copy stays
    kept = ["for _ in r:", "    b_a = b_x", "    b_x = b_x * 3.0", "    b_y = b_x + b_a"]
    assert clean_blocks(kept, "b_r", set()) == kept
    # read deeper (a nested loop runs the read again after b_x changes): the copy stays
    deeper = ["for _ in r:", "    b_a = b_x", "    for _ in s:", "        b_y = b_y + b_a", "        b_x = b_x * 3.0"]
    assert clean_blocks(deeper, "b_r", set()) == deeper


def test_a_single_use_inside_a_block_is_folded_unless_what_it_reads_changes():
    lines = ["for _ in r:", "    b_t = b_x * 0.5", "    b_x = b_t * c"]
    assert clean_blocks(lines, "b_r", set()) == ["for _ in r:", "    b_x = b_x * 0.5 * c"]
    moved = ["for _ in r:", "    b_t = b_x * 0.5", "    c = z", "    b_y = b_t * c"]
    assert clean_blocks(moved, "b_r", set()) == ["for _ in r:", "    c = z", "    b_y = b_x * 0.5 * c"]
    kept = ["for _ in r:", "    b_t = b_z * c", "    c = z", "    b_y = b_t * 2.0"]
    assert clean_blocks(kept, "b_r", set()) == kept


def test_a_real_adjoint_bound_twice_in_a_row_is_one_line():
    lines = ["for _ in r:", "    b_m = b_x", "    b_x = b_x * 0.5", "    b_x = b_x + b_m * 0.9"]
    assert clean_blocks(lines, "b_r", set(), {"b_x", "b_m"}) == ["for _ in r:", "    b_x = b_x * 0.5 + b_x * 0.9"]
    # an array adjoint (an addition may write into it): left as it is
    assert clean_blocks(lines[:1] + lines[2:], "b_r", set(), set()) == lines[:1] + lines[2:]


# ----- an adjoint nobody reads is not computed -------------------------------------------------

def test_only_an_adjoint_that_only_computes_is_dropped_unread():
    from adjoint_s2s.passes.blockclean import drop_dead_adjoints
    lines = ["b_s = _rt.unbroadcast(b_r * 2.0, s)", "b_t = -_rt.unbroadcast(b_s, t)", "b_h = b_s", "return (None, b_h)"]
    assert drop_dead_adjoints(lines, "b_r", set()) == [lines[0], lines[2], lines[3]]
    # a helper that may write into an argument, or a primal name: kept
    effects = ["b_t = _rt.acc(b_u, b_r)", "return (None, b_u)"]
    assert drop_dead_adjoints(effects, "b_r", set()) == effects
    assert drop_dead_adjoints(lines, "b_r", {"b_t"}) == lines
