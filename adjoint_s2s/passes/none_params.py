"""Parameters left to a default of None: their tests folded before normalisation.

``def f(x, theta0=None)`` called without ``theta0`` runs code made for that call's key,
in which the parameter's kind says it holds None (``kinds.NONE``, noted only for a
default or a keyword, checked at each call as every kind of the key is). Where the code
tests it before anything can bind it again, the test's value is known::

    th = theta0 if theta0 is not None else 1.0      ->  th = 1.0
    if theta0 is None:                               ->  theta0 = 1.0
        theta0 = 1.0

Without the fold, ``th`` (or ``theta0``) is None on one path and a float on the other:
a kind the analysis cannot name, and every line that reads it, in a loop, was dispatched
at run time (about 400 times the plain call for a 200-step pendulum).

Only ``p is None`` and ``p is not None`` (either way round) are folded, then ``not`` of
a folded test, a conditional expression and an ``if`` whose test became True or False.
A test is folded only where p still holds the argument: the statements run in order,
and one that may bind p (an assignment, a loop's target, a ``def`` whose body says
``nonlocal p``...) ends the folding of p after it, and inside it wherever it could run
again (a loop's body). Nothing is folded in a lambda, a generator expression or a
nested function (they run later), nor in a comprehension that binds p for itself.

When the argument's value is never read at all (the first statement that mentions p
binds it, `theta0 = 1.0` above), the parameter takes its kind from what the function
binds it to, and gets no gradient (``dead_entry_values``).
"""
import gast

from ..kinds import NONE

_LATER = (gast.Lambda, gast.GeneratorExp, gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp)
_LOOPS = (gast.For, gast.AsyncFor, gast.While)
_ASSIGNS = (gast.Assign, gast.AugAssign, gast.AnnAssign)


def fold_none_tests(fn_node, none):
    """Fold the tests of the parameters in `none` (names known to hold None at the entry)
    in fn_node's body, in place (see the module docstring)."""
    if none:
        fn_node.body = _block(fn_node.body, set(none)) or [_pass(fn_node)]


def fold_inlined(body, ret, binds):
    """(body, ret, binds) of a helper inlined with None for some parameters (inline.py):
    the tests of the names binds bind to None and of the constant None put in the place
    of a parameter (`None is None`) folded, body's statements first, then ret, the
    expression the call gives; the binds of None that nothing reads then dropped."""
    none = {b.targets[0].id for b in binds if b.__class__ is gast.Assign and b.targets[0].__class__ is gast.Name
            and _none(b.value)}
    live = none | {None}  # (None: the constant counts as a name holding None)
    body = _block(body, live)
    ret = _expr(ret, live - _bound(ret)) if ret is not None else ret
    dead = dead_entry_values(body, none)
    if dead:
        binds = [b for b in binds if not (b.__class__ is gast.Assign and b.targets[0].__class__ is gast.Name
                                          and b.targets[0].id in dead)]
    return body, ret, binds


def dead_entry_values(body, none):
    """The parameters of `none` whose value at the entry of body (a function's
    statements) nothing reads: the first top-level statement that mentions one binds it
    (`p = E`, E not reading p)."""
    out = set()
    for p in none:
        for s in body:
            mentioned = _names(s)
            if p not in mentioned:
                continue
            if (s.__class__ is gast.Assign and any(t.__class__ is gast.Name and t.id == p for t in s.targets)
                    and p not in _names(s.value)
                    and all(t.__class__ is gast.Name or p not in _names(t) for t in s.targets)):
                out.add(p)
            break
    return out


