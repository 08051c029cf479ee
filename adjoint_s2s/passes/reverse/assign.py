"""The reverse pass, assignments: ``x = e`` for every kind of normalised ``e``.

Reads the activity of ``x`` and ``e``; dispatches on the expression to the other families
(operators, calls, data), saves the old value of ``x`` when it is overwritten, and writes
the copy of an adjoint for ``x = y``. An inactive right-hand side is written as it is and
gets no recipe.

Before (``z`` assigned twice)::

    z = y * 2.0
    mul = z * y
    z = mul

After::

    z = y * 2.0
    mul = z * y
    z_saved_1 = z
    z = mul
    ...
    b_mul = b_z
    z = z_saved_1
    b_z = b_mul * y
    b_y = b_mul * z
"""
import ast

import gast

from ..activity import ARRAY, COMPLEX, CONST, OTHER, REAL, SCALAR, free_names_of_function
from ...errors import spelled
from ..codegen import If, Raw, Restore, Save, index_src, src
from ..whole import ROOTS as WHOLE_ROOTS
from .common import MAYBE, NUM, _MUTATING_METHODS, _default_atoms, _tuple_src


_ARITHMETIC = (gast.BinOp, gast.UnaryOp)
_OPERATOR_PARTS = (gast.operator, gast.unaryop, gast.expr_context)


