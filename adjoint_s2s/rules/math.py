"""Rules for ``math`` and ``cmath``: one line per function, the partial derivative.

``math`` functions are real: the partial is used as ``b_x = b_y * partial``. ``cmath``
functions are holomorphic; with Zygote's convention the reverse pass writes
``b_z = b_y * conj(partial)``. Where a formula divides by zero at a point of the domain
(``sqrt`` at 0, ``asin`` at ±1, ``atan2`` and ``hypot`` at the origin), the template says
what the derivative is there instead of raising: infinite for a vertical tangent, 0 (a
subgradient) for a norm at 0.

Functions whose gradient depends on the structure of their arguments (``math.prod``,
``math.fsum``, ``math.dist``, ``math.hypot`` with any number of arguments,
``math.sumprod``) are run-time rules in ``special.py``.
"""
import cmath
import math

from . import nondifferentiable_builtin, primitive

# ----- math: elementwise, one argument ---------------------------------------------------
primitive(math.sin, "x", "math.cos(x)")
primitive(math.cos, "x", "-math.sin(x)")
primitive(math.tan, "x", "1 + ans * ans")
primitive(math.asin, "x", "_rt.recip(math.sqrt((1 - x) * (1 + x)))")
primitive(math.acos, "x", "-_rt.recip(math.sqrt((1 - x) * (1 + x)))")
primitive(math.atan, "x", "1 / (1 + x * x)")
primitive(math.sinh, "x", "math.cosh(x)")
primitive(math.cosh, "x", "math.sinh(x)")
primitive(math.tanh, "x", "1 - ans * ans")
primitive(math.asinh, "x", "1 / math.hypot(1.0, x)")
primitive(math.acosh, "x", "_rt.recip(math.sqrt((x - 1) * (x + 1)))")
primitive(math.atanh, "x", "1 / ((1 - x) * (1 + x))")
primitive(math.exp, "x", "ans")
primitive(math.expm1, "x", "ans + 1")
primitive(math.log2, "x", "1 / (x * math.log(2))")
primitive(math.log10, "x", "1 / (x * math.log(10))")
primitive(math.log1p, "x", "1 / (1 + x)")
# a zero cotangent contributes zero, also at 0 where the partial is infinite
primitive(math.sqrt, "x", adjoints={"x": "_rt.sqrt_adjoint(g, ans)"})
primitive(math.fabs, "x", "math.copysign(1.0, x) if x else 0.0")
primitive(math.erf, "x", "2 / math.sqrt(math.pi) * math.exp(-x * x)")
primitive(math.erfc, "x", "-2 / math.sqrt(math.pi) * math.exp(-x * x)")
primitive(math.gamma, "x", "ans * _rt.digamma(x)")
primitive(math.lgamma, "x", "_rt.digamma(x)")  # d log|Γ(x)|/dx = ψ(x), negative x too
primitive(math.degrees, "x", "180 / math.pi")
primitive(math.radians, "x", "math.pi / 180")
if hasattr(math, "exp2"):  # Python 3.11
    primitive(math.exp2, "x", "ans * math.log(2)")
if hasattr(math, "cbrt"):  # Python 3.11
    primitive(math.cbrt, "x", "_rt.recip(3 * ans * ans)")

# ----- math: several arguments -----------------------------------------------------------
primitive(math.log, "x", "1 / x")
primitive(math.log, "x, base", "1 / (x * math.log(base))", "-ans / (base * math.log(base))")
primitive(math.pow, "x, y", "_rt.pow_base_partial(x, y)", "_rt.pow_exp_partial(x, ans)")
primitive(math.atan2, "y, x", "_rt.atan2_partial_y(y, x)", "_rt.atan2_partial_x(y, x)")
# hypot with 1 to 3 arguments is inlined; any other count goes through special.py
primitive(math.hypot, "x", "_rt.norm_partial(x, ans)")
primitive(math.hypot, "x, y", "_rt.norm_partial(x, ans)", "_rt.norm_partial(y, ans)")
primitive(
    math.hypot,
    "x, y, z",
    "_rt.norm_partial(x, ans)",
    "_rt.norm_partial(y, ans)",
    "_rt.norm_partial(z, ans)",
)
# copysign(x, y) = |x|·sign(y): the sign of y is piecewise constant
primitive(math.copysign, "x, y", "math.copysign(1.0, x) * math.copysign(1.0, y) if x else 0.0", None)
# fmod and remainder: x - n·y with an integer n, recovered exactly from the result
primitive(math.fmod, "x, y", "1", "-round((x - ans) / y)")
primitive(math.remainder, "x, y", "1", "-round((x - ans) / y)")
primitive(math.ldexp, "x, i", "math.ldexp(1.0, i)", None)
# nextafter moves x by at most one ulp: locally x plus a piecewise constant
primitive(math.nextafter, "x, y", "1", None)
if hasattr(math, "fma"):  # Python 3.13: x*y + z, rounded once
    primitive(math.fma, "x, y, z", "y", "x", "1")

