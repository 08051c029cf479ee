"""Lazy iterators kept in a name: refused where what they read changes before they are used.

``g = (a * t for t in ts)``, ``z = zip(xs, ys)``, ``it = d.values()`` read their sources
when they are consumed, in Python; the normaliser evaluates a generator expression where
it is written (a loop building a list), and the rules of ``zip``, ``enumerate``, ``map``
and the dict views take their items when called. The two agree unless something the
iterator reads is rebound or changed in between (``a = a * 10`` before ``sum(g)``,
``xs[0] = ...`` before the loop over ``z``): then the values and the gradient would be
those of the old contents, silently. Such code is refused, with the way out: consume the
iterator where it is made, or make a list there.

The check is by statements of one block: after ``g = <lazy>``, up to the last statement
of the block that reads ``g``, nothing may bind a name the iterator reads, write into it
(an item, an attribute), call one of its methods or pass it to a call.

An iterator is also used up as it is read: ``next(it)`` then ``for v in it``, ``list(g)``
twice, ``zip(it, it)``, a read in a loop's body or in a function each call of which
reads on. Python's second read goes on where the first stopped, where the items taken
when the iterator was made would start again. A name bound to a lazy iterator and read
more than once so is refused too, with the way out: a list, read by index.
"""
import builtins

import gast

from ..errors import UnsupportedSyntaxError

_LAZY_CALLS = frozenset(("zip", "map", "filter", "enumerate", "reversed", "iter"))
_VIEWS = frozenset(("keys", "values", "items"))
_BLOCKS = ("body", "orelse", "finalbody")


def check_kept_iterators(stmts, filename, line_offset=0):
    """Raise UnsupportedSyntaxError for a lazy iterator kept in a name while what it reads
    changes before its last use, in stmts and the blocks they hold (not nested defs)."""
    for i, s in enumerate(stmts):
        for field in _BLOCKS:
            inner = getattr(s, field, None)
            if inner and s.__class__ is not gast.FunctionDef:
                check_kept_iterators(inner, filename, line_offset)
        for h in getattr(s, "handlers", None) or ():
            check_kept_iterators(h.body, filename, line_offset)
        if s.__class__ is gast.Assign and len(s.targets) == 1 and s.targets[0].__class__ is gast.Name:
            got = _lazy_reads(s.value)
            if got is not None:
                _check_read_once(stmts, i, s.targets[0].id, filename, line_offset,
                                 s.value.__class__ is gast.Call)
            if got and got[0]:
                _check_uses(stmts, i, s.targets[0].id, got, filename, line_offset)


def hand_out_generators(stmts, iter_is_builtin):
    """A generator expression that leaves the function (returned, alone or in a tuple,
    given to a function of the user's, stored in a field or an item), itself or through
    the name it is bound to: `iter(...)` of it, which hands out the items the normaliser
    computes where it is written one by one, as Python's generator does (a second reader
    after the first is refused, see rules/sequences.py; a list would be read from its
    start again). True if one was. iter_is_builtin() says whether `iter` names the
    builtin there (asked if needed)."""
    nodes = [n for s in stmts for n in gast.walk(s)]
    if not any(n.__class__ is gast.GeneratorExp for n in nodes) or not iter_is_builtin():
        return False
    slots = list(_leaving(nodes))
    named = {_slot(*s).id for s in slots if _slot(*s).__class__ is gast.Name}
    done = False
    for node, field, i in slots:
        v = _slot(node, field, i)
        if v.__class__ is gast.GeneratorExp:
            if i is None:
                setattr(node, field, _iter_of(v))
            else:
                getattr(node, field)[i] = _iter_of(v)
            done = True
    for n in nodes:
        if (n.__class__ is gast.Assign and n.value.__class__ is gast.GeneratorExp and len(n.targets) == 1
                and n.targets[0].__class__ is gast.Name and n.targets[0].id in named):
            n.value, done = _iter_of(n.value), True
    return done


