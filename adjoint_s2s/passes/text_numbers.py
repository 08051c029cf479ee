"""Numbers parsed back from text made from a differentiated value: refused.

``float(str(x))``, ``float(f"{x:.17g}")``, ``float("%r" % x)`` give x's value back, but
text carries no tangent: through it the gradient would be zero, silently (``float(str(x))
* x`` gave 0.7 where 1.4 is right). Text made from a differentiated value (``str``,
``repr``, ``format``, ``ascii``, an f-string, ``%`` or ``.format`` of a string), and text
made from such text (its methods, items, slices, sums), may be printed, compared, measured
and kept; parsed into a number (``float``, ``complex``, NumPy's number types,
``np.array``, ``Decimal``, ``Fraction``) it is refused, with the way out.

Asked of the normalised function after the activity analysis (each statement one
operation on names and constants), in rounds: a loop may carry text around its back edge.
"""
import decimal
import fractions

import gast
import numpy as np

from ..errors import UnsupportedSyntaxError
from .queries import walk_block

_TEXT_FUNCS = (str, repr, format, ascii)
_TEXT_NAMES = frozenset(f.__name__ for f in _TEXT_FUNCS)
_PARSERS = (float, complex, np.float64, np.float32, np.float16, np.longdouble, np.complex128,
            np.complex64, np.array, np.asarray, np.asanyarray, decimal.Decimal, fractions.Fraction)


def check_text_numbers(fn_node, facts, filename):
    """Raise UnsupportedSyntaxError where a number is parsed from text made from a
    differentiated value (facts: the activity analysis of fn_node)."""
    every = getattr(facts, "statements", None) or list(walk_block(fn_node.body))
    if not any(s.__class__ is gast.Assign and _may_make_text(s.value) for s in every):
        return  # (no text is made: most functions)
    stmts = [s for s in every if s.__class__ is gast.Assign and len(s.targets) == 1]
    texts = set()
    for _ in range(3):
        before = len(texts)
        for s in stmts:
            v, t = s.value, s.targets[0]
            if v.__class__ is gast.Call and any(a.__class__ is gast.Name and a.id in texts for a in v.args):
                _check_parser(s, v, facts, texts, filename)
            if t.__class__ is gast.Name and t.id not in texts and _makes_text(v, facts, texts):
                texts.add(t.id)
        if len(texts) == before:
            return


def _may_make_text(v):
    """Whether v may start text (the check's quick test of a function: most make none)."""
    cls = v.__class__
    if cls is gast.Call:
        f = v.func
        return (f.__class__ is gast.Name and f.id in _TEXT_NAMES
                or f.__class__ is gast.Attribute and f.value.__class__ is gast.Constant)
    return cls is gast.JoinedStr or (
        cls is gast.BinOp and v.op.__class__ is gast.Mod and v.left.__class__ is gast.Constant)


def _makes_text(v, facts, texts):
    """Is v (one normalised operation) text made from a differentiated value or from such
    text?"""
    read = facts.reads(v)
    if not read or read.isdisjoint(facts.active) and read.isdisjoint(texts):
        return False
    cls = v.__class__
    if cls is gast.JoinedStr:
        return True
    if cls is gast.Name:
        return v.id in texts
    if cls is gast.Subscript:  # s[:5]
        return v.value.__class__ is gast.Name and v.value.id in texts
    if cls is gast.List or cls is gast.Tuple:  # [s], for np.array([s], dtype=float)
        return any(e.__class__ is gast.Name and e.id in texts for e in v.elts)
    if cls is gast.BinOp:
        left = v.left
        if v.op.__class__ is gast.Mod and left.__class__ is gast.Constant and isinstance(left.value, str):
            return True  # "%r" % x
        return v.op.__class__ is gast.Add and any(
            side.__class__ is gast.Name and side.id in texts for side in (v.left, v.right))
    if cls is not gast.Call:
        return False
    f = v.func
    if f.__class__ is gast.Attribute:
        base = f.value
        if base.__class__ is gast.Constant and isinstance(base.value, str):
            return True  # "{}".format(x), ", ".join(...)
        return base.__class__ is gast.Name and base.id in texts  # s.strip(), s.replace(...)
    obj = facts.resolve(f)
    return any(obj is fn for fn in _TEXT_FUNCS)


def _check_parser(s, call, facts, texts, filename):
    obj = facts.resolve(call.func)
    if not any(obj is p for p in _PARSERS):
        return
    line = getattr(s, "src_line", None) or getattr(s, "lineno", 0)
    raise UnsupportedSyntaxError(
        f"`{getattr(obj, '__name__', 'a number type')}()` of text made from a differentiated value "
        "(by str, repr, format, an f-string or `%`): text carries no gradient, so the gradient "
        "through it would be zero",
        filename, line, None,
        "use the number itself; to round it, use round(x, n) or np.round(x, n), whose "
        "gradient adjoint_s2s knows")
