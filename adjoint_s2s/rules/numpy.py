"""Rules for NumPy: at least the functions HIPS autograd differentiates.

Elementwise ufuncs give one partial derivative per argument (the reverse pass writes
``unbroadcast(g * conj(partial), x)``); everything else gives the whole adjoint of an
argument as a template calling a helper of ``helpers_numpy`` (``_rt.<name>``), which
projects its result onto the argument (shape, real part, float dtype, list structure).

Functions that return tuples (``slogdet``, ``eigh``, ``svd``, ``qr``, ``split``...) are
``kind="other"``: their adjoint arrives as a tuple or a ``Tangent`` of the named tuple,
with ``None`` for outputs that got no gradient.

``SECTIONS`` and ``NOTES`` (by rule path) feed ``scripts/gen_numpy_docs.py``.
"""
import types

import numpy as np

from . import (
    Primitive,
    array_method,
    lookup_primitive,
    nondifferentiable_builtin,
    primitive,
    special,
)
from . import helpers_numpy as _hn
from ..runtime.dispatch import _primitive_pair

SECTIONS = {}  # rule path -> section of docs/numpy.md
NOTES = {}  # rule path -> a short remark for docs/numpy.md
SECTION_ORDER = [
    "Elementwise",
    "Reductions",
    "Shape and indexing",
    "Linear algebra",
    "Constructors and conversions",
]
_CURRENT = ["Elementwise"]


def _np(name, module=np):
    """A NumPy function by name, or None where this NumPy version lacks it."""
    return getattr(module, name, None)


def _path(fn):
    name = getattr(fn, "__name__", None)
    if name and getattr(np, name, None) is fn:
        return f"np.{name}"
    if name and getattr(np.linalg, name, None) is fn:
        return f"np.linalg.{name}"
    return None


def rule(fn, params, *partials, kind="array", adjoints=None, path=None, note=None,
         section=None):
    """Register a NumPy rule (skipped when fn is None: absent from this NumPy)."""
    if fn is None:
        return None
    prim = primitive(fn, params, *partials, path=path or _path(fn), kind=kind,
                     adjoints=adjoints)
    SECTIONS[prim.path] = section or _CURRENT[0]
    if note:
        NOTES[prim.path] = note
    if isinstance(fn, types.FunctionType) and not prim.path.startswith("ndarray."):
        # run-time calls with keywords of plain Python functions (np.full, logsumexp)
        # transform the function's source unless it has a special rule: give it one
        _by_keyword(prim)
    return prim


def _by_keyword(prim, call=None):
    """Run-time calls of a function with keyword-only parameters.

    The run-time version of a rule calls the function with every parameter in
    position; for ``np.pad(..., constant_values=)``, ``vector_norm(x, ord=)``... a
    wrapper passes the keyword-only ones by name. It is registered with ``special``,
    which the run-time dispatch consults first; inlining still uses the templates.
    """
    if prim is None:
        return
    fn = prim.fn

    def keyword_rule_pair(*args, **kwargs):
        pair = _keyword_pair(fn, call, len(args), tuple(kwargs))
        return pair(*args, **kwargs)

    special(fn)(keyword_rule_pair)


_KEYWORD_PAIRS = {}  # id(rule variant) -> its run-time pair


def _keyword_pair(fn, call, nargs, kwnames):
    """The run-time pair of the variant of fn's rule that fits the call (built once)."""
    variant = lookup_primitive(fn, nargs, kwnames)
    if variant is None:
        raise TypeError(f"no rule of {fn.__name__} takes the keywords {', '.join(kwnames)}")
    pair = _KEYWORD_PAIRS.get(id(variant))
    if pair is None:
        pair = _primitive_pair(_shadow(variant, call))
        _KEYWORD_PAIRS[id(variant)] = pair
    return pair


def _shadow(prim, call):
    """The rule with a callee that takes every parameter in position."""
    fn, params = prim.fn, prim.params
    kwonly = _KWONLY.get(prim.path, ())

    def by_keyword(*args):
        if call is not None:
            return call(*args)
        pos = [a for p, a in zip(params, args) if p not in kwonly]
        kw = {p: a for p, a in zip(params, args) if p in kwonly}
        return fn(*pos, **kw)

    return Primitive(by_keyword, prim.path, prim.params, prim.partials, prim.adjoints,
                     prim.kind, prim.doc, prim.defaults)


