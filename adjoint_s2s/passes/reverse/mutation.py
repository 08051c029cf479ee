"""The reverse pass, mutation: ``a[i] = v``, ``obj.f = v``, list methods, and the aliases
that make a write through one name visible through another.

Reads the aliases recorded so far (``z = y``, views of arrays, fields read into names);
writes the forward write (``_rt.setitem`` and friends), a ``Save`` of the old value when
the pullback needs it, and a recipe that splits the adjoint between the container and the
written value. A write through a name whose other names the pass cannot follow is refused
(fail closed), never differentiated as if it had not happened. Which object a statement
changes in place, the copies of values with no gradient before a change, and the check
of elements still held by a container are in in_place.py (``InPlaceMixin``, the base of
``MutationMixin``).

Before (``a = np.zeros(2); a[0] = x``)::

    a[0] = x

After::

    a_saved_1 = a
    a = _rt.setitem(a, 0, x)
    ...
    b_a, b_x_part_1 = _rt.setitem_grad(b_a, a, 0, x)
    b_x = b_x + _rt.real(b_x_part_1)
    a = a_saved_1
"""
import gast
import numpy as np

from .. import codegen as C
from ..activity import ARRAY, CONST, INACTIVE_ATTRS, OTHER, SCALAR, walk_block
from ..codegen import Restore, src
from ...errors import outside_alias_message, shared_write_message, spelled
from ...naming import ADJOINT_PREFIX
from .common import (
    MAYBE,
    _AUG_SYMBOLS,
    _MAYBE_VIEW_FUNCS,
    _MAYBE_VIEW_METHODS,
    _MAYBE_VIEW_OF_ANY,
    _VIEW_ATTRS,
    _VIEW_FUNCS,
    _VIEW_IF_CONTIGUOUS,
    _VIEW_LISTS,
    _VIEW_METHODS,
    _basic_index,
    _element_index,
    _has_starred,
)
from .in_place import InPlaceMixin

# the attributes of an array that change it when set, and the way out
_ARRAY_SETTABLE = {
    "flat": "`{a} = np.full_like({a}, v)`, or `{a}[...] = v`",
    "shape": "`{a} = {a}.reshape(shape)`",
    "real": "`{a} = v + 1j * {a}.imag`",
    "imag": "`{a} = {a}.real + 1j * v`",
    "strides": "`{a} = np.lib.stride_tricks.as_strided({a}, ...)` outside differentiated code",
    "dtype": "`{a} = {a}.view(dtype)` outside differentiated code",
    "data": "`{a} = np.frombuffer(...)` outside differentiated code",
}

# values that name no object of their own: note_alias only ends x's old aliases
_NO_ALIAS = frozenset((gast.BinOp, gast.UnaryOp, gast.Constant, gast.Compare))


