"""Objects that stay local become local variables (scalar replacement), before inlining.

``o = Model(k)`` followed by ``o.step(dt)`` calls and ``o.x`` reads, where nothing ever
sees ``o`` itself, is ordinary arithmetic on a few variables written as an object: the
class's ``__init__`` and methods are inlined with ``self`` standing for ``o``, and each
field ``o.x`` becomes a variable of the caller (``o_x``). The reverse pass then knows the
kinds of the fields (the object had none: every operation on a field was dispatched at
run time, a pullback closure per operation), and no field store is needed at all.

Only what keeps the meaning exactly is replaced:

- ``o`` is a local of the caller bound once, at its top level, by ``o = C(args)``, and is
  read only as ``o.attr``: a field read or written, a constant of the class read, or a
  method called (``o.m(args)``, as a statement, an assignment's or return's value, or
  inside an expression where inline.py would take a call out, and where what the
  statement evaluates before the call is only names and constants: the body may change
  what an operator would have read first). Passed, returned, stored, compared,
  printed or captured by a nested function, its identity would show: left alone.
- C is a global of the caller naming a class of the caller's file (or a class
  collections.namedtuple made, taken as a frozen dataclass of its fields): no base but object,
  no metaclass, no ``__new__``, ``__getattr__``, ``__getattribute__``, ``__setattr__``,
  ``__delattr__``, ``__slots__`` or ``__del__`` of its own, no rule; its ``__init__`` and
  the methods called are plain functions of the same module and file (no decorator,
  closure, ``*args``/``**kwargs``/keyword-only parameter, generator, rule; small; no
  nested scope; one return at the end, or none) that use their ``self`` only as
  ``self.attr`` and never rebind it (no recursion: 64 bodies at most per object).
- Every field (an attribute stored on o anywhere) is first met as ``o.f = value`` at the
  top level, its value not reading it (so it is bound before any read, as Python's
  instance dict would be); no field is also an attribute of the class; a read of any
  other attribute is a constant of the class (a number, a string, None or a tuple of
  them), read as ``C.attr``.

The caller's code then rests on C's identity (a global: emit's guard) and on each
function inlined as an attribute of C (``C.step = other`` or a rule registered for it
makes the code again, as for inlined helpers).
"""
import dataclasses
import types

import gast

from .. import rules as R
from ..naming import ADJOINT_PREFIX, names_in
from .inline_callees import MAX_STATEMENTS, arguments, free_names, plain_function, signature_and_body
from .local_functions import first_call, fresh_name as _fresh_name, only_names_before as _only_names_before, take_out

MAX_EXPANSIONS = 64  # inlined bodies per object (methods calling methods: no recursion)
_OWN_DUNDERS = ("__new__", "__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__slots__",
                "__del__")
_CONSTANTS = (int, float, complex, bool, str, type(None))
_NESTED = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef, gast.ListComp, gast.SetComp,
           gast.DictComp, gast.GeneratorExp)
_REFUSED = _NESTED + (gast.Global, gast.Nonlocal, gast.Import, gast.ImportFrom, gast.Delete, gast.Yield,
                      gast.YieldFrom, gast.Await, gast.AsyncFor, gast.AsyncWith)


class Replaced:
    """An object replaced: its class, the global naming it, and {attribute: function} of
    C's functions inlined (what the caller's code rests on)."""

    def __init__(self, name, cls):
        self.name = name
        self.cls = cls
        self.functions = {}


def replace_local_objects(node, ctx, expand):
    """Replace the objects of node's top level that qualify (rewritten in place); the
    list of Replaced. expand(s, call, prepared, ctx) -> the statements inlining a call
    (inline._expand)."""
    out = []
    i = 0
    while i < len(node.body):
        s = node.body[i]
        named = _named_receiver(s, ctx)
        if named is not None:  # `C(args).m(...)`: `c = C(args)` first, then `c.m(...)`
            node.body.insert(i, named)
            continue
        i += 1
        found = _candidate(s, ctx)
        if found is None:
            continue
        o, cname, cls = found
        if not _uses_ok(node, o, s, ctx):
            continue
        backup = [ctx.fresh_copy(x) for x in node.body]
        rep = Replaced(cname, cls)
        try:
            done = _replace(node, o, s, cname, cls, rep, ctx, expand)
        except _GiveUp:
            done = False
        if done:
            out.append(rep)
        else:  # (the statements from here on are the copies: looked at again)
            node.body[:] = backup
    return out


