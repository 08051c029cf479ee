"""Zeros, seeds and projection: an adjoint brought into the space of its primal.

``real``/``scalar``/``seed`` turn a cotangent (maybe None, a zero or a thunk) into what
a pullback of a float, a complex or anything else expects; ``unbroadcast`` sums a
gradient down to the shape of its primal. ``Scattered`` is the adjoint of ``x[idx]``
before it is written out (see passes/sparse.py): ``unbroadcast`` reduces it reading only
its few positions.

    >>> unbroadcast(np.ones((3, 2)), np.zeros(2))
    array([3., 3.])
"""
import math
import sys

import numpy as np

from ..misuse import _is_scalar
from ..tangents import AbstractZero, DeclinedGradient, Thunk


# ----- zeros, seeds and projection ----------------------------------------------------------


def real(x):
    """An adjoint of a real scalar: a float, with zeros as 0.0."""
    t = type(x)
    if t is float:
        return x
    if x is None or isinstance(x, AbstractZero):
        return 0.0
    if isinstance(x, Thunk):  # stay lazy: the thunk runs only if its value is used
        if type(x) is DeclinedGradient:
            return x
        return Thunk(lambda: real(x.unthunk()))
    if t is complex or isinstance(x, complex):
        return x.real
    if isinstance(x, np.ndarray):
        if x.ndim == 0:
            return float(x.real)
        return x.real
    if isinstance(x, (int, np.integer, np.floating)):
        return float(x)
    if isinstance(x, np.complexfloating):
        return float(x.real)
    if isinstance(x, (list, tuple, dict, str)):
        raise TypeError(f"the seed of a pullback of a real number is a number, not a {type(x).__name__}")
    return x


def scalar(x):
    """An adjoint of a complex scalar: a number, with zeros as 0.0."""
    if type(x) is complex or type(x) is float:
        return x
    if x is None or isinstance(x, AbstractZero):
        return 0.0
    if type(x) is np.ndarray and x.ndim == 0:
        return x[()]  # (a NumPy rule's adjoint of a scalar: a number, as its primal)
    return x


def seed(x):
    """An adjoint of any other value: zeros become None, thunks are forced."""
    if x is None or isinstance(x, AbstractZero):
        return None
    if isinstance(x, Thunk):
        return x.unthunk()
    return x


# Whether y is a value ``gradient`` differentiates (a real number, a real 0-d array): the
# test of ``misuse._check_scalar`` itself, which a fused function (fuse.py) whose result is
# not statically a real number applies before it runs its pullback's lines.
def real_scalar(y):
    t = type(y)
    return True if t is _FLOAT64 or t is float else _is_scalar(y)  # (np.mean's value first)


_FLOAT64 = np.float64


_NUMBER_TYPES = (int, float, complex, np.number)


def numbers_list(a):
    """Whether a is a list or tuple of numbers (or of such lists), one of them not an int:
    values NumPy takes as the array np.asarray makes (`np.prod([a, 2.0])`); not an axis,
    a shape or pad widths, which are ints."""
    return _numbers(a) == 2


def numeric_list(a):
    """Whether a is a non-empty list or tuple of numbers (or of such lists), ints too: an
    operand NumPy takes as the array np.asarray makes (`v * [1, 2]`)."""
    return _numbers(a) > 0


def _numbers(a):
    """0: a is not a non-empty list or tuple of numbers (or of such lists); 1: it is, all
    ints; 2: it is, one of them not an int."""
    if (type(a) is not list and type(a) is not tuple) or not a:
        return 0
    got = 1
    for v in a:
        if isinstance(v, (list, tuple)):
            inner = _numbers(v)
            if not inner:
                return 0
            got = max(got, inner)
        elif not isinstance(v, _NUMBER_TYPES):
            return 0
        elif not isinstance(v, (int, np.integer)):
            got = 2
    return got


def as_given(back, given, listed=numbers_list):
    """back (a pullback, run on arrays made of the lists of numbers given, those listed
    says), its gradients of those put back in their lists' structure."""
    fit = sys.modules[__package__].np_fit  # (_rt's: the rules import this module)

    def listed_pullback(g):
        grads = back(g)
        head = tuple(fit(d, a) if d is not None and listed(a) else d for d, a in zip(grads, given))
        return head + tuple(grads[len(given):])

    return listed_pullback


