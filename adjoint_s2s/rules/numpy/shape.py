"""Rules of NumPy's shape and indexing functions (reshape, transpose, stacking and
splitting, pad, diag, sort, take, ...), each helper beside the rules that call it."""
import numpy as np

from ...errors import MissingAdjointError
from .base import _by_keyword, _CURRENT, _np, _sum_to, np_fit, np_parts, rule

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_atleast_adjoint",
    "np_column_stack_adjoint",
    "np_concatenate_adjoint",
    "np_diag_adjoint",
    "np_diagonal_adjoint",
    "np_diff_adjoint",
    "np_dstack_adjoint",
    "np_hstack_adjoint",
    "np_item_of",
    "np_linspace_adjoint",
    "np_pad_adjoint",
    "np_pad_value_adjoint",
    "np_repeat_adjoint",
    "np_reshape_like",
    "np_sort_adjoint",
    "np_split_adjoint",
    "np_stack_adjoint",
    "np_take_adjoint",
    "np_take_along_axis_adjoint",
    "np_tile_adjoint",
    "np_tolist_of",
    "np_unroll",
    "np_unrot90",
    "np_unstack_adjoint",
    "np_untranspose",
    "np_vstack_adjoint",
]


def np_reshape_like(g, a, order="C"):
    """The adjoint of any pure reshape of a (reshape, ravel, squeeze, expand_dims...)."""
    return np_fit(np.reshape(g, np.shape(a), order=order), a)


def _pack(grads, arrays):
    """Per-element gradients shaped like the sequence argument they belong to."""
    if isinstance(arrays, np.ndarray):
        return np_fit(np.stack(grads), arrays)
    out = [np_fit(gi, xi) for gi, xi in zip(grads, arrays)]
    return tuple(out) if isinstance(arrays, tuple) else out


def _split_stacked(g, arrays, promote, axis_of):
    g = np.asarray(g)
    shapes = [np.shape(x) for x in arrays]
    promoted = [promote(s) for s in shapes]
    axis = axis_of(promoted)
    sizes = [s[axis] for s in promoted]
    pieces = np.split(g, np.cumsum(sizes)[:-1], axis=axis)
    return _pack([p.reshape(s) for p, s in zip(pieces, shapes)], arrays)


def _at_least(n):
    def promote(s):
        s = tuple(s)
        if len(s) >= n:
            return s
        if n == 1:
            return (1,)
        if n == 2:
            return (1,) * (2 - len(s)) + s
        return {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}[len(s)]

    return promote


def _pad_pairs(pad_width, ndim):
    if isinstance(pad_width, dict):  # {axis: width or (before, after)}, as NumPy 2.3 reads it
        pad_width = [np.broadcast_to(pad_width.get(k, pad_width.get(k - ndim, 0)), 2) for k in range(ndim)]
    return np.broadcast_to(np.asarray(pad_width, dtype=int), (ndim, 2))


