"""Adjoints and partials of scalar functions that need more than one expression (pow,
sqrt, atan2, frexp, modf, divmod, the modulus, angle and polar form of complex numbers):
what the templates of rules/math.py and rules/builtins.py call as ``_rt.<name>``.

Every name in ``__all__`` is listed in the run time's namespace (runtime/__init__.py);
the private helpers stay here. Each helper takes the incoming adjoint ``g`` as generated code has it: a number,
an array, a tuple of adjoints, ``None``, a zero tangent or a thunk.
"""
import cmath
import math

import numpy as np

from ..runtime.project import unbroadcast
from ..tangents import part_value as _part
from ..tangents import value_or_none as _seed
from .numpy.elementwise import np_power_exponent_partial

__all__ = [
    "recip",
    "sqrt_partial",
    "sqrt_adjoint",
    "pow_base_partial",
    "pow_scaled",
    "pow_base_partial_exp",
    "pow_exp_partial",
    "pow_base_adjoint",
    "pow_exp_adjoint",
    "atan2_partial_y",
    "atan2_partial_x",
    "norm_partial",
    "frexp_adjoint",
    "modf_adjoint",
    "asin_partial",
    "asinh_partial",
    "acosh_partial",
    "modulus_adjoint",
    "angle_adjoint",
    "polar_adjoint",
    "complex_im_adjoint",
    "divmod_adjoint_a",
    "divmod_adjoint_b",
]


def _real(g):
    """The real part of an adjoint (arrays stay arrays)."""
    if isinstance(g, np.ndarray):
        return g.real if np.iscomplexobj(g) else g
    if isinstance(g, (complex, np.complexfloating)):
        return float(g.real)
    return g


# The helpers are differentiated themselves when a gradient is differentiated (their
# scalar branches are in the subset the transformer reads); array code that needs a
# `with` block lives in private functions that those branches never reach.


def _quiet(fn, *args):
    """fn(*args) with NumPy's division warnings silenced (infinities are intended)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return fn(*args)


def recip(x):
    """1 / x, with IEEE semantics at zero (an infinite derivative, not an exception)."""
    if isinstance(x, np.ndarray):
        return _quiet(np.reciprocal, x.astype(np.result_type(x.dtype, float)))
    if x == 0:
        return math.inf
    return 1 / x


def sqrt_partial(ans):
    """d sqrt(x)/dx = 1 / (2 sqrt(x)); infinite at 0 (real and complex sqrt)."""
    if ans == 0:
        return math.inf
    return 0.5 / ans


def sqrt_adjoint(g, ans):
    """The adjoint g/(2 sqrt(x)) of a real sqrt: infinite at 0, but 0 for a zero g."""
    if ans == 0:
        return 0.0 * g if g == 0 else g * math.inf
    return g * (0.5 / ans)


def pow_base_partial(a, b):
    """∂(a**b)/∂a = b·a**(b-1), with its limits where the formula divides by zero.

    b == 0: the result is the constant 1, so 0 (also at a == 0). a == 0: 1 for b == 1,
    0 for b > 1, infinite for 0 < b < 1 (the forward pass fails for b < 0).
    """
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return _quiet(_pow_base_partial_array, a, b)
    if b == 0:
        return 0.0
    if a == 0 and not isinstance(b, complex):
        if b == 1:
            return 1.0
        return 0.0 if b > 1 else math.inf
    return b * a ** (b - 1)


def pow_scaled(a, p, c, n=0):
    """c·a**p·log(a)**n, with 0 where c == 0 (also where a**p is infinite or a is 0).

    The derivatives of powers are all of this form: ∂(a**b)/∂a = pow_scaled(a, b - 1, b),
    ∂²/∂a² = pow_scaled(a, b - 2, b·(b - 1)), ∂/∂b brings a log(a), so a zero coefficient
    (x**0, the second derivative of x**1) gives 0 at a == 0 to every order, where
    b·a**(b-1) gives 0·inf. At a == 0 with c != 0 and a real p < 0 the result is
    infinite (the derivative of a fractional power at 0), not a ZeroDivisionError; with a
    log (n > 0) it is 0 at a == 0, as ∂(a**b)/∂b is. The log is log|a| for a real a, but
    for a negative a with a fractional p, where a**p is complex.
    """
    if isinstance(a, np.ndarray) or isinstance(p, np.ndarray) or isinstance(c, np.ndarray):
        return _quiet(_pow_scaled_array, a, p, c, n)
    if c == 0:
        return 0.0 * c
    if a == 0:
        if n or isinstance(p, complex) or p > 0:
            return 0.0 * c
        if p < 0:
            return math.copysign(math.inf, c.real if isinstance(c, complex) else c)
        return c * 1.0
    if n == 0:
        return c * a ** p
    if isinstance(a, complex) or isinstance(p, complex) or isinstance(c, complex) or a < 0 and not float(p).is_integer():
        return c * complex(a) ** p * cmath.log(a) ** n
    return c * a ** p * math.log(abs(a)) ** n


def _pow_scaled_array(a, p, c, n):
    a_, p_, c_ = np.asarray(a), np.asarray(p), np.asarray(c)
    if not np.issubdtype(a_.dtype, np.inexact):
        a_ = a_.astype(float)
    if n == 0:
        return np.where(c_ == 0, 0, c_ * np.power(a_, p_))
    safe = np.where(a_ == 0, 1, a_)
    if np.iscomplexobj(a_) or np.iscomplexobj(p_):
        log = np.log(safe.astype(complex))
    else:
        log = np.log(np.abs(safe))
    return np.where((c_ == 0) | (a_ == 0), 0, c_ * np.power(safe, p_) * log ** n)


def pow_base_partial_exp(a, b):
    """∂ pow_base_partial(a, b)/∂b = a**(b-1)·(1 + b·log a); 0 at a == 0 (as pow_exp_partial)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a_ = np.asarray(a)
        safe = np.where(a_ == 0, 1, a_)
        out = pow_scaled(safe, b - 1, 1) + pow_scaled(safe, b - 1, b, 1)
        return np.where(a_ == 0, 0, out)
    if a == 0:
        return 0.0
    return pow_scaled(a, b - 1, 1) + pow_scaled(a, b - 1, b, 1)


