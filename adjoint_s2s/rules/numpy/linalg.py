"""Rules of NumPy's linear algebra (dot, matmul, einsum, inv, det, solve, cholesky,
eigh, svd, qr, pinv, lstsq, ...), each helper beside the rules that call it.

Matrix functions of a symmetric/Hermitian argument (``cholesky``, ``eigh``) return a
symmetrised gradient, as autograd, JAX and ChainRules do.
"""
import string

import numpy as np

from .base import _by_keyword, _CURRENT, _H, _np, _sum_to, _two, np_fit, rule
from .elementwise import _expand_axis

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_cross_adjoint_a",
    "np_cross_adjoint_b",
    "np_dot_adjoint_a",
    "np_dot_adjoint_b",
    "np_einsum_adjoint",
    "np_inner_adjoint_a",
    "np_inner_adjoint_b",
    "np_kron_adjoint_a",
    "np_kron_adjoint_b",
    "np_matmul_grad_a",
    "np_matmul_grad_b",
    "np_outer_adjoint_a",
    "np_outer_adjoint_b",
    "np_tensordot_adjoint_a",
    "np_tensordot_adjoint_b",
    "np_vdot_adjoint_a",
    "np_vdot_adjoint_b",
    "np_vecdot_adjoint_a",
    "np_vecdot_adjoint_b",
]


# ----- linear algebra ------------------------------------------------------------------------


def _scalar_product(g, other, x):
    return np_fit(np.asarray(g) * np.conj(other), x)


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


def _kron_layout(a, b):
    sa, sb = np.shape(a), np.shape(b)
    d = max(len(sa), len(sb))
    sa = (1,) * (d - len(sa)) + tuple(sa)
    sb = (1,) * (d - len(sb)) + tuple(sb)
    inter = [v for pa, pb in zip(sa, sb) for v in (pa, pb)]
    return d, sa, sb, inter


def _tensordot_axes(axes, na, nb):
    if np.ndim(axes) == 0:
        n = int(axes)
        return list(range(na - n, na)), list(range(n))
    xa, xb = axes
    xa = [int(xa)] if np.ndim(xa) == 0 else [int(v) for v in xa]
    xb = [int(xb)] if np.ndim(xb) == 0 else [int(v) for v in xb]
    return [v % na for v in xa], [v % nb for v in xb]


def _einsum_specs(subscripts, shapes):
    """Input and output labels with '...' spelled out as fresh letters (right-aligned)."""
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts {subscripts!r} are neither a string nor sublists")
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


# =====================================================================================
# Linear algebra
# =====================================================================================
_CURRENT[0] = "Linear algebra"


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


rule(np.dot, "a, b", adjoints=_two("np_dot_adjoint", "a", "b"))


def np_matmul_grad_a(g, a, b):
    g2, a2, b2 = _promote_matmul(g, a, b)
    out = _sum_to(g2 @ _H(b2), a2.shape)
    return np_fit(out.reshape(np.shape(a)), a)


def np_matmul_grad_b(g, a, b):
    g2, a2, b2 = _promote_matmul(g, a, b)
    out = _sum_to(_H(a2) @ g2, b2.shape)
    return np_fit(out.reshape(np.shape(b)), b)


for _fn in (np.matmul, _np("matmul", np.linalg)):
    rule(_fn, "x1, x2", adjoints=_two("np_matmul_grad", "x1", "x2"))


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


rule(np.inner, "a, b", adjoints=_two("np_inner_adjoint", "a", "b"))


def np_vdot_adjoint_a(g, a, b):
    """vdot(a, b) = Σ conj(a)·b is antilinear in a: ā = conj(g)·b."""
    return np_fit((np.conj(g) * np.ravel(b)).reshape(np.shape(a)), a)


def np_vdot_adjoint_b(g, a, b):
    return np_fit((np.asarray(g) * np.ravel(a)).reshape(np.shape(b)), b)


rule(np.vdot, "a, b", adjoints=_two("np_vdot_adjoint", "a", "b"),
     note="conjugates its first argument: ā = conj(g)·b")


def np_vecdot_adjoint_a(g, x1, x2, axis=-1):
    """vecdot(x1, x2) = Σ conj(x1)·x2 along axis: x̄1 = conj(g)·x2."""
    return np_fit(np.conj(_expand_axis(g, axis)) * np.asarray(x2), x1)


def np_vecdot_adjoint_b(g, x1, x2, axis=-1):
    return np_fit(_expand_axis(g, axis) * np.asarray(x1), x2)


for _fn in (_np("vecdot"), _np("vecdot", np.linalg)):
    _by_keyword(rule(_fn, "x1, x2, axis=-1", adjoints=_two("np_vecdot_adjoint", "x1", "x2", "axis"),
                     note="conjugates its first argument"))


def np_outer_adjoint_a(g, a, b):
    return np_fit((np.asarray(g) @ np.conj(np.ravel(b))).reshape(np.shape(a)), a)


def np_outer_adjoint_b(g, a, b):
    return np_fit((np.conj(np.ravel(a)) @ np.asarray(g)).reshape(np.shape(b)), b)


rule(np.outer, "a, b", adjoints=_two("np_outer_adjoint", "a", "b"))


