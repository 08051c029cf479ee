"""The NumPy rules, one table row per rule, checked against finite differences.

Each row names the rule it covers, a small function of this file that calls it, and
cases: the positional arguments, where ``A(3, 4)`` & co. stand for random arrays that
are differentiated and anything else (axes, flags, indices) is passed as is. A case
runs twice:

* inline: the function as written, arrays given as ``ndarray`` (the transformer knows
  them, so the rule's templates are inlined);
* run time: the arrays given as ``Opaque`` (an ndarray subclass the transformer does
  not know), so every call goes through the run-time version of the rule. Rows on
  array methods give their own run-time function (``_plain(x).sum()``).

The pullback is fed a random cotangent ``gy`` and compared with the finite-difference
gradient of ``Re <gy, f(x)>`` (Zygote's convention for complex numbers).
"""
import zlib

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import rules as R
from adjoint_s2s.testing import isapprox, numerical_gradient

try:
    import scipy.linalg as sl
    import scipy.signal as ss
    import scipy.special as sc
except ImportError:  # scipy is optional: its rows are skipped
    sc = sl = ss = None

SCIPY = pytest.mark.skipif(sc is None, reason="scipy is not installed")

# ----- random arguments ----------------------------------------------------------------------


class Arg:
    """A differentiated argument, made at random for each case."""

    def __init__(self, shape, dist="normal", scalar=False):
        self.shape, self.dist, self.scalar = shape, dist, scalar

    def make(self, rng, cplx):
        shape = self.shape
        d = self.dist
        if d == "normal":
            x = rng.standard_normal(shape)
        elif d == "pos":
            x = rng.uniform(0.5, 2.0, shape)
        elif d == "unit":
            x = rng.uniform(-0.8, 0.8, shape)
        elif d == "gt1":
            x = rng.uniform(1.3, 3.0, shape)
        elif d == "square":  # well conditioned
            n = shape[-1]
            x = np.eye(n) * 2 + 0.4 * rng.standard_normal(shape)
        elif d == "spd":
            n = shape[-1]
            m = rng.standard_normal(shape)
            x = m @ np.swapaxes(m, -1, -2) + n * np.eye(n)
        elif d == "ties":
            x = np.array([1.0, 3.0, 3.0, -2.0, 0.5])
        elif d == "zeros":
            x = rng.standard_normal(shape)
            x.flat[1] = 0.0
        elif d == "prob":
            x = rng.uniform(0.1, 0.9, shape)
        elif d == "nan":
            x = rng.standard_normal(shape)
            x.flat[1] = np.nan
        elif d == "zeros2":
            x = rng.standard_normal(shape)
            x.flat[0] = 0.0
            x.flat[-1] = 0.0
        else:
            raise ValueError(d)
        if cplx:
            if d == "spd":
                m = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
                x = m @ np.conj(np.swapaxes(m, -1, -2)) + shape[-1] * np.eye(shape[-1])
            else:
                x = x + 0.3j * rng.standard_normal(np.shape(x))
        if self.scalar:
            return complex(x) if cplx else float(x)
        return x


def A(*shape):
    return Arg(shape)


def P(*shape):
    return Arg(shape, "pos")


def U(*shape):
    return Arg(shape, "unit")


def G1(*shape):
    return Arg(shape, "gt1")


def SQ(*shape):
    return Arg(shape, "square")


def SPD(*shape):
    return Arg(shape, "spd")


def Z(*shape):
    return Arg(shape, "zeros")


def Z2(*shape):
    return Arg(shape, "zeros2")


def PR(*shape):
    """In (0, 1)."""
    return Arg(shape, "prob")


def NAN(*shape):
    """Random, with a NaN at flat index 1."""
    return Arg(shape, "nan")


def S(dist="normal"):
    """A Python float."""
    return Arg((), dist, scalar=True)


TIES = Arg((5,), "ties")




class Opaque(np.ndarray):
    """An ndarray the transformer does not recognise: rules run at run time."""


def _plain(x):
    """The identity, opaque to the transformer: its result's kind is unknown."""
    return x


# ----- the table ---------------------------------------------------------------------------------


class Row:
    """One rule: ``covers`` is the function (or "method" name, or "scipy.special.name"),
    ``fn`` a function of this file calling it, ``cases`` the argument lists; ``cplx``
    repeats the cases with complex inputs, ``rt`` replaces ``fn`` on the run-time path,
    ``drop`` lists tuple outputs fed a None cotangent."""

    def __init__(self, id, covers, fn, cases, cplx=False, rt=None, rtol=1e-5,
                 atol=1e-7, drop=(), marks=(), rt_marks=()):
        self.id = id
        self.covers = covers if isinstance(covers, (list, tuple)) else [covers]
        self.fn = fn
        self.cases = [c if isinstance(c, tuple) else (c,) for c in cases]
        self.cplx = cplx
        self.rt = rt
        self.rtol, self.atol = rtol, atol
        self.drop = drop  # outputs whose cotangent is None (structural zero)
        self.marks = marks
        self.rt_marks = rt_marks


