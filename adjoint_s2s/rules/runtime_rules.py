"""Rules for adjoint_s2s's own run-time helpers: what makes nested gradients work.

Generated pullbacks are ordinary Python; differentiating a function that calls
``gradient`` differentiates them again (reverse over reverse, as Zygote does). They call
``_rt`` helpers: the dispatch entry points get a rule that differentiates the first-order
pair itself; the small helpers get templates like any primitive.
"""
import functools
import types

import numpy as np

from .. import emit
from .. import runtime as rt
from ..tangents import AbstractZero, Tangent, add, unthunk
from . import NONDIFF, SPECIAL, lookup_primitive, lookup_user, nondifferentiable_builtin, primitive, special
from .helpers_numpy import np_index_trick_check, np_index_trick_range, np_index_trick_rule

_R = dict(kind="same")


# ----- dispatch: differentiate the pair function that a call would run ---------------------


def first_order_pair(f, args, has_kwargs):
    """The Python function that ``rt.call(f, ...)`` runs (something with source)."""
    nargs = len(args)
    if has_kwargs:
        return lambda *args, **kwargs: rt._call_kw(f, args, kwargs)
    if type(f) is types.FunctionType:
        rule = lookup_user(f)
        if rule is not None:
            return rt._user_rule_pair(rule)
        if f in SPECIAL:
            return SPECIAL[f]
        prim = lookup_primitive(f, nargs)
        if prim is not None:
            return rt._primitive_pair(prim)
        if f in NONDIFF:
            return rt._const_pair(f)
        return emit.pair_for(f, emit.cache_key(f, rt.kinds_of(args)), nargs)
    return rt.resolve(f, nargs)


def _tangent_of_callee(d_inner, f):
    """Map the tangent of the pair function back to a tangent of f (its captured cells)."""
    if d_inner is None or isinstance(d_inner, AbstractZero):
        return None
    if not isinstance(d_inner, Tangent):
        return None
    inner_pair = d_inner._fields.get("pair")
    if isinstance(inner_pair, Tangent):  # a trimmed pair: look inside
        d_inner = inner_pair
    if isinstance(f, functools.partial):  # runtime._partial_pair's cells: fn, bound, keywords
        cells = d_inner._fields
        func, bound, kw = cells.get("fn"), cells.get("bound"), cells.get("keywords")
        if func is None and bound is None and not kw:
            return None
        bound = tuple(bound) if bound is not None else (None,) * len(f.args)
        return Tangent(functools.partial, func=func, args=bound, keywords=dict(kw or {}))
    own = _own_cell(f)
    if own is not None:  # a bound method, a callable object: its tangent is its object's
        return d_inner._fields.get(own)
    code = getattr(f, "__code__", None)
    keep = set(getattr(code, "co_freevars", ()))
    defaults = getattr(f, "__defaults__", None) or ()
    if code is not None and defaults:  # parameters that took a default value
        npos = code.co_argcount
        keep |= set(code.co_varnames[npos - len(defaults) : npos])
    keep |= set(getattr(f, "__kwdefaults__", None) or ())
    fields = {k: v for k, v in d_inner._fields.items() if k in keep}
    return rt.fn_tangent(**fields) if fields else None


def _own_cell(f):
    """The cell of runtime.resolve's pair that holds f's object: `obj` for a bound method
    (bound_method_pair), `f` for a callable object (callable_object_pair); None for a
    function (whose tangent is its captured cells)."""
    if isinstance(f, types.MethodType) and type(f.__func__) is types.FunctionType:
        return "obj"
    if not isinstance(f, (types.FunctionType, types.BuiltinFunctionType, type)) and isinstance(
        getattr(type(f), "__call__", None), types.FunctionType
    ):
        return "f"
    return None


@special(_tangent_of_callee)
def tangent_of_callee_pair(d_inner, f):
    # a selection of fields: its adjoint puts the fields back where they came from
    nested = isinstance(d_inner, Tangent) and isinstance(d_inner._fields.get("pair"), Tangent)
    own = _own_cell(f)

    def tangent_of_callee_pullback(g):
        if g is None or isinstance(g, AbstractZero):
            return (None, None, None)
        if own is not None:
            g = Tangent(types.FunctionType, **{own: g})
        back = Tangent(types.FunctionType, pair=g) if nested else g
        return (None, back, None)

    return _tangent_of_callee(d_inner, f), tangent_of_callee_pullback


