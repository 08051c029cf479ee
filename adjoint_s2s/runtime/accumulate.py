"""Accumulation: ``acc`` and the gradients of indexing that add into an accumulator.

An array accumulator that only the calling variable refers to is added to in place
(``_PRIVATE_REFS``: counted, not assumed); ``getitem_grad`` and ``setitem_grad`` are the
adjoints of ``x[idx]`` and ``x[idx] = v``.
"""
import sys
import weakref

import numpy as np

from ..errors import NotDifferentiableError
from ..tangents import AbstractZero, add, Tangent, Thunk
from .project import _is_basic_index, Scattered, unbroadcast
from .structure import GradList, OneItem, part


_F64 = np.dtype(np.float64)  # (a dtype test by identity: np.result_type costs microseconds)
_ndarray = np.ndarray
_refcount = sys.getrefcount


def acc(a, b):
    """a + b for generated code's accumulators (``b_x = _rt.acc(b_x, part)``).

    An array accumulator that only the calling variable refers to (see _PRIVATE_REFS)
    is added to in place, as a hand-written reverse sweep would: no new array per
    contribution. Failing that, a contribution that is a temporary no variable holds
    (``_rt.acc(b_x, b_y * c)``) takes the sum (floating-point addition commutes).
    Anything else is tangents.add."""
    if type(a) is _ndarray and type(b) is _ndarray:
        ad, bd = a.dtype, b.dtype
        if ad is bd or ad == bd:
            if a.base is None and _refcount(a) <= _PRIVATE_REFS:
                # a + b's values in a's place: NumPy raises before writing anything when a is
                # read-only or b does not broadcast to a's shape (a + b is then larger)
                try:
                    a += b
                except ValueError:
                    if ad.kind == "O":  # an element may have raised part-way: a is changed
                        raise
                else:
                    return a
            if a.shape == b.shape and b.base is None and _refcount(b) <= _TEMP_REFS and b.flags.writeable:
                b += a
                return b
    if type(a) is Scattered or type(b) is Scattered:
        # the sum is always an array, never a Scattered (see passes/sparse.py). Into an
        # array only the caller holds, or a temporary, the few positions go in place.
        if type(b) is Scattered:
            if (type(a) is np.ndarray and a.shape == b.shape and a.dtype == b.dtype
                    and a.base is None and a.flags.writeable
                    and sys.getrefcount(a) <= _PRIVATE_REFS):
                return b.add_into(a, False, True)
            a, b = b, a
        elif (type(b) is _ndarray and b.shape == a.shape and (b.dtype is a.dtype or b.dtype == a.dtype)
                and b.base is None and _refcount(b) <= _TEMP_REFS and b.flags.writeable):
            return a.add_into(b, False, True)
        if type(b) is Scattered:
            return b.add_into(a.add_into(None))
        if type(b) is np.ndarray and b.shape == a.shape:
            return a.add_into(b, copy=True)
        return add(b, a.add_into(None))
    if type(b) is OneItem and (type(a) is GradList or type(a) is OneItem) and _refcount(a) <= _PRIVATE_REFS:
        # (b's items past a's end are None but its own: a list read, then grown, then
        # shortened again on the way back; the missing items of a sum are zeros)
        i = b.index
        if i >= len(a):
            a.extend([None] * (i + 1 - len(a)))
        a[i] = add(a[i], b[i])
        a.__class__ = GradList  # (no longer one item's: added into as a whole)
        return a
    return add(a, b)


def part_adjoint(v, i, g):
    """The adjoint of part(v, i): g placed at i in a tangent shaped like v."""
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(v, dict):
        return {i: g}
    if isinstance(v, Tangent):
        if isinstance(i, str):
            return Tangent(v.primal_type, **{i: g})
        els = [None] * len(v._elements)
        els[i] = g
        return Tangent(v.primal_type, *els)
    if isinstance(v, np.ndarray):
        return getitem_grad(v, i, g)
    out = [None] * len(v)
    out[i] = g
    return tuple(out) if isinstance(v, tuple) else out


def item_grad(acc_, sequence, k, g):
    """Add g at position k of the gradient of a sequence iterated over.

    The accumulator is updated in place (O(1) a step) only when it is ours and nothing
    else holds it: when gradients are nested, the outer level keeps references to
    earlier values, and those must not change under it.
    """
    if g is None or isinstance(g, AbstractZero):
        return acc_
    if isinstance(sequence, np.ndarray):
        if acc_ is None:
            acc_ = np.zeros(sequence.shape, dtype=np.result_type(sequence.dtype, float))
            _own(acc_)
        elif not (_owned(acc_) and sys.getrefcount(acc_) <= _PRIVATE_REFS):
            acc_ = np.array(acc_, dtype=np.result_type(acc_.dtype, sequence.dtype, float))
            _own(acc_)
        acc_[k] += g
        return acc_
    n = len(sequence)
    if acc_ is None:
        acc_ = GradList([None] * n)
    elif not (type(acc_) is GradList and sys.getrefcount(acc_) <= _PRIVATE_REFS):
        acc_ = GradList(list(acc_) + [None] * (n - len(acc_)))
    acc_[k] = add(acc_[k], g)
    return acc_


