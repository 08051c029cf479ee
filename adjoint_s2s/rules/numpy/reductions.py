"""Rules of NumPy's reductions (sum, mean, prod, max/min, var/std, cumulative ones,
norms, trace, average), each helper beside the rules that call it."""
import numpy as np

from ...errors import MissingAdjointError
from .base import _axes, _by_keyword, _CURRENT, _keep, _np, _spread, _sum_to, filled, np_fit, np_parts, rule, spread_fill
from .extremum import acc_extremum_adjoint, np_extremum_adjoint, np_extremum_select, np_max, np_min, shifted_zeros
from .extremum import np_extremum_initial_adjoint, np_extremum_where_adjoint, where_mask

__all__ = [  # the helpers templates reach as _rt.<name>
    "acc_extremum_adjoint",
    "np_average_adjoint_a",
    "np_average_adjoint_weights",
    "np_cumprod_adjoint",
    "np_cumsum_adjoint",
    "np_extremum_adjoint",
    "np_extremum_initial_adjoint",
    "np_extremum_where_adjoint",
    "np_extremum_select",
    "np_matrix_norm_adjoint",
    "np_max",
    "np_mean",
    "np_mean_adjoint",
    "np_mean_where_adjoint",
    "np_min",
    "np_nanmean_adjoint",
    "np_nansum_adjoint",
    "np_norm_adjoint",
    "np_prod_adjoint",
    "np_prod_initial_adjoint",
    "np_prod_where_adjoint",
    "np_std_adjoint",
    "np_sum",
    "np_sum_adjoint",
    "np_sum_initial_adjoint",
    "np_sum_where_adjoint",
    "np_trace_adjoint",
    "np_var_adjoint",
    "np_vector_norm_adjoint",
    "shifted_zeros",
]


def np_mean_adjoint(g, a, axis=None, keepdims=False):
    if type(a) is np.ndarray and a.dtype.kind == "f":
        n = a.size
        if n < _VIEW_MIN:
            if axis is None and type(g) is float and n:
                return filled(g / n, a)  # the whole-array mean (empty: below)
            if type(g) is np.ndarray and g.dtype is a.dtype:  # (each element g / count)
                return _spread_small(g / _count(a.shape, axis), a, axis, keepdims)
        view = _spread_view(g, a, axis, keepdims, True)
        if view is not None:
            return view
        if axis is None and type(g) is float and a.size:
            return filled(g / a.size, a)
    shape = np.shape(a)
    count = _count(shape, axis)
    return np_fit(_spread(g, shape, axis, keepdims) / count, a)


_VIEW_MIN = 4096  # below this many elements a filled copy costs less than making a view

def _spread_small(g, a, axis, keepdims):
    """The adjoint of a sum of the small float array a (fewer than _VIEW_MIN elements)
    for g an array of a's dtype: g spread over a's shape in a fresh array, which is then
    already in a's space."""
    return spread_fill(g if keepdims else _keep(g, a.shape, axis, False), a.shape)


def _spread_view(g, a, axis, keepdims, mean):
    """The adjoint of a sum (or, mean, a mean) of the float array a: g spread back over
    a's shape as a read-only broadcast view, not a copy, since the next step
    (``b * exp_z``, ``unbroadcast``) reads it once. None when g is neither a float (for a
    whole-array reduction) nor an array of a's dtype, or a is small (fewer than
    _VIEW_MIN elements): the caller then spreads a copy.

    A view is safe to hand on: every in-place accumulation (``acc``, the ``acc_*``
    helpers, ``Scattered.add_into``) writes only into an array with no base that nothing
    else holds, and ``api.project`` copies a read-only gradient before the user sees it."""
    if a.size < _VIEW_MIN:
        return None
    if type(g) is float:
        if axis is not None and a.ndim:
            return None
        gk = np.array(g / a.size if mean else g, a.dtype)
    elif type(g) is np.ndarray and g.dtype == a.dtype:
        gk = _keep(g, a.shape, axis, keepdims)
        if mean:
            gk = gk / _count(a.shape, axis)
    else:
        return None
    return _broadcast_view(gk, a.shape)


