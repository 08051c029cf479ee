"""Items of a dict of parameters read as the names they were made from.

Users keep parameters in a dict and read them by key inside loops
(``p = {"decay": a, "gain": b}`` ... ``x = p["decay"] * x + ...``). After normalisation
each read is ``p_i = p['decay']``: a fresh binding per trip that the reverse pass saves
and restores, and an adjoint for the dict's item, added up and handed to a at the end.
When the read can only ever give the very object the display was built from, it reads
that object's name instead (``p_i = a``), and the loop costs what the same loop over a
and b costs.

Proved on the normalised function (nothing assumed at run time): p is bound once, by a
statement of the function's top level ``p = {key: value, ...}`` with constant string or
integer keys, no two equal, no ``**``; p is read nowhere but as ``x = p[key]`` (never
written into, passed on, returned or captured), and every such read sits in a top-level
statement after p's; each value is a constant or a name that nothing binds again after
the display: a parameter never bound, or a local of the user's bound once by an earlier
top-level statement (no ``del``, ``global`` or ``nonlocal`` of it anywhere). Then every read of
``p[key]`` runs after the display and before anything could rebind the name: it gives
the object the name holds. Reads of other keys, and everything else, are left alone.

Before::

    p = {'decay': a, 'gain': b}
    for _ in range_1:
        p_i = p['decay']
        mul = p_i * x

After::

    p = {'decay': a, 'gain': b}
    for _ in range_1:
        p_i = a
        mul = p_i * x
"""
import gast

from .queries import _const_key, item_reads_only


def scalarize_items(fn, user_names):
    """Rewrite, in place, the reads ``x = p[key]`` of fn (normalised) that give the
    object a dict display's value names (module docstring). Returns how many. A read
    into a temporary of the normaliser (not in user_names, bound once) goes: its reads
    read the value instead."""
    body = fn.body
    displays = [(i, s) for i, s in enumerate(body)
                if s.__class__ is gast.Assign and len(s.targets) == 1
                and s.targets[0].__class__ is gast.Name and s.value.__class__ is gast.Dict]
    if not displays:
        return 0
    stores, params = _bindings(fn)
    top = {}  # a name bound once at top level -> the index of its statement
    for i, s in enumerate(body):
        if s.__class__ is gast.Assign:
            for t in s.targets:
                if t.__class__ is gast.Name:
                    top.setdefault(t.id, i)
    done = 0
    by_temp = {}  # a removed temporary -> the value node its reads take
    for at, s in displays:
        p = s.targets[0].id
        items = _items(s.value, at, stores, params, top, user_names)
        if items is None or stores.get(p) != 1 or p in params or not item_reads_only(fn, {p}):
            continue
        reads = list(_item_reads(body, p))
        if any(i <= at for i, _, _ in reads):
            continue  # a read before the display: it raises, and must still
        for _, r, block in reads:
            key = r.value.slice.value
            if key not in items:
                continue
            x = r.targets[0].id
            if x in user_names or stores.get(x) != 1 or len(block) < 2:
                r.value = gast.copy_location(_copy(items[key]), r.value)  # the user's copy
            else:  # a temporary the normaliser made: read the name where it was read
                _remove(block, r)
                by_temp[x] = items[key]
            done += 1
    if by_temp:
        for node in gast.walk(fn):
            for field, value in gast.iter_fields(node):
                if value.__class__ is list:
                    for j, e in enumerate(value):
                        if e.__class__ is gast.Name and e.id in by_temp and e.ctx.__class__ is gast.Load:
                            value[j] = gast.copy_location(_copy(by_temp[e.id]), e)
                elif value.__class__ is gast.Name and value.id in by_temp and value.ctx.__class__ is gast.Load:
                    setattr(node, field, gast.copy_location(_copy(by_temp[value.id]), value))
    return done