# ----- math: tuple results ----------------------------------------------------------------
primitive(math.frexp, "x", adjoints={"x": "_rt.frexp_adjoint(g, ans)"}, kind="other")
primitive(math.modf, "x", adjoints={"x": "_rt.modf_adjoint(g)"}, kind="other")

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
    math.lcm,
    math.isqrt,
    math.ulp,
    reason="its result is piecewise constant or an integer",
)


# ----- cmath: holomorphic (partials are conjugated by the reverse pass) -------------------
def _holomorphic(fn, params, *partials, complex_args=True):
    """A cmath rule: b_z = g·conj(partial).

    The explicit "real" adjoint covers real arguments (cmath.sqrt(-4.0)): the result is
    complex, so the real operand's adjoint is real(g·conj(partial)), which the plain
    real-operand contribution g·partial would get wrong for a complex partial. The
    "complex" one is what the reverse pass would write, with _rt.conj for .conjugate(),
    which a second differentiation can read whatever the partial's kind.
    """
    names = [p.strip() for p in params.split(",")]
    adjoints = {
        p: {"real": f"_rt.re(g * _rt.conj({d}))", "complex": f"g * _rt.conj({d})"}
        for p, d in zip(names, partials)
        if d
    }
    if not complex_args:
        adjoints = {p: {"real": a["real"]} for p, a in adjoints.items()}
    return primitive(fn, params, *partials, kind="complex", adjoints=adjoints)


_holomorphic(cmath.exp, "z", "ans")
_holomorphic(cmath.log, "z", "1 / z")
_holomorphic(cmath.log, "z, base", "1 / (z * cmath.log(base))", "-ans / (base * cmath.log(base))")
_holomorphic(cmath.log10, "z", "1 / (z * math.log(10))")
_holomorphic(cmath.sqrt, "z", "_rt.sqrt_partial(ans)")
_holomorphic(cmath.sin, "z", "cmath.cos(z)")
_holomorphic(cmath.cos, "z", "-cmath.sin(z)")
_holomorphic(cmath.tan, "z", "1 + ans * ans")
# The inverse functions' square roots are taken as cmath takes them (sqrt(1-z)·sqrt(1+z)
# with the signs of zero cmath gives them, not sqrt(1-z²)): the same off the branch cuts,
# and on a cut (cmath.asin(2.0)) the derivative of the side cmath picks.
_holomorphic(cmath.asin, "z", "_rt.asin_partial(z)")
_holomorphic(cmath.acos, "z", "-_rt.asin_partial(z)")
_holomorphic(cmath.atan, "z", "1 / (1 + z * z)")
_holomorphic(cmath.sinh, "z", "cmath.cosh(z)")
_holomorphic(cmath.cosh, "z", "cmath.sinh(z)")
_holomorphic(cmath.tanh, "z", "1 - ans * ans")
_holomorphic(cmath.asinh, "z", "_rt.asinh_partial(z)")
_holomorphic(cmath.acosh, "z", "_rt.acosh_partial(z)")
_holomorphic(cmath.atanh, "z", "1 / (1 - z * z)")
# rect(r, phi) = r·e^(i·phi), from real arguments to a complex result
_holomorphic(cmath.rect, "r, phi", "cmath.rect(1.0, phi)", "1j * ans", complex_args=False)

# ----- cmath: real results of a complex argument (not holomorphic: explicit adjoints) ------
# phase(z) = atan2(im z, re z): z̄ = i·z/|z|²·real(ȳ); for a real argument it is
# piecewise constant (0 or π), so no gradient.
primitive(
    cmath.phase,
    "z",
    kind="abs",
    adjoints={"z": {"complex": "_rt.angle_adjoint(g, z)", "array": "_rt.angle_adjoint(g, z)"}},
)
# polar(z) = (abs(z), phase(z))
primitive(cmath.polar, "z", adjoints={"z": "_rt.polar_adjoint(g, z)"}, kind="other")
nondifferentiable_builtin(cmath.isnan, cmath.isinf, cmath.isfinite, cmath.isclose)
