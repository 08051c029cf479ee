"""What generated code assumed of its function's globals, and the checks of it at a call.

When the transformer writes a function's code it records what it read of the module's
globals (``emit._RecordingGlobals``): the kind of a number, an array or a container, the
identity of a callee, module or builtin it resolved, the type of an object. An entry is
reused only where those facts still hold (``_same_fact``); the cached call paths check
the part that may change between calls, the *guard*, at every call
(``globals_fit``, below): ``(name, type, dtype kind)`` for data, ``(name,
None, reference)`` for an identity, ``(name, FUNCTION, reference)`` for a function,
whose code, defaults and keyword defaults are checked too (``_FunctionRef``: IPython's
autoreload sets ``__code__`` and ``__defaults__`` of a function in place), and ``(name,
LIBRARY, (namespace, getter, objects))`` for the functions a library module held when
the code inlined their rules (``math.exp = ...`` makes the code again).
"""
import builtins
import operator
import sys
import types
import weakref

import numpy as np

from .passes import activity
from .kinds import (
    CODE_LIKE as _CODE_LIKE, FUNCTION, LIBRARY, MISSING, MODULE_ATTR, REAL, f8_vector, forwarding_cell, items_kind,
    records_kind, rows_kind, static_attr,
)
from .runtime.sites import is_library_file


class _FunctionRef(weakref.ref):
    """A weak reference to a function, with the state its code was written for: its
    code, defaults and keyword defaults (assigned in place, the same function computes
    something else), and for a wrapper that only forwards its arguments
    (kinds.forwarding_cell) the cell naming the function it calls, with a reference to
    that one in the same way (``inner``: code may have inlined it). ``same_function``
    checks them."""

    __slots__ = ("code", "defaults", "kwdefaults", "kwvalues", "inner")

    def __init__(self, fn, callback=None):
        super().__init__(fn, callback)
        self.code, self.defaults, self.kwdefaults = fn.__code__, fn.__defaults__, fn.__kwdefaults__
        self.kwvalues = kw_values(fn.__kwdefaults__)
        cell = forwarding_cell(fn)
        self.inner = None if cell is None else (cell, _FunctionRef(cell.cell_contents))


def _inner_same(inner):
    """Whether a forwarding wrapper's cell still names the function it named, unchanged."""
    cell, ref = inner
    try:
        return same_function(ref, cell.cell_contents)
    except ValueError:  # (the cell emptied)
        return False


def kw_values(kw):
    """The values a function's keyword defaults hold, or None for none: the same dict
    changed in place (`f.__kwdefaults__["w"] = 5.0`) holds other values."""
    return tuple(kw.values()) if kw else None


def same_kw_values(kw, values):
    """Whether the keyword defaults kw hold the values kw_values took (the same objects)."""
    return values is None or len(kw) == len(values) and all(a is b for a, b in zip(kw.values(), values))


def _weak(obj):
    """A weak reference to obj where one can be taken (functions, classes, modules), so
    the cache never keeps the user's objects alive; else obj itself (builtins, ufuncs).
    A function's holds its code and defaults too (_FunctionRef)."""
    if type(obj) is types.FunctionType:
        return _FunctionRef(obj)
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda obj=obj: obj


def _identity_item(name, ref):
    """The guard item checking that name still holds what ref refers to (a function: in
    the same state)."""
    return (name, FUNCTION if type(ref) is _FunctionRef else None, ref)


def _fact(value):
    """What generated code may have assumed of a global's value: its kind for a number,
    an array or a plain container (their values are read when the code runs), its
    identity for anything else (a callee, a module, a class)."""
    if value is MISSING:
        return MISSING
    t = type(value)
    if t in _BY_TYPE:
        return t
    if t is np.ndarray:
        return ("ndarray", value.dtype.kind)
    return _weak(value)


_BY_TYPE = {int, float, complex, bool, str, bytes, type(None), list, dict, tuple, set, frozenset}