ROWS = [
    # ----- numpy scalar types as conversions ----------------------------------------------
    Row("np.float64", np.float64, lambda x: np.float64(x) * 2.0, [S()]),
    Row("np.float32", np.float32, lambda x: np.float32(x) * 2.0, [S()], rtol=1e-2, atol=1e-2),
    Row("np.complex128", np.complex128, lambda x: abs(np.complex128(x)) ** 2, [S()]),
    # ----- elementwise, one argument -----------------------------------------------------
    Row("negative", np.negative, lambda x: np.negative(x), [A(3), A(2, 3)], cplx=True),
    Row("positive", np.positive, lambda x: np.positive(x), [A(3), A(2, 3)], cplx=True),
    Row("exp", np.exp, lambda x: np.exp(x), [A(3), A(2, 3), S()], cplx=True),
    Row("exp2", np.exp2, lambda x: np.exp2(x), [A(3), A(2, 3)], cplx=True),
    Row("expm1", np.expm1, lambda x: np.expm1(x), [A(3), A(2, 3)], cplx=True),
    Row("log", np.log, lambda x: np.log(x), [P(3), P(2, 3), S("pos")], cplx=True),
    Row("log2", np.log2, lambda x: np.log2(x), [P(3), P(2, 3)], cplx=True),
    Row("log10", np.log10, lambda x: np.log10(x), [P(3), P(2, 3)], cplx=True),
    Row("log1p", np.log1p, lambda x: np.log1p(x), [P(3), P(2, 3)], cplx=True),
    Row("sqrt", np.sqrt, lambda x: np.sqrt(x), [P(3), P(2, 3)], cplx=True),
    Row("cbrt", np.cbrt, lambda x: np.cbrt(x), [P(3), A(2, 3)]),
    Row("square", np.square, lambda x: np.square(x), [A(3), A(2, 3)], cplx=True),
    Row("reciprocal", np.reciprocal, lambda x: np.reciprocal(x), [P(3), P(2, 3)], cplx=True),
    Row("sin", np.sin, lambda x: np.sin(x), [A(3), A(2, 3), S()], cplx=True),
    Row("cos", np.cos, lambda x: np.cos(x), [A(3), A(2, 3)], cplx=True),
    Row("tan", np.tan, lambda x: np.tan(x), [U(3), U(2, 3)], cplx=True),
    Row("arcsin", np.arcsin, lambda x: np.arcsin(x), [U(3), U(2, 3)], cplx=True),
    Row("arccos", np.arccos, lambda x: np.arccos(x), [U(3), U(2, 3)], cplx=True),
    Row("arctan", np.arctan, lambda x: np.arctan(x), [A(3), A(2, 3)], cplx=True),
    Row("sinh", np.sinh, lambda x: np.sinh(x), [A(3), A(2, 3)], cplx=True),
    Row("cosh", np.cosh, lambda x: np.cosh(x), [A(3), A(2, 3)], cplx=True),
    Row("tanh", np.tanh, lambda x: np.tanh(x), [A(3), A(2, 3)], cplx=True),
    Row("arcsinh", np.arcsinh, lambda x: np.arcsinh(x), [A(3), A(2, 3)], cplx=True),
    Row("arccosh", np.arccosh, lambda x: np.arccosh(x), [G1(3), G1(2, 3)], cplx=True),
    Row("arctanh", np.arctanh, lambda x: np.arctanh(x), [U(3), U(2, 3)], cplx=True),
    Row("deg2rad", np.deg2rad, lambda x: np.deg2rad(x), [A(3), A(2, 3)]),
    Row("radians", np.radians, lambda x: np.radians(x), [A(3), A(2, 3)]),
    Row("rad2deg", np.rad2deg, lambda x: np.rad2deg(x), [A(3), A(2, 3)]),
    Row("degrees", np.degrees, lambda x: np.degrees(x), [A(3), A(2, 3)]),
    Row("sinc", np.sinc, lambda x: np.sinc(x), [A(3), A(2, 3)]),
    Row("fabs", np.fabs, lambda x: np.fabs(x), [A(3), A(2, 3)]),
    Row("absolute", np.absolute, lambda x: np.abs(x), [A(3), A(2, 3), S()], cplx=True),
    Row("conjugate", np.conjugate, lambda x: np.conj(x) * np.conjugate(x + 1j), [A(3), A(2, 3)],
        cplx=True),
    Row("real", np.real, lambda x: np.real(x), [A(3), A(2, 3)], cplx=True),
    Row("imag", np.imag, lambda x: np.imag(x) + x, [A(3), A(2, 3)], cplx=True),
    Row("angle", np.angle, lambda x, deg=False: np.angle(x, deg), [(A(3),), (A(2, 3), True)],
        cplx=True),
    Row("nan_to_num", np.nan_to_num, lambda x: np.nan_to_num(x), [NAN(3), NAN(2, 3)]),
    # ----- elementwise, two or three arguments ----------------------------------------------------
    Row("add", np.add, lambda x, y: np.add(x, y), [(A(3), A(3)), (A(2, 3), A(3)), (A(2, 1), S())],
        cplx=True),
    Row("subtract", np.subtract, lambda x, y: np.subtract(x, y),
        [(A(3), A(3)), (A(2, 1, 3), A(4, 1)), (S(), A(2))], cplx=True),
    Row("multiply", np.multiply, lambda x, y: np.multiply(x, y),
        [(A(3), A(3)), (A(2, 3), A(1, 3)), (A(2), S())], cplx=True),
    Row("divide", np.divide, lambda x, y: np.divide(x, y) + np.true_divide(y, x),
        [(P(3), P(3)), (P(2, 3), P(3))], cplx=True),
    Row("power", np.power, lambda x, y: np.power(x, y), [(P(3), A(3)), (P(2, 3), A(3)), (P(3), S())],
        cplx=True),
    Row("power/const", np.power, lambda x: np.power(x, 3) + np.power(x, 0), [A(3), A(2, 2)]),
    Row("float_power", np.float_power, lambda x, y: np.float_power(x, y),
        [(P(3), A(3)), (P(2, 3), A(3))]),
    Row("maximum", np.maximum, lambda x, y: np.maximum(x, y),
        [(A(3), A(3)), (A(2, 3), A(3)), (TIES, np.full(5, 3.0)), (TIES, TIES)]),
    Row("minimum", np.minimum, lambda x, y: np.minimum(x, y),
        [(A(3), A(3)), (A(2, 3), A(3)), (TIES, np.full(5, 3.0))]),
    Row("fmax", np.fmax, lambda x, y: np.fmax(x, y), [(A(3), A(3)), (A(2, 3), A(3)), (TIES, TIES)]),
    Row("fmin", np.fmin, lambda x, y: np.fmin(x, y), [(A(3), A(3)), (A(2, 3), A(3))]),
    Row("arctan2", np.arctan2, lambda y, x: np.arctan2(y, x), [(A(3), A(3)), (A(2, 3), A(3))]),
    Row("hypot", np.hypot, lambda x, y: np.hypot(x, y), [(A(3), A(3)), (A(2, 3), A(3))]),
    Row("logaddexp", np.logaddexp, lambda x, y: np.logaddexp(x, y), [(A(3), A(3)), (A(2, 3), A(3))]),
    Row("logaddexp2", np.logaddexp2, lambda x, y: np.logaddexp2(x, y),
        [(A(3), A(3)), (A(2, 3), A(3))]),
    Row("remainder", np.remainder, lambda x, y: np.remainder(x, y) + np.mod(y, x),
        [(A(3), P(3)), (A(2, 3), P(3))]),
    Row("fmod", np.fmod, lambda x, y: np.fmod(x, y), [(A(3), P(3)), (A(2, 3), P(3))]),
    Row("copysign", np.copysign, lambda x, y: np.copysign(x, y), [(A(3), A(3)), (A(2, 3), A(3))]),
    Row("clip", np.clip, lambda x, lo, hi: np.clip(x, lo, hi),
        [(A(6), -0.5, 0.5), (A(2, 3), A(3), None), (A(2, 3), None, A(2, 1)), (A(4), S(), S())]),
    Row("where", np.where, lambda c, x, y: np.where(c, x, y),
        [(np.array([True, False, True]), A(3), A(3)), (np.array([[True], [False]]), A(2, 3), S())],
        cplx=True),
    # ----- reductions ----------------------------------------------------------------------------
    Row("sum", np.sum, lambda x, axis=None, keepdims=False: np.sum(x, axis=axis, keepdims=keepdims),
        [A(3), (A(2, 3), 0), (A(2, 3, 2), (0, 2)), (A(2, 3), -1, True), S(), ([A(2), A(2)],)],
        cplx=True),
    Row("mean", np.mean, lambda x, axis=None, keepdims=False: np.mean(x, axis, None, None, keepdims),
        [A(3), (A(2, 3), 1), (A(2, 3, 2), (0, 2), True)], cplx=True),
    Row("nansum", np.nansum, lambda x, axis=None: np.nansum(x, axis), [NAN(3), (NAN(2, 3), 1)]),
    Row("nanmean", np.nanmean, lambda x, axis=None: np.nanmean(x, axis),
        [NAN(3), (NAN(2, 3), 1), (NAN(2, 3), 0)]),
    Row("prod", np.prod, lambda x, axis=None, keepdims=False: np.prod(x, axis, keepdims=keepdims),
        [A(4), (A(2, 3), 1), (Z(2, 3), 0, True), (Z2(2, 3), None), (Z(2, 3, 2), (0, 2))],
        cplx=True),
    Row("max", np.max, lambda x, axis=None, keepdims=False: np.max(x, axis=axis, keepdims=keepdims),
        [A(4), (A(2, 3), 1), (A(2, 3), 0, True), TIES, (A(2, 3, 2), (0, 2))]),
    Row("min", np.min, lambda x, axis=None: np.min(x, axis), [A(4), (A(2, 3), 1), TIES]),
    Row("amax", np.amax, lambda x, axis=None: np.amax(x, axis), [A(4), (A(2, 3), 1), TIES]),
    Row("amin", np.amin, lambda x, axis=None: np.amin(x, axis), [A(4), (A(2, 3), 1), TIES]),
    Row("nanmax", np.nanmax, lambda x, axis=None: np.nanmax(x, axis), [NAN(3), (NAN(2, 3), 1)]),
    Row("nanmin", np.nanmin, lambda x, axis=None: np.nanmin(x, axis), [A(3), (A(2, 3), 0)]),
    Row("var", np.var, lambda x, axis=None, ddof=0, keepdims=False:
        np.var(x, axis=axis, ddof=ddof, keepdims=keepdims),
        [A(4), (A(2, 3), 1), (A(2, 3), 0, 1, True), (A(2, 3, 2), (0, 2))], cplx=True),
    Row("std", np.std, lambda x, axis=None, ddof=0, keepdims=False:
        np.std(x, axis, None, None, ddof, keepdims),
        [A(4), (A(2, 3), 1), (A(2, 3), 0, 1, True)], cplx=True),
    Row("cumsum", np.cumsum, lambda x, axis=None: np.cumsum(x, axis), [A(4), (A(2, 3), 1), (A(2, 3), 0)],
        cplx=True),
    Row("cumprod", np.cumprod, lambda x, axis=None: np.cumprod(x, axis),
        [A(4), (A(2, 3), 1), (Z(2, 3), 0), (Z2(5),), (Z(5),)], cplx=True),
    Row("linalg.norm", np.linalg.norm, lambda x, ord=None, axis=None, keepdims=False:
        np.linalg.norm(x, ord, axis, keepdims),
        [A(4), (A(4), 1), (A(4), 3), (A(4), np.inf), (A(4), -np.inf), (A(4), 0.5),
         (A(2, 3), None, 1), (A(2, 3), 2, 0, True), (A(2, 3), "fro"), (A(3, 3), "nuc"),
         (A(2, 3), 2), (A(3, 2), -2), (A(3, 3), 1), (A(3, 3), -1), (A(3, 3), np.inf),
         (A(3, 3), -np.inf), (A(2, 3, 2), "fro", (0, 2)), (A(2, 2, 3), "nuc", (2, 1), True),
         (A(2, 3, 2), None)],
        cplx=True),
    Row("linalg.vector_norm", np.linalg.vector_norm, lambda x, axis=None, keepdims=False, ord=2:
        np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord),
        [A(4), (A(2, 3), 1), (A(2, 3), 0, True, 1), (A(2, 3, 2), (0, 2), False, np.inf)], cplx=True),
    Row("linalg.matrix_norm", np.linalg.matrix_norm, lambda x, keepdims=False, ord="fro":
        np.linalg.matrix_norm(x, keepdims=keepdims, ord=ord),
        [A(2, 3), (A(2, 3, 3), True, "nuc"), (A(2, 2, 3), False, 2)], cplx=True),
    Row("trace", np.trace, lambda x, offset=0, axis1=0, axis2=1: np.trace(x, offset, axis1, axis2),
        [A(3, 3), (A(3, 4), 1), (A(2, 3, 3), -1, 1, 2), (A(3, 2, 3), 0, 2, 0)], cplx=True),
    Row("linalg.trace", np.linalg.trace, lambda x, offset=0: np.linalg.trace(x, offset=offset),
        [A(3, 3), (A(2, 3, 4), 1)]),
    Row("average", np.average, lambda x, axis=None, w=None: np.average(x, axis, w),
        [A(4), (A(2, 3), 1), (A(4), None, P(4)), (A(2, 3), 1, P(3)), (A(2, 3), None, P(2, 3)),
         (A(2, 3), 0, P(2))]),
    # ----- shape ---------------------------------------------------------------------------------
    Row("reshape", np.reshape, lambda x, shape, order="C": np.reshape(x, shape, order),
        [(A(6), (2, 3)), (A(2, 3), -1), (A(2, 3), (3, 2), "F"), (A(4), 4)], cplx=True),
    Row("ravel", np.ravel, lambda x, order="C": np.ravel(x, order), [A(3), A(2, 3), (A(2, 3), "F")]),
    Row("squeeze", np.squeeze, lambda x, axis=None: np.squeeze(x, axis), [A(1, 3), (A(2, 1, 3, 1), 1)]),
    Row("expand_dims", np.expand_dims, lambda x, axis: np.expand_dims(x, axis),
        [(A(3), 0), (A(2, 3), (0, 3))]),
    Row("transpose", np.transpose, lambda x, axes=None: np.transpose(x, axes) + np.permute_dims(x, axes),
        [A(2, 3), (A(2, 3, 4), (1, 2, 0)), (A(2, 3, 4), (-1, 0, 1))], cplx=True),
    Row("matrix_transpose", np.matrix_transpose, lambda x: np.matrix_transpose(x), [A(2, 3), A(2, 2, 3)]),
    Row("linalg.matrix_transpose", np.linalg.matrix_transpose,
        lambda x: np.linalg.matrix_transpose(x), [A(2, 3), A(2, 2, 3)]),
    Row("swapaxes", np.swapaxes, lambda x, a1, a2: np.swapaxes(x, a1, a2),
        [(A(2, 3), 0, 1), (A(2, 3, 4), -1, 0)]),
    Row("moveaxis", np.moveaxis, lambda x, s, d: np.moveaxis(x, s, d),
        [(A(2, 3, 4), 0, -1), (A(2, 3, 4), (0, 1), (2, 0))]),
    Row("broadcast_to", np.broadcast_to, lambda x, shape: np.broadcast_to(x, shape),
        [(A(3), (2, 3)), (A(2, 1), (2, 2, 3)), (S(), (2,))]),
    Row("atleast_1d", np.atleast_1d, lambda x: np.atleast_1d(x), [A(3), S(), A(2, 2)]),
    Row("atleast_2d", np.atleast_2d, lambda x, y: np.atleast_2d(x, y), [(A(3), A(2, 2)), (S(), A(2))]),
    Row("atleast_3d", np.atleast_3d, lambda x, y, z: np.atleast_3d(x, y, z), [(A(3), A(2, 2), S())]),
    Row("concatenate", np.concatenate, lambda x, y, axis=0: np.concatenate((x, y), axis) + 0,
        [(A(2), A(3)), (A(2, 3), A(1, 3)), (A(2, 3), A(2, 1), 1), (A(2, 2), A(3), None)], cplx=True),
    Row("concatenate/array", np.concatenate, lambda x, axis=0: np.concatenate(x, axis),
        [A(2, 3), (A(3, 2, 2), 1)]),
    Row("stack", np.stack, lambda x, y, axis=0: np.stack([x, y], axis),
        [(A(3), A(3)), (A(2, 3), A(2, 3), -1), (A(2, 3), A(2, 3), 1)]),
    Row("stack/array", np.stack, lambda x, axis=0: np.stack(x, axis), [A(2, 3), (A(2, 3), 1)]),
    Row("unstack", np.unstack, lambda x, axis=0: np.unstack(x, axis=axis), [A(2, 3), (A(2, 3), 1)],
        drop=(0,)),
    Row("hstack", np.hstack, lambda x, y: np.hstack([x, y]), [(A(2), A(3)), (A(2, 2), A(2, 1)), (S(), A(2))]),
    Row("vstack", np.vstack, lambda x, y: np.vstack((x, y)), [(A(3), A(3)), (A(2, 3), A(3)), (A(2, 2), A(1, 2))]),
    Row("dstack", np.dstack, lambda x, y: np.dstack((x, y)), [(A(3), A(3)), (A(2, 3), A(2, 3)),
                                                               (A(2, 3, 1), A(2, 3, 2))]),
    Row("column_stack", np.column_stack, lambda x, y: np.column_stack((x, y)),
        [(A(3), A(3)), (A(3, 2), A(3))]),
    Row("split", np.split, lambda x, s, axis=0: np.split(x, s, axis),
        [(A(6), 3), (A(2, 4), [1, 3], 1), (A(4, 2), 2)], drop=(1,)),
    Row("array_split", np.array_split, lambda x, s, axis=0: np.array_split(x, s, axis),
        [(A(7), 3), (A(2, 5), 2, 1)], drop=(0,)),
    Row("hsplit", np.hsplit, lambda x, s: np.hsplit(x, s), [(A(4), 2), (A(2, 4), [1])]),
    Row("vsplit", np.vsplit, lambda x, s: np.vsplit(x, s), [(A(4, 2), 2), (A(3, 2, 2), [1])],
        drop=(0,)),
    Row("dsplit", np.dsplit, lambda x, s: np.dsplit(x, s), [(A(1, 2, 4), 2), (A(2, 1, 3), [2])]),
    Row("tile", np.tile, lambda x, reps: np.tile(x, reps),
        [(A(3), 2), (A(2, 3), (2, 1)), (A(3), (2, 2)), (A(2, 1, 2), 2)], cplx=True),
    Row("repeat", np.repeat, lambda x, r, axis=None: np.repeat(x, r, axis),
        [(A(3), 2), (A(2, 3), 2, 1), (A(2, 3), [1, 0, 2], 1), (A(2, 2), [2, 3], 0)]),
    Row("flip", np.flip, lambda x, axis=None: np.flip(x, axis), [A(3), (A(2, 3), 1), (A(2, 3, 2), (0, 2))]),
    Row("fliplr", np.fliplr, lambda x: np.fliplr(x), [A(2, 3), A(3, 2, 2)]),
    Row("flipud", np.flipud, lambda x: np.flipud(x), [A(2, 3), A(3)]),
    Row("roll", np.roll, lambda x, shift, axis=None: np.roll(x, shift, axis),
        [(A(4), 1), (A(2, 3), -1, 1), (A(2, 3), (1, 2), (0, 1)), (A(2, 3), 2)]),
    Row("rot90", np.rot90, lambda x, k=1, axes=(0, 1): np.rot90(x, k, axes),
        [A(2, 3), (A(2, 3), 2), (A(2, 3, 2), -1, (1, 2))]),
    Row("pad", np.pad, lambda x, pw, mode="constant": np.pad(x, pw, mode),
        [(A(3), 1), (A(2, 3), ((1, 0), (2, 1))), (A(3), 2, "edge"), (A(2, 3), 1, "reflect"),
         (A(4), (1, 2), "symmetric"), (A(3), 2, "wrap")], cplx=True),
    Row("pad/constant_values", np.pad, lambda x, c: np.pad(x, 1, constant_values=c),
        [(A(3), S()), (A(2, 2), S())]),
    Row("diag", np.diag, lambda x, k=0: np.diag(x, k), [A(3), (A(3), 1), A(3, 3), (A(3, 4), -1), (A(3, 4), 2)]),
    Row("diagonal", np.diagonal, lambda x, offset=0, a1=0, a2=1: np.diagonal(x, offset, a1, a2),
        [A(3, 3), (A(3, 4), 1), (A(2, 3, 3), 0, 1, 2), (A(3, 2, 4), -1, 2, 0)]),
    Row("linalg.diagonal", np.linalg.diagonal, lambda x, offset=0: np.linalg.diagonal(x, offset=offset),
        [A(3, 3), (A(2, 3, 4), 1)]),
    Row("tril", np.tril, lambda x, k=0: np.tril(x, k), [A(3, 3), (A(3, 4), 1), (A(2, 3, 3), -1), A(3)]),
    Row("triu", np.triu, lambda x, k=0: np.triu(x, k), [A(3, 3), (A(3, 4), -1), (A(2, 3, 3), 1)]),
    Row("diff", np.diff, lambda x, n=1, axis=-1: np.diff(x, n, axis), [A(4), (A(5), 2), (A(3, 4), 1, 0)],
        cplx=True),
    Row("sort", np.sort, lambda x, axis=-1: np.sort(x, axis), [A(4), (A(2, 3), 0), (A(2, 3), None)]),
    Row("take", np.take, lambda x, idx, axis=None: np.take(x, idx, axis),
        [(A(4), np.array([0, 2, 2])), (A(2, 3), np.array([[1, 0], [2, 2]]), 1), (A(3, 2), 1, 0)]),
    Row("take_along_axis", np.take_along_axis, lambda x, idx, axis: np.take_along_axis(x, idx, axis),
        [(A(4), np.array([3, 0, 0]), 0), (A(2, 3), np.array([[0, 0], [2, 1]]), 1),
         (A(3, 2), np.array([[2, 0]]), 0)]),
    # ----- linear algebra ---------------------------------------------------------------------------
    Row("dot", np.dot, lambda x, y: np.dot(x, y),
        [(A(3), A(3)), (A(2, 3), A(3)), (A(3), A(3, 2)), (A(2, 3), A(3, 2)), (A(2, 2, 3), A(4, 3, 2)),
         (S(), A(3)), (A(2, 3), S())], cplx=True),
    Row("matmul", np.matmul, lambda x, y: np.matmul(x, y),
        [(A(3), A(3)), (A(2, 3), A(3)), (A(3), A(3, 2)), (A(2, 3), A(3, 2)), (A(2, 2, 3), A(3, 2)),
         (A(3), A(2, 3, 2)), (A(2, 1, 2, 3), A(3, 3, 2))], cplx=True),
    Row("linalg.matmul", np.linalg.matmul, lambda x, y: np.linalg.matmul(x, y),
        [(A(2, 3), A(3, 2)), (A(2, 2, 3), A(3))]),
    Row("inner", np.inner, lambda x, y: np.inner(x, y),
        [(A(3), A(3)), (A(2, 3), A(3)), (A(3), A(2, 3)), (A(2, 3), A(4, 3)), (A(2, 2, 3), A(2, 3)),
         (S(), A(2))], cplx=True),
    Row("vdot", np.vdot, lambda x, y: np.vdot(x, y), [(A(3), A(3)), (A(2, 3), A(3, 2))], cplx=True),
    Row("vecdot", np.vecdot, lambda x, y, axis=-1: np.vecdot(x, y, axis=axis),
        [(A(3), A(3)), (A(2, 3), A(3)), (A(3, 2), A(3, 2), 0)], cplx=True),
    Row("linalg.vecdot", np.linalg.vecdot, lambda x, y: np.linalg.vecdot(x, y),
        [(A(2, 3), A(3)), (A(3), A(3))], cplx=True),
    Row("outer", np.outer, lambda x, y: np.outer(x, y), [(A(3), A(2)), (A(2, 2), A(3))], cplx=True),
    Row("linalg.outer", np.linalg.outer, lambda x, y: np.linalg.outer(x, y),
        [(A(3), A(2)), (A(1), A(3))]),
    Row("kron", np.kron, lambda x, y: np.kron(x, y),
        [(A(2), A(3)), (A(2, 2), A(3, 2)), (A(2, 3), A(2)), (A(2), A(2, 2))], cplx=True),
    Row("cross", np.cross, lambda x, y: np.cross(x, y), [(A(3), A(3)), (A(2, 3), A(3))], cplx=True),
    Row("linalg.cross", np.linalg.cross, lambda x, y: np.linalg.cross(x, y),
        [(A(2, 3), A(2, 3)), (A(3), A(2, 3))]),
    Row("tensordot", np.tensordot, lambda x, y, axes=2: np.tensordot(x, y, axes),
        [(A(2, 3), A(2, 3)), (A(2, 3, 4), A(3, 4, 2)), (A(2, 3), A(3, 2), 1), (A(2, 3), A(4), 0),
         (A(2, 3, 4), A(4, 2, 3), ([1, 2], [2, 0])), (A(3, 2), A(3, 2), (0, 0))], cplx=True),
    Row("linalg.tensordot", np.linalg.tensordot, lambda x, y: np.linalg.tensordot(x, y, axes=1),
        [(A(2, 3), A(3, 2)), (A(3), A(3, 2, 2))]),
    Row("einsum", np.einsum, lambda s, x, y: np.einsum(s, x, y),
        [("ij,jk->ik", A(2, 3), A(3, 2)), ("ij,jk", A(2, 3), A(3, 2)), ("i,i", A(3), A(3)),
         ("ii,j->ij", A(3, 3), A(2)), ("...ij,...jk->...ik", A(2, 2, 3), A(3, 2)),
         ("ij,j", A(2, 3), A(1)), ("bij,bjk->b", A(2, 2, 3), A(2, 3, 2)), ("i,j", A(2), A(3)),
         ("ij,ij->i", A(2, 3), A(1, 3)), ("i...,i...->...", A(2, 3), A(2, 3)),
         ("ik,jk->", A(2, 3), A(2, 3))], cplx=True),
    Row("einsum/1", np.einsum, lambda s, x: np.einsum(s, x),
        [("ii", A(3, 3)), ("ij->ji", A(2, 3)), ("ii->i", A(3, 3)), ("ijk->j", A(2, 3, 2)),
         ("...i->...", A(2, 3)), ("iji->j", A(2, 3, 2))], cplx=True),
    Row("einsum/3", np.einsum, lambda s, x, y, z: np.einsum(s, x, y, z),
        [("ij,jk,kl->il", A(2, 3), A(3, 2), A(2, 2)), ("i,i,i", A(3), A(3), A(3))]),
    Row("linalg.inv", np.linalg.inv, lambda a: np.linalg.inv(a), [SQ(3, 3), SQ(2, 3, 3)], cplx=True),
    Row("linalg.det", np.linalg.det, lambda a: np.linalg.det(a), [SQ(3, 3), SQ(2, 2, 2)], cplx=True),
    Row("linalg.slogdet", np.linalg.slogdet, lambda a: np.linalg.slogdet(a), [SQ(3, 3), SQ(2, 3, 3)],
        cplx=True, drop=(0,)),
    Row("linalg.solve", np.linalg.solve, lambda a, b: np.linalg.solve(a, b),
        [(SQ(3, 3), A(3)), (SQ(3, 3), A(3, 2)), (SQ(2, 3, 3), A(2, 3, 1)), (SQ(2, 3, 3), A(3))],
        cplx=True),
    Row("linalg.cholesky", np.linalg.cholesky, lambda a, upper=False:
        np.linalg.cholesky((a + np.conj(np.swapaxes(a, -1, -2))) / 2, upper=upper),
        [SPD(3, 3), SPD(2, 2, 2), (SPD(3, 3), True)], cplx=True, rtol=1e-4),
    Row("linalg.eigh", np.linalg.eigh, lambda a: _eigh_invariants(a),
        [SPD(3, 3), A(3, 3), A(2, 3, 3)], cplx=True, rtol=1e-4),
    Row("linalg.eigh/values", np.linalg.eigh, lambda a: np.linalg.eigh(a + np.swapaxes(a, -1, -2)),
        [A(3, 3), A(2, 2, 2)], drop=(1,)),
    Row("linalg.eigvalsh", np.linalg.eigvalsh,
        lambda a: np.linalg.eigvalsh(a + np.conj(np.swapaxes(a, -1, -2))), [A(3, 3), A(2, 3, 3)],
        cplx=True),
    Row("linalg.svd", np.linalg.svd, lambda a, full=False: _svd_invariants(a, full),
        [A(3, 3), A(4, 2), A(2, 4), A(2, 3, 2), (A(4, 2), True), (A(2, 3), True)], cplx=True,
        rtol=1e-4),
    Row("linalg.svd/values", np.linalg.svd, lambda a: np.linalg.svd(a, compute_uv=False),
        [A(3, 3), A(4, 2), A(2, 2, 3)], cplx=True),
    Row("linalg.svdvals", np.linalg.svdvals, lambda a: np.linalg.svdvals(a), [A(3, 2), A(2, 2, 3)],
        cplx=True),
    Row("linalg.qr", np.linalg.qr, lambda a, mode="reduced": np.linalg.qr(a, mode),
        [A(3, 3), A(4, 2), A(2, 4), A(2, 3, 2), (A(3, 2), "r")], cplx=True, rtol=1e-4),
    Row("linalg.pinv", np.linalg.pinv, lambda a: np.linalg.pinv(a), [A(3, 3), A(4, 2), A(2, 4), A(2, 3, 2)],
        cplx=True, rtol=1e-4),
    Row("linalg.lstsq", np.linalg.lstsq, lambda a, b: np.linalg.lstsq(a, b)[0],
        [(A(4, 2), A(4)), (A(4, 2), A(4, 3)), (A(3, 3), A(3))], cplx=True, rtol=1e-4),
    Row("linalg.matrix_power", np.linalg.matrix_power, lambda a, n: np.linalg.matrix_power(a, n),
        [(A(3, 3), 3), (A(2, 2), 1), (SQ(2, 3, 3), 2), (SQ(3, 3), -2), (A(2, 2), 0)], cplx=True),
    # ----- constructors and conversions --------------------------------------------------------------
    Row("array", np.array, lambda x, y: np.array([[x, y], [y, 2.0]]) + np.array([x, x, y]).sum(),
        [(S(), S())], cplx=True),
    Row("array/arrays", np.array, lambda x, y: np.array([x, y]) + np.array(x), [(A(3), A(3))]),
    Row("asarray", np.asarray, lambda x, y: np.asarray([x, y, x]), [(S(), S()), (A(2), A(2))]),
    Row("asanyarray", np.asanyarray, lambda x: np.asanyarray(x) * 2, [A(3), S()]),
    Row("copy", np.copy, lambda x: np.copy(x), [A(3), A(2, 3)], cplx=True),
    Row("astype", np.astype, lambda x: np.astype(x, np.float64) + np.astype(x, complex) * (1 + 2j),
        [A(3), A(2, 2)]),
    Row("full", np.full, lambda c: np.full((2, 3), c) + np.full((2, 3), fill_value=c), [S(), A(3)],
        cplx=True),
    Row("full_like", np.full_like, lambda x, c: np.full_like(x, c), [(A(2, 3), S()), (A(2, 3), A(3))]),
    Row("ndarray.item", "item", lambda x: x.item(1) * x.item() if x.size == 1 else x.item(1) * x.item(0, 1),
        [A(2, 2), A(1, 3)], cplx=True, rt=lambda x: _plain(x).item(1) * _plain(x).item(0, 1)),
    Row("ndarray.tolist", "tolist", lambda x: x.tolist(), [A(3), A(2, 2)], cplx=True,
        rt=lambda x: _plain(x).tolist()),
    Row("arange", np.arange, lambda a, s: np.arange(a, 3.0, s) ** 2 + np.arange(a, a + 2.0).sum(),
        [(S("unit"), S("pos"))]),
    Row("linspace", np.linspace,
        lambda a, b: np.linspace(a, b, 4) + np.linspace(a, b, num=3, endpoint=False, axis=-1).sum(),
        [(S(), S()), (A(2), A(2)), (A(2), S()), (S(), A(3, 2))], cplx=True),
    Row("linspace/retstep", np.linspace, lambda a, b: np.linspace(a, b, 5, retstep=True),
        [(S(), S()), (A(3), S())]),
    Row("logspace", np.logspace,
        lambda a, b, c: np.logspace(a, b, 4, base=c) + np.logspace(a, b, 3, endpoint=False).sum(),
        [(U(2), S("unit"), S("pos")), (S("unit"), S("unit"), S("pos"))]),
    Row("geomspace", np.geomspace, lambda a, b: np.geomspace(a, b, 4, axis=-1),
        [(S("pos"), S("pos")), (P(2), P(2))]),
    # ----- array methods -------------------------------------------------------------------------
    Row("ndarray.sum", "sum", lambda x, axis=None: x.sum(axis, keepdims=True),
        [A(3), (A(2, 3), 1)], rt=lambda x, axis=None: _plain(x).sum(axis, keepdims=True)),
    Row("ndarray.mean", "mean", lambda x, axis=None: x.mean(axis), [A(3), (A(2, 3), 1)],
        rt=lambda x, axis=None: _plain(x).mean(axis)),
    Row("ndarray.prod", "prod", lambda x: x.prod(0), [A(3), Z(2, 3)], rt=lambda x: _plain(x).prod(0)),
    Row("ndarray.max", "max", lambda x: x.max(axis=-1), [A(3), A(2, 3)], rt=lambda x: _plain(x).max(axis=-1)),
    Row("ndarray.min", "min", lambda x: x.min(), [A(3), A(2, 3)], rt=lambda x: _plain(x).min()),
    Row("ndarray.std", "std", lambda x: x.std(ddof=1), [A(3), A(2, 3)], rt=lambda x: _plain(x).std(ddof=1)),
    Row("ndarray.var", "var", lambda x: x.var(0), [A(3), A(2, 3)], rt=lambda x: _plain(x).var(0)),
    Row("ndarray.cumsum", "cumsum", lambda x: x.cumsum(), [A(3), A(2, 3)], rt=lambda x: _plain(x).cumsum()),
    Row("ndarray.cumprod", "cumprod", lambda x: x.cumprod(-1), [A(3), A(2, 3)],
        rt=lambda x: _plain(x).cumprod(-1)),
    Row("ndarray.dot", "dot", lambda x, y: x.dot(y), [(A(2, 3), A(3)), (A(3), A(3))],
        rt=lambda x, y: _plain(x).dot(y)),
    Row("ndarray.reshape", "reshape", lambda x: x.reshape(2, 3) + x.reshape((2, 3)) + x.reshape(-1, 3),
        [A(6), A(3, 2)],
        rt=lambda x: _plain(x).reshape(2, 3) + _plain(x).reshape((2, 3)) + _plain(x).reshape(-1, 3)),
    Row("ndarray.reshape/tuple", "reshape", lambda x: x.reshape((3, 2)), [A(6)],
        rt=lambda x: _plain(x).reshape((3, 2))),
    Row("ndarray.transpose", "transpose", lambda x: x.transpose() + x.transpose(1, 0, 2).transpose((2, 1, 0)),
        [A(2, 2, 2)],
        rt=lambda x: _plain(x).transpose() + _plain(x).transpose(1, 0, 2).transpose((2, 1, 0))),
    Row("ndarray.transpose/tuple", "transpose", lambda x: x.transpose((1, 0)), [A(2, 3)],
        rt=lambda x: _plain(x).transpose((1, 0))),
    Row("ndarray.ravel", "ravel", lambda x: x.ravel(), [A(2, 3)], rt=lambda x: _plain(x).ravel()),
    Row("ndarray.flatten", "flatten", lambda x: x.flatten(), [A(2, 3)], rt=lambda x: _plain(x).flatten()),
    Row("ndarray.squeeze", "squeeze", lambda x: x.squeeze(), [A(2, 1)], rt=lambda x: _plain(x).squeeze()),
    Row("ndarray.swapaxes", "swapaxes", lambda x: x.swapaxes(0, 1), [A(2, 3)],
        rt=lambda x: _plain(x).swapaxes(0, 1)),
    Row("ndarray.clip", "clip", lambda x: x.clip(-0.5, 0.5), [A(6)], rt=lambda x: _plain(x).clip(-0.5, 0.5)),
    Row("ndarray.conj", "conj", lambda x: x.conj(), [A(3)], cplx=True, rt=lambda x: _plain(x).conj()),
    Row("ndarray.conjugate", "conjugate", lambda x: x.conjugate(), [A(3)], cplx=True,
        rt=lambda x: _plain(x).conjugate()),
    Row("ndarray.astype", "astype", lambda x: x.astype(np.float64) * 2, [A(3)],
        rt=lambda x: _plain(x).astype(np.float64) * 2),
    Row("ndarray.copy", "copy", lambda x: x.copy(), [A(3)], rt=lambda x: _plain(x).copy()),
    Row("ndarray.trace", "trace", lambda x: x.trace(), [A(3, 3)], rt=lambda x: _plain(x).trace()),
    Row("ndarray.diagonal", "diagonal", lambda x: x.diagonal(1), [A(3, 3)], rt=lambda x: _plain(x).diagonal(1)),
    Row("ndarray.repeat", "repeat", lambda x: x.repeat(2), [A(3)], rt=lambda x: _plain(x).repeat(2)),
    Row("ndarray.take", "take", lambda x: x.take(np.array([0, 0, 2])), [A(3)],
        rt=lambda x: _plain(x).take(np.array([0, 0, 2]))),
]

