"""Still more shape and indexing rules: meshgrid, block, insert, delete, vander, ptp, and
diff's prepend=/append= and pad's modes mean and linear_ramp (the rules of diff and pad
are in shape.py; their new variants and helpers are here).

Each adjoint undoes what the function did to its arguments: ``meshgrid`` sums each
grid's cotangent over the axes it was broadcast along; ``block`` cuts the cotangent back
into the blocks; ``insert`` and ``delete`` find where each element went by running the
function itself on labels (so every ``obj`` NumPy accepts is handled exactly) and gather
or add the cotangent back from there; ``ptp`` is max minus min, with the adjoints of
max and min (extremum.py: ties split evenly); the pad modes mean and linear_ramp are
linear maps, padded axis by axis as NumPy pads them, and transposed axis by axis.
"""
import numpy as np

from .. import nondifferentiable_builtin, primitive
from ...errors import MissingAdjointError
from ...tangents import AbstractZero
from .base import NOTES, _by_keyword, _CURRENT, _sum_to, np_fit, np_parts, rule
from .extremum import np_extremum_adjoint
from .shape import _PAD_MODES, _pad_call, _pad_pairs, np_pad_adjoint, np_take_adjoint

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_block_adjoint",
    "np_block_of",
    "np_delete_adjoint",
    "np_diff_ends_adjoint",
    "np_insert_adjoint_arr",
    "np_insert_adjoint_values",
    "np_meshgrid_adjoint",
    "np_pad_ends_adjoint",
    "np_pad_stat_adjoint",
    "np_ptp_adjoint",
    "np_vander_adjoint",
]

_CURRENT[0] = "Shape and indexing"
_NoValue = np._NoValue


# ----- meshgrid, ix_ ---------------------------------------------------------------------------


def _grid_axis(i, k, indexing):
    """The axis along which input i of k varies in meshgrid's outputs."""
    if indexing == "xy" and k >= 2 and i < 2:
        return 1 - i
    return i


nondifferentiable_builtin(_grid_axis, reason="it computes an axis")


def np_meshgrid_adjoint(g, i, xs, sparse=False, indexing="xy"):
    """Input i of meshgrid: the cotangent of output i summed over every axis but the one
    the input runs along (a sparse output has length 1 there already)."""
    gi = np_parts(g, len(xs))[i]
    if gi is None:  # output i got no gradient (another output did)
        return np_fit(np.zeros(np.shape(xs[i])), xs[i])
    gi = np.asarray(gi)
    ax = _grid_axis(i, len(xs), indexing)
    others = tuple(d for d in range(gi.ndim) if d != ax)
    return np_fit(np.reshape(np.sum(gi, axis=others), np.shape(xs[i])), xs[i])


def _meshgrid_call(*args):
    """np.meshgrid(x0, ..., copy, sparse, indexing) with the last three by name."""
    return np.meshgrid(*args[:-3], copy=args[-3], sparse=args[-2], indexing=args[-1])


_GRID = ("x0", "x1", "x2", "x3", "x4", "x5")
for _k in range(1, len(_GRID) + 1):
    _names = _GRID[:_k]
    _tuple = "(" + ", ".join(_names) + ",)"
    _prim = rule(np.meshgrid, ", ".join(_names) + ", copy=True, sparse=False, indexing='xy'",
                 kind="other", note="indexing 'xy' and 'ij', sparse or not; up to 6 arrays",
                 adjoints={p: f"_rt.np_meshgrid_adjoint(g, {i}, {_tuple}, sparse, indexing)"
                           for i, p in enumerate(_names)})
    _by_keyword(_prim, call=_meshgrid_call)


nondifferentiable_builtin(np.ix_, reason="it builds integer index arrays")


# ----- block -----------------------------------------------------------------------------------


def _block_depth(x):
    d = 0
    while isinstance(x, list) and x:
        x, d = x[0], d + 1
    return d


