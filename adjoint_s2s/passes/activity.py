"""Activity and kind analysis on normalised code: the third pass.

``analyse`` reads the normalised function (never rewrites it), the argument kinds the
pair is specialised on and the function's globals, and returns an ``Activity``: the
kinds, the active names, the locals and, per statement, the names live after it, all
read-only. The reverse pass starts from copies of them (it adds the temporaries it makes)
and asks the same questions through ``Queries``, the mixin both share.

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
import builtins
import functools
import sys
import types
from types import MappingProxyType

import gast
import numpy as np

from .. import rules as R
from ..kinds import ARRAY, COMPLEX, CONST, OTHER, REAL
from ..naming import names_in
from .liveness import live_after, stmt_targets

_ORDER = {REAL: 0, COMPLEX: 1, ARRAY: 2, OTHER: 3}
SCALAR = (REAL, COMPLEX)
NUMERIC = (REAL, COMPLEX, ARRAY)


def join(a, b):
    if a is None:
        return b
    if b is None or a == b:
        return a
    if a == CONST or b == CONST:
        return OTHER
    return a if _ORDER[a] >= _ORDER[b] else b


def walk_block(block):
    """Every statement of a normalised block, depth first, loops included."""
    for s in block:
        yield s
        if isinstance(s, gast.If):
            yield from walk_block(s.body)
            yield from walk_block(s.orelse)
        elif isinstance(s, (gast.For, gast.While)):
            yield from walk_block(s.body)


def reads(node):
    """The names node reads (a stack walk: the same set as filtering gast.walk)."""
    return names_in(node, gast.Load)


def free_names_of_function(node):
    """Names a lambda/def reads from its enclosing scope (not its own params/locals)."""
    params = set()
    a = node.args
    for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
        if p is not None:
            params.add(p.id)
    body = node.body if isinstance(node.body, list) else [node.body]
    assigned = set(params)
    loaded = set()
    for s in body:
        for n in gast.walk(s):
            if isinstance(n, gast.Name):
                if isinstance(n.ctx, gast.Load):
                    loaded.add(n.id)
                else:
                    assigned.add(n.id)
    defaults = set()
    for d in a.defaults + [d for d in a.kw_defaults if d is not None]:
        defaults |= {n.id for n in gast.walk(d) if isinstance(n, gast.Name)}
    return (loaded - assigned) | defaults


BINOP_NAMES = {
    gast.Add: "Add",
    gast.Sub: "Sub",
    gast.Mult: "Mult",
    gast.Div: "Div",
    gast.FloorDiv: "FloorDiv",
    gast.Mod: "Mod",
    gast.Pow: "Pow",
    gast.MatMult: "MatMult",
}
INACTIVE_ATTRS = {"shape", "ndim", "size", "dtype", "__class__", "__name__", "itemsize"}
_ALWAYS_INACTIVE_ATTRS = {"__class__", "__name__"}  # a type, a string: of any value


def const_kind(v):
    if isinstance(v, bool) or v is None or isinstance(v, (str, bytes)) or v is Ellipsis:
        return CONST
    if isinstance(v, (int, float)):
        return REAL
    if isinstance(v, complex):
        return COMPLEX
    return OTHER


def call_operands(call):
    """A call's arguments: positional, starred (their value) and keyword values."""
    return [a.value if isinstance(a, gast.Starred) else a for a in call.args] + [
        k.value for k in call.keywords
    ]


@functools.lru_cache(maxsize=None)
def runtime_dispatch():
    """The run-time entry points through which generated code calls any function.

    Read from sys.modules, not imported: the run time imports the transformer, and it is
    loaded before anything is transformed."""
    runtime = sys.modules[__name__.partition(".")[0] + ".runtime"]
    return frozenset({runtime.call, runtime.call_keeping, runtime.call_method,
                      runtime.call_method_keeping})


def hashable(obj):
    try:
        hash(obj)
        return True
    except TypeError:
        return False