def _sp(name, fn, cases, **kw):
    return Row("scipy." + name, "scipy.special." + name, fn, cases, marks=[SCIPY], **kw)


ROWS += [
    _sp("expit", lambda x: sc.expit(x), [A(3), A(2, 3)]),
    _sp("logit", lambda x: sc.logit(x), [PR(3), PR(2, 3)]),
    _sp("log_expit", lambda x: sc.log_expit(x), [A(3), A(2, 3)]),
    _sp("softplus", lambda x: sc.softplus(x), [A(3), A(2, 3)]),
    _sp("erf", lambda x: sc.erf(x), [A(3), A(2, 3), S()], cplx=True),
    _sp("erfc", lambda x: sc.erfc(x), [A(3), A(2, 3)], cplx=True),
    _sp("erfinv", lambda x: sc.erfinv(x), [U(3), U(2, 3)]),
    _sp("erfcinv", lambda x: sc.erfcinv(x), [PR(3), PR(2, 3)]),
    _sp("erfcx", lambda x: sc.erfcx(x), [A(3), A(2, 3)]),
    _sp("dawsn", lambda x: sc.dawsn(x), [A(3), A(2, 3)]),
    _sp("ndtr", lambda x: sc.ndtr(x), [A(3), A(2, 3)]),
    _sp("log_ndtr", lambda x: sc.log_ndtr(x), [A(3), A(2, 3)]),
    _sp("ndtri", lambda x: sc.ndtri(x), [PR(3), PR(2, 3)]),
    _sp("gamma", lambda x: sc.gamma(x), [P(3), P(2, 3)], cplx=True),
    _sp("gammaln", lambda x: sc.gammaln(x), [P(3), P(2, 3)]),
    _sp("loggamma", lambda x: sc.loggamma(x), [P(3), P(2, 3)], cplx=True),
    _sp("rgamma", lambda x: sc.rgamma(x), [P(3), P(2, 3)], cplx=True),
    _sp("digamma", lambda x: sc.digamma(x) + sc.psi(x), [P(3), P(2, 3)]),
    _sp("polygamma", lambda x: sc.polygamma(1, x), [P(3), P(2, 3)]),
    _sp("gammainc", lambda x: sc.gammainc(2.5, x), [P(3), P(2, 3)]),
    _sp("gammaincc", lambda x: sc.gammaincc(1.5, x), [P(3), P(2, 3)]),
    _sp("beta", lambda a, b: sc.beta(a, b), [(P(3), P(3)), (P(2, 3), P(3))]),
    _sp("betaln", lambda a, b: sc.betaln(a, b), [(P(3), P(3)), (P(2, 3), P(3))]),
    _sp("xlogy", lambda x, y: sc.xlogy(x, y), [(A(3), P(3)), (A(2, 3), P(3))]),
    _sp("xlog1py", lambda x, y: sc.xlog1py(x, y), [(A(3), P(3)), (A(2, 3), P(3))]),
    _sp("entr", lambda x: sc.entr(x), [P(3), P(2, 3)]),
    _sp("rel_entr", lambda x, y: sc.rel_entr(x, y), [(P(3), P(3)), (P(2, 3), P(3))]),
    _sp("kl_div", lambda x, y: sc.kl_div(x, y), [(P(3), P(3)), (P(2, 3), P(3))]),
    _sp("exp1", lambda x: sc.exp1(x), [P(3), P(2, 3)]),
    _sp("expi", lambda x: sc.expi(x), [P(3), P(2, 3)]),
    _sp("exp2", lambda x: sc.exp2(x), [A(3), A(2, 3)]),
    _sp("exp10", lambda x: sc.exp10(x), [A(3), A(2, 3)]),
    _sp("expm1", lambda x: sc.expm1(x), [A(3), A(2, 3)]),
    _sp("log1p", lambda x: sc.log1p(x), [P(3), P(2, 3)]),
    _sp("cosm1", lambda x: sc.cosm1(x), [A(3), A(2, 3)]),
    _sp("cbrt", lambda x: sc.cbrt(x), [P(3), P(2, 3)]),
    _sp("i0", lambda x: sc.i0(x), [A(3), A(2, 3)]),
    _sp("i1", lambda x: sc.i1(x), [A(3), Z(2, 3)]),
    _sp("i0e", lambda x: sc.i0e(x), [A(3), A(2, 3)]),
    _sp("i1e", lambda x: sc.i1e(x), [A(3), Z(2, 3)]),
    _sp("j0", lambda x: sc.j0(x), [A(3), A(2, 3)]),
    _sp("j1", lambda x: sc.j1(x), [A(3), A(2, 3)]),
    _sp("y0", lambda x: sc.y0(x), [P(3), P(2, 3)]),
    _sp("y1", lambda x: sc.y1(x), [P(3), P(2, 3)]),
    _sp("jv", lambda x: sc.jv(1.5, x), [P(3), P(2, 3)]),
    _sp("yv", lambda x: sc.yv(0.5, x), [P(3), P(2, 3)]),
    _sp("iv", lambda x: sc.iv(2.0, x), [A(3), A(2, 3)]),
    _sp("kv", lambda x: sc.kv(1.0, x), [P(3), P(2, 3)]),
    _sp("logsumexp", lambda x, axis=None, b=None, keepdims=False:
        sc.logsumexp(x, axis, b, keepdims) + sc.logsumexp(x, axis=axis, b=b, keepdims=keepdims),
        [A(3), (A(2, 3), 1), (A(2, 3), 0, P(2, 3), True), (A(2, 3), None, P(3)), (A(2, 3), (0, 1))],
        cplx=True),
    _sp("softmax", lambda x, axis=None: sc.softmax(x, axis=axis), [A(3), (A(2, 3), 1), (A(2, 3), 0)],
        cplx=True),
    _sp("log_softmax", lambda x, axis=None: sc.log_softmax(x, axis), [A(3), (A(2, 3), 1)], cplx=True),
]


