"""runtime/structure.py: tangents of tuples, lists, dicts, closures; argument gradients."""
import types

import pytest

from adjoint_s2s.errors import NotDifferentiableError
from adjoint_s2s.runtime.structure import (
    arg_grad, dict_key, expand, field, fn_tangent, fold_self, kw_grad, part, seq_adjoint,
    star_part, starred_grad, with_defaults, without_fields,
)
from adjoint_s2s.tangents import Tangent, ZeroTangent


def test_part_reads_a_component_and_none_for_zeros_or_past_the_end():
    assert part((1.0, 2.0), 1) == 2.0
    assert part([1.0], 5) is None
    assert part({"a": 1.0}, "a") == 1.0
    assert part(None, 0) is None and part(ZeroTangent(), 0) is None
    with pytest.raises(NotDifferentiableError):
        part(3.0, 0)


def test_star_part_and_starred_grad_follow_the_sizes_of_starred_groups():
    g = (1.0, 2.0, 3.0, 4.0)
    assert star_part(g, (None, 2, None), 1, [0, 0]) == [2.0, 3.0]
    assert star_part(g, (None, 2, None), 2, None) == 4.0
    grads = (None, 10.0, 1.0, 2.0)  # f's tangent, then a, then *rest of two
    assert arg_grad(grads, 1, (None, 2)) == 10.0
    assert starred_grad(grads, 2, (0, 0), (None, 2)) == (1.0, 2.0)


def test_closure_tangents_fields_and_defaults():
    t = fn_tangent(a=1.0, b=None)
    assert field(t, "a") == 1.0 and field(t, "b") is None
    assert fn_tangent(a=None) is None
    df = with_defaults(None, ("k",), (2.0,))
    assert isinstance(df, Tangent) and df.primal_type is types.FunctionType and field(df, "k") == 2.0
    assert without_fields(df, ("k",)) is None
    assert kw_grad((None, {"z": 3.0}), "z") == 3.0


def test_fold_self_adds_the_nested_tangents_of_a_recursive_closure():
    inner = fn_tangent(x=1.0)
    outer = fn_tangent(x=2.0, self_=inner)
    folded = fold_self(outer, ("self_",))
    assert field(folded, "x") == 3.0 and field(folded, "self_") is None


def test_seq_adjoint_and_expand_shape_the_gradient_like_the_sequence():
    assert seq_adjoint((1, 2), [1.0, 2.0]) == (1.0, 2.0)
    assert seq_adjoint({"a": 1}, [1.0]) is None  # a dict's keys carry no gradient
    assert expand((1.0,), 3) == (1.0, None, None) and expand(None, 2) == (None, None)


def test_dict_key_refuses_a_float_key_and_accepts_labels():
    dict_key({}, "name", 1)
    dict_key({}, (1, "a"), 1)
    dict_key([0.0], 1.5, 1)  # not a dict: an index, not a key
    with pytest.raises(NotDifferentiableError, match="dict key"):
        dict_key({}, 1.5, 7)
