"""Rules of NumPy's elementwise functions (ufuncs and friends), each helper beside the
rules that call it.

Elementwise ufuncs give one partial derivative per argument (the reverse pass writes
``unbroadcast(g * conj(partial), x)``); the others give the whole adjoint through a
helper (``_rt.<name>``) that handles zeros and infinities: ``np.log(0)`` has the partial
``inf``, and ``0 * inf`` must not leak into the gradient.
"""
import numpy as np

from ...runtime.project import conj
from .base import _CURRENT, _float, np_fit, rule

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_absolute_adjoint",
    "np_angle_adjoint",
    "np_clip_above",
    "np_clip_below",
    "np_clip_inside",
    "np_copysign_partial",
    "np_heaviside_partial",
    "np_sign_adjoint",
    "np_float_power_base_partial",
    "np_fmax_share",
    "np_max_share",
    "np_power_base_partial",
    "np_ratio_or_zero",
    "np_softmax_weight",
    "np_power_exponent_partial",
    "np_reciprocal_adjoint",
    "np_sinc_partial",
    "np_sqrt_adjoint",
    "np_where_adjoint",
]


def np_reciprocal_adjoint(g, x, d, scale=1.0):
    """g·conj(1/(scale·d)), the adjoint of a function whose partial is 1/(scale·d) (log:
    d = x; log1p: d = 1 + x; sqrt: d = ans, scale 2; cbrt: d = ans², scale 3), with 0
    where g == 0, also where d == 0 and the partial is infinite, or d is NaN (the square
    root or logarithm of a negative number that np.nanmean ignores). Where d has no zero
    (one min() pass shows it for positive d) it is the plain formula; otherwise 1 stands
    in for d where g == 0 (a double where: finite at second order too)."""
    if scale == 1.0 and type(d) is np.ndarray and d.dtype.kind == "f" and d.size and (
            _min_reduce(d, None) > 0):  # (log of positive reals: g / d, one array operation)
        out = g / d
        if type(out) is np.ndarray and type(x) is np.ndarray and out.shape == x.shape and (
                out.dtype is x.dtype):
            return out  # a fresh array already in x's space: nothing to project
        return np_fit(out, x)
    if not _has_zero(d) and not _has_nan(d):
        if scale == 1.0:  # (log: g / d, one array operation)
            return np_fit(g / conj(d), x)
        return np_fit(g * conj((1 / scale) / d), x)  # (c / d: one array operation, not two)
    c = 1 / scale
    zero = np.equal(g, 0)
    return np_fit(g * conj(c / np.where(zero, 1, d)), x)


def _has_zero(v):
    """Whether v has an exact zero (positive real v: one pass, no temporary array)."""
    if type(v) is np.ndarray and v.dtype.kind == "f" and v.size:
        if _min_reduce(v, None) > 0:  # (ndarray.min's Python layers cost microseconds)
            return False
        return bool(np.any(v == 0))
    v = np.asarray(v)
    if v.size == 0:
        return False
    if not np.iscomplexobj(v) and v.min() > 0:
        return False
    return bool(np.any(v == 0))


_min_reduce = np.minimum.reduce


def _has_nan(v):
    """Whether v has a NaN (checked after _has_zero found no zero: real v only, whose
    min() is then NaN or negative)."""
    v = np.asarray(v)
    return v.dtype.kind in "fc" and v.size > 0 and bool(np.isnan(v).any())


def _expand_axis(g, axis):
    return np.expand_dims(np.asarray(g), axis)


# =====================================================================================
# Elementwise
# =====================================================================================
_CURRENT[0] = "Elementwise"


_U = "x"  # one-argument ufuncs


def np_sinc_partial(x):
    """d/dx sin(πx)/(πx) = (cos(πx) - sinc(x))/x, 0 at 0."""
    x = _float(x)
    zero = x == 0
    safe = np.where(zero, 1, x)
    return np.where(zero, 0, (np.cos(np.pi * safe) - np.sinc(safe)) / safe)