def _sl(name, fn, cases, **kw):
    return Row("scipy.linalg." + name, "scipy.linalg." + name, fn, cases, marks=[SCIPY], **kw)


ROWS += [
    _sl("expm", lambda x: sl.expm(x), [A(3, 3), A(1, 1), A(2, 3, 3)], cplx=True),
    _sl("solve_triangular", lambda a, b, trans=0, lower=False, unit=False:
        sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit),
        [(SQ(3, 3), A(3)), (SQ(3, 3), A(3, 2), 1, True), (SQ(3, 3), A(3, 2), 2, False, True),
         (SQ(4, 4), A(4), "T", True), (SQ(3, 3), A(3, 1), "C", True, True)],
        cplx=True),
    _sl("cho_solve", lambda c, b, lower=True: sl.cho_solve((c, lower), b) + sl.cho_solve((c, lower), b=b),
        [(SQ(3, 3), A(3)), (SQ(3, 3), A(3, 2), False), (SQ(4, 4), A(4, 1), True)], cplx=True),
    # the packed factors of a fixed pivoting (rows 0 and 2 swapped, then none)
    _sl("lu_solve", lambda lu, b, trans=0: sl.lu_solve((lu, np.array([2, 1, 2])), b, trans)
        + sl.lu_solve((lu, np.array([2, 1, 2])), b=b, trans=trans),
        [(SQ(3, 3), A(3)), (SQ(3, 3), A(3, 2), 1), (SQ(3, 3), A(3, 2), 2)],
        cplx=True),
    _sl("sqrtm", lambda x: sl.sqrtm(x), [SQ(3, 3), SQ(1, 1), SPD(4, 4), SQ(2, 3, 3)], cplx=True),
    _sl("logm", lambda x: sl.logm(x), [SQ(3, 3), SQ(1, 1), SPD(2, 2), SQ(2, 2, 2)], cplx=True),
    _sl("solve_sylvester", lambda a, b, q: sl.solve_sylvester(a, b, q),
        [(SQ(3, 3), SQ(2, 2), A(3, 2)), (SQ(2, 2), SQ(2, 2), A(2, 2)), (SQ(1, 1), SQ(3, 3), A(1, 3))],
        cplx=True),
    # the whole result (c, lower): c carries the other triangle of a unchanged
    _sl("cho_factor", lambda a, lower=False: sl.cho_factor(a, lower),
        [SPD(3, 3), (SPD(4, 4), True), (SPD(2, 2), False)], cplx=True),
    _sl("cho_factor+cho_solve",
        lambda a, b, lower=False: sl.cho_solve(sl.cho_factor(a, lower=lower), b),
        [(SPD(3, 3), A(3)), (SPD(4, 4), A(4, 2), True)], cplx=True),
    _sl("lu_factor", lambda a: sl.lu_factor(a), [SQ(3, 3), A(4, 4), SQ(1, 1)], cplx=True),
    _sl("lu_factor+lu_solve", lambda a, b, trans=0: sl.lu_solve(sl.lu_factor(a), b, trans),
        [(A(3, 3), A(3)), (SQ(4, 4), A(4, 2), 1), (A(3, 3), A(3, 2), 2)], cplx=True),
    _sl("solve_banded", lambda ab, b, l=1, u=1: sl.solve_banded((l, u), ab + _band_boost(ab, u), b),
        [(A(3, 4), A(4)), (A(2, 5), A(5, 2), 1, 0), (A(4, 5), A(5), 1, 2), (A(1, 3), A(3), 0, 0),
         (A(3, 6), A(6, 3), 0, 2)],
        cplx=True),
]


