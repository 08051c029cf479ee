"""The reverse pass, calls: primitives inlined, everything else through run-time dispatch.

Reads the callee (resolved statically where its value is known now, see ``Queries.resolve``)
and the activity of its arguments; writes the forward call and a recipe that calls the
returned pullback, or the inline template of a primitive of ``rules``. Calls whose result
is inactive are written as plain calls; arguments a later statement may change are kept
(``_rt.kept``) so that the pullback sees the values of the call.

Before (``math.sin(x) * g(x)``, g a Python function)::

    sin_x = math.sin(x)
    g_x = g(x)
    result = sin_x * g_x

After::

    sin_x = math.sin(x)
    g_x, g_x_pullback = _rt.call(g, x)
    ...
    _, b_x_part = g_x_pullback(b_g_x)
    b_x = _rt.real(b_x_part)
    b_x = b_x + (_rt.real(b_sin_x_part)) * math.cos(x)
"""
import types

import gast

from ..activity import (
    ARRAY,
    COMPLEX,
    CONST,
    NUMERIC,
    OTHER,
    REAL,
    SCALAR,
    hashable,
    runtime_dispatch,
)
from ..codegen import Restore, src
from ... import rules as R
from ...kinds import forwarding_chain
from ...naming import ADJOINT_PREFIX
from ..casts import inline_dtype
from .shifted import shifted_name
from .common import (
    MAYBE,
    _args_src,
    _has_starred,
    _is_user_class,
    _lens,
    _runtime_append,
    _then_restore,
)


_NUM_CONST = NUMERIC + (CONST,)
_MIN_MAX = (min, max)  # the builtins as imported (a rebound builtins.max: what it holds)
_EXTREMUM = "_rt.np_extremum_adjoint(g, a, ans, axis, keepdims)"  # max/min's (rules/numpy)

