"""Mutation inside differentiated code, against finite differences.

Every row of ``ROWS`` calls a function of ``mutation_funcs`` and checks three things:
the primal value under ``pullback`` is what Python computes; ``gradient`` leaves the
caller's arguments as they were; the gradient matches the numerical one (computed on
fresh copies of the arguments, so that functions writing into their arguments can be
differenced too). A float argument must get a float gradient: ``isapprox`` refuses a
gradient whose shape is not the argument's.

What adjoint_s2s does (docs/design.md, "Mutation"): subscript assignment ``a[i] = v`` on
arrays, lists and dicts is copy-on-write (``_rt.setitem`` rebinds the name to a new
container), so the caller's array, list or dict is never written by ``gradient``; an
array that only the generated code's variable refers to is written in place (the
``inplace_*`` rows try to defeat that: views, saved values, arguments);
``lst.append(v)`` happens in place, like Python, so an argument list grows; the other
mutating list methods have no rule and raise ``MissingAdjointError``.
"""
import copy

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import AdjointError, MissingAdjointError
from adjoint_s2s.passes import item_vars
from adjoint_s2s.testing import check_grads, isapprox, numerical_gradient

from . import mutation_funcs as M


def xfail(reason):
    return pytest.mark.xfail(strict=True, reason=reason)



def row(fn, *args, marks=(), id=None):
    return pytest.param(fn, args, marks=marks, id=id or fn.__name__)


X5 = np.array([0.7, -1.2, 0.4, 1.1, -0.3])
X6 = np.array([0.7, -1.2, 0.4, 1.1, -0.3, 0.9])
A33 = np.array([[0.5, -0.2, 0.9], [1.1, 0.3, -0.7], [-0.4, 0.8, 0.2]])
A32 = np.array([[0.5, -0.2], [1.1, 0.3], [-0.4, 0.8]])
W22 = np.array([[0.4, -0.3], [0.2, 0.5]])
V2 = np.array([0.8, -1.3])
V3 = np.array([0.8, -1.3, 0.6])

