"""A value that carries no gradient, changed in place after a statement whose pullback
reads it: the gradient must use the values that statement saw (issue 12's family: the
forward code makes such a change as Python does, so without a copy the pullback read
the new values, silently). Each case: the gradient against central differences, the
value against the plain call, and what the caller sees of its own arrays."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient


def setitem_after_read(x):
    a = np.ones(3)
    y = x * a
    a[0] = 5.0
    return np.sum(y * y)


def slice_write(x):
    a = np.ones(3)
    y = np.dot(x, a)
    a[:] = 7.0
    return y + np.sum(a)


def fill_after_read(x):
    a = np.ones(3)
    y = x * a
    a.fill(4.0)
    return np.sum(y) + np.sum(a * x)


def sort_after_read(x):
    a = np.array([3.0, 1.0, 2.0])
    y = x * a
    a.sort()
    return np.sum(y * np.array([1.0, 2.0, 3.0])) + np.sum(a * x)


def out_argument(x):
    a = np.ones(3)
    y = x * a
    np.multiply(a, 2.0, out=a)
    return np.sum(y * a)


def written_in_a_loop(x):
    a = np.ones(3)
    t = 0.0
    for i in range(3):
        t = t + np.sum(x * a)
        a[i] = 10.0
    return t


def view_read_by_the_pullback(x):
    a = np.ones(3)
    b = a[:2]
    y = x[:2] * b
    a[0] = 5.0
    return np.sum(y)


def list_changed_after_read(x):
    w = [1.0, 2.0, 3.0]
    y = np.dot(x, np.array(w))
    w.reverse()
    return y * np.dot(x, np.array(w))


def buffer_filled_in_a_loop(x):
    m = np.zeros(3)
    for i in range(3):
        if x[i] > 0.0:
            m[i] = 1.0
    return np.sum(x * x * m)


CASES = [setitem_after_read, slice_write, fill_after_read, sort_after_read, out_argument,
         written_in_a_loop, view_read_by_the_pullback, list_changed_after_read,
         buffer_filled_in_a_loop]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_the_pullback_reads_the_values_its_statement_saw(f):
    x = np.array([0.5, -1.5, 2.5])
    y, back = ad.pullback(f, x.copy())
    assert y == pytest.approx(f(x.copy()))
    (g,) = back(1.0)
    want = numerical_gradient(lambda z: f(z.copy()), x.copy())[0]
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-6)


def test_second_order_through_a_write_after_read():
    x = np.array([0.5, -1.5, 2.5])
    h = ad.hessian(setitem_after_read, x)
    np.testing.assert_allclose(h, 2.0 * np.eye(3), atol=1e-8)


def scaled_into(x, buf):
    y = x * buf
    buf[0] = 5.0
    return np.sum(y)


def test_a_parameter_without_gradient_written_in_place():
    x = np.array([0.5, -1.5, 2.5])
    buf = np.ones(3)
    g = ad.grad(scaled_into, argnums=0)(x, buf)
    np.testing.assert_allclose(g, np.ones(3))  # the values y = x * buf saw
    assert buf[0] == 1.0  # pullback never writes the caller's arguments (correctness.md)


def counted_into(x, idx):
    y = x * idx
    idx[1] = 7
    return np.sum(y)


def test_an_integer_array_argument_written_in_place():
    x = np.array([0.5, -1.5, 2.5])
    idx = np.array([1, 2, 3])
    (g,) = ad.gradient(counted_into, x, idx)[:1]
    np.testing.assert_allclose(g, [1.0, 2.0, 3.0])
    assert idx[1] == 2


def view_read_again(x):
    a = np.ones(3)
    b = a[:2]
    a[0] = 5.0
    return np.sum(x[:2] * b)  # b shows the write, as in Python


def test_a_view_read_after_the_write_shows_it_or_is_refused():
    x = np.array([0.5, -1.5, 2.5])
    try:
        y, back = ad.pullback(view_read_again, x.copy())
    except (ad.MutationError, ad.UnsupportedSyntaxError) as e:  # a refusal, not a stale view
        assert "`b`" in str(e)
        return
    assert y == pytest.approx(view_read_again(x.copy()))
    np.testing.assert_allclose(back(1.0)[0], [5.0, 1.0, 0.0])


def fill_buffer(buf):
    buf[0] = 5.0


def helper_writes_after_read(x):
    a = np.ones(3)
    y = x * a
    fill_buffer(a)  # a helper changes a in place, as Python shows it
    return np.sum(y) + np.sum(x * a)


def test_a_helper_writing_into_a_value_without_gradient():
    x = np.array([0.5, -1.5, 2.5])
    y, back = ad.pullback(helper_writes_after_read, x.copy())
    assert y == pytest.approx(helper_writes_after_read(x.copy()))
    want = numerical_gradient(lambda z: helper_writes_after_read(z.copy()), x.copy())[0]
    np.testing.assert_allclose(back(1.0)[0], want, rtol=1e-6, atol=1e-6)


def held_by_a_list(x):
    a = np.ones(3)
    box = [a]
    y = x * a
    a[0] = 5.0
    return np.sum(y) + box[0][0] * x[0]  # the list shows the write, as in Python


def test_an_array_a_list_also_holds_is_written_for_the_list_too():
    x = np.array([0.5, -1.5, 2.5])
    y, back = ad.pullback(held_by_a_list, x.copy())
    assert y == pytest.approx(held_by_a_list(x.copy()))
    want = numerical_gradient(lambda z: held_by_a_list(z.copy()), x.copy())[0]
    np.testing.assert_allclose(back(1.0)[0], want, rtol=1e-6, atol=1e-6)


def append_through_an_item(x):
    cols = [[]]
    for t in [x, 2.0 * x]:
        cols[0].append(t * t)
    return cols[0][0] + cols[0][1]


def append_through_a_name(x):
    d = {"a": []}
    c = d["a"]
    c.append(x * x)
    return d["a"][0]


class Box:
    def __init__(self):
        self.items = []


def append_through_a_field(x):
    b = Box()
    _kept(b)  # (passed on: it stays an object; made and read by field only, it is right)
    b.items.append(x * x)
    return b.items[0]


def _kept(obj):
    return obj


def append_through_a_field_of_a_local_object(x):
    b = Box()  # its field is the variable b_items (passes/local_objects.py)
    b.items.append(x * x)
    return b.items[0]


def test_a_field_of_a_local_object_is_a_variable():
    assert ad.gradient(append_through_a_field_of_a_local_object, 1.5)[0] == pytest.approx(3.0)


def test_a_list_appended_to_through_a_field_of_a_kept_object_is_followed():
    # (the object's field written makes the object active: tests/test_fields_of_held_objects.py)
    assert ad.gradient(append_through_a_field, 1.5)[0] == pytest.approx(3.0)


@pytest.mark.parametrize("f", [append_through_an_item, append_through_a_name], ids=lambda f: f.__name__)
@pytest.mark.usefixtures("containers_kept")
def test_a_container_changed_through_what_was_read_from_another_is_refused(f):
    # the gradient of what is read back through the outer container would not reach the
    # appended value (it was a silent zero): refused, naming both names and the line
    with pytest.raises(ad.UnsupportedSyntaxError, match=r"in place while `\w+` holds it"):
        ad.gradient(f, 1.5)


def built_first_then_stored(x):
    inner = []
    inner.append(x * x)
    cols = [inner]  # the way out the refusal names
    return cols[0][0]


def test_building_the_inner_container_first_is_the_way_out():
    assert ad.gradient(built_first_then_stored, 1.5)[0] == pytest.approx(3.0)