def _band_boost(ab, u):
    """4 on the main diagonal of banded storage: a well-conditioned banded matrix."""
    out = np.zeros(np.shape(ab))
    out[u] = 4.0
    return out


def _ss(name, fn, cases, **kw):
    return Row("scipy.signal." + name, "scipy.signal." + name, fn, cases, marks=[SCIPY], **kw)


_CONV = [(A(5), A(3)), (A(3), A(5), "same"), (A(6), A(3), "valid"), (A(3), A(6), "valid"),
         (A(4), A(4), "same", "fft"), (A(3, 4), A(2, 3), "same", "direct"),
         (A(4, 5), A(2, 2), "valid", "fft"), (A(2, 3), A(3, 4), "full", "fft"),
         (A(2, 2, 3), A(2, 1, 2), "same")]

ROWS += [
    _ss("convolve", lambda a, b, mode="full", method="auto": ss.convolve(a, b, mode, method),
        _CONV, cplx=True),
    _ss("correlate", lambda a, b, mode="full", method="auto":
        ss.correlate(a, b, mode=mode, method=method), _CONV, cplx=True),
]


def _eigh_invariants(a):
    """Eigenvalues and gauge-invariant functions of the eigenvectors of sym(a)."""
    h = (a + np.conj(np.swapaxes(a, -1, -2))) / 2
    w, v = np.linalg.eigh(h)
    return w, np.real(v * np.conj(v))


