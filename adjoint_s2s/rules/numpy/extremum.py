"""max/min: the primal reductions of a fused function (``np_max``, ``np_min``) and the
adjoint to the arg-extremum (``np_extremum_adjoint``, ``acc_extremum_adjoint``; ties
split evenly) with its transpose ``np_extremum_select``. The rules are in reductions.py.

Along the last axis of a large C-contiguous float64/float32 array of many short rows,
np_max/np_min read each row's extremum where ``argmax`` (``argmin``) finds it, in a
third to two thirds of the reduce's time, and record those positions; the adjoint
checks them with the comparison ``a == ans`` and a count, where it would otherwise
search the comparison with nonzero. Each such path is checked, never assumed, and
anything it does not recognise (NaN, a signed zero, a tie, another layout) takes
NumPy's reduce or the search, as before.
"""
import sys
import weakref

import numpy as np

from ...runtime.accumulate import _PRIVATE_REFS
from ...runtime.accumulate import acc as _acc  # (acc_extremum_adjoint has a parameter acc)
from .base import _axes, _keep, np_fit

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_BOOL = np.dtype(np.bool_)
_ndarray = np.ndarray
_NoValue = np._NoValue  # NumPy's "not given" (np.max passes keepdims only when given)
_add_reduce = np.add.reduce
_maximum_reduce, _minimum_reduce = np.maximum.reduce, np.minimum.reduce
_count_nonzero = np.count_nonzero
_all = np.logical_and.reduce
_isfinite = np.isfinite
_add_at = np.add.at  # (for more than _AT_MIN positions faster than a fancy-indexed +=)
_AT_MIN = 128
_refcount = sys.getrefcount


# ----- the primal max/min of a fused function --------------------------------------------------
#
# ``np.max(a, axis, keepdims=k)`` of an exact ndarray is ``np.maximum.reduce(a, axis, None,
# None, keepdims=k)`` after a few microseconds of Python layers; a fused function (fuse.py)
# calls these, which call that reduce (or, see _by_position, read the extremum where
# argmax finds it) for an exact ndarray and the NumPy function itself for anything else.


def _primal(name, top, reduce, numpy_fn):
    """np_max (top) or np_min: the reduce for an exact ndarray (or, for many short rows,
    the extremum read by position), the NumPy function itself for anything else."""

    def extremum(a, axis=None, keepdims=_NoValue):
        if type(a) is _ndarray:
            k = False if keepdims is _NoValue else keepdims
            if axis is not None and a.size >= _POSITION_MIN:
                n = a.shape[-1]
                if 2 <= n <= _POSITION_ROW and a.size >= _POSITION_ROWS * n:
                    out = _by_position(a, axis, k, top)
                    if out is not None:
                        return out
            return reduce(a, axis, None, None, k)
        return numpy_fn(a, axis, keepdims=keepdims)

    extremum.__name__ = extremum.__qualname__ = name
    return extremum


np_max = _primal("np_max", True, _maximum_reduce, np.max)
np_min = _primal("np_min", False, _minimum_reduce, np.min)


# The extremum along a last axis is found by position from this many elements on, in
# rows of 2 to _POSITION_ROW elements, _POSITION_ROWS rows or more: the reduce costs some
# 40 ns a row (there argmax's loop costs a third to two thirds as much), while argmax
# costs more over one long row, and far more over rows of one.
_POSITION_MIN = 2048
_POSITION_ROW = 1024
_POSITION_ROWS = 64

# (weakref to the last extremum _by_position returned, its flat positions, the shape of
# the array): a hint for the adjoint, which checks it (_unique_positions); dropped with
# the extremum.
_HINT = [None]


def _forget(ref):
    hint = _HINT[0]
    if hint is not None and hint[0] is ref:
        _HINT[0] = None


