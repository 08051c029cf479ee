"""Rules of the run time's small helpers (templates like any primitive's) and of the
identity stores (the field store and the items handed over between caller and callee),
differentiated again for nested gradients.
"""
import numpy as np

from .. import emit, kinds
from ..errors import MutationError, NotDifferentiableError
from ..rules import lookup_primitive, lookup_user, nondifferentiable_builtin, primitive, special
from ..rules import scalar_adjoints as hs
from ..rules.numpy.constructors import np_item_adjoint, np_tolist_adjoint
from ..rules.numpy.base import filled, spread_fill
from ..rules.numpy.elementwise import np_float_power_base_partial, np_power_base_partial
from ..rules.numpy.reductions import _broadcast_view, acc_extremum_adjoint, np_extremum_adjoint, np_extremum_select, shifted_zeros
from ..rules.numpy.shape import np_item_of, np_pad_adjoint, np_repeat_adjoint, np_take_adjoint, np_take_along_axis_adjoint, np_tolist_of
from ..tangents import AbstractZero, Tangent, add, unthunk
from . import accumulate, dispatch, methods, mutation, numeric, objects, operators, project, protocols, resized, sites, structure, user_classes
from . import fields as store
from .rules_calls import _tangent_of_callee

_R = dict(kind="same")


# ----- small helpers: templates ------------------------------------------------------------
primitive(project.real, "v", "1", **_R)
primitive(project.scalar, "v", "1", **_R)
primitive(project.seed, "v", adjoints={"v": "g"}, kind="other")
primitive(project.re, "v", adjoints={"v": "_rt.real(g)"}, kind="real")
primitive(project.im, "v", adjoints={"v": "_rt.im_seed(g)"}, kind="real")
primitive(project.im_seed, "v", adjoints={"v": "_rt.im(g)"}, kind="complex")
primitive(project.conj, "v", adjoints={"v": "_rt.conj(g)"}, **_R)
primitive(project.neg, "v", adjoints={"v": "_rt.neg(g)"}, kind="other")
primitive(accumulate.acc, "a, b", adjoints={"a": "g", "b": "g"}, kind="other")
primitive(add, "a, b", adjoints={"a": "g", "b": "g"}, kind="other")  # (helpers call it)
primitive(project.unbroadcast, "v, like", adjoints={"v": "_rt.broadcast_like(g, v)"}, kind="other")
# what the tape keeps of an array read only for its shape: no gradient flows through it
primitive(numeric.shape_like, "v", None, kind="same")
# the copy kept before a change in place of a value with no gradient: the identity
primitive(mutation.snapshot, "v", adjoints={"v": "g"}, kind="same")
primitive(mutation.private, "v", adjoints={"v": "g"}, kind="same")
primitive(operators.in_place, "old, new, v, opname", adjoints={"new": "_rt.unbroadcast(g, new)"}, kind="other")
primitive(structure.part, "v, i", adjoints={"v": "_rt.part_adjoint(v, i, g)"}, kind="other")
primitive(structure.display_part, "t, entries, i", adjoints={"t": "_rt.display_part_adjoint(t, entries, i, g)"}, kind="other")
primitive(structure.display_part_adjoint, "t, entries, i, v", adjoints={"v": "_rt.display_part(g, entries, i)"}, kind="other")
primitive(structure.field, "v, name", adjoints={"v": "_rt.field_adjoint(name, g)"}, kind="other")
primitive(structure.field_adjoint, "name, v", adjoints={"v": "_rt.field(g, name)"}, kind="other")
primitive(accumulate.getitem_grad, "obj, idx, v", adjoints={"v": "_rt.part(g, idx)"}, kind="other")
primitive(project.dense, "v", adjoints={"v": "g"}, kind="other")
primitive(accumulate.acc_getitem_grad, "acc, obj, idx, v", adjoints={"acc": "g", "v": "_rt.part(g, idx)"}, kind="other")
primitive(
    accumulate.item_grad,
    "acc, seq, k, v",
    adjoints={"acc": "g", "v": "_rt.part(g, k)"},
    kind="other",
)
primitive(structure.seq, "v", adjoints={"v": "_rt.seq_adjoint(v, g)"}, kind="other")
# the items of a loop over a dict its body writes into, checked as they are handed out
primitive(resized.loop_writing, "items, obj, name", adjoints={"items": "g"}, kind="same")
# max/min's adjoint is linear in its gradient, with a transpose of its own (the positions
# of the extremum do not move under a small change: no gradient to a or ans)
# (`m` is the extremum: `ans` in a template means the helper's own result)
# (zeros: shifted_zeros(a - m, a, m), where a equals m: no gradient)
primitive(np_extremum_adjoint, "v, a, m, axis=None, keepdims=False, zeros=None",
          adjoints={"v": "_rt.np_extremum_select(g, a, m, axis, keepdims)"}, kind="other")
