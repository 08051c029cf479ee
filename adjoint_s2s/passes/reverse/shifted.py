"""The shifted input of a max/min: ``z = a - m`` after ``m = np.max(a, ...)``.

The adjoint of ``m = np.max(a, axis, keepdims=True)`` finds where a equals m (``a == m``,
m broadcast over each slice). When the function also computes ``z = a - m`` (the
max-shift of a softmax), ``z == 0`` marks the same elements wherever m is finite
(IEEE subtraction: x - m is 0 exactly when x == m, for x NaN or infinite too), a
comparison with a number, without the broadcast. The forward then keeps that mask,
``z_zeros = _rt.shifted_zeros(z, a, m)`` right after z (None unless a, m and z are exact
ndarrays of one float dtype, z of a's shape and every m finite), and the adjoint reads
it in place of comparing a with m (rules/numpy/extremum.py); z itself stays a stand-in.

Proved here, on the normalised function, never assumed at run time: ``z = a - m`` is
the statement right after the max (nothing runs in between, so z == 0 is a == m for a
and m as the max left them, the values its adjoint reads), both of the function's top
level (run once, in order); m and z are bound once, a is a parameter never bound again
or a name bound once, and none of a, m, z goes anywhere that could write into it or
keep a view of it: each is read only as an operand of an arithmetic operator or
comparison with numbers, by a NumPy ufunc or reduction that returns a new array (no
out=), or for its shape, ndim, dtype or size.
"""
import gast
import numpy as np

from ..activity import CONST, NUMERIC

_NUM_CONST = NUMERIC + (CONST,)

_REDUCTIONS = frozenset(
    f for f in (getattr(np, n, None) for n in (
        "max", "min", "amax", "amin", "nanmax", "nanmin", "sum", "mean", "prod")) if f is not None)
_REDUCTION_KEYWORDS = frozenset({"axis", "keepdims"})
_ATTRS = frozenset({"shape", "ndim", "dtype", "size"})


def shifted_name(gen, stmt, a, m):
    """(z, the statement ``z = a - m``) when z holds a - m of the very objects a and m
    from that statement on, through the pullback, and stmt is ``m = np.max(a, ...)``
    (or another call); else None."""
    fn = gen.fn
    body = fn.body
    at = next((i for i, s in enumerate(body) if s is stmt), None)
    if (at is None or a == m or stmt.__class__ is not gast.Assign or len(stmt.targets) != 1
            or stmt.targets[0].__class__ is not gast.Name or stmt.targets[0].id != m
            or stmt.value.__class__ is not gast.Call):
        return None
    s = body[at + 1] if at + 1 < len(body) else None  # next: nothing runs in between
    z = None
    if (s.__class__ is gast.Assign and len(s.targets) == 1
            and s.targets[0].__class__ is gast.Name and s.value.__class__ is gast.BinOp
            and s.value.op.__class__ is gast.Sub
            and s.value.left.__class__ is gast.Name and s.value.left.id == a
            and s.value.right.__class__ is gast.Name and s.value.right.id == m):
        z, z_stmt = s.targets[0].id, s
    if z is None or z in (a, m):
        return None
    names = {a, m, z}
    params = set(gen.info.params)
    if m in params or z in params:
        return None
    stores = dict.fromkeys(names, 0)
    parents = {}
    for node in gast.walk(fn):
        if isinstance(node, (gast.FunctionDef, gast.Lambda, gast.Global, gast.Nonlocal,
                             gast.ClassDef, gast.AsyncFunctionDef)) and node is not fn:
            return None
        for child in gast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in gast.walk(fn):
        if node.__class__ is not gast.Name or node.id not in names:
            continue
        if node.ctx.__class__ is not gast.Load:
            if node.ctx.__class__ is gast.Param:
                continue
            stores[node.id] += 1
            continue
        if not _safe_read(gen, node, parents.get(id(node))):
            return None
    if stores[m] != 1 or stores[z] != 1 or stores[a] != (0 if a in params else 1):
        return None
    return z, z_stmt


def _numeric(gen, node):
    if node.__class__ is gast.Constant:
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    return node.__class__ is gast.Name and gen.kinds.get(node.id) in _NUM_CONST


def _safe_read(gen, node, parent):
    """node (a read of a, m or z) gives the value to nothing that could write into it or
    keep a view of it."""
    cls = parent.__class__
    if cls is gast.BinOp:
        return _numeric(gen, parent.left) and _numeric(gen, parent.right)
    if cls is gast.UnaryOp:
        return parent.op.__class__ in (gast.USub, gast.UAdd)
    if cls is gast.Compare:
        return all(_numeric(gen, e) for e in [parent.left] + parent.comparators)
    if cls is gast.Attribute:
        return parent.attr in _ATTRS and parent.value is node
    if cls is gast.Call and node in parent.args:
        obj = gen.resolve(parent.func)
        if isinstance(obj, np.ufunc):
            return not parent.keywords and len(parent.args) == obj.nin
        if obj in _REDUCTIONS:
            return (parent.args[0] is node and len(parent.args) <= 2
                    and all(k.arg in _REDUCTION_KEYWORDS for k in parent.keywords))
    return False