def _named_receiver(s, ctx):
    """`c = C(args)` taken out of s (an assignment, expression statement or return whose
    value reads `C(args).attr` or calls `C(args)(x)`, C a class, where C(args) is the first call s runs and
    only names and constants are evaluated before it), s rewritten to read c.attr; else
    None. The object is then a candidate like any other (the order of evaluation is the
    same either way)."""
    if s.__class__ not in (gast.Assign, gast.Expr, gast.Return) or s.value is None:
        return None

    def ready(c):
        return c if type(ctx.fn.__globals__.get(c.func.id)) is type and c.func.id not in ctx.own else None

    found = first_call(s.value, ready)
    if found is None:
        return None
    call, parent, field, index, _ = found
    if not (parent.__class__ is gast.Attribute and field == "value" or parent.__class__ is gast.Call
            and field == "func") or not _only_names_before(s.value, call):
        return None  # (C(args)(x) calls its __call__)
    c = _fresh_name(call.func.id.lower(), ctx)
    setattr(parent, field, gast.copy_location(gast.Name(id=c, ctx=gast.Load(), annotation=None, type_comment=None),
                                              call))
    new = gast.Assign(targets=[gast.Name(id=c, ctx=gast.Store(), annotation=None, type_comment=None)], value=call,
                      type_comment=None)
    gast.copy_location(new, s)
    new.end_lineno = getattr(s, "end_lineno", None)
    ctx.plain.add(c)
    return new


class _GiveUp(Exception):
    """The object does not qualify after all: the caller's tree is put back."""


def _candidate(s, ctx):
    """(o, the class's global name, the class) of `o = C(args)`, C a plain class, else None."""
    if not (s.__class__ is gast.Assign and len(s.targets) == 1 and s.targets[0].__class__ is gast.Name
            and s.value.__class__ is gast.Call and s.value.func.__class__ is gast.Name):
        return None
    cname = s.value.func.id
    if cname in ctx.own or type(ctx.fn.__globals__.get(cname)) is not type:
        return None
    cls = ctx.globals.get(cname)  # (read through the recording globals: guarded by identity)
    frozen = _dataclass_init(cls, frozen=True) is not None  # (its own __setattr__ refuses: no store is made)
    if _namedtuple_init(cls) is None and (cls.__mro__ != (cls, object) or any(
            d in cls.__dict__ for d in _OWN_DUNDERS if not (frozen and d in ("__setattr__", "__delattr__")))):
        return None
    try:
        if cls in R.SPECIAL or cls in R.PRIMITIVES or cls in R.NONDIFF or R.lookup_user(cls) is not None:
            return None
    except TypeError:
        return None
    if _function(cls, "__init__", ctx) is None and _dataclass_init(cls) is None and not frozen \
            and _namedtuple_init(cls) is None:
        return None
    return s.targets[0].id, cname, cls


def _namedtuple_init(cls):
    """(field names, the defaults of the last ones) of a class collections.namedtuple made
    (its __new__ and its fields' getters its own, nothing added: `o.f` is the item, the
    object never changes), as _dataclass_init gives them for a frozen dataclass; else None."""
    d = getattr(cls, "__dict__", {})
    new = getattr(d.get("__new__"), "__func__", None)  # (a staticmethod)
    if (cls.__bases__ != (tuple,) or type(new) is not types.FunctionType or "_fields" not in d
            or not str(getattr(new, "__doc__", "")).startswith("Create new instance of")
            or any(type(d.get(n)).__name__ != "_tuplegetter" for n in cls._fields)
            or any(n in d for n in ("__getattr__", "__getattribute__", "__init__", "__del__"))):
        return None
    defaults = getattr(cls, "_field_defaults", {})
    return list(cls._fields), [defaults[n] for n in cls._fields if n in defaults]


def _dataclass_init(cls, frozen=False):
    """(field names, their defaults) of a dataclass whose generated __init__ is
    `self.f = f` for each field in order (no __post_init__, no InitVar, keyword-only
    field or default_factory), else None. frozen: only a frozen one (whose fields are
    then stored nowhere else: Python would refuse the store)."""
    params = cls.__dict__.get("__dataclass_params__")
    init = cls.__dict__.get("__init__")
    if params is None or params.frozen != frozen or not params.init or "__post_init__" in cls.__dict__ \
            or type(init) is not types.FunctionType:
        return None
    fields = dataclasses.fields(cls)
    code = init.__code__
    if code.co_argcount != len(fields) + 1 or code.co_kwonlyargcount or any(
            not f.init or getattr(f, "kw_only", False) or f.default_factory is not dataclasses.MISSING
            for f in fields):
        return None
    return [f.name for f in fields], [f.default for f in fields if f.default is not dataclasses.MISSING]


