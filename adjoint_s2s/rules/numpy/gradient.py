"""np.gradient: central differences, with unit spacing or with spacings.

With unit spacing np.gradient is linear in f: the adjoint along an axis is the transpose
of its matrix (read off np.gradient of the identity). With spacings (a scalar per axis,
or coordinate arrays) it is not linear in them: the adjoints differentiate
``_gradient_last``, NumPy's formulas written with array operations, through its own
pair, so they differentiate again at every order.
"""
import numpy as np

from .. import nondifferentiable_builtin
from ...runtime.dispatch import call
from ...tangents import add
from .base import _by_keyword, _CURRENT, np_fit, np_parts, rule

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_gradient_adjoint",
    "np_gradient_spaced_adjoint_f",
    "np_gradient_spaced_adjoint_h",
]

_CURRENT[0] = "Reductions"


# ----- np.gradient ----------------------------------------------------------------------------


def _gradient_along(g, n, axis, edge_order):
    """The adjoint of np.gradient along one axis (unit spacing): the transpose of its
    matrix, read off np.gradient of the identity."""
    m = np.gradient(np.eye(n), axis=0, edge_order=edge_order)
    moved = np.moveaxis(np.asarray(g), axis, -1)
    return np.moveaxis(moved @ m, -1, axis)


def np_gradient_adjoint(g, f, axis=None, edge_order=1):
    shape = np.shape(f)
    nd = len(shape)
    if axis is None:
        axes = list(range(nd))
    elif isinstance(axis, (tuple, list)):
        axes = [int(a) % nd for a in axis]
    else:
        axes = [int(axis) % nd]
    if len(axes) == 1 and (axis is not None or nd == 1):
        parts = [g]
    else:
        parts = list(np_parts(g, len(axes)))
    out = None
    for ax, gp in zip(axes, parts):
        if gp is None:
            continue
        term = _gradient_along(gp, shape[ax], ax, edge_order)
        out = term if out is None else out + term
    if out is None:
        return None
    return np_fit(out, f)


def _gradient_call(f, *rest):
    """np.gradient with every parameter in position: f, the spacings, axis, edge_order
    (differentiated again at second order: no rule of its own)."""
    spacings = rest[:-2]
    return np.gradient(f, *spacings, axis=rest[-2], edge_order=rest[-1])


_by_keyword(rule(np.gradient, "f, axis=None, edge_order=1", kind="other",
                 adjoints={"f": "_rt.np_gradient_adjoint(g, f, axis, edge_order)"},
                 note="spacings: one scalar, or one scalar or coordinate array per axis"),
            call=_gradient_call)


# ----- np.gradient with spacings ------------------------------------------------------------------
# With spacings (np.gradient(f, h) or np.gradient(f, x, y) with coordinate arrays), the
# derivative with respect to the spacings is not linear: the adjoints differentiate
# _gradient_last, NumPy's formulas written with array operations, through its own pair
# (so they differentiate again at every order).


def _gradient_last(f, h, edge_order):
    """np.gradient(f, h, axis=-1, edge_order=edge_order): h a number (uniform spacing) or
    the coordinates along the last axis."""
    if np.ndim(h) == 0:
        interior = (f[..., 2:] - f[..., :-2]) / (2.0 * h)
        if edge_order == 1:
            first = (f[..., 1:2] - f[..., 0:1]) / h
            last = (f[..., -1:] - f[..., -2:-1]) / h
        else:
            first = (-1.5 * f[..., 0:1] + 2.0 * f[..., 1:2] - 0.5 * f[..., 2:3]) / h
            last = (0.5 * f[..., -3:-2] - 2.0 * f[..., -2:-1] + 1.5 * f[..., -1:]) / h
        return np.concatenate([first, interior, last], -1)
    dx = np.diff(h)
    dx1 = dx[:-1]
    dx2 = dx[1:]
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    interior = a * f[..., :-2] + b * f[..., 1:-1] + c * f[..., 2:]
    if edge_order == 1:
        first = (f[..., 1:2] - f[..., 0:1]) / dx[0]
        last = (f[..., -1:] - f[..., -2:-1]) / dx[-1]
    else:
        d1, d2 = dx[0], dx[1]
        first = (-(2.0 * d1 + d2) / (d1 * (d1 + d2)) * f[..., 0:1]
                 + (d1 + d2) / (d1 * d2) * f[..., 1:2] - d1 / (d2 * (d1 + d2)) * f[..., 2:3])
        d1, d2 = dx[-2], dx[-1]
        last = (d2 / (d1 * (d1 + d2)) * f[..., -3:-2] - (d2 + d1) / (d1 * d2) * f[..., -2:-1]
                + (2.0 * d2 + d1) / (d2 * (d1 + d2)) * f[..., -1:])
    return np.concatenate([first, interior, last], -1)


def _gradient_axes(f, axis):
    nd = np.ndim(f)
    if axis is None:
        return list(range(nd))
    if isinstance(axis, (tuple, list)):
        return [int(a) % nd for a in axis]
    return [int(axis) % nd]


nondifferentiable_builtin(_gradient_axes, reason="it computes axes")


def _gradient_pullbacks(g, f, spacing, axis, edge_order):
    """[(axis, spacing index, grads of _gradient_last)] for each axis with a cotangent."""
    axes = _gradient_axes(f, axis)
    if len(axes) == 1 and (axis is not None or np.ndim(f) == 1):
        parts = [g]
    else:
        parts = list(np_parts(g, len(axes)))
    out = []
    for k in range(len(axes)):
        if parts[k] is None:
            continue
        ax = axes[k]
        which = 0 if len(spacing) == 1 else k
        fm = np.moveaxis(np.asarray(f), ax, -1)
        _, pb = call(_gradient_last, fm, spacing[which], edge_order)
        out.append((ax, which, pb(np.moveaxis(np.asarray(parts[k]), ax, -1))))
    return out


def np_gradient_spaced_adjoint_f(g, f, spacing, axis=None, edge_order=1):
    total = None
    for ax, _, grads in _gradient_pullbacks(g, f, spacing, axis, edge_order):
        if grads[1] is not None:
            total = add(total, np.moveaxis(grads[1], -1, ax))
    return None if total is None else np_fit(total, f)


def np_gradient_spaced_adjoint_h(g, f, spacing, which, axis=None, edge_order=1):
    total = None
    for _, k, grads in _gradient_pullbacks(g, f, spacing, axis, edge_order):
        if k == which:
            total = add(total, grads[2])
    return None if total is None else np_fit(total, spacing[which])


for _n in range(1, 5):  # np.gradient(f, *varargs): one spacing, or one per axis
    _hs = [f"h{i}" for i in range(_n)]
    _tuple = "(" + ", ".join(_hs) + ",)"
    _adj = {"f": f"_rt.np_gradient_spaced_adjoint_f(g, f, {_tuple}, axis, edge_order)"}
    for _i, _h in enumerate(_hs):
        _adj[_h] = f"_rt.np_gradient_spaced_adjoint_h(g, f, {_tuple}, {_i}, axis, edge_order)"
    rule(np.gradient, f"f, {', '.join(_hs)}, axis=None, edge_order=1", kind="other",
         adjoints=_adj)
