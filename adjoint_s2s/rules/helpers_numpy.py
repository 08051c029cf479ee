"""Functions that NumPy rule templates call (reached as ``_rt.<name>`` in templates).

Each ``*_adjoint`` helper returns the whole contribution to one argument's adjoint,
already projected onto that argument (``fit``: broadcasting undone, real part for
real inputs, the input's float dtype, nested lists for list inputs). ``g`` is the
incoming adjoint; for functions returning tuples it may be ``None``, a tuple, a list
or a ``Tangent`` of a named tuple whose entries may be ``None``: ``parts`` reads it.

Conventions (Zygote's): the pullback of a holomorphic ``f`` is ``conj(f') * g``;
non-holomorphic functions (``abs``, ``angle``, ``vdot``, norms) are written out.
Matrix functions of a symmetric/Hermitian argument (``cholesky``, ``eigh``) return a
symmetrised gradient, as autograd, JAX and ChainRules do.
"""
import string
import sys

import numpy as np

from ..errors import MissingAdjointError
from ..runtime.accumulate import _PRIVATE_REFS
from ..runtime.project import conj, unbroadcast
from ..tangents import AbstractZero, Tangent, Thunk

__all__ = [
    "np_fit",
    "np_parts",
    # elementwise
    "np_absolute_adjoint",
    "np_angle_adjoint",
    "np_sqrt_adjoint",
    "np_reciprocal_adjoint",
    "np_power_base_partial",
    "np_float_power_base_partial",
    "np_power_exponent_partial",
    "np_max_share",
    "np_fmax_share",
    "np_clip_inside",
    "np_clip_below",
    "np_clip_above",
    "np_sinc_partial",
    "np_copysign_partial",
    "np_vecdot_adjoint_a",
    "np_vecdot_adjoint_b",
    # reductions
    "np_sum_adjoint",
    "np_mean_adjoint",
    "np_nansum_adjoint",
    "np_nanmean_adjoint",
    "np_prod_adjoint",
    "np_extremum_adjoint",
    "acc_extremum_adjoint",
    "np_extremum_select",
    "np_var_adjoint",
    "np_std_adjoint",
    "np_cumsum_adjoint",
    "np_cumprod_adjoint",
    "np_norm_adjoint",
    "np_vector_norm_adjoint",
    "np_matrix_norm_adjoint",
    "np_trace_adjoint",
    "np_average_adjoint_a",
    "np_average_adjoint_weights",
    # shape
    "np_untranspose",
    "np_reshape_like",
    "np_concatenate_adjoint",
    "np_stack_adjoint",
    "np_unstack_adjoint",
    "np_hstack_adjoint",
    "np_vstack_adjoint",
    "np_dstack_adjoint",
    "np_column_stack_adjoint",
    "np_split_adjoint",
    "np_tile_adjoint",
    "np_repeat_adjoint",
    "np_unroll",
    "np_unrot90",
    "np_pad_adjoint",
    "np_pad_value_adjoint",
    "np_diag_adjoint",
    "np_diagonal_adjoint",
    "np_diff_adjoint",
    "np_sort_adjoint",
    "np_take_adjoint",
    "np_take_along_axis_adjoint",
    "np_atleast_adjoint",
    "np_array_adjoint",
    "np_item_adjoint",
    "np_item_of",
    "np_tolist_adjoint",
    "np_tolist_of",
    "np_linspace_adjoint",
    "np_arange_adjoint",
    "np_logspace_adjoint",
    "np_logspace_base_adjoint",
    "np_geomspace_adjoint",
    # linear algebra
    "np_dot_adjoint_a",
    "np_dot_adjoint_b",
    "np_matmul_grad_a",
    "np_matmul_grad_b",
    "np_inner_adjoint_a",
    "np_inner_adjoint_b",
    "np_vdot_adjoint_a",
    "np_vdot_adjoint_b",
    "np_outer_adjoint_a",
    "np_outer_adjoint_b",
    "np_kron_adjoint_a",
    "np_kron_adjoint_b",
    "np_cross_adjoint_a",
    "np_cross_adjoint_b",
    "np_tensordot_adjoint_a",
    "np_tensordot_adjoint_b",
    "np_einsum_adjoint",
    "np_inv_adjoint",
    "np_det_adjoint",
    "np_slogdet_adjoint",
    "np_solve_adjoint_a",
    "np_solve_adjoint_b",
    "np_cholesky_adjoint",
    "np_eigh_adjoint",
    "np_eigvalsh_adjoint",
    "np_svd_adjoint",
    "np_svdvals_adjoint",
    "np_qr_adjoint",
    "np_pinv_adjoint",
    "np_lstsq_adjoint_a",
    "np_lstsq_adjoint_b",
    "np_matrix_power_adjoint",
    # scipy.special (rules/scipy.py)
    "sp_special",
    "sp_i1_partial",
    "sp_i1e_partial",
    "sp_logsumexp_adjoint",
    "sp_logsumexp_adjoint_b",
    "sp_softmax_adjoint",
    "sp_log_softmax_adjoint",
]

# ----- projection and structure ------------------------------------------------------------


def np_fit(grad, x):
    """Project a gradient onto the argument x: shape, real/complex, dtype, list structure."""
    if grad is None:
        return None
    if isinstance(x, np.ndarray):
        out = unbroadcast(grad, x)
        if isinstance(out, np.ndarray) and not out.flags.writeable:
            out = out.copy()  # a broadcast view: give the caller an array of its own
        return out
    if isinstance(x, (list, tuple)):
        garr = np.asarray(grad)
        shape = np.shape(x)
        if garr.shape != shape:
            garr = np.broadcast_to(garr, shape)
        return _like_structure(garr, x)
    if x is None or isinstance(x, (bool, np.bool_, str, bytes)):
        return None
    return unbroadcast(grad, x)


def _like_structure(garr, x):
    if isinstance(x, (list, tuple)):
        items = [_like_structure(garr[i], xi) for i, xi in enumerate(x)]
        return tuple(items) if isinstance(x, tuple) else items
    if isinstance(x, np.ndarray):
        return np_fit(np.array(garr), x)
    out = np_fit(garr, x)
    if isinstance(out, np.ndarray) and out.ndim == 0:
        out = out[()]
    if isinstance(out, np.generic):
        out = out.item()
    return out


def np_parts(g, n):
    """The n entries of the adjoint of a tuple output (None for structural zeros)."""
    if g is None or isinstance(g, AbstractZero):
        return (None,) * n
    if isinstance(g, Thunk):
        g = g.unthunk()
    if isinstance(g, Tangent):
        if g._elements:
            items = list(g._elements)
        else:
            names = getattr(g.primal_type, "_fields", None) or list(g._fields)
            items = [g._fields.get(k) for k in names]
    elif isinstance(g, dict):
        items = [g.get(i) for i in range(n)]
    elif isinstance(g, (list, tuple)):
        items = list(g)
    else:  # a bare array: the adjoint of the only differentiable output
        items = [g]
    items = items[:n] + [None] * (n - len(items))
    out = []
    for v in items:
        if isinstance(v, Thunk):
            v = v.unthunk()
        out.append(None if v is None or isinstance(v, AbstractZero) else v)
    return tuple(out)


def _sum_to(g, shape):
    """Sum g down to shape (undo broadcasting), keeping its dtype."""
    g = np.asarray(g)
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


def _float(x):
    x = np.asarray(x)
    return x if x.dtype.kind in "fc" else x.astype(float)


def _H(a):
    a = np.swapaxes(a, -1, -2)
    return a.conj() if np.iscomplexobj(a) else a


def _axes(axis, ndim):
    """axis (None, int or tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(int(a) % ndim for a in axis)) if ndim else ()
    return (int(axis) % ndim,) if ndim else ()


def _keep(g, shape, axis, keepdims):
    """The adjoint of a reduction, with the reduced axes back as size-1 axes."""
    g = np.asarray(g)
    if keepdims:
        return g
    axes = _axes(axis, len(shape))
    kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
    return g.reshape(kept)


def _spread(g, shape, axis, keepdims):
    """Broadcast the adjoint of a reduction back to the input's shape (a fresh array)."""
    return np.array(np.broadcast_to(_keep(g, shape, axis, keepdims), shape))


# ----- elementwise ---------------------------------------------------------------------------