def _leaving(nodes):
    """(node, field, index or None) of each place where a value leaves the function."""
    for n in nodes:
        cls = n.__class__
        if cls is gast.Return and n.value is not None:
            yield n, "value", None
            if n.value.__class__ in (gast.Tuple, gast.List):
                yield from ((n.value, "elts", i) for i in range(len(n.value.elts)))
        elif cls is gast.Call and n.func.__class__ is gast.Name and n.func.id not in _BUILTIN_NAMES:
            yield from ((n, "args", i) for i in range(len(n.args)))
            yield from ((k, "value", None) for k in n.keywords)
        elif cls is gast.Assign and any(t.__class__ in (gast.Attribute, gast.Subscript) for t in n.targets):
            yield n, "value", None


def _slot(node, field, i):
    return getattr(node, field) if i is None else getattr(node, field)[i]


_BUILTIN_NAMES = frozenset(dir(builtins))


def _iter_of(node):
    call = gast.Call(func=gast.Name(id="iter", ctx=gast.Load(), annotation=None, type_comment=None),
                     args=[node], keywords=[])
    return gast.copy_location(call, node)


def _lazy_reads(v):
    """(the names a lazy iterator expression reads, those of them Python looks up where it
    is made: rebinding them later changes nothing), or None when v is not one."""
    cls = v.__class__
    if cls is gast.GeneratorExp:
        bound = {n.id for g in v.generators for n in gast.walk(g.target) if n.__class__ is gast.Name}
        reads = {n.id for n in gast.walk(v) if n.__class__ is gast.Name and n.ctx.__class__ is gast.Load} - bound
        first = v.generators[0].iter  # (evaluated where the generator is made)
        rest = [v.elt] + list(v.generators[0].ifs) + v.generators[1:]
        later = {n.id for part in rest for n in gast.walk(part) if n.__class__ is gast.Name}
        return reads, ({first.id} - later if first.__class__ is gast.Name else set())
    if cls is not gast.Call:
        return None
    f = v.func
    if f.__class__ is gast.Name and f.id in _LAZY_CALLS:
        names = {n.id for a in v.args for n in gast.walk(a) if n.__class__ is gast.Name}
        return names, {a.id for a in v.args if a.__class__ is gast.Name}
    if f.__class__ is gast.Attribute and f.attr in _VIEWS and not v.args and f.value.__class__ is gast.Name:
        return {f.value.id}, {f.value.id}
    return None


def _check_read_once(stmts, i, g, filename, line_offset, called):
    """Refuse g read more than once, unless each read is `next(g)` of an iterator a call
    made (`iter(xs)`, `map(f, xs)`: next takes its items one by one, as Python does)."""
    if _reads_of(stmts[i + 1:], g) > 1 and not (called and _only_next(stmts[i + 1:], g)):
        raise UnsupportedSyntaxError(
            f"an iterator kept in `{g}` (a generator expression, iter, zip, map, enumerate or "
            f"reversed) read more than once (`next({g})` and a loop over it, a loop over it "
            f"twice, `zip({g}, {g})`, a read in a loop)",
            filename, getattr(stmts[i], "lineno", 0) + line_offset, None,
            f"Python's second read goes on where the first stopped, and adjoint_s2s takes the "
            f"items where the iterator is made: make a list (`items = list(...)`) and read it "
            f"by index (`items[0]`, `items[1:]`)")


def _check_uses(stmts, i, g, got, filename, line_offset):
    reads, looked_up = got
    last = None
    for j in range(i + 1, len(stmts)):
        names = {n.id for n in gast.walk(stmts[j]) if n.__class__ is gast.Name}
        if g in names:
            last = j
        if any(t.__class__ is gast.Name and t.id == g for t in getattr(stmts[j], "targets", ())):
            break  # (g bound again)
    if last is None:
        return
    for j in range(i + 1, last + 1):
        s = stmts[j]
        if j == last and s.__class__ in (gast.Assign, gast.Expr, gast.Return) and s.value is not None:
            s = s.value  # (the use itself: its targets are bound after it)
        changed = _changes(s, reads, looked_up)
        if changed:
            raise UnsupportedSyntaxError(
                f"an iterator kept in `{g}` (a generator expression, zip, map, enumerate or a "
                f"dict view) while `{changed}`, which it reads, changes before `{g}` is used",
                filename, getattr(stmts[i], "lineno", 0) + line_offset, None,
                f"adjoint_s2s takes its items where it is made; use it there (`sum(...)`), "
                f"or make a list (`list(...)`) there if the old values are meant")


