"""Reading attributes and items: ``getattr_pair``, ``getitem_pair``, ``index_get``;
numbers' and arrays' attributes (``real``, ``T``, ``shape``) by table."""
import functools
import inspect
import types

import numpy as np

from .. import rules as R
from ..errors import MissingAdjointError, NotDifferentiableError, UnsupportedSyntaxError
from ..tangents import AbstractZero, Tangent, add
from .sites import _at, _Attribute, user_call_site
from .project import im_seed, real, seed
from .accumulate import _list_slice_grad, getitem_grad, part_adjoint
from .structure import part
from .fields import add_field_grad, is_mutable_object, take_field_grad
from .dispatch import call
from .methods import call_method
from .protocols import object_items, user_object


def attr_grad(obj, name, g):
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(obj, np.ndarray):
        if name in ("T",):
            return np.transpose(g)
        if name == "mT":
            return np.swapaxes(g, -1, -2)
        if name == "real":
            return np.real(g) if np.iscomplexobj(obj) else g
        if name == "imag":
            return 1j * np.real(g)
    hint = "; use x.ravel() (its elements, in the same order)" if name == "flat" else ""
    raise NotDifferentiableError(f"no gradient for the attribute .{name} of {type(obj).__name__}{hint}")


def entry_field_grad(obj, name, g):
    """The gradient of a record argument from its field `name`, read once at the entry
    (passes/param_fields.py: a plain field of its instance dict, no property, descriptor
    or hook in its class): as getattr_pair's pullback gives it, without the pair. A
    mutable object's field gradient joins the field store (other names for the object
    meet there), another's makes its Tangent."""
    if g is None or isinstance(g, AbstractZero):
        return None
    if is_mutable_object(obj):
        add_field_grad(obj, name, g)
        return None
    return Tangent(type(obj), **{name: g})


def _super_attribute(sup, name):
    """sup.name for a super object: a property written in Python that Python finds in
    the classes after sup's is differentiated, read on the object (the super object's
    gradient is the object's: runtime/methods.py); another descriptor computing the value
    is refused; a method or a class attribute is what it is."""
    found = _super_found(sup, name)
    if isinstance(found, property) and isinstance(found.fget, types.FunctionType):
        y, pb = call(found.fget, sup.__self__)
        return y, lambda g: pb(g)[1]
    if isinstance(found, property) or isinstance(getattr(type(found), "__get__", None), types.FunctionType):
        raise NotDifferentiableError(
            f"super().{name}, a {type(found).__name__} of a base class, is not differentiated{_at()}: "
            f"read it on the object, or call the base's getter (`Base.{name}.fget(self)`)")
    return getattr(sup, name), lambda g: None


def _super_found(sup, name):
    """The class attribute super object sup finds for name (None when none is found)."""
    mro = sup.__self_class__.__mro__
    for c in mro[mro.index(sup.__thisclass__) + 1:]:
        if name in c.__dict__:
            return c.__dict__[name]
    return None


def getattr_pair(obj, name):
    """(y, pullback) of obj.name; properties written in Python are differentiated."""
    if type(obj) is super:  # super().w2 in an overriding property: the base's, on the object
        return _super_attribute(obj, name)
    if type(obj) not in _PLAIN_VALUES and _own_getattribute(type(obj)):
        return _through_getattribute(obj, name)
    prop = getattr(type(obj), name, None)
    if prop is None and type(obj) not in _PLAIN_VALUES:
        prop = _HOOKS.get((type(obj), name), _MISSING)  # (found before: one lookup)
        if prop is _MISSING:  # a descriptor whose __get__ fails on the class, __getattr__
            prop = _class_hook(type(obj), name)
        if prop is _GETATTR:  # the class has a __getattr__ of its own
            if _computed(obj, name):
                y, pb = call(type(obj).__getattr__, obj, name)
                return y, lambda g: pb(g)[1]
            prop = None
    if isinstance(prop, property) and isinstance(prop.fget, types.FunctionType):
        y, pb = call(prop.fget, obj)
        return y, lambda g: pb(g)[1]
    if prop is not None and isinstance(getattr(type(prop), "__get__", None), types.FunctionType):
        got = _descriptor_get(obj, name, prop)  # a descriptor's __get__, a cached_property
        if got is not None:
            return got
    y = getattr(obj, name)
    if isinstance(obj, _NUMERIC_VALUES) and not isinstance(obj, bool):
        return y, _numeric_attr_pullback(obj, name)
    if isinstance(obj, (types.ModuleType, type)):
        return y, lambda g: None
    if isinstance(y, types.MethodType):
        if y.__self__ is obj:  # a bound method's tangent is its object's (see resolve)
            return y, lambda g: None if g is None or isinstance(g, AbstractZero) else g
        return y, lambda g: None  # a classmethod: bound to a class, a constant
    typ = type(obj)
    if isinstance(obj, Tangent) and name in ("_fields", "_elements"):
        # a tangent's parts read in a pullback differentiated again: the cotangent of the
        # dict of fields (tuple of elements) is a tangent with those fields (elements)
        def tangent_parts_pullback(g):
            g = seed(g)
            if g is None:
                return None
            if name == "_fields":
                return Tangent(obj.primal_type, **{k: v for k, v in g.items() if v is not None})
            return Tangent(obj.primal_type, *g)

        return y, tangent_parts_pullback
    if name == "__dict__":
        return y, lambda g: _fields_dict_grad(obj, g)
    if is_mutable_object(obj):
        def mutable_getfield_pullback(g):
            add_field_grad(obj, name, g)
            return None

        return y, mutable_getfield_pullback

    def getfield_pullback(g):
        if g is None or isinstance(g, AbstractZero):
            return None
        return Tangent(typ, **{name: g})

    return y, getfield_pullback