ROWS = [
    # ----- y[i] = v, y[a:b] = v, masks, index arrays, 2-d ------------------------------
    row(M.write_int_index, X5, 0.8),
    row(M.write_negative_index, X5, 0.8),
    row(M.write_slice, X5, V2, id="write_slice-array"),
    row(M.write_slice, X5, 0.8, id="write_slice-scalar"),
    row(M.write_slice_from_array, X5, 1.3),
    row(M.write_step_slice, X5, 0.8),
    row(M.write_bool_mask, X5, 0.8),
    row(M.write_bool_mask_scalar, X5, V2, id="write_bool_mask-array"),
    row(M.write_bool_mask_scalar, X5, 0.8, id="write_bool_mask-scalar"),
    row(M.write_index_array, X5, V3, id="write_index_array-array"),
    row(M.write_index_array, X5, 0.8, id="write_index_array-scalar"),
    row(M.write_index_list, X5, 0.8),
    row(M.write_broadcast_row, A32, V2),
    row(M.write_broadcast_matmul, A32, W22, V2),
    row(M.write_scalar_from_dot, X6[:3], V2),
    row(M.write_2d_element, A33, 0.8),
    row(M.write_2d_row, A33, V3, id="write_2d_row-array"),
    row(M.write_2d_row, A33, 0.8, id="write_2d_row-scalar"),
    row(M.write_2d_column, A33, V3, id="write_2d_column-array"),
    row(M.write_2d_column, A33, 0.8, id="write_2d_column-scalar"),
    row(M.write_2d_block, A33, 1.3),
    row(M.write_ellipsis, A33, V3, id="write_ellipsis-array"),
    row(M.write_ellipsis, A33, 0.8, id="write_ellipsis-scalar"),
    # ----- augmented writes ----------------------------------------------------------
    row(M.aug_add_index, X5, 0.8),
    row(M.aug_sub_slice, X5, 0.8),
    row(M.aug_mul_index, X5, 0.8),
    row(M.aug_div_mask, X5, 0.8),
    row(M.aug_mul_2d, A33, 0.8),
    row(M.aug_all_forms, X5, 0.8, 1.3),
    row(M.aug_whole_array, X5, 0.8),
    # ----- arrays made inside the function, writes in loops -----------------------------
    row(M.fill_zeros, X5, 0.8),
    row(M.callee_write_then_dead_writes, 0.8, X5),
    row(M.element_write_then_add_argument, X5, X5[::-1].copy()),
    row(M.fill_zeros_2d, V3),
    row(M.fill_zeros_loop, X5),
    row(M.fill_ones_like, X5, 0.8),
    row(M.cumulative_loop, X5),
    row(M.recurrence_rows, A32, W22),
    row(M.loop_aug_scatter, X6, 0.8),
    row(M.while_writes, X5),
    # ----- a write over a value read before ----------------------------------------------
    row(M.overwrite_after_read, X5, 0.8),
    row(M.overwrite_slice_after_read, X5, V2, id="overwrite_slice_after_read-array"),
    row(M.overwrite_slice_after_read, X5, 0.8, id="overwrite_slice_after_read-scalar"),
    row(M.overwrite_whole_read, X5, 0.8),
    row(M.overwrite_twice, X5, 0.8, 1.3),
    row(M.overwrite_in_place_update, X5),
    # ----- lists ---------------------------------------------------------------------
    row(M.list_setitem, 0.7, 1.3),
    row(M.list_setitem_negative, 0.7, 1.3),
    row(M.list_setitem_after_read, 0.7, 1.3),
    row(M.list_slice_assign, 0.7, 1.3),
    row(M.list_aug_setitem, 0.7, 1.3),
    row(M.list_of_arrays_setitem, X5, 1.3),
    row(M.list_append, 0.7, 1.3),
    row(M.list_append_loop, 0.7),
    row(M.list_append_negative_reads, 0.7, 1.3),
    row(M.list_append_arrays, X5),
    row(M.list_append_then_setitem, 0.7, 1.3),
    row(M.list_pop_assign_in_loop, 0.7),
    # ----- dicts ---------------------------------------------------------------------
    row(M.dict_setitem, 0.7, 1.3),
    row(M.dict_setitem_after_read, 0.7, 1.3),
    row(M.dict_aug_setitem, 0.7, 1.3),
    row(M.dict_fill_loop, 0.7),
    row(M.dict_of_arrays, X5, 1.3),
    # ----- writes into arguments (copy on write: the caller's value stays) ---------------
    row(M.mutate_arg_array, X5, 0.8),
    row(M.mutate_arg_array_aug, X5, 0.8),
    row(M.mutate_arg_array_read_before, X5, 0.8),
    row(M.mutate_arg_array_2d, A33, 0.8),
    row(M.mutate_arg_array_in_loop, X5),
    row(M.mutate_arg_list_setitem, [0.7, 1.2, -0.4], 0.8),
    row(M.mutate_arg_dict_setitem, {"a": 0.7, "b": 1.2}, 0.8),
    # ----- in-place writes (arrays that only the generated code holds) -------------------
    row(M.inplace_hidden_states, V3, 0.9),
    row(M.inplace_view_saved_then_written, V3),
    row(M.inplace_value_read_then_written, X5),
    row(M.inplace_transposed_view, V3),
    row(M.inplace_write_into_argument_copy, X5, 0.8),
]


# ----- helpers ----------------------------------------------------------------------------


def fresh(args):
    return copy.deepcopy(args)


def on_copies(fn):
    """fn called on copies of its arguments: finite differences of a function that writes
    into its arguments then see the same inputs at every evaluation."""

    def f(*args):
        return fn(*copy.deepcopy(args))

    return f


def same(a, b):
    """Exact structural equality of arguments (arrays by value, dtype and shape)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


# ----- the table ------------------------------------------------------------------------------


@pytest.fixture(params=["items as variables", "containers"])
def item_variables(request):
    """Both ways of a local list or dict used item by item at constant places: its items
    as variables (passes/item_vars.py), and the container's own copy-on-write code."""
    item_vars.ENABLED[0] = request.param == "items as variables"
    ad.refresh()
    yield
    item_vars.ENABLED[0] = True
    ad.refresh()