def _svd_invariants(a, full):
    """Singular values and gauge-invariant functions of the singular vectors."""
    u, s, vh = np.linalg.svd(a, full_matrices=full)
    k = s.shape[-1]
    u, vh = u[..., :, :k], vh[..., :k, :]
    uv = np.matmul(u, vh)
    return s, np.real(u * np.conj(u)), np.real(vh * np.conj(vh)), uv


# ----- the harness -----------------------------------------------------------------------------


def _rng(*parts):
    return np.random.default_rng(zlib.crc32(repr(parts).encode()))


def _realise(case, rng, cplx):
    """(arguments, positions of the differentiated ones)."""
    args, diff = [], []
    for i, c in enumerate(case):
        if isinstance(c, Arg):
            args.append(c.make(rng, cplx))
            diff.append(i)
        elif isinstance(c, list) and c and all(isinstance(e, Arg) for e in c):
            args.append([e.make(rng, cplx) for e in c])
            diff.append(i)
        else:
            args.append(c)
    return args, diff


def _cotangent(y, rng, drop=(), top=True):
    if isinstance(y, (tuple, list)):
        out = [_cotangent(v, rng, (), False) for v in y]
        if top:
            out = [None if i in drop else v for i, v in enumerate(out)]
        return tuple(out)
    if isinstance(y, (bool, np.bool_)) or y is None:
        return None
    a = np.asarray(y)
    if not np.issubdtype(a.dtype, np.inexact):
        return None
    g = rng.standard_normal(a.shape)
    if np.iscomplexobj(a):
        g = g + 1j * rng.standard_normal(a.shape)
    return g if isinstance(y, np.ndarray) else g[()]


