"""Module globals holding data, read in a function that may run code that rebinds them.

The pullback receives the data globals it reads as default arguments (cleanup.py): the
values at the end of the forward pass. A call that runs the user's code as it is (a
function marked non-differentiable, a rule's forward, a callback given to `map`) may
rebind such a global meanwhile (``STEP += 1`` in a logging callback, a scale set for a
while and set back): the forward pass read the value of its time, and the pullback would
use the last one for every use, a silently wrong gradient.

In a function that reads a data global and makes such a call, the global is read into a
local of its own right before each statement that reads it, and the statement reads the
local. The reverse pass keeps a rebound local's values as it keeps any other's, so each
use gets the value it read; the forward pass reads the global where it did (a lazy
`map` may run the callback later, inside `list(...)`). Calls of NumPy, math and the other
libraries' functions do not run the user's code: a function without other calls is left
as it is.
"""
import builtins
import numbers
import types

import gast
import numpy as np

_LIBRARIES = ("numpy", "math", "cmath", "builtins", "operator", "scipy", "itertools", "functools")
_DATA = (numbers.Number, np.ndarray, np.generic, tuple)
_COMPOUND = (gast.For, gast.While, gast.If, gast.Try, gast.With)
_MISSING = object()


def rebound_names(fn, node, names_in_tree):
    """The data globals fn's tree (before normalisation) reads in its own scope, when it
    also makes a call that may run the user's code; else none. names_in_tree: every name
    the tree holds (most functions read no data global: no walk then). Numbers and tuples
    of them; an array only where every read is an operand (of arithmetic, an index, a
    library's function): one the code binds to a name, indexes to write, or hands to the
    user's code keeps its name, which the analyses of writes and aliases follow."""
    local = _locals(fn)
    if not data_globals_in(names_in_tree, fn):
        return frozenset()
    g = fn.__globals__
    names, kept = set(), set()
    todo = [(s, None) for s in node.body]
    while todo:
        n, parent = todo.pop()
        if n.__class__ is gast.Name and n.ctx.__class__ is gast.Load and n.id not in local:
            value = g.get(n.id, _MISSING)
            if isinstance(value, _DATA) and not isinstance(value, bool):
                names.add(n.id)
                if isinstance(value, np.ndarray) and not _operand(n, parent, fn, local):
                    kept.add(n.id)
        for child in gast.iter_child_nodes(n):
            if child.__class__ not in (gast.FunctionDef, gast.Lambda):
                todo.append((child, n))
    names -= kept
    if not names or not _rebinds(node.body, fn, local):
        return frozenset()
    return frozenset(names)


def _operand(n, parent, fn, local):
    cls = parent.__class__
    if cls in (gast.BinOp, gast.UnaryOp, gast.Compare):
        return True
    if cls is gast.Subscript:
        return parent.ctx.__class__ is gast.Load or parent.value is not n
    if cls is gast.Call:
        return parent.func is not n and _library_call(parent, fn, local)
    return False


def data_globals_in(names, fn):
    """The names among names that are data globals of fn (not its locals)."""
    local, g = _locals(fn), fn.__globals__
    return {n for n in names if n not in local and isinstance(g.get(n, _MISSING), _DATA)
            and not isinstance(g[n], bool)}


def may_run_users_code(stmts, fn):
    """Whether stmts (of fn's tree) may call the user's code as it is."""
    return _rebinds(stmts, fn, _locals(fn))


def statement_calls_users(fn):
    """Whether a statement's own expressions (a compound statement's header) may run the
    user's code: the normaliser then reads the rebound globals where they stand."""
    local = _locals(fn)
    return lambda s: any(h is not None and _calls_users_code(h, fn, local) for h in _heads(s))


def snapshot_rebound_globals(node, namer, rebound):
    """Rewrite fn's normalised tree in place (see the module docstring): each read of a
    name in rebound reads a local bound to the global right before its statement."""
    if not rebound:
        return
    alias = {name: namer.fresh(name) for name in sorted(rebound)}
    for n in _own_nodes(node.body):
        if n.__class__ is gast.Name and n.ctx.__class__ is gast.Load and n.id in alias:
            n.id = alias[n.id]
    _before_reads(node.body, {a: name for name, a in alias.items()})


