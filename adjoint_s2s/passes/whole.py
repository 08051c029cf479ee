"""Whole expressions of numbers: what the normaliser leaves unsplit, and how it is checked.

Most lines of scalar code are arithmetic on numbers: ``v = 0.5 * a * b + math.sin(c)``.
Split into one operation per statement, such a line is three statements that every
pass after the normaliser handles one by one (kinds, activity, liveness, the reverse
pass, the clean-up that folds the temporaries back), where one would do. So the
normaliser keeps it whole when it can tell from the names alone that it is arithmetic
on numbers: ``+ - * /``, ``**`` of an integer constant, a sign, and the ``math``
functions with a one-argument rule of real numbers (``math.sin``, ``math.exp``...),
on constants and on names that hold numbers (``number_names``: the parameters the key
says are numbers, and the names each of whose bindings is such arithmetic, a range's
counter or an item of a display of them). The reverse pass differentiates it as one
expression (reverse/whole.py): it names the values the pullback reads (``mul = 0.5 *
a``) and nothing else, and adds each name's contribution directly.

That the names hold numbers is a guess until the kinds are known: ``verify`` checks it
after the analysis (every name a whole expression reads and binds is a number, every
function is the rule's), and raises ``Undo`` where it fails (a parameter rebound to an
array further down): the transform then starts again with nothing kept whole, which is
the code this pass's absence gives.

Before (normalised as one statement, ``a`` and ``b`` numbers)::

    v = 0.5 * a * b + math.sin(a)

After the reverse pass and the clean-up::

    mul = 0.5 * a
    v = mul * b + math.sin(a)
    ...
    b_a = b_v * math.cos(a)
    b_b = b_v * mul
    b_a = b_a + b_v * b * 0.5
"""
import math

import gast

from .. import rules as R
from ..kinds import REAL
from ..naming import BINOP_HINTS

ROOTS = frozenset((gast.BinOp, gast.UnaryOp, gast.Call))  # (the nodes a whole expression starts from)
_OPS = frozenset((gast.Add, gast.Sub, gast.Mult, gast.Div))
_SIGNS = frozenset((gast.USub, gast.UAdd))
_NUMBERS = (int, float)
MAX_POWER = 64  # `x ** n` kept whole up to this |n| (its partial spells n - 1 out)


class Undo(Exception):
    """A whole expression's names are not all numbers: transform again without them."""


def real_primitive(fn):
    """The one-argument rule of real numbers of fn (a ``math`` function), or None: a
    primitive whose one parameter has a partial or an adjoint template, and no user rule
    in its place."""
    try:
        prim = R.lookup_primitive(fn, 1)
    except TypeError:  # (an unhashable object)
        return None
    if prim is None or prim.kind != "real" or len(prim.params) != 1 or R.lookup_user(fn) is not None:
        return None
    p = prim.params[0]
    if prim.partials.get(p) is None and prim.adjoints.get(p) is None:
        return None
    return prim


def math_calls(math_names):
    """The test the normaliser asks of ``m.f(...)``: is m a name of the math module and f
    a function of it with a rule of real numbers?"""
    memo = {}

    def test(module, attr):
        if module not in math_names:
            return False
        got = memo.get(attr)
        if got is None:
            got = memo[attr] = real_primitive(getattr(math, attr, None)) is not None
        return got

    return test


def operations(node, numbers, math_call):
    """How many operations node is, when it is arithmetic on numbers the normaliser keeps
    whole (names in `numbers`, constants; see the module docstring), else -1 (also for
    None). A sign of a constant is a constant."""
    cls = node.__class__
    if cls is gast.Name:
        return 0 if node.id in numbers else -1
    if cls is gast.Constant:
        return 0 if type(node.value) in _NUMBERS else -1
    if cls is gast.BinOp:
        op = node.op.__class__
        if op is gast.Pow:
            r = node.right
            if r.__class__ is not gast.Constant or type(r.value) not in _NUMBERS \
                    or not float(r.value).is_integer() or abs(r.value) > MAX_POWER:
                return -1
        elif op not in _OPS:
            return -1
        a = operations(node.left, numbers, math_call)
        b = operations(node.right, numbers, math_call) if a >= 0 else -1
        return -1 if b < 0 else a + b + 1
    if cls is gast.UnaryOp:
        if node.op.__class__ not in _SIGNS:
            return -1
        if node.operand.__class__ is gast.Constant:
            return 0 if type(node.operand.value) in _NUMBERS else -1
        a = operations(node.operand, numbers, math_call)
        return -1 if a < 0 else a + 1
    if cls is gast.Call:
        f = node.func
        if (len(node.args) != 1 or node.keywords or f.__class__ is not gast.Attribute
                or f.value.__class__ is not gast.Name or not math_call(f.value.id, f.attr)):
            return -1
        a = operations(node.args[0], numbers, math_call)
        return -1 if a < 0 else a + 1
    return -1


