"""Helpers of the ``scipy.special`` rules (rules/scipy.py) that compute on arrays like the
NumPy ones: ``_rt.sp_special`` is ``scipy.special``, imported on first use (scipy is
optional, and this module is imported without it)."""
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
]


# ----- scipy.special --------------------------------------------------------------------------


class _LazySpecial:
    """``scipy.special``, imported on first use (templates write ``_rt.sp_special.psi``)."""

    def __getattr__(self, name):
        import scipy.special

        return getattr(scipy.special, name)


sp_special = _LazySpecial()


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
