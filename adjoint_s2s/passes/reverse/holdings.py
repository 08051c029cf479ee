"""Which names a container may hold, and what a name read out of one may be.

The reverse pass follows values by name. Python shows a change in place through every
name for the object: put an array in a list (``C = [inner]``), change it through the list
(``C[0][1] = x``, ``for r in C: r += x``, ``b.w += x`` of an object made with
``Box(inner)``), and ``inner`` shows the change. ``Holdings`` answers, over the whole
function and whatever the path, what ``check_held_elsewhere`` (in_place.py) asks about
such a change: ``objects(c)``, ``read_alike(c)`` (other names read out of the same place),
``loop_containers(c)`` (what a loop's item came out of) and ``copies(c)``.

``objects(c)``: the names whose object c may be, when c was read out of a container
(``c = X[k]``, ``c = X.attr``, an item of ``for c in X``, ``c = X.method(...)``): what X
holds at that key (named in a display bound to X, stored by ``X[k] = n`` or
``X.attr = n``) or at a position not known (given to a growing method of X or to the
call that made X, ``X = F(n)`` for F not NumPy's or math's, a computed index), through
containers read out of containers, and the copies (``a = b``) of all of them. A key is
followed only while nothing can move the items (a sort, a pop, a ``del``, a slice
assignment, any method but a reading one makes every key any key); a negative index is
any key. It over-approximates on purpose (any path): a change it cannot rule out is
refused, with the way out. The tapes of generated code (``_tape``, ``_tape_1``...) and
the results of its run time's calls (attributes of ``_rt``) are left out: what is read
back from a tape is a value the same name held before (a restore), and what those calls
give back the transformer follows itself.
"""
import copy
import math
import re

import gast
import numpy as np

_TAPE = re.compile(r"_tape(_\d+)?$")
# methods that put a value into a list, dict or set (in_place.py's element-write check too)
GROWING_METHODS = frozenset({"append", "extend", "insert", "update", "setdefault", "add", "__setitem__"})


ANY = object()  # a position not known: a computed index, an item appended, a field a call set


