"""The rules of ``math`` and ``cmath``, one row per rule, against finite differences.

Each row names the rule (function and number of arguments, or "special" for a run-time
rule), a function defined here that calls it (so the transformer inlines the template),
and the argument specs to draw random points from, inside the domain. Every row is
checked twice at each point, with a random cotangent ``w`` of the result's shape
(complex for complex results), against the finite-difference gradient of
``Re(conj(w)·y)``:

* inline: ``adjoint_s2s.pullback`` of the row's function (the generated code);
* dispatch: ``runtime.call`` of the rule's function itself (the run-time pair).

The helpers here (``Row``, the specs, ``check_row``) are shared with test_builtins.py.
"""
import cmath
import collections.abc
import math
import zlib

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import rules as R
from adjoint_s2s import runtime as rt
from adjoint_s2s.testing import isapprox, numerical_gradient

# ----- argument specs ------------------------------------------------------------------------


class U:
    """A uniform real in [lo, hi], at least `gap` away from each point of `away`."""

    def __init__(self, lo, hi, away=(), gap=0.1):
        self.lo, self.hi, self.away, self.gap = lo, hi, tuple(away), gap

    def draw(self, rng):
        while True:
            x = float(rng.uniform(self.lo, self.hi))
            if all(abs(x - a) >= self.gap for a in self.away):
                return x


class C:
    """A complex number in a box, with |re| >= min_re and |im| >= min_im (off branch cuts)."""

    def __init__(self, re=(-2, 2), im=(-2, 2), min_re=0.0, min_im=0.0):
        self.re, self.im, self.min_re, self.min_im = re, im, min_re, min_im

    def draw(self, rng):
        while True:
            z = complex(rng.uniform(*self.re), rng.uniform(*self.im))
            if abs(z.real) >= self.min_re and abs(z.imag) >= self.min_im:
                return z


class Seq:
    """A list (or tuple, array, dict with keys k0, k1, ...) of n items drawn from spec."""

    def __init__(self, n, spec, kind=list):
        self.n, self.spec, self.kind = n, spec, kind

    def draw(self, rng):
        items = [draw(self.spec, rng) for _ in range(self.n)]
        if self.kind is np.ndarray:
            return np.array(items)
        if self.kind is dict:
            return {f"k{i}": v for i, v in enumerate(items)}
        return self.kind(items)


class Arr:
    """A float (or complex) array of the given shape, entries uniform in [lo, hi]."""

    def __init__(self, shape, lo=-2.0, hi=2.0, complex_=False):
        self.shape, self.lo, self.hi, self.complex_ = shape, lo, hi, complex_

    def draw(self, rng):
        a = rng.uniform(self.lo, self.hi, self.shape)
        if self.complex_:
            a = a + 1j * rng.uniform(self.lo, self.hi, self.shape)
        return a


def draw(spec, rng):
    return spec.draw(rng) if hasattr(spec, "draw") else spec


# ----- rows ------------------------------------------------------------------------------------


class Row:
    """One rule under test.

    fn: the function the rule is registered for; f: a function of this file calling it
    with the same arguments; sets: a tuple of argument specs, or a list of such tuples
    (the points cycle through them); rule: "special" for a run-time rule, else the
    number of arguments of the primitive variant (by default, of the argument tuple).
    """

    def __init__(self, id, fn, f, sets, rule=None, n=6, rtol=1e-6, atol=1e-8,
                 dispatch=True, marks=(), second=True, second_marks=()):
        self.id, self.fn, self.f = id, fn, f
        self.sets = sets if isinstance(sets, list) else [sets]
        self.rule = (fn, rule if rule is not None else len(self.sets[0]))
        self.n, self.rtol, self.atol = n, rtol, atol
        self.dispatch = dispatch
        self.marks = tuple(marks) if isinstance(marks, (list, tuple)) else (marks,)
        self.second = second  # checked differentiated twice (the rule read by the transformer)
        self.second_marks = (
            tuple(second_marks) if isinstance(second_marks, (list, tuple)) else (second_marks,)
        )

    def points(self):
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        return [tuple(draw(s, rng) for s in self.sets[k % len(self.sets)]) for k in range(self.n)]

    def param(self):
        return pytest.param(self, id=self.id, marks=self.marks)

    def second_param(self):
        return pytest.param(self, id=self.id, marks=self.marks + self.second_marks)


