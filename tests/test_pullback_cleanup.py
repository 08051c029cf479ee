"""The pullback's clean-up (copy propagation, folding single-use adjoints) must not move
a read of a value across a loop or branch that restores or rewrites it."""
import math

from adjoint_s2s.testing import check_grads


def read_before_overwriting_loop(x, y):
    t = x * y  # reads x before the loop overwrites it
    for _ in range(3):
        x = math.sin(x) * 1.1
    return t * x + x


def read_before_overwriting_branch(x, y):
    t = x * y
    if y > 0:
        x = x * x + 1.0
    return t * x


def fold_across_a_restoring_loop(x, w):
    t = w * 2.0  # reversed last: its adjoint is used once, after the loop's reverse
    for _ in range(3):
        x = math.sin(x) * 1.1
    return t * x  # reversed first: b_t = b_result * x reads the final x


def chained_single_uses(x):
    a = math.exp(x)
    b = a * x
    c = b * a
    return c * c


def test_reads_stay_on_the_right_side_of_a_loop():
    check_grads(read_before_overwriting_loop, 0.7, 1.3)


def test_reads_stay_on_the_right_side_of_a_branch():
    check_grads(read_before_overwriting_branch, 0.7, 1.3)
    check_grads(read_before_overwriting_branch, 0.7, -1.3)


def test_a_fold_does_not_cross_a_loop_that_restores_its_reads():
    check_grads(fold_across_a_restoring_loop, 0.7, 1.3)


def test_chained_single_uses():
    check_grads(chained_single_uses, 0.3)


def subtract_scaled(x, y):
    d = x - 3.0 * y
    return d * x + math.sin(y) / 2.0


def test_a_negated_real_adjoint_is_subtracted():
    # b_y = b_y + (-b_d) * 3.0 is written (and run) as b_y = b_y - b_d * 3.0: equal bit for
    # bit for real scalars, one operation fewer
    from adjoint_s2s import emit, runtime

    src = emit.source_of(subtract_scaled, runtime.kinds_of((0.7, 1.3))).source
    assert "(-b_" not in src
    assert " - b_d * 3.0" in src
    check_grads(subtract_scaled, 0.7, 1.3)
    check_grads(subtract_scaled, -2.0, 0.25)