def _pair_sum(gy, y):
    """Re <gy, y>, summed over the outputs that have a cotangent."""
    if gy is None:
        return 0.0
    if isinstance(gy, tuple):
        return sum(_pair_sum(a, b) for a, b in zip(gy, y))
    return float(np.real(np.vdot(gy, np.asarray(y))))


def _numeric(fn, args, diff, gy):
    def loss(*xs):
        trial = list(args)
        for i, x in zip(diff, xs):
            trial[i] = x
        return _pair_sum(gy, fn(*trial))

    return numerical_gradient(loss, *[args[i] for i in diff])


def _opaque(v):
    if isinstance(v, np.ndarray):
        return v.view(Opaque)
    if isinstance(v, list):
        return [_opaque(e) for e in v]
    return v


def _check(row, case_index, path, cplx):
    case = row.cases[case_index]
    rng = _rng(row.id, case_index, cplx)
    args, diff = _realise(case, rng, cplx)
    y = row.fn(*args)
    gy = _cotangent(y, rng, row.drop)
    want = _numeric(row.fn, args, diff, gy)
    if path == "inline":
        fn, call_args = row.fn, args
    else:
        fn = row.rt or row.fn
        call_args = list(args) if row.rt else [(_opaque(a) if i in diff else a) for i, a in enumerate(args)]
    got_y, back = ad.pullback(fn, *call_args)
    got = back(gy)
    for k, i in enumerate(diff):
        assert isapprox(got[i], want[k], rtol=row.rtol, atol=row.atol), (
            f"{row.id} case {case_index} ({path}{', complex' if cplx else ''}) argument {i}:\n"
            f"  adjoint_s2s: {got[i]!r}\n  finite differences: {want[k]!r}"
        )
        _check_structure(got[i], args[i])


def _check_structure(g, x):
    """Gradients look like their argument: same shape and dtype for arrays, lists for lists."""
    if g is None:
        return
    if isinstance(x, np.ndarray):
        assert isinstance(g, np.ndarray) and g.shape == x.shape, (np.shape(g), x.shape)
        assert g.dtype == x.dtype, (g.dtype, x.dtype)
    elif isinstance(x, list):
        assert isinstance(g, list) and len(g) == len(x)
    elif isinstance(x, float):
        assert isinstance(g, float), type(g)


def _params():
    out = []
    for row in ROWS:
        for path in ("inline", "runtime"):
            marks = list(row.marks) + (list(row.rt_marks) if path == "runtime" else [])
            out.append(pytest.param(row, path, id=f"{row.id}-{path}", marks=marks))
    return out


@pytest.mark.parametrize("row, path", _params())
def test_rule(row, path):
    for i in range(len(row.cases)):
        _check(row, i, path, False)
    if row.cplx:
        for i in range(len(row.cases)):
            _check(row, i, path, True)


# ----- dtypes and structural zeros --------------------------------------------------------------


def _has_array_case(row):
    return any(isinstance(c, Arg) and not c.scalar for case in row.cases for c in case)


@pytest.mark.parametrize(
    "row",
    [pytest.param(r, marks=list(r.marks), id=r.id) for r in ROWS if _has_array_case(r)],
)
def test_float32_inputs_get_float32_gradients(row):
    rng = _rng(row.id, "f32")
    checked = 0
    for case in row.cases:
        args, diff = _realise(case, rng, False)
        args32 = [a.astype(np.float32) if i in diff and isinstance(a, np.ndarray) else a
                  for i, a in enumerate(args)]
        gy = _cotangent(row.fn(*args), rng)
        got64 = ad.pullback(row.fn, *args)[1](gy)
        got32 = ad.pullback(row.fn, *args32)[1](gy)
        for i in diff:
            if isinstance(args32[i], np.ndarray) and got64[i] is not None:
                assert got32[i].dtype == np.float32, (row.id, got32[i].dtype)
                assert np.allclose(got32[i], got64[i], rtol=1e-3, atol=1e-4)
                checked += 1
    assert checked


def f_int_sum(x, w):
    return np.sum(x * w) + np.max(w)


def test_integer_arrays_get_a_float_gradient():
    # as int scalars do (docs/correctness.md, "Integer inputs")
    x = np.arange(3)
    w = np.array([0.5, 1.0, 2.0])
    gx, gw = ad.gradient(f_int_sum, x, w)
    assert gx.dtype == np.float64 and np.array_equal(gx, w)
    assert np.allclose(gw, x + np.array([0, 0, 1]))


def f_where(c, x, y):
    return np.sum(np.where(c, x, y))


def f_split_first(x):
    parts = np.split(x, 3)
    return np.sum(parts[0])


def f_slogdet_logdet(a):
    sign, logdet = np.linalg.slogdet(a)
    return logdet


def f_eigh_values(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w * np.array([1.0, 2.0, 3.0]))


def test_structural_zeros():
    c = np.array([True, False, True])
    x, y = np.ones(3), np.full(3, 2.0)
    gc, gx, gy = ad.gradient(f_where, c, x, y)
    assert gc is None and np.array_equal(gx, c) and np.array_equal(gy, ~c)
    (gs,) = ad.gradient(f_split_first, np.arange(6.0))
    assert np.array_equal(gs, [1, 1, 0, 0, 0, 0])
    a = np.array([[2.0, 0.5], [0.3, 1.5]])
    (ga,) = ad.gradient(f_slogdet_logdet, a)
    assert np.allclose(ga, np.linalg.inv(a).T)
    s = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 3.0]])
    (ge,) = ad.gradient(f_eigh_values, s)
    w, v = np.linalg.eigh(s)
    assert np.allclose(ge, v @ np.diag([1.0, 2.0, 3.0]) @ v.T)