class AssignMixin:
    """Assignments: the dispatch on the right-hand side, saves and adjoint copies."""

    # ----- assignments -------------------------------------------------------------------
    def note_argument_aliases(self, read=None, skip=()):
        """Arrays passed in may be one array or views of one (`f(W, W)`, `f(a, a[1:])`, a
        record's array field `read` and an argument): a write into one while another is
        read after it is checked when it runs (check_shared), as for `z = y[i]`. What
        `read` was read out of (skip) sees the write: it is written back."""
        arrays = self.argument_arrays()
        for p in arrays if read is None else (read,):
            for q in arrays:
                if q != p and q not in skip:
                    self.aliases.setdefault(p, set()).add(q)
                    self.aliases.setdefault(q, set()).add(p)
                    self.maybe_views.update((p, q))

    def argument_arrays(self):
        """What the caller handed in that may be an array another of them shares memory
        with: the parameters of array kind or of unknown kind (a keyword-only one, say),
        the captured variables of array kind, and the names a record's array fields are
        read into."""
        kinds = self.kinds
        return ([p for p in self.info.params if kinds.get(p, OTHER) in (ARRAY, OTHER)]
                + [c for c in self.info.freevars if kinds.get(c) == ARRAY] + sorted(self.info.field_arrays))

    def note_read_out_of(self, x, e):
        """x = y.attr or x = y[i], y an argument or captured object or something read out
        of one (`W = p.W`, `w = ws[0]`): an array x may then be is the caller's, and may
        share memory with another array passed in or captured (`A` captured, `p.W is A`),
        so a write into x is checked as a write into an argument (note_argument_aliases).
        read_out_of[x]: (the names x was read out of, x as the user wrote it)."""
        outside = self.read_out_of
        outside.pop(x, None)
        if x in self.info.field_arrays:  # a record's array field, read at the entry
            self.note_argument_aliases(x)
            return
        if e.__class__ not in (gast.Attribute, gast.Subscript) or e.value.__class__ is not gast.Name:
            return
        y, kinds = e.value.id, self.kinds
        if y == x or kinds.get(x, OTHER) not in (ARRAY, OTHER):
            return
        if y in outside:
            chain, base = outside[y]
            chain = chain | {y}
        elif y in self.info.params or y in self.info.freevars and kinds.get(y, OTHER) in (ARRAY, OTHER):
            chain, base = frozenset((y,)), y
        else:
            return
        outside[x] = (chain, base + src(e)[len(y):])
        self.note_argument_aliases(x, skip=chain)

    def loop_invariant(self, x, e):
        """Does `x = e`, in a loop, give x the same number on every trip: e arithmetic on
        numbers and constants that no loop around it rebinds, and x bound by this
        statement alone in the function? Then x's value before a trip is that value
        too (or none yet): nothing to tape (the pendulum's `mul = dt * k`)."""
        if self.kinds.get(x) not in SCALAR or not self.invariant_value(e):
            return False
        counts = self.__dict__.get("_store_counts")
        if counts is None:
            counts = self._store_counts = {}
            for n in gast.walk(self.fn):
                if n.__class__ is gast.Name and n.ctx.__class__ is not gast.Load:
                    counts[n.id] = counts.get(n.id, 0) + 1
        return counts.get(x) == 1

    def invariant_value(self, e):
        """Is e, in a loop, arithmetic on numbers and constants that no loop around it
        rebinds (the same value every trip)?"""
        kinds, rebound = self.kinds, self.loop_rebound
        if not rebound:
            return False
        for n in gast.walk(e):
            c = n.__class__
            if c is gast.Name:
                if kinds.get(n.id) not in SCALAR and kinds.get(n.id) != CONST or any(n.id in r for r in rebound):
                    return False
            elif c not in _ARITHMETIC and c is not gast.Constant and not isinstance(n, _OPERATOR_PARTS):
                return False
        return True

    def shared_check_line(self, name, z, op, line):
        """The run-time check of a write into name while z may share its memory (mutation.py,
        check_shared_write): two arrays from the caller say so (the way out differs), and a
        record's field is named as the user wrote it (`p.W`)."""
        shown = {**self.info.field_arrays, **{n: t for n, (_, t) in self.read_out_of.items()},
                 **self.calls_shown()}
        spelled_ = getattr(self.fn, "shown", {})
        shown = {n: shown.get(n) or spelled(n, spelled_) or n for n in (name, z)}
        args = ""
        if {name, z} <= set(self.argument_arrays()) | set(self.read_out_of):
            roles = tuple(self._role(n) for n in (name, z))
            args = ", True" if roles == ("argument", "argument") else f", {roles!r}"
        return (f"_rt.check_shared({name}, {z}, {shown[name]!r}, {shown[z]!r}, {op!r}, "
                f"{line!r}{args})")

    def shown(self, name):
        """name as the user wrote it, for a run-time check's message (shared_check_line)."""
        got = self.read_out_of.get(name)
        if got is not None:
            return got[1]
        # (a temporary of the normaliser: the user's expression it holds, `grid['u']`)
        return self.calls_shown().get(name) or spelled(name, getattr(self.fn, "shown", {})) or name

    def calls_shown(self):
        """The normaliser's names for values calls gave, as the user wrote the call
        (`setdefault` -> `d.setdefault(...)`), for the messages of run-time checks."""
        memo = self.__dict__.get("_calls_shown")
        if memo is None:
            memo = self._calls_shown = {}
            for st in gast.walk(self.fn):
                if st.__class__ is gast.Assign and len(st.targets) == 1 and st.targets[0].__class__ is gast.Name:
                    x, f = st.targets[0].id, getattr(st.value, "func", None)
                    if x in self.user_names or st.value.__class__ is not gast.Call:
                        continue
                    if f.__class__ is gast.Attribute and f.value.__class__ is gast.Name:
                        memo[x] = f"{f.value.id}.{f.attr}(...)"
                    elif f.__class__ is gast.Name:
                        memo[x] = f"{f.id}(...)"
        return memo

    def _role(self, name):
        """How name's object came from the caller: an argument, or captured by the function."""
        got = self.read_out_of.get(name)
        roots = {name} if got is None else got[0]
        return "captured variable" if roots & set(self.info.freevars) else "argument"

    def assign(self, x, e, fwd, depth):
        cls = e.__class__  # (no node class has subclasses: `is`, not isinstance)
        unpacks = getattr(self.cur_stmt, "unpacks", None)
        if unpacks is not None:  # (the first read of `a, b = v`: targets.py)
            self.check_unpack(*unpacks, fwd)
        if getattr(e, "augmented", False) and isinstance(e.left, gast.Name):
            self.check_augmented(e, fwd)
            if self.kind_of(e.left) == OTHER:  # `lst += vs` extends a caller's list
                self.appended.add(e.left.id)
        if cls is gast.Name and e.id == x and not getattr(self.cur_stmt, "augmented", False):
            # `x = x` (a generated pullback's `b_s = (b_s)`, differentiated again): the
            # identity, with no reverse. As a copy it would add x's adjoint to itself and
            # then clear it (consume): a zero gradient.
            fwd.append(f"{x} = {x}")
            return None
        self.note_alias(x, e)
        self.note_read_out_of(x, e)
        active = x in self.active
        saves = self.saves
        mark = len(saves)
        sv = Save(x, depth > 0)  # (self.save(x, fwd, depth), inline)
        if depth > 0 and cls in _ARITHMETIC and self.loop_invariant(x, e):
            sv.invariant = True
        saves.append(sv)
        fwd.append(sv)
        if cls in WHOLE_ROOTS and getattr(e, "whole", False):  # (arithmetic on numbers: whole.py)
            rev = self.whole(x, e, fwd)
        elif not active or (cls is gast.Call and not self.value_active(e)):
            rev = self._assign_inactive(x, e, active, fwd, depth)
        elif cls is gast.BinOp:
            rev = self.binop(x, e, fwd)
            if getattr(e, "element_augmented", False):
                self._item_replaced(x, e, fwd)
        elif cls is gast.Call:
            rev = self.call(x, e, fwd)
        elif cls is gast.Name:
            rev = self._assign_name(x, e, fwd)
        elif cls is gast.UnaryOp:
            rev = self.unaryop(x, e, fwd)
        elif cls is gast.Attribute:
            rev = self.attribute(x, e, fwd)
        elif cls is gast.Subscript:
            rev = self.subscript(x, e, fwd)
        elif cls is gast.Tuple or cls is gast.List:
            rev = self.display(x, e, fwd)
        elif cls is gast.Dict:
            rev = self.dict_display(x, e, fwd)
        elif cls is gast.Lambda:
            fwd.append(Raw([f"{x} = {ast.unparse(gast.gast_to_ast(e))}"], getattr(e, "lineno", None)))
            self.raw_items.append(fwd[-1])
            rev = self.rev_closure(x, free_names_of_function(e), _default_atoms(e), e)
            self.local_fns[x] = free_names_of_function(e)
        else:
            fwd.append(f"{x} = {src(e)}")
            rev = None
        if x in self.unpacked:
            rev = self.rev_pack(x, e, rev)
        return self.with_restore(rev, x, saves[mark:])

    def check_unpack(self, value, n, star, fwd):
        """`a, b = value` reads value[0], value[1]: checked when it runs (the count, and a
        tuple, list or array: runtime/protocols.py), unless value is a tuple of n items."""
        known = self.tuple_elts.get(value)
        if known is not None and star is None and len(known) == n:
            return
        self.helpers.add("_rt")
        fwd.append(f"_rt.check_unpack({value}, {n}{'' if star is None else f', {star}'})")

    def _item_replaced(self, x, e, fwd):
        """`c[k] op= v`, `obj.f op= v` with c, obj not arrays: Python changes the item, an
        array or a list, in place, where this code binds a new value into the container;
        logged (runtime.replaced), so that a caller holding the item under a name of its
        own, or passing it, is refused the change (runtime.keeping)."""
        left = e.left
        if not isinstance(left, gast.Name) or self.kind_of(left) not in (ARRAY, OTHER):
            return
        containers = self.holdings().containers(left.id)
        if any(self.kinds.get(c) == ARRAY for c in containers):
            return  # (a row of an array: a view, written back into the array's memory)
        self.helpers.add("_rt")
        if len(containers) == 1:  # (the container it was read out of, which gets x back)
            c = next(iter(containers))
            line = getattr(self.cur_stmt, "src_line", None)
            fwd.append(f"_rt.replaced({left.id}, {c}, {c!r}, {line!r})")
        else:
            fwd.append(f"_rt.replaced({left.id})")

    def item_written(self, name, fwd):
        """`rows[0][1] = v` is `rows_i = rows[0]; rows_i[1] = v; rows[0] = rows_i`: a copy
        on write of rows_i, put back at that one place of rows. Python changes the item
        in place, and every place of rows that holds it shows the change (`[[0.0] * 2] *
        2`, one list appended twice): checked before the write (runtime.replaced), which
        refuses it then. A row of an array is a view, written back into its memory."""
        back = self._read_back().get(name)
        if back is None or self.kinds.get(back[0]) == ARRAY:
            return
        base, idx = back
        written, outer = f"{base}[{idx}]", self._read_back().get(base)
        while outer is not None:  # (the user's own expression: `rows[0][1]`, not `rows_i`)
            written = f"{outer[0]}[{outer[1]}]{written[len(base):]}"
            base, outer = outer[0], self._read_back().get(outer[0])
        self.helpers.add("_rt")
        line = getattr(self.cur_stmt, "src_line", None)
        fwd.append(f"_rt.replaced({name}, {back[0]}, {back[0]!r}, {line!r}, {written!r})")

    def _read_back(self):
        """{x: (c, index source)} for the normaliser's `x = c[k]` of a nested write, whose
        x it writes into and puts back (a fresh name, bound there only)."""
        memo = getattr(self, "_read_back_memo", None)
        if memo is None:
            memo = self._read_back_memo = {}
            for s in gast.walk(self.fn):
                if (
                    isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
                    and isinstance(s.value, gast.Subscript) and getattr(s.value, "written_back", False)
                    and isinstance(s.value.value, gast.Name)
                ):
                    memo[s.targets[0].id] = (s.value.value.id, index_src(s.value.slice))
        return memo

    def maybe_same_flags(self, s, through, group, fwd, depth):
        """s a list method that changes `name` in place (`c.append(v)`) while a name that
        may or may not be bound to the same object (`c = a if t else b`, `if t: c = a`)
        is read afterwards: Python shows the new items through it. Whether it is the same
        object, the run tells before the change (`c_is_a = c is a`); follow_maybe_same
        then moves its gradient to name's. Returns [(other name, flag, the flag's saves)]."""
        e = getattr(s, "value", None)
        if (
            through is None or not isinstance(e, gast.Call) or not isinstance(e.func, gast.Attribute)
            or e.func.attr not in _MUTATING_METHODS or not isinstance(e.func.value, gast.Name)
            or e.func.value.id != through[0] or through[0] not in self.active
        ):
            return []
        name, live, out = through[0], self.live_after.get(id(s), frozenset()), []
        for z in sorted(self.aliases.get(name, set()) - group - {name}):
            kind = self.kinds.get(z, OTHER)
            if z in live and kind not in SCALAR and kind != CONST and z in self.locals | set(self.info.params):
                self.helpers.add("_rt")
                mark = len(self.saves)
                flag = self.fresh_local(f"{name}_is_{z}", fwd, depth)
                fwd.append(f"{flag} = {name} is {z}")
                out.append((z, flag, self.saves[mark:]))
        return out

    def follow_maybe_same(self, name, maybe, rev, fwd, depth):
        """After the change (see maybe_same_flags): `a = c if c_is_a else a` (a no-op
        rebinding), reversed by moving a's gradient into c's where they were one object,
        before the change is reversed; the flags are restored after it."""
        recipes = []
        for z, flag, _ in maybe:
            self.active.add(z)
            mark = len(self.saves)
            self.save(z, fwd, depth)
            fwd.append(f"{z} = {name} if {flag} else {z}")
            recipes.append(self._rev_move_grad(flag, name, z, self.saves[mark:]))

        def recipe(st):
            for r in reversed(recipes):
                r(st)
            if rev is not None:
                rev(st)
            for _, _, saves in reversed(maybe):
                for sv in reversed(saves):
                    st.out.append(Restore(sv))

        return recipe

    def rev_pack(self, x, e, rev):
        """x a tuple or dict read only item by item (see Generator._unpacked_tuples): made
        by a display, each value takes its item's adjoint; else x's adjoint is the tuple
        of its items' adjoints (a zero of its kind where an item has none)."""
        items = self.unpacked[x]
        names = list(items.values())
        if isinstance(e, (gast.Dict, gast.Tuple)):
            values = e.values if isinstance(e, gast.Dict) else e.elts
            keys = [k.value for k in e.keys] if isinstance(e, gast.Dict) else range(len(values))

            def from_display(st):
                for key, v in zip(keys, values):
                    n = items[key]
                    if st.get(n) is not None and self.is_active(v):
                        st.acc(v.id, st.adj(n), st.get(n) == NUM)
                for n in names:
                    st.consume(n)

            return from_display

        def recipe(st):
            if any(st.get(n) is not None for n in names):
                zero = {REAL: "0.0", COMPLEX: "0j"}
                parts = [st.adj(n) if st.get(n) is not None else zero.get(self.kinds[n], "None")
                         for n in names]
                st.line(f"{st.adj(x)} = {_tuple_src(parts)}")
                st.status[x] = MAYBE
                for n in names:
                    st.consume(n)
            if rev is not None:
                rev(st)

        return recipe

    def _assign_inactive(self, x, e, active, fwd, depth):
        """``x = e`` with e a constant here (x may be active elsewhere)."""
        if isinstance(e, gast.Call) and not self.value_active(e):
            keep = self.read_again(e)
            call = self.inactive_call(e, keep)
            fwd.append(f"{x} = {call}")
            self.take_kept_inactive(call, e, keep, fwd, depth)
        else:
            fwd.append(f"{x} = {src(e)}")
        if (
            active
            and isinstance(e, gast.Call)
            and isinstance(self.resolve(e.func), type)  # a new object, made from constants
            and self.kinds.get(x) == OTHER
            and x in self._attribute_bases()
        ):
            return self.rev_forget_fields(x)
        return None

    def _assign_name(self, x, e, fwd):
        """``x = y``: a copy of the adjoint (y's object, when it is one, has two names)."""
        if e.id in self.local_fns:  # f = (a local function): f names it too
            self.local_fns[x] = self.local_fns[e.id]
            self.fn_names.setdefault(e.id, {e.id}).add(x)
        if (
            getattr(self.cur_stmt, "augmented", False)
            and x in self.info.params
            and self.kinds.get(x, OTHER) in (ARRAY, OTHER)
        ):  # `x op= v` on an argument: in place in Python (see runtime.rebinding)
            self.helpers.add("_rt")
            fwd.append(f"_rt.rebinding({x}, {e.id})")
            fwd.append(f"{x} = {e.id}")
            return self.rev_taken_copy(x, e.id)
        fwd.append(f"{x} = {e.id}")
        return self.rev_copy(x, e.id)

    def _attribute_bases(self):
        """Names whose attributes the function reads."""
        bases = getattr(self, "_attr_bases", None)
        if bases is None:
            bases = self._attr_bases = {
                n.value.id for n in gast.walk(self.fn)
                if isinstance(n, gast.Attribute) and isinstance(n.value, gast.Name)
            }
        return bases

    def rev_forget_fields(self, x):
        """An object made from constants: the field gradients its reads left in the store
        end here (nothing before it depends on them). Left there, they would meet the
        gradients of the same fields when the pullback is differentiated again."""

        def rev(st):
            self.helpers.add("_rt")
            st.line(f"_rt.forget_fields({x})")

        return rev

    def with_restore(self, rev, x, saves):
        def recipe(st):
            if rev is not None:
                rev(st)
            st.consume(x)
            for sv in reversed(saves):
                st.out.append(Restore(sv))

        return recipe

    def rev_taken_copy(self, x, a):
        """Reverse of `x = a` for `x op= v` on an argument: a caller that reads its own
        variable again took the new value (runtime.kept) and hands its gradient over."""
        copy = self.rev_copy(x, a)

        def rev(st):
            st.acc(x, f"_rt.take_items({x})", False)
            copy(st)

        return rev

    def rev_copy(self, x, a):
        def rev(st):
            if st.get(x) is None or a not in self.active:
                return
            st.acc(a, st.adj(x), st.get(x) == NUM)

        return rev

    def read_g(self, st, x, body):
        """Run body(g, num) where g is the adjoint of x; guard it if it may be None."""
        s = st.get(x)
        if s is None:
            return
        b = st.adj(x)
        if s == NUM:
            body(b, True)
            return
        before = st.snapshot()
        guard = If(f"{b} is not None")
        saved_out = st.out
        st.out = guard.body
        body(b, True)
        st.out = saved_out
        after = st.snapshot()
        st.status = st.merge(after, before, guard.body, guard.orelse)
        saved_out.append(guard)