primitive(acc_extremum_adjoint, "acc, v, a, m, axis=None, keepdims=False, zeros=None",
          adjoints={"acc": "g", "v": "_rt.np_extremum_select(g, a, m, axis, keepdims)"}, kind="other")
primitive(np_extremum_select, "v, a, m, axis=None, keepdims=False",
          adjoints={"v": "_rt.np_extremum_adjoint(g, a, m, axis, keepdims)"}, kind="other")
# the reductions' adjoints spread g back over the input: a broadcast, summed back
primitive(spread_fill, "v, shape", adjoints={"v": "_rt.unbroadcast(g, v)"}, kind="array")
primitive(filled, "v, like", adjoints={"v": "_rt.unbroadcast(g, v)"}, kind="array")
primitive(_broadcast_view, "v, shape", adjoints={"v": "_rt.unbroadcast(g, v)"}, kind="array")
# the derivatives of powers, differentiated again: pow_scaled(a, p, c) = c·a**p keeps a zero
# coefficient zero at a == 0 to every order (the Hessian of x**0, x**1 at 0)
primitive(hs.pow_scaled, "a, p, c, n=0",
          "_rt.pow_scaled(a, p - 1, c * p, n) + _rt.pow_scaled(a, p - 1, c * n, n - 1)",
          "_rt.pow_scaled(a, p, c, n + 1)", "_rt.pow_scaled(a, p, 1, n)", None, kind="other")
primitive(hs.pow_base_partial, "a, b", "_rt.pow_scaled(a, b - 2, b * (b - 1))",
          "_rt.pow_base_partial_exp(a, b)", kind="other")  # complex for a < 0, b fractional
primitive(np_power_base_partial, "x1, x2", "_rt.pow_scaled(x1, x2 - 2, x2 * (x2 - 1))",
          "_rt.pow_base_partial_exp(x1, x2)", **_R)
primitive(np_float_power_base_partial, "x1, x2", "_rt.pow_scaled(x1, x2 - 2, x2 * (x2 - 1))",
          "_rt.pow_base_partial_exp(x1, x2)", **_R)
# a.item(...) and a.tolist(): their adjoints are linear in the gradient, with transposes
primitive(np_item_adjoint, "v, a, idx", adjoints={"v": "_rt.np_item_of(g, a, idx)"},
          kind="other")
primitive(np_item_of, "c, a, idx", adjoints={"c": "_rt.np_item_adjoint(g, a, idx)"},
          kind="other")
primitive(np_tolist_adjoint, "v, a", adjoints={"v": "_rt.np_tolist_of(g)"}, kind="other")
primitive(np_tolist_of, "c", adjoints={"c": "_rt.np_tolist_adjoint(g, c)"}, kind="other")
# the scatter-adds of take, take_along_axis and repeat (np.add.at has no rule): linear in
# the gradient, their transposes are the gathers themselves
primitive(np_take_adjoint, "v, a, indices, axis=None",
          adjoints={"v": "_rt.np_fit(np.take(g, indices, axis), v)"}, kind="other")
primitive(np_take_along_axis_adjoint, "v, arr, indices, axis=-1",
          adjoints={"v": "_rt.np_fit(np.take_along_axis(np.asarray(g), np.asarray(indices), axis), v)"},
          kind="other")
