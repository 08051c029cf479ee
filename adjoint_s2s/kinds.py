"""The kinds of run-time values, and the one key of a function's generated code.

A *kind* is what the transformer knows statically about a value, from the argument
types the generated code is specialised on: ``REAL`` (int/float), ``COMPLEX``,
``ARRAY`` (ndarray), ``OTHER`` (anything else), ``CONST`` (str/bool/None: no tangent
space). This module imports nothing of adjoint_s2s: the passes, the run time and the
cache all read kinds from here.

    >>> kinds_of((1.0, 2j, "s", [1]))
    ('real', 'complex', 'const', 'other')
"""
import abc
import collections
import dis
import itertools
import types

import numpy as np

REAL, COMPLEX, ARRAY, OTHER, CONST = "real", "complex", "array", "other", "const"
# a cache key's kind of a parameter given None by its default or a keyword: CONST to the
# passes, which fold its `is None` tests (passes/none_params.py)
NONE = "none"

KIND = {
    float: REAL,
    int: REAL,
    complex: COMPLEX,
    np.ndarray: ARRAY,
    bool: CONST,
    str: CONST,
    type(None): CONST,
    np.float64: REAL,
    bytes: CONST,
}


MODULE_ATTR = "module attribute"  # a cache guard's item type: a module's or class's attribute
FUNCTION = "function"  # a guard's item type: a global naming a function, in the same state
LIBRARY = "library attributes"  # a guard's item type: the functions a library module held
MISSING = object()  # what a guard reads of a name that is not there
# values a guard checks by identity: what code names rather than data it computes with
CODE_LIKE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
             types.MethodWrapperType, types.WrapperDescriptorType, type, np.ufunc,
             classmethod, staticmethod, property)


def static_attr(base, attr):
    """base's attribute as stored (a module's, or a class's along its MRO: a classmethod
    itself, not a new bound method per read), or None; what the cache checks of
    ``helpers.act`` or ``Acts.act`` (guards._attribute_guard)."""
    if not isinstance(base, type):
        return getattr(base, "__dict__", {}).get(attr)
    for klass in base.__mro__:
        d = klass.__dict__
        if attr in d:
            return d[attr]
    return None


def kinds_of(args):
    """The kind of each value in args."""
    return tuple([KIND.get(type(a), OTHER) for a in args])


# a cache key's kind of a captured list or tuple of numbers (items_kind REAL): OTHER to
# the passes, its items REAL where the function only reads them (activity.py)
REAL_SEQ = "[real]"


def cell_kind(cell):
    """The kind of a captured variable (OTHER while the cell is still empty); REAL_SEQ for
    a list or tuple of numbers (data a closure was made over, checked at each call)."""
    try:
        v = cell.cell_contents
    except ValueError:
        return OTHER
    k = KIND.get(type(v))
    if k is not None:
        return k
    # (asked at every call of a closure: a list whose first item is no number costs nothing)
    if (type(v) is list or type(v) is tuple) and v and type(v[0]) in _REAL_ITEMS and items_kind(v) == REAL:
        return REAL_SEQ
    return OTHER


def cell_kinds(f):
    """The kinds of f's captured variables, or None when it captures nothing."""
    return tuple([cell_kind(c) for c in f.__closure__]) if f.__closure__ else None


FIELDS = "fields"  # a cache key's last item (FIELDS, field_kinds(args)) when there are any
ITEMS = "[]"  # field_kinds' field name for the one kind of every item of a list
TUPLE_ITEMS = "()"  # and of a tuple
DICT_ITEMS = "{}"  # and of the values of a dict with string keys
VECTOR = "[i]"  # field_kinds' field name of a 1-D float64 array: its items are numbers
ROW_ITEMS = "[()]"  # field_kinds' field name of a list or tuple of rows of numbers (rows_kind)
_MAX_FIELDS = 32
_MAX_ITEMS = 10_000  # (the kinds of a list's items are checked at each call)
_NOT_RECORDS = frozenset(("builtins", "functools", "types", "abc"))
_PLAIN_METACLASSES = (type, abc.ABCMeta)


