"""More NumPy functions: append, ediff1d, rollaxis, polyval, trapezoid, convolve,
correlate, interp, median/percentile/quantile, nanprod/nanvar/nanstd, partition, select,
real_if_close, gradient (with spacings), and np.vectorize (element by element, through
the vectorized function's own pair).

The pullbacks are written with NumPy functions that have rules (one-hot weight matrices
and ``einsum``/``take_along_axis`` rather than ``np.add.at``), so they differentiate again.
Order statistics (``median``, ``percentile``, ``quantile``, ``partition``) send the
cotangent to the elements at the positions they read, as ``sort`` does; only
``method="linear"`` interpolation is differentiated.
"""
import numpy as np

from .. import nondifferentiable_builtin, special
from ...errors import MissingAdjointError
from ...runtime.dispatch import call
from ...runtime.fields import forget_fields, take_field_grad
from ...runtime.sites import _at
from ...runtime.structure import field
from ...tangents import Tangent, add
from .base import _by_keyword, _CURRENT, _keep, np_fit, np_parts, rule
from .reductions import np_prod_adjoint
from .shape import _pack

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_append_adjoint_arr",
    "np_append_adjoint_values",
    "np_convolve_adjoint_a",
    "np_convolve_adjoint_v",
    "np_correlate_adjoint_a",
    "np_correlate_adjoint_v",
    "np_ediff1d_adjoint",
    "np_ediff1d_adjoint_end",
    "np_ediff1d_adjoint_begin",
    "np_gradient_adjoint",
    "np_gradient_spaced_adjoint_f",
    "np_gradient_spaced_adjoint_h",
    "np_interp_adjoint_fp",
    "np_interp_adjoint_left",
    "np_interp_adjoint_right",
    "np_interp_adjoint_x",
    "np_interp_adjoint_xp",
    "np_nanprod_adjoint",
    "np_nanquantile_adjoint_a",
    "np_nanquantile_adjoint_q",
    "np_nanstd_adjoint",
    "np_nanvar_adjoint",
    "np_partition_adjoint",
    "np_polyval_adjoint_p",
    "np_polyval_adjoint_x",
    "np_quantile_adjoint_a",
    "np_quantile_adjoint_q",
    "np_rollaxis_adjoint",
    "np_select_adjoint",
    "np_select_adjoint_default",
    "np_trapezoid_adjoint_dx",
    "np_trapezoid_adjoint_x",
    "np_trapezoid_adjoint_y",
]

_CURRENT[0] = "Shape and indexing"


# ----- append, ediff1d, rollaxis ---------------------------------------------------------------


def _append_parts(g, arr, axis):
    g = np.asarray(g)
    if axis is None:
        return np.split(g, [np.size(arr)])
    return np.split(g, [np.shape(arr)[axis]], axis)


def np_append_adjoint_arr(g, arr, values, axis=None):
    part = _append_parts(g, arr, axis)[0]
    return np_fit(np.reshape(part, np.shape(arr)), arr)


def np_append_adjoint_values(g, arr, values, axis=None):
    part = _append_parts(g, arr, axis)[1]
    return np_fit(np.reshape(part, np.shape(values)), values)


rule(np.append, "arr, values, axis=None",
     adjoints={"arr": "_rt.np_append_adjoint_arr(g, arr, values, axis)",
               "values": "_rt.np_append_adjoint_values(g, arr, values, axis)"})


def _ediff1d_parts(g, ary, to_end, to_begin):
    g = np.asarray(g)
    nb = 0 if to_begin is None else np.size(to_begin)
    nd = max(np.size(ary) - 1, 0)
    return g[:nb], g[nb:nb + nd], g[nb + nd:]


def np_ediff1d_adjoint(g, ary, to_end=None, to_begin=None):
    gd = _ediff1d_parts(g, ary, to_end, to_begin)[1]
    ga = np.pad(gd, (1, 0)) - np.pad(gd, (0, 1))  # d = a[1:] - a[:-1]
    return np_fit(np.reshape(ga, np.shape(ary)), ary)


def np_ediff1d_adjoint_end(g, ary, to_end=None, to_begin=None):
    if to_end is None:
        return None
    part = _ediff1d_parts(g, ary, to_end, to_begin)[2]
    return np_fit(np.reshape(part, np.shape(to_end)), to_end)


def np_ediff1d_adjoint_begin(g, ary, to_end=None, to_begin=None):
    if to_begin is None:
        return None
    part = _ediff1d_parts(g, ary, to_end, to_begin)[0]
    return np_fit(np.reshape(part, np.shape(to_begin)), to_begin)


rule(np.ediff1d, "ary, to_end=None, to_begin=None",
     adjoints={"ary": "_rt.np_ediff1d_adjoint(g, ary, to_end, to_begin)",
               "to_end": "_rt.np_ediff1d_adjoint_end(g, ary, to_end, to_begin)",
               "to_begin": "_rt.np_ediff1d_adjoint_begin(g, ary, to_end, to_begin)"})


