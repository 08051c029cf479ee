"""The reverse pass, changes in place: which object a statement changes in place, a
private copy or a snapshot of a value with no gradient before it is changed, and the
containers that still hold an element being changed (holdings.py: the names a
container may hold).

Python shows a change in place through every name, container and closure that holds
the object; the pullback must read the values each statement saw. ``_written_through``
names the object a statement changes (the aliases are then followed in mutation.py);
``snapshot_writes`` saves a value that carries no gradient before it is changed;
``check_element_write`` refuses (fail closed) a change of an element whose container is
read again, where the gradient would not reach the written value. ``containment``
computes, once per function, which names an element was read into and which objects
may be held elsewhere.

Before (``a`` carries no gradient; ``y = x * a`` reads it)::

    a = np.ones(3)
    y = x * a
    a[0] = 5.0

After::

    a = np.ones(3)
    y = x * a
    a_saved_1 = a
    a = _rt.private(a)
    a[0] = 5.0
    ...
    a = a_saved_1
    b_x = _rt.unbroadcast(b_y * _rt.conj(a), x)
"""
import types

import gast
import numpy as np

from ..activity import ARRAY, CONST, OTHER, SCALAR
from ..liveness import stmt_targets
from .common import _MUTATING_METHODS, _has_starred
from .holdings import GROWING_METHODS as _GROWING_METHODS, Holdings


# methods that change an array (or list, dict, set) in place, besides _MUTATING_METHODS,
# and those of all these that keep its shape (a pullback reading only the shape needs no copy)
_IN_PLACE_METHODS = frozenset({"partition", "put", "itemset", "resize", "byteswap", "setfield"})
_SAME_SHAPE_METHODS = frozenset({"fill", "sort", "partition", "put", "itemset", "byteswap", "setfield",
                                 "reverse", "__setitem__"})
# NumPy functions that write into their first argument
_IN_PLACE_FUNCS = tuple(
    f for f in (
        getattr(np, "copyto", None), getattr(np, "put", None), getattr(np, "place", None),
        getattr(np, "putmask", None), getattr(np, "fill_diagonal", None),
        getattr(np, "put_along_axis", None), getattr(np.random, "shuffle", None),
    ) if f is not None
)
_HANDING_BACK = (max, min, next, iter, getattr)  # builtins giving back an argument or an item of one


def _runtime_fn(f):
    """A call of an attribute of `_rt`, generated code's own run time."""
    return isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and f.value.id == "_rt"


# functions whose result is a new object (np.array copies by default; np.asarray may not)
_NEW_OBJECT_FUNCS = tuple(
    f for f in (
        np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like,
        np.full_like, np.array, np.copy, np.arange, np.linspace, np.eye, np.identity,
        list, dict, set,
    )
)