def _by_position(a, axis, keepdims, top):
    """The max (top) or min of a along its last axis, ``a.take(offsets + a.argmax(-1))``
    when that is the very array NumPy's reduce returns; else None. It is for (np_max and
    np_min call it only for arrays of many short rows, see _POSITION_MIN) a
    C-contiguous float64 or float32 array of two or more axes whose extrema are all
    neither NaN nor zero: equal such numbers have the same bits, while NumPy leaves open
    which NaN, or which of -0.0 and 0.0, its reduce returns."""
    shape = a.shape
    nd = len(shape)
    if nd < 2 or (axis != -1 and axis != nd - 1) or type(axis) is not int:
        return None
    dt = a.dtype
    if ((dt is not _F64 and dt is not _F32) or (keepdims is not True and keepdims is not False)
            or not a.flags.c_contiguous):
        return None
    i = a.argmax(-1, None, keepdims=keepdims) if top else a.argmin(-1, None, keepdims=keepdims)
    flat = _offsets(shape, keepdims)
    flat = flat + i
    m = a.take(flat)
    total = _add_reduce(m, None)  # NaN when any of them is NaN (or for inf + -inf)
    if total != total or _count_nonzero(m) != m.size:
        return None
    _HINT[0] = (weakref.ref(m, _forget), flat, shape)
    return m


_OFFSETS = {}


def _offsets(shape, keepdims):
    """The flat position of the first element of each row (last axis) of a C-contiguous
    array of shape, shaped like a reduction over that axis (read-only; cached for up to
    _OFFSETS_ROWS rows)."""
    key = (shape, keepdims)
    v = _OFFSETS.get(key)
    if v is None:
        rows = shape[:-1]
        n = int(np.prod(rows))
        v = (np.arange(n, dtype=np.intp) * shape[-1]).reshape(rows + ((1,) if keepdims else ()))
        if n <= _OFFSETS_ROWS:
            if len(_OFFSETS) >= 32:
                _OFFSETS.clear()
            v.flags.writeable = False
            _OFFSETS[key] = v
    return v


_OFFSETS_ROWS = 1 << 14


# ----- the adjoint ---------------------------------------------------------------------------


def np_extremum_adjoint(g, a, ans, axis=None, keepdims=False, zeros=None):
    """max/min: the adjoint goes to the elements equal to the result, ties split evenly.

    Linear in g; its transpose is ``np_extremum_select`` (the rules for both, used when
    a pullback is differentiated again, are in rules/runtime_rules.py). zeros: what
    ``shifted_zeros(a - ans, a, ans)`` gave, when the reverse pass proved it that."""
    a = np.asarray(a)
    gk = _keep(g, a.shape, axis, keepdims)
    pos = _unique_positions(a, ans, axis, keepdims, zeros)
    if pos is not None:  # one extremum per slice, found by position
        out = np.zeros(a.shape, np.result_type(a.dtype, gk.dtype, float))
        out.reshape(-1)[pos] = gk.reshape(-1)
        return np_fit(out, a)
    mask, pos, unique = _extremum_positions(a, ans, axis, keepdims)
    if unique:  # one extremum per slice (no tie): g goes there, O(slices)
        out = np.zeros(a.shape, np.result_type(a.dtype, gk.dtype, float))
        if pos is not None:
            out.reshape(-1)[pos] = gk.reshape(-1)
        else:
            np.put_along_axis(out, np.argmax(mask, axis=axis, keepdims=True), gk, axis)
        return np_fit(out, a)
    count = np.sum(mask, axis=_axes(axis, a.ndim), keepdims=True)
    return np_fit((gk / count) * mask, a)


def acc_extremum_adjoint(acc, g, a, ans, axis=None, keepdims=False, zeros=None):
    """``acc + np_extremum_adjoint(g, a, ans, axis, keepdims)``, for generated code's
    accumulators. When the extremum is one element per slice, g goes to those positions
    of the accumulator: in place when only the calling variable holds it (as for
    ``runtime.acc``), else in a copy. Either way no zero array and no dense addition."""
    if type(acc) is _ndarray and type(a) is _ndarray and acc.shape == a.shape:
        gk = g if keepdims and type(g) is _ndarray else _keep(g, a.shape, axis, keepdims)
        dt = acc.dtype
        if (dt is _F64 and a.dtype is _F64 and gk.dtype is _F64) or dt == np.result_type(
                a.dtype, gk.dtype, float):
            pos = None if _HINT[0] is None else _unique_positions(a, ans, axis, keepdims, zeros)
            if pos is None:
                pos = _single_positions(a, ans, axis, keepdims, zeros)
            if pos is not None:
                private = acc.base is None and _refcount(acc) <= _PRIVATE_REFS
                if private:  # (counted first: acc.flags holds a reference to acc)
                    flags = acc.flags
                    private = flags.writeable and flags.c_contiguous
                    del flags
                out = acc if private else np.array(acc, order="C")
                if pos.size > _AT_MIN:
                    _add_at(out.reshape(-1), pos, gk.reshape(-1))  # (one position a slice)
                else:
                    out.reshape(-1)[pos] += gk.reshape(-1)
                return out
    return _acc(acc, np_extremum_adjoint(g, a, ans, axis, keepdims))


