"""The reverse pass, control flow: ``if``, ``for``, ``while`` and nested functions.

Reads the statements of the blocks; writes forward blocks that record what the pullback
needs to replay them (the branch taken, the trip count, values pushed on the tape), and
recipes that run the reversed blocks. Nested ``def`` and ``lambda`` become closures whose
captured names get their adjoints through ``_rt.fn_tangent``.

Before (``for i in range(n): if x > 0: x = x * x``)::

    for i in range_n:
        cond = x > 0
        if cond:
            mul = x * x
            x = mul

After::

    n_i = 0
    for i in range_n:
        n_i += 1
        _tape.append(cond)
        cond = x > 0
        if cond:
            mul = x * x
            _tape.append(x)
            x = mul
    ...
    for _ in range(n_i):
        if cond:
            b_mul = b_x
            _pos -= 1
            x = _tape[_pos]
            b_x = b_mul * (2 * x)
        _pos -= 1
        cond = _tape[_pos]
"""
import ast

import gast

from .. import codegen as C
from ..activity import ARRAY, OTHER, free_names_of_function, stmt_targets, walk_block
from ..codegen import Block, If, Loop, Raw, Restore, src
from ..linetokens import tokens
from .closures import changed_in_place
from .common import MAYBE, _default_atoms, _flatten, _join_status, _loop_hint


