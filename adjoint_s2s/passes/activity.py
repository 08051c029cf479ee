"""Activity and kind analysis on normalised code: the third pass.

``analyse`` reads the normalised function (never rewrites it), the argument kinds the
pair is specialised on and the function's globals, and returns an ``Activity``: the
kinds, the active names, the locals and, per statement, the names live after it, all
read-only. The reverse pass starts from copies of them (it adds the temporaries it makes)
and asks the same questions through ``Queries`` (``passes/queries.py``), the mixin
both share.

*Activity*: a name is active when its value may depend on a differentiated input (the
arguments and captured variables). Inactive values are neither saved for the backward
pass nor given adjoint code.

*Kinds*: what the transformer knows statically about a value, from the argument types
the generated code is specialised on. ``REAL`` (int/float), ``COMPLEX``, ``ARRAY``
(ndarray), ``OTHER`` (anything else), ``CONST`` (str/bool/None: no tangent space).
Numbers and arrays get inline templates; ``OTHER`` goes through run-time dispatch.

Before (x: float, n: int)::

    s = 0.0
    for i in range(n):
        s = s + x * i
    label = f"{s:.2f}"

After: active = {x, s}; kinds: x REAL, s REAL, i REAL, label CONST.
"""
from types import MappingProxyType

import gast

from ..kinds import ARRAY, COMPLEX, CONST, OTHER, REAL, REAL_SEQ
from ..naming import names_in
from .appended import ItemKinds, appendable_lists, with_appended
from .casts import casts_to_integers
from .invariance import shift_free
from .liveness import live_after, stmt_targets
# the questions of one expression, and what the reverse pass reads from here by name
from .queries import (  # noqa: F401
    BINOP_NAMES, INACTIVE_ATTRS, NUMERIC, SCALAR, Queries, _const_key, all_number_arrays, call_operands,
    free_names_of_function, hashable, item_reads_only, join, reads, runtime_dispatch, walk_block,
)
from .whole import whole_kind, whole_reads


def _tuple_names(stmts, counts, skip):
    """The names (not in skip) that every statement binding them binds to a tuple
    display of one length, without `*` (counts: how many statements bind each name)."""
    lengths, assigned = {}, {}
    for s in stmts:
        if s.__class__ is gast.Assign and s.targets[0].__class__ is gast.Name:
            t = s.targets[0].id
            v = s.value
            n = len(v.elts) if v.__class__ is gast.Tuple and not any(
                x.__class__ is gast.Starred for x in v.elts) else -1
            lengths[t] = n if lengths.get(t, n) == n else -1
            assigned[t] = assigned.get(t, 0) + 1
    return frozenset(t for t, n in lengths.items() if n >= 0 and t not in skip and counts[t] == assigned[t])


_COUNTED = object()  # a loop target's binding by a loop over a range
_INT_OPS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)