def number_names(fn_node, numbers, math_call):
    """The names of fn_node (before normalisation) taken for numbers: the parameters and
    captured variables in numbers (those the key says are numbers) that the function
    does not bind otherwise, and the other names each of whose bindings anywhere in the
    function is arithmetic on such names and constants (whole.operations), a counter of
    a range, or an item of a display of them (`a, b = 1.0, 0.0`); no parameter of another
    kind, no name bound any other way (a call's result, a subscript, a loop over a list,
    a with, an import, a nested function's nonlocal). Its own fixed point over the
    bindings, blind to their order, as the kinds are."""
    a = fn_node.args
    bound = {p.id: [] for p in a.posonlyargs + a.args + a.kwonlyargs}
    for p in (a.vararg, a.kwarg):
        if p is not None:
            bound[p.id] = [None]
    for name in bound:
        if name not in numbers:
            bound[name].append(None)
    _bindings(fn_node.body, bound)
    names = {n for n, vs in bound.items() if None not in vs} | (set(numbers) - bound.keys())
    changed = True
    while changed:
        changed = False
        for n in list(names):
            if any(operations(v, names, math_call) < 0 for v in bound.get(n, ())):
                names.discard(n)
                changed = True
    return names


_ZERO = gast.Constant(value=0, kind=None)  # (what a range's counter is, to number_names)


def _bindings(stmts, bound):
    """Add each name's bound values (None: not arithmetic) in stmts to bound."""
    for s in stmts:
        cls = s.__class__
        if cls is gast.Assign:
            for t in s.targets:
                _bind(t, s.value, bound)
        elif cls is gast.AugAssign and s.target.__class__ is gast.Name:
            left = gast.Name(id=s.target.id, ctx=gast.Load(), annotation=None, type_comment=None)
            bound.setdefault(s.target.id, []).append(gast.BinOp(left=left, op=s.op, right=s.value))
        elif cls is gast.AnnAssign and s.value is not None:
            _bind(s.target, s.value, bound)
        elif cls is gast.For:
            it = s.iter
            counter = (it.__class__ is gast.Call and it.func.__class__ is gast.Name and it.func.id == "range"
                       and not it.keywords)
            _bind(s.target, _ZERO if counter else None, bound)
            _bindings(s.body, bound)
            _bindings(s.orelse, bound)
        elif cls is gast.If or cls is gast.While:
            _bindings(s.body, bound)
            _bindings(s.orelse, bound)
        elif cls in (gast.Expr, gast.Return, gast.Pass, gast.Break, gast.Continue, gast.Raise, gast.Assert):
            continue
        else:  # (with, try, def, class, import, global, del...: every name they bind, unknown)
            for n in gast.walk(s):
                if n.__class__ is gast.Name and n.ctx.__class__ is not gast.Load:
                    bound.setdefault(n.id, []).append(None)
                elif n.__class__ in (gast.FunctionDef, gast.ClassDef, gast.AsyncFunctionDef):
                    bound.setdefault(n.name, []).append(None)
                elif n.__class__ in (gast.Global, gast.Nonlocal):
                    for name in n.names:
                        bound.setdefault(name, []).append(None)
                elif n.__class__ is gast.alias:
                    bound.setdefault((n.asname or n.name).split(".")[0], []).append(None)


def _bind(target, value, bound):
    cls = target.__class__
    if cls is gast.Name:
        bound.setdefault(target.id, []).append(value)
    elif cls is gast.Tuple or cls is gast.List:
        items = value.elts if value is not None and value.__class__ in (gast.Tuple, gast.List) else ()
        if len(items) == len(target.elts) and not any(
                e.__class__ is gast.Starred for e in [*items, *target.elts]):
            for t, v in zip(target.elts, items):
                _bind(t, v, bound)
        else:
            for t in target.elts:
                _bind(t.value if t.__class__ is gast.Starred else t, None, bound)
    elif cls is gast.Starred:
        _bind(target.value, None, bound)
    # (a subscript or an attribute binds no name)


def fold_signs(node, names, calls):
    """node with each sign of a constant folded into it (-1.0 a constant), in place; the
    names it reads added to names, its calls to calls (what whole_kind and verify ask)."""
    cls = node.__class__
    if cls is gast.Name:
        names.add(node.id)
    elif cls is gast.BinOp:
        node.left = fold_signs(node.left, names, calls)
        node.right = fold_signs(node.right, names, calls)
    elif cls is gast.UnaryOp:
        if node.operand.__class__ is gast.Constant:
            v = node.operand.value
            return gast.Constant(value=-v if node.op.__class__ is gast.USub else v, kind=None)
        node.operand = fold_signs(node.operand, names, calls)
    elif cls is gast.Call:
        calls.append(node)
        node.args[0] = fold_signs(node.args[0], names, calls)
    return node


