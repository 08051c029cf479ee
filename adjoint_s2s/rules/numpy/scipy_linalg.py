"""Helpers of the ``scipy.linalg`` rules (rules/scipy_linalg.py): ``_rt.sp_linalg`` is
``scipy.linalg``, imported on first use (scipy is optional, and this module is imported
without it). The helpers are written with NumPy calls and the scipy.linalg functions
that have rules, so that the adjoints differentiate again."""
import numpy as np

from .. import nondifferentiable_builtin
from ...errors import MissingAdjointError, NotDifferentiableError
from .base import _H, np_fit, np_parts
from .scipy_special import LazyModule

__all__ = [  # the helpers templates reach as _rt.<name>
    "sp_cho_factor_adjoint",
    "sp_cho_solve_adjoint_b",
    "sp_cho_solve_adjoint_c",
    "sp_expm_adjoint",
    "sp_linalg",
    "sp_logm_adjoint",
    "sp_lu_factor_adjoint",
    "sp_lu_solve_adjoint_b",
    "sp_lu_solve_adjoint_lu",
    "sp_solve_banded_adjoint_ab",
    "sp_solve_banded_adjoint_b",
    "sp_solve_sylvester_adjoint_a",
    "sp_solve_sylvester_adjoint_b",
    "sp_solve_sylvester_adjoint_q",
    "sp_solve_triangular_adjoint_a",
    "sp_solve_triangular_adjoint_b",
    "sp_sqrtm_adjoint",
]


sp_linalg = LazyModule("scipy.linalg")  # imported on first use (scipy is optional)


def sp_expm_adjoint(g, A):
    """Ā = L(Aᴴ, Ḡ), the Fréchet derivative of expm at Aᴴ in the direction Ḡ: the upper
    right block of expm([[Aᴴ, Ḡ], [0, Aᴴ]]), so that it differentiates again through
    expm's own rule."""
    a = np.asarray(A)
    ah = _H(a)
    gg = np.asarray(g) + np.zeros(a.shape, dtype=np.result_type(a, g))  # a full array
    top = np.concatenate([ah, gg], axis=-1)
    bottom = np.concatenate([np.zeros(a.shape, dtype=top.dtype), ah], axis=-1)
    n = a.shape[-1]
    big = sp_linalg.expm(np.concatenate([top, bottom], axis=-2))
    return np_fit(big[..., :n, n:], A)


_TRANS = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2, "n": 0, "t": 1, "c": 2}


def _tri(a, lower, unit_diagonal):
    """The part of a that solve_triangular reads."""
    m = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        m = m - np.tril(np.triu(m))  # the diagonal is taken as ones, never read
    return m


def sp_solve_triangular_adjoint_b(g, a, b, ans, trans=0, lower=False, unit_diagonal=False):
    """For op(T) x = b: b̄ = op(T)⁻ᴴ x̄."""
    t = _TRANS[trans]
    g = np.asarray(g)
    if t == 0:
        out = sp_linalg.solve_triangular(a, g, trans=2, lower=lower, unit_diagonal=unit_diagonal)
    elif t == 2:
        out = sp_linalg.solve_triangular(a, g, trans=0, lower=lower, unit_diagonal=unit_diagonal)
    else:  # op(T) = Tᵀ: op(T)⁻ᴴ x̄ = conj(T⁻¹ conj(x̄))
        out = np.conj(sp_linalg.solve_triangular(a, np.conj(g), trans=0, lower=lower,
                                                 unit_diagonal=unit_diagonal))
    return np_fit(out, b)


def sp_solve_triangular_adjoint_a(g, a, b, ans, trans=0, lower=False, unit_diagonal=False):
    """op(T)̄ = -b̄ xᴴ, carried back through op and masked to the triangle read."""
    t = _TRANS[trans]
    bbar = sp_solve_triangular_adjoint_b(g, a, b, ans, trans, lower, unit_diagonal)
    bb = np.asarray(bbar)
    x = np.asarray(ans)
    if x.ndim == 1:
        m = -np.outer(bb, np.conj(x))
    else:
        m = -np.matmul(bb, _H(x))
    if t == 1:
        m = np.swapaxes(m, -1, -2)
    elif t == 2:
        m = _H(m)
    return np_fit(_tri(m, lower, unit_diagonal), a)