def _two(name, p1, p2, *extra):
    """Adjoints of a bilinear function: ``_rt.<name>_a(g, p1, p2, ...)`` and ``..._b``."""
    args = ", ".join((p1, p2) + extra)
    return {p1: f"_rt.{name}_a(g, {args})", p2: f"_rt.{name}_b(g, {args})"}


_KWONLY = {
    "np.pad": ("constant_values",),
    "np.average": ("keepdims",),
    "np.linalg.vector_norm": ("axis", "keepdims", "ord"),
    "np.linalg.matrix_norm": ("keepdims", "ord"),
    "np.linalg.cholesky": ("upper",),
    "np.linalg.trace": ("offset",),
    "np.linalg.diagonal": ("offset",),
    "np.linalg.tensordot": ("axes",),
    "np.linalg.vecdot": ("axis",),
    "np.vecdot": ("axis",),
    "np.unstack": ("axis",),
}

nondifferentiable_builtin(_keyword_pair, reason="it builds the run-time version of a rule")

# =====================================================================================
# Elementwise
# =====================================================================================
_CURRENT[0] = "Elementwise"
_U = "x"  # one-argument ufuncs
for _fn, _d in [
    (np.negative, "-1"),
    (np.positive, "1"),
    (np.exp, "ans"),
    (np.exp2, "ans * np.log(2)"),
    (np.expm1, "ans + 1"),
    (np.square, "2 * x"),
    (np.reciprocal, "-ans * ans"),
    (np.sin, "np.cos(x)"),
    (np.cos, "-np.sin(x)"),
    (np.tan, "1 + ans * ans"),
    (np.arctan, "1 / (1 + x * x)"),
    (np.sinh, "np.cosh(x)"),
    (np.cosh, "np.sinh(x)"),
    (np.tanh, "1 - ans * ans"),
    (np.arcsinh, "1 / np.sqrt(x * x + 1)"),
    (np.deg2rad, "np.pi / 180"),
    (np.radians, "np.pi / 180"),
    (np.rad2deg, "180 / np.pi"),
    (np.degrees, "180 / np.pi"),
    (np.sinc, "_rt.np_sinc_partial(x)"),
    (np.fabs, "np.sign(x)"),
]:
    rule(_fn, _U, _d)

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
rule(np.absolute, "x", adjoints={"x": "_rt.np_absolute_adjoint(g, x, ans)"},
     note="complex: real(g)·z/|z| (0 at 0)")
rule(np.conjugate, "x", adjoints={"x": "_rt.np_fit(np.conj(g), x)"})
rule(np.real, "val", adjoints={"val": "_rt.np_fit(np.real(g), val)"})
rule(np.imag, "val", adjoints={"val": "_rt.np_fit(1j * np.real(g), val)"},
     note="z̄ = i·real(g)")
rule(np.angle, "z, deg=False", adjoints={"z": "_rt.np_angle_adjoint(g, z, deg)"},
     note="z̄ = real(g)·i·z/|z|²; zero for real input")
rule(np.nan_to_num, "x, copy=True, nan=0.0, posinf=None, neginf=None",
     "np.isfinite(x)", None, None, None, None, note="no gradient to the replaced entries")

# two arguments
rule(np.add, "x1, x2", "1", "1")
rule(np.subtract, "x1, x2", "1", "-1")
rule(np.multiply, "x1, x2", "x2", "x1")
rule(np.divide, "x1, x2", "1 / x2", "-ans / x2")
rule(np.power, "x1, x2", "_rt.np_power_base_partial(x1, x2)",
     "_rt.np_power_exponent_partial(x1, ans)")
rule(np.float_power, "x1, x2", "_rt.np_float_power_base_partial(x1, x2)",
     "_rt.np_power_exponent_partial(x1, ans)")
