"""The NumPy rule language and the projection every NumPy adjoint ends with.

``rule(fn, params, *partials, adjoints=...)`` registers a NumPy function (skipped where
this NumPy lacks it) under a section of docs/numpy.md; functions with keyword-only
parameters get a run-time version that passes them by name (``_by_keyword``).
``np_fit`` projects a gradient onto its argument (broadcasting undone, real part for
real inputs, the input's float dtype, nested lists for list inputs); ``np_parts`` reads
the adjoint of a tuple output.
"""
import types

import numpy as np

from .. import lookup_primitive, nondifferentiable_builtin, primitive, Primitive, special
from ...errors import MissingAdjointError, no_variant
from ...runtime.dispatch import _primitive_pair
from ...runtime.project import unbroadcast
from ...tangents import AbstractZero, Tangent, Thunk

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_fit",
    "np_parts",
]


# ----- projection and structure ------------------------------------------------------------


def np_fit(grad, x):
    """Project a gradient onto the argument x: shape, real/complex, dtype, list structure."""
    if grad is None:
        return None
    if isinstance(x, np.ndarray):
        out = unbroadcast(grad, x)
        if isinstance(out, np.ndarray) and not out.flags.writeable:
            out = out.copy()  # a broadcast view: give the caller an array of its own
        return out
    if isinstance(x, (list, tuple)):
        garr = np.asarray(grad)
        shape = np.shape(x)
        if garr.shape != shape:
            garr = np.broadcast_to(garr, shape)
        return _like_structure(garr, x)
    if x is None or isinstance(x, (bool, np.bool_, str, bytes)):
        return None
    return unbroadcast(grad, x)


def _like_structure(garr, x):
    if isinstance(x, (list, tuple)):
        items = [_like_structure(garr[i], xi) for i, xi in enumerate(x)]
        return tuple(items) if isinstance(x, tuple) else items
    if isinstance(x, np.ndarray):
        return np_fit(np.array(garr), x)
    out = np_fit(garr, x)
    if isinstance(out, np.ndarray) and out.ndim == 0:
        out = out[()]
    if isinstance(out, np.generic):  # a Python number (float/complex: differentiable again)
        out = complex(out) if np.iscomplexobj(out) else float(out)
    return out


def np_parts(g, n):
    """The n entries of the adjoint of a tuple output (None for structural zeros)."""
    if g is None or isinstance(g, AbstractZero):
        return (None,) * n
    if isinstance(g, Thunk):
        g = g.unthunk()
    if isinstance(g, Tangent):
        if g._elements:
            items = list(g._elements)
        else:
            names = getattr(g.primal_type, "_fields", None) or list(g._fields)
            items = [g._fields.get(k) for k in names]
    elif isinstance(g, dict):
        items = [g.get(i) for i in range(n)]
    elif isinstance(g, (list, tuple)):
        items = list(g)
    else:  # a bare array: the adjoint of the only differentiable output
        items = [g]
    items = items[:n] + [None] * (n - len(items))
    out = []
    for v in items:
        if isinstance(v, Thunk):
            v = v.unthunk()
        out.append(None if v is None or isinstance(v, AbstractZero) else v)
    return tuple(out)


def _sum_to(g, shape):
    """Sum g down to shape (undo broadcasting), keeping its dtype."""
    g = np.asarray(g)
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


def _float(x):
    x = np.asarray(x)
    return x if x.dtype.kind in "fc" else x.astype(float)


def _H(a):
    a = np.swapaxes(a, -1, -2)
    return a.conj() if np.iscomplexobj(a) else a


def _axes(axis, ndim):
    """axis (None, int or tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(int(a) % ndim for a in axis)) if ndim else ()
    return (int(axis) % ndim,) if ndim else ()


def _keep(g, shape, axis, keepdims):
    """The adjoint of a reduction, with the reduced axes back as size-1 axes."""
    g = np.asarray(g)
    if keepdims:
        return g
    axes = _axes(axis, len(shape))
    kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
    return g.reshape(kept)


def _spread(g, shape, axis, keepdims):
    """Broadcast the adjoint of a reduction back to the input's shape (a fresh array)."""
    return spread_fill(_keep(g, shape, axis, keepdims), shape)


def spread_fill(v, shape):
    """The array v broadcast to shape, as a fresh array: ``np.array(np.broadcast_to(v,
    shape))`` without broadcast_to's Python layers (a few microseconds a call). A
    primitive (runtime/rules_helpers.py): its adjoint sums back, ``unbroadcast``."""
    out = np.empty(shape, v.dtype)
    out[...] = v
    return out


