"""Inline small helper functions into their caller (issue 15), before everything else.

A statement ``t = f(a, b)`` (or ``f(a, b)``, or ``return f(a, b)``) where ``f`` is a small
function of the same module becomes f's body in place, its names renamed apart, so the
reverse pass sees one function: no pair to call, no pullback closure, no tape entry per
call. Only what keeps the meaning exactly is inlined:

- f is a global read by name (not a local, a parameter or a captured variable of the
  caller; local functions: below), a plain Python function sharing the caller's globals
  and file, capturing nothing, with no rule (user rule, primitive, special or
  non-differentiable), not the caller itself, not adjoint_s2s's own code;
- the call gives each of f's parameters a value as Python would bind it: by position,
  by keyword (a value that calls nothing), or a default that is an immutable constant
  (a number, a string, None); no ``*`` or ``**`` argument; f has no
  ``*args``/``**kwargs``/keyword-only parameters and is no generator;
- f's body is small, has no nested scope (def, lambda, class, comprehension), no
  global/nonlocal/import/del/walrus/yield/await, and a single ``return`` at its end;
- f writes into nothing: no item or attribute assignment, no augmented assignment
  (``a += b`` writes into an array), no method call (``xs.append``,
  ``a.fill``: only functions of modules, ``np.sin``), no ``out=`` or ``**`` argument
  and no call of another Python function or class (builtins, module functions,
  functions with rules, and functions that qualify themselves, inlined in turn, only):
  a callee that may write into its arguments keeps its call and the checks made for it;
- the names f reads from outside (globals, builtins) are none of the caller's own names,
  and f's own names (parameters, locals) get fresh names no one else uses.

The same holds for the caller's own local functions (``def f(t, y): ...`` or
``f = lambda t, y: ...`` in its top-level body, bound by nothing else anywhere in it),
called after their definition: a closure reads what it captures when it is called, and
the inlined body reads the caller's variables at that same place (so the body's
parameters never take over a caller's variable that it also reads). The def stays.

A call inside a larger expression (``y = y + h * f(t, y)``, ``return f(x) + f(2 * x)``)
is first taken out into ``f_value = f(t, y)`` when it always runs (not under
``and``/``or``/``if else``, a chained comparison or a comprehension) and no other call of
the statement completes before it starts: what runs before it is then only names,
constants and operators, which the inlined body cannot change, and the calls of its
own arguments, which run before its body either way (see local_functions.first_call).

The arguments are evaluated first, in order, as in the call (a parameter f never
assigns takes a name or constant argument as it is). What it rests on joins the caller's
cache entry: f's identity (a redefinition makes the caller's code again, emit's callee
guard) and f's rule version (a rule registered for f later drops it). The inlined
statements keep f's line numbers (same file), so errors and comments name f's lines; the
first one carries the call's line and ``(inlined f)`` for the generated comments.
"""
import types

import gast

from ..naming import names_in
from . import none_params, rebound_globals
from .inline_callees import arguments, callee, callee_body, local_body, local_defaults
from .local_functions import DEFS, first_call, fresh_name as _fresh_name, local_defs, local_name, take_out
from .local_objects import replace_local_objects

# what makes a replaced object's fields plain variables, checked at each call with the
# functions inlined (local_objects.py): C.__setattr__ = ... makes the code again
CLASS_GUARDS = ("__new__", "__getattr__", "__getattribute__", "__setattr__", "__delattr__")
ENABLED = [True]  # tests switch it off (then refresh()) to test the direct calls of emit


class Inlined:
    """What the caller's code rests on: {global name: function} of the inlined callees;
    local: the names of the caller's own local functions inlined (nothing outside the
    caller's source to guard)."""

    def __init__(self):
        self.callees = {}
        self.local = set()
        self.objects = []  # local_objects.Replaced: objects turned into variables