def materialise(y):
    """Lazy results (iterators) as the list of what they hand out."""
    if isinstance(y, collections.abc.Iterator):
        return list(y)
    return y


def cotangent(y, rng):
    """A random cotangent shaped like y (None for integers and other constants)."""
    if isinstance(y, (bool, int, str)) or y is None:
        return None
    if isinstance(y, (float, np.floating)):
        return float(rng.normal())
    if isinstance(y, (complex, np.complexfloating)):
        return complex(rng.normal(), rng.normal())
    if isinstance(y, np.ndarray):
        w = rng.normal(size=y.shape)
        return w + 1j * rng.normal(size=y.shape) if np.iscomplexobj(y) else w
    if isinstance(y, (list, tuple)):
        return type(y)(cotangent(v, rng) for v in y)
    if isinstance(y, dict):
        return {k: cotangent(v, rng) for k, v in y.items()}
    raise TypeError(f"no cotangent for {type(y).__name__}")


def loss(y, w):
    """Re⟨w, y⟩ = Σ Re(conj(w)·y), the scalar whose gradient is the pullback of w."""
    if w is None:
        return 0.0
    if isinstance(y, (list, tuple)):
        return sum(loss(a, b) for a, b in zip(y, w))
    if isinstance(y, dict):
        return sum(loss(y[k], w[k]) for k in y)
    return float(np.real(np.sum(np.conj(w) * y)))


def _varies(a):
    """Whether finite differences should perturb the argument a (integers stay fixed)."""
    if isinstance(a, (bool, int, str)) or a is None or callable(a):
        return False
    return True


FIXED = object()  # an argument finite differences do not perturb: not compared


def numeric(f, args, w):
    """The finite-difference gradient of Re⟨w, f(*args)⟩ (FIXED for fixed arguments)."""
    idx = [i for i, a in enumerate(args) if _varies(a)]

    def scalar(*sub):
        full = list(args)
        for i, v in zip(idx, sub):
            full[i] = v
        return loss(materialise(f(*full)), w)

    sub = numerical_gradient(scalar, *[args[i] for i in idx])
    out = [FIXED] * len(args)
    for i, g in zip(idx, sub):
        out[i] = g
    return out


def close(a, b, rtol, atol):
    """isapprox, with structures walked here so that None (a structural zero) matches
    a list, tuple or dict of near-zeros entry by entry."""
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        n = max(len(a) if a is not None else 0, len(b) if b is not None else 0)
        pad = lambda s: [None] * n if s is None else list(s) + [None] * (n - len(s))  # noqa: E731
        return all(close(x, y, rtol, atol) for x, y in zip(pad(a), pad(b)))
    if isinstance(a, dict) or isinstance(b, dict):
        a, b = a or {}, b or {}
        return all(close(a.get(k), b.get(k), rtol, atol) for k in set(a) | set(b))
    return isapprox(a, b, rtol=rtol, atol=atol)


def _compare(row, got, want, pt, path):
    bad = [
        f"  argument {i}: {path} gave {g!r}, finite differences {w_!r}"
        for i, (g, w_) in enumerate(zip(got, want))
        if w_ is not FIXED
        and not close(g, w_, row.rtol, row.atol)
    ]
    assert not bad, f"{row.id} at {pt!r}:\n" + "\n".join(bad)


def check_inline(row):
    rng = np.random.default_rng(1)
    for pt in row.points():
        y, back = ad.pullback(row.f, *pt)
        w = cotangent(materialise(y), rng)
        got = back(w)
        assert len(got) == len(pt)
        _compare(row, got, numeric(row.f, pt, w), pt, "the generated pullback")


def check_dispatch(row):
    rng = np.random.default_rng(2)
    for pt in row.points():
        y, pb = rt.call(row.fn, *pt)
        w = cotangent(materialise(y), rng)
        grads = pb(w)
        assert len(grads) == 1 + len(pt), f"{row.id}: expected (df, *dargs), got {grads!r}"
        got = [ad.project(g, a) for g, a in zip(grads[1:], pt)]
        _compare(row, got, numeric(row.fn, pt, w), pt, "runtime.call")