@special(first_order_pair)
def first_order_pair_pair(f, args, has_kwargs):
    # the pair function is bound to f's captured cells and defaults: when call_pair is
    # itself differentiated (a third level), the tangent of that pair goes back to f
    pair = first_order_pair(f, args, has_kwargs)

    def first_order_pair_pullback(g):
        if has_kwargs:  # the keyword pair captures f itself
            return (None, rt.field(g, "f"), None, None)
        return (None, _tangent_of_callee(g, f), None, None)

    return pair, first_order_pair_pullback


@special(rt.call)
def call_pair(f, /, *args, **kwargs):
    inner = first_order_pair(f, args, bool(kwargs))
    res, outer_pb = rt.call(inner, *args, **kwargs)

    def call_pullback(g):
        grads = outer_pb(g)
        if kwargs:  # the keyword pair captures f itself: its field is f's tangent
            return (None, rt.field(grads[0], "f")) + tuple(grads[1:])
        return (None, _tangent_of_callee(grads[0], f)) + tuple(grads[1:])

    return res, call_pullback


@special(rt.setitem_grad_acc)
def setitem_grad_acc_pair(b_new, old, idx, v, acc_):
    # differentiated again: setitem_grad's rule, then acc's
    (b_old, g_v), setitem_back = setitem_grad_pair(b_new, old, idx, v)
    total, acc_back = rt.call(rt.acc, acc_, g_v)

    def setitem_grad_acc_pullback(g):
        c_old, c_total = rt.part(g, 0), rt.part(g, 1)
        _, c_acc, c_gv = acc_back(c_total)
        c_new = setitem_back((c_old, c_gv))[1]
        return (None, c_new, None, None, None, c_acc)

    return (b_old, total), setitem_grad_acc_pullback


@special(rt.getitem_grad_sparse)
def getitem_grad_sparse_pair(obj, idx, v):
    # differentiated (a pullback under a nested gradient), the scatter is written out:
    # a Scattered is for first-order pullbacks, whose every reader passes/sparse.py knows
    return rt.call(rt.getitem_grad, obj, idx, v)


# lookups are piecewise constant in their key: no gradient to it
_LOOKUP_TYPES = (list, tuple, dict, str, bytes, range, np.ndarray, types.MappingProxyType)


@special(rt.index_get)
def index_get_pair(obj, is_tuple, *keys):
    """obj[key] where the key depends on the inputs: NumPy's index tricks (np.r_, np.c_)
    by their rule, plain lookups with no gradient to the key, any other __getitem__
    differentiated as a call (its source, or its rule; a clear refusal without either)."""
    n = len(keys)
    key = keys if is_tuple else keys[0]
    trick = np_index_trick_rule(obj)
    if trick is not None:
        y, pb = rt.call(trick, *keys)
        np_index_trick_check(obj, keys, y)
        return y, lambda g: (None, None, None) + tuple(pb(g)[1:])
    if isinstance(obj, _LOOKUP_TYPES):
        return obj[key], lambda g: (None,) * (n + 3)
    method = getattr(type(obj), "__getitem__", None)
    if method is None:
        raise TypeError(f"'{type(obj).__name__}' object is not subscriptable")
    y, pb = rt.call(method, obj, key)

    def index_get_pullback(g):
        grads = pb(g)
        d_obj, d_key = grads[1], grads[2]
        if not is_tuple:
            return (None, d_obj, None, d_key)
        return (None, d_obj, None) + tuple(rt.part(d_key, i) for i in range(n))

    return y, index_get_pullback


nondifferentiable_builtin(
    np_index_trick_rule, np_index_trick_check, np_index_trick_range,
    reason="it selects or checks code, or builds a constant range",
)


@special(rt.np_parts)
def np_parts_pair(g, n):
    """The entries of a tuple output's adjoint (what the adjoints of slogdet, eigh, svd,
    qr... read first), differentiated again: the cotangents of the entries go back into
    the structure g came in (a Tangent of the named tuple, a tuple, a bare array), so the
    second derivative with respect to the first-order cotangent is not lost."""
    out = rt.np_parts(g, n)

    def np_parts_pullback(c):
        cs = [rt.part(c, i) for i in range(n)]
        return (None, _like_parts(g, cs), None)

    return out, np_parts_pullback