def _reads_of(stmts, g):
    """How many times stmts read the name g before binding it again (2: more than once;
    a read in a loop's body, a comprehension, a lambda or a def counts as 2)."""
    count = 0
    for s in stmts:
        if s.__class__ is gast.FunctionDef and s.name == g:
            break
        count += _count(s, g, False)
        if count > 1 or any(t.__class__ is gast.Name and t.id == g for t in getattr(s, "targets", ())):
            break
    return count


def _only_next(stmts, g):
    """Whether every read of g in stmts (up to its next binding) is `next(g)` or
    `next(g, default)` outside a lambda, a def or a comprehension."""
    todo = []
    for s in stmts:
        todo.append((s, None, False))
        if any(t.__class__ is gast.Name and t.id == g for t in getattr(s, "targets", ())):
            break
    while todo:
        n, parent, nested = todo.pop()
        if n.__class__ is gast.Name and n.id == g and n.ctx.__class__ is gast.Load:
            if nested or not (parent.__class__ is gast.Call and parent.func.__class__ is gast.Name
                              and parent.func.id == "next" and parent.args and parent.args[0] is n):
                return False
        inner = nested or n.__class__ in _REPEATING
        todo.extend((c, n, inner) for c in gast.iter_child_nodes(n))
    return True


_REPEATING = (gast.Lambda, gast.FunctionDef, gast.GeneratorExp, gast.ListComp, gast.SetComp, gast.DictComp)


def _count(node, g, repeated):
    cls = node.__class__
    if cls is gast.Name:
        return (2 if repeated else 1) if node.id == g and node.ctx.__class__ is gast.Load else 0
    if cls in (gast.For, gast.While):
        head = _count(node.iter, g, repeated) if cls is gast.For else _count(node.test, g, True)
        return head + sum(_count(s, g, True) for s in node.body + node.orelse)
    inner = repeated or cls in _REPEATING
    if cls in _REPEATING[2:]:  # (the first generator's iterable is read once, where it is made)
        first = node.generators[0].iter
        return _count(first, g, repeated) + sum(
            _count(c, g, True) for c in gast.iter_child_nodes(node) if c is not node.generators[0]) + sum(
            _count(c, g, True) for c in gast.iter_child_nodes(node.generators[0]) if c is not first)
    return sum(_count(c, g, inner) for c in gast.iter_child_nodes(node))


def _changes(node, reads, looked_up=frozenset()):
    """A name of reads that node binds (but those looked_up already), writes into, calls
    a method of or passes to a call (which may change it), or None."""
    for n in gast.walk(node):
        cls = n.__class__
        if cls is gast.Name and n.id in reads and n.ctx.__class__ is not gast.Load and n.id not in looked_up:
            return n.id
        if cls in (gast.Subscript, gast.Attribute) and n.ctx.__class__ is not gast.Load:
            base = n.value
            while base.__class__ in (gast.Subscript, gast.Attribute):
                base = base.value
            if base.__class__ is gast.Name and base.id in reads:
                return base.id
        if cls is gast.Call:
            f = n.func
            if f.__class__ is gast.Attribute and f.value.__class__ is gast.Name and f.value.id in reads:
                if f.attr not in _READING_METHODS:
                    return f.value.id
            if _reading_call(f):
                continue
            for a in n.args + [k.value for k in n.keywords]:
                if a.__class__ is gast.Name and a.id in reads:
                    return a.id
    return None


# calls that only read what they are given (a user's `np` or `len` of their own aside)
_READING_BUILTINS = frozenset(("len", "max", "min", "sum", "abs", "float", "int", "list", "tuple",
                               "sorted", "range", "round", "any", "all", "isinstance", "print"))
_READING_MODULES = frozenset(("np", "numpy", "math", "cmath"))
_READING_METHODS = frozenset(("copy", "get", "keys", "values", "items", "sum", "mean", "max", "min",
                              "dot", "reshape", "astype", "tolist", "count", "index", "conj", "conjugate"))


def _reading_call(f):
    if f.__class__ is gast.Name:
        return f.id in _READING_BUILTINS
    while f.__class__ is gast.Attribute:
        f = f.value
    return f.__class__ is gast.Name and f.id in _READING_MODULES
