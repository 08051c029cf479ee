"""passes/cleanup.py: exact rewrites of the rendered pullback and forward pass."""
from adjoint_s2s.naming import ADJOINT_PREFIX
from adjoint_s2s.passes.cleanup import (
    clean_pullback,
    fix_empty_blocks,
    fold_pure_temps,
    names_read,
)

SEED = "b_result"


def test_copy_of_the_seed_is_propagated():
    lines = ["b_a = b_result", "b_x = -b_result", "b_x = b_x + b_a * y", "b_y = b_a * x",
             "return (None, b_x, b_y)"]
    assert clean_pullback(lines, SEED, set(), {"b_x", "b_y", "b_a"}) == [
        "b_x = -b_result", "b_x = b_x + b_result * y", "b_y = b_result * x",
        "return (None, b_x, b_y)"]


def test_primal_names_that_look_like_adjoints_are_left_alone():
    lines = ["b_q = b_q_saved", "b_x = b_q * 2.0", "return (None, b_x)"]
    assert clean_pullback(lines, SEED, {"b_q", "b_q_saved"}, set()) == lines


def test_single_use_is_folded_into_its_reader():
    lines = ["b_t = b_result * y", "b_x = b_t * z", "return (None, b_x)"]
    assert clean_pullback(lines, SEED, set(), set()) == ["b_x = b_result * y * z", "return (None, b_x)"]


def test_sum_of_a_negated_term_is_a_difference_for_real_adjoints():
    lines = ["b_x = b_result * 2.0", "b_x = b_x + (-b_y) * r", "return (None, b_x)"]
    got = clean_pullback(lines, SEED, set(), {"b_x", "b_y"})
    assert "b_x = b_x - b_y * r" in got
    # not for a complex adjoint (no such identity is assumed)
    assert "b_x = b_x + (-b_y) * r" in clean_pullback(lines, SEED, set(), set())


def test_forward_temporary_folds_back_into_its_reader():
    assert fold_pure_temps(["t = x * 2.0", "r = t + 1.0"], {"t"}, {"x", "t", "r"}) == ["r = x * 2.0 + 1.0"]


def test_empty_block_gets_pass_and_names_ignore_comments_and_strings():
    assert fix_empty_blocks(["if c:", "    # only a comment", "x = 1"]) == [
        "if c:", "    pass", "    # only a comment", "x = 1"]
    assert names_read(["a = b + f('c')  # d"]) == {"a", "b", "f"}


def test_patterns_follow_the_naming_convention():
    assert ADJOINT_PREFIX == "b_"
    lines = [f"{ADJOINT_PREFIX}a = {SEED}", f"return (None, {ADJOINT_PREFIX}a)"]
    assert clean_pullback(lines, SEED, set(), set()) == [f"return (None, {SEED})"]


def test_round_trip_copy_back_is_dropped():
    lines = ["b_add = b_acc", "acc = acc_saved_1", "b_acc = b_add", "b_y = b_y + b_add",
             "return (None, b_acc, b_y)"]
    assert clean_pullback(lines, SEED, {"acc", "acc_saved_1"}, set()) == [
        "acc = acc_saved_1", "b_y = b_y + b_acc", "return (None, b_acc, b_y)"]


def test_round_trip_is_kept_when_a_name_is_bound_in_between():
    lines = ["    b_add = b_acc", "    b_acc = b_acc * 2.0", "    b_acc = b_add", "    b_y = b_add * b_acc"]
    assert clean_pullback(lines, SEED, set(), set()) == lines


def test_heading_comment_with_no_code_under_it_is_dropped():
    lines = ["# y = y * x", "b_x = b_y * y", "# y = x", "return (None, b_x)"]
    assert clean_pullback(lines, SEED, set(), set()) == ["# y = y * x", "b_x = b_y * y", "return (None, b_x)"]
    nested = ["for _ in range(n_i):", "    # if c:", "    # s = s + x", "    b_x = b_x + b_s"]
    assert clean_pullback(nested, SEED, set(), set()) == [
        "for _ in range(n_i):", "    # s = s + x", "    b_x = b_x + b_s"]


def test_a_name_folded_into_its_use_gets_no_parentheses():
    assert clean_pullback(["b_t = b_y", "b_x = b_t / 2.0", "return (None, b_x)"], SEED, set(), set()) == [
        "b_x = b_y / 2.0", "return (None, b_x)"]
