"""The field store of mutable objects (Zygote's IdDict for ``setfield!``).

Reading a field of a mutable object adds the field's gradient to a store keyed by the
object's identity; writing the field takes the gradient back out (it belongs to the
value written). Constructors and the API boundary merge the store into the object's
structural tangent. Aliases (self inside a method, the caller's name outside) share one
entry, which is what makes mutation through methods correct.
"""
import sys
import types

import numpy as np

from ..tangents import AbstractZero, add, Tangent, Thunk, unthunk, ZeroTangent
from .project import seed
from ..errors import NotDifferentiableError
from .sites import _at, is_library_file
from .user_classes import GENERATED_GLOBALS, PLAIN_STORES, check_global_field, check_store


def seed_result(x, result):
    """The seed of a pullback whose result may be an object: a structural tangent of a
    mutable object goes into the field store (reads and writes of its fields use it)."""
    if type(x) is tuple:  # a tuple's tangent: never a zero, a thunk or an object's
        return x
    x = seed(x)
    if x is not None and is_mutable_object(result) and not isinstance(x, (list, tuple)):
        _seed_fields(result, x)
        return None
    return x


# ----- mutable objects: field gradients by identity (Zygote's IdDict for setfield!) -----------
#
# Reading a field of a mutable object adds the field's gradient to a store keyed by the
# object's identity; writing the field takes the gradient back out (it belongs to the
# value written). Constructors and the API boundary merge the store into the object's
# structural tangent. Aliases (self inside a method, the caller's name outside) share one
# entry, which is what makes mutation through methods correct.

_FIELDS = {}  # id(obj) -> [obj, {field: gradient}]


_NOT_OBJECTS = (type, types.ModuleType, types.FunctionType, np.ndarray, np.generic, list, dict,
                tuple, set, Tangent, AbstractZero, Thunk)


def is_mutable_object(obj):
    """An instance of a user class whose fields can be written (not frozen, not arrays)."""
    d = getattr(obj, "__dict__", None)
    if not isinstance(d, dict):
        slotted = _SLOTTED.get(type(obj))  # (a float, an array: one lookup)
        if not (_slotted(type(obj)) if slotted is None else slotted):
            return False
    if isinstance(obj, _NOT_OBJECTS):
        return False
    params = getattr(type(obj), "__dataclass_params__", None)
    return not (params is not None and params.frozen)


_SLOTTED = {}  # type -> whether it is a user class keeping its fields in __slots__


def _slotted(typ):
    """A class whose instances keep their fields in `__slots__` (no `__dict__`): a slot
    written is followed through the field store, as a field of an object with a dict."""
    known = _SLOTTED.get(typ)
    if known is None:
        if len(_SLOTTED) >= 1024:
            _SLOTTED.clear()
        known = _SLOTTED[typ] = any("__slots__" in k.__dict__ for k in typ.__mro__[:-1]) and (
            _users_class(typ))
    return known


def _users_class(typ):
    """Not a builtin, not adjoint_s2s's own, not a library's (a user's program's class)."""
    module = typ.__module__ or ""
    if module == "builtins" or module.startswith("adjoint_s2s"):
        return False
    filename = getattr(sys.modules.get(module), "__file__", None)
    return not (filename and is_library_file(filename))


def field_names_of(obj):
    """The names of obj's fields that are set: its __dict__'s, or its slots'."""
    d = getattr(obj, "__dict__", None)
    if isinstance(d, dict):
        return list(d)
    names = []
    for k in type(obj).__mro__:
        slots = k.__dict__.get("__slots__", ())
        for n in ((slots,) if isinstance(slots, str) else slots):
            if n not in names and n != "__weakref__" and hasattr(obj, n):
                names.append(n)
    return names


def fields_of(obj):
    """obj's fields that are set, by name (its __dict__, or its slots')."""
    d = getattr(obj, "__dict__", None)
    return d if isinstance(d, dict) else {n: getattr(obj, n) for n in field_names_of(obj)}


def add_field_grad(obj, name, g):
    if g is None or isinstance(g, AbstractZero):
        return
    entry = _FIELDS.get(id(obj))
    if entry is None or entry[0] is not obj:
        entry = _FIELDS[id(obj)] = [obj, {}]
    entry[1][name] = add(entry[1].get(name), g)


def take_field_grad(obj, name):
    """The gradient of obj.name at this point of the backward pass, removed from the store."""
    entry = _FIELDS.get(id(obj))
    if entry is None or entry[0] is not obj:
        return None
    return entry[1].pop(name, None)


def changes_in_place(v):
    """Does `v op= w` change v in place in Python (a list, an array, a dict)?"""
    return isinstance(v, (list, np.ndarray, dict))


def field_grad_if(moved, obj, name):
    """take_field_grad(obj, name) if `moved` (the field still holds what a name for it
    changed in place: `t = obj.items; t += vs`), else nothing."""
    return take_field_grad(obj, name) if moved else None


