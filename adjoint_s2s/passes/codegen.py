"""Text blocks for generated code, and a fast printer for normalised expressions.

The reverse pass builds forward and backward code as nested blocks of lines rather
than as AST: normalised statements are small, so printing them directly is quick,
and the whole generated module is parsed once, at the end.
"""
import ast

import gast

from .cleanup import blank_likes, fix_empty_blocks, names_read

_BIN = {
    gast.Add: "+",
    gast.Sub: "-",
    gast.Mult: "*",
    gast.Div: "/",
    gast.FloorDiv: "//",
    gast.Mod: "%",
    gast.Pow: "**",
    gast.MatMult: "@",
    gast.BitAnd: "&",
    gast.BitOr: "|",
    gast.BitXor: "^",
    gast.LShift: "<<",
    gast.RShift: ">>",
}
_UN = {gast.USub: "-", gast.UAdd: "+", gast.Not: "not ", gast.Invert: "~"}
_CMP = {
    gast.Eq: "==",
    gast.NotEq: "!=",
    gast.Lt: "<",
    gast.LtE: "<=",
    gast.Gt: ">",
    gast.GtE: ">=",
    gast.Is: "is",
    gast.IsNot: "is not",
    gast.In: "in",
    gast.NotIn: "not in",
}


_NUMBER_TYPES = frozenset((int, float, complex))  # (bool aside: a subclass of int)


def src(node):
    """Source of a normalised expression (atoms as children)."""
    t = type(node)
    if t is gast.Name:
        return node.id
    if t is gast.Constant:
        v = node.value
        if type(v) in _NUMBER_TYPES or isinstance(v, (int, float, complex)) and not isinstance(v, bool):
            r = repr(v)
            return f"({r})" if r.startswith("-") or "inf" in r or "nan" in r else r
        if v is Ellipsis:
            return "..."
        return repr(v)
    if t is gast.BinOp:
        return f"{src(node.left)} {_BIN[type(node.op)]} {src(node.right)}"
    if t is gast.UnaryOp:
        return f"{_UN[type(node.op)]}{src(node.operand)}"
    if t is gast.Compare and len(node.ops) == 1:
        return f"{src(node.left)} {_CMP[type(node.ops[0])]} {src(node.comparators[0])}"
    if t is gast.Attribute:
        base = src(node.value)
        if base.isdigit():  # `(2).conjugate()`: `2.conjugate` would read as a float literal
            base = f"({base})"
        return f"{base}.{node.attr}"
    if t is gast.Call:
        parts = [src(a) for a in node.args]
        parts += [f"{k.arg}={src(k.value)}" if k.arg else f"**{src(k.value)}" for k in node.keywords]
        return f"{src(node.func)}({', '.join(parts)})"
    if t is gast.Starred:
        return f"*{src(node.value)}"
    if t is gast.Subscript:
        return f"{src(node.value)}[{index_src(node.slice)}]"
    if t is gast.Tuple:
        inner = ", ".join(src(e) for e in node.elts)
        return f"({inner},)" if len(node.elts) == 1 else f"({inner})"
    if t is gast.List:
        return "[" + ", ".join(src(e) for e in node.elts) + "]"
    if t is gast.Set:
        return "{" + ", ".join(src(e) for e in node.elts) + "}" if node.elts else "set()"
    if t is gast.Dict:
        items = [
            f"**{src(v)}" if k is None else f"{src(k)}: {src(v)}"
            for k, v in zip(node.keys, node.values)
        ]
        return "{" + ", ".join(items) + "}"
    return ast.unparse(gast.gast_to_ast(node))


def index_src(node):
    if isinstance(node, gast.Slice):
        lo = "" if node.lower is None else src(node.lower)
        hi = "" if node.upper is None else src(node.upper)
        if node.step is None:
            return f"{lo}:{hi}"
        return f"{lo}:{hi}:{src(node.step)}"
    if isinstance(node, gast.Tuple):
        if not node.elts:
            return "()"
        inner = ", ".join(index_src(e) for e in node.elts)
        return inner + ("," if len(node.elts) == 1 else "")
    return src(node)


def index_value_src(node):
    """The index as a value expression (slices become slice(...) calls)."""
    if isinstance(node, gast.Slice):
        parts = [node.lower, node.upper, node.step]
        return "slice(" + ", ".join("None" if p is None else src(p) for p in parts) + ")"
    if isinstance(node, gast.Tuple):
        inner = ", ".join(index_value_src(e) for e in node.elts)
        return f"({inner},)" if len(node.elts) == 1 else f"({inner})"
    return src(node)


def stmt_src(s):
    """Source of a simple normalised statement (one line)."""
    if isinstance(s, gast.Assign):
        tgt = s.targets[0]
        if isinstance(tgt, gast.Name):
            lhs = tgt.id
        elif isinstance(tgt, gast.Subscript):
            lhs = f"{src(tgt.value)}[{index_src(tgt.slice)}]"
        else:
            lhs = src(tgt)
        return f"{lhs} = {src(s.value)}"
    if isinstance(s, gast.Expr):
        return src(s.value)
    if isinstance(s, gast.Break):
        return "break"
    if isinstance(s, gast.Continue):
        return "continue"
    if isinstance(s, gast.Return):
        return f"return {src(s.value)}"
    return ast.unparse(gast.gast_to_ast(s))


class Block(list):
    """A list of lines (str), markers and compound items (If/Loop)."""


