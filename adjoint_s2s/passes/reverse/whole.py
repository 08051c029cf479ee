"""The reverse pass, whole expressions: ``x = e`` with e arithmetic on numbers that the
normaliser kept whole (passes/whole.py), differentiated as one expression.

The forward code is the user's expression, with a name for each value the pullback reads
(the other factor of a product whose operand is an expression, the argument of
``math.sin`` when it is one, a quotient that is not the whole value); the pullback adds
each name's contribution directly, the incoming adjoint times the partials along its
path. An adjoint that two operands share is named once when it is an expression.

Before (normalised, ``v2``, ``v1`` and ``y`` numbers, kept whole)::

    v3 = 0.5 * v2 * v1 + y

After::

    mul = 0.5 * v2
    v3 = mul * v1 + y
    ...
    b_y = b_y + b_v3
    b_v1 = b_v3 * mul
    b_v2 = b_v3 * v1 * 0.5

The order of the lines is the order the one-operation statements would give: the root's
operands first, then the operands' own (right to left, as their statements come back).
"""
import math

import gast

from ... import rules as R
from ..activity import BINOP_NAMES, REAL
from ..whole import ATOM, Undo, children, compose, hint, real_primitive, text
from .common import NUM, _contribution, _pow_const_partial, fill

_LEAVES = (gast.Name, gast.Constant)
_IDENTS = {}  # template -> the identifiers it reads


def _idents(template):
    got = _IDENTS.get(template)
    if got is None:
        got = _IDENTS[template] = frozenset(R._IDENT.findall(template))
    return got


_PLANS = {}  # (an operator or rule, whether each operand carries a gradient) -> _plan's


def _plan(key):
    """The items of a node of key, one per operand that carries a gradient, as the rules'
    templates give them: (the operand's index, its template, the names of the values the
    template reads, where each comes from (an operand's index; -1: the node's own value),
    whether it is an adjoint template rather than a partial)."""
    op, ca, cb = key
    if op is None:  # a square, x * x
        items = [(0, "2 * a", False)] if ca else []
    elif op is gast.Pow:
        pa = _pow_const_partial(cb, True)
        items = [(0, pa, False)] if ca and pa is not None else []
    elif op in (gast.USub, gast.UAdd):
        items = [(0, "-1" if op is gast.USub else "1", False)] if ca else []
    elif isinstance(op, R.Primitive):  # a math function
        p = op.params[0]
        adj = op.adjoints.get(p)
        items = [(0, adj if adj is not None else op.partials[p], adj is not None)] if ca else []
        index = {p: 0, "ans": -1}
    else:
        _, pa, pb = R.operators.BINARY[BINOP_NAMES[op]]
        items = [(i, t, False) for i, t, c in ((0, pa, ca), (1, pb, cb)) if c]
    if not isinstance(op, R.Primitive):
        index = {"a": 0, "b": 1, "ans": -1}
    out = []
    for i, t, adjoint in items:
        names = tuple(n for n in sorted(_idents(t)) if n in index)
        out.append((i, t, names, tuple(index[n] for n in names), adjoint))
    return tuple(out)


