"""``obj.name(*args)`` in differentiated code: method rules (a table keyed by class and
name), the rule of the NumPy function of the same name, or the method's Python source."""
import inspect
import types

import numpy as np

from .. import rules as R
from ..errors import MissingAdjointError, MutationError
from ..tangents import AbstractZero
from .sites import _at, _Attribute
from .project import conj
from .structure import field_adjoint, part
from .dispatch import call, resolve, rule_pair
from . import wrappers


def call_method(obj, name, /, *args, **kwargs):
    """(y, pullback) of obj.name(*args); the pullback returns (dobj, *dargs)."""
    if type(obj) in R.BOUND_RULE_CLASSES:  # a rule on the bound method (scipy.stats.norm.logpdf)
        pair = rule_pair(getattr(obj, name), len(args), tuple(kwargs))
        if pair is not None:
            return pair(*args, **kwargs)  # its pullback gives (d(method), *dargs)
    meth = getattr(type(obj), name, None)
    got = _python_lookup(obj, name, meth, args, kwargs)
    if got is not None:
        return got
    if isinstance(meth, (staticmethod,)):
        y, pb = call(meth.__func__, *args, **kwargs)
        return y, lambda g: (None,) + tuple(pb(g)[1:])
    bound = getattr(obj, name)
    if isinstance(bound, types.MethodType) and isinstance(bound.__func__, types.FunctionType):
        # a classmethod or an instance attribute holding a method
        y, pb = call(bound, *args, **kwargs)
        return y, _held_by(obj, name, pb)
    if meth is not None:
        rule = _method_rule(type(obj), name, meth)
        if rule is not None:
            return rule(obj, *args, **kwargs)
    if isinstance(obj, types.ModuleType) or isinstance(obj, type):
        fn = getattr(obj, name)
        y, pb = call(fn, *args, **kwargs)
        return y, lambda g: (None,) + tuple(pb(g)[1:])
    if wrappers.is_bound_operator(bound) and not kwargs:
        return wrappers.dunder_pair(bound)(*args)  # x.__mul__(v): its pullback gives (dx, dv)
    if callable(bound) and not (isinstance(bound, types.BuiltinMethodType) and bound.__self__ is obj):
        # a callable obj holds or a property gives (math.sin: its rule), not a builtin
        # method of obj itself
        y, pb = call(bound, *args, **kwargs)
        return y, _held_by(obj, name, pb)
    if isinstance(obj, np.ufunc):  # np.add.reduce of a ufunc known when it runs: its rule
        pair = resolve(bound, len(args), tuple(kwargs))
        y, pb = pair(*args, **kwargs)
        return y, pb
    if type(obj) in (list, dict, set) and name in _CONTAINER_WRITES:
        # a container the transformer does not follow (a global, a field read through a
        # value of unknown kind): a rule for list.append is not the way out
        kind = type(obj).__name__
        raise MutationError(
            f"`.{name}(...)` of a {kind} is given a value that may carry a gradient{_at()}, "
            f"and the {kind} is not one whose writes adjoint_s2s follows (a global, a "
            f"field read through a value of unknown kind, or a write it has no rule for: "
            f"{_FOLLOWED[kind]}); the gradient would be lost when the {kind} is read. "
            f"Make the {kind} in this function (or pass it in as an argument) and write "
            f"into it as above; to log a value, write `.{name}(adjoint_s2s.dropgrad(value))`"
            + ("; for `d.setdefault(k, []).append(v)`, write `d[k] = d.get(k, []) + [v]`"
               if name == "setdefault" else "")
            + ("; for a dict made in this function, write `d.update({k: v})` item by item, "
               "`d[k] = v`" if kind == "dict" and name == "update" else "")
        )
    pair = rule_pair(meth, len(args) + 1, tuple(kwargs)) if meth is not None else None
    if pair is not None:  # a rule of the method as its type holds it (non_differentiable(Random.random))
        y, pb = pair(obj, *args, **kwargs)
        return y, lambda g: tuple(pb(g)[1:])
    raise MissingAdjointError(
        bound, f"the method .{name} of {type(obj).__name__} has no rule and no Python source" + _at())


_STATIC = {}  # (class, name) -> whether the class's attribute is a staticmethod


def _static(cls, name):
    key = (cls, name)
    got = _STATIC.get(key)
    if got is None:
        if len(_STATIC) > 4096:  # (classes made again and again: bounded)
            _STATIC.clear()
        got = _STATIC[key] = isinstance(inspect.getattr_static(cls, name, None), staticmethod)
    return got