def dot(gs, vs):
    """Σ Re(g·v) over gradients (numbers, lists of numbers); differentiated itself."""
    t = 0.0
    for g, v in zip(gs, vs):
        if g is not None:
            if isinstance(v, dict):
                t = t + dot([g.get(k) for k in v], [v[k] for k in v])
            elif isinstance(g, (list, tuple)):
                t = t + dot(g, v)
            elif isinstance(v, complex):
                t = t + (g * v).real
            else:
                t = t + g * v
    return t


def vjp_dot(f, w, v):
    """args -> Re⟨v, pullback of f at args applied to w⟩: a gradient, differentiated again."""
    def h(*args):
        y, back = ad.pullback(f, *args)
        return dot(back(w), v)

    return h


def _plain(a):
    """Numbers, and lists, tuples or dicts of numbers (what dot() handles)."""
    if isinstance(a, (list, tuple)):
        return all(isinstance(x, (float, complex)) for x in a)
    if isinstance(a, dict):
        return all(isinstance(x, (float, complex)) for x in a.values())
    return a is None or isinstance(a, (float, complex, int)) or callable(a)


def _direction(a, rng):
    if isinstance(a, complex):
        return complex(rng.normal(), rng.normal())
    if isinstance(a, (list, tuple)):
        return type(a)(_direction(x, rng) for x in a)
    if isinstance(a, dict):
        return {k: _direction(x, rng) for k, x in a.items()}
    return float(rng.normal())


def check_second_order(row, require_points=True):
    """Reverse over reverse: the gradient of Re⟨v, vjp(w)⟩ against finite differences of
    the first-order gradient, at the row's points with plain arguments (for a rule that
    is linear, like sum, only its calls inside something nonlinear test anything)."""
    rng = np.random.default_rng(3)
    pts = [pt for pt in row.points() if all(_plain(a) for a in pt)]
    assert pts or not require_points, f"{row.id}: no point with plain arguments"
    for pt in pts:
        w = cotangent(materialise(row.f(*pt)), rng)
        v = [_direction(a, rng) for a in pt]
        h = vjp_dot(row.f, w, v)
        got = ad.gradient(h, *pt)
        want = numeric(lambda *a: dot(ad.pullback(row.f, *a)[1](w), v), pt, 1.0)
        row2 = Row(row.id, row.fn, row.f, row.sets, rtol=1e-5, atol=1e-6)
        _compare(row2, got, want, pt, "the gradient of the generated pullback")


def check_coverage(rows, modules):
    """Every primitive variant and run-time rule of these modules has a row."""
    have = {row.rule for row in rows}
    missing = []
    for fn, variants in R.PRIMITIVES.items():
        if getattr(fn, "__module__", None) in modules:
            for arity in variants:
                if (fn, arity) not in have:
                    missing.append(f"{fn.__qualname__} with {arity} arguments")
    for fn in R.SPECIAL:
        if getattr(fn, "__module__", None) in modules and (fn, "special") not in have:
            missing.append(f"{fn.__qualname__} (run-time rule)")
    assert not missing, "rules without a test row: " + ", ".join(missing)


# ----- the functions under test (each calls its rule, so the template is inlined) ----------