def re(x):
    if x is None or isinstance(x, AbstractZero):
        return None
    return x.real


def im(x):
    if x is None or isinstance(x, AbstractZero):
        return None
    return x.imag


def im_seed(g):
    """Adjoint of y = z.imag (Zygote: z̄ = i·real(ȳ))."""
    if g is None:
        return None
    return 1j * real(g)


def re_or_self(g, x):
    if isinstance(x, (complex, np.complexfloating)):
        return g
    return re(g)


def conj(x):
    t = type(x)
    if t is float or t is _FLOAT64:
        return x
    if t is _ndarray:
        d = x.dtype
        return x if d is _F64 or d.kind != "c" else x.conj()
    if isinstance(x, np.ndarray):
        return x.conj() if np.iscomplexobj(x) else x
    if isinstance(x, complex):
        return x.conjugate()
    return x


def neg(g):
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(g, tuple):
        return tuple(neg(e) for e in g)
    return -g


_add_reduce = np.add.reduce  # g.sum(axis=0) without ndarray.sum's Python wrapper
_F64 = np.dtype(np.float64)  # (a dtype test by identity: np.result_type costs microseconds)


_ONES = {}


_BLAS_ROW = 4096  # the longest row _trailing_sum sums through BLAS


def _ones(shape):
    v = _ONES.get(shape)
    if v is None:
        v = _ONES[shape] = np.ones(shape)
        v.flags.writeable = False
    return v


def _trailing_sum(g, ls):
    """g summed over its trailing axes where ls (same ndim) has 1s, or None.

    A matrix-vector product with ones: NumPy's sum over a short last axis loops per row
    (38 µs for 1000 rows of 100, against 11 µs through BLAS). Only for float64 and rows
    of at most _BLAS_ROW elements, so the summation error stays that of NumPy's sum."""
    gs = g.shape
    if len(gs) == 2 and ls[1] == 1 and ls[0] == gs[0] >= 4:  # row sums, the usual case
        k = gs[1]
        if 1 < k <= _BLAS_ROW and g.flags.c_contiguous:
            return g @ _ones((k, 1))  # (a column of ones: the product has like's shape)
        return None
    j = len(ls)
    while j and ls[j - 1] == 1:
        j -= 1
    if j == len(ls) or gs[:j] != ls[:j] or not g.flags.c_contiguous:
        return None
    k = g.size // max(1, math.prod(gs[:j]))
    if not 1 < k <= _BLAS_ROW or g.size < 4 * k:
        return None
    return (g.reshape(-1, k) @ _ones((k,))).reshape(ls)


_ndarray = np.ndarray  # (a global read, not np's attribute: unbroadcast is called a lot)


def unbroadcast(g, like):
    """Sum g down to the shape of like (broadcasting undone); project onto like's space."""
    if type(g) is _ndarray and type(like) is _ndarray:
        gs, ls, dt = g.shape, like.shape, g.dtype
        if dt is like.dtype or dt == like.dtype:  # (by identity first: == costs more)
            if gs == ls:
                return g  # the common case: nothing to undo
            if len(gs) == len(ls) + 1 and gs[1:] == ls:
                return _add_reduce(g, 0)  # the next most common: a bias added to a batch
            if dt is _F64 and len(gs) == len(ls):
                out = _trailing_sum(g, ls)  # a per-row quantity (a row max, a row sum)
                if out is not None:
                    return out
    elif g is None:
        return None
    elif type(g) is DeclinedGradient:  # stays lazy: it raises where it is read
        return g
    elif type(g) is float and (type(like) is float or type(like) is np.float64):
        return g  # scalar code (or a float64 scalar, np.mean's result): nothing to undo
    elif type(g) is _FLOAT64 and (type(like) is float or type(like) is _FLOAT64):
        return float(g)  # an array's item in scalar code: as the general case below gives it
    elif type(g) is Scattered:
        if type(like) is np.ndarray:
            return g if g.shape == like.shape and g.dtype == like.dtype else g.reduce_to(like)
        return unbroadcast(g.add_into(None), like)
    if isinstance(like, np.ndarray):
        if not isinstance(g, np.ndarray):
            g = np.asarray(g)
        if g.shape != like.shape:
            extra = g.ndim - like.ndim
            if extra > 0:
                g = g.sum(axis=tuple(range(extra)))
            axes = tuple(i for i, n in enumerate(like.shape) if n == 1 and g.shape[i] != 1)
            if axes:
                g = g.sum(axis=axes, keepdims=True)
            if g.shape != like.shape:
                g = np.broadcast_to(g, like.shape).copy()
        if not np.iscomplexobj(like) and np.iscomplexobj(g):
            g = g.real
        if g.dtype != like.dtype and np.issubdtype(like.dtype, np.inexact):
            g = g.astype(like.dtype)
        return g
    if isinstance(like, (list, tuple)) and isinstance(g, np.ndarray) and g.ndim:
        out = _like_list(g, like)  # np.sin([a, b]): a list of gradients, not their sum
        if out is not None:
            return out
    if isinstance(g, np.ndarray):
        g = g.sum()
    if isinstance(like, (float, int)) and not isinstance(like, bool):
        if isinstance(g, (complex, np.complexfloating)):
            g = g.real
        return float(g) if isinstance(g, np.generic) else g
    return g