class Queries:
    """Questions about kinds and activity, asked of ``self.kinds``, ``self.active``,
    ``self.locals``, ``self.info`` and ``self.fn``: by the analysis while it runs, and by
    the reverse pass on its own copies afterwards."""

    def kind_of(self, node):
        if isinstance(node, gast.Name):
            return self.kinds.get(node.id, OTHER if node.id in self.locals else self.global_kind(node.id))
        if isinstance(node, gast.Constant):
            return const_kind(node.value)
        return OTHER

    def global_kind(self, name):
        """A global's kind, from its value now. Array templates are right for any number
        or array, so a global array (data a function reads) is ARRAY; a real number is
        REAL, a complex one COMPLEX: every call checks that the global still has the type
        the code assumed (emit's data guard), so a module that rebinds `DT = 0.01` to a
        complex or an array gets code made again. Anything else is looked at when it runs."""
        g = self.info.globals
        if name not in g:
            return OTHER
        value = g[name]
        if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.number):
            return ARRAY
        if type(value) in (int, float):
            return REAL
        if type(value) is complex:
            return COMPLEX
        return OTHER

    def global_items_kind(self, name):
        """ARRAY for a global list or tuple of number arrays (data: `XS[t]` inside a
        loop) that this function reads only as `x = XS[i]`; else OTHER. The code made
        for it assumes so at every call (emit's data guard checks each item's type), so
        a list changed later (a number, an object appended) gets code made again."""
        if self._global_items is None:
            # len(XS) reads no item: allowed too
            sized = {id(c) for c in gast.walk(self.fn) if isinstance(c, gast.Call)
                     and len(c.args) == 1 and not c.keywords and isinstance(c.args[0], gast.Name)
                     and self.resolve(c.func) is len}
            self._global_items = item_reads_only(
                self.fn, {n.id for n in gast.walk(self.fn) if isinstance(n, gast.Name)} - self.locals,
                any_key=True, also=sized)
        if name in self.locals or name in self.info.freevars or name not in self._global_items:
            return OTHER
        g = self.info.globals
        value = g.get(name) if name in g else None
        if type(value) not in (list, tuple) or not value or not all_number_arrays(value):
            return OTHER
        assume = getattr(g, "assume_array_items", None)
        if assume is None:
            return OTHER
        assume(name)
        return ARRAY

    def is_active(self, node):
        return isinstance(node, gast.Name) and node.id in self.active

    def resolve(self, node):
        """The object a callee expression names, if it can be known now; else None."""
        if isinstance(node, gast.Name):
            if node.id in self.info.static_free and node.id not in self.locals:
                return self.info.static_free[node.id]
            if node.id in self.locals or node.id in self.info.freevars:
                return None
            g = self.info.globals
            if node.id in g:
                return g[node.id]
            bi = g.get("__builtins__", builtins)
            bi = bi if isinstance(bi, dict) else vars(bi)
            return bi.get(node.id)
        if isinstance(node, gast.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, (types.ModuleType, type, np.ufunc)):  # np.add.reduce too
                return getattr(base, node.attr, None)
            if type(base) in R.BOUND_RULE_CLASSES:  # scipy.stats.norm.logpdf: a rule's key
                return getattr(base, node.attr, None)
        return None

    def iter_item_kind(self, it):
        k = self.kind_of(it)
        if k == ARRAY:
            return ARRAY
        if isinstance(it, gast.Name) and it.id in self.range_names:
            return REAL
        return OTHER

    def expr_kind(self, e):
        if isinstance(e, (gast.Name, gast.Constant)):
            return self.kind_of(e)
        if isinstance(e, gast.BinOp):
            ka, kb = self.kind_of(e.left), self.kind_of(e.right)
            op = type(e.op)
            if op not in BINOP_NAMES:
                return CONST if (ka, kb) in ((REAL, REAL), (CONST, CONST), (REAL, CONST), (CONST, REAL)) else OTHER
            if ka == CONST and kb == CONST:
                return CONST
            if CONST in (ka, kb) or OTHER in (ka, kb):
                return OTHER
            if op is gast.MatMult:
                return ARRAY
            if op is gast.Pow and ka == REAL and kb == REAL:
                if isinstance(e.right, gast.Constant) and float(e.right.value).is_integer():
                    return REAL
                return OTHER
            return join(ka, kb)
        if isinstance(e, gast.UnaryOp):
            if isinstance(e.op, (gast.USub, gast.UAdd)):
                return self.kind_of(e.operand)
            if isinstance(e.op, gast.Invert) and self.kind_of(e.operand) == OTHER:
                return OTHER  # an object's __invert__
            return CONST
        if isinstance(e, gast.Compare):
            return CONST
        if isinstance(e, gast.JoinedStr):
            return CONST
        if isinstance(e, gast.Call):
            return self.call_kind(e)
        if isinstance(e, gast.Attribute):
            k = self.kind_of(e.value)
            if self.inactive_attr(e):
                return CONST
            if k in SCALAR and e.attr in ("real", "imag"):
                return REAL
            if k == ARRAY and e.attr in ("real", "imag", "T", "mT"):
                return ARRAY
            obj = self.resolve(e)
            if obj is not None and not callable(obj):
                return const_kind(obj) if const_kind(obj) != OTHER else OTHER
            return OTHER
        if isinstance(e, gast.Subscript):
            items = self.dict_elts.get(e.value.id) if isinstance(e.value, gast.Name) else None
            if items is not None and isinstance(e.slice, gast.Constant) and _const_key(e.slice.value) \
                    and e.slice.value in items:
                return items[e.slice.value]  # p = {"a": x}; p["a"]: read only so, never changed
            if isinstance(e.value, gast.Name) and isinstance(e.slice, (gast.Name, gast.Constant)) \
                    and self.global_items_kind(e.value.id) == ARRAY:
                return ARRAY  # XS[t] of a global list of arrays
            elts = self.tuple_elts.get(e.value.id) if isinstance(e.value, gast.Name) else None
            if elts is not None and isinstance(e.slice, gast.Constant) and type(e.slice.value) is int:
                i = e.slice.value
                if -len(elts) <= i < len(elts):
                    return elts[i]  # `theta, omega = 1.0, 0.0`: seq = (1.0, 0.0); theta = seq[0]
            return ARRAY if self.kind_of(e.value) == ARRAY else OTHER
        return OTHER

    def call_kind(self, e):
        func = e.func
        if isinstance(func, gast.Attribute) and self.resolve(func) is None:
            k = self.kind_of(func.value) if isinstance(func.value, (gast.Name, gast.Constant)) else OTHER
            if k in SCALAR and func.attr == "conjugate":
                return k
            if k == ARRAY:
                if func.attr in R.ARRAY_CONST_METHODS:
                    return CONST
                # a method with a rule returns an array or a NumPy scalar; any other
                # (tolist, item, round...) may not: known when it runs
                return ARRAY if func.attr in R.ARRAY_METHODS else OTHER
            return OTHER
        obj = self.resolve(func)
        if obj is None:
            return OTHER
        if R.lookup_user(obj) is not None:
            return OTHER
        if type(obj) is types.FunctionType:  # the user's own (NumPy's Python functions go on)
            result = self.callee_result(e, obj)
            if result is not None:
                return result[0]
        if obj in R.NONDIFF if hashable(obj) else False:
            # no gradient flows through it, but its value may still be written into
            # (a = np.zeros(n); a[i] = x): the kind says what the value is
            if obj in (len, int, round, hash, id, ord):
                return REAL
            if obj in (bool, str, repr, format, isinstance, issubclass, callable, hasattr, chr):
                return CONST
            if getattr(obj, "__module__", "") == "numpy" or type(obj).__name__ == "ufunc":
                return ARRAY
            return OTHER
        if obj in (min, max) and len(e.args) >= 2 and not e.keywords:
            # min(h, 1.0) of real numbers is one of them: a real number
            kinds = [self.kind_of(a) for a in e.args]
            return REAL if all(k == REAL for k in kinds) else OTHER
        kwnames = tuple(k.arg for k in e.keywords)
        prim = R.lookup_primitive(obj, len(e.args), kwnames) if None not in kwnames else None
        if prim is None:
            return OTHER
        kinds = [self.kind_of(a) for a in e.args] + [self.kind_of(k.value) for k in e.keywords]
        if any(k == OTHER for k in kinds):
            return OTHER
        if prim.kind == "real":
            return REAL if all(k in (REAL, CONST) for k in kinds) else OTHER
        if prim.kind == "complex":
            return COMPLEX if all(k in SCALAR + (CONST,) for k in kinds) else OTHER
        if prim.kind == "abs":
            return REAL if kinds[0] in SCALAR else (ARRAY if kinds[0] == ARRAY else OTHER)
        if prim.kind == "array":
            return ARRAY
        if prim.kind == "other":
            return OTHER
        out = None
        for k in kinds:
            if k != CONST:
                out = join(out, k)
        if prim.fn is pow and out == REAL:
            b = e.args[1] if len(e.args) > 1 else None
            if not (isinstance(b, gast.Constant) and float(b.value).is_integer()):
                return OTHER
        return out or REAL

    def callee_result(self, e, obj):
        """(kind, item kinds or None) of what a call of a module-level Python function
        returns, from its generated code for these argument kinds (made now: the call
        needs it anyway), or None when that is not known statically.

        Sound because what it rests on is part of this function's cache entry: the
        callee is a global read by name (its identity is recorded, so a redefinition
        makes this code again), it shares this function's globals (the globals its code
        assumed are recorded here too, and guarded), it captures nothing, is called with
        exactly its positional parameters of number and array kinds, and its rules'
        versions join this function's (a rule registered for it drops this code)."""
        code = obj.__code__
        g = self.info.globals
        if (
            not isinstance(e.func, gast.Name)
            or e.func.id in self.locals
            or e.func.id in self.info.freevars
            or e.keywords
            or any(isinstance(a, gast.Starred) for a in e.args)
            or len(e.args) != code.co_argcount
            or code.co_kwonlyargcount
            or code.co_flags & 0x2C  # *args, **kwargs, a generator
            or obj.__closure__ is not None
            or obj.__globals__ is not getattr(g, "_g", g)
            or (obj in R.SPECIAL or obj in R.PRIMITIVES or obj in R.NONDIFF)
        ):
            return None
        kinds = tuple(self.kind_of(a) for a in e.args)
        if not all(k in NUMERIC for k in kinds):
            self.callee_memo.pop(id(e), None)
            return None
        memo = self.callee_memo.get(id(e))
        if memo is not None and memo[0] == kinds:
            return memo[1]
        emit = sys.modules[__name__.partition(".")[0] + ".emit"]
        if emit.in_progress(code) or emit.runtime_code(code):
            return None  # recursion: the callee's kinds wait on this function's
        try:
            entry = emit.entry_for(obj, emit.cache_key(obj, kinds))
        except Exception:  # an error met again (and reported) when the call runs
            self.callee_memo.pop(id(e), None)
            return None
        for name in entry.assumed:  # what the callee's code assumed, assumed here too
            if type(name) is str:
                g.get(name)
        self.callee_memo[id(e)] = (kinds, entry.result, entry, e.func.id)
        return entry.result

    def may_mutate(self, call):
        """Could this call store its arguments somewhere? Not for builtins and rules."""
        obj = self.resolve(call.func)
        if obj is None:
            return True
        if not hashable(obj):
            return True
        if obj in runtime_dispatch():  # generated code differentiated again: any callee
            return True
        if obj in R.SPECIAL or obj in R.NONDIFF or obj in R.PRIMITIVES:
            return False
        return isinstance(obj, types.FunctionType) or R.lookup_user(obj) is not None

    def value_active(self, e):
        if isinstance(e, gast.Name):
            return e.id in self.active
        if isinstance(e, gast.Constant):
            return False
        if isinstance(e, (gast.Compare, gast.JoinedStr)):
            return False
        if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.Not):
            return False
        if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.Invert) and self.kind_of(e.operand) != OTHER:
            return False  # ~ of a number or an array: an integer or a bool (no tangent)
        if isinstance(e, gast.Lambda):
            return bool(free_names_of_function(e) & self.active)
        if isinstance(e, gast.Attribute) and self.inactive_attr(e):
            return False
        if isinstance(e, gast.Call):
            obj = self.resolve(e.func)
            if obj is not None and hashable(obj) and (obj in R.NONDIFF or obj in R.STOPS_GRADIENT):
                return False
            if obj is not None and R.lookup_user(obj) is not None and R.lookup_user(obj).style == "nondiff":
                return False
        r = self._reads_cache.get(id(e))
        if r is None:
            r = self._reads_cache[id(e)] = reads(e)
        return bool(r & self.active)

    def inactive_attr(self, e):
        """Is e (an attribute read) surely without a tangent? .shape, .dtype & co. are
        integers and dtypes of numbers and arrays; of another value (an object with a
        field called `size`) they are read like any attribute."""
        if e.attr in _ALWAYS_INACTIVE_ATTRS:
            return True
        return e.attr in INACTIVE_ATTRS and self.kind_of(e.value) in NUMERIC + (CONST,)