class WholeMixin:
    """``whole``: the forward lines and the recipe of a statement kept whole."""

    def whole(self, x, e, fwd):
        parts = {}  # id(node) -> ([(operand, template, an adjoint template?)], {template name: operand})
        named = set()  # ids of the nodes whose values the pullback reads
        carries = self._whole_plan(e, e, parts, named)
        values = {}  # id(node) -> the name its value is bound to
        fwd.append(f"{x} = {self._whole_forward(e, e, named, values, fwd)[0]}")
        if not carries or x not in self.active:
            return None
        values[id(e)] = x

        def rev(st):
            s = st.status.get(x)
            if s is None:
                return
            if s == NUM:
                self._whole_back(st, e, st.adj(x), parts, values)
            else:
                self.read_g(st, x, lambda g, num: self._whole_back(st, e, g, parts, values))

        return rev

    def _whole_plan(self, node, root, parts, named):
        """Whether node's value depends on an active name; parts[id(node)]: the operands
        that do with their templates; named: the nodes whose values those templates read."""
        cls = node.__class__
        if cls is gast.Name:
            return node.id in self.active
        if cls is gast.Constant:
            return False
        if cls is gast.BinOp:
            left, right, op = node.left, node.right, node.op.__class__
            ca = self._whole_plan(left, root, parts, named)
            cb = self._whole_plan(right, root, parts, named)
            if op is gast.Pow:
                key = (op, ca, right.value)
            elif op is gast.Mult and left.__class__ is gast.Name and right.__class__ is gast.Name \
                    and left.id == right.id:
                key = (None, ca, None)  # a square: one contribution
            else:
                key = (op, ca, cb)
            operands = (left, right)
        elif cls is gast.UnaryOp:
            ca = self._whole_plan(node.operand, root, parts, named)
            key, operands = (node.op.__class__, ca, None), (node.operand,)
        else:  # a math function of one argument
            prim = self._whole_rule(node.func)
            ca = self._whole_plan(node.args[0], root, parts, named)
            key, operands = (prim, ca, None), (node.args[0],)
        plan = _PLANS.get(key)
        if plan is None:
            plan = _PLANS[key] = _plan(key)
        parts[id(node)] = (plan, operands)
        for _, _, _, reads, _ in plan:
            for i in reads:
                if i < 0:
                    if node is not root:
                        named.add(id(node))
                elif operands[i].__class__ not in _LEAVES:
                    named.add(id(operands[i]))
        return bool(plan)

    def _whole_rule(self, func):
        """The rule of `math.f` (resolved, noted as a dependency, once per function)."""
        key = (func.value.id, func.attr)
        memo = self.__dict__.setdefault("_whole_rules", {})
        prim = memo.get(key)
        if prim is None:
            obj = self.resolve(func)
            prim = real_primitive(obj) if obj is not None and getattr(math, func.attr, None) is obj else None
            if prim is None:
                raise Undo(func.attr)  # (verify checked it: not the rule it was)
            self.note_dep(obj)
            self.note_helpers(prim.path)
            memo[key] = prim
        return prim

    def _whole_forward(self, node, root, named, values, fwd):
        """(source, precedence) of node, after the lines binding the named values below it
        (and node's own), in the order Python computes them."""
        parts = [(c.id, ATOM) if c.__class__ is gast.Name else self._whole_forward(c, root, named, values, fwd)
                 for c in children(node)]
        got = compose(node, parts)
        if id(node) in named and node is not root:
            tmp = self.fresh_local(hint(node, values), fwd, self.depth)
            if self.depth and self.invariant_value(node):  # (`dt * k` in a loop: not taped)
                self.saves[-1].invariant = True
            self.kinds[tmp] = REAL
            fwd.append(f"{tmp} = {got[0]}")
            values[id(node)] = tmp
            return tmp, ATOM
        return got

    def _whole_back(self, st, node, g, parts, values):
        """Add g (node's adjoint, an expression) through node to the names below it."""
        plan, operands = parts[id(node)]
        if not plan:
            return
        if len(plan) > 1 and not g.isidentifier():  # (g read twice: named once)
            tmp = values.get(id(node))  # (the adjoint of its named value: b_mul for mul)
            if tmp is None:
                tmp = self.namer.fresh(hint(node, values))
                self.kinds[tmp] = REAL
            b = self.adj_name(tmp)
            st.line(f"{b} = {g}")
            g = b
        out = []
        for i, t, names, reads, adjoint in plan:
            if reads:  # (the values the template reads: most read none)
                mapping = {"g": g, "ans": values.get(id(node))}
                for k, j in zip(names, reads):
                    if j >= 0:
                        mapping[k] = self._whole_value(operands[j], values)
                d = fill(t, mapping)
            else:
                d = t
            if adjoint:
                c = d if reads else fill(t, {"g": g})
            else:
                c = g[1:] if d == "-1" and g.startswith("-") and not g.startswith("-(") else \
                    _contribution(g, d, "real", REAL, None)
            if "." in c:
                self.note_helpers(c)
            out.append((operands[i], c))
        for o, c in out:  # the names first, in the order of the operands
            if o.__class__ is gast.Name:
                st.acc(o.id, c, True)
        for o, c in reversed(out):  # then the expressions, the last one first
            if o.__class__ is not gast.Name:
                self._whole_back(st, o, c, parts, values)

    def _whole_value(self, node, values):
        """The source of an operand's value in a template: its name, the constant, or (an
        expression no template reads) the expression."""
        cls = node.__class__
        if cls is gast.Name:
            return node.id
        got = values.get(id(node))
        if got is not None:
            return got
        src_, prec = text(node, values)
        return src_ if prec == ATOM else f"({src_})"

