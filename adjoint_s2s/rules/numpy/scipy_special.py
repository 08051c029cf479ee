"""Helpers of the ``scipy.special`` rules (rules/scipy.py) that compute on arrays like the
NumPy ones: ``_rt.sp_special`` is ``scipy.special``, imported on first use (scipy is
optional, and this module is imported without it)."""
import importlib

import numpy as np

from .base import _float, _keep, np_fit

__all__ = [  # the helpers templates reach as _rt.<name>
    "sp_i1_partial",
    "sp_i1e_partial",
    "sp_log_softmax_adjoint",
    "sp_logsumexp_adjoint",
    "sp_logsumexp_adjoint_b",
    "sp_softmax_adjoint",
    "sp_special",
    "sp_trigamma",
]


# ----- scipy.special --------------------------------------------------------------------------


class LazyModule:
    """A SciPy module imported on first use: scipy is an optional extra, and the run time
    (which lists these helpers) must import without it. Templates write
    ``_rt.sp_special.psi``; the rules of scipy.linalg use ``sp_linalg`` the same way."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(importlib.import_module(self._name), attr)


sp_special = LazyModule("scipy.special")


def sp_i1_partial(x):
    """I1'(x) = I0(x) - I1(x)/x, 1/2 at 0."""
    x = _float(x)
    zero = x == 0
    safe = np.where(zero, 1, x)
    return np.where(zero, 0.5, sp_special.i0(safe) - sp_special.i1(safe) / safe)


def sp_i1e_partial(x, ans):
    """d/dx e^-|x| I1(x) = i0e(x) - i1e(x)·(sign(x) + 1/x), 1/2 at 0."""
    x = _float(x)
    zero = x == 0
    safe = np.where(zero, 1, x)
    return np.where(zero, 0.5, sp_special.i0e(safe) - ans * (np.sign(safe) + 1 / safe))


def sp_trigamma(x):
    """ψ'(x), the derivative of digamma: scipy's ``polygamma(1, x)`` for real x. That
    one takes real numbers only, so complex z (the second derivative of gamma,
    loggamma, rgamma) gets a series: the recurrence ψ'(w) = 1/w² + ψ'(w + 1) up to
    Re w ≥ 12, then the asymptotic expansion; the reflection formula for Re z < 1/2."""
    if not np.iscomplexobj(x):
        return sp_special.polygamma(1, x)
    z = np.asarray(x)
    reflect = z.real < 0.5
    w = np.where(reflect, 1 - z, z)
    total = 0
    for k in range(12):
        total = total + 1 / ((w + k) * (w + k))
    inv = 1 / (w + 12)
    inv2 = inv * inv
    total = total + inv + inv2 / 2 + inv * inv2 * (1 / 6 - inv2 * (1 / 30 - inv2 * (1 / 42 - inv2 / 30)))
    s = np.sin(np.pi * z)
    out = np.where(reflect, np.pi * np.pi / (s * s) - total, total)
    return out if isinstance(x, np.ndarray) else out[()]


def _no_sign(return_sign):
    if return_sign:
        raise NotImplementedError("no gradient for logsumexp(..., return_sign=True)")


def sp_logsumexp_adjoint(g, a, ans, axis=None, b=None, keepdims=False, return_sign=False):
    """ā = g·b·exp(a - ans) (the softmax, weighted)."""
    _no_sign(return_sign)
    a_ = np.asarray(a)
    shape = np.broadcast(a_, b).shape if b is not None else a_.shape
    w = np.exp(a_ - _keep(ans, shape, axis, keepdims))
    if b is not None:
        w = w * b
    return np_fit(_keep(g, shape, axis, keepdims) * np.conj(w), a)


def sp_logsumexp_adjoint_b(g, a, ans, axis=None, b=None, keepdims=False, return_sign=False):
    _no_sign(return_sign)
    if b is None:
        return None
    a_ = np.asarray(a)
    shape = np.broadcast(a_, b).shape
    w = np.exp(a_ - _keep(ans, shape, axis, keepdims))
    return np_fit(_keep(g, shape, axis, keepdims) * np.conj(w), b)


def sp_softmax_adjoint(g, x, ans, axis=None):
    g = np.asarray(g)
    s = np.asarray(ans)
    inner = np.sum(g * np.conj(s), axis=axis, keepdims=True)
    return np_fit(np.conj(s) * (g - inner), x)


def sp_log_softmax_adjoint(g, x, ans, axis=None):
    g = np.asarray(g)
    total = np.sum(g, axis=axis, keepdims=True)
    return np_fit(g - np.conj(np.exp(ans)) * total, x)
