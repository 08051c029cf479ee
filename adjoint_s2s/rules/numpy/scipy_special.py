"""Helpers of the ``scipy.special`` rules (rules/scipy.py) that compute on arrays like the
NumPy ones: ``_rt.sp_special`` is ``scipy.special``, imported on first use (scipy is
optional, and this module is imported without it)."""
import importlib

import numpy as np

from .base import _float, _keep, np_fit
from ...errors import NotDifferentiableError
from ...tangents import DeclinedGradient

__all__ = [  # the helpers templates reach as _rt.<name>
    "sp_declined",
    "sp_i1_partial",
    "sp_ive_partial",
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


# "scipy.special.jv.v" -> (path, parameter, reason): the derivatives declined (filled by
# rules/scipy.py and rules/scipy_stats.py; templates name them by key)
DECLINED = {}


def sp_declined(key):
    """The adjoint of a parameter whose derivative adjoint_s2s declines (the order of a
    Bessel function, the shape parameter of an incomplete gamma or beta function): a
    ``DeclinedGradient``, a contagious thunk that raises ``NotDifferentiableError`` where
    the gradient is read, and only there. The run-time version of a rule computes every
    parameter's adjoint, while the caller reads only those of the arguments it
    differentiates (and a rule's pullback differentiated again computes adjoints of the
    constants it captured): a fixed order passes, a differentiated one is refused, never
    given a zero. An integer given for a real order is refused too: the function has a
    derivative there, and it is not zero."""
    path, param, reason = DECLINED[key]

    def declined_gradient():
        raise NotDifferentiableError(
            f"{path} is not differentiable in {param} in adjoint_s2s: {reason}. If its "
            f"gradient is not wanted, hold it fixed with adjoint_s2s.dropgrad({param}); "
            f"otherwise give the call a rule of your own (@adjoint_s2s.adjoint)"
        )

    return DeclinedGradient(declined_gradient)


def sp_ive_partial(v, z, ans):
    """d/dz ive(v, z) = (ive(v-1, z) + ive(v+1, z))/2 - sign(z)·ive(v, z) for real z;
    complex z is refused (e^-|Re z| is not holomorphic)."""
    if np.iscomplexobj(z):
        raise NotDifferentiableError(
            "scipy.special.ive(v, z) of a complex z is not differentiable in adjoint_s2s: "
            "its factor exp(-|Re z|) is not holomorphic (use iv(v, z) * exp(-abs(z.real)))"
        )
    return (sp_special.ive(v - 1, z) + sp_special.ive(v + 1, z)) / 2 - np.sign(z) * ans


def _lse_parts(g, a, ans, b, return_sign):
    """(shape, cotangent of log|s|, log|s|, 1/sign) of logsumexp's result."""
    a_ = np.asarray(a)
    shape = np.shape(a_ * b) if b is not None else a_.shape
    if not return_sign:
        return shape, g, ans, 1
    if np.iscomplexobj(a_) or np.iscomplexobj(b):
        raise NotDifferentiableError(
            "scipy.special.logsumexp(..., return_sign=True) of complex numbers: not "
            "differentiable in adjoint_s2s (log|s| of a complex s): use return_sign=False"
        )
    return shape, g[0], ans[0], ans[1]


def _finite_shift(lse):
    """lse, with 0 where it is -inf (every term -inf: exp(a - lse) would be NaN, not 0)."""
    return np.where(lse == -np.inf, 0.0, lse)


def sp_logsumexp_adjoint(g, a, ans, axis=None, b=None, keepdims=False, return_sign=False):
    """ā = g·b·exp(a - ans) (the softmax, weighted); with return_sign, the result is
    (log|s|, sign s) and ā = g·b·exp(a - log|s|)·sign s (the sign has no gradient)."""
    shape, g, lse, sign = _lse_parts(g, a, ans, b, return_sign)
    if g is None:
        return None
    w = np.exp(np.asarray(a) - _keep(_finite_shift(lse), shape, axis, keepdims))
    if b is not None:
        w = w * b
    if return_sign:
        w = w * _keep(sign, shape, axis, keepdims)
    return np_fit(_keep(g, shape, axis, keepdims) * np.conj(w), a)


def sp_logsumexp_adjoint_b(g, a, ans, axis=None, b=None, keepdims=False, return_sign=False):
    """b̄ = g·exp(a - ans) (times sign s with return_sign)."""
    if b is None:
        return None
    shape, g, lse, sign = _lse_parts(g, a, ans, b, return_sign)
    if g is None:
        return None
    w = np.exp(np.asarray(a) - _keep(_finite_shift(lse), shape, axis, keepdims))
    if return_sign:
        w = w * _keep(sign, shape, axis, keepdims)
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