def sp_cho_solve_adjoint_b(g, c_and_lower, b):
    """For A x = b with A = C Cᴴ (lower) or Cᴴ C: b̄ = A⁻¹ x̄ (A is Hermitian)."""
    return np_fit(sp_linalg.cho_solve(c_and_lower, np.asarray(g)), b)


def sp_cho_solve_adjoint_c(g, c_and_lower, b, ans):
    """Ā = -b̄ xᴴ, then through A = L Lᴴ: L̄ = (Ā + Āᴴ) L (lower), Ū = U (Ā + Āᴴ) (upper),
    on the triangle cho_solve reads. The flag gets no gradient."""
    c, lower = c_and_lower
    c_ = np.asarray(c)
    bb = np.asarray(sp_linalg.cho_solve(c_and_lower, np.asarray(g)))
    x = np.asarray(ans)
    abar = -np.outer(bb, np.conj(x)) if x.ndim == 1 else -np.matmul(bb, _H(x))
    sym = abar + _H(abar)
    if lower:
        out = np.tril(np.matmul(sym, np.tril(c_)))
    else:
        out = np.triu(np.matmul(np.triu(c_), sym))
    return (np_fit(out, c), None)


def _lu_rows(piv, n):
    """The row order of A that L U factors (LAPACK's interchanges applied in turn)."""
    perm = list(range(n))
    for i, p in enumerate(np.asarray(piv).tolist()):
        perm[i], perm[p] = perm[p], perm[i]
    return np.array(perm)


nondifferentiable_builtin(_lu_rows, reason="it computes a permutation")


def _op_solve_adjoint(solve, g, t):
    """op(A)⁻ᴴ x̄ for op = identity (0), transpose (1), conjugate transpose (2), with
    solve(rhs, trans) solving with A."""
    if t == 0:
        return solve(g, 2)
    if t == 2:
        return solve(g, 0)
    return np.conj(solve(np.conj(g), 0))


def sp_lu_solve_adjoint_b(g, lu_and_piv, b, ans, trans=0):
    """For op(A) x = b, A = P L U: b̄ = op(A)⁻ᴴ x̄."""
    t = _TRANS[trans]
    out = _op_solve_adjoint(lambda r, k: sp_linalg.lu_solve(lu_and_piv, r, trans=k),
                            np.asarray(g), t)
    return np_fit(out, b)


def sp_lu_solve_adjoint_lu(g, lu_and_piv, b, ans, trans=0):
    """op(A)̄ = -b̄ xᴴ carried back to Ā, then through A[rows] = L U (L unit lower, U upper,
    both stored in lu): L̄ = M̄ Uᴴ below the diagonal, Ū = Lᴴ M̄ on and above it. The
    pivots get no gradient."""
    lu, piv = lu_and_piv
    t = _TRANS[trans]
    m = np.asarray(lu)
    n = m.shape[-1]
    bb = np.asarray(sp_lu_solve_adjoint_b(g, lu_and_piv, b, ans, trans))
    x = np.asarray(ans)
    op_bar = -np.outer(bb, np.conj(x)) if x.ndim == 1 else -np.matmul(bb, _H(x))
    if t == 1:
        abar = np.swapaxes(op_bar, -1, -2)
    elif t == 2:
        abar = _H(op_bar)
    else:
        abar = op_bar
    mbar = abar[_lu_rows(piv, n)]
    low = np.tril(m, -1) + np.eye(n)
    up = np.triu(m)
    out = np.tril(np.matmul(mbar, _H(up)), -1) + np.triu(np.matmul(_H(low), mbar))
    return (np_fit(out, lu), None)


# ----- matrix functions: sqrtm, logm --------------------------------------------------------------


def _full(g, like):
    """The cotangent as a full array of like's shape (a broadcast scalar made whole)."""
    like = np.asarray(like)
    g = np.asarray(g)
    return g + np.zeros(like.shape, dtype=np.result_type(g, like))


def sp_sqrtm_adjoint(g, A, ans):
    """X X = A, so X dX + dX X = dA: dX solves a Sylvester equation, and its adjoint Ā
    solves Xᴴ Ā + Ā Xᴴ = X̄ (solve_sylvester, whose rule differentiates it again)."""
    xh = _H(np.asarray(ans))
    return np_fit(sp_linalg.solve_sylvester(xh, xh, _full(g, ans)), A)