def np_absolute_adjoint(g, x, ans):
    """|x|: g·sign(x) for reals; real(g)·x/|x| for complex (0 at 0)."""
    x = np.asarray(x)
    if np.iscomplexobj(x):
        out = np.where(ans == 0, 0, np.real(g) * x / np.where(ans == 0, 1, ans))
    else:
        out = np.real(g) * np.sign(x)
    return np_fit(out, x)


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


def np_sqrt_adjoint(g, x, ans):
    """sqrt's adjoint g·conj(0.5/ans), where a zero cotangent contributes zero, also at
    ans == 0 (0·inf would make it NaN: the diagonal of pairwise distances that np.triu
    drops). See np_reciprocal_adjoint."""
    return np_reciprocal_adjoint(g, x, ans, 2.0)


def np_reciprocal_adjoint(g, x, d, scale=1.0):
    """g·conj(1/(scale·d)), the adjoint of a function whose partial is 1/(scale·d) (log:
    d = x; log1p: d = 1 + x; sqrt: d = ans, scale 2; cbrt: d = ans², scale 3), with 0
    where g == 0, also where d == 0 and the partial is infinite. Where d has no zero
    (one min() pass shows it for positive d) it is the plain formula; otherwise 1 stands
    in for d where g == 0 (a double where: finite at second order too)."""
    c = 1 / scale  # (c / d: one array operation, not two)
    if not _has_zero(d):
        return np_fit(g * conj(c / d), x)
    zero = np.equal(g, 0)
    return np_fit(g * conj(c / np.where(zero, 1, d)), x)


def _has_zero(v):
    """Whether v has an exact zero (positive real v: one pass, no temporary array)."""
    v = np.asarray(v)
    if v.size == 0:
        return False
    if not np.iscomplexobj(v) and v.min() > 0:
        return False
    return bool(np.any(v == 0))


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


def np_float_power_base_partial(x1, x2):
    x1, x2 = np.asarray(x1), np.asarray(x2)
    return x2 * np.float_power(x1, np.where(x2 == 0, 1, x2 - 1))


def np_max_share(a, b, sign=1):
    """The share of maximum(a, b) (sign=1) or minimum (sign=-1) owed to a: ties split."""
    a, b = np.asarray(a), np.asarray(b)
    wins = a > b if sign > 0 else a < b
    return wins + 0.5 * (a == b)


def np_fmax_share(a, b, sign=1):
    """As max_share, for fmax/fmin: a NaN loses to a number."""
    a, b = np.asarray(a), np.asarray(b)
    na, nb = np.isnan(a), np.isnan(b)
    wins = (a > b if sign > 0 else a < b) | (nb & ~na)
    return wins + 0.5 * ((a == b) | (na & nb))


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


def np_sinc_partial(x):
    """d/dx sin(πx)/(πx) = (cos(πx) - sinc(x))/x, 0 at 0."""
    x = _float(x)
    zero = x == 0
    safe = np.where(zero, 1, x)
    return np.where(zero, 0, (np.cos(np.pi * safe) - np.sinc(safe)) / safe)


def np_copysign_partial(x1, x2):
    return np.where(np.signbit(x1) == np.signbit(x2), 1.0, -1.0)


def _expand_axis(g, axis):
    return np.expand_dims(np.asarray(g), axis)


def np_vecdot_adjoint_a(g, x1, x2, axis=-1):
    """vecdot(x1, x2) = Σ conj(x1)·x2 along axis: x̄1 = conj(g)·x2."""
    return np_fit(np.conj(_expand_axis(g, axis)) * np.asarray(x2), x1)


def np_vecdot_adjoint_b(g, x1, x2, axis=-1):
    return np_fit(_expand_axis(g, axis) * np.asarray(x1), x2)


# ----- reductions ----------------------------------------------------------------------------


def np_sum_adjoint(g, a, axis=None, keepdims=False):
    if axis is None and type(g) is float and type(a) is np.ndarray and a.dtype.kind == "f":
        return np.full(a.shape, g, dtype=a.dtype)  # a whole-array sum: one constant
    return np_fit(_spread(g, np.shape(a), axis, keepdims), a)


def np_mean_adjoint(g, a, axis=None, keepdims=False):
    if axis is None and type(g) is float and type(a) is np.ndarray and a.dtype.kind == "f":
        return np.full(a.shape, g / a.size, dtype=a.dtype)
    shape = np.shape(a)
    count = _count(shape, axis)
    return np_fit(_spread(g, shape, axis, keepdims) / count, a)


def _count(shape, axis):
    n = 1
    for i in _axes(axis, len(shape)):
        n *= shape[i]
    return n


def np_nansum_adjoint(g, a, axis=None, keepdims=False):
    a = np.asarray(a)
    return np_fit(_spread(g, a.shape, axis, keepdims) * ~np.isnan(a), a)


def np_nanmean_adjoint(g, a, axis=None, keepdims=False):
    a = np.asarray(a)
    ok = ~np.isnan(a)
    count = np.sum(ok, axis=_axes(axis, a.ndim), keepdims=True)
    return np_fit(_spread(g, a.shape, axis, keepdims) * ok / count, a)


def _to_last(x, axes):
    """Move axes to the end and merge them into one."""
    x = np.asarray(x)
    moved = np.moveaxis(x, axes, range(x.ndim - len(axes), x.ndim))
    return moved.reshape(moved.shape[: x.ndim - len(axes)] + (-1,)), moved.shape


def _from_last(y, moved_shape, axes, ndim):
    y = y.reshape(moved_shape)
    return np.moveaxis(y, range(ndim - len(axes), ndim), axes)


def np_prod_adjoint(g, a, axis=None, keepdims=False):
    """The product of the other factors, by prefix and suffix products (zeros are fine)."""
    a = np.asarray(a)
    axes = _axes(axis, a.ndim)
    if not axes:
        return np_fit(np.array(np.broadcast_to(g, a.shape)), a)
    flat, moved_shape = _to_last(a, axes)
    n = flat.shape[-1]
    if n == 0:
        return np_fit(np.zeros(a.shape), a)
    ones = np.ones(flat.shape[:-1] + (1,), dtype=flat.dtype)
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    right = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    others = left * right
    gk = np.reshape(np.asarray(g), flat.shape[:-1] + (1,))
    out = gk * np.conj(others)
    return np_fit(_from_last(out, moved_shape, axes, a.ndim), a)


def np_extremum_adjoint(g, a, ans, axis=None, keepdims=False):
    """max/min: the adjoint goes to the elements equal to the result, ties split evenly.

    Linear in g; its transpose is ``np_extremum_select`` (the rules for both, used when
    a pullback is differentiated again, are in rules/runtime_rules.py)."""
    a = np.asarray(a)
    gk = _keep(g, a.shape, axis, keepdims)
    mask, pos, unique = _extremum_positions(a, ans, axis, keepdims)
    if unique:  # one extremum per slice (no tie): g goes there, O(slices)
        out = np.zeros(a.shape, np.result_type(a.dtype, gk.dtype, float))
        if pos is not None:
            out.reshape(-1)[pos] = gk.reshape(-1)
        else:
            np.put_along_axis(out, np.argmax(mask, axis=axis, keepdims=True), gk, axis)
        return np_fit(out, a)
    count = np.sum(mask, axis=_axes(axis, a.ndim), keepdims=True)
    return np_fit((gk / count) * mask, a)


def acc_extremum_adjoint(acc, g, a, ans, axis=None, keepdims=False):
    """``acc + np_extremum_adjoint(g, a, ans, axis, keepdims)``, for generated code's
    accumulators. When the extremum is one element per slice, g goes to those positions
    of the accumulator: in place when only the calling variable holds it (as for
    ``runtime.acc``), else in a copy. Either way no zero array and no dense addition."""
    if type(acc) is np.ndarray and isinstance(a, np.ndarray) and acc.shape == a.shape:
        private = (
            acc.base is None
            and sys.getrefcount(acc) <= _PRIVATE_REFS
            and acc.flags.writeable
            and acc.flags.c_contiguous
        )
        gk = _keep(g, a.shape, axis, keepdims)
        if acc.dtype == np.result_type(a.dtype, gk.dtype, float):
            _mask, pos, _unique = _extremum_positions(a, ans, axis, keepdims)
            if pos is not None:
                out = acc if private else np.array(acc, order="C")
                out.reshape(-1)[pos] += gk.reshape(-1)
                return out
    return rt.acc(acc, np_extremum_adjoint(g, a, ans, axis, keepdims))


