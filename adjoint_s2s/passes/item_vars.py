"""A local list or dict used only item by item at constant places: one variable per item.

Users keep a state in a list or a dict and update it by position or key inside loops
(``s = [x0, v0]`` ... ``s[1] = s[1] - dt * k * s[0]``). A container written into has no
static kind for its items: every line that read one was dispatched at run time, a
pullback closure per operation (about 500 times the plain call for a 200-step loop).
Where the container is used in no other way, its items are variables (``s_0``, ``s_1``),
and the loop is the one the user would have written with names::

    s = [1.0, 0.0]                    s_0, s_1 = 1.0, 0.0
    for _ in range(n):                for _ in range(n):
        s[1] = s[1] - k * s[0]    ->      s_1 = s_1 - k * s_0
        s[0] = s[0] + s[1]                s_0 = s_0 + s_1
    return s[0]                       return s_0

A container holds references: reading an item gives the object stored there, writing
one makes that position hold another object, as a variable does; nothing else about it
shows when nothing else is done with it. So the rewrite applies, before normalisation,
to a name that:

- is bound once, by a statement of the function's top level, to a list display (no
  ``*``) or a dict display with distinct constant string or int keys (no ``**``), and is
  no parameter, and has no ``global`` or ``nonlocal`` anywhere;
- is otherwise only read as ``name[c]`` or written as ``name[c] = v`` (a plain
  assignment, one target), c an int constant inside the list (negative ones count from
  its end) or one of the dict's keys, after that statement and outside any nested
  function or lambda: never passed, returned, iterated, measured, augmented
  (``name[c] += v`` may change an array item in place: left as it is), printed, deleted
  or captured.

An item read before any write reads the value the display gave it, as the list would.
"""
import gast

ENABLED = [True]  # tests switch it off (then refresh()) to test the containers' own code
_DISPLAYS = (gast.List, gast.Dict)
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


def item_variables(fn_node, taken):
    """Rewrite fn_node (before normalisation) in place; returns {name made: the user's
    expression it stands for, `s[0]`} (the names are taken now; messages spell the
    expressions, naming.Namer.shown). taken: every name the function's code may mention."""
    body = fn_node.body
    if not ENABLED[0]:
        return {}
    cands = {}
    for i, s in enumerate(body):
        if (s.__class__ is gast.Assign and len(s.targets) == 1 and s.targets[0].__class__ is gast.Name
                and s.value.__class__ in _DISPLAYS):
            places = _places(s.value)
            if places is not None:
                cands.setdefault(s.targets[0].id, []).append((i, s, places))
    if not cands:
        return {}
    a = fn_node.args
    params = {p.id for p in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]}
    cands = {n: c[0] for n, c in cands.items() if len(c) == 1 and n not in params}
    uses = _uses(fn_node, cands)
    made, split = {}, {}
    for name, (at, stmt, places) in cands.items():
        got = uses.get(name)
        if got is None or any(i <= at for i, _, _ in got):
            continue  # (used another way, or before the display: it raises, and must still)
        n = len(places)
        if stmt.value.__class__ is gast.List:
            keys = {c: c % n for _, _, c in got if type(c) is int and -n <= c < n}
        else:
            keys = {c: c for _, _, c in got if c in places}
        if len(keys) != len({c for _, _, c in got}):
            continue  # a place the display does not have: Python's IndexError or KeyError, or a new key
        names = {k: _fresh(name, k, taken | set(made)) for k in places}
        made.update({v: _spelled(name, k) for k, v in names.items()})
        split[id(stmt)] = _display_items(stmt, names, places)
        for _, sub, c in got:
            sub.new = names[keys[c]]
    if made:  # (the displays split first: an item of one may read another's, `{"y": rows[1]}`)
        fn_node.body = [t for s in body for t in split.get(id(s), (s,))]
        _Replace().visit(fn_node)
    return made


def _places(display):
    """The places of a display (0..n-1 of a list, the keys of a dict), or None when one
    is not a constant that may stand for it (a `*`, a `**`, a key repeated or computed)."""
    if display.__class__ is gast.List:
        if any(e.__class__ is gast.Starred for e in display.elts) or not display.elts:
            return None
        return list(range(len(display.elts)))
    keys = []
    for k in display.keys:
        if k is None or k.__class__ is not gast.Constant or type(k.value) not in (str, int) or k.value in keys:
            return None
        keys.append(k.value)
    return keys or None