def _like_parts(g, cs):
    if g is None or isinstance(g, AbstractZero) or all(c is None for c in cs):
        return None
    g = unthunk(g)
    if isinstance(g, Tangent):
        if g._elements:
            return Tangent(g.primal_type, *cs[: len(g._elements)])
        names = getattr(g.primal_type, "_fields", None) or list(g._fields)
        return Tangent(g.primal_type, **{k: c for k, c in zip(names, cs) if c is not None})
    if isinstance(g, dict):
        return {i: c for i, c in enumerate(cs) if c is not None}
    if isinstance(g, (list, tuple)):
        items = list(cs[: len(g)]) + [None] * max(0, len(g) - len(cs))
        return tuple(items) if isinstance(g, tuple) else items
    return cs[0]  # a bare array: the adjoint of the only differentiable output


@special(rt.call_keeping)
def call_keeping_pair(keep, f, /, *args, **kwargs):
    res, pb = rt.keeping(keep, f, args, call_pair, kwargs)

    def call_keeping_pullback(g):
        return (None, None) + tuple(pb(g)[1:])

    return res, call_keeping_pullback


@special(rt.call_primal_keeping)
def call_primal_keeping_pair(keep, f, /, *args, **kwargs):
    res, pb = rt.keeping(keep, f, args, call_primal_pair, kwargs)

    def call_primal_keeping_pullback(g):
        return (None,) + tuple(pb(g))

    return res, call_primal_keeping_pullback


@special(rt.call_primal)
def call_primal_pair(f, /, *args, **kwargs):
    if (
        type(f) is types.FunctionType
        and f.__closure__ is None
        and lookup_user(f) is None
        and rt.is_library_code(f.__code__)
    ):
        # a library function (np.issubdtype inside the pullback of zip), called on values
        # that do not depend on the inputs and capturing nothing: a constant at every
        # order, and its internals are not the user's code to transform
        n = len(args)
        return rt.call_primal(f, *args, **kwargs), lambda g: (None,) * (n + 2) + (({},) if kwargs else ())
    res, pb = call_pair(f, *args, **kwargs)

    def call_primal_pullback(g):
        return pb((g, None))

    return res[0], call_primal_pullback


@special(dict)
def dict_pair(*args, **kwargs):
    """dict(mapping) and dict(**fields): a copy, whose tangent is copied back (pullbacks
    copy dicts of gradients this way, so second derivatives pass through here)."""
    if len(args) > 1:
        from ..errors import MissingAdjointError

        raise MissingAdjointError(dict, "dict takes one positional argument")
    if args and not isinstance(args[0], dict):
        return _dict_of_pairs(args[0], kwargs)
    y = dict(*args, **kwargs)

    def dict_pullback(g):
        if not isinstance(g, dict):  # no gradient, or a structural zero
            g = {}
        out = [None]  # (plain subscripts: this pullback is differentiated again)
        for a in args:
            out.append({k: g[k] if k in g else None for k in a})
        if kwargs:
            out.append({k: g[k] if k in g else None for k in kwargs})
        return tuple(out)

    return y, dict_pullback


def _dict_of_pairs(pairs, kwargs):
    """dict(pairs) (dict(zip(names, values))): each value's gradient is the dict's at its
    key (the last pair of a repeated key wins, as in Python). The keys must be labels
    (str, int...: rt._is_label): a key from the inputs would lose its gradient (see
    rt.dict_key); a float there is refused, as its dependence on the inputs is not known
    here."""
    pairs = list(pairs)
    rt.check_pair_keys(pairs)
    y = dict(pairs, **kwargs)
    last = {}
    for i, pair in enumerate(pairs):
        last[pair[0]] = i

    def dict_pairs_pullback(g):
        if not isinstance(g, dict):  # no gradient, or a structural zero
            g = {}
        out = []
        for i, pair in enumerate(pairs):
            k = pair[0]
            gv = g[k] if k in g and last[k] == i and k not in kwargs else None
            out.append((None, gv))
        res = (None, out)
        if kwargs:
            res = res + ({k: g[k] if k in g else None for k in kwargs},)
        return res

    return y, dict_pairs_pullback


