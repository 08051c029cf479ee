"""Writes that a user class takes over, refused where generated code cannot follow them.

Generated code writes an item (``obj[key] = value``) with copy on write for arrays, lists
and dicts, and stores an attribute (``obj.name = value``) as Python does, taking the
value's gradient back out of the object's field store (fields.py) in the reverse pass.
Both assume the write puts the value where the next read finds it. A class can run its
own code instead: a ``__setitem__`` of its own, a property with a setter, a descriptor
with ``__set__``, a ``__setattr__`` of its own. That code runs as plain Python (it is not
differentiated), so the gradient of what it changed would be lost or go to the wrong
place. Those writes are refused, naming the class, the user's line and the way out (a
method call is differentiated).

A mutable container that is an attribute of the class (``shared = []`` in its body) or that
a module global the running function reads holds too, read through an instance and
changed in place, is another object than the instance's own field that the reverse pass
follows: it is refused when the change is written back (``own_field``). The places asked
are found once per class and per function (a loop writing ``self.h += v`` asks each
trip): a class attribute or global bound to a container only later is not seen.
"""
import dis
import sys
import types
import weakref

import numpy as np

from ..errors import UnsupportedSyntaxError
from .sites import is_library_code, is_library_file, user_call_site

_OWN_SETITEM = {}  # type -> the Python __setitem__ it defines, or None
_CACHED = 1024


def own_setitem(typ):
    """The ``__setitem__`` written in Python that objects of typ run (not adjoint_s2s's
    own classes), or None."""
    try:
        return _OWN_SETITEM[typ]
    except KeyError:
        pass
    meth = getattr(typ, "__setitem__", None)
    found = None
    if isinstance(meth, types.FunctionType) and not _ours(meth):
        found = meth
    if len(_OWN_SETITEM) >= _CACHED:  # (classes made again and again: bounded)
        _OWN_SETITEM.clear()
    _OWN_SETITEM[typ] = found
    return found


def _ours(fn):
    return (getattr(fn, "__module__", None) or "").startswith("adjoint_s2s.")


def _refuse(construct, hint, reverse=False):
    # (the user's file and statement, followed through generated code made from
    # generated code when differentiated again)
    if reverse:
        # refused while a pullback runs: the field gradients its reads already left in
        # the store (keyed by object) would be taken by a later gradient of the same
        # object (a module global lives on): the store is emptied, the run is over
        from .fields import _FIELDS, _ITEMS  # (fields.py imports this module)
        _FIELDS.clear()
        _ITEMS.clear()
    site = user_call_site(sys._getframe(1))
    if site is None:
        raise UnsupportedSyntaxError(construct, hint=hint)
    raise UnsupportedSyntaxError(construct, site[1], site[2], hint=hint)


def _defined_at(fn):
    code = getattr(fn, "__code__", None)
    return f" ({code.co_filename}, line {code.co_firstlineno})" if code is not None else ""


def refuse_own_setitem(typ):
    """obj[key] = value (or obj[key] op= value) on an object of typ, whose __setitem__ is
    its own Python code."""
    name = typ.__name__
    meth = own_setitem(typ)
    _refuse(
        f"writing an item into an object of the class {name} (`obj[key] = value` or "
        f"`obj[key] op= value`), whose `__setitem__`{_defined_at(meth)} is its own code,",
        f"the write would run as plain Python and its gradient would be lost. Call the "
        f"method instead: `obj.__setitem__(key, value)`, or a method of {name} that makes "
        f"the write (a method call is differentiated)",
    )


def refuse_tuple_item(obj, idx):
    """`t[i][j] = v` where t is a tuple: the item read out of t is written into (a list's
    copy on write), and a tuple cannot take the new item back. (A write into the tuple
    itself, `t[i] = v`, raises TypeError in the plain call too.)"""
    _refuse(
        f"writing into an item of a tuple (`t[{idx!r}][...] = value`, t a tuple of "
        f"{len(obj)} items),",
        "the item's new value cannot be put back into the tuple, where Python changes it "
        "in place. Hold the items in a list instead (`t = [..., ...]`)",
    )


