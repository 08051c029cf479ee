"""Template helpers of the math and matmul rules that need more than one expression:
digamma and its derivatives, truncated division, the adjoints of ``a @ b``; and
``shape_like``, what the tape keeps of an array the pullback reads only for its shape."""
import math

import numpy as np

from .project import unbroadcast


# ----- special functions ------------------------------------------------------------------

_B2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def digamma(x):
    """ψ(x), accurate to about 1e-12 for real x (not a pole)."""
    x = float(x)
    if x <= 0 and x == math.floor(x):
        return math.nan
    if x < 0.5:  # reflection: ψ(1-x) - ψ(x) = π cot(πx), with πx reduced near a pole
        return digamma(1.0 - x) - math.pi / math.tan(math.pi * (x - round(x)))
    acc_ = 0.0
    while x < 10.0:
        acc_ -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series = 0.0
    p = inv2
    for k, b in enumerate(_B2K, start=1):
        series += b / (2 * k) * p
        p *= inv2
    return acc_ + math.log(x) - 0.5 / x - series


def integral_dtype(dtype):
    """Does the dtype= argument dtype (a dtype, a type, a name such as "int64") hold
    integers or bools? A cast to one is piecewise constant: no gradient goes through it,
    as through int(). None (the default) keeps the input's dtype."""
    if dtype is None:
        return False
    try:
        return np.dtype(dtype).kind in "biu"
    except TypeError:
        return False


def trunc_div(x, y):
    return float(math.trunc(x / y))


_ndarray = np.ndarray
_F64 = np.dtype(np.float64)  # (compared by identity first: the usual dtype)


def matmul_adjoint_a(g, a, b):
    if type(g) is _ndarray and type(a) is _ndarray and type(b) is _ndarray:
        if a.dtype is _F64 and b.dtype is _F64 and g.dtype is _F64 and g.ndim == 2 == a.ndim == b.ndim:
            return g @ b.T  # float64 matrices, the usual case: the product is float64, as a
        bt = b.dtype
        if g.ndim == 2 == a.ndim == b.ndim and (bt is _F64 or bt.kind != "c"):
            out = g @ b.T  # matrices, b real: the common case, no projection needed
            dt, at = out.dtype, a.dtype
            if dt is at or dt == at:
                return out
    a_, b_ = np.asarray(a), np.asarray(b)
    g = np.asarray(g)
    bc = b_.conj() if np.iscomplexobj(b_) else b_
    if a_.ndim == 1 and b_.ndim == 1:
        out = g * bc
    elif b_.ndim == 1:
        out = g[..., None] * bc  # an outer product (written so it can be differentiated again)
    elif a_.ndim == 1:  # (k,) @ (..., k, n): b times g per stack, summed by unbroadcast
        out = bc @ g if g.ndim == 1 else (bc @ g[..., :, None])[..., 0]
    else:
        out = g @ np.swapaxes(bc, -1, -2)
    return unbroadcast(out, a_) if isinstance(a, np.ndarray) else unbroadcast(out, a)


def matmul_adjoint_b(g, a, b):
    if type(g) is _ndarray and type(a) is _ndarray and type(b) is _ndarray:
        at = a.dtype
        if at is _F64 and b.dtype is _F64 and g.dtype is _F64 and g.ndim == 2 == a.ndim == b.ndim:
            return a.T @ g  # float64 matrices, the usual case: the product is float64, as b
        if g.ndim == 2 == a.ndim == b.ndim and (at is _F64 or at.kind != "c"):
            out = a.T @ g
            dt, bt = out.dtype, b.dtype
            if dt is bt or dt == bt:
                return out
    a_, b_ = np.asarray(a), np.asarray(b)
    g = np.asarray(g)
    ac = a_.conj() if np.iscomplexobj(a_) else a_
    if a_.ndim == 1 and b_.ndim == 1:
        out = g * ac
    elif a_.ndim == 1:
        out = ac[..., :, None] * g[..., None, :]  # an outer product
    elif b_.ndim == 1:  # (..., m, k) @ (k,): a's transpose times g per stack, summed
        out = np.swapaxes(ac, -1, -2) @ g if g.ndim == 1 else (np.swapaxes(ac, -1, -2) @ g[..., :, None])[..., 0]
    else:
        out = np.swapaxes(ac, -1, -2) @ g
    return unbroadcast(out, b_) if isinstance(b, np.ndarray) else unbroadcast(out, b)


_NO_DATA = bytes(64)  # the one element every shape_like array repeats (any itemsize)
_SHAPE_LIKE = {}  # (shape, dtype) -> its stand-in (read-only, so one serves every use)
_BY_SHAPE = {}  # shape -> the stand-in last made or found for it, of any dtype
_by_shape = _BY_SHAPE.get


def shape_like(x):
    """A stand-in for the array x where the pullback reads it only for its shape and
    dtype (the ``like`` of ``unbroadcast``): an array of x's shape and dtype whose every
    element is one shared zero (strides 0, read-only), so the tape and the pullback keep
    a few bytes, not x's data. Anything but a numeric array stays as it is.

    Generated loops call it per trip for every value saved for its shape: the first
    lookup is by shape alone, with the dtype compared by identity (hashing a dtype costs
    more than the rest of the call); anything else takes the (shape, dtype) table."""
    if type(x) is not _ndarray:
        return x
    out = _by_shape(x.shape)
    if out is not None and out.dtype is x.dtype:
        return out
    return _shape_like_slow(x)


def _shape_like_slow(x):
    key = (x.shape, x.dtype)
    out = _SHAPE_LIKE.get(key)
    if out is None:
        if x.dtype.kind not in "biufc" or x.dtype.itemsize > len(_NO_DATA) or x.size <= 1:
            return x
        if len(_SHAPE_LIKE) >= 512:
            _SHAPE_LIKE.clear()
            _BY_SHAPE.clear()
        out = _SHAPE_LIKE[key] = np.ndarray(x.shape, x.dtype, buffer=_NO_DATA, strides=(0,) * x.ndim)
    _BY_SHAPE[x.shape] = out
    return out


def np_pad_transpose(v, pad_width, mode="constant"):
    """The transpose of np_pad_adjoint (a linear map of its gradient): np.pad again, with
    zeros for the constant mode (the padding's values are not the array's)."""
    if mode in ("edge", "reflect", "symmetric", "wrap", "mean", "linear_ramp"):
        return np.pad(v, pad_width, mode)  # (linear_ramp's linear part: end values 0)
    return np.pad(v, pad_width)


def trigamma(x):
    """ψ'(x) for real x (not a pole), accurate to about 1e-12."""
    x = float(x)
    if x <= 0 and x == math.floor(x):
        return math.nan
    if x < 0.5:  # reflection: ψ'(1-x) + ψ'(x) = π² / sin²(πx)
        return -trigamma(1.0 - x) + (math.pi / math.sin(math.pi * (x - round(x)))) ** 2
    acc_ = 0.0
    while x < 10.0:
        acc_ += 1.0 / (x * x)
        x += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    # ψ'(x) ~ 1/x + 1/(2x²) + Σ B_2k / x^(2k+1)
    series = inv + 0.5 * inv2
    p = inv * inv2
    for b in _B2K:
        series += b * p
        p *= inv2
    return acc_ + series


def polygamma2(x):
    """ψ''(x), by a central difference of trigamma (used only for third derivatives)."""
    h = 1e-5 * max(1.0, abs(float(x)))
    return (trigamma(x + h) - trigamma(x - h)) / (2 * h)
