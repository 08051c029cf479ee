"""Late binding: a local function reads the variables it captures when it is called.

A local ``def`` or ``lambda`` sees the value a captured variable has *when it runs*
(Python's closures bind late), while the gradient of what it read goes, through the
tangent of the function, to the variable's adjoint at the point of *definition*
(``ControlMixin.rev_closure``). The two are the same value unless the variable is bound
again, or the container it names is changed in place, between the definition and a call:
then the gradient would go to the wrong value, silently. Such a program is refused here,
before any code is generated (fail closed)::

    y = x
    def g():
        return y
    y = x * x      # g() now reads x * x, its gradient would go to the first y
    return g()     # refused: pass y to g as an argument

The walk follows the normalised body in order: branches are merged, a loop's body is
walked twice (a change at its end reaches a call at its start). A function handed to
something that may keep it (a display, an attribute, an alias the walk does not follow)
is watched from then on: any later change to what it captures is refused where it happens.
"""
import functools

import gast

from ...errors import UnsupportedSyntaxError
from ...kinds import ARRAY, OTHER
from ..queries import late_names
from .pure import READERS as _READERS, writes_nothing

# functions that call the function they are given before they return, and keep nothing
_CALLS_AND_FORGETS = frozenset({sorted, min, max, functools.reduce})
# methods that change an array in place (numpy's ndarray)
_ARRAY_MUTATORS = frozenset(
    {"fill", "sort", "put", "resize", "itemset", "partition", "setfield", "setflags", "byteswap"}
)


def changed_in_place(fn, may_mutate=None):
    """The names a def/lambda's body may change in place when it runs: the base of a
    subscript or attribute it writes, the receiver of a method it calls (one that does not
    only read), a name it hands to a call. Its pullback keeps their gradients by object
    (runtime put_items), for the enclosing function to take where the function is made."""
    return _in_place(fn, may_mutate) & late_names(fn)


def changed_params(fn, may_mutate=None):
    """The positions of the parameters a def/lambda's body may change in place."""
    a = fn.args
    changed = _in_place(fn, may_mutate)
    return {i for i, p in enumerate(a.posonlyargs + a.args) if p.id in changed}


def _in_place(fn, may_mutate=None):
    """(may_mutate: whether a call may change the names it is given; any call when None)"""
    out = set()
    for n in gast.walk(fn.body if not isinstance(fn.body, list) else gast.Module(body=fn.body, type_ignores=[])):
        if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(n.ctx, gast.Store):
            out.update(c for c, _ in st_targets(n))
        elif isinstance(n, gast.Call):
            f = n.func
            if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and f.attr not in _READERS:
                out.add(f.value.id)
            if may_mutate is None or may_mutate(n):
                out.update(a.id for a in n.args if isinstance(a, gast.Name))
                out.update(k.value.id for k in n.keywords if isinstance(k.value, gast.Name))
    return out


class _State:
    __slots__ = ("live", "stale", "watched")

    def __init__(self, live=None, stale=None, watched=None):
        self.live = dict(live or {})  # local function -> the relevant names it captures
        self.stale = dict(stale or {})  # local function -> (name, how, line) changed since
        # captured name -> a function handed on that reads it: a change is refused at once
        self.watched = dict(watched or {})

    def copy(self):
        return _State(self.live, self.stale, self.watched)

    def merge(self, other):
        live = dict(self.live)
        for f, caps in other.live.items():
            live[f] = live.get(f, frozenset()) | caps
        stale = dict(other.stale)
        stale.update(self.stale)
        return _State(live, stale, {**other.watched, **self.watched})