def _rollaxis_order(n, axis, start):
    """The axis order np.rollaxis gives (a permutation of range(n))."""
    axis = int(axis) % n
    start = int(start) + n if start < 0 else int(start)
    if axis < start:
        start = start - 1
    rest = [i for i in range(n) if i != axis]
    return rest[:start] + [axis] + rest[start:]


nondifferentiable_builtin(_rollaxis_order, reason="it computes an axis order")
nondifferentiable_builtin(np.argpartition, reason="it returns indices")


def np_rollaxis_adjoint(g, a, axis, start=0):
    order = _rollaxis_order(np.ndim(a), axis, start)
    return np_fit(np.transpose(g, np.argsort(order)), a)


rule(np.rollaxis, "a, axis, start=0",
     adjoints={"a": "_rt.np_rollaxis_adjoint(g, a, axis, start)"})


def np_partition_adjoint(g, a, kth, axis=-1, kind="introselect", order=None):
    if axis is None:
        idx = np.argpartition(np.ravel(a), kth, -1, kind)
        back = np.take_along_axis(np.asarray(g), np.argsort(idx), -1)
        return np_fit(np.reshape(back, np.shape(a)), a)
    idx = np.argpartition(a, kth, axis, kind)
    return np_fit(np.take_along_axis(np.asarray(g), np.argsort(idx, axis), axis), a)


rule(np.partition, "a, kth, axis=-1, kind='introselect', order=None",
     adjoints={"a": "_rt.np_partition_adjoint(g, a, kth, axis, kind, order)"})


def _first_true(condlist, shape):
    """One mask per condition: where it is the first true one (select's choice)."""
    taken = np.zeros(shape, dtype=bool)
    masks = []
    for c in condlist:
        c = np.broadcast_to(np.asarray(c, dtype=bool), shape)
        masks.append(c & ~taken)
        taken = taken | c
    return masks, ~taken


def np_select_adjoint(g, condlist, choicelist, default=0):
    g = np.asarray(g)
    masks, _ = _first_true(condlist, g.shape)
    return _pack([np.where(m, g, 0) for m in masks], choicelist)


def np_select_adjoint_default(g, condlist, choicelist, default=0):
    g = np.asarray(g)
    _, rest = _first_true(condlist, g.shape)
    return np_fit(np.where(rest, g, 0), default)


rule(np.select, "condlist, choicelist, default=0",
     adjoints={"choicelist": "_rt.np_select_adjoint(g, condlist, choicelist, default)",
               "default": "_rt.np_select_adjoint_default(g, condlist, choicelist, default)"})


rule(np.real_if_close, "a, tol=100", adjoints={"a": "_rt.np_fit(g, a)"},
     section="Constructors and conversions")


# ----- polynomials, integration, convolution, interpolation ------------------------------------

_CURRENT[0] = "Reductions"


def np_polyval_adjoint_p(g, p, x):
    """y = Σᵢ pᵢ x^(N-1-i): p̄ᵢ = Σ ȳ conj(x^(N-1-i))."""
    n = len(p)
    g = np.asarray(g)
    xs = np.asarray(x)
    grads = [np_fit(np.sum(g * np.conj(xs ** (n - 1 - i))), np.asarray(p)[i]) for i in range(n)]
    if isinstance(p, np.ndarray):
        return np_fit(np.stack(grads), p)
    return _pack(grads, p)


def np_polyval_adjoint_x(g, p, x):
    n = len(p)
    pa = np.asarray(p)
    if n < 2:
        return np_fit(np.zeros(np.shape(x)) * np.asarray(g), x)
    dp = pa[:-1] * np.arange(n - 1, 0, -1)
    return np_fit(np.asarray(g) * np.conj(np.polyval(dp, x)), x)


rule(np.polyval, "p, x", adjoints={"p": "_rt.np_polyval_adjoint_p(g, p, x)",
                                   "x": "_rt.np_polyval_adjoint_x(g, p, x)"})


def _along(v, ndim, axis):
    """A 1-d v shaped to broadcast along axis of an ndim-d array."""
    return np.reshape(v, [-1 if i == axis % ndim else 1 for i in range(ndim)])


def _trap_widths(y, x, dx, axis):
    n = np.ndim(y)
    if x is None:
        return dx
    x = np.asarray(x)
    d = np.diff(x, 1, axis)
    return _along(d, n, axis) if x.ndim == 1 else d


def _trap_shape(g, y, axis):
    return np.expand_dims(np.asarray(g), int(axis) % np.ndim(y))