def f_sign_floor(x):
    return np.sum(np.sign(x) * np.floor(x) + np.round(x) * np.zeros_like(x)) + np.sum(x)


def test_nondifferentiable_functions_are_constants():
    (g,) = ad.gradient(f_sign_floor, np.array([-1.5, 0.2, 2.7]))
    assert np.array_equal(g, np.ones(3))


def f_sum_inlined(x, axis):
    return np.sum(np.exp(x), axis) + np.linalg.norm(x, None, axis)


def test_templates_are_inlined():
    """With arrays and int axes, no NumPy call goes through run-time dispatch."""
    from adjoint_s2s import emit
    from adjoint_s2s.passes.activity import ARRAY, REAL

    entry = emit.source_of(f_sum_inlined, (ARRAY, REAL))
    assert "_rt.call(" not in entry.source, entry.source


# ----- second order ----------------------------------------------------------------------------------

SECOND_ORDER = [
    "exp", "tanh", "multiply", "divide", "maximum", "where", "mean", "std", "cumprod",
    "linalg.norm", "trace", "reshape", "concatenate", "stack", "tile", "diag", "dot", "matmul",
    "inner", "tensordot", "kron", "linalg.inv", "linalg.solve", "linalg.det",
]


def _re_pair(gy, y):
    """Re <gy, y> written for the transformer (the loss of the second-order checks)."""
    if isinstance(gy, tuple):
        total = 0.0
        for a, b in zip(gy, y):
            if a is not None:
                total = total + _re_pair(a, b)
        return total
    return np.real(np.sum(np.conj(gy) * y))


def _loss_of(fn, args, i, gy):
    def loss(x):
        trial = list(args)
        trial[i] = x
        return _re_pair(gy, fn(*trial))

    return loss


@pytest.mark.parametrize(
    "row", [pytest.param(r, marks=list(r.marks), id=r.id) for r in ROWS if r.id in SECOND_ORDER]
)
def test_second_order(row):
    """Rules differentiate themselves: Hessian-vector products match finite differences
    of the gradient."""
    rng = _rng(row.id, "second order")
    args, diff = _realise(row.cases[0], rng, False)
    gy = _cotangent(row.fn(*args), rng, row.drop)
    i = diff[0]
    loss = _loss_of(row.fn, args, i, gy)
    v = rng.standard_normal(np.shape(args[i]))
    got = ad.hvp(loss, args[i], v)
    want = numerical_gradient(lambda x: float(np.sum(ad.gradient(loss, x)[0] * v)), args[i])[0]
    assert isapprox(got, want, rtol=1e-4, atol=1e-6), (got, want)


# ----- every rule has a row -------------------------------------------------------------------------


def _numpy_rules():
    fns = {}
    for fn, variants in R.PRIMITIVES.items():
        for prim in variants.values():
            if prim.path and prim.path.startswith(("np.", "ndarray.", "scipy.")):
                fns[prim.path] = fn
    for fn in R.SPECIAL:
        if isinstance(fn, np.ufunc) or (getattr(fn, "__module__", "") or "").startswith("numpy"):
            fns.setdefault(getattr(fn, "__name__", repr(fn)), fn)
    return fns


def _scipy_more_rows():
    """The rows of test_scipy_more.py (scipy.stats, more of scipy.special): none without scipy."""
    if sc is None:
        return []
    from .test_scipy_more import ROWS as SCIPY_MORE

    return SCIPY_MORE


def test_every_numpy_rule_has_a_row():
    from .test_rules_more import ROWS as MORE  # the rules added for issue 14

    rows = ROWS + MORE + _scipy_more_rows()
    # by identity, or by equality: NumPy makes a new bound method at each read of
    # np.add.reduce, and they compare equal (the rule table is keyed the same way)
    covered_fns = {id(c) for row in rows for c in row.covers if not isinstance(c, str)}
    covered_eq = [c for row in rows for c in row.covers if not isinstance(c, str)]
    covered_methods = {c for row in rows for c in row.covers if isinstance(c, str)}
    covered_paths = {c for c in covered_methods if c.startswith("scipy.")}
    missing = [path for path, fn in _numpy_rules().items()
               if id(fn) not in covered_fns and path not in covered_paths
               and not any(c is fn or (type(c) is type(fn) and c == fn) for c in covered_eq)
               and not path.startswith("ndarray.")]
    missing += [f"ndarray.{name}" for name in R.ARRAY_METHODS if name not in covered_methods]
    assert not missing, f"rules without a test row: {sorted(missing)}"


def test_every_scipy_rule_has_a_row():
    from adjoint_s2s.rules import scipy as sp_rules

    covered = {c for row in ROWS + _scipy_more_rows() for c in row.covers if isinstance(c, str)}
    missing = [name for name, _, _ in sp_rules.TABLE if f"scipy.special.{name}" not in covered]
    assert not missing, f"scipy rules without a test row: {missing}"


def test_helper_names_reach_templates_unshadowed():
    """Templates call helpers as _rt.<name>: no runtime name or other helper may shadow them."""
    import ast
    import glob
    import os

    from adjoint_s2s import runtime
    from adjoint_s2s.rules.numpy import (
        base, constructors, decompositions, elementwise, fft, linalg, reductions, scipy_special,
        shape, linalg_more, shape_more, samples, quantiles, nan_reductions, gradient, scipy_stats,
        ufunc_methods,
    )

    helpers = {}
    for mod in (base, elementwise, reductions, shape, linalg, decompositions, constructors,
                scipy_special, fft, linalg_more, shape_more, samples, quantiles, nan_reductions,
                gradient, scipy_stats, ufunc_methods):
        for name in mod.__all__:
            assert name not in helpers, name  # no helper shadows another
            helpers[name] = getattr(mod, name)
    for name, fn in helpers.items():
        assert getattr(runtime, name) is fn, name
    own = set()
    for path in glob.glob(os.path.join(os.path.dirname(runtime.__file__), "*.py")):
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        own |= {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        own |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                if isinstance(t, ast.Name)}
    assert own and not own & set(helpers)


def f_einsum_rows(x):
    return np.einsum("ij->i", x)


def test_gradients_are_writeable_arrays():
    _, back = ad.pullback(f_einsum_rows, np.ones((2, 3)))
    (g,) = back(np.ones(2))
    g += 1.0
    assert np.array_equal(g, np.full((2, 3), 2.0))


def test_row_ids_are_unique():
    ids = [row.id for row in ROWS]
    assert len(ids) == len(set(ids))


# ----- max/min differentiated again (their adjoint has a rule of its own) --------------------


def _max_rows(x):
    return np.sum(np.max(x, axis=1) ** 2) + np.max(x) ** 3


def _min_kept(x):
    return np.sum(np.min(x * x, axis=0, keepdims=True) * x)


def _max_ties(x):
    y = np.concatenate([x, x])  # every column's maximum twice: the gradient splits
    return np.sum(np.max(y, axis=0) ** 2) + np.max(y) ** 2


def _max_shifted_softmax(x):
    z = x - np.max(x, axis=-1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(z), axis=-1)) * np.arange(1.0, x.shape[0] + 1))


@pytest.mark.parametrize("fn", [_max_rows, _min_kept, _max_ties, _max_shifted_softmax])
def test_extremum_second_and_third_order(fn):
    rng = np.random.default_rng(zlib.crc32(fn.__name__.encode()))
    x, u, v = (rng.standard_normal((3, 4)) for _ in range(3))

    def d1(x):
        return np.sum(ad.gradient(fn, x)[0] * u)

    def d2(x):
        return np.sum(ad.gradient(d1, x)[0] * v)

    for f in (fn, d1, d2):
        (got,) = ad.gradient(f, x)
        (want,) = numerical_gradient(f, x)
        assert isapprox(got, want, rtol=1e-5, atol=1e-7), f.__name__


def test_extremum_adjoint_and_select_are_transposes():
    from adjoint_s2s import runtime as rt

    rng = np.random.default_rng(3)
    a = np.round(rng.standard_normal((4, 5)), 1)
    a[1, 2] = a[1, 4] = a[1].max() + 1.0  # a tie
    for axis, keepdims in [(None, False), (0, False), (1, True), (-1, False)]:
        m = np.max(a, axis=axis, keepdims=keepdims)
        g = rng.standard_normal(np.shape(m))
        c = rng.standard_normal(a.shape)
        lhs = np.sum(rt.np_extremum_adjoint(g, a, m, axis, keepdims) * c)
        rhs = np.sum(g * rt.np_extremum_select(c, a, m, axis, keepdims))
        assert abs(lhs - rhs) < 1e-12
