"""Functions of 1-D samples: polyval (a polynomial's values), trapezoid (the integral of
sampled values), convolve and correlate, interp (piecewise-linear interpolation).

The pullbacks are written with NumPy functions that have rules, so they differentiate
again: a convolution's adjoint is a correlation with the other operand (and the
reverse), cut to the mode's window; interp's adjoint in ``fp`` puts each output's
cotangent on the two samples it interpolates between.
"""
import numpy as np

from .base import _CURRENT, np_fit, rule
from .shape import _pack

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_convolve_adjoint_a",
    "np_convolve_adjoint_v",
    "np_correlate_adjoint_a",
    "np_correlate_adjoint_v",
    "np_interp_adjoint_fp",
    "np_interp_adjoint_left",
    "np_interp_adjoint_right",
    "np_interp_adjoint_x",
    "np_interp_adjoint_xp",
    "np_polyval_adjoint_p",
    "np_polyval_adjoint_x",
    "np_trapezoid_adjoint_dx",
    "np_trapezoid_adjoint_x",
    "np_trapezoid_adjoint_y",
]

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
    if x.ndim == 1:  # (one width per interval along y's axis)
        return _along(np.diff(x), n, axis)
    return np.diff(x, 1, axis)


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


def _periodic(x, xp, fp, period):
    """np.interp's reduction of period=: (x mod period, the knots mod period sorted and
    extended by one on each side, their values, the knot each extended one is)."""
    period = abs(period)
    xs = np.asarray(x) % period
    xpm = np.asarray(xp) % period
    order = np.argsort(xpm, kind="stable")
    idx = np.concatenate([order[-1:], order, order[:1]])
    xpe = np.concatenate([xpm[order[-1:]] - period, xpm[order], xpm[order[:1]] + period])
    return xs, xpe, np.asarray(fp)[idx], idx


def _knots_back(gk, idx, like):
    """The adjoint of the extended knots (or their values) summed back onto like."""
    onehot = idx[:, None] == np.arange(np.shape(like)[0])
    return np_fit(np.sum(np.asarray(gk)[:, None] * onehot, 0), like)


def _interp_parts(x, xp, period):
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
    if period is not None:
        xs, xpe, fpe, _ = _periodic(x, xp, fp, period)
        return np_fit(np_interp_adjoint_x(g, xs, xpe, fpe), x)
    i, inside, _, _ = _interp_parts(x, xp, period)
    xpa, fpa = np.asarray(xp), np.asarray(fp)
    slope = (fpa[i + 1] - fpa[i]) / (xpa[i + 1] - xpa[i])
    return np_fit(np.where(inside, np.asarray(g) * np.conj(slope), 0), x)


def _interp_t(x, xp, i):
    xpa = np.asarray(xp)
    return (np.asarray(x) - xpa[i]) / (xpa[i + 1] - xpa[i])


def np_interp_adjoint_fp(g, x, xp, fp, left=None, right=None, period=None):
    if period is not None:
        xs, xpe, fpe, idx = _periodic(x, xp, fp, period)
        return _knots_back(np_interp_adjoint_fp(g, xs, xpe, fpe), idx, fp)
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
    if period is not None:
        xs, xpe, fpe, idx = _periodic(x, xp, fp, period)
        return _knots_back(np_interp_adjoint_xp(g, xs, xpe, fpe), idx, xp)
    i, inside, lo, hi = _interp_parts(x, xp, period)
    xpa, fpa = np.asarray(xp), np.asarray(fp)
    t = _interp_t(x, xp, i)[..., None]
    slope = ((fpa[i + 1] - fpa[i]) / (xpa[i + 1] - xpa[i]))[..., None]
    w = -(lo * (1 - t) + hi * t) * np.conj(slope)
    gw = np.asarray(g)[..., None] * w
    return np_fit(np.sum(np.reshape(gw, (-1, xpa.shape[0])), 0), xp)


def np_interp_adjoint_left(g, x, xp, fp, left=None, right=None, period=None):
    if period is not None:  # (ignored with period=)
        return None
    out = np.asarray(x) < np.asarray(xp)[0]
    return np_fit(np.sum(np.where(out, np.asarray(g), 0)), left)


def np_interp_adjoint_right(g, x, xp, fp, left=None, right=None, period=None):
    if period is not None:
        return None
    out = np.asarray(x) > np.asarray(xp)[-1]
    return np_fit(np.sum(np.where(out, np.asarray(g), 0)), right)


rule(np.interp, "x, xp, fp, left=None, right=None, period=None",
     adjoints={"left": "_rt.np_interp_adjoint_left(g, x, xp, fp, left, right, period)",
               "right": "_rt.np_interp_adjoint_right(g, x, xp, fp, left, right, period)",
"x": "_rt.np_interp_adjoint_x(g, x, xp, fp, left, right, period)",
               "xp": "_rt.np_interp_adjoint_xp(g, x, xp, fp, left, right, period)",
               "fp": "_rt.np_interp_adjoint_fp(g, x, xp, fp, left, right, period)"},
     note="period= too (the knots and the samples taken modulo the period)")