def np_trapezoid_adjoint_y(g, y, x=None, dx=1.0, axis=-1):
    """∫ = Σ wₖ (yₖ + yₖ₊₁)/2: ȳ gets the half widths on both sides of each point."""
    half = _trap_shape(g, y, axis) * np.conj(_trap_widths(y, x, dx, axis)) / 2
    n = np.ndim(y)
    ax = int(axis) % n
    lo = [(0, 1) if i == ax else (0, 0) for i in range(n)]
    hi = [(1, 0) if i == ax else (0, 0) for i in range(n)]
    shape = list(np.shape(y))
    shape[ax] = shape[ax] - 1
    half = np.broadcast_to(half, shape)
    return np_fit(np.pad(half, lo) + np.pad(half, hi), y)


def _trap_means(y, axis):
    n = np.ndim(y)
    ax = int(axis) % n
    m = np.shape(y)[ax]
    y = np.asarray(y)
    return (np.take(y, np.arange(1, m), ax) + np.take(y, np.arange(m - 1), ax)) / 2


def np_trapezoid_adjoint_x(g, y, x=None, dx=1.0, axis=-1):
    """x̄ from the widths xₖ₊₁ - xₖ."""
    if x is None:
        return None
    gd = _trap_shape(g, y, axis) * np.conj(_trap_means(y, axis))
    xa = np.asarray(x)
    if xa.ndim == 1:
        gd = np.sum(gd, tuple(i for i in range(np.ndim(y)) if i != int(axis) % np.ndim(y)))
        gx = np.pad(gd, (1, 0)) - np.pad(gd, (0, 1))
        return np_fit(gx, x)
    ax = int(axis) % xa.ndim
    shape = list(np.broadcast_shapes(np.shape(gd), tuple(s - (i == ax) for i, s in enumerate(xa.shape))))
    gd = np.broadcast_to(gd, shape)
    lo = [(0, 1) if i == ax else (0, 0) for i in range(len(shape))]
    hi = [(1, 0) if i == ax else (0, 0) for i in range(len(shape))]
    return np_fit(np.pad(gd, hi) - np.pad(gd, lo), x)


def np_trapezoid_adjoint_dx(g, y, x=None, dx=1.0, axis=-1):
    if x is not None:
        return None
    gd = _trap_shape(g, y, axis) * np.conj(_trap_means(y, axis))
    return np_fit(gd, dx)


rule(getattr(np, "trapezoid", None), "y, x=None, dx=1.0, axis=-1",
     adjoints={"y": "_rt.np_trapezoid_adjoint_y(g, y, x, dx, axis)",
               "x": "_rt.np_trapezoid_adjoint_x(g, y, x, dx, axis)",
               "dx": "_rt.np_trapezoid_adjoint_dx(g, y, x, dx, axis)"})


def _full_from(g, n, m, mode):
    """The cotangent of convolve's full output, from the one of its mode's slice."""
    g = np.asarray(g)
    full = n + m - 1
    if mode == "full":
        return g
    if mode == "same":
        start = (min(n, m) - 1) // 2
    else:  # valid
        start = min(n, m) - 1
    return np.pad(g, (start, full - start - g.shape[0]))


def np_convolve_adjoint_a(g, a, v, mode="full"):
    gf = _full_from(g, np.size(a), np.size(v), mode)
    return np_fit(np.correlate(gf, np.asarray(v), "valid"), a)


def np_convolve_adjoint_v(g, a, v, mode="full"):
    gf = _full_from(g, np.size(a), np.size(v), mode)
    return np_fit(np.correlate(gf, np.asarray(a), "valid"), v)


rule(np.convolve, "a, v, mode='full'",
     adjoints={"a": "_rt.np_convolve_adjoint_a(g, a, v, mode)",
               "v": "_rt.np_convolve_adjoint_v(g, a, v, mode)"})


def np_correlate_adjoint_a(g, a, v, mode="valid"):
    """correlate(a, v) = convolve(a, conj(v)[::-1])."""
    w = np.conj(np.asarray(v))[::-1]
    return np_convolve_adjoint_a(g, a, w, mode)


def np_correlate_adjoint_v(g, a, v, mode="valid"):
    w = np.conj(np.asarray(v))[::-1]
    gw = np_convolve_adjoint_v(g, a, w, mode)
    return np_fit(np.conj(np.asarray(gw))[::-1], v)


rule(np.correlate, "a, v, mode='valid'",
     adjoints={"a": "_rt.np_correlate_adjoint_a(g, a, v, mode)",
               "v": "_rt.np_correlate_adjoint_v(g, a, v, mode)"})


def _interp_parts(x, xp, period):
    if period is not None:
        raise NotImplementedError("the gradient of np.interp with period= is not supported")
    xs = np.asarray(x)
    xpa = np.asarray(xp)
    n = xpa.shape[0]
    i = np.clip(np.searchsorted(xpa, xs, "right") - 1, 0, n - 2)
    inside = (xs >= xpa[0]) & (xs <= xpa[-1])
    cols = np.arange(n)
    lo = (cols == i[..., None]) & inside[..., None]  # one-hot of the left knot
    hi = (cols == (i + 1)[..., None]) & inside[..., None]
    return i, inside, lo, hi


