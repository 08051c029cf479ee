"""The questions asked of one expression of normalised code: its kind, whether it is
active, what a callee expression names, what a call of a user function returns.

``Queries`` is a mixin: ``passes/activity.py``'s ``Activity`` asks these questions while
it infers kinds and activity, and the reverse pass asks them again of its own copies
(``self.kinds``, ``self.active``, ``self.locals``, ``self.info``, ``self.fn``). The
functions beside it are the lattice of kinds (``join``), the statement walk of a
normalised block, and the item kinds: tuples and dicts read item by item, global lists
of arrays (``item_reads_only``, ``all_number_arrays``).
"""
import builtins
import functools
import math
import sys
import types

import gast
import numpy as np

from .. import rules as R
from ..kinds import ARRAY, COMPLEX, CONST, OTHER, REAL, float_ufunc, items_kind
from ..naming import _CHILD_FIELDS, child_fields, names_in
from .casts import casts_to_integers
from .foreign import assume_callee_globals, foreign_home, named_callee
from .inline_callees import unwrapped

_ORDER = {REAL: 0, COMPLEX: 1, ARRAY: 2, OTHER: 3}
SCALAR = (REAL, COMPLEX)
NUMERIC = (REAL, COMPLEX, ARRAY)

_BY_METHOD = (round, math.floor, math.ceil, math.trunc)  # of an object: its __round__ & co.
_INT_OF_NUMBERS = frozenset(
    (math.factorial, math.comb, math.perm, math.gcd, math.lcm, math.isqrt, math.floor, math.ceil, math.trunc))


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


def late_names(node):
    """The names a lambda/def's body reads from the enclosing scope when it runs (not
    its own parameters and locals; its defaults are evaluated where it is made)."""
    a = node.args
    assigned = {p.id for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p is not None}
    body = node.body if isinstance(node.body, list) else [node.body]
    loaded = set()
    for s in body:
        for n in gast.walk(s):
            if isinstance(n, gast.Name):
                if isinstance(n.ctx, gast.Load):
                    loaded.add(n.id)
                else:
                    assigned.add(n.id)
    return loaded - assigned


def free_names_of_function(node):
    """Names a lambda/def reads from its enclosing scope (not its own params/locals)."""
    a = node.args
    defaults = set()
    for d in a.defaults + [d for d in a.kw_defaults if d is not None]:
        defaults |= {n.id for n in gast.walk(d) if isinstance(n, gast.Name)}
    return late_names(node) | defaults


BINOP_NAMES = {op: op.__name__ for op in (
    gast.Add, gast.Sub, gast.Mult, gast.Div, gast.FloorDiv, gast.Mod, gast.Pow, gast.MatMult)}
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


_MISSING = object()
_MIN_MAX = (min, max)  # the builtins (a rebound builtins.max is differentiated as what it holds)
# expressions whose value carries no tangent: a constant, a comparison, an f-string
_NEVER_ACTIVE = frozenset((gast.Constant, gast.Compare, gast.JoinedStr))


