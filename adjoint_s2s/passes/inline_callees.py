"""Which calls passes/inline.py may inline, and the bodies it puts in their place.

A callee qualifies when inlining keeps the meaning exactly (see inline.py's docstring for
the list): a global Python function of the caller's module and file, or a local function
of the caller's top level (local_functions.py), whose body is small, writes into
nothing, and calls only builtins, module functions, functions with rules, or other
functions that qualify themselves (inlined in turn where the body lands). The arguments
are matched to the parameters as the call would (``arguments``): by position, by keyword,
or from a default that is an immutable constant (a number, a string, None).
"""
import builtins
import types

import gast

from .. import rules as R
from ..kinds import forwarding_chain
from ..naming import names_in
from .local_functions import as_def, lambda_of

MAX_STATEMENTS = 40  # "small": the number of statements of f's body, nested ones counted

_REFUSED = (
    gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef, gast.ListComp,
    gast.SetComp, gast.DictComp, gast.GeneratorExp, gast.Global, gast.Nonlocal, gast.Import,
    gast.ImportFrom, gast.Delete, gast.NamedExpr, gast.Yield, gast.YieldFrom, gast.Await,
    gast.AsyncFor, gast.AsyncWith,
)
# builtins that write into what they are given or read the caller's frame
_WRITING_BUILTINS = frozenset(
    ("setattr", "delattr", "exec", "eval", "globals", "locals", "vars", "__import__", "compile")
)
_NO_FLAGS = 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200  # *args, **kwargs, generators, coroutines


def callee(call, ctx):
    """The function f of `f(args)` when this call may be inlined, else None."""
    name = call.func.id
    if name in ctx.own:
        return None
    g = ctx.globals.get(name)
    f = unwrapped(g)
    if f is not g and call.keywords and not all(w.__code__.co_flags & 0x08 for w in forwarding_chain(g)[:-1]):
        return None  # (a wrapper of `*a` only: Python refuses the keywords)
    if (f is ctx.fn or type(f) is not types.FunctionType or f.__code__ is ctx.fn.__code__
            or arguments(call, f.__code__.co_varnames[:f.__code__.co_argcount], f.__defaults__ or ()) is None):
        return None
    return plain_function(f, ctx)


def unwrapped(f):
    """The function a global calls in the end: f, or for a wrapper that only forwards its
    arguments (kinds.forwarding_chain, ``@functools.wraps`` over ``f(*a, **k)``) the
    function it forwards to, unless one on the way has a rule (the call then goes the way
    of the wrapper's call, which meets the rule). The caller's guard checks the global
    and every cell of the chain (guards._FunctionRef)."""
    chain = forwarding_chain(f)
    if len(chain) == 1:
        return f
    for w in chain:
        if w in R.SPECIAL or w in R.PRIMITIVES or w in R.NONDIFF or R.lookup_user(w) is not None:
            return f
    return chain[-1]


def plain_function(f, ctx):
    """f when it is a plain Python function of the caller's module and file that may be
    inlined: no closure, no `*args`/`**kwargs`/keyword-only parameter, no generator, no
    wrapper, not adjoint_s2s's own, no rule (user rule, primitive, special or
    non-differentiable); else None."""
    fn = ctx.fn
    if (type(f) is not types.FunctionType or f.__globals__ is not fn.__globals__ or f.__closure__ is not None
            or f.__code__.co_filename != fn.__code__.co_filename or f.__code__.co_flags & _NO_FLAGS
            or f.__code__.co_kwonlyargcount or f.__code__.co_freevars or f.__code__.co_cellvars
            or ctx.runtime_code(f.__code__) or getattr(f, "__wrapped__", None) is not None):
        return None
    try:
        if f in R.SPECIAL or f in R.PRIMITIVES or f in R.NONDIFF or R.lookup_user(f) is not None:
            return None
    except TypeError:
        return None
    return f


def callee_body(f, ctx):
    """(body statements without the final return, parameter names, returned expression)
    of a copy of f's tree, or None when f may not be inlined."""
    try:
        tree, filename, lines = ctx.function_node(f)
    except Exception:
        return None
    if filename != ctx.filename or not isinstance(tree, gast.FunctionDef):
        return None  # (f's decorators made what its global names: f is what is called)
    try:
        ctx.check(ctx.fresh_copy(tree))
    except Exception:
        return None
    ctx.checking.add(f)
    try:
        return _body(ctx.fresh_copy(tree), f.__name__, lines, ctx, False)
    finally:
        ctx.checking.discard(f)