def np_interp_adjoint_x(g, x, xp, fp, left=None, right=None, period=None):
    i, inside, _, _ = _interp_parts(x, xp, period)
    xpa, fpa = np.asarray(xp), np.asarray(fp)
    slope = (fpa[i + 1] - fpa[i]) / (xpa[i + 1] - xpa[i])
    return np_fit(np.where(inside, np.asarray(g) * np.conj(slope), 0), x)


def _interp_t(x, xp, i):
    xpa = np.asarray(xp)
    return (np.asarray(x) - xpa[i]) / (xpa[i + 1] - xpa[i])


def np_interp_adjoint_fp(g, x, xp, fp, left=None, right=None, period=None):
    i, inside, lo, hi = _interp_parts(x, xp, period)
    t = _interp_t(x, xp, i)[..., None]
    n = np.shape(fp)[0]
    cols = np.arange(n)
    w = lo * (1 - t) + hi * t
    if left is None:
        w = w + ((np.asarray(x) < np.asarray(xp)[0])[..., None] & (cols == 0))
    if right is None:
        w = w + ((np.asarray(x) > np.asarray(xp)[-1])[..., None] & (cols == n - 1))
    gw = np.asarray(g)[..., None] * w
    return np_fit(np.sum(np.reshape(gw, (-1, n)), 0), fp)


def np_interp_adjoint_xp(g, x, xp, fp, left=None, right=None, period=None):
    i, inside, lo, hi = _interp_parts(x, xp, period)
    xpa, fpa = np.asarray(xp), np.asarray(fp)
    t = _interp_t(x, xp, i)[..., None]
    slope = ((fpa[i + 1] - fpa[i]) / (xpa[i + 1] - xpa[i]))[..., None]
    w = -(lo * (1 - t) + hi * t) * np.conj(slope)
    gw = np.asarray(g)[..., None] * w
    return np_fit(np.sum(np.reshape(gw, (-1, xpa.shape[0])), 0), xp)


def np_interp_adjoint_left(g, x, xp, fp, left=None, right=None, period=None):
    out = np.asarray(x) < np.asarray(xp)[0]
    return np_fit(np.sum(np.where(out, np.asarray(g), 0)), left)


def np_interp_adjoint_right(g, x, xp, fp, left=None, right=None, period=None):
    out = np.asarray(x) > np.asarray(xp)[-1]
    return np_fit(np.sum(np.where(out, np.asarray(g), 0)), right)


rule(np.interp, "x, xp, fp, left=None, right=None, period=None",
     adjoints={"left": "_rt.np_interp_adjoint_left(g, x, xp, fp, left, right, period)",
               "right": "_rt.np_interp_adjoint_right(g, x, xp, fp, left, right, period)",
"x": "_rt.np_interp_adjoint_x(g, x, xp, fp, left, right, period)",
               "xp": "_rt.np_interp_adjoint_xp(g, x, xp, fp, left, right, period)",
               "fp": "_rt.np_interp_adjoint_fp(g, x, xp, fp, left, right, period)"},
     note="not with period=")


# ----- order statistics -------------------------------------------------------------------------


def _last(a, axis):
    """a with the reduced axis last (all of a flattened for axis=None)."""
    a = np.asarray(a)
    if axis is None:
        return np.reshape(a, (-1,))
    return np.moveaxis(a, int(axis), -1)


def _quantile_weights(q, n, scale):
    """(len(q), n) weights of the sorted values each quantile reads (linear method)."""
    pos = np.ravel(np.asarray(q, dtype=float)) / scale * (n - 1)
    lo = np.floor(pos)
    frac = (pos - lo)[:, None]
    hi = np.minimum(lo + 1, n - 1)
    cols = np.arange(n)
    return (cols == lo[:, None]) * (1 - frac) + (cols == hi[:, None]) * frac


def _check_method(method):
    if method != "linear":
        raise NotImplementedError(f"the gradient of a quantile with method={method!r}")


def _quantile_back(g, a, q, axis, keepdims, scale):
    """ā: the cotangent of each quantile on the sorted values it reads, unsorted."""
    moved = _last(a, axis)
    n = moved.shape[-1]
    w = _quantile_weights(q, n, scale)
    red = moved.shape[:-1]
    g = np.asarray(g)
    nq = int(np.size(q))
    g = np.reshape(g, (nq,) + red)
    gs = np.einsum("q...,qn->...n", g, w)
    order = np.argsort(moved, -1)
    back = np.take_along_axis(gs, np.argsort(order, -1), -1)
    if axis is None:
        return np_fit(np.reshape(back, np.shape(a)), a)
    return np_fit(np.moveaxis(back, -1, int(axis)), a)


def np_quantile_adjoint_a(g, a, q, axis=None, method="linear", keepdims=False, scale=1.0):
    _check_method(method)
    return _quantile_back(g, a, q, axis, keepdims, scale)


