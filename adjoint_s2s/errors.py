"""The error hierarchy.

Every message says what went wrong, where (file:line when there is a place), and the
way out. A user mistake never surfaces as a traceback from inside the transformer.
"""
import ast
import re

import gast


class AdjointError(Exception):
    """Base class of every error adjoint_s2s raises on purpose."""


class UnsupportedSyntaxError(SyntaxError, AdjointError):
    """A construct the transformer cannot differentiate (generators, async, ...)."""

    def __init__(self, construct, filename=None, lineno=None, col=None, hint=None):
        where = ""
        if filename is not None:
            where = f" at {filename}, line {lineno}" if lineno else f" in {filename}"
        hint = hint or (
            "move it into a helper marked with adjoint_s2s.non_differentiable, "
            "or give the helper a rule with @adjoint"
        )
        msg = f"{construct} is not supported inside a differentiated function{where}; {hint}"
        super().__init__(msg)
        self.msg = msg
        self.construct = construct
        self.filename = filename
        self.lineno = lineno
        self.offset = (col + 1) if col is not None else None

    def __str__(self):
        return self.msg


class MissingAdjointError(NotImplementedError, AdjointError):
    """A callable with no Python source and no rule."""

    def __init__(self, fn, reason=None):
        name = describe(fn)
        why = reason or "it has no Python source to transform and no rule is registered"
        if type(getattr(fn, "__self__", None)).__name__ == "ufunc":
            why += " (docs/numpy.md lists the ufunc methods that have rules)"
        msg = (
            f"cannot differentiate {name}: {why}. Register a rule with "
            f"@adjoint_s2s.adjoint({short_name(fn)}) (or @adjoint_s2s.rrule), or mark it "
            f"with adjoint_s2s.non_differentiable({short_name(fn)}) if it carries no gradient"
        )
        super().__init__(msg)
        self.fn = fn


class NoSourceError(AdjointError, ValueError):
    """A Python function whose source cannot be found (exec, REPL, compiled)."""


class RuleError(AdjointError, ValueError):
    """A rule returned something of the wrong form (count, shape, type)."""


class MutationError(AdjointError, ValueError):
    """A write into a container that differentiated code cannot make visible where Python
    would (a callee writing into an array its caller reads again, a second name for the
    written array)."""


def shared_write_message(name, other, op=None, element=False, shown=None):
    """(what, way out) for a write into `name` (``name[...] = v``, or ``name op= v`` when op
    is given) while `other` names the same container or a view of it and is read later
    (element: `name` is an item of the container `other`). shown: the user's expression
    for `name` when it is the normaliser's name for a part of one (`b.T[0] = v`)."""
    if shown is not None and shown != name:
        what = f"writing into `{shown}`, a view of `{other}` (`{other}` is used afterwards)"
        hint = (
            f"NumPy writes through the view into `{other}`, while differentiated code writes "
            f"into a copy, so `{other}` would keep the old values. Index `{other}` itself "
            f"(`b.T[0] = v` is `b[:, 0] = v`), or copy the view first if `{other}` should "
            f"keep the old values"
        )
        return what, hint
    if element:
        what = f"writing into `{name}` while `{other}` holds it (`{other}` is used afterwards)"
        hint = (
            f"writes copy on write in differentiated code, so `{other}` would keep the old "
            f"`{name}`. Write through `{other}` (`{other}[i][j] = v` is written back into "
            f"`{other}`), or write into a copy of `{name}` if `{other}` should keep the old values"
        )
        return what, hint
    if op is None:
        what = f"writing into `{name}`"
        why = f"writes copy on write in differentiated code, so `{other}` would keep the old values"
    else:
        what = f"`{name} {op}= ...`"
        why = (
            f"in Python the array or list changes in place, so `{other}` shows the change; "
            f"differentiated code gives `{name}` a new value and `{other}` would keep the old one"
        )
    what += f" while `{other}` names the same container or a view of it (`{other}` is used afterwards)"
    hint = (
        f"{why}. Write `{other} = {name}.copy()` if it should keep the old values, or use "
        f"`{name}` after the write"
    )
    return what, hint