def filled(v, like):
    """A fresh array of like's shape and dtype with every element the number v:
    ``np.full(like.shape, v, like.dtype)`` without its Python layers. A primitive
    (runtime/rules_helpers.py): its adjoint sums back, ``unbroadcast``."""
    out = np.empty(like.shape, like.dtype)
    out.fill(v)
    return out


SECTIONS = {}  # rule path -> section of docs/numpy.md


NOTES = {}  # rule path -> a short remark for docs/numpy.md


SECTION_ORDER = [
    "Elementwise",
    "Reductions",
    "Shape and indexing",
    "Linear algebra",
    "Constructors and conversions",
]


_CURRENT = ["Elementwise"]


def _np(name, module=np):
    """A NumPy function by name, or None where this NumPy version lacks it."""
    return getattr(module, name, None)


def _path(fn):
    name = getattr(fn, "__name__", None)
    if name and getattr(np, name, None) is fn:
        return f"np.{name}"
    if name and getattr(np.linalg, name, None) is fn:
        return f"np.linalg.{name}"
    return None


def rule(fn, params, *partials, kind="array", adjoints=None, path=None, note=None,
         section=None, key=None):
    """Register a NumPy rule (skipped when fn is None: absent from this NumPy); key: the
    variant's own key in the table (``primitive``), for one as long as another."""
    if fn is None:
        return None
    prim = primitive(fn, params, *partials, path=path or _path(fn), kind=kind,
                     adjoints=adjoints, key=key)
    SECTIONS[prim.path] = section or _CURRENT[0]
    if note:
        NOTES[prim.path] = note
    if isinstance(fn, types.FunctionType) and not prim.path.startswith("ndarray."):
        # run-time calls with keywords of plain Python functions (np.full, logsumexp)
        # transform the function's source unless it has a special rule: give it one
        _by_keyword(prim)
    return prim


def _by_keyword(prim, call=None):
    """Run-time calls of a function with keyword-only parameters.

    The run-time version of a rule calls the function with every parameter in
    position; for ``np.pad(..., constant_values=)``, ``vector_norm(x, ord=)``... a
    wrapper passes the keyword-only ones by name. It is registered with ``special``,
    which the run-time dispatch consults first; inlining still uses the templates.
    """
    if prim is None:
        return
    fn = prim.fn

    def keyword_rule_pair(*args, **kwargs):
        pair = _keyword_pair(fn, call, len(args), tuple(kwargs))
        return pair(*args, **kwargs)

    special(fn)(keyword_rule_pair)


_KEYWORD_PAIRS = {}  # id(rule variant) -> its run-time pair


def _keyword_pair(fn, call, nargs, kwnames):
    """The run-time pair of the variant of fn's rule that fits the call (built once)."""
    variant = lookup_primitive(fn, nargs, kwnames)
    if variant is None:
        raise MissingAdjointError(fn, no_variant(nargs, kwnames))
    pair = _KEYWORD_PAIRS.get(id(variant))
    if pair is None:
        pair = _primitive_pair(_shadow(variant, call))
        _KEYWORD_PAIRS[id(variant)] = pair
    return pair


def _shadow(prim, call):
    """The rule with a callee that takes every parameter in position."""
    fn, params = prim.fn, prim.params
    kwonly = _KWONLY.get(prim.path, ())

    def by_keyword(*args):
        if call is not None:
            return call(*args)
        pos = [a for p, a in zip(params, args) if p not in kwonly]
        kw = {p: a for p, a in zip(params, args) if p in kwonly}
        return fn(*pos, **kw)

    return Primitive(by_keyword, prim.path, prim.params, prim.partials, prim.adjoints,
                     prim.kind, prim.doc, prim.defaults)


def _two(name, p1, p2, *extra):
    """Adjoints of a bilinear function: ``_rt.<name>_a(g, p1, p2, ...)`` and ``..._b``."""
    args = ", ".join((p1, p2) + extra)
    return {p1: f"_rt.{name}_a(g, {args})", p2: f"_rt.{name}_b(g, {args})"}


_KWONLY = {
    "np.pad": ("constant_values",),
    "np.average": ("keepdims",),
    "np.linalg.vector_norm": ("axis", "keepdims", "ord"),
    "np.linalg.matrix_norm": ("keepdims", "ord"),
    "np.linalg.cholesky": ("upper",),
    "np.linalg.trace": ("offset",),
    "np.linalg.diagonal": ("offset",),
    "np.linalg.tensordot": ("axes",),
    "np.linalg.vecdot": ("axis",),
    "np.linalg.cross": ("axis",),
    "np.vecdot": ("axis",),
    "np.unstack": ("axis",),
}


nondifferentiable_builtin(_keyword_pair, reason="it builds the run-time version of a rule")
