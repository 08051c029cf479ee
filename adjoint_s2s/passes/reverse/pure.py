"""Whether a call of a Python function surely changes nothing in place: no argument, no
object it reaches. For the late-binding check (closures.py): a local function read
after a call that was given what it captures stays valid when the callee writes
nothing, as a rule's ``return f(A, x), back`` whose ``back`` reads A.

Conservative: the source of the function (and, for a function with a user rule, of the
rule too) must hold no store into a subscript or attribute, no augmented assignment, no
``global``/``nonlocal``, no method call but those that only read, and no call given
arguments unless its callee is a built-in rule (a template of ``primitive``, without
``out=``) or itself writes nothing (followed three calls deep). Anything unclear: it may
write.
"""
import builtins
import types

import gast

from ... import rules as R
from ...errors import AdjointError
from ...source import function_node

# methods of lists, dicts, tuples, strings and arrays that only read
READERS = frozenset(
    {"get", "copy", "index", "count", "keys", "values", "items", "__getitem__", "__len__",
     "__contains__", "startswith", "endswith", "format", "join", "split", "strip",
     "sum", "mean", "max", "min", "prod", "std", "var", "dot", "reshape", "ravel", "flatten",
     "transpose", "astype", "item", "tolist", "any", "all", "cumsum", "cumprod", "conj",
     "argmax", "argmin", "nonzero", "clip", "round", "trace", "diagonal", "squeeze"}
)
_READING_BUILTINS = frozenset({len, isinstance, range, print, repr, str, type, zip, enumerate})


def writes_nothing(fn, depth=3, seen=None):
    """True when a call of fn surely changes nothing in place (see the module docstring)."""
    if depth == 0 or not isinstance(fn, types.FunctionType):
        return False
    seen = set() if seen is None else seen
    if fn in seen:  # (being looked at further up: its own writes are looked at there)
        return True
    seen.add(fn)
    bodies = [fn]
    rule = R.lookup_user(fn)
    if rule is not None and rule.rule is not None:
        bodies.append(rule.rule)
    for g in bodies:
        if not isinstance(g, types.FunctionType):
            return False
        try:
            node = function_node(g)[0]
        except (AdjointError, OSError, TypeError, ValueError):
            return False
        if not _clean(node, g.__globals__, depth, seen):
            return False
    return True


def _clean(node, glob, depth, seen):
    """(the body only: a decorator ran when the function was defined)"""
    body = node.body if isinstance(node.body, list) else [node.body]
    for n in (n for stmt in body for n in gast.walk(stmt)):
        if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(n.ctx, (gast.Store, gast.Del)):
            return False
        if isinstance(n, (gast.AugAssign, gast.Global, gast.Nonlocal)):
            return False
        if isinstance(n, gast.Call) and not _clean_call(n, glob, depth, seen):
            return False
    return True


def _clean_call(call, glob, depth, seen):
    f = call.func
    if not call.args and not call.keywords:
        return not isinstance(f, gast.Attribute) or f.attr in READERS or _resolved(f, glob) is not None
    callee = _resolved(f, glob)
    if callee is None:
        return False
    if any(k.arg == "out" for k in call.keywords):
        return False
    if _hashable(callee) and (callee in R.PRIMITIVES or callee in _READING_BUILTINS):
        return True
    if isinstance(f, gast.Attribute) and f.attr in READERS and not isinstance(callee, types.FunctionType):
        return True
    return writes_nothing(callee, depth - 1, seen)


def _hashable(x):
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _resolved(e, glob):
    """What a name or a dotted name reads in the function's module, or None (a local, a
    parameter, anything else)."""
    if isinstance(e, gast.Name):
        if e.id in glob:
            return glob[e.id]
        return getattr(builtins, e.id, None)
    if isinstance(e, gast.Attribute):
        base = _resolved(e.value, glob)
        if isinstance(base, types.ModuleType):
            return getattr(base, e.attr, None)
    return None