def np_quantile_adjoint_q(g, a, q, axis=None, method="linear", keepdims=False, scale=1.0):
    """q̄ = Σ ȳ (n-1)(s_hi - s_lo) / scale."""
    _check_method(method)
    moved = np.sort(_last(a, axis), -1)
    n = moved.shape[-1]
    pos = np.ravel(np.asarray(q, dtype=float)) / scale * (n - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, n - 1)
    step = (np.take(moved, hi, -1) - np.take(moved, lo, -1)) * (n - 1) / scale  # (..., nq)
    step = np.moveaxis(step, -1, 0)
    nq = int(np.size(q))
    g = np.reshape(np.asarray(g), (nq,) + step.shape[1:])
    return np_fit(np.reshape(np.sum(np.reshape(g * np.conj(step), (nq, -1)), -1), np.shape(q)), q)


rule(np.median, "a, axis=None, out=None, overwrite_input=False, keepdims=False",
     adjoints={"a": "_rt.np_quantile_adjoint_a(g, a, 0.5, axis, 'linear', keepdims)"},
     note="the middle element(s)")
rule(np.quantile,
     "a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False",
     adjoints={"a": "_rt.np_quantile_adjoint_a(g, a, q, axis, method, keepdims)",
               "q": "_rt.np_quantile_adjoint_q(g, a, q, axis, method, keepdims)"},
     note="method='linear'")
rule(np.percentile,
     "a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False",
     adjoints={"a": "_rt.np_quantile_adjoint_a(g, a, q, axis, method, keepdims, 100.0)",
               "q": "_rt.np_quantile_adjoint_q(g, a, q, axis, method, keepdims, 100.0)"},
     note="method='linear'")


# ----- nan reductions -------------------------------------------------------------------------


def np_nanprod_adjoint(g, a, axis=None, keepdims=False):
    nan = np.isnan(a)
    filled = np.where(nan, 1, a)
    return np_fit(np.where(nan, 0, np_prod_adjoint(g, filled, axis, keepdims)), a)


rule(np.nanprod, "a, axis=None, dtype=None, out=None, keepdims=False",
     adjoints={"a": "_rt.np_nanprod_adjoint(g, a, axis, keepdims)"})


def np_nanvar_adjoint(g, a, axis=None, ddof=0, keepdims=False):
    nan = np.isnan(a)
    filled = np.where(nan, 0, a)
    count = np.sum(~nan, axis, keepdims=True)
    mean = np.sum(filled, axis, keepdims=True) / count
    gk = _keep(g, np.shape(a), axis, keepdims)
    return np_fit(np.where(nan, 0, gk * 2 * (filled - mean) / (count - ddof)), a)


def np_nanstd_adjoint(g, a, ans, axis=None, ddof=0, keepdims=False):
    sk = _keep(ans, np.shape(a), axis, keepdims)
    gk = _keep(g, np.shape(a), axis, keepdims)
    return np_nanvar_adjoint(gk / (2 * sk), a, axis, ddof, True)


rule(np.nanvar, "a, axis=None, dtype=None, out=None, ddof=0, keepdims=False",
     adjoints={"a": "_rt.np_nanvar_adjoint(g, a, axis, ddof, keepdims)"})
rule(np.nanstd, "a, axis=None, dtype=None, out=None, ddof=0, keepdims=False",
     adjoints={"a": "_rt.np_nanstd_adjoint(g, a, ans, axis, ddof, keepdims)"})


# ----- np.gradient ----------------------------------------------------------------------------


def _gradient_along(g, n, axis, edge_order):
    """The adjoint of np.gradient along one axis (unit spacing): the transpose of its
    matrix, read off np.gradient of the identity."""
    m = np.gradient(np.eye(n), axis=0, edge_order=edge_order)
    moved = np.moveaxis(np.asarray(g), axis, -1)
    return np.moveaxis(moved @ m, -1, axis)


def np_gradient_adjoint(g, f, axis=None, edge_order=1):
    shape = np.shape(f)
    nd = len(shape)
    if axis is None:
        axes = list(range(nd))
    elif isinstance(axis, (tuple, list)):
        axes = [int(a) % nd for a in axis]
    else:
        axes = [int(axis) % nd]
    if len(axes) == 1 and (axis is not None or nd == 1):
        parts = [g]
    else:
        parts = list(np_parts(g, len(axes)))
    out = None
    for ax, gp in zip(axes, parts):
        if gp is None:
            continue
        term = _gradient_along(gp, shape[ax], ax, edge_order)
        out = term if out is None else out + term
    if out is None:
        return None
    return np_fit(out, f)


def _gradient_call(f, *rest):
    """np.gradient with every parameter in position: f, the spacings, axis, edge_order
    (differentiated again at second order: no rule of its own)."""
    spacings = rest[:-2]
    return np.gradient(f, *spacings, axis=rest[-2], edge_order=rest[-1])


