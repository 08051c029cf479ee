"""Helpers of the ``scipy.linalg`` rules (rules/scipy_linalg.py): ``_rt.sp_linalg`` is
``scipy.linalg``, imported on first use (scipy is optional, and this module is imported
without it). The helpers are written with NumPy calls and the scipy.linalg functions
that have rules, so that the adjoints differentiate again."""
import numpy as np

from .base import _H, np_fit

__all__ = [  # the helpers templates reach as _rt.<name>
    "sp_expm_adjoint",
    "sp_linalg",
    "sp_solve_triangular_adjoint_a",
    "sp_solve_triangular_adjoint_b",
]


class _LazyLinalg:
    """``scipy.linalg``, imported on first use."""

    def __getattr__(self, name):
        import scipy.linalg

        return getattr(scipy.linalg, name)


sp_linalg = _LazyLinalg()


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