rule(np.maximum, "x1, x2", "_rt.np_max_share(x1, x2, 1)", "_rt.np_max_share(x2, x1, 1)",
     note="ties split evenly")
rule(np.minimum, "x1, x2", "_rt.np_max_share(x1, x2, -1)", "_rt.np_max_share(x2, x1, -1)",
     note="ties split evenly")
rule(np.fmax, "x1, x2", "_rt.np_fmax_share(x1, x2, 1)", "_rt.np_fmax_share(x2, x1, 1)",
     note="ties split evenly; NaN loses")
rule(np.fmin, "x1, x2", "_rt.np_fmax_share(x1, x2, -1)", "_rt.np_fmax_share(x2, x1, -1)",
     note="ties split evenly; NaN loses")
rule(np.arctan2, "x1, x2", "x2 / (x1 * x1 + x2 * x2)", "-x1 / (x1 * x1 + x2 * x2)")
rule(np.hypot, "x1, x2", "x1 / ans", "x2 / ans")
rule(np.logaddexp, "x1, x2", "np.exp(x1 - ans)", "np.exp(x2 - ans)")
rule(np.logaddexp2, "x1, x2", "np.exp2(x1 - ans)", "np.exp2(x2 - ans)")
rule(np.remainder, "x1, x2", "1", "-np.floor_divide(x1, x2)")
rule(np.fmod, "x1, x2", "1", "-np.trunc(x1 / x2)")
rule(np.copysign, "x1, x2", "_rt.np_copysign_partial(x1, x2)", None)
rule(np.clip, "a, a_min=None, a_max=None",
     "_rt.np_clip_inside(a, a_min, a_max)",
     "_rt.np_clip_below(a, a_min, a_max)",
     "_rt.np_clip_above(a, a_min, a_max)",
     note="the bounds get the adjoint where they are active")
rule(np.where, "condition, x, y", None, "condition", "np.logical_not(condition)",
     note="three-argument form; no gradient to the condition")

# =====================================================================================
# Reductions
# =====================================================================================
_CURRENT[0] = "Reductions"
_RED = "a, axis=None, dtype=None, out=None, keepdims=False"
rule(np.sum, _RED, adjoints={"a": "_rt.np_sum_adjoint(g, a, axis, keepdims)"})
rule(np.mean, _RED, adjoints={"a": "_rt.np_mean_adjoint(g, a, axis, keepdims)"})
rule(np.nansum, _RED, adjoints={"a": "_rt.np_nansum_adjoint(g, a, axis, keepdims)"})
rule(np.nanmean, _RED, adjoints={"a": "_rt.np_nanmean_adjoint(g, a, axis, keepdims)"})
rule(np.prod, _RED, adjoints={"a": "_rt.np_prod_adjoint(g, a, axis, keepdims)"},
     note="exact with zeros in the input")
for _fn in dict.fromkeys((np.max, np.min, _np("amax"), _np("amin"), np.nanmax, np.nanmin)):
    rule(_fn, "a, axis=None, out=None, keepdims=False",
         adjoints={"a": "_rt.np_extremum_adjoint(g, a, ans, axis, keepdims)"},
         note="to the arg-extremum, ties split evenly")
_STAT = "a, axis=None, dtype=None, out=None, ddof=0, keepdims=False"
rule(np.var, _STAT, adjoints={"a": "_rt.np_var_adjoint(g, a, axis, ddof, keepdims)"})
rule(np.std, _STAT, adjoints={"a": "_rt.np_std_adjoint(g, a, ans, axis, ddof, keepdims)"})
rule(np.cumsum, "a, axis=None, dtype=None, out=None",
     adjoints={"a": "_rt.np_cumsum_adjoint(g, a, axis)"})
rule(np.cumprod, "a, axis=None, dtype=None, out=None",
     adjoints={"a": "_rt.np_cumprod_adjoint(g, a, ans, axis)"}, note="exact with zeros")
rule(np.linalg.norm, "x, ord=None, axis=None, keepdims=False",
     adjoints={"x": "_rt.np_norm_adjoint(g, x, ans, ord, axis, keepdims)"},
     note="vector orders; matrix orders fro, nuc, ±2, ±1, ±inf")