@special(rt.setitem)
def setitem_pair(obj, idx, v):
    """``H = _rt.setitem(H, i, v)`` in generated code differentiated again. The pullback
    reads the old container only for its shape, so whether setitem copies or writes in
    place (it copies whenever the caller still holds the container) does not matter."""
    y = rt.setitem(obj, idx, v)

    def setitem_pullback(g):
        b_obj, b_v = rt.setitem_grad(g, obj, idx, v)
        return (None, b_obj, None, b_v)

    return y, setitem_pullback


@special(rt.setitem_arg)
def setitem_arg_pair(obj, idx, v):
    y = rt.setitem_arg(obj, idx, v)

    def setitem_arg_pullback(g):
        b_obj, b_v = rt.setitem_grad(g, obj, idx, v)
        return (None, b_obj, None, b_v)

    return y, setitem_arg_pullback


@special(rt.setitem_grad)
def setitem_grad_pair(b_new, old, idx, v=None):
    """setitem_grad is linear in b_new and reads old and v only for their shape: its
    adjoint puts the cotangent of v's part back at idx, over the old part's cotangent."""
    out = rt.setitem_grad(b_new, old, idx, v)

    def setitem_grad_pullback(g):
        c_old, c_v = rt.part(g, 0), rt.part(g, 1)
        if c_old is None and c_v is None:
            return (None, None, None, None, None)
        # the cotangent of b_new has the structure of the container (b_new may be a zero)
        like = old if isinstance(old, (np.ndarray, dict, list)) else b_new
        if isinstance(like, np.ndarray):
            kind = np.result_type(like.dtype, float, *(np.asarray(c).dtype for c in (c_old, c_v) if c is not None))
            c_new = np.zeros(like.shape, kind) if c_old is None else np.array(c_old, dtype=kind)
            c_new[idx] = 0.0 if c_v is None else c_v
        elif isinstance(like, dict):
            c_new = dict(c_old) if isinstance(c_old, dict) else {}
            c_new[idx] = c_v
        else:
            c_new = list(c_old) if isinstance(c_old, (list, tuple)) else [None] * len(like)
            c_new[idx] = c_v
        return (None, c_new, None, None, None)

    return out, setitem_grad_pullback


# call_method_primal is emitted only for a method call whose receiver and arguments do not
# depend on the inputs; differentiated again (with respect to the same inputs) it still
# does not: a constant, like logging to a plain list.
nondifferentiable_builtin(
    rt.call_method_primal, reason="its receiver and arguments do not depend on the inputs"
)


# ----- small helpers: templates ------------------------------------------------------------
primitive(rt.real, "v", "1", **_R)
primitive(rt.scalar, "v", "1", **_R)
primitive(rt.seed, "v", adjoints={"v": "g"}, kind="other")
primitive(rt.re, "v", adjoints={"v": "_rt.real(g)"}, kind="real")
primitive(rt.im, "v", adjoints={"v": "_rt.im_seed(g)"}, kind="real")
primitive(rt.im_seed, "v", adjoints={"v": "_rt.im(g)"}, kind="complex")
primitive(rt.conj, "v", adjoints={"v": "_rt.conj(g)"}, **_R)
primitive(rt.neg, "v", adjoints={"v": "_rt.neg(g)"}, kind="other")
primitive(rt.acc, "a, b", adjoints={"a": "g", "b": "g"}, kind="other")
primitive(add, "a, b", adjoints={"a": "g", "b": "g"}, kind="other")  # (helpers call it)
primitive(rt.unbroadcast, "v, like", adjoints={"v": "_rt.broadcast_like(g, v)"}, kind="other")
primitive(rt.part, "v, i", adjoints={"v": "_rt.part_adjoint(v, i, g)"}, kind="other")
primitive(rt.field, "v, name", adjoints={"v": "_rt.field_adjoint(name, g)"}, kind="other")
primitive(rt.field_adjoint, "name, v", adjoints={"v": "_rt.field(g, name)"}, kind="other")
primitive(rt.getitem_grad, "obj, idx, v", adjoints={"v": "_rt.part(g, idx)"}, kind="other")
primitive(rt.dense, "v", adjoints={"v": "g"}, kind="other")
primitive(rt.acc_getitem_grad, "acc, obj, idx, v", adjoints={"acc": "g", "v": "_rt.part(g, idx)"}, kind="other")
primitive(
    rt.item_grad,
    "acc, seq, k, v",
    adjoints={"acc": "g", "v": "_rt.part(g, k)"},
    kind="other",
)
primitive(rt.seq, "v", adjoints={"v": "_rt.seq_adjoint(v, g)"}, kind="other")
# max/min's adjoint is linear in its gradient, with a transpose of its own (the positions
# of the extremum do not move under a small change: no gradient to a or ans)
# (`m` is the extremum: `ans` in a template means the helper's own result)
primitive(rt.np_extremum_adjoint, "v, a, m, axis=None, keepdims=False",
          adjoints={"v": "_rt.np_extremum_select(g, a, m, axis, keepdims)"}, kind="other")