def _block_ndim(x):
    if isinstance(x, list):
        return max((_block_ndim(c) for c in x), default=0)
    return np.ndim(x)


def _block_shape(x, level, depth, nd):
    """The shape of the block x (at list level `level`) inside np.block's result."""
    if level == depth:
        s = np.shape(x)
        return (1,) * (nd - len(s)) + tuple(s)
    shapes = [_block_shape(c, level + 1, depth, nd) for c in x]
    ax = nd - (depth - level)
    out = list(shapes[0])
    out[ax] = sum(s[ax] for s in shapes)
    return tuple(out)


def _block_cut(g, x, level, depth, nd):
    if level == depth:
        return np_fit(np.reshape(g, np.shape(x)), x)
    ax = nd - (depth - level)
    sizes = [_block_shape(c, level + 1, depth, nd)[ax] for c in x]
    pieces = np.split(g, np.cumsum(sizes)[:-1], axis=ax)
    return [_block_cut(p, c, level + 1, depth, nd) for p, c in zip(pieces, x)]


def np_block_adjoint(g, arrays):
    """np.block: the innermost lists are joined along the last axis, the next ones along
    the one before...; the cotangent is cut back the same way, block by block."""
    depth = _block_depth(arrays)
    nd = max(depth, _block_ndim(arrays))
    return _block_cut(np.asarray(g), arrays, 0, depth, nd)


def _block_fill(c, x):
    """The cotangent c of np_block_adjoint's nested result, zeros where it has none."""
    if isinstance(x, list):
        cs = c if isinstance(c, (list, tuple)) else [None] * len(x)
        return [_block_fill(ci, xi) for ci, xi in zip(cs, x)]
    if c is None or isinstance(c, AbstractZero):
        return np.zeros(np.shape(x))
    return np.asarray(c)


def np_block_of(c, arrays):
    """The transpose of np_block_adjoint in its gradient: the blocks' cotangents joined."""
    return np.block(_block_fill(c, arrays))


rule(np.block, "arrays", adjoints={"arrays": "_rt.np_block_adjoint(g, arrays)"},
     note="nested lists of any depth; numbers are 1-element blocks")
# linear in the cotangent: np.block of the pieces is its transpose (the recursion over
# the nesting is not differentiated again)
primitive(np_block_adjoint, "v, arrays", adjoints={"v": "_rt.np_block_of(g, arrays)"},
          kind="other")
primitive(np_block_of, "c, arrays", adjoints={"c": "_rt.np_block_adjoint(g, arrays)"},
          kind="other")


# ----- insert, delete --------------------------------------------------------------------------


def _labels(arr, obj, values, axis, insert):
    """Where the elements of the result came from: the function run on labels, arr's
    elements numbered 0, 1, ... and values' -1, -2, ... (flat, C order)."""
    shape = np.shape(arr)
    lab = np.arange(int(np.prod(shape)), dtype=np.intp).reshape(shape)
    if not insert:
        return np.ravel(np.delete(lab, obj, axis))
    vshape = np.shape(values)
    vlab = -1 - np.arange(int(np.prod(vshape)), dtype=np.intp).reshape(vshape)
    return np.ravel(np.insert(lab, obj, vlab, axis))


nondifferentiable_builtin(_labels, reason="it computes positions")


def _zeros_for(g, shape):
    """Zeros of shape, of the cotangent's float or complex dtype (the scatter's target)."""
    return np.zeros(shape, np.result_type(np.asarray(g).dtype, float))


nondifferentiable_builtin(_zeros_for, reason="it builds zeros")


def np_insert_adjoint_arr(g, arr, obj, values, axis=None):
    """Each element of arr is in the result once: gather its cotangent from there."""
    lab = _labels(arr, obj, values, axis, True)
    pos = np.flatnonzero(lab >= 0)
    order = pos[np.argsort(lab[pos], kind="stable")]
    return np_fit(np.reshape(np.take(np.ravel(g), order), np.shape(arr)), arr)