_by_keyword(rule(_np("vector_norm", np.linalg), "x, axis=None, keepdims=False, ord=2",
                 adjoints={"x": "_rt.np_vector_norm_adjoint(g, x, ans, axis, keepdims, ord)"}))
_by_keyword(rule(_np("matrix_norm", np.linalg), "x, keepdims=False, ord='fro'",
                 adjoints={"x": "_rt.np_matrix_norm_adjoint(g, x, ans, keepdims, ord)"}))
rule(np.trace, "a, offset=0, axis1=0, axis2=1, dtype=None, out=None",
     adjoints={"a": "_rt.np_trace_adjoint(g, a, offset, axis1, axis2)"})
_by_keyword(rule(_np("trace", np.linalg), "x, offset=0",
                 adjoints={"x": "_rt.np_trace_adjoint(g, x, offset, -2, -1)"}))
_by_keyword(rule(
    np.average, "a, axis=None, weights=None, returned=False, keepdims=False", adjoints={
        "a": "_rt.np_average_adjoint_a(g, a, ans, axis, weights, returned, keepdims)",
        "weights": "_rt.np_average_adjoint_weights(g, a, ans, axis, weights, returned, keepdims)",
    }, note="gradient to the weights too; not with returned=True"))

# =====================================================================================
# Shape and indexing
# =====================================================================================
_CURRENT[0] = "Shape and indexing"
rule(np.reshape, "a, shape, order='C'", adjoints={"a": "_rt.np_reshape_like(g, a, order)"})
rule(np.ravel, "a, order='C'", adjoints={"a": "_rt.np_reshape_like(g, a, order)"})
rule(np.squeeze, "a, axis=None", adjoints={"a": "_rt.np_reshape_like(g, a)"})
rule(np.expand_dims, "a, axis", adjoints={"a": "_rt.np_reshape_like(g, a)"})
rule(np.transpose, "a, axes=None",
     adjoints={"a": "_rt.np_fit(_rt.np_untranspose(g, axes), a)"})
rule(_np("matrix_transpose"), "x", adjoints={"x": "_rt.np_fit(np.swapaxes(g, -1, -2), x)"})
rule(_np("matrix_transpose", np.linalg), "x",
     adjoints={"x": "_rt.np_fit(np.swapaxes(g, -1, -2), x)"})
rule(np.swapaxes, "a, axis1, axis2",
     adjoints={"a": "_rt.np_fit(np.swapaxes(g, axis1, axis2), a)"})
rule(np.moveaxis, "a, source, destination",
     adjoints={"a": "_rt.np_fit(np.moveaxis(g, destination, source), a)"})
rule(np.broadcast_to, "array, shape", "1", None)
for _fn in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    rule(_fn, "a", adjoints={"a": "_rt.np_reshape_like(g, a)"})
    rule(_fn, "a, b", kind="other", adjoints={
        "a": "_rt.np_atleast_adjoint(g, 0, a)", "b": "_rt.np_atleast_adjoint(g, 1, b)"})
    rule(_fn, "a, b, c", kind="other", adjoints={
        "a": "_rt.np_atleast_adjoint(g, 0, a)", "b": "_rt.np_atleast_adjoint(g, 1, b)",
        "c": "_rt.np_atleast_adjoint(g, 2, c)"})
rule(np.concatenate, "arrays, axis=0",
     adjoints={"arrays": "_rt.np_concatenate_adjoint(g, arrays, axis)"})
rule(np.stack, "arrays, axis=0", adjoints={"arrays": "_rt.np_stack_adjoint(g, arrays, axis)"})
_by_keyword(rule(_np("unstack"), "x, axis=0", kind="other",
                 adjoints={"x": "_rt.np_unstack_adjoint(g, x, ans, axis)"}))