class MutationMixin(InPlaceMixin):
    """Writes into containers and objects, in-place list methods, aliases and views."""

    def write_back_field(self, name, field, rev, fwd, depth, flag=None):
        """`items = obj.items` then a change of items in place (`items.append(v)`): the
        object still holds it, so its gradient after the change is the field's. Writing
        it back (`obj.items = items`: a no-op for a change in place, the new list for copy
        on write) takes that gradient for items before the change is reversed; reversing
        the read puts what is left back into the field."""
        obj, attr = field
        if obj not in self.active:
            return rev
        if flag is not None:  # only if the change was in place (see stmt)
            self.helpers.add("_rt")
            fwd.append(f"if {flag}: _rt.own_field({obj}, {attr!r}); {obj}.{attr} = {name}")
            self.field_of[name] = field

            def maybe(st):
                st.acc(name, f"_rt.field_grad_if({flag}, {obj}, {attr!r})", False)
                if rev is not None:
                    rev(st)

            return maybe
        tgt = gast.Attribute(
            value=gast.Name(id=obj, ctx=gast.Load(), annotation=None, type_comment=None),
            attr=attr, ctx=gast.Store(),
        )
        tgt.field_write_back = True  # (the object's own field? runtime.own_field)
        back = self.setattr_(tgt, gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None), fwd, depth)
        self.field_of[name] = field

        def recipe(st):
            if back is not None:
                back(st)
            if rev is not None:
                rev(st)

        return recipe

    def _set_names(self):
        """Names bound to a set somewhere here (a display, set(), frozenset())."""
        names = getattr(self, "_sets", None)
        if names is None:
            names = self._sets = {
                s.targets[0].id for s in walk_block(self.fn.body)
                if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and (
                    isinstance(s.value, (gast.Set, gast.SetComp))
                    or isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Name)
                    and self.resolve(s.value.func) in (set, frozenset)
                )
            }
        return names

    def follow_aliases(self, name, group, flag, rev, fwd, depth):
        """After an in-place change of the object `name` holds, the other names surely
        bound to it (`b = a`) that are read again name it again: `a = b` (a no-op for
        an object changed in place; for copy on write, the new value). Their gradient
        then joins name's before the change is reversed, and goes back to them where
        the alias was made. When the change may rebind instead (`b += v` of unknown
        kind), the flag computed before it says whether it was in place."""
        others = sorted(
            z for z in group
            if z != name and z in self.live and self.kinds.get(z, OTHER) not in SCALAR
        )
        if not others:
            return rev
        for z in (z for z in others if z not in self.locals):  # a global: not named again here
            self.refuse(*outside_alias_message(name, z))
        recipes = []
        ref = gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
        for z in others:
            self.active.add(z)
            if flag is None:
                recipes.append(self.assign(z, ref, fwd, depth))
                continue
            mark = len(self.saves)
            self.save(z, fwd, depth)
            fwd.append(f"{z} = {name} if {flag} else {z}")
            recipes.append(self._rev_move_grad(flag, name, z, self.saves[mark:]))
            # whether z and name are now one object, the run decides: a later write
            # through either while the other is read is checked then (check_shared)
            self.aliases.setdefault(name, set()).add(z)
            self.aliases.setdefault(z, set()).add(name)
            self.maybe_views |= {name, z}

        def recipe(st):
            for r in reversed(recipes):
                r(st)
            if rev is not None:
                rev(st)

        return recipe

    def _rev_move_grad(self, flag, name, z, saves):
        """Reverse of `z = name if flag else z`: z's gradient joins name's if it moved
        (no consume: when it did not, z keeps it)."""

        def rev(st):
            if st.get(z) is not None:
                self.helpers.add("_rt")
                b, bz = st.adj(name), st.adj(z)
                prev = b if st.get(name) is not None else "None"
                st.line(f"{b}, {bz} = _rt.move_grad({flag}, {prev}, {bz})")
                st.status[name] = st.status[z] = MAYBE
            for sv in reversed(saves):
                st.out.append(Restore(sv))

        return rev

    def _is_field_list_op(self, e):
        func = e.func
        return (
            isinstance(func, gast.Attribute)
            and func.attr in ("append", "extend", "insert", "pop")
            and isinstance(func.value, gast.Attribute)
            and isinstance(func.value.value, gast.Name)
            and func.value.value.id in self.active
            and self.kind_of(func.value.value) == OTHER
            and not e.keywords
            and not _has_starred(e)
        )

    def field_list_op(self, e, fwd, depth, target=None):
        """`self.items.append(v)` (extend, insert; `x = self.items.pop()`): the list is
        read from the field into a name, changed through it, and written back (see
        write_back_field)."""
        func = e.func
        tmp = self.namer.fresh(func.value.attr)
        self.locals.add(tmp)
        self.kinds[tmp] = OTHER
        self.active.add(tmp)
        outer = self.cur_stmt
        read = self.assign(tmp, func.value, fwd, depth)
        name = gast.Name(id=tmp, ctx=gast.Load(), annotation=None, type_comment=None)
        call = gast.Call(func=gast.Attribute(value=name, attr=func.attr, ctx=gast.Load()), args=e.args, keywords=[])
        if target is None:
            op = gast.Expr(value=call)
        else:
            op = gast.Assign(
                targets=[gast.Name(id=target, ctx=gast.Store(), annotation=None, type_comment=None)],
                value=call, type_comment=None,
            )
        op.src_line = getattr(outer, "src_line", None)
        self.live_after[id(op)] = self.live
        change = self.stmt(op, fwd, depth)
        self.cur_stmt = outer

        def recipe(st):
            change(st)
            read(st)

        return recipe

    def _in_place_list_op(self, lst, v, forward, undo):
        """An in-place list operation that puts v into lst: `forward()` writes the forward
        lines and returns the name of what the reverse needs (a length or a position);
        the reverse takes v's gradient back out of the list's tangent with
        `b_lst, b_v_part = _rt.<undo(prev, n)>`."""
        self.appended.add(lst)
        self.helpers.add("_rt")
        mark = len(self.saves)
        n = forward()
        saves = self.saves[mark:]

        def recipe(st):
            b = st.adj(lst)
            active = isinstance(v, gast.Name) and self.is_active(v)
            t = self.namer.fresh(f"{ADJOINT_PREFIX}{v.id}_part") if active else "_"
            prev = b if st.get(lst) is not None else "None"
            st.line(f"{b}, {t} = _rt.{undo(prev, n)}")
            st.status[lst] = MAYBE
            if active:
                st.acc(v.id, t, False)
            for sv in reversed(saves):
                st.out.append(Restore(sv))

        return recipe

    def list_extend(self, lst, vs, fwd, depth):
        """lst.extend(vs): in place; the gradient of vs is the tangent's new items."""

        def forward():
            n = self.fresh_local(f"{lst}_len", fwd, depth)
            fwd.append(f"{n} = _rt.extend({lst}, {src(vs)})")
            return n

        return self._in_place_list_op(lst, vs, forward, lambda prev, n: f"unextend({prev}, {n}, {src(vs)})")

    def list_insert(self, lst, i, v, fwd, depth):
        """lst.insert(i, v): in place; the gradient of v is taken out of the tangent."""

        def forward():
            n = self.fresh_local(f"{lst}_pos", fwd, depth)
            fwd.append(f"{n} = _rt.insert({lst}, {src(i)}, {src(v)})")
            return n

        return self._in_place_list_op(lst, v, forward, lambda prev, n: f"uninsert({prev}, {n})")

    def list_pop(self, x, lst, args, fwd, depth):
        """A `lst.pop(i)` statement: an assignment to a fresh name x."""
        mark = len(self.saves)
        self.save(x, fwd, depth)
        rev = self._pop(x, lst, args, fwd, depth)
        return self.with_restore(rev, x, self.saves[mark:])

    def append(self, lst, v, fwd, depth, length=None):
        """lst.append(v): in place for lists (the gradient of v is the tangent's last item)."""

        def forward():
            # n = _rt.append(lst, v) in generated code differentiated again: the assignment
            # around this call saves and restores n
            n = self.fresh_local(f"{lst}_len", fwd, depth) if length is None else length
            fwd.append(f"{n} = _rt.append({lst}, {src(v)})")
            return n

        return self._in_place_list_op(lst, v, forward, lambda prev, n: f"unappend({prev}, {n})")

    def note_alias(self, x, e):
        """Follow `z = y` between the user's names, and `z = y[1:]`, `z = y.T`,
        `z = np.flip(y)`... (views, which share y's memory), in the order the code is
        generated (a rebinding ends an alias): enough to catch a write through one name
        that the other would have to show (see setitem)."""
        aliases, same, field_of = self.aliases, self.same, self.field_of
        if aliases:
            for z in aliases.pop(x, ()):
                aliases.get(z, set()).discard(x)
        if same:
            for z in same.pop(x, ()):
                same.get(z, set()).discard(x)
        if field_of:
            field_of.pop(x, None)
            for z in [z for z, (o, _) in field_of.items() if o == x]:
                del field_of[z]
        if e.__class__ in _NO_ALIAS:  # an operator's result: no view, no field, no copy
            self.maybe_views.discard(x)
            if getattr(e, "element_augmented", False):
                self._check_item_augmented(e)
            return
        if (
            isinstance(e, gast.Attribute)
            and isinstance(e.value, gast.Name)
            and e.value.id != x
            and self.kind_of(e.value) == OTHER
            and e.attr not in _VIEW_ATTRS | INACTIVE_ATTRS
        ):
            self.field_of[x] = (e.value.id, e.attr)
        self.maybe_views.discard(x)
        if isinstance(e, gast.Name) and e.id != x and {x, e.id} <= self.alias_names:
            base = e.id
            same = {base} | self.same.get(base, set())
            for z in same:
                self.same.setdefault(z, set()).add(x)
            self.same[x] = same
            bases = (base,)
        else:
            bases, maybe = self._view_bases(e)  # (a view of any of them)
            bases = [b for b in bases if b != x]
            if not bases:
                return
            if maybe or isinstance(e, gast.Subscript) and _element_index(e.slice):
                self.maybe_views.add(x)  # y[i]: a view of a row, or a number
        group = set(bases)
        for b in bases:
            group |= self.aliases.get(b, set())
        if getattr(e, "written_back", False):  # (an item of a list of views: not the list)
            group -= {e.value.id} | self.same.get(e.value.id, set())
        for z in group:
            self.aliases.setdefault(z, set()).add(x)
        self.aliases[x] = group

    def _check_item_augmented(self, e):
        """`parts[1] += v`: in place for an array item, which the other views of its
        memory show (the container it was read out of gets it back): checked when it runs."""
        left = e.left
        if left.__class__ is gast.Name and self.aliases.get(left.id):
            h = self.holdings()
            back = {c for z in h.containers(left.id) for c in h.copies(z)}
            if self.aliases[left.id] - back:
                op = _AUG_SYMBOLS.get(type(e.op).__name__, "+")
                self.check_shared_write(left.id, op, self.fwd, refuse=False, skip=back)

    def alias_state(self):
        """A copy of what note_alias knows, to join the paths of an if or a loop."""
        return (
            {k: set(v) for k, v in self.aliases.items()},
            set(self.maybe_views),
            {k: set(v) for k, v in self.same.items()},
            dict(self.field_of),
        )

    def set_alias_state(self, state):
        aliases, maybe, same, field_of = state
        self.aliases, self.maybe_views = aliases, maybe
        self.same = {k: set(v) for k, v in same.items()}
        self.field_of = dict(field_of)

    def forget_same(self, names):
        """names may be bound to other objects from here on (a loop's back edge)."""
        for x in names:
            for z in self.same.pop(x, ()):
                self.same.get(z, set()).discard(x)
        self.same = {k: v for k, v in self.same.items() if v}
        self.field_of = {
            k: v for k, v in self.field_of.items() if k not in names and v[0] not in names
        }

    def join_aliases(self, other):
        """Aliases after two paths meet: those of either (a rebinding on one path does not
        end the alias on the other). An alias of one path only is checked when the code
        runs (check_shared), as for `z = y[i]`."""
        aliases, maybe, same, field_of = other
        self.field_of = {k: v for k, v in self.field_of.items() if field_of.get(k) == v}
        for k in dict.fromkeys([*self.same, *same]):  # the same object on both paths only
            both = self.same.get(k, set()) & same.get(k, set())
            if both:
                self.same[k] = both
            else:
                self.same.pop(k, None)
        for k in dict.fromkeys([*self.aliases, *aliases]):  # a fixed order, whatever the hash seed
            mine, theirs = self.aliases.get(k, set()), aliases.get(k, set())
            if mine != theirs:  # on one path only: whether they share, the run tells
                self.maybe_views |= {k} | (mine ^ theirs)
            self.aliases[k] = mine | theirs
        self.maybe_views |= maybe

    def check_augmented(self, e, fwd):
        """`a += v` changes an array or list in place in Python, and every other name for
        it shows the change; differentiated code gives `a` a new value instead."""
        kind = self.kind_of(e.left)
        if kind in SCALAR or kind == CONST:
            return  # numbers: `a += v` rebinds in Python too
        op = _AUG_SYMBOLS.get(type(e.op).__name__, "+")
        self.check_shared_write(e.left.id, op, fwd, refuse=kind == ARRAY)

    def check_shared_write(self, name, op, fwd, refuse=True, skip=frozenset()):
        """A write into name (`name[i] = v`, or `name op= v`) while another name for the
        same container (or a view of it) is read afterwards: differentiated code writes a
        copy, so the other name would keep the old values where Python shows the new ones.
        Refused here when the two surely share (`z = y`, `z = y[1:]`, `z = y.T`); checked
        when it runs when that depends on values (`z = y[i]` is a view of a row, or a
        number; a value of unknown kind may be a number, for which `a += v` rebinds)."""
        same = self.same.get(name, set())
        for z in sorted(z for z in self.aliases.get(name, ()) if z in self.live and z not in same and z not in skip):
            if refuse and name not in self.maybe_views and z not in self.maybe_views:
                self.refuse(*shared_write_message(name, z, op, shown=self._view_shown(name)))
            self.helpers.add("_rt")
            line = getattr(self.cur_stmt, "src_line", None)
            fwd.append(self.shared_check_line(name, z, op, line))
        if self.aliases.get(name):
            self._check_held_views(name, fwd, skip)

    def _view_shown(self, name):
        """The user's expression for the normaliser's name of a view (`b.T` of `b.T[0] =
        v`, `b[1:]` of `b[1:][0] = v`), for a refusal's message; None for a user's name."""
        shown = getattr(self.fn, "shown", {})
        if name in self.user_names or shown.get(name).__class__ not in (gast.Attribute, gast.Subscript):
            return None
        return spelled(name, shown)

    def _check_held_views(self, name, fwd, skip):
        """A write into name while a container or object that may hold a view of it
        (`l = [b[:2]]`, `h = Box(b.T)`, the view's own name no longer read) is read
        afterwards: Python shows the write through the view it holds, differentiated code
        writes a copy. Checked when the write runs (runtime.check_held: an array the holder
        holds that shares memory with name's)."""
        views = self.aliases[name]
        s = self.cur_stmt
        live = self.live_after.get(id(s), frozenset())
        if not live:
            return
        h = self.holdings()
        own = h.copies(name)
        bound = self._bound_before().get(id(s), frozenset())
        line = getattr(s, "src_line", None)
        for c in sorted(live & bound - own - views - skip):
            kind = self.kinds.get(c, OTHER)
            if kind in (ARRAY, CONST) or kind in SCALAR:
                continue
            held = h.held_by(c)
            if views & held and not own & held:  # (own & held: guard_holders checks it)
                self.helpers.add("_rt")
                fwd.append(f"_rt.check_held({name}, {c}, {self.shown(name)!r}, {self.shown(c)!r}, {line!r})")

    def _view_bases(self, e):
        """(the names e may be a view of, maybe): basic indexing, .T, .flat, reshape(),
        ravel(), np.flip, np.split (a list of views)...; maybe when it depends on the
        values (np.diag, a real array's conj(), np.einsum): checked when a write runs."""
        cls = e.__class__
        if cls is gast.Subscript and isinstance(e.value, gast.Name):
            if getattr(e, "written_back", False):
                c = e.value.id
                if self.kind_of(e.value) == OTHER and self.aliases.get(c):
                    # an item of a list of views (np.split's): the write goes back into the
                    # list (not an alias), not into the arrays it views (aliases, maybe)
                    return tuple(sorted(
                        z for z in self.aliases[c] - {c} if self.kinds.get(z) == ARRAY)), True
                return (), False
            kind = self.kind_of(e.value)
            if kind in SCALAR or not _basic_index(e.slice, self.kind_of):
                return (), False
            # (a list's slice is a copy, an array's a view: the run tells, check_shared)
            return (e.value.id,), kind == OTHER
        if cls is gast.Attribute and isinstance(e.value, gast.Name) and e.attr in _VIEW_ATTRS:
            if e.attr == "flat" and e.value.id not in self.active:
                return (), False  # (no gradient: written in place, as Python, see private)
            return (e.value.id,), False
        if cls is not gast.Call:
            return (), False
        f = e.func
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and (
            f.attr in _VIEW_METHODS or f.attr in _MAYBE_VIEW_METHODS
        ):
            if self.resolve(f.value) is None and self.kind_of(f.value) not in SCALAR:
                if f.attr in _VIEW_METHODS:
                    return (f.value.id,), f.attr in _VIEW_IF_CONTIGUOUS and bool(self.aliases.get(f.value.id))
                if f.attr != "astype" or any(k.arg == "copy" for k in e.keywords):
                    return (f.value.id,), True
        fn = self.resolve(f)
        if fn is None or not e.args:
            return (), False
        try:
            if len(e.args) > 1 and fn in _MAYBE_VIEW_OF_ANY or fn is np.einsum:
                names = [a.id for a in e.args if isinstance(a, gast.Name)
                         and self.kind_of(a) not in SCALAR and self.kind_of(a) != CONST]
                return tuple(dict.fromkeys(names)), True
            first = e.args[0]
            if not isinstance(first, gast.Name) or self.kind_of(first) in SCALAR:
                return (), False
            if fn in _VIEW_FUNCS:
                return (first.id,), fn in _VIEW_IF_CONTIGUOUS and bool(self.aliases.get(first.id))
            if fn in _VIEW_LISTS:
                return (first.id,), True
            if fn in _MAYBE_VIEW_FUNCS and (fn is not np.array or any(k.arg == "copy" for k in e.keywords)):
                return (first.id,), True
        except TypeError:  # an unhashable callee
            pass
        return (), False

    def setitem(self, tgt, v, fwd, depth):
        obj = tgt.value
        if isinstance(obj, gast.Name):
            self.check_shared_write(obj.id, None, fwd)
        idx = C.index_value_src(tgt.slice)
        line = f"{src(obj)}[{C.index_src(tgt.slice)}] = {src(v)}"
        if (
            isinstance(obj, gast.Name)
            and obj.id not in self.locals and obj.id not in self.info.params
            and self.is_active(v)
        ):
            where = "captured from an enclosing function" if obj.id in self.info.freevars else "a global"
            self.refuse(
                f"writing a differentiated value into `{obj.id}` ({where})",
                f"its gradient would be lost. Pass `{obj.id}` in as an argument and return "
                f"the written container, or build it in this function",
            )
        if (
            not isinstance(obj, gast.Name)
            or obj.id not in self.active
            or obj.id not in self.locals and obj.id not in self.info.params
        ):
            fwd.append(line)  # a global or captured container: written in place, as Python
            return None
        # copy on write: the old container stays intact for the backward pass
        self.helpers.add("_rt")
        name = obj.id
        self.item_written(name, fwd)  # (an item held at two places: `[[0.0] * 2] * 2`)
        mark = len(self.saves)
        self.save(name, fwd, depth)
        saves = self.saves[mark:]
        for sv in saves:
            sv.keeps_shape = True
        # an argument: a caller reading it again takes the written copy (runtime.kept)
        arg = name in self.info.params and self.kinds.get(name, OTHER) in (ARRAY, OTHER)
        how = "setitem_arg" if arg else "setitem"
        fwd.append(f"{name} = _rt.{how}({name}, {idx}, {src(v)})")

        return lambda st: self._rev_setitem(st, name, idx, v, arg, saves)

    def _rev_setitem(self, st, name, idx, v, arg, saves):
        """The adjoint of ``name[idx] = v``: the written part goes to v, the rest stays."""
        if arg:  # the caller's gradient of the written container, if it took it
            st.acc(name, f"_rt.take_items({name})", False)
        if st.get(name) is not None:
            b = st.adj(name)
            if (
                self.is_active(v)
                and st.get(v.id) is not None
                and self.kinds.get(v.id, OTHER) not in SCALAR
            ):  # v's adjoint is added to: the row goes straight into it
                bv = st.adj(v.id)
                st.line(f"{b}, {bv} = _rt.setitem_grad_acc({b}, {name}, {idx}, {src(v)}, {bv})")
                st.status[name] = st.status[v.id] = MAYBE
                st.added_to.add(bv)
            else:
                t = self.namer.fresh(f"{ADJOINT_PREFIX}{v.id}_part") if self.is_active(v) else "_"
                vsrc = src(v) if self.is_active(v) else "None"
                st.line(f"{b}, {t} = _rt.setitem_grad({b}, {name}, {idx}, {vsrc})")
                st.status[name] = MAYBE
                if self.is_active(v):
                    st.acc(v.id, t, False)
        for sv in reversed(saves):
            st.out.append(Restore(sv))

    def setattr_(self, tgt, v, fwd, depth):
        """obj.attr = v mutates obj; v's gradient is what later reads of the field left."""
        obj = tgt.value
        if isinstance(obj, gast.Name) and obj.id in self.active and tgt.attr in _ARRAY_SETTABLE \
                and self.kind_of(obj) == ARRAY:
            a = obj.id
            self.refuse(
                f"setting `{a}.{tgt.attr}`, which changes the array `{a}` in place",
                f"differentiated code follows an array by its name and writes copies, so the "
                f"gradient would miss the change. Bind a new array instead: "
                f"{_ARRAY_SETTABLE[tgt.attr].format(a=a)}",
            )
        active = isinstance(obj, gast.Name) and obj.id in self.active
        if active and getattr(tgt, "field_write_back", False):  # a field changed in place
            fwd.append(f"_rt.own_field({obj.id}, {tgt.attr!r})")
        fwd.append(f"{src(obj)}.{tgt.attr} = {src(v)}")
        if not active:
            return None
        self.helpers.add("_rt")

        def recipe(st):
            if self.is_active(v):
                st.acc(v.id, f"_rt.setattr_grad({obj.id}, {tgt.attr!r})", False)
            else:
                st.line(f"_rt.setattr_grad({obj.id}, {tgt.attr!r})")

        return recipe