def take_fields(obj):
    """Every field gradient of obj, removed from the store (as a dict, or None)."""
    entry = _FIELDS.get(id(obj))
    if entry is None or entry[0] is not obj:
        return None
    del _FIELDS[id(obj)]
    return entry[1] or None


def forget_fields(obj):
    """Drop obj's field gradients: obj was made from constants, so they go nowhere."""
    take_fields(obj)


def drop_callee_fields(f):
    """After gradient or pullback's back: the field gradients the pullback left in the store
    for the function object itself (a mutable callable object, or the object of a bound
    method). Those entry points give back no tangent for the function, so they go
    nowhere; left in the store, an outer pullback that reverses the object's
    construction would take them again (a gradient counted twice)."""
    obj = getattr(f, "__self__", f)
    if is_mutable_object(obj):
        forget_fields(obj)


def with_fields(g, obj):
    """The structural tangent g of obj, plus obj's field gradients from the store."""
    fields = take_fields(obj)
    if not fields:
        return g
    t = Tangent(type(obj), **fields)
    if g is None or isinstance(g, AbstractZero):
        return t
    return add(g, t)


_ITEMS = {}  # id(container) -> [container, its tangent after the call being reversed]


def put_items(obj, g):
    """Before a callee's pullback: hand it the tangent of a container it may have mutated.
    Returns what the caller keeps: nothing for a list or dict, g for anything else."""
    if g is None or isinstance(g, AbstractZero) or not isinstance(obj, (list, dict)):
        return g
    return _store_items(obj, g)


def _store_items(obj, g):
    """Add g to the tangent stored for obj (by identity) for its callee to take."""
    entry = _ITEMS.get(id(obj))
    if entry is not None and entry[0] is obj:
        entry[1] = add(entry[1], g)
    else:
        _ITEMS[id(obj)] = [obj, g]
    return None


def move_grad(moved, a, b):
    """(a, b) of two names' gradients, or (a + b, None) when `moved`: the second name held
    the object the first changed in place (``b = a; a += v``), so its gradient joins the
    first's before the change is reversed."""
    if not moved or b is None or isinstance(b, AbstractZero):
        return a, b
    return (b if a is None or isinstance(a, AbstractZero) else add(a, b)), None


def take_items(obj):
    """The tangent handed over by put_items (a callee that mutated obj takes it; the
    caller takes back what was not taken)."""
    entry = _ITEMS.get(id(obj))
    if entry is None or entry[0] is not obj:
        return None
    del _ITEMS[id(obj)]
    return entry[1]


def output_tangent(g, y):
    """The seed for a rule's pullback: g plus field gradients of a mutable output; None
    when both are zero."""
    if is_mutable_object(y):
        g = with_fields(g, y)
    if g is None or isinstance(g, AbstractZero):
        return None
    return g


def rrule_seed(g):
    """The cotangent an @rrule's pullback gets: ZeroTangent() where an item of a tuple,
    list or dict output carries none (as ChainRules passes it: a rule may compute with
    it), where the generated code holds None."""
    t = type(g)
    if t is tuple or t is list:
        if not any(v is None or type(v) in (tuple, list, dict) for v in g):
            return g
        items = [ZeroTangent() if v is None else rrule_seed(v) for v in g]
        return tuple(items) if t is tuple else items
    if t is dict:
        return {k: ZeroTangent() if v is None else rrule_seed(v) for k, v in g.items()}
    return g


def setattr_grad(obj, name):
    """Adjoint of `obj.name = v`: the gradient of v (taken from the store); refused
    where the class runs code of its own for the store (a property's setter...)."""
    if type(obj) not in PLAIN_STORES:
        check_store(obj, name)
    if GENERATED_GLOBALS:
        check_global_field(obj, name)
    if name == "__dict__":  # `obj.__dict__[k] = v` written back: the fields' gradients
        grads = {k: take_field_grad(obj, k) for k in list(field_names_of(obj))}
        return {k: v for k, v in grads.items() if v is not None} or None
    return take_field_grad(obj, name)


def _seed_fields(obj, g):
    """Put the structural tangent g of obj into the field store, field by field."""
    g = unthunk(g)
    if g is None or isinstance(g, AbstractZero):
        return
    if isinstance(g, Tangent):
        items = g._fields.items()
    elif isinstance(g, dict):
        items = g.items()
    elif isinstance(g, (int, float, complex, np.number, np.ndarray, list, tuple)):
        # a rule took the object for a number or a sequence: its gradient cannot be
        # placed in the object's fields (never dropped as a zero)
        raise NotDifferentiableError(
            f"the gradient of a {type(obj).__name__} object came back as a "
            f"{type(g).__name__}: a function with a rule for numbers or sequences was given "
            f"the object itself{_at()}; call the object's own methods in Python where it "
            "is used as a number or iterated over")
    else:
        items = ((k, getattr(g, k, None)) for k in field_names_of(obj))
    for k, v in items:
        add_field_grad(obj, k, v)