rule(np.hstack, "tup", adjoints={"tup": "_rt.np_hstack_adjoint(g, tup)"})
rule(np.vstack, "tup", adjoints={"tup": "_rt.np_vstack_adjoint(g, tup)"})
rule(np.dstack, "tup", adjoints={"tup": "_rt.np_dstack_adjoint(g, tup)"})
rule(np.column_stack, "tup", adjoints={"tup": "_rt.np_column_stack_adjoint(g, tup)"})
for _fn in (np.split, np.array_split):
    rule(_fn, "ary, indices_or_sections, axis=0", kind="other",
         adjoints={"ary": "_rt.np_split_adjoint(g, ary, ans, axis)"},
         note="unused pieces are zeros")
rule(np.hsplit, "ary, indices_or_sections", kind="other",
     adjoints={"ary": "_rt.np_split_adjoint(g, ary, ans, 1 if np.ndim(ary) > 1 else 0)"})
rule(np.vsplit, "ary, indices_or_sections", kind="other",
     adjoints={"ary": "_rt.np_split_adjoint(g, ary, ans, 0)"})
rule(np.dsplit, "ary, indices_or_sections", kind="other",
     adjoints={"ary": "_rt.np_split_adjoint(g, ary, ans, 2)"})
rule(np.tile, "A, reps", adjoints={"A": "_rt.np_tile_adjoint(g, A, reps)"})
rule(np.repeat, "a, repeats, axis=None",
     adjoints={"a": "_rt.np_repeat_adjoint(g, a, repeats, axis)"})
rule(np.flip, "m, axis=None", adjoints={"m": "_rt.np_fit(np.flip(g, axis), m)"})
rule(np.fliplr, "m", adjoints={"m": "_rt.np_fit(np.fliplr(g), m)"})
rule(np.flipud, "m", adjoints={"m": "_rt.np_fit(np.flipud(g), m)"})
rule(np.roll, "a, shift, axis=None",
     adjoints={"a": "_rt.np_fit(_rt.np_unroll(g, shift, axis), a)"})
rule(np.rot90, "m, k=1, axes=None", adjoints={"m": "_rt.np_unrot90(g, m, k, axes)"})


def _pad_call(array, pad_width, mode, constant_values):
    if mode == "constant":
        return np.pad(array, pad_width, mode, constant_values=constant_values)
    return np.pad(array, pad_width, mode)


_by_keyword(rule(np.pad, "array, pad_width, mode='constant', constant_values=0", adjoints={
    "array": "_rt.np_pad_adjoint(g, array, pad_width, mode)",
    "constant_values": "_rt.np_pad_value_adjoint(g, array, pad_width, mode, constant_values)",
}, note="modes constant (scalar constant_values too), edge, reflect, symmetric, wrap"),
    call=_pad_call)
rule(np.diag, "v, k=0", adjoints={"v": "_rt.np_diag_adjoint(g, v, k)"})
rule(np.diagonal, "a, offset=0, axis1=0, axis2=1",
     adjoints={"a": "_rt.np_diagonal_adjoint(g, a, offset, axis1, axis2)"})
_by_keyword(rule(_np("diagonal", np.linalg), "x, offset=0",
                 adjoints={"x": "_rt.np_diagonal_adjoint(g, x, offset, -2, -1)"}))
rule(np.tril, "m, k=0", adjoints={"m": "_rt.np_fit(np.tril(g, k), m)"})
rule(np.triu, "m, k=0", adjoints={"m": "_rt.np_fit(np.triu(g, k), m)"})
rule(np.diff, "a, n=1, axis=-1", adjoints={"a": "_rt.np_diff_adjoint(g, a, n, axis)"})
rule(np.sort, "a, axis=-1, kind=None, order=None",
     adjoints={"a": "_rt.np_sort_adjoint(g, a, axis)"})
rule(np.take, "a, indices, axis=None",
     adjoints={"a": "_rt.np_take_adjoint(g, a, indices, axis)"},
     note="repeated indices accumulate")
rule(np.take_along_axis, "arr, indices, axis=-1",
     adjoints={"arr": "_rt.np_take_along_axis_adjoint(g, arr, indices, axis)"})

# =====================================================================================
# Linear algebra
# =====================================================================================
_CURRENT[0] = "Linear algebra"
rule(np.dot, "a, b", adjoints=_two("np_dot_adjoint", "a", "b"))
for _fn in (np.matmul, _np("matmul", np.linalg)):
    rule(_fn, "x1, x2", adjoints=_two("np_matmul_grad", "x1", "x2"))