class ControlMixin:
    """Branches, loops, nested functions and the replay of reversed blocks."""

    # ----- closures --------------------------------------------------------------------------
    def funcdef(self, s, fwd, depth):
        mark = len(self.saves)
        self.save(s.name, fwd, depth)
        text = ast.unparse(gast.gast_to_ast(s))
        first = min([s.lineno] + [d.lineno for d in s.decorator_list]) if hasattr(s, "lineno") else None
        fwd.append(Raw(text.splitlines(), first))
        self.raw_items.append(fwd[-1])
        rev = (
            self.rev_closure(s.name, free_names_of_function(s), _default_atoms(s), s)
            if s.name in self.active
            else None
        )
        self.local_fns[s.name] = free_names_of_function(s)
        return self.with_restore(rev, s.name, self.saves[mark:])

    def rev_closure(self, x, free, defaults=(), node=None):
        """A function made here: its tangent's fields go to the variables it captured and
        to the values of its defaults. A list or dict it changes in place when it runs:
        its pullback keeps that one's gradient by object (runtime put_items), taken here."""
        defaults = [(p, v) for p, v in defaults if v in self.active]
        captured = sorted(n for n in free if n in self.active and n not in dict(defaults).values())
        captured = [n for n in captured if n not in {v for _, v in defaults}]
        kept = sorted(
            n for n in (changed_in_place(node, self.may_mutate) if node is not None else ())
            if n in self.active and self.kinds.get(n, OTHER) == OTHER
        )

        def rev(st):
            for n in kept:
                st.acc(n, f"_rt.take_items({n})", False)
            if st.get(x) is None or not (captured or defaults):
                return
            g = st.adj(x)
            self.helpers.add("_rt")
            # recursion: the tangents of the calls made inside (this function, or local
            # functions that call it back) nest in fields named after them: fold them in
            group, todo = set(), [x]
            while todo:
                for n in self.local_fns.get(todo.pop(), ()):
                    if n in self.local_fns and n not in group:
                        group.add(n)
                        todo.append(n)
            fns = tuple(sorted(group))
            if group & self.fn_names.get(x, {x}):
                st.line(f"{g} = _rt.fold_self({g}, {fns!r})")
                st.status[x] = MAYBE
            else:
                fns = ()
            for n in captured:
                if n in fns:
                    continue
                st.acc(n, f"_rt.field({g}, {n!r})", False)
            for p, v in defaults:
                st.acc(v, f"_rt.field({g}, {p!r})", False)

        return rev

    # ----- control flow -----------------------------------------------------------------------
    def if_(self, s, fwd, depth):
        test = src(s.test)
        cond_saves = []
        if isinstance(s.test, gast.Name):
            inside = {n for b in (s.body, s.orelse) for st in walk_block(b) for n in stmt_targets(st)}
            # a list or dict tested by its truth may change in place later (`if st:
            # st.pop()`), through any name: the pullback must not test it again
            truth = self.kinds.get(s.test.id, OTHER) == OTHER
            if s.test.id in inside or truth:  # keep the decision
                cond = self.fresh_local("cond", fwd, depth)
                cond_saves.append(self.saves[-1])
                fwd.append(f"{cond} = bool({test})" if truth else f"{cond} = {test}")
                test = cond
        before = self.alias_state()
        body, rb = self.block(s.body, depth)
        after_body = self.alias_state()
        self.set_alias_state(before)
        orelse, ro = self.block(s.orelse, depth)
        self.join_aliases(after_body)  # a view on either path is a view after the if
        fwd.append(If(test, body, orelse))

        def recipe(st):
            before = st.snapshot()
            out = st.out
            b1 = Block()
            st.out = b1
            self.run(rb, st)
            s1 = st.snapshot()
            st.status = dict(before)
            b2 = Block()
            st.out = b2
            self.run(ro, st)
            s2 = st.snapshot()
            st.status = st.merge(s1, s2, b1, b2)
            st.out = out
            out.append(If(test, b1, b2))
            for sv in cond_saves:
                out.append(Restore(sv))

        return recipe

    def loop(self, s, fwd, depth):
        hint = "n_iter" if isinstance(s, gast.While) else f"n_{_loop_hint(s)}"
        mark = len(self.saves)
        init = C.LoopInit([])
        if depth == 0:  # the outermost loop initialises the names of the whole nest
            fwd.append(init)
        counter = self.fresh_local(hint, fwd, depth)
        trips = self._range_trips(s)
        fwd.append(f"{counter} = {trips or 0}")
        body_fwd = Block()
        header, outer_saves, target_rev = self._loop_header(s, fwd, body_fwd, depth, mark)
        if trips is None:
            body_fwd.append(f"{counter} += 1")
        # the body runs again after itself: a name it binds is not surely the same object
        # as another name at its start (`s3 = s2` before the loop, `s3 = ...` in it)
        rebound = {n for st in walk_block(s.body) for n in stmt_targets(st)}
        if isinstance(s, gast.For) and isinstance(s.target, gast.Name):
            rebound.add(s.target.id)
        self.forget_same(rebound)
        before = self.alias_state()
        self.loop_rebound.append(rebound)
        inner, rb = self.block(s.body, depth + 1)
        self.loop_rebound.pop()
        self.join_aliases(before)  # the loop may run no time
        body_fwd.extend(inner)
        init.loop = Loop(header, body_fwd)
        fwd.append(init.loop)
        return lambda st: self._rev_loop(st, s, rb, counter, target_rev, outer_saves)

    def _range_trips(self, s):
        """``len(r)`` for ``for i in r`` over a name bound once, to ``range(...)``, in a
        body that no ``break`` leaves early: the number of trips, known before the loop
        (no counter to add to each trip); None otherwise."""
        it = s.iter if isinstance(s, gast.For) else None
        if not isinstance(it, gast.Name) or it.id not in self.range_names:
            return None
        if it.id in self.info.params or it.id in self.info.freevars:
            return None
        bindings = [t for st in walk_block(self.fn.body) for t in stmt_targets(st) if t == it.id]
        if len(bindings) != 1 or _leaves_early(s.body):
            return None
        return f"len({it.id})"

    def _loop_header(self, s, fwd, body_fwd, depth, mark):
        """(the loop's header, the saves before the loop, (target, seq, its save) of a
        for loop). An active sequence is read through ``_rt.seq``, so that the items'
        gradients can go back into it."""
        if not isinstance(s, gast.For):
            return "while True", self.saves[mark:], None
        it = s.iter
        target = s.target.id
        seq = written = None
        for name in [it.id] + self._iterated_through(it.id) if isinstance(it, gast.Name) else ():
            if self._refuse_resized(s, name):  # (a list's loop: refused when it runs)
                self.helpers.add("_rt")
                if written is None:  # (a dict's: its size checked as the loop goes)
                    written = name
                else:
                    fwd.append(f"_rt.loop_writes_list({name}, {name!r})")
        if self.is_active(it) and target in self.active:
            self.helpers.add("_rt")
            seq = self.fresh_local(f"{it.id}_seq", fwd, depth)
            fwd.append(f"{seq} = _rt.seq({src(it)})")
        item = self.namer.fresh(f"{target}_")
        outer_saves = self.saves[mark:]
        tsave = self.save(target, body_fwd, depth + 1)
        over = seq or src(it)
        if written is not None:
            over = f"_rt.loop_writing({over}, {written}, {written!r})"
        header = C.ForHeader(target, item, over, tsave)
        body_fwd.append(C.Copy(header))
        return header, outer_saves, (target, seq, tsave)

    def _iterated_through(self, name):
        """The names a loop over `name` iterates too: the arguments of the zip(...),
        enumerate(...) or reversed(...) that `name` is bound to (its only binding), the
        dict of a view (`d.items()`)."""
        found = [st for st in walk_block(self.fn.body) if name in stmt_targets(st)]
        if len(found) != 1 or not isinstance(found[0], gast.Assign) or not isinstance(found[0].value, gast.Call):
            return []
        found = [found[0].value]
        f = found[0].func
        if isinstance(f, gast.Attribute) and f.attr in ("keys", "values", "items") and not found[0].args \
                and isinstance(f.value, gast.Name):
            return [f.value.id]  # (a view of a dict)
        if self.resolve(found[0].func) not in (zip, enumerate, reversed):
            return []
        return [a.id for a in found[0].args if isinstance(a, gast.Name)]

    def _refuse_resized(self, s, name):
        """Refuse a loop over the list or array `name` that its body changes in place: grows,
        shrinks or reorders (`name.append(v)`, `name += [...]`, `del name[0]`, `name`
        given to a call that may change it), or writes an item of other than the one
        visited (`name[i + 1] = v`; `name[i] = v` of `for i, v in enumerate(name)` is
        the visited one). The loop visits the items as they change, where the generated
        code writes into a copy (the loop would read the old values) or reads their
        gradients out of the list's adjoint before the loop's items put theirs back.
        True when an item write into `name` of no known kind is left to the run (a dict's
        loop visits its keys, which such writes leave as they are)."""
        written = False
        index = getattr(s, "enumerate_index", None)
        if index is not None and sum(index in stmt_targets(st) for st in walk_block(s.body)) != 1:
            index = None  # (bound again in the body: not surely the visited position)
        for st in walk_block(s.body):
            v = st.value if isinstance(st, (gast.Assign, gast.Expr)) else None
            how = None
            t = st.targets[0] if isinstance(st, gast.Assign) else None
            if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name) and t.value.id == name and not (
                    index is not None and isinstance(t.slice, gast.Name) and t.slice.id == index):
                if self.kind_of(t.value) != ARRAY:
                    written = True  # a list's or a dict's: told apart when it runs
                    continue
                how = f"`{name}[...] = ...` of an item the loop may not have visited yet"
            elif isinstance(v, gast.Call):
                f = v.func
                if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and f.value.id == name \
                        and f.attr in _RESIZING:
                    how = f"`{name}.{f.attr}(...)`"
                elif isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and f.value.id == name \
                        and f.attr in _MAY_RESIZE:
                    written = True  # (a dict's or a set's size: checked as the loop goes)
                elif any(isinstance(a, gast.Name) and a.id == name for a in v.args) and self.may_mutate(v):
                    how = f"a call given `{name}`"
            elif isinstance(v, gast.BinOp) and getattr(v, "augmented", False) \
                    and isinstance(v.left, gast.Name) and v.left.id == name:
                how = f"`{name} op= ...`"
            elif isinstance(st, gast.Delete) and any(
                    isinstance(d, gast.Subscript) and isinstance(d.value, gast.Name) and d.value.id == name
                    for d in st.targets):
                how = f"`del {name}[...]`"
            if how is not None:
                self.refuse(
                    f"changing `{name}` ({how}) inside a loop over it",
                    f"the loop visits the items as they change, where the differentiated code "
                    f"would visit the old ones or lose the new ones' gradients. Loop over a copy "
                    f"(`for v in list({name}):`), over the indexes (`for i in range(len({name})):`), "
                    f"or collect the new items in another list",
                )
        return written

    def _rev_loop(self, st, s, rb, counter, target_rev, outer_saves):
        """The reversed loop: the reversed body, run counter times."""
        k = self.namer.fresh("k")
        pre_status = st.snapshot()
        out = st.out
        body, entry, end = self._rev_loop_body(st, rb, k, target_rev, dict(pre_status))
        for name in sorted(entry):
            if end.get(name) is None:
                body.append(st.zero_line(name)[0])
        for name in sorted(entry):
            if pre_status.get(name) is None:
                out.append(st.zero_line(name)[0])
        # (whole names: `b_p_k` does not read `k`)
        uses_k = any(isinstance(i, str) and k in tokens(i) for i in _flatten(body))
        rng = f"range({counter} - 1, -1, -1)" if uses_k else f"range({counter})"
        var = k if uses_k else self._throwaway()
        out.append(Loop(f"for {var} in {rng}", body) if uses_k else C.RevLoop(f"for {var} in {rng}", body, counter))
        st.out = out
        st.status = dict(entry)
        if target_rev is not None and target_rev[1] is not None and st.get(target_rev[1]) is not None:
            # seq = _rt.seq(it): the gradient of the sequence is the iterable's
            seq = target_rev[1]
            g_seq = st.adj(seq)
            if self.kind_of(s.iter) == OTHER:  # a dict's keys give it no gradient
                g_seq = f"_rt.seq_adjoint({s.iter.id}, {g_seq})"
            st.acc(s.iter.id, g_seq, False)
            st.consume(seq)
        for sv in reversed(outer_saves):
            out.append(Restore(sv))

    def _rev_loop_body(self, st, rb, k, target_rev, entry):
        """The reversed body, generated again until the adjoints' status at its start is
        the same as at its end (at most four times): (body, entry status, end status)."""
        for _ in range(4):
            body = Block()
            st.out = body
            st.status = dict(entry)
            self.run(rb, st)
            if target_rev is not None:
                target, seq, tsave = target_rev
                if seq is not None and st.get(target) is not None:
                    b = st.adj(seq)
                    prev = b if st.get(seq) is not None else "None"
                    st.line(f"{b} = _rt.item_grad({prev}, {seq}, {k}, {st.adj(target)})")
                    st.status[seq] = MAYBE
                st.consume(target)
                body.append(Restore(tsave))
            end = st.snapshot()
            joined = _join_status(entry, end, self)
            if joined == entry:
                break
            entry = joined
        return body, entry, end

    def _throwaway(self):
        """The loop variable of a reversed loop that does not need its index."""
        if getattr(self, "_unused", None) is None:
            self._unused = self.namer.fresh("_" if "_" not in self.namer.taken else "_j")
        return self._unused

    def run(self, recipes, st):
        for recipe, origin in reversed(recipes):
            if not origin:
                if recipe is not None:
                    recipe(st)
                continue
            mark = len(st.out)
            st.out.append(f"# {origin}")
            if recipe is not None:
                recipe(st)
            out = st.out
            for i in range(mark + 1, len(out)):
                if not isinstance(out[i], Restore):
                    break
            else:  # only restores (markers) after the comment
                del out[mark]  # the statement needed no adjoint code: no comment


_RESIZING = frozenset(
    ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "fill", "put", "resize", "popitem"))
# a dict's or a set's methods that add or drop items, or leave it as it is (`d.update(...)`
# of keys it has): the loop raises Python's error if the size changed (_rt.loop_writing)
_MAY_RESIZE = frozenset(("update", "setdefault", "add", "discard", "difference_update",
                         "intersection_update", "symmetric_difference_update"))


def _leaves_early(body):
    """Does a ``break`` (or ``return``) of this loop stand in body? Nested loops' own
    breaks and nested functions do not count."""
    todo = list(body)
    while todo:
        st = todo.pop()
        if isinstance(st, (gast.Break, gast.Return)):
            return True
        if isinstance(st, gast.If):
            todo.extend(st.body)
            todo.extend(st.orelse)
        elif isinstance(st, (gast.For, gast.While)):
            todo.extend(st.orelse)
        elif isinstance(st, (gast.With, gast.Try)):
            return True  # (not expected after normalisation: be safe)
    return False