primitive(np_repeat_adjoint, "v, a, repeats, axis=None",
          adjoints={"v": "_rt.np_fit(np.repeat(g, repeats, axis), v)"}, kind="other")
# np.pad's adjoint adds the copies of edge/reflect/symmetric/wrap padding back with
# np.bincount (no rule); pad and its adjoint are each other's transposes
primitive(np_pad_adjoint, "v, array, pad_width, mode='constant'",
          adjoints={"v": "_rt.np_pad_transpose(g, pad_width, mode)"}, kind="other")
primitive(numeric.np_pad_transpose, "v, pad_width, mode='constant'",
          adjoints={"v": "_rt.np_pad_adjoint(g, v, pad_width, mode)"}, kind="other")
primitive(numeric.digamma, "x", "_rt.trigamma(x)")
primitive(numeric.trigamma, "x", "_rt.polygamma2(x)")
primitive(unthunk, "v", adjoints={"v": "g"}, kind="other")
primitive(store.rrule_seed, "v", adjoints={"v": "g"}, kind="other")
primitive(mutation.unextend, "b_lst, where, vs", adjoints={"b_lst": "_rt.unextend_adjoint(g, b_lst, where)"}, kind="other")
primitive(mutation.unappend, "b_lst, n", adjoints={"b_lst": "_rt.unappend_adjoint(g, b_lst, n)"}, kind="other")


primitive(mutation.uninsert, "b_lst, pos", adjoints={"b_lst": "_rt.uninsert_adjoint(g, b_lst, pos)"}, kind="other")


@special(hs._quiet)
def quiet_pair(fn, *args):
    """hs._quiet (NumPy's division warnings silenced around a call of fn) differentiated
    again, its `with` block around fn's pair and its pullback."""
    with np.errstate(divide="ignore", invalid="ignore"):
        y, pb = dispatch.call(fn, *args)

    def quiet_pullback(g):
        with np.errstate(divide="ignore", invalid="ignore"):
            return (None,) + tuple(pb(g))

    return y, quiet_pullback


@special(mutation.unpop)
def unpop_pair(b_lst, where, b_v):
    def unpop_pullback(g):  # linear in (b_lst, b_v)
        g_lst, g_v = mutation.unpop_adjoint(g, where)
        return (None, g_lst, None, g_v)

    return mutation.unpop(b_lst, where, b_v), unpop_pullback


@special(store.field_grad_if)
def field_grad_if_pair(moved, obj, name):
    if not moved:
        return None, lambda gg: (None, None, None, None)
    y, pb = take_field_grad_pair(obj, name)

    def field_grad_if_pullback(gg):
        pb(gg)
        return (None, None, None, None)

    return y, field_grad_if_pullback


@special(dispatch.set_field)
def set_field_pair(obj, name, value):
    dispatch.set_field(obj, name, value)

    def set_field_pullback(_):  # as `obj.name = value`: the field's gradient so far
        return (None, None, None, store.take_field_grad(obj, name))

    return None, set_field_pullback


@special(dispatch.instance_with_fields)
def instance_with_fields_pair(cls, names, values):
    obj = dispatch.instance_with_fields(cls, names, values)

    def instance_with_fields_pullback(g):
        g = unthunk(g)
        grads = [add(structure.field(g, name), store.take_field_grad(obj, name)) for name in names]
        return (None, None, None, grads)

    return obj, instance_with_fields_pullback


@special(structure.fold_self)
def fold_self_pair(g, names):
    def fold_self_pullback(gg):
        return (None, structure.fold_self_adjoint(gg, g, names), None)

    return structure.fold_self(g, names), fold_self_pullback


@special(store.move_grad)
def move_grad_pair(moved, a, b):
    def move_grad_pullback(g):  # linear in (a, b): the transpose of the move
        ga, gb = structure.part(g, 0), structure.part(g, 1)
        return (None, None, ga, ga if moved else gb)

    return store.move_grad(moved, a, b), move_grad_pullback