rule(np.inner, "a, b", adjoints=_two("np_inner_adjoint", "a", "b"))
rule(np.vdot, "a, b", adjoints=_two("np_vdot_adjoint", "a", "b"),
     note="conjugates its first argument: ā = conj(g)·b")
for _fn in (_np("vecdot"), _np("vecdot", np.linalg)):
    _by_keyword(rule(_fn, "x1, x2, axis=-1", adjoints=_two("np_vecdot_adjoint", "x1", "x2", "axis"),
                     note="conjugates its first argument"))
rule(np.outer, "a, b", adjoints=_two("np_outer_adjoint", "a", "b"))
rule(_np("outer", np.linalg), "x1, x2", adjoints=_two("np_outer_adjoint", "x1", "x2"))
rule(np.kron, "a, b", adjoints=_two("np_kron_adjoint", "a", "b"))
rule(np.cross, "a, b", adjoints=_two("np_cross_adjoint", "a", "b"),
     note="3-vectors along the last axis")
rule(_np("cross", np.linalg), "x1, x2", adjoints=_two("np_cross_adjoint", "x1", "x2"))
rule(np.tensordot, "a, b, axes=2", adjoints=_two("np_tensordot_adjoint", "a", "b", "axes"))
_by_keyword(rule(_np("tensordot", np.linalg), "x1, x2, axes=2",
                 adjoints=_two("np_tensordot_adjoint", "x1", "x2", "axes")))
_OPS = ["op0", "op1", "op2", "op3", "op4", "op5"]
for _n in range(1, len(_OPS) + 1):
    _names = _OPS[:_n]
    _tuple = "(" + ", ".join(_names) + ",)"
    rule(np.einsum, "subscripts, " + ", ".join(_names), adjoints={
        p: f"_rt.np_einsum_adjoint(g, subscripts, {_tuple}, {i})" for i, p in enumerate(_names)
    }, note="any subscripts (implicit output, '...', repeated labels); up to 6 operands")
_la = np.linalg
rule(_la.inv, "a", adjoints={"a": "_rt.np_inv_adjoint(g, a, ans)"})
rule(_la.det, "a", adjoints={"a": "_rt.np_det_adjoint(g, a, ans)"})
rule(_la.slogdet, "a", kind="other", adjoints={"a": "_rt.np_slogdet_adjoint(g, a)"},
     note="gradient through logabsdet")
rule(_la.solve, "a, b", adjoints=_two("np_solve_adjoint", "a", "b", "ans"))
_by_keyword(rule(_la.cholesky, "a, upper=False",
                 adjoints={"a": "_rt.np_cholesky_adjoint(g, a, ans, upper)"},
                 note="symmetrised gradient"))
rule(_la.eigh, "a, UPLO='L'", kind="other", adjoints={"a": "_rt.np_eigh_adjoint(g, a, ans)"},
     note="symmetrised gradient; eigenvalues and eigenvectors")
rule(_la.eigvalsh, "a, UPLO='L'", adjoints={"a": "_rt.np_eigvalsh_adjoint(g, a, UPLO)"},
     note="symmetrised gradient")
rule(_la.svd, "a, full_matrices=True, compute_uv=True, hermitian=False", kind="other",
     adjoints={"a": "_rt.np_svd_adjoint(g, a, ans, full_matrices, compute_uv)"},
     note="singular values and vectors (the first min(m, n) of U and V)")
rule(_np("svdvals", _la), "x", adjoints={"x": "_rt.np_svdvals_adjoint(g, x)"})
rule(_la.qr, "a, mode='reduced'", kind="other",
     adjoints={"a": "_rt.np_qr_adjoint(g, a, ans, mode)"},
     note="modes reduced and r (complete when m ≤ n)")
rule(_la.pinv, "a, rcond=None, hermitian=False",
     adjoints={"a": "_rt.np_pinv_adjoint(g, a, ans)"}, note="constant rank")
rule(_la.lstsq, "a, b, rcond=None", kind="other", adjoints=_two("np_lstsq_adjoint", "a", "b"),
     note="gradient through the solution (full rank)")