def local_body(d, call, ctx):
    """As _callee_body, for d, a local function of the caller's top level (see
    local_functions.local_defs) called with exactly its positional parameters: what it reads from
    outside is the caller's variables as they are at the call, which the inlined body
    reads at the same moment (a closure reads its cells when called)."""
    lam = lambda_of(d)
    a = d.args if lam is None else lam.args
    if arguments(call, [p.id for p in a.posonlyargs + a.args], local_defaults(d)) is None:
        return None
    tree = ctx.fresh_copy(as_def(d))
    shared = _take_nonlocal(tree, ctx)
    if shared is None:
        return None
    try:
        ctx.check(tree)
    except Exception:
        return None
    return _body(tree, tree.name, ctx.lines, ctx, True, shared)


def _take_nonlocal(tree, ctx):
    """The names a local function's `nonlocal` statements give it of the caller's own
    variables, the statements taken out of tree: inlined, its body assigns the caller's
    variables themselves (`nonlocal acc` then `acc = acc + z`), as the call would. None
    when a `nonlocal` stands elsewhere than its top level or names what the caller does
    not bind itself (a variable of a function around the caller)."""
    shared = set()
    keep = []
    for st in tree.body:
        if st.__class__ is gast.Nonlocal:
            shared.update(st.names)
        else:
            keep.append(st)
    if not shared:
        return frozenset()
    code = ctx.fn.__code__
    if not shared <= set(code.co_varnames) | set(code.co_cellvars):
        return None
    if any(n.__class__ is gast.Nonlocal for st in keep for n in gast.walk(st)):
        return None
    tree.body = keep
    return frozenset(shared)


def _body(tree, fname, lines, ctx, local, shared=frozenset()):
    """(body statements without the final return, parameter names, returned expression,
    lines, the names it reads from outside, the caller's variables it assigns) of tree, a
    copy of f's definition, or None when f may not be inlined. A global function may read
    none of the caller's own names (its globals would be read instead); a local one reads
    the caller's, and assigns those its `nonlocal` names (shared): such a function may
    return nothing (None)."""
    got = signature_and_body(tree)
    if got is None:
        return None
    params, body = got
    if shared and body and (not isinstance(body[-1], gast.Return) or body[-1].value is None):
        end = gast.Return(value=gast.Constant(value=None, kind=None))  # (falls off its end)
        body = (body[:-1] if isinstance(body[-1], gast.Return) else body) + [end]
    if not body or not isinstance(body[-1], gast.Return) or body[-1].value is None:
        return None
    ret = body[-1].value
    body = body[:-1]
    if not _inlinable_body(body + [ret], fname, ctx, shared):
        return None
    free = free_names(body, ret, params, ctx, local, shared)
    return None if free is None else (body, params, ret, lines, free, shared)


def free_names(body, ret, params, ctx, local, shared=frozenset()):
    """The names f's body (and returned expression) reads from outside, now taken in the
    caller; None when f may not be inlined: a global f reads is one of the caller's own
    names (a local function reads the caller's), or exists nowhere yet."""
    local_names = set(params)
    for st in body:
        local_names |= names_in(st, gast.Store)
    local_names -= shared
    free = set()
    for st in body + [ret]:
        free |= names_in(st) - local_names
    if not local and free & ctx.own:
        return None  # a global f reads is one of the caller's own names
    g = ctx.fn.__globals__
    bi = g.get("__builtins__", builtins)
    bi = bi if isinstance(bi, dict) else vars(bi)
    for n in free:
        if n not in g and n not in bi and not (local and n in ctx.own):
            return None  # a name f reads that exists nowhere yet: leave it to the call
    ctx.taken |= free
    return free


def signature_and_body(tree):
    """(positional parameter names, body statements without the docstring) of a def,
    or None when it has `*args`, `**kwargs` or keyword-only parameters."""
    a = tree.args
    if a.vararg or a.kwarg or a.kwonlyargs:
        return None
    body = list(tree.body)
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]  # the docstring
    return [p.id for p in a.posonlyargs + a.args], body