def _function(cls, name, ctx):
    """cls's own plain function `name` (taking self) when it may be inlined, else None."""
    f = cls.__dict__.get(name)
    return plain_function(f, ctx) if type(f) is types.FunctionType and f.__code__.co_argcount >= 1 else None


def _uses_ok(node, o, ctor, ctx):
    """Is o a plain local bound only by ctor (at node's top level), read only as
    `o.attr` after it, and mentioned in no nested scope?"""
    code = ctx.fn.__code__
    if (o in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount] or o in code.co_cellvars
            or o in code.co_freevars or o not in ctx.plain):
        return False
    seen_ctor = False
    for s in node.body:
        if s is ctor:
            seen_ctor = True
            if o in names_in(s.value):
                return False
            continue
        for name, parent, nested in _mentions(s, o):
            if not seen_ctor or nested:
                return False
            if name.ctx.__class__ is gast.Load:
                if parent.__class__ is not gast.Attribute and not (
                        parent.__class__ is gast.Call and parent.func is name):  # o(args): o.__call__
                    return False
            elif not (parent.__class__ is gast.Assign and len(parent.targets) == 1 and parent.targets[0] is name
                      and _rebinding(parent.value, o, ctor.value.func.id)):
                return False
    return seen_ctor


def _rebinding(e, o, cname):
    """Is e a value o may be bound to again: `C(args)` (a new object of the class) or
    `o.m(args)` (a method whose body, inlined, must end in one)?"""
    if e.__class__ is not gast.Call:
        return False
    f = e.func
    return (f.__class__ is gast.Name and f.id == cname
            or f.__class__ is gast.Attribute and f.value.__class__ is gast.Name and f.value.id == o)


def _mentions(tree, o):
    """(Name, its parent, whether in a nested scope) for each Name of tree named o."""
    stack = [(tree, None, False)]
    while stack:
        n, parent, nested = stack.pop()
        if n.__class__ is gast.Name:
            if n.id == o:
                yield n, parent, nested
            continue
        inner = nested or isinstance(n, _NESTED)
        for f in n._fields:
            v = getattr(n, f, None)
            if isinstance(v, list):
                stack.extend((x, n, inner) for x in v if isinstance(x, gast.AST))
            elif isinstance(v, gast.AST):
                stack.append((v, n, inner))


class _State:
    def __init__(self, o, ctor, cname, cls, rep, ctx, expand):
        self.o, self.ctor, self.cname, self.cls, self.rep = o, ctor, cname, cls, rep
        self.ctx, self.expand = ctx, expand
        self.expansions = 0
        self.ctors = 0  # the objects bound to o (more than one: o is bound again)
        self.props = set()  # the class's properties read as calls
        self.init_fields = set()  # the fields __init__'s top level stores
        self.frozen = _dataclass_init(cls, frozen=True) or _namedtuple_init(cls)
        self.dataclass = (_dataclass_init(cls) or self.frozen) if _function(cls, "__init__", ctx) is None else None


def _replace(node, o, ctor, cname, cls, rep, ctx, expand):
    """Inline the constructor and every method call of o, then turn its fields into
    variables. False (or _GiveUp) when o does not qualify after all."""
    st = _State(o, ctor, cname, cls, rep, ctx, expand)
    props = st.props = _properties(cls) if cls.__dict__.get("property", property) is property else set()
    if props and ctx.fn.__globals__.get("property", property) is property:
        _Properties(o, props).visit(node)
    _walk(node.body, st)
    fields, reads = {}, set()  # field -> its first top-level statement
    for s in node.body:
        for name, parent, nested in _mentions(s, o):
            if nested or parent.__class__ is not gast.Attribute or parent.value is not name:
                return False
            c = parent.ctx.__class__
            if c is gast.Store:
                if st.frozen is not None and not getattr(parent, "init_store", False):
                    return False  # a store Python refuses (FrozenInstanceError)
                fields.setdefault(parent.attr, None)
            elif c is gast.Load:
                reads.add(parent.attr)
            else:
                return False
    own = set(st.dataclass[0]) if st.dataclass is not None else set()  # (their defaults: class attributes)
    if any(f in k.__dict__ for f in set(fields) - own for k in cls.__mro__):
        return False  # a field that is also an attribute of the class (or a method)
    if st.ctors > 1 and not set(fields) <= st.init_fields:
        return False  # bound again: a field the new object would not have yet
    for c in reads - set(fields):
        if c not in cls.__dict__ or not _constant(cls.__dict__[c]):
            return False  # a method not called, or anything but a constant of the class
    if not _bound_first(node.body, o, fields) or _holds_global(node, o, ctx):
        return False
    # o.x is o_x (x_of_b for an object b: b_x would read as the adjoint of x)
    names = {f: _fresh_name(f"{f}_of_{o}" if f"{o}_".startswith(ADJOINT_PREFIX) else f"{o}_{f}", ctx)
             for f in sorted(fields)}
    _Fields(o, names, cname).visit(node)
    return True


