"""Rules for ``math`` and ``cmath``: one line per function, the partial derivative.

``math`` functions are real: the partial is used as ``b_x = b_y * partial``. ``cmath``
functions are holomorphic; with Zygote's convention the reverse pass writes
``b_x = b_y * conj(partial)``.
"""
import cmath
import math

from . import nondifferentiable_builtin, primitive

# ----- math: elementwise, one argument ---------------------------------------------------
primitive(math.sin, "x", "math.cos(x)")
primitive(math.cos, "x", "-math.sin(x)")
primitive(math.tan, "x", "1 + ans * ans")
primitive(math.asin, "x", "1 / math.sqrt(1 - x * x)")
primitive(math.acos, "x", "-1 / math.sqrt(1 - x * x)")
primitive(math.atan, "x", "1 / (1 + x * x)")
primitive(math.sinh, "x", "math.cosh(x)")
primitive(math.cosh, "x", "math.sinh(x)")
primitive(math.tanh, "x", "1 - ans * ans")
primitive(math.asinh, "x", "1 / math.sqrt(x * x + 1)")
primitive(math.acosh, "x", "1 / math.sqrt(x * x - 1)")
primitive(math.atanh, "x", "1 / (1 - x * x)")
primitive(math.exp, "x", "ans")
primitive(math.expm1, "x", "ans + 1")
primitive(math.log2, "x", "1 / (x * math.log(2))")
primitive(math.log10, "x", "1 / (x * math.log(10))")
primitive(math.log1p, "x", "1 / (1 + x)")
primitive(math.sqrt, "x", "0.5 / ans")
primitive(math.fabs, "x", "math.copysign(1.0, x) if x else 0.0")
primitive(math.erf, "x", "2 / math.sqrt(math.pi) * math.exp(-x * x)")
primitive(math.erfc, "x", "-2 / math.sqrt(math.pi) * math.exp(-x * x)")
primitive(math.gamma, "x", "ans * _rt.digamma(x)")
primitive(math.lgamma, "x", "_rt.digamma(x)")
primitive(math.degrees, "x", "180 / math.pi")
primitive(math.radians, "x", "math.pi / 180")
if hasattr(math, "exp2"):
    primitive(math.exp2, "x", "ans * math.log(2)")
if hasattr(math, "cbrt"):
    primitive(math.cbrt, "x", "1 / (3 * ans * ans)")

# ----- math: several arguments -----------------------------------------------------------
primitive(math.log, "x", "1 / x")
primitive(math.log, "x, base", "1 / (x * math.log(base))", "-ans / (base * math.log(base))")
primitive(math.pow, "x, y", "y * math.pow(x, y - 1)", "_rt.pow_exponent_partial(x, ans)")
primitive(math.atan2, "y, x", "x / (x * x + y * y)", "-y / (x * x + y * y)")
primitive(math.hypot, "x, y", "x / ans", "y / ans")
primitive(math.copysign, "x, y", "math.copysign(1.0, x * y) if x else 0.0", None)
primitive(math.fmod, "x, y", "1", "-_rt.trunc_div(x, y)")
primitive(math.ldexp, "x, i", "math.ldexp(1.0, i)", None)
primitive(math.remainder, "x, y", "1", "-round(x / y)")

# ----- math: no gradient -------------------------------------------------------------------
nondifferentiable_builtin(
    math.floor,
    math.ceil,
    math.trunc,
    math.isnan,
    math.isinf,
    math.isfinite,
    math.isclose,
    math.factorial,
    math.comb,
    math.perm,
    math.gcd,
    math.isqrt,
    reason="its result is piecewise constant or an integer",
)

# ----- cmath: holomorphic, one argument (partials are conjugated by the reverse pass) -----
_C = dict(kind="complex")
primitive(cmath.exp, "z", "ans", **_C)
primitive(cmath.log, "z", "1 / z", **_C)
primitive(cmath.log10, "z", "1 / (z * math.log(10))", **_C)
primitive(cmath.sqrt, "z", "0.5 / ans", **_C)
primitive(cmath.sin, "z", "cmath.cos(z)", **_C)
primitive(cmath.cos, "z", "-cmath.sin(z)", **_C)
primitive(cmath.tan, "z", "1 + ans * ans", **_C)
primitive(cmath.asin, "z", "1 / cmath.sqrt(1 - z * z)", **_C)
primitive(cmath.acos, "z", "-1 / cmath.sqrt(1 - z * z)", **_C)
primitive(cmath.atan, "z", "1 / (1 + z * z)", **_C)
primitive(cmath.sinh, "z", "cmath.cosh(z)", **_C)
primitive(cmath.cosh, "z", "cmath.sinh(z)", **_C)
primitive(cmath.tanh, "z", "1 - ans * ans", **_C)
primitive(cmath.asinh, "z", "1 / cmath.sqrt(z * z + 1)", **_C)
primitive(cmath.acosh, "z", "1 / (cmath.sqrt(z - 1) * cmath.sqrt(z + 1))", **_C)
primitive(cmath.atanh, "z", "1 / (1 - z * z)", **_C)
primitive(cmath.log, "z, base", "1 / (z * cmath.log(base))", "-ans / (base * cmath.log(base))", **_C)
# phase(z) = atan2(im, re) is real: its gradient is i*z/|z|^2 times the real seed
primitive(
    cmath.phase,
    "z",
    adjoints={"z": "_rt.phase_adjoint(g, z)"},
)
nondifferentiable_builtin(cmath.isnan, cmath.isinf, cmath.isfinite, cmath.isclose)