_NUMERIC_VALUES = (int, float, complex, np.number, np.ndarray)
_MISSING = object()


_PLAIN_VALUES = frozenset((int, float, complex, bool, np.float64, np.ndarray, list, tuple, dict))
_HOOKS = {}  # (class, name) -> what the class runs to give obj.name (see _class_hook)
_GETATTR = object()


def _class_hook(cls, name):
    """What cls runs for obj.name where getattr(cls, name) found nothing: the descriptor
    it holds (one whose __get__, written in Python, fails when read on the class), _GETATTR
    where it has a __getattr__ of its own, or None."""
    key = (cls, name)
    got = _HOOKS.get(key, _MISSING)
    if got is not _MISSING:
        return got
    got = inspect.getattr_static(cls, name, None)
    if not isinstance(getattr(type(got), "__get__", None), types.FunctionType):
        got = _GETATTR if isinstance(getattr(cls, "__getattr__", None), types.FunctionType) else None
    if len(_HOOKS) > 4096:  # (classes made again and again: bounded)
        _HOOKS.clear()
    _HOOKS[key] = got
    return got


_GETATTRIBUTE = {}  # class -> its own __getattribute__ written in Python, or None


def _own_getattribute(cls):
    try:
        return _GETATTRIBUTE[cls]
    except KeyError:
        pass
    got = getattr(cls, "__getattribute__", None)
    if not isinstance(got, types.FunctionType) or (got.__module__ or "").startswith("adjoint_s2s."):
        got = None
    if len(_GETATTRIBUTE) > 4096:  # (classes made again and again: bounded)
        _GETATTRIBUTE.clear()
    _GETATTRIBUTE[cls] = got
    return got


# what an attribute read gives that has no gradient to lose: labels, methods, classes
_NO_TANGENT = (bool, int, str, bytes, type(None), type, types.MethodType, types.FunctionType,
               types.BuiltinFunctionType, types.ModuleType)


def _through_getattribute(obj, name):
    """obj.name where obj's class has a __getattribute__ of its own: what it gives is read as
    Python reads it; one that may carry a gradient is refused (the gradient would go to the
    field as stored, past what __getattribute__ computes from it)."""
    y = getattr(obj, name)
    if isinstance(y, _NO_TANGENT):
        return y, lambda g: None
    cls = type(obj)
    ga = _own_getattribute(cls)
    site = user_call_site()
    raise UnsupportedSyntaxError(
        f"reading `.{name}` of a {cls.__qualname__} object, whose class has a __getattribute__ of "
        f"its own ({ga.__code__.co_filename}, line {ga.__code__.co_firstlineno}), where the "
        f"value may carry a gradient", *(site[1:] if site else ()),
        hint=f"adjoint_s2s reads attributes as stored and does not differentiate __getattribute__: "
             f"compute the value in a property (or in __getattr__, for attributes the object does "
             f"not have), which are differentiated, or give the function that reads it a rule "
             f"(@adjoint_s2s.rrule)")


def _computed(obj, name):
    """Whether obj.name is found neither in obj nor in its class (so __getattr__ gives it)."""
    return inspect.getattr_static(obj, name, _MISSING) is _MISSING


def _descriptor_get(obj, name, desc):
    """(y, pullback) of obj.name where the class's attribute desc has a __get__ written in
    Python, run through AD; None where the instance's own field hides it."""
    d = getattr(obj, "__dict__", None)
    if isinstance(desc, functools.cached_property):
        if d is None or name in d:
            return None  # computed before: a field
        if not is_mutable_object(obj):
            raise NotDifferentiableError(
                f"the cached_property {type(obj).__name__}.{name} of an object whose fields "
                f"cannot be written is not differentiated{_at()}: make it a property")
        y, pb = call(desc.func, obj)
        d[name] = y  # what functools does: later reads are reads of the field

        def cached_property_pullback(g):
            return pb(add(g, take_field_grad(obj, name)))[1]  # (the later reads' too)

        return y, cached_property_pullback
    if d is not None and name in d and getattr(type(desc), "__set__", None) is None:
        return None  # a non-data descriptor: the instance's field comes first
    y, pb = call(type(desc).__get__, desc, obj, type(obj))
    return y, lambda g: pb(g)[2]


