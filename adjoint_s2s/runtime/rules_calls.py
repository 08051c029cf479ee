"""Rules of the run time's dispatch and mutation helpers: what makes nested gradients work.

Generated pullbacks are ordinary Python; differentiating a function that calls
``gradient`` differentiates them again (reverse over reverse, as Zygote does). They call
``_rt`` helpers: the dispatch entry points (``call``, ``call_keeping``, ``setitem``, ...)
get a rule that differentiates the first-order pair itself. The small helpers' templates
and the identity stores are in rules_helpers.py.
"""
import functools
import types

import numpy as np

from .. import emit
from ..errors import MissingAdjointError
from ..rules import lookup_user, nondifferentiable_builtin, special
from ..rules.numpy.base import np_parts
from ..rules.numpy.shape import np_index_trick_check, np_index_trick_range, np_index_trick_rule
from ..tangents import AbstractZero, InplaceableThunk, Tangent, Thunk, unthunk
from . import accumulate, dispatch, methods, mutation, objects, protocols, sites, structure, wrappers
from .. import kinds

_R = dict(kind="same")


# ----- dispatch: differentiate the pair function that a call would run ---------------------


def first_order_pair(f, args, has_kwargs):
    """The Python function that ``dispatch.call(f, ...)`` runs (something with source)."""
    nargs = len(args)
    if has_kwargs and not isinstance(f, functools.partial):  # (a partial's pair takes keywords)
        return lambda *args, **kwargs: dispatch._call_kw(f, args, kwargs)
    if type(f) is types.FunctionType:
        pair = dispatch.rule_pair(f, nargs)
        if pair is not None:
            return pair
        return emit.pair_for(f, emit.cache_key(f, kinds.kinds_of(args)), nargs)
    if protocols.has_objects(args) and protocols.table_rule(f):  # float(obj): its methods
        return protocols.object_pair(f, nargs)
    return dispatch.resolve(f, nargs)


def _tangent_of_callee(d_inner, f):
    """Map the tangent of the pair function back to a tangent of f (its captured cells)."""
    if d_inner is None or isinstance(d_inner, AbstractZero):
        return None
    if not isinstance(d_inner, Tangent):
        return None
    inner_pair = d_inner._fields.get("pair")
    if isinstance(inner_pair, Tangent):  # a trimmed pair: look inside
        d_inner = inner_pair
    if isinstance(f, functools.partial):  # wrappers.partial_pair's cells
        return wrappers.partial_tangent(f, d_inner._fields)
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
    return structure.fn_tangent(**fields) if fields else None


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
        elif isinstance(f, functools.partial):  # the partial's parts, back to partial_pair's cells
            parts = {"fn": structure.field(g, "func"), "bound": structure.field(g, "args"),
                     "keywords": structure.field(g, "keywords")}
            parts = {k: v for k, v in parts.items() if v is not None}
            if not parts:
                return (None, None, None)
            g = Tangent(types.FunctionType, **parts)
        back = Tangent(types.FunctionType, pair=g) if nested else g
        return (None, back, None)

    return _tangent_of_callee(d_inner, f), tangent_of_callee_pullback


@special(first_order_pair)
def first_order_pair_pair(f, args, has_kwargs):
    # the pair function is bound to f's captured cells and defaults: when call_pair is
    # itself differentiated (a third level), the tangent of that pair goes back to f
    pair = first_order_pair(f, args, has_kwargs)

    def first_order_pair_pullback(g):
        if has_kwargs and not isinstance(f, functools.partial):  # the keyword pair captures f itself
            return (None, structure.field(g, "f"), None, None)
        return (None, _tangent_of_callee(g, f), None, None)

    return pair, first_order_pair_pullback


@special(dispatch.call)
def call_pair(f, /, *args, **kwargs):
    inner = first_order_pair(f, args, bool(kwargs))
    res, outer_pb = dispatch.call(inner, *args, **kwargs)

    def call_pullback(g):
        grads = outer_pb(g)
        if kwargs and not isinstance(f, functools.partial):  # the keyword pair captures f itself
            return (None, structure.field(grads[0], "f")) + tuple(grads[1:])
        return (None, _tangent_of_callee(grads[0], f)) + tuple(grads[1:])

    return res, call_pullback


@special(accumulate.setitem_grad_acc)
def setitem_grad_acc_pair(b_new, old, idx, v, acc_):
    # differentiated again: setitem_grad's rule, then acc's
    (b_old, g_v), setitem_back = setitem_grad_pair(b_new, old, idx, v)
    total, acc_back = dispatch.call(accumulate.acc, acc_, g_v)

    def setitem_grad_acc_pullback(g):
        c_old, c_total = structure.part(g, 0), structure.part(g, 1)
        _, c_acc, c_gv = acc_back(c_total)
        c_new = setitem_back((c_old, c_gv))[1]
        return (None, c_new, None, None, None, c_acc)

    return (b_old, total), setitem_grad_acc_pullback