def _super_method(obj, name, args, kwargs):
    """super().name(*args): the method of the base class, bound to the object; the
    gradient of the super object is the object's."""
    bound = getattr(obj, name)
    if name == "__init__" and _first_init(obj) is object:  # (a base without an __init__)
        _object_init(bound, args, kwargs)
        return None, lambda g: (None,) * (1 + len(args) + len(kwargs))
    if isinstance(bound, types.MethodType) and bound.__self__ is obj.__self__ and isinstance(
            bound.__func__, types.FunctionType):
        y, pb = call(bound.__func__, bound.__self__, *args, **kwargs)
        return y, _drop_first(pb)
    y, pb = call(bound, *args, **kwargs)  # a staticmethod, a classmethod: bound to no object
    return y, lambda g: (None,) + tuple(pb(g)[1:])


def _first_init(sup):
    """The class whose __init__ super object sup finds (the first after its class in the
    object's method resolution order that defines one)."""
    mro = sup.__self_class__.__mro__
    for c in mro[mro.index(sup.__thisclass__) + 1:]:
        if "__init__" in c.__dict__:
            return c
    return object


def _object_init(bound, args, kwargs):
    bound(*args, **kwargs)  # object.__init__: nothing, or Python's TypeError


R.NONDIFF[_first_init] = R.NONDIFF[_object_init] = "the class that defines __init__; object.__init__ does nothing"


def _super_pair(cls, obj):
    """super(cls, obj): its gradient is obj's (the methods it finds read obj)."""
    return super(cls, obj), lambda g: (None, None, g)


R.SPECIAL[super] = _super_pair
_NONE = object()


def own_attribute(obj, name, meth):
    """What obj.name finds in obj's own __dict__ (Python's order: a data descriptor of
    the class, a property or a slot, first; then the instance's __dict__; then the
    class's attribute, meth), or _NONE when it finds nothing there."""
    own = getattr(obj, "__dict__", None)
    if type(own) is not dict or name not in own or isinstance(obj, (type, types.ModuleType)):
        return _NONE  # (a class's or a module's __dict__ holds its own attributes)
    kind = type(meth)
    if meth is not None and (hasattr(kind, "__set__") or hasattr(kind, "__delete__")):
        return _NONE
    return own[name]


def _python_lookup(obj, name, meth, args, kwargs):
    """The pair of obj.name(*args) found as Python finds it, for a method of obj's class
    (a staticmethod too), a super object's, or a callable of obj's own __dict__; None
    for anything else (call_method goes on)."""
    if isinstance(meth, types.FunctionType) and name not in getattr(obj, "__dict__", ()):
        if not _static(type(obj), name):
            y, pb = call(meth, obj, *args, **kwargs)
            return y, _drop_first(pb)
        y, pb = call(meth, *args, **kwargs)  # a staticmethod, read through the class
        return y, lambda g: (None,) + tuple(pb(g)[1:])
    if type(obj) is super:  # (super looks in the classes after, never in the instance)
        return _super_method(obj, name, args, kwargs)
    held = own_attribute(obj, name, meth)
    if held is not _NONE:
        # what obj's own __dict__ holds under that name comes first, as in Python
        # (self.act = math.tanh shadowing a method act): called as what it is (its rule)
        y, pb = call(held, *args, **kwargs)
        return y, _held_by(obj, name, pb)
    return None


def _held_by(obj, name, pb):
    """The pullback of obj.name(*args) where obj.name is a callable held in obj's own
    fields (self.fn = lambda t: ...): the callable's tangent (what it captured, a
    callable object's fields) is the tangent of that field of obj, never dropped."""
    own = name in getattr(obj, "__dict__", ())

    def pullback(g):
        grads = tuple(pb(g))
        first = grads[0] if own else None
        if first is None or isinstance(first, AbstractZero):
            return (None,) + grads[1:]
        return (field_adjoint(name, first),) + grads[1:]

    return pullback


_FOLLOWED = {  # the writes the reverse pass follows, by container type (passes/reverse/mutation.py)
    "list": "it follows `lst[i] = v`, `.append`, `.extend`, `.insert`, `+=`",
    "dict": "it follows `d[key] = v`",
    "set": "a set of differentiated values is not supported",
}
_CONTAINER_WRITES = frozenset({
    "append", "extend", "insert", "add", "update", "setdefault", "__setitem__",
})


def call_method_primal(obj, name, /, *args, **kwargs):
    meth = getattr(type(obj), name, None)
    if isinstance(meth, types.FunctionType) and name not in getattr(obj, "__dict__", ()) \
            and not _static(type(obj), name):
        return call(meth, obj, *args, **kwargs)[0]
    return getattr(obj, name)(*args, **kwargs)


def _drop_first(pb):
    def method_pullback(g):
        grads = pb(g)
        return tuple(grads[1:])

    return method_pullback


_METHOD_RULES = {}


def method_rule(cls, name):
    """Register the pair of ``obj.name(...)`` for objects of a builtin type cls."""

    def deco(pair):
        _METHOD_RULES[(cls, name)] = pair
        return pair

    return deco