def sp_logm_adjoint(g, A):
    """Ā = L(Aᴴ, Ḡ), the Fréchet derivative of logm at Aᴴ in the direction Ḡ: the upper
    right block of logm([[Aᴴ, Ḡ], [0, Aᴴ]]), so that it differentiates again through
    logm's own rule."""
    a = np.asarray(A)
    ah = _H(a)
    gg = _full(g, a)
    top = np.concatenate([ah, gg], axis=-1)
    bottom = np.concatenate([np.zeros(a.shape, dtype=top.dtype), ah], axis=-1)
    n = a.shape[-1]
    big = sp_linalg.logm(np.concatenate([top, bottom], axis=-2))
    return np_fit(big[..., :n, n:], A)


# ----- solve_sylvester: A X + X B = Q ------------------------------------------------------------


def sp_solve_sylvester_adjoint_q(g, a, b, q, ans=None):
    """Q̄ solves Aᴴ Q̄ + Q̄ Bᴴ = X̄, the adjoint of the Sylvester operator."""
    return np_fit(sp_linalg.solve_sylvester(_H(np.asarray(a)), _H(np.asarray(b)), _full(g, ans)), q)


def sp_solve_sylvester_adjoint_a(g, a, b, q, ans):
    """A dX + dX B = dQ - dA X - X dB, so Ā = -Q̄ Xᴴ."""
    qbar = sp_linalg.solve_sylvester(_H(np.asarray(a)), _H(np.asarray(b)), _full(g, ans))
    return np_fit(-np.matmul(qbar, _H(np.asarray(ans))), a)


def sp_solve_sylvester_adjoint_b(g, a, b, q, ans):
    """A dX + dX B = dQ - dA X - X dB, so B̄ = -Xᴴ Q̄."""
    qbar = sp_linalg.solve_sylvester(_H(np.asarray(a)), _H(np.asarray(b)), _full(g, ans))
    return np_fit(-np.matmul(_H(np.asarray(ans)), qbar), b)


# ----- cho_factor, lu_factor ----------------------------------------------------------------------


def sp_cho_factor_adjoint(g, a, ans, lower=False):
    """c holds the Cholesky factor of the Hermitian matrix H built from the triangle of a
    that cho_factor reads (the upper one unless lower), and a's other triangle as it was.
    With H = L Lᴴ (L = Uᴴ when upper), S = L⁻ᴴ Φ(Lᴴ L̄) L⁻¹ (Φ: the lower triangle, the
    diagonal halved) is the adjoint of H; an entry of the read triangle stands for H_ij
    and conj(H_ji), so it gets (S + Sᴴ)_ij, the diagonal (real, as LAPACK reads it)
    half of that. The other triangle gets its cotangent unchanged. The flag gets none."""
    gc, _ = np_parts(g, 2)
    if gc is None:
        return None
    c = np.asarray(ans[0])
    gc = _full(gc, c)
    n = c.shape[-1]
    eye = np.eye(n)
    if lower:
        L, gL = np.tril(c), np.tril(gc)
    else:  # c = U = Lᴴ: Re<Ū, dLᴴ> = Re<Ūᴴ, dL>
        L, gL = _H(np.triu(c)), _H(np.triu(gc))
    phi = np.tril(np.matmul(_H(L), gL)) * (1 - 0.5 * eye)
    left = np.linalg.solve(_H(L), phi)  # L⁻ᴴ Φ
    s = _H(np.linalg.solve(_H(L), _H(left)))  # L⁻ᴴ Φ L⁻¹
    full = s + _H(s)
    if lower:
        out = np.tril(full) - 0.5 * eye * full + np.triu(gc, 1)
    else:
        out = np.triu(full) - 0.5 * eye * full + np.tril(gc, -1)
    return np_fit(out, a)


def _lu_perm(piv, n):
    """P with P A = A[rows]: the row order of L U as a permutation matrix (for every
    matrix of a batch)."""
    piv = np.asarray(piv)
    flat = piv.reshape((-1, piv.shape[-1]))
    mats = np.stack([np.eye(n)[_lu_rows(p, n)] for p in flat])
    return mats.reshape(piv.shape[:-1] + (n, n))


