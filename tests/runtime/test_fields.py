"""runtime/fields.py: the field store of mutable objects."""
from adjoint_s2s.runtime.fields import (
    _seed_fields, add_field_grad, forget_fields, is_mutable_object, take_field_grad,
    take_fields, with_fields,
)
from adjoint_s2s.runtime.structure import field


class Box:
    def __init__(self, v):
        self.v = v


def test_numbers_containers_and_functions_are_not_mutable_objects():
    assert is_mutable_object(Box(1.0))
    for v in (1.0, [1.0], {"a": 1}, (1,), "s", len, Box, None):
        assert not is_mutable_object(v)


def test_reads_add_up_and_a_write_takes_the_gradient_out():
    b = Box(1.0)
    add_field_grad(b, "v", 2.0)
    add_field_grad(b, "v", 3.0)
    assert take_field_grad(b, "v") == 5.0
    assert take_field_grad(b, "v") is None  # taken: the value written owns it
    forget_fields(b)


def test_seed_and_with_fields_move_a_structural_tangent_through_the_store():
    b = Box(1.0)
    _seed_fields(b, {"v": 4.0})
    g = with_fields(None, b)
    assert field(g, "v") == 4.0
    assert take_fields(b) in (None, {})
    forget_fields(b)
