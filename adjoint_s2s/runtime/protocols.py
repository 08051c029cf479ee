"""Builtins given an object of a user class: its methods are differentiated, or the call is
refused; never a zero gradient because the object was taken for a number.

A rule of a builtin (``float``, ``abs``, ``math.sqrt``, ``sum``, ``zip``, ...) knows numbers,
arrays and Python's containers. Given an instance of a class written in Python, the
builtin itself runs that class's methods as plain Python (``__float__``, ``__abs__``,
``__iter__``, ...): what they compute from the object's fields is not followed, and the
rule would hand its gradient back as if the object were a number (lost, a zero).
``call`` sends such calls here (``object_call``):

- ``float``, ``complex``, ``abs``, ``round``, ``pow``, ``divmod`` and the ``operator``
  functions run the method they stand for (``__float__``, ``__abs__``, ``binop``...) through
  AD; a ``math`` (``cmath``) function takes the number the object's ``__float__``
  (``__complex__``) gives;
- the builtins that iterate (``sum``, ``min``, ``max``, ``list``, ``zip``, ``map``, ...)
  take the items the object's ``__iter__`` (or ``__getitem__`` with 0, 1, ... up to the
  IndexError) hands out, through AD (``object_items``): a ``for`` loop over the object and
  unpacking it do the same (``seq``, ``getitem_pair``);
- any other builtin with a rule is refused, naming the builtin, the class and the way out.
"""
import builtins
import math
import operator
import sys
import types

import numpy as np

from .. import rules as R
from ..errors import MissingAdjointError, NotDifferentiableError, UnsupportedSyntaxError
from ..tangents import AbstractZero, Thunk, add
from .sites import _at, is_library_code, user_call_site

_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement
_NOT_OBJECTS = (int, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset,
                np.ndarray, np.generic, type, types.ModuleType, BaseException, AbstractZero,
                Thunk)
_USER = {}  # type -> whether its instances are objects of a user class
PLAIN = frozenset({float, int, bool, complex, str, list, tuple, dict, np.ndarray, np.float64,
                    type(None), slice, range, type})


def user_object(v):
    """Whether v is an instance of a class written in Python that is not a number, an
    array or a container (nor one of adjoint_s2s's own)."""
    t = type(v)
    got = _USER.get(t)
    if got is None:
        got = bool(t.__flags__ & _HEAP_TYPE) and not issubclass(t, _NOT_OBJECTS) and not (
            getattr(t, "__module__", None) or "").startswith(("adjoint_s2s.", "numpy", "scipy"))
        if len(_USER) > 4096:  # (classes made again and again: bounded)
            _USER.clear()
        _USER[t] = got
    return got


def _first_object(args):
    for a in args:
        if user_object(a):
            return a
    return None


def has_objects(args):
    """Whether one of args is an object of a user class (a quick look at the types first)."""
    for a in args:
        if type(a) not in PLAIN and user_object(a):
            return True
    return False


_TABLE = {}  # callable -> whether its rule comes from the tables of builtins (not adjoint_s2s's)


def table_rule(f):
    """Whether f's rule is a built-in one for a builtin or library function that takes
    numbers, arrays or containers (a primitive, a rule that iterates, a non-differentiable
    builtin), not a user rule nor a helper of ours. (The other special pairs, getattr,
    functools.partial, ..., take any object.)"""
    if isinstance(f, (types.FunctionType, types.MethodType)) and not (
            getattr(f, "__module__", None) or "").startswith(("numpy", "scipy")):
        return False  # (the user's functions and methods: no table rule, and not kept here)
    try:
        return _TABLE[f]
    except KeyError:
        pass
    except TypeError:
        return False
    got = R.lookup_user(f) is None and (
        f in _ITERATED or f is builtins.reversed or f is builtins.next
        or bool(R.PRIMITIVES.get(f)) or f in R.NONDIFF
    ) and not (getattr(f, "__module__", None) or "").startswith("adjoint_s2s")
    if len(_TABLE) > 4096:  # (classes made again and again: bounded)
        _TABLE.clear()
    _TABLE[f] = got
    return got


