"""More shape and indexing rules: append, ediff1d, rollaxis, partition, select, real_if_close.

Each adjoint cuts the cotangent back into the pieces the function put together
(``append``, ``ediff1d``'s ``to_begin``/``to_end``), undoes the permutation it applied
(``rollaxis``, ``partition``: the cotangent goes to the element at each position it
read, as for ``sort``), or keeps the part of the cotangent where a choice was taken
(``select``: the first true condition).
"""
import numpy as np

from .. import nondifferentiable_builtin
from .base import _CURRENT, np_fit, rule
from .shape import _pack

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_append_adjoint_arr",
    "np_append_adjoint_values",
    "np_ediff1d_adjoint",
    "np_ediff1d_adjoint_end",
    "np_ediff1d_adjoint_begin",
    "np_partition_adjoint",
    "np_rollaxis_adjoint",
    "np_select_adjoint",
    "np_select_adjoint_default",
]

_CURRENT[0] = "Shape and indexing"


# ----- append, ediff1d, rollaxis ---------------------------------------------------------------


def _append_parts(g, arr, axis):
    g = np.asarray(g)
    if axis is None:
        return np.split(g, [np.size(arr)])
    return np.split(g, [np.shape(arr)[axis]], axis)


def np_append_adjoint_arr(g, arr, values, axis=None):
    part = _append_parts(g, arr, axis)[0]
    return np_fit(np.reshape(part, np.shape(arr)), arr)


def np_append_adjoint_values(g, arr, values, axis=None):
    part = _append_parts(g, arr, axis)[1]
    return np_fit(np.reshape(part, np.shape(values)), values)


rule(np.append, "arr, values, axis=None",
     adjoints={"arr": "_rt.np_append_adjoint_arr(g, arr, values, axis)",
               "values": "_rt.np_append_adjoint_values(g, arr, values, axis)"})


def _ediff1d_parts(g, ary, to_end, to_begin):
    g = np.asarray(g)
    nb = 0 if to_begin is None else np.size(to_begin)
    nd = max(np.size(ary) - 1, 0)
    return g[:nb], g[nb:nb + nd], g[nb + nd:]


def np_ediff1d_adjoint(g, ary, to_end=None, to_begin=None):
    gd = _ediff1d_parts(g, ary, to_end, to_begin)[1]
    ga = np.pad(gd, (1, 0)) - np.pad(gd, (0, 1))  # d = a[1:] - a[:-1]
    return np_fit(np.reshape(ga, np.shape(ary)), ary)


def np_ediff1d_adjoint_end(g, ary, to_end=None, to_begin=None):
    if to_end is None:
        return None
    part = _ediff1d_parts(g, ary, to_end, to_begin)[2]
    return np_fit(np.reshape(part, np.shape(to_end)), to_end)


def np_ediff1d_adjoint_begin(g, ary, to_end=None, to_begin=None):
    if to_begin is None:
        return None
    part = _ediff1d_parts(g, ary, to_end, to_begin)[0]
    return np_fit(np.reshape(part, np.shape(to_begin)), to_begin)


rule(np.ediff1d, "ary, to_end=None, to_begin=None",
     adjoints={"ary": "_rt.np_ediff1d_adjoint(g, ary, to_end, to_begin)",
               "to_end": "_rt.np_ediff1d_adjoint_end(g, ary, to_end, to_begin)",
               "to_begin": "_rt.np_ediff1d_adjoint_begin(g, ary, to_end, to_begin)"})


def _rollaxis_order(n, axis, start):
    """The axis order np.rollaxis gives (a permutation of range(n))."""
    axis = int(axis) % n
    start = int(start) + n if start < 0 else int(start)
    if axis < start:
        start = start - 1
    rest = [i for i in range(n) if i != axis]
    return rest[:start] + [axis] + rest[start:]


nondifferentiable_builtin(_rollaxis_order, reason="it computes an axis order")
nondifferentiable_builtin(np.argpartition, reason="it returns indices")


def np_rollaxis_adjoint(g, a, axis, start=0):
    order = _rollaxis_order(np.ndim(a), axis, start)
    return np_fit(np.transpose(g, np.argsort(order)), a)


rule(np.rollaxis, "a, axis, start=0",
     adjoints={"a": "_rt.np_rollaxis_adjoint(g, a, axis, start)"})


def np_partition_adjoint(g, a, kth, axis=-1, kind="introselect", order=None):
    if axis is None:
        idx = np.argpartition(np.ravel(a), kth, -1, kind)
        back = np.take_along_axis(np.asarray(g), np.argsort(idx), -1)
        return np_fit(np.reshape(back, np.shape(a)), a)
    idx = np.argpartition(a, kth, axis, kind)
    return np_fit(np.take_along_axis(np.asarray(g), np.argsort(idx, axis), axis), a)


rule(np.partition, "a, kth, axis=-1, kind='introselect', order=None",
     adjoints={"a": "_rt.np_partition_adjoint(g, a, kth, axis, kind, order)"})


def _first_true(condlist, shape):
    """One mask per condition: where it is the first true one (select's choice)."""
    taken = np.zeros(shape, dtype=bool)
    masks = []
    for c in condlist:
        c = np.broadcast_to(np.asarray(c, dtype=bool), shape)
        masks.append(c & ~taken)
        taken = taken | c
    return masks, ~taken


def np_select_adjoint(g, condlist, choicelist, default=0):
    g = np.asarray(g)
    masks, _ = _first_true(condlist, g.shape)
    return _pack([np.where(m, g, 0) for m in masks], choicelist)


def np_select_adjoint_default(g, condlist, choicelist, default=0):
    g = np.asarray(g)
    _, rest = _first_true(condlist, g.shape)
    return np_fit(np.where(rest, g, 0), default)


rule(np.select, "condlist, choicelist, default=0",
     adjoints={"choicelist": "_rt.np_select_adjoint(g, condlist, choicelist, default)",
               "default": "_rt.np_select_adjoint_default(g, condlist, choicelist, default)"})


rule(np.real_if_close, "a, tol=100", adjoints={"a": "_rt.np_fit(g, a)"},
     section="Constructors and conversions")