@pytest.mark.parametrize("fn, args", ROWS)
def test_mutation(fn, args, item_variables):
    y, _ = ad.pullback(fn, *fresh(args))
    want_y = fn(*fresh(args))
    assert isapprox(y, want_y, rtol=1e-12, atol=1e-12), f"primal {y!r}, Python gives {want_y!r}"

    mine = fresh(args)
    got = ad.gradient(fn, *mine)
    for a, before in zip(mine, args):
        assert same(a, before), f"gradient changed the caller's argument: {before!r} -> {a!r}"

    want = numerical_gradient(on_copies(fn), *fresh(args))
    assert len(got) == len(args)
    for i, (g, w) in enumerate(zip(got, want)):
        assert isapprox(g, w, rtol=1e-6, atol=1e-8), f"argument {i}: got {g!r}, want {w!r}"


def test_rows_cover_the_table():
    assert len(ROWS) >= 60


# ----- check_grads on functions that do not write into their arguments ---------------------


@pytest.mark.parametrize("fn, args", [
    (M.write_2d_block, (A33, 1.3)),
    (M.recurrence_rows, (A32, W22)),
    (M.overwrite_twice, (X5, 0.8, 1.3)),
    (M.list_append_negative_reads, (0.7, 1.3)),
    (M.dict_fill_loop, (0.7,)),
], ids=lambda v: getattr(v, "__name__", None))
def test_check_grads_accepts(fn, args):
    got = check_grads(fn, *args)
    assert len(got) == len(args)


# ----- writes into arguments --------------------------------------------------------------


@pytest.mark.parametrize("fn, args", [
    (M.mutate_arg_array, (X5, 0.8)),
    (M.mutate_arg_array_aug, (X5, 0.8)),
    (M.mutate_arg_array_read_before, (X5, 0.8)),
    (M.mutate_arg_array_2d, (A33, 0.8)),
    (M.mutate_arg_array_in_loop, (X5,)),
    (M.mutate_arg_list_setitem, ([0.7, 1.2, -0.4], 0.8)),
    (M.mutate_arg_dict_setitem, ({"a": 0.7, "b": 1.2}, 0.8)),
], ids=lambda v: getattr(v, "__name__", None))
def test_subscript_write_leaves_caller_intact(fn, args):
    # Python writes into the caller's container ...
    called = fresh(args)
    fn(*called)
    assert not same(called[0], args[0])
    # ... gradient and pullback do not (copy on write), and give Python's value
    mine = fresh(args)
    y, back = ad.pullback(fn, *mine)
    assert same(mine[0], args[0])
    back(1.0)
    assert same(mine[0], args[0])
    ad.gradient(fn, *mine)
    assert same(mine[0], args[0])
    assert isapprox(y, fn(*fresh(args)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn, args, callee, param", [
    (M.callee_writes_array_caller_reads, (X5, 0.8), "_fill_first", "a"),
    (M.callee_writes_list_caller_reads, (0.7, 0.8), "_fill_first", "a"),
    (M.callee_writes_deeper_caller_reads, (X5, 0.8), "_fill_through", "a"),
    (M.callee_writes_inside_loop_caller_reads, (X5, 0.8), "_fill_first", "a"),
], ids=lambda v: getattr(v, "__name__", None))
def test_callee_writing_into_what_its_caller_reads_again(fn, args, callee, param):
    """Copy on write gives the callee's parameter a new container; call_keeping hands it
    back and the caller binds its variable to it (`y = _rt.kept(y)`), as Python shows the
    write, and hands the gradient of it over to the callee's pullback. Differentiated
    twice: a clear error naming the way out, not a wrong value."""
    y, _ = ad.pullback(fn, *fresh(args))
    assert isapprox(y, fn(*fresh(args)), rtol=1e-12, atol=1e-12)
    mine = fresh(args)
    got = ad.gradient(fn, *mine)
    for a, b in zip(mine, args):
        assert isapprox(a, b, rtol=0, atol=0)  # the inputs are not changed
    want = numerical_gradient(on_copies(fn), *fresh(args))
    for g, w in zip(got, want):
        assert isapprox(g, w, rtol=1e-6, atol=1e-8)
    with pytest.raises(ad.MutationError) as info:
        ad.gradient(lambda *a: np.sum(ad.gradient(fn, *a)[0]), *fresh(args))
    assert "rebind it in the caller" in str(info.value)