def hint(node, values=None):
    """The name a value of node is given, as the normaliser names its temporaries:
    `mul`, `neg`, `sin_x`, `exp_neg` (what the argument's own temporary would be called)."""
    cls = node.__class__
    if cls is gast.Name:
        return node.id
    if values and id(node) in values:
        return values[id(node)]
    if cls is gast.Call:
        arg = node.args[0]
        return node.func.attr if arg.__class__ is gast.Constant else f"{node.func.attr}_{hint(arg, values)}"
    if cls is gast.BinOp:
        return BINOP_HINTS[node.op.__class__]
    return "neg" if node.op.__class__ is gast.USub else "pos"


def whole_kind(q, e):
    """The kind of a whole expression (e.whole: the names it reads, its calls), asked of q
    (the analysis): REAL when every name it reads is a number, else OTHER (verify then
    undoes it)."""
    kinds = q.kinds
    return REAL if all(kinds.get(n) == REAL for n in e.whole[0]) else "other"


def whole_reads(fn_node):
    """{id(e): the names e reads} of the whole expressions of a normalised function (what
    naming.names_in(e, gast.Load) would find: the module of a call too), from what the
    normaliser noted of them."""
    out = {}
    for s in getattr(fn_node, "wholes", ()):
        names, calls = s.value.whole
        out[id(s.value)] = names | {c.func.value.id for c in calls} if calls else names
    return out


def children(e):
    """The operands of a node of a whole expression (none for a name or a constant)."""
    cls = e.__class__
    if cls is gast.BinOp:
        return (e.left, e.right)
    if cls is gast.UnaryOp:
        return (e.operand,)
    if cls is gast.Call:
        return (e.args[0],)
    return ()


def leaves(e):
    """The names and constants a whole expression computes from (its operands, to the
    reverse pass's checks: names, as after one operation a statement)."""
    if e.__class__ in (gast.Name, gast.Constant):
        return [e]
    return [leaf for child in children(e) for leaf in leaves(child)]


def verify(facts, wholes):
    """Raise Undo unless each whole statement (`t = e`) binds a number and e reads only
    numbers and calls the math functions the normaliser took it for (now resolved)."""
    kinds, seen = facts.kinds, set()
    for s in wholes:
        names, calls = s.value.whole
        for n in (s.targets[0].id, *names):
            if kinds.get(n) != REAL:
                raise Undo(n)
        for e in calls:
            key = (e.func.value.id, e.func.attr)
            if key in seen:
                continue
            obj = facts.resolve(e.func)
            if obj is None or getattr(math, e.func.attr, None) is not obj or real_primitive(obj) is None:
                raise Undo(e.func.attr)
            seen.add(key)


# ----- printing, with the parentheses Python's precedence needs --------------------------------

_PREC = {gast.Add: 1, gast.Sub: 1, gast.Mult: 2, gast.Div: 2, gast.Pow: 4}
_SYMBOL = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**"}
ATOM = 5  # (a name, a constant, a call)
SIGN = 3


def text(e, values):
    """(source, precedence) of a whole expression, each node in values (by id) printed as
    the name given there."""
    got = values.get(id(e))
    if got is not None:
        return got, ATOM
    return compose(e, [text(c, values) for c in children(e)])


def compose(e, parts):
    """(source, precedence) of node e, given (source, precedence) of each of its children."""
    cls = e.__class__
    if cls is gast.Name:
        return e.id, ATOM
    if cls is gast.Constant:  # (-0.1 * a as written: a sign binds closer than *, not than **)
        r = repr(e.value)
        return (f"({r})" if "inf" in r or "nan" in r else r), SIGN if r[0] == "-" else ATOM
    if cls is gast.BinOp:
        op = e.op.__class__
        p = _PREC[op]
        (a, pa), (b, pb) = parts
        if pa < p or op is gast.Pow and pa == p:  # ((a ** b) ** c, (-a) ** 2)
            a = f"({a})"
        if pb < p or pb == p and op is not gast.Pow or b[0] == "-":  # a - (b - c), a / (b * c), a * (-2.0)
            b = f"({b})"
        return f"{a} {_SYMBOL[op]} {b}", p
    if cls is gast.UnaryOp:
        a, pa = parts[0]
        return f"{'-' if e.op.__class__ is gast.USub else '+'}{a if pa >= SIGN and a[0] not in '-+' else f'({a})'}", SIGN
    f = e.func
    return f"{f.value.id}.{f.attr}({parts[0][0]})", ATOM