class If:
    __slots__ = ("test", "body", "orelse")

    def __init__(self, test, body=None, orelse=None):
        self.test = test
        self.body = body if body is not None else Block()
        self.orelse = orelse if orelse is not None else Block()


class Loop:
    __slots__ = ("header", "body")

    def __init__(self, header, body=None):
        self.header = header  # e.g. "for i in range(n)" or "while True"
        self.body = body if body is not None else Block()


class RevLoop(Loop):
    """A reversed loop, ``for _ in range(counter)``, that does not read its trip's index:
    the tape planning may read its pops by trip (see tape.by_trip)."""

    __slots__ = ("counter",)

    def __init__(self, header, body, counter):
        super().__init__(header, body)
        self.counter = counter


class Raw:
    """Several pre-formatted lines (a nested def), indented as a unit; origin is the
    user's line it came from (nested functions are read from the user's file)."""

    __slots__ = ("lines", "origin")

    def __init__(self, lines, origin=None):
        self.lines = lines
        self.origin = origin


class Save:
    """Before a primal assignment: keep the old value if the backward pass needs it."""

    __slots__ = ("name", "in_loop", "keeps_shape", "copies", "invariant")

    def __init__(self, name, in_loop):
        self.name = name
        self.in_loop = in_loop
        # in a loop, a number computed from what the loop never rebinds, by a name bound
        # nowhere else (`mul = dt * k`): the same value every trip, never taped
        self.invariant = False
        self.keeps_shape = False  # before `name[i] = v`: the new value has the old shape
        # before a change in place that the forward code makes as Python does (a value
        # with no gradient: see InPlaceMixin.snapshot_writes): keep a copy, not the object
        self.copies = False


class Restore:
    """In the backward pass, after the adjoint of an assignment: put the old value back."""

    __slots__ = ("save",)

    def __init__(self, save):
        self.save = save


class Release:
    """In the backward pass, where an array adjoint has been passed on: let go of it
    (``b_z = None``) when another adjoint may be the same array and is added to later,
    so that the addition can happen in place (runtime.acc and friends add in place
    only into an array nothing else holds)."""

    __slots__ = ("name", "targets")

    def __init__(self, name, targets):
        self.name = name
        self.targets = targets


class LoopInit:
    """Before a primal loop: give names first bound inside it a value the tape can save."""

    __slots__ = ("names", "loop")

    def __init__(self, names):
        self.names = names
        self.loop = None


class ForHeader:
    """`for target in it`, or `for target_ in it` + a saved copy when target is restored."""

    def __init__(self, target, alias, it, save):
        self.target = target
        self.alias = alias
        self.it = it
        self.save = save


class Copy:
    """`target = target_` at the top of a loop body, when the loop target is restored."""

    def __init__(self, header):
        self.header = header


def saves_in(block):
    """The Save markers of a block, nested blocks included."""
    for item in block:
        if isinstance(item, Save):
            yield item
        elif isinstance(item, If):
            yield from saves_in(item.body)
            yield from saves_in(item.orelse)
        elif isinstance(item, Loop):
            yield from saves_in(item.body)


class Draft:
    """What the reverse pass hands on: the forward blocks, the pullback's entry (pre),
    body and return line, with their markers unresolved, and the names the later passes
    read (none of them is written after the reverse pass)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def pair_text(draft, fwd_lines, pb_lines, passed):
    """The pair's source: the forward lines, then the pullback receiving the values it
    reads (passed) as default arguments."""
    lines = [f"def {draft.pair_name}({draft.params}):"]
    lines.extend(map("    ".__add__, fwd_lines))
    # a local value read only for its shape and dtype is passed as _rt.shape_like(value):
    # the pullback does not keep its data alive (the caller holds the arguments anyway)
    read = names_read(map(blank_likes, pb_lines))
    read |= set(draft.params_names) | set(draft.freevars)
    params = ", ".join([draft.seed] + [
        f"{n}={n}" if n in read else f"{n}=_rt.shape_like({n})" for n in passed])
    lines.append(f"    def {draft.pullback_name}({params}):")
    lines.extend(map("        ".__add__, pb_lines))
    lines.append(f"    return {draft.result}, {draft.pullback_name}")
    return "\n".join(fix_empty_blocks(lines)) + "\n"


def render(block, indent, resolve, out):
    """Append the lines of block to out; resolve(marker) gives a marker's lines."""
    pad = "    " * indent
    for item in block:
        if type(item) is str:  # (most items: a line)
            out.append(pad + item)
        elif isinstance(item, If):
            body, orelse = [], []
            render(item.body, indent + 1, resolve, body)
            render(item.orelse, indent + 1, resolve, orelse)
            if not body and not orelse:
                continue
            if not body:
                out.append(f"{pad}if not {item.test}:")
                out.extend(orelse)
                continue
            out.append(f"{pad}if {item.test}:")
            out.extend(body)
            if orelse:
                out.append(f"{pad}else:")
                out.extend(orelse)
        elif isinstance(item, Loop):
            body = []
            render(item.body, indent + 1, resolve, body)
            header = item.header if isinstance(item.header, str) else resolve(item.header)[0]
            out.append(f"{pad}{header}:")
            out.extend(body or [pad + "    pass"])
        elif isinstance(item, Raw):
            out.extend(pad + line if line else line for line in item.lines)
        else:
            for line in resolve(item):
                out.append(pad + line)
    return out