def _no_tangent(y):
    if isinstance(y, tuple):
        return all(_no_tangent(v) for v in y)
    return isinstance(y, _NO_TANGENT)


R.ON_CHANGE.append(_TABLE.clear)


def _python_method(obj, name):
    meth = getattr(type(obj), name, None)
    return meth if isinstance(meth, types.FunctionType) else None


def _name(f):
    mod = getattr(f, "__module__", None)
    name = getattr(f, "__name__", repr(f))
    return name if mod in (None, "builtins") else f"{mod}.{name}"


def _refuse(f, obj, why="it would run the class's methods as plain Python"):
    cls = type(obj).__name__
    raise MissingAdjointError(
        f, f"{_name(f)}(...) of a {cls} object is not differentiated: {why}, and the "
        f"gradient of what they compute from the object would be lost{_at()}. Call the "
        f"method of {cls} that computes the number yourself (obj.method(...)), or give "
        f"{_name(f)} of a {cls} a rule with @adjoint_s2s.adjoint")


# ----- dunder methods ------------------------------------------------------------------------

_UNARY = {float: "__float__", complex: "__complex__", abs: "__abs__", operator.abs: "__abs__",
          operator.neg: "__neg__", operator.pos: "__pos__", round: "__round__",
          math.trunc: "__trunc__", math.floor: "__floor__", math.ceil: "__ceil__"}
_BINARY = {operator.add: "Add", operator.sub: "Sub", operator.mul: "Mult",
           operator.truediv: "Div", operator.floordiv: "FloorDiv", operator.mod: "Mod",
           operator.pow: "Pow", operator.matmul: "MatMult", pow: "Pow"}
_IN_PLACE = {operator.iadd: "Add", operator.isub: "Sub", operator.imul: "Mult",
             operator.itruediv: "Div", operator.ifloordiv: "FloorDiv", operator.imod: "Mod",
             operator.ipow: "Pow", operator.imatmul: "MatMult"}
_ITERATED = {builtins.sum: 1, builtins.min: 1, builtins.max: 1, builtins.list: 1,
             builtins.tuple: 1, builtins.sorted: 1, builtins.iter: 1, builtins.enumerate: 1,
             builtins.zip: None, builtins.map: None, builtins.filter: None, math.fsum: 1,
             math.prod: 1, math.dist: 2}
_NO_TANGENT = (bool, int, str, bytes, type(None), type, range, np.bool_, np.integer)


def object_call(f, pair, args, kwargs):
    """(y, pullback) of f(*args, **kwargs), f a builtin with a rule and one of args an
    object of a user class: see the module docstring."""
    obj = _first_object(args)
    meth_name = _UNARY.get(f)
    if meth_name is not None and not kwargs and user_object(args[0]):
        meth = _python_method(args[0], meth_name)
        if meth is None:
            f(*args)  # Python's TypeError (no such method), or a C method we cannot follow
            _refuse(f, args[0], f"{type(args[0]).__name__}.{meth_name} is not written in Python")
        y, pb = call(meth, *args)
        return y, lambda g: (None,) + tuple(pb(g)[1:])
    opname = _BINARY.get(f) or _IN_PLACE.get(f)
    if opname is not None and len(args) == 2 and not kwargs:
        y, pb = binop(opname, args[0], args[1], inplace=f in _IN_PLACE)
        return y, lambda g: (None,) + tuple(pb(g))
    if f is divmod and len(args) == 2 and not kwargs:
        a, b = args
        meth = _python_method(a, "__divmod__")
        if meth is not None:
            y, pb = call(meth, a, b)
            if y is not NotImplemented:
                return y, lambda g: (None,) + tuple(pb(g)[1:])
        meth = _python_method(b, "__rdivmod__")
        if meth is not None:
            y, pb = call(meth, b, a)
            if y is not NotImplemented:
                return y, lambda g: (None,) + tuple(reversed(pb(g)[1:]))
        _refuse(f, obj, "its __divmod__ is not written in Python")
    mod = getattr(f, "__module__", None)
    if mod in ("math", "cmath") and f not in _ITERATED and not kwargs:
        return _number_call(f, pair, args, float if mod == "math" else complex)
    if f in _ITERATED:
        return _iterated_call(f, pair, args, kwargs)
    if f is builtins.reversed and len(args) == 1 and not kwargs:
        return _reversed(args[0])
    if f is builtins.next and user_object(args[0]):
        meth = _python_method(args[0], "__next__")
        if meth is None:
            _refuse(f, args[0], f"{type(args[0]).__name__}.__next__ is not written in Python")
        y, pb = call(meth, args[0])
        return y, lambda g: (None,) + tuple(pb(g)[1:]) + (None,) * (len(args) - 1)
    if f in R.NONDIFF and f not in (float, complex):
        y = f(*args, **kwargs)  # len(obj), isinstance(obj, C), str(obj): no tangent space
        if _no_tangent(y) or R.NONDIFF[f] == R.RANDOM_DRAW:  # (rng.random(): a draw)
            n = len(args)
            return y, (lambda g: (None,) * (n + 1) + ({},)) if kwargs else (lambda g: (None,) * (n + 1))
        _refuse(f, obj, f"it gave a {type(y).__name__}, which may depend on the object's fields")
    _refuse(f, obj)


