"""The caches behind the hot path of ``gradient``, ``grad`` and ``value_and_grad``.

A plain function's pairs are cached on it by the run time's dispatch
(``f.__adjoint_pairs__``: argument types -> ``(cell kinds, pair, floats, data guard)``,
``runtime/dispatch.py``). On the first cached call, ``fuse_hit`` appends the fused forms
(``fuse.py``): ``hit[4]``, the pair and its pullback as one function returning ``(value,
gradients)``; ``hit[5]``, for float arguments whose value ``fold.py`` proves a float, the
same lines returning the arguments' gradients alone. ``remember`` then keeps, on the
function, the argument types of that call and both forms (``f.__adjoint_last__``), so
the next call of one or two floats checks two types instead of building and hashing a
key: the memo's checks are one compiled expression (``memo_check``), which
``api.gradient`` calls itself and the others through ``last``.
The memo goes with the pair cache (``dispatch.forget_pairs`` drops both), and is kept
only for an entry without captured variables and data globals (their kinds would be
checked). It keeps the entry's identity checks (the functions and modules its global
names held when the code was written, ``emit._identity_guard``) as ``(name, object)``
pairs, which each call checks first, inline.
"""
import operator
import types

from . import fuse
from .kinds import DICT_ITEMS, FUNCTION as _CALLEE, ITEMS, LIBRARY, MISSING, ROW_ITEMS, TUPLE_ITEMS, VECTOR
from .guards import kw_values
from .runtime.dispatch import globals_fit, same_defaults

FUNCTION = types.FunctionType
ONE = object()  # the memo's second type for one argument (no value's type is this)
_MEMO_CHECKS = (None, _CALLEE, LIBRARY)  # the guard items the memo checks (remember)
_DEFAULTS = operator.attrgetter("__defaults__", "__kwdefaults__")
_STATE = operator.attrgetter("__code__", "__defaults__", "__kwdefaults__")


def _state_kw(f):  # _STATE and the values of the keyword defaults (a dict changed in place)
    return f.__code__, f.__defaults__, f.__kwdefaults__, kw_values(f.__kwdefaults__)


def _defaults_kw(f):  # _DEFAULTS, and as _state_kw
    return f.__defaults__, f.__kwdefaults__, kw_values(f.__kwdefaults__)


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
    check = found[0]
    if check is not None and not (check[0] is None and type(check[1]) is tuple and _items_only(check[1])
                                  and check.fits(f, args)):
        return None  # (captured variables, or records' fields read at the entry: the slow way)
    if (found[-2] is not f.__code__
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
    ONE, gradients-only form, fused function, identity checks, f's code, the objects'
    state checks, fits)`` for a call with one argument x or two, x and y, all floats;
    only when there is a gradients-only form. ``fits(f, args)`` is every check of the
    memo as one compiled expression (memo_check)."""
    if found[5] is not None:
        second = type(args[1]) if len(args) == 2 else ONE
        # the objects themselves, not weak references: no call per check, and the memo
        # is replaced at the first call after a rebinding
        checks = tuple((item[0], item[2]()) for item in found[3] if item[1] is not LIBRARY)
        more = []  # (wanted, getter, object): the objects' state, checked as one tuple
        if found[-1] is not None:  # f's keyword defaults (keyword-only parameters)
            own = found[-1]
            more.append((own, _defaults_kw, f) if own[2] is not None else (own[:2], _DEFAULTS, f))
        for name, kind, ref in found[3]:
            if kind is _CALLEE:  # a callee: its code and defaults too
                _callee_state(ref, more)
            elif kind is LIBRARY:  # what a library module holds (guards._library_guard)
                more.append((ref[2], ref[1], ref[0]))
        types_ = (type(args[0]),) + ((second,) if second is not ONE else ())
        f.__adjoint_last__ = (type(args[0]), second, found[5], found[4], checks, found[-2],
                              tuple(more), memo_check(f, types_, checks, tuple(more)))


def _callee_state(ref, more):
    """The checks of a callee's state (guards._FunctionRef): its code and defaults, and for
    a wrapper that only forwards, the function its cell names and that one's state."""
    while ref is not None:
        if ref.kwvalues is not None:
            more.append(((ref.code, ref.defaults, ref.kwdefaults, ref.kwvalues), _state_kw, ref()))
        else:
            more.append(((ref.code, ref.defaults, ref.kwdefaults), _STATE, ref()))
        if ref.inner is None:
            return
        cell, ref = ref.inner
        more.append((ref(), _CONTENTS, cell))


_CONTENTS = operator.attrgetter("cell_contents")


def memo_check(f, types_, checks, more):
    """``fits(f, args)``: true while the memo fits a call of f with args (a tuple): as many
    arguments as types_, of those types, f's code the same, its globals naming the same
    objects, each object's state as it was; raising when a name is gone or a value has no
    truth value (no fit). One compiled expression, written out: a function call per group
    of checks cost about 0.05 us each on the hottest path. A library namespace holding
    few names is checked name by name (``o0["sin"] is v0_0``, about 20 ns each), one
    holding more by one lookup of them all and one comparison of tuples."""
    ns = {"g": f.__globals__, "code": f.__code__}
    parts = [f"len(a) == {len(types_)}"]
    for i, t in enumerate(types_):
        ns[f"t{i}"] = t
        parts.append(f"type(a[{i}]) is t{i}")
    parts.append("f.__code__ is code")
    for i, (name, held) in enumerate(checks):
        if held is MISSING:  # a name read as a builtin: absent from the globals still
            parts.append(f"{name!r} not in g")
        else:
            ns[f"h{i}"] = held
            parts.append(f"g[{name!r}] is h{i}")
    for i, (wanted, get, obj) in enumerate(more):
        names = get.__reduce__()[1] if type(get) is operator.itemgetter else ()
        if type(obj) is dict and 0 < len(names) <= 4:
            ns[f"o{i}"] = obj
            values = wanted if len(names) > 1 else (wanted,)
            for j, (name, value) in enumerate(zip(names, values)):
                ns[f"v{i}_{j}"] = value
                parts.append(f"o{i}[{name!r}] is v{i}_{j}")
        else:
            ns.update({f"w{i}": wanted, f"get{i}": get, f"o{i}": obj})
            parts.append(f"w{i} == get{i}(o{i})")
    return eval("lambda f, a: " + " and ".join(parts), ns)  # noqa: S307 (our own text)


def _items_only(fields):
    """Are the key's field kinds (kinds.field_kinds) all of lists, tuples, dicts and 1-D
    arrays (whose gradients are the arguments' own), none of a record's fields?"""
    for _, fs in fields:
        if fs[0][0] not in _ITEM_TAGS:
            return False
    return True


_ITEM_TAGS = (ITEMS, TUPLE_ITEMS, DICT_ITEMS, VECTOR, ROW_ITEMS)


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
    if memo is None:
        return None
    try:
        return memo if memo[7](f, args) else None
    except Exception:  # a name deleted, a value compared with no truth value
        return None