primitive(rt.acc_extremum_adjoint, "acc, v, a, m, axis=None, keepdims=False",
          adjoints={"acc": "g", "v": "_rt.np_extremum_select(g, a, m, axis, keepdims)"}, kind="other")
primitive(rt.np_extremum_select, "v, a, m, axis=None, keepdims=False",
          adjoints={"v": "_rt.np_extremum_adjoint(g, a, m, axis, keepdims)"}, kind="other")
# the derivatives of powers, differentiated again: pow_scaled(a, p, c) = c·a**p keeps a zero
# coefficient zero at a == 0 to every order (the Hessian of x**0, x**1 at 0)
primitive(rt.pow_scaled, "a, p, c, n=0",
          "_rt.pow_scaled(a, p - 1, c * p, n) + _rt.pow_scaled(a, p - 1, c * n, n - 1)",
          "_rt.pow_scaled(a, p, c, n + 1)", "_rt.pow_scaled(a, p, 1, n)", None, kind="other")
primitive(rt.pow_base_partial, "a, b", "_rt.pow_scaled(a, b - 2, b * (b - 1))",
          "_rt.pow_base_partial_exp(a, b)", kind="other")  # complex for a < 0, b fractional
primitive(rt.np_power_base_partial, "x1, x2", "_rt.pow_scaled(x1, x2 - 2, x2 * (x2 - 1))",
          "_rt.pow_base_partial_exp(x1, x2)", **_R)
primitive(rt.np_float_power_base_partial, "x1, x2", "_rt.pow_scaled(x1, x2 - 2, x2 * (x2 - 1))",
          "_rt.pow_base_partial_exp(x1, x2)", **_R)
# a.item(...) and a.tolist(): their adjoints are linear in the gradient, with transposes
primitive(rt.np_item_adjoint, "v, a, idx", adjoints={"v": "_rt.np_item_of(g, a, idx)"},
          kind="other")
primitive(rt.np_item_of, "c, a, idx", adjoints={"c": "_rt.np_item_adjoint(g, a, idx)"},
          kind="other")
primitive(rt.np_tolist_adjoint, "v, a", adjoints={"v": "_rt.np_tolist_of(g)"}, kind="other")
primitive(rt.np_tolist_of, "c", adjoints={"c": "_rt.np_tolist_adjoint(g, c)"}, kind="other")
# the scatter-adds of take, take_along_axis and repeat (np.add.at has no rule): linear in
# the gradient, their transposes are the gathers themselves
primitive(rt.np_take_adjoint, "v, a, indices, axis=None",
          adjoints={"v": "_rt.np_fit(np.take(g, indices, axis), v)"}, kind="other")
primitive(rt.np_take_along_axis_adjoint, "v, arr, indices, axis=-1",
          adjoints={"v": "_rt.np_fit(np.take_along_axis(np.asarray(g), np.asarray(indices), axis), v)"},
          kind="other")
primitive(rt.np_repeat_adjoint, "v, a, repeats, axis=None",
          adjoints={"v": "_rt.np_fit(np.repeat(g, repeats, axis), v)"}, kind="other")
# np.pad's adjoint adds the copies of edge/reflect/symmetric/wrap padding back with
# np.bincount (no rule); pad and its adjoint are each other's transposes
primitive(rt.np_pad_adjoint, "v, array, pad_width, mode='constant'",
          adjoints={"v": "_rt.np_pad_transpose(g, pad_width, mode)"}, kind="other")
primitive(rt.np_pad_transpose, "v, pad_width, mode='constant'",
          adjoints={"v": "_rt.np_pad_adjoint(g, v, pad_width, mode)"}, kind="other")