@pytest.mark.parametrize("fn, args, callee, param", [
    (M.method_writes_array_caller_reads, (X5, 0.8), "fill_first", "a"),
    (M.callee_writes_array_caller_reads_through_alias, (X5, 0.8), "_fill_first", "a"),
], ids=lambda v: getattr(v, "__name__", None))
def test_callee_writing_into_what_its_caller_reads_again_is_an_error(fn, args, callee, param):
    """A method's argument, or the container read again through another name: a clear
    error naming the function and its argument, not a wrong value."""
    with pytest.raises(ad.MutationError) as info:
        ad.gradient(fn, *fresh(args))
    msg = str(info.value)
    assert f"{callee} (" in msg and f"argument `{param}`" in msg and "mutation_funcs.py" in msg
    with pytest.raises(ad.MutationError):  # the same through pullback, and twice in a row
        ad.pullback(fn, *fresh(args))


@pytest.mark.parametrize("fn, args", [
    (M.callee_writes_and_caller_rebinds, (X5,)),
    (M.callee_writes_what_caller_drops, (X5, 0.8)),
    (M.callee_reads_what_caller_reads, (X5, V3[:1] * X5)),
], ids=lambda v: getattr(v, "__name__", None))
def test_callee_writes_the_caller_cannot_see_are_differentiated(fn, args):
    y, _ = ad.pullback(fn, *fresh(args))
    assert isapprox(y, fn(*fresh(args)), rtol=1e-12, atol=1e-12)
    got = ad.gradient(fn, *fresh(args))
    want = numerical_gradient(on_copies(fn), *fresh(args))
    for g, w in zip(got, want):
        assert isapprox(g, w, rtol=1e-6, atol=1e-8)
    # and again, one order up: the rule of call_keeping
    u = [np.random.default_rng(5).standard_normal(np.shape(a)) for a in args]

    def directional(*xs):
        return sum(np.sum(g * d) for g, d in zip(ad.gradient(fn, *xs), u))

    got2 = ad.gradient(directional, *fresh(args))
    want2 = numerical_gradient(directional, *fresh(args))
    for g, w in zip(got2, want2):
        assert isapprox(g, w, rtol=1e-5, atol=1e-7)


def test_a_caller_that_reads_an_argument_again_calls_through_call_keeping():
    from adjoint_s2s import emit, runtime
    from adjoint_s2s.passes import inline

    inline.ENABLED[0] = False  # _weighted would be inlined (passes/inline.py): keep its call
    ad.refresh()
    try:
        text = emit.source_of(M.callee_reads_what_caller_reads,
                              runtime.kinds_of((X5, X5))).source
        assert "_rt.call_keeping((0,), _weighted, y, w)" in text
        text = emit.source_of(M.callee_writes_what_caller_drops, runtime.kinds_of((X5, 0.8))).source
        assert "call_keeping" not in text
    finally:
        inline.ENABLED[0] = True
        ad.refresh()
    text = emit.source_of(M.callee_reads_what_caller_reads, runtime.kinds_of((X5, X5))).source
    assert "# (inlined _weighted)" in text
    args = (X5, X5 + 0.5)
    got = ad.gradient(M.callee_reads_what_caller_reads, *fresh(args))
    want = numerical_gradient(M.callee_reads_what_caller_reads, *fresh(args))
    for g, w in zip(got, want):
        assert isapprox(g, w, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn, args", [
    (M.overwrite_through_alias, (X5, 0.8)),
    (M.list_write_through_alias, (0.7, 1.3)),
], ids=lambda v: getattr(v, "__name__", None))
def test_a_write_through_one_name_shows_through_the_other(fn, args):
    """`z = y; y[0] = v`: copy on write gives y a new container, and z, surely the same
    object, is bound to it again, as Python shows the write through both names; its
    gradient joins y's before the write is reversed. (tests/test_aliasing.py has more.)"""
    y, _ = ad.pullback(fn, *fresh(args))
    assert isapprox(y, fn(*fresh(args)), rtol=1e-12, atol=1e-12)
    check_grads(fn, *fresh(args))


