"""Rules of NumPy's matrix functions: inverse, determinants, solve, cholesky, eigh, svd,
qr, pinv, lstsq, matrix_power, each helper beside the rules that call it.

Matrix functions of a symmetric/Hermitian argument (``cholesky``, ``eigh``) return a
symmetrised gradient, as autograd, JAX and ChainRules do.
"""
import numpy as np

from ...errors import MissingAdjointError, NotDifferentiableError
from .base import _by_keyword, _CURRENT, _H, _np, _two, np_fit, np_parts, rule

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_cholesky_adjoint",
    "np_det_adjoint",
    "np_eigh_adjoint",
    "np_eigvalsh_adjoint",
    "np_inv_adjoint",
    "np_lstsq_adjoint_a",
    "np_lstsq_adjoint_b",
    "np_matrix_power_adjoint",
    "np_pinv_adjoint",
    "np_qr_adjoint",
    "np_slogdet_adjoint",
    "np_solve_adjoint_a",
    "np_solve_adjoint_b",
    "np_svd_adjoint",
    "np_svdvals_adjoint",
]


def np_inv_adjoint(g, a, ans):
    ih = _H(ans)
    return np_fit(-(ih @ np.asarray(g) @ ih), a)


def _sym(x):
    return 0.5 * (x + _H(x))


def _gap_inverse(w):
    """F[i, j] = 1/(w[j] - w[i]) off the diagonal, 0 on it."""
    d = w[..., None, :] - w[..., :, None]
    n = w.shape[-1]
    eye = np.eye(n, dtype=bool)
    return np.where(eye, 0, 1 / np.where(eye, 1, d))


def np_svdvals_adjoint(g, a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np_fit((u * np.asarray(g)[..., None, :]) @ vh, a)


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


_CURRENT[0] = "Linear algebra"

_la = np.linalg


rule(_la.inv, "a", adjoints={"a": "_rt.np_inv_adjoint(g, a, ans)"})


def np_det_adjoint(g, a, ans):
    """det(A)·A⁻ᴴ = adj(A)ᴴ, through the SVD where A is singular or nearly so."""
    a_ = np.asarray(a)
    scale = np.expand_dims(np.asarray(g), (-2, -1))
    if np.all(np.asarray(ans) != 0):  # (no zero pivot: inv, from the same LU, succeeds)
        inv = np.linalg.inv(a_)
        conditioned = np.linalg.norm(a_, 1, (-2, -1)) * np.linalg.norm(inv, 1, (-2, -1))
        if np.all(np.isfinite(inv)) and np.all(conditioned < 1e8):
            return np_fit(scale * np.conj(np.expand_dims(ans, (-2, -1))) * _H(inv), a)
    return np_fit(scale * _H(_adjugate(a_)), a)


def _adjugate(a):
    """adj(A) = det(U)·det(Vᴴ) · V diag(Π_(j≠i) s_j) Uᴴ for A = U diag(s) Vᴴ: defined and
    accurate for a singular A, where det(A)·A⁻¹ is not."""
    u, s, vh = np.linalg.svd(a)
    ones = np.ones(s.shape[:-1] + (1,))
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], -1), -1)
    after = np.cumprod(np.concatenate([ones, s[..., :0:-1]], -1), -1)[..., ::-1]
    units = np.linalg.det(u) * np.linalg.det(vh)
    return units[..., None, None] * ((_H(vh) * (before * after)[..., None, :]) @ _H(u))


rule(_la.det, "a", adjoints={"a": "_rt.np_det_adjoint(g, a, ans)"},
     note="the adjugate, also of a singular matrix")


def np_slogdet_adjoint(g, a, ans=None):
    _, glog = np_parts(g, 2)
    if glog is None:
        return None
    if ans is not None and np.any(np.asarray(ans[0]) == 0):
        raise NotDifferentiableError(
            "np.linalg.slogdet of a singular matrix: log|det A| is -inf there and has no "
            "gradient; differentiate np.linalg.det(A) instead (its gradient is the "
            "adjugate, defined at a singular A)")
    return np_fit(np.real(np.asarray(glog))[..., None, None] * _H(np.linalg.inv(np.asarray(a))), a)


rule(_la.slogdet, "a", kind="other", adjoints={"a": "_rt.np_slogdet_adjoint(g, a, ans)"},
     note="gradient through logabsdet")


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


def np_solve_adjoint_b(g, a, b, ans=None):
    a_, b_ = np.asarray(a), np.asarray(b)
    g = np.asarray(g)
    if b_.ndim == 1:
        out = np.linalg.solve(_H(a_), g[..., None])[..., 0]
    else:
        out = np.linalg.solve(_H(a_), g)
    return np_fit(out, b)


rule(_la.solve, "a, b", adjoints=_two("np_solve_adjoint", "a", "b", "ans"))


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


_by_keyword(rule(_la.cholesky, "a, upper=False",
                 adjoints={"a": "_rt.np_cholesky_adjoint(g, a, ans, upper)"},
                 note="symmetrised gradient"))


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


rule(_la.eigh, "a, UPLO='L'", kind="other", adjoints={"a": "_rt.np_eigh_adjoint(g, a, ans)"},
     note="symmetrised gradient; eigenvalues and eigenvectors")