def inline_calls(fn, node, filename, globals_, function_node, fresh_copy, runtime_code, check, lines=None,
                 names=None):
    """Inline the eligible calls of node (fn's tree, rewritten in place). Returns Inlined.
    function_node(f) -> (tree, filename, lines); fresh_copy(tree) -> a copy to rewrite;
    check(tree) raises for what cannot be differentiated (such a callee is left alone: its
    error belongs to the call, if it ever runs); lines: those of fn's file; names: the
    names in node, when known."""
    out = Inlined()
    code = fn.__code__
    if not ENABLED[0] or code.co_flags & 0x20:
        return out
    # most functions call no Python function by name: nothing to look for, statement by
    # statement (a global that is no function now is recorded, and guarded, by the
    # passes that resolve the call)
    g = fn.__globals__
    defs = local_defs(node)
    kinds = {type(g.get(n)) for n in (names_in(node) if names is None else names) if n in g}
    if not defs and types.FunctionType not in kinds and type not in kinds:
        return out
    ctx = _Ctx(fn, filename, globals_, function_node, fresh_copy, runtime_code, node, out)
    # arguments given to the body as they are: plain locals (no cell another function
    # could rebind while the body runs) and constants
    ctx.plain = set(code.co_varnames) - set(code.co_cellvars)
    ctx.check = check
    ctx.lines = lines
    ctx.local_defs = defs
    ctx.defined = {}  # the local functions defined so far in the walk: name -> FunctionDef
    before = None
    if type in kinds and not ctx.blocked:
        out.objects = replace_local_objects(node, ctx, _expand)
        before = names_in(node)
        # (an object it gave up on leaves copies of the statements: the defs found again)
        ctx.local_defs = defs = local_defs(node)
    _walk_block(node.body, ctx, top=True)
    _drop_inlined_nonlocal_defs(node, defs)
    if before is not None and (out.callees or out.local):
        # an object made here and handed to a helper inlined since (`run(Params(k), n)`):
        # read only by field now, in the helper's body, through one of the plain locals
        # inlining made (the helper's parameters)
        ctx.plain |= names_in(node, gast.Store) - before
        out.objects += replace_local_objects(node, ctx, _expand)
    return out


def _drop_inlined_nonlocal_defs(node, defs):
    """A local function that assigns the caller's variables (`nonlocal`), every call of
    which was inlined: its def goes, as nothing names it any more (the check refuses a
    `nonlocal` that stays)."""
    for name, d in defs.items():
        if d.__class__ is not gast.FunctionDef or not any(s.__class__ is gast.Nonlocal for s in d.body):
            continue
        if d in node.body and not any(name in names_in(s) for s in node.body if s is not d):
            node.body.remove(d)


class _Ctx:
    """What inlining into fn needs. Worked out when a call first asks (most functions call
    no helper by name): whether fn is adjoint_s2s's or a library's own code (nothing is
    inlined there), fn's own names, and the names taken in its tree."""

    def __init__(self, fn, filename, globals_, function_node, fresh_copy, runtime_code, node, out):
        self.fn = fn
        self.filename = filename
        self.globals = globals_
        self.function_node = function_node
        self.fresh_copy = fresh_copy
        self.runtime_code = runtime_code
        self.node = node
        self.out = out
        self._blocked = self._own = self._taken = None
        self.checking = set()  # the callees whose bodies are being checked (inline_callees)

    @property
    def blocked(self):
        if self._blocked is None:
            self._blocked = bool(self.runtime_code(self.fn.__code__))
        return self._blocked

    @property
    def own(self):
        if self._own is None:  # asked before anything is rewritten: fn's tree as it came
            code = self.fn.__code__
            own = set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars)
            self._own = own | names_in(self.node, gast.Store) | names_in(self.node, gast.Del)
            self._taken = names_in(self.node) | self._own
        return self._own

    @property
    def taken(self):
        self.own  # noqa: B018 - computed together
        return self._taken

    @taken.setter
    def taken(self, value):
        self._taken = value


def _walk_block(stmts, ctx, top=False):
    """Rewrite a statement list in place (nested blocks too, never nested scopes). A local
    function of the caller's top level may be inlined from the statement after its def
    on (a call before it would raise: it stays a call)."""
    i = 0
    while i < len(stmts):
        s = stmts[i]
        new = _inline_stmt(s, ctx)
        if new is not None:  # walked in turn: an argument may call another helper
            stmts[i:i + 1] = new
            continue
        new = _hoisted(s, ctx)
        if new is not None:  # s now reads the call's value: it may call another one
            stmts[i:i] = new
            continue
        if top and ctx.local_defs and s.__class__ in DEFS and ctx.local_defs.get(local_name(s)) is s:
            ctx.defined[local_name(s)] = s
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if isinstance(block, list) and not isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
                _walk_block(block, ctx)
        for h in getattr(s, "handlers", None) or ():
            _walk_block(h.body, ctx)
        i += 1


def _inline_stmt(s, ctx):
    """The statements that replace s when s calls a helper that may be inlined, else None."""
    if isinstance(s, gast.Assign):
        call = s.value
    elif isinstance(s, (gast.Expr, gast.Return)):
        call = s.value
    else:
        return None
    prepared = _prepare(call, ctx)
    return None if prepared is None else _expand(s, call, prepared, ctx)


def _prepare(call, ctx):
    """(f, or None for a local function; its name; what callee_body gives; the argument
    each parameter takes) when call may be inlined, else None."""
    if not isinstance(call, gast.Call) or not isinstance(call.func, gast.Name) or ctx.blocked:
        return None
    local = ctx.defined.get(call.func.id)
    if local is not None:
        f, fname, got = None, call.func.id, local_body(local, call, ctx)
    else:
        f = callee(call, ctx)
        if f is None:
            return None
        fname, got = f.__name__, callee_body(f, ctx)
    if got is None:
        return None
    defaults = (f.__defaults__ or ()) if f is not None else local_defaults(local)
    return f, fname, got, arguments(call, got[1], defaults)


