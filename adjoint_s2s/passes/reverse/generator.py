"""The reverse pass, the driver: the statement walk and the pullback's entry and exit.

``Generator`` starts from copies of the activity analysis (it adds the temporaries it
makes), walks the statements (``block``, ``stmt``), collects each statement's forward
code and recipe, runs the recipes in reverse order (``run``) and hands a ``Draft`` to the
tape planning: forward blocks, the pullback's entry (the seed made a value of the
result's kind), its body and its return line. Each statement family lives in its own
module, mixed in here: ``assign``, ``operators``, ``calls``, ``data``, ``mutation``,
``control``.
"""
import ast
import re
import builtins

import gast

from .. import codegen as C
from ..activity import ARRAY, COMPLEX, NUMERIC, OTHER, REAL, SCALAR, Queries, item_reads_only, reads, walk_block
from ..codegen import Block, Save, src
from ... import rules as R
from ...errors import UnsupportedSyntaxError
from ...naming import ADJOINT_PREFIX, PAIR_SUFFIX, PULLBACK_SUFFIX, Namer
from .common import (
    _item_key,
    MAYBE,
    NUM,
    Status,
    _OWN_DIR,
    _operands,
    _params_src,
    _pyname,
    _then_restore,
    _tuple_src,
)
from .closures import check_late_binding
from .assign import AssignMixin
from .calls import CallsMixin
from .control import ControlMixin
from .data import DataMixin
from .mutation import MutationMixin
from .operators import OperatorsMixin
from .plain import plain_statement
from .whole import WholeMixin
from ..liveness import stmt_targets


_ATOMS = frozenset((gast.Name, gast.Constant))
_NOTHING = frozenset()
# values of `x = e` that may make a dict key (check_dict_keys): a display, a setdefault call
_KEYED_VALUES = frozenset((gast.Dict, gast.Call))
_DISPATCHED = re.compile(r"_rt\.(binop|unop|call|call_keeping|call_method|call_method_keeping|getitem_pair|getattr_pair)\(")


