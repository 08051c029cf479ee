"""The naming convention of generated code, and fresh names that never collide.

``b_x`` is the adjoint of ``x``; ``f_pullback`` the pullback of ``f`` and ``f_pair`` its
pair (the constants below are the one source of these; the clean-up pass builds its
patterns from them); ANF temporaries
are named after what they hold (``sin_x``, ``mul``); saved copies of overwritten values
are ``x_saved`` (or pushed on the tape inside loops).
"""
import builtins
import keyword
import re

import gast

ADJOINT_PREFIX = "b_"  # b_x: the adjoint of x
PULLBACK_SUFFIX = "_pullback"  # f_pullback: the pullback of f
PAIR_SUFFIX = "_pair"  # f_pair: the primal-plus-pullback pair of f

_BUILTINS = set(dir(builtins))

# what a temporary holding an operator's result is called (`mul = a * b`): anf.py and
# passes/whole.py name them alike
BINOP_HINTS = {
    gast.Add: "add",
    gast.Sub: "sub",
    gast.Mult: "mul",
    gast.Div: "div",
    gast.FloorDiv: "floordiv",
    gast.Mod: "mod",
    gast.Pow: "pow",
    gast.MatMult: "matmul",
}

_SAFE = re.compile(r"[^0-9a-zA-Z_]")


class Namer:
    def __init__(self, taken=()):
        self.taken = set(taken) | _BUILTINS
        # base -> the last suffix given: names are only ever added to taken, so every
        # smaller suffix is still taken, and probing starts after it (linear, not
        # quadratic, in the number of names a long function makes from one hint)
        self._last = {}
        # a temporary the normaliser made -> the user's expression it holds (anf.atom):
        # an error message names the expression, not the temporary (errors.show_user_names)
        self.shown = {}

    def reserve(self, names):
        self.taken.update(names)

    def fresh(self, hint="t"):
        base = _BASES.get(hint)
        if base is None:
            base = _BASES[hint] = _base(hint)
        if base not in self.taken:
            self.taken.add(base)
            return base
        i = self._last.get(base, 0) + 1
        while f"{base}_{i}" in self.taken:
            i += 1
        self._last[base] = i
        out = f"{base}_{i}"
        self.taken.add(out)
        return out


# fields that never hold a node with a Name under it: contexts, operators, and the plain
# strings and numbers of a node (a str or a None that slips through is skipped when popped)
_LEAF_FIELDS = frozenset(
    ("ctx", "op", "ops", "type_comment", "kind", "id", "attr", "arg", "module", "level",
     "conversion", "is_async")
)
_CHILD_FIELDS = {gast.Constant: ()}  # node class -> the fields that may hold a Name


def child_fields(cls):
    """The fields of a gast node class that may hold a Name (a node or a list of them)."""
    got = _CHILD_FIELDS.get(cls)
    if got is None:
        got = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in _LEAF_FIELDS)
    return got


def _base(hint):
    """The name fresh() starts from for a hint: an identifier, no keyword, 24 characters."""
    base = _SAFE.sub("_", hint)
    base = ("_" if base.startswith("_") else "") + base.strip("_") or "t"
    if base[0].isdigit():
        base = "t_" + base
    if keyword.iskeyword(base):
        base += "_"
    return base[:24]


_BASES = {}  # hint -> _base(hint)


def names_in(node, ctx=None):
    """The ids of the names in node's tree (only those of context ctx, e.g. gast.Load, when
    given): the same set as filtering gast.walk, walked with a stack that steps only into
    the fields that may hold a Name (the transform asks for every statement)."""
    if node.__class__ is _BINOP:  # `a op b` of names and constants: most normalised values
        left, right = node.left, node.right
        lc, rc = left.__class__, right.__class__
        if (lc is _CONSTANT or lc is _NAME and left.annotation is None) and (
                rc is _CONSTANT or rc is _NAME and right.annotation is None):
            out = set()
            if lc is _NAME and (ctx is None or isinstance(left.ctx, ctx)):
                out.add(left.id)
            if rc is _NAME and (ctx is None or isinstance(right.ctx, ctx)):
                out.add(right.id)
            return out
    out = set()
    add = out.add
    stack = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    AST, Name, table = gast.AST, gast.Name, _CHILD_FIELDS
    while stack:
        n = pop()
        cls = n.__class__
        if cls is Name:
            if ctx is None or isinstance(n.ctx, ctx):
                add(n.id)
            if n.annotation is not None:
                push(n.annotation)
            continue
        fields = table.get(cls)
        if fields is None:
            if not isinstance(n, AST):
                continue  # a string of Global.names, a None of Dict.keys
            fields = child_fields(cls)
        for field in fields:
            v = getattr(n, field, None)
            if v is None:
                continue
            if v.__class__ is list:
                extend(v)
            else:
                push(v)
    return out


_BINOP, _NAME, _CONSTANT = gast.BinOp, gast.Name, gast.Constant