class Holdings:
    def __init__(self, fn_node, resolve, arrays=frozenset()):
        self._arrays = arrays  # names of arrays: a store into one copies values, holds nothing
        self._parent = {}
        self._reads = {}  # name -> {(container, key)}: what it was read out of
        self._slots = {}  # container -> {key: names put there}
        self._shuffled = set()  # containers whose items may have moved (sort, pop, del...)
        self._item_views = {}  # x = d.values() and the like: x -> {d}
        self._loop_items = set()  # the targets of for loops
        for node in gast.walk(fn_node):
            cls = node.__class__
            if cls is gast.Assign and len(node.targets) == 1:
                self._assign(node.targets[0], node.value, resolve)
            elif cls is gast.For and node.target.__class__ is gast.Name and node.iter.__class__ is gast.Name:
                self._read(node.target.id, node.iter.id, ANY)
                self._loop_items.add(node.target.id)
            elif cls is gast.Expr:
                self._method(node.value)
                self._call(node.value, resolve)
            elif cls is gast.Delete:
                for t in node.targets:
                    if t.__class__ is gast.Subscript and t.value.__class__ is gast.Name:
                        self._shuffled.add(t.value.id)
        self._objects = {}
        self._held = {}

    def _find(self, n):
        parent = self._parent
        while parent.get(n, n) != n:
            n = parent[n]
        return n

    def _read(self, name, container, key):
        if not _TAPE.match(container):
            self._reads.setdefault(name, set()).add((container, key))

    def _put(self, container, key, nodes):
        if _TAPE.match(container) or container in self._arrays:
            return
        for n in nodes:
            if n.__class__ is gast.Starred:
                n, key = n.value, ANY
            if n.__class__ is gast.Name and n.id != container:  # (a = f(a): a rebinding)
                self._slots.setdefault(container, {}).setdefault(key, set()).add(n.id)

    def _method(self, call):
        """A method call on a container: what it puts in, whether its items may move."""
        if not (call.__class__ is gast.Call and call.func.__class__ is gast.Attribute
                and call.func.value.__class__ is gast.Name):
            return
        x, attr = call.func.value.id, call.func.attr
        if attr in GROWING_METHODS:
            self._put(x, ANY, list(call.args) + [k.value for k in call.keywords])
            if attr in ("extend", "update"):  # (the items of the argument)
                self._item_views.setdefault(x, set()).update(
                    a.id for a in call.args if a.__class__ is gast.Name)
        if attr not in _READING:
            self._shuffled.add(x)

    def _call(self, call, resolve):
        """A call that may store one of its arguments into another (`put(c, arr)`, a
        method given a value): each container argument may hold each other one."""
        if call.__class__ is not gast.Call or _runtime(call.func):
            return
        f = call.func
        if f.__class__ is gast.Attribute and f.value.__class__ is gast.Name and resolve(f) is None:
            if f.attr not in _READING and f.attr not in GROWING_METHODS and f.attr not in _ARRAY_METHODS:
                # (growing: _method; an array's methods keep no argument)
                self._put(f.value.id, ANY, list(call.args) + [k.value for k in call.keywords])
            return
        if _makes_new(resolve(f)):
            return
        parts = [a for a in list(call.args) + [k.value for k in call.keywords] if a.__class__ is gast.Name]
        for a in parts:
            self._put(a.id, ANY, [b for b in parts if b.id != a.id])

    def _assign(self, t, v, resolve):
        if t.__class__ in (gast.Subscript, gast.Attribute):
            if t.value.__class__ is gast.Name:
                key = _key(t)
                if key is ANY:
                    self._shuffled.add(t.value.id)  # (a slice assignment moves items too)
                self._put(t.value.id, key, [v])
            return
        if t.__class__ is not gast.Name:
            return
        x, cls = t.id, v.__class__
        if cls is gast.Name:
            a, b = self._find(x), self._find(v.id)
            if a != b:  # one object under two names
                self._parent[a] = b
        elif cls in (gast.Subscript, gast.Attribute) and v.value.__class__ is gast.Name:
            key = _key(v)
            if key is not ANY and key.__class__ is int and key < 0:
                key = ANY  # (from the end: the length is not known here)
            self._read(x, v.value.id, key)
            if cls is gast.Subscript and v.slice.__class__ is gast.Slice:
                self._item_views.setdefault(x, set()).add(v.value.id)  # C[:1]: C's items
        elif cls in (gast.List, gast.Tuple):
            for k, e in enumerate(v.elts):
                self._put(x, k, [e])
        elif cls is gast.Set:
            self._put(x, ANY, v.elts)
        elif cls is gast.Dict:
            for k, e in zip(v.keys, v.values):
                key = k.value if k is not None and k.__class__ is gast.Constant else ANY
                self._put(x, key, [e])
        elif cls is gast.Call:
            self._method(v)
            self._call(v, resolve)
            f = v.func
            parts = list(v.args) + [k.value for k in v.keywords]
            if f.__class__ is gast.Attribute and f.value.__class__ is gast.Name and resolve(f) is None:
                if f.attr in _SAME_ITEMS:  # d.values(), lst.copy(): the container's own items
                    self._item_views.setdefault(x, set()).add(f.value.id)
                else:
                    self._read(x, f.value.id, ANY)  # lst.pop(), a method's result: an item
                self._put(x, ANY, parts)
            elif not _runtime(f) and not _makes_new(resolve(f)):
                self._put(x, ANY, parts)  # Box(inner), a helper: may keep its arguments
                if resolve(f) in _ITEMS_OF:  # list(C), enumerate(C): C's items, in turn
                    self._item_views.setdefault(x, set()).update(
                        p.id for p in parts if p.__class__ is gast.Name)

    def objects(self, name):
        """The names whose object name may be, or hold (it was read out of a container
        that holds them), transitively; with their copies (``a = b``)."""
        got = self._objects.get(name)
        if got is None:
            self._objects[name] = set()  # (a cycle, c = c[0], ends here)
            got = set()
            for x, key in self._reads.get(name, ()):
                if x in self._loop_items:
                    key = ANY  # (an item of enumerate(C) is a pair (i, item): any key)
                views = self._sources(x)
                # names bound anew out of x (`a, b = b, a`): what x held under them is
                # another object now (the same one is read_alike's)
                xs = self.copies(x)
                rebound = {r for r, places in self._reads.items() if any(x2 in xs for x2, _ in places)}
                for z in {x} | xs | self.objects(x) | views:
                    slots = self._slots.get(z, {})
                    if z in views:
                        key = ANY  # (d.items() gives pairs: any of d's items)
                    if key is ANY or z in self._shuffled:
                        for names in slots.values():
                            got |= names - rebound
                    else:
                        got |= (slots.get(key, set()) | slots.get(ANY, set())) - rebound
            for n in list(got):
                got |= self.copies(n) | self.objects(n)
            for x, _ in self._reads.get(name, ()):
                got -= self.copies(x)  # (a = f(a) rebinds a: a does not hold itself)
            self._objects[name] = got
        return got

    def _sources(self, x):
        """The containers whose items x holds too (d.values(), C[:1], list(C)...),
        transitively."""
        out, todo = set(), list(self._item_views.get(x, ()))
        while todo:
            n = todo.pop()
            if n not in out:
                out.add(n)
                todo.extend(self._item_views.get(n, ()))
        return out

    def read_alike(self, name, skip):
        """The other names read out of the same place of the same container (``w =
        d["w"]`` and ``d_i = d["w"]``): they may be one object. skip(x): containers left
        out (arrays: an item read out of one is a number or a view, which the alias
        tracking of mutation.py follows)."""
        out = set()
        for x, key in self._reads.get(name, ()):
            if skip(x):
                continue
            xs = self.copies(x)
            for r, places in self._reads.items():
                if r != name and any(
                        x2 in xs and (key is ANY or k2 is ANY or k2 == key or x2 in self._shuffled)
                        for x2, k2 in places):
                    out |= self.copies(r)
        return out

    def containers(self, name):
        """The containers name was read out of (directly)."""
        return {x for x, _ in self._reads.get(name, ())}

    def loop_containers(self, name):
        """The containers name is an item of, when it is a for loop's item or read out of
        one (``for row in A``, ``for i, r in enumerate(C[:1])``), with those whose items
        they hold (C of C[:1]): nothing writes a change of it back, unlike ``A[i] += v``."""
        out, todo, seen = set(), [name], set()
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            for x, _ in self._reads.get(n, ()):
                if n in self._loop_items or x in self._loop_items:
                    out |= {x} | self.objects(x) | self._sources(x)
                    for z in self._sources(x):
                        out |= self.objects(z)
                todo.append(x)
        return out

    def held_by(self, name):
        """The names whose objects name's object may hold, at any key and at any depth
        (``[inner]``, ``Box(inner)``, a dict of lists of them), with their copies; the
        names of name's own object left out."""
        got = self._held.get(name)
        if got is not None:
            return got
        own = self.copies(name)
        out, todo = set(), list(own)
        while todo:
            z = todo.pop()
            for names in [v for src in {z} | self._sources(z) for v in self._slots.get(src, {}).values()]:
                for n in names:
                    for c in self.copies(n):
                        if c not in out and c not in own:
                            out.add(c)
                            todo.append(c)
        self._held[name] = out
        return out

    def copies(self, name):
        """The names bound to name's object by ``a = b`` copies (name itself too)."""
        root = self._find(name)
        return {n for n in self._parent if self._find(n) == root} | {root, name}