def _unique_positions(a, ans, axis, keepdims, zeros=None):
    """The flat positions of the extremum ans of a along its last axis, in the order of
    ans's elements, when np_max/np_min found ans by position (_by_position) and every
    row still holds it exactly once; else None, which says nothing (the comparison with
    ans then decides, as without a hint).

    The recorded positions are checked, not trusted: a, the array now differentiated,
    is of the shape they were found in, and holds ans at each of them (which rules out
    NaN), and as many of its elements equal ans as there are rows, so no row holds it
    twice (-0.0 equals 0.0 there, as in ``a == ans``). One comparison, a count and a
    gather, where without positions a nonzero over the comparison finds them."""
    hint = _HINT[0]
    if hint is None or hint[0]() is not ans or type(a) is not _ndarray:
        return None
    shape, flat = a.shape, hint[1]
    nd = len(shape)
    if (shape != hint[2] or type(axis) is not int or (axis != -1 and axis != nd - 1)
            or flat.shape != ans.shape or a.dtype is not ans.dtype
            or ans.shape != (shape[:-1] + (1,) if keepdims else shape[:-1])):
        return None
    mask = _equal(a, zeros)
    if mask is None:
        mask = a == (ans if keepdims else ans.reshape(shape[:-1] + (1,)))
    if _count_nonzero(mask) != ans.size or not _all(mask.take(flat), None):
        return None
    return flat.reshape(-1)


def _single_positions(a, ans, axis, keepdims, zeros=None):
    """The flat positions of the extremum ans of the array a along a last (or the only)
    axis, in the order of ans's elements, when every slice has exactly one; else None.

    One comparison and one nonzero: a slice whose extremum is NaN matches nowhere (NaN
    equals nothing), so the count of matches alone could hide a tie behind it; the sum
    of ans, NaN when any of them is (or for inf + -inf), sends those to the general path.
    Any other slice holds its extremum, so as many matches as slices is one in each."""
    if not (axis is None or a.ndim == 1 or axis == -1 or axis == a.ndim - 1):
        return None
    if type(ans) is np.ndarray:
        total, n = _add_reduce(ans, None), ans.size
    else:
        total, n = ans, 1
    if total != total:
        return None
    mask = _equal(a, zeros)
    if mask is None:
        mask = a == (ans if keepdims and type(ans) is np.ndarray else _keep(ans, a.shape, axis, keepdims))
    if type(mask) is not np.ndarray:
        return None
    pos = mask.reshape(-1).nonzero()[0]  # in row order: slice by slice when one in each
    return pos if pos.size == n else None


def shifted_zeros(z, a, m):
    """``z == 0``, where z is ``a - m`` of these very arrays and m is the max or min of a
    over some axes, kept (the reverse pass proves that much, see
    passes/reverse/shifted.py), when that is exactly ``a == m``: a, m and z exact
    ndarrays of one float dtype, m of a's number of axes (``a - m`` paired each element
    with its slice's extremum), z of a's shape, and every extremum finite. Then x - m is
    0 exactly when x == m (IEEE subtraction, subnormals kept; x NaN or infinite gives NaN
    or an infinity), -0.0 and 0.0 alike. Else None. The adjoint of the max (min) reads
    it in place of the comparison ``a == m`` (_equal). None too for fewer than
    _SHIFT_MIN elements, where the comparison costs less than these checks."""
    if (type(z) is not _ndarray or z.size < _SHIFT_MIN or type(a) is not _ndarray
            or type(m) is not _ndarray):
        return None
    dt = a.dtype
    if ((dt is not _F64 and dt is not _F32) or z.dtype is not dt or m.dtype is not dt
            or z.shape != a.shape or m.ndim != a.ndim or m.size == 0
            or not _all(_isfinite(m), None)):
        return None
    return z == 0.0