class NotDifferentiableError(AdjointError, TypeError):
    """A value or operation that has no derivative where one is needed."""


class RecursionLimitError(AdjointError, RecursionError):
    """Python's recursion limit reached in differentiated code, whose nested calls take
    more frames than the plain call's (a RecursionError still)."""


def short_name(fn):
    owner = getattr(fn, "__self__", None)
    if type(owner).__name__ == "ufunc" and hasattr(owner, "__name__"):  # np.logaddexp.reduce
        return f"numpy.{owner.__name__}.{getattr(fn, '__name__', '?')}"
    mod = getattr(fn, "__module__", None)
    qual = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    if mod in ("builtins", None):
        return qual
    return f"{mod}.{qual}"


# generated filename -> {generated line: (user file, user line)} (source.ORIGINS): a def
# inside differentiated code is described by the user's file and line
ORIGINS = {}


def describe(fn):
    name = short_name(fn)
    code = getattr(fn, "__code__", None)
    if code is not None:
        mapped = ORIGINS.get(code.co_filename, {}).get(code.co_firstlineno)
        if mapped is not None:
            return f"{code.co_name} ({mapped[0]}, line {mapped[1]})"
        return f"{name} ({code.co_filename}, line {code.co_firstlineno})"
    return name


def no_variant(nargs, kwnames):
    """Why no variant of a function's rule fits a call: what the call passed."""
    what = f"{nargs} positional argument{'s' if nargs != 1 else ''}"
    if kwnames:
        what += f" and the keyword{'s' if len(kwnames) != 1 else ''} {', '.join(kwnames)}"
    return (f"no variant of its rule takes {what} (an argument the rule declines, see "
            f"docs/numpy.md, or one more than the function's signature)")


def outside_alias_message(name, other):
    """(what, way out) for a change in place of the object `name` holds while `other`, a
    global (or captured) name for it, is read afterwards: the generated code cannot name
    `other` again after the change."""
    what = (f"`{name}`, the object the name `{other}` from outside this function also holds, "
            f"changed in place and read again through `{other}`")
    hint = (f"adjoint_s2s follows the change through `{name}` only: `{other}` would show it "
            f"without its gradient. Read it through `{name}` after the change, or change a "
            f"copy (`{name} = list({other})`, `{other}.copy()`) and return it")
    return what, hint


def show_user_names(exc, shown):
    """exc's message with each temporary of the normaliser written in backquotes (alone,
    or before `.` or `[`) replaced by the user's expression it holds (shown: name -> its
    tree, naming.Namer.shown): `p[1]` where the message said `p_i`."""
    if not shown or getattr(exc, "_shown", False):
        return
    exc._shown = True

    def spell(m):
        text = spelled(m.group(1), shown)
        return m.group(0) if text is None else f"`{text}{m.group(2)}`"

    pattern = re.compile(r"`([A-Za-z_]\w*)((?:[.\[][^`]*)?)`")
    if isinstance(exc, UnsupportedSyntaxError):
        exc.msg = pattern.sub(spell, exc.msg)
        exc.args = (exc.msg,)
    elif exc.args and isinstance(exc.args[0], str):
        exc.args = (pattern.sub(spell, exc.args[0]),) + exc.args[1:]


def spelled(name, shown, depth=8):
    """The user's expression the normaliser's temporary name holds, as text, the
    temporaries in it spelled out in turn (`grid_i[1:-1]`, grid_i holding `grid["u"]`:
    `grid['u'][1:-1]`); None for a name that is no temporary (or a tree that will not
    print)."""
    if name not in shown:
        return None
    try:
        return ast.unparse(_spelled_tree(name, shown, depth))
    except Exception:  # (the temporary's own name, then)
        return None


def _spelled_tree(name, shown, depth):
    tree = gast.gast_to_ast(shown[name])

    class Spell(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in shown and node.id != name and depth > 0 and isinstance(node.ctx, ast.Load):
                return _spelled_tree(node.id, shown, depth - 1)
            return node

    return Spell().visit(tree)