def _like_list(g, like):
    """g (an array) as the nested lists/tuples of like, each entry projected onto its
    element; None when like is not a regular nest that g broadcasts to."""
    try:
        shape = np.shape(like)
        g = np.broadcast_to(g, shape) if g.shape != shape else g
    except ValueError:  # ragged, or g does not fit
        return None

    def walk(gi, v):
        if isinstance(v, (list, tuple)):
            items = [walk(gi[i], e) for i, e in enumerate(v)]
            return tuple(items) if isinstance(v, tuple) else items
        return unbroadcast(np.array(gi), v)

    return walk(g, like)


def broadcast_like(g, v):
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(v, np.ndarray) and np.shape(g) != v.shape:
        return np.broadcast_to(g, v.shape).copy()
    return g


class Scattered:
    """The adjoint of ``obj[idx]`` for an array obj, before it is written out: g at idx of
    an array of zeros shaped like obj.

    Generated code asks for one (``getitem_grad_sparse``) only where passes/sparse.py
    has checked that nothing but ``unbroadcast``, unary minus, ``acc`` and None tests
    reads it, so it never reaches a rule or the user: ``acc`` adds the few positions into
    the other contribution instead of adding a whole array of zeros to it, and a
    reduction by ``unbroadcast`` (a row sum) reads only them."""

    __slots__ = ("shape", "dtype", "idx", "g")

    def __init__(self, shape, dtype, idx, g):
        self.shape, self.dtype, self.idx, self.g = shape, dtype, idx, g

    def __neg__(self):
        return Scattered(self.shape, self.dtype, self.idx, -self.g)

    def add_into(self, out, copy=False, fits=False):
        """out + self: into out itself (an array nobody else holds), a copy of it (copy),
        or, out None, an array of zeros. fits: out is an ndarray of self's dtype (and
        shape), tested by the caller."""
        if fits:
            idx = self.idx
            if type(idx) is tuple and type(idx[0]) is _ndarray and idx[0].size <= _AT_TUPLE:
                _add_at(out, idx, self.g)  # a few positions: flat indices would cost more
                return out
        if out is None:
            out = np.zeros(self.shape, self.dtype)
        elif copy or type(out) is not np.ndarray or out.dtype != self.dtype:
            out = np.array(np.broadcast_to(out, self.shape), dtype=np.result_type(out, self.dtype))
        idx = self.idx
        if type(idx) is tuple and type(idx[0]) is np.ndarray and idx[0].size <= _AT_TUPLE:
            np.add.at(out, idx, self.g)  # a few positions: flat indices would cost more
            return out
        flat = self.flat(self.shape)
        if flat is not None and out.flags.c_contiguous and out.dtype == self.dtype:
            np.add.at(out.reshape(-1), flat, self.g)  # one index: several times faster
        elif _is_basic_index(self.idx):
            out[self.idx] += self.g
        else:  # repeated positions accumulate
            np.add.at(out, self.idx, self.g)
        return out

    def flat(self, shape, keep=None):
        """The positions as flat indices into an array of shape (the axes not in keep
        taken at 0), when the index is one integer array per axis; else None. The
        indices are valid: the primal read x[idx] succeeded. Without keep they are
        wrapped (no negative one); with keep, one kept axis's indices are returned as
        they were given, maybe negative (``np.add.at`` wraps them; see reduce_to)."""
        idx = self.idx
        if not _int_arrays(idx, len(shape)):
            return None
        if keep is None:
            return np.ravel_multi_index(idx, shape, mode="wrap")  # wrap: negative indices
        # the reduced axes have size 1: the kept ones alone place an element
        kept = [(i, n) for i, n, k in zip(idx, shape, keep) if k]
        if not kept:
            flat = np.zeros(idx[0].shape, np.intp)
        elif len(kept) == 1:
            flat = kept[0][0]
        else:
            flat = np.ravel_multi_index(
                tuple(i for i, _ in kept), tuple(n for _, n in kept), mode="wrap")
        first = idx[0].shape
        for i in idx:
            if i.shape != first:
                return np.broadcast_to(flat, np.broadcast_shapes(*(i.shape for i in idx)))
        return flat

    def reduce_to(self, like):
        """unbroadcast(self, like): summed over the axes where like has size 1, reading
        only the nonzeros when the index is one integer array per axis."""
        shape, own = like.shape, self.shape
        if len(own) == 2 == len(shape) and shape[1] == 1 and shape[0] == own[0]:
            out = self._row_sums()
            if out is not None:
                return out if like.dtype is out.dtype else unbroadcast(out, like)
        if len(shape) == len(own):
            keep = [n != 1 for n in shape]
            for n, m in zip(shape, own):
                if n != m and n != 1:
                    keep = None
                    break
            flat = None if keep is None else self.flat(shape, keep)
            if flat is not None:
                return unbroadcast(self._summed(flat, shape).reshape(shape), like)
        return unbroadcast(self.add_into(None), like)

    def _row_sums(self):
        """The row sums, shaped (rows, 1), of a float64 matrix x[rows, cols] with rows and
        cols integer arrays of g's shape (one gathered value a row: x[np.arange(n), y]),
        by np.bincount on the rows as given; else None (also for a negative row)."""
        idx, g = self.idx, self.g
        if type(idx) is not tuple or len(idx) != 2 or self.dtype is not _F64:
            return None
        rows, cols = idx
        if (type(rows) is not np.ndarray or type(cols) is not np.ndarray or type(g) is not np.ndarray
                or rows.ndim != 1 or rows.dtype.kind != "i" or cols.dtype.kind not in "iu"
                or cols.shape != rows.shape or g.shape != rows.shape or g.dtype is not _F64):
            return None
        n = self.shape[0]
        try:
            return np.bincount(rows, g, n).reshape(n, 1)
        except ValueError:  # a negative row: the general path wraps it
            return None

    def _summed(self, flat, shape):
        """The values g added up at the positions flat of a flat array of shape's size."""
        size = math.prod(shape)
        g = self.g
        if np.shape(g) != flat.shape:
            g = np.broadcast_to(g, flat.shape)
        if self.dtype == np.float64 and type(g) is np.ndarray:
            try:
                return np.bincount(flat.reshape(-1), g.reshape(-1), size)
            except ValueError:  # a negative index (as given to x[idx]): wrapped first
                return np.bincount(np.remainder(flat, size).reshape(-1), g.reshape(-1), size)
        out = np.zeros(size, self.dtype)
        np.add.at(out, flat, g)  # (wraps negative indices)
        return out


_AT_TUPLE = 256  # up to this many positions np.add.at takes the index tuple as it is
_add_at = np.add.at


def _int_arrays(idx, ndim):
    """Whether idx is one integer array per axis of an ndim-dimensional array."""
    if type(idx) is not tuple or len(idx) != ndim:
        return False
    for i in idx:
        if type(i) is not np.ndarray or i.dtype.kind not in "iu":
            return False
    return True


def dense(v):
    """v, with a Scattered written out as an array (see passes/sparse.py)."""
    return v.add_into(None) if type(v) is Scattered else v


def _is_basic_index(idx):
    if isinstance(idx, (int, slice, type(None), type(Ellipsis))):
        return True
    if isinstance(idx, tuple):
        return all(isinstance(i, (int, slice, type(None), type(Ellipsis))) for i in idx)
    return False


def _fit_other(g, like):
    return g if like is None else unbroadcast(g, like)