class Generator(
    Queries, AssignMixin, OperatorsMixin, CallsMixin, DataMixin, MutationMixin, ControlMixin, WholeMixin
):
    """The reverse pass over one normalised function (see the package docstring)."""

    def __init__(self, fn_node, info, facts, taken=None):
        self.fn = fn_node
        self.info = info
        self.deps = {}  # objects resolved statically -> their rule version
        self._noted = set()  # the objects note_dep has put in deps
        self._prims = {}  # (callee, number of arguments, keywords) -> inline_primitive's rule
        self.helpers = set()  # helper modules the generated code uses (_rt, math, ...)
        if taken is None:  # (emit passes the names the normaliser already knows)
            taken = {n.id for n in gast.walk(fn_node) if isinstance(n, gast.Name)}
        taken = set(taken) | set(info.freevars) | set(info.params) | {info.name}
        self.namer = Namer(taken)
        # names of the user's function (never folded away: they name the user's values)
        self.user_names = set(facts.user_names)
        # and the normaliser's temporaries that name the object of a branch (`a if t else b`)
        self.alias_names = self.user_names | getattr(fn_node, "picks", frozenset())
        self.namer.reserve({_pyname(info.name) + PAIR_SUFFIX, _pyname(info.name) + PULLBACK_SUFFIX})
        self._adj = {}
        self.raw_items = []  # nested functions and lambdas, to map back to user lines
        self.appended = set()  # names of lists this function appends to (in place)
        self.local_fns = {}  # local def/lambda name -> the names it captures
        self.fn_names = {}  # local def/lambda name -> the names bound to it (f = fn)
        # the tape and its cursor: fresh names (generated code differentiated again
        # captures the first-order _tape and must not shadow it)
        self.tape = self.namer.fresh("_tape")
        self.pos = self.namer.fresh("_pos")
        self.saves = []
        self.after_stmt = {}  # id(statement) -> a forward line to follow it (calls.py)
        # the reverse pass adds its temporaries to copies of the analysis' results
        self.locals = set(facts.locals)
        self._reads_cache = facts.reads_memo  # names each expression reads: a memo of the tree
        self.live_after = dict(facts.live_after)
        self.facts = facts
        self._own_code = info.filename.startswith(_OWN_DIR)  # adjoint_s2s's helpers again
        self.live = frozenset()  # names read after the statement being generated
        self.aliases = {}  # name -> names bound to the same object or a view of it (z = y)
        self.maybe_views = set()  # names bound by z = y[i]: a view of a row, or a number
        self.same = {}  # name -> the names surely bound to the same object (z = y), on every path
        self.field_of = {}  # name -> (obj, attr): bound by name = obj.attr, on every path
        self.read_out_of = {}  # name -> the arguments and names it was read out of (p.W)
        self.loop_rebound = []  # per loop around the statement: the names its body binds
        self.kinds = dict(facts.kinds)
        self.active = set(facts.active)
        self.direct = {}  # name -> Entry of a callee whose pair this code calls by that name
        self.unpacked = self._unpacked_tuples()
        for entry in facts.callees.values():
            # the callee's result kinds rest on its code: on the rules it inlined too
            for ref, ver in entry.deps:
                obj = ref()
                if obj is not None:
                    self.deps.setdefault(obj, ver)

    @property
    def range_names(self):
        return self.facts.range_names

    @property
    def int_names(self):
        return self.facts.int_names

    @property
    def tuple_elts(self):
        return self.facts.tuple_elts

    @property
    def list_items(self):
        return self.facts.list_items

    def _unpacked_tuples(self):
        """Active tuples and dicts of numbers (immutable: nothing writes into an item)
        read only by `x = seq[key]` (a constant key: the normalised `a, b = f(...)`,
        `p["rate"]` of `p = {"rate": r}`):
        seq -> {key: a stand-in name for that item}. Each read adds its adjoint to its
        item's stand-in (a copy of a number, no run-time pair); where seq is made, the
        items' adjoints go to the values of its display, or make the tuple's adjoint."""
        facts = self.facts
        items = {t: dict(enumerate(k)) for t, k in facts.tuple_elts.items()}
        items.update((t, dict(k)) for t, k in facts.dict_elts.items())
        items = {t: k for t, k in items.items()
                 if t in self.active and t not in self.info.params and all(x in SCALAR for x in k.values())}
        if not items:
            return {}
        only = item_reads_only(self.fn, items)
        for s in walk_block(self.fn.body):  # every key read is one of its items
            if isinstance(s, gast.Assign) and isinstance(s.value, gast.Subscript):
                v = s.value
                if isinstance(v.value, gast.Name) and v.value.id in items and _item_key(v, items[v.value.id]) is None:
                    only = only - {v.value.id}
        out = {}
        for t in sorted(only):
            names = {}
            for i, (key, k) in enumerate(items[t].items()):
                name = names[key] = self.namer.fresh(f"{t}_{i}")
                self.kinds[name] = k
                self.active.add(name)
                self.locals.add(name)
            out[t] = names
        return out

    # ----- names ---------------------------------------------------------------------
    def adj_name(self, name):
        b = self._adj.get(name)
        if b is None:
            b = self.namer.fresh(ADJOINT_PREFIX + name)
            self._adj[name] = b
        return b

    # ----- static resolution -----------------------------------------------------------

    def note_dep(self, obj):
        noted = self._noted  # (asked of every call: a callee's version is looked up once)
        try:
            if obj in noted:
                return
            self.deps[obj] = R.version(obj)
            noted.add(obj)
        except TypeError:
            pass

    # ----- kinds -------------------------------------------------------------------------




    # =====================================================================================
    # pass A: forward code and recipes
    # =====================================================================================
    def block(self, stmts, loop_depth):
        fwd, recipes = Block(), []
        note = None  # in a loop: [where the user line's comment is, why it is dispatched]
        said = None  # (text, line) of the last heading, while the code under it is its own
        resolve, after_stmt = self.resolve, self.after_stmt
        for s in stmts:
            origin = getattr(s, "origin", None)
            if s.__class__ is gast.Return:
                # the return itself needs no code; the heading of its line goes with the
                # adjoint of what it computed (`mul = y * y; result = np.sum(mul)`), if any
                end = getattr(s, "origin_end", None)
                origin = s.origin_end = None
                if end and recipes and recipes[-1][1] is None:
                    recipes[-1] = (recipes[-1][0], end)
            inlined = getattr(s, "inlined", None)
            if inlined is not None:  # (callee name, the call's text, its line): passes/inline.py
                self._note_dispatch(fwd, note)
                note = None
                if inlined[1] and inlined[1:] != said:
                    fwd.append(f"# {inlined[1]}")
                said = inlined[1:]
                fwd.append(f"# (inlined {inlined[0]})")
            if origin:
                self._note_dispatch(fwd, note)
                if (origin, getattr(s, "src_line", None)) != said:  # (said once above inlined calls)
                    fwd.append(f"# {origin}")
                    said = None
                note = [len(fwd), []] if loop_depth else None
            mark = len(fwd)
            if plain_statement(s, resolve):  # the checks below have nothing to say of it
                line = getattr(s, "src_line", None)
                if line is not None:
                    self.last_line = line
                r = self._plain_stmt(s, fwd, loop_depth)
            else:
                self.refuse_unsupported(s)
                self.check_operands(s)
                r = self.stmt(s, fwd, loop_depth)
            after = after_stmt.pop(id(s), None) if after_stmt else None
            if after is not None:  # (a line an earlier statement's adjoint asked for)
                fwd.append(after)
            if note is not None:
                self._why_dispatched(s, fwd[mark:], note[1])
            end = getattr(s, "origin_end", None)
            if end or r is not None:
                recipes.append((r, end))
        self._note_dispatch(fwd, note)
        return fwd, recipes

    def _why_dispatched(self, s, lines, why):
        """The reason, if a forward line of s (in a loop) takes a pair from the run time:
        the names of unknown kind it computes with, or a callee known only then."""
        if not any(type(t) is str and _DISPATCHED.search(t) for t in lines):
            return
        value = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
        if value is None:
            return
        func = value.func if isinstance(value, gast.Call) else None
        skip = {id(n) for n in gast.walk(func)} if func is not None else set()
        names = [n.id for n in gast.walk(value) if isinstance(n, gast.Name) and id(n) not in skip
                 and isinstance(n.ctx, gast.Load) and self.kind_of(n) == OTHER
                 and n.id in self.active]
        for n in names:
            if n not in why:
                why.append(n)
        if not names and func is not None:
            name = f"callee {src(func)}"
            if name not in why:
                why.append(name)

    def _note_dispatch(self, fwd, note):
        """`# dispatched at run time: ...` under a user line's comment in a loop."""
        if note is None or not note[1]:
            return
        kinds = [w for w in note[1] if not w.startswith("callee ")]
        users = [k for k in kinds if k in self.user_names]
        kinds = users or kinds  # the user's names first: temporaries follow from them
        callees = [w[len("callee "):] for w in note[1] if w.startswith("callee ")]
        parts = []
        if kinds:
            parts.append(f"kind of {', '.join(kinds)} unknown")
        if callees:
            parts.append(f"{', '.join(callees)} resolved when it runs")
        fwd.insert(note[0], f"# dispatched at run time: {'; '.join(parts)}")

    def fresh_local(self, hint, fwd, depth):
        """A new primal name, saved like a user name if a loop overwrites it."""
        name = self.namer.fresh(hint)
        self.locals.add(name)
        self.save(name, fwd, depth)
        return name

    def save(self, name, fwd, loop_depth):
        sv = Save(name, loop_depth > 0)
        self.saves.append(sv)
        fwd.append(sv)
        return sv

    def stmt(self, s, fwd, depth):
        through = self._written_through(s)
        # the names for the object before the statement (`a += v` rebinds a in the code)
        group = set(self.same.get(through[0], ())) if through else set()
        if group:  # (a name the statement binds anew names its new value: `b_A = f(b_m)`)
            group -= set(stmt_targets(s)) - {through[0]}
        field = self.field_of.get(through[0]) if through else None
        live = self.live_after.get(id(s), frozenset())
        flag = None
        flag_saves = []
        if through and not through[1] and (field or any(z in live for z in group if z != through[0])):
            # `a += v` of unknown kind: in place for a list, an array (Python), a dict;
            # a number or a tuple rebinds. Decided on the value before the change.
            self.helpers.add("_rt")
            mark = len(self.saves)
            flag = self.fresh_local(f"{through[0]}_in_place", fwd, depth)
            flag_saves = self.saves[mark:]
            fwd.append(f"{flag} = _rt.changes_in_place({through[0]})")
        self.live = live
        maybe = self.maybe_same_flags(s, through, group, fwd, depth)  # (`c = a if t else b`)
        self.check_element_write(s)
        self.guard_holders(s, fwd)
        snapshots = self.snapshot_writes(s, fwd, depth)
        r = self._stmt(s, fwd, depth)
        if snapshots:
            r = _then_restore(r or (lambda st: None), snapshots)
        if group:
            r = self.follow_aliases(through[0], group, flag, r, fwd, depth)
        if maybe:
            r = self.follow_maybe_same(through[0], maybe, r, fwd, depth)
        if field is not None and through[0] in self.active:
            r = self.write_back_field(through[0], field, r, fwd, depth, flag)
        if r is not None and flag_saves:
            # in a loop the flag is overwritten each trip: the pullback reads this trip's
            # value, then takes the previous trip's back from the tape
            r = _then_restore(r, flag_saves)
        return r

    def _plain_stmt(self, s, fwd, depth):
        """stmt(s) of a statement plain_statement accepts (see passes/reverse/plain.py):
        it writes through no name, changes nothing in place and makes no dict key, so of
        stmt and _stmt only the assignment is left."""
        self.depth = depth
        self.fwd = fwd
        self.live = self.live_after.get(id(s), _NOTHING)
        self.cur_stmt = s
        return self.assign(s.targets[0].id, s.value, fwd, depth)

    def _stmt(self, s, fwd, depth):
        self.depth = depth
        self.fwd = fwd
        self.live = self.live_after.get(id(s), frozenset())
        self.cur_stmt = s
        self.check_dict_keys(s, fwd)
        if isinstance(s, gast.Assign):
            tgt = s.targets[0]
            if isinstance(tgt, gast.Name):
                if isinstance(s.value, gast.Call) and s.value.func.__class__ is gast.Attribute \
                        and s.value.func.attr == "pop" and self._is_field_list_op(s.value):
                    return self.field_list_op(s.value, fwd, depth, target=tgt.id)
                return self.assign(tgt.id, s.value, fwd, depth)
            if isinstance(tgt, gast.Subscript):
                return self.setitem(tgt, s.value, fwd, depth)
            if isinstance(tgt, gast.Attribute):
                return self.setattr_(tgt, s.value, fwd, depth)
        if isinstance(s, gast.Expr):
            return self.expr_stmt(s.value, fwd, depth)
        if isinstance(s, gast.If):
            return self.if_(s, fwd, depth)
        if isinstance(s, (gast.For, gast.While)):
            return self.loop(s, fwd, depth)
        if isinstance(s, gast.Return):
            self.result = s.value
            return None
        if isinstance(s, gast.FunctionDef):
            return self.funcdef(s, fwd, depth)
        if isinstance(s, (gast.Break, gast.Continue)):
            fwd.append(C.stmt_src(s))
            return None
        # assert, import, raise: forward only
        fwd.append(C.stmt_src(s))
        return None

    def check_dict_keys(self, s, fwd):
        """A dict's keys are its structure (its tangent is keyed by them), not values with
        a gradient: a key computed from the differentiated inputs would hand its value
        back (`for k in d`, d.items(), sorted(d)...) without its gradient. Where a value
        that may depend on the inputs becomes a key (a display `{k: v}`, `d[k] = v`,
        d.setdefault(k, v)), _rt.dict_key refuses it at run time unless it is a label
        (a str, an int...); `obj[k] = v` with obj a list or an array is not a key."""
        if self._own_code:
            return  # adjoint_s2s's helpers differentiated again copy keys they were given
        cls = s.__class__
        if cls is gast.Assign:
            value = s.value
            if s.targets[0].__class__ is gast.Name and value.__class__ not in _KEYED_VALUES:
                return  # `x = e`, e no display of a dict nor a call: no key made
        else:
            value = s.value if cls is gast.Expr else None
        checks = []
        if isinstance(value, gast.Dict):
            checks += [("None", k) for k in value.keys if k is not None]
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript):
            tgt = s.targets[0]
            if self.kind_of(tgt.value) not in NUMERIC and not isinstance(tgt.slice, gast.Slice):
                checks.append((src(tgt.value), tgt.slice))
        if (
            isinstance(value, gast.Call)
            and isinstance(value.func, gast.Attribute)
            and value.func.attr == "setdefault"
            and value.args
            and self.resolve(value.func) is None
        ):
            checks.append((src(value.func.value), value.args[0]))
        line = getattr(s, "src_line", None) or getattr(self, "last_line", None)
        for obj, key in checks:
            if self.value_active(key):
                self.helpers.add("_rt")
                fwd.append(f"_rt.dict_key({obj}, {C.index_value_src(key)}, {line!r})")

    # ----- the operand invariant -------------------------------------------------------
    def refuse_unsupported(self, s):
        """eval/exec of a string and sets of differentiated values: refused with the
        line before anything else looks at the statement."""
        self.cur_stmt = s
        if getattr(s, "src_line", None) is not None:
            self.last_line = s.src_line  # for statements the normaliser made (no line)
        value = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Name):
            fn = self.resolve(value.func)
            if fn is builtins.eval or fn is builtins.exec:
                self.refuse(
                    f"{fn.__name__}() of a string",
                    "the code in the string cannot be transformed, and it may read "
                    "differentiated variables. Write the expression as code",
                )
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and (
            self.resolve(value.func) in (set, frozenset)
        ) and self.value_active(value):
            value = gast.Set(elts=list(value.args))
        if (
            isinstance(value, gast.Call)
            and isinstance(value.func, gast.Attribute)
            and value.func.attr in ("add", "update", "union")
            and isinstance(value.func.value, gast.Name)
            and value.func.value.id in self._set_names()
            and any(self.value_active(a) for a in value.args)
        ):  # {f(v) for v in ...} normalised, or s = set(); s.add(v)
            value = gast.Set(elts=list(value.args))
        if isinstance(value, gast.Set) and self.value_active(value):
            self.refuse(
                "a set of differentiated values",
                "a set has no order and merges equal values, so its items have no "
                "gradient to give back. Use a list or a tuple",
            )

    def check_operands(self, s):
        """Gradients are accumulated into names only: every operand of an operator, a
        call (callee, receiver, arguments), a subscript, an attribute read or a display
        that may carry a gradient must be a name (or a constant) after normalisation. An
        expression in such a place that reads an active name would lose its gradient
        silently: refuse it (a bug of the normaliser, to report), never drop it."""
        for part in _operands(s):
            if part.__class__ in _ATOMS or part is None:
                continue
            if isinstance(part, gast.Attribute) and self.resolve(part) is not None:
                continue  # a module's function or constant (np.linalg.norm)
            hit = sorted(reads(part) & self.active)
            if hit:
                raise UnsupportedSyntaxError(
                    f"an operand `{ast.unparse(gast.gast_to_ast(part))}` that reads the "
                    f"differentiated value `{hit[0]}` but is not a name after normalisation",
                    self.info.filename,
                    getattr(s, "src_line", None),
                    hint="this is a bug of adjoint_s2s (its gradient would be lost): please "
                    "report it with the function's source; meanwhile give the expression a "
                    "name of its own (`t = ...`)",
                )


    # =====================================================================================
    # assembling the pair
    # =====================================================================================
    def generate(self):
        """The reverse pass proper: forward code and pullback blocks, as a ``Draft``
        (saves and restores still markers for the tape planning to resolve)."""
        info = self.info
        self.result = None
        check_late_binding(self)
        self.note_argument_aliases()
        fwd, recipes = self.block(self.fn.body, 0)
        result = self.result
        st = Status(self)
        ret_active = isinstance(result, gast.Name) and result.id in self.active
        seed = self.adj_name(result.id) if isinstance(result, gast.Name) else self.namer.fresh(ADJOINT_PREFIX + "result")
        pre = Block()
        if ret_active:
            self._seed_entry(result.id, seed, pre, st)
        self._appended_entry(pre, st)
        # even with an inactive result, effects (attribute writes) have adjoints
        entry_status = st.snapshot()
        st.out = Block()
        self.run(recipes, st)
        body = st.out
        if (
            ret_active
            and entry_status.get(result.id) == MAYBE
            and self.kinds.get(result.id) == ARRAY  # an object's fields may still have gradients
            and not self._has_effects(body)
        ):
            # a zero seed gives zero gradients: say so at the entry, and generate the rest
            # for a seed that is surely a value (no None checks in the body)
            pre.append(f"if {seed} is None:")
            pre.append("    return " + _tuple_src(self._zero_gradients()))
            st.status = dict(entry_status)
            st.status[result.id] = NUM
            st.out = Block()
            self.run(recipes, st)
            body = st.out
        ret_line = self._return_line(st, body)
        name = _pyname(info.name)
        return C.Draft(
            fwd=fwd, pre=pre, body=body, ret_line=ret_line, seed=seed,
            result=src(result) if result is not None else "None",
            pair_name=name + PAIR_SUFFIX, pullback_name=name + PULLBACK_SUFFIX,
            params=_params_src(self.fn.args), added_to=st.added_to,
            # for the tape planning and the clean-up
            tape=self.tape, pos=self.pos, saves=self.saves, locals=self.locals,
            params_names=info.params, freevars=info.freevars, static_free=info.static_free,
            helpers=self.helpers, user_names=self.user_names, globals_read=getattr(info.globals, "read", {}),
            real_adjoints={b for v, b in self._adj.items() if self.kinds.get(v) == REAL},
            scalars={v for v, k in self.kinds.items() if k in SCALAR},
        )

    def _seed_entry(self, result, seed, pre, st):
        """The pullback's first lines: the seed made a value of the result's kind."""
        kind = self.kinds.get(result, OTHER)
        self.helpers.add("_rt")
        if kind == REAL:
            pre.append(f"if type({seed}) is not float:")
            pre.append(f"    {seed} = _rt.real({seed})")
            st.status[result] = NUM
        elif kind == COMPLEX:
            pre.append(f"{seed} = _rt.scalar({seed})")
            st.status[result] = NUM
        elif kind == OTHER:  # maybe an object: its fields' gradients use the store
            pre.append(f"{seed} = _rt.seed_result({seed}, {result})")
            st.status[result] = MAYBE
        else:
            pre.append(f"{seed} = _rt.seed({seed})")
            st.status[result] = MAYBE

    def _appended_entry(self, pre, st):
        """Lists from the caller appended to here: their items' gradients come back."""
        info = self.info
        for n in sorted(self.appended & (set(info.params) | set(info.freevars))):
            if n in self.active:
                self.helpers.add("_rt")
                b = self.adj_name(n)
                if st.get(n) is None:
                    pre.append(f"{b} = _rt.take_items({n})")
                else:  # the list is also the result (`return lst`): both gradients
                    pre.append(f"{b} = _rt.acc({b}, _rt.take_items({n}))")
                st.status[n] = MAYBE

    def _zero_gradients(self):
        info = self.info
        zeros = ["None"] * (1 + len(info.positional))
        if info.vararg:
            zeros.append(f"*((None,) * len({info.vararg}))")
        if info.kwonly or info.kwarg:
            zeros.append("{}")
        return zeros

    def _return_line(self, st, body):
        """``return (function tangent, gradients...)``; captured lists appended to here
        hand their gradients back through the store (a line added to body)."""
        info = self.info
        grads = [self.adj_name(p) if st.get(p) is not None else "None" for p in info.positional]
        # which gradients are surely real numbers: a caller calling this pair directly
        # adds them as they are (Entry.grads_num)
        self.grads_num = tuple(st.get(p) == NUM and self.kinds.get(p) == REAL for p in info.positional)
        extra = []
        if info.vararg:
            v = info.vararg
            self.helpers.add("_rt")
            extra.append(
                f"*_rt.expand({self.adj_name(v)}, len({v}))" if st.get(v) is not None else f"*((None,) * len({v}))"
            )
        kw = [p for p in info.kwonly if st.get(p) is not None]
        kwparts = [f"{p!r}: {self.adj_name(p)}" for p in kw]
        if info.kwarg and st.get(info.kwarg) is not None:
            kwparts.append(f"**_rt.dict_or_empty({self.adj_name(info.kwarg)})")
        handback = sorted(self.appended & set(info.freevars) & self.active)
        for n in handback:
            if st.get(n) is not None:
                body.append(f"_rt.put_items({n}, {self.adj_name(n)})")
        freevars = [v for v in info.freevars if st.get(v) is not None and v not in handback]
        if freevars:
            self.helpers.add("_rt")
            df = "_rt.fn_tangent(" + ", ".join(f"{v}={self.adj_name(v)}" for v in freevars) + ")"
        else:
            df = "None"
        parts = [df] + grads + extra
        if info.kwonly or info.kwarg:
            parts.append("{" + ", ".join(kwparts) + "}")
        return "return " + _tuple_src(parts)

    def _has_effects(self, body):
        """Does the pullback do anything besides computing gradients from its seed?"""
        if self.appended & (set(self.info.params) | set(self.info.freevars)):
            return True
        text = []
        C.render(body, 0, lambda m: [], text)
        joined = "\n".join(text)
        return any(w in joined for w in ("setattr_grad", "put_items", "take_items", "(None)"))