def np_diagonal_adjoint(g, a, offset=0, axis1=0, axis2=1):
    a = np.asarray(a)
    g = np.asarray(g)
    ax1, ax2 = axis1 % a.ndim, axis2 % a.ndim
    n1, n2 = a.shape[ax1], a.shape[ax2]
    rest = g.shape[:-1]
    out = np.zeros(rest + (n1, n2), dtype=np.result_type(g, float))
    d = g.shape[-1]
    i = np.arange(d)
    out[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return np_fit(np.moveaxis(out, (-2, -1), (ax1, ax2)), a)


def _space_weights(g, num, endpoint, axis, which):
    """g (the adjoint of linspace's samples) and the weight of start (which=0) or stop
    (which=1) in each sample, shaped to broadcast along the samples' axis."""
    g = np.asarray(g)
    t = np.linspace(0.0, 1.0, int(num), endpoint=endpoint)  # 0 first, exactly 1 last
    ax = int(axis) % g.ndim
    t = t.reshape((1,) * ax + (t.size,) + (1,) * (g.ndim - ax - 1))
    return g, ax, (t if which else 1 - t)


def _integer_dtype(dtype):
    return dtype is not None and not np.issubdtype(np.dtype(dtype), np.inexact)


def np_linspace_adjoint(g, start, stop, num=50, endpoint=True, retstep=False, dtype=None,
                        axis=0, which=0):
    """linspace = start + (stop - start)·t along axis: start gets Σ g·(1 - t), stop Σ g·t
    (with retstep, the step (stop - start)/div adds ∓g_step/div). An integer dtype
    floors the samples: no gradient."""
    x = stop if which else start
    if _integer_dtype(dtype):
        return None
    g_step = None
    if retstep:
        g, g_step = np_parts(g, 2)
    out = None
    if g is not None:
        g, ax, w = _space_weights(g, num, endpoint, axis, which)
        out = np.sum(g * w, axis=ax)
    div = int(num) - 1 if endpoint else int(num)
    if g_step is not None and div > 0:
        d = np.asarray(g_step) / div * (1 if which else -1)
        out = d if out is None else out + d
    return None if out is None else np_fit(out, x)


def _logspace_base(base, ans, axis):
    base = np.asarray(base)
    if base.ndim:  # an array base broadcasts like start and stop: the samples' axis inside
        base = np.expand_dims(base, int(axis) % np.ndim(ans))
    return base


def _item_index(a, idx):
    """The flat position that a.item(*idx) reads."""
    if len(idx) == 1 and isinstance(idx[0], tuple):
        idx = idx[0]
    if not idx:
        if np.size(a) != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return 0
    if len(idx) == 1:
        return int(idx[0]) % np.size(a)
    return int(np.ravel_multi_index(tuple(int(i) for i in idx), np.shape(a), mode="wrap"))


def np_item_of(c, a, idx):
    """The transpose of np_item_adjoint in its gradient: the element of c that a.item reads."""
    if c is None:
        return None
    return np.ravel(np.asarray(c))[_item_index(a, idx)]


def _fill_from_lists(out, g, at=()):
    """Write the nested lists g into out (None entries, at any depth, stay zeros)."""
    if g is None:
        return
    if len(at) == out.ndim:
        out[at] = g
        return
    for i, gi in enumerate(g):
        _fill_from_lists(out, gi, at + (i,))


def _list_dtypes(g):
    if isinstance(g, (list, tuple)):
        return [t for x in g for t in _list_dtypes(x)]
    return [] if g is None else [np.asarray(g).dtype]


def np_tolist_of(c):
    """The transpose of np_tolist_adjoint in its gradient: the array as nested lists."""
    return None if c is None else np.asarray(c).tolist()


def np_index_trick_rule(obj):
    """What ``np.r_[...]`` / ``np.c_[...]`` computes, as a differentiable function of the
    items (None for other objects)."""
    if type(obj) is type(np.r_):
        return np_r_concat
    if type(obj) is type(np.c_):
        return np_c_concat
    return None


def np_r_concat(*keys):
    """np.r_[keys]: the items along the first axis (a number is one row, a slice a range)."""
    pieces = []
    for k in keys:
        if isinstance(k, slice):
            pieces.append(np_index_trick_range(k))
        else:
            pieces.append(np.atleast_1d(np.asarray(k)))
    return np.concatenate(pieces, 0)


def np_c_concat(*keys):
    """np.c_[keys]: the items along the last axis (a vector is a column, a number 1×1)."""
    pieces = []
    for k in keys:
        a = np_index_trick_range(k) if isinstance(k, slice) else np.asarray(k)
        if np.ndim(a) < 2:
            a = np.reshape(a, (-1, 1))
        pieces.append(a)
    return np.concatenate(pieces, -1)


def np_index_trick_range(k):
    """A slice item of np.r_ / np.c_: its range of numbers (a constant)."""
    return np.r_[k]


def np_index_trick_check(obj, keys, y):
    """Refuse a form of np.r_ / np.c_ that np_r_concat / np_c_concat do not reproduce
    (string directives, ...): the gradient would be of something else."""
    name = "np.c_" if type(obj) is type(np.c_) else "np.r_"
    ok = not any(isinstance(k, str) for k in keys)
    if ok:
        want = obj[keys[0] if len(keys) == 1 else tuple(keys)]
        ok = np.shape(want) == np.shape(y) and bool(np.array_equal(want, y, equal_nan=True))
    if not ok:
        raise MissingAdjointError(obj, f"this form of {name}[...] has no rule (string "
                                  "directives, matrices): write it with np.concatenate or np.stack")


# =====================================================================================
# Shape and indexing
# =====================================================================================
_CURRENT[0] = "Shape and indexing"


rule(np.reshape, "a, shape, order='C'", adjoints={"a": "_rt.np_reshape_like(g, a, order)"})


rule(np.ravel, "a, order='C'", adjoints={"a": "_rt.np_reshape_like(g, a, order)"})


rule(np.squeeze, "a, axis=None", adjoints={"a": "_rt.np_reshape_like(g, a)"})


rule(np.expand_dims, "a, axis", adjoints={"a": "_rt.np_reshape_like(g, a)"})


# ----- shape -------------------------------------------------------------------------------


def np_untranspose(g, axes=None):
    """The adjoint of transpose(x, axes): transpose back."""
    g = np.asarray(g)
    if axes is None:
        return np.transpose(g)
    if np.ndim(axes) == 0:
        axes = (axes,)
    return np.transpose(g, np.argsort([int(a) % g.ndim for a in axes]))


rule(np.transpose, "a, axes=None",
     adjoints={"a": "_rt.np_fit(_rt.np_untranspose(g, axes), a)"})


rule(_np("matrix_transpose"), "x", adjoints={"x": "_rt.np_fit(np.swapaxes(g, -1, -2), x)"})


rule(_np("matrix_transpose", np.linalg), "x",
     adjoints={"x": "_rt.np_fit(np.swapaxes(g, -1, -2), x)"})


rule(np.swapaxes, "a, axis1, axis2",
     adjoints={"a": "_rt.np_fit(np.swapaxes(g, axis1, axis2), a)"})


rule(np.moveaxis, "a, source, destination",
     adjoints={"a": "_rt.np_fit(np.moveaxis(g, destination, source), a)"})


rule(np.broadcast_to, "array, shape", "1", None)


def np_atleast_adjoint(g, i, x):
    """atleast_Nd with several arguments returns a tuple: entry i is a reshape of x."""
    gi = np_parts(g, i + 1)[i]
    return None if gi is None else np_reshape_like(gi, x)


for _fn in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    rule(_fn, "a", adjoints={"a": "_rt.np_reshape_like(g, a)"})
    rule(_fn, "a, b", kind="other", adjoints={
        "a": "_rt.np_atleast_adjoint(g, 0, a)", "b": "_rt.np_atleast_adjoint(g, 1, b)"})
    rule(_fn, "a, b, c", kind="other", adjoints={
        "a": "_rt.np_atleast_adjoint(g, 0, a)", "b": "_rt.np_atleast_adjoint(g, 1, b)",
        "c": "_rt.np_atleast_adjoint(g, 2, c)"})


def np_concatenate_adjoint(g, arrays, axis=0):
    g = np.asarray(g)
    shapes = [np.shape(x) for x in arrays]
    if axis is None:
        sizes = [int(np.prod(s)) for s in shapes]
        pieces = np.split(g.ravel(), np.cumsum(sizes)[:-1])
        return _pack([p.reshape(s) for p, s in zip(pieces, shapes)], arrays)
    sizes = [s[axis] for s in shapes]
    return _pack(np.split(g, np.cumsum(sizes)[:-1], axis=axis), arrays)


rule(np.concatenate, "arrays, axis=0, dtype=None, casting='same_kind'",
     adjoints={"arrays": "_rt.np_concatenate_adjoint(g, arrays, axis)"})


def np_stack_adjoint(g, arrays, axis=0):
    g = np.asarray(g)
    moved = np.moveaxis(g, axis, 0)
    if isinstance(arrays, np.ndarray):
        return np_fit(moved, arrays)
    return _pack(list(moved), arrays)


rule(np.stack, "arrays, axis=0, dtype=None, casting='same_kind'", adjoints={"arrays": "_rt.np_stack_adjoint(g, arrays, axis)"})


def np_unstack_adjoint(g, x, ans, axis=0):
    x = np.asarray(x)
    gs = np_parts(g, len(ans))
    if all(v is None for v in gs):
        return None
    full = [np.zeros(np.shape(y)) if v is None else np.asarray(v) for v, y in zip(gs, ans)]
    return np_fit(np.stack(full, axis=axis), x)


_by_keyword(rule(_np("unstack"), "x, axis=0", kind="other",
                 adjoints={"x": "_rt.np_unstack_adjoint(g, x, ans, axis)"}))


def np_hstack_adjoint(g, tup):
    return _split_stacked(g, tup, _at_least(1), lambda ps: 0 if len(ps[0]) == 1 else 1)


rule(np.hstack, "tup, dtype=None, casting='same_kind'", adjoints={"tup": "_rt.np_hstack_adjoint(g, tup)"})


def np_vstack_adjoint(g, tup):
    return _split_stacked(g, tup, _at_least(2), lambda ps: 0)


rule(np.vstack, "tup, dtype=None, casting='same_kind'", adjoints={"tup": "_rt.np_vstack_adjoint(g, tup)"})


def np_dstack_adjoint(g, tup):
    return _split_stacked(g, tup, _at_least(3), lambda ps: 2)


rule(np.dstack, "tup", adjoints={"tup": "_rt.np_dstack_adjoint(g, tup)"})


def np_column_stack_adjoint(g, tup):
    def promote(s):
        s = tuple(s)
        return (s[0], 1) if len(s) == 1 else ((1, 1) if not s else s)

    return _split_stacked(g, tup, promote, lambda ps: 1)


rule(np.column_stack, "tup", adjoints={"tup": "_rt.np_column_stack_adjoint(g, tup)"})


def np_split_adjoint(g, ary, ans, axis=0):
    """The adjoint of a split: the pieces' adjoints (zeros where None) put back together."""
    gs = np_parts(g, len(ans))
    if all(v is None for v in gs):
        return None
    full = [np.zeros(np.shape(y)) if v is None else np.asarray(v) for v, y in zip(gs, ans)]
    return np_fit(np.concatenate(full, axis=axis), ary)


for _fn in (np.split, np.array_split):
    rule(_fn, "ary, indices_or_sections, axis=0", kind="other",
         adjoints={"ary": "_rt.np_split_adjoint(g, ary, ans, axis)"},
         note="unused pieces are zeros")


rule(np.hsplit, "ary, indices_or_sections", kind="other",
     adjoints={"ary": "_rt.np_split_adjoint(g, ary, ans, 1 if np.ndim(ary) > 1 else 0)"})


rule(np.vsplit, "ary, indices_or_sections", kind="other",
     adjoints={"ary": "_rt.np_split_adjoint(g, ary, ans, 0)"})


rule(np.dsplit, "ary, indices_or_sections", kind="other",
     adjoints={"ary": "_rt.np_split_adjoint(g, ary, ans, 2)"})


def np_tile_adjoint(g, A, reps):
    shape = np.shape(A)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    d = max(len(shape), len(reps))
    shape_p = (1,) * (d - len(shape)) + tuple(shape)
    reps_p = (1,) * (d - len(reps)) + reps
    inter = [v for r, s in zip(reps_p, shape_p) for v in (r, s)]
    out = np.reshape(g, inter).sum(axis=tuple(range(0, 2 * d, 2)))
    return np_fit(out.reshape(shape), A)


rule(np.tile, "A, reps", adjoints={"A": "_rt.np_tile_adjoint(g, A, reps)"})


def np_repeat_adjoint(g, a, repeats, axis=None):
    a = np.asarray(a)
    g = np.asarray(g)
    if axis is None:
        src_shape, gm, ax = (a.size,), g.ravel(), 0
    else:
        src_shape, gm, ax = a.shape, g, int(axis) % a.ndim
    n = src_shape[ax]
    gm = np.moveaxis(gm, ax, 0)
    if np.ndim(repeats) == 0 or np.size(repeats) == 1:
        r = int(np.ravel(repeats)[0])
        out = gm.reshape((n, r) + gm.shape[1:]).sum(axis=1)
    else:
        out = np.zeros((n,) + gm.shape[1:], dtype=gm.dtype)
        np.add.at(out, np.repeat(np.arange(n), repeats), gm)
    out = np.moveaxis(out, 0, ax)
    return np_fit(out.reshape(a.shape), a)


rule(np.repeat, "a, repeats, axis=None",
     adjoints={"a": "_rt.np_repeat_adjoint(g, a, repeats, axis)"})


rule(np.flip, "m, axis=None", adjoints={"m": "_rt.np_fit(np.flip(g, axis), m)"})


rule(np.fliplr, "m", adjoints={"m": "_rt.np_fit(np.fliplr(g), m)"})


rule(np.flipud, "m", adjoints={"m": "_rt.np_fit(np.flipud(g), m)"})


def np_unroll(g, shift, axis=None):
    return np.roll(g, -np.asarray(shift), axis)


rule(np.roll, "a, shift, axis=None",
     adjoints={"a": "_rt.np_fit(_rt.np_unroll(g, shift, axis), a)"})


def np_unrot90(g, m, k=1, axes=None):
    return np_fit(np.rot90(g, -k, (0, 1) if axes is None else axes), m)


rule(np.rot90, "m, k=1, axes=(0, 1)", adjoints={"m": "_rt.np_unrot90(g, m, k, axes)"})


_PAD_MODES = {}  # mode -> its adjoint, for the modes whose helpers are in shape_extra.py


def _pad_call(array, pad_width, mode, constant_values):
    if mode == "constant":
        return np.pad(array, pad_width, mode, constant_values=constant_values)
    return np.pad(array, pad_width, mode)


def np_pad_adjoint(g, array, pad_width, mode="constant"):
    """The adjoint of np.pad: the inner block for constant padding; for the modes that
    copy elements (edge, reflect, symmetric, wrap) every copy adds back to its source."""
    x = np.asarray(array)
    g = np.asarray(g)
    if mode == "constant" or mode is None:
        pw = _pad_pairs(pad_width, x.ndim)
        inner = tuple(slice(int(b), int(b) + n) for (b, _), n in zip(pw, x.shape))
        return np_fit(g[inner], array)
    if mode in ("edge", "reflect", "symmetric", "wrap"):
        idx = np.pad(np.arange(x.size).reshape(x.shape), pad_width, mode).ravel()
        flat = g.ravel()
        out = np.bincount(idx, weights=np.real(flat), minlength=x.size)
        if np.iscomplexobj(flat):
            out = out + 1j * np.bincount(idx, weights=np.imag(flat), minlength=x.size)
        return np_fit(out.reshape(x.shape), array)
    if mode in _PAD_MODES:  # mean, linear_ramp
        return _PAD_MODES[mode](g, array, pad_width, mode)
    raise MissingAdjointError(np.pad, f"its gradient is computed for the modes constant, edge, "
                              f"reflect, symmetric, wrap, mean and linear_ramp, not mode={mode!r}; "
                              f"pad with np.concatenate of the statistic you need instead")


def np_pad_value_adjoint(g, array, pad_width, mode="constant", constant_values=0):
    """The adjoint of constant_values (a number, or values per axis and side): the sum of g
    over the padding each value fills (np.pad fills a corner with the last axis's)."""
    if mode != "constant":
        return None
    x, g = np.asarray(array), np.asarray(g)
    slots = np.arange(1, 2 * x.ndim + 1).reshape(x.ndim, 2)
    which = np.pad(np.zeros(x.shape, int), pad_width, constant_values=slots)
    sums = np.sum(g[..., None] * (which[..., None] == slots.ravel()), tuple(range(g.ndim)))
    return np_fit(_sum_to(np.reshape(sums, (x.ndim, 2)), np.shape(constant_values)), constant_values)


_by_keyword(rule(np.pad, "array, pad_width, mode='constant', constant_values=0", adjoints={
    "array": "_rt.np_pad_adjoint(g, array, pad_width, mode)",
    "constant_values": "_rt.np_pad_value_adjoint(g, array, pad_width, mode, constant_values)",
}, note="modes constant (constant_values too), edge, reflect, symmetric, wrap"),
    call=_pad_call)


def np_diag_adjoint(g, v, k=0):
    if np.ndim(v) == 1:
        return np_fit(np.diagonal(np.asarray(g), k).copy(), v)
    return np_diagonal_adjoint(g, v, k, 0, 1)


rule(np.diag, "v, k=0", adjoints={"v": "_rt.np_diag_adjoint(g, v, k)"})


rule(np.diagonal, "a, offset=0, axis1=0, axis2=1",
     adjoints={"a": "_rt.np_diagonal_adjoint(g, a, offset, axis1, axis2)"})


_by_keyword(rule(_np("diagonal", np.linalg), "x, offset=0",
                 adjoints={"x": "_rt.np_diagonal_adjoint(g, x, offset, -2, -1)"}))


rule(np.tril, "m, k=0", adjoints={"m": "_rt.np_fit(np.tril(g, k), m)"})


rule(np.triu, "m, k=0", adjoints={"m": "_rt.np_fit(np.triu(g, k), m)"})


def np_diff_adjoint(g, a, n=1, axis=-1):
    out = np.asarray(g)
    pad = [(0, 0)] * out.ndim
    pad[axis % out.ndim] = (1, 1)
    for _ in range(n):
        out = -np.diff(np.pad(out, pad), axis=axis)
    return np_fit(out, a)


rule(np.diff, "a, n=1, axis=-1", adjoints={"a": "_rt.np_diff_adjoint(g, a, n, axis)"})


def np_sort_adjoint(g, a, axis=-1):
    a = np.asarray(a)
    g = np.asarray(g)
    if axis is None:
        order = np.argsort(a, axis=None, kind="stable")
        return np_fit(np.ravel(g)[np.argsort(order)].reshape(a.shape), a)
    order = np.argsort(a, axis=axis, kind="stable")
    return np_fit(np.take_along_axis(g, np.argsort(order, axis=axis), axis=axis), a)


rule(np.sort, "a, axis=-1, kind=None, order=None, stable=None",
     adjoints={"a": "_rt.np_sort_adjoint(g, a, axis)"})


def np_take_adjoint(g, a, indices, axis=None):
    a = np.asarray(a)
    g = np.asarray(g)
    dtype = np.result_type(g, float)
    if axis is None:
        out = np.zeros(a.size, dtype=dtype)
        np.add.at(out, np.asarray(indices), g)
        return np_fit(out.reshape(a.shape), a)
    ax = int(axis) % a.ndim
    out = np.zeros(a.shape, dtype=dtype)
    np.add.at(out, (slice(None),) * ax + (np.asarray(indices),), g)
    return np_fit(out, a)


rule(np.take, "a, indices, axis=None",
     adjoints={"a": "_rt.np_take_adjoint(g, a, indices, axis)"},
     note="repeated indices accumulate")


def np_take_along_axis_adjoint(g, arr, indices, axis=-1):
    arr = np.asarray(arr)
    g = np.asarray(g)
    indices = np.asarray(indices)
    if axis is None:
        out = np.zeros(arr.size, dtype=np.result_type(g, float))
        np.add.at(out, indices, g)
        return np_fit(out.reshape(arr.shape), arr)
    ax = int(axis) % arr.ndim
    index = []
    for d in range(arr.ndim):
        if d == ax:
            index.append(indices)
        else:
            shape = [1] * arr.ndim
            shape[d] = indices.shape[d]
            index.append(np.arange(indices.shape[d]).reshape(shape))
    out = np.zeros(arr.shape, dtype=np.result_type(g, float))
    np.add.at(out, tuple(index), g)
    return np_fit(out, arr)


rule(np.take_along_axis, "arr, indices, axis=-1",
     adjoints={"arr": "_rt.np_take_along_axis_adjoint(g, arr, indices, axis)"})
