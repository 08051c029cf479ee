"""Casts to an integer or bool dtype, read from the source: ``v.astype(int)``,
``np.asarray(v, dtype="int64")``, ``np.sum(v, dtype=bool)``, any call of a rule's
function with a ``dtype`` parameter. A cast to integers or bools is piecewise constant:
its result carries no gradient, as ``int(v)``'s does not.

Where the call writes its dtype out (a string, ``None``, a builtin or a global that names
a type) it is known now: the activity analysis makes the result of a cast to integers
inactive (``casts_to_integers``), and a template is inlined only for ``None`` or a float
or complex dtype (``inline_dtype``). Any other dtype (a local name, ``x.dtype``) is known
when the call runs: the run-time version of the rule reads it (``runtime.integral_dtype``).
"""
import gast
import numpy as np

from .. import rules as R
from ..kinds import ARRAY

_UNKNOWN = object()  # a dtype known only when the call runs


def dtype_argument(e, obj, kind_of):
    """The node the call e gives as its dtype (by name or in position), or None when it
    gives none or calls no rule's function with a dtype parameter. obj is what e.func
    names (None for a method of a local value: an array's method uses its rule)."""
    args = e.args
    if obj is None:
        f = e.func
        if f.__class__ is not gast.Attribute or f.attr not in R.ARRAY_METHODS or kind_of(f.value) != ARRAY:
            return None
        obj, args = R.ARRAY_METHODS[f.attr], [f.value] + args
    kwnames = tuple(k.arg for k in e.keywords)
    if len(args) < 2 and "dtype" not in kwnames:
        return None  # (most calls: a dtype comes second or later, or by name)
    if None in kwnames or any(a.__class__ is gast.Starred for a in args):
        return None
    prim = R.lookup_primitive(obj, len(args), kwnames)
    bound = prim.bind(len(args), kwnames) if prim is not None else None
    if bound is None or "dtype" not in bound:
        return None
    return (list(args) + [k.value for k in e.keywords])[bound.index("dtype")]


def written_dtype(node, resolve):
    """The dtype node writes out: None for None, a NumPy dtype, or _UNKNOWN."""
    if node.__class__ is gast.Constant:
        v = node.value
        if v is None:
            return None
        return _dtype(v) if isinstance(v, str) else _UNKNOWN
    if node.__class__ in (gast.Name, gast.Attribute):
        obj = resolve(node)
        if isinstance(obj, (type, np.dtype, str)):
            return _dtype(obj)
    return _UNKNOWN


def _dtype(v):
    try:
        return np.dtype(v)
    except TypeError:
        return _UNKNOWN


def casts_to_integers(e, obj, resolve, kind_of):
    """Is the call e (of obj, see dtype_argument) a cast to an integer or bool dtype
    written out? Its result has no tangent."""
    node = dtype_argument(e, obj, kind_of)
    if node is None:
        return False
    dt = written_dtype(node, resolve)
    return isinstance(dt, np.dtype) and dt.kind in "biu"


def inline_dtype(node, resolve):
    """May a call whose dtype argument is node have its templates inlined? Only for a
    dtype written out as None or a float or complex one: any other is a cast to integers
    (no gradient) or known when the call runs (its run-time rule decides)."""
    dt = written_dtype(node, resolve)
    return dt is None or (dt is not _UNKNOWN and dt.kind in "fc")