def _broadcast_view(v, shape):
    """``np.broadcast_to(v, shape)`` for an array v of shape's length (or 0-d) whose axes
    are of shape's sizes or 1: the same read-only view, made by the ndarray constructor
    on v's buffer, without broadcast_to's Python layers (a microsecond and more a call);
    broadcast_to itself when v is not C-contiguous (then it exports no buffer). A
    primitive (runtime/rules_helpers.py): its adjoint sums back, ``unbroadcast``."""
    vs = v.shape
    if not v.flags.c_contiguous or (vs and len(vs) != len(shape)):
        return np.broadcast_to(v, shape)
    if vs:
        strides = []
        for st, n, m in zip(v.strides, vs, shape):
            if n != m and n != 1:
                return np.broadcast_to(v, shape)  # (which raises)
            strides.append(st if n != 1 else 0)
    else:
        strides = (0,) * len(shape)
    out = _ndarray(shape, v.dtype, v, 0, strides)
    out.flags.writeable = False
    return out


def _count(shape, axis):
    n = 1
    for i in _axes(axis, len(shape)):
        n *= shape[i]
    return n


def _to_last(x, axes):
    """Move axes to the end and merge them into one."""
    x = np.asarray(x)
    moved = np.moveaxis(x, axes, range(x.ndim - len(axes), x.ndim))
    return moved.reshape(moved.shape[: x.ndim - len(axes)] + (-1,)), moved.shape


def _from_last(y, moved_shape, axes, ndim):
    y = y.reshape(moved_shape)
    return np.moveaxis(y, range(ndim - len(axes), ndim), axes)


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
    raise MissingAdjointError(np.linalg.norm, f"no gradient for the matrix norm of order {ord!r}; "
                              f"use one of None, 'fro', 'nuc', 1, -1, 2, -2, inf, -inf")


def _matrix_norm_over(g, x, ans, ord, axes, keepdims):
    x = np.asarray(x)
    r, c = (a % x.ndim for a in axes)
    kept = tuple(1 if i in (r, c) else n for i, n in enumerate(x.shape))
    gk = np.reshape(np.asarray(g), kept)
    nk = np.reshape(np.asarray(ans), kept)
    xm, gm, nm = (np.moveaxis(v, (r, c), (-2, -1)) for v in (x, gk, nk))
    return np_fit(np.moveaxis(_matrix_grad(gm, xm, nm, ord), (-2, -1), (r, c)), x)


def _weights_like(w, a, axis):
    """Weights as an array that broadcasts against a (1-D weights along axis)."""
    w = np.asarray(w)
    if w.shape == a.shape or axis is None:
        return w
    shape = [1] * a.ndim
    shape[int(axis) % a.ndim] = w.size
    return w.reshape(shape)


def _returned(g, ans, returned):
    """(ḡ of the average, the average, ḡ of the sum of weights) of np.average's result
    (the sum of weights None without returned=True)."""
    if not returned:
        return g, ans, None
    if isinstance(g, np.ndarray) and g.shape == (2,) + np.shape(ans[0]):
        g = tuple(g)  # (the pair read as one array: np.prod(np.average(..., returned=True)))
    g_avg, g_wsum = np_parts(g, 2)
    return (np.zeros(np.shape(ans[0])) if g_avg is None else g_avg), ans[0], g_wsum


# =====================================================================================
# Reductions
# =====================================================================================
_CURRENT[0] = "Reductions"


_RED = "a, axis=None, dtype=None, out=None, keepdims=False"


# ----- reductions ----------------------------------------------------------------------------


def np_sum_adjoint(g, a, axis=None, keepdims=False):
    if type(a) is np.ndarray and a.dtype.kind == "f":
        if a.size < _VIEW_MIN and type(g) is np.ndarray and g.dtype is a.dtype:
            if keepdims is True:  # (a row sum's adjoint: g already has a's number of axes)
                return spread_fill(g, a.shape)
            return _spread_small(g, a, axis, keepdims)
        view = _spread_view(g, a, axis, keepdims, False)
        if view is not None:
            return view
        if axis is None and type(g) is float:
            return filled(g, a)  # a whole-array sum: one constant
    return np_fit(_spread(g, np.shape(a), axis, keepdims), a)