def np_insert_adjoint_values(g, arr, obj, values, axis=None):
    """values, broadcast into the slots it fills (cast to arr's dtype): each element
    gets the sum of the cotangent over its copies; zero when arr is not of a float or
    complex dtype (the values are then truncated)."""
    if np.asarray(arr).dtype.kind not in "fc":
        return np_fit(np.zeros(np.shape(values)), values)
    lab = _labels(arr, obj, values, axis, True)
    pos = np.flatnonzero(lab < 0)
    part = np.take(np.ravel(g), pos)
    vals = _zeros_for(part, np.shape(values))
    return np_fit(np_take_adjoint(part, vals, -1 - lab[pos]), values)


rule(np.insert, "arr, obj, values, axis=None",
     adjoints={"arr": "_rt.np_insert_adjoint_arr(g, arr, obj, values, axis)",
               "values": "_rt.np_insert_adjoint_values(g, arr, obj, values, axis)"},
     note="obj an int, slice, sequence or mask; values broadcast as NumPy does")


def np_delete_adjoint(g, arr, obj, axis=None):
    """The kept elements get their cotangent back, the deleted ones zero."""
    lab = _labels(arr, obj, None, axis, False)
    zero = _zeros_for(g, np.shape(arr))
    return np_fit(np_take_adjoint(np.ravel(g), zero, lab), arr)


rule(np.delete, "arr, obj, axis=None",
     adjoints={"arr": "_rt.np_delete_adjoint(g, arr, obj, axis)"},
     note="obj an int, slice, sequence or mask")


# ----- vander, ptp -----------------------------------------------------------------------------


def _vander_powers(x, N, increasing):
    n = np.size(x) if N is None else int(N)
    p = np.arange(n)
    return p if increasing else p[::-1]


nondifferentiable_builtin(_vander_powers, reason="it computes exponents")


def np_vander_adjoint(g, x, N=None, increasing=False):
    """V[:, j] = x**p_j: x gets Σ_j g[:, j]·p_j·x**(p_j - 1) (no term for p_j = 0)."""
    x = np.asarray(x)
    p = _vander_powers(x, N, increasing)
    d = np.where(p > 0, p * x[:, None] ** np.maximum(p - 1, 0), 0)
    return np_fit(np.sum(np.asarray(g) * np.conj(d), axis=1), x)


rule(np.vander, "x, N=None, increasing=False",
     adjoints={"x": "_rt.np_vander_adjoint(g, x, N, increasing)"})


def np_ptp_adjoint(g, a, axis=None, keepdims=False):
    """ptp = max - min: the adjoint of the max minus that of the min (to the
    arg-extremum, ties split evenly, as for np.max and np.min)."""
    x = np.asarray(a)
    k = bool(keepdims)
    hi = np.max(x, axis=axis, keepdims=k)
    lo = np.min(x, axis=axis, keepdims=k)
    out = np_extremum_adjoint(g, x, hi, axis, k) - np_extremum_adjoint(g, x, lo, axis, k)
    return np_fit(out, a)


rule(np.ptp, "a, axis=None, out=None, keepdims=False",
     adjoints={"a": "_rt.np_ptp_adjoint(g, a, axis, keepdims)"},
     section="Reductions", note="to the arg-max and arg-min, ties split evenly")


# ----- diff's prepend= and append= -------------------------------------------------------------


def _diff_end(v, a, ax):
    """The shape prepend/append has in the concatenation (a number: 1 along the axis)."""
    if v is _NoValue or v is None:
        return None
    s = list(np.shape(a))
    if np.ndim(v) == 0:
        s[ax] = 1
        return tuple(s)
    return np.shape(v)


nondifferentiable_builtin(_diff_end, reason="it computes a shape")