class CallsMixin:
    """Calls of primitives, rules and Python functions; method calls; expression statements."""

    # ----- calls ----------------------------------------------------------------------------
    def read_again(self, e):
        """What call_primal_keeping watches in a call none of whose arguments is active:
        the positions (or keywords) of the containers the caller reads afterwards (a
        Python callee changing one with `a op= v` changes the caller's, in Python); for
        a callee that may change its arguments, also (position, name) of an argument
        the caller reads again by another name, through what it was read out of, or
        given twice ("*" for a call with *args or **kwargs: any argument)."""
        mutates = None
        if _has_starred(e):
            return ("*",) if self.may_mutate(e) else ()
        given = list(enumerate(e.args)) + [(k.arg, k.value) for k in e.keywords]
        names = {a.id for _, a in given if isinstance(a, gast.Name)}
        keep, seen = [], set()
        for i, a in given:
            if not isinstance(a, gast.Name) or self.kinds.get(a.id, OTHER) not in (ARRAY, OTHER):
                continue
            if (a.id in self.live and (a.id in self.locals or a.id in self.info.params)
                    and a.id not in self.info.freevars):
                keep.append(i)
            elif a.id not in self.info.freevars:
                if mutates is None:
                    mutates = self.may_mutate(e)
                via = (a.id if a.id in seen else self._read_again_through(a.id, None, names)) \
                    if mutates else None
                if via:
                    keep.append((i, via))
            seen.add(a.id)
        return tuple(keep)

    def take_kept_inactive(self, call, e, keep, fwd, depth):
        """After call_primal_keeping: the caller names what the callee left in its
        arguments (`a = _rt.kept(a)`), saved first for the statement's restore."""
        if not call.startswith("_rt.call_primal_keeping("):
            return
        for i in keep:
            node = _given(e, i)
            if node is None:  # (watched only: refused if written)
                continue
            a = node.id
            self.save(a, fwd, depth)
            fwd.append(f"{a} = _rt.kept({a})")

    def inactive_call(self, e, keep=()):
        """A call none of whose arguments is active."""
        obj = self.resolve(e.func)
        if obj is not None:
            self.note_dep(obj)
            user = R.lookup_user(obj)
            if user is None and (
                (hashable(obj) and (obj in R.NONDIFF or obj in R.PRIMITIVES))
                or isinstance(obj, (types.BuiltinFunctionType, type))
                and not _is_user_class(obj)
            ):
                return src(e)
        if isinstance(e.func, gast.Attribute) and obj is None:
            base = e.func.value
            # a method of a local value: plain call unless the value is an object we differentiate
            if self.kind_of(base) in (CONST, ARRAY, REAL, COMPLEX) or not isinstance(base, gast.Name):
                return src(e)
            self.helpers.add("_rt")
            if keep:  # a method writing into an argument the caller reads again: refused
                return (f"_rt.call_method_keeping({_keep_src(keep)}, {src(base)}, "
                        f"{e.func.attr!r}{_args_src(e, lead=True)})[0]")
            return f"_rt.call_method_primal({src(base)}, {e.func.attr!r}{_args_src(e, lead=True)})"
        self.helpers.add("_rt")
        if keep:
            return f"_rt.call_primal_keeping({_keep_src(keep)}, {src(e.func)}{_args_src(e, lead=True)})"
        return f"_rt.call_primal({src(e.func)}{_args_src(e, lead=True)})"

    def call(self, x, e, fwd):
        func = e.func
        obj = self.resolve(func)
        if obj is not None:
            for f in forwarding_chain(obj):  # (a wrapper that only forwards: and what it calls)
                self.note_dep(f)
        user = R.lookup_user(obj) if obj is not None else None
        if obj is _runtime_append() and len(e.args) == 2 and isinstance(e.args[0], gast.Name):
            return self.append(e.args[0].id, e.args[1], fwd, self.depth, length=x)
        if (obj is _MIN_MAX[0] or obj is _MIN_MAX[1]) and user is None:
            rev = self.min_max(x, e, obj, fwd)
            if rev is not None:
                return rev
        if obj is not None and user is None and not _has_starred(e):
            rev = self.inline_primitive(x, e, obj, list(e.args), fwd)
            if rev is not None:
                return rev
        if (
            isinstance(func, gast.Attribute)
            and obj is None
            and func.attr == "pop"
            and isinstance(func.value, gast.Name)
            and func.value.id in self.active
            and len(e.args) <= 1
            and not e.keywords
            and self.kind_of(func.value) == OTHER
        ):
            return self._pop(x, func.value.id, list(e.args), fwd, self.depth)
        if isinstance(func, gast.Attribute) and obj is None:
            base = func.value
            k = self.kind_of(base)
            if k in SCALAR and func.attr == "conjugate" and not e.args:
                fwd.append(f"{x} = {src(e)}")
                return self.conjugate(x, base)
            if k == ARRAY and not _has_starred(e):
                method = R.ARRAY_METHODS.get(func.attr)
                if method is not None:
                    rev = self.inline_primitive(x, e, method, [base] + list(e.args), fwd)
                    if rev is not None:
                        return rev
            self.helpers.add("_rt")
            pbn = self.fresh_local(f"{x}_pullback", self.fwd, self.depth)
            keep = self._kept_arguments(x, e)
            how = f"call_method_keeping({_keep_src(keep)}, " if keep else "call_method("
            fwd.append(
                f"{x}, {pbn} = _rt.{how}{src(base)}, {func.attr!r}{_args_src(e, lead=True)})"
            )
            return self.rev_call_pullback(x, pbn, [base] + list(e.args), call=e)
        self.helpers.add("_rt")
        pbn = self.fresh_local(f"{x}_pullback", self.fwd, self.depth)
        keep = self._kept_arguments(x, e)
        direct = self.facts.callees.get(id(e)) if not keep else None
        if keep:  # the caller reads these containers again: the callee must not write them
            fwd.append(f"{x}, {pbn} = _rt.call_keeping({_keep_src(keep)}, {src(func)}{_args_src(e, lead=True)})")
        elif direct is not None:  # its pair for these kinds, made with this code
            fwd.append(f"{x}, {pbn} = {self.direct_name(getattr(func, 'id', None) or func.attr, direct)}({_args_src(e)})")
        else:
            fwd.append(f"{x}, {pbn} = _rt.call({src(func)}{_args_src(e, lead=True)})")
        rev = self.rev_call_pullback(x, pbn, [func] + list(e.args), call=e)
        return self.take_kept(keep, e, rev, fwd)

    def direct_name(self, fname, entry):
        """The name this code calls entry's pair by (one per callee entry)."""
        for name, e in self.direct.items():
            if e is entry:
                return name
        name = self.namer.fresh(f"{fname}_pair")
        self.direct[name] = entry
        return name

    def take_kept(self, keep, e, rev, fwd):
        """After call_keeping: an argument the callee changed with `a op= v` (in place in
        Python) names the new value here too (`a = _rt.kept(a)`); its gradient goes over
        to the callee's pullback (hand_over) and what is not taken comes back."""
        names = []
        for k in keep:
            node = _given(e, k)
            if node is not None and isinstance(node, gast.Name):
                a = node.id
                if (
                    a in self.active and a in self.locals and a not in self.info.freevars
                    and a not in names and self.kinds.get(a, OTHER) in (ARRAY, OTHER)
                ):
                    names.append(a)
        if not names:
            return rev
        for a in names:  # saved here, restored by the statement's recipe (with_restore)
            self.save(a, fwd, self.depth)
            fwd.append(f"{a} = _rt.kept({a})")

        def recipe(st):
            for a in names:
                if st.get(a) is not None:
                    b = st.adj(a)
                    st.line(f"{b} = _rt.hand_over({a}, {b})")
                    st.status[a] = MAYBE
            rev(st)
            for a in names:
                st.acc(a, f"_rt.take_items({a})", False)

        return recipe

    def _kept_arguments(self, x, e):
        """Positions of the container arguments of a call that the caller reads again
        afterwards (a callee writing into one would write into a copy: see
        runtime.call_keeping)."""
        if not self.may_mutate(e):
            return ()
        fn = self.resolve(e.func)
        if fn is not None and hashable(fn) and fn in runtime_dispatch():
            return ()  # generated code differentiated again: its own calls keep already
        if _has_starred(e):  # where each argument goes is known at run time only
            return ("*",)
        keep = []
        given = list(enumerate(e.args)) + [(k.arg, k.value) for k in e.keywords]
        names = {a.id for _, a in given if isinstance(a, gast.Name)}
        seen = set()
        for i, a in given:
            if isinstance(a, gast.Name) and self.kinds.get(a.id, OTHER) in (ARRAY, OTHER):
                if a.id != x and a.id in self.live:
                    keep.append(i)
                elif a.id in seen:  # the same object twice: a write shows through both
                    keep.append((i, a.id))
                else:  # read again through another name for it, a view of it, what holds
                    # it (zero(m.w), then m.w read), or given as another argument too
                    # (`f(y, y[::-1])`: checked when it runs)?
                    via = self._read_again_through(a.id, x, names)
                    inner = (via or a.id in self.active) and (a.id in self.field_of or (
                        bool(self.aliases.get(a.id)) and a.id in self._containment()[0]))
                    if not via and inner and a.id in self.active:
                        via = self._outer_holder(a.id)
                    if via:  # (i, via, True): read out of `via` (its changes in place refused)
                        keep.append((i, via, True) if inner else (i, via))
                seen.add(a.id)
        # objects an argument holds (`f([inner])`, `b.scale(s)` of b = Box(inner)) that
        # the caller reads again by their own names: (i, name, None), watched at run time
        base = e.func.value if isinstance(e.func, gast.Attribute) and fn is None else None
        for i, a in [(-1, base)] + given:
            if isinstance(a, gast.Name) and a.id in self.active and self.kinds.get(a.id, OTHER) == OTHER:
                keep += [(i, n, obj) for n, obj in self.held_and_read_again(a.id, self.cur_stmt)
                         if n != x and obj != x and all(type(k) is not tuple or k[1:] != (n, obj) for k in keep)]
        return tuple(keep)

    def _outer_holder(self, name):
        """A container or object `name` was read out of (up the reads) read again after
        this statement, or a parameter, captured or global name; None if there is none."""
        element_of = self._containment()[0]
        live = self.live_after.get(id(self.cur_stmt), frozenset())
        seen, todo = {name}, sorted(element_of.get(name, ()))
        while todo:
            h = todo.pop()
            if h in seen:
                continue
            seen.add(h)
            ref = gast.Name(id=h, ctx=gast.Load(), annotation=None, type_comment=None)
            if h in live or h in self.info.params or (h in self.info.freevars or h not in self.locals) \
                    and self.resolve(ref) is None:  # (not a module's or class's attribute)
                return h
            todo.extend(sorted(element_of.get(h, ())))
        return None

    def _read_again_through(self, name, x, names):
        """A name, other than name and x, by which the caller may read again what the
        argument `name` refers to after the call: another name for it or a view of it
        that is read again (aliases), the object it was read out of (field_of) read
        again or a parameter (its own caller reads it), through any chain of these; or
        another argument of the call sharing it. None if there is none."""
        aliases, field_of, live, params = self.aliases, self.field_of, self.live, self.info.params
        frontier, seen = [name], {name, x}
        for _ in range(6):
            nxt = []
            for n in frontier:
                for z in sorted(aliases.get(n, ())):
                    if z not in seen:
                        seen.add(z)
                        if z in live or z in names:
                            return z
                        nxt.append(z)
                field = field_of.get(n)
                if field is not None and field[0] not in seen:
                    o = field[0]
                    seen.add(o)
                    if o in live or o in params or o in names:
                        return f"{o}.{field[1]}"
                    nxt.append(o)
            frontier = nxt
        return None

    def _pop(self, x, lst, args, fwd, depth):
        """x = lst.pop(i), in place: the forward code, and a reverse step that puts x's
        gradient back into the list's tangent. The caller saves x and restores what was
        saved since (with_restore), as for any assignment."""
        self.appended.add(lst)
        self.helpers.add("_rt")
        where = self.fresh_local(f"{lst}_where", fwd, depth)
        fwd.append(f"{x}, {where} = _rt.pop({lst}{''.join(', ' + src(a) for a in args)})")

        def rev(st):
            b = st.adj(lst)
            prev = b if st.get(lst) is not None else "None"
            g = st.adj(x) if st.get(x) is not None else "None"
            st.line(f"{b} = _rt.unpop({prev}, {where}, {g})")
            st.status[lst] = MAYBE

        return rev

    def inline_primitive(self, x, e, obj, args, fwd):
        """Inline the templates of a primitive rule, or None if the call does not fit one."""
        keywords = e.keywords
        kwnames = tuple(k.arg for k in keywords) if keywords else ()
        if None in kwnames:
            return None
        got = self._primitive_of(obj, len(args), kwnames)
        if got is None:
            return None
        prim, bound, defaults = got
        values = args + [k.value for k in keywords] if keywords else args
        kind_of = self.kind_of
        kinds = [kind_of(a) for a in values]
        for k in kinds:
            if k not in _NUM_CONST:
                return None
        pairs = list(zip(bound, values))
        if "dtype" in bound and not inline_dtype(values[bound.index("dtype")], self.resolve):
            return None  # a cast to integers, or a dtype known when it runs: the rule's run-time version
        if "out" in bound and any(p == "out" and not (isinstance(v, gast.Constant) and v.value is None)
                                  for p, v in pairs):
            return None  # out=: the run-time version of the rule refuses it
        fwd.append(f"{x} = {src(e)}")
        self.note_helpers(prim.path)
        extra = dict(defaults)
        adjoints = prim.adjoints
        if adjoints.get("a") == _EXTREMUM and set(bound) <= {"a", "axis", "keepdims"} \
                and args and args[0].__class__ is gast.Name and args[0].id in self.active:
            found = shifted_name(self, self.cur_stmt, args[0].id, x)  # z = a - ans, proved
            if found is not None:  # where z is 0, for the adjoint's tie test (shifted.py)
                z, z_stmt = found
                zeros = self.namer.fresh(f"{z}_zeros")
                self.locals.add(zeros)
                self.after_stmt[id(z_stmt)] = f"{zeros} = _rt.shifted_zeros({z}, {args[0].id}, {x})"
                adjoints = dict(adjoints, a=_EXTREMUM[:-1] + ", _zeros)")
                extra["_zeros"] = zeros
        return self.elementwise(x, pairs, prim.partials, adjoints, prim.kind, extra, kinds)

    def _primitive_of(self, obj, nargs, kwnames):
        """(rule, the parameters the call binds, {unbound parameter: its default's
        source}) of a primitive called with nargs positional arguments and the keywords
        kwnames, or None: looked up once per callee and call shape."""
        try:
            return self._prims[obj, nargs, kwnames]
        except KeyError:
            pass
        except TypeError:  # an unhashable callee: no rule is keyed on it
            return None
        prim = R.lookup_primitive(obj, nargs, kwnames)
        got = None
        if prim is not None:
            bound = prim.bind(nargs, kwnames)
            defaults = {p: prim.defaults[p] for p in prim.params if p not in bound} if bound is not None else None
            got = (prim, bound, defaults)
        self._prims[obj, nargs, kwnames] = got
        return got

    def conjugate(self, x, base):
        def rev(st):
            def body(g, num):
                if self.is_active(base):
                    st.acc(base.id, f"{g}.conjugate()", num)

            self.read_g(st, x, body)

        return rev

    def rev_call_pullback(self, x, pbn, args, call=None):
        """b_args from a run-time pullback: grads = x_pullback(b_x)."""
        keywords = list(call.keywords) if call is not None else []
        starred = call is not None and _has_starred(call)

        def rev(st):
            s = st.get(x)
            if s is None and self.kinds.get(x, OTHER) in NUMERIC + (CONST,):
                return
            # an object's fields may have gradients in the field store: run the pullback
            g = st.adj(x) if s is not None else "None"
            any_active = any(self.is_active(a) for a in args) or any(
                self.is_active(k.value) for k in keywords
            ) or (starred and any(
                isinstance(a, gast.Starred) and self.is_active(a.value) for a in call.args))
            if not any_active:
                return
            if starred or any(k.arg is None for k in keywords):
                self._rev_unpacked_grads(st, x, pbn, g, args, keywords, call)
            else:
                self._rev_grads(st, x, pbn, g, args, keywords, call)

        return rev

    def _rev_unpacked_grads(self, st, x, pbn, g, args, keywords, call):
        """The gradients of a call with ``*args`` or ``**kwargs``, taken apart by the
        run time along the lengths of what was unpacked."""
        grads = self.namer.fresh(f"{x}_grads")
        st.line(f"{grads} = {pbn}({g})")
        self.helpers.add("_rt")
        st.line("# gradients of the unpacked arguments")
        for i, a in enumerate(args):
            if isinstance(a, gast.Starred):
                if self.is_active(a.value):
                    st.acc(a.value.id, f"_rt.starred_grad({grads}, {i}, {src(a.value)}, {_lens(call)})", False)
            elif self.is_active(a):
                st.acc(a.id, f"_rt.arg_grad({grads}, {i}, {_lens(call)})", False)
        for k in keywords:
            if self.is_active(k.value):
                key = k.arg if k.arg else None
                expr = (f"_rt.kw_grad({grads}, {key!r})" if key else
                        f"_rt.kwargs_grad({grads}, {src(k.value)})")
                st.acc(k.value.id, expr, False)

    def _movable(self, call, args):
        """Containers the callee may mutate in place: their tangent after the call goes
        to the callee's pullback through the store, the rest comes back."""
        if call is None or not self.may_mutate(call):
            return []
        movable = [
            a.id for a in args
            if isinstance(a, gast.Name) and a.id in self.active and a.id in self.locals
            and self.kinds.get(a.id, OTHER) == OTHER
        ]
        fname = args[0].id if args and isinstance(args[0], gast.Name) else None
        if fname is None and len(args) > 1 and isinstance(args[1], gast.Name):
            fn = self.resolve(call.func)  # _rt.call(record, ...) differentiated again
            if fn is not None and hashable(fn) and fn in runtime_dispatch():
                fname = args[1].id
        movable += sorted(
            n for n in self.local_fns.get(fname, ()) if n in self.active and n not in movable
        )
        return movable

    def _rev_grads(self, st, x, pbn, g, args, keywords, call):
        """``b_a, b_b_part = x_pullback(b_x)``, then each part added to its adjoint."""
        handed = [n for n in self._movable(call, args) if st.get(n) is not None]
        for n in handed:  # a container's tangent goes to the callee; anything else stays
            b = st.adj(n)
            st.line(f"{b} = _rt.put_items({n}, {b})")
            st.status[n] = MAYBE
        names = []
        direct = {}  # insertion-ordered: the status (and the zeros of a join) in a fixed order
        seen = set()
        pending = []
        callee = self.facts.callees.get(id(call)) if call is not None else None
        nums = callee.grads_num if callee is not None and not keywords else ()
        for i, a in enumerate(args):
            if isinstance(a, gast.Name) and a.id in self.active:
                if st.get(a.id) is None and a.id not in seen and self.kinds.get(a.id) not in SCALAR:
                    names.append(st.adj(a.id))
                    direct[a.id] = None
                else:
                    t = self.namer.fresh(f"{ADJOINT_PREFIX}{a.id}_part")
                    names.append(t)
                    # a real number from a pair made for these kinds: added as it is
                    num = 0 < i <= len(nums) and nums[i - 1] and self.kinds.get(a.id) == REAL
                    pending.append((a.id, t, num))
                seen.add(a.id)
            else:
                names.append("_")
        if keywords:
            kwn = self.namer.fresh(f"{x}_kwgrads")
            names.append(kwn)
        lhs = ", ".join(names) if len(names) > 1 else names[0] + ","
        st.line(f"{lhs} = {pbn}({g})")
        for n in direct:
            st.status[n] = MAYBE
        for n, t, num in pending:
            st.acc(n, t, num)
        for n in handed:
            st.acc(n, f"_rt.take_items({n})", False)
        for k in keywords:
            if self.is_active(k.value):
                st.acc(k.value.id, f"{kwn}.get({k.arg!r})", False)

    def expr_stmt(self, e, fwd, depth):
        if not isinstance(e, gast.Call):
            fwd.append(src(e))
            return None
        func = e.func
        if self._is_field_list_op(e):
            return self.field_list_op(e, fwd, depth)
        if (
            isinstance(func, gast.Attribute)
            and isinstance(func.value, gast.Name)
            and func.value.id in self.active
            and func.attr == "append"
            and len(e.args) == 1
            and not e.keywords
        ):
            return self.append(func.value.id, e.args[0], fwd, depth)
        if (
            isinstance(func, gast.Attribute)
            and isinstance(func.value, gast.Name)
            and func.value.id in self.active
            and not e.keywords
        ):
            lst, args = func.value.id, list(e.args)
            if func.attr == "extend" and len(args) == 1:
                return self.list_extend(lst, args[0], fwd, depth)
            if func.attr == "insert" and len(args) == 2:
                return self.list_insert(lst, args[0], args[1], fwd, depth)
            if func.attr == "pop" and len(args) <= 1:
                x = self.namer.fresh("popped")
                self.locals.add(x)
                return self.list_pop(x, lst, args, fwd, depth)
        if not self.value_active(e) and not (
            isinstance(func, gast.Attribute) and self.is_active(func.value)
        ):
            mark = len(self.saves)
            keep = self.read_again(e)
            call = self.inactive_call(e, keep)
            fwd.append(call)
            self.take_kept_inactive(call, e, keep, fwd, depth)
            saves = self.saves[mark:]
            return _then_restore(lambda st: None, saves) if saves else None
        # a call made for its effect (a method that mutates self, a helper that fills a
        # list): its result is dropped, its pullback runs with a zero seed
        mark = len(self.saves)
        x = self.namer.fresh("effect")
        self.locals.add(x)
        rev = self.call(x, e, fwd)
        saves = self.saves[mark:]

        def recipe(st):
            st.status[x] = MAYBE
            st.line(f"{st.adj(x)} = None")
            rev(st)
            st.consume(x)
            for sv in reversed(saves):
                st.out.append(Restore(sv))

        return recipe


def _keep_src(keep):
    """The source of a call_keeping tuple: positions, (position, name) pairs, and
    (position, name, the object the name holds now) for an object an argument holds."""
    parts = [f"({k[0]!r}, {k[1]!r}, {k[2]})" if type(k) is tuple and len(k) == 3 else repr(k) for k in keep]
    return f"({', '.join(parts)}{',' if len(parts) == 1 else ''})"


def _given(e, k):
    """The argument node of call e that keep entry k names (a position, or a keyword),
    or None for an entry that names none by itself ("*", or a tuple)."""
    if type(k) is int:
        return e.args[k]
    if type(k) is str and k != "*":
        for kw in e.keywords:
            if kw.arg == k:
                return kw.value
    return None