def object_pair(f, nargs):
    """The pair ``call(f, ...)`` runs on objects of user classes (object_call), as a function
    to differentiate again (the rule of ``call`` at second order)."""
    pair = resolve(f, nargs)

    def object_call_pair(*args):
        return object_call(f, pair, args, {})

    return object_call_pair


def _number_call(f, pair, args, to):
    """math.sqrt(obj): the rule of f on the number obj.__float__() gives (cmath: __complex__),
    through AD."""
    for a in args:
        if user_object(a) and _python_method(a, f"__{to.__name__}__") is None:
            f(*args)  # Python's TypeError, or a number through a C method (__index__)
            _refuse(f, a, f"{type(a).__name__}.__{to.__name__}__ is not written in Python")
    conv = [call(to, a) if user_object(a) else None for a in args]
    vals = [a if c is None else c[0] for a, c in zip(args, conv)]
    y, pb = pair(*vals)

    def number_method_pullback(g):
        grads = pb(g)
        out = [grads[0]]
        for i, c in enumerate(conv):
            out.append(grads[i + 1] if c is None else c[1](grads[i + 1])[1])
        return tuple(out)

    return y, number_method_pullback


def _iterated_call(f, pair, args, kwargs):
    """f (sum, zip, ...) iterating over objects of user classes among args: each such
    argument in an iterated place is given as the list of its items (object_items)."""
    n = _ITERATED[f]
    if f is builtins.map or f is builtins.filter:
        places = range(1, len(args))
    elif f in (builtins.min, builtins.max) and len(args) != 1:
        places = ()  # max(a, b): compares the objects, the gradient goes to the one picked
    else:
        places = range(len(args) if n is None else min(n, len(args)))
    new = list(args)
    pbs = {}
    for i in places:
        if user_object(args[i]):
            got = object_items(args[i])
            if got is None:
                _refuse(f, args[i], "iterating over it runs methods that are not written in "
                        "Python")
            new[i], pbs[i] = got
    if not pbs and f not in (builtins.sum, builtins.min, builtins.max):
        # the objects are in places that are not iterated (map's function, sum's start):
        # rules that take any value there
        if f is builtins.map:
            return pair(*args, **kwargs)
        _refuse(f, _first_object(args))
    y, pb = pair(*new, **kwargs)

    def iterated_object_pullback(g):
        grads = list(pb(g))
        for i, item_pb in pbs.items():
            grads[i + 1] = item_pb(grads[i + 1])
        return tuple(grads)

    return y, iterated_object_pullback