_ARRAY_ITEMS = "array items"  # the fact of a list or tuple of number arrays (see below)
_REAL_ITEMS = "real items"  # of a list or tuple of ints and floats (kinds.items_kind)
_REAL_ROWS = "real rows"  # of a list or tuple of rows of ints and floats (kinds.rows_kind)
_F8_VECTOR = "float64 vector"  # of a 1-D float64 array: its items are numbers (kinds.f8_vector)
_REAL_RECORDS = "real records"  # of a list or tuple of dicts of numbers by string keys (kinds.records_kind)
_ITEM_FACTS = (_ARRAY_ITEMS, _REAL_ITEMS, _REAL_ROWS, _F8_VECTOR, _REAL_RECORDS)


def _same_fact(fact, value):
    if type(fact) is tuple and fact[0] == _ARRAY_ITEMS:
        return type(value) is fact[1] and len(value) > 0 and activity.all_number_arrays(value)
    if type(fact) is tuple and fact[0] == _REAL_ITEMS:
        return type(value) is fact[1] and items_kind(value) == REAL
    if type(fact) is tuple and fact[0] == _REAL_ROWS:
        return type(value) is fact[1] and rows_kind(value) == REAL
    if type(fact) is tuple and fact[0] == _F8_VECTOR:
        return f8_vector(value)
    if type(fact) is tuple and fact[0] == _REAL_RECORDS:
        return type(value) is fact[1] and records_kind(value) == REAL
    if fact is MISSING or type(fact) is type or type(fact) is tuple:
        return fact == _fact(value) if value is not MISSING else fact is MISSING
    if type(fact) is _FunctionRef:
        return same_function(fact, value)
    return value is not MISSING and fact() is value


def same_function(ref, v):
    """Whether v is the function the _FunctionRef ref refers to, with the code, defaults
    and keyword defaults it had when the code was written (assigned in place, they make
    it compute something else: IPython's autoreload sets them)."""
    return (ref() is v and v is not None and v.__code__ is ref.code
            and v.__defaults__ is ref.defaults and v.__kwdefaults__ is ref.kwdefaults
            and same_kw_values(v.__kwdefaults__, ref.kwvalues) and (ref.inner is None or _inner_same(ref.inner)))


def _data_guard(assumed):
    """The globals holding data (numbers, arrays, containers) whose kind the code assumed:
    a module may rebind them (`C = 2.0`, later `C = np.ones(3)`) after its functions ran,
    so every call checks them (a type and a dtype each) before reusing the code. A
    module's ``__builtins__`` (a dict), read to resolve builtin names, is no data the code
    reads: checking its type at every call (``range`` in a loop) cost a microsecond."""
    guard = []
    for name, fact in assumed.items():
        if name == "__builtins__":
            continue
        if type(name) is str and type(fact) is tuple and fact[0] in _ITEM_FACTS:
            guard.append((name, fact[1], fact[0]))  # a list of arrays or numbers: each item checked
        elif type(name) is str and (type(fact) is type or type(fact) is tuple):
            kind = fact[1] if type(fact) is tuple else None
            guard.append((name, np.ndarray if kind is not None else fact, kind))
    return tuple(guard)


def _callee_guard(fn, facts):
    """The globals naming callees whose result kinds (and pairs) the code took at
    transform time, with the callees' own identity checks where they read the same
    module: each call checks they name the same functions (a redefinition makes the code
    again). (name, None, weak reference)."""
    guard = {}
    for name in sorted(facts.callee_globals):
        value = fn.__globals__.get(name, MISSING)
        guard[name] = _identity_item(name, _absent if value is MISSING else _weak(value))
    home = id(fn.__globals__)
    for callee in facts.callees.values():
        for item in callee.guard:
            # a callee's identity checks name its own module's globals (_identity_guard)
            if item[1] in _IDENTITY:
                if callee.home == home:  # (another module's: its attributes, foreign.py)
                    guard.setdefault(item[0], item)
            elif item[1] is MODULE_ATTR or item[1] is LIBRARY:
                # what the callee read of modules (inlined, or its pair called directly):
                # namespaces of their own, checked wherever the caller's code is reused
                guard.setdefault((item[0], id(item)), item)
    return tuple(guard.values())


