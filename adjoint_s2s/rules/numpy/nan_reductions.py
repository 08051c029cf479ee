"""Reductions that ignore NaNs: nanprod, nanvar, nanstd, nancumsum, nancumprod, nanmedian,
nanquantile, nanpercentile (nansum and nanmean are in reductions.py).

A NaN gets no cotangent; the others get the adjoint of the same reduction over the
values that are not NaN (``np.sort`` puts NaNs last, so a quantile reads positions
counted among the others).
"""
import numpy as np

from .base import _CURRENT, _keep, np_fit, rule
from .reductions import np_cumprod_adjoint, np_cumsum_adjoint, np_prod_adjoint
from .quantiles import _check_method, _last, _read, _unsorted

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_nancumprod_adjoint",
    "np_nancumsum_adjoint",
    "np_nanprod_adjoint",
    "np_nanquantile_adjoint_a",
    "np_nanquantile_adjoint_q",
    "np_nanstd_adjoint",
    "np_nanvar_adjoint",
]

_CURRENT[0] = "Reductions"


# ----- nan reductions -------------------------------------------------------------------------


def np_nanprod_adjoint(g, a, axis=None, keepdims=False):
    nan = np.isnan(a)
    filled = np.where(nan, 1, a)
    return np_fit(np.where(nan, 0, np_prod_adjoint(g, filled, axis, keepdims)), a)


rule(np.nanprod, "a, axis=None, dtype=None, out=None, keepdims=False",
     adjoints={"a": "_rt.np_nanprod_adjoint(g, a, axis, keepdims)"})


def np_nanvar_adjoint(g, a, axis=None, ddof=0, keepdims=False):
    nan = np.isnan(a)
    filled = np.where(nan, 0, a)
    count = np.sum(~nan, axis, keepdims=True)
    mean = np.sum(filled, axis, keepdims=True) / count
    gk = _keep(g, np.shape(a), axis, keepdims)
    return np_fit(np.where(nan, 0, gk * 2 * (filled - mean) / (count - ddof)), a)


def np_nanstd_adjoint(g, a, ans, axis=None, ddof=0, keepdims=False):
    sk = _keep(ans, np.shape(a), axis, keepdims)
    gk = _keep(g, np.shape(a), axis, keepdims)
    return np_nanvar_adjoint(gk / (2 * sk), a, axis, ddof, True)


rule(np.nanvar, "a, axis=None, dtype=None, out=None, ddof=0, keepdims=False",
     adjoints={"a": "_rt.np_nanvar_adjoint(g, a, axis, ddof, keepdims)"})
rule(np.nanstd, "a, axis=None, dtype=None, out=None, ddof=0, keepdims=False",
     adjoints={"a": "_rt.np_nanstd_adjoint(g, a, ans, axis, ddof, keepdims)"})


def np_nancumsum_adjoint(g, a, axis=None):
    return np_fit(np.where(np.isnan(a), 0, np_cumsum_adjoint(g, a, axis)), a)


def np_nancumprod_adjoint(g, a, ans, axis=None):
    nan = np.isnan(a)
    return np_fit(np.where(nan, 0, np_cumprod_adjoint(g, np.where(nan, 1, a), ans, axis)), a)


rule(np.nancumsum, "a, axis=None, dtype=None, out=None",
     adjoints={"a": "_rt.np_nancumsum_adjoint(g, a, axis)"})
rule(np.nancumprod, "a, axis=None, dtype=None, out=None",
     adjoints={"a": "_rt.np_nancumprod_adjoint(g, a, ans, axis)"})


# ----- quantiles ignoring NaNs ------------------------------------------------------------------


def _nan_positions(moved, q, scale, method="linear"):
    """Per slice and quantile: the sorted positions read (lo, hi) and the weight of hi,
    counting only the values that are not NaN (np.sort puts NaNs last)."""
    k = np.sum(~np.isnan(moved), -1)
    qs = np.reshape(np.asarray(q, dtype=float), (-1,) + (1,) * k.ndim)
    pos = qs / scale * (k - 1)
    return _read(pos, np.maximum(k - 1, 0), method)


def np_nanquantile_adjoint_a(g, a, q, axis=None, method="linear", keepdims=False, scale=1.0):
    _check_method(method, scale, nan=True)
    moved = _last(a, axis)
    n = moved.shape[-1]
    lo, hi, frac = _nan_positions(moved, q, scale, method)
    cols = np.arange(n)
    w = (cols == lo[..., None]) * (1 - frac)[..., None] + (cols == hi[..., None]) * frac[..., None]
    nq = int(np.size(q))
    g = np.reshape(np.asarray(g), (nq,) + moved.shape[:-1])
    gs = np.sum(g[..., None] * w, 0)
    return _unsorted(gs, moved, a, axis)


def np_nanquantile_adjoint_q(g, a, q, axis=None, method="linear", keepdims=False, scale=1.0):
    _check_method(method, scale, nan=True)
    if method != "linear":  # piecewise constant in q
        return np_fit(np.zeros(np.shape(q)), q)
    moved = _last(a, axis)
    s = np.sort(moved, -1)
    lo, hi, _ = _nan_positions(moved, q, scale)
    k = np.sum(~np.isnan(moved), -1)
    nq = int(np.size(q))
    s_b = np.broadcast_to(s, (nq,) + s.shape)
    step = (np.take_along_axis(s_b, hi.astype(int)[..., None], -1)[..., 0]
            - np.take_along_axis(s_b, lo.astype(int)[..., None], -1)[..., 0]) * (k - 1) / scale
    g = np.reshape(np.asarray(g), (nq,) + moved.shape[:-1])
    total = np.sum(np.reshape(g * np.conj(step), (nq, -1)), -1)
    return np_fit(np.reshape(total, np.shape(q)), q)


_Q = "a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False"

rule(np.nanmedian, "a, axis=None, out=None, overwrite_input=False, keepdims=False",
     adjoints={"a": "_rt.np_nanquantile_adjoint_a(g, a, 0.5, axis, 'linear', keepdims)"})
rule(np.nanquantile, _Q,
     adjoints={"a": "_rt.np_nanquantile_adjoint_a(g, a, q, axis, method, keepdims)",
               "q": "_rt.np_nanquantile_adjoint_q(g, a, q, axis, method, keepdims)"},
     note="methods linear, midpoint, lower, higher, nearest")
rule(np.nanpercentile, _Q,
     adjoints={"a": "_rt.np_nanquantile_adjoint_a(g, a, q, axis, method, keepdims, 100.0)",
               "q": "_rt.np_nanquantile_adjoint_q(g, a, q, axis, method, keepdims, 100.0)"},
     note="methods linear, midpoint, lower, higher, nearest")
