"""What a caller assumes of a callee whose result kind it takes (queries.callee_result):
the callee's generated code rests on the globals it read, so the caller's code rests on
them too and its cache entry checks them at each call.

A callee of the caller's own module read them from the same globals: they are recorded
as the caller's own reads (emit's data guard). A callee imported from another module of
the user's (``from physics import step``) read its own module's: they are recorded as
attributes of that module, checked like ``helpers.act`` after ``import helpers``
(guards._attribute_guard): a function by identity, a number or array by its kind. A
callee whose code took more of its globals than that check sees (the kinds of a list's
items, an object's identity) is not taken: its result stays to run-time dispatch."""
import sys
import types

import gast

from ..kinds import CODE_LIKE, MISSING, static_attr
from ..runtime.sites import is_library_file


def named_callee(func, local, globals_):
    """Is func (a call's function) a global's name, or a function of a module a global
    names (``helpers.step``: its identity is guarded as that module's attribute)? local:
    collections of the names that are not globals."""
    if func.__class__ is gast.Name:
        return not any(func.id in names for names in local)
    base = func.value if func.__class__ is gast.Attribute else None
    return (base.__class__ is gast.Name and not any(base.id in names for names in local)
            and isinstance(globals_.get(base.id), types.ModuleType))


def foreign_home(fn):
    """The user's module whose globals fn has, or None (a library's, or none found)."""
    home = sys.modules.get(getattr(fn, "__module__", None) or "")
    if home is None or getattr(home, "__dict__", None) is not fn.__globals__:
        return None
    file = getattr(home, "__file__", None)
    return home if file is not None and not is_library_file(file) else None


def assume_callee_globals(entry, fn, globals_, info):
    """Record what the callee fn's code (entry) assumed of its globals as the caller's own
    assumptions (globals_: the caller's recording globals; info: its FunctionInfo).
    False when the callee is of another module and its assumptions cannot be checked as
    that module's attributes."""
    if fn.__globals__ is getattr(globals_, "_g", globals_):
        for name in entry.assumed:
            if type(name) is str:
                globals_.get(name)
        return True
    home = foreign_home(fn)
    if home is None:
        return False
    for name, fact in entry.assumed.items():
        if type(name) is not str:
            continue
        value = fn.__globals__.get(name, MISSING)
        if type(fact) is tuple and fact[0] != "ndarray":
            return False  # the kinds of a list's items
        if not (fact is MISSING or isinstance(fact, type) or type(fact) is tuple
                or isinstance(value, CODE_LIKE)):
            return False  # an object's identity
    for name in entry.assumed:
        if type(name) is str:
            info.module_attrs.setdefault((id(home), name), (home, name, static_attr(home, name)))
    return True