class Activity(Queries):
    """The result of the analysis (read-only once ``analyse`` returns it)."""

    def __init__(self, fn_node, info, arg_kinds, free_kinds, user_names):
        self.fn = fn_node
        self.info = info
        self.user_names = frozenset(user_names)
        self._reads_cache = {}
        locals_ = set(info.params)
        for s in walk_block(fn_node.body):
            locals_.update(stmt_targets(s))
        self.locals = locals_
        self.live_after = MappingProxyType(live_after(fn_node.body))
        self._range = self._caps = None  # computed when first asked for
        self.kinds = _argument_kinds(info, arg_kinds, free_kinds)
        # tuples bound once to a name (the normalised form of `a, b = x, y`): the kinds of
        # their items, for the subscripts that unpack them
        counts = {}
        for s in walk_block(fn_node.body):
            for t in stmt_targets(s):
                counts[t] = counts.get(t, 0) + 1
        self._once = {t for t, n in counts.items() if n == 1 and t not in info.params}
        self.tuple_elts = {}
        # dicts bound once to a display with constant keys and read only as p[key]: the
        # kinds of their values by key
        self.dict_elts = {}
        self._item_only = item_reads_only(fn_node, self._once)
        self._global_items = None  # computed when first asked for
        self.callee_memo = {}  # id(call) -> (argument kinds, callee's result kinds, its Entry)
        self.infer_kinds()
        self.active = {p for p in info.params if self.kinds.get(p) != CONST}
        self.active |= {v for v in info.freevars if self.kinds.get(v) != CONST}
        self.infer_activity()
        self.locals = frozenset(self.locals)
        self.kinds = MappingProxyType(self.kinds)
        self.tuple_elts = MappingProxyType(self.tuple_elts)
        self.dict_elts = MappingProxyType(self.dict_elts)
        self.callees = MappingProxyType({i: m[2] for i, m in self.callee_memo.items()})
        self.callee_globals = frozenset(m[3] for m in self.callee_memo.values())
        self.active = frozenset(self.active)
        self.reads_memo = self._reads_cache  # id(expression) -> the names it reads

    def infer_kinds(self):
        for _ in range(6):
            before = dict(self.kinds)
            for s in walk_block(self.fn.body):
                if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                    k = self.expr_kind(s.value)
                    t = s.targets[0].id
                    if (isinstance(s.value, gast.Tuple) and t in self._once
                            and not any(isinstance(x, gast.Starred) for x in s.value.elts)):
                        self.tuple_elts[t] = tuple(self.expr_kind(x) for x in s.value.elts)
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
                    self.kinds[t] = join(self.kinds.get(t), k) if t in before or t in self.kinds else k
                elif isinstance(s, gast.For):
                    k = self.iter_item_kind(s.iter)
                    t = s.target.id
                    self.kinds[t] = join(self.kinds.get(t), k)
                elif isinstance(s, gast.FunctionDef):
                    self.kinds[s.name] = OTHER
                elif isinstance(s, (gast.Import, gast.ImportFrom)):
                    for n in stmt_targets(s):
                        self.kinds[n] = CONST
            if self.kinds == before:
                break

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
        """Names bound to ``range(...)``: iterating over one gives numbers."""
        names = set()
        for s in walk_block(self.fn.body):
            if (
                isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name)
                and isinstance(s.value, gast.Call)
                and self.resolve(s.value.func) is range
            ):
                names.add(s.targets[0].id)
        return frozenset(names)


    def infer_activity(self):
        for _ in range(20):
            before = len(self.active)
            for s in walk_block(self.fn.body):
                self.stmt_activity(s)
            if len(self.active) == before:
                break

    def stmt_activity(self, s):
        act = self.active
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
        if isinstance(s, gast.Assign):
            tgt = s.targets[0]
            value_active = self.value_active(s.value)
            if not value_active and isinstance(s.value, gast.Call):
                f = s.value.func
                if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and f.value.id in act:
                    value_active = True  # a method of an active object (lst.pop())
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
        if isinstance(call, gast.Call):
            # a method given an active value (positional, starred or keyword) may keep it
            # in its object, whether or not its result is used: the object becomes active
            f = call.func
            if (
                isinstance(f, gast.Attribute)
                and isinstance(f.value, gast.Name)
                and (f.value.id in self.locals or f.value.id in self.info.params)  # no union per statement
                and self.kinds.get(f.value.id, OTHER) == OTHER  # numbers, arrays: no
                and self.resolve(f) is None
                and any(self.value_active(a) for a in call_operands(call))
            ):
                act.add(f.value.id)
        elif isinstance(s, gast.For):
            if self.is_active(s.iter) and self.kinds.get(s.target.id) != CONST:
                act.add(s.target.id)
        elif isinstance(s, gast.FunctionDef):
            if free_names_of_function(s) & act:
                act.add(s.name)

    def _captures(self):
        """Local def/lambda name -> the names it captures."""
        caps = {}
        for s in walk_block(self.fn.body):
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
    kinds = {}
    for p, k in zip(info.positional, arg_kinds):
        kinds[p] = k
    if info.vararg:
        kinds[info.vararg] = OTHER
    for p in info.kwonly:
        kinds.setdefault(p, OTHER)
    if info.kwarg:
        kinds[info.kwarg] = OTHER
    for p in info.positional:
        kinds.setdefault(p, OTHER)
    for v, k in zip(info.freevars, free_kinds):
        kinds[v] = k
    return kinds