for _fn, _d in [
    (np.negative, "-1"),
    (np.positive, "1"),
    (np.exp, "ans"),
    (np.exp2, "ans * np.log(2)"),
    (np.expm1, "ans + 1.0"),
    (np.square, "2 * x"),
    (np.reciprocal, "-ans * ans"),
    (np.sin, "np.cos(x)"),
    (np.cos, "-np.sin(x)"),
    (np.tan, "1.0 + ans * ans"),
    (np.arctan, "1 / (1 + x * x)"),
    (np.sinh, "np.cosh(x)"),
    (np.cosh, "np.sinh(x)"),
    (np.tanh, "1.0 - ans * ans"),
    (np.arcsinh, "1 / np.sqrt(x * x + 1)"),
    (np.deg2rad, "np.pi / 180"),
    (np.radians, "np.pi / 180"),
    (np.rad2deg, "180 / np.pi"),
    (np.degrees, "180 / np.pi"),
    (np.sinc, "_rt.np_sinc_partial(x)"),
    (np.fabs, "np.sign(x)"),
]:
    rule(_fn, _U, _d)


def np_sqrt_adjoint(g, x, ans):
    """sqrt's adjoint g·conj(0.5/ans), where a zero cotangent contributes zero, also at
    ans == 0 (0·inf would make it NaN: the diagonal of pairwise distances that np.triu
    drops). See np_reciprocal_adjoint."""
    return np_reciprocal_adjoint(g, x, ans, 2.0)


rule(np.sqrt, "x", adjoints={"x": "_rt.np_sqrt_adjoint(g, x, ans)"},
     note="a zero cotangent contributes zero, also at 0 (docs/correctness.md)")


_ZERO_SAFE = "a zero cotangent contributes zero, also where the partial is infinite"


rule(np.log, "x", adjoints={"x": "_rt.np_reciprocal_adjoint(g, x, x)"}, note=_ZERO_SAFE)


rule(np.log2, "x", adjoints={"x": "_rt.np_reciprocal_adjoint(g, x, x, np.log(2))"},
     note=_ZERO_SAFE)


rule(np.log10, "x", adjoints={"x": "_rt.np_reciprocal_adjoint(g, x, x, np.log(10))"},
     note=_ZERO_SAFE)


rule(np.log1p, "x", adjoints={"x": "_rt.np_reciprocal_adjoint(g, x, 1 + x)"}, note=_ZERO_SAFE)


rule(np.cbrt, "x", adjoints={"x": "_rt.np_reciprocal_adjoint(g, x, ans * ans, 3)"},
     note=_ZERO_SAFE)


rule(np.arcsin, "x", adjoints={"x": "_rt.np_reciprocal_adjoint(g, x, np.sqrt(1 - x * x))"},
     note=_ZERO_SAFE)


rule(np.arccos, "x", adjoints={"x": "_rt.np_reciprocal_adjoint(g, x, np.sqrt(1 - x * x), -1)"},
     note=_ZERO_SAFE)


rule(np.arccosh, "x",
     adjoints={"x": "_rt.np_reciprocal_adjoint(g, x, np.sqrt(x - 1) * np.sqrt(x + 1))"},
     note=_ZERO_SAFE)


rule(np.arctanh, "x", adjoints={"x": "_rt.np_reciprocal_adjoint(g, x, 1 - x * x)"},
     note=_ZERO_SAFE)


# ----- elementwise ---------------------------------------------------------------------------


def np_absolute_adjoint(g, x, ans):
    """|x|: g·sign(x) for reals; real(g)·x/|x| for complex (0 at 0)."""
    x = np.asarray(x)
    if np.iscomplexobj(x):
        out = np.where(ans == 0, 0, np.real(g) * x / np.where(ans == 0, 1, ans))
    else:
        out = np.real(g) * np.sign(x)
    return np_fit(out, x)


rule(np.absolute, "x", adjoints={"x": "_rt.np_absolute_adjoint(g, x, ans)"},
     note="complex: real(g)·z/|z| (0 at 0)")


rule(np.conjugate, "x", adjoints={"x": "_rt.np_fit(np.conj(g), x)"})


rule(np.real, "val", adjoints={"val": "_rt.np_fit(np.real(g), val)"})


rule(np.imag, "val", adjoints={"val": "_rt.np_fit(1j * np.real(g), val)"},
     note="z̄ = i·real(g)")


def np_angle_adjoint(g, z, deg=False):
    """angle(z) = atan2(im z, re z): real(g)·i·z/|z|² (zero for real input)."""
    z = np.asarray(z)
    if not np.iscomplexobj(z):
        return np_fit(0.0 * np.real(np.asarray(g)) * z, z)
    r2 = np.real(z * z.conj())
    out = np.where(r2 == 0, 0, np.real(g) * 1j * z / np.where(r2 == 0, 1, r2))
    if deg:
        out = out * (180 / np.pi)
    return np_fit(out, z)