@special(accumulate.getitem_grad_sparse)
def getitem_grad_sparse_pair(obj, idx, v):
    # differentiated (a pullback under a nested gradient), the scatter is written out:
    # a Scattered is for first-order pullbacks, whose every reader passes/sparse.py knows
    return dispatch.call(accumulate.getitem_grad, obj, idx, v)


# lookups are piecewise constant in their key: no gradient to it
_LOOKUP_TYPES = (list, tuple, dict, str, bytes, range, np.ndarray, types.MappingProxyType)


@special(objects.index_get)
def index_get_pair(obj, is_tuple, *keys):
    """obj[key] where the key depends on the inputs: NumPy's index tricks (np.r_, np.c_)
    by their rule, plain lookups with no gradient to the key, any other __getitem__
    differentiated as a call (its source, or its rule; a clear refusal without either)."""
    n = len(keys)
    key = keys if is_tuple else keys[0]
    trick = np_index_trick_rule(obj)
    if trick is not None:
        y, pb = dispatch.call(trick, *keys)
        np_index_trick_check(obj, keys, y)
        return y, lambda g: (None, None, None) + tuple(pb(g)[1:])
    if isinstance(obj, _LOOKUP_TYPES):
        return obj[key], lambda g: (None,) * (n + 3)
    method = getattr(type(obj), "__getitem__", None)
    if method is None:
        raise TypeError(f"'{type(obj).__name__}' object is not subscriptable")
    y, pb = dispatch.call(method, obj, key)

    def index_get_pullback(g):
        grads = pb(g)
        d_obj, d_key = grads[1], grads[2]
        if not is_tuple:
            return (None, d_obj, None, d_key)
        return (None, d_obj, None) + tuple(structure.part(d_key, i) for i in range(n))

    return y, index_get_pullback


nondifferentiable_builtin(
    np_index_trick_rule, np_index_trick_check, np_index_trick_range,
    reason="it selects or checks code, or builds a constant range",
)


@special(np_parts)
def np_parts_pair(g, n):
    """The entries of a tuple output's adjoint (what the adjoints of slogdet, eigh, svd,
    qr... read first), differentiated again: the cotangents of the entries go back into
    the structure g came in (a Tangent of the named tuple, a tuple, a bare array), so the
    second derivative with respect to the first-order cotangent is not lost."""
    out = np_parts(g, n)

    def np_parts_pullback(c):
        cs = [structure.part(c, i) for i in range(n)]
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


@special(mutation.call_keeping)
def call_keeping_pair(keep, f, /, *args, **kwargs):
    res, pb = mutation.keeping(keep, f, args, call_pair, kwargs)

    def call_keeping_pullback(g):
        return (None, None) + tuple(pb(g)[1:])

    return res, call_keeping_pullback


@special(mutation.call_primal_keeping)
def call_primal_keeping_pair(keep, f, /, *args, **kwargs):
    res, pb = mutation.keeping(keep, f, args, call_primal_pair, kwargs)

    def call_primal_keeping_pullback(g):
        return (None,) + tuple(pb(g))

    return res, call_primal_keeping_pullback


@special(mutation.keeping)
def keeping_pair(keep, f, args, run, kwargs):
    """keeping differentiated: the two pairs above, differentiated again (a third
    derivative through a call with *args), call it. The pair of run's call, under the
    same checks; the cotangents go back to keeping's parameters (args a tuple, kwargs a
    dict)."""
    n = len(args)

    def run_pair(f_, /, *a, **k):
        return dispatch.call(run, f_, *a, **k)

    res, pb = mutation.keeping(keep, f, args, run_pair, kwargs)

    def keeping_pullback(g):
        grads = pb(g)  # (run, f, *args, {keywords} when there are keywords)
        return (None, None, grads[1], tuple(grads[2:2 + n]), grads[0], grads[2 + n] if kwargs else None)

    return res, keeping_pullback


@special(dispatch.call_primal)
def call_primal_pair(f, /, *args, **kwargs):
    if (
        type(f) is types.FunctionType
        and f.__closure__ is None
        and lookup_user(f) is None
        and sites.is_library_code(f.__code__)
    ):
        # a library function (np.issubdtype inside the pullback of zip), called on values
        # that do not depend on the inputs and capturing nothing: a constant at every
        # order, and its internals are not the user's code to transform
        n = len(args)
        return dispatch.call_primal(f, *args, **kwargs), lambda g: (None,) * (n + 2) + (({},) if kwargs else ())
    res, pb = call_pair(f, *args, **kwargs)

    def call_primal_pullback(g):
        return pb((g, None))

    return res[0], call_primal_pullback


