"""passes/reverse/: forward code and pullback blocks, handed on as a Draft."""
from adjoint_s2s.passes import codegen as C
from adjoint_s2s.passes.activity import REAL
from adjoint_s2s.passes.codegen import Restore, Save

from .pipeline import drafted


def product_minus(x, y):
    return x * y - x


def overwritten(x):
    y = x * 2.0
    y = y * x
    return y


def looped(x, n):
    for i in range(n):
        x = x * x
    return x


def _lines(block):
    return C.render(block, 0, lambda m: [f"<{type(m).__name__}>"], [])


def test_draft_names_the_pair_and_its_pullback():
    _, draft = drafted(product_minus, REAL, REAL)
    assert (draft.pair_name, draft.pullback_name, draft.seed) == (
        "product_minus_pair", "product_minus_pullback", "b_result")
    assert draft.ret_line == "return (None, b_x, b_y)"
    assert _lines(draft.pre) == ["if type(b_result) is not float:", "    b_result = _rt.real(b_result)"]


def test_operator_adjoints_before_the_clean_up():
    # the normalised body is `mul = x * y; result = mul - x`: under the heading of the
    # user's line, each statement's adjoint lines, in reverse order, each followed by the
    # restore marker of its target
    _, draft = drafted(product_minus, REAL, REAL)
    assert _lines(draft.body) == [
        "# return x * y - x",
        "b_mul = b_result",
        "b_x = -b_result",
        "<Restore>",
        "b_x = b_x + b_mul * y",
        "b_y = b_mul * x",
        "<Restore>",
    ]


def test_an_overwrite_leaves_save_and_restore_markers():
    _, draft = drafted(overwritten, REAL)
    fwd, body = _lines(draft.fwd), _lines(draft.body)
    assert fwd.index("<Save>", fwd.index("mul = y * x")) < fwd.index("y = mul")
    assert "<Restore>" in body
    assert all(isinstance(sv, Save) and sv.name in ("y", "mul") for sv in draft.saves)


def test_loop_saves_are_marked_as_inside_a_loop():
    _, draft = drafted(looped, REAL, REAL)
    inside = [sv for sv in draft.saves if sv.in_loop]
    assert "x" in {sv.name for sv in inside}
    body = _lines(draft.body)
    assert any(line.startswith("for _ in range(n_i)") for line in body)
    assert not any(isinstance(item, Restore) for item in draft.pre)