class Queries:
    """Questions about kinds and activity, asked of ``self.kinds``, ``self.active``,
    ``self.locals``, ``self.info`` and ``self.fn``: by the analysis while it runs, and by
    the reverse pass on its own copies afterwards."""

    def kind_of(self, node):
        cls = node.__class__
        if cls is gast.Name:
            return self.kinds.get(node.id, OTHER if node.id in self.locals else self.global_kind(node.id))
        if cls is gast.Constant:
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
        loop) that this function reads only as `x = XS[i]`, REAL for one of ints and
        floats (kinds.items_kind); else OTHER. The code made for it assumes so at every
        call (emit's data guard checks each item's type), so a list changed later (an
        object appended) gets code made again."""
        g = self.info.globals
        value = g.get(name) if self.global_read_only(name) and name in g else None
        if type(value) not in (list, tuple) or not value:
            return OTHER
        kind = ARRAY if all_number_arrays(value) else items_kind(value)
        if kind not in (ARRAY, REAL) or (assume := getattr(g, "assume_items", None)) is None:
            return OTHER
        assume(name, kind)
        return kind

    def global_read_only(self, name):
        """Is name a global (not a local, not captured) that the function reads only as
        `x = name[key]`, `for x in name`, `len(name)` or `zip(name, ...)`?"""
        if name in self.locals or name in self.info.freevars:
            return False
        if self._global_items is None:
            # len(XS) and zip(XS, YS) read no item, `for x in XS` reads each: allowed too
            sized = {id(c) for c in gast.walk(self.fn) if c.__class__ is gast.Call and c.args and not c.keywords
                     and all(a.__class__ is gast.Name for a in c.args)
                     and (self.resolve(c.func) is len and len(c.args) == 1 or self.resolve(c.func) is zip)}
            sized.update(id(s.iter) for s in walk_block(self.fn.body)
                         if s.__class__ is gast.For and s.iter.__class__ is gast.Name)
            self._global_items = item_reads_only(
                self.fn, {n.id for n in gast.walk(self.fn) if isinstance(n, gast.Name)} - self.locals,
                any_key=True, also=sized)
        return name in self._global_items

    def is_active(self, node):
        return isinstance(node, gast.Name) and node.id in self.active

    def resolve(self, node):
        """The object a callee expression names, if it can be known now; else None."""
        cls = node.__class__
        if cls is gast.Name:
            name, info = node.id, self.info
            if name in info.static_free and name not in self.locals:
                return info.static_free[name]
            if name in self.locals or name in info.freevars:
                return None
            g = info.globals
            value = g.get(name, _MISSING)  # (one read of the recorded globals, not two)
            if value is not _MISSING:
                return value
            bi = g.get("__builtins__", builtins)
            bi = bi if isinstance(bi, dict) else vars(bi)
            return bi.get(name)
        if cls is gast.Attribute:
            if node.value.__class__ is gast.Name:  # `math.sin`: asked of every call, by
                key = (node.value.id, node.attr)  # several passes: looked up once
                memo = self.__dict__.get("_attribute_memo")
                if memo is None:
                    memo = self._attribute_memo = {}
                got = memo.get(key, _MISSING)
                if got is _MISSING:
                    got = memo[key] = self._resolve_attribute(node)
                return got
            return self._resolve_attribute(node)
        return None

    def _resolve_attribute(self, node):
        """resolve() of an attribute. What it gives for ``name.attr`` rests on the
        name alone, which the transform never binds anew (the names it makes are fresh),
        so resolve() keeps it."""
        base = self.resolve(node.value)
        if isinstance(base, (types.ModuleType, type, np.ufunc)):  # np.add.reduce too
            value = getattr(base, node.attr, None)
            if type(base) is types.ModuleType or isinstance(base, type):  # checked (guards.py)
                self.info.module_attrs.setdefault((id(base), node.attr), (base, node.attr, value))
            return value
        if type(base) in R.BOUND_RULE_CLASSES:  # scipy.stats.norm.logpdf: a rule's key
            return getattr(base, node.attr, None)
        return None

    def iter_item_kind(self, it):
        k = self.kind_of(it)
        if k == ARRAY:
            return ARRAY
        if isinstance(it, gast.Name) and (it.id in self.list_items or it.id in self.range_names):
            return self.list_items.get(it.id, REAL)  # a list display of numbers, only read; a range
        if isinstance(it, gast.Name) and it.id not in self.locals:
            return self.global_items_kind(it.id)  # `for x in XS`: a global list of numbers or arrays
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
                if isinstance(e.right, gast.Name) and e.right.id in self.int_names:
                    return REAL  # `x ** k`, k an int (counting through a range, say)
                # `x ** 0.5`: real for x >= 0, complex in Python for x < 0, which the
                # forward pass refuses where it happens (operators.real_power_check)
                return REAL
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
            if e.value.__class__ is gast.Name and self.info.param_fields:
                got = self.info.param_fields.get((e.value.id, e.attr))
                if got is not None:  # a record's field, read once at the entry (param_fields.py)
                    return got
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
            return self.subscript_kind(e)
        return OTHER

    def subscript_kind(self, e):
        """The kind of `v[key]`."""
        items = self.dict_elts.get(e.value.id) if isinstance(e.value, gast.Name) else None
        if items is not None and isinstance(e.slice, gast.Constant) and _const_key(e.slice.value) \
                and e.slice.value in items:
            return items[e.slice.value]  # p = {"a": x}; p["a"]: read only so, never changed
        if isinstance(e.value, gast.Name) and isinstance(e.slice, (gast.Name, gast.Constant)):
            got = self.global_items_kind(e.value.id)
            if got != OTHER:
                return got  # XS[t] of a global list of arrays or of numbers
            if e.value.id in self.list_items:
                return self.list_items[e.value.id]  # a list display, only read
        elts = self.tuple_elts.get(e.value.id) if isinstance(e.value, gast.Name) else None
        if elts is not None and isinstance(e.slice, gast.Constant) and type(e.slice.value) is int:
            i = e.slice.value
            if -len(elts) <= i < len(elts):
                return elts[i]  # `theta, omega = 1.0, 0.0`: seq = (1.0, 0.0); theta = seq[0]
        if self.vector_item(e):
            return REAL  # v[i] of a 1-D float64 array argument
        return ARRAY if self.kind_of(e.value) == ARRAY else OTHER

    def call_kind(self, e):
        func = e.func
        if isinstance(func, gast.Attribute) and self.resolve(func) is None:
            return self.method_kind(func)
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
            if obj in (len, int, hash, id, ord) or obj is round and not (
                    e.args and self.kind_of(e.args[0]) == OTHER):  # (obj.__round__: any)
                return REAL
            if obj in _INT_OF_NUMBERS:  # an int, of numbers (an object's __floor__ aside)
                return REAL if all(self.kind_of(a) in (REAL, CONST) for a in e.args) else OTHER
            if obj in (bool, str, repr, format, isinstance, issubclass, callable, hasattr, chr):
                return CONST
            if getattr(obj, "__module__", "") == "numpy" or type(obj).__name__ == "ufunc":
                return ARRAY
            return OTHER
        if (obj is _MIN_MAX[0] or obj is _MIN_MAX[1]) and len(e.args) >= 2 and not e.keywords:
            # min(h, 1.0) of real numbers is one of them: a real number; of NumPy scalars
            # (an array's items), one of them too (of larger arrays: an error)
            kinds = [self.kind_of(a) for a in e.args]
            if all(k == REAL for k in kinds):
                return REAL
            return ARRAY if all(k in (REAL, ARRAY) for k in kinds) else OTHER
        return self.primitive_kind(e, obj)

    def method_kind(self, func):
        """The kind of what `v.method(...)` returns (func: the attribute, naming no module
        function): known for numbers' conjugate and arrays' methods with rules."""
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

    def primitive_kind(self, e, obj):
        """The kind of what a call of a primitive (a function with an adjoint in the rule
        table) returns, from the kinds of its arguments; OTHER for anything else."""
        kwnames = tuple(k.arg for k in e.keywords)
        prim = R.lookup_primitive(obj, len(e.args), kwnames) if None not in kwnames else None
        if prim is None:
            return OTHER
        if (obj is float or obj is complex) and not e.keywords and len(e.args) <= 1:
            # float(v) and complex(v) of anything give exactly a float and a complex (or
            # raise): `k = float(KL[0])` of a global list's item is a real number
            return REAL if obj is float else COMPLEX
        kinds = [self.kind_of(a) for a in e.args] + [self.kind_of(k.value) for k in e.keywords]
        if any(k == OTHER for k in kinds):
            return OTHER
        if prim.kind == "real":
            return REAL if all(k in (REAL, CONST) for k in kinds) else OTHER
        if prim.kind == "complex":
            return COMPLEX if all(k in SCALAR + (CONST,) for k in kinds) else OTHER
        if prim.kind == "abs":
            return REAL if kinds[0] in SCALAR else (ARRAY if kinds[0] == ARRAY else OTHER)
        if prim.kind == "array":  # (a ufunc of ints and floats giving floats: np.sqrt(x), a NumPy float64)
            return REAL if not e.keywords and float_ufunc(obj) and all(k == REAL for k in kinds) else ARRAY
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
        makes this code again; a wrapper that only forwards is seen through, its cell
        checked too: inline_callees.unwrapped), the globals its code assumed, of this
        module or of its own, are recorded and guarded (foreign.py), it captures nothing,
        is called with exactly its positional parameters of number and array kinds, and
        its rules' versions join this function's (a rule registered for it drops this code)."""
        obj = unwrapped(obj)
        code = obj.__code__
        g = self.info.globals
        if (
            not named_callee(e.func, (self.locals, self.info.freevars), g)
            or e.keywords
            or any(isinstance(a, gast.Starred) for a in e.args)
            or len(e.args) != code.co_argcount
            or code.co_kwonlyargcount
            or code.co_flags & 0x2C  # *args, **kwargs, a generator
            or obj.__closure__ is not None
            or obj.__globals__ is not getattr(g, "_g", g) and foreign_home(obj) is None
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
        if emit.in_progress(code) or emit.runtime_code(code):  # recursion: a call of this very function
            return self.own_result(obj, emit.cache_key(obj, kinds)) if hasattr(self, "own_result") else None
        try:
            entry = emit.entry_for(obj, emit.cache_key(obj, kinds))
        except Exception:  # an error met again (and reported) when the call runs
            self.callee_memo.pop(id(e), None)
            return None
        if not assume_callee_globals(entry, obj, g, self.info):  # assumed here too
            self.callee_memo.pop(id(e), None)
            return None
        self.callee_memo[id(e)] = (kinds, entry.result, entry, getattr(e.func, "id", None))
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
        cls = e.__class__
        if cls is gast.Name:
            return e.id in self.active
        if cls in _NEVER_ACTIVE:
            return False
        if cls is gast.BinOp:  # (none of the cases below)
            return bool(self.reads(e) & self.active)
        if cls is gast.Call:
            obj = self.resolve(e.func)
            if obj is not None and self._no_tangent(obj) and not (
                    obj in _BY_METHOD and e.args and self.kind_of(e.args[0]) == OTHER):
                return False  # (round(obj) runs obj.__round__, which may return anything)
            if casts_to_integers(e, obj, self.resolve, self.kind_of):
                return False
            return bool(self.reads(e) & self.active)
        if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.Not):
            return False
        if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.Invert) and self.kind_of(e.operand) != OTHER:
            return False  # ~ of a number or an array: an integer or a bool (no tangent)
        if isinstance(e, gast.Lambda):
            return bool(free_names_of_function(e) & self.active)
        if isinstance(e, gast.Attribute) and self.inactive_attr(e):
            return False
        return bool(self.reads(e) & self.active)

    def _no_tangent(self, obj):
        """Does a call of obj surely return a value without a tangent (a non-differentiable
        built-in, a function that stops the gradient, a user rule of style nondiff)?
        Asked once per callee (the rules do not change while a function is transformed)."""
        memo = self.__dict__.get("_no_tangent_memo")
        if memo is None:
            memo = self._no_tangent_memo = {}
        try:
            return memo[obj]
        except KeyError:
            pass
        except TypeError:  # unhashable: no table holds it
            return False
        user = R.lookup_user(obj)
        got = memo[obj] = obj in R.NONDIFF or obj in R.STOPS_GRADIENT or (
            user is not None and user.style == "nondiff")
        return got

    def reads(self, e):
        """The names e reads (memoised by node: never change the set)."""
        r = self._reads_cache.get(id(e))
        if r is None:
            r = self._reads_cache[id(e)] = reads(e)
        return r

    def inactive_attr(self, e):
        """Is e (an attribute read) surely without a tangent? .shape, .dtype & co. are
        integers and dtypes of numbers and arrays; of another value (an object with a
        field called `size`) they are read like any attribute."""
        if e.attr in _ALWAYS_INACTIVE_ATTRS:
            return True
        return e.attr in INACTIVE_ATTRS and self.kind_of(e.value) in NUMERIC + (CONST,)


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
        if not also:
            out.difference_update(names_in(node))
            return
        stack = [node]
        pop, push, extend = stack.pop, stack.append, stack.extend
        AST, Name, table = gast.AST, gast.Name, _CHILD_FIELDS
        while stack:
            n = pop()
            cls = n.__class__
            if id(n) in also:
                continue
            if cls is Name:
                out.discard(n.id)
            fields = table.get(cls)
            if fields is None:
                if not isinstance(n, AST):
                    continue
                fields = child_fields(cls)
            for field in fields:
                v = getattr(n, field, None)
                if v.__class__ is list:
                    extend(v)
                elif v is not None:
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
