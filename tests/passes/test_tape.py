"""passes/tape.py: which overwritten values are kept for the pullback, and where."""
from adjoint_s2s.passes.activity import REAL

from .pipeline import planned


def overwritten(x):
    y = x * 2.0
    y = y * x
    return y


def overwritten_unread(x):
    y = x + 1.0
    y = x * 3.0
    return y + 0.0


def looped(x, n):
    for i in range(n):
        x = x * x
    return x


def test_an_overwritten_value_the_pullback_reads_gets_a_fresh_name():
    draft, plan, fwd, pb = planned(overwritten, REAL)
    assert plan.restorable == {"y"} and not plan.tape_used
    assert fwd[-3:] == ["mul = y * x", "y_saved_1 = y", "y = mul"]
    assert pb[pb.index("b_mul = b_y") + 1] == "y = y_saved_1"


def test_a_value_the_pullback_does_not_read_is_not_saved():
    draft, plan, fwd, pb = planned(overwritten_unread, REAL)
    assert plan.restorable == frozenset()
    assert not any("saved" in line for line in fwd + pb)


def test_inside_a_loop_values_go_on_the_tape():
    draft, plan, fwd, pb = planned(looped, REAL, REAL)
    assert plan.tape_used and plan.restorable == {"x"}
    assert fwd[0] == "_tape = []" and "    _tape.append(x)" in fwd
    assert pb[0] == "_pos = len(_tape)"
    # the one pop of each trip is the reversed loop's variable: the loop runs over the
    # trips' values, and the cursor moves once, after it
    loop = next(line for line in pb if line.startswith("for "))
    assert loop == "for x in reversed(_tape[_pos - n_i:_pos]):"
    assert "_pos -= n_i" in pb and not any("_pos -= 1" in line for line in pb)