def loop_writes_list(seq, name):
    """Before a loop over `name` whose body writes items into it (`name[k] = v`, k not
    the visited position): a list's loop visits the items as they change, where the
    generated code writes into a copy (the loop would read the old values); a dict's
    loop visits its keys, which the writes leave as they are."""
    if isinstance(seq, list):
        _refuse(
            f"changing `{name}` (`{name}[...] = ...` of an item the loop may not have "
            f"visited yet) inside a loop over it,",
            f"the loop visits the items as they change, where the differentiated code would "
            f"visit the old ones. Loop over the indexes (`for i in range(len({name})):`) or "
            f"over a copy (`for v in list({name}):`)",
        )


_WRITES_CHECKED = {}  # (type, attribute) -> what takes over a store to it, or None


def _store_taken_over(typ, name):
    """What runs instead of storing into the instance's __dict__ on `obj.name = value`:
    a description, or None for a plain store."""
    key = (typ, name)
    try:
        return _WRITES_CHECKED[key]
    except KeyError:
        pass
    what = None
    setattr_ = getattr(typ, "__setattr__", None)
    if isinstance(setattr_, types.FunctionType) and not _ours(setattr_):
        what = f"its own `__setattr__`{_defined_at(setattr_)}"
    else:
        for klass in typ.__mro__:
            if name in klass.__dict__:
                desc = klass.__dict__[name]
                if isinstance(desc, property):
                    if desc.fset is not None:
                        what = f"the setter of its property `{name}`{_defined_at(desc.fset)}"
                elif isinstance(getattr(type(desc), "__set__", None), types.FunctionType):
                    what = (f"the `__set__` of its descriptor `{name}` (a "
                            f"{type(desc).__name__})")
                break
    if len(_WRITES_CHECKED) >= _CACHED:
        _WRITES_CHECKED.clear()
    _WRITES_CHECKED[key] = what
    return what


_MUTABLE = (list, dict, set, bytearray, np.ndarray)
_MUTABLE_TYPES = frozenset(_MUTABLE)


def _class_container(typ, name):
    """The class attribute `name` of typ when it is a mutable container (a list, dict,
    set, bytearray or array), else None."""
    for klass in typ.__mro__:
        if name in klass.__dict__:
            value = klass.__dict__[name]
            return value if isinstance(value, _MUTABLE) else None
    return None


PLAIN_STORES = set()  # types that take over no store (setattr_grad asks them first)


def _takes_over_none(typ):
    """Whether no store into an object of typ runs code of the class: no own __setattr__,
    no property with a setter, no descriptor with a Python __set__."""
    setattr_ = getattr(typ, "__setattr__", None)
    if isinstance(setattr_, types.FunctionType) and not _ours(setattr_):
        return False
    for klass in typ.__mro__:
        for desc in klass.__dict__.values():
            if isinstance(desc, property):
                if desc.fset is not None:
                    return False
            elif isinstance(getattr(type(desc), "__set__", None), types.FunctionType):
                return False
    return True


def check_store(obj, name):
    """Before taking the gradient of `obj.name = value` out of the field store (the
    reverse of the store): refuse a store that the class takes over."""
    typ = type(obj)
    if _takes_over_none(typ):
        if len(PLAIN_STORES) >= _CACHED:
            PLAIN_STORES.clear()
        PLAIN_STORES.add(typ)
        return
    what = _store_taken_over(typ, name)
    if what is not None:
        _refuse(
            f"storing the attribute `{name}` of an object of the class {typ.__name__} "
            f"(`obj.{name} = value`), which runs {what},",
            f"that code runs as plain Python, so the gradient of what it changes would be "
            f"lost or go to the wrong field. Call a method of {typ.__name__} that makes the "
            f"change instead (a method call is differentiated), or store the underlying "
            f"field itself",
            reverse=True,
        )


def own_field(obj, name):
    """Before generated code writes back obj.name, a field it changed in place (`obj.name
    [i] = v`, `obj.name.append(v)`, `obj.name += v`): refuse when obj has no field of that
    name of its own and the class holds a mutable container under it. Python changes
    that container, shared by every instance; generated code would follow the change as
    obj's own field (copy on write for an array) and miss it through the class or
    another instance."""
    d = getattr(obj, "__dict__", None)
    if not isinstance(d, dict) or isinstance(obj, type):
        return
    cls = type(obj).__name__
    if name not in d:
        shared = _class_container(type(obj), name)
        if shared is None:
            return
        holder = "the class itself holds (shared by all its instances)"
    else:
        shared = d[name]
        if type(shared) not in _MUTABLE_TYPES and not isinstance(shared, _MUTABLE):
            return
        holder = _held_elsewhere(shared, type(obj), _generated_frame(sys._getframe(1)))
        if holder is None:
            return
    _refuse(
        f"changing in place the attribute `{name}` of an object of the class {cls}, a "
        f"{type(shared).__name__} that {holder}",
        f"adjoint_s2s would follow it as a field of this one object, so a read through "
        f"the class, a global or another instance would miss the change and its gradient. "
        f"Give each object its own container (`self.{name} = ...` made in `__init__`), or "
        f"pass the container in as an argument",
    )