nondifferentiable_builtin(_lu_perm, reason="it computes a permutation")


def sp_lu_factor_adjoint(g, a, ans):
    """P A = L U, packed in lu (L unit lower, below the diagonal; U on and above it).
    With F = L⁻¹ P dA U⁻¹: dL = L tril(F, -1), dU = triu(F) U, so
    P Ā = L⁻ᴴ (tril(Lᴴ L̄, -1) + triu(Ū Uᴴ)) U⁻ᴴ. Square matrices; the pivots get no
    gradient."""
    glu, _ = np_parts(g, 2)
    if glu is None:
        return None
    m = np.asarray(ans[0])
    n = m.shape[-1]
    if m.shape[-2] != n:
        raise MissingAdjointError(sp_linalg.lu_factor, (
            "its gradient is computed for square matrices only, not for this non-square "
            f"{m.shape[-2]}x{n} one; for a rectangular matrix use np.linalg.qr or lstsq"))
    gm = _full(glu, m)
    eye = np.eye(n)
    low = np.tril(m, -1) + eye
    up = np.triu(m)
    inner = np.tril(np.matmul(_H(low), np.tril(gm, -1)), -1) + np.triu(np.matmul(np.triu(gm), _H(up)))
    left = np.linalg.solve(_H(low), inner)  # L⁻ᴴ (...)
    if np.any(np.diagonal(up, 0, -2, -1) == 0):
        raise NotDifferentiableError(
            "scipy.linalg.lu_factor of a singular matrix: the factors' derivative needs "
            "U⁻¹, and U has a zero on its diagonal; differentiate np.linalg.det or "
            "np.linalg.pinv instead")
    right = _H(np.linalg.solve(up, _H(left)))  # (...) U⁻ᴴ
    perm = _lu_perm(ans[1], n)
    return np_fit(np.matmul(np.swapaxes(perm, -1, -2), right), a)


# ----- solve_banded -------------------------------------------------------------------------------


def _band_index(nrow, n, shift):
    """Row and column indices (nrow, n) of the diagonal-ordered storage, each column
    moved by shift per row, and where they fall inside the matrix."""
    k = np.arange(nrow)[:, None]
    j = np.arange(n)[None, :]
    cols = j + k - shift
    valid = (cols >= 0) & (cols < n)
    return k + 0 * j, np.clip(cols, 0, n - 1), valid


nondifferentiable_builtin(_band_index, reason="it computes indices")


def _band_transpose(ab, l, u):
    """The diagonal-ordered storage of Aᵀ (u lower, l upper diagonals) from ab, that of A
    (l lower, u upper; A[i, j] = ab[u + i - j, j]):
    abᵀ[k, j] = Aᵀ[j + k - l, j] = A[j, j + k - l] = ab[l + u - k, j + k - l]."""
    ab = np.asarray(ab)
    nrow, n = ab.shape[-2], ab.shape[-1]
    k, cols, valid = _band_index(nrow, n, l)
    return np.where(valid, ab[l + u - k, cols], 0)


def sp_solve_banded_adjoint_b(g, l_and_u, ab, b, ans=None):
    """b̄ = A⁻ᴴ x̄, solved banded with the storage of Aᴴ."""
    l, u = l_and_u
    abh = np.conj(_band_transpose(ab, l, u))
    return np_fit(sp_linalg.solve_banded((u, l), abh, _full(g, ans)), b)


def sp_solve_banded_adjoint_ab(g, l_and_u, ab, b, ans):
    """Ā = -b̄ xᴴ on the band, in ab's layout: ab̄[k, j] = Ā[j + k - u, j]; the unused
    corners of ab get zero."""
    l, u = l_and_u
    bb = np.asarray(sp_solve_banded_adjoint_b(g, l_and_u, ab, b, ans))
    x = np.conj(np.asarray(ans))
    nrow, n = np.shape(ab)[-2], np.shape(ab)[-1]
    _, rows, valid = _band_index(nrow, n, u)
    cols = np.arange(n)
    if bb.ndim == 1:
        vals = -(bb[rows] * x[cols][None, :])
    else:
        vals = -np.sum(bb[rows] * x[cols][None, :, :], axis=-1)
    return np_fit(np.where(valid, vals, 0), ab)