def _reversed(obj):
    meth = _python_method(obj, "__reversed__")
    if meth is not None:
        y, pb = call(meth, obj)
        return y, lambda g: (None,) + tuple(pb(g)[1:])
    if _python_method(obj, "__len__") is None or _python_method(obj, "__getitem__") is None:
        builtins.reversed(obj)  # Python's TypeError
        _refuse(builtins.reversed, obj)
    items, items_pb = _indexed_items(obj)
    y, pb = resolve(builtins.reversed, 1)(items)
    return y, lambda g: (None, items_pb(pb(g)[1]))


# ----- iteration -----------------------------------------------------------------------------


def object_items(obj):
    """(the list of obj's items, pullback from the list's gradient to obj's), obj's items
    being what its __iter__ (else its __getitem__ from 0 on) hands out, through AD; None
    when obj does not iterate with methods written in Python."""
    typ = type(obj)
    it_meth = _own_iter(typ)
    if isinstance(it_meth, types.FunctionType):
        if _python_method(obj, "__next__") is not None:
            raise NotDifferentiableError(
                f"iterating over a {typ.__name__}, an iterator written in Python (its "
                f"__next__ changes it as it hands out items), is not differentiated{_at()}: "
                "give the class an __iter__ that returns an iterator over its items "
                "(iter(self.items)), or iterate over a list")
        it, it_pb = call(it_meth, obj)
        items, list_pb = resolve(builtins.list, 1)(it)

        def object_items_pullback(g):
            return it_pb(list_pb(g)[1])[1]

        return items, object_items_pullback
    if it_meth is None and _python_method(obj, "__getitem__") is not None:
        return _indexed_items(obj)
    return None


_UNPACKED = (tuple, list, np.ndarray)
_SEQUENCE_ITERS = (tuple.__iter__, list.__iter__, np.ndarray.__iter__)


def check_unpack(value, n, star=None):
    """Before `a, b = value` (n targets; star: the position of a starred one) reads
    value[0], value[1], ...: Python iterates value, which is the same for a tuple, a
    list or an array (a ValueError where the count differs, as Python's); a dict (its
    keys), a set, a dict view, an iterator or a class with its own __iter__ is refused,
    with the way out."""
    if isinstance(value, _UNPACKED) and type(value).__iter__ in _SEQUENCE_ITERS:  # (a named tuple too)
        got = len(value)
        if star is None and got != n:
            raise ValueError(f"too many values to unpack (expected {n})" if got > n else
                             f"not enough values to unpack (expected {n}, got {got})")
        if star is not None and got < n - 1:
            raise ValueError(f"not enough values to unpack (expected at least {n - 1}, got {got})")
        return
    if isinstance(value, (bool, int, float, complex, np.number)):
        raise TypeError(f"cannot unpack non-iterable {type(value).__name__} object")
    typ = type(value)
    if getattr(typ, "__getitem__", None) is None:
        if getattr(typ, "unpacked", None) is not None or user_object(value) and _own_iter(typ) is not None:
            return  # zip's, map's... iterators, a class iterated by its __iter__: as they iterate
    elif user_object(value) and _own_iter(typ) is None:
        return  # a class indexed from 0 on, without an __iter__ of its own: its iteration
    raise NotDifferentiableError(
        f"unpacking a {type(value).__name__} into {n} names{_at()}: Python iterates it, and "
        f"adjoint_s2s unpacks tuples, lists and arrays by position. Unpack a list of it "
        f"(`a, b = list(value)`: a dict's keys, a view's items, an object's own iteration)")


def _own_iter(typ):
    """typ's __iter__, None where it is a library's mixin (collections.abc.Sequence's reads
    self[0], self[1], ...: the class's own __getitem__ is what computes)."""
    meth = getattr(typ, "__iter__", None)
    if isinstance(meth, types.FunctionType) and (
            is_library_code(meth.__code__) or meth.__code__.co_filename.startswith("<frozen")):
        return None
    return meth