@special(dict)
def dict_pair(*args, **kwargs):
    """dict(mapping) and dict(**fields): a copy, whose tangent is copied back (pullbacks
    copy dicts of gradients this way, so second derivatives pass through here)."""
    if len(args) > 1:
        raise MissingAdjointError(dict, "dict takes one positional argument")
    if args and not isinstance(args[0], dict):
        if hasattr(args[0], "keys"):  # (a mapping of a class of its own: Python reads its keys())
            return _dict_of_mapping(args[0], kwargs)
        return _dict_of_pairs(args[0], kwargs)
    y = dict(*args, **kwargs)

    def dict_pullback(g):
        if not isinstance(g, dict):  # no gradient, or a structural zero
            g = {}
        out = [None]  # (plain subscripts: this pullback is differentiated again)
        for a in args:  # (a key the keywords set again is theirs: the mapping's value was replaced)
            out.append({k: g[k] if k in g and k not in kwargs else None for k in a})
        if kwargs:
            out.append({k: g[k] if k in g else None for k in kwargs})
        return tuple(out)

    return y, dict_pullback


def _dict_of_mapping(m, kwargs):
    """dict(m) of a mapping that is not a dict: its items' gradients are refused
    (structure.mapping_grad), the keywords' are theirs."""
    y = dict(m, **kwargs)

    def dict_mapping_pullback(g):
        if not isinstance(g, dict):  # no gradient, or a structural zero
            g = {}
        out = (None, structure.mapping_grad(m, [g.get(k) for k in m.keys() if k not in kwargs]))
        return out + (({k: g.get(k) for k in kwargs},) if kwargs else ())

    return y, dict_mapping_pullback


def _dict_of_pairs(pairs, kwargs):
    """dict(pairs) (dict(zip(names, values))): each value's gradient is the dict's at its
    key (the last pair of a repeated key wins, as in Python). The keys must be labels
    (str, int...: structure._is_label): a key from the inputs would lose its gradient (see
    structure.dict_key); a float there is refused, as its dependence on the inputs is not known
    here."""
    pairs = list(pairs)
    structure.check_pair_keys(pairs)
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


@special(mutation.setitem)
def setitem_pair(obj, idx, v):
    """``H = _rt.setitem(H, i, v)`` in generated code differentiated again. The pullback
    reads the old container only for its shape, so whether setitem copies or writes in
    place (it copies whenever the caller still holds the container) does not matter."""
    y = mutation.setitem(obj, idx, v)

    def setitem_pullback(g):
        b_obj, b_v = accumulate.setitem_grad(g, obj, idx, v)
        return (None, b_obj, None, b_v)

    return y, setitem_pullback


@special(mutation.setitem_arg)
def setitem_arg_pair(obj, idx, v):
    y = mutation.setitem_arg(obj, idx, v)

    def setitem_arg_pullback(g):
        b_obj, b_v = accumulate.setitem_grad(g, obj, idx, v)
        return (None, b_obj, None, b_v)

    return y, setitem_arg_pullback


@special(accumulate.setitem_grad)
def setitem_grad_pair(b_new, old, idx, v=None):
    """setitem_grad is linear in b_new and reads old and v only for their shape: its
    adjoint puts the cotangent of v's part back at idx, over the old part's cotangent."""
    out = accumulate.setitem_grad(b_new, old, idx, v)

    def setitem_grad_pullback(g):
        c_old, c_v = structure.part(g, 0), structure.part(g, 1)
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
    methods.call_method_primal, reason="its receiver and arguments do not depend on the inputs"
)




# where the user's statement is (for error messages): a string or a tuple of names,
# read from the stack; a pullback differentiated again calls them on its ordinary path
nondifferentiable_builtin(
    sites._at, sites._user_site, sites.user_call_site,
    reason="it names the user's statement for error messages",
)


# A thunk made in code that is differentiated again (a rule's pullback, at second order)
# is its value at once: forced later, by code that is not differentiated (the sums of
# gradients, the checks of a rule's output), it would carry no gradient of what its
# function reads (the cotangent, the rule's arguments) and the second derivative would
# miss that term. Laziness is kept at first order, where these pairs do not run.
@special(Thunk)
def thunk_pair(fn):
    y, pb = dispatch.call(fn)

    def thunk_pullback(g):
        return (None, pb(g)[0])

    return y, thunk_pullback


@special(InplaceableThunk)
def inplaceable_thunk_pair(add_fn, fn):
    y, pb = dispatch.call(fn)

    def inplaceable_thunk_pullback(g):
        return (None, None, pb(g)[0])

    return y, inplaceable_thunk_pullback