primitive(rt.digamma, "x", "_rt.trigamma(x)")
primitive(rt.trigamma, "x", "_rt.polygamma2(x)")
primitive(unthunk, "v", adjoints={"v": "g"}, kind="other")
primitive(rt.output_tangent, "v, y", adjoints={"v": "g"}, kind="other")
primitive(rt.unextend, "b_lst, where, vs", adjoints={"b_lst": "_rt.unextend_adjoint(g, b_lst, where)"}, kind="other")
primitive(rt.unappend, "b_lst, n", adjoints={"b_lst": "_rt.unappend_adjoint(g, b_lst, n)"}, kind="other")


primitive(rt.uninsert, "b_lst, pos", adjoints={"b_lst": "_rt.uninsert_adjoint(g, b_lst, pos)"}, kind="other")


@special(rt.unpop)
def unpop_pair(b_lst, where, b_v):
    def unpop_pullback(g):  # linear in (b_lst, b_v)
        g_lst, g_v = rt.unpop_adjoint(g, where)
        return (None, g_lst, None, g_v)

    return rt.unpop(b_lst, where, b_v), unpop_pullback


@special(rt.field_grad_if)
def field_grad_if_pair(moved, obj, name):
    if not moved:
        return None, lambda gg: (None, None, None, None)
    y, pb = take_field_grad_pair(obj, name)

    def field_grad_if_pullback(gg):
        pb(gg)
        return (None, None, None, None)

    return y, field_grad_if_pullback


@special(rt.set_field)
def set_field_pair(obj, name, value):
    rt.set_field(obj, name, value)

    def set_field_pullback(_):  # as `obj.name = value`: the field's gradient so far
        return (None, None, None, rt.take_field_grad(obj, name))

    return None, set_field_pullback


@special(rt.instance_with_fields)
def instance_with_fields_pair(cls, names, values):
    obj = rt.instance_with_fields(cls, names, values)

    def instance_with_fields_pullback(g):
        g = unthunk(g)
        grads = [add(rt.field(g, name), rt.take_field_grad(obj, name)) for name in names]
        return (None, None, None, grads)

    return obj, instance_with_fields_pullback


@special(rt.fold_self)
def fold_self_pair(g, names):
    def fold_self_pullback(gg):
        return (None, rt.fold_self_adjoint(gg, g, names), None)

    return rt.fold_self(g, names), fold_self_pullback


@special(rt.move_grad)
def move_grad_pair(moved, a, b):
    def move_grad_pullback(g):  # linear in (a, b): the transpose of the move
        ga, gb = rt.part(g, 0), rt.part(g, 1)
        return (None, None, ga, ga if moved else gb)

    return rt.move_grad(moved, a, b), move_grad_pullback


@special(rt.with_defaults)
def with_defaults_pair(df, names, grads):
    def with_defaults_pullback(g):
        parts = tuple(rt.field(g, n) for n in names)
        return (None, rt.without_fields(g, names), None, parts)

    return rt.with_defaults(df, names, grads), with_defaults_pullback


@special(rt.with_kw_defaults)
def with_kw_defaults_pair(df, kwgrads):
    names = tuple(kwgrads) if isinstance(kwgrads, dict) else ()

    def with_kw_defaults_pullback(g):
        parts = {n: rt.field(g, n) for n in names}
        return (None, rt.without_fields(g, names), parts)

    return rt.with_kw_defaults(df, kwgrads), with_kw_defaults_pullback


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
        els = tuple(rt.part(g, i) if isinstance(g, Tangent) and g._elements else None for i in range(len(elements)))
        out = (None, None) + els
        return out + ({k: rt.field(g, k) for k in fields},) if fields else out

    return Tangent(primal_type, *elements, **fields), tangent_constructor_pullback


@special(rt.fn_tangent)
def fn_tangent_pair(**fields):
    def fn_tangent_pullback(g):
        return (None, {k: rt.field(g, k) for k in fields})

    return rt.fn_tangent(**fields), fn_tangent_pullback


primitive(rt.without_fields, "v, names", adjoints={"v": "_rt.without_fields(g, names)"}, kind="other")

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


special(rt.put_items)(_put_pair(rt.put_items))
special(rt.hand_over)(_put_pair(rt.hand_over))


@special(rt.kept)
def kept_pair(a):
    v = rt.kept(a)
    if v is not a:
        site = rt.user_call_site()
        where = f" (in `{site[0]}`, defined at {site[1]}, line {site[2]})" if site else ""
        raise rt.MutationError(
            "a function that changes an array argument in place (`a op= v`) whose caller "
            f"reads it again{where} is differentiated once, not twice: return the array "
            "from the function and rebind it in the caller (`x = f(x, ...)`)"
        )
    return v, lambda g: (None, g)