class LateBinding:
    """The walk (see the module docstring); gen is the reverse pass' Generator (its
    kinds, active names, resolve and may_mutate)."""

    def __init__(self, gen):
        self.gen = gen
        self.line = None
        self.mutates = {}  # local function -> the captured names it changes in place
        self.params_changed = {}  # local function -> positions of parameters it changes

    def check(self, body):
        self.block(body, _State())

    # ----- the walk ---------------------------------------------------------------------
    def block(self, stmts, st):
        """The state after stmts; None when they surely leave (return, raise): nothing
        after them runs on that path."""
        for s in stmts:
            st = self.stmt(s, st)
            if isinstance(s, (gast.Return, gast.Raise)) or getattr(s, "leaves_function", False):
                return None  # (the exits' flag of a return: the rest is skipped on this path)
            if st is None:
                return None
        return st

    def stmt(self, s, st):
        line = getattr(s, "src_line", None) or getattr(s, "lineno", None)
        if line is not None:
            self.line = line
        if isinstance(s, gast.If):
            self.uses(s.test, st)
            a = self.block(s.body, st.copy())
            b = self.block(s.orelse, st.copy())
            return b if a is None else a if b is None else a.merge(b)
        if isinstance(s, (gast.For, gast.While)):
            return self.loop(s, st)
        if isinstance(s, gast.FunctionDef):
            for d in s.decorator_list + s.args.defaults + [d for d in s.args.kw_defaults if d]:
                self.uses(d, st)
            self.uses_in_body(s, st)
            self.define(s.name, s, st)
            return st
        value = getattr(s, "value", None)
        if isinstance(s, gast.Assign) and isinstance(value, gast.Lambda):
            self.uses_in_body(value, st)
            tgt = s.targets[0]
            if isinstance(tgt, gast.Name):
                self.define(tgt.id, value, st)
                return st
            self.changed(st_targets(tgt), st)
            return st
        if isinstance(s, gast.Return):
            if value is not None:
                self.uses(value, st, escape=False)
            return st
        self.simple(s, value, st)
        return st

    def loop(self, s, st):
        """The body walked twice: a change at its end reaches a call at its start."""
        head = s.iter if isinstance(s, gast.For) else s.test
        self.uses(head, st)
        once = st
        for _ in range(2):
            inner = once.copy()
            if isinstance(s, gast.For):
                self.changed(st_targets(s.target), inner)
            after = self.block(s.body, inner)
            once = st if after is None else st.merge(after)
        return self.block(s.orelse, once)

    def simple(self, s, value, st):
        """An assignment or an expression statement: its reads of local functions, then
        what it binds and what it changes in place."""
        if value is not None:
            self.uses(value, st, alias=isinstance(s, gast.Assign) and isinstance(value, gast.Name))
        for t in getattr(s, "targets", None) or ([s.target] if hasattr(s, "target") else []):
            for n in gast.walk(t):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                    self.check_use(n.id, st, "a use")
        changes = []
        if isinstance(s, gast.Assign):
            for t in s.targets:
                changes += st_targets(t)
            if (
                len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
                and isinstance(value, gast.Name) and value.id in st.live
            ):  # h = g: h names the same function
                h = s.targets[0].id
                changes = [c for c in changes if c[0] != h]
                st.live[h] = st.live[value.id]
                if value.id in st.stale:
                    st.stale[h] = st.stale[value.id]
                else:
                    st.stale.pop(h, None)
        elif isinstance(s, (gast.AugAssign, gast.AnnAssign)):
            changes += st_targets(s.target)
        caller = None
        if isinstance(value, gast.Call):
            f = value.func
            if isinstance(f, gast.Name) and f.id in st.live:
                # a local function: what its body may change in place is known; what it
                # captures and changes, the others that read it see (itself: its pullback
                # takes and gives back that gradient)
                caller = f.id
                changes += [
                    (a.id, f"given to `{f.id}`, which changes it in place")
                    for i, a in enumerate(value.args)
                    if isinstance(a, gast.Name) and i in self.params_changed.get(f.id, ())
                ]
                changes += [(n, f"changed in place by `{f.id}`") for n in sorted(self.mutates.get(f.id, ()))]
            else:
                changes += self.call_changes(value)
        self.changed(changes, st, caller)

    def define(self, name, fn, st):
        names = late_names(fn)
        caps = set()
        for n in names:
            if n in st.live:  # it calls another local function: what that one reads too
                caps |= st.live[n]
            elif n in self.gen.active:
                caps.add(n)
        st.live[name] = frozenset(caps)
        self.mutates[name] = changed_in_place(fn, self.gen.may_mutate) & caps
        self.params_changed[name] = changed_params(fn, self.gen.may_mutate)
        st.stale.pop(name, None)

    # ----- reads of the local functions ---------------------------------------------------
    def uses(self, e, st, escape=True, alias=False):
        """Every read of a local function in e: refused when what it captures changed since
        it was made; handed on (anything but a call, `h = g` or an argument of a function
        known to call it there and keep nothing): what it reads is watched."""
        if not st.live:
            return
        called = set()
        args = set()
        for n in gast.walk(e):
            if isinstance(n, gast.Call):
                if isinstance(n.func, gast.Name):
                    called.add(id(n.func))
                callee = self.gen.resolve(n.func)
                if any(callee is c for c in _CALLS_AND_FORGETS):
                    given = n.args + [k.value for k in n.keywords]
                    args.update(id(a) for a in given if isinstance(a, gast.Name))
        for n in gast.walk(e):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in st.live:
                how = "a call" if id(n) in called else "a use"
                self.check_use(n.id, st, how)
                if escape and not alias and id(n) not in called and id(n) not in args:
                    for c in st.live[n.id]:
                        st.watched.setdefault(c, n.id)

    def uses_in_body(self, fn, st):
        """A def/lambda whose body reads a local function: a use of it (it may call it)."""
        if not st.live:
            return
        for n in late_names(fn) & set(st.live):
            self.check_use(n, st, "a use")

    def check_use(self, f, st, how):
        if f not in st.stale:
            return
        n, change, line = st.stale[f]
        self.refuse(
            f"{how} of the local function `{f}` after `{n}`, which it reads when it runs, "
            f"was {change} at line {line}",
            f, n, change,
        )

    # ----- what a statement changes ---------------------------------------------------------
    def call_changes(self, call):
        """(name, how) of the containers a call may change in place: its receiver (a method
        that may write), the names it is given (a callee that may store into them)."""
        out = []
        gen = self.gen
        f = call.func
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name):
            kind = gen.kinds.get(f.value.id, OTHER)
            if (kind == ARRAY and f.attr in _ARRAY_MUTATORS) or (
                kind == OTHER and f.attr not in _READERS and gen.resolve(f) is None
            ):
                out.append((f.value.id, f"changed in place (`.{f.attr}(...)`)"))
        names = [a for a in call.args if isinstance(a, gast.Name)]
        names += [k.value for k in call.keywords if isinstance(k.value, gast.Name)]
        if names and gen.may_mutate(call) and not writes_nothing(gen.resolve(f)):
            for a in names:
                if gen.kinds.get(a.id, OTHER) in (ARRAY, OTHER):
                    out.append((a.id, "given to a call that may change it in place"))
        return out

    def changed(self, changes, st, caller=None):
        for n, how in changes:
            for f, caps in list(st.live.items()):
                if f == caller and how.endswith(f"by `{f}`"):
                    continue
                if f == n:
                    del st.live[f]  # the name now holds something else
                    st.stale.pop(f, None)
                    continue
                if n in caps:
                    st.stale.setdefault(f, (n, how, self.line))
            f = st.watched.get(n)
            if f is not None and not (f == caller and how.endswith(f"by `{f}`")):
                self.refuse(
                    f"`{n}` {how} after the local function `{f}`, which reads it when it "
                    f"runs, was handed on (it may be called later)",
                    f, n, how,
                )

    def refuse(self, construct, f, n, how):
        if how == "rebound":
            keep = f"or bind the value it had as a default (`def {f}(..., {n}={n})`) if that is the one meant"
        else:
            keep = f"or make the change before `{f}` is defined"
        raise UnsupportedSyntaxError(
            construct, self.gen.info.filename, self.line,
            hint=(
                f"Python's closures read `{n}` when they run, but its gradient would go to the "
                f"value `{n}` had where `{f}` was defined (silently wrong). Pass `{n}` to `{f}` "
                f"as an argument, {keep}"
            ),
        )


def st_targets(t):
    """(name, how) of what an assignment target binds or changes in place."""
    if isinstance(t, gast.Name):
        return [(t.id, "rebound")]
    if isinstance(t, (gast.Tuple, gast.List)):
        out = []
        for e in t.elts:
            out += st_targets(e.value if isinstance(e, gast.Starred) else e)
        return out
    if isinstance(t, (gast.Subscript, gast.Attribute)):
        base = t.value
        while isinstance(base, (gast.Subscript, gast.Attribute)):
            base = base.value
        if isinstance(base, gast.Name):
            return [(base.id, "changed in place")]
    return []


def check_late_binding(gen):
    """Refuse a call of a local function after a variable it captures changed (see the
    module docstring). Nothing to do for a function without local functions, nor for
    adjoint_s2s's own code (its runtime, generated pairs differentiated again)."""
    if gen.facts.captures and not gen._own_code and not gen.info.filename.startswith("<adjoint_s2s"):
        LateBinding(gen).check(gen.fn.body)