_by_keyword(rule(np.gradient, "f, axis=None, edge_order=1", kind="other",
                 adjoints={"f": "_rt.np_gradient_adjoint(g, f, axis, edge_order)"},
                 note="spacings: one scalar, or one scalar or coordinate array per axis"),
            call=_gradient_call)


# ----- np.gradient with spacings ------------------------------------------------------------------
# With spacings (np.gradient(f, h) or np.gradient(f, x, y) with coordinate arrays), the
# derivative with respect to the spacings is not linear: the adjoints differentiate
# _gradient_last, NumPy's formulas written with array operations, through its own pair
# (so they differentiate again at every order).


def _gradient_last(f, h, edge_order):
    """np.gradient(f, h, axis=-1, edge_order=edge_order): h a number (uniform spacing) or
    the coordinates along the last axis."""
    if np.ndim(h) == 0:
        interior = (f[..., 2:] - f[..., :-2]) / (2.0 * h)
        if edge_order == 1:
            first = (f[..., 1:2] - f[..., 0:1]) / h
            last = (f[..., -1:] - f[..., -2:-1]) / h
        else:
            first = (-1.5 * f[..., 0:1] + 2.0 * f[..., 1:2] - 0.5 * f[..., 2:3]) / h
            last = (0.5 * f[..., -3:-2] - 2.0 * f[..., -2:-1] + 1.5 * f[..., -1:]) / h
        return np.concatenate([first, interior, last], -1)
    dx = np.diff(h)
    dx1 = dx[:-1]
    dx2 = dx[1:]
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    interior = a * f[..., :-2] + b * f[..., 1:-1] + c * f[..., 2:]
    if edge_order == 1:
        first = (f[..., 1:2] - f[..., 0:1]) / dx[0]
        last = (f[..., -1:] - f[..., -2:-1]) / dx[-1]
    else:
        d1, d2 = dx[0], dx[1]
        first = (-(2.0 * d1 + d2) / (d1 * (d1 + d2)) * f[..., 0:1]
                 + (d1 + d2) / (d1 * d2) * f[..., 1:2] - d1 / (d2 * (d1 + d2)) * f[..., 2:3])
        d1, d2 = dx[-2], dx[-1]
        last = (d2 / (d1 * (d1 + d2)) * f[..., -3:-2] - (d2 + d1) / (d1 * d2) * f[..., -2:-1]
                + (2.0 * d2 + d1) / (d2 * (d1 + d2)) * f[..., -1:])
    return np.concatenate([first, interior, last], -1)


def _gradient_axes(f, axis):
    nd = np.ndim(f)
    if axis is None:
        return list(range(nd))
    if isinstance(axis, (tuple, list)):
        return [int(a) % nd for a in axis]
    return [int(axis) % nd]


nondifferentiable_builtin(_gradient_axes, reason="it computes axes")


def _gradient_pullbacks(g, f, spacing, axis, edge_order):
    """[(axis, spacing index, grads of _gradient_last)] for each axis with a cotangent."""
    axes = _gradient_axes(f, axis)
    if len(axes) == 1 and (axis is not None or np.ndim(f) == 1):
        parts = [g]
    else:
        parts = list(np_parts(g, len(axes)))
    out = []
    for k in range(len(axes)):
        if parts[k] is None:
            continue
        ax = axes[k]
        which = 0 if len(spacing) == 1 else k
        fm = np.moveaxis(np.asarray(f), ax, -1)
        _, pb = call(_gradient_last, fm, spacing[which], edge_order)
        out.append((ax, which, pb(np.moveaxis(np.asarray(parts[k]), ax, -1))))
    return out


def np_gradient_spaced_adjoint_f(g, f, spacing, axis=None, edge_order=1):
    total = None
    for ax, _, grads in _gradient_pullbacks(g, f, spacing, axis, edge_order):
        if grads[1] is not None:
            total = add(total, np.moveaxis(grads[1], -1, ax))
    return None if total is None else np_fit(total, f)


def np_gradient_spaced_adjoint_h(g, f, spacing, which, axis=None, edge_order=1):
    total = None
    for _, k, grads in _gradient_pullbacks(g, f, spacing, axis, edge_order):
        if k == which:
            total = add(total, grads[2])
    return None if total is None else np_fit(total, spacing[which])


for _n in range(1, 5):  # np.gradient(f, *varargs): one spacing, or one per axis
    _hs = [f"h{i}" for i in range(_n)]
    _tuple = "(" + ", ".join(_hs) + ",)"
    _adj = {"f": f"_rt.np_gradient_spaced_adjoint_f(g, f, {_tuple}, axis, edge_order)"}
    for _i, _h in enumerate(_hs):
        _adj[_h] = f"_rt.np_gradient_spaced_adjoint_h(g, f, {_tuple}, {_i}, axis, edge_order)"
    rule(np.gradient, f"f, {', '.join(_hs)}, axis=None, edge_order=1", kind="other",
         adjoints=_adj)