@special(rt.take_items)
def take_items_pair(obj):
    cells = _claim_cells(obj, None)

    def take_items_pullback(gg):
        _fill(cells, gg)
        return (None, None)

    return rt.take_items(obj), take_items_pullback


@special(rt.add_field_grad)
def add_field_grad_pair(obj, name, g):
    cell = _open_cell(obj, name)

    def add_field_grad_pullback(_):
        return (None, None, None, cell[0])

    return rt.add_field_grad(obj, name, g), add_field_grad_pullback


@special(rt.take_field_grad)
def take_field_grad_pair(obj, name):
    cells = _claim_cells(obj, name)

    def take_field_grad_pullback(gg):
        _fill(cells, gg)
        return (None, None, None)

    return rt.take_field_grad(obj, name), take_field_grad_pullback


# setattr_grad is take_field_grad: the written value's gradient leaves the store
special(rt.setattr_grad)(take_field_grad_pair)


@special(rt._seed_fields)
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
        names = list(vars(obj))
    cells = {name: _open_cell(obj, name) for name in names
             if rt.field(u, name) is not None and not isinstance(rt.field(u, name), AbstractZero)}
    rt._seed_fields(obj, g)

    def seed_fields_pullback(_):
        back = {name: cell[0] for name, cell in cells.items() if cell[0] is not None}
        if not back:
            return (None, None, None)
        if isinstance(u, dict):
            return (None, None, back)
        return (None, None, Tangent(u.primal_type if isinstance(u, Tangent) else type(obj), **back))

    return None, seed_fields_pullback


@special(rt.seed_result)
def seed_result_pair(v, result):
    # a mutable object's tangent goes into the field store (seed_fields' rule), anything
    # else passes through as by seed
    x = rt.seed(v)
    if x is not None and rt.is_mutable_object(result) and not isinstance(x, (list, tuple)):
        _, seed_back = seed_fields_pair(result, x)
        return None, lambda g: (None, seed_back(None)[2], None)
    return x, lambda g: (None, g, None)


@special(rt.with_fields)
def with_fields_pair(v, obj):
    # with_fields takes every field gradient of obj from the store (the reads of obj.a
    # put them there): a take of each field, whose pullback hands each put's cell the
    # cotangent of its field (a dataclass's constructor, differentiated again)
    entry = rt._FIELDS.get(id(obj))
    names = list(entry[1]) if entry is not None and entry[0] is obj else []
    cells = {name: _claim_cells(obj, name) for name in names}

    def with_fields_pullback(gg):
        for name, taken in cells.items():
            _fill(taken, rt.field(gg, name))
        return (None, gg, None)

    return rt.with_fields(v, obj), with_fields_pullback


@special(rt.drop_callee_fields)
def drop_callee_fields_pair(f):
    obj = getattr(f, "__self__", f)
    if rt.is_mutable_object(obj):
        forget_fields_pair(obj)
    return None, lambda _: (None, None)


@special(rt.forget_fields)
def forget_fields_pair(obj):
    # the fields' gradients end here: claim the puts' cells, and nothing flows into them
    fields = rt.take_fields(obj)
    for name in fields or ():
        _claim_cells(obj, name)

    def forget_fields_pullback(_):
        return (None, None)

    return None, forget_fields_pullback


nondifferentiable_builtin(
    rt.check_shared,
    rt.dict_key,
    rt.check_pair_keys,
    rt.rebinding,
    rt.field_names,
    rt.changes_in_place,
    rt.new_instance,
    rt.take_fields,
    rt._primitive_pair,
    rt._user_rule_pair,
    rt._constructor_pair,
    rt._function_pair,
    rt._const_pair,
    rt._method_rule,
    lookup_user,
    lookup_primitive,
    rt.is_mutable_object,
    rt.resolve,
    rt._hashable,
    rt.kinds_of,
    rt._cell_kind,
    rt._takes_keywords,
    rt._method_rule,
    rt.trunc_div,
    emit.pair_for,
    emit.entry_for,
    emit.cache_key,
    reason="it selects code, it does not compute with differentiable values",
)


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