def _locals(fn):
    code = fn.__code__
    return set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars)


def _heads(s):
    """A statement's own expressions: a compound statement's header, else the statement."""
    if s.__class__ in _COMPOUND:
        return [getattr(s, f, None) for f in ("iter", "test")] + [w.context_expr for w in getattr(s, "items", ())]
    return [s]


def _before_reads(block, globals_of):
    """Insert `alias = global` before each statement of block (and of the blocks it
    holds) whose own expressions read the alias."""
    i = 0
    while i < len(block):
        s = block[i]
        for field in ("body", "orelse", "finalbody"):
            sub = getattr(s, field, None)
            if type(sub) is list:
                _before_reads(sub, globals_of)
        for h in getattr(s, "handlers", None) or ():
            _before_reads(h.body, globals_of)
        read = sorted({n.id for h in _heads(s) if h is not None for n in _own_nodes([h])
                       if n.__class__ is gast.Name and n.id in globals_of and n.ctx.__class__ is gast.Load})
        for a in read:
            new = gast.Assign(targets=[gast.Name(a, gast.Store(), None, None)],
                              value=gast.Name(globals_of[a], gast.Load(), None, None), type_comment=None)
            gast.copy_location(new, s)
            if hasattr(s, "src_line"):  # (the user's line, for a refusal met there)
                new.src_line = s.src_line
            for heading in ("inlined", "origin"):  # (the user's line's comment: above the read)
                if hasattr(s, heading):
                    setattr(new, heading, getattr(s, heading))
                    delattr(s, heading)
            block.insert(i, new)
            i += 1
        i += 1


def _rebinds(block, fn, local):
    return any(_calls_users_code(s, fn, local) for s in block)


def _calls_users_code(tree, fn, local):
    for n in _own_nodes([tree]):
        if n.__class__ is gast.Call and not _library_call(n, fn, local):
            return True
    return False


def _library_call(call, fn, local):
    """A call of a library's function (NumPy, math, a builtin...) given no function of
    the user's (a key=, a callback): it runs no code of the user's."""
    target = _resolve(call.func, fn, local)
    if target is _MISSING:
        return False
    module = target.__name__ if isinstance(target, types.ModuleType) else (
        getattr(target, "__module__", None) or getattr(getattr(target, "__objclass__", None), "__module__", None))
    if not isinstance(module, str) or module.partition(".")[0] not in _LIBRARIES:
        return False
    for a in list(call.args) + [k.value for k in call.keywords]:
        if a.__class__ is gast.Lambda or a.__class__ is gast.Name and _users_callable(_resolve(a, fn, local)):
            return False
    return True


def _users_callable(value):
    """A callable that may run the user's code (a function, a class of the user's...)."""
    if value is _MISSING or not callable(value):
        return False
    owner = value if isinstance(value, type) else getattr(value, "__objclass__", None)
    module = getattr(owner, "__module__", None) if owner is not None else getattr(value, "__module__", None)
    return not isinstance(module, str) or module.partition(".")[0] not in _LIBRARIES


def _resolve(e, fn, local):
    """The object a name or a chain of attributes of a module names, or _MISSING."""
    if e.__class__ is gast.Attribute:
        base = _resolve(e.value, fn, local)
        if base is _MISSING:
            return _MISSING
        if not isinstance(base, (types.ModuleType, type)):  # a method of a global's value
            base = type(base)
        return getattr(base, e.attr, _MISSING)
    if e.__class__ is not gast.Name or e.id in local:
        return _MISSING
    got = fn.__globals__.get(e.id, _MISSING)
    return getattr(builtins, e.id, _MISSING) if got is _MISSING else got


def _own_nodes(stmts):
    """The nodes of stmts outside nested functions and lambdas (their own scopes)."""
    todo = list(stmts)
    while todo:
        n = todo.pop()
        yield n
        for child in gast.iter_child_nodes(n):
            if child.__class__ not in (gast.FunctionDef, gast.Lambda):
                todo.append(child)