# ----- quantiles ignoring NaNs ------------------------------------------------------------------


def _nan_positions(moved, q, scale):
    """Per slice and quantile: the sorted positions read (lo, hi) and the weight of hi,
    counting only the values that are not NaN (np.sort puts NaNs last)."""
    k = np.sum(~np.isnan(moved), -1)
    qs = np.reshape(np.asarray(q, dtype=float), (-1,) + (1,) * k.ndim)
    pos = qs / scale * (k - 1)
    lo = np.floor(pos)
    hi = np.minimum(lo + 1, np.maximum(k - 1, 0))
    return lo, hi, pos - lo


def np_nanquantile_adjoint_a(g, a, q, axis=None, method="linear", keepdims=False, scale=1.0):
    _check_method(method)
    moved = _last(a, axis)
    n = moved.shape[-1]
    lo, hi, frac = _nan_positions(moved, q, scale)
    cols = np.arange(n)
    w = (cols == lo[..., None]) * (1 - frac)[..., None] + (cols == hi[..., None]) * frac[..., None]
    nq = int(np.size(q))
    g = np.reshape(np.asarray(g), (nq,) + moved.shape[:-1])
    gs = np.sum(g[..., None] * w, 0)
    order = np.argsort(moved, -1)
    back = np.take_along_axis(gs, np.argsort(order, -1), -1)
    if axis is None:
        return np_fit(np.reshape(back, np.shape(a)), a)
    return np_fit(np.moveaxis(back, -1, int(axis)), a)


def np_nanquantile_adjoint_q(g, a, q, axis=None, method="linear", keepdims=False, scale=1.0):
    _check_method(method)
    moved = _last(a, axis)
    s = np.sort(moved, -1)
    lo, hi, _ = _nan_positions(moved, q, scale)
    k = np.sum(~np.isnan(moved), -1)
    nq = int(np.size(q))
    s_b = np.broadcast_to(s, (nq,) + s.shape)
    step = (np.take_along_axis(s_b, hi.astype(int)[..., None], -1)[..., 0]
            - np.take_along_axis(s_b, lo.astype(int)[..., None], -1)[..., 0]) * (k - 1) / scale
    g = np.reshape(np.asarray(g), (nq,) + moved.shape[:-1])
    total = np.sum(np.reshape(g * np.conj(step), (nq, -1)), -1)
    return np_fit(np.reshape(total, np.shape(q)), q)


_Q = "a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False"

rule(np.nanmedian, "a, axis=None, out=None, overwrite_input=False, keepdims=False",
     adjoints={"a": "_rt.np_nanquantile_adjoint_a(g, a, 0.5, axis, 'linear', keepdims)"})
rule(np.nanquantile, _Q,
     adjoints={"a": "_rt.np_nanquantile_adjoint_a(g, a, q, axis, method, keepdims)",
               "q": "_rt.np_nanquantile_adjoint_q(g, a, q, axis, method, keepdims)"},
     note="method='linear'")
rule(np.nanpercentile, _Q,
     adjoints={"a": "_rt.np_nanquantile_adjoint_a(g, a, q, axis, method, keepdims, 100.0)",
               "q": "_rt.np_nanquantile_adjoint_q(g, a, q, axis, method, keepdims, 100.0)"},
     note="method='linear'")


# ----- np.vectorize -----------------------------------------------------------------------------
# A vectorized Python function is differentiated element by element: each element's call
# goes through the function's own pair (transformed from its source, or its rule), and
# the pullback calls each element's pullback with that element's cotangent. Applying the
# function to whole arrays would be faster, but it computes something else as soon as
# the function branches on its argument or reduces it (``t / np.sum(t)``): never done.
# Both pairs are plain Python with rules for what they call, so they differentiate again.


def _vectorize_check(vec):
    """Refuse what the element-by-element pair does not reproduce."""
    if vec.signature is not None:
        raise MissingAdjointError(
            vec, "np.vectorize(..., signature=...) (generalised core dimensions) has no "
            "rule yet: call the function on the core slices in a loop and np.stack the "
            "results" + _at())


def np_vectorize_pair(pyfunc, *args, **kwargs):
    """np.vectorize(pyfunc, ...): the object, whose tangent is pyfunc's."""
    vec = np.vectorize(pyfunc, *args, **kwargs)
    n = len(args)

    def vectorize_pullback(g):
        # the tangent of pyfunc: from the object's tangent (vec(...)'s pullback gives one),
        # and from the field store, where differentiated code reading vec.pyfunc (the call
        # pair, differentiated again) leaves it, as for any mutable object's field
        d_pyfunc = add(field(g, "pyfunc"), take_field_grad(vec, "pyfunc"))
        forget_fields(vec)
        d = (None, d_pyfunc) + (None,) * n
        if kwargs:
            return d + ({},)
        return d

    return vec, vectorize_pullback