def _extremum_positions(a, ans, axis, keepdims):
    """(mask, positions, unique) for the extremum ans of a along axis. mask: the elements
    equal to the extremum (and the NaNs, when it is NaN: they take the gradient); unique:
    every slice has exactly one; positions: then, along a last (or the only) axis, their
    flat positions in the order of ans's elements, else None."""
    full = _keep(ans, a.shape, axis, keepdims)
    mask = a == full
    if np.isnan(np.asarray(ans)).any():
        return mask | (np.isnan(a) & np.isnan(full)), None, False
    if axis is not None and not isinstance(axis, int):
        return mask, None, False
    if axis is None or a.ndim == 1 or axis in (-1, a.ndim - 1):
        pos = np.flatnonzero(mask)  # in row order: slice by slice when one in each
        if pos.size == np.size(ans):
            return mask, pos, True
        return mask, None, False
    return mask, None, bool(np.count_nonzero(mask) == np.size(ans))


def np_extremum_select(c, a, ans, axis=None, keepdims=False):
    """The transpose of np_extremum_adjoint in its gradient argument: c averaged over the
    elements equal to the extremum, shaped like the extremum."""
    a = np.asarray(a)
    full = _keep(ans, a.shape, axis, keepdims)
    mask = a == full
    if np.isnan(np.asarray(ans)).any():
        mask = mask | (np.isnan(a) & np.isnan(full))
    axes = _axes(axis, a.ndim)
    count = np.sum(mask, axis=axes, keepdims=True)
    out = np.sum(np.asarray(c) * mask, axis=axes, keepdims=True) / count
    return out.reshape(np.shape(ans))


def np_var_adjoint(g, a, axis=None, ddof=0, keepdims=False):
    """var = Σ|a - mean|²/(N - ddof): ā = 2 g (a - mean)/(N - ddof)."""
    a = np.asarray(a)
    axes = _axes(axis, a.ndim)
    centred = a - np.mean(a, axis=axes, keepdims=True)
    return _var_adjoint(g, a, axes, ddof, keepdims, centred)


def _var_adjoint(g, a, axes, ddof, keepdims, centred):
    n = _count(a.shape, axes)
    gk = np.real(_keep(g, a.shape, axes, keepdims))
    return np_fit(2 * gk * centred / (n - ddof), a)


def _centred(a, axes):
    """a - mean(a), exactly 0 where all the values along axes are equal: the mean of equal
    values can be off by a rounding error, and std's adjoint divides it by the std,
    itself a rounding error (np.std(0.7 * np.ones(3)) is 1.1e-16, its derivative 0)."""
    centred = a - np.mean(a, axis=axes, keepdims=True)
    same = np.max(a, axis=axes, keepdims=True) == np.min(a, axis=axes, keepdims=True)
    return np.where(same, 0, centred)


def np_std_adjoint(g, a, ans, axis=None, ddof=0, keepdims=False):
    """std = sqrt(var): ā = var's adjoint of g/(2·std), 0 where the std is 0 (one value,
    or equal values), as autograd gives (the double where keeps second order finite)."""
    a = np.asarray(a)
    gk = np.real(_keep(g, a.shape, axis, keepdims))
    sk = _keep(ans, a.shape, axis, keepdims)
    zero = sk == 0
    half_inv = np.where(zero, 0, 0.5 / np.where(zero, 1, sk))
    axes = _axes(axis, a.ndim)
    return _var_adjoint(gk * half_inv, a, axes, ddof, True, _centred(a, axes))


def np_cumsum_adjoint(g, a, axis=None):
    g = np.asarray(g)
    if axis is None:
        out = np.cumsum(g.ravel()[::-1])[::-1]
        return np_fit(out.reshape(np.shape(a)), a)
    return np_fit(np.flip(np.cumsum(np.flip(g, axis), axis), axis), a)


def np_cumprod_adjoint(g, a, ans, axis=None):
    """Exact with zeros: ā_i = conj(Π_{k<i} a_k) · R_i, R_i = g_i + conj(a_{i+1}) R_{i+1}."""
    a = np.asarray(a)
    g = np.asarray(g)
    if axis is None:
        x, y, gm, ax = a.ravel(), np.asarray(ans).ravel(), g.ravel(), 0
    else:
        x, y, gm, ax = a, np.asarray(ans), g, axis
    x, y, gm = (np.moveaxis(v, ax, -1) for v in (x, y, gm))
    if np.all(x != 0):
        rev = np.cumsum((gm * np.conj(y))[..., ::-1], axis=-1)[..., ::-1]
        out = rev / np.conj(x)
    else:
        xc = np.conj(x)
        n = x.shape[-1]
        r = np.empty(np.broadcast(gm, xc).shape, dtype=np.result_type(gm, xc, float))
        r[..., n - 1] = gm[..., n - 1]
        for i in range(n - 2, -1, -1):
            r[..., i] = gm[..., i] + xc[..., i + 1] * r[..., i + 1]
        ones = np.ones(x.shape[:-1] + (1,), dtype=xc.dtype)
        left = np.cumprod(np.concatenate([ones, xc[..., :-1]], axis=-1), axis=-1)
        out = left * r
    out = np.moveaxis(out, -1, ax)
    return np_fit(out.reshape(a.shape), a)


def _unit(x):
    """x/|x| (sign for reals), 0 at 0."""
    ax = np.abs(x)
    return np.where(ax == 0, 0, x / np.where(ax == 0, 1, ax))


def _vector_grad(gk, x, nk, ord, axes):
    """Adjoint of a vector p-norm over axes; gk, nk broadcast against x."""
    ax = np.abs(x)
    gk = np.real(gk)
    if ord is None or ord == 2:
        return np.where(nk == 0, 0, gk * x / np.where(nk == 0, 1, nk))
    if ord in (np.inf, -np.inf):
        mask = ax == nk
        count = np.sum(mask, axis=axes, keepdims=True)
        return gk * _unit(x) * mask / count
    if ord == 0:
        return 0.0 * gk * ax
    if ord == 1:
        return gk * _unit(x)
    p = float(ord)
    return gk * _unit(x) * np.where(ax == 0, 0, (ax / np.where(nk == 0, 1, nk)) ** (p - 1))


def _matrix_grad(gk, x, nk, ord):
    """Adjoint of a matrix norm over the last two axes; gk, nk of shape (..., 1, 1)."""
    gk = np.real(gk)
    if ord in (None, "fro"):
        return np.where(nk == 0, 0, gk * x / np.where(nk == 0, 1, nk))
    if ord in ("nuc", 2, -2):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        if ord == "nuc":
            return gk * (u @ vh)
        i = 0 if ord == 2 else s.shape[-1] - 1  # the largest or the smallest
        return gk * (u[..., :, i : i + 1] @ vh[..., i : i + 1, :])
    if ord in (1, -1):
        sums = np.sum(np.abs(x), axis=-2, keepdims=True)
        mask = sums == nk
        return gk * _unit(x) * mask / np.sum(mask, axis=-1, keepdims=True)
    if ord in (np.inf, -np.inf):
        sums = np.sum(np.abs(x), axis=-1, keepdims=True)
        mask = sums == nk
        return gk * _unit(x) * mask / np.sum(mask, axis=-2, keepdims=True)
    raise NotImplementedError(f"no gradient for the matrix norm of order {ord!r}")


def _matrix_norm_over(g, x, ans, ord, axes, keepdims):
    x = np.asarray(x)
    r, c = (a % x.ndim for a in axes)
    kept = tuple(1 if i in (r, c) else n for i, n in enumerate(x.shape))
    gk = np.reshape(np.asarray(g), kept)
    nk = np.reshape(np.asarray(ans), kept)
    xm, gm, nm = (np.moveaxis(v, (r, c), (-2, -1)) for v in (x, gk, nk))
    return np_fit(np.moveaxis(_matrix_grad(gm, xm, nm, ord), (-2, -1), (r, c)), x)