rule(_np("outer", np.linalg), "x1, x2", adjoints=_two("np_outer_adjoint", "x1", "x2"))


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


rule(np.kron, "a, b", adjoints=_two("np_kron_adjoint", "a", "b"))


def _cross_last(g, a, b, axisa, axisb, axisc, axis):
    """g, a and b with their vector axes last (``axis`` overrides the other three)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = np.asarray(a), np.asarray(b)
    return np.moveaxis(np.asarray(g), axisc, -1), np.moveaxis(a, axisa, -1), \
        np.moveaxis(b, axisb, -1), axisa, axisb


def _cross_back(grad, x, ax):
    """A gradient computed with x's vector axis last, projected onto x."""
    xl = np.moveaxis(np.asarray(x), ax, -1)
    return np_fit(np.moveaxis(np_fit(grad, xl), -1, ax), x)


def np_cross_adjoint_a(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    gl, al, bl, axisa, _ = _cross_last(g, a, b, axisa, axisb, axisc, axis)
    return _cross_back(np.cross(np.conj(bl), gl), a, axisa)


def np_cross_adjoint_b(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    gl, al, bl, _, axisb = _cross_last(g, a, b, axisa, axisb, axisc, axis)
    return _cross_back(np.cross(gl, np.conj(al)), b, axisb)


rule(np.cross, "a, b, axisa=-1, axisb=-1, axisc=-1, axis=None",
     adjoints=_two("np_cross_adjoint", "a", "b", "axisa", "axisb", "axisc", "axis"),
     note="3-vectors along the chosen axes")


rule(_np("cross", np.linalg), "x1, x2, axis=-1", adjoints={
    "x1": "_rt.np_cross_adjoint_a(g, x1, x2, -1, -1, -1, axis)",
    "x2": "_rt.np_cross_adjoint_b(g, x1, x2, -1, -1, -1, axis)",
})


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


rule(np.tensordot, "a, b, axes=2", adjoints=_two("np_tensordot_adjoint", "a", "b", "axes"))


_by_keyword(rule(_np("tensordot", np.linalg), "x1, x2, axes=2",
                 adjoints=_two("np_tensordot_adjoint", "x1", "x2", "axes")))


_OPS = ["op0", "op1", "op2", "op3", "op4", "op5"]


def _einsum_sublists(args):
    """einsum's sublist form (op, [0, 1], op, [1, 2], [0, 2]) as a subscripts string,
    the operands and the position of each operand among args."""
    def letters(sub):
        return "".join("..." if v is Ellipsis else string.ascii_letters[int(v)] for v in sub)

    pairs = len(args) // 2
    specs = [letters(args[2 * k + 1]) for k in range(pairs)]
    subscripts = ",".join(specs)
    if len(args) % 2:
        subscripts += "->" + letters(args[-1])
    return subscripts, [args[2 * k] for k in range(pairs)], [2 * k for k in range(pairs)]


def np_einsum_adjoint(g, subscripts, operands, i):
    """The adjoint of argument i + 1 of an einsum (i = -1: the first, the subscripts in the
    string form, an operand in the sublist form)."""
    if isinstance(subscripts, str):
        return None if i < 0 else _einsum_operand_adjoint(g, subscripts, operands, i)
    spec, ops, where = _einsum_sublists((subscripts,) + tuple(operands))
    if i + 1 not in where:
        return None  # a sublist of labels
    return _einsum_operand_adjoint(g, spec, ops, where.index(i + 1))


def _einsum_operand_adjoint(g, subscripts, operands, i):
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
        eff_ops.append(np.reshape(o, [o.shape[k] for k in keep]))  # o may be a NumPy scalar
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
        G = np.reshape(G, np.shape(G) + (1,) * len(missing))
        G = np.transpose(G, np.argsort([target.index(c) for c in comp + "".join(missing)]))
        G = np.broadcast_to(G, [sizes[c] for c in target])
    if len(target) < len(spec_i):  # repeated labels: write onto the diagonal
        full = np.zeros([sizes[c] for c in spec_i], dtype=np.result_type(G, float))
        grids = np.indices([sizes[c] for c in target], sparse=True)
        full[tuple(grids[target.index(c)] for c in spec_i)] = G
        G = full
    return np_fit(np.reshape(G, np.shape(operands[i])), operands[i])


for _n in range(1, len(_OPS) + 1):
    _names = _OPS[:_n]
    _tuple = "(" + ", ".join(_names) + ",)"
    _adj = {p: f"_rt.np_einsum_adjoint(g, subscripts, {_tuple}, {i})"
            for i, p in enumerate(_names)}
    _adj["subscripts"] = f"_rt.np_einsum_adjoint(g, subscripts, {_tuple}, -1)"
    rule(np.einsum, "subscripts, " + ", ".join(_names), adjoints=_adj,
         note="any subscripts (implicit output, '...', repeated labels) or the sublist "
              "form; up to 6 operands; optimize= (any value: it orders the contraction, "
              "the value and the gradient are the same)")
    # optimize= (keyword-only) changes the contraction order, not the value: the same
    # adjoints (each an einsum of its own); keyed apart from the variant as long as it
    rule(np.einsum, "subscripts, " + ", ".join(_names) + ", optimize=False", adjoints=_adj,
         key=("optimize", _n))
