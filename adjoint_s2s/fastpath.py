"""The caches behind the hot path of ``gradient``, ``grad`` and ``value_and_grad``.

A plain function's pairs are cached on it by the run time's dispatch
(``f.__adjoint_pairs__``: argument types -> ``(cell kinds, pair, floats, data guard)``,
``runtime/dispatch.py``). On the first cached call, ``fuse_hit`` appends the fused forms
(``fuse.py``): ``hit[4]``, the pair and its pullback as one function returning ``(value,
gradients)``; ``hit[5]``, for float arguments whose value ``fold.py`` proves a float, the
same lines returning the arguments' gradients alone. ``remember`` then keeps, on the
function, the argument types of that call and both forms (``f.__adjoint_last__``), so
the next call of one or two floats checks two types instead of building and hashing a
key: ``gradient``'s check is written out in ``api.gradient``, the others call ``last``.
The memo goes with the pair cache (``dispatch.forget_pairs`` drops both), and is kept
only for an entry without captured variables and data globals (their kinds would be
checked). It keeps the entry's identity checks (the functions and modules its global
names held when the code was written, ``emit._identity_guard``) as ``(name, object)``
pairs, which each call checks first, inline.
"""
import operator
import types

from . import fuse
from .kinds import FUNCTION as _CALLEE, LIBRARY, MISSING
from .runtime.dispatch import globals_fit, same_defaults

FUNCTION = types.FunctionType
ONE = object()  # the memo's second type for one argument (no value's type is this)
_MEMO_CHECKS = (None, _CALLEE, LIBRARY)  # the guard items the memo checks (remember)
_DEFAULTS = operator.attrgetter("__defaults__", "__kwdefaults__")
_STATE = operator.attrgetter("__code__", "__defaults__", "__kwdefaults__")


def hit(f, args):
    """The dispatch cache's entry for a plain function f called with args (no keywords)
    when it can be used as it is (no captured variables to check, its data globals still
    of their kinds), with its fused forms (fuse_hit); else None."""
    try:
        n = len(args)
        found = f.__adjoint_pairs__[
            (type(args[0]), type(args[1])) if n == 2
            else (type(args[0]),) if n == 1
            else tuple(map(type, args))
        ]
    except (AttributeError, KeyError):
        return None
    if (found[0] is not None or found[-2] is not f.__code__
            or (found[-1] is not None and not same_defaults(f, found[-1]))
            or (found[3] and not globals_fit(f.__globals__, found[3]))):
        return None
    if len(found) < 8:
        found = fuse_hit(f, args, found)
    if found[2] and n in (1, 2) and all(item[1] in _MEMO_CHECKS for item in found[3]):
        remember(f, args, found)
    return found


def remember(f, args, found):
    """Keep the fused forms of the cache entry found on f: ``(type of x, type of y or
    ONE, gradients-only form, fused function, identity checks)`` for a call with one
    argument x or two, x and y, all floats; only when there is a gradients-only form."""
    if found[5] is not None:
        second = type(args[1]) if len(args) == 2 else ONE
        # the objects themselves, not weak references: no call per check, and the memo
        # is replaced at the first call after a rebinding
        checks = tuple((item[0], item[2]()) for item in found[3] if item[1] is not LIBRARY)
        more = []  # (wanted, getter, object): the objects' state, checked as one tuple
        if found[-1] is not None:  # f's keyword defaults (keyword-only parameters)
            more.append((found[-1], _DEFAULTS, f))
        for name, kind, ref in found[3]:
            if kind is _CALLEE:  # a callee: its code and defaults too
                more.append(((ref.code, ref.defaults, ref.kwdefaults), _STATE, ref()))
            elif kind is LIBRARY:  # what a library module holds (guards._library_guard)
                more.append((ref[2], ref[1], ref[0]))
        f.__adjoint_last__ = (type(args[0]), second, found[5], found[4], checks, found[-2],
                              tuple(more), memo_check(checks, tuple(more)))


def memo_check(checks, more):
    """One function of f's globals, true while the memo's checks hold (raising when a
    name is gone): the names by one itemgetter, each object's state by its getter, in a
    single expression (a loop over them cost about 0.1 us more per cached call). None
    when there is nothing to check."""
    if any(held is MISSING for _, held in checks):  # (a name read as a builtin: absent)
        def loops(g):
            return all(g.get(n, MISSING) is h for n, h in checks) and all(w == get(o) for w, get, o in more)
        return loops
    parts, ns = [], {}
    if checks:
        ns["names"] = operator.itemgetter(*(n for n, _ in checks))
        ns["held"] = checks[0][1] if len(checks) == 1 else tuple(h for _, h in checks)
        parts.append("names(g) is held" if len(checks) == 1 else "names(g) == held")
    for i, (wanted, get, obj) in enumerate(more):
        ns.update({f"w{i}": wanted, f"get{i}": get, f"o{i}": obj})
        parts.append(f"w{i} == get{i}(o{i})")
    return eval("lambda g: " + " and ".join(parts), ns) if parts else None  # noqa: S307 (our own text)


def fuse_hit(f, args, found):
    """The dispatch cache's entry with its fused forms appended (fuse.fused_for; None
    where there is none), derived on its first cached call and kept in that entry, which
    goes whenever the pair goes."""
    fused = fuse.fused_for(f, found[1], found[2])
    pairs = f.__adjoint_pairs__
    key = tuple(map(type, args))
    new = found[:4] + fused + found[4:6]
    if pairs.get(key) is found:
        pairs[key] = new
    return new


def last(f, args):
    """The memo of f (remember) when it fits args, else None."""
    memo = getattr(f, "__adjoint_last__", None) if type(f) is FUNCTION else None
    if memo is None or not args or type(args[0]) is not memo[0]:
        return None
    n = len(args)
    if ((n == 2 and type(args[1]) is memo[1]) or (n == 1 and memo[1] is ONE)) and f.__code__ is memo[5]:
        g = f.__globals__
        for name, held in memo[4]:
            if g.get(name, MISSING) is not held:
                return None
        for wanted, get, obj in memo[6]:
            try:
                if wanted != get(obj):
                    return None
            except Exception:  # a value compared with no truth value, a name deleted
                return None
        return memo
    return None