@pytest.mark.parametrize("fn, args, written, alias, line", [
    (M.overwrite_through_view, (X5, 0.8), "y", "z", "y[1] = v"),
    (M.overwrite_through_transpose, (A33, 0.8), "y", "z", "y[0, 1] = v"),
], ids=lambda v: getattr(v, "__name__", None))
def test_a_write_another_name_would_have_to_show_is_an_error(fn, args, written, alias, line):
    """Copy on write gives the written name the new container; a view of it would keep
    the old values, where Python shows the write through both: refused at transform
    time, with the line and the way out."""
    import inspect

    with pytest.raises(ad.UnsupportedSyntaxError) as info:
        ad.gradient(fn, *fresh(args))
    msg = str(info.value)
    lines, first = inspect.getsourcelines(fn)
    lineno = first + next(i for i, t in enumerate(lines) if t.strip() == line)
    assert f"`{written}` while `{alias}`" in msg and f"line {lineno}" in msg
    assert f"{alias} = {written}.copy()" in msg


def test_an_alias_that_ends_before_the_write_is_not_an_error():
    got = check_grads(M.alias_rebound_before_write, X5, 0.8)
    assert len(got) == 2


@pytest.mark.parametrize("fn, args, name, where", [
    (M.write_into_global, (X5, 0.8), "_BUFFER", "a global"),
    (M.write_into_captured, (X5, 0.8), "y", "captured from an enclosing function"),
], ids=lambda v: getattr(v, "__name__", None))
def test_writing_a_differentiated_value_into_a_global_or_captured_container_is_an_error(
        fn, args, name, where):
    with pytest.raises(ad.UnsupportedSyntaxError) as info:
        ad.gradient(fn, *fresh(args))
    msg = str(info.value)
    assert f"into `{name}` ({where})" in msg and "mutation_funcs.py, line" in msg


@pytest.mark.parametrize("fn, args", [
    (M.write_through_attribute, (X5, 0.8)),
    (M.augmented_write_through_attribute, (X5, 0.8)),
    (M.write_into_nested_list, (0.7, 1.3)),
    (M.write_into_row_of_dict, (X5, 0.8)),
], ids=lambda v: getattr(v, "__name__", None))
def test_writes_through_attributes_and_items_show_where_python_shows_them(fn, args):
    """`b.data[0] = v`, `m[i][j] = v`: the copy is written back into the attribute or the
    outer container."""
    y, _ = ad.pullback(fn, *fresh(args))
    assert isapprox(y, fn(*fresh(args)), rtol=1e-12, atol=1e-12)
    got = ad.gradient(fn, *fresh(args))
    want = numerical_gradient(on_copies(fn), *fresh(args))
    for g, w in zip(got, want):
        assert isapprox(g, w, rtol=1e-6, atol=1e-8), (got, want)


def test_a_method_writing_into_what_its_caller_reads_again_is_an_error():
    with pytest.raises(ad.MutationError, match=r"Filler.fill .*argument `arr`"):
        ad.gradient(M.method_writes_caller_reads, X5, 0.8)


def test_subscript_write_keeps_the_caller_array_object():
    x = X5.copy()
    x_id, x_data = id(x), x.ctypes.data
    g, _ = ad.gradient(M.mutate_arg_array, x, 0.8)
    assert id(x) == x_id and x.ctypes.data == x_data
    assert same(x, X5)
    assert g is not x


def test_append_to_argument_list_mutates_like_python():
    xs = [0.7, 1.2]
    g_xs, g_v = ad.gradient(M.mutate_arg_list_append, xs, 0.8)
    # append runs in place: the caller's list has grown as a Python call would leave it
    python = [0.7, 1.2]
    M.mutate_arg_list_append(python, 0.8)
    assert xs == python == [0.7, 1.2, 0.8 * 0.8]
    # the gradient for the original items is right; the item appended (not part of the
    # argument as given) gets no gradient: it is absent, None or zero
    want_xs, want_v = numerical_gradient(on_copies(M.mutate_arg_list_append), [0.7, 1.2], 0.8)
    assert isapprox(list(g_xs[:2]), want_xs, rtol=1e-6, atol=1e-8)
    assert all(isapprox(extra, 0.0) for extra in g_xs[2:])
    assert isapprox(g_v, want_v, rtol=1e-6, atol=1e-8)
    # a second call appends again
    ad.gradient(M.mutate_arg_list_append, xs, 0.8)
    assert len(xs) == 4


def test_append_to_local_list_does_not_leak():
    # lists built inside the function are new at every call: two gradients agree
    a = ad.gradient(M.list_append_loop, 0.7)
    b = ad.gradient(M.list_append_loop, 0.7)
    assert a == b