def _generated_frame(frame):
    """The innermost frame of generated code from frame outwards (own_field's caller, or
    the generated code calling it through its rule when differentiated again), or None."""
    while frame is not None and not frame.f_code.co_filename.startswith("<adjoint_s2s: "):
        frame = frame.f_back
    return frame


def _held_elsewhere(value, typ, frame):
    """Where value is held besides the instance's field: a class attribute of typ (along
    its MRO) or a global that the running code (frame's) reads; None when neither."""
    places = _CLASS_CONTAINERS.get(typ)
    if places is None:
        if len(_CLASS_CONTAINERS) >= _CACHED:
            _CLASS_CONTAINERS.clear()
        places = _CLASS_CONTAINERS[typ] = tuple(
            (klass, k) for klass in typ.__mro__[:-1] for k, v in klass.__dict__.items()
            if isinstance(v, _MUTABLE))
    for klass, k in places:
        if klass.__dict__.get(k) is value:
            return f"the class {klass.__name__} holds as `{k}` too"
    if frame is None:
        return None
    globals_ = frame.f_globals
    for k in _container_globals(frame.f_code, globals_):
        if globals_.get(k) is value:
            return f"the module's global `{k}` holds too"
    return None


_CLASS_CONTAINERS = {}  # type -> (class, name) of the containers its classes hold (found once)
_CONTAINER_GLOBALS = {}  # id(code) -> (code, globals, the names it reads of those holding containers)


def _container_globals(code, globals_):
    """The names code reads that are globals of globals_ holding a list, dict, set or
    array (found once per code and globals: a loop writing `self.h += v` asks each trip)."""
    key = id(code)  # (hashing a code object hashes its bytecode)
    entry = _CONTAINER_GLOBALS.get(key)
    if entry is None or entry[0] is not code or entry[1] is not globals_:
        if len(_CONTAINER_GLOBALS) >= _CACHED:
            _CONTAINER_GLOBALS.clear()
        entry = _CONTAINER_GLOBALS[key] = (code, globals_, tuple(
            n for n in code.co_names if isinstance(globals_.get(n), _MUTABLE)))
    return entry[2]


# ----- a field stored into an object that a module global holds -------------------------------
#
# Generated code reads a module global (and what it holds: its items, its class attributes,
# its fields) as a constant unless the global itself is followed (stored into by its own
# name: `G.w = v` gives `b_G`). A field stored through another name (`g = G; g.w = v`, an
# argument, `OBJS[0].w = v`, `o.shared.w = v`) and read back through the global would be
# read as a constant and its gradient lost: the store is refused when it is reversed.

GENERATED_GLOBALS = {}  # generated file -> its codes (weakly), then (the globals its code
#                         loads and does not follow, all the names it reads), found once


def note_generated(gname, codes):
    """Remember the generated code objects of one generated file (weakly: they are
    looked at only when a field is stored)."""
    GENERATED_GLOBALS[gname] = [weakref.ref(c) for c in codes]


def _family(gname):
    """(the globals the generated file's code loads, less those it follows: an adjoint
    `b_<name>` of its own; every name it reads, globals and attributes)."""
    entry = GENERATED_GLOBALS.get(gname)
    if entry is None:
        return (), ()
    if type(entry) is list:
        loads, names, followed = set(), set(), set()
        for c in (r() for r in entry):
            if c is None:
                continue
            loads |= _global_loads(c)
            names.update(c.co_names)
            for v in c.co_varnames:
                if v.startswith("b_"):
                    base = v[2:]
                    head, _, tail = base.rpartition("_")
                    followed.add(base)
                    if tail.isdigit():
                        followed.add(head)
        entry = GENERATED_GLOBALS[gname] = (frozenset(loads - followed), frozenset(names))
    return entry


def _global_loads(code):
    """The names code (not its nested code) loads as globals (co_names also holds the
    attributes it reads: `_rt.acc` is no read of a global `acc`)."""
    return {i.argval for i in dis.get_instructions(code)
            if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}