rule(np.angle, "z, deg=False", adjoints={"z": "_rt.np_angle_adjoint(g, z, deg)"},
     note="z̄ = real(g)·i·z/|z|²; zero for real input")


rule(np.nan_to_num, "x, copy=True, nan=0.0, posinf=None, neginf=None",
     "np.isfinite(x)", None, None, None, None, note="no gradient to the replaced entries")


# two arguments
rule(np.add, "x1, x2", "1", "1")


rule(np.subtract, "x1, x2", "1", "-1")


rule(np.multiply, "x1, x2", "x2", "x1")


rule(np.divide, "x1, x2", "1 / x2", "-ans / x2")


def np_power_base_partial(x1, x2):
    """∂(x1**x2)/∂x1 = x2·x1**(x2-1), with 0 where x2 == 0."""
    x1, x2 = _float(x1), np.asarray(x2)
    return x2 * np.power(x1, np.where(x2 == 0, 1, x2 - 1))


def np_power_exponent_partial(x1, ans):
    """∂(x1**x2)/∂x2 = x1**x2 · log(x1), with 0 where x1 == 0."""
    x1 = np.asarray(x1)
    safe = np.where(x1 == 0, 1, x1)
    if np.iscomplexobj(x1) or np.iscomplexobj(ans):
        out = ans * np.log(safe.astype(complex))
    else:
        out = ans * np.log(np.abs(safe))
    return np.where(x1 == 0, 0, out)


rule(np.power, "x1, x2", "_rt.np_power_base_partial(x1, x2)",
     "_rt.np_power_exponent_partial(x1, ans)")


def np_float_power_base_partial(x1, x2):
    x1, x2 = np.asarray(x1), np.asarray(x2)
    return x2 * np.float_power(x1, np.where(x2 == 0, 1, x2 - 1))


rule(np.float_power, "x1, x2", "_rt.np_float_power_base_partial(x1, x2)",
     "_rt.np_power_exponent_partial(x1, ans)")


def np_max_share(a, b, sign=1):
    """The share of maximum(a, b) (sign=1) or minimum (sign=-1) owed to a: ties split."""
    a, b = np.asarray(a), np.asarray(b)
    wins = a > b if sign > 0 else a < b
    return wins + 0.5 * (a == b)


rule(np.maximum, "x1, x2", "_rt.np_max_share(x1, x2, 1)", "_rt.np_max_share(x2, x1, 1)",
     note="ties split evenly")


rule(np.minimum, "x1, x2", "_rt.np_max_share(x1, x2, -1)", "_rt.np_max_share(x2, x1, -1)",
     note="ties split evenly")


def np_fmax_share(a, b, sign=1):
    """As max_share, for fmax/fmin: a NaN loses to a number."""
    a, b = np.asarray(a), np.asarray(b)
    na, nb = np.isnan(a), np.isnan(b)
    wins = (a > b if sign > 0 else a < b) | (nb & ~na)
    return wins + 0.5 * ((a == b) | (na & nb))


rule(np.fmax, "x1, x2", "_rt.np_fmax_share(x1, x2, 1)", "_rt.np_fmax_share(x2, x1, 1)",
     note="ties split evenly; NaN loses")


rule(np.fmin, "x1, x2", "_rt.np_fmax_share(x1, x2, -1)", "_rt.np_fmax_share(x2, x1, -1)",
     note="ties split evenly; NaN loses")


def np_ratio_or_zero(num, den):
    """num / den, and 0 where den is 0: the subgradient arctan2 and hypot take at the
    origin, as math.atan2 and math.hypot do (0/0 gave NaN for arrays, and a
    ZeroDivisionError for Python floats)."""
    zero = den == 0
    if np.ndim(zero) == 0:
        return 0.0 * num if zero else num / den
    return np.where(zero, 0.0, num / np.where(zero, 1.0, den))


def np_softmax_weight(x, ans, two=False):
    """exp(x - ans), the weight of x in a log-sum-exp ans (2**(x - ans) for base 2); 0
    where ans is -inf (every term -inf: exp(-inf - -inf) was NaN, and a NaN times a zero
    cotangent stays NaN)."""
    d = x - np.where(ans == -np.inf, 0.0, ans)
    return np.exp2(d) if two else np.exp(d)


rule(np.arctan2, "x1, x2", "_rt.np_ratio_or_zero(x2, x1 * x1 + x2 * x2)",
     "_rt.np_ratio_or_zero(-x1, x1 * x1 + x2 * x2)", note="0 at the origin")