def np_diff_ends_adjoint(g, a, n=1, axis=-1, prepend=_NoValue, append=_NoValue, which=0):
    """np.diff of concatenate((prepend, a, append), axis): the transpose of the n
    differences (as np_diff_adjoint), cut into the three parts; which: 0 for a, 1 for
    prepend, 2 for append (a number gets the sum of its part)."""
    x = np.asarray(a)
    ax = int(axis) % x.ndim
    pre, app = _diff_end(prepend, x, ax), _diff_end(append, x, ax)
    target = (a, prepend, append)[which]
    if (which == 1 and pre is None) or (which == 2 and app is None):
        return None
    if int(n) == 0:  # np.diff(a, 0, ...) is a itself: prepend and append are not used
        return np_fit(np.asarray(g) if which == 0 else np.zeros(np.shape(target)), target)
    out = np.asarray(g)
    pad = [(0, 0)] * out.ndim
    pad[ax] = (1, 1)
    for _ in range(int(n)):
        out = -np.diff(np.pad(out, pad), axis=ax)
    n_pre = 0 if pre is None else pre[ax]
    parts = np.split(out, [n_pre, n_pre + x.shape[ax]], axis=ax)
    part = parts[(1, 0, 2)[which]]  # (the parts are prepend, a, append)
    return np_fit(_sum_to(part, np.shape(target)), target)


rule(np.diff, "a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue", adjoints={
    "a": "_rt.np_diff_ends_adjoint(g, a, n, axis, prepend, append, 0)",
    "prepend": "_rt.np_diff_ends_adjoint(g, a, n, axis, prepend, append, 1)",
    "append": "_rt.np_diff_ends_adjoint(g, a, n, axis, prepend, append, 2)",
})
NOTES["np.diff"] = "prepend/append arrays or numbers (a number broadcast along the axis)"


# ----- pad: modes mean and linear_ramp ---------------------------------------------------------


def _pairs(x, ndim):
    """A pad keyword as NumPy reads it: (before, after) for each axis."""
    a = np.asarray(x)
    if a.size == 1:
        return [(a.ravel()[0],) * 2] * ndim
    if a.size == 2 and a.shape != (2, 1):
        r = a.ravel()
        return [(r[0], r[1])] * ndim
    return [tuple(p) for p in np.broadcast_to(a, (ndim, 2))]


def _stat_lengths(stat_length, ndim):
    if stat_length is None or stat_length is _NoValue:
        return [(None, None)] * ndim
    return [tuple(int(v) for v in p) for p in _pairs(np.round(stat_length), ndim)]


def _along(v, k, nd):
    """A 1-D array v shaped to lie along axis k of nd axes."""
    return np.reshape(v, (1,) * k + (-1,) + (1,) * (nd - k - 1))


def _stat_weights(n, b, a, lengths):
    """The weight of each of the n elements in the left and right means."""
    pos = np.arange(n)
    out = []
    for side, width, length in ((0, b, lengths[0]), (1, a, lengths[1])):
        m = n if length is None else min(length, n)
        if width and m == 0:
            raise MissingAdjointError(np.pad, "mode='mean' with stat_length 0 pads with the "
                                      "mean of no values (NaN): no gradient; give a "
                                      "stat_length of 1 or more")
        w = (pos < m) if side == 0 else (pos >= n - m)
        out.append(w / max(m, 1))
    return out


nondifferentiable_builtin(_pairs, _stat_lengths, _stat_weights, reason="it reads pad keywords")