def _count_private_refs():
    """References to a value that only one variable of a calling function holds, as
    ``sys.getrefcount`` sees them from a function it was passed to: the caller's
    variable, this function's argument, and getrefcount's own on CPython 3.11 (counted,
    not assumed: interpreters differ)."""

    def probe(obj):
        return sys.getrefcount(obj)

    def holder():
        a = np.zeros(1)
        return probe(a)

    return holder()


# references to an accumulator that only generated code holds
_PRIVATE_REFS = _count_private_refs()


def _count_temp_refs():
    """References to a temporary passed straight to a function (``f(g(x))``), as seen
    there by ``sys.getrefcount``: one fewer than a variable's, since no name holds it."""

    def probe(obj):
        return sys.getrefcount(obj)

    return probe(np.zeros(1))


_TEMP_REFS = _count_temp_refs()


_OWNED = {}


def _own(a):
    _OWNED[id(a)] = weakref.ref(a, lambda _r, i=id(a): _OWNED.pop(i, None))


def _owned(a):
    r = _OWNED.get(id(a))
    return r is not None and r() is a


def getitem_grad(obj, idx, g):
    """The gradient of obj from the gradient g of obj[idx] (getindex's adjoint: setindex)."""
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(g, Thunk):
        g = g.unthunk()
    if isinstance(obj, np.ndarray):
        dtype = np.result_type(obj.dtype, np.asarray(g).dtype, float)
        out = np.zeros(obj.shape, dtype=dtype)
        if _is_basic_index(idx):
            out[idx] += g
        else:  # scatter-add: repeated positions accumulate (since NumPy 1.25 as fast
            np.add.at(out, idx, g)  # as a plain write)
        if not np.iscomplexobj(obj) and np.iscomplexobj(out):
            out = out.real
        return out
    if isinstance(obj, dict):
        return {idx: g}
    if isinstance(obj, (list, tuple)):
        n = len(obj)
        if type(obj) is list and type(idx) is int and -n <= idx < n:
            one = OneItem([None] * n)
            one[idx] = g
            one.index = idx + n if idx < 0 else idx
            return one
        out = [None] * n
        if isinstance(idx, slice):
            for j, i in enumerate(range(*idx.indices(n))):
                out[i] = part(g, j)
        else:
            out[idx] = g
        return tuple(out) if isinstance(obj, tuple) else GradList(out)
    if isinstance(obj, str):
        return None
    raise NotDifferentiableError(f"no gradient for indexing a {type(obj).__name__}")


def getitem_grad_sparse(obj, idx, g):
    """getitem_grad as a Scattered for a float array obj (else the array itself). Only
    generated code that passes/sparse.py checked calls it."""
    if type(obj) is np.ndarray and obj.dtype.kind in "fc" and (
        type(g) is float or type(g) is np.ndarray or isinstance(g, np.floating)
    ):
        dtype = obj.dtype
        if (dtype is _F64 and (type(g) is float or g.dtype is _F64)) or dtype == np.result_type(
                dtype, g.dtype if type(g) is not float else float, float):
            return Scattered(obj.shape, dtype, idx, g)
    return getitem_grad(obj, idx, g)


_NUMBERS = (float, int, complex, np.generic, np.ndarray)  # gradients added at an item in place


def _plus(v, g):
    """v + g for an item's gradient, v None where nothing was added yet."""
    return g if v is None else v + g if type(v) is float and type(g) is float else add(v, g)