def f_sin(x): return math.sin(x)
def f_cos(x): return math.cos(x)
def f_tan(x): return math.tan(x)
def f_asin(x): return math.asin(x)
def f_acos(x): return math.acos(x)
def f_atan(x): return math.atan(x)
def f_sinh(x): return math.sinh(x)
def f_cosh(x): return math.cosh(x)
def f_tanh(x): return math.tanh(x)
def f_asinh(x): return math.asinh(x)
def f_acosh(x): return math.acosh(x)
def f_atanh(x): return math.atanh(x)
def f_exp(x): return math.exp(x)
def f_expm1(x): return math.expm1(x)
def f_exp2(x): return math.exp2(x)
def f_log(x): return math.log(x)
def f_log_base(x, b): return math.log(x, b)
def f_log2(x): return math.log2(x)
def f_log10(x): return math.log10(x)
def f_log1p(x): return math.log1p(x)
def f_sqrt(x): return math.sqrt(x)
def f_cbrt(x): return math.cbrt(x)
def f_fabs(x): return math.fabs(x)
def f_erf(x): return math.erf(x)
def f_erfc(x): return math.erfc(x)
def f_gamma(x): return math.gamma(x)
def f_lgamma(x): return math.lgamma(x)
def f_degrees(x): return math.degrees(x)
def f_radians(x): return math.radians(x)
def f_pow(x, y): return math.pow(x, y)
def f_atan2(y, x): return math.atan2(y, x)
def f_hypot1(x): return math.hypot(x)
def f_hypot2(x, y): return math.hypot(x, y)
def f_hypot3(x, y, z): return math.hypot(x, y, z)
def f_hypot5(a, b, c, d, e): return math.hypot(a, b, c, d, e)
def f_copysign(x, y): return math.copysign(x, y)
def f_fmod(x, y): return math.fmod(x, y)
def f_remainder(x, y): return math.remainder(x, y)
def f_ldexp(x, i): return math.ldexp(x, i)
def f_nextafter(x, y): return math.nextafter(x, y)
def f_fma(x, y, z): return math.fma(x, y, z)
def f_frexp(x): return math.frexp(x)
def f_modf(x): return math.modf(x)
def f_prod(xs): return math.prod(xs)
def f_fsum(xs): return math.fsum(xs)
def f_dist(p, q): return math.dist(p, q)
def f_sumprod(p, q): return math.sumprod(p, q)

def c_exp(z): return cmath.exp(z)
def c_log(z): return cmath.log(z)
def c_log_base(z, b): return cmath.log(z, b)
def c_log10(z): return cmath.log10(z)
def c_sqrt(z): return cmath.sqrt(z)
def c_sin(z): return cmath.sin(z)
def c_cos(z): return cmath.cos(z)
def c_tan(z): return cmath.tan(z)
def c_asin(z): return cmath.asin(z)
def c_acos(z): return cmath.acos(z)
def c_atan(z): return cmath.atan(z)
def c_sinh(z): return cmath.sinh(z)
def c_cosh(z): return cmath.cosh(z)
def c_tanh(z): return cmath.tanh(z)
def c_asinh(z): return cmath.asinh(z)
def c_acosh(z): return cmath.acosh(z)
def c_atanh(z): return cmath.atanh(z)
def c_rect(r, phi): return cmath.rect(r, phi)
def c_phase(z): return cmath.phase(z)
def c_polar(z): return cmath.polar(z)


# ----- the table -------------------------------------------------------------------------------

R1 = (U(-3, 3),)
POS = (U(0.2, 5),)
NZ = (U(-3, 3, away=(0,)),)  # real, away from 0
# complex points off the real axis (cuts of sqrt, log, asin, acos, acosh, atanh) and off
# the imaginary axis (cuts of atan, asinh); plus real points, where finite differences
# move along the real axis only, so even points on a cut (cmath.sqrt(-2.0)) are smooth
OFF_RE = (C(min_im=0.2),)
OFF_IM = (C(min_re=0.2),)


def _needs(name):
    return pytest.mark.skipif(not hasattr(math, name), reason=f"math.{name} is newer than this Python")


