"""Lists built by appending (a list comprehension, normalised), then only read: the kind
of their items; and the other item kinds of loops the analysis adds (``ItemKinds``: a
tuple of numbers, `reversed(xs)`, `tuple(xs)`).

``ys = [k * v for v in vs]`` is normalised into ``ys = []`` and a loop of
``ys.append(mul)``; ``s = sum(ys)`` or ``for y in ys`` then read it. A list written into
has no static kind for its items, so everything computed from them was dispatched at
run time (about 140 times the plain call for a comprehension summed in a loop). Where
the list is bound once, to a list display, and is otherwise only appended to (one
positional argument, a statement of its own) and read (``x = ys[key]``, ``for y in
ys``, ``zip(ys, ...)``, ``len(ys)``, ``sum(ys)``, ``min(ys)``, ``max(ys)``: never
passed, returned, captured or written into another way), every item it ever holds is
one of the display's or one appended: its items' kind is the join of theirs
(activity.py asks ``appended_kind`` where a loop goes over the list or a sum reads it).
"""
import builtins

import gast

from ..kinds import ARRAY, CONST, DICT_ITEMS, OTHER, REAL, REAL_SEQ, ROW_ITEMS, VECTOR, f8_vector
from .queries import item_reads_only
from .rows import row_names

_READERS = (builtins.sum, builtins.min, builtins.max, builtins.len, builtins.reversed, builtins.tuple)
# builtins whose items are their argument's, and that make nothing one could write into
# later (`list(xs)`, `sorted(xs)` do: what is appended to them has a kind of its own)
_SAME_ITEMS = (reversed, tuple)


def appendable_lists(facts):
    """{name: (the display's items, the atoms appended)} of the lists of the function
    (facts: an Activity being made) built so and only read (module docstring)."""
    displays = {}
    for s in facts._stmts:
        if (s.__class__ is gast.Assign and s.targets[0].__class__ is gast.Name and s.value.__class__ is gast.List
                and s.targets[0].id in facts._once and not any(x.__class__ is gast.Starred for x in s.value.elts)):
            displays[s.targets[0].id] = tuple(s.value.elts)
    if not displays:
        return {}
    group = {n: n for n in displays}  # a name -> the list's first name (`ys = lst` names lst's list)
    also = set()  # the nodes of the reads, appends and copies allowed (their names are not uses)
    for s in facts._stmts:
        if (s.__class__ is gast.Assign and s.targets[0].__class__ is gast.Name and s.value.__class__ is gast.Name
                and s.value.id in group and s.targets[0].id in facts._once and s.targets[0].id not in group):
            group[s.targets[0].id] = group[s.value.id]
            also.add(id(s.value))
    appends = {n: [] for n in displays}
    for s in facts._stmts:
        cls = s.__class__
        v = s.value if cls is gast.Assign or cls is gast.Expr else None
        if v.__class__ is gast.Call and not v.keywords:
            f = v.func
            if (cls is gast.Expr and f.__class__ is gast.Attribute and f.attr == "append" and len(v.args) == 1
                    and f.value.__class__ is gast.Name and f.value.id in group):
                appends[group[f.value.id]].append(v.args[0])
                also.add(id(f.value))
            elif v.args and all(a.__class__ is gast.Name for a in v.args):
                obj = facts.resolve(f)
                if obj is zip or (any(obj is r for r in _READERS) and len(v.args) == 1):
                    also.add(id(v))
        elif cls is gast.For and s.iter.__class__ is gast.Name:
            also.add(id(s.iter))
    only = item_reads_only(facts.fn, set(group), any_key=True, also=also)
    whole = {g for g in displays if all(n in only for n, h in group.items() if h == g)}
    # (a display never appended to nor copied is read_only_lists' already)
    return {n: (displays[g], tuple(appends[g])) for n, g in group.items()
            if g in whole and (appends[g] or any(h == g and m != g for m, h in group.items()))}


def appended_kind(facts, name):
    """The kind of every item of the appended list `name`: REAL or ARRAY when the
    display's items and the atoms appended all have that one kind (an atom not yet
    given a kind: OTHER, as a name read before it is bound), else OTHER."""
    elts, atoms = facts._appends[name]
    kind = None
    for a in elts + atoms:
        k = facts.kinds.get(a.id) if a.__class__ is gast.Name else facts.kind_of(a)
        if k is None or (kind is not None and k != kind):
            return OTHER
        kind = k
    return kind if kind in (REAL, ARRAY) else OTHER