class Activity(ItemKinds, Queries):
    """The result of the analysis (read-only once ``analyse`` returns it)."""

    def __init__(self, fn_node, info, arg_kinds, free_kinds, user_names):
        self.fn = fn_node
        self.info = info
        self.user_names = frozenset(user_names)
        self._reads_cache = whole_reads(fn_node)  # (those of the whole expressions: noted by anf)
        self._stmts = self.statements = stmts = list(walk_block(fn_node.body))
        locals_ = set(info.params)
        counts = {}
        for s in stmts:
            for t in stmt_targets(s):
                counts[t] = counts.get(t, 0) + 1
        locals_.update(counts)
        self.locals = locals_
        # names each expression reads (by id): liveness, kinds, activity and the reverse
        # pass ask it of the same nodes
        self.live_after = MappingProxyType(live_after(fn_node.body, self._reads_cache))
        self._range = self._caps = self._ints = None  # computed when first asked for
        self.kinds = _argument_kinds(info, arg_kinds, free_kinds)
        self._params = params = frozenset(info.params)
        self._once = {t for t, n in counts.items() if n == 1 and t not in params}
        self._bound = frozenset(counts)  # (every name a statement binds)
        self._vectors = info.param_vectors - self._bound  # (never rebound)
        # names bound more than once, each time to a tuple display of one length (a loop's
        # `state = (a, b)`): their item kinds, joined over the bindings
        self._tuples = _tuple_names(stmts, counts, self._once | params)
        self.tuple_elts = {}
        # lists bound once to a display of items of one kind and only read (by item,
        # iterated, zipped, len()): that kind
        self.list_items = {}
        self._lists = None  # computed when first asked for
        # dicts bound once to a display with constant keys and read only as p[key]: the
        # kinds of their values by key
        self.dict_elts = {}
        self._items_only = None  # computed when first asked for (a dict display)
        self._global_items = None  # computed when first asked for
        self._values = None  # names bound once -> their values: when first asked for
        self.callee_memo = {}  # id(call) -> (argument kinds, callee's result kinds, its Entry)
        self._appends = appendable_lists(self)  # lists built by appending, only read: appended.py
        self.known_items(info, free_kinds)
        self._assumed, self._assumed_used = REAL, False  # of a recursive call (own_result)
        start = (dict(self.kinds), dict(self.list_items))
        self.infer_kinds()
        if self._assumed_used and result_kinds(self)[0] != REAL:  # (not a fixed point: again)
            self.kinds, self.list_items, self._assumed = dict(start[0]), dict(start[1]), None
            self.tuple_elts, self.dict_elts, self.callee_memo = {}, {}, {}
            self.infer_kinds()
        self.active = {p for p in info.params if self.kinds.get(p) != CONST and p not in info.dead_params}
        self.active |= {v for v in info.freevars if self.kinds.get(v) != CONST}
        self.infer_activity()
        # the max a softmax subtracts: no result depends on its value (invariance.py)
        self.active -= shift_free(self)
        self.locals = frozenset(self.locals)
        self.kinds = MappingProxyType(self.kinds)
        self.tuple_elts = MappingProxyType(self.tuple_elts)
        self.list_items = MappingProxyType(self.list_items)
        self.dict_elts = MappingProxyType(self.dict_elts)
        self.callees = MappingProxyType({i: m[2] for i, m in self.callee_memo.items()})
        self.callee_globals = frozenset(m[3] for m in self.callee_memo.values() if m[3] is not None)
        self.active = frozenset(self.active)
        self.reads_memo = self._reads_cache  # id(expression) -> the names it reads

    def own_result(self, fn, key):
        """(kind, None) of a call of the function being transformed for its own key (direct
        recursion): REAL, kept if its returns then join to REAL (by induction on the depth,
        every call returns a number), else the kinds are made again with it unknown."""
        own = getattr(self.info, "own", None)
        if own is None or own[0] is not fn or own[1] != key or self._assumed is None:
            return None
        self._assumed_used = True  # (asked: the returns must join to what it says)
        return (self._assumed, None)

    def infer_kinds(self):
        """Kinds to a fixed point (joined over every binding of a name), in rounds over
        the statements in order. A statement whose inputs (the kinds, tuple items and dict
        values of the names it reads) are what they were when it last ran gives the same
        kind again: its kind is reused, not computed again; only the join is made."""
        memo = {}  # id(statement) -> (its inputs when it last ran, the kind it gave)
        kinds, tuple_elts, dict_elts, lists = self.kinds, self.tuple_elts, self.dict_elts, self.list_items
        for _ in range(6):
            before = dict(kinds)
            read = set()  # the names the statements run so far in this round read
            stale = False  # one of them changed after it was read
            for s in self._stmts:
                if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                    t = s.targets[0].id
                    got = memo.get(id(s))
                    if got is None:
                        deps = with_appended(self, tuple(self.reads(s.value)))
                    else:
                        deps = got[0]
                    read.update(deps)
                    inputs = [(kinds.get(n), tuple_elts.get(n), dict_elts.get(n), lists.get(n)) for n in deps]
                    old = (kinds.get(t), tuple_elts.get(t), dict_elts.get(t), lists.get(t))
                    if got is not None and got[1] == inputs:
                        k = got[2]
                    else:
                        k = self.assign_kind(s, t)
                        memo[id(s)] = (deps, inputs, k)
                    kinds[t] = join(kinds.get(t), k) if t in before or t in kinds else k
                    if t in read and old != (kinds[t], tuple_elts.get(t), dict_elts.get(t), lists.get(t)):
                        stale = True
                elif isinstance(s, gast.For):
                    read.update(with_appended(self, tuple(self.reads(s.iter))))
                    k = self.iter_item_kind(s.iter)
                    t = s.target.id
                    old = (kinds.get(t), tuple_elts.get(t))
                    kinds[t] = join(old[0], k)
                    if t in self._once:  # `for a, b in zip(xs, ys)`: the items' kinds
                        elts = self._zip_items(s.iter)
                        if elts is not None:
                            tuple_elts[t] = elts
                    stale = stale or (t in read and (kinds[t], tuple_elts.get(t)) != old)
                elif isinstance(s, gast.FunctionDef):
                    stale = stale or (s.name in read and kinds.get(s.name) != OTHER)
                    kinds[s.name] = OTHER
                elif isinstance(s, (gast.Import, gast.ImportFrom)):
                    for n in stmt_targets(s):
                        stale = stale or (n in read and kinds.get(n) != CONST)
                        kinds[n] = CONST
            # a statement sees in the next round what it saw in this one unless a name
            # it read changed after it ran: it gives the same kind again (the join of a
            # kind with itself), and that round would change nothing
            if kinds == before or not stale:
                break

    def assign_kind(self, s, t):
        """The kind of `t = value` (s), and the item kinds of t when the value is a tuple,
        a dict display or what a call returns (a tuple), t bound once."""
        if getattr(s.value, "whole", False):  # arithmetic kept whole (whole.py)
            return whole_kind(self, s.value)
        k = self.expr_kind(s.value)
        if (isinstance(s.value, gast.Tuple) and (t in self._once or t in self._tuples)
                and not any(isinstance(x, gast.Starred) for x in s.value.elts)):
            items = tuple(self.expr_kind(x) for x in s.value.elts)
            old = self.tuple_elts.get(t) if t in self._tuples else None
            self.tuple_elts[t] = items if old is None else tuple(join(a, b) for a, b in zip(old, items))
        elif isinstance(s.value, gast.List) and t in self.read_only_lists:
            ks = {self.expr_kind(x) for x in s.value.elts}
            if len(ks) == 1 and next(iter(ks)) in (REAL, ARRAY):
                self.list_items[t] = next(iter(ks))
            else:
                self.list_items.pop(t, None)
        elif (isinstance(s.value, gast.Dict) and t in self._item_only
                and all(isinstance(k, gast.Constant) and _const_key(k.value) for k in s.value.keys)
                and len({k.value for k in s.value.keys}) == len(s.value.keys)):
            self.dict_elts[t] = {k.value: self.expr_kind(v) for k, v in zip(s.value.keys, s.value.values)}
        elif isinstance(s.value, gast.Call) and t in self._once:
            memo = self.callee_memo.get(id(s.value))
            if memo is not None and memo[1][1] is not None:
                self.tuple_elts[t] = memo[1][1]  # what a callee returns: a tuple
            else:
                self.tuple_elts.pop(t, None)
        return k

    @property
    def read_only_lists(self):
        """The names bound once to a list display (no `*`) that the function only reads:
        `x = name[key]`, `for v in name`, `zip(name, ...)`, `len(name)`."""
        if self._lists is None:
            self._lists = self._only_read({
                st.targets[0].id for st in self._stmts
                if st.__class__ is gast.Assign and st.targets[0].__class__ is gast.Name
                and st.targets[0].id in self._once and st.value.__class__ is gast.List
                and not any(x.__class__ is gast.Starred for x in st.value.elts)
            })
        return self._lists

    def _only_read(self, cands, iterated=True, targets=False):
        """The names among cands that the function only reads: `x = name[key]`,
        `len(name)`, and where iterated: `for v in name`, `zip(name, ...)`; with targets,
        a loop binding one (`for name in rows`) is not a use."""
        also = set()
        for st in self._stmts if cands else ():
            if targets and st.__class__ is gast.For and st.target.__class__ is gast.Name and st.target.id in cands:
                also.add(id(st.target))
            if (iterated and st.__class__ is gast.For and st.iter.__class__ is gast.Name
                    and st.iter.id in cands):
                also.add(id(st.iter))
            v = st.value if st.__class__ is gast.Assign else None
            if (v.__class__ is gast.Call and not v.keywords and all(a.__class__ is gast.Name for a in v.args)
                    and self.resolve(v.func) in ((zip, len) if iterated else (len,))):
                also.add(id(v))
        return item_reads_only(self.fn, cands, any_key=True, also=also) if cands else frozenset()

    def _value_of(self, it):
        """What the name `it` is bound to, when it is bound once (else None)."""
        if it.__class__ is not gast.Name or it.id not in self._once:
            return None
        if self._values is None:
            self._values = {
                st.targets[0].id: st.value for st in self._stmts
                if st.__class__ is gast.Assign and st.targets[0].__class__ is gast.Name and st.targets[0].id in self._once
            }
        return self._values.get(it.id)

    def _zip_items(self, it):
        """The kinds of the items of the tuples a loop over `it` gets, when `it` is a name
        bound once to zip(a, b, ...) (the builtin) of names: each what a loop over its
        argument gets; else None."""
        call = self._value_of(it)
        if (
            call.__class__ is not gast.Call
            or call.keywords
            or not call.args
            or not all(a.__class__ is gast.Name for a in call.args)
            or self.resolve(call.func) is not zip
        ):
            return None
        return tuple(self.iter_item_kind(a) for a in call.args)

    @property
    def _item_only(self):
        """The names bound once and read only as `x = name[key]`."""
        if self._items_only is None:
            self._items_only = item_reads_only(self.fn, self._once)
        return self._items_only

    @property
    def range_names(self):
        """Names bound to ``range(...)``: iterating over one gives numbers."""
        if self._range is None:
            self._range = self._range_names()
        return self._range

    @property
    def captures(self):
        """Local def/lambda name -> the names it captures."""
        if self._caps is None:
            self._caps = self._captures()
        return self._caps

    def _range_names(self):
        """Names bound once, to ``range(...)``: iterating over one gives numbers."""
        names = set()
        for s in self._stmts:
            if (
                isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name)
                and s.targets[0].id in self._once
                and isinstance(s.value, gast.Call)
                and self.resolve(s.value.func) is range
            ):
                names.add(s.targets[0].id)
        return frozenset(names)

    @property
    def int_names(self):
        """Names that hold an int wherever they are bound (not parameters): a loop's
        target over a range, an int constant, `+ - * // %` and unary minus of such, a
        copy of one, len() of anything (`x ** k` of a real x is then real). The largest
        such set: a name is dropped while one of its bindings is not one of these."""
        if self._ints is None:
            binds = {}
            for s in self._stmts:
                if s.__class__ is gast.Assign and s.targets[0].__class__ is gast.Name:
                    binds.setdefault(s.targets[0].id, []).append(s.value)
                elif s.__class__ is gast.For:
                    it = s.iter
                    binds.setdefault(s.target.id, []).append(
                        _COUNTED if it.__class__ is gast.Name and it.id in self.range_names else None)
                else:
                    for t in stmt_targets(s):
                        binds.setdefault(t, []).append(None)
            ints = {t for t, vs in binds.items() if t not in self._params and None not in vs}
            changed = True
            while changed:
                changed = False
                for t in list(ints):
                    if not all(v is _COUNTED or self._int_valued(v, ints) for v in binds[t]):
                        ints.discard(t)
                        changed = True
            self._ints = frozenset(ints)
        return self._ints

    def vector_item(self, e):
        """Is e (`v[i]`) a number: an item of a 1-D float64 array argument never rebound
        (kinds.VECTOR) or of a global one, at an int position (a constant, or a name that
        holds an int)?"""
        v, k = e.value, e.slice
        return (v.__class__ is gast.Name and (v.id in self._vectors or self.global_vector(v.id))
                and (k.__class__ is gast.Constant and type(k.value) is int
                     or k.__class__ is gast.Name and k.id in self.int_names))

    def counts_up(self, e, depth=0):
        """Is e surely an int >= 0: such a constant, `len(...)`, a sum or product of such,
        or a name bound only to those and as the target of loops over ranges bound once
        that start at such an int (``range(n)``, ``range(1, n)``)?"""
        cls = e.__class__
        if cls is gast.Constant:
            return type(e.value) is int and e.value >= 0
        if cls is gast.BinOp:
            return (e.op.__class__ in (gast.Add, gast.Mult) and self.counts_up(e.left, depth)
                    and self.counts_up(e.right, depth))
        if cls is gast.Call:
            return len(e.args) == 1 and not e.keywords and self.resolve(e.func) is len
        if cls is not gast.Name or e.id not in self.int_names or depth > 4:
            return False  # (deeper: a counter that steps itself, `i = i + 1`)
        starts = {st.targets[0].id: st.value.args for st in self._stmts
                  if st.__class__ is gast.Assign and st.targets[0].__class__ is gast.Name
                  and st.targets[0].id in self.range_names}
        for st in self._stmts:
            if e.id in stmt_targets(st):
                if st.__class__ is gast.Assign and st.targets[0].__class__ is gast.Name:
                    if not self.counts_up(st.value, depth + 1):
                        return False
                    continue
                args = starts.get(st.iter.id) if st.__class__ is gast.For and st.iter.__class__ is gast.Name else None
                if args is None or len(args) > 1 and not self.counts_up(args[0], depth + 1) or any(
                        a.__class__ is gast.Starred for a in args):
                    return False
        return True

    def _int_valued(self, v, ints):
        cls = v.__class__
        if cls is gast.Constant:
            return type(v.value) is int
        if cls is gast.Name:
            return v.id in ints
        if cls is gast.BinOp:
            return v.op.__class__ in _INT_OPS and self._int_valued(v.left, ints) and self._int_valued(v.right, ints)
        if cls is gast.UnaryOp:
            return v.op.__class__ is gast.USub and self._int_valued(v.operand, ints)
        if cls is gast.Call:
            return len(v.args) == 1 and not v.keywords and self.resolve(v.func) is len
        return False

    def infer_activity(self):
        """Activity to a fixed point, in rounds over the statements in order. Names only
        ever become active, and what a statement makes active depends only on which of
        the names it reads are (_activity_deps): one that has seen none of them become
        active since it last ran (itself included) is not run again."""
        act = self.active
        seen = {}  # id(statement) -> (the names it depends on, how many were active)
        for _ in range(20):
            before = len(act)
            for s in self._stmts:
                got = seen.get(id(s))
                if got is None:
                    deps = self._activity_deps(s)
                else:
                    deps = got[0]
                    if len(deps & act) == got[1]:
                        continue
                # the count before it runs: one that makes its own inputs active runs again
                seen[id(s)] = (deps, len(deps & act))
                self.stmt_activity(s)
            if len(act) == before:
                break

    def _activity_deps(self, s):
        """The names whose activity stmt_activity(s) reads."""
        if isinstance(s, (gast.Assign, gast.Expr)):
            v = s.value
            # (what a local def captured is made active, never read; a lambda's free names
            # may come from a default's own lambda parameters: every name it holds)
            deps = names_in(v) if isinstance(v, gast.Lambda) else self.reads(v)
            if isinstance(s, gast.Assign) and isinstance(v, gast.Name) and isinstance(s.targets[0], gast.Name):
                return frozenset(deps | {s.targets[0].id})  # b = a: a is active when b is
            return frozenset(deps)
        if isinstance(s, gast.For):
            return frozenset(self.reads(s.iter))
        if isinstance(s, gast.FunctionDef):
            return frozenset(names_in(s))  # every name: see the lambda above
        return frozenset()  # nothing else makes a name active

    def stmt_activity(self, s):
        act = self.active
        if s.__class__ is gast.Assign and (s.value.__class__ is gast.BinOp or getattr(s.value, "whole", False)) \
                and s.targets[0].__class__ is gast.Name:
            if self.reads(s.value) & act and self.kinds.get(s.targets[0].id) != CONST:  # (most: as below)
                act.add(s.targets[0].id)
            return
        call = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
        if isinstance(call, gast.Call) and self.value_active(call) and self.may_mutate(call):
            # a call with active arguments may store them in its other arguments
            # (lst.append, a helper filling a list) or in what a local closure captured:
            # those become active too
            captured = self.captures.get(getattr(call.func, "id", None), ())
            for a in call_operands(call) + [gast.Name(id=n, ctx=gast.Load(), annotation=None, type_comment=None) for n in captured]:
                if (
                    isinstance(a, gast.Name)
                    and a.id in self.locals
                    and self.kinds.get(a.id) not in (CONST, REAL, COMPLEX)
                ):
                    act.add(a.id)
                    act.update(self._holders(a.id))
        if isinstance(s, gast.Assign):
            tgt = s.targets[0]
            value_active = self.value_active(s.value)
            if not value_active and isinstance(s.value, gast.Call):
                f = s.value.func
                if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and f.value.id in act \
                        and not casts_to_integers(s.value, None, self.resolve, self.kind_of):
                    value_active = True  # a method of an active object (lst.pop()), but v.astype(int)
            if isinstance(tgt, gast.Name):
                if value_active and self.kinds.get(tgt.id) != CONST:
                    act.add(tgt.id)
                elif (
                    tgt.id in act
                    and isinstance(s.value, gast.Name)
                    and s.value.id in self.locals
                    and self.kinds.get(s.value.id, OTHER) in (ARRAY, OTHER)
                    and {tgt.id, s.value.id} <= self.user_names
                ):  # b = a, and b is written into: a names the same object
                    act.add(s.value.id)
            elif isinstance(tgt, (gast.Subscript, gast.Attribute)):
                if value_active and isinstance(tgt.value, gast.Name):
                    act.add(tgt.value.id)
                    # a field written into an object read out of a container (`objs[0].v =
                    # e`, `for p in ps: p.x = e`): the container holds it, and what is read
                    # through the container again carries the field's gradient
                    act.update(self._holders(tgt.value.id))
        if isinstance(call, gast.Call):
            # a method given an active value (positional, starred or keyword) may keep it
            # in its object, whether or not its result is used: the object becomes active
            keeper = self._keeper(call.func)
            if keeper is not None and any(self.value_active(a) for a in call_operands(call)):
                act.add(keeper)
                act.update(self._holders(keeper))
        elif isinstance(s, gast.For):
            if self.is_active(s.iter) and self.kinds.get(s.target.id) != CONST:
                act.add(s.target.id)
        elif isinstance(s, gast.FunctionDef):
            if free_names_of_function(s) & act:
                act.add(s.name)

    def _holders(self, name):
        """The local containers and objects name's object may have been read out of
        (`t = c[k]`, `t = c.f`, `for t in c`, and theirs in turn)."""
        table = self.__dict__.get("_holder_table")
        if table is None:
            table = self._holder_table = {}
            for st in self._stmts:
                if st.__class__ is gast.Assign and st.targets[0].__class__ is gast.Name:
                    base, t = st.value, st.targets[0].id
                    while base.__class__ in (gast.Subscript, gast.Attribute):
                        base = base.value
                    if base is not st.value and base.__class__ is gast.Name and base.id in self.locals:
                        table.setdefault(t, set()).add(base.id)
                elif st.__class__ is gast.For and st.target.__class__ is gast.Name and st.iter.__class__ is gast.Name:
                    if st.iter.id in self.locals:
                        table.setdefault(st.target.id, set()).add(st.iter.id)
        out, todo = set(), [name]
        while todo:
            for c in table.get(todo.pop(), ()):
                if c not in out and self.kinds.get(c, OTHER) in (OTHER, ARRAY):
                    out.add(c)
                    todo.append(c)
        return out

    def _keeper(self, f):
        """The object a call of f may keep its arguments in, or None: obj for
        obj.method(...) (a method not resolved here) and for obj(...) (its __call__; a
        local function keeps them in what it captured: may_mutate)."""
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name):
            name = f.value.id
            if name not in self.locals and name not in self._params:  # (no union per statement)
                return None
        elif isinstance(f, gast.Name) and f.id in self.locals and f.id not in self.captures:
            name = f.id
        else:
            return None
        if self.kinds.get(name, OTHER) != OTHER or self.resolve(f) is not None:
            return None  # numbers, arrays: no
        return name

    def _captures(self):
        """Local def/lambda name -> the names it captures."""
        caps = {}
        for s in self._stmts:
            if isinstance(s, gast.FunctionDef):
                caps[s.name] = free_names_of_function(s)
            elif (
                isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name)
                and isinstance(s.value, gast.Lambda)
            ):
                caps[s.targets[0].id] = free_names_of_function(s.value)
        return MappingProxyType(caps)