def np_eigvalsh_adjoint(g, a, UPLO="L"):
    w, v = np.linalg.eigh(a, UPLO)
    out = (v * np.real(np.asarray(g))[..., None, :]) @ _H(v)
    return np_fit(_sym(out), a)


rule(_la.eigvalsh, "a, UPLO='L'", adjoints={"a": "_rt.np_eigvalsh_adjoint(g, a, UPLO)"},
     note="symmetrised gradient")


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
    _no_completion(gu, U, "the last {} columns of U", (..., slice(None), slice(k, None)))
    _no_completion(gvh, Vh, "the last {} rows of Vh", (..., slice(k, None), slice(None)))
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


def _no_completion(g, x, what, extra):
    """Refuse a nonzero cotangent of the vectors full_matrices=True adds to U or Vh: any
    orthonormal completion, not a function of A."""
    if g is None:
        return
    rest = np.asarray(g)[extra]
    if rest.size and np.any(rest != 0):
        count = x[extra].shape[-1 if "columns" in what else -2]
        raise MissingAdjointError(np.linalg.svd, (
            f"with full_matrices=True, {what.format(count)} are any orthonormal completion "
            "(not a function of A), and a gradient flows into them; use "
            "full_matrices=False"))


rule(_la.svd, "a, full_matrices=True, compute_uv=True, hermitian=False", kind="other",
     adjoints={"a": "_rt.np_svd_adjoint(g, a, ans, full_matrices, compute_uv)"},
     note="singular values and vectors (not through the vectors full_matrices=True adds)")


rule(_np("svdvals", _la), "x", adjoints={"x": "_rt.np_svdvals_adjoint(g, x)"})


def np_qr_adjoint(g, a, ans, mode="reduced"):
    if mode == "raw":
        raise MissingAdjointError(np.linalg.qr, (
            "no gradient for mode='raw' (LAPACK's Householder reflectors); use "
            "mode='reduced' (Q and R) or mode='r'"))
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
        if mode == "complete" and m > n:  # Q = [Q1 | Q2], R = [R1; 0], A = Q1 R1
            if gq is not None and np.any(np.asarray(gq)[..., :, n:] != 0):
                raise MissingAdjointError(np.linalg.qr, (
                    f"with mode='complete' and m > n ({m}x{n}), the last {m - n} columns "
                    "of Q are any orthonormal completion (not a function of A), and a "
                    "gradient flows into them; use mode='reduced'"))
            gq = None if gq is None else np.asarray(gq)[..., :, :n]
            gr = None if gr is None else np.asarray(gr)[..., :n, :]  # (R's zero rows)
            Q, R = Q[..., :, :n], R[..., :n, :]
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


rule(_la.qr, "a, mode='reduced'", kind="other",
     adjoints={"a": "_rt.np_qr_adjoint(g, a, ans, mode)"},
     note="modes reduced, r and complete (for m > n: not through Q's last m - n columns)")


rule(_la.pinv, "a, rcond=None, hermitian=False",
     adjoints={"a": "_rt.np_pinv_adjoint(g, a, ans)"}, note="constant rank")


def _lstsq_residual(gres, a, b):
    """(r = A x - b, ḡ of the residuals, x); None where no residuals flow back (NumPy
    returns them only for full rank and m > n)."""
    if gres is None or np.size(gres) == 0:
        return None
    x = np.linalg.lstsq(a, b, rcond=None)[0]
    return np.asarray(a) @ x - np.asarray(b), np.real(np.asarray(gres)), x


def _plus(out, v):
    return v if out is None else out + v


def np_lstsq_adjoint_a(g, a, b):
    """x through the pseudo-inverse (full rank); the residuals Σ|A x - b|² (x optimal:
    Ā = 2 r xᴴ); the singular values as svd's."""
    gx, gres, _, gsv = np_parts(g, 4)
    out = None
    b_ = np.asarray(b)
    if gx is not None:
        gx = np.asarray(gx)
        P = np.linalg.pinv(np.asarray(a))
        gp = gx[:, None] * np.conj(b_)[None, :] if b_.ndim == 1 else gx @ _H(b_)
        out = _plus(out, np_pinv_adjoint(gp, a, P))
    parts = _lstsq_residual(gres, a, b)
    if parts is not None:
        r, gr, x = parts
        if b_.ndim == 1:
            out = _plus(out, 2 * gr[0] * r[:, None] * np.conj(x)[None, :])
        else:
            out = _plus(out, 2 * (r * gr) @ _H(x))
    if gsv is not None:
        out = _plus(out, np_svdvals_adjoint(gsv, a))
    return None if out is None else np_fit(out, a)


def np_lstsq_adjoint_b(g, a, b):
    gx, gres = np_parts(g, 4)[:2]
    out = None
    if gx is not None:
        P = np.linalg.pinv(np.asarray(a))
        out = _plus(out, _H(P) @ np.asarray(gx))
    parts = _lstsq_residual(gres, a, b)
    if parts is not None:
        r, gr, _ = parts
        out = _plus(out, -2 * r * (gr[0] if np.ndim(b) == 1 else gr))
    return None if out is None else np_fit(out, b)


rule(_la.lstsq, "a, b, rcond=None", kind="other", adjoints=_two("np_lstsq_adjoint", "a", "b"),
     note="the solution (full rank), the residuals and the singular values")


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


rule(_la.matrix_power, "a, n", adjoints={"a": "_rt.np_matrix_power_adjoint(g, a, n)"})