_TRANSFORMED = {}  # id(code) -> (a weak reference to code, the generated files made from it)


def note_origin(code, gname):
    """The generated file gname was made from the user's code (weakly: the entry goes
    with the code object)."""
    key = id(code)
    entry = _TRANSFORMED.get(key)
    if entry is None or entry[0]() is not code:
        if len(_TRANSFORMED) >= _CACHED:
            _TRANSFORMED.clear()
        entry = _TRANSFORMED[key] = (weakref.ref(code, _code_dropped(key)), [])
    entry[1].append(gname)


def _code_dropped(key):
    def dropped(ref):
        entry = _TRANSFORMED.get(key)
        if entry is not None and entry[0] is ref:
            del _TRANSFORMED[key]
    return dropped


def _names_read(code):
    """(the names a function's code reads as constants, all the names it reads): from
    its generated code when it was transformed (a global it follows is not a constant),
    else its own code's names."""
    entry = _TRANSFORMED.get(id(code))
    if entry is not None and entry[0]() is code:
        known = [_family(g) for g in entry[1] if g in GENERATED_GLOBALS]
        if known:
            return ({k for u, _ in known for k in u}, {k for _, a in known for k in a})
    loads, stack = set(), [code]
    while stack:
        c = stack.pop()
        loads |= _global_loads(c)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return loads, _code_names(code)


def forget_generated(gname):
    GENERATED_GLOBALS.pop(gname, None)
    _HOLDER_GLOBALS.pop(gname, None)


_PACKAGE_DIR = __file__.rsplit("runtime", 1)[0]


def check_global_field(obj, name):
    """Before taking the gradient of `obj.name = value` out of the field store: refuse when
    obj is a module global that the differentiated code reads without following it (or
    is held by one: an item, a field, a class attribute)."""
    frame = sys._getframe(2)
    while frame is not None:
        fname = frame.f_code.co_filename
        entry = _HOLDER_GLOBALS.get(fname)
        if entry is _STOP:
            return
        if entry is None or entry[0] is not frame.f_globals:
            entry = _holder_globals(fname, frame.f_globals)
            if entry is _STOP:
                return
        for home, k in entry[1]:
            v = home.get(k)
            if v is not None:
                where = _holds(v, obj, k)
                if where is not None:
                    _refuse_global_field(obj, name, where)
        frame = frame.f_back


_HOLDER_GLOBALS = {}  # code file -> _STOP, or (globals, (globals, name) that may hold objects)
_CONSTANTS = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, int, float,
              complex, str, bytes, np.ndarray, np.generic)


def _holder_globals(fname, globals_):
    """For a frame of the file fname: _STOP (not generated code, nor adjoint_s2s's: the
    user's call of gradient), or (globals, pairs) with the (globals, name) of the
    globals whose value may hold an object that the generated code of fname reads
    without following them, and those that the functions it names read, and theirs (a
    call run as plain Python, `_rt.call_primal(f, 2)`, reads them as constants too;
    none for adjoint_s2s's own files). Found once per file and globals: a loop's stores
    ask each trip; a global bound only later is not seen."""
    if len(_HOLDER_GLOBALS) >= _CACHED:
        _HOLDER_GLOBALS.clear()
    if not fname.startswith("<adjoint_s2s: "):
        entry = _HOLDER_GLOBALS[fname] = (
            (globals_, ()) if fname.startswith(_PACKAGE_DIR) else _STOP)
        return entry
    unfollowed, names = _family(fname)
    found, todo, seen = {}, [], set()
    _gather(found, todo, globals_, unfollowed, names)
    while todo and len(seen) < _CALLEES_FOLLOWED:
        fn = todo.pop()
        fn = getattr(fn, "__func__", fn)
        if not isinstance(fn, types.FunctionType) or id(fn) in seen or _ours(fn) or (
                is_library_code(fn.__code__)):
            continue
        seen.add(id(fn))
        _gather(found, todo, fn.__globals__, *_names_read(fn.__code__))
    entry = _HOLDER_GLOBALS[fname] = (globals_, tuple(found.values()))
    return entry