_SHIFT_MIN = 4096


def _equal(a, zeros):
    """``a == ans`` as shifted_zeros found it (zeros), or None."""
    if type(zeros) is _ndarray and zeros.dtype is _BOOL and zeros.shape == a.shape:
        return zeros
    return None


def _extremum_positions(a, ans, axis, keepdims):
    """(mask, positions, unique) for the extremum ans of a along axis. mask: the elements
    equal to the extremum (and the NaNs, when it is NaN: they take the gradient); unique:
    every slice has exactly one; positions: then, along a last (or the only) axis, their
    flat positions in the order of ans's elements, else None."""
    full = _keep(ans, a.shape, axis, keepdims)
    mask = a == full
    if np.isnan(np.asarray(ans)).any():
        return mask | (np.isnan(a) & np.isnan(full)), None, False
    if axis is not None and not isinstance(axis, int):
        return mask, None, False
    if axis is None or a.ndim == 1 or axis in (-1, a.ndim - 1):
        pos = np.flatnonzero(mask)  # in row order: slice by slice when one in each
        if pos.size == np.size(ans):
            return mask, pos, True
        return mask, None, False
    return mask, None, bool(np.count_nonzero(mask) == np.size(ans))


def np_extremum_select(c, a, ans, axis=None, keepdims=False):
    """The transpose of np_extremum_adjoint in its gradient argument: c averaged over the
    elements equal to the extremum, shaped like the extremum."""
    a = np.asarray(a)
    full = _keep(ans, a.shape, axis, keepdims)
    mask = a == full
    if np.isnan(np.asarray(ans)).any():
        mask = mask | (np.isnan(a) & np.isnan(full))
    axes = _axes(axis, a.ndim)
    count = np.sum(mask, axis=axes, keepdims=True)
    out = np.sum(np.asarray(c) * mask, axis=axes, keepdims=True) / count
    return out.reshape(np.shape(ans))


# ----- where= and initial= ---------------------------------------------------------------------


def where_mask(where, shape):
    """The where= mask of a reduction, as booleans of the input's shape (a read-only view)."""
    return np.broadcast_to(np.asarray(where, dtype=bool), shape)


def _where_hits(a, ans, axis, keepdims, initial, where):
    """(the elements where= keeps that equal the extremum, whether initial equals it, the
    number of them per slice): NaN matches NaN, as the extremum propagates it."""
    full = _keep(ans, np.shape(a), axis, keepdims)
    nan = np.isnan(full)
    hit = ((a == full) | (np.isnan(a) & nan)) & where_mask(where, np.shape(a))
    if initial is None:
        init_hit = np.zeros(np.shape(full), dtype=bool)
    else:
        init_hit = (initial == full) | (np.isnan(initial) & nan)
    count = np.sum(hit, axis=_axes(axis, np.ndim(a)), keepdims=True) + init_hit
    return hit, init_hit, np.maximum(count, 1)


def np_extremum_where_adjoint(g, a, ans, axis=None, keepdims=False, initial=None, where=True):
    """max/min with where= and initial=: g to the kept elements equal to the extremum,
    ties (initial among them) split evenly; none when initial alone is the extremum."""
    a_ = np.asarray(a)
    hit, _, count = _where_hits(a_, ans, axis, keepdims, initial, where)
    gk = _keep(g, a_.shape, axis, keepdims)
    return np_fit(np.where(hit, gk / count, 0), a)


def np_extremum_initial_adjoint(g, a, ans, axis=None, keepdims=False, initial=None, where=True):
    """initial=: its share of g in each slice whose extremum it is."""
    if initial is None:
        return None
    a_ = np.asarray(a)
    _, init_hit, count = _where_hits(a_, ans, axis, keepdims, initial, where)
    gk = _keep(g, a_.shape, axis, keepdims)
    return np_fit(np.sum(np.where(init_hit, gk / count, 0)), initial)