def reads_items(code):
    """May the function of code read an item of an argument (a subscript in its bytecode)?
    Only then does the key note its 1-D float arrays (field_kinds' vectors): code that
    reads none is the same for any array, and checking them at each call costs."""
    return _SUBSCRIPT is None or code is None or _SUBSCRIPT in code.co_code


_SUBSCRIPT = bytes([dis.opmap["BINARY_SUBSCR"]]) if "BINARY_SUBSCR" in dis.opmap else None


def field_kinds(args, vectors=True):
    """The kinds of the fields of the arguments that are plain records: an instance of a
    class written in Python, its fields in its ``__dict__`` and read by Python's plain
    attribute lookup (no ``__getattribute__`` or ``__getattr__`` of the class's own).
    ``((index, ((field, kind), ...)), ...)`` in the instance dict's order; () when no
    argument is one. The generated code may read such fields once, at its entry, with
    these kinds (passes/param_fields.py); the dispatch cache checks them at each call.
    A list or tuple argument whose items are all of one kind (items_kind) is noted as
    ``(index, ((ITEMS, kind),))`` (TUPLE_ITEMS for a tuple, DICT_ITEMS for the values of
    a dict with string keys): its items' reads have that kind (param_fields.known_items);
    one of rows of numbers (rows_kind) as ``(index, ((ROW_ITEMS, REAL),))``: its rows'
    items are numbers (passes/rows.py).
    With vectors (reads_items of the function), a 1-D float64 array is noted ``(index,
    ((VECTOR, REAL),))``: `v[i]` at an int position is a number (activity.vector_item)."""
    out = ()
    for i, a in enumerate(args):
        t = type(a)
        if t is float:
            continue
        if t is np.ndarray:  # (first: called at each cached call of code for arrays)
            d = a.dtype
            if d is _F8 or d == _F8:
                if vectors and a.ndim == 1:
                    out += ((i, _VECTOR_FIELDS),)
            elif d.kind not in "biufc":
                return ()  # objects in an array: their operators may be anyone's
            continue
        if t is list or t is tuple:
            k = items_kind(a)
            if k is not None:
                out += ((i, ((ITEMS if t is list else TUPLE_ITEMS, k),)),)
            elif a and (type(a[0]) is tuple or type(a[0]) is list) and rows_kind(a) == REAL:
                out += ((i, ((ROW_ITEMS, REAL),)),)  # a table of rows: passes/rows.py
            continue
        if t is dict:
            k = items_kind(tuple(a.values())) if all(type(key) is str for key in a) else None
            if k is not None:
                out += ((i, ((DICT_ITEMS, k),)),)
            continue
        if t in KIND:
            continue
        if t.__base__ is tuple and _namedtuple(t):  # its fields are its items: never rebound
            out += ((i, tuple([(k, _value_kind(v)) for k, v in zip(t._fields, a)])),)
            continue
        home = getattr(t, "__module__", None)
        if type(home) is not str or home in _NOT_RECORDS or home.startswith(("adjoint_s2s", "numpy")):
            continue
        if type(t) not in _PLAIN_METACLASSES or any(
                "__getattribute__" in k.__dict__ or "__getattr__" in k.__dict__ for k in t.__mro__[:-1]):
            continue
        try:
            d = object.__getattribute__(a, "__dict__")
        except AttributeError:
            continue
        if type(d) is not dict or not d or len(d) > _MAX_FIELDS:
            continue
        out += ((i, tuple([(k, _field_kind(t, k, v)) for k, v in d.items()])),)
    return out


def items_kind(seq):
    """REAL when every item of seq (a list or tuple of at most _MAX_ITEMS) is an int, a
    float or a NumPy float64, ARRAY when every one is an ndarray of numbers; else None."""
    if not seq or len(seq) > _MAX_ITEMS:
        return None
    types_ = set(map(type, seq))
    if types_ <= _REAL_ITEMS:
        return REAL
    if len(types_) == 1 and np.ndarray in types_ and all(a.dtype.kind in "iufc" for a in seq):
        return ARRAY
    return None