def _escapes(st):
    """The names statement st (with what it holds) may hand to something that keeps it:
    a call's argument or receiver, a value stored into a container or field, copied to
    another name, put in a display, captured by a def or lambda."""
    out = set()
    for node in gast.walk(st):
        if isinstance(node, gast.Call):
            for a in list(node.args) + [k.value for k in node.keywords]:
                if isinstance(a, gast.Starred):
                    a = a.value
                if isinstance(a, gast.Name):
                    out.add(a.id)
            f = node.func
            if (isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and node.args
                    and f.attr not in _MUTATING_METHODS and f.attr not in _GROWING_METHODS):
                out.add(f.value.id)  # (a method given a container may store its object there)
        elif isinstance(node, gast.Assign) and isinstance(node.value, gast.Name):
            out.add(node.value.id)
        elif isinstance(node, (gast.List, gast.Tuple, gast.Set)):
            out |= {e.id for e in node.elts if isinstance(e, gast.Name)}
        elif isinstance(node, gast.Dict):
            out |= {e.id for e in node.values if isinstance(e, gast.Name)}
        elif isinstance(node, (gast.Lambda, gast.FunctionDef)):
            out |= {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
        elif isinstance(node, gast.Return) and isinstance(node.value, gast.Name):
            out.add(node.value.id)
    return out


def containment(fn_node, resolve, may_mutate):
    """(element_of, escaped) over the whole function, whatever the path: element_of maps
    a name bound by ``c = X[k]`` or ``c = X.attr`` (X a name) to those X, the containers
    still holding its object; escaped holds the names whose object may be held somewhere
    else too (put in a list, tuple, dict or field, passed to a method of another object
    or to a function that may keep it, bound to a second name, captured)."""
    element_of, escaped = {}, set()

    def names(nodes):
        return {n.id for n in nodes if isinstance(n, gast.Name)}

    for node in gast.walk(fn_node):
        if isinstance(node, gast.Assign) and len(node.targets) == 1:
            tgt, v = node.targets[0], node.value
            if isinstance(tgt, gast.Name) and isinstance(v, (gast.Subscript, gast.Attribute)) \
                    and isinstance(v.value, gast.Name) and not getattr(v, "written_back", False):
                # (a read the normaliser made for `m[i][j] = v`: it writes the row back)
                element_of.setdefault(tgt.id, set()).add(v.value.id)
            if isinstance(v, gast.Name) and not isinstance(tgt, gast.Name) or (
                isinstance(v, gast.Name) and isinstance(tgt, gast.Name) and v.id != tgt.id
            ):
                escaped.add(v.id)
        elif isinstance(node, (gast.List, gast.Tuple, gast.Set)) and not isinstance(
                getattr(node, "ctx", None), gast.Store):  # (a Set has no ctx)
            escaped |= names(node.elts)
        elif isinstance(node, gast.Dict):
            escaped |= names(node.values)
        elif isinstance(node, gast.Call):
            f = node.func
            method_of_other = isinstance(f, gast.Attribute) and resolve(f) is None
            if method_of_other or may_mutate(node):
                escaped |= names(node.args) | names(k.value for k in node.keywords)
        elif isinstance(node, (gast.Lambda, gast.FunctionDef)) and node is not fn_node:
            escaped |= {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    return element_of, escaped


class InPlaceMixin:
    """Changes in place: what a statement changes, snapshots and private copies of
    values with no gradient, and the element-write check (a mixin of Generator, through
    MutationMixin)."""

    def _written_through(self, s):
        """(name, surely) when statement s changes the object `name` holds in place, as
        Python would show through every other name for it: a subscript write, an
        augmented assignment (surely for arrays; for a value of unknown kind, only if
        it stays the same object), a mutating method, a helper that may fill it."""
        if not isinstance(s, (gast.Assign, gast.Expr)):
            return None
        tgt = s.targets[0] if isinstance(s, gast.Assign) else None
        e = s.value
        if isinstance(tgt, gast.Subscript) and isinstance(tgt.value, gast.Name):
            return (tgt.value.id, True) if tgt.value.id in self.active else None
        if isinstance(tgt, gast.Name) and (
            getattr(s, "augmented", False)
            or getattr(e, "augmented", False) and isinstance(e.left, gast.Name) and e.left.id == tgt.id
        ):
            kind = self.kind_of(tgt)
            if kind in SCALAR or kind == CONST or tgt.id not in self.active:
                return None
            return tgt.id, kind == ARRAY
        if not isinstance(e, gast.Call):
            return None
        f = e.func
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name):
            if f.attr in _MUTATING_METHODS and f.value.id in self.active and self.resolve(f) is None:
                return f.value.id, True
        if self.may_mutate(e) and not _has_starred(e):
            names = [
                a.id for a in e.args
                if isinstance(a, gast.Name) and a.id in self.active
                and self.kinds.get(a.id, OTHER) == OTHER and a.id in self.same
            ]
            if len(names) == 1:
                return names[0], True
        return None

    def _inactive_written(self, s):
        """(name, keeps shape) when statement s changes in place the object of `name`, a
        local name or parameter that carries no gradient: a subscript write, a mutating
        method, an ``out=`` argument, NumPy's in-place functions (np.put, ...)."""
        if not isinstance(s, (gast.Assign, gast.Expr)):
            return None
        tgt = s.targets[0] if isinstance(s, gast.Assign) else None
        e = s.value
        found = None
        if isinstance(tgt, gast.Subscript) and isinstance(tgt.value, gast.Name):
            found = tgt.value.id, True
        elif isinstance(e, gast.Call):
            f = e.func
            if (
                isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name)
                and f.attr in _MUTATING_METHODS | _IN_PLACE_METHODS and self.resolve(f) is None
            ):
                found = f.value.id, f.attr in _SAME_SHAPE_METHODS
            for kw in e.keywords:
                out = kw.value.elts[0] if isinstance(kw.value, gast.Tuple) and kw.value.elts else kw.value
                if kw.arg == "out" and isinstance(out, gast.Name):
                    found = out.id, True
            if found is None and e.args and isinstance(e.args[0], gast.Name):
                fn = self.resolve(f)
                if fn is not None and any(fn is g for g in _IN_PLACE_FUNCS):
                    found = e.args[0].id, True
        if found is None:
            return None
        name = found[0]
        if name in self.active or name not in self.locals | set(self.info.params):
            return None
        if self.kinds.get(name, OTHER) in SCALAR or self.kinds.get(name) == CONST:
            return None
        return found

    def snapshot_writes(self, s, fwd, depth):
        """Before a change in place of a value that carries no gradient, so that a
        pullback reading it (``y = x * a`` before ``a[0] = 1.0``, including the closures
        of pullbacks dispatched at run time) reads the values its statement saw:

        * a local array (or a value of unknown kind) that no other name, container or
          callee can hold (see containment) is given a private copy first (``a = _rt.private(a)``: the array
          itself when nothing else refers to it, so a buffer filled in a loop stays O(1) a
          write), after a Save of the old object, restored after the statement's
          adjoint; a pullback closure made at run time keeps the old object too;
        * anything else (a parameter, a value another name or container holds, which
          must show the change as in Python) is changed in place, after a Save of a copy
          of each name for the object (``_rt.snapshot``).

        The tape pass keeps a save only where the pullback reads the name. Returns the
        saves, restored after the statement's adjoint."""
        found = self._inactive_written(s)
        if found is None:
            return []
        name, keeps_shape = found
        self.helpers.add("_rt")
        mark = len(self.saves)
        element_of, escaped = self._containment()
        if (
            name in self.locals and name not in self.info.params
            and self.kinds.get(name, OTHER) in (ARRAY, OTHER)
            and not self.aliases.get(name) and name not in self.maybe_views
            and not self.same.get(name) and name not in element_of and name not in escaped
            and not self._call_sources(name)  # (`a = d.setdefault(k, y)`: d's item, y itself)
        ):  # an array (or a value of unknown kind) only this name holds, or a pullback
            sv = self.save(name, fwd, depth)
            sv.keeps_shape = keeps_shape
            fwd.append(f"{name} = _rt.private({name})")
            return self.saves[mark:]
        group = {name} | self.aliases.get(name, set()) | self.same.get(name, set())
        for z in sorted(group):
            if z in self.active or z not in self.locals | set(self.info.params):
                continue
            sv = self.save(z, fwd, depth)
            sv.copies = True
            sv.keeps_shape = keeps_shape
        return self.saves[mark:]

    def _containment(self):
        if getattr(self, "_containment_memo", None) is None:
            self._containment_memo = containment(self.fn, self.resolve, self.may_mutate)
        return self._containment_memo

    def check_element_write(self, s):
        """`c = cols[0]` (or `c = obj.items`), then a value with a gradient put into `c`
        while `cols` is read again: Python shows the change through `cols`, but the
        gradient of what is read through `cols` would not reach the written value (the
        transformer follows names, not what a container holds). Refused, with the way
        out, unless the field's own write-back covers it (an attribute of a differentiated
        object, see write_back_field). And any change of `c` with a gradient while another
        name that `cols` may hold the object of is read again (check_held_elsewhere)."""
        e = s.value if isinstance(s, gast.Expr) else None
        grows = (
            isinstance(e, gast.Call) and isinstance(e.func, gast.Attribute)
            and isinstance(e.func.value, gast.Name) and e.func.attr in _GROWING_METHODS
            and self.resolve(e.func) is None
        )
        self.check_held_elsewhere(s, e.func.value.id if grows else None)
        if not grows:
            return  # (writes by subscript and `op=` are followed by the normaliser's write-back)
        name = e.func.value.id
        if name not in self.active and not self._writes_active(s):
            return
        element_of = self._containment()[0]
        holders = element_of.get(name, set()) | self.holdings().loop_containers(name)
        live = self.live_after.get(id(s), frozenset())
        field = self.field_of.get(name)
        for x in sorted(holders):
            if x == name:
                continue
            if field is not None and field[0] == x and x in self.active:
                continue
            if x not in live:
                self._check_outer_holder(name, x, element_of)
                continue
            self.refuse(
                f"changing `{name}` in place while `{x}` holds it (`{name}` was read from "
                f"`{x}`) and `{x}` is read afterwards",
                f"the gradient of what is read through `{x}` would not reach the written "
                f"values. Build the inner container first and then store it in `{x}` (or "
                f"read the values back through `{name}`)",
            )

    def _check_outer_holder(self, name, x, element_of):
        """check_element_write for `x`, holding `name`, not read again here: refused where
        x (or what holds it, up the reads) is a captured or global name, which the
        enclosing function reads again (`def rec(v): log[0].append(v)`): the pullback
        would not hand the written item's gradient on."""
        below, todo = {x: name}, [x]  # holder -> the name read out of it
        while todo:
            h = todo.pop()
            # (out of a parameter's item: refused when it runs, where the caller reads the
            # parameter again, runtime.keeping; out of its field, `self.log["x"]`, here)
            field = self.field_of.get(below[h])
            field = field if field is not None and field[0] == h else None
            outside = h in self.info.freevars or h not in self.locals
            if (h in self.info.params and field) or (h not in self.info.params and outside):
                item = f"{h}.{field[1]}[k]" if field else f"{h}[k]"
                whose = ("a parameter (the caller may read it again)" if h in self.info.params
                         else "a captured or global name (read again outside)")
                way = (f"instead (`{item} = {item} + [v]`)" if h in self.info.params else
                       f"after passing `{h}` in as an argument (`{item} = {item} + [v]`)")
                self.refuse(
                    f"changing in place (`.append`, `.extend`, `.insert`...) a list or dict "
                    f"read out of `{h}`, {whose},",
                    f"the gradient of what is read through `{h}` afterwards would not reach "
                    f"the written values. Write the new item back through `{h}` {way}",
                )
            for up in sorted(element_of.get(h, ())):
                if up not in below and up != name:
                    below[up] = h
                    todo.append(up)

    def check_held_elsewhere(self, s, grown):
        """s changes in place, with a gradient, an object read out of a container
        (`p_i = p["a"]` then `p_i[0] = x`, `p_i += x`, `p_i.append(x)`) that another name
        may also hold (`p = {"a": inner}`), and that name is read afterwards: Python shows
        the change through it, the generated code would not (its value, its gradient).
        Refused, naming both and the way out."""
        found = self._written_through(s)
        name = found[0] if found is not None else grown
        v = s.value if isinstance(s, gast.Assign) else None
        if name is None and getattr(v, "element_augmented", False) and isinstance(v.left, gast.Name):
            name = v.left.id  # `c[k] += v`: in place for an array or a list
        if name is None or (name not in self.active and not self._writes_active(s)):
            return
        if self.kinds.get(name) in SCALAR or self.kinds.get(name) == CONST:
            return  # (a number read out of a container: nothing changes in place)
        h = self.holdings()
        objects = set(h.objects(name)) | h.read_alike(name, lambda x: self.kinds.get(x) == ARRAY)
        # a loop's item (`for row in A`, `for r in C[:1]`): a row of A (a view) or an item
        # C holds, and nothing writes the change back into A or C
        looped = h.loop_containers(name)
        objects |= looped
        if not objects:
            return
        # (`new = c + v` binds new: the value after the change, not another name for it;
        # a container c was read out of by subscript gets it back by the normaliser's
        # write-back, or is check_element_write's)
        mine = h.copies(name) | set(stmt_targets(s))
        mine |= {c for x in h.containers(name) if x not in looped for c in h.copies(x)}
        live = self.live_after.get(id(s), frozenset())
        for held in sorted(objects - mine):
            # the held name and what shares its memory (views)
            views = (self.aliases.get(held, set()) | self.same.get(held, set())) - {held}
            for other in [held] + sorted(views):
                kind = self.kinds.get(other, OTHER)  # (a number is never changed in place)
                if other in live and other not in mine and kind not in SCALAR and kind != CONST:
                    self.refuse(
                        f"changing `{name}` in place while `{other}` may name the same object "
                        f"or share its memory (`{name}` was read out of a container that may "
                        f"hold `{held}`) and `{other}` is read afterwards",
                        f"the change would not show through `{other}`. Change `{other}` "
                        f"itself, or read the values back through the container",
                    )

    def guard_holders(self, s, fwd):
        """s changes in place the object of a name (`a[0] = x`, `a += v`, `a.append(v)`)
        that a container may hold (`c = [a]`, `d = {"w": a}`, `b = Box(a)`, a helper
        given both), and that container is read afterwards: Python shows the change
        through it, generated code would not (a copy on write, or a gradient that does
        not reach what is read through the container). Whether the container holds this
        very object depends on the path taken (a loop appending a fresh array each time
        holds only the earlier ones): checked when s runs, before the change
        (``runtime.check_held``)."""
        found = self._written_through(s)  # (a value with no gradient changes in place:
        name = found[0] if found is not None else None  # snapshot_writes)
        v = s.value if isinstance(s, gast.Assign) else None
        if name is None and getattr(v, "element_augmented", False) and isinstance(v.left, gast.Name):
            name = v.left.id  # `c[k] op= v`: the item changes in place (an array, a list)
        if name is None or self.kinds.get(name, OTHER) in SCALAR or self.kinds.get(name) == CONST:
            return
        live = self.live_after.get(id(s), frozenset())
        if not live:
            return
        h = self.holdings()
        own = h.copies(name)
        # what name may be: an object read out of a container (`w = s1.w`), one a call
        # may hand back (`z = ident(y)`, `m = push(l, v)`, `w = b.get()`)
        maybe = own | h.objects(name)
        given = set().union(*(self._call_sources(c) for c in own))
        mine = own | set(stmt_targets(s))
        mine |= {c for x in h.containers(name) if x in self._stored_into() for c in h.copies(x)}
        field = self.field_of.get(name)  # (`items = b.items` changed: written back, write_back_field)
        if field is not None and field[0] in self.active:
            mine |= h.copies(field[0])
        bound = self._bound_before().get(id(s), frozenset())
        if name in self._fresh_before().get(id(s), ()):
            return  # a new object since anything last held it
        line = getattr(s, "src_line", None)
        for c in sorted(live & bound - mine):
            kind = self.kinds.get(c, OTHER)
            if kind == CONST or kind in SCALAR:
                continue
            if c in given:  # (the very object, or memory shared with it)
                self.helpers.add("_rt")
                fwd.append(f"_rt.check_shared({name}, {c}, {self.shown(name)!r}, {self.shown(c)!r}, None, {line!r})")
            passed = name in self.info.params and c in self.info.params  # f(W, Box(W)): maybe
            if kind != ARRAY and (passed or (maybe | given) & (h.held_by(c) | {c})):
                self.helpers.add("_rt")
                fwd.append(f"_rt.check_held({name}, {c}, {self.shown(name)!r}, {self.shown(c)!r}, {line!r}"
                           f"{', True' if passed else ''})")

    def _stored_into(self):
        """Names of containers the function stores into (`c[k] = v`, `c.f = v`): those an
        item is written back into after a change (the normaliser's `c[0][1] = v`)."""
        memo = getattr(self, "_stored_memo", None)
        if memo is None:
            memo = self._stored_memo = frozenset(
                t.value.id for node in gast.walk(self.fn) if isinstance(node, gast.Assign)
                for t in node.targets
                if isinstance(t, (gast.Subscript, gast.Attribute)) and isinstance(t.value, gast.Name))
        return memo

    def _call_sources(self, name, seen=None):
        """The names a call that binds name was given (arguments, the receiver of a
        method) and what they hold: a user function may hand one of them back."""
        memo = getattr(self, "_sources_memo", None)
        if memo is None:
            memo = self._sources_memo = {}
            h = self.holdings()
            for node in gast.walk(self.fn):
                if not (isinstance(node, gast.Assign) and len(node.targets) == 1
                        and isinstance(node.targets[0], gast.Name) and isinstance(node.value, gast.Call)):
                    continue
                call, f = node.value, node.value.func
                obj = self.resolve(f)
                if ((obj is not None and (not isinstance(obj, types.FunctionType) or _runtime_fn(f)))
                        or _runtime_fn(f)) and not any(obj is b for b in _HANDING_BACK):
                    continue  # (NumPy, builtins, classes: a new object or a number)
                parts = list(call.args) + [k.value for k in call.keywords]
                if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and obj is None:
                    parts.append(f.value)
                got = memo.setdefault(node.targets[0].id, set())
                for a in parts:
                    if isinstance(a, gast.Name):
                        got |= h.copies(a.id) | h.held_by(a.id)
        got = set(memo.get(name, ()))
        seen = {name} if seen is None else seen | {name}
        for a in list(got):  # (`z = ident(ident(y))`: through the calls in turn)
            if a not in seen and a in memo:
                got |= self._call_sources(a, seen)
        return got

    def _fresh_before(self):
        """id(statement) -> the names that hold, where it runs, an object no container can
        hold yet: bound to a new object (a display, arithmetic, np.zeros and the like, a
        copy) earlier in the statement's block or an enclosing one, and neither given to
        a call, stored, copied to another name nor captured since, whatever the path
        (the statement that holds the statement at that level must not do any of these
        either). `row = np.zeros(n); row[0] = x; rows.append(row)` in a loop: rows holds
        only the rows of earlier turns when row is written."""
        memo = getattr(self, "_fresh_memo", None)
        if memo is None:
            memo = self._fresh_memo = {}

            def block(stmts, fresh):
                fresh = set(fresh)
                for st in stmts:
                    escaped = _escapes(st)
                    inner = fresh - escaped  # (a loop's earlier turns, a branch before)
                    for node in gast.walk(st):
                        if isinstance(node, gast.stmt):
                            memo.setdefault(id(node), frozenset(inner))
                    memo[id(st)] = frozenset(fresh)
                    for field in ("body", "orelse"):
                        sub = getattr(st, field, None)
                        if isinstance(sub, list) and sub:
                            block(sub, inner)
                    fresh -= escaped
                    for node in gast.walk(st):  # (bound anew inside a branch or loop too)
                        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
                            fresh.discard(node.id)
                        elif isinstance(node, gast.FunctionDef):
                            fresh.discard(node.name)
                    if isinstance(st, gast.Assign) and len(st.targets) == 1 \
                            and isinstance(st.targets[0], gast.Name) and self._makes_fresh(st.value):
                        fresh.add(st.targets[0].id)

            block(self.fn.body, ())
        return memo

    def _makes_fresh(self, v):
        """Whether value v is surely a new object (no container holds it yet)."""
        if isinstance(v, (gast.List, gast.Dict, gast.Set, gast.BinOp, gast.UnaryOp,
                          gast.ListComp, gast.DictComp, gast.SetComp)):
            return True
        if not isinstance(v, gast.Call):
            return False
        f = v.func
        if isinstance(f, gast.Attribute) and f.attr == "copy" and not v.args and self.resolve(f) is None:
            return True  # (x.copy() of a value)
        return any(self.resolve(f) is g for g in _NEW_OBJECT_FUNCS)

    def holdings(self):
        """The Holdings of this function (made when first asked for)."""
        if getattr(self, "_holdings_memo", None) is None:
            arrays = frozenset(n for n, k in self.kinds.items() if k == ARRAY)
            self._holdings_memo = Holdings(self.fn, self.resolve, arrays)
        return self._holdings_memo

    def held_and_read_again(self, arg, s):
        """The names, read again after statement s, whose objects the object of the name
        arg (an argument of the call s makes) may hold: a callee changing one of them in
        place through arg changes it in Python, and a copy on write in generated code
        (``runtime.keeping`` watches them). Only names surely bound where s runs
        (_bound_before): the call reads them."""
        live = self.live_after.get(id(s), frozenset())
        if not live:
            return []
        bound = self._bound_before().get(id(s), frozenset())
        h = self.holdings()

        def kept(n):
            return n in bound and self.kinds.get(n, OTHER) not in SCALAR and self.kinds.get(n, OTHER) != CONST

        # what arg holds: stored in it, and read out of it (`items = s.l`, then `s.push(v)`)
        held = set(h.held_by(arg))
        todo = set(h.copies(arg)) | held
        while todo:
            x = todo.pop()
            for r, places in h._reads.items():
                if r not in held and any(c == x for c, _ in places):
                    held |= h.copies(r)
                    todo |= h.copies(r)
        out = {(n, n) for n in held if n in live and kept(n)}
        # an object arg holds that another holder read afterwards holds too (`s1 = St(l);
        # s2 = St(l); s1.push(v); s2.l[0]`): watched under the holder's name
        for n in sorted(held - {x for x, _ in out}):
            if kept(n):
                for other in sorted(live - h.copies(arg)):
                    if other != n and n in h.held_by(other):
                        out.add((other, n))
                        break
        return sorted(out)

    def _bound_before(self):
        """id(statement) -> the names surely bound when it runs: the parameters, what the
        statements before it in its block bind, and so on out through the blocks that
        hold it (a loop's body: its target too)."""
        memo = getattr(self, "_bound_memo", None)
        if memo is None:
            memo = self._bound_memo = {}

            def block(stmts, bound):
                """The names surely bound after stmts (None: no path leaves them)."""
                bound = set(bound)
                for st in stmts:
                    memo[id(st)] = frozenset(bound)
                    if isinstance(st, gast.Assign):
                        bound.update(t.id for t in st.targets if isinstance(t, gast.Name))
                    elif isinstance(st, gast.If):  # what both branches bind
                        a, b = block(st.body, bound), block(st.orelse, bound)
                        if a is None or b is None:
                            bound = a if b is None else b
                            if bound is None:
                                return None
                        else:
                            bound = a & b
                    elif isinstance(st, gast.While):
                        block(st.body, bound)
                        block(st.orelse, bound)
                    elif isinstance(st, gast.For):
                        inner = bound | ({st.target.id} if isinstance(st.target, gast.Name) else set())
                        block(st.body, inner)
                        block(st.orelse, bound)
                    elif isinstance(st, (gast.Return, gast.Raise, gast.Break, gast.Continue)):
                        return None
                return bound

            block(self.fn.body, self.info.params)
        return memo

    def _writes_active(self, s):
        """Does statement s put a differentiated value somewhere?"""
        e = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
        if e is None:
            return False
        parts = e.args + [k.value for k in e.keywords] if isinstance(e, gast.Call) else [e]
        return any(isinstance(p, gast.Name) and p.id in self.active for p in parts)