@special(structure.with_defaults)
def with_defaults_pair(df, names, grads):
    def with_defaults_pullback(g):
        parts = tuple(structure.field(g, n) for n in names)
        return (None, structure.without_fields(g, names), None, parts)

    return structure.with_defaults(df, names, grads), with_defaults_pullback


@special(structure.with_kw_defaults)
def with_kw_defaults_pair(df, kwgrads):
    names = tuple(kwgrads) if isinstance(kwgrads, dict) else ()

    def with_kw_defaults_pullback(g):
        parts = {n: structure.field(g, n) for n in names}
        return (None, structure.without_fields(g, names), parts)

    return structure.with_kw_defaults(df, kwgrads), with_kw_defaults_pullback


@special(emit.raw_pair_for)
def raw_pair_for_pair(fn, key):
    # the generated pair is bound to fn's captured cells and defaults (keyword calls
    # run it from _call_kw): its tangent goes back to fn when that is differentiated
    def raw_pair_for_pullback(g):
        return (None, _tangent_of_callee(g, fn), None)

    return emit.raw_pair_for(fn, key), raw_pair_for_pullback


@special(Tangent)
def tangent_constructor_pair(primal_type, *elements, **fields):
    def tangent_constructor_pullback(g):
        els = tuple(structure.part(g, i) if isinstance(g, Tangent) and g._elements else None for i in range(len(elements)))
        out = (None, None) + els
        return out + ({k: structure.field(g, k) for k in fields},) if fields else out

    return Tangent(primal_type, *elements, **fields), tangent_constructor_pullback


@special(structure.fn_tangent)
def fn_tangent_pair(**fields):
    def fn_tangent_pullback(g):
        return (None, {k: structure.field(g, k) for k in fields})

    return structure.fn_tangent(**fields), fn_tangent_pullback


primitive(structure.without_fields, "v, names", adjoints={"v": "_rt.without_fields(g, names)"}, kind="other")

# ----- the identity stores, differentiated again ------------------------------------------
#
# put_items(obj, v) ... take_items(obj) moves a tangent from a caller to a callee that
# mutates obj (and add_field_grad ... take_field_grad a field's gradient from a read to a
# write): a linear flow, v in, the same v out. Differentiating a pullback that does this
# reverses the flow. Each put that stored something opens a cell; the next take of the
# same object (and field) claims the open cells, and its pullback, which runs before
# theirs, fills them with the cotangent of what it took. A take whose pullback never runs
# (its result carried no gradient) leaves the cells empty: no contribution, correctly.
# Nothing outlives the closures that hold the cells.

_OPEN = {}  # (id(obj), field or None) -> [obj, [cells of the puts not yet taken]]


def _open_cell(obj, key):
    cell = [None]
    entry = _OPEN.get((id(obj), key))
    if entry is None or entry[0] is not obj:
        entry = _OPEN[(id(obj), key)] = [obj, []]
    entry[1].append(cell)
    return cell


def _claim_cells(obj, key):
    entry = _OPEN.pop((id(obj), key), None)
    return entry[1] if entry is not None and entry[0] is obj else []


def _fill(cells, gg):
    for cell in cells:
        cell[0] = gg


def _put_pair(put):
    """The rule of a put (put_items, hand_over): a stored tangent opens a cell that the
    matching take's pullback fills."""

    def put_pair(obj, v):
        kept = put(obj, v)
        cell = _open_cell(obj, None) if kept is None and v is not None else None

        def put_pullback(g):
            return (None, None, g if cell is None else cell[0])

        return kept, put_pullback

    return put_pair


special(store.put_items)(_put_pair(store.put_items))
special(mutation.hand_over)(_put_pair(mutation.hand_over))


@special(mutation.kept)
def kept_pair(a):
    v = mutation.kept(a)
    if v is not a:
        site = sites.user_call_site()
        where = f" (in `{site[0]}`, defined at {site[1]}, line {site[2]})" if site else ""
        raise MutationError(
            "a function that changes an array argument in place (`a op= v`) whose caller "
            f"reads it again{where} is differentiated once, not twice: return the array "
            "from the function and rebind it in the caller (`x = f(x, ...)`)"
        )
    return v, lambda g: (None, g)