def _holds_global(node, o, ctx):
    """Is a field given a value read from a module global that is a container or an
    object (`self.log = LOG`)? Kept an object: what a change through the field does to
    the global is checked, and named, as `self.log` (runtime.user_classes)."""
    for s in gast.walk(node):
        if s.__class__ is gast.Assign and any(
                t.__class__ is gast.Attribute and t.value.__class__ is gast.Name and t.value.id == o
                for t in s.targets):
            for n in names_in(s.value, gast.Load):
                if n not in ctx.own and n in ctx.fn.__globals__ and not isinstance(
                        ctx.globals.get(n), _SHARED_OK):
                    return True
    return False


_SHARED_OK = _CONSTANTS + (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)


def _constant(v):
    return type(v) in _CONSTANTS or type(v) is tuple and all(_constant(x) for x in v)


def _bound_first(body, o, fields):
    """Is every field first met, in the order of the top-level statements, as `o.f =
    value` (or `o.f, o.g = values`) whose value does not read it?"""
    left = set(fields)
    for s in body:
        met = {parent.attr for _, parent, _ in _mentions(s, o)} & left
        if not met:
            continue
        if s.__class__ is not gast.Assign or len(s.targets) != 1:
            return False
        t = s.targets[0]
        stored = t.elts if t.__class__ in (gast.Tuple, gast.List) else [t]
        if not met <= {x.attr for x in stored if x.__class__ is gast.Attribute and x.value.__class__ is gast.Name
                       and x.value.id == o} or any(p.attr in met for _, p, _ in _mentions(s.value, o)):
            return False
        left -= met
    return True


class _Fields(gast.NodeTransformer):
    """o.f -> its variable (read, written or updated in place); o.c -> C.c."""

    def __init__(self, o, names, cname):
        self.o, self.names, self.cname = o, names, cname

    def visit_Attribute(self, node):
        self.generic_visit(node)
        v = node.value
        if v.__class__ is not gast.Name or v.id != self.o:
            return node
        name = self.names.get(node.attr)
        if name is None:
            new = gast.Attribute(value=gast.Name(id=self.cname, ctx=gast.Load(), annotation=None, type_comment=None),
                                 attr=node.attr, ctx=gast.Load())
            gast.copy_location(new.value, node)
        else:
            new = gast.Name(id=name, ctx=node.ctx, annotation=None, type_comment=None)
        return gast.copy_location(new, node)


def _walk(stmts, st):
    """Inline, in place, the constructor and the method calls of st.o in stmts (nested
    blocks too, never nested scopes); the statements inlined are walked in turn."""
    i = 0
    while i < len(stmts):
        s = stmts[i]
        new = _expand_stmt(s, st)
        if new is None:
            new = _field_augassign(s, st)
            if new is not None:
                stmts[i:i + 1] = new
                continue
            new = _hoisted(s, st)
            if new is not None:
                stmts[i:i] = new
                continue
        else:
            stmts[i:i + 1] = new
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if isinstance(block, list) and not isinstance(s, _NESTED):
                _walk(block, st)
        for h in getattr(s, "handlers", None) or ():
            _walk(h.body, st)
        i += 1


