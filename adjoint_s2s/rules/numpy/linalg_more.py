"""More of ``np.linalg``: eig, eigvals, tensorinv, tensorsolve, multi_dot.

``eig``'s eigenvectors have unit norm and a phase LAPACK picks: the gradient is the one
of that normalisation (ChainRules' for ``eigen``), and a function of the eigenvectors is
differentiable only where it does not depend on their phase (``abs(v)``, ``v vᴴ``...),
as for ``eigh`` and ``svd``. Distinct eigenvalues are assumed.
"""
import numpy as np

from .base import _CURRENT, _H, np_fit, np_parts, rule
from .decompositions import _gap_inverse, np_inv_adjoint

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_eig_adjoint",
    "np_eigvals_adjoint",
    "np_multi_dot_adjoint",
    "np_tensorinv_adjoint",
    "np_tensorsolve_adjoint_a",
    "np_tensorsolve_adjoint_b",
]


def _eig_back(gw, gv, w, v):
    """A = V diag(w) V⁻¹, columns of V of unit norm:
    Ā = V⁻ᴴ (diag(w̄) + conj(F)∘(Vᴴ (V̄ - V diag(Re(Vᴴ V̄))))) Vᴴ, F = 1/(w_j - w_i)."""
    n = w.shape[-1]
    inner = np.zeros(v.shape, dtype=complex)
    if gw is not None:
        inner = inner + np.asarray(gw)[..., :, None] * np.eye(n)
    if gv is not None:
        gv = np.asarray(gv)
        d = np.real(np.sum(np.conj(v) * gv, axis=-2))  # Re diag(Vᴴ V̄)
        inner = inner + np.conj(_gap_inverse(w)) * (_H(v) @ (gv - v * d[..., None, :]))
    return np.linalg.solve(_H(v), inner @ _H(v))


def np_eig_adjoint(g, a, ans):
    gw, gv = np_parts(g, 2)
    if gw is None and gv is None:
        return None
    return np_fit(_eig_back(gw, gv, ans[0], ans[1]), a)


def np_eigvals_adjoint(g, a):
    w, v = np.linalg.eig(a)
    return np_fit(_eig_back(g, None, w, v), a)


_CURRENT[0] = "Linear algebra"

_la = np.linalg

rule(_la.eig, "a", kind="other", adjoints={"a": "_rt.np_eig_adjoint(g, a, ans)"},
     note="distinct eigenvalues; unit-norm eigenvectors (phase-invariant functions of them)")
rule(_la.eigvals, "a", adjoints={"a": "_rt.np_eigvals_adjoint(g, a)"},
     note="distinct eigenvalues")


def np_tensorinv_adjoint(g, a, ans, ind=2):
    shape = np.shape(a)
    rows = int(np.prod(shape[:ind]))
    m = np.reshape(a, (rows, -1))
    inv = np.reshape(ans, (m.shape[1], rows))
    gm = np_inv_adjoint(np.reshape(g, inv.shape), m, inv)
    return np_fit(np.reshape(gm, shape), a)


rule(_la.tensorinv, "a, ind=2", adjoints={"a": "_rt.np_tensorinv_adjoint(g, a, ans, ind)"})


def _tensorsolve_order(ndim, axes):
    """The axis order tensorsolve moves a into (the axes given go last)."""
    if axes is None:
        return list(range(ndim))
    moved = [int(k) % ndim for k in axes]
    return [i for i in range(ndim) if i not in moved] + moved


def _tensorsolve_matrix(a, b, axes):
    order = _tensorsolve_order(np.ndim(a), axes)
    moved = np.transpose(a, order)
    n = int(np.prod(np.shape(b)))
    return moved.reshape((n, -1)), moved.shape, order


def np_tensorsolve_adjoint_b(g, a, b, ans, axes=None):
    m, _, _ = _tensorsolve_matrix(a, b, axes)
    gb = np.linalg.solve(_H(m), np.reshape(g, (-1,)))
    return np_fit(np.reshape(gb, np.shape(b)), b)


def np_tensorsolve_adjoint_a(g, a, b, ans, axes=None):
    m, moved_shape, order = _tensorsolve_matrix(a, b, axes)
    gb = np.linalg.solve(_H(m), np.reshape(g, (-1,)))
    gm = -(gb[:, None] * np.conj(np.reshape(ans, (-1,)))[None, :])
    back = np.transpose(np.reshape(gm, moved_shape), np.argsort(order))
    return np_fit(back, a)


rule(_la.tensorsolve, "a, b, axes=None",
     adjoints={"a": "_rt.np_tensorsolve_adjoint_a(g, a, b, ans, axes)",
               "b": "_rt.np_tensorsolve_adjoint_b(g, a, b, ans, axes)"})


def np_multi_dot_adjoint(g, arrays):
    """Y = A₁ A₂ ⋯ A_k (a 1-d first array a row, a 1-d last one a column):
    Āᵢ = (A₁⋯Aᵢ₋₁)ᴴ Ȳ (Aᵢ₊₁⋯A_k)ᴴ."""
    mats = [np.asarray(x) for x in arrays]
    k = len(mats)
    first_1d = mats[0].ndim == 1
    last_1d = mats[-1].ndim == 1
    if first_1d:
        mats[0] = mats[0][None, :]
    if last_1d:
        mats[-1] = mats[-1][:, None]
    gm = np.reshape(g, (mats[0].shape[0], mats[-1].shape[1]))
    left = [np.eye(mats[0].shape[0])]
    for i in range(k - 1):
        left.append(left[-1] @ mats[i])
    right = [np.eye(mats[-1].shape[1])]
    for i in range(k - 1, 0, -1):
        right.append(mats[i] @ right[-1])
    grads = []
    for i in range(k):
        gi = _H(left[i]) @ gm @ _H(right[k - 1 - i])
        grads.append(np_fit(np.reshape(gi, np.shape(arrays[i])), arrays[i]))
    return tuple(grads) if isinstance(arrays, tuple) else grads


rule(_la.multi_dot, "arrays", adjoints={"arrays": "_rt.np_multi_dot_adjoint(g, arrays)"})