@special(store.take_items)
def take_items_pair(obj):
    cells = _claim_cells(obj, None)

    def take_items_pullback(gg):
        _fill(cells, gg)
        return (None, None)

    return store.take_items(obj), take_items_pullback


@special(store.add_field_grad)
def add_field_grad_pair(obj, name, g):
    cell = _open_cell(obj, name)

    def add_field_grad_pullback(_):
        return (None, None, None, cell[0])

    return store.add_field_grad(obj, name, g), add_field_grad_pullback


@special(store.take_field_grad)
def take_field_grad_pair(obj, name):
    cells = _claim_cells(obj, name)

    def take_field_grad_pullback(gg):
        _fill(cells, gg)
        return (None, None, None)

    return store.take_field_grad(obj, name), take_field_grad_pullback


@special(store.setattr_grad)
def setattr_grad_pair(obj, name):
    """setattr_grad is take_field_grad (the written value's gradient leaves the store),
    with its refusals of a store the class takes over (user_classes.check_store) and of
    a store into an object a global holds (user_classes.check_global_field)."""
    if type(obj) not in user_classes.PLAIN_STORES:
        user_classes.check_store(obj, name)
    if user_classes.GENERATED_GLOBALS:
        user_classes.check_global_field(obj, name)
    if name == "__dict__":  # (`obj.__dict__[k] = v` written back: every field's, as a dict)
        return _fields_dict_grads_pair(obj)
    return take_field_grad_pair(obj, name)


def _fields_dict_grads_pair(obj):
    """setattr_grad(obj, "__dict__"), the dict of the fields' gradients, as the takes of
    each field: their cells get the cotangents of their entries."""
    takes = {k: take_field_grad_pair(obj, k) for k in list(store.field_names_of(obj))}
    y = {k: t[0] for k, t in takes.items() if t[0] is not None} or None

    def fields_dict_grads_pullback(gg):
        for k, t in takes.items():
            t[1](structure.part(gg, k) if isinstance(gg, dict) else None)
        return (None, None, None)

    return y, fields_dict_grads_pullback


@special(store._seed_fields)
def seed_fields_pair(obj, g):
    # a structural tangent put into the store field by field: an add_field_grad of each
    # field (a cell per field), whose pullback gathers the cotangents the takes of those
    # fields handed back into a cotangent of g (a constructor's pullback or a pullback's
    # seed, differentiated again, after with_fields made the tangent from the store)
    u = unthunk(g)
    if u is None or isinstance(u, AbstractZero):
        names = []
    elif isinstance(u, (Tangent, dict)):
        names = list(u._fields if isinstance(u, Tangent) else u)
    else:
        names = store.field_names_of(obj)
    cells = {name: _open_cell(obj, name) for name in names
             if structure.field(u, name) is not None and not isinstance(structure.field(u, name), AbstractZero)}
    store._seed_fields(obj, g)

    def seed_fields_pullback(_):
        back = {name: cell[0] for name, cell in cells.items() if cell[0] is not None}
        if not back:
            return (None, None, None)
        if isinstance(u, dict):
            return (None, None, back)
        return (None, None, Tangent(u.primal_type if isinstance(u, Tangent) else type(obj), **back))

    return None, seed_fields_pullback


@special(store.seed_result)
def seed_result_pair(v, result):
    # a mutable object's tangent goes into the field store (seed_fields' rule), anything
    # else passes through as by seed
    x = project.seed(v)
    if x is not None and store.is_mutable_object(result) and not isinstance(x, (list, tuple)):
        _, seed_back = seed_fields_pair(result, x)
        return None, lambda g: (None, seed_back(None)[2], None)
    return x, lambda g: (None, g, None)


def _taking_fields(obj, take):
    """(take(), its pullback) for take, a read of every field gradient of obj the store
    holds (the reads of obj.a put them there): a take of each field, whose pullback
    hands each put's cell the cotangent of its field, and the rest to the value added
    to them (the pullback's second slot)."""
    entry = store._FIELDS.get(id(obj)) if obj is not None else None
    names = list(entry[1]) if entry is not None and entry[0] is obj else []
    cells = {name: _claim_cells(obj, name) for name in names}

    def taking_fields_pullback(gg):
        for name, taken in cells.items():
            _fill(taken, structure.field(gg, name))
        return (None, gg, None)

    return take(), taking_fields_pullback


