"""Printing a folded line again from its tree: the same expression with minimal
parentheses, as ``ast.unparse`` prints it. The clean-ups fold a temporary into the line
that reads it as ``(E)`` (``blockclean.fold_pure_temps``, ``blockclean._fold_rebindings``);
``reprint`` then drops the parentheses the precedence rules do not need.

Before: ``v4 = (math.sin(v3)) + (0.5 * v2)``; after: ``v4 = math.sin(v3) + 0.5 * v2``.
"""
import ast
import functools
import keyword
import math
import re


def reprint(line):
    """``target = E`` with E printed again from its tree (minimal parentheses).

    Printed once per *shape*: E with each distinct plain name replaced by a placeholder
    (``_0``, ``_1``, ...; keywords, attribute names and numbers stay). The printer reads
    a name only for its id, so the shape's print with the names put back is E's print.
    Folded lines repeat a few shapes (``a = (math.sin(b)) + (0.5 * c)``), and parsing is
    most of the cost. A line with a string or a comment is printed directly. A line of
    ASCII with no keyword that the arithmetic printer prints has one shape for all its
    names (_HOLE each): that printer prints every name once and keeps their order, so
    the names go back in the order of the line, with no table of placeholders."""
    target, rhs = line.split(" = ", 1)
    if "'" in rhs or '"' in rhs or "#" in rhs:
        return f"{target} = {_print_again(rhs)}"
    parts = _PLAIN_NAME.split(rhs)  # text, name, text, name, ..., text
    if rhs.isascii() and _KEYWORDS.isdisjoint(parts[1::2]):
        # (most lines) one hole for every name: arithmetic prints each name once, in order
        pieces = _printed_parts(_HOLE.join(parts[::2]), True)
        if pieces is not None and len(pieces) * 2 - 1 == len(parts):
            parts[::2] = pieces
            return f"{target} = " + "".join(parts)
    names = {}  # name -> its placeholder
    for k in range(1, len(parts), 2):
        word = parts[k]
        if word not in _KEYWORDS:
            got = names.get(word)
            if got is None:
                got = names[word] = f"_{len(names)}"
            parts[k] = got
    back = {v: k for k, v in names.items()}
    printed = _printed_parts("".join(parts))
    return f"{target} = " + "".join([back.get(p, p) if k % 2 else p for k, p in enumerate(printed)])


# an ASCII name not part of a longer (or non-ASCII) name, not an attribute: what the
# parser takes as it is (it normalises non-ASCII names, which therefore stay in the shape)
# (the look behind after the first letter, where it reads the same: re then finds where a
# name may start by its first character)
_PLAIN_NAME = re.compile(r"([A-Za-z_](?<![\w.][A-Za-z_])[A-Za-z0-9_]*)(?!\w)")
_KEYWORDS = frozenset(keyword.kwlist)


# the hole of a shape with one for every name: an identifier the parser keeps as it is,
# never in a line of ASCII
_HOLE = "\u03a9"


@functools.lru_cache(maxsize=4096)
def _printed_parts(shape, holes=False):
    """_print_again(shape) split around its plain names (as reprint splits a line). holes:
    the shape has _HOLE for every name; its print split around them where the arithmetic
    printer prints it (each name once, in the order of the text), else None."""
    if not holes:
        return tuple(_PLAIN_NAME.split(_print_again(shape)))
    try:
        return tuple(unparse_arithmetic(ast.parse(shape, mode="eval").body).split(_HOLE))
    except (_NotArithmetic, SyntaxError):
        return None


@functools.lru_cache(maxsize=4096)
def _print_again(expr):
    """ast.unparse of the expression text (arithmetic by unparse_arithmetic)."""
    tree = ast.parse(expr, mode="eval").body
    try:
        return unparse_arithmetic(tree)
    except _NotArithmetic:
        return ast.unparse(tree)


# ----- ast.unparse for arithmetic, without its visitor -----------------------------------
# What the forward pass folds is arithmetic: names, numbers, attributes, calls, unary and
# binary operators. ast.unparse prints it through a general visitor (about 60 us a line);
# this prints the same text in a few microseconds, by the same precedence rules, and
# gives up (ast.unparse then prints the line) on anything else. A test compares the two
# on random expressions.


class _NotArithmetic(Exception):
    pass


_PRECEDENCE = {name: i for i, name in enumerate((
    "TEST", "OR", "AND", "NOT", "CMP", "BOR", "BXOR", "BAND", "SHIFT", "ARITH", "TERM",
    "FACTOR", "POWER", "AWAIT", "ATOM"))}
_TEST, _FACTOR, _POWER, _ATOM = (_PRECEDENCE[k] for k in ("TEST", "FACTOR", "POWER", "ATOM"))
_BINARY = {
    ast.Add: ("+", "ARITH"), ast.Sub: ("-", "ARITH"), ast.Mult: ("*", "TERM"),
    ast.MatMult: ("@", "TERM"), ast.Div: ("/", "TERM"), ast.Mod: ("%", "TERM"),
    ast.FloorDiv: ("//", "TERM"), ast.Pow: ("**", "POWER"), ast.LShift: ("<<", "SHIFT"),
    ast.RShift: (">>", "SHIFT"), ast.BitOr: ("|", "BOR"), ast.BitXor: ("^", "BXOR"),
    ast.BitAnd: ("&", "BAND"),
}
_BINARY = {k: (op, _PRECEDENCE[p]) for k, (op, p) in _BINARY.items()}
_UNARY = {ast.Invert: ("~", _FACTOR), ast.Not: ("not ", _PRECEDENCE["NOT"]),
          ast.UAdd: ("+", _FACTOR), ast.USub: ("-", _FACTOR)}


def unparse_arithmetic(node, precedence=_TEST):
    """ast.unparse(node) for a tree of names, finite int and float constants, attributes,
    calls (no starred arguments), unary and binary operators; _NotArithmetic otherwise.
    precedence: what the context requires, as ast.unparse's _Precedence (TEST at the top)."""
    kind = type(node)
    if kind is ast.Name:
        return node.id
    if kind is ast.BinOp:
        op, own = _BINARY[type(node.op)]
        after = min(own + 1, _ATOM)
        left, right = (after, own) if own == _POWER else (own, after)  # ** groups right
        text = f"{unparse_arithmetic(node.left, left)} {op} {unparse_arithmetic(node.right, right)}"
        return f"({text})" if precedence > own else text
    if kind is ast.Constant:
        value = node.value
        if type(value) is int or (type(value) is float and math.isfinite(value)):
            return repr(value)
        raise _NotArithmetic
    if kind is ast.Call:
        parts = []
        for a in node.args:
            if type(a) is ast.Starred:
                raise _NotArithmetic
            parts.append(unparse_arithmetic(a))
        for k in node.keywords:
            parts.append((f"{k.arg}=" if k.arg is not None else "**") + unparse_arithmetic(k.value))
        return f"{unparse_arithmetic(node.func, _ATOM)}({', '.join(parts)})"
    if kind is ast.Attribute:
        space = " " if type(node.value) is ast.Constant and type(node.value.value) is int else ""
        return f"{unparse_arithmetic(node.value, _ATOM)}{space}.{node.attr}"
    if kind is ast.UnaryOp:
        op, own = _UNARY[type(node.op)]
        text = op + unparse_arithmetic(node.operand, own)
        return f"({text})" if precedence > own else text
    raise _NotArithmetic