@method_rule(dict, "items")
def _dict_items(d):
    keys = list(d)

    def items_pullback(g):
        if g is None or isinstance(g, AbstractZero):
            return (None,)
        return ({k: part(kv, 1) for k, kv in zip(keys, g) if part(kv, 1) is not None},)

    return list(d.items()), items_pullback


@method_rule(dict, "values")
def _dict_values(d):
    keys = list(d)

    def values_pullback(g):
        if g is None or isinstance(g, AbstractZero):
            return (None,)
        return ({k: v for k, v in zip(keys, g) if v is not None},)

    return list(d.values()), values_pullback


@method_rule(dict, "get")
def _dict_get(d, key, default=None):
    present = key in d

    def get_pullback(g):
        if present:
            return ({key: g}, None, None)
        return (None, None, g)

    return d.get(key, default), get_pullback


def _conjugate(z):
    return z.conjugate(), lambda g: (conj(g),)


for _t in (complex, float, int, np.complexfloating, np.floating):
    _METHOD_RULES[(_t, "conjugate")] = _conjugate


@method_rule(list, "copy")
def _list_copy(lst):
    return list(lst), lambda g: (None if g is None else list(g),)


@method_rule(dict, "copy")
def _dict_copy(d):
    return dict(d), lambda g: (None if g is None else dict(g),)


def _unbound_copy(copy_, rebuild):
    """The pair of a type's copy method called unbound, `list.copy(x)`: what the standard
    library's copy.copy calls for lists, dicts and arrays."""

    def unbound_copy_pair(x):
        return copy_(x), lambda g: (None, None if g is None else rebuild(g))

    return unbound_copy_pair


R.SPECIAL[list.copy] = _unbound_copy(list.copy, list)
R.SPECIAL[dict.copy] = _unbound_copy(dict.copy, dict)
R.SPECIAL[np.ndarray.__copy__] = _unbound_copy(np.ndarray.__copy__, lambda g: g)


_NO_GRAD_TYPES = (str, bytes, bool, type(None), range, slice)


_NO_GRAD_METHODS = {"index", "count", "keys", "__len__", "__contains__"}


_NO_GRAD_RULES = {}  # (class, method name) -> its rule, built once


# ndarray methods that write into the array (np.sort returns a sorted copy, a.sort()
# sorts a) or whose np. namesake does something else (np.resize repeats, a.resize
# zero-fills): never differentiated with the rule of the np. function of the same name
_ARRAY_METHODS_IN_PLACE = frozenset({
    "sort", "partition", "fill", "put", "resize", "itemset", "setfield", "setflags",
    "byteswap", "view", "getfield", "dump", "tofile",
})


def _no_gradients(count, keywords):
    """What the pullback of a method without gradients gives: Nones, and an empty dict for
    keywords. A constant at every order (its pullback differentiated again: tuple * int
    would fold a cotangent into the Nones)."""
    return (None,) * count + (({},) if keywords else ())


R.NONDIFF[_no_gradients] = "the gradients of a method that carries none: a constant"


def _method_rule(cls, name, meth):
    rule = _METHOD_RULES.get((cls, name))
    if rule is None:  # numpy scalar types: look along the class hierarchy
        for base in cls.__mro__[1:]:
            rule = _METHOD_RULES.get((base, name))
            if rule is not None:
                break
    if rule is not None:
        return rule
    if issubclass(cls, _NO_GRAD_TYPES) or name in _NO_GRAD_METHODS:
        rule = _NO_GRAD_RULES.get((cls, name))
        if rule is None:
            def no_gradient_method(obj, *args, **kwargs):
                y = getattr(obj, name)(*args, **kwargs)
                n = len(args)
                return y, lambda g: _no_gradients(n + 1, bool(kwargs))

            # differentiated again (inside a pullback), it is a constant as well
            rule = _NO_GRAD_RULES[(cls, name)] = no_gradient_method
            R.NONDIFF[rule] = f"{cls.__name__}.{name} carries no gradient"
        return rule
    fn = None
    if issubclass(cls, np.ndarray):
        if name in _ARRAY_METHODS_IN_PLACE:
            raise MissingAdjointError(
                _Attribute(cls, name),
                f"the method .{name} of {cls.__name__} changes the array in place (or "
                f"differs from np.{name}) and has no rule{_at()}"
                + ("; write `a = np.sort(a)` (a sorted copy) instead" if name == "sort" else ""),
            )
        fn = R.ARRAY_METHODS.get(name) or getattr(np, name, None)
    elif issubclass(cls, np.generic):  # a NumPy number (an array's item): an array's method
        fn = R.ARRAY_METHODS.get(name)
    if fn is not None:
        def ndarray_method(obj, *args, **kwargs):
            y, pb = call(fn, obj, *args, **kwargs)
            return y, lambda g: tuple(pb(g)[1:])

        return ndarray_method
    return None