def _pow_base_partial_array(a, b):
    a_, b_ = np.asarray(a), np.asarray(b)
    if np.issubdtype(a_.dtype, np.integer):
        a_ = a_.astype(float)
    out = b_ * np.power(a_, b_ - 1)
    return np.where(b_ == 0, 0, out)


def pow_exp_partial(a, ans):
    """∂(a**b)/∂b = a**b·log(a) (log|a| for a real negative a), 0 at a == 0."""
    if isinstance(a, np.ndarray) or isinstance(ans, np.ndarray):
        return np_power_exponent_partial(a, ans)
    if a == 0:
        return 0.0
    if isinstance(a, complex) or isinstance(ans, complex):
        return ans * cmath.log(a)
    return ans * math.log(abs(a))


def pow_base_adjoint(g, a, b, ans):
    """The adjoint of the real base of pow(a, b), whose result may be complex."""
    g = _seed(g)
    if g is None:
        return None
    return _real_times(g, pow_base_partial(a, b))


def pow_exp_adjoint(g, a, ans):
    """The adjoint of the real exponent of pow(a, b), whose result may be complex."""
    g = _seed(g)
    if g is None:
        return None
    return _real_times(g, pow_exp_partial(a, ans))


def _real_times(g, d):
    """The adjoint g·d of a real argument whose partial d (or g) may be complex."""
    if isinstance(d, complex) or isinstance(g, complex):
        return _re_mul_conj(g, d)
    return g * d


def _re_mul_conj(g, d):
    """real(g·conj(d)), written with the parts (a second differentiation reads it)."""
    gc, dc = complex(g), complex(d)
    return gc.real * dc.real + gc.imag * dc.imag


def atan2_partial_y(y, x):
    """∂atan2(y, x)/∂y = x / (x² + y²); 0 at the origin (a subgradient)."""
    r = math.hypot(x, y)
    if r == 0:
        return 0.0
    return (x / r) / r


def atan2_partial_x(y, x):
    """∂atan2(y, x)/∂x = -y / (x² + y²); 0 at the origin (a subgradient)."""
    r = math.hypot(x, y)
    if r == 0:
        return 0.0
    return (-y / r) / r


def norm_partial(x, ans):
    """∂|v|/∂v_i = v_i / |v|, with 0 where |v| == 0 (a subgradient, like abs at 0)."""
    if ans == 0:
        return 0.0
    return x / ans


def asin_partial(z):
    """asin'(z) = 1 / (sqrt(1 - z)·sqrt(1 + z)), the square roots signed as cmath signs
    them (1 - z has imaginary part -im z, also -0.0), so that on a branch cut the
    derivative is that of the side cmath.asin returns."""
    z = complex(z)
    s1 = cmath.sqrt(complex(1.0 - z.real, -z.imag))
    s2 = cmath.sqrt(complex(1.0 + z.real, z.imag))
    return recip(s1 * s2)


