"""np.vectorize, element by element, through the vectorized function's own pair.
"""
import numpy as np

from .. import nondifferentiable_builtin, special
from ...errors import MissingAdjointError
from ...runtime.dispatch import call, call_primal
from ...runtime.fields import forget_fields, take_field_grad
from ...runtime.sites import _at
from ...runtime.structure import field
from ...tangents import Tangent, add
from .base import np_fit, np_parts


# ----- np.vectorize -----------------------------------------------------------------------------
# A vectorized Python function is differentiated element by element: each element's call
# goes through the function's own pair (transformed from its source, or its rule), and
# the pullback calls each element's pullback with that element's cotangent. Applying the
# function to whole arrays would be faster, but it computes something else as soon as
# the function branches on its argument or reduces it (``t / np.sum(t)``): never done.
# Both pairs are plain Python with rules for what they call, so they differentiate again.


def _vectorize_check(vec):
    """Refuse what the element-by-element pair does not reproduce."""
    if vec.signature is not None:
        raise MissingAdjointError(
            vec, "np.vectorize(..., signature=...) (generalised core dimensions) has no "
            "rule yet: call the function on the core slices in a loop and np.stack the "
            "results" + _at())


def np_vectorize_pair(pyfunc, *args, **kwargs):
    """np.vectorize(pyfunc, ...): the object, whose tangent is pyfunc's."""
    vec = np.vectorize(pyfunc, *args, **kwargs)
    n = len(args)

    def vectorize_pullback(g):
        # the tangent of pyfunc: from the object's tangent (vec(...)'s pullback gives one),
        # and from the field store, where differentiated code reading vec.pyfunc (the call
        # pair, differentiated again) leaves it, as for any mutable object's field
        d_pyfunc = add(field(g, "pyfunc"), take_field_grad(vec, "pyfunc"))
        forget_fields(vec)
        d = (None, d_pyfunc) + (None,) * n
        if kwargs:
            return d + ({},)
        return d

    return vec, vectorize_pullback


def _entry(row, i):
    """An element's gradient of argument i (0.0 where none reached it)."""
    if row is None or row[i] is None:
        return 0.0
    return row[i]


def _kw_entry(row, name):
    if row is None or row[-1].get(name) is None:
        return 0.0
    return row[-1].get(name)


def _inexact(otypes):
    """Which outputs (by type character) are float or complex: the others carry no gradient."""
    return [np.dtype(c).kind in "fc" for c in otypes]


def _elements(x, shape):
    """x broadcast to shape, as a flat list of Python numbers (NumPy passes each element
    to the function as a Python object too)."""
    return np.ravel(np.broadcast_to(x, shape)).tolist()


def np_vectorize_call_pair(vec, *args, **kwargs):
    """vec(*args, **kwargs) for vec = np.vectorize(pyfunc): the element-wise calls."""
    _vectorize_check(vec)
    excluded = vec.excluded
    pos = [i for i in range(len(args)) if i not in excluded]
    names = [k for k in kwargs if k not in excluded]
    shapes = [np.shape(args[i]) for i in pos] + [np.shape(kwargs[k]) for k in names]
    shape = np.broadcast_shapes(*shapes)
    size = 1
    for s in shape:
        size = size * s
    if size == 0:  # NumPy's own answer (a refusal without otypes=); nothing to differentiate
        y0 = vec(*args, **kwargs)
        return y0, lambda g: (None, None) + (None,) * len(args) + (({},) if kwargs else ())
    flat_pos = [_elements(args[i], shape) for i in pos]
    flat_kw = [_elements(kwargs[k], shape) for k in names]

    def element(j):
        a = list(args)
        for k in range(len(pos)):
            a[pos[k]] = flat_pos[k][j]
        kw = dict(kwargs)
        for k in range(len(names)):
            kw[names[k]] = flat_kw[k][j]
        return a, kw

    otypes = vec.otypes
    first = None
    if otypes is None and not vec.cache:
        # as NumPy: the function is called on the first elements once more, before the
        # element-wise calls, for the types of its outputs (a function with side effects
        # runs as often as in the plain call)
        a, kw = element(0)
        first = call_primal(vec.pyfunc, *a, **kw)
    ys = []
    pbs = []
    for j in range(size):
        a, kw = element(j)
        y, pb = call(vec.pyfunc, *a, **kw)
        ys.append(y)
        pbs.append(pb)
    nout = len(ys[0]) if isinstance(ys[0], tuple) else 1
    if otypes is None:  # as NumPy: the types of the first element's outputs
        first = ys[0] if first is None else first
        if nout == 1:
            otypes = np.asarray(first).dtype.char
        else:
            otypes = "".join([np.asarray(first[k]).dtype.char for k in range(nout)])
    inexact = _inexact(otypes)
    if nout == 1:
        out = np.reshape(np.asarray(ys, dtype=otypes[0]), shape)
    else:
        out = tuple([np.reshape(np.asarray([y[k] for y in ys], dtype=otypes[k]), shape)
                     for k in range(nout)])

    def vectorize_call_pullback(g):
        parts = [g] if nout == 1 else list(np_parts(g, nout))
        flat_g = []
        for k in range(nout):
            gk = parts[k]
            if gk is None or not inexact[k]:
                flat_g.append(None)  # no cotangent, or an integer/bool output
            else:
                flat_g.append(_elements(gk, shape))
        d_f = None
        rows = []  # each element's gradients (None: no cotangent reached it)
        for j in range(size):
            if nout == 1:
                gj = flat_g[0][j] if flat_g[0] is not None else None
            else:
                gj = tuple([None if fg is None else fg[j] for fg in flat_g])
            if gj is None or (nout > 1 and all(e is None for e in gj)):
                rows.append(None)
                continue
            grads = pbs[j](gj)
            rows.append(grads)
            d_f = add(d_f, grads[0])
        d_args = []
        for i in range(len(args)):
            if i in excluded:  # passed whole to every element: the gradients add up
                total = None
                for row in rows:
                    if row is not None:
                        total = add(total, row[1 + i])
                d_args.append(total)
            else:
                d_args.append(np_fit(np.reshape(np.asarray(
                    [_entry(row, 1 + i) for row in rows]), shape), args[i]))
        d_vec = None if d_f is None else Tangent(np.vectorize, pyfunc=d_f)
        if not kwargs:
            return (None, d_vec) + tuple(d_args)
        d_kwargs = {}
        for k in kwargs:
            if k in excluded:
                total = None
                for row in rows:
                    if row is not None:
                        total = add(total, row[-1].get(k))
                d_kwargs[k] = total
            else:
                d_kwargs[k] = np_fit(np.reshape(np.asarray(
                    [_kw_entry(row, k) for row in rows]), shape), kwargs[k])
        return (None, d_vec) + tuple(d_args) + (d_kwargs,)

    return out, vectorize_call_pullback


special(np.vectorize)(np_vectorize_pair)
special(np.vectorize.__call__)(np_vectorize_call_pair)
nondifferentiable_builtin(_vectorize_check, _inexact,
                          reason="it checks the vectorized function's options")