def _hoisted(s, ctx):
    """[`t = f(args)` inlined..., s] when s (an assignment, expression statement or
    return) calls f, a function that may be inlined, inside a larger expression
    (`y = y + h * f(t, y)`), and that call always runs (not in a branch of `and`, `or`,
    `a if c else b`, a chained comparison, a comprehension or a lambda) and starts before
    any other call of s completes (local_functions.first_call): what s evaluates before
    it is then names, constants and operators, which the inlined body (it writes into
    nothing and calls no Python function) cannot change; its arguments run before its
    body either way. s is rewritten in place to read t. Else None. An augmented
    assignment (`s += h(x)`) too, its value a call or holding one: Python reads the
    target first, which the body does not change."""
    aug = isinstance(s, gast.AugAssign) and s.target.__class__ is gast.Name
    if not (aug or isinstance(s, (gast.Assign, gast.Expr, gast.Return))) or s.value is None or ctx.blocked:
        return None
    found = first_call(s.value, lambda c: _prepare(c, ctx))
    if found is None or found[0] is s.value and not aug:
        return None
    call, parent, field, index, prepared = found
    if call is s.value:  # (`s += h(x)`)
        parent, field, index = s, "value", None
    if prepared[2][5] and (_reads_outside(s.value, call) | ({s.target.id} if aug else set())) & prepared[2][5]:
        # a local function that assigns the caller's variables (`nonlocal`), which the
        # rest of s reads: it would see the new values (`acc + bump(2.0)`): a call
        return None
    if _rebinds_a_read_global(s.value, call, prepared, ctx):
        return None
    a = prepared[3]
    one = len(a) == 1 and isinstance(a[0], gast.Name)
    new = take_out(s, call, parent, field, index, _fresh_name(f"{call.func.id}_{a[0].id if one else 'value'}", ctx))
    return _expand(new, call, prepared, ctx)


def _rebinds_a_read_global(expr, call, prepared, ctx):
    """Whether the body to inline may run the user's code as it is (a function marked
    non-differentiable), which may rebind a data global the rest of expr reads first
    (`x * SCALE + helper(x)`): the call stays, and the normaliser reads the global where
    Python does (passes/rebound_globals.py)."""
    read = rebound_globals.data_globals_in(_reads_outside(expr, call), ctx.fn)
    body = prepared[2][0] + [gast.Expr(value=prepared[2][2])] if prepared[2][2] is not None else prepared[2][0]
    return bool(read) and rebound_globals.may_run_users_code(body, prepared[0] or ctx.fn)


def _reads_outside(expr, call):
    """The names expr reads outside the call node in it."""
    out, stack = set(), [expr]
    while stack:
        n = stack.pop()
        if n is call:
            continue
        if n.__class__ is gast.Name:
            out.add(n.id)
        stack.extend(gast.iter_child_nodes(n))
    return out


def _expand(s, call, prepared, ctx, record=True):
    """The statements that replace s, which calls what _prepare made ready. record: note
    the callee as one the caller's code rests on (local_objects notes its own)."""
    f, fname, got, args = prepared
    body, params, ret, lines, free, shared = got
    rename, binds = _bind_params(s, args, fname, params, body, free, ctx, shared)
    renamer = _Rename(rename)
    body = [renamer.visit(st) for st in body]
    ret = renamer.visit(ret)
    if any(a.__class__ is gast.Constant and a.value is None for a in args):  # `damping=None`
        body, ret, binds = none_params.fold_inlined(body, ret, binds)
    lasts = _split_assign(s, ret) if isinstance(s, gast.Assign) else None
    if isinstance(s, gast.Expr) and isinstance(ret, gast.Constant) and body:
        lasts = []  # (`add(z)`, returning None: its body alone)
    if lasts is None or not (binds or body or lasts):
        if isinstance(s, gast.Assign):
            lasts = [gast.Assign(targets=s.targets, value=ret, type_comment=None)]
        elif isinstance(s, gast.Return):
            lasts = [gast.Return(value=ret)]
        else:
            lasts = [gast.Expr(value=ret)]
    for i, last in enumerate(lasts):
        gast.copy_location(last, s)
        last.end_lineno = getattr(s, "end_lineno", None)
        if i:
            last.no_origin = True  # one comment (the call's line) for them all
    new = binds + body + lasts
    lo = getattr(s, "lineno", None)
    text = lines[lo - 1].strip()[:100] if lines and lo and lo <= len(lines) else ""
    outer = getattr(s, "inlined", None)  # s began another inlined call (binds its argument)
    new[0].inlined = (f"{outer[0]}, {fname}",) + outer[1:] if outer else (fname, text, lo)
    if f is None:
        ctx.out.local.add(fname)
    elif record:
        ctx.out.callees[call.func.id] = f
    return new