def asinh_partial(z):
    """asinh'(z) = 1 / sqrt(1 + z²) = 1 / (sqrt(1 - i·z)·sqrt(1 + i·z)), signed as cmath."""
    z = complex(z)
    s1 = cmath.sqrt(complex(1.0 + z.imag, -z.real))
    s2 = cmath.sqrt(complex(1.0 - z.imag, z.real))
    return recip(s1 * s2)


def acosh_partial(z):
    """acosh'(z) = 1 / (sqrt(z - 1)·sqrt(z + 1)), signed as cmath."""
    z = complex(z)
    s1 = cmath.sqrt(complex(z.real - 1.0, z.imag))
    s2 = cmath.sqrt(complex(z.real + 1.0, z.imag))
    return recip(s1 * s2)


def frexp_adjoint(g, ans):
    """x = m·2**e: m̄ flows back as m̄·2**-e; the exponent has no gradient."""
    gm = _part(g, 0)
    if gm is None:
        return None
    return math.ldexp(_real(gm), -ans[1])


def modf_adjoint(g):
    """modf(x) = (x - trunc(x), trunc(x)): the fractional part passes its adjoint."""
    gf = _part(g, 0)
    return None if gf is None else _real(gf)


def modulus_adjoint(g, x, ans):
    """The adjoint of abs(x): real(ȳ)·z/|z| for complex z, ȳ·sign(x) for real x; 0 at 0."""
    g = _seed(g)
    if g is None:
        return None
    if isinstance(x, np.ndarray):
        return _quiet(_modulus_adjoint_array, g, x, ans)
    if ans == 0:
        return 0j if isinstance(x, complex) else 0.0
    if isinstance(x, complex):
        return _real(g) * x / ans
    return g * (1.0 if x > 0 else -1.0)


def _modulus_adjoint_array(g, x, ans):
    if np.iscomplexobj(x):
        return np.where(ans == 0, 0, np.real(g) * x / np.where(ans == 0, 1, ans))
    return g * np.sign(x)


def angle_adjoint(g, z):
    """The adjoint of phase(z) = atan2(im z, re z) from a real seed: i·z/|z|²·real(g)."""
    g = _seed(g)
    if g is None:
        return None
    g = _real(g)
    if isinstance(z, np.ndarray):
        r2 = np.abs(z) ** 2
        return np.where(r2 == 0, 0, g * 1j * z / np.where(r2 == 0, 1, r2))
    r2 = abs(z) ** 2
    if r2 == 0:
        return 0j
    return g * 1j * z / r2


def polar_adjoint(g, z):
    """polar(z) = (|z|, phase z): z̄ = real(r̄)·z/|z| + real(θ̄)·i·z/|z|²."""
    gr, gt = _part(g, 0), _part(g, 1)
    if gr is None and gt is None:
        return None
    r = abs(z)
    if r == 0:
        return 0j
    out = 0j
    if gr is not None:
        out += _real(gr) * z / r
    if gt is not None:
        out += _real(gt) * 1j * z / (r * r)
    return out


def complex_im_adjoint(g, im):
    """complex(re, im) = re + i·im: īm = imag(g) for a real im, conj(i)·g for a complex one."""
    g = _seed(g)
    if g is None:
        return None
    if isinstance(g, np.ndarray) and g.ndim == 0:
        g = g[()]  # (a NumPy rule's adjoint of a complex scalar: a 0-d array, not 0.0 here)
    if isinstance(im, (complex, np.complexfloating)):
        return -1j * g
    return float(g.imag) if isinstance(g, (complex, np.complexfloating)) else 0.0


def _unbroadcast_like(g, like):
    if isinstance(like, np.ndarray) or isinstance(g, np.ndarray):
        return unbroadcast(g, like)
    return g


def divmod_adjoint_a(g, a, b, ans):
    """divmod(a, b) = (q, a - q·b) with q = a // b piecewise constant: ā = r̄."""
    gr = _part(g, 1)
    if gr is None:
        return None
    return _unbroadcast_like(gr, a)


def divmod_adjoint_b(g, a, b, ans):
    """divmod(a, b) = (q, a - q·b): b̄ = -q·r̄."""
    gr = _part(g, 1)
    if gr is None:
        return None
    return _unbroadcast_like(-ans[0] * gr, b)