def _no_attribute():  # the identity fact of an attribute that was not there
    return None


_IDENTITY = (None, FUNCTION)  # the kinds of guard item that check an identity


def _absent():  # the identity fact of a global that was not there (read as a builtin)
    return MISSING


def _identity_guard(assumed, taken):
    """The other globals the code resolved when it was written (``act = math.sin``, ``np``,
    ``abs`` read as the builtin): it inlined what they held, so each call checks they hold
    the same objects (``act = math.cos``, a module's own ``abs`` make the code again).
    An instance (``model = Model(W)``, read for its fields when the code runs) is checked
    by its type: rebinding it to a new one of its class reuses the code."""
    names = {item[0] for item in taken}
    guard = []
    for name, fact in assumed.items():
        if type(name) is not str or name == "__builtins__" or name in names:
            continue
        if fact is MISSING:
            guard.append((name, None, _absent))
        elif type(fact) is not type and type(fact) is not tuple:
            obj = fact()
            code_like = obj is None or isinstance(obj, _CODE_LIKE)
            guard.append(_identity_item(name, fact) if code_like else (name, type(obj), None))
    return tuple(guard)


# what generated code may have inlined an adjoint of, or resolved names in: by identity


def _attribute_guard(module_attrs):
    """The attributes of the user's own modules and classes the code resolved
    (``helpers.act`` after ``import helpers``, ``Acts.act``): checked at each call like
    globals, a function by identity (``helpers.act = math.cos`` makes the code again),
    data by its kind or type. A library's (``np.tanh``, ``math.sin``) are checked by
    _library_guard."""
    guard = []
    for base, attr, _ in module_attrs.values():
        if type(base) is types.ModuleType:
            file, name = getattr(base, "__file__", None), base.__name__
        else:  # a class: where it was defined (a notebook's __main__ has no file: the user's)
            where = getattr(base, "__module__", None)
            home = sys.modules.get(where)
            file, name = getattr(home, "__file__", None), getattr(base, "__qualname__", "?")
            if file is None and where != "builtins":
                file = "<" + str(where) + ">"
        if file is None or is_library_file(file):
            continue
        value = static_attr(base, attr)
        if value is None:
            fact = _no_attribute
        elif isinstance(value, _CODE_LIKE):
            fact = _weak(value)
        elif type(value) is np.ndarray:  # data: its kind, as for a global (_data_guard)
            fact = ("ndarray", value.dtype.kind)
        else:  # a number, a container, an object: its type
            fact = type(value)
        guard.append((name + "." + attr, MODULE_ATTR, (weakref.ref(base), attr, fact)))
    return tuple(guard)


def _library_guard(module_attrs, assumed, globals_):
    """The functions, classes and modules the code resolved in library modules (``np.tanh``,
    ``math.exp``, ``np.linalg``) and builtins it resolved by name (``max``, ``range``):
    it inlined their rules, so a rebinding (``math.exp = ...``, ``builtins.max = ...``,
    a test's monkeypatch) makes the code again. One item per namespace, ``(name,
    LIBRARY, (namespace dict, itemgetter of the names, the objects))``: a call checks a
    module with one lookup and one comparison of tuples (about 80 ns), where a check per
    attribute costs some 50 ns each. Only what the namespace's own dict holds is checked
    (a module's ``__getattr__`` gives what it computes); its data (``np.pi``) is read
    when the code runs."""
    spaces = {}  # id(namespace dict) -> (label, dict, {attr: object})
    for base, attr, _ in module_attrs.values():
        if type(base) is not types.ModuleType:
            continue
        file = getattr(base, "__file__", None)
        if file is not None and not is_library_file(file):
            continue  # the user's own module: _attribute_guard
        _note_held(spaces, base.__name__, base.__dict__, attr)
    bi = globals_.get("__builtins__", builtins)
    bi = bi if type(bi) is dict else getattr(bi, "__dict__", {})
    for name, fact in assumed.items():
        if fact is MISSING and type(name) is str:
            _note_held(spaces, "builtins", bi, name)
    guard = []
    for label, space, held in spaces.values():
        names = tuple(sorted(held))
        objects = tuple(held[n] for n in names)
        getter = operator.itemgetter(*names)
        guard.append((label, LIBRARY, (space, getter, objects if len(names) > 1 else objects[0])))
    return tuple(guard)