def with_appended(facts, names):
    """names, and the atoms appended to those of them that are appended lists (what the
    kind of a read of one of them rests on)."""
    got = facts._appends
    if not got or got.keys().isdisjoint(names):
        return names
    out = list(names)
    for n in names:
        if n in got:
            out.extend(a.id for a in got[n][1] if a.__class__ is gast.Name)
    return tuple(out)


class ItemKinds:
    """The item kinds Activity (passes/activity.py) adds to the Queries' own: of lists
    built by appending or named again (`p_ws = ws`: an inlined constructor's field), of
    tuples of numbers, and of `reversed(xs)` and `tuple(xs)` bound to a name (the items
    of xs)."""

    def known_items(self, info, free_kinds):
        """The item kinds known before any statement runs: of list, tuple and dict arguments
        of items of one kind (the key's), of captured lists and tuples of numbers
        (kinds.REAL_SEQ), of the rows of a global table (rows.py), where only read."""
        if info.param_items:  # (a table of rows: its rows' items, rows.py)
            only = self._only_read({p for p, (_, t) in info.param_items.items() if t not in (DICT_ITEMS, ROW_ITEMS)})
            only |= self._only_read({p for p, (_, t) in info.param_items.items() if t == DICT_ITEMS})  # (keys)
            self.list_items.update({p: k for p, (k, _) in info.param_items.items() if p in only})
        rows = row_names(self)
        self.list_items.update((n, k) for n, k in rows.items() if k is not None)
        seqs = {v for v, k in zip(info.freevars, free_kinds) if k == REAL_SEQ}
        seqs = self._only_read(seqs) if seqs else frozenset()
        self.list_items.update(dict.fromkeys(seqs, REAL))
        # rows and captured lists or tuples of numbers: a gradient read at their positions
        self.known_seqs = frozenset(seqs) | frozenset(rows)

    def iter_item_kind(self, it):
        if it.__class__ is gast.Name and self.info.param_items.get(it.id, (None, None))[1] == DICT_ITEMS:
            return CONST  # `for k in d` of a dict argument keyed by strings: its keys
        if self._appends and it.__class__ is gast.Name and it.id in self._appends:
            return appended_kind(self, it.id)  # `for y in ys`, ys built by appending
        elts = self.tuple_elts.get(it.id) if it.__class__ is gast.Name else None
        if elts and len(set(elts)) == 1 and elts[0] in (REAL, ARRAY):
            return elts[0]  # `for v in (1.0, 2.0)`: a tuple of numbers
        got = super().iter_item_kind(it)
        if got == ARRAY and it.__class__ is gast.Name and self.global_vector(it.id):
            return REAL  # `for s in SAMPLES`, a global 1-D float64 array: NumPy float64 numbers
        call = self._value_of(it) if got == OTHER else None
        if call.__class__ is gast.Call and len(call.args) == 1 and call.args[0].__class__ is gast.Name:
            f = self.resolve(call.func)
            if any(f is g for g in _SAME_ITEMS) and not call.keywords:
                return self.iter_item_kind(call.args[0])  # `for c in reversed(coefs)`: coefs' items
        return got

    def global_vector(self, name):
        """Is name a global (data: not a local, not captured) holding a 1-D float64 array?
        The code assumes so at every call (emit's data guard)."""
        if name in self.locals or name in self.info.freevars:
            return False
        g = self.info.globals
        if not f8_vector(g.get(name)) or (assume := getattr(g, "assume_items", None)) is None:
            return False
        assume(name, VECTOR)
        return True

    def subscript_kind(self, e):
        v = e.value
        key = e.slice
        if (self._appends and v.__class__ is gast.Name and v.id in self._appends
                and (type(getattr(key, "value", None)) is int if key.__class__ is gast.Constant
                     else key.__class__ is gast.Name and self.kind_of(key) == REAL)):
            return appended_kind(self, v.id)  # `p_ws[0]`, p_ws a copy of a display's name (not a slice)
        return super().subscript_kind(e)

    def call_kind(self, e):
        a = e.args[0] if len(e.args) == 1 and not e.keywords and self._appends else None
        f = self.resolve(e.func) if a.__class__ is gast.Name and a.id in self._appends else None
        if f is sum or f is min or f is max:
            k = appended_kind(self, a.id)  # sum(ys) of ys built by appending numbers (or arrays: a sum)
            if k == REAL or k == ARRAY and f is sum:
                return k
        return super().call_kind(e)