MATH_ROWS = [
    Row("math.sin", math.sin, f_sin, R1),
    Row("math.cos", math.cos, f_cos, R1),
    Row("math.tan", math.tan, f_tan, (U(-1.3, 1.3),)),
    Row("math.asin", math.asin, f_asin, (U(-0.95, 0.95),)),
    Row("math.acos", math.acos, f_acos, (U(-0.95, 0.95),)),
    Row("math.atan", math.atan, f_atan, (U(-5, 5),)),
    Row("math.sinh", math.sinh, f_sinh, R1),
    Row("math.cosh", math.cosh, f_cosh, R1),
    Row("math.tanh", math.tanh, f_tanh, R1),
    Row("math.asinh", math.asinh, f_asinh, (U(-10, 10),)),
    Row("math.acosh", math.acosh, f_acosh, (U(1.1, 10),)),
    Row("math.atanh", math.atanh, f_atanh, (U(-0.9, 0.9),)),
    Row("math.exp", math.exp, f_exp, R1),
    Row("math.expm1", math.expm1, f_expm1, R1),
    Row("math.exp2", getattr(math, "exp2", None), f_exp2, R1, marks=_needs("exp2")),
    Row("math.log", math.log, f_log, POS),
    Row("math.log/base", math.log, f_log_base, [(U(0.2, 5), U(1.5, 10)), (U(0.2, 5), U(0.1, 0.8))]),
    Row("math.log2", math.log2, f_log2, POS),
    Row("math.log10", math.log10, f_log10, POS),
    Row("math.log1p", math.log1p, f_log1p, (U(-0.8, 3),)),
    Row("math.sqrt", math.sqrt, f_sqrt, (U(0.05, 5),)),
    Row("math.cbrt", getattr(math, "cbrt", None), f_cbrt, NZ, marks=_needs("cbrt")),
    Row("math.fabs", math.fabs, f_fabs, NZ),
    Row("math.erf", math.erf, f_erf, R1),
    Row("math.erfc", math.erfc, f_erfc, R1),
    Row("math.gamma", math.gamma, f_gamma, [(U(0.2, 5),), (U(-2.9, -2.1),), (U(-0.9, -0.1),)]),
    Row("math.lgamma", math.lgamma, f_lgamma, [(U(0.2, 20),), (U(-3.9, -3.1),), (U(-0.9, -0.1),)]),
    Row("math.degrees", math.degrees, f_degrees, R1),
    Row("math.radians", math.radians, f_radians, (U(-300, 300),)),
    # negative bases with integer exponents too (real results)
    Row("math.pow", math.pow, f_pow, [(U(0.2, 3), U(-2, 3)), (U(-3, -0.2), 3), (U(-3, -0.2), -2)]),
    Row("math.atan2", math.atan2, f_atan2, [(U(-2, 2, away=(0,)), U(-2, 2)), (U(-2, 2), U(0.2, 2))]),
    Row("math.hypot/1", math.hypot, f_hypot1, NZ),
    Row("math.hypot/2", math.hypot, f_hypot2, (U(-3, 3), U(-3, 3, away=(0,)))),
    Row("math.hypot/3", math.hypot, f_hypot3, (U(-3, 3), U(-3, 3), U(-3, 3, away=(0,)))),
    Row("math.hypot/n", math.hypot, f_hypot5, (U(-3, 3),) * 4 + (U(-3, 3, away=(0,)),),
        rule="special"),
    Row("math.copysign", math.copysign, f_copysign, (U(-3, 3, away=(0,)), U(-3, 3, away=(0,)))),
    Row("math.fmod", math.fmod, f_fmod, [(U(-10, 10), U(0.5, 3)), (U(-10, 10), U(-3, -0.5))]),
    Row("math.remainder", math.remainder, f_remainder, [(U(-10, 10), U(0.5, 3)), (U(-10, 10), U(-3, -0.5))]),
    Row("math.ldexp", math.ldexp, f_ldexp, [(R1[0], 3), (R1[0], -2)]),
    Row("math.nextafter", math.nextafter, f_nextafter, (U(-3, 3), U(-3, 3))),
    Row("math.fma", getattr(math, "fma", None), f_fma, (U(-3, 3),) * 3, marks=_needs("fma")),
    Row("math.frexp", math.frexp, f_frexp, (U(-100, 100, away=(0,)),)),
    Row("math.modf", math.modf, f_modf, (U(-10, 10),)),
    # run-time rules: lists, tuples, arrays; zeros inside products
    Row("math.prod", math.prod, f_prod,
        [(Seq(4, U(-2, 2)),), (Seq(3, U(-2, 2), tuple),), (Seq(3, U(-2, 2), np.ndarray),),
         ([0.0, 1.5, -2.0],), ([0.0, 0.0, 3.0],)], rule="special", n=5),
    Row("math.fsum", math.fsum, f_fsum,
        [(Seq(5, U(-2, 2)),), (Seq(3, U(-2, 2), tuple),), (Seq(3, U(-2, 2), np.ndarray),)],
        rule="special"),
    Row("math.dist", math.dist, f_dist,
        [(Seq(3, U(-2, 2)), Seq(3, U(-2, 2))), (Seq(2, U(-2, 2), tuple), Seq(2, U(-2, 2), tuple)),
         (Seq(3, U(-2, 2), np.ndarray), Seq(3, U(-2, 2), np.ndarray))], rule="special"),
    Row("math.sumprod", getattr(math, "sumprod", None), f_sumprod,
        (Seq(3, U(-2, 2)), Seq(3, U(-2, 2), tuple)), rule="special", marks=_needs("sumprod")),
]