def np_norm_adjoint(g, x, ans, ord=None, axis=None, keepdims=False):
    """np.linalg.norm: vector orders, and matrix orders fro, nuc, ±2, ±1, ±inf."""
    x = np.asarray(x)
    if axis is None:
        if ord is None or x.ndim == 1:
            axes = tuple(range(x.ndim))
            gk, nk = _keep(g, x.shape, None, keepdims), _keep(ans, x.shape, None, keepdims)
            return np_fit(_vector_grad(gk, x, nk, ord, axes), x)
        return _matrix_norm_over(g, x, ans, ord, (0, 1), keepdims)
    if isinstance(axis, (tuple, list)) and len(axis) == 2:
        return _matrix_norm_over(g, x, ans, ord, tuple(axis), keepdims)
    axes = _axes(axis, x.ndim)
    gk, nk = _keep(g, x.shape, axes, keepdims), _keep(ans, x.shape, axes, keepdims)
    return np_fit(_vector_grad(gk, x, nk, ord, axes), x)


def np_vector_norm_adjoint(g, x, ans, axis=None, keepdims=False, ord=2):
    x = np.asarray(x)
    axes = _axes(axis, x.ndim)
    gk, nk = _keep(g, x.shape, axes, keepdims), _keep(ans, x.shape, axes, keepdims)
    return np_fit(_vector_grad(gk, x, nk, ord, axes), x)


def np_matrix_norm_adjoint(g, x, ans, keepdims=False, ord="fro"):
    return _matrix_norm_over(g, x, ans, ord, (-2, -1), keepdims)


def np_trace_adjoint(g, a, offset=0, axis1=0, axis2=1):
    a = np.asarray(a)
    n1, n2 = a.shape[axis1], a.shape[axis2]
    eye = np.eye(n1, n2, k=offset)
    out = np.asarray(g)[..., None, None] * eye
    return np_fit(np.moveaxis(out, (-2, -1), (axis1 % a.ndim, axis2 % a.ndim)), a)


def _weights_like(w, a, axis):
    """Weights as an array that broadcasts against a (1-D weights along axis)."""
    w = np.asarray(w)
    if w.shape == a.shape or axis is None:
        return w
    shape = [1] * a.ndim
    shape[int(axis) % a.ndim] = w.size
    return w.reshape(shape)


def _no_returned(returned):
    if returned:
        raise NotImplementedError("no gradient for np.average(..., returned=True)")


def np_average_adjoint_a(g, a, ans, axis=None, weights=None, returned=False, keepdims=False):
    _no_returned(returned)
    if weights is None:
        return np_mean_adjoint(g, a, axis, keepdims)
    a_ = np.asarray(a)
    w = _weights_like(weights, a_, axis)
    wsum = np.sum(np.broadcast_to(w, a_.shape), axis=_axes(axis, a_.ndim), keepdims=True)
    return np_fit(_keep(g, a_.shape, axis, keepdims) * np.conj(w) / wsum, a)


def np_average_adjoint_weights(g, a, ans, axis=None, weights=None, returned=False, keepdims=False):
    _no_returned(returned)
    if weights is None:
        return None
    a = np.asarray(a)
    w = _weights_like(weights, a, axis)
    wsum = np.sum(np.broadcast_to(w, a.shape), axis=_axes(axis, a.ndim), keepdims=True)
    avg = _keep(ans, a.shape, axis, keepdims)
    out = _keep(g, a.shape, axis, keepdims) * np.conj(a - avg) / np.conj(wsum)
    out = _sum_to(np.broadcast_to(out, np.broadcast(out, w).shape), w.shape)
    return np_fit(out.reshape(np.shape(weights)), weights)


# ----- shape -------------------------------------------------------------------------------


def np_untranspose(g, axes=None):
    """The adjoint of transpose(x, axes): transpose back."""
    g = np.asarray(g)
    if axes is None:
        return np.transpose(g)
    if np.ndim(axes) == 0:
        axes = (axes,)
    return np.transpose(g, np.argsort([int(a) % g.ndim for a in axes]))


def np_reshape_like(g, a, order="C"):
    """The adjoint of any pure reshape of a (reshape, ravel, squeeze, expand_dims...)."""
    return np_fit(np.reshape(g, np.shape(a), order=order), a)


def _pack(grads, arrays):
    """Per-element gradients shaped like the sequence argument they belong to."""
    if isinstance(arrays, np.ndarray):
        return np_fit(np.stack(grads), arrays)
    out = [np_fit(gi, xi) for gi, xi in zip(grads, arrays)]
    return tuple(out) if isinstance(arrays, tuple) else out


def np_concatenate_adjoint(g, arrays, axis=0):
    g = np.asarray(g)
    shapes = [np.shape(x) for x in arrays]
    if axis is None:
        sizes = [int(np.prod(s)) for s in shapes]
        pieces = np.split(g.ravel(), np.cumsum(sizes)[:-1])
        return _pack([p.reshape(s) for p, s in zip(pieces, shapes)], arrays)
    sizes = [s[axis] for s in shapes]
    return _pack(np.split(g, np.cumsum(sizes)[:-1], axis=axis), arrays)


def np_stack_adjoint(g, arrays, axis=0):
    g = np.asarray(g)
    moved = np.moveaxis(g, axis, 0)
    if isinstance(arrays, np.ndarray):
        return np_fit(moved, arrays)
    return _pack(list(moved), arrays)


def np_unstack_adjoint(g, x, ans, axis=0):
    x = np.asarray(x)
    gs = np_parts(g, len(ans))
    if all(v is None for v in gs):
        return None
    full = [np.zeros(np.shape(y)) if v is None else np.asarray(v) for v, y in zip(gs, ans)]
    return np_fit(np.stack(full, axis=axis), x)


def _split_stacked(g, arrays, promote, axis_of):
    g = np.asarray(g)
    shapes = [np.shape(x) for x in arrays]
    promoted = [promote(s) for s in shapes]
    axis = axis_of(promoted)
    sizes = [s[axis] for s in promoted]
    pieces = np.split(g, np.cumsum(sizes)[:-1], axis=axis)
    return _pack([p.reshape(s) for p, s in zip(pieces, shapes)], arrays)


def _at_least(n):
    def promote(s):
        s = tuple(s)
        if len(s) >= n:
            return s
        if n == 1:
            return (1,)
        if n == 2:
            return (1,) * (2 - len(s)) + s
        return {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}[len(s)]

    return promote


def np_hstack_adjoint(g, tup):
    return _split_stacked(g, tup, _at_least(1), lambda ps: 0 if len(ps[0]) == 1 else 1)


def np_vstack_adjoint(g, tup):
    return _split_stacked(g, tup, _at_least(2), lambda ps: 0)


def np_dstack_adjoint(g, tup):
    return _split_stacked(g, tup, _at_least(3), lambda ps: 2)


def np_column_stack_adjoint(g, tup):
    def promote(s):
        s = tuple(s)
        return (s[0], 1) if len(s) == 1 else ((1, 1) if not s else s)

    return _split_stacked(g, tup, promote, lambda ps: 1)


def np_split_adjoint(g, ary, ans, axis=0):
    """The adjoint of a split: the pieces' adjoints (zeros where None) put back together."""
    gs = np_parts(g, len(ans))
    if all(v is None for v in gs):
        return None
    full = [np.zeros(np.shape(y)) if v is None else np.asarray(v) for v, y in zip(gs, ans)]
    return np_fit(np.concatenate(full, axis=axis), ary)


def np_tile_adjoint(g, A, reps):
    shape = np.shape(A)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    d = max(len(shape), len(reps))
    shape_p = (1,) * (d - len(shape)) + tuple(shape)
    reps_p = (1,) * (d - len(reps)) + reps
    inter = [v for r, s in zip(reps_p, shape_p) for v in (r, s)]
    out = np.reshape(g, inter).sum(axis=tuple(range(0, 2 * d, 2)))
    return np_fit(out.reshape(shape), A)


def np_repeat_adjoint(g, a, repeats, axis=None):
    a = np.asarray(a)
    g = np.asarray(g)
    if axis is None:
        src_shape, gm, ax = (a.size,), g.ravel(), 0
    else:
        src_shape, gm, ax = a.shape, g, int(axis) % a.ndim
    n = src_shape[ax]
    gm = np.moveaxis(gm, ax, 0)
    if np.ndim(repeats) == 0 or np.size(repeats) == 1:
        r = int(np.ravel(repeats)[0])
        out = gm.reshape((n, r) + gm.shape[1:]).sum(axis=1)
    else:
        out = np.zeros((n,) + gm.shape[1:], dtype=gm.dtype)
        np.add.at(out, np.repeat(np.arange(n), repeats), gm)
    out = np.moveaxis(out, 0, ax)
    return np_fit(out.reshape(a.shape), a)