def rows_kind(seq):
    """REAL when seq is a list or tuple of lists and tuples whose items are all numbers
    (items_kind: ``PAIRS = [(x, y), ...]``, rows of a data table), at most _MAX_ITEMS
    numbers in all; else None."""
    if type(seq) not in (list, tuple) or not seq or len(seq) > _MAX_ITEMS or not set(map(type, seq)) <= _ROWS:
        return None  # (checked at each call: C loops only)
    if sum(map(len, seq)) > _MAX_ITEMS or not set(map(type, itertools.chain.from_iterable(seq))) <= _REAL_ITEMS:
        return None
    return REAL


ROWS = "rows"  # what a global list of rows of numbers (rows_kind) is assumed to hold


def records_kind(seq):
    """REAL when seq is a list or tuple of dicts whose keys are all strings and whose values
    are all numbers (``RECORDS = [{"w": 0.1, "b": 1.0}, ...]``), at most _MAX_ITEMS values
    in all; else None."""
    if type(seq) not in (list, tuple) or not seq or len(seq) > _MAX_ITEMS or set(map(type, seq)) != _DICT:
        return None  # (checked at each call: C loops only)
    if (sum(map(len, seq)) > _MAX_ITEMS or not set(map(type, itertools.chain.from_iterable(seq))) <= _STR
            or not set(map(type, itertools.chain.from_iterable(map(dict.values, seq)))) <= _REAL_ITEMS):
        return None
    return REAL


RECORDS = "records"  # what a global list of records of numbers (records_kind) is assumed to hold
_DICT, _STR = {dict}, {str}


def f8_vector(v):
    """Is v a 1-D float64 array (its items NumPy float64 numbers, a float subclass)?"""
    return type(v) is np.ndarray and v.ndim == 1 and v.dtype == _F8


def float_ufunc(f):
    """Is f a NumPy ufunc that gives a float64 for ints and floats (Python's, float64):
    no loop of its own from ints or bools to ints (np.sqrt, np.exp, np.arctan2; not
    np.add, np.abs, np.maximum)? Then np.sqrt(x) of a number is a number: NumPy float64,
    a float subclass."""
    got = _FLOAT_UFUNCS.get(f)
    if got is None:
        got = _FLOAT_UFUNCS[f] = type(f) is np.ufunc and f.nout == 1 and not any(
            t.split("->")[1] not in ("d", "g", "e", "f") and t[0] in "?bBhHiIlLqQpP" for t in f.types)
    return got


_FLOAT_UFUNCS = {}
_REAL_ITEMS = frozenset((float, int, np.float64))
_ROWS = frozenset((list, tuple))
_F8 = np.dtype(np.float64)
_VECTOR_FIELDS = ((VECTOR, REAL),)


def _namedtuple(cls):
    """Is cls a class made by collections.namedtuple or typing.NamedTuple (a tuple whose
    fields are read by position), with no attribute lookup of its own?"""
    fields = cls.__dict__.get("_fields")
    return (type(fields) is tuple and len(fields) <= _MAX_FIELDS
            and all(type(cls.__dict__.get(f)) is _TUPLE_FIELD for f in fields)
            and "__getattribute__" not in cls.__dict__ and "__getattr__" not in cls.__dict__)


_TUPLE_FIELD = type(collections.namedtuple("_Probe", "a").a)


def _value_kind(v):
    """A field's value's kind: OTHER for an array that holds objects."""
    k = KIND.get(type(v), OTHER)
    return OTHER if k == ARRAY and not number_array(v) else k


def _field_kind(cls, name, v):
    """The kind of a record's field: OTHER where a data descriptor of the class wins over
    the instance dict (a property, a slot) or an array holds objects."""
    return OTHER if _shadowed(cls, name) else _value_kind(v)


def number_array(v):
    """Is v exactly an ndarray of numbers (no objects whose operators could run code)?"""
    return type(v) is np.ndarray and v.dtype.kind in "biufc"


def _shadowed(cls, name):
    """Does a data descriptor of cls (a property, a slot) win over the instance dict's name?"""
    for klass in cls.__mro__:
        v = klass.__dict__.get(name, MISSING)
        if v is not MISSING:
            t = type(v)
            return hasattr(t, "__set__") or hasattr(t, "__delete__")
    return False


_VARARGS, _VARKEYWORDS = 0x04, 0x08  # a code object's flags: it gathers *args, **kwargs