CMATH_ROWS = [
    Row("cmath.exp", cmath.exp, c_exp, [(C(),), R1]),
    Row("cmath.log", cmath.log, c_log, [OFF_RE, (U(-3, 3, away=(0,)),)]),
    Row("cmath.log/base", cmath.log, c_log_base,
        [(OFF_RE[0], U(1.5, 5)), (OFF_RE[0], C(min_im=0.2)), (U(-3, 3, away=(0,)), U(1.5, 5))]),
    Row("cmath.log10", cmath.log10, c_log10, [OFF_RE, (U(0.2, 3),)]),
    Row("cmath.sqrt", cmath.sqrt, c_sqrt, [OFF_RE, (U(-3, 3, away=(0,)),)]),
    Row("cmath.sin", cmath.sin, c_sin, [(C(),), R1]),
    Row("cmath.cos", cmath.cos, c_cos, [(C(),), R1]),
    Row("cmath.tan", cmath.tan, c_tan, [(C(re=(-1.2, 1.2)),), (U(-1.2, 1.2),)]),
    Row("cmath.asin", cmath.asin, c_asin, [OFF_RE, (U(-0.9, 0.9),), (U(1.2, 3),), (U(-3, -1.2),)]),
    Row("cmath.acos", cmath.acos, c_acos, [OFF_RE, (U(-0.9, 0.9),), (U(-3, -1.2),)]),
    Row("cmath.atan", cmath.atan, c_atan, [OFF_IM, R1]),
    Row("cmath.sinh", cmath.sinh, c_sinh, [(C(),), R1]),
    Row("cmath.cosh", cmath.cosh, c_cosh, [(C(),), R1]),
    Row("cmath.tanh", cmath.tanh, c_tanh, [(C(im=(-1.2, 1.2)),), R1]),
    Row("cmath.asinh", cmath.asinh, c_asinh, [OFF_IM, R1]),
    Row("cmath.acosh", cmath.acosh, c_acosh, [OFF_RE, (U(1.2, 3),), (U(-0.9, 0.9),), (U(-3, -1.2),)]),
    Row("cmath.atanh", cmath.atanh, c_atanh, [OFF_RE, (U(-0.9, 0.9),), (U(1.2, 3),), (U(-3, -1.2),)]),
    Row("cmath.rect", cmath.rect, c_rect, (U(0.1, 3), U(-3, 3))),
    Row("cmath.phase", cmath.phase, c_phase, [OFF_RE, OFF_IM, (U(0.2, 3),)]),
    Row("cmath.polar", cmath.polar, c_polar, [OFF_RE, OFF_IM, (U(-3, 3, away=(0,)),)]),
]

ROWS = MATH_ROWS + CMATH_ROWS


@pytest.mark.parametrize("row", [r.param() for r in ROWS])
def test_inline(row):
    check_inline(row)


@pytest.mark.parametrize("row", [r.param() for r in ROWS if r.dispatch])
def test_dispatch(row):
    check_dispatch(row)


@pytest.mark.parametrize("row", [r.second_param() for r in ROWS if r.second])
def test_second_order(row):
    check_second_order(row)


def test_every_math_and_cmath_rule_has_a_row():
    check_coverage(ROWS, ("math", "cmath"))


# ----- rules without a gradient ----------------------------------------------------------------


def nd_floor(x): return math.floor(x) * x
def nd_ceil(x): return math.ceil(x) * x
def nd_trunc(x): return math.trunc(x) * x
def nd_ulp(x): return math.ulp(x) * 1e15 + x
def nd_isclose(x): return x * 2.0 if math.isclose(x, 1.0) else x * 3.0