def np_unroll(g, shift, axis=None):
    return np.roll(g, -np.asarray(shift), axis)


def np_unrot90(g, m, k=1, axes=None):
    return np_fit(np.rot90(g, -k, (0, 1) if axes is None else axes), m)


def _pad_pairs(pad_width, ndim):
    return np.broadcast_to(np.asarray(pad_width, dtype=int), (ndim, 2))


def np_pad_adjoint(g, array, pad_width, mode="constant"):
    """The adjoint of np.pad: the inner block for constant padding; for the modes that
    copy elements (edge, reflect, symmetric, wrap) every copy adds back to its source."""
    x = np.asarray(array)
    g = np.asarray(g)
    if mode == "constant" or mode is None:
        pw = _pad_pairs(pad_width, x.ndim)
        inner = tuple(slice(int(b), int(b) + n) for (b, _), n in zip(pw, x.shape))
        return np_fit(g[inner], array)
    if mode in ("edge", "reflect", "symmetric", "wrap"):
        idx = np.pad(np.arange(x.size).reshape(x.shape), pad_width, mode).ravel()
        flat = g.ravel()
        out = np.bincount(idx, weights=np.real(flat), minlength=x.size)
        if np.iscomplexobj(flat):
            out = out + 1j * np.bincount(idx, weights=np.imag(flat), minlength=x.size)
        return np_fit(out.reshape(x.shape), array)
    raise NotImplementedError(f"no gradient for np.pad with mode={mode!r}")


def np_pad_value_adjoint(g, array, pad_width, mode="constant", constant_values=0):
    """The adjoint of a scalar constant_values: the sum of g over the padding."""
    if mode != "constant":
        return None
    if np.ndim(constant_values) != 0:
        raise NotImplementedError("gradient for constant_values given per axis")
    x = np.asarray(array)
    g = np.asarray(g)
    pw = _pad_pairs(pad_width, x.ndim)
    inner = tuple(slice(int(b), int(b) + n) for (b, _), n in zip(pw, x.shape))
    return np_fit(np.sum(g) - np.sum(g[inner]), constant_values)