def _entry(row, i):
    """An element's gradient of argument i (0.0 where none reached it)."""
    if row is None or row[i] is None:
        return 0.0
    return row[i]


def _kw_entry(row, name):
    if row is None or row[-1].get(name) is None:
        return 0.0
    return row[-1].get(name)


def _inexact(otypes):
    """Which outputs (by type character) are float or complex: the others carry no gradient."""
    return [np.dtype(c).kind in "fc" for c in otypes]


def _elements(x, shape):
    """x broadcast to shape, as a flat list of Python numbers (NumPy passes each element
    to the function as a Python object too)."""
    return np.ravel(np.broadcast_to(x, shape)).tolist()


def np_vectorize_call_pair(vec, *args, **kwargs):
    """vec(*args, **kwargs) for vec = np.vectorize(pyfunc): the element-wise calls."""
    _vectorize_check(vec)
    excluded = vec.excluded
    pos = [i for i in range(len(args)) if i not in excluded]
    names = [k for k in kwargs if k not in excluded]
    shapes = [np.shape(args[i]) for i in pos] + [np.shape(kwargs[k]) for k in names]
    shape = np.broadcast_shapes(*shapes)
    size = 1
    for s in shape:
        size = size * s
    if size == 0:  # NumPy's own answer (a refusal without otypes=); nothing to differentiate
        y0 = vec(*args, **kwargs)
        return y0, lambda g: (None, None) + (None,) * len(args) + (({},) if kwargs else ())
    flat_pos = [_elements(args[i], shape) for i in pos]
    flat_kw = [_elements(kwargs[k], shape) for k in names]
    ys = []
    pbs = []
    for j in range(size):
        a = list(args)
        for k in range(len(pos)):
            a[pos[k]] = flat_pos[k][j]
        kw = dict(kwargs)
        for k in range(len(names)):
            kw[names[k]] = flat_kw[k][j]
        y, pb = call(vec.pyfunc, *a, **kw)
        ys.append(y)
        pbs.append(pb)
    nout = len(ys[0]) if isinstance(ys[0], tuple) else 1
    otypes = vec.otypes
    if otypes is None:  # as NumPy: the types of the first element's outputs
        if nout == 1:
            otypes = np.asarray(ys[0]).dtype.char
        else:
            otypes = "".join([np.asarray(ys[0][k]).dtype.char for k in range(nout)])
    inexact = _inexact(otypes)
    if nout == 1:
        out = np.reshape(np.asarray(ys, dtype=otypes[0]), shape)
    else:
        out = tuple([np.reshape(np.asarray([y[k] for y in ys], dtype=otypes[k]), shape)
                     for k in range(nout)])

    def vectorize_call_pullback(g):
        parts = [g] if nout == 1 else list(np_parts(g, nout))
        flat_g = []
        for k in range(nout):
            gk = parts[k]
            if gk is None or not inexact[k]:
                flat_g.append(None)  # no cotangent, or an integer/bool output
            else:
                flat_g.append(_elements(gk, shape))
        d_f = None
        rows = []  # each element's gradients (None: no cotangent reached it)
        for j in range(size):
            if nout == 1:
                gj = flat_g[0][j] if flat_g[0] is not None else None
            else:
                gj = tuple([None if fg is None else fg[j] for fg in flat_g])
            if gj is None or (nout > 1 and all(e is None for e in gj)):
                rows.append(None)
                continue
            grads = pbs[j](gj)
            rows.append(grads)
            d_f = add(d_f, grads[0])
        d_args = []
        for i in range(len(args)):
            if i in excluded:  # passed whole to every element: the gradients add up
                total = None
                for row in rows:
                    if row is not None:
                        total = add(total, row[1 + i])
                d_args.append(total)
            else:
                d_args.append(np_fit(np.reshape(np.asarray(
                    [_entry(row, 1 + i) for row in rows]), shape), args[i]))
        d_vec = None if d_f is None else Tangent(np.vectorize, pyfunc=d_f)
        if not kwargs:
            return (None, d_vec) + tuple(d_args)
        d_kwargs = {}
        for k in kwargs:
            if k in excluded:
                total = None
                for row in rows:
                    if row is not None:
                        total = add(total, row[-1].get(k))
                d_kwargs[k] = total
            else:
                d_kwargs[k] = np_fit(np.reshape(np.asarray(
                    [_kw_entry(row, k) for row in rows]), shape), kwargs[k])
        return (None, d_vec) + tuple(d_args) + (d_kwargs,)

    return out, vectorize_call_pullback


special(np.vectorize)(np_vectorize_pair)
special(np.vectorize.__call__)(np_vectorize_call_pair)
nondifferentiable_builtin(_vectorize_check, _inexact,
                          reason="it checks the vectorized function's options")