def _argument_kinds(info, arg_kinds, free_kinds):
    """The kinds of the parameters and captured variables at the entry; none for a
    parameter whose value there nothing reads: it has the kinds of what binds it."""
    kinds = {}
    for p, k in zip(info.positional, arg_kinds):
        kinds[p] = k
    if info.vararg:
        kinds[info.vararg] = OTHER
    if not info.vararg:  # keyword-only parameters left to their defaults (kinds.cache_key)
        for p, k in zip(info.kwonly, arg_kinds[len(info.positional):]):
            kinds[p] = k
    for p in info.kwonly:
        kinds.setdefault(p, OTHER)
    if info.kwarg:
        kinds[info.kwarg] = OTHER
    for p in info.positional:
        kinds.setdefault(p, OTHER)
    for v, k in zip(info.freevars, free_kinds):
        kinds[v] = OTHER if k == REAL_SEQ else k
    for p in info.dead_params:
        kinds.pop(p, None)
    return kinds


def result_kinds(facts):
    """(kind, item kinds or None) of what an analysed function returns: the join over its
    return statements; item kinds when every one returns a tuple of one length."""
    kind, elts = None, None
    for s in walk_block(facts.fn.body):
        if isinstance(s, gast.Return):
            v = s.value
            kind = join(kind, CONST if v is None else facts.kind_of(v))
            items = facts.tuple_elts.get(v.id) if isinstance(v, gast.Name) else None
            if items is None or (elts is not None and len(elts) != len(items)):
                elts = ()
            elif elts != ():
                elts = items if elts is None else tuple(join(a, b) for a, b in zip(elts, items))
    return (kind or CONST), (elts or None)


def analyse(fn_node, info, arg_kinds, free_kinds, user_names):
    """Kinds, activity and liveness of a normalised function (see the module docstring)."""
    return Activity(fn_node, info, arg_kinds, free_kinds, user_names)