def _bindings(fn):
    """(name -> how many times anything binds or deletes it, fn's own parameters).
    global or nonlocal anywhere counts as binding it twice (it may be bound from
    elsewhere); a nested function's or lambda's parameter counts as a binding."""
    a = fn.args
    own = list(a.posonlyargs) + list(a.args) + list(a.kwonlyargs) + [x for x in (a.vararg, a.kwarg) if x]
    params = {n.id for n in own if n.__class__ is gast.Name}
    stores = {}
    for node in gast.walk(fn):
        cls = node.__class__
        if cls is gast.Name:
            ctx = node.ctx.__class__
            if ctx is gast.Param:
                if node.id not in params or not any(node is o for o in own):
                    stores[node.id] = stores.get(node.id, 0) + 1
            elif ctx is not gast.Load:
                stores[node.id] = stores.get(node.id, 0) + 1
        elif cls in (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef):
            if node is not fn:
                stores[node.name] = stores.get(node.name, 0) + 1
        elif cls in (gast.Global, gast.Nonlocal):
            for n in node.names:
                stores[n] = stores.get(n, 0) + 2
        elif cls in (gast.Import, gast.ImportFrom):
            for a in node.names:
                n = (a.asname or a.name).split(".")[0]
                stores[n] = stores.get(n, 0) + 1
    return stores, params


def _items(display, at, stores, params, top, user_names):
    """key -> the value node of a display whose every key is a distinct constant and
    every value a constant or a user's name nothing binds again; else None. (Not a
    normaliser's temporary: ``c = p["a"]`` then ``c.append(v)`` would make c an alias
    of it, and aliases are followed between the user's own names.)"""
    keys = display.keys
    if any(k is None or k.__class__ is not gast.Constant or not _const_key(k.value) for k in keys):
        return None
    values = {}
    for k, v in zip(keys, display.values):
        if k.value in values:
            return None
        if v.__class__ is gast.Constant:
            pass
        elif v.__class__ is gast.Name and v.id in user_names:
            n = stores.get(v.id, 0)
            if not ((v.id in params and n == 0) or (n == 1 and top.get(v.id, at) < at)):
                return None
        else:
            return None
        values[k.value] = v
    return values


def _item_reads(body, p):
    """(index of the top-level statement holding it, statement, its block) of each
    ``x = p[key]``."""
    for i, s in enumerate(body):
        for t, block in _with_blocks([s], body):
            v = t.value if t.__class__ is gast.Assign else None
            if (v.__class__ is gast.Subscript and v.value.__class__ is gast.Name and v.value.id == p
                    and v.slice.__class__ is gast.Constant):
                yield i, t, block


def _with_blocks(stmts, block):
    """(statement, the list holding it) of stmts and every statement nested in them."""
    for s in stmts:
        yield s, block
        if s.__class__ is gast.If:
            yield from _with_blocks(s.body, s.body)
            yield from _with_blocks(s.orelse, s.orelse)
        elif s.__class__ in (gast.For, gast.While):
            yield from _with_blocks(s.body, s.body)
            yield from _with_blocks(s.orelse, s.orelse)


def _remove(block, s):
    """Take s out of block; the user statement it started or ended (the comments of
    the generated code, anf.py's ``origin``) or the inlined call it started starts or
    ends at its neighbour."""
    j = next(k for k, t in enumerate(block) if t is s)
    del block[j]
    if hasattr(s, "origin") and j < len(block) and not hasattr(block[j], "origin"):
        block[j].origin = s.origin
    if hasattr(s, "inlined") and j < len(block) and not hasattr(block[j], "inlined"):
        block[j].inlined = s.inlined  # (the first statement of an inlined call: inline.py)
    if hasattr(s, "origin_end") and j > 0 and not hasattr(block[j - 1], "origin_end"):
        block[j - 1].origin_end = s.origin_end


def _copy(node):
    if node.__class__ is gast.Name:
        return gast.Name(id=node.id, ctx=gast.Load(), annotation=None, type_comment=None)
    return gast.Constant(value=node.value, kind=None)
