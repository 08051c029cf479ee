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
    # (b_y is read: an adjoint nobody reads is dropped, see blockclean.drop_dead_adjoints)
    lines = ["    b_add = b_acc", "    b_acc = b_acc * 2.0", "    b_acc = b_add", "    b_y = b_add * b_acc",
             "    return (None, b_y)"]
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


def test_arithmetic_printer_matches_ast_unparse():
    """The folded forward lines are printed by reprint.unparse_arithmetic where they are
    arithmetic (ast.unparse otherwise): on random expressions it prints what ast.unparse
    prints, parenthesis for parenthesis, or gives up."""
    import ast
    import random

    from adjoint_s2s.passes.reprint import _NotArithmetic, unparse_arithmetic

    rng = random.Random(15)
    binary = [ast.Add, ast.Sub, ast.Mult, ast.MatMult, ast.Div, ast.Mod, ast.FloorDiv, ast.Pow,
              ast.LShift, ast.RShift, ast.BitOr, ast.BitXor, ast.BitAnd]
    unary = [ast.Invert, ast.Not, ast.UAdd, ast.USub]
    leaves = [0, 1, 10**20, 0.5, 1e-05, 1e300, 0.1, 1e16, float("inf"), True, None, "s", 1j]

    def expr(depth):
        r = rng.random()
        if depth <= 0 or r < 0.2:
            if rng.random() < 0.5:
                return ast.Name(id=rng.choice(["x", "b_x", "math"]), ctx=ast.Load())
            return ast.Constant(value=rng.choice(leaves))
        if r < 0.55:
            return ast.BinOp(left=expr(depth - 1), op=rng.choice(binary)(), right=expr(depth - 1))
        if r < 0.7:
            return ast.UnaryOp(op=rng.choice(unary)(), operand=expr(depth - 1))
        if r < 0.8:
            return ast.Attribute(value=expr(depth - 1), attr="real", ctx=ast.Load())
        if r < 0.92:
            args = [expr(depth - 1) for _ in range(rng.randrange(3))]
            if rng.random() < 0.1:
                args.append(ast.Starred(value=expr(0), ctx=ast.Load()))
            keywords = [ast.keyword(arg=rng.choice(["axis", None]), value=expr(depth - 1))
                        for _ in range(rng.randrange(2))]
            return ast.Call(func=expr(depth - 1), args=args, keywords=keywords)
        return ast.IfExp(test=expr(depth - 1), body=expr(depth - 1), orelse=expr(depth - 1))

    printed = 0
    for _ in range(3000):
        tree = expr(rng.randrange(1, 6))
        text = ast.unparse(tree)
        for t in (tree, ast.parse(text, mode="eval").body):  # also as parsed back
            try:
                got = unparse_arithmetic(t)
            except _NotArithmetic:
                continue
            assert got == ast.unparse(t)
            printed += 1
    assert printed > 1000



def test_reprint_by_shape_matches_ast_unparse():
    """reprint prints a line once per shape (its names replaced by placeholders): the
    names put back give what ast.unparse prints of the line itself, with keywords,
    attributes, keyword arguments, lambdas, names that share a shape, names the parser
    normalises (non-ASCII), and names that look like the placeholders."""
    import ast

    from adjoint_s2s.passes.reprint import reprint

    rhs = [
        "(math.sin(x)) + (0.5 * y)", "(math.sin(z)) + (0.5 * _0)", "(_1 * _0) - (x * _1)",
        "f((a + b), axis=(c * d))", "(a if b else None) + True", "(lambda a: a + b)(c)",
        "(x.real * y).imag", "(1).real + (x)", "((x ** y)) ** z", "-(x) * (y - z)",
        "(\u00b5 + \u00b5x) * x\u00b5", "(\ufb01 + fi) * y", "not (a and b)",
        "(a @ b) @ c", "f(*(a), **(b))", "(x for x in (y))",
    ]
    for text in rhs:
        line = f"    t = {text}"
        assert reprint(line) == f"    t = {ast.unparse(ast.parse(text, mode='eval'))}", text

def test_round_trip_only_within_its_block():
    # the copy back after a block header, or at another indentation, is not the same block
    lines = ["b_a = b_b", "if c:", "    b_b = b_a", "b_b = b_a", "return (None, b_a, b_b)"]
    assert _drop_round_trips_only(lines) == lines
    lines = ["b_a = b_b", "# heading", "b_y = b_a * 2.0", "b_b = b_a", "return (None, b_a)"]
    assert _drop_round_trips_only(lines) == [
        "b_a = b_b", "# heading", "b_y = b_a * 2.0", "return (None, b_a)"]
    # either name bound again in between: kept
    lines = ["b_a = b_b", "b_b = b_b * 2.0", "b_b = b_a", "return (None, b_b)"]
    assert _drop_round_trips_only(lines) == lines


def _drop_round_trips_only(lines):
    from adjoint_s2s.passes.cleanup import _drop_round_trips

    return _drop_round_trips(list(lines), set())
