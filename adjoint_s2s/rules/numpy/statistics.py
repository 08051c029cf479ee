"""Statistics and fits: cov, corrcoef, polyfit, bincount; np.linalg.cond and matrix_rank.

``cov`` is ``C = Xc W Xcᴴ / fact`` of the variables as rows X (m's, then y's), centred on
their (weighted) means: ``X̄ = (C̄ + C̄ᴴ) Xc W / fact`` (the centring drops out: the rows of
``Xc W`` sum to zero), and the weights get theirs through W and fact. ``corrcoef`` is
``C / (s sᵀ)`` with ``s = sqrt(diag C)``: its adjoint goes back to C, then through cov's
(NumPy's clip to [-1, 1] is left out: it only rounds). ``polyfit``'s coefficients are the
least-squares solution ``c = (AᴴA)⁻¹ Aᴴ b`` of the weighted Vandermonde system: the adjoint
of a full-rank least-squares solution, then through the powers of x. ``cond`` for
p None, ±2 is σmax/σmin (or its inverse) from the singular vectors; for the other orders
it is ``norm(x, p) · norm(inv(x), p)`` with the matrix norm's adjoint (ties split evenly).
"""
import numpy as np

from .. import nondifferentiable_builtin
from ...errors import MissingAdjointError
from .base import _CURRENT, _H, np_fit, rule
from .reductions import _matrix_grad

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_bincount_adjoint",
    "np_cond_adjoint",
    "np_corrcoef_adjoint",
    "np_cov_adjoint",
    "np_cov_adjoint_weights",
    "np_polyfit_adjoint",
]

_CURRENT[0] = "Reductions"


# ----- cov and corrcoef ----------------------------------------------------------------------


def _as_rows(v, rowvar):
    """One of cov's arguments as NumPy reads it: variables as rows."""
    rows = np.atleast_2d(np.asarray(v))
    if not rowvar and rows.shape[0] != 1:
        rows = rows.T
    return rows


def _from_rows(part, v, rowvar):
    """The adjoint of _as_rows: rows back to v's shape (and its type: np_fit)."""
    if np.ndim(v) < 2:
        return np_fit(np.reshape(part, np.shape(v)), v)
    if not rowvar and np.shape(v)[0] != 1:
        part = part.T
    return np_fit(part, v)


