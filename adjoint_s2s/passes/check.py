"""Reject what the transformer does not support, with file:line and the way out.

The first pass: it reads the parsed function (never rewrites it) and raises
``UnsupportedSyntaxError`` before anything else runs.

Before::

    def g(x):
        yield x

After: ``UnsupportedSyntaxError: yield (a generator) is not supported inside a
differentiated function at model.py, line 2; ...``. Bodies of nested functions are
checked when (and if) they are themselves differentiated.
"""
import builtins

import gast

from ..errors import UnsupportedSyntaxError
from ..naming import child_fields

_REJECT = {
    gast.Yield: ("yield (a generator)", "return a list instead of yielding values"),
    gast.YieldFrom: ("yield from (a generator)", "return a list instead of yielding values"),
    gast.Await: ("await (a coroutine)", "differentiate a synchronous function"),
    gast.AsyncFor: ("async for", "differentiate a synchronous function"),
    gast.AsyncWith: ("async with", "differentiate a synchronous function"),
    gast.AsyncFunctionDef: ("async def", "differentiate a synchronous function"),
    gast.Global: (
        "a global statement (writing a global)",
        "return the value instead of writing a global",
    ),
    gast.Nonlocal: (
        "a nonlocal statement (writing an enclosing variable)",
        "a function defined in the differentiated one may write its variables "
        "(`nonlocal acc`) when it is only called there by name, each call then inlined "
        "(`add(z)`, `t = add(z) + y`; not inside an expression that also reads a variable "
        "it writes, not passed, stored, or called from a lambda or comprehension) and "
        "simple (at most 40 statements, one return at its end, no method calls, no writes "
        "into containers or objects); "
        "otherwise return the value instead of writing an enclosing variable",
    ),
    gast.ClassDef: ("a class definition", "define the class outside the differentiated function"),
    gast.Try: (
        "a try statement",
        "move the try block into a helper marked non_differentiable or give it a rule",
    ),
    gast.With: (
        "a with statement",
        "move the with block into a helper marked non_differentiable or give it a rule",
    ),
    gast.Delete: ("del", "assign None instead of deleting"),
    gast.Raise: None,  # allowed: raising is a forward-only effect
}
if hasattr(gast, "TryStar"):
    _REJECT[gast.TryStar] = _REJECT[gast.Try]
if hasattr(gast, "Match"):
    _REJECT[gast.Match] = ("match", "use if/elif instead of match")

# the classes check() may raise for: a tree with none of them passes (see
# source.function_copy_noting, which notes them while making the tree)
REJECTED = frozenset(cls for cls, entry in _REJECT.items() if entry is not None)
# what the tree's copy notes: those, and the generator expressions passes/lazy.py looks for
NOTED = REJECTED | {gast.GeneratorExp}



def check(fn_node, filename, line_offset=0):
    """Raise UnsupportedSyntaxError for the first unsupported construct in fn_node."""
    if isinstance(fn_node, gast.AsyncFunctionDef):
        raise UnsupportedSyntaxError(
            "async def (a coroutine)", filename, fn_node.lineno + line_offset,
            fn_node.col_offset, hint="differentiate a synchronous function",
        )
    body = fn_node.body if isinstance(fn_node.body, list) else [fn_node.body]
    for stmt in body:
        _visit(stmt, filename, line_offset)


def _visit(node, filename, line_offset):
    """Raise for the first rejected node of node's tree, in source order (a depth-first
    walk with a stack: the same order as recursing over ast.iter_child_nodes; contexts,
    operators and plain values hold nothing to reject and are not visited)."""
    stack = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    AST, table, reject = gast.AST, _REVERSED_FIELDS, _REJECT
    while stack:
        node = pop()
        cls = node.__class__
        entry = reject.get(cls)
        if entry is not None:
            construct, hint = entry
            if cls is gast.With and _settings_only(node):
                hint = ("these settings change no value: put the `with` around the call of "
                        "adjoint_s2s instead (`with np.errstate(...): adjoint_s2s.gradient(f, "
                        "x)`; with pullback, around `back(...)` too), where it covers the "
                        "forward and the backward pass")
            raise UnsupportedSyntaxError(
                construct,
                filename,
                getattr(node, "lineno", 0) + line_offset,
                getattr(node, "col_offset", None),
                hint=hint,
            )
        if cls is gast.FunctionDef or cls is gast.Lambda:
            # a nested function is a value here; its body is checked if it is differentiated
            children = list(getattr(node, "decorator_list", []))
            children += node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
            children.reverse()
            extend(children)
            continue
        fields = table.get(cls)
        if fields is None:
            if not isinstance(node, AST):
                continue  # a None of Dict.keys, a string
            fields = table[cls] = child_fields(cls)[::-1]
        for field in fields:  # last field first: popped in source order
            value = getattr(node, field, None)
            if value.__class__ is list:
                extend(reversed(value))
            elif value is not None:
                push(value)


_REVERSED_FIELDS = {}  # node class -> naming.child_fields(class), last first
_SETTINGS = frozenset(("errstate", "catch_warnings", "printoptions"))


def _settings_only(node):
    """A `with` of settings only (np.errstate, warnings.catch_warnings, np.printoptions)."""
    for item in node.items:
        f = getattr(item.context_expr, "func", None)
        name = getattr(f, "attr", None) or getattr(f, "id", None)
        if name not in _SETTINGS:
            return False
    return True


def check_scope_dicts(facts, filename):
    """Raise UnsupportedSyntaxError for `locals()` or `vars()` (no argument) in a function
    with differentiated values (facts: its activity analysis): the dict they give is a
    snapshot of the generated code's variables, and a value read through it carries no
    gradient (it was a silent zero)."""
    if not facts.active:
        return
    _check_vars_writes(facts, filename)
    for s in facts.statements:
        v = getattr(s, "value", None)
        if (v.__class__ is gast.Call and v.func.__class__ is gast.Name and v.func.id in ("locals", "vars")
                and not v.args and facts.resolve(v.func) in (builtins.locals, builtins.vars)):
            raise UnsupportedSyntaxError(
                f"`{v.func.id}()`", filename,
                getattr(s, "src_line", None) or getattr(s, "lineno", 0), None,
                hint="the dict it gives carries no gradient: read the variables by name")


def _check_vars_writes(facts, filename):
    """Refuse an item written into the dict `vars(obj)` gives (`vars(p)["a"] = v`): the
    write went into a copy (copy on write), and `p.a` was missing afterwards."""
    given = {}
    for s in facts.statements:
        v = getattr(s, "value", None)
        if (s.__class__ is gast.Assign and v.__class__ is gast.Call and v.func.__class__ is gast.Name
                and v.func.id == "vars" and len(v.args) == 1 and v.args[0].__class__ is gast.Name
                and len(s.targets) == 1 and s.targets[0].__class__ is gast.Name
                and facts.resolve(v.func) is builtins.vars):
            given[s.targets[0].id] = v.args[0].id
            continue
        for t in getattr(s, "targets", ()):
            if t.__class__ is gast.Name:
                given.pop(t.id, None)  # (bound again)
            if t.__class__ is gast.Subscript and t.value.__class__ is gast.Name and t.value.id in given:
                obj = given[t.value.id]
                raise UnsupportedSyntaxError(
                    f"writing into `vars({obj})`", filename,
                    getattr(s, "src_line", None) or getattr(s, "lineno", 0), None,
                    hint=f"differentiated code writes into a copy of the dict, which `{obj}` would not "
                         f"show: write the field (`{obj}.name = v`, or `{obj}.__dict__[key] = v`)")