def _uses(fn_node, cands):
    """name -> [(top-level statement index, the Subscript node, its constant)] for the
    candidates whose every mention is such a read or a plain one-target write, outside
    nested scopes; a candidate mentioned any other way is left out."""
    out = {n: [] for n in cands}
    for i, s in enumerate(fn_node.body):
        subs = {}  # id(Subscript) -> (a plain assignment's one target, in a nested scope)
        for node, parent, field, nested in _walk(s):
            cls = node.__class__
            if cls is gast.Subscript:
                subs[id(node)] = (parent.__class__ is gast.Assign and field == "targets"
                                  and len(parent.targets) == 1, nested)
            elif cls is gast.Name and node.id in out:
                if parent is cands[node.id][1] and field == "targets":
                    continue  # (the display's own binding)
                sub = parent if parent.__class__ is gast.Subscript and field == "value" else None
                c = _constant(sub.slice) if sub is not None else None
                plain, in_scope = subs[id(sub)] if sub is not None else (False, True)
                ctx = sub.ctx.__class__ if sub is not None else None
                if type(c) not in (int, str) or in_scope or ctx is gast.Del or ctx is gast.Store and not plain:
                    out.pop(node.id)
                    continue
                out[node.id].append((i, sub, c))
            elif cls in (gast.Global, gast.Nonlocal):
                for n in node.names:
                    out.pop(n, None)
    return out


def _constant(node):
    """The int or str a subscript's index is written as (`-1` too), else None."""
    if node.__class__ is gast.UnaryOp and node.op.__class__ is gast.USub and node.operand.__class__ is gast.Constant:
        v = node.operand.value
        return -v if type(v) is int else None
    return node.value if node.__class__ is gast.Constant and type(node.value) in (int, str) else None


def _walk(stmt):
    """(node, parent, field, whether it stands in a nested function, lambda or class) of
    every node under stmt, each before those under it."""
    stack = [(stmt, None, None, False)]
    while stack:
        node, parent, field, nested = stack.pop()
        yield node, parent, field, nested
        inner = nested or node.__class__ in _SCOPES
        for f, v in gast.iter_fields(node):
            if v.__class__ is list:
                stack.extend((x, node, f, inner) for x in reversed(v) if isinstance(x, gast.AST))
            elif isinstance(v, gast.AST):
                stack.append((v, node, f, inner))


def _spelled(name, key):
    """`name[key]` as a tree, for the messages."""
    return gast.Subscript(value=gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None),
                          slice=gast.Constant(value=key, kind=None), ctx=gast.Load())


def _fresh(name, key, taken):
    base = f"{name}_{key}" if type(key) is int or (key.isidentifier() and key.isascii()) else f"{name}_item"
    base = base.replace("-", "m")
    out, i = base, 1
    while out in taken:
        out, i = f"{base}_{i}", i + 1
    return out


def _display_items(stmt, names, places):
    """`name = [a, b]` as `name_0 = a` and `name_1 = b`: the values in their order, each
    bound as it is computed, which nothing can tell from binding them all at the end (the
    names are new, and the statement stands at the top level: an error in b leaves the
    function)."""
    values = stmt.value.elts if stmt.value.__class__ is gast.List else stmt.value.values
    out = []
    for k, v in zip(places, values):
        target = gast.Name(id=names[k], ctx=gast.Store(), annotation=None, type_comment=None)
        out.append(gast.copy_location(gast.Assign(targets=[target], value=v, type_comment=None), stmt))
        if len(out) > 1:
            out[-1].no_origin = True  # (one comment, the display's line, for them all)
    return out


class _Replace(gast.NodeTransformer):
    def visit_Subscript(self, node):
        new = getattr(node, "new", None)
        if new is None:
            return self.generic_visit(node)
        return gast.copy_location(gast.Name(id=new, ctx=node.ctx, annotation=None, type_comment=None), node)