rule(np.sum, _RED, adjoints={"a": "_rt.np_sum_adjoint(g, a, axis, keepdims)"})


rule(np.mean, _RED, adjoints={"a": "_rt.np_mean_adjoint(g, a, axis, keepdims)"})


# ----- the primal reductions of a fused function ------------------------------------------------
#
# ``np.sum(a, axis, keepdims=k)`` of an exact ndarray is ``np.add.reduce(a, axis, None,
# None, keepdims=k)`` after a few microseconds of Python layers (the dispatcher,
# _wrapreduction); ``np.max``/``np.min`` are ``np.maximum``/``np.minimum``'s reduce the same
# way (np_max and np_min: extremum.py). A fused function (fuse.py) calls these, which call that same reduce for an exact
# ndarray and the NumPy function itself for anything else (a subclass, a list: its own
# method, as NumPy would call). The fused function is never differentiated again (nested
# gradients go through the pair), so these need no rules of their own.

_NoValue = np._NoValue  # NumPy's "not given" (np.sum passes keepdims only when given)
_ndarray = np.ndarray
_F64 = np.dtype(np.float64)
_add_reduce = np.add.reduce


def np_sum(a, axis=None, keepdims=_NoValue):
    if type(a) is _ndarray:
        return _add_reduce(a, axis, None, None, False if keepdims is _NoValue else keepdims)
    return np.sum(a, axis, keepdims=keepdims)


def np_mean(a, axis=None, keepdims=_NoValue):
    """np.mean: for a whole non-empty float64 ndarray, the sum divided by the count as
    NumPy's _mean computes it (``ret.dtype.type(ret / count)``: a float64 divided by an
    exact integer, then the float64 itself); anything else through np.mean."""
    if type(a) is _ndarray and axis is None and a.dtype is _F64 and a.size and (
            keepdims is _NoValue or keepdims is False):
        return _add_reduce(a, None) / a.size
    return np.mean(a, axis, keepdims=keepdims)


def np_nansum_adjoint(g, a, axis=None, keepdims=False):
    a = np.asarray(a)
    return np_fit(_spread(g, a.shape, axis, keepdims) * ~np.isnan(a), a)


rule(np.nansum, _RED, adjoints={"a": "_rt.np_nansum_adjoint(g, a, axis, keepdims)"})


def np_nanmean_adjoint(g, a, axis=None, keepdims=False):
    a = np.asarray(a)
    ok = ~np.isnan(a)
    count = np.sum(ok, axis=_axes(axis, a.ndim), keepdims=True)
    return np_fit(_spread(g, a.shape, axis, keepdims) * ok / count, a)


rule(np.nanmean, _RED, adjoints={"a": "_rt.np_nanmean_adjoint(g, a, axis, keepdims)"})


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


rule(np.prod, _RED, adjoints={"a": "_rt.np_prod_adjoint(g, a, axis, keepdims)"},
     note="exact with zeros in the input")


for _fn in dict.fromkeys((np.max, np.min, _np("amax"), _np("amin"), np.nanmax, np.nanmin)):
    rule(_fn, "a, axis=None, out=None, keepdims=False",
         adjoints={"a": "_rt.np_extremum_adjoint(g, a, ans, axis, keepdims)"},
         note="to the arg-extremum, ties split evenly")


# ----- where= and initial= (variants of their own: the calls without them keep the rules
# above); where= leaves elements out (no gradient), initial= takes part in the reduction


def np_sum_where_adjoint(g, a, axis=None, keepdims=False, where=True):
    shape = np.shape(a)
    return np_fit(np.where(where_mask(where, shape), _spread(g, shape, axis, keepdims), 0), a)


def np_sum_initial_adjoint(g, initial):
    """initial is added once into each element of the sum."""
    return np_fit(np.sum(g), initial)