def _bind_params(s, args, fname, params, body, free, ctx, shared=frozenset()):
    """({f's name: its new name, or the argument node substituted as it is}, the
    assignments binding the other arguments to their fresh names): f's names renamed
    apart, except parameters never assigned that are given a name or a constant. args:
    the expression each parameter takes; free: the names f reads from outside (for a
    local function, maybe the caller's own)."""
    assigned = set()
    for st in body:
        assigned |= names_in(st, gast.Store)
    local = set(params) | (assigned - shared)  # (shared: the caller's, `nonlocal`)
    rename = {}
    binds = []
    targets = _target_names(s)
    uses = {}
    for a in args:
        for n in gast.walk(a):
            if isinstance(n, gast.Name):
                uses[n.id] = uses.get(n.id, 0) + 1
    for p, a in zip(params, args):
        if p not in assigned and (isinstance(a, gast.Constant) or isinstance(a, gast.Name) and a.id in ctx.plain):
            rename[p] = a  # substituted as it is
            continue
        if (isinstance(a, gast.Name) and a.id in ctx.plain and a.id in targets and uses[a.id] == 1
                and a.id not in free):
            # `theta, omega = step(theta, omega, k)`: the caller's theta is assigned by this
            # statement and given to nothing else; its old value is dead once the body
            # starts (unless the body reads it itself: a local function's free name), so
            # the body's parameter is the caller's variable itself
            rename[p] = a.id
            continue
        rename[p] = _fresh(p, fname, ctx)
        binds.append(_assign(gast.Name(id=rename[p], ctx=gast.Store(), annotation=None, type_comment=None), a, s))
    for n in sorted(local - set(params)):
        rename[n] = _fresh(n, fname, ctx)
    return rename, binds


def _target_names(s):
    """The names a `x = ...` or `x, y = ...` statement assigns (flat names only)."""
    if not isinstance(s, gast.Assign) or len(s.targets) != 1:
        return set()
    t = s.targets[0]
    if isinstance(t, gast.Name):
        return {t.id}
    if isinstance(t, (gast.Tuple, gast.List)) and all(isinstance(e, gast.Name) for e in t.elts):
        return {e.id for e in t.elts}
    return set()


def _split_assign(s, ret):
    """`x, y = x, y` (the body assigned the caller's x and y itself): nothing to do, [].
    Else None (the assignment is kept)."""
    if len(s.targets) != 1 or not isinstance(s.targets[0], (gast.Tuple, gast.List)):
        return None
    elts = s.targets[0].elts
    if (
        not isinstance(ret, (gast.Tuple, gast.List))
        or len(ret.elts) != len(elts)
        or not all(isinstance(e, gast.Name) for e in elts)
        or len({e.id for e in elts}) != len(elts)
        or any(isinstance(v, gast.Starred) for v in ret.elts)
    ):
        return None
    # only when every item is its own name again (the body took the caller's variables
    # over): then nothing is left to assign. Items of other names keep the tuple (the
    # alias checks of the caller know a tuple's items apart)
    if all(isinstance(v, gast.Name) and v.id == e.id for e, v in zip(elts, ret.elts)):
        return []
    return None


def _fresh(name, fname, ctx):
    return _fresh_name(f"{name}_{fname.strip('_')}" if fname.strip("_") else f"{name}_inl", ctx)


def _assign(target, value, at):
    s = gast.Assign(targets=[target], value=value, type_comment=None)
    gast.copy_location(s, at)
    s.end_lineno = getattr(at, "end_lineno", None)
    s.no_origin = True  # under the `(inlined f)` comment, not the call's line again
    return s


class _Rename(gast.NodeTransformer):
    """Names renamed (str) or replaced (a node: a substituted argument, copied each time)."""

    def __init__(self, rename):
        self.rename = rename

    def visit_Name(self, node):
        new = self.rename.get(node.id)
        if new is None:
            return node
        if isinstance(new, str):
            node.id = new
            return node
        if not isinstance(node.ctx, gast.Load):  # pragma: no cover - assigned params are renamed
            raise AssertionError("a substituted parameter assigned")
        copy = _copy(new)
        gast.copy_location(copy, node)
        return copy


def _copy(node):
    if isinstance(node, gast.Name):
        return gast.Name(id=node.id, ctx=gast.Load(), annotation=None, type_comment=None)
    return gast.Constant(value=node.value, kind=None)