def _block(stmts, live):
    """stmts with the tests of the names in live folded; live becomes the names still
    holding their argument after the block."""
    out = []
    for s in stmts:
        if not live:
            out.append(s)
            continue
        cls = s.__class__
        if cls is gast.If:
            in_test = _bound(s.test)  # (a walrus)
            s.test = test = _expr(s.test, live - in_test)
            live -= in_test
            if test.__class__ is gast.Constant and type(test.value) is bool:
                out.extend(_block(s.body if test.value else s.orelse, live))
                continue
            after_body, after_else = set(live), set(live)
            s.body = _block(s.body, after_body) or [_pass(s)]
            s.orelse = _block(s.orelse, after_else)
            live.intersection_update(after_body, after_else)
            out.append(s)
            continue
        bound = _bound(s)
        if cls in _LOOPS:
            if cls is not gast.While:
                s.iter = _expr(s.iter, live - _bound(s.iter))
            inner = live - bound  # (the body runs again after what it binds)
            if cls is gast.While:
                s.test = _expr(s.test, set(inner))
            s.body = _block(s.body, inner) or [_pass(s)]
            s.orelse = _block(s.orelse, live - bound)
        elif cls in _LATER:
            pass  # (its body runs later; its defaults and decorators: left as they are)
        elif hasattr(s, "body"):  # try, with: any line of it may have run before another
            inner = live - bound
            for field in ("body", "orelse", "finalbody"):
                block = getattr(s, field, None)
                if block:
                    setattr(s, field, _block(block, set(inner)) or [_pass(s)])
            for h in getattr(s, "handlers", None) or ():
                h.body = _block(h.body, set(inner)) or [_pass(h)]
        elif cls in _ASSIGNS:  # the value runs before the target is bound
            if s.value is not None:
                s.value = _expr(s.value, live - _bound(s.value))
        else:
            _fold_fields(s, live - bound)
        live -= bound
        out.append(s)
    return out


def _fold_fields(node, live):
    for field, value in gast.iter_fields(node):
        if value.__class__ is list:
            value[:] = [_expr(v, live) if isinstance(v, gast.AST) else v for v in value]
        elif isinstance(value, gast.AST):
            setattr(node, field, _expr(value, live))


def _expr(node, live):
    """node with the tests of the names in live folded (a new node where one folds)."""
    cls = node.__class__
    if not live or cls in _LATER:
        return node
    if cls in _COMPREHENSIONS:  # `[p for p in ps]`: its own p
        live = live - {n.id for g in node.generators for n in gast.walk(g.target) if n.__class__ is gast.Name}
    _fold_fields(node, live)
    if cls is gast.Compare and len(node.ops) == 1 and node.ops[0].__class__ in (gast.Is, gast.IsNot):
        a, b = node.left, node.comparators[0]
        if _none_param(a, live) and _none(b) or _none_param(b, live) and _none(a):
            return _constant(node.ops[0].__class__ is gast.Is, node)
    elif cls is gast.UnaryOp and node.op.__class__ is gast.Not and _bool(node.operand):
        return _constant(not node.operand.value, node)
    elif cls is gast.IfExp and _bool(node.test):
        return node.body if node.test.value else node.orelse
    return node


def _none_param(node, live):
    cls = node.__class__
    return cls is gast.Name and node.id in live or cls is gast.Constant and node.value is None and None in live


def _none(node):
    return node.__class__ is gast.Constant and node.value is None


def _bool(node):
    return node.__class__ is gast.Constant and type(node.value) is bool


def _constant(value, where):
    return gast.copy_location(gast.Constant(value=value, kind=None), where)


def _pass(where):
    return gast.copy_location(gast.Pass(), where)


def _bound(node):
    """The names node may bind, anywhere in it (a nested function's own names too: a
    `nonlocal` there binds the outer one when it is called)."""
    out = set()
    for n in gast.walk(node):
        cls = n.__class__
        if cls is gast.Name and n.ctx.__class__ in (gast.Store, gast.Del):
            out.add(n.id)
        elif cls in (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef):
            out.add(n.name)
        elif cls is gast.alias:
            out.add(n.asname or n.name.partition(".")[0])
        elif cls in (gast.Nonlocal, gast.Global):
            out.update(n.names)
    return out


def _names(node):
    return {n.id for n in gast.walk(node) if n.__class__ is gast.Name}


def none_parameters(fn_node, arg_kinds):
    """The parameters whose kind in arg_kinds (a cache key's, kinds.NONE for a default or
    keyword of None) says they hold None: the positional ones, then the keyword-only."""
    a = fn_node.args
    names = [p.id for p in a.posonlyargs + a.args] + ([] if a.vararg else [p.id for p in a.kwonlyargs])
    return {p for p, k in zip(names, arg_kinds) if k == NONE}