def _cov_parts(m, y, rowvar, bias, ddof, fweights, aweights):
    """(X, the number of m's rows, Xc, the weights w or None, fact, ddof) as np.cov
    computes them."""
    if aweights is not None and isinstance(fweights, np.ndarray) and fweights.dtype == np.float64:
        raise MissingAdjointError(np.cov, "fweights of dtype float64 beside aweights: np.cov "
                                  "multiplies them by aweights in place (the array passed "
                                  "changes), so the adjoint cannot read them; pass integer "
                                  "fweights (NumPy takes whole numbers only)")
    X = _as_rows(m, rowvar)
    k = X.shape[0]
    if y is not None:
        X = np.concatenate((X, _as_rows(y, rowvar)), axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = np.asarray(fweights, dtype=float)
    if aweights is not None:
        w = np.asarray(aweights) if w is None else w * np.asarray(aweights)
    if w is None:
        Xc = X - np.mean(X, axis=1, keepdims=True)
        fact = X.shape[1] - ddof
    else:
        sw = np.sum(w)
        Xc = X - np.sum(X * w, axis=1, keepdims=True) / sw
        if ddof == 0:
            fact = sw
        elif aweights is None:
            fact = sw - ddof
        else:
            fact = sw - ddof * np.sum(w * np.asarray(aweights)) / sw
    return X, k, Xc, w, fact, ddof


def _square(g, n):
    return np.reshape(np.asarray(g), (n, n))


def _cov_rows_adjoint(g, parts):
    X, _, Xc, w, fact, _ = parts
    G = _square(g, X.shape[0])
    wx = Xc if w is None else Xc * w
    return (G + _H(G)) @ wx / fact


def np_cov_adjoint(g, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
                   aweights=None, which=0):
    """The adjoint of m (which=0) or of y (which=1)."""
    if which == 1 and y is None:
        return None
    parts = _cov_parts(m, y, rowvar, bias, ddof, fweights, aweights)
    rows = _cov_rows_adjoint(g, parts)
    k = parts[1]
    if which == 0:
        return _from_rows(rows[:k], m, rowvar)
    return _from_rows(rows[k:], y, rowvar)


def np_cov_adjoint_weights(g, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
                           aweights=None, which=0):
    """The adjoint of fweights (which=0) or aweights (which=1): C = Σⱼ wⱼ xⱼ xⱼᴴ / fact
    with w = fweights · aweights, through w (the centring drops out: Xc w = 0) and fact
    (fweights: the same formula's, for real weights; NumPy takes whole numbers)."""
    mine = fweights if which == 0 else aweights
    if mine is None:
        return None
    X, _, Xc, w, fact, ddof = _cov_parts(m, y, rowvar, bias, ddof, fweights, aweights)
    G = _square(g, X.shape[0])
    S = (G + _H(G)) / 2
    loss = np.real(np.sum(np.conj(G) * ((Xc * w) @ _H(Xc)))) / fact  # Re<C̄, C>
    w_bar = np.real(np.sum(np.conj(Xc) * (S @ Xc), axis=0)) / fact
    sw = np.sum(w)
    if ddof == 0 or aweights is None:
        fact_w, fact_a = 1.0, 0.0  # fact = Σ w - ddof (or Σ w)
    else:
        a = np.asarray(aweights)
        t = np.sum(w * a)
        fact_w = 1 - ddof * (a * sw - t) / sw ** 2  # fact = Σ w - ddof Σ(w a) / Σ w
        fact_a = -ddof * w / sw
    through_w = w_bar - loss / fact * fact_w
    if which == 0:
        out = through_w if aweights is None else through_w * np.asarray(aweights)
    else:
        f = 1.0 if fweights is None else np.asarray(fweights, dtype=float)
        out = through_w * f - loss / fact * fact_a
    return np_fit(out, mine)


_COV = "m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None"
_COV_ARGS = "m, y, rowvar, bias, ddof, fweights, aweights"
rule(np.cov, _COV, adjoints={
    "m": f"_rt.np_cov_adjoint(g, {_COV_ARGS}, 0)",
    "y": f"_rt.np_cov_adjoint(g, {_COV_ARGS}, 1)",
    "fweights": f"_rt.np_cov_adjoint_weights(g, {_COV_ARGS}, 0)",
    "aweights": f"_rt.np_cov_adjoint_weights(g, {_COV_ARGS}, 1)",
}, note="1-D and 2-D m and y, rowvar, bias, ddof; gradient to aweights too (and to "
        "fweights, of the same formula for real weights); float64 fweights beside aweights "
        "refused (np.cov overwrites them)")


def np_corrcoef_adjoint(g, x, y=None, rowvar=True, which=0):
    """R = C / (s sᵀ), s = sqrt(diag C): C̄ = R̄ / (s sᵀ) - diag(Σⱼ Re(R̄ₖⱼ* Rₖⱼ + R̄ⱼₖ* Rⱼₖ) / 2dₖ)."""
    if which == 1 and y is None:
        return None
    C = np.cov(x, y, rowvar)
    n = int(np.sqrt(np.size(C)))
    C = np.reshape(C, (n, n))
    d = np.real(np.diagonal(C))
    s = np.sqrt(d)
    scale = s[:, None] * s[None, :]
    R = C / scale
    G = _square(g, n)
    GR = np.real(np.conj(G) * R)
    d_bar = -(np.sum(GR, axis=1) + np.sum(GR, axis=0)) / (2 * d)
    C_bar = G / scale + np.diag(d_bar)
    return np_cov_adjoint(C_bar, x, y, rowvar, False, None, None, None, which)


rule(np.corrcoef, "x, y=None, rowvar=True", adjoints={
    "x": "_rt.np_corrcoef_adjoint(g, x, y, rowvar, 0)",
    "y": "_rt.np_corrcoef_adjoint(g, x, y, rowvar, 1)",
}, note="1-D and 2-D x and y, rowvar; NumPy's clip to [-1, 1] taken as the identity")


# ----- bincount ------------------------------------------------------------------------------


def np_bincount_adjoint(g, x, weights=None, minlength=0):
    """out[k] = Σ_{x_i = k} weights_i: weights_i gets g[x_i]."""
    if weights is None:
        return None
    return np_fit(np.take(np.asarray(g), np.asarray(x)), weights)


rule(np.bincount, "x, weights=None, minlength=0",
     adjoints={"weights": "_rt.np_bincount_adjoint(g, x, weights, minlength)"},
     note="gradient to weights (x holds integers: none); without weights an integer count")


# ----- polyfit -------------------------------------------------------------------------------


def _polyfit_rank(lhs, rcond):
    """The rank lstsq finds for polyfit's scaled system (its cut-off rcond · σmax; rcond
    None: NumPy's, the number of points times the dtype's epsilon)."""
    if rcond is None:
        rcond = lhs.shape[0] * np.finfo(lhs.dtype).eps
    s = np.linalg.svd(lhs, compute_uv=False)
    return int(np.sum(s > rcond * s[0])) if s.size else 0


nondifferentiable_builtin(_polyfit_rank, reason="it counts singular values")


def _refuse_polyfit(full, cov):
    if full:
        raise MissingAdjointError(np.polyfit, "no gradient with full=True (residuals, rank, "
                                  "singular values); call it with full=False for the "
                                  "coefficients, and compute the residuals from them")
    if cov is not False:
        raise MissingAdjointError(np.polyfit, f"no gradient with cov={cov!r} (the covariance "
                                  f"of the coefficients); call it with cov=False")


def _powers(x, order):
    """[x⁰, x¹, ..., x^(order-1)] by products (exact at x = 0)."""
    out = [np.ones_like(x)]
    for _ in range(order - 1):
        out.append(out[-1] * x)
    return out


def np_polyfit_adjoint(g, x, y, deg, ans, rcond=None, full=False, w=None, cov=False,
                       which="y"):
    """c = (AᴴA)⁻¹ Aᴴ b, A = W V(x), b = W y: with z = (AᴴA)⁻¹ c̄ and r = b - A c,
    b̄ = A z, Ā = r zᴴ - A z cᴴ; then ȳ = W b̄, x̄ through V, w̄ through A and b."""
    _refuse_polyfit(full, cov)
    x_, y_ = np.asarray(x) + 0.0, np.asarray(y) + 0.0
    order = int(deg) + 1
    pw = _powers(x_, order)
    V = np.stack(pw[::-1], axis=1)
    wv = None if w is None else np.asarray(w) + 0.0
    A = V if wv is None else V * wv[:, None]
    scale = np.sqrt(np.sum(np.real(np.conj(A) * A), axis=0))
    As = A / scale
    rank = _polyfit_rank(As, rcond)
    if rank < order:
        raise MissingAdjointError(np.polyfit, f"the fit of degree {int(deg)} is rank-deficient "
                                  f"(rank {rank} of {order}): its coefficients are not a "
                                  f"differentiable function of the data; lower deg or use "
                                  f"more distinct x")
    col = y_.ndim == 1
    c = np.reshape(ans, (order, -1))
    gc = np.reshape(np.asarray(g), (order, -1))
    yb = np.reshape(y_, (len(x_), -1))
    b = yb if wv is None else yb * wv[:, None]
    z = np.linalg.solve(_H(As) @ As, gc / scale[:, None]) / scale[:, None]
    b_bar = A @ z
    if which == "y":
        out = b_bar if wv is None else b_bar * wv[:, None]
        return np_fit(out[:, 0] if col else out, y)
    A_bar = (b - A @ c) @ _H(z) - b_bar @ _H(c)
    if which == "w":
        if w is None:
            return None
        out = np.real(np.sum(np.conj(A_bar) * V, axis=1) + np.sum(np.conj(b_bar) * yb, axis=1))
        return np_fit(out, w)
    V_bar = A_bar if wv is None else A_bar * wv[:, None]
    dpw = [np.zeros_like(x_)] + [k * pw[k - 1] for k in range(1, order)]
    dV = np.stack(dpw[::-1], axis=1)
    return np_fit(np.sum(V_bar * np.conj(dV), axis=1), x)


_POLY_ARGS = "x, y, deg, ans, rcond, full, w, cov"
rule(np.polyfit, "x, y, deg, rcond=None, full=False, w=None, cov=False", adjoints={
    "x": f"_rt.np_polyfit_adjoint(g, {_POLY_ARGS}, 'x')",
    "y": f"_rt.np_polyfit_adjoint(g, {_POLY_ARGS}, 'y')",
    "w": f"_rt.np_polyfit_adjoint(g, {_POLY_ARGS}, 'w')",
}, section="Linear algebra", note="the coefficients (full rank), 1-D and 2-D y, weights w "
   "(a gradient too); full=True and cov=True refused")


# ----- np.linalg.cond, matrix_rank ---------------------------------------------------------


def np_cond_adjoint(g, x, ans, p=None):
    """p None/2: σ₁/σₙ, d = u₁v₁ᴴ/σₙ - σ₁ uₙvₙᴴ/σₙ² (-2: its inverse); other p:
    norm(x) norm(inv(x)), through the matrix norm's adjoint of each."""
    x_ = np.asarray(x)
    gk = np.real(np.asarray(g))[..., None, None]
    if p is None or (not isinstance(p, str) and p in (2, -2)):  # (np.int64(2) too)
        u, s, vh = np.linalg.svd(x_, full_matrices=False)
        top = u[..., :, :1] @ vh[..., :1, :]
        low = u[..., :, -1:] @ vh[..., -1:, :]
        s1, sn = s[..., :1, None], s[..., -1:, None]
        if p == -2:
            return np_fit(gk * (low / s1 - sn / s1 ** 2 * top), x)
        return np_fit(gk * (top / sn - s1 / sn ** 2 * low), x)
    if p not in ("fro", "nuc", 1, -1, np.inf, -np.inf):
        raise MissingAdjointError(np.linalg.cond, f"no gradient for p={p!r}; use one of None, "
                                  f"'fro', 'nuc', 1, -1, 2, -2, inf, -inf")
    inv = np.linalg.inv(x_)
    nx = np.linalg.norm(x_, p, axis=(-2, -1), keepdims=True)
    ni = np.linalg.norm(inv, p, axis=(-2, -1), keepdims=True)
    one = np.ones(np.shape(nx))
    gx = _matrix_grad(one, x_, nx, p)
    gi = _matrix_grad(one, inv, ni, p)
    return np_fit(gk * (ni * gx - nx * (_H(inv) @ gi @ _H(inv))), x)


_CURRENT[0] = "Linear algebra"

rule(np.linalg.cond, "x, p=None", adjoints={"x": "_rt.np_cond_adjoint(g, x, ans, p)"},
     note="p None, ±2 (distinct extreme singular values); 'fro', 'nuc', ±1, ±inf "
          "through norm(x)·norm(inv(x)), ties split evenly")

nondifferentiable_builtin(np.linalg.matrix_rank, reason="it returns an integer")