rule(_la.matrix_power, "a, n", adjoints={"a": "_rt.np_matrix_power_adjoint(g, a, n)"})

# =====================================================================================
# Constructors and conversions
# =====================================================================================
_CURRENT[0] = "Constructors and conversions"
rule(np.array, "object, dtype=None", adjoints={"object": "_rt.np_array_adjoint(g, object)"},
     note="back to the (nested) list structure")
rule(np.asarray, "a, dtype=None", adjoints={"a": "_rt.np_array_adjoint(g, a)"})
rule(np.asanyarray, "a, dtype=None", adjoints={"a": "_rt.np_array_adjoint(g, a)"})
rule(np.copy, "a", "1")
rule(_np("astype"), "x, dtype", "1", None, note="the gradient keeps the input's dtype")
rule(np.full, "shape, fill_value, dtype=None", None, "1", None)
_SPACE = "num=50, endpoint=True, retstep=False, dtype=None, axis=0"
_SPACE_ARGS = "num, endpoint, retstep, dtype, axis"
rule(np.linspace, "start, stop, " + _SPACE, kind="other", adjoints={
    "start": f"_rt.np_linspace_adjoint(g, start, stop, {_SPACE_ARGS}, 0)",
    "stop": f"_rt.np_linspace_adjoint(g, start, stop, {_SPACE_ARGS}, 1)",
}, note="to start and stop (arrays too, any axis; retstep's step too); none with an integer dtype")
rule(np.arange, "start, stop=None, step=None, dtype=None", adjoints={
    "start": "_rt.np_arange_adjoint(g, start, stop, step, dtype, 0)",
    "step": "_rt.np_arange_adjoint(g, start, stop, step, dtype, 2)",
}, note="start + i·step: to start and step (arange(n) counts: none)")
_LOG = "num, endpoint, base, dtype, axis"
rule(np.logspace, "start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0", adjoints={
    "start": f"_rt.np_logspace_adjoint(g, start, stop, ans, {_LOG}, 0)",
    "stop": f"_rt.np_logspace_adjoint(g, start, stop, ans, {_LOG}, 1)",
    "base": f"_rt.np_logspace_base_adjoint(g, start, stop, ans, {_LOG})",
}, note="to start, stop and base")
nondifferentiable_builtin(_hn._integer_dtype, reason="it tests a dtype")
nondifferentiable_builtin(_hn._has_zero, reason="it tests for zeros")
_GEO = "num, endpoint, dtype, axis"
rule(np.geomspace, "start, stop, num=50, endpoint=True, dtype=None, axis=0", adjoints={
    "start": f"_rt.np_geomspace_adjoint(g, start, stop, ans, {_GEO}, 0)",
    "stop": f"_rt.np_geomspace_adjoint(g, start, stop, ans, {_GEO}, 1)",
})
rule(np.full_like, "a, fill_value, dtype=None", None, "1", None)


# ----- array methods ------------------------------------------------------------------------
def _ndarray_reshape(a, *shape, order="C"):
    """``a.reshape(*shape)``: the key of the rule for the method."""
    return a.reshape(*shape, order=order)


def _ndarray_transpose(a, *axes):
    """``a.transpose(*axes)``: the key of the rule for the method."""
    return a.transpose(*axes)


def _ndarray_item(a, *args):
    """``a.item(*args)``: the key of the rule for the method."""
    return a.item(*args)


def _ndarray_tolist(a):
    """``a.tolist()``: the key of the rule for the method."""
    return a.tolist()


_CURRENT[0] = "Constructors and conversions"
rule(_ndarray_tolist, "a", path="ndarray.tolist", kind="other",
     adjoints={"a": "_rt.np_tolist_adjoint(g, a)"}, note="the list's adjoint as an array")
rule(_ndarray_item, "a", path="ndarray.item", kind="other",
     adjoints={"a": "_rt.np_item_adjoint(g, a, ())"}, note="x.item(), x.item(i), x.item(i, j, ...)")
