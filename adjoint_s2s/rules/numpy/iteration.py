"""Iteration over NumPy's iterator objects: ``np.ndenumerate(x)`` hands out (index,
element) pairs of x, ``np.broadcast(x, y)`` tuples of the elements of its arguments
broadcast together. Their gradient is the list of their items' gradients (what a loop
over them gives back, see runtime/structure.py ``items_adjoint``): each element's goes
to the place of x it was read from (summed over the broadcast axes)."""
import numpy as np

from .. import nondifferentiable_builtin, special
from ...errors import NotDifferentiableError
from ...runtime.structure import part
from ..sequences import _Recorder
from .base import np_fit


def _scatter(x, shape, positions, grads):
    """The gradient of x (broadcast to shape) from the gradients of its elements at the
    flat positions given (None: zero); written with rules only, so that a pullback
    differentiated again (a Hessian) is differentiated through it too."""
    dtype = np.result_type(np.asarray(x).dtype, float)
    vals = np.array([0.0 if gi is None else gi for gi in grads])
    if np.iscomplexobj(vals) and dtype.kind != "c":
        vals = np.real(vals)
    out = np.zeros(int(np.prod(shape)), dtype)
    out[np.array(positions, dtype=np.intp)] = vals
    return np_fit(out.reshape(shape), x)


def _flat_position(index, shape):
    return int(np.ravel_multi_index(index, shape)) if shape else 0


nondifferentiable_builtin(_flat_position, reason="it computes an index")


@special(np.ndenumerate)
def np_ndenumerate_pair(arr):
    """np.ndenumerate(arr), as an iterator that records the items it hands out (as
    enumerate's does): each element's gradient goes back to its place in arr."""
    rec = _Recorder(iter(np.ndenumerate(arr)))

    def ndenumerate_pullback(g):
        if g is None or not rec.taken:
            return (None, None)
        shape = np.shape(arr)
        positions = [_flat_position(item[0], shape) for item in rec.taken]
        grads = [part(part(g, i), 1) for i in range(len(rec.taken))]
        return (None, _scatter(arr, shape, positions, grads))

    return rec, ndenumerate_pullback


@special(np.broadcast)
def np_broadcast_pair(*args):
    """np.broadcast(*args): iterated from its start to its end, item i holds the i-th
    element (in C order) of each argument broadcast to the common shape."""
    b = np.broadcast(*args)

    def broadcast_pullback(g):
        if g is None:
            return (None,) * (1 + len(args))
        g = list(g)
        if all(gi is None for gi in g):
            return (None,) * (1 + len(args))
        if len(g) != b.size:
            raise NotDifferentiableError(
                f"np.broadcast: {len(g)} of its {b.size} items carry a gradient back, so "
                "where they came from is unknown (it was iterated only in part, or from "
                "the middle); iterate over it whole, or over np.broadcast_arrays(...) "
                "flattened"
            )
        grads = []
        for j in range(len(args)):
            items = [part(part(g, i), j) for i in range(len(g))]
            grads.append(_scatter(args[j], b.shape, range(len(g)), items))
        return (None,) + tuple(grads)

    return b, broadcast_pullback