def np_mean_where_adjoint(g, a, axis=None, keepdims=False, where=True):
    shape = np.shape(a)
    mask = where_mask(where, shape)
    count = np.sum(mask, axis=_axes(axis, len(shape)), keepdims=True)
    spread = _spread(g, shape, axis, keepdims) / np.maximum(count, 1)  # (none: NaN, no gradient)
    return np_fit(np.where(mask, spread, 0), a)


def _prod_inside(a, where):
    """a with the elements where= leaves out as 1 (the product of the others)."""
    return np.where(where_mask(where, np.shape(a)), a, 1)


def np_prod_where_adjoint(g, a, axis=None, keepdims=False, initial=1, where=True):
    inside = _prod_inside(np.asarray(a), where)
    gi = np.asarray(g) * np.conj(initial)
    out = np_prod_adjoint(gi, inside, axis, keepdims)
    return np_fit(np.where(where_mask(where, np.shape(a)), out, 0), a)


def np_prod_initial_adjoint(g, a, axis=None, keepdims=False, initial=1, where=True):
    rest = np.prod(_prod_inside(np.asarray(a), where), axis=axis, keepdims=keepdims)
    return np_fit(np.sum(np.asarray(g) * np.conj(rest)), initial)


_RED_WI = _RED + ", initial={}, where=True"
rule(np.sum, _RED_WI.format(0), adjoints={
    "a": "_rt.np_sum_where_adjoint(g, a, axis, keepdims, where)",
    "initial": "_rt.np_sum_initial_adjoint(g, initial)"},
    note="where= (left-out elements get no gradient) and initial= (a gradient of its own)")
rule(np.mean, _RED + ", where=True",
     adjoints={"a": "_rt.np_mean_where_adjoint(g, a, axis, keepdims, where)"},
     note="where= (left-out elements get no gradient)")
rule(np.prod, _RED_WI.format(1), adjoints={
    "a": "_rt.np_prod_where_adjoint(g, a, axis, keepdims, initial, where)",
    "initial": "_rt.np_prod_initial_adjoint(g, a, axis, keepdims, initial, where)"},
    note="exact with zeros in the input; where= and initial=")
for _fn in dict.fromkeys((np.max, np.min, _np("amax"), _np("amin"))):
    rule(_fn, "a, axis=None, out=None, keepdims=False, initial=None, where=True", adjoints={
        "a": "_rt.np_extremum_where_adjoint(g, a, ans, axis, keepdims, initial, where)",
        "initial": "_rt.np_extremum_initial_adjoint(g, a, ans, axis, keepdims, initial, where)"},
        note="to the arg-extremum, ties split evenly; where= (left-out elements get no "
             "gradient), initial= (when it is the extremum, the gradient goes to it)")


_STAT = "a, axis=None, dtype=None, out=None, ddof=0, keepdims=False"


def np_var_adjoint(g, a, axis=None, ddof=0, keepdims=False):
    """var = Σ|a - mean|²/(N - ddof): ā = 2 g (a - mean)/(N - ddof)."""
    a = np.asarray(a)
    axes = _axes(axis, a.ndim)
    centred = a - np.mean(a, axis=axes, keepdims=True)
    return _var_adjoint(g, a, axes, ddof, keepdims, centred)


rule(np.var, _STAT, adjoints={"a": "_rt.np_var_adjoint(g, a, axis, ddof, keepdims)"})


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


rule(np.std, _STAT, adjoints={"a": "_rt.np_std_adjoint(g, a, ans, axis, ddof, keepdims)"})


def np_cumsum_adjoint(g, a, axis=None):
    g = np.asarray(g)
    if axis is None:
        out = np.cumsum(g.ravel()[::-1])[::-1]
        return np_fit(out.reshape(np.shape(a)), a)
    return np_fit(np.flip(np.cumsum(np.flip(g, axis), axis), axis), a)


rule(np.cumsum, "a, axis=None, dtype=None, out=None",
     adjoints={"a": "_rt.np_cumsum_adjoint(g, a, axis)"})


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


rule(np.cumprod, "a, axis=None, dtype=None, out=None",
     adjoints={"a": "_rt.np_cumprod_adjoint(g, a, ans, axis)"}, note="exact with zeros")


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