_ITEM = ["i0", "i1", "i2", "i3", "i4", "i5"]
for _n in range(1, len(_ITEM) + 1):
    _i = ", ".join(_ITEM[:_n])
    rule(_ndarray_item, "a, " + _i, path="ndarray.item", kind="other",
         adjoints={"a": f"_rt.np_item_adjoint(g, a, ({_i},))"})

_CURRENT[0] = "Shape and indexing"
_DIMS = ["d0", "d1", "d2", "d3", "d4", "d5", "d6"]
rule(_ndarray_reshape, "a, shape", path="ndarray.reshape",
     adjoints={"a": "_rt.np_reshape_like(g, a)"},
     note="x.reshape(shape) and x.reshape(d0, d1, ...)")
rule(_ndarray_transpose, "a", path="ndarray.transpose",
     adjoints={"a": "_rt.np_fit(np.transpose(g), a)"},
     note="x.transpose(), (axes) and (i, j, ...)")
rule(_ndarray_transpose, "a, axes", path="ndarray.transpose",
     adjoints={"a": "_rt.np_fit(_rt.np_untranspose(g, axes), a)"})
for _n in range(2, len(_DIMS) + 1):
    _d = ", ".join(_DIMS[:_n])
    rule(_ndarray_reshape, "a, " + _d, path="ndarray.reshape",
         adjoints={"a": "_rt.np_reshape_like(g, a)"})
    rule(_ndarray_transpose, "a, " + _d, path="ndarray.transpose",
         adjoints={"a": f"_rt.np_fit(_rt.np_untranspose(g, ({_d})), a)"})

for _name, _fn in [
    ("sum", np.sum),
    ("mean", np.mean),
    ("prod", np.prod),
    ("max", np.max),
    ("min", np.min),
    ("std", np.std),
    ("var", np.var),
    ("cumsum", np.cumsum),
    ("cumprod", np.cumprod),
    ("dot", np.dot),
    ("reshape", _ndarray_reshape),
    ("transpose", _ndarray_transpose),
    ("ravel", np.ravel),
    ("flatten", np.ravel),
    ("squeeze", np.squeeze),
    ("swapaxes", np.swapaxes),
    ("clip", np.clip),
    ("conj", np.conjugate),
    ("conjugate", np.conjugate),
    ("astype", _np("astype")),
    ("copy", np.copy),
    ("trace", np.trace),
    ("diagonal", np.diagonal),
    ("repeat", np.repeat),
    ("take", np.take),
    ("item", _ndarray_item),
    ("tolist", _ndarray_tolist),
]:
    if _fn is not None:
        array_method(_name, _fn)

# =====================================================================================
# No gradient
# =====================================================================================
_random = [
    getattr(np.random, n)
    for n in (
        "rand", "randn", "random", "random_sample", "normal", "uniform", "randint", "choice",
        "permutation", "standard_normal", "seed", "default_rng", "binomial", "poisson",
        "exponential", "beta", "gamma", "multivariate_normal",
    )
    if hasattr(np.random, n)
]
nondifferentiable_builtin(
    np.shape, np.ndim, np.size, np.result_type, np.iscomplexobj, np.isrealobj,
    np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like,
    np.eye, np.identity, np.tri,
    np.indices, np.diag_indices, np.tril_indices, np.triu_indices,
    np.argmax, np.argmin, np.argsort, np.argwhere, np.nonzero, np.flatnonzero,
    np.nanargmax, np.nanargmin, np.searchsorted, np.digitize, np.count_nonzero,
    np.sign, np.signbit, np.heaviside, np.floor, np.ceil, np.round, np.around, np.rint,
    np.trunc, np.fix, np.floor_divide,
    np.isnan, np.isinf, np.isfinite, np.isclose, np.allclose, np.array_equal,
    np.iscomplex, np.isreal,
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
    np.any, np.all,
    *_random,
    reason="its result is constant, integer-valued or boolean",
)


# ----- numpy scalar types used as conversions ----------------------------------------------
for _scalar in (np.float64, np.float32, np.complex128):
    rule(_scalar, "x", "1", kind="same", path=f"np.{_scalar.__name__}",
         section="Constructors and conversions")