def acc_getitem_grad(acc_, obj, idx, g):
    """``acc(acc_, getitem_grad(obj, idx, g))`` for generated code's accumulators: g is
    added at idx of the accumulator, in place when only the calling variable holds it
    (see ``acc``), else in a copy. Reading x[i] in a loop costs O(1) a step, not a zero
    array the size of x and an addition."""
    if (
        type(acc_) is np.ndarray
        and type(obj) is np.ndarray
        and acc_.shape == obj.shape
        and (type(g) is float or isinstance(g, (np.ndarray, np.generic)))
        and acc_.dtype == np.result_type(obj.dtype, float if type(g) is float else g.dtype, float)
    ):
        if not (acc_.base is None and sys.getrefcount(acc_) <= _PRIVATE_REFS and acc_.flags.writeable):
            acc_ = acc_.copy()
        if _is_basic_index(idx):
            acc_[idx] += g
        else:  # repeated positions accumulate, as in getitem_grad
            np.add.at(acc_, idx, g)
        return acc_
    elif type(obj) is list and type(idx) is int and isinstance(g, _NUMBERS):
        n = len(obj)  # (a list's item, added in place: O(1) a read)
        if -n <= idx < n:
            if acc_ is None:
                acc_ = GradList([None] * n)
            elif not (type(acc_) is GradList and len(acc_) == n and sys.getrefcount(acc_) <= _PRIVATE_REFS):
                return acc(acc_, getitem_grad(obj, idx, g))
            acc_[idx] = _plus(acc_[idx], g)
            return acc_
    elif type(obj) is dict and isinstance(g, _NUMBERS) and idx in obj:
        if acc_ is None:  # (a dict's value: into a dict only the caller holds, in place)
            return {idx: g}
        if type(acc_) is dict and sys.getrefcount(acc_) <= _PRIVATE_REFS:
            acc_[idx] = _plus(acc_.get(idx), g)
            return acc_
    elif type(obj) is tuple and type(idx) is int and isinstance(g, _NUMBERS):
        n = len(obj)  # (a tuple's item: a new tuple, its other items as they were)
        if -n <= idx < n and (acc_ is None or type(acc_) is tuple and len(acc_) == n):
            out = [None] * n if acc_ is None else list(acc_)
            out[idx] = _plus(out[idx], g)
            return tuple(out)
    return acc(acc_, getitem_grad(obj, idx, g))


def _list_slice_grad(obj, positions, g):
    if g is None or isinstance(g, AbstractZero):
        return None
    out = [None] * len(obj)
    for j, i in enumerate(positions):
        out[i] = part(g, j)
    return GradList(out)


def setitem_grad_acc(b_new, old, idx, v, acc_):
    """``b_old, g_v = setitem_grad(b_new, old, idx, v)`` and then ``acc(acc_, g_v)``, as
    one call: for an array written into a row of another (``H[t] = h`` in a loop), the
    row's adjoint is added straight into v's accumulator when only the calling variables
    hold the two arrays, with no copy of the row. (Generated loops call it once a trip:
    the globals it reads are bound to module names, the cheap tests come first.)"""
    if type(old) is _ndarray and old.dtype is not _F64 and old.dtype.kind in "biu":
        return _cast_write_grad(b_new, idx), acc_
    if type(b_new) is not _ndarray or type(v) is not _ndarray:
        b_old, g_v = setitem_grad(b_new, old, idx, v)
        return b_old, acc(acc_, g_v)
    # counted here, before a view of b_new holds it: a call one frame deeper counts one more
    private = b_new.base is None and _refcount(b_new) <= _PRIVATE_REFS and b_new.flags.writeable
    if private and type(acc_) is _ndarray and acc_.base is None and _refcount(acc_) <= _PRIVATE_REFS:
        row = b_new[idx]
        # g_v is the row itself when it has v's shape and no later element of v overwrote
        # it (an int index writes one row once); then acc(acc_, g_v) in place, as acc
        # does it: NumPy raises before writing when acc_ is read-only or too small
        if (type(row) is _ndarray and row.shape == v.shape
                and (row.dtype is acc_.dtype or row.dtype == acc_.dtype)
                and (type(idx) is int or _lost_writes(b_new.shape, idx) is None)):
            try:
                acc_ += row
            except ValueError:
                if row.dtype.kind == "O":  # an element may have raised part-way
                    raise
            else:
                if type(idx) is int:
                    row.fill(0)  # b_new[idx] = 0 through the view at hand (an int gives a view)
                else:  # (an index array's row is a copy)
                    b_new[idx] = 0
                return b_new, acc_
        del row
    b_old, g_v = _row_grad(b_new, idx, v, private)
    return b_old, acc(acc_, g_v)