@pytest.mark.parametrize(
    "f, x, want",
    [
        pytest.param(nd_floor, 2.7, 2.0, id="math.floor"),
        pytest.param(nd_ceil, 2.3, 3.0, id="math.ceil"),
        pytest.param(nd_trunc, -2.7, -2.0, id="math.trunc"),
        pytest.param(nd_ulp, 1.5, 1.0, id="math.ulp"),
        pytest.param(nd_isclose, 2.5, 3.0, id="math.isclose"),
    ],
)
def test_no_gradient(f, x, want):
    assert ad.gradient(f, x) == (want,)


# ----- special values: the derivative where the formula would divide by zero --------------


def z_sqrt(x): return math.sqrt(x)
def z_hypot(x, y): return math.hypot(x, y)
def z_atan2(y, x): return math.atan2(y, x)
def z_pow(x, y): return math.pow(x, y)
def z_fabs(x): return math.fabs(x)
def z_asin(x): return math.asin(x)


@pytest.mark.parametrize(
    "f, args, want",
    [
        pytest.param(z_sqrt, (0.0,), (math.inf,), id="sqrt-at-0-is-inf"),
        pytest.param(z_asin, (1.0,), (math.inf,), id="asin-at-1-is-inf"),
        pytest.param(z_hypot, (0.0, 0.0), (0.0, 0.0), id="hypot-at-origin-is-0"),
        pytest.param(z_atan2, (0.0, 0.0), (0.0, 0.0), id="atan2-at-origin-is-0"),
        pytest.param(z_fabs, (0.0,), (0.0,), id="fabs-at-0-is-0"),
        pytest.param(z_pow, (0.0, 2.0), (0.0, 0.0), id="pow-0-squared"),
        pytest.param(z_pow, (0.0, 1.0), (1.0, 0.0), id="pow-0-to-1"),
        pytest.param(z_pow, (0.0, 0.0), (0.0, 0.0), id="pow-0-to-0"),
        pytest.param(z_pow, (2.0, 0.0), (0.0, math.log(2.0)), id="pow-to-0"),
    ],
)
def test_derivative_at_special_points(f, args, want):
    assert ad.gradient(f, *args) == want


# ----- _rt.digamma against scipy ------------------------------------------------------------


def _digamma_points(region):
    rng = np.random.default_rng(zlib.crc32(region.encode()))
    if region == "positive":
        return rng.uniform(1e-3, 50, 400)
    if region == "large":
        return 10 ** rng.uniform(1, 300, 200)
    if region == "near-zero":
        return 10 ** rng.uniform(-12, -1, 200) * rng.choice([-1, 1], 200)
    if region == "negative":
        x = rng.uniform(-100, 0, 400)
        return x[np.abs(x - np.round(x)) > 1e-2]
    if region == "near-poles":  # -n ± δ, and large negative x
        n = rng.integers(1, 10, 200)
        d = 10 ** rng.uniform(-9, -3, 200) * rng.choice([-1, 1], 200)
        return np.concatenate([-n + d, rng.uniform(-1e4, -100, 300)])
    raise ValueError(region)


@pytest.mark.parametrize(
    "region",
    [
        "positive",
        "large",
        "near-zero",
        "negative",
        "near-poles",
    ],
)
def test_digamma_matches_scipy(region):
    sp = pytest.importorskip("scipy.special")
    xs = _digamma_points(region)
    bad = []
    if region == "near-poles":
        # near the poles scipy itself is only good to about 1e-8: compare with
        # arbitrary precision there
        mpmath = pytest.importorskip("mpmath")
        mpmath.mp.dps = 40
        reference = lambda x: float(mpmath.digamma(mpmath.mpf(float(x))))  # noqa: E731
    else:
        reference = lambda x: float(sp.digamma(x))  # noqa: E731
    for x in xs:
        got, want = rt.digamma(float(x)), reference(x)
        if not abs(got - want) <= 1e-10 * max(1.0, abs(want)):
            bad.append((float(x), got, want))
    assert not bad, f"{len(bad)} of {len(xs)} points off, e.g. {bad[:3]}"