rule(np.linalg.norm, "x, ord=None, axis=None, keepdims=False",
     adjoints={"x": "_rt.np_norm_adjoint(g, x, ans, ord, axis, keepdims)"},
     note="vector orders; matrix orders fro, nuc, ±2, ±1, ±inf")


def np_vector_norm_adjoint(g, x, ans, axis=None, keepdims=False, ord=2):
    x = np.asarray(x)
    axes = _axes(axis, x.ndim)
    gk, nk = _keep(g, x.shape, axes, keepdims), _keep(ans, x.shape, axes, keepdims)
    return np_fit(_vector_grad(gk, x, nk, ord, axes), x)


_by_keyword(rule(_np("vector_norm", np.linalg), "x, axis=None, keepdims=False, ord=2",
                 adjoints={"x": "_rt.np_vector_norm_adjoint(g, x, ans, axis, keepdims, ord)"}))


def np_matrix_norm_adjoint(g, x, ans, keepdims=False, ord="fro"):
    return _matrix_norm_over(g, x, ans, ord, (-2, -1), keepdims)


_by_keyword(rule(_np("matrix_norm", np.linalg), "x, keepdims=False, ord='fro'",
                 adjoints={"x": "_rt.np_matrix_norm_adjoint(g, x, ans, keepdims, ord)"}))


def np_trace_adjoint(g, a, offset=0, axis1=0, axis2=1):
    a = np.asarray(a)
    n1, n2 = a.shape[axis1], a.shape[axis2]
    eye = np.eye(n1, n2, k=offset)
    out = np.asarray(g)[..., None, None] * eye
    return np_fit(np.moveaxis(out, (-2, -1), (axis1 % a.ndim, axis2 % a.ndim)), a)


rule(np.trace, "a, offset=0, axis1=0, axis2=1, dtype=None, out=None",
     adjoints={"a": "_rt.np_trace_adjoint(g, a, offset, axis1, axis2)"})


_by_keyword(rule(_np("trace", np.linalg), "x, offset=0",
                 adjoints={"x": "_rt.np_trace_adjoint(g, x, offset, -2, -1)"}))


def np_average_adjoint_a(g, a, ans, axis=None, weights=None, returned=False, keepdims=False):
    g, ans, _ = _returned(g, ans, returned)  # (the sum of weights does not depend on a)
    if weights is None:
        return np_mean_adjoint(g, a, axis, keepdims)
    a_ = np.asarray(a)
    w = _weights_like(weights, a_, axis)
    wsum = np.sum(np.broadcast_to(w, a_.shape), axis=_axes(axis, a_.ndim), keepdims=True)
    return np_fit(_keep(g, a_.shape, axis, keepdims) * np.conj(w) / wsum, a)


def np_average_adjoint_weights(g, a, ans, axis=None, weights=None, returned=False, keepdims=False):
    g, ans, g_wsum = _returned(g, ans, returned)
    if weights is None:
        return None
    a = np.asarray(a)
    w = _weights_like(weights, a, axis)
    wsum = np.sum(np.broadcast_to(w, a.shape), axis=_axes(axis, a.ndim), keepdims=True)
    avg = _keep(ans, a.shape, axis, keepdims)
    out = _keep(g, a.shape, axis, keepdims) * np.conj(a - avg) / np.conj(wsum)
    if g_wsum is not None:  # returned=True: each weight adds 1 to its slice's sum
        out = out + _keep(g_wsum, a.shape, axis, keepdims)
    out = _sum_to(np.broadcast_to(out, np.broadcast(out, w).shape), w.shape)
    return np_fit(out.reshape(np.shape(weights)), weights)


_by_keyword(rule(
    np.average, "a, axis=None, weights=None, returned=False, keepdims=False", adjoints={
        "a": "_rt.np_average_adjoint_a(g, a, ans, axis, weights, returned, keepdims)",
        "weights": "_rt.np_average_adjoint_weights(g, a, ans, axis, weights, returned, keepdims)",
    }, note="gradient to the weights too, and through the sum of weights of returned=True"))