def _expand_stmt(s, st):
    """The statements replacing s, the constructor or a statement whose value is a
    method call of o; else None."""
    if (s.__class__ is gast.Assign and len(s.targets) == 1 and s.targets[0].__class__ is gast.Name
            and s.targets[0].id == st.o and s.value.__class__ is gast.Call
            and s.value.func.__class__ is gast.Name and s.value.func.id == st.cname):
        st.ctors += 1  # a new object of the class, bound to o (again)
        f = st.rep.functions["__init__"] = st.cls.__dict__.get("__init__") or st.cls.__dict__["__new__"].__func__
        new = _inline(s, s.value, f, "__init__", st)
        last = new.pop()  # `o = None`: o is never read as itself
        assert isinstance(last, gast.Assign) and last.targets[0].__class__ is gast.Name  # noqa: S101
        return new
    if s.__class__ not in (gast.Assign, gast.Expr, gast.Return) or s.value is None:
        return None
    m = _method_of(s.value, st)
    return None if m is None else _inline(s, s.value, _method(m, st), m, st)


def _method_of(call, st):
    """m when call is `o.m(args)` (`__call__` for `o(args)`), else None."""
    if call.__class__ is not gast.Call:
        return None
    f = call.func
    if f.__class__ is gast.Attribute and f.value.__class__ is gast.Name and f.value.id == st.o:
        return f.attr
    if f.__class__ is gast.Name and f.id == st.o:
        return "__call__"
    return None


def _method(m, st):
    """The function o.m(...) calls: C's own plain function m, or the getter of C's
    property m (whose reads are calls here, see _Properties)."""
    f = _function(st.cls, m, st.ctx)
    if f is None and m in _properties(st.cls):
        f = _function(_Getter(st.cls.__dict__[m].fget), "fget", st.ctx)
    if f is None:
        raise _GiveUp
    st.rep.functions[m] = f
    return f


class _Getter:
    """A property's getter as a namespace's function (what _function asks of a class)."""

    def __init__(self, fget):
        self.__dict__ = {"fget": fget}


def _properties(cls):
    """The names of cls's own properties that only get (no setter, no deleter)."""
    return {n for n, v in cls.__dict__.items()
            if type(v) is property and v.fset is None and v.fdel is None and v.fget is not None}


class _Properties(gast.NodeTransformer):
    """`o.p`, p a property of the class, read as the call `o.p()` (its getter runs there:
    inlined like a method)."""

    def __init__(self, o, names):
        self.o, self.names = o, names

    def visit_Attribute(self, node):
        self.generic_visit(node)
        v = node.value
        if (node.attr in self.names and v.__class__ is gast.Name and v.id == self.o
                and node.ctx.__class__ is gast.Load):
            call = gast.Call(func=node, args=[], keywords=[])
            return gast.copy_location(call, node)
        return node


def _inline(s, call, f, fname, st):
    st.expansions += 1
    if st.expansions > MAX_EXPANSIONS:
        raise _GiveUp  # (recursion, direct or through other methods)
    getter = fname in st.props and st.cls.__dict__[fname].fget is f
    got = _method_body(f, st.ctx, getter) if fname != "__init__" or st.dataclass is None else _synthesised(s, st)
    if got is None:
        raise _GiveUp
    if fname == "__init__":
        self_name = got[1][0]
        st.init_fields = {t.attr for x in got[0] if x.__class__ is gast.Assign for t in x.targets
                          if t.__class__ is gast.Attribute and t.value.__class__ is gast.Name
                          and t.value.id == self_name}
    defaults = st.dataclass[1] if fname == "__init__" and st.dataclass is not None else f.__defaults__ or ()
    args = arguments(call, got[1][1:], defaults)
    if args is None:
        raise _GiveUp
    self_arg = gast.Name(id=st.o, ctx=gast.Load(), annotation=None, type_comment=None)
    return st.expand(s, call, (f, fname, got, [self_arg] + args), st.ctx, record=False)


def _synthesised(s, st):
    """What _method_body gives for a dataclass's generated __init__: `self.f = f` for
    each field (st.dataclass: the fields and their defaults), at the call's line."""
    names, defaults = st.dataclass
    body = []
    for n in names:
        target = gast.Attribute(value=gast.Name(id="self", ctx=gast.Load(), annotation=None, type_comment=None),
                                attr=n, ctx=gast.Store())
        x = gast.Assign(targets=[target], value=gast.Name(id=n, ctx=gast.Load(), annotation=None, type_comment=None),
                        type_comment=None)
        gast.copy_location(x, s)
        x.end_lineno = getattr(s, "end_lineno", None)
        x.no_origin = True  # (under the call's own comment)
        target.init_store = True  # (the one store a frozen dataclass makes)
        body.append(x)
    st.ctx.taken |= set(names) | {"self"}
    return body, ["self"] + names, gast.Constant(value=None, kind=None), st.ctx.lines, set(), frozenset()


