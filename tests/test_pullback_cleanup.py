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


def noisy(x):
    print("noisy ran")
    return x * 2.0


def log_then_effect(x):
    return math.log(x) + float(noisy(x))


def sum_of_products(x, y):
    a = math.sin(x) * y + 0.5 * x * x
    return a * a


def test_forward_temporaries_fold_into_the_users_expression():
    from adjoint_s2s import emit, runtime

    src = emit.source_of(sum_of_products, runtime.kinds_of((0.7, 1.3))).source
    assert "a = sin_x * y + mul * x" in src.split("_pullback(")[0]
    check_grads(sum_of_products, 0.7, 1.3)
    src = emit.source_of(subtract_scaled, runtime.kinds_of((0.7, 1.3))).source
    assert "d = x - 3.0 * y" in src.split("_pullback(")[0]


def test_a_fold_never_moves_work_past_a_side_effect(capsys):
    import pytest

    import adjoint_s2s as ad

    with pytest.raises(ValueError):
        log_then_effect(-1.0)
    assert capsys.readouterr().out == ""  # plain Python: log fails before noisy prints
    with pytest.raises(ValueError):
        ad.gradient(log_then_effect, -1.0)
    assert capsys.readouterr().out == ""
    check_grads(log_then_effect, 0.8)


def test_forward_folding_stops_at_what_could_tell_the_difference():
    from adjoint_s2s.passes.cleanup import fold_pure_temps as _fold_pure_temps

    pure = {"x", "t", "u", "r", "math"}
    # folds past pure work, with minimal parentheses
    assert _fold_pure_temps(["t = math.log(x)", "u = x * 2.0", "r = t * (u + 1.0)"], {"t"}, pure) == [
        "u = x * 2.0", "r = math.log(x) * (u + 1.0)"
    ]
    # never past a call of something impure, a statement, or a write to what it reads
    for between in ("u = f(x)", "print(x)", "x = 3.0", "if x:"):
        lines = ["t = math.log(x)", between, "r = t + 1.0"]
        assert _fold_pure_temps(list(lines), {"t"}, pure) == lines
    # never a user's name (not in temps), never a value read twice
    assert _fold_pure_temps(["u = x * 2.0", "r = u + 1.0"], {"t"}, pure) == ["u = x * 2.0", "r = u + 1.0"]
    lines = ["t = x * 2.0", "r = t + t"]
    assert _fold_pure_temps(list(lines), {"t"}, pure) == lines


def adjoint_looking_names(x):
    # user names that look like adjoints, one of them reassigned (as in generated code)
    q = x * x
    c = x * q
    b_c = 1.0 * q
    b_q = 1.0 * c
    b_x = b_c * q
    b_q = b_q + b_c * x
    b_x = b_x + b_q * (2 * x)
    return b_x


def test_user_names_that_look_like_adjoints_are_not_propagated():
    check_grads(adjoint_looking_names, 0.7)
    check_grads(adjoint_looking_names, -1.1)