def _indexed_items(obj):
    """obj[0], obj[1], ... up to the IndexError, each read through AD: Python's iteration
    over an object with a __getitem__ and no __iter__."""
    meth = _python_method(obj, "__getitem__")
    items, pbs = [], []
    i = 0
    while True:
        try:
            y, pb = call(meth, obj, i)
        except (IndexError, StopIteration):
            break
        items.append(y)
        pbs.append(pb)
        i += 1

    def indexed_items_pullback(g):
        d = None
        g = _seed(g)
        for k in range(len(pbs) - 1, -1, -1):
            gk = None if g is None or k >= len(g) else g[k]
            d = add(d, pbs[k](gk)[1])
        return d

    return items, indexed_items_pullback


def _seed(g):
    if isinstance(g, Thunk):
        g = g.unthunk()
    return None if g is None or isinstance(g, AbstractZero) else g


# for loops over an object (``_rt.seq``): the pullback of each iteration, by object, taken
# back in reverse order by ``seq_adjoint``
_LOOPS = {}


def loop_items(obj):
    """The items a for loop over obj (a user object) goes through; their pullback is kept
    for ``loop_adjoint``."""
    got = object_items(obj)
    if got is None:
        return None
    if len(_LOOPS) > 4096:  # (loops whose reverse pass never ran: bounded)
        _LOOPS.clear()
    _LOOPS.setdefault(id(obj), []).append((obj, got[1]))
    return got[0]


def loop_adjoint(obj, g):
    """The gradient of obj from that of the items the last loop over it went through."""
    stack = _LOOPS.get(id(obj))
    if not stack or stack[-1][0] is not obj:
        raise NotDifferentiableError(
            f"the items a loop over a {type(obj).__name__} went through were lost before "
            f"its reverse pass{_at()}: iterate over list(obj) instead")
    _, pb = stack.pop()
    if not stack:
        del _LOOPS[id(obj)]
    return pb(g)


def recorder_item(rec, idx):
    """(item, pullback) of item idx of what the iterator rec (rules/sequences.py) has left,
    for `a, b = zip(...)` (read as it[0], it[1]): the rest is taken at the first read, and
    the pullback gives the gradient of every item rec handed out (None but at idx)."""
    if rec.start is None:
        rec.start = len(rec.taken)
        rec.taken.extend(rec._it)
    n = len(rec.taken)
    rest = range(rec.start, n)
    if type(idx) is slice:  # `a, *b = zip(...)`
        ks = rest[idx]
    else:
        if not -len(rest) <= idx < len(rest):
            raise ValueError(f"not enough values to unpack (got {len(rest)})")
        ks = rest[idx:idx + 1 or None]

    def unpacked_pullback(g):
        g = _seed(g)
        if g is None:
            return None
        grads = [None] * n
        for j, k in enumerate(ks):
            grads[k] = g[j] if type(idx) is slice else g
        return grads

    y = [rec.taken[k] for k in ks]
    return (y if type(idx) is slice else y[0]), unpacked_pullback


def refuse_read_again():
    """An iterator a rule made (iter, zip, map, enumerate, reversed, filter, a generator
    expression handed out of a function) read again, by a loop, list(), zip(), next()...
    after another reader took items from it: Python goes on where the first read stopped;
    the rules that take its items, all of them at once where Python is lazy (a loop that
    may stop early), place the gradients from its first item."""
    site = user_call_site(sys._getframe(1))
    what = ("an iterator (of iter, zip, map, enumerate, reversed, filter or a generator "
            "expression, made here or in a function that returned it) read again (by a loop, "
            "list(), sum(), zip(), next()...) after another reader took items from it")
    hint = ("Python goes on where the first read stopped, which the differentiated code does "
            "not follow: make a list where the iterator is made (`items = list(...)`) and "
            "read it by index (`items[0]`, `items[1:]`)")
    raise UnsupportedSyntaxError(what, *(site[1:] if site else ()), hint=hint)


# the dispatch imports this module (through structure.py, whose loops come here): imported
# last, so that it finds this module complete
from .dispatch import call, resolve  # noqa: E402
from .operators import binop  # noqa: E402