def _gather(found, todo, home, constants, every):
    """Into found, the (globals, name) of home's globals among constants that may hold
    an object, and of the attributes among every of a user's module a global names
    (`cfg.G`); into todo, the functions among them."""
    for k in every:
        v = home.get(k)
        if isinstance(v, types.FunctionType):
            todo.append(v)
        elif isinstance(v, types.ModuleType):
            filename = getattr(v, "__file__", None)
            if filename and not is_library_file(filename) and not _ours(v):
                d = v.__dict__
                for a in every:
                    w = d.get(a)
                    if isinstance(w, types.FunctionType):
                        todo.append(w)
                    elif a in d and _may_hold(w):
                        found[(id(d), a)] = (d, a)
        elif k in constants and k in home and _may_hold(v):
            found[(id(home), k)] = (home, k)


_STOP = (None, ())  # (a frame outside generated code and adjoint_s2s: the walk ends there)
_CALLEES_FOLLOWED = 64  # functions whose globals are looked at, at most, per generated file


def _code_names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


def _may_hold(v):
    """Whether the global value v may be or hold an object whose field is stored: not a
    number, module, function or array, nor a class none of whose attributes is such."""
    if isinstance(v, type):
        return any(not isinstance(i, _CONSTANTS + _CLASS_PARTS)
                   for klass in v.__mro__[:-1] for i in klass.__dict__.values())
    return not isinstance(v, _CONSTANTS)


_CLASS_PARTS = (staticmethod, classmethod, property, type(None), types.GetSetDescriptorType,
                types.MemberDescriptorType, tuple, frozenset)


def _holds(v, obj, k):
    """How the global k (value v) holds obj, or None: v itself, or an item, a field or
    a class attribute of it, or of those (_DEPTH levels, _LOOKED items at most)."""
    if v is obj:
        return f"the module's global `{k}`"
    path = _find(v, obj, _DEPTH, [_LOOKED])
    return None if path is None else f"`{k}{path}`, held by the module's global `{k}`"


_DEPTH = 3  # levels of items and fields looked into under a global
_LOOKED = 64  # items and fields looked at below the first level, at most, per global and store


def _find(v, obj, depth, budget):
    """The path (`[0]`, `.sub[1]`...) from v to obj, or None. budget: [how many more
    items of containers below, and containers and objects, may be looked at]."""
    typ = type(v)
    if typ is list or typ is tuple or typ is dict:
        pairs = v.items() if typ is dict else enumerate(v)
        # (by identity, in C: `obj in v` would also call ==, an array's (ambiguous) or a
        # user's (their code)
        if id(obj) in map(id, v.values() if typ is dict else v):
            for key, item in pairs:
                if item is obj:
                    return f"[{key!r}]"
        form = "[{!r}]"
    else:
        if isinstance(v, type):
            pairs = ((a, i) for klass in v.__mro__[:-1] for a, i in klass.__dict__.items())
        else:
            d = getattr(v, "__dict__", None)
            if not isinstance(d, dict) or isinstance(v, _CONSTANTS):
                return None
            pairs = d.items()
        form = ".{}"
    if depth <= 1:
        if typ in _NESTING:
            return None
        for key, i in pairs:
            if i is obj:
                return form.format(key)
        return None
    inner = []
    left = budget[0]
    for key, i in pairs:
        t = type(i)
        if t in _SCALARS:
            pass
        elif i is obj:
            return form.format(key)
        elif t in _NESTING or (isinstance(getattr(i, "__dict__", None), dict)
                               and not isinstance(i, _NOT_INNER)):
            inner.append((key, i))
        if typ in _NESTING:  # (its own items: looked at by `in` above)
            left -= 1
            if left < 0:
                break
    budget[0] = left
    for key, i in inner:
        budget[0] -= 1
        if budget[0] < 0:
            return None
        path = _find(i, obj, depth - 1, budget)
        if path is not None:
            return form.format(key) + path
    return None


_NESTING = (list, tuple, dict)
_NOT_INNER = _CONSTANTS + (type, staticmethod, classmethod, property)
_SCALARS = frozenset({float, int, bool, complex, str, bytes, type(None), np.float64})


def _refuse_global_field(obj, name, where):
    own = where.split("`")[1]
    way = (f", or store through the global's own name (`{own}.{name} = value`)"
           if where.startswith("the module's global") else "")
    _refuse(
        f"storing the attribute `{name}` of an object of the class {type(obj).__name__} "
        f"(`obj.{name} = value`) that is {where}, which the differentiated code also reads,",
        f"a read through the global is taken as a constant, so the gradient of the stored "
        f"value would be lost. Make the object in the function (or give each instance its "
        f"own in `__init__`), or pass it in as an argument and read it back through that "
        f"name{way}",
        reverse=True,
    )
