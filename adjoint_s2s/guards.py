"""What generated code assumed of its function's globals, and the checks of it at a call.

When the transformer writes a function's code it records what it read of the module's
globals (``emit._RecordingGlobals``): the kind of a number, an array or a container, the
identity of a callee, module or builtin it resolved, the type of an object. An entry is
reused only where those facts still hold (``_same_fact``); the cached call paths check
the part that may change between calls, the *guard*, at every call
(``runtime.dispatch.globals_fit``): ``(name, type, dtype kind)`` for data, ``(name,
None, reference)`` for an identity.
"""
import sys
import types
import weakref

import numpy as np

from .passes import activity
from .kinds import MODULE_ATTR, static_attr
from .runtime.sites import is_library_file

_MISSING = object()


def _weak(obj):
    """A weak reference to obj where one can be taken (functions, classes, modules), so
    the cache never keeps the user's objects alive; else obj itself (builtins, ufuncs)."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda obj=obj: obj


def _fact(value):
    """What generated code may have assumed of a global's value: its kind for a number,
    an array or a plain container (their values are read when the code runs), its
    identity for anything else (a callee, a module, a class)."""
    if value is _MISSING:
        return _MISSING
    t = type(value)
    if t in _BY_TYPE:
        return t
    if t is np.ndarray:
        return ("ndarray", value.dtype.kind)
    return _weak(value)


_BY_TYPE = {int, float, complex, bool, str, bytes, type(None), list, dict, tuple, set, frozenset}


_ARRAY_ITEMS = "array items"  # the fact of a list or tuple of number arrays (see below)


def _same_fact(fact, value):
    if type(fact) is tuple and fact[0] == _ARRAY_ITEMS:
        return type(value) is fact[1] and len(value) > 0 and activity.all_number_arrays(value)
    if fact is _MISSING or type(fact) is type or type(fact) is tuple:
        return fact == _fact(value) if value is not _MISSING else fact is _MISSING
    return value is not _MISSING and fact() is value


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
        if type(name) is str and type(fact) is tuple and fact[0] == _ARRAY_ITEMS:
            guard.append((name, fact[1], _ARRAY_ITEMS))  # a list of arrays: each item checked
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
        guard[name] = (name, None, _weak(fn.__globals__.get(name)))
    home = id(fn.__globals__)
    for callee in facts.callees.values():
        for item in callee.guard:
            # a callee's identity checks name its own module's globals (_identity_guard)
            if item[1] is None and (callee.home == home or item not in callee.identity):
                guard.setdefault(item[0], item)
    return tuple(guard.values())


def _absent():  # the identity fact of a global that was not there (read as a builtin)
    return None


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
        if fact is _MISSING:
            guard.append((name, None, _absent))
        elif type(fact) is not type and type(fact) is not tuple:
            obj = fact()
            code_like = obj is None or isinstance(obj, _CODE_LIKE)
            guard.append((name, None, fact) if code_like else (name, type(obj), None))
    return tuple(guard)


# what generated code may have inlined an adjoint of, or resolved names in: by identity
_CODE_LIKE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
              types.MethodWrapperType, types.WrapperDescriptorType, type, np.ufunc,
              classmethod, staticmethod, property)


def _attribute_guard(module_attrs):
    """The attributes of the user's own modules and classes the code resolved
    (``helpers.act`` after ``import helpers``, ``Acts.act``): checked at each call like
    globals, a function by identity (``helpers.act = math.cos`` makes the code again),
    data by its kind or type. A library's (``np.tanh``, ``math.sin``) are taken as fixed:
    checking each at every call would cost more than the rest of a small gradient."""
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
            fact = _absent
        elif isinstance(value, _CODE_LIKE):
            fact = _weak(value)
        elif type(value) is np.ndarray:  # data: its kind, as for a global (_data_guard)
            fact = ("ndarray", value.dtype.kind)
        else:  # a number, a container, an object: its type
            fact = type(value)
        guard.append((name + "." + attr, MODULE_ATTR, (weakref.ref(base), attr, fact)))
    return tuple(guard)