def keyword_call_key(fn, args, kwargs):
    """cache_key for a call of fn with positional args and keywords kwargs: the kinds of
    what each parameter gets (a keyword's value, else its default's); OTHER for those
    of a function that gathers ``*args`` or ``**kwargs``."""
    code = fn.__code__
    npos = code.co_argcount
    if code.co_flags & (_VARARGS | _VARKEYWORDS) or len(args) > npos:
        return cache_key(fn, kinds_of(args), keywords=True)
    names = code.co_varnames[:npos + code.co_kwonlyargcount]
    defaults = fn.__defaults__ or ()
    kw = fn.__kwdefaults__ or {}
    first = npos - len(defaults)
    key = kinds_of(args)
    for i in range(len(args), len(names)):
        p = names[i]
        v = kwargs[p] if p in kwargs else (defaults[i - first] if first <= i < npos else kw.get(p, MISSING))
        key += (_left_kind(v),)
    if fn.__closure__:
        key += tuple([cell_kind(c) for c in fn.__closure__])
    return key


def _left_kind(v):
    """The key's kind of a parameter's default, or of a keyword's value: NONE for None."""
    return NONE if v is None else KIND.get(type(v), OTHER)


def cache_key(fn, arg_kinds, keywords=False):
    """The one key of fn's generated code: the kinds of the positional arguments passed,
    then of the positional parameters they leave out (their defaults' kinds; OTHER when
    keywords may fill them), then of the keyword-only parameters (their defaults' kinds,
    when no keywords are passed and nothing is gathered by ``*args``), then of the
    captured variables."""
    key = tuple(arg_kinds)
    code = fn.__code__
    npos = code.co_argcount
    n = len(key)
    if n < npos:
        if keywords:
            key += (OTHER,) * (npos - n)
        else:
            defaults = fn.__defaults__
            if defaults:
                first = npos - len(defaults)
                key += tuple(
                    _left_kind(defaults[i - first]) for i in range(max(n, first), npos)
                )
    if code.co_kwonlyargcount and not keywords and not code.co_flags & _VARARGS and len(key) == npos:
        kw = fn.__kwdefaults__ or {}
        key += tuple([_left_kind(kw[p]) if p in kw else OTHER
                      for p in code.co_varnames[npos:npos + code.co_kwonlyargcount]])
    if fn.__closure__:
        key += tuple([cell_kind(c) for c in fn.__closure__])
    return key


# ----- wrappers that only forward their arguments --------------------------------------------


def _forwarding_shapes():
    """The code of ``def w(*a): return f(*a)`` and ``def w(*a, **k): return f(*a, **k)``,
    f a variable of the function around w: {(argument flags, locals): bytecode}. The
    bytecode names its variables by position, so any names give the same bytes."""
    def outer(f):
        def w(*a):
            return f(*a)

        def kw(*a, **k):
            return f(*a, **k)

        return w, kw

    return {(c.co_flags & 0x0C, c.co_nlocals): c.co_code for c in (w.__code__ for w in outer(None))}


_FORWARDING = _forwarding_shapes()


def forwarding_cell(w):
    """The closure cell holding the function w calls, when w is a Python function that
    only calls it with every argument it was given and returns what it returns (the
    wrapper of a decorator such as ``functools.wraps(f)(lambda *a, **k: f(*a, **k))``):
    calling w is calling that function. Else None."""
    if type(w) is not types.FunctionType:
        return None
    code = w.__code__
    if (code.co_argcount or code.co_kwonlyargcount or len(code.co_freevars) != 1 or code.co_cellvars
            or _FORWARDING.get((code.co_flags & 0x0C, code.co_nlocals)) != code.co_code):
        return None
    cell = w.__closure__[0]
    try:
        inner = cell.cell_contents
    except ValueError:  # (an empty cell)
        return None
    return cell if type(inner) is types.FunctionType else None


def forwarding_chain(f, limit=8):
    """[f, the function f forwards to, ...]: the wrappers f stands for, f first and the
    function that computes last (one item when f forwards to nothing)."""
    chain = [f]
    while len(chain) <= limit:
        cell = forwarding_cell(chain[-1])
        if cell is None:
            break
        chain.append(cell.cell_contents)
    return chain