@special(store.with_fields)
def with_fields_pair(v, obj):
    # (a dataclass's constructor, differentiated again)
    return _taking_fields(obj, lambda: store.with_fields(v, obj))


@special(store.output_tangent)
def output_tangent_pair(v, y):
    # a rule's seed: v plus a mutable output's field gradients from the store. Before,
    # a primitive passed only v's cotangent back: a second derivative through a rule
    # returning a mutable object missed the fields'
    return _taking_fields(y if store.is_mutable_object(y) else None, lambda: store.output_tangent(v, y))


@special(store.drop_callee_fields)
def drop_callee_fields_pair(f):
    obj = getattr(f, "__self__", f)
    if store.is_mutable_object(obj):
        forget_fields_pair(obj)
    return None, lambda _: (None, None)


@special(store.forget_fields)
def forget_fields_pair(obj):
    # the fields' gradients end here: claim the puts' cells, and nothing flows into them
    fields = store.take_fields(obj)
    for name in fields or ():
        _claim_cells(obj, name)

    def forget_fields_pullback(_):
        return (None, None)

    return None, forget_fields_pullback


@special(protocols.loop_adjoint)
def loop_adjoint_pair(obj, g):
    # the items' pullbacks a loop over an object kept are a side channel, as the stores are
    raise NotDifferentiableError(
        f"a for loop over a {type(obj).__name__} (iterated by its own methods) is not "
        "differentiated twice: loop over list(obj) instead")


nondifferentiable_builtin(
    operators.complex_power,
    mutation.check_shared,
    mutation.check_held,
    protocols.check_unpack,
    protocols.refuse_read_again,
    structure.starred_len,
    structure.dict_key,
    structure.check_pair_keys,
    structure.mapping_grad,
    mutation.rebinding,
    mutation.replaced,
    user_classes.own_field,
    dispatch.field_names,
    store.changes_in_place,
    dispatch.new_instance,
    store.take_fields,
    dispatch._primitive_pair,
    dispatch._user_rule_pair,
    dispatch._constructor_pair,
    dispatch._function_pair,
    dispatch.rule_pair,
    dispatch._const_pair,
    methods._method_rule,
    lookup_user,
    lookup_primitive,
    store.is_mutable_object,
    dispatch.resolve,
    operators.number_pair,
    dispatch._hashable,
    kinds.kinds_of,
    kinds.keyword_call_key,
    kinds.cache_key,
    kinds.field_kinds,
    kinds.cell_kind,
    dispatch._takes_keywords,
    methods._method_rule,
    numeric.trunc_div,
    numeric.integral_dtype,
    emit.pair_for,
    emit.entry_for,
    emit.cache_key,
    methods._static,
    objects._class_hook,
    objects._own_getattribute,
    objects._through_getattribute,
    objects._computed,
    objects._super_found,
    protocols.user_object,
    protocols.has_objects,
    protocols._first_object,
    protocols.table_rule,
    protocols._python_method,
    protocols._own_iter,
    reason="it selects code, it does not compute with differentiable values",
)
nondifferentiable_builtin(shifted_zeros, reason="it gives where a - m is 0 (a boolean array), or None")


# NumPy's predicates and dtype/shape queries, written in Python: the run time's helpers call
# them inside pullbacks (np.issubdtype in the gradient of zip's and enumerate's items), and
# so does user code; their results are booleans, dtypes and shapes, never differentiable.
nondifferentiable_builtin(
    *[
        getattr(np, _name)
        for _name in (
            "issubdtype", "isdtype", "isscalar", "iterable", "broadcast_shapes", "can_cast",
            "promote_types", "min_scalar_type", "common_type", "mintypecode", "isfortran",
            "shares_memory", "may_share_memory",
        )
        if hasattr(np, _name)
    ],
    reason="it answers a question about types or shapes",
)