def np_diagonal_adjoint(g, a, offset=0, axis1=0, axis2=1):
    a = np.asarray(a)
    g = np.asarray(g)
    ax1, ax2 = axis1 % a.ndim, axis2 % a.ndim
    n1, n2 = a.shape[ax1], a.shape[ax2]
    rest = g.shape[:-1]
    out = np.zeros(rest + (n1, n2), dtype=np.result_type(g, float))
    d = g.shape[-1]
    i = np.arange(d)
    out[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return np_fit(np.moveaxis(out, (-2, -1), (ax1, ax2)), a)


def np_diag_adjoint(g, v, k=0):
    if np.ndim(v) == 1:
        return np_fit(np.diagonal(np.asarray(g), k).copy(), v)
    return np_diagonal_adjoint(g, v, k, 0, 1)


def np_diff_adjoint(g, a, n=1, axis=-1):
    out = np.asarray(g)
    pad = [(0, 0)] * out.ndim
    pad[axis % out.ndim] = (1, 1)
    for _ in range(n):
        out = -np.diff(np.pad(out, pad), axis=axis)
    return np_fit(out, a)


def np_sort_adjoint(g, a, axis=-1):
    a = np.asarray(a)
    g = np.asarray(g)
    if axis is None:
        order = np.argsort(a, axis=None, kind="stable")
        return np_fit(np.ravel(g)[np.argsort(order)].reshape(a.shape), a)
    order = np.argsort(a, axis=axis, kind="stable")
    return np_fit(np.take_along_axis(g, np.argsort(order, axis=axis), axis=axis), a)


def np_take_adjoint(g, a, indices, axis=None):
    a = np.asarray(a)
    g = np.asarray(g)
    dtype = np.result_type(g, float)
    if axis is None:
        out = np.zeros(a.size, dtype=dtype)
        np.add.at(out, np.asarray(indices), g)
        return np_fit(out.reshape(a.shape), a)
    ax = int(axis) % a.ndim
    out = np.zeros(a.shape, dtype=dtype)
    np.add.at(out, (slice(None),) * ax + (np.asarray(indices),), g)
    return np_fit(out, a)


def np_take_along_axis_adjoint(g, arr, indices, axis=-1):
    arr = np.asarray(arr)
    g = np.asarray(g)
    indices = np.asarray(indices)
    if axis is None:
        out = np.zeros(arr.size, dtype=np.result_type(g, float))
        np.add.at(out, indices, g)
        return np_fit(out.reshape(arr.shape), arr)
    ax = int(axis) % arr.ndim
    index = []
    for d in range(arr.ndim):
        if d == ax:
            index.append(indices)
        else:
            shape = [1] * arr.ndim
            shape[d] = indices.shape[d]
            index.append(np.arange(indices.shape[d]).reshape(shape))
    out = np.zeros(arr.shape, dtype=np.result_type(g, float))
    np.add.at(out, tuple(index), g)
    return np_fit(out, arr)


def np_atleast_adjoint(g, i, x):
    """atleast_Nd with several arguments returns a tuple: entry i is a reshape of x."""
    gi = np_parts(g, i + 1)[i]
    return None if gi is None else np_reshape_like(gi, x)


def _space_weights(g, num, endpoint, axis, which):
    """g (the adjoint of linspace's samples) and the weight of start (which=0) or stop
    (which=1) in each sample, shaped to broadcast along the samples' axis."""
    g = np.asarray(g)
    t = np.linspace(0.0, 1.0, int(num), endpoint=endpoint)  # 0 first, exactly 1 last
    ax = int(axis) % g.ndim
    t = t.reshape((1,) * ax + (t.size,) + (1,) * (g.ndim - ax - 1))
    return g, ax, (t if which else 1 - t)


def _integer_dtype(dtype):
    return dtype is not None and not np.issubdtype(np.dtype(dtype), np.inexact)


def np_linspace_adjoint(g, start, stop, num=50, endpoint=True, retstep=False, dtype=None,
                        axis=0, which=0):
    """linspace = start + (stop - start)·t along axis: start gets Σ g·(1 - t), stop Σ g·t
    (with retstep, the step (stop - start)/div adds ∓g_step/div). An integer dtype
    floors the samples: no gradient."""
    x = stop if which else start
    if _integer_dtype(dtype):
        return None
    g_step = None
    if retstep:
        g, g_step = np_parts(g, 2)
    out = None
    if g is not None:
        g, ax, w = _space_weights(g, num, endpoint, axis, which)
        out = np.sum(g * w, axis=ax)
    div = int(num) - 1 if endpoint else int(num)
    if g_step is not None and div > 0:
        d = np.asarray(g_step) / div * (1 if which else -1)
        out = d if out is None else out + d
    return None if out is None else np_fit(out, x)


def np_arange_adjoint(g, start, stop=None, step=None, dtype=None, which=0):
    """arange(start, stop, step) = start + i·step (its length is piecewise constant):
    start gets Σ g, step Σ i·g, stop nothing. arange(n) counts: no gradient."""
    if g is None or stop is None or _integer_dtype(dtype):
        return None
    g = np.asarray(g)
    if which == 0:
        return np_fit(np.sum(g), start)
    if step is None:
        return None
    return np_fit(np.sum(g * np.arange(g.shape[0])), step)


def np_logspace_adjoint(g, start, stop, ans, num=50, endpoint=True, base=10.0, dtype=None,
                        axis=0, which=0):
    """logspace = base**linspace(start, stop): linspace's adjoint of g·ans·log(base)."""
    if g is None or _integer_dtype(dtype):
        return None
    gl = np.asarray(g) * np.conj(np.asarray(ans) * np.log(_logspace_base(base, ans, axis)))
    return np_linspace_adjoint(gl, start, stop, num, endpoint, False, None, axis, which)


def _logspace_base(base, ans, axis):
    base = np.asarray(base)
    if base.ndim:  # an array base broadcasts like start and stop: the samples' axis inside
        base = np.expand_dims(base, int(axis) % np.ndim(ans))
    return base


def np_logspace_base_adjoint(g, start, stop, ans, num=50, endpoint=True, base=10.0,
                             dtype=None, axis=0):
    """∂(base**u)/∂base = u·base**u/base, u the linspace exponents."""
    if g is None or _integer_dtype(dtype):
        return None
    u = np.linspace(start, stop, int(num), endpoint=endpoint, axis=axis)
    b = _logspace_base(base, ans, axis)
    return np_fit(np.asarray(g) * np.conj(u * np.asarray(ans) / b), base)


def np_geomspace_adjoint(g, start, stop, ans, num=50, endpoint=True, dtype=None, axis=0,
                         which=0):
    """geomspace = start·(stop/start)**t: ∂/∂start = ans·(1 - t)/start, ∂/∂stop = ans·t/stop."""
    if g is None or _integer_dtype(dtype):
        return None
    x = stop if which else start
    g, ax, w = _space_weights(g, num, endpoint, axis, which)
    xe = np.expand_dims(np.asarray(x), ax) if np.ndim(x) else np.asarray(x)
    return np_fit(np.sum(g * np.conj(np.asarray(ans) * w / xe), axis=ax), x)


def _item_index(a, idx):
    """The flat position that a.item(*idx) reads."""
    if len(idx) == 1 and isinstance(idx[0], tuple):
        idx = idx[0]
    if not idx:
        if np.size(a) != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return 0
    if len(idx) == 1:
        return int(idx[0]) % np.size(a)
    return int(np.ravel_multi_index(tuple(int(i) for i in idx), np.shape(a), mode="wrap"))


def np_item_adjoint(g, a, idx):
    """a.item(*idx) reads one element: g at that position, zeros elsewhere."""
    if g is None:
        return None
    a = np.asarray(a)
    out = np.zeros(a.size, np.result_type(a.dtype, np.asarray(g).dtype, float))
    out[_item_index(a, idx)] = g
    return np_fit(out.reshape(a.shape), a)


def np_item_of(c, a, idx):
    """The transpose of np_item_adjoint in its gradient: the element of c that a.item reads."""
    if c is None:
        return None
    return np.ravel(np.asarray(c))[_item_index(a, idx)]


def _fill_from_lists(out, g, at=()):
    """Write the nested lists g into out (None entries, at any depth, stay zeros)."""
    if g is None:
        return
    if len(at) == out.ndim:
        out[at] = g
        return
    for i, gi in enumerate(g):
        _fill_from_lists(out, gi, at + (i,))


def np_tolist_adjoint(g, a):
    """a.tolist() is a (nested) list of a's elements: the list's adjoint as an array
    (None entries are zeros)."""
    if g is None:
        return None
    a = np.asarray(a)
    out = np.zeros(a.shape, np.result_type(a.dtype, float, *_list_dtypes(g)))
    _fill_from_lists(out, g)
    return np_fit(out, a)


def _list_dtypes(g):
    if isinstance(g, (list, tuple)):
        return [t for x in g for t in _list_dtypes(x)]
    return [] if g is None else [np.asarray(g).dtype]


def np_tolist_of(c):
    """The transpose of np_tolist_adjoint in its gradient: the array as nested lists."""
    return None if c is None else np.asarray(c).tolist()


def np_index_trick_rule(obj):
    """What ``np.r_[...]`` / ``np.c_[...]`` computes, as a differentiable function of the
    items (None for other objects)."""
    if type(obj) is type(np.r_):
        return np_r_concat
    if type(obj) is type(np.c_):
        return np_c_concat
    return None


def np_r_concat(*keys):
    """np.r_[keys]: the items along the first axis (a number is one row, a slice a range)."""
    pieces = []
    for k in keys:
        if isinstance(k, slice):
            pieces.append(np_index_trick_range(k))
        else:
            pieces.append(np.atleast_1d(np.asarray(k)))
    return np.concatenate(pieces, 0)


def np_c_concat(*keys):
    """np.c_[keys]: the items along the last axis (a vector is a column, a number 1×1)."""
    pieces = []
    for k in keys:
        a = np_index_trick_range(k) if isinstance(k, slice) else np.asarray(k)
        if np.ndim(a) < 2:
            a = np.reshape(a, (-1, 1))
        pieces.append(a)
    return np.concatenate(pieces, -1)


def np_index_trick_range(k):
    """A slice item of np.r_ / np.c_: its range of numbers (a constant)."""
    return np.r_[k]


def np_index_trick_check(obj, keys, y):
    """Refuse a form of np.r_ / np.c_ that np_r_concat / np_c_concat do not reproduce
    (string directives, ...): the gradient would be of something else."""
    name = "np.c_" if type(obj) is type(np.c_) else "np.r_"
    ok = not any(isinstance(k, str) for k in keys)
    if ok:
        want = obj[keys[0] if len(keys) == 1 else tuple(keys)]
        ok = np.shape(want) == np.shape(y) and bool(np.array_equal(want, y, equal_nan=True))
    if not ok:
        raise MissingAdjointError(obj, f"this form of {name}[...] has no rule (string "
                                  "directives, matrices): write it with np.concatenate or np.stack")


def np_array_adjoint(g, obj):
    """np.array / np.asarray: the adjoint goes back to the (nested) list structure."""
    return np_fit(g, obj)


# ----- linear algebra ------------------------------------------------------------------------


def _scalar_product(g, other, x):
    return np_fit(np.asarray(g) * np.conj(other), x)


def np_dot_adjoint_a(g, a, b):
    a_, b_ = np.asarray(a), np.asarray(b)
    if a_.ndim == 0 or b_.ndim == 0:
        return _scalar_product(g, b_, a)
    g = np.asarray(g)
    bc = np.conj(b_)
    if b_.ndim == 1:
        return np_fit(g[..., None] * bc, a)
    g_axes = list(range(a_.ndim - 1, g.ndim))
    b_axes = [i for i in range(b_.ndim) if i != b_.ndim - 2]
    return np_fit(np.tensordot(g, bc, axes=(g_axes, b_axes)), a)


def np_dot_adjoint_b(g, a, b):
    a_, b_ = np.asarray(a), np.asarray(b)
    if a_.ndim == 0 or b_.ndim == 0:
        return _scalar_product(g, a_, b)
    g = np.asarray(g)
    ac = np.conj(a_)
    lead = a_.ndim - 1
    out = np.tensordot(ac, g, axes=(list(range(lead)), list(range(lead))))
    if b_.ndim >= 2:
        out = np.moveaxis(out, 0, -2)
    return np_fit(out, b)


def _promote_matmul(g, a, b):
    a_, b_ = np.asarray(a), np.asarray(b)
    g = np.asarray(g)
    if a_.ndim == 1 and b_.ndim == 1:
        g = g.reshape(1, 1)
    elif a_.ndim == 1:
        g = g[..., None, :]
    elif b_.ndim == 1:
        g = g[..., None]
    if a_.ndim == 1:
        a_ = a_[None, :]
    if b_.ndim == 1:
        b_ = b_[:, None]
    return g, a_, b_


def np_matmul_grad_a(g, a, b):
    g2, a2, b2 = _promote_matmul(g, a, b)
    out = _sum_to(g2 @ _H(b2), a2.shape)
    return np_fit(out.reshape(np.shape(a)), a)


def np_matmul_grad_b(g, a, b):
    g2, a2, b2 = _promote_matmul(g, a, b)
    out = _sum_to(_H(a2) @ g2, b2.shape)
    return np_fit(out.reshape(np.shape(b)), b)


def np_inner_adjoint_a(g, a, b):
    a_, b_ = np.asarray(a), np.asarray(b)
    if a_.ndim == 0 or b_.ndim == 0:
        return _scalar_product(g, b_, a)
    g = np.asarray(g)
    nb = b_.ndim - 1
    g_axes = list(range(g.ndim - nb, g.ndim))
    return np_fit(np.tensordot(g, np.conj(b_), axes=(g_axes, list(range(nb)))), a)


def np_inner_adjoint_b(g, a, b):
    a_, b_ = np.asarray(a), np.asarray(b)
    if a_.ndim == 0 or b_.ndim == 0:
        return _scalar_product(g, a_, b)
    g = np.asarray(g)
    na = a_.ndim - 1
    out = np.tensordot(g, np.conj(a_), axes=(list(range(na)), list(range(na))))
    return np_fit(out, b)


def np_vdot_adjoint_a(g, a, b):
    """vdot(a, b) = Σ conj(a)·b is antilinear in a: ā = conj(g)·b."""
    return np_fit((np.conj(g) * np.ravel(b)).reshape(np.shape(a)), a)


def np_vdot_adjoint_b(g, a, b):
    return np_fit((np.asarray(g) * np.ravel(a)).reshape(np.shape(b)), b)


def np_outer_adjoint_a(g, a, b):
    return np_fit((np.asarray(g) @ np.conj(np.ravel(b))).reshape(np.shape(a)), a)


def np_outer_adjoint_b(g, a, b):
    return np_fit((np.conj(np.ravel(a)) @ np.asarray(g)).reshape(np.shape(b)), b)


def _kron_layout(a, b):
    sa, sb = np.shape(a), np.shape(b)
    d = max(len(sa), len(sb))
    sa = (1,) * (d - len(sa)) + tuple(sa)
    sb = (1,) * (d - len(sb)) + tuple(sb)
    inter = [v for pa, pb in zip(sa, sb) for v in (pa, pb)]
    return d, sa, sb, inter


def np_kron_adjoint_a(g, a, b):
    d, sa, sb, inter = _kron_layout(a, b)
    gr = np.reshape(g, inter)
    bb = np.conj(np.reshape(b, [v for s in sb for v in (1, s)]))
    out = (gr * bb).sum(axis=tuple(range(1, 2 * d, 2)))
    return np_fit(out.reshape(np.shape(a)), a)


def np_kron_adjoint_b(g, a, b):
    d, sa, sb, inter = _kron_layout(a, b)
    gr = np.reshape(g, inter)
    aa = np.conj(np.reshape(a, [v for s in sa for v in (s, 1)]))
    out = (gr * aa).sum(axis=tuple(range(0, 2 * d, 2)))
    return np_fit(out.reshape(np.shape(b)), b)


def np_cross_adjoint_a(g, a, b):
    return np_fit(np.cross(np.conj(b), g), a)


def np_cross_adjoint_b(g, a, b):
    return np_fit(np.cross(g, np.conj(a)), b)


def _tensordot_axes(axes, na, nb):
    if np.ndim(axes) == 0:
        n = int(axes)
        return list(range(na - n, na)), list(range(n))
    xa, xb = axes
    xa = [int(xa)] if np.ndim(xa) == 0 else [int(v) for v in xa]
    xb = [int(xb)] if np.ndim(xb) == 0 else [int(v) for v in xb]
    return [v % na for v in xa], [v % nb for v in xb]


def np_tensordot_adjoint_a(g, a, b, axes=2):
    a_, b_ = np.asarray(a), np.asarray(b)
    xa, xb = _tensordot_axes(axes, a_.ndim, b_.ndim)
    free_a = [i for i in range(a_.ndim) if i not in xa]
    free_b = [i for i in range(b_.ndim) if i not in xb]
    g = np.asarray(g)
    g_b = list(range(len(free_a), g.ndim))
    # the result's axes: a's free axes, then b's contracted axes in increasing order
    out = np.tensordot(g, np.conj(b_), axes=(g_b, free_b))
    order = free_a + [xa[xb.index(v)] for v in sorted(xb)]
    return np_fit(np.transpose(out, np.argsort(order)), a)


def np_tensordot_adjoint_b(g, a, b, axes=2):
    a_, b_ = np.asarray(a), np.asarray(b)
    xa, xb = _tensordot_axes(axes, a_.ndim, b_.ndim)
    free_a = [i for i in range(a_.ndim) if i not in xa]
    free_b = [i for i in range(b_.ndim) if i not in xb]
    g = np.asarray(g)
    # the result's axes: a's contracted axes in increasing order, then b's free axes
    out = np.tensordot(np.conj(a_), g, axes=(free_a, list(range(len(free_a)))))
    order = [xb[xa.index(v)] for v in sorted(xa)] + free_b
    return np_fit(np.transpose(out, np.argsort(order)), b)


def _einsum_specs(subscripts, shapes):
    """Input and output labels with '...' spelled out as fresh letters (right-aligned)."""
    if not isinstance(subscripts, str):
        raise NotImplementedError("einsum gradients need the subscripts as a string")
    s = subscripts.replace(" ", "")
    if "->" in s:
        lhs, out = s.split("->")
    else:
        lhs, out = s, None
    ins = lhs.split(",")
    if len(ins) != len(shapes):
        raise ValueError(f"einsum: {len(ins)} operand specs for {len(shapes)} operands")
    free = [c for c in string.ascii_letters if c not in s]
    ell = 0
    for spec, shape in zip(ins, shapes):
        if "..." in spec:
            ell = max(ell, len(shape) - (len(spec) - 3))
    ell_letters = "".join(free[:ell])
    specs = []
    for spec, shape in zip(ins, shapes):
        if "..." in spec:
            k = len(shape) - (len(spec) - 3)
            spec = spec.replace("...", ell_letters[ell - k :] if k else "")
        specs.append(spec)
    if out is None:
        counts = {}
        for spec in ins:
            for c in spec.replace("...", ""):
                counts[c] = counts.get(c, 0) + 1
        out = ell_letters + "".join(sorted(c for c, n in counts.items() if n == 1))
    else:
        out = out.replace("...", ell_letters)
    return specs, out


def np_einsum_adjoint(g, subscripts, operands, i):
    """The adjoint of operand i of an einsum: an einsum of g with the other operands,
    broadcast over labels only operand i has, and put on the diagonal for labels
    repeated in operand i."""
    ops = [np.asarray(o) for o in operands]
    specs, out = _einsum_specs(subscripts, [o.shape for o in ops])
    sizes = {}
    for spec, o in zip(specs, ops):
        for c, n in zip(spec, o.shape):
            if n != 1 or c not in sizes:
                sizes[c] = max(sizes.get(c, 1), n)
    eff_specs, eff_ops = [], []
    for spec, o in zip(specs, ops):  # drop size-1 axes that broadcast
        keep = [k for k, c in enumerate(spec) if not (o.shape[k] == 1 and sizes[c] > 1)]
        eff_specs.append("".join(spec[k] for k in keep))
        eff_ops.append(o.reshape([o.shape[k] for k in keep]))
    spec_i = eff_specs[i]
    target = ""
    for c in spec_i:
        if c not in target:
            target += c
    others = [np.conj(o) for j, o in enumerate(eff_ops) if j != i]
    other_specs = [s for j, s in enumerate(eff_specs) if j != i]
    avail = out + "".join(other_specs)  # labels the einsum of the adjoint can produce
    comp = "".join(c for c in target if c in avail)
    expr = ",".join([out] + other_specs) + "->" + comp
    G = np.einsum(expr, np.asarray(g), *others)
    missing = [c for c in target if c not in comp]
    if missing:
        G = G.reshape(G.shape + (1,) * len(missing))
        G = np.transpose(G, np.argsort([target.index(c) for c in comp + "".join(missing)]))
        G = np.broadcast_to(G, [sizes[c] for c in target])
    if len(target) < len(spec_i):  # repeated labels: write onto the diagonal
        full = np.zeros([sizes[c] for c in spec_i], dtype=np.result_type(G, float))
        grids = np.indices([sizes[c] for c in target], sparse=True)
        full[tuple(grids[target.index(c)] for c in spec_i)] = G
        G = full
    return np_fit(np.reshape(G, np.shape(operands[i])), operands[i])


def np_inv_adjoint(g, a, ans):
    ih = _H(ans)
    return np_fit(-(ih @ np.asarray(g) @ ih), a)


def np_det_adjoint(g, a, ans):
    a_ = np.asarray(a)
    scale = np.expand_dims(np.asarray(g) * np.conj(ans), (-2, -1))
    return np_fit(scale * _H(np.linalg.inv(a_)), a)


def np_slogdet_adjoint(g, a):
    _, glog = np_parts(g, 2)
    if glog is None:
        return None
    return np_fit(np.real(np.asarray(glog))[..., None, None] * _H(np.linalg.inv(np.asarray(a))), a)


def np_solve_adjoint_b(g, a, b, ans=None):
    a_, b_ = np.asarray(a), np.asarray(b)
    g = np.asarray(g)
    if b_.ndim == 1:
        out = np.linalg.solve(_H(a_), g[..., None])[..., 0]
    else:
        out = np.linalg.solve(_H(a_), g)
    return np_fit(out, b)


def np_solve_adjoint_a(g, a, b, ans):
    a_, b_ = np.asarray(a), np.asarray(b)
    g = np.asarray(g)
    if b_.ndim == 1:
        gb = np.linalg.solve(_H(a_), g[..., None])
        out = -gb * np.conj(np.asarray(ans))[..., None, :]
    else:
        gb = np.linalg.solve(_H(a_), g)
        out = -(gb @ _H(ans))
    return np_fit(out, a)


def _sym(x):
    return 0.5 * (x + _H(x))


def np_cholesky_adjoint(g, a, ans, upper=False):
    """A = L Lᴴ: Ā = sym(L⁻ᴴ Φ(Lᴴ L̄) L⁻¹), Φ taking the lower triangle, diagonal halved."""
    L = _H(ans) if upper else np.asarray(ans)
    gL = _H(g) if upper else np.asarray(g)
    P = _H(L) @ gL
    n = L.shape[-1]
    phi = np.tril(P) * (1 - 0.5 * np.eye(n))
    X = np.linalg.solve(_H(L), phi)  # L⁻ᴴ Φ
    S = _H(np.linalg.solve(_H(L), _H(X)))  # L⁻ᴴ Φ L⁻¹
    return np_fit(_sym(S), a)


def _gap_inverse(w):
    """F[i, j] = 1/(w[j] - w[i]) off the diagonal, 0 on it."""
    d = w[..., None, :] - w[..., :, None]
    n = w.shape[-1]
    eye = np.eye(n, dtype=bool)
    return np.where(eye, 0, 1 / np.where(eye, 1, d))


def np_eigh_adjoint(g, a, ans):
    """A = V diag(w) Vᴴ: Ā = sym(V (diag(w̄) + F∘(Vᴴ V̄)) Vᴴ), F = 1/(w_j - w_i)."""
    gw, gv = np_parts(g, 2)
    if gw is None and gv is None:
        return None
    w, v = ans[0], ans[1]
    inner = np.zeros(v.shape, dtype=np.result_type(v, float))
    if gw is not None:
        inner = inner + np.real(np.asarray(gw))[..., :, None] * np.eye(w.shape[-1])
    if gv is not None:
        inner = inner + _gap_inverse(w) * (_H(v) @ gv)
    return np_fit(_sym(v @ inner @ _H(v)), a)


def np_eigvalsh_adjoint(g, a, UPLO="L"):
    w, v = np.linalg.eigh(a, UPLO)
    out = (v * np.real(np.asarray(g))[..., None, :]) @ _H(v)
    return np_fit(_sym(out), a)


def np_svdvals_adjoint(g, a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np_fit((u * np.asarray(g)[..., None, :]) @ vh, a)


def np_svd_adjoint(g, a, ans, full_matrices=True, compute_uv=True):
    """A = U S Vᴴ. Singular values: Ā = U diag(s̄) Vᴴ; vectors: the standard formula
    (Townsend; Wan and Zhang for complex), on the first k = min(m, n) columns."""
    if not compute_uv:
        return np_svdvals_adjoint(g, a)
    gu, gs, gvh = np_parts(g, 3)
    if gu is None and gs is None and gvh is None:
        return None
    U, s, Vh = ans[0], ans[1], ans[2]
    m, n = U.shape[-2], Vh.shape[-1]
    k = s.shape[-1]
    U, Vh = U[..., :, :k], Vh[..., :k, :]
    V = _H(Vh)
    dtype = np.result_type(U, float)
    inner = np.zeros(s.shape[:-1] + (k, k), dtype=dtype)
    if gs is not None:
        inner = inner + np.real(np.asarray(gs))[..., :, None] * np.eye(k)
    out = 0
    F = _gap_inverse(s * s)
    if gu is not None:
        gu = np.asarray(gu)[..., :, :k]
        J = F * (_H(U) @ gu)
        inner = inner + (J + _H(J)) * s[..., None, :]
        if m > k:
            proj = gu - U @ (_H(U) @ gu)
            out = out + (proj / s[..., None, :]) @ Vh
    if gvh is not None:
        gv = _H(np.asarray(gvh)[..., :k, :])
        K = F * (_H(V) @ gv)
        inner = inner + s[..., :, None] * (K + _H(K))
        if np.iscomplexobj(V) or np.iscomplexobj(gv):
            d = np.diagonal(_H(V) @ gv, axis1=-2, axis2=-1)
            inner = inner + np.eye(k) * ((np.conj(d) - d) / (2 * s))[..., :, None]
        if n > k:
            proj = gv - V @ (_H(V) @ gv)
            out = out + (U / s[..., None, :]) @ _H(proj)
    return np_fit(U @ inner @ Vh + out, a)


def _copyltu(M):
    low = np.tril(M, -1)
    d = np.real(np.diagonal(M, axis1=-2, axis2=-1))
    return low + _H(low) + d[..., :, None] * np.eye(M.shape[-1])


def _qr_tall(gq, gr, Q, R):
    """Ā for A = QR with m ≥ n (Q m×n, R n×n)."""
    M = 0
    if gr is not None:
        M = R @ _H(gr)
    if gq is not None:
        M = M - _H(gq) @ Q
    b = Q @ _copyltu(np.asarray(M) * np.ones(R.shape))
    if gq is not None:
        b = b + gq
    return _H(np.linalg.solve(R, _H(b)))  # b R⁻ᴴ


def np_qr_adjoint(g, a, ans, mode="reduced"):
    if mode == "r":
        gq, gr = None, g
        Q, R = np.linalg.qr(a)
    else:
        gq, gr = np_parts(g, 2)
        Q, R = ans[0], ans[1]
    if gq is None and gr is None:
        return None
    m, n = np.shape(a)[-2:]
    if m >= n:
        if mode == "complete" and m > n:
            raise NotImplementedError("qr gradient with mode='complete' for m > n")
        return np_fit(_qr_tall(gq, gr, Q, R), a)
    # wide: A = Q [U | V], X = A[:, :m] = Q U, Y = A[:, m:] = Q V
    U = R[..., :, :m]
    gu = None if gr is None else np.asarray(gr)[..., :, :m]
    gvp = None if gr is None else np.asarray(gr)[..., :, m:]
    Y = np.asarray(a)[..., :, m:]
    gq2 = gq
    if gvp is not None:
        extra = Y @ _H(gvp)
        gq2 = extra if gq2 is None else gq2 + extra
    gx = _qr_tall(gq2, gu, Q, U)
    gy = Q @ gvp if gvp is not None else np.zeros(Y.shape, dtype=gx.dtype)
    return np_fit(np.concatenate([gx, gy], axis=-1), a)


def np_pinv_adjoint(g, a, ans):
    """d(A⁺) = -A⁺ dA A⁺ + A⁺A⁺ᴴ dAᴴ (I - AA⁺) + (I - A⁺A) dAᴴ A⁺ᴴ A⁺ (constant rank)."""
    A = np.asarray(a)
    P = np.asarray(ans)
    G = np.asarray(g)
    m, n = A.shape[-2], A.shape[-1]
    PH, GH = _H(P), _H(G)
    out = -(PH @ G @ PH)
    out = out + (np.eye(m) - A @ P) @ GH @ P @ PH
    out = out + PH @ P @ GH @ (np.eye(n) - P @ A)
    return np_fit(out, a)


def np_lstsq_adjoint_b(g, a, b):
    gx = np_parts(g, 4)[0]
    if gx is None:
        return None
    P = np.linalg.pinv(np.asarray(a))
    return np_fit(_H(P) @ np.asarray(gx), b)


def np_lstsq_adjoint_a(g, a, b):
    gx = np_parts(g, 4)[0]
    if gx is None:
        return None
    gx = np.asarray(gx)
    b_ = np.asarray(b)
    P = np.linalg.pinv(np.asarray(a))
    if b_.ndim == 1:
        gp = gx[:, None] * np.conj(b_)[None, :]
    else:
        gp = gx @ _H(b_)
    return np_pinv_adjoint(gp, a, P)


def np_matrix_power_adjoint(g, a, n):
    A = np.asarray(a)
    n = int(n)
    if n == 0:
        return np_fit(np.zeros(A.shape), a)
    if n < 0:
        B = np.linalg.inv(A)
        gB = np_matrix_power_adjoint(g, B, -n)
        return np_inv_adjoint(gB, a, B)
    G = np.asarray(g)
    powers = [np.broadcast_to(np.eye(A.shape[-1]), A.shape)]
    for _ in range(n - 1):
        powers.append(powers[-1] @ A)
    out = 0
    for k in range(n):
        out = out + _H(powers[k]) @ G @ _H(powers[n - 1 - k])
    return np_fit(out, a)


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