def _pad_back(g, array, pad_width, mode, stat_length):
    """The transpose of pad (mode mean or linear_ramp, end values 0) and, for
    linear_ramp, the sums Σ g·∂out/∂end for each (axis, side): NumPy pads axis 0 first,
    then axis 1 of that, ...: the axes are undone last first."""
    x = np.asarray(array)
    nd = x.ndim
    pw = _pad_pairs(pad_width, nd)
    lengths = _stat_lengths(stat_length, nd)
    g = np.asarray(g)
    ends = [[0.0, 0.0] for _ in range(nd)]
    for k in range(nd - 1, -1, -1):
        b, a, n = int(pw[k][0]), int(pw[k][1]), x.shape[k]
        lead = (slice(None),) * k
        left, mid, right = g[lead + (slice(0, b),)], g[lead + (slice(b, b + n),)], \
            g[lead + (slice(b + n, b + n + a),)]
        if mode == "mean":
            wl, wr = _stat_weights(n, b, a, lengths[k])
            tl, tr = np.ones(b), np.ones(a)
        else:  # the ramp from the end value (t = 0) towards the edge (t = 1)
            wl, wr = np.arange(n) == 0, np.arange(n) == n - 1
            tl, tr = np.arange(b) / max(b, 1), (np.arange(a) / max(a, 1))[::-1]
            ends[k] = [np.sum(left * _along(1 - tl, k, nd)), np.sum(right * _along(1 - tr, k, nd))]
        sl = np.sum(left * _along(tl, k, nd), axis=k, keepdims=True)
        sr = np.sum(right * _along(tr, k, nd), axis=k, keepdims=True)
        g = mid + sl * _along(wl, k, nd) + sr * _along(wr, k, nd)
    return g, ends


def np_pad_stat_adjoint(g, array, pad_width, mode="constant", stat_length=_NoValue,
                        end_values=_NoValue):
    """The adjoint of np.pad's array for the modes mean (its stat_length) and
    linear_ramp; the other modes as np_pad_adjoint does them (or refuses)."""
    if mode not in ("mean", "linear_ramp"):
        return np_pad_adjoint(g, array, pad_width, mode)
    return np_fit(_pad_back(g, array, pad_width, mode, stat_length)[0], array)


def np_pad_ends_adjoint(g, array, pad_width, mode="constant", stat_length=_NoValue,
                        end_values=_NoValue):
    """The adjoint of linear_ramp's end_values: the ramps' weights of the end value
    summed per axis and side, then summed back to the shape end_values was given in."""
    if mode != "linear_ramp" or end_values is _NoValue:
        return None
    ends = _pad_back(g, array, pad_width, mode, stat_length)[1]
    sums = np.stack([np.stack(e) for e in ends])
    shape = np.shape(end_values)
    if np.size(end_values) == 1:
        return np_fit(np.reshape(np.sum(sums), shape), end_values)
    if np.size(end_values) == 2 and shape != (2, 1):
        return np_fit(np.reshape(np.sum(sums, axis=0), shape), end_values)
    return np_fit(_sum_to(sums, shape), end_values)


_PAD_MODES["mean"] = _PAD_MODES["linear_ramp"] = np_pad_stat_adjoint  # (np.pad(a, w, mode))


def _pad_any_call(*args):
    """np.pad at run time: (array, pad_width, mode, constant_values), or (array,
    pad_width, mode, stat_length, end_values) with the keywords given by name."""
    if len(args) == 4:
        return _pad_call(*args)
    array, pad_width, mode, stat_length, end_values = args
    kw = {}
    if stat_length is not _NoValue:
        kw["stat_length"] = stat_length
    if end_values is not _NoValue:
        kw["end_values"] = end_values
    return np.pad(array, pad_width, mode, **kw)


_by_keyword(rule(np.pad, "array, pad_width, mode='constant', stat_length=np._NoValue, "
                 "end_values=np._NoValue", adjoints={
                     "array": "_rt.np_pad_stat_adjoint(g, array, pad_width, mode, stat_length, "
                              "end_values)",
                     "end_values": "_rt.np_pad_ends_adjoint(g, array, pad_width, mode, "
                                   "stat_length, end_values)",
                 }), call=_pad_any_call)
NOTES["np.pad"] = ("modes constant (constant_values too), edge, reflect, symmetric, wrap, "
                   "mean (stat_length too), linear_ramp (end_values too)")