def _inlinable_body(stmts, fname, ctx, shared=frozenset()):
    """Whether f's statements (its final return's value last) are small and write into
    nothing: no nested scope, no other return, no recursion, no augmented assignment (but
    of a caller's variable it shares, `nonlocal acc` then `acc += z`: the caller's own
    statement once inlined), no write into a container or an object, no method call,
    out= or call of another Python function."""
    count = 0
    for st in stmts:
        for n in gast.walk(st):
            if isinstance(n, _REFUSED) or isinstance(n, gast.Return):
                return False
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == fname:
                return False  # recursion
            if isinstance(n, gast.stmt):
                count += 1
            if isinstance(n, gast.AugAssign) and not (n.target.__class__ is gast.Name and n.target.id in shared):
                return False  # `a += b` of an array argument writes into the caller's array
            if isinstance(n, (gast.Subscript, gast.Attribute)) and not isinstance(n.ctx, gast.Load):
                return False  # a write into a container or an object: the call keeps it
            if isinstance(n, gast.Call) and (
                any(k.arg in (None, "out") for k in n.keywords)
                or isinstance(n.func, gast.Attribute) and not _module_path(n.func, ctx)
            ):
                return False  # a method (x.append, a.fill) or out=: maybe a write
            if (isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and not _plain_callee(n.func.id, ctx)
                    and not _qualifies(n, ctx)):
                return False  # another Python function that may write: it keeps its own call
    return count <= MAX_STATEMENTS


def _qualifies(call, ctx):
    """Does `g(...)`, called in the body of a callee being checked, qualify itself (then
    it is inlined in turn where that body lands, or else called: it writes into nothing
    either way)? Callees being checked count as not: no recursion, direct or mutual. g
    may be another local function of the caller's (`step` calling `accel`, both defined
    in the caller): the inlined body reads the caller's `accel` when the call would."""
    local = (getattr(ctx, "local_defs", None) or {}).get(call.func.id)
    if local is not None:
        if local in ctx.checking or len(ctx.checking) >= MAX_DEPTH:
            return False
        ctx.checking.add(local)
        try:
            return local_body(local, call, ctx) is not None
        finally:
            ctx.checking.discard(local)
    g = callee(call, ctx)
    if g is None or g in ctx.checking or len(ctx.checking) >= MAX_DEPTH:
        return False
    return callee_body(g, ctx) is not None


def arguments(call, params, defaults):
    """The expression each parameter takes, in order, when call binds them as Python
    would: positional arguments, then keywords naming the others, then defaults
    (defaults: the values of the last parameters' defaults, immutable constants only
    (a number, a string, None) or _NO_DEFAULT); None when it would not or when that is
    not known here (`*` or `**` arguments, a walrus, a mutable default). Keyword values
    may call nothing: they are bound in the parameters' order, not the call's."""
    args = call.args
    if len(args) > len(params) or any(a.__class__ is gast.Starred for a in args):
        return None
    given = {}
    for k in call.keywords:
        if k.arg is None or k.arg in given or k.arg not in params[len(args):]:
            return None
        if any(n.__class__ in (gast.Call, gast.NamedExpr) for n in gast.walk(k.value)):
            return None
        given[k.arg] = k.value
    if any(n.__class__ is gast.NamedExpr for a in args for n in gast.walk(a)):
        return None
    out = list(args)
    first = len(params) - len(defaults)
    for i in range(len(args), len(params)):
        if params[i] in given:
            out.append(given[params[i]])
            continue
        v = defaults[i - first] if i >= first else _NO_DEFAULT
        if v is _NO_DEFAULT or type(v) not in _IMMUTABLE:
            return None
        out.append(gast.Constant(value=v, kind=None))
    return out


_NO_DEFAULT = object()
_IMMUTABLE = (int, float, complex, bool, str, type(None))
MAX_DEPTH = 4  # helpers calling helpers: how deep the check goes


def local_defaults(d):
    """The defaults of a local def or lambda (d) as arguments() takes them: made when the
    def ran, so only a constant written in place is known here."""
    lam = lambda_of(d)
    a = d.args if lam is None else lam.args
    return [x.value if x.__class__ is gast.Constant else _NO_DEFAULT for x in a.defaults]


def _plain_callee(name, ctx):
    """Is the global `name` a builtin (min, float, range) or a function with a rule?
    Another Python function or a class could keep or change what it is given."""
    g = ctx.fn.__globals__
    if name in g:
        f = g[name]
    else:
        bi = g.get("__builtins__", builtins)
        known = hasattr(bi, name) if not isinstance(bi, dict) else name in bi
        return known and name not in _WRITING_BUILTINS
    if isinstance(f, (types.BuiltinFunctionType, types.BuiltinMethodType)):
        return name not in _WRITING_BUILTINS
    try:
        return f in R.PRIMITIVES or R.lookup_user(f) is not None
    except TypeError:
        return False


def _module_path(e, ctx):
    """Is e (`np.linalg.norm`) an attribute path from a module global of the caller?"""
    while isinstance(e, gast.Attribute):
        e = e.value
    return (
        isinstance(e, gast.Name)
        and e.id not in ctx.own
        and isinstance(ctx.fn.__globals__.get(e.id), types.ModuleType)
    )