def all_number_arrays(seq):
    """Whether every item of seq is an ndarray of numbers."""
    nd = np.ndarray
    return all(type(a) is nd and a.dtype.kind in "iufc" for a in seq)


def _const_key(v):
    return type(v) in (str, int)


def item_reads_only(fn_node, names, any_key=False, also=()):
    """The names among `names` that the function reads only as `x = name[key]`, key a
    constant string or integer (any_key: or a name), or in the calls `also` (ids of
    `len(name)` nodes): never written into, passed on, returned or captured. (Statement
    by statement: the normaliser may share one Name node between a read and a write.)"""
    out = set(names)

    def visit(node):  # every Name under node, but for the subtrees in also (a stack walk)
        stack = [node]
        pop, push, extend = stack.pop, stack.append, stack.extend
        AST, Name = gast.AST, gast.Name
        while stack:
            n = pop()
            if not isinstance(n, AST) or id(n) in also:
                continue
            if isinstance(n, Name):
                out.discard(n.id)
            for field in n._fields:
                v = getattr(n, field, None)
                if isinstance(v, list):
                    extend(v)
                elif isinstance(v, AST):
                    push(v)

    for s in walk_block(fn_node.body):
        if not out:
            break
        if isinstance(s, gast.If):
            visit(s.test)
        elif isinstance(s, gast.For):
            visit(s.target)
            visit(s.iter)
        elif isinstance(s, gast.While):
            visit(s.test)
        elif isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            v = s.value
            if (isinstance(v, gast.Subscript) and isinstance(v.value, gast.Name) and (
                    isinstance(v.slice, gast.Constant) and _const_key(v.slice.value)
                    or any_key and isinstance(v.slice, gast.Name))):
                visit(v.slice)
            else:
                visit(v)
        else:
            visit(s)
    return frozenset(out)


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
