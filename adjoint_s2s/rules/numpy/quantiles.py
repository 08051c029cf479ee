"""Order statistics: median, quantile, percentile.

Like ``sort``, they send the cotangent to the elements at the positions they read, with
the weights of the method's interpolation: ``linear`` and ``midpoint`` (two elements),
``lower``, ``higher`` and ``nearest`` (the element read; q gets no gradient, the result
being piecewise constant in q). The other methods are refused when the gradient is read. The weights are one-hot matrices applied
with ``einsum`` and ``take_along_axis`` (not ``np.add.at``), so the pullbacks
differentiate again. rules/numpy/nan_reductions.py reuses ``_last`` and
``_check_method`` for the NaN-ignoring quantiles.
"""
import numpy as np

from ...errors import MissingAdjointError
from .base import _CURRENT, np_fit, rule

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_quantile_adjoint_a",
    "np_quantile_adjoint_q",
]

_CURRENT[0] = "Reductions"


# ----- order statistics -------------------------------------------------------------------------


def _axes(a, axis):
    """The reduced axes (an int or a tuple of them) as non-negative ints."""
    n = np.ndim(a)
    return tuple(int(i) % n for i in (axis if isinstance(axis, tuple) else (axis,)))


def _last(a, axis):
    """a with the reduced axes last, as one (all of a flattened for axis=None)."""
    a = np.asarray(a)
    if axis is None:
        return np.reshape(a, (-1,))
    axes = _axes(a, axis)
    k = len(axes)
    moved = np.moveaxis(a, axes, tuple(range(-k, 0)))
    return np.reshape(moved, moved.shape[:moved.ndim - k] + (-1,))


def _read(pos, top, method):
    """(lo, hi, frac): the sorted positions a quantile at the virtual index pos reads and
    the weight of hi, the last position being top (NumPy's rounding of each method)."""
    if method in ("lower", "higher", "nearest"):
        at = {"lower": np.floor, "higher": np.ceil, "nearest": np.around}[method](pos)
        at = np.minimum(at, top)
        return at, at, np.zeros(np.shape(pos))
    lo = np.floor(pos)
    hi = np.minimum(lo + 1, top)
    if method == "midpoint":
        return lo, hi, np.where(pos % 1 == 0, 0.0, 0.5)
    return lo, hi, pos - lo


def _quantile_weights(q, n, scale, method="linear"):
    """(len(q), n) weights of the sorted values each quantile reads."""
    pos = np.ravel(np.asarray(q, dtype=float)) / scale * (n - 1)
    lo, hi, frac = _read(pos, n - 1, method)
    frac = frac[:, None]
    cols = np.arange(n)
    return (cols == lo[:, None]) * (1 - frac) + (cols == hi[:, None]) * frac


_METHODS = ("linear", "midpoint", "lower", "higher", "nearest")


def _check_method(method, scale=1.0, nan=False):
    if method not in _METHODS:
        name = ("nanpercentile" if scale != 1.0 else "nanquantile") if nan else (
            "percentile" if scale != 1.0 else "quantile")
        raise MissingAdjointError(getattr(np, name), (
            f"its gradient is computed for method= {', '.join(map(repr, _METHODS))}, not "
            f"method={method!r}; use one of those if the gradient is wanted"))


def _quantile_back(g, a, q, axis, keepdims, scale, method="linear"):
    """ā: the cotangent of each quantile on the sorted values it reads, unsorted."""
    moved = _last(a, axis)
    n = moved.shape[-1]
    w = _quantile_weights(q, n, scale, method)
    red = moved.shape[:-1]
    g = np.asarray(g)
    nq = int(np.size(q))
    g = np.reshape(g, (nq,) + red)
    gs = np.einsum("q...,qn->...n", g, w)
    return _unsorted(gs, moved, a, axis)


def _unsorted(gs, moved, a, axis):
    """gs, a cotangent on the sorted values of moved (a with its axis last), put back at
    the positions they were sorted from, in a's shape."""
    back = np.take_along_axis(gs, np.argsort(np.argsort(moved, -1), -1), -1)
    if axis is None:
        return np_fit(np.reshape(back, np.shape(a)), a)
    axes = _axes(a, axis)
    k = len(axes)
    back = np.reshape(back, back.shape[:-1] + tuple(np.shape(a)[i] for i in axes))
    return np_fit(np.moveaxis(back, tuple(range(-k, 0)), axes), a)


def np_quantile_adjoint_a(g, a, q, axis=None, method="linear", keepdims=False, scale=1.0):
    _check_method(method, scale)
    return _quantile_back(g, a, q, axis, keepdims, scale, method)


def np_quantile_adjoint_q(g, a, q, axis=None, method="linear", keepdims=False, scale=1.0):
    """q̄ = Σ ȳ (n-1)(s_hi - s_lo) / scale (linear); 0 for the other methods, piecewise
    constant in q."""
    _check_method(method, scale)
    if method != "linear":
        return np_fit(np.zeros(np.shape(q)), q)
    moved = np.sort(_last(a, axis), -1)
    n = moved.shape[-1]
    pos = np.ravel(np.asarray(q, dtype=float)) / scale * (n - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, n - 1)
    step = (np.take(moved, hi, -1) - np.take(moved, lo, -1)) * (n - 1) / scale  # (..., nq)
    step = np.moveaxis(step, -1, 0)
    nq = int(np.size(q))
    g = np.reshape(np.asarray(g), (nq,) + step.shape[1:])
    return np_fit(np.reshape(np.sum(np.reshape(g * np.conj(step), (nq, -1)), -1), np.shape(q)), q)


rule(np.median, "a, axis=None, out=None, overwrite_input=False, keepdims=False",
     adjoints={"a": "_rt.np_quantile_adjoint_a(g, a, 0.5, axis, 'linear', keepdims)"},
     note="the middle element(s)")
rule(np.quantile,
     "a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False",
     adjoints={"a": "_rt.np_quantile_adjoint_a(g, a, q, axis, method, keepdims)",
               "q": "_rt.np_quantile_adjoint_q(g, a, q, axis, method, keepdims)"},
     note="methods linear, midpoint, lower, higher, nearest")
rule(np.percentile,
     "a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False",
     adjoints={"a": "_rt.np_quantile_adjoint_a(g, a, q, axis, method, keepdims, 100.0)",
               "q": "_rt.np_quantile_adjoint_q(g, a, q, axis, method, keepdims, 100.0)"},
     note="methods linear, midpoint, lower, higher, nearest")