# attributes of numbers and arrays that are integers, dtypes or flags: no tangent space
_NUMERIC_CONST_ATTRS = frozenset(
    {"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides", "flags", "__class__"}
)


def _numeric_attr_pullback(obj, name):
    """The pullback of reading obj.name, obj a number or an array: real, imag, T, mT have
    rules, shape & co. carry no gradient, anything else is refused (never a zero)."""
    if name in _NUMERIC_CONST_ATTRS:
        return lambda g: None
    if isinstance(obj, np.ndarray):
        if name in ("real", "imag", "T", "mT"):
            return lambda g: attr_grad(obj, name, g)
    elif name == "real" or name == "T" and isinstance(obj, np.generic):
        return lambda g: None if g is None or isinstance(g, AbstractZero) else (
            g if isinstance(obj, (complex, np.complexfloating)) and name == "T" else real(g))
    elif name == "imag":
        if isinstance(obj, (complex, np.complexfloating)):
            return lambda g: None if g is None or isinstance(g, AbstractZero) else im_seed(g)
        return lambda g: None  # the imaginary part of a real number is the constant 0
    where = _at()

    def numeric_attr_pullback(g):
        if g is None or isinstance(g, AbstractZero):
            return None
        raise MissingAdjointError(
            _Attribute(type(obj), name),
            f"the attribute .{name} of {type(obj).__name__} has no rule{where}; read it "
            "inside a helper function that has a rule",
        )

    return numeric_attr_pullback


def _fields_dict_grad(obj, g):
    """The adjoint of obj.__dict__ (its fields as a dict): each field's gradient, into the
    field store for an object whose fields can be written, else as its tangent."""
    g = seed(g)
    if g is None:
        return None
    if not isinstance(g, dict):
        raise NotDifferentiableError(
            f"the gradient of {type(obj).__name__}.__dict__ is a {type(g).__name__}, not a dict")
    fields = {k: v for k, v in g.items() if v is not None and not isinstance(v, AbstractZero)}
    if is_mutable_object(obj):
        for k, v in fields.items():
            add_field_grad(obj, k, v)
        return None
    return Tangent(type(obj), **fields) if fields else None


@R.special(getattr)
def _getattr_builtin_pair(obj, name, *default):
    if default and not hasattr(obj, name):
        return default[0], lambda g: (None, None, None, g)
    y, pb = getattr_pair(obj, name)

    def getattr_builtin_pullback(g):
        return (None, pb(g), None) + ((None,) if default else ())

    return y, getattr_builtin_pullback


def index_get(obj, is_tuple, *keys):
    """obj[keys] (obj[keys[0]] for a key that is not a tuple): the read that generated code
    emits where only the key depends on the inputs (``np.r_[x, y]``, a ``__getitem__``
    that computes with its key). Its rule (rules/runtime_rules.py) differentiates it."""
    return obj[keys if is_tuple else keys[0]]


def getitem_pair(obj, idx):
    """(y, pullback) of obj[idx]; __getitem__ written in Python is differentiated."""
    if isinstance(obj, (list, tuple, dict, np.ndarray, str)):
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            typ = type(obj)
            y = obj[idx]

            def namedtuple_pullback(g):
                if g is None:
                    return None
                return Tangent(typ, **{typ._fields[idx]: g}) if isinstance(idx, int) else (
                    Tangent(typ, **dict(zip(typ._fields[idx], g))))

            return y, namedtuple_pullback
        if type(obj) is list:  # the list may grow later: pin the positions now
            if type(idx) is int and idx < 0:
                idx += len(obj)
            elif type(idx) is slice:
                positions = range(*idx.indices(len(obj)))
                return obj[idx], lambda g: _list_slice_grad(obj, positions, g)
        return obj[idx], lambda g: getitem_grad(obj, idx, g)
    if isinstance(obj, Tangent):  # a tangent read in a pullback differentiated again
        return obj[idx], lambda g: part_adjoint(obj, idx, g)
    if getattr(type(obj), "__getitem__", None) is None:
        # `p, q = obj` reads obj[0], obj[1]: for an iterator made by zip, map, ...
        # (rules/sequences.py) or an object iterated by its __iter__, the items it hands out
        if getattr(type(obj), "unpacked", None) is not None:
            return obj.unpacked(idx)
        got = object_items(obj) if user_object(obj) else None
        if got is not None:
            return _item_of(got[0], got[1], idx)
    y, pb = call_method(obj, "__getitem__", idx)
    return y, lambda g: pb(g)[0]


def _item_of(items, items_pullback, idx):
    """items[idx] of a list of items whose pullback gives the gradient of what they came
    from (runs once per item read: each hands on its own item's part)."""
    n = len(items)

    def unpacked_item_pullback(g):
        grads = [None] * n
        if type(idx) is slice:  # `a, *b = obj`: b is list(obj[1:])
            for j, k in enumerate(range(*idx.indices(n))):
                grads[k] = part(g, j)
        else:
            grads[idx] = g
        return items_pullback(grads)

    return items[idx], unpacked_item_pullback
