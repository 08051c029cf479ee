"""Rows of a data table held by a global list: the names that hold one row.

Data written the way people write it is often a module-level list of tuples or lists of
numbers, read row by row with unpacking::

    PAIRS = [(0.0, 1.0), (0.5, 0.2), ...]

    def loss(w):
        total = 0.0
        for x, y in PAIRS:                      # for item in PAIRS: x = item[0]; y = item[1]
            total = total + (w * x - y) ** 2
        ...
        for (x1, x2), y in zip(DATA, LABELS):   # item_i = item[0]; x1 = item_i[0]; ...
        for i in range(len(DATA)):
            row = DATA[i]

A row is a sequence (or a record: a dict of numbers by string keys, ``RECORDS = [{"w":
0.1, "b": 1.0}, ...]`` read as ``r["w"]``), so its own kind is OTHER, but every item read
from it is a number. ``row_names`` finds the names bound only to rows of such a global
(the loop target over it, a name bound once to ``G[i]``, a name bound once to the item
of a zip's tuple that comes from it) and read only by item, iterated or measured (a
record: by key only, as iterated it gives its keys); their items have kind REAL
(``list_items``), as a list display's of numbers have. The global must be read only so
by the function too (``Queries.global_read_only``). The code made for it assumes so at
every call: emit's data guard checks that the global still holds rows of numbers
(``kinds.rows_kind``, ``kinds.records_kind``), and a list changed to hold anything else
gets code made again. A table passed as an argument (the key's ``kinds.ROW_ITEMS``,
checked at each call), never rebound and only read, is one too; its rows carry its
gradient, read at their positions (reverse/data.py ``_known_item``).
"""
import gast

from ..kinds import REAL, RECORDS, ROW_ITEMS, ROWS, records_kind, rows_kind


def row_names(facts):
    """{name: REAL} of the names that hold a row of numbers of a global table (above), and
    {name: None} of the table arguments whose rows they are.
    Every name any row of a table goes to must be bound once and only read (so no row
    is written or passed on), else the table is none."""
    once, stmts = facts._once, facts._stmts
    tables = {}  # global table -> the names its rows go to (None: one that may not)
    zips = {}  # a name bound to zip(...) of a table -> the zip's arguments
    for s in stmts:
        if s.__class__ is gast.For and _table(facts, s.iter):
            t = s.target
            tables.setdefault(s.iter.id, []).append(t.id if t.__class__ is gast.Name and t.id in once else None)
        elif s.__class__ is gast.Assign and s.targets[0].__class__ is gast.Name:
            t, v = s.targets[0].id, s.value
            if v.__class__ is gast.Subscript and _table(facts, v.value):
                tables.setdefault(v.value.id, []).append(t if t in once else None)  # `row = DATA[i]`
            elif v.__class__ is gast.Call and any(_table(facts, a) for a in v.args):
                f = facts.resolve(v.func)
                if f is len and len(v.args) == 1:
                    continue  # (reads no row)
                zips[t] = v.args
                if t not in once or f is not zip or v.keywords:
                    for a in v.args:
                        if _table(facts, a):
                            tables.setdefault(a.id, []).append(None)
    if not tables and not zips:
        return {}
    also = set(zips)  # (and the targets of the loops over them: only read too)
    for s in stmts:  # `for item in zip_1: item_i = item[0]` with DATA the zip's first argument
        if s.__class__ is gast.For and s.iter.__class__ is gast.Name and s.iter.id in zips:
            args = zips[s.iter.id]
            item = s.target.id if s.target.__class__ is gast.Name and s.target.id in once else None
            also.add(item)
            for t, k in _items_of(stmts, item):
                if k is None:  # (a computed position: any of the zipped rows)
                    for a in args:
                        if _table(facts, a):
                            tables.setdefault(a.id, []).append(None)
                    continue
                g = args[k] if -len(args) <= k < len(args) else None
                if g is not None and _table(facts, g):
                    tables.setdefault(g.id, []).append(t if t in once else None)
    names = {n for got in tables.values() for n in got} | also
    only = facts._only_read(names - {None}, targets=True)
    if not only >= also - {None} or None in also:
        return {}  # (a zip of a table, or its tuples, used some other way)
    records = {g for g in tables if _records(facts, g)}  # rows that are dicts: read by key only
    if records:
        keyed = {n for g in records for n in tables[g]} - {None}
        only = (only - keyed) | facts._only_read(keyed, iterated=False, targets=True)
    out = {}
    for g, got in tables.items():
        if None not in got and only.issuperset(got):
            if g in facts.info.param_items:  # (an argument's: the key's, checked at each call)
                out[g] = None
            else:
                facts.info.globals.assume_items(g, RECORDS if g in records else ROWS)
            out.update(dict.fromkeys(got, REAL))
    return out


def _items_of(stmts, item):
    """(name, k) of each `name = item[k]` (k a constant int; else None)."""
    for s in stmts:
        if (s.__class__ is gast.Assign and s.targets[0].__class__ is gast.Name and s.value.__class__ is gast.Subscript
                and s.value.value.__class__ is gast.Name and s.value.value.id == item):
            k = s.value.slice
            yield s.targets[0].id, k.value if k.__class__ is gast.Constant and type(k.value) is int else None


def _table(facts, node):
    """Is node the name of a global list or tuple of rows of numbers that the function
    only reads (Queries.global_read_only), or of such an argument (the key's
    kinds.ROW_ITEMS) that nothing rebinds and the function only reads?"""
    if node.__class__ is not gast.Name:
        return False
    if facts.info.param_items.get(node.id, (None, None))[1] == ROW_ITEMS:  # (asked per statement: once)
        memo = facts.__dict__.setdefault("_table_arguments", {})
        if node.id not in memo:
            memo[node.id] = node.id not in facts._bound and bool(facts._only_read({node.id}))
        return memo[node.id]
    if node.id in facts.locals or not facts.global_read_only(node.id):
        return False
    g = facts.info.globals
    return getattr(g, "assume_items", None) is not None and (
        rows_kind(g.get(node.id)) == REAL or records_kind(g.get(node.id)) == REAL)


def _records(facts, name):
    return name not in facts.info.param_items and records_kind(facts.info.globals.get(name)) == REAL
