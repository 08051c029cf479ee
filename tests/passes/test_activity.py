"""passes/activity.py: kinds, activity and liveness, returned read-only."""
import pytest

from adjoint_s2s.passes.activity import ARRAY, CONST, OTHER, REAL

from .pipeline import analysed


def loop_with_label(x, n):
    s = 0.0
    for i in range(n):
        s = s + x * i
    label = f"{s:.2f}"  # noqa: F841 (a string: its kind is tested)
    return s


def length_only(xs, y):
    n = len(xs)
    return n * y


def array_reads(a, x):
    m = a.shape  # noqa: F841 (inactive: tested)
    return a * x


def test_kinds_follow_the_argument_kinds():
    facts = analysed(loop_with_label, REAL, REAL)
    assert facts.kinds["x"] == facts.kinds["s"] == facts.kinds["i"] == REAL
    assert facts.kinds["label"] == CONST


def test_active_names_depend_on_a_differentiated_input():
    facts = analysed(loop_with_label, REAL, REAL)
    assert {"x", "s"} <= facts.active
    assert "label" not in facts.active  # a string: no tangent
    assert "i" not in facts.active  # range(n) has no gradient


def test_a_length_is_a_number_with_no_gradient():
    facts = analysed(length_only, OTHER, REAL)
    assert facts.kinds["n"] == REAL
    assert "n" not in facts.active
    assert "y" in facts.active


def test_shape_of_an_array_is_inactive():
    facts = analysed(array_reads, ARRAY, REAL)
    assert "m" not in facts.active
    assert facts.kinds["a"] == ARRAY


def test_liveness_names_what_is_read_later():
    facts = analysed(length_only, OTHER, REAL)
    node_live = list(facts.live_after.values())
    assert any("n" in live for live in node_live)  # n is read by the product


def test_the_result_is_read_only():
    facts = analysed(loop_with_label, REAL, REAL)
    with pytest.raises(TypeError):
        facts.kinds["x"] = OTHER
    with pytest.raises(AttributeError):
        facts.active.add("label")
    assert isinstance(facts.locals, frozenset)


def backward_chain(x, a, n):
    # inside the loop each name is read before the statement that makes it active or
    # an array runs: activity and kinds reach d only after three rounds of the loop body
    d = 0.0
    c = 0.0
    b = 0.0
    for i in range(n):
        d = d + c
        c = c + b
        b = b + x * a
    return d


def test_a_fixed_point_reached_over_several_rounds():
    # the analysis reruns only the statements whose inputs changed in a round: every
    # round still sees what the one before it found
    facts = analysed(backward_chain, REAL, ARRAY, REAL)
    assert {"b", "c", "d"} <= facts.active
    assert facts.kinds["b"] == facts.kinds["c"] == facts.kinds["d"] == ARRAY
    facts = analysed(backward_chain, REAL, REAL, REAL)
    assert facts.kinds["d"] == REAL and "d" in facts.active
