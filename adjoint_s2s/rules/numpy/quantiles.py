"""Order statistics: median, quantile, percentile.

Like ``sort``, they send the cotangent to the elements at the positions they read, with
the weights of ``method="linear"`` interpolation (the only method differentiated; the
others are refused when the gradient is read). The weights are one-hot matrices applied
with ``einsum`` and ``take_along_axis`` (not ``np.add.at``), so the pullbacks
differentiate again. rules/numpy/nan_reductions.py reuses ``_last`` and
``_check_method`` for the NaN-ignoring quantiles.
"""
import numpy as np

from .base import _CURRENT, np_fit, rule

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_quantile_adjoint_a",
    "np_quantile_adjoint_q",
]

_CURRENT[0] = "Reductions"


# ----- order statistics -------------------------------------------------------------------------


def _last(a, axis):
    """a with the reduced axis last (all of a flattened for axis=None)."""
    a = np.asarray(a)
    if axis is None:
        return np.reshape(a, (-1,))
    return np.moveaxis(a, int(axis), -1)


def _quantile_weights(q, n, scale):
    """(len(q), n) weights of the sorted values each quantile reads (linear method)."""
    pos = np.ravel(np.asarray(q, dtype=float)) / scale * (n - 1)
    lo = np.floor(pos)
    frac = (pos - lo)[:, None]
    hi = np.minimum(lo + 1, n - 1)
    cols = np.arange(n)
    return (cols == lo[:, None]) * (1 - frac) + (cols == hi[:, None]) * frac


def _check_method(method):
    if method != "linear":
        raise NotImplementedError(f"the gradient of a quantile with method={method!r}")


def _quantile_back(g, a, q, axis, keepdims, scale):
    """ā: the cotangent of each quantile on the sorted values it reads, unsorted."""
    moved = _last(a, axis)
    n = moved.shape[-1]
    w = _quantile_weights(q, n, scale)
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
    return np_fit(np.moveaxis(back, -1, int(axis)), a)


def np_quantile_adjoint_a(g, a, q, axis=None, method="linear", keepdims=False, scale=1.0):
    _check_method(method)
    return _quantile_back(g, a, q, axis, keepdims, scale)


def np_quantile_adjoint_q(g, a, q, axis=None, method="linear", keepdims=False, scale=1.0):
    """q̄ = Σ ȳ (n-1)(s_hi - s_lo) / scale."""
    _check_method(method)
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
     note="method='linear'")
rule(np.percentile,
     "a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False",
     adjoints={"a": "_rt.np_quantile_adjoint_a(g, a, q, axis, method, keepdims, 100.0)",
               "q": "_rt.np_quantile_adjoint_q(g, a, q, axis, method, keepdims, 100.0)"},
     note="method='linear'")