def _hoisted(s, st):
    """[`t = o.m(args)` inlined...] put before s, which now reads t, when s calls o.m
    inside a larger expression where inline.py would take a call out, and nothing s
    evaluates before the call reads o (the body may change o's fields); else None. An
    augmented assignment of a name (`v += dt * o.force(x)`) too: Python reads v first,
    which the body (writing o's fields only) does not rebind."""
    aug = s.__class__ is gast.AugAssign and s.target.__class__ is gast.Name
    if not (aug or s.__class__ in (gast.Assign, gast.Expr, gast.Return)) or s.value is None:
        return None
    found = first_call(s.value, lambda c: _method_of(c, st), by_name=False)
    if found is None:
        return None
    call, parent, field, index, m = found
    if call is s.value:  # (`v += o.m(x)`)
        parent, field, index = s, "value", None
    if not _only_names_before(s.value, call):
        return None
    new = take_out(s, call, parent, field, index, _fresh_name(f"{m.strip('_')}_value", st.ctx))
    return _inline(new, call, _method(m, st), m, st)  # (call_value for __call__)


def _field_augassign(s, st):
    """`o.f op= value` whose value calls a method of o, as Python runs it: `t = o.f`,
    `t op= value`, `o.f = t` (the field read before the call, which may change it; an
    array changed in place as `+=` changes it); the call is then taken out of the middle
    statement (_hoisted). Else None."""
    t = s.target if s.__class__ is gast.AugAssign else None
    if not (t.__class__ is gast.Attribute and t.value.__class__ is gast.Name and t.value.id == st.o):
        return None
    if first_call(s.value, lambda c: _method_of(c, st), by_name=False) is None:
        return None
    tmp = _fresh_name(f"{st.o}_{t.attr}_old", st.ctx)

    def name(ctx):
        return gast.Name(id=tmp, ctx=ctx, annotation=None, type_comment=None)

    def field(ctx):
        return gast.Attribute(value=gast.Name(id=st.o, ctx=gast.Load(), annotation=None, type_comment=None),
                              attr=t.attr, ctx=ctx)

    out = [gast.Assign(targets=[name(gast.Store())], value=field(gast.Load()), type_comment=None),
           gast.AugAssign(target=name(gast.Store()), op=s.op, value=s.value),
           gast.Assign(targets=[field(gast.Store())], value=name(gast.Load()), type_comment=None)]
    for new in out:
        gast.copy_location(new, s)
        new.end_lineno = getattr(s, "end_lineno", None)
    return out


def _method_body(f, ctx, getter=False):
    """(body without the final return, parameter names, returned expression, lines, the
    names it reads from outside) of a copy of f's tree, or None when f may not be
    inlined: inline_callees' conditions, except that self's fields may be read and
    written, and f may call what it likes (its body becomes the caller's own code, and
    nothing but `self.attr` can reach the object)."""
    try:
        tree, filename, lines = ctx.function_node(f)
    except Exception:
        return None
    if filename != ctx.filename or not isinstance(tree, gast.FunctionDef) or tree.decorator_list and not (
            getter and len(tree.decorator_list) == 1 and tree.decorator_list[0].__class__ is gast.Name
            and tree.decorator_list[0].id == "property"):
        return None  # (a property's getter: its one decorator, the builtin itself)
    try:
        ctx.check(ctx.fresh_copy(tree))
    except Exception:
        return None
    got = signature_and_body(ctx.fresh_copy(tree))
    if got is None:
        return None
    params, body = got
    ret = gast.Constant(value=None, kind=None)
    if body and isinstance(body[-1], gast.Return):
        ret = body[-1].value or ret
        body = body[:-1]
    count = 0
    for s in body + [ret]:
        for n in gast.walk(s):
            if isinstance(n, _REFUSED) or n.__class__ is gast.Return:
                return None
            count += isinstance(n, gast.stmt)
        for name, parent, nested in _mentions(s, params[0]):
            if nested or name.ctx.__class__ is not gast.Load or parent.__class__ is not gast.Attribute:
                return None  # self itself seen, rebound or captured
    if count > MAX_STATEMENTS:
        return None
    free = free_names(body, ret, params, ctx, False)
    return None if free is None else (body, params, ret, lines, free, frozenset())