def _note_held(spaces, label, space, attr):
    value = space.get(attr, MISSING)
    if value is MISSING or not isinstance(value, _CODE_LIKE):
        return
    spaces.setdefault(id(space), (label, space, {}))[2][attr] = value


# ----- the checks at a call ------------------------------------------------------------


def _attribute_fits(module_ref, attr, fact):
    """Whether the module's (or class's) attribute is what the code assumed: the same
    function, or data of the same type (an array: of the same dtype kind)."""
    base = module_ref()
    if base is None:
        return False
    v = static_attr(base, attr)
    if isinstance(fact, type):  # (an enum's member: its class's type is EnumType)
        return type(v) is fact
    if type(fact) is tuple:
        return type(v) is np.ndarray and v.dtype.kind == fact[1]
    if v is not fact():
        return False
    return type(fact) is not _FunctionRef or same_function(fact, v)


def globals_fit(g, guard):
    """Whether the data globals the generated code assumed still have its kinds, the
    names it resolved the same objects (a function: with the same code and defaults,
    same_function written out, as this runs at every cached call of a function with a
    guard), and the modules it read the same attributes (a library module's as one
    tuple: a name deleted, or a value compared with no truth value, does not fit)."""
    for name, typ, kind in guard:
        if typ is LIBRARY:  # np.tanh, math.exp, a builtin: what the library holds still
            space, get, held = kind
            try:
                if held != get(space):
                    return False
            except Exception:  # a name deleted, a value with no truth value
                return False
            continue
        v = g.get(name, MISSING)
        if typ is None:  # a module, a class, a builtin the code resolved: the same still
            if kind() is not v:
                return False
            continue
        if typ is FUNCTION:  # a callee the code inlined or calls: the same, unchanged
            if (kind() is not v or v is None or v.__code__ is not kind.code
                    or v.__defaults__ is not kind.defaults or v.__kwdefaults__ is not kind.kwdefaults
                    or not same_kw_values(v.__kwdefaults__, kind.kwvalues)
                    or kind.inner is not None and not _inner_same(kind.inner)):
                return False
            continue
        if typ is MODULE_ATTR:  # hm.act read from the user's module hm (_attribute_guard)
            if not _attribute_fits(*kind):
                return False
            continue
        if type(v) is not typ:
            return False
        if kind is not None:
            if kind is _REAL_ITEMS:  # a list or tuple of numbers
                if items_kind(v) != REAL:
                    return False
            elif kind is _REAL_ROWS:  # a list or tuple of rows of numbers
                if rows_kind(v) != REAL:
                    return False
            elif kind is _F8_VECTOR:  # a 1-D float64 array
                if not f8_vector(v):
                    return False
            elif kind is _REAL_RECORDS:  # a list or tuple of dicts of numbers
                if records_kind(v) != REAL:
                    return False
            elif len(kind) > 1:  # a list or tuple of number arrays (emit._ARRAY_ITEMS)
                if not v or not activity.all_number_arrays(v):
                    return False
            elif v.dtype.kind != kind:
                return False
    return True


def own_state(f, nargs):
    """What a call of f with nargs positional arguments takes of f besides its code: its
    defaults (a parameter left out) and keyword defaults (keyword-only parameters), or
    None when it takes neither. The pair is bound to them (emit.bind); assigned in place
    (``f.__defaults__ = ...``), they make the pair again."""
    code = f.__code__
    if nargs >= code.co_argcount and not code.co_kwonlyargcount:
        return None
    return (f.__defaults__, f.__kwdefaults__, kw_values(f.__kwdefaults__))


def same_defaults(f, own):
    """Whether f has the defaults own_state took."""
    return (f.__defaults__ is own[0] and f.__kwdefaults__ is own[1]
            and (own[2] is None or same_kw_values(own[1], own[2])))
