"""Helpers of the ``scipy.linalg`` rules (rules/scipy_linalg.py): ``_rt.sp_linalg`` is
``scipy.linalg``, imported on first use (scipy is optional, and this module is imported
without it). The helpers are written with NumPy calls and the scipy.linalg functions
that have rules, so that the adjoints differentiate again."""
import numpy as np

from .. import nondifferentiable_builtin
from .base import _H, np_fit
from .scipy_special import LazyModule

__all__ = [  # the helpers templates reach as _rt.<name>
    "sp_cho_solve_adjoint_b",
    "sp_cho_solve_adjoint_c",
    "sp_expm_adjoint",
    "sp_linalg",
    "sp_lu_solve_adjoint_b",
    "sp_lu_solve_adjoint_lu",
    "sp_solve_triangular_adjoint_a",
    "sp_solve_triangular_adjoint_b",
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