rule(np.hypot, "x1, x2", "_rt.np_ratio_or_zero(x1, ans)", "_rt.np_ratio_or_zero(x2, ans)", note="0 at the origin")


rule(np.logaddexp, "x1, x2", "_rt.np_softmax_weight(x1, ans)", "_rt.np_softmax_weight(x2, ans)")


rule(np.logaddexp2, "x1, x2", "_rt.np_softmax_weight(x1, ans, True)", "_rt.np_softmax_weight(x2, ans, True)")


rule(np.remainder, "x1, x2", "1", "-np.floor_divide(x1, x2)")


rule(np.fmod, "x1, x2", "1", "-np.trunc(x1 / x2)")


def np_copysign_partial(x1, x2):
    return np.where(np.signbit(x1) == np.signbit(x2), 1.0, -1.0)


rule(np.copysign, "x1, x2", "_rt.np_copysign_partial(x1, x2)", None)


# sign of a complex number is z/|z| (NumPy 2; the sign of its real part before)
_SIGN_IS_UNIT = bool(np.sign(3 + 4j) == 0.6 + 0.8j)


def np_sign_adjoint(g, x, ans):
    """sign: piecewise constant for reals (no gradient); for complex z (NumPy 2) the unit
    w = z/|z|, whose adjoint is (g - Re(conj(g)·w)·w)/|z| (0 at 0)."""
    if g is None or not _SIGN_IS_UNIT or not np.iscomplexobj(x):
        return None
    z = np.asarray(x)
    w = np.asarray(ans)
    g = np.asarray(g)
    r = np.abs(z)
    safe = np.where(r == 0, 1, r)
    out = np.where(r == 0, 0, (g - np.real(np.conj(g) * w) * w) / safe)
    return np_fit(out, x)


rule(np.sign, "x", kind="other", adjoints={"x": "_rt.np_sign_adjoint(g, x, ans)"},
     note="none for reals (piecewise constant); complex z: z/|z| (0 at 0)")


def np_heaviside_partial(x1):
    """heaviside(x1, x2) is x2 where x1 is 0 (piecewise constant in x1)."""
    return np.asarray(x1) == 0


rule(np.heaviside, "x1, x2", None, "_rt.np_heaviside_partial(x1)",
     note="to x2 where x1 is 0; none to x1 (piecewise constant)")


def np_clip_inside(a, lo, hi):
    """Where clip(a, lo, hi) passes a through."""
    a = np.asarray(a)
    m = np.ones(a.shape, dtype=bool)
    if lo is not None:
        m = m & (a >= lo)
    if hi is not None:
        m = m & (a <= hi)
    return m


def np_clip_below(a, lo, hi):
    """Where clip(a, lo, hi) returns lo."""
    if lo is None:
        return False
    m = np.asarray(a) < lo
    if hi is not None:
        m = m & (np.asarray(lo) <= hi)
    return m


def np_clip_above(a, lo, hi):
    """Where clip(a, lo, hi) returns hi."""
    if hi is None:
        return False
    m = np.asarray(a) > hi
    if lo is not None:
        m = m | (np.asarray(lo) > hi)
    return m


rule(np.clip, "a, a_min=None, a_max=None",
     "_rt.np_clip_inside(a, a_min, a_max)",
     "_rt.np_clip_below(a, a_min, a_max)",
     "_rt.np_clip_above(a, a_min, a_max)",
     note="the bounds get the adjoint where they are active")


def np_where_adjoint(g, condition, x, other=False):
    """The adjoint of np.where(condition, x, y) for x (other: for y): g where the condition
    picks it, by its truth (a float or int condition picks where it is nonzero), 0
    elsewhere. Selected, not multiplied by the condition: the condition's values do not
    scale it, and an inf or nan of g where the other branch was taken stays out (as JAX's
    where), so `np.sqrt(np.where(v > 0, v, 0))` has 0, not nan, where v <= 0."""
    picked = np.asarray(condition).astype(bool)
    return np_fit(np.where(np.logical_not(picked) if other else picked, g, 0), x)


rule(np.where, "condition, x, y",
     adjoints={"x": "_rt.np_where_adjoint(g, condition, x)", "y": "_rt.np_where_adjoint(g, condition, y, True)"},
     note="three-argument form; no gradient to the condition; the adjoint is selected by the "
          "condition's truth, not multiplied by it")