# ----- mutating list methods: extend, pop, insert (in place, like Python) -----------------


@pytest.mark.parametrize("fn, args", [
    (M.list_extend, (0.7, 1.3)),
    (M.list_pop, (0.7, 1.3)),
    (M.list_pop_index, (0.7, 1.3)),
    (M.list_insert, (0.7, 1.3)),
    (M.list_extend_arg, ([0.7, 1.2], 1.3)),
    (M.list_pop_arg, ([0.7, 1.2],)),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_list_methods_extend_pop_insert(fn, args):
    got = ad.gradient(fn, *fresh(args))
    want = numerical_gradient(fn, *fresh(args))
    for g, w in zip(got, want):
        assert isapprox(g, w, rtol=1e-6, atol=1e-8), (got, want)


# ----- in-place writes -------------------------------------------------------------------------


def test_private_array_is_written_in_place_and_shared_one_is_copied():
    from adjoint_s2s import runtime

    def private():
        H = np.zeros(3)
        first = id(H)
        H = runtime.setitem(H, 1, 2.0)
        return first == id(H), H

    def aliased():
        H = np.zeros(3)
        G = H
        H = runtime.setitem(H, 1, 2.0)
        return G is H, G, H

    same_object, H = private()
    assert same_object and H[1] == 2.0
    same_object, G, H = aliased()
    assert not same_object and G[1] == 0.0 and H[1] == 2.0
    view_base = np.zeros(4)
    view = view_base[1:]
    written = runtime.setitem(view, 0, 5.0)  # a view: its base may be seen elsewhere
    assert written is not view and view_base[1] == 0.0


def test_accumulator_is_added_to_in_place_only_when_private():
    from adjoint_s2s import runtime

    def private():
        b = np.ones(3)
        first = id(b)
        b = runtime.acc(b, np.full(3, 2.0))
        return first == id(b), b

    def shared():
        b = np.ones(3)
        seen = b
        b = runtime.acc(b, np.full(3, 2.0))
        return seen is b, seen, b

    def shared_with_temporary():  # the temporary contribution takes the sum
        b = np.ones(3)
        seen = b
        b = runtime.acc(b, np.full(3, 2.0))
        return seen, b

    def shared_with_variable():  # a contribution some variable holds is left alone
        b = np.ones(3)
        seen = b
        part = np.full(3, 2.0)
        b = runtime.acc(b, part)
        return seen, part, b

    same_object, b = private()
    assert same_object and np.array_equal(b, [3.0, 3.0, 3.0])
    same_object, seen, b = shared()
    assert not same_object and np.array_equal(seen, [1.0, 1.0, 1.0])
    assert np.array_equal(b, [3.0, 3.0, 3.0])
    seen, b = shared_with_temporary()
    assert np.array_equal(seen, [1.0, 1.0, 1.0]) and np.array_equal(b, [3.0, 3.0, 3.0])
    seen, part, b = shared_with_variable()
    assert np.array_equal(seen, [1.0, 1.0, 1.0]) and np.array_equal(part, [2.0, 2.0, 2.0])
    assert np.array_equal(b, [3.0, 3.0, 3.0]) and b is not part


@pytest.mark.parametrize(
    "gshape, lshape",
    [((7, 5), (7, 1)), ((4, 3, 6), (4, 1, 1)), ((4, 3, 6), (4, 3, 1)), ((4, 3, 6), (1, 3, 1)),
     ((2, 5), (1, 1)), ((6, 1, 3), (6, 1, 1))],
)
def test_unbroadcast_sums_trailing_axes_like_numpy(gshape, lshape):
    """unbroadcast's matrix-vector path for row sums agrees with NumPy's sum."""
    from adjoint_s2s import runtime

    g = np.random.default_rng(3).standard_normal(gshape)
    like = np.zeros(lshape)
    axes = tuple(i for i, n in enumerate(lshape) if n == 1 and gshape[i] != 1)
    out = runtime.unbroadcast(g, like)
    assert out.shape == lshape and out.dtype == g.dtype
    np.testing.assert_allclose(out, g.sum(axis=axes, keepdims=True), rtol=1e-13, atol=1e-13)


def test_hidden_states_are_not_saved_on_the_tape():
    """The pullback reads H only for its shape: the forward pass keeps no old copies."""
    from adjoint_s2s import emit, runtime

    x = np.array([0.3, -0.8, 0.5])
    text = emit.source_of(M.inplace_hidden_states, runtime.kinds_of((x, 0.9))).source
    assert "H = _rt.setitem(H, t, h)" in text
    assert "append(H)" not in text and "H = _tape" not in text


def test_in_place_pullback_can_run_twice():
    x = np.array([0.3, -0.8, 0.5])
    _, back = ad.pullback(M.inplace_hidden_states, x, 0.9)
    first = back(1.0)
    second = back(1.0)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


# ----- second order: writes differentiated again ------------------------------------------


def _numeric(a):
    return isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")


SECOND_ORDER = [
    p for p in ROWS
    if all(_numeric(a) for a in p.values[1]) and not p.marks
    and not p.values[0].__name__.startswith(("mutate_arg", "inplace_write_into_argument"))
]


@pytest.mark.parametrize("fn, args", SECOND_ORDER)
def test_second_order_hessian_vector_products(fn, args):
    """d/dx <∇f(x), u> (nested gradient) against central differences of <∇f(x), u>."""
    rng = np.random.default_rng(7)
    dirs = [rng.standard_normal(np.shape(a)) for a in args]

    def directional(*xs):
        grads = ad.gradient(fn, *xs)
        return sum(np.sum(np.asarray(0.0 if g is None else g) * u) for g, u in zip(grads, dirs))

    got = ad.gradient(directional, *fresh(args))
    want = numerical_gradient(directional, *fresh(args))
    for i, (g, w) in enumerate(zip(got, want)):
        g = 0.0 * np.asarray(w) if g is None else g
        assert isapprox(g, w, rtol=1e-5, atol=1e-7), f"argument {i}: got {g!r}, want {w!r}"


@pytest.mark.parametrize("x", [0.7, -0.7])
def test_second_derivative_when_a_write_happens_on_one_branch_only(x):
    """The written array's cotangent is zero on the path that rebinds it: the rule for
    setitem_grad took its structure from that zero (found by `make stress`)."""
    f = M.written_on_one_branch_rebound_on_the_other
    v = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    w = v[::-1].copy()

    def dx(x, v, w):
        return ad.gradient(f, x, v, w)[0]

    got = ad.gradient(dx, x, v, w)
    want = numerical_gradient(dx, x, v, w)
    for g, n in zip(got, want):
        np.testing.assert_allclose(0.0 if g is None else g, n, rtol=1e-6, atol=1e-7)


def test_views_and_aliases_written_directly_are_refused():
    with pytest.raises(ad.UnsupportedSyntaxError, match="view of it"):
        ad.gradient(M.written_through_a_view_name, np.array([0.3, -1.2, 0.7]))


def test_helper_writing_while_a_view_is_read_is_refused():
    """The callee's write goes to a copy, which the view taken before the call would not
    show (Python's would): a MutationError naming the view, not a wrong value."""
    v = np.array([0.3, -1.2, 0.7, 0.1])
    with pytest.raises(ad.MutationError, match="through `view`, another name for it or a view"):
        ad.pullback(M.helper_writes_while_a_view_is_read, v)


def test_a_view_on_one_path_only_is_checked_when_it_runs():
    f = M.view_rebound_on_one_branch
    v = np.array([0.3, -1.2, 0.7, 0.1, 0.5])
    y, back = ad.pullback(f, v, 0.8)  # z was rebound: nothing shares a
    assert y == pytest.approx(f(v.copy(), 0.8))
    for got, want in zip(back(1.0), numerical_gradient(f, v, 0.8)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(ad.MutationError, match="`z` would keep the old values"):
        ad.pullback(f, v, -0.8)  # z is still a view of a


def test_helper_writing_while_a_view_is_not_read_again():
    """The same call with the view no longer read afterwards is fine."""
    v = np.array([0.3, -1.2, 0.7, 0.1])
    f = M.helper_writes_after_the_view_is_read
    y, back = ad.pullback(f, v)
    assert y == pytest.approx(f(v.copy()))
    np.testing.assert_allclose(back(1.0)[0], numerical_gradient(f, v)[0], rtol=1e-6)