_ARRAY_METHODS = frozenset(n for n in dir(np.ndarray) if not n.startswith("__"))
_ITEMS_OF = (list, tuple, sorted, reversed, iter, set, frozenset, enumerate, zip, filter)
_SAME_ITEMS = frozenset({"values", "items", "keys", "copy"})
_READING = frozenset({"get", "copy", "keys", "values", "items", "index", "count", "__getitem__"})


def _key(node):
    """The constant key of ``X[k]``, ``("attr", a)`` of ``X.a``, else ANY."""
    if node.__class__ is gast.Attribute:
        return ("attr", node.attr)
    if node.__class__ is gast.Subscript and node.slice.__class__ is gast.Constant:
        value = node.slice.value
        if value.__class__ in (int, str, bytes, float, bool) or value is None:
            return value
    return ANY


def _runtime(f):
    """A call of an attribute of ``_rt``, generated code's own run time (its calls
    return pairs, gradients and restored values that the transformer follows itself)."""
    return f.__class__ is gast.Attribute and f.value.__class__ is gast.Name and f.value.id == "_rt"


def _makes_new(obj):
    """Whether obj (a resolved callee, or None) is a NumPy or math function or a numeric
    builtin: its result holds none of its arguments (a view shares memory, which the
    alias tracking of mutation.py follows)."""
    if obj is None:
        return False
    module = getattr(obj, "__module__", None) or ""
    if module.startswith("numpy") or module == "math" or getattr(math, getattr(obj, "__name__", ""), None) is obj:
        return True
    # (min, max, sorted: items; a deep copy shares nothing that can change)
    return obj in (abs, len, float, int, complex, round, range, bool, str, copy.deepcopy)