def _lost_writes(shape, idx):
    """For ``a[idx] = v`` (a of this shape): a mask broadcastable over the written region,
    False where a later element of v overwrites the same position (an index array that
    repeats a position: NumPy writes in order, the last one stays), or None when none
    does. Basic and boolean indices cannot repeat a position; an index array is checked
    by letting NumPy write the element numbers and reading back which one stayed."""
    if type(idx) is list and idx and type(idx[0]) is int:
        idx = np.asarray(idx)
    if type(idx) is np.ndarray:  # one index array, along the first axis: the fast case
        if idx.dtype.kind not in "iu" or idx.size < 2 or not shape:
            return None
        flat = idx.ravel()
        if flat.size <= 64:  # a few positions: a set says it sooner than NumPy
            lst = flat.tolist()
            if min(lst) >= 0 and len(set(lst)) == len(lst):
                return None
        order = np.arange(flat.size, dtype=np.intp)
        pos = np.empty(shape[0], dtype=np.intp)
        pos[flat] = order
        kept = pos[flat] == order
        if kept.all():
            return None
        return kept.reshape(idx.shape + (1,) * (len(shape) - 1))
    if _is_basic_index(idx):
        return None
    parts = idx if isinstance(idx, tuple) else (idx,)
    if not any(
        isinstance(p, (list, np.ndarray)) and np.asarray(p).dtype != bool and np.size(p) > 1
        for p in parts
    ):
        return None
    pos = np.empty(shape, dtype=np.intp)
    region = np.shape(pos[idx])
    order = np.arange(int(np.prod(region)), dtype=np.intp).reshape(region)
    pos[idx] = order
    kept = pos[idx] == order
    return None if kept.all() else kept


def _row_grad(b_new, idx, v, private):
    """setitem_grad for arrays b_new and v; private: only the caller's variable holds b_new
    (counted by the caller), so its adjoint is reused in place of a copy."""
    g_v = b_new[idx]
    if type(g_v) is np.ndarray:
        g_v = g_v.copy()
        lost = _lost_writes(b_new.shape, idx)
        if lost is not None:
            np.copyto(g_v, 0, where=~lost)
    if np.shape(g_v) != v.shape:  # one element into a 0-d or one-element v, or broadcast
        g_v = unbroadcast(np.asarray(g_v), v)
    b_old = b_new if private else b_new.copy()
    b_old[idx] = 0
    return b_old, g_v


def _cast_write_grad(b_new, idx):
    """The gradient of the container old of ``old[idx] = v`` when old holds integers or
    bools (setitem_grad): b_new with the written part zero (a copy: another adjoint may
    be the same array). v's values were cast, which has no gradient."""
    if b_new is None or isinstance(b_new, AbstractZero):
        return None
    if isinstance(b_new, Thunk):
        b_new = b_new.unthunk()
    b_old = np.array(b_new)
    b_old[idx] = 0
    return b_old


def setitem_grad(b_new, old, idx, v=None):
    """Adjoint of new = setitem(old, idx, v): (gradient of old, gradient of v).

    A value broadcast into several places (a scalar into a slice) gets the sum. Where an
    index array repeats a position, only the element written last reaches the result: the
    others get a zero gradient. Into an integer or bool array, v is cast (truncated, or
    tested for nonzero): it gets no gradient, as from ``int(v)``."""
    if type(old) is _ndarray and old.dtype is not _F64 and old.dtype.kind in "biu":
        return _cast_write_grad(b_new, idx), None
    if type(b_new) is np.ndarray and type(v) is np.ndarray:  # an array row into an array
        private = b_new.base is None and b_new.flags.writeable and sys.getrefcount(b_new) <= _PRIVATE_REFS
        return _row_grad(b_new, idx, v, private)
    if b_new is None or isinstance(b_new, AbstractZero):
        return None, None
    if isinstance(b_new, Thunk):
        b_new = b_new.unthunk()
    if isinstance(b_new, np.ndarray):
        part_ = b_new[idx]
        g_v = part_.copy() if isinstance(part_, np.ndarray) else part_
        if isinstance(part_, np.ndarray):
            lost = _lost_writes(b_new.shape, idx)
            if lost is not None:
                np.copyto(g_v, 0, where=~lost)
        if v is not None and np.shape(g_v) != np.shape(v):
            g_v = unbroadcast(np.asarray(g_v), v) if isinstance(v, np.ndarray) else np.sum(g_v)
        del part_  # a view of b_new holds it too
        # the gradient array is reused when nothing else holds it (O(1) per write in a
        # loop instead of a copy): not when another adjoint is the same array (b_v below
        # `b_a1 = unbroadcast(b_add, a1); b_v = unbroadcast(b_add, v)`)
        private = b_new.base is None and b_new.flags.writeable
        b_old = b_new if private and sys.getrefcount(b_new) <= _PRIVATE_REFS else b_new.copy()
        b_old[idx] = 0
        return b_old, g_v
    if isinstance(b_new, dict):
        b_old = dict(b_new)
        g_v = b_old.pop(idx, None)
        return b_old, g_v
    b_old = list(b_new) + [None] * (len(old) - len(b_new)) if isinstance(old, list) else list(b_new)
    if isinstance(idx, slice):
        rng = range(*idx.indices(len(b_old)))
        g_v = [b_old[i] for i in rng]
        for i in rng:
            b_old[i] = None
    else:
        g_v = b_old[idx] if idx < len(b_old) else None
        if idx < len(b_old):
            b_old[idx] = None
    return GradList(b_old), g_v
