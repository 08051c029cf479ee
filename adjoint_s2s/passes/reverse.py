"""The reverse pass: a normalised function becomes a primal-plus-pullback pair.

Before (normalised, x and y floats)::

    def f(x, y):
        sin_x = math.sin(x)
        z = sin_x * y
        return z

After::

    def f_pair(x, y):
        # z = math.sin(x) * y
        sin_x = math.sin(x)
        z = sin_x * y
        def f_pullback(b_z, sin_x=sin_x, x=x, y=y):
            if type(b_z) is not float:
                b_z = _rt.real(b_z)
            # z = math.sin(x) * y
            b_sin_x = b_z * y
            b_y = b_z * sin_x
            b_x = b_sin_x * math.cos(x)
            return (None, b_x, b_y)
        return z, f_pullback

How it works:

* Each primal statement yields forward code and a *recipe*; only the statement-list
  walk reverses order. Recipes run in pullback order and track, per adjoint, whether it
  is unset (a structural zero: no code at all), surely a number, or maybe ``None``; so
  zeros are never materialised and scalar code needs no ``None`` checks.
* Primitives on numbers and arrays are inlined from the templates of ``rules``; what
  cannot be known statically (user functions, methods, operators on objects) goes through
  ``_rt`` dispatch, which returns a pullback to call.
* Values the backward pass reads are passed to the pullback as default arguments. A
  value that a later assignment overwrites (a reassigned name, anything assigned in a
  loop) is *saved* before the overwrite (a fresh name, or a tape push inside loops) and
  *restored* in the pullback after the adjoint of that assignment, so every template
  sees the value it had. Which names need this is decided after the pullback is
  generated, from the names it reads.
* Loops record their trip count; the pullback runs the reversed body that many times.
"""
import ast
import builtins
import functools
import os
import re
import types

import gast
import numpy as np

from .. import rules as R
from ..errors import UnsupportedSyntaxError, shared_write_message
from ..naming import Namer
from . import codegen as C
from .activity import (
    ARRAY,
    COMPLEX,
    CONST,
    NUMERIC,
    OTHER,
    REAL,
    SCALAR,
    free_names_of_function,
    join,
    reads,
    stmt_targets,
    walk_block,
)
from .codegen import Block, If, Loop, Raw, Release, Restore, Save, src

NUM, MAYBE = "num", "maybe"

_BINOP_NAMES = {
    gast.Add: "Add",
    gast.Sub: "Sub",
    gast.Mult: "Mult",
    gast.Div: "Div",
    gast.FloorDiv: "FloorDiv",
    gast.Mod: "Mod",
    gast.Pow: "Pow",
    gast.MatMult: "MatMult",
}
_INACTIVE_ATTRS = {"shape", "ndim", "size", "dtype", "__class__", "__name__", "itemsize"}
_ALWAYS_INACTIVE_ATTRS = {"__class__", "__name__"}  # a type, a string: of any value
_BITOP_NAMES = {
    gast.BitOr: "BitOr", gast.BitAnd: "BitAnd", gast.BitXor: "BitXor",
    gast.LShift: "LShift", gast.RShift: "RShift",
}
_MUTATING_METHODS = {"append", "extend", "insert", "pop", "remove", "update", "setdefault",
                     "add", "discard", "clear", "sort", "reverse", "fill", "__setitem__"}


def const_kind(v):
    if isinstance(v, bool) or v is None or isinstance(v, (str, bytes)) or v is Ellipsis:
        return CONST
    if isinstance(v, (int, float)):
        return REAL
    if isinstance(v, complex):
        return COMPLEX
    return OTHER


# contributions that are zero but at a few positions: added into the accumulator there
_SCATTERING = {
    "_rt.getitem_grad(": "_rt.acc_getitem_grad(",
    "_rt.np_extremum_adjoint(": "_rt.acc_extremum_adjoint(",
}


_AUG_SYMBOLS = {
    "Add": "+", "Sub": "-", "Mult": "*", "Div": "/", "FloorDiv": "//", "Mod": "%", "Pow": "**",
    "MatMult": "@", "BitOr": "|", "BitAnd": "&", "BitXor": "^", "LShift": "<<", "RShift": ">>",
}

# what can return a view of its first argument (memory shared with it)
_VIEW_FUNCS = frozenset(
    f for f in (
        getattr(np, n, None) for n in (
            "flip", "fliplr", "flipud", "transpose", "permute_dims", "matrix_transpose",
            "swapaxes", "moveaxis", "rollaxis", "expand_dims", "squeeze", "broadcast_to",
            "reshape", "ravel", "diagonal", "real", "imag", "asarray", "asanyarray",
            "atleast_1d", "atleast_2d", "atleast_3d", "rot90",
        )
    ) if f is not None
)
_VIEW_METHODS = frozenset({"reshape", "ravel", "view", "transpose", "swapaxes", "squeeze", "diagonal"})
_VIEW_ATTRS = frozenset({"T", "mT", "real", "imag"})
_OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _passed_through(expr):
    """The adjoint name expr may return as it is (``b_z``, ``_rt.unbroadcast(b_z, z)``),
    or None."""
    if expr.startswith("b_") and expr.isidentifier():
        return expr
    if expr.startswith("_rt.unbroadcast(b_"):
        spans = _call_args(expr, len("_rt.unbroadcast("))
        if spans and len(spans) == 2 and spans[-1][1] == len(expr) - 1:
            first = expr[spans[0][0]:spans[0][1]].strip()
            if first.isidentifier():
                return first
    return None


def _scattered(expr):
    """The helper call name when expr is one call to a helper whose result is a scatter
    into zeros (getitem_grad, np_extremum_adjoint), else None."""
    for name in _SCATTERING:
        spans = _call_args(expr, len(name)) if expr.startswith(name) else None
        if spans and spans[-1][1] == len(expr) - 1:  # the call is the whole expression
            return name
    return None


def acc_call(b, expr):
    """``_rt.acc(b, expr)``; for a scatter into zeros, the fused helper that scatters
    into the accumulator b instead."""
    name = _scattered(expr)
    if name is not None:
        return f"{_SCATTERING[name]}{b}, {expr[len(name):]}"
    return f"_rt.acc({b}, {expr})"


class FunctionInfo:
    """What the reverse pass needs to know about the function it transforms."""

    def __init__(self, name, node, filename, globals_, freevars, cellvars, line_offset=0):
        self.name = name
        self.node = node
        self.filename = filename
        self.globals = globals_
        self.freevars = tuple(freevars)
        self.cellvars = set(cellvars)
        self.line_offset = line_offset
        self.static_free = {}  # captured variables holding modules: resolved like globals
        a = node.args
        self.posonly = [p.id for p in a.posonlyargs]
        self.positional = [p.id for p in a.posonlyargs + a.args]
        self.vararg = a.vararg.id if a.vararg else None
        self.kwonly = [p.id for p in a.kwonlyargs]
        self.kwarg = a.kwarg.id if a.kwarg else None

    @property
    def params(self):
        out = list(self.positional)
        if self.vararg:
            out.append(self.vararg)
        out += self.kwonly
        if self.kwarg:
            out.append(self.kwarg)
        return out


class Status:
    """Adjoint bookkeeping while recipes write the pullback, in pullback order."""

    def __init__(self, gen):
        self.gen = gen
        self.status = {}
        self.out = Block()
        self.aliases = {}  # adjoint name -> adjoint names that may be the same array
        self.added_to = set()  # adjoint names some line adds to (acc and friends)

    def snapshot(self):
        return dict(self.status)

    def get(self, name):
        return self.status.get(name)

    def adj(self, name):
        return self.gen.adj_name(name)

    def line(self, text):
        self.out.append(text)

    def acc(self, name, expr, num):
        """Add expr to the adjoint of name (num: expr is surely a number/array)."""
        gen = self.gen
        if name not in gen.active:
            return
        kind = gen.kinds.get(name, OTHER)
        b = self.adj(name)
        s = self.status.get(name)
        scalar = kind in SCALAR
        fix = "_rt.real" if kind == REAL else "_rt.scalar"
        if s is None:
            if num or not scalar:
                self.line(f"{b} = {expr}")
                self.status[name] = NUM if (num and kind in NUMERIC) else MAYBE
                if not scalar:
                    src_ = _passed_through(expr)
                    if src_ is not None:
                        self.aliases.setdefault(src_, set()).add(b)
            else:
                self.line(f"{b} = {fix}({expr})")
                self.status[name] = NUM
        elif s == NUM and kind in NUMERIC:
            if num and expr.startswith("-") and not expr.startswith("-("):
                self.line(f"{b} = {b} - {expr[1:]}")
                return
            if not scalar and (not num or _scattered(expr)):
                self.line(f"{b} = {acc_call(b, expr)}")
                self.added_to.add(b)
                if not num:
                    self.status[name] = MAYBE
            else:
                self.line(f"{b} = {b} + {expr}" if num else f"{b} = {b} + {fix}({expr})")
        else:
            self.line(f"{b} = {acc_call(b, expr)}")
            self.status[name] = MAYBE
            self.added_to.add(b)

    def consume(self, name):
        """The adjoint of name has been passed on: older versions start from zero."""
        self.status.pop(name, None)
        targets = self.aliases.pop(self.adj(name), None)
        if targets:
            self.out.append(Release(self.adj(name), targets))

    def zero_line(self, name):
        kind = self.gen.kinds.get(name, OTHER)
        b = self.adj(name)
        if kind == REAL:
            return f"{b} = 0.0", NUM
        if kind == COMPLEX:
            return f"{b} = 0j", NUM
        return f"{b} = None", MAYBE

    def merge(self, a, b, out_a, out_b):
        """Join two status maps; write the zeros each side needs into out_a/out_b."""
        result = {}
        for name in dict.fromkeys([*a, *b]):  # first-seen order: the same code every run
            sa, sb = a.get(name), b.get(name)
            if sa == sb:
                result[name] = sa
                continue
            if sa is None or sb is None:
                line, st = self.zero_line(name)
                (out_a if sa is None else out_b).append(line)
                other = sb if sa is None else sa
                result[name] = NUM if (st == NUM and other == NUM) else MAYBE
            else:
                result[name] = MAYBE
        return result


def _loads(node):
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def live_after(body):
    """For each statement of a normalised body (by id), the names read after it before
    being bound again: a backward dataflow over blocks, branches and loops. Conservative
    where it is cheap to be (break and continue fall through; a nested def reads every
    name it mentions)."""
    out_of = {}

    def block(stmts, live):
        live = set(live)
        for s in reversed(stmts):
            out_of[id(s)] = frozenset(live)
            live = stmt(s, live)
        return live

    def stmt(s, live):
        if isinstance(s, gast.If):
            return _loads(s.test) | block(s.body, live) | block(s.orelse, live)
        if isinstance(s, (gast.For, gast.While)):
            after_else = block(s.orelse, live)
            head = set(after_else)
            while True:  # the back edge: iterate to the fixed point (sets only grow)
                body_in = block(s.body, head | live)
                if isinstance(s, gast.For):
                    new = (body_in - set(stmt_targets(s))) | after_else
                else:
                    new = _loads(s.test) | body_in | after_else
                if new <= head:
                    break
                head |= new
            return head | (_loads(s.iter) if isinstance(s, gast.For) else set())
        if isinstance(s, gast.Return):
            return _loads(s.value) if s.value is not None else set()
        if isinstance(s, gast.Assign):
            tgt = s.targets[0]
            if isinstance(tgt, gast.Name):
                return (live - {tgt.id}) | _loads(s.value)
            return live | _loads(s)
        if isinstance(s, gast.FunctionDef):
            return (live - {s.name}) | _loads(s)
        return live | _loads(s)

    block(body, set())
    return out_of


class Generator:
    def __init__(self, fn_node, info, arg_kinds, free_kinds, source_lines, taken=None,
                 user_names=None):
        self.fn = fn_node
        self.info = info
        self.source_lines = source_lines
        self.deps = {}  # objects resolved statically -> their rule version
        self.helpers = set()  # helper modules the generated code uses (_rt, math, ...)
        if taken is None:  # (emit passes the names the normaliser already knows)
            taken = {n.id for n in gast.walk(fn_node) if isinstance(n, gast.Name)}
        taken = set(taken) | set(info.freevars) | set(info.params) | {info.name}
        self.namer = Namer(taken)
        # names of the user's function (never folded away: they name the user's values)
        self.user_names = set(user_names) if user_names is not None else set(taken)
        self.namer.reserve({f"{_pyname(info.name)}_pair", f"{_pyname(info.name)}_pullback"})
        self._adj = {}
        self.raw_items = []  # nested functions and lambdas, to map back to user lines
        self.appended = set()  # names of lists this function appends to (in place)
        self.local_fns = {}  # local def/lambda name -> the names it captures
        self.fn_names = {}  # local def/lambda name -> the names bound to it (f = fn)
        # the tape and its cursor: fresh names (generated code differentiated again
        # captures the first-order _tape and must not shadow it)
        self.tape = self.namer.fresh("_tape")
        self.pos = self.namer.fresh("_pos")
        self.has_tape = False
        self.saves = []
        self.loop_inits = []
        self.locals = set(info.params)
        for s in walk_block(fn_node.body):
            self.locals.update(stmt_targets(s))
        self._reads_cache = {}
        self.live_after = live_after(fn_node.body)
        self.live = frozenset()  # names read after the statement being generated
        self.aliases = {}  # name -> names bound to the same object or a view of it (z = y)
        self.maybe_views = set()  # names bound by z = y[i]: a view of a row, or a number
        self.same = {}  # name -> the names surely bound to the same object (z = y), on every path
        self.field_of = {}  # name -> (obj, attr): bound by name = obj.attr, on every path
        self.kinds = {}
        for p, k in zip(info.positional, arg_kinds):
            self.kinds[p] = k
        if info.vararg:
            self.kinds[info.vararg] = OTHER
        for p in info.kwonly:
            self.kinds.setdefault(p, OTHER)
        if info.kwarg:
            self.kinds[info.kwarg] = OTHER
        for p in info.positional:
            self.kinds.setdefault(p, OTHER)
        for v, k in zip(info.freevars, free_kinds):
            self.kinds[v] = k
        self.infer_kinds()
        self.active = {p for p in info.params if self.kinds.get(p) != CONST}
        self.active |= {v for v in info.freevars if self.kinds.get(v) != CONST}
        self.infer_activity()

    # ----- names ---------------------------------------------------------------------
    def adj_name(self, name):
        b = self._adj.get(name)
        if b is None:
            b = self.namer.fresh("b_" + name)
            self._adj[name] = b
        return b

    def kind_of(self, node):
        if isinstance(node, gast.Name):
            return self.kinds.get(node.id, OTHER if node.id in self.locals else self.global_kind(node.id))
        if isinstance(node, gast.Constant):
            return const_kind(node.value)
        return OTHER

    def global_kind(self, name):
        """A global's kind, from its value now. Array templates are right for any number
        or array, so a global array (data a function reads) is ARRAY; a number is COMPLEX
        (right for real and complex values). Anything else is looked at when it runs."""
        g = self.info.globals
        if name not in g:
            return OTHER
        value = g[name]
        if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.number):
            return ARRAY
        if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
            return COMPLEX
        return OTHER

    def is_active(self, node):
        return isinstance(node, gast.Name) and node.id in self.active

    # ----- static resolution -----------------------------------------------------------
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
            if isinstance(base, (types.ModuleType, type)):
                return getattr(base, node.attr, None)
        return None

    def note_dep(self, obj):
        try:
            self.deps[obj] = R.version(obj)
        except TypeError:
            pass

    # ----- kinds -------------------------------------------------------------------------
    def infer_kinds(self):
        for _ in range(6):
            before = dict(self.kinds)
            for s in walk_block(self.fn.body):
                if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                    k = self.expr_kind(s.value)
                    t = s.targets[0].id
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

    def iter_item_kind(self, it):
        k = self.kind_of(it)
        if k == ARRAY:
            return ARRAY
        if isinstance(it, gast.Name) and it.id in self.range_names:
            return REAL
        return OTHER

    @property
    def range_names(self):
        names = getattr(self, "_range_names", None)
        if names is None:
            names = set()
            for s in walk_block(self.fn.body):
                if (
                    isinstance(s, gast.Assign)
                    and isinstance(s.targets[0], gast.Name)
                    and isinstance(s.value, gast.Call)
                    and self.resolve(s.value.func) is range
                ):
                    names.add(s.targets[0].id)
            self._range_names = names
        return names

    def expr_kind(self, e):
        if isinstance(e, (gast.Name, gast.Constant)):
            return self.kind_of(e)
        if isinstance(e, gast.BinOp):
            ka, kb = self.kind_of(e.left), self.kind_of(e.right)
            op = type(e.op)
            if op not in _BINOP_NAMES:
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
        if obj in R.NONDIFF if _hashable(obj) else False:
            # no gradient flows through it, but its value may still be written into
            # (a = np.zeros(n); a[i] = x): the kind says what the value is
            if obj in (len, int, round, hash, id, ord):
                return REAL
            if obj in (bool, str, repr, format, isinstance, issubclass, callable, hasattr, chr):
                return CONST
            if getattr(obj, "__module__", "") == "numpy" or type(obj).__name__ == "ufunc":
                return ARRAY
            return OTHER
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

    # ----- activity ------------------------------------------------------------------------
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
        if isinstance(call, gast.Call) and self.value_active(call) and self._may_mutate(call):
            # a call with active arguments may store them in its other arguments
            # (lst.append, a helper filling a list) or in what a local closure captured:
            # those become active too
            captured = self._captures().get(getattr(call.func, "id", None), ())
            for a in _call_operands(call) + [gast.Name(id=n, ctx=gast.Load(), annotation=None, type_comment=None) for n in captured]:
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
                and f.value.id in self.locals | set(self.info.params)
                and self.kinds.get(f.value.id, OTHER) == OTHER  # numbers, arrays: no
                and self.resolve(f) is None
                and any(self.value_active(a) for a in _call_operands(call))
            ):
                act.add(f.value.id)
        elif isinstance(s, gast.For):
            if self.is_active(s.iter) and self.kinds.get(s.target.id) != CONST:
                act.add(s.target.id)
        elif isinstance(s, gast.FunctionDef):
            if free_names_of_function(s) & act:
                act.add(s.name)

    def _may_mutate(self, call):
        """Could this call store its arguments somewhere? Not for builtins and rules."""
        obj = self.resolve(call.func)
        if obj is None:
            return True
        if not _hashable(obj):
            return True
        if obj in _runtime_dispatch():  # generated code differentiated again: any callee
            return True
        if obj in R.SPECIAL or obj in R.NONDIFF or obj in R.PRIMITIVES:
            return False
        return isinstance(obj, types.FunctionType) or R.lookup_user(obj) is not None

    def _captures(self):
        caps = getattr(self, "_caps", None)
        if caps is None:
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
            self._caps = caps
        return caps

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
            if obj is not None and _hashable(obj) and obj in R.NONDIFF:
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
        return e.attr in _INACTIVE_ATTRS and self.kind_of(e.value) in NUMERIC + (CONST,)

    # =====================================================================================
    # pass A: forward code and recipes
    # =====================================================================================
    def block(self, stmts, loop_depth):
        fwd, recipes = Block(), []
        for s in stmts:
            origin = getattr(s, "origin", None)
            if isinstance(s, gast.Return):
                origin = s.origin_end = None  # the return itself needs no code
            if origin:
                fwd.append(f"# {origin}")
            self.refuse_unsupported(s)
            self.check_operands(s)
            r = self.stmt(s, fwd, loop_depth)
            end = getattr(s, "origin_end", None)
            if end or r is not None:
                recipes.append((r, end))
        return fwd, recipes

    def fresh_local(self, hint, fwd, depth):
        """A new primal name, saved like a user name if a loop overwrites it."""
        name = self.namer.fresh(hint)
        self.locals.add(name)
        self.save(name, fwd, depth)
        return name

    def save(self, name, fwd, loop_depth):
        sv = Save(name, loop_depth > 0)
        if loop_depth > 0:
            self.has_tape = True
        self.saves.append(sv)
        fwd.append(sv)
        return sv

    def stmt(self, s, fwd, depth):
        through = self._written_through(s)
        # the names for the object before the statement (`a += v` rebinds a in the code)
        group = set(self.same.get(through[0], ())) if through else set()
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
        r = self._stmt(s, fwd, depth)
        if group:
            r = self.follow_aliases(through[0], group, flag, r, fwd, depth)
        if field is not None and through[0] in self.active:
            r = self.write_back_field(through[0], field, r, fwd, depth, flag)
        if r is not None and flag_saves:
            # in a loop the flag is overwritten each trip: the pullback reads this trip's
            # value, then takes the previous trip's back from the tape
            r = _then_restore(r, flag_saves)
        return r

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
            fwd.append(f"if {flag}: {obj}.{attr} = {name}")
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
        if self._may_mutate(e) and not _has_starred(e):
            names = [
                a.id for a in e.args
                if isinstance(a, gast.Name) and a.id in self.active
                and self.kinds.get(a.id, OTHER) == OTHER and a.id in self.same
            ]
            if len(names) == 1:
                return names[0], True
        return None

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
        if self.info.filename.startswith(_OWN_DIR):
            return  # adjoint_s2s's helpers differentiated again copy keys they were given
        value = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
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
            if isinstance(part, (gast.Name, gast.Constant)) or part is None:
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

    # ----- assignments -------------------------------------------------------------------
    def assign(self, x, e, fwd, depth):
        if getattr(e, "augmented", False) and isinstance(e.left, gast.Name):
            self.check_augmented(e, fwd)
            if self.kind_of(e.left) == OTHER:  # `lst += vs` extends a caller's list
                self.appended.add(e.left.id)
        if isinstance(e, gast.Name) and e.id == x and not getattr(self.cur_stmt, "augmented", False):
            # `x = x` (a generated pullback's `b_s = (b_s)`, differentiated again): the
            # identity, with no reverse. As a copy it would add x's adjoint to itself and
            # then clear it (consume): a zero gradient.
            fwd.append(f"{x} = {x}")
            return None
        self.note_alias(x, e)
        active = x in self.active
        mark = len(self.saves)
        self.save(x, fwd, depth)
        rev = None
        if not active or (isinstance(e, gast.Call) and not self.value_active(e)):
            # a constant here (its name may be active elsewhere)
            if isinstance(e, gast.Call) and not self.value_active(e):
                keep = self.read_again(e)
                call = self.inactive_call(e, keep)
                fwd.append(f"{x} = {call}")
                self.take_kept_inactive(call, e, keep, fwd, depth)
            else:
                fwd.append(f"{x} = {src(e)}")
            rev = None
            if (
                active
                and isinstance(e, gast.Call)
                and isinstance(self.resolve(e.func), type)  # a new object, made from constants
                and self.kinds.get(x) == OTHER
                and x in self._attribute_bases()
            ):
                rev = self.rev_forget_fields(x)
        elif isinstance(e, gast.Name):
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
                rev = self.rev_taken_copy(x, e.id)
            else:
                fwd.append(f"{x} = {e.id}")
                rev = self.rev_copy(x, e.id)
        elif isinstance(e, gast.BinOp):
            rev = self.binop(x, e, fwd)
        elif isinstance(e, gast.UnaryOp):
            rev = self.unaryop(x, e, fwd)
        elif isinstance(e, gast.Call):
            rev = self.call(x, e, fwd)
        elif isinstance(e, gast.Attribute):
            rev = self.attribute(x, e, fwd)
        elif isinstance(e, gast.Subscript):
            rev = self.subscript(x, e, fwd)
        elif isinstance(e, (gast.Tuple, gast.List)):
            rev = self.display(x, e, fwd)
        elif isinstance(e, gast.Dict):
            rev = self.dict_display(x, e, fwd)
        elif isinstance(e, gast.Lambda):
            fwd.append(Raw([f"{x} = {ast.unparse(gast.gast_to_ast(e))}"], getattr(e, "lineno", None)))
            self.raw_items.append(fwd[-1])
            rev = self.rev_closure(x, free_names_of_function(e), _default_atoms(e))
            self.local_fns[x] = free_names_of_function(e)
        else:
            fwd.append(f"{x} = {src(e)}")
            rev = None
        return self.with_restore(rev, x, self.saves[mark:])

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

    # ----- operators ------------------------------------------------------------------------
    def binop(self, x, e, fwd):
        a, b = e.left, e.right
        ka, kb = self.kind_of(a), self.kind_of(b)
        opname = _BINOP_NAMES.get(type(e.op))
        numeric = ka in NUMERIC + (CONST,) and kb in NUMERIC + (CONST,) and CONST not in (ka, kb)
        if opname is None:
            # |, &, ^, <<, >>: integers and bools carry no tangent; anything else (an
            # object's __or__, dicts merged with |) goes to run-time dispatch
            opname = _BITOP_NAMES.get(type(e.op))
            if (
                opname is None
                or not (self.is_active(a) or self.is_active(b))
                or ka in (REAL, CONST) and kb in (REAL, CONST)
            ):
                fwd.append(f"{x} = {src(e)}")
                return None
            numeric = False
        if opname == "MatMult" and numeric:
            fwd.append(f"{x} = {src(e)}")
            self.helpers.add("_rt")

            def rev(st):
                def body(g, num):
                    if self.is_active(a):
                        st.acc(a.id, f"_rt.matmul_adjoint_a({g}, {src(a)}, {src(b)})", True)
                    if self.is_active(b):
                        st.acc(b.id, f"_rt.matmul_adjoint_b({g}, {src(a)}, {src(b)})", True)

                self.read_g(st, x, body)

            return rev
        if numeric:
            fn, pa, pb = R.operators.BINARY[opname] if opname != "MatMult" else (None, None, None)
            fwd.append(f"{x} = {src(e)}")
            if opname == "Mult" and isinstance(a, gast.Name) and isinstance(b, gast.Name) and a.id == b.id:
                # a square: one contribution, g * (2 * a), instead of two
                return self.elementwise(x, [("a", a)], {"a": "2 * a"}, {}, "same")
            partials = {"a": pa, "b": pb}
            if opname == "Pow" and isinstance(b, gast.Constant):
                partials["a"] = _pow_const_partial(b.value, ka in SCALAR)
            return self.elementwise(x, [("a", a), ("b", b)], partials, {}, "same")
        # objects, lists, tuples: dispatch at run time (user dunders are differentiated)
        self.helpers.add("_rt")
        pbn = self.fresh_local(f"{x}_pullback", self.fwd, self.depth)
        inplace = ", True" if getattr(e, "augmented", False) else ""
        fwd.append(f"{x}, {pbn} = _rt.binop({opname!r}, {src(a)}, {src(b)}{inplace})")
        return self.rev_call_pullback(x, pbn, [a, b], with_df=False)

    def unaryop(self, x, e, fwd):
        a = e.operand
        fwd.append(f"{x} = {src(e)}")
        if isinstance(e.op, gast.Invert) and self.is_active(a) and self.kind_of(a) == OTHER:
            self.helpers.add("_rt")
            fwd.pop()
            pbn = self.fresh_local(f"{x}_pullback", self.fwd, self.depth)
            fwd.append(f"{x}, {pbn} = _rt.unop('Invert', {src(a)})")
            return self.rev_call_pullback(x, pbn, [a], with_df=False)
        if isinstance(e.op, (gast.Not, gast.Invert)):
            return None
        k = self.kind_of(a)
        partial = "-1" if isinstance(e.op, gast.USub) else "1"
        if k in NUMERIC:
            return self.elementwise(x, [("a", a)], {"a": partial}, {}, "same")

        self.helpers.add("_rt")
        fwd.pop()
        pbn = self.fresh_local(f"{x}_pullback", self.fwd, self.depth)
        opname = "USub" if partial == "-1" else "UAdd"
        fwd.append(f"{x}, {pbn} = _rt.unop({opname!r}, {src(a)})")
        return self.rev_call_pullback(x, pbn, [a], with_df=False)

    def elementwise(self, x, args, partials, adjoints, prim_kind, extra=None):
        """Reverse of a primitive: b_arg += g * partial (conj, unbroadcast) or a template."""
        kinds = [self.kind_of(v) for _, v in args]
        numeric_kinds = [
            k
            for (p, _), k in zip(args, kinds)
            if k != CONST and (partials.get(p) is not None or p in adjoints)
        ]
        if prim_kind in ("array", "other"):
            cls = "array"
        elif all(k == REAL for k in numeric_kinds):
            cls = "real"
        elif all(k in SCALAR for k in numeric_kinds):
            cls = "complex"
        else:
            cls = "array"
        if cls == "real" and self.kinds.get(x, OTHER) not in (REAL, CONST):
            cls = "complex"  # real operands, a possibly complex result (x ** 0.5 of x < 0)
        mapping = {p: src(v) for p, v in args}
        mapping.update(extra or {})
        mapping["ans"] = x
        res_kind = self.kinds.get(x, OTHER)

        def rev(st):
            def body(g, num):
                mapping["g"] = g
                for (p, v), k in zip(args, kinds):
                    if not self.is_active(v):
                        continue
                    adj = adjoints.get(p)
                    if isinstance(adj, dict):
                        adj = adj.get(cls, adj.get("any"))
                    if adj is not None:
                        expr = R.fill(adj, mapping)
                        self.note_helpers(expr)
                        if k == REAL and cls == "complex":
                            expr = f"_rt.re({expr})"
                        st.acc(v.id, expr, num and cls != "array" or num and k == ARRAY)
                        continue
                    partial = partials.get(p)
                    if partial is None:
                        continue
                    d = R.fill(partial, mapping)
                    self.note_helpers(d)
                    expr = _contribution(g, d, cls, k, res_kind, src(v))
                    if "_rt." in expr:
                        self.helpers.add("_rt")
                    st.acc(v.id, expr, num)

            self.read_g(st, x, body)

        return rev

    def note_helpers(self, text):
        for mod in ("_rt", "math", "cmath", "np", "operator"):
            if f"{mod}." in text:
                self.helpers.add(mod)

    # ----- calls ----------------------------------------------------------------------------
    def read_again(self, e):
        """Positions of the containers passed to a call that the caller reads afterwards
        (a Python callee changing one with `a op= v` changes the caller's, in Python)."""
        return tuple(
            i for i, a in enumerate(e.args)
            if isinstance(a, gast.Name) and a.id in self.live
            and a.id in self.locals | set(self.info.params)
            and a.id not in self.info.freevars and self.kinds.get(a.id, OTHER) in (ARRAY, OTHER)
        )

    def take_kept_inactive(self, call, e, keep, fwd, depth):
        """After call_primal_keeping: the caller names what the callee left in its
        arguments (`a = _rt.kept(a)`), saved first for the statement's restore."""
        if not call.startswith("_rt.call_primal_keeping("):
            return
        for i in keep:
            a = e.args[i].id
            self.save(a, fwd, depth)
            fwd.append(f"{a} = _rt.kept({a})")

    def inactive_call(self, e, keep=()):
        """A call none of whose arguments is active."""
        obj = self.resolve(e.func)
        if obj is not None:
            self.note_dep(obj)
            user = R.lookup_user(obj)
            if user is None and (
                (_hashable(obj) and (obj in R.NONDIFF or obj in R.PRIMITIVES))
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
            return f"_rt.call_method_primal({src(base)}, {e.func.attr!r}{_args_src(e, lead=True)})"
        self.helpers.add("_rt")
        if keep and not _has_starred(e):
            return f"_rt.call_primal_keeping({keep!r}, {src(e.func)}{_args_src(e, lead=True)})"
        return f"_rt.call_primal({src(e.func)}{_args_src(e, lead=True)})"

    def call(self, x, e, fwd):
        func = e.func
        obj = self.resolve(func)
        if obj is not None:
            self.note_dep(obj)
        user = R.lookup_user(obj) if obj is not None else None
        if obj is _runtime_append() and len(e.args) == 2 and isinstance(e.args[0], gast.Name):
            return self.append(e.args[0].id, e.args[1], fwd, self.depth, length=x)
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
            how = f"call_method_keeping({keep!r}, " if keep else "call_method("
            fwd.append(
                f"{x}, {pbn} = _rt.{how}{src(base)}, {func.attr!r}{_args_src(e, lead=True)})"
            )
            return self.rev_call_pullback(x, pbn, [base] + list(e.args), with_df=False, call=e)
        self.helpers.add("_rt")
        pbn = self.fresh_local(f"{x}_pullback", self.fwd, self.depth)
        keep = self._kept_arguments(x, e)
        if keep:  # the caller reads these containers again: the callee must not write them
            fwd.append(f"{x}, {pbn} = _rt.call_keeping({keep!r}, {src(func)}{_args_src(e, lead=True)})")
        else:
            fwd.append(f"{x}, {pbn} = _rt.call({src(func)}{_args_src(e, lead=True)})")
        rev = self.rev_call_pullback(x, pbn, [func] + list(e.args), with_df=True, call=e)
        return self.take_kept(keep, e, rev, fwd)

    def take_kept(self, keep, e, rev, fwd):
        """After call_keeping: an argument the callee changed with `a op= v` (in place in
        Python) names the new value here too (`a = _rt.kept(a)`); its gradient goes over
        to the callee's pullback (hand_over) and what is not taken comes back."""
        names = []
        for k in keep:
            if type(k) is int and isinstance(e.args[k], gast.Name):
                a = e.args[k].id
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
        if _has_starred(e) or not self._may_mutate(e):
            return ()
        fn = self.resolve(e.func)
        if fn is not None and _hashable(fn) and fn in _runtime_dispatch():
            return ()  # generated code differentiated again: its own calls keep already
        keep = []
        for i, a in enumerate(e.args):
            if isinstance(a, gast.Name) and self.kinds.get(a.id, OTHER) in (ARRAY, OTHER):
                if a.id != x and a.id in self.live:
                    keep.append(i)
                else:  # read again through another name for it, or a view of it?
                    via = sorted(z for z in self.aliases.get(a.id, ()) if z != x and z in self.live)
                    if via:
                        keep.append((i, via[0]))
        return tuple(keep)

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
        kwnames = [k.arg for k in e.keywords]
        if any(k is None for k in kwnames):
            return None
        prim = R.lookup_primitive(obj, len(args), tuple(kwnames))
        if prim is None:
            return None
        values = args + [k.value for k in e.keywords]
        if not all(self.kind_of(a) in NUMERIC + (CONST,) for a in values):
            return None
        bound = prim.bind(len(args), kwnames)
        pairs = list(zip(bound, values))
        if any(p == "out" and not (isinstance(v, gast.Constant) and v.value is None)
               for p, v in pairs):
            return None  # out=: the run-time version of the rule refuses it
        defaults = [(p, gast.Constant(value=None, kind=None)) for p in prim.params if p not in bound]
        fwd.append(f"{x} = {src(e)}")
        self.note_helpers(prim.path)
        extra = {p: prim.defaults[p] for p, _ in defaults}
        return self.elementwise(x, pairs, prim.partials, prim.adjoints, prim.kind, extra)

    def conjugate(self, x, base):
        def rev(st):
            def body(g, num):
                if self.is_active(base):
                    st.acc(base.id, f"{g}.conjugate()", num)

            self.read_g(st, x, body)

        return rev

    def rev_call_pullback(self, x, pbn, args, with_df, call=None):
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
                grads = self.namer.fresh(f"{x}_grads")
                st.line(f"{grads} = {pbn}({g})")
                self.helpers.add("_rt")
                flat = [a for a in args]
                st.line("# gradients of the unpacked arguments")
                for i, a in enumerate(flat):
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
                return
            # containers the callee may mutate in place: their tangent after the call
            # goes to the callee's pullback through the store, the rest comes back
            movable = []
            if call is not None and self._may_mutate(call):
                movable = [
                    a.id for a in args
                    if isinstance(a, gast.Name) and a.id in self.active and a.id in self.locals
                    and self.kinds.get(a.id, OTHER) == OTHER
                ]
                fname = args[0].id if args and isinstance(args[0], gast.Name) else None
                if fname is None and len(args) > 1 and isinstance(args[1], gast.Name):
                    fn = self.resolve(call.func)  # _rt.call(record, ...) differentiated again
                    if fn is not None and _hashable(fn) and fn in _runtime_dispatch():
                        fname = args[1].id
                movable += sorted(
                    n for n in self.local_fns.get(fname, ()) if n in self.active and n not in movable
                )
            handed = [n for n in movable if st.get(n) is not None]
            for n in handed:  # a container's tangent goes to the callee; anything else stays
                b = st.adj(n)
                st.line(f"{b} = _rt.put_items({n}, {b})")
                st.status[n] = MAYBE
            names = []
            direct = set()
            seen = set()
            pending = []
            for a in args:
                if isinstance(a, gast.Name) and a.id in self.active:
                    if st.get(a.id) is None and a.id not in seen and self.kinds.get(a.id) not in SCALAR:
                        names.append(st.adj(a.id))
                        direct.add(a.id)
                    else:
                        t = self.namer.fresh(f"b_{a.id}_part")
                        names.append(t)
                        pending.append((a.id, t))
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
            for n, t in pending:
                st.acc(n, t, False)
            for n in handed:
                st.acc(n, f"_rt.take_items({n})", False)
            for k in keywords:
                if self.is_active(k.value):
                    st.acc(k.value.id, f"{kwn}.get({k.arg!r})", False)

        return rev

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
            t = self.namer.fresh(f"b_{v.id}_part") if active else "_"
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

    # ----- attributes, subscripts, displays ------------------------------------------------
    def attribute(self, x, e, fwd):
        base = e.value
        k = self.kind_of(base)
        if not self.is_active(base):
            fwd.append(f"{x} = {src(e)}")
            return None
        self.helpers.add("_rt")
        if k in SCALAR and e.attr in ("real", "imag"):
            fwd.append(f"{x} = {src(e)}")
            part = "_rt.re" if e.attr == "real" else "_rt.im_seed"

            def rev(st):
                def body(g, num):
                    expr = f"{part}({g})" if e.attr == "imag" else f"{g}"
                    if k == REAL and e.attr == "imag":
                        return
                    st.acc(base.id, expr, num)

                self.read_g(st, x, body)

            return rev
        if k == ARRAY:
            fwd.append(f"{x} = {src(e)}")
            return self._rev_read(x, base, lambda g: f"_rt.attr_grad({src(base)}, {e.attr!r}, {g})")
        return self._rev_pair_read(x, base, f"_rt.getattr_pair({src(base)}, {e.attr!r})", fwd)

    def _rev_read(self, x, base, adjoint):
        """The adjoint of reading part of base (an array): b_base += adjoint(g)."""

        def rev(st):
            self.read_g(st, x, lambda g, num: st.acc(base.id, adjoint(g), False))

        return rev

    def _rev_pair_read(self, x, base, pair_call, fwd):
        """Reading part of a value of unknown kind: x, x_pullback = pair_call, and
        b_base += x_pullback(b_x)."""
        pbn = self.fresh_local(f"{x}_pullback", self.fwd, self.depth)
        fwd.append(f"{x}, {pbn} = {pair_call}")

        def rev(st):
            if st.get(x) is None:
                return
            st.acc(base.id, f"{pbn}({st.adj(x)})", False)

        return rev

    def subscript(self, x, e, fwd):
        base = e.value
        if not self.is_active(base):
            rev = self._keyed_read(x, e, fwd)
            if rev is not None:
                return rev
            fwd.append(f"{x} = {src(e)}")
            return None
        self.helpers.add("_rt")
        idx = C.index_value_src(e.slice)
        k = self.kind_of(base)
        if k == ARRAY:
            fwd.append(f"{x} = {src(e)}")
            return self._rev_read(x, base, lambda g: f"_rt.getitem_grad({src(base)}, {idx}, {g})")
        return self._rev_pair_read(x, base, f"_rt.getitem_pair({src(base)}, {idx})", fwd)

    def _keyed_read(self, x, e, fwd):
        """obj[key] where only the key depends on the inputs (np.r_[x, y], a __getitem__
        computing with its key): _rt.index_get at run time, whose rule differentiates
        what the key computes, gives no gradient to a plain lookup's key, or refuses."""
        if self.kind_of(e.value) == ARRAY:
            return None  # an array's lookup: piecewise constant in its key
        sl = e.slice
        elts = list(sl.elts) if isinstance(sl, gast.Tuple) else [sl]

        def active_in(node):
            return any(isinstance(n, gast.Name) and self.is_active(n) for n in gast.walk(node))

        if not any(active_in(v) for v in elts):
            return None
        if any(isinstance(v, gast.Slice) and active_in(v) for v in elts):
            self.refuse(
                "a slice whose bounds depend on the differentiated inputs",
                "compute the values with np.linspace or np.arange outside the index",
            )
        self.helpers.add("_rt")
        pbn = self.fresh_local(f"{x}_pullback", self.fwd, self.depth)
        keys = "".join(", " + C.index_value_src(v) for v in elts)
        fwd.append(f"{x}, {pbn} = _rt.call(_rt.index_get, {src(e.value)}, {isinstance(sl, gast.Tuple)}{keys})")
        none = gast.Constant(value=None, kind=None)
        return self.rev_call_pullback(x, pbn, [none, e.value, none] + elts, with_df=True)

    def display(self, x, e, fwd):
        elts = e.elts
        starred = any(isinstance(v, gast.Starred) for v in elts)
        self.helpers.add("_rt")
        if starred:
            lens = self.fresh_local(f"{x}_sizes", fwd, self.depth)
            parts = ", ".join(
                f"len({src(v.value)})" if isinstance(v, gast.Starred) else "None" for v in elts
            )
            fwd.append(f"{lens} = ({parts},)")
        fwd.append(f"{x} = {src(e)}")

        def rev(st):
            def body(g, num):
                for i, v in enumerate(elts):
                    if isinstance(v, gast.Starred):
                        if self.is_active(v.value):
                            st.acc(v.value.id, f"_rt.star_part({g}, {lens}, {i}, {src(v.value)})", False)
                    elif self.is_active(v):
                        part = f"_rt.star_part({g}, {lens}, {i}, None)" if starred else f"_rt.part({g}, {i})"
                        st.acc(v.id, part, False)

            self.read_g(st, x, body)

        return rev

    def dict_display(self, x, e, fwd):
        fwd.append(f"{x} = {src(e)}")
        self.helpers.add("_rt")

        def rev(st):
            def body(g, num):
                for k, v in zip(e.keys, e.values):
                    if k is None:
                        if self.is_active(v):
                            st.acc(v.id, f"_rt.subdict({g}, {src(v)})", False)
                    elif self.is_active(v):
                        st.acc(v.id, f"_rt.part({g}, {src(k)})", False)

            self.read_g(st, x, body)

        return rev

    def refuse(self, construct, hint):
        """UnsupportedSyntaxError for the statement being generated, at the user's line."""
        line = getattr(self.cur_stmt, "src_line", None)
        raise UnsupportedSyntaxError(
            construct, self.info.filename, line if line is not None else getattr(self, "last_line", None),
            hint=hint,
        )

    def note_alias(self, x, e):
        """Follow `z = y` between the user's names, and `z = y[1:]`, `z = y.T`,
        `z = np.flip(y)`... (views, which share y's memory), in the order the code is
        generated (a rebinding ends an alias): enough to catch a write through one name
        that the other would have to show (see setitem)."""
        for z in self.aliases.pop(x, ()):
            self.aliases.get(z, set()).discard(x)
        for z in self.same.pop(x, ()):
            self.same.get(z, set()).discard(x)
        self.field_of.pop(x, None)
        for z in [z for z, (o, _) in self.field_of.items() if o == x]:
            del self.field_of[z]
        if (
            isinstance(e, gast.Attribute)
            and isinstance(e.value, gast.Name)
            and e.value.id != x
            and self.kind_of(e.value) == OTHER
            and e.attr not in _VIEW_ATTRS | _INACTIVE_ATTRS
        ):
            self.field_of[x] = (e.value.id, e.attr)
        self.maybe_views.discard(x)
        if isinstance(e, gast.Name) and e.id != x and {x, e.id} <= self.user_names:
            base = e.id
            same = {base} | self.same.get(base, set())
            for z in same:
                self.same.setdefault(z, set()).add(x)
            self.same[x] = same
        else:
            base = self._view_base(e)
            if base == x or base is None:
                return
            if isinstance(e, gast.Subscript) and self._element_index(e.slice):
                self.maybe_views.add(x)  # y[i]: a view of a row, or a number
        group = {base} | self.aliases.get(base, set())
        for z in group:
            self.aliases.setdefault(z, set()).add(x)
        self.aliases[x] = group

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
        for k in set(same) | set(self.same):  # the same object on both paths only
            both = self.same.get(k, set()) & same.get(k, set())
            if both:
                self.same[k] = both
            else:
                self.same.pop(k, None)
        for k in set(aliases) | set(self.aliases):
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

    def check_shared_write(self, name, op, fwd, refuse=True):
        """A write into name (`name[i] = v`, or `name op= v`) while another name for the
        same container (or a view of it) is read afterwards: differentiated code writes a
        copy, so the other name would keep the old values where Python shows the new ones.
        Refused here when the two surely share (`z = y`, `z = y[1:]`, `z = y.T`); checked
        when it runs when that depends on values (`z = y[i]` is a view of a row, or a
        number; a value of unknown kind may be a number, for which `a += v` rebinds)."""
        same = self.same.get(name, set())
        for z in sorted(z for z in self.aliases.get(name, ()) if z in self.live and z not in same):
            if refuse and name not in self.maybe_views and z not in self.maybe_views:
                self.refuse(*shared_write_message(name, z, op))
            self.helpers.add("_rt")
            line = getattr(self.cur_stmt, "src_line", None)
            fwd.append(f"_rt.check_shared({name}, {z}, {name!r}, {z!r}, {op!r}, {line!r})")

    def _view_base(self, e):
        """The name e may be a view of (basic indexing, .T, reshape, np.flip, ...), or None."""
        if isinstance(e, gast.Subscript) and isinstance(e.value, gast.Name):
            if getattr(e, "written_back", False):
                return None
            if self.kind_of(e.value) in SCALAR or not self._basic_index(e.slice):
                return None
            return e.value.id
        if isinstance(e, gast.Attribute) and isinstance(e.value, gast.Name) and e.attr in _VIEW_ATTRS:
            return e.value.id
        if isinstance(e, gast.Call) and e.args and not isinstance(e.args[0], gast.Starred):
            f = e.func
            if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and f.attr in _VIEW_METHODS:
                if self.resolve(f.value) is None and self.kind_of(f.value) not in SCALAR:
                    return f.value.id
            if isinstance(e.args[0], gast.Name) and self.kind_of(e.args[0]) not in SCALAR:
                fn = self.resolve(f)
                try:
                    if fn is not None and fn in _VIEW_FUNCS:
                        return e.args[0].id
                except TypeError:  # an unhashable callee
                    return None
        return None

    def _element_index(self, idx):
        """Only integers (no slice, ..., None): y[idx] may be an element, not a view."""
        parts = idx.elts if isinstance(idx, gast.Tuple) else [idx]
        return not any(isinstance(p, (gast.Slice, gast.Starred)) for p in parts) and not any(
            isinstance(p, gast.Constant) and p.value in (None, Ellipsis) for p in parts
        )

    def _basic_index(self, idx):
        """Could indexing with idx give a view (ints, slices, ..., None; not index arrays)?"""
        parts = idx.elts if isinstance(idx, gast.Tuple) else [idx]
        for p in parts:
            if isinstance(p, gast.Name) and self.kind_of(p) == ARRAY:
                return False
            if isinstance(p, (gast.List, gast.ListComp)):
                return False
        return True

    def setitem(self, tgt, v, fwd, depth):
        obj = tgt.value
        if isinstance(obj, gast.Name):
            self.check_shared_write(obj.id, None, fwd)
        idx = C.index_value_src(tgt.slice)
        line = f"{src(obj)}[{C.index_src(tgt.slice)}] = {src(v)}"
        if (
            isinstance(obj, gast.Name)
            and obj.id not in self.locals | set(self.info.params)
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
            or obj.id not in self.locals | set(self.info.params)
        ):
            fwd.append(line)  # a global or captured container: written in place, as Python
            return None
        # copy on write: the old container stays intact for the backward pass
        self.helpers.add("_rt")
        name = obj.id
        mark = len(self.saves)
        self.save(name, fwd, depth)
        saves = self.saves[mark:]
        for sv in saves:
            sv.keeps_shape = True
        # an argument: a caller reading it again takes the written copy (runtime.kept)
        arg = name in self.info.params and self.kinds.get(name, OTHER) in (ARRAY, OTHER)
        how = "setitem_arg" if arg else "setitem"
        fwd.append(f"{name} = _rt.{how}({name}, {idx}, {src(v)})")

        def recipe(st):
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
                    t = self.namer.fresh(f"b_{v.id}_part") if self.is_active(v) else "_"
                    vsrc = src(v) if self.is_active(v) else "None"
                    st.line(f"{b}, {t} = _rt.setitem_grad({b}, {name}, {idx}, {vsrc})")
                    st.status[name] = MAYBE
                    if self.is_active(v):
                        st.acc(v.id, t, False)
            for sv in reversed(saves):
                st.out.append(Restore(sv))

        return recipe

    def setattr_(self, tgt, v, fwd, depth):
        """obj.attr = v mutates obj; v's gradient is what later reads of the field left."""
        obj = tgt.value
        fwd.append(f"{src(obj)}.{tgt.attr} = {src(v)}")
        if not (isinstance(obj, gast.Name) and obj.id in self.active):
            return None
        self.helpers.add("_rt")

        def recipe(st):
            if self.is_active(v):
                st.acc(v.id, f"_rt.setattr_grad({obj.id}, {tgt.attr!r})", False)
            else:
                st.line(f"_rt.setattr_grad({obj.id}, {tgt.attr!r})")

        return recipe

    # ----- closures --------------------------------------------------------------------------
    def funcdef(self, s, fwd, depth):
        mark = len(self.saves)
        self.save(s.name, fwd, depth)
        text = ast.unparse(gast.gast_to_ast(s))
        first = min([s.lineno] + [d.lineno for d in s.decorator_list]) if hasattr(s, "lineno") else None
        fwd.append(Raw(text.splitlines(), first))
        self.raw_items.append(fwd[-1])
        rev = (
            self.rev_closure(s.name, free_names_of_function(s), _default_atoms(s))
            if s.name in self.active
            else None
        )
        self.local_fns[s.name] = free_names_of_function(s)
        return self.with_restore(rev, s.name, self.saves[mark:])

    def rev_closure(self, x, free, defaults=()):
        """A function made here: its tangent's fields go to the variables it captured and
        to the values of its defaults."""
        defaults = [(p, v) for p, v in defaults if v in self.active]
        captured = sorted(n for n in free if n in self.active and n not in dict(defaults).values())
        captured = [n for n in captured if n not in {v for _, v in defaults}]

        def rev(st):
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
            if s.test.id in inside:  # the branch rewrites its own test: keep the decision
                cond = self.fresh_local("cond", fwd, depth)
                cond_saves.append(self.saves[-1])
                fwd.append(f"{cond} = {test}")
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
        self.loop_inits.append((init, s))
        counter = self.fresh_local(hint, fwd, depth)
        fwd.append(f"{counter} = 0")
        target_rev = None
        body_fwd = Block()
        if isinstance(s, gast.For):
            it = s.iter
            target = s.target.id
            seq = None
            if self.is_active(it) and target in self.active:
                self.helpers.add("_rt")
                seq = self.fresh_local(f"{it.id}_seq", fwd, depth)
                fwd.append(f"{seq} = _rt.seq({src(it)})")
            item = self.namer.fresh(f"{target}_")
            outer_saves = self.saves[mark:]
            tsave = self.save(target, body_fwd, depth + 1)
            header = _ForHeader(target, item, seq or src(it), tsave)
            body_fwd.append(_Copy(header))
            target_rev = (target, seq, tsave)
        else:
            header = "while True"
            outer_saves = self.saves[mark:]
        body_fwd.append(f"{counter} += 1")
        # the body runs again after itself: a name it binds is not surely the same object
        # as another name at its start (`s3 = s2` before the loop, `s3 = ...` in it)
        rebound = {n for st in walk_block(s.body) for n in stmt_targets(st)}
        if isinstance(s, gast.For) and isinstance(s.target, gast.Name):
            rebound.add(s.target.id)
        self.forget_same(rebound)
        before = self.alias_state()
        inner, rb = self.block(s.body, depth + 1)
        self.join_aliases(before)  # the loop may run no time
        body_fwd.extend(inner)
        init.loop = Loop(header, body_fwd)
        fwd.append(init.loop)

        def recipe(st):
            k = self.namer.fresh("k")
            pre_status = st.snapshot()
            entry = dict(pre_status)
            out = st.out
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
            for name in sorted(entry):
                if end.get(name) is None:
                    body.append(st.zero_line(name)[0])
            for name in sorted(entry):
                if pre_status.get(name) is None:
                    out.append(st.zero_line(name)[0])
            uses_k = any(isinstance(i, str) and k in i for i in _flatten(body))
            rng = f"range({counter} - 1, -1, -1)" if uses_k else f"range({counter})"
            var = k if uses_k else self._throwaway()
            out.append(Loop(f"for {var} in {rng}", body))
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

        return recipe

    def _throwaway(self):
        """The loop variable of a reversed loop that does not need its index."""
        if getattr(self, "_unused", None) is None:
            self._unused = self.namer.fresh("_" if "_" not in self.namer.taken else "_j")
        return self._unused

    def run(self, recipes, st):
        for recipe, origin in reversed(recipes):
            mark = len(st.out)
            if origin:
                st.line(f"# {origin}")
            if recipe is not None:
                recipe(st)
            if origin and _only_markers(st.out[mark + 1 :]):
                del st.out[mark]  # the statement needed no adjoint code: no comment

    # =====================================================================================
    # assembling the pair
    # =====================================================================================
    def generate(self):
        info = self.info
        self.result = None
        fwd, recipes = self.block(self.fn.body, 0)
        self._fwd_block_cache = fwd
        result = self.result
        pair_name = f"{_pyname(info.name)}_pair"
        pb_name = f"{_pyname(info.name)}_pullback"
        st = Status(self)
        ret_active = isinstance(result, gast.Name) and result.id in self.active
        seed = self.adj_name(result.id) if isinstance(result, gast.Name) else self.namer.fresh("b_result")
        pre = Block()
        if ret_active:
            kind = self.kinds.get(result.id, OTHER)
            self.helpers.add("_rt")
            if kind == REAL:
                pre.append(f"if type({seed}) is not float:")
                pre.append(f"    {seed} = _rt.real({seed})")
                st.status[result.id] = NUM
            elif kind == COMPLEX:
                pre.append(f"{seed} = _rt.scalar({seed})")
                st.status[result.id] = NUM
            elif kind == OTHER:  # maybe an object: its fields' gradients use the store
                pre.append(f"{seed} = _rt.seed_result({seed}, {result.id})")
                st.status[result.id] = MAYBE
            else:
                pre.append(f"{seed} = _rt.seed({seed})")
                st.status[result.id] = MAYBE
        for n in sorted(self.appended & (set(info.params) | set(info.freevars))):
            if n in self.active:  # a list from the caller, appended to here
                self.helpers.add("_rt")
                b = self.adj_name(n)
                if st.get(n) is None:
                    pre.append(f"{b} = _rt.take_items({n})")
                else:  # the list is also the result (`return lst`): both gradients
                    pre.append(f"{b} = _rt.acc({b}, _rt.take_items({n}))")
                st.status[n] = MAYBE
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
            zeros = ["None"] * (1 + len(info.positional))
            if info.vararg:
                zeros.append(f"*((None,) * len({info.vararg}))")
            if info.kwonly or info.kwarg:
                zeros.append("{}")
            pre.append(f"if {seed} is None:")
            pre.append(f"    return ({', '.join(zeros)},)" if len(zeros) == 1 else f"    return ({', '.join(zeros)})")
            st.status = dict(entry_status)
            st.status[result.id] = NUM
            st.out = Block()
            self.run(recipes, st)
            body = st.out
        # gradients of the parameters, then the function tangent
        ret = []
        for p in info.positional:
            ret.append(self.adj_name(p) if st.get(p) is not None else "None")
        grads = list(ret)
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
        # captured lists appended to here go back to the caller through the store
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
        tail = ", ".join([df] + grads + extra)
        if info.kwonly or info.kwarg:
            tail += ", {" + ", ".join(kwparts) + "}"
        ret_line = f"return ({tail},)" if not grads and not extra and not (info.kwonly or info.kwarg) else f"return ({tail})"
        # ----- which saved values does the pullback read? --------------------------------
        counts = {}
        for sv in self.saves:
            counts[sv.name] = counts.get(sv.name, 0) + (2 if sv.in_loop else 1)
        overwritten = {n for n, c in counts.items() if c + (1 if n in info.params else 0) >= 2}
        # containers changed only by `name[i] = v` after their first binding: a pullback
        # that reads them only for their shape (unbroadcast's `like`, setitem_grad's old
        # container) does not need the old values, so they are not saved, and the
        # forward pass can write in place (runtime.setitem)
        rebinds = {}
        for sv in self.saves:
            if not sv.keeps_shape:
                rebinds[sv.name] = rebinds.get(sv.name, 0) + (2 if sv.in_loop else 1)
        shape_kept = {
            n for n in overwritten if rebinds.get(n, 0) + (1 if n in info.params else 0) <= 1
        }
        # which saved values does the pullback read? A branch that only restores values
        # still reads its test, so restores count as code: iterate to a fixpoint
        restorable = set()
        for _ in range(4):
            def probe_marker(m, keep=frozenset(restorable)):
                return ["pass"] if isinstance(m, Restore) and m.save.name in keep else []

            probe = []
            C.render(body, 0, probe_marker, probe)
            probe = [_blank_shape_reads(line, shape_kept) for line in probe] if shape_kept else probe
            read = _names_read(_fix_empty_blocks(probe), self.locals)
            needed = read & (self.locals | set(info.params))
            new = {n for n in needed if n in overwritten}
            if new == restorable:
                break
            restorable = new
        tape_used = False
        slots = {}
        for sv in self.saves:
            if sv.name in restorable:
                if sv.in_loop:
                    tape_used = True
                else:
                    slots[id(sv)] = self.namer.fresh(f"{sv.name}_saved")

        def resolve_fwd(m):
            if isinstance(m, _ForHeader):
                name = m.alias if m.target in restorable else m.target
                return [f"for {name} in {m.it}"]
            if isinstance(m, _Copy):
                h = m.header
                return [f"{h.target} = {h.alias}"] if h.target in restorable else []
            if isinstance(m, Save):
                if m.name not in restorable:
                    return []
                if m.in_loop:
                    return [f"{self.tape}.append({m.name})"]
                if m.name in m_defined(m):
                    return [f"{slots[id(m)]} = {m.name}"]
                return []
            if isinstance(m, C.LoopInit):
                inside = {sv.name for sv in _saves_in(m.loop.body)}
                names = sorted((inside & restorable) - m_defined(m))
                return [f"{n} = None" for n in names]
            return []

        assigned_first = self._first_assignments()

        def m_defined(m):
            return assigned_first.get(id(m), set())

        def resolve_rev(m):
            if isinstance(m, Release):
                return [f"{m.name} = None"] if m.targets & st.added_to else []
            if isinstance(m, Restore):
                sv = m.save
                if sv.name not in restorable:
                    return []
                if sv.in_loop:
                    return [f"{self.pos} -= 1", f"{sv.name} = {self.tape}[{self.pos}]"]
                if id(sv) in slots and sv.name in m_defined(sv):
                    return [f"{sv.name} = {slots[id(sv)]}"]
            return []

        self.restorable = restorable
        lines = []
        params = _params_src(self.fn.args)
        lines.append(f"def {pair_name}({params}):")
        fwd_lines = []
        if tape_used:
            fwd_lines.append(f"{self.tape} = []")
        C.render(fwd, 0, resolve_fwd, fwd_lines)
        pb_lines = []
        if tape_used:
            pb_lines.append(f"{self.pos} = len({self.tape})")
        C.render(pre, 0, resolve_rev, pb_lines)
        C.render(body, 0, resolve_rev, pb_lines)
        pb_lines.append(ret_line)
        # names of primal values (a user's `b_q`, and every name of generated code when it
        # is differentiated again): restored, not copied, so never propagated or folded
        primal_names = self.locals | set(info.params) | set(info.freevars) | set(slots.values())
        pb_lines = _substitute_single_uses(
            _propagate_copies(pb_lines, seed, primal_names), seed, primal_names
        )
        real_adjoints = {b for v, b in self._adj.items() if self.kinds.get(v) == REAL}
        pb_lines = [_subtract_negated(line, real_adjoints) for line in pb_lines]
        # the pullback receives the values it reads as default arguments: the forward
        # pass keeps fast locals (no cells), and the values are snapshots, so a captured
        # variable rebound later (a loop variable) cannot change the gradient. Helper
        # modules stay closure variables (they resolve statically when differentiated again)
        primal = self.locals | set(info.params) | set(info.freevars)
        primal -= set(info.static_free) | self.helpers | {"_rt"}
        primal |= set(slots.values()) | ({self.tape} if tape_used else set())
        passed = sorted((_names_read(_fix_empty_blocks(list(pb_lines)), primal) & primal) - {seed})
        always = set(info.params) | set(info.freevars) | {self.tape}
        unbound = sorted(
            n for n in passed if n not in always and (n not in self._defined_at_end or n in slots.values())
        )
        if unbound:  # bound on some paths only: still needs a value to pass
            fwd_lines[:0] = [f"{n} = None" for n in unbound]
        res = src(result) if result is not None else "None"
        scalars = {v for v, k in self.kinds.items() if k in SCALAR}
        temps = (scalars - self.user_names - set(passed) - set(_tokens(res))
                 - set(slots.values()) - {self.tape, self.pos})
        pure = scalars | ({"math", "cmath"} & self.helpers)
        fwd_lines = _fold_pure_temps(fwd_lines, temps, pure)
        lines.extend("    " + line for line in fwd_lines)
        params = ", ".join([seed] + [f"{n}={n}" for n in passed])
        lines.append(f"    def {pb_name}({params}):")
        lines.extend("        " + line for line in pb_lines)
        lines.append(f"    return {res}, {pb_name}")
        return "\n".join(_fix_empty_blocks(lines)) + "\n"

    def _has_effects(self, body):
        """Does the pullback do anything besides computing gradients from its seed?"""
        if self.appended & (set(self.info.params) | set(self.info.freevars)):
            return True
        text = []
        C.render(body, 0, lambda m: [], text)
        joined = "\n".join(text)
        return any(w in joined for w in ("setattr_grad", "put_items", "take_items", "(None)"))

    # helpers for save/restore decisions -----------------------------------------------------
    def _first_assignments(self):
        """For each Save marker: the names that surely have a value at that point."""
        out = {}
        defined = set(self.info.params) | set(self.info.freevars)

        def walk(block, defined):
            for item in block:
                if isinstance(item, C.LoopInit):
                    out[id(item)] = set(defined)
                    if item.loop is not None:  # it gives the loop's saved names a value
                        defined.update(sv.name for sv in _saves_in(item.loop.body))
                elif isinstance(item, Save):
                    out[id(item)] = set(defined)
                    defined.add(item.name)
                elif isinstance(item, If):
                    d1, d2 = set(defined), set(defined)
                    walk(item.body, d1)
                    walk(item.orelse, d2)
                    defined |= d1 & d2
                elif isinstance(item, Loop):
                    d = set(defined)
                    walk(item.body, d)
                elif isinstance(item, str) and " = " in item and not item.startswith("#"):
                    for head in item.split(" = ")[0].split(","):
                        if head.strip().isidentifier():
                            defined.add(head.strip())

        walk(self._fwd_block_cache, defined)
        self._defined_at_end = defined
        return out

def _then_restore(rev, saves):
    """The recipe rev, then the restores of saves (their values before the statement)."""

    def recipe(st):
        rev(st)
        for sv in reversed(saves):
            st.out.append(Restore(sv))

    return recipe


class _Copy:
    """`target = target_` at the top of a loop body, when the loop target is restored."""

    def __init__(self, header):
        self.header = header


class _ForHeader:
    """`for target in it`, or `for target_ in it` + a saved copy when target is restored."""

    def __init__(self, target, alias, it, save):
        self.target = target
        self.alias = alias
        self.it = it
        self.save = save


def _default_atoms(fn):
    """(parameter, name of its default value) for defaults that are names."""
    a = fn.args
    pos = a.posonlyargs + a.args
    pairs = list(zip(pos[len(pos) - len(a.defaults):], a.defaults))
    pairs += [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    return [(p.id, d.id) for p, d in pairs if isinstance(d, gast.Name)]


def _only_markers(items):
    return all(isinstance(i, Restore) for i in items)


def _saves_in(block):
    for item in block:
        if isinstance(item, Save):
            yield item
        elif isinstance(item, If):
            yield from _saves_in(item.body)
            yield from _saves_in(item.orelse)
        elif isinstance(item, Loop):
            yield from _saves_in(item.body)


def _flatten(block):
    for item in block:
        if isinstance(item, (If,)):
            yield from _flatten(item.body)
            yield from _flatten(item.orelse)
        elif isinstance(item, Loop):
            yield item.header if isinstance(item.header, str) else ""
            yield from _flatten(item.body)
        else:
            yield item


def _call_operands(call):
    """A call's arguments: positional, starred (their value) and keyword values."""
    return [a.value if isinstance(a, gast.Starred) else a for a in call.args] + [
        k.value for k in call.keywords
    ]


def _index_operands(idx):
    if isinstance(idx, gast.Slice):
        return [idx.lower, idx.upper, idx.step]
    if isinstance(idx, gast.Tuple):
        return [p for e in idx.elts for p in _index_operands(e)]
    return [idx]


def _expr_operands(e):
    """The operands of a normalised expression that must be atoms (see check_operands)."""
    t = type(e)
    if t is gast.BinOp:
        return [e.left, e.right]
    if t is gast.UnaryOp:
        return [e.operand]
    if t is gast.Call:
        f = e.func
        out = [f.value if isinstance(f, gast.Attribute) else f]
        out += [a.value if isinstance(a, gast.Starred) else a for a in e.args]
        return out + [k.value for k in e.keywords]
    if t is gast.Attribute:
        return [e.value]
    if t is gast.Subscript:
        return [e.value] + _index_operands(e.slice)
    if t in (gast.Tuple, gast.List, gast.Set):
        return [v.value if isinstance(v, gast.Starred) else v for v in e.elts]
    if t is gast.Dict:
        return list(e.keys) + list(e.values)
    if t is gast.Starred:
        return [e.value]
    # names and constants; comparisons and f-strings (no gradient: a bool, a string);
    # lambdas (closures: their captured names are followed by rev_closure)
    return []


def _operands(s):
    """The operands of a normalised statement that must be atoms."""
    if isinstance(s, gast.Assign):
        out = _expr_operands(s.value)
        for tgt in s.targets:
            if isinstance(tgt, (gast.Subscript, gast.Attribute)):
                out += _expr_operands(tgt)
        return out
    if isinstance(s, gast.Expr):
        return _expr_operands(s.value)
    if isinstance(s, gast.If):
        return [s.test]
    if isinstance(s, gast.For):
        return [s.iter]
    if isinstance(s, gast.Return):
        return [s.value]
    return []


def _join_status(a, b, gen):
    out = {}
    for name in dict.fromkeys([*a, *b]):
        sa, sb = a.get(name), b.get(name)
        if sa == sb:
            out[name] = sa
        elif sa is None or sb is None:
            kind = gen.kinds.get(name, OTHER)
            other = sb if sa is None else sa
            out[name] = NUM if (kind in SCALAR and other == NUM) else MAYBE
        else:
            out[name] = MAYBE
    return {k: v for k, v in out.items() if v is not None}


def _contribution(g, d, cls, k, res_kind, operand):
    """The adjoint contribution g * partial for an operand of kind k."""
    if cls == "real":
        if d == "1":
            return g
        if d == "-1":
            return f"-{g}"
        if d.startswith("1 / ") and _paren(d[4:]) == d[4:] and not d[4:].endswith(")"):
            return f"{g} / {d[4:]}"  # one division, not g * (1 / b): fewer roundings
        return f"{g} * {_paren(d)}"
    if cls == "complex":
        if d in ("1", "-1"):
            expr = g if d == "1" else f"-{g}"
        else:
            base = _paren(d)
            if base[0].isdigit():  # 2.conjugate() would not parse
                base = f"({base})"
            expr = f"{g} * {base}.conjugate()"
        if k == REAL:
            expr = f"_rt.re({expr})"
        return expr
    if d == "1":
        expr = g
    elif d == "-1":  # negate after summing a broadcast away: on the smaller array
        return f"-_rt.unbroadcast({g}, {operand})"
    else:
        expr = f"{g} * _rt.conj({d})"
    return f"_rt.unbroadcast({expr}, {operand})"


def _paren(d):
    simple = d.replace("_", "a").replace(".", "a")
    if simple.isalnum():
        return d
    if d.endswith(")") and _balanced_call(d):
        return d
    return f"({d})"


def _balanced_call(d):
    depth = 0
    for i, ch in enumerate(d):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0 and i != len(d) - 1:
                return False
        elif depth == 0 and ch in " +-*/%<>=":
            return False
    return True


def _pow_const_partial(b, scalar=False):
    if isinstance(b, bool) or not isinstance(b, (int, float)):
        return "_rt.pow_base_partial(a, b)"
    if b == 0:
        return None
    if b == 1:
        return "1"
    if b == 2:
        return "2 * a"
    if float(b).is_integer():
        n = int(b)
        return f"{n} * a ** {n - 1}" if n - 1 >= 0 else f"{n} * a ** ({n - 1})"
    if scalar and b < 1:
        # a fractional power's derivative is infinite at 0, where a float's ** raises
        return f"_rt.pow_scaled(a, {b - 1!r}, {b!r})"
    return f"{b!r} * a ** {b - 1!r}" if b - 1 >= 0 else f"{b!r} * a ** ({b - 1!r})"


def _args_src(e, lead=False):
    parts = [src(a) for a in e.args]
    parts += [f"{k.arg}={src(k.value)}" if k.arg else f"**{src(k.value)}" for k in e.keywords]
    if not parts:
        return ""
    return (", " if lead else "") + ", ".join(parts)


def _has_starred(e):
    return any(isinstance(a, gast.Starred) for a in e.args) or any(k.arg is None for k in e.keywords)


def _lens(call):
    parts = [f"len({src(a.value)})" if isinstance(a, gast.Starred) else "None" for a in call.args]
    return "(" + ", ".join(parts) + ",)" if parts else "()"


@functools.lru_cache(maxsize=None)
def _runtime_dispatch():
    """The run-time entry points through which generated code calls any function."""
    from .. import runtime

    return frozenset({runtime.call, runtime.call_keeping, runtime.call_method,
                      runtime.call_method_keeping})


def _runtime_append():
    from .. import runtime

    return runtime.append


def _hashable(obj):
    try:
        hash(obj)
        return True
    except TypeError:
        return False


def _is_user_class(obj):
    """A class whose construction runs Python code we differentiate."""
    if not isinstance(obj, type):
        return False
    import dataclasses

    return (
        dataclasses.is_dataclass(obj)
        or isinstance(getattr(obj, "__init__", None), types.FunctionType)
        or isinstance(getattr(obj, "__new__", None), types.FunctionType)
        or (issubclass(obj, tuple) and hasattr(obj, "_fields"))
    )


def _loop_hint(s):
    if isinstance(s, gast.For):
        return s.target.id
    return "iter"


def _pyname(name):
    return "lambda" if name == "<lambda>" else name


def _params_src(args):
    """The parameter list without defaults (they are attached to the function object)."""
    parts = []
    posonly = [p.id for p in args.posonlyargs]
    parts += posonly
    if posonly:
        parts.append("/")
    parts += [p.id for p in args.args]
    if args.vararg:
        parts.append("*" + args.vararg.id)
    elif args.kwonlyargs:
        parts.append("*")
    parts += [p.id for p in args.kwonlyargs]
    if args.kwarg:
        parts.append("**" + args.kwarg.id)
    return ", ".join(parts)


_TOKEN = re.compile(r"""#.*|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|(?<![\w.])([A-Za-z_]\w*)""")


_COPY = re.compile(r"^(b_\w+) = (b_\w+)$")
_TARGETS = re.compile(r"^\s*([\w, ]+?) = (?!=)")


def _propagate_copies(lines, seed, primal=frozenset()):
    """Drop `b_a = b_b` adjoint copies of the pullback's top level, using b_b directly.

    Only when b_a is assigned nowhere else and b_b is not assigned after the copy (in any
    block): then b_a and b_b hold the same value wherever b_a is read. Never for primal
    names that merely look like adjoints (`b_q = b_q_saved` restores a user's `b_q`, whose
    earlier value came in as a default argument).
    """
    assigned_at = {}
    for i, line in enumerate(lines):
        m = _TARGETS.match(line)
        if m:
            for name in m.group(1).split(","):
                assigned_at.setdefault(name.strip(), []).append(i)
    out = list(lines)
    renames = {}
    for i, line in enumerate(lines):
        m = _COPY.match(line)  # top level only: no indentation
        if not m:
            continue
        a, b = m.group(1), renames.get(m.group(2), m.group(2))
        if a == seed or a in primal or m.group(2) in primal or len(assigned_at.get(a, ())) != 1:
            continue
        if any(j > i for j in assigned_at.get(m.group(2), ())) or any(
            j > i for j in assigned_at.get(b, ())
        ):
            continue
        renames[a] = b
        out[i] = None
    if not renames:
        return lines
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, renames)) + r")(?!\w)")
    result = []
    for line in out:
        if line is None:
            continue
        if line.lstrip().startswith("#"):
            result.append(line)
            continue
        result.append(pattern.sub(lambda mm: renames[mm.group(1)], line))
    return result


_DEF = re.compile(r"^(b_\w+) = (.+)$")
_FOR = re.compile(r"^\s*for (\w+) in ")


@functools.lru_cache(maxsize=8192)
def _tokens(line):
    """The names a generated line mentions, in order (cached: the folding below asks
    about the same lines many times)."""
    return tuple(m.group(1) for m in _TOKEN.finditer(line) if m.group(1))


def _substitute_single_uses(lines, seed, primal=frozenset()):
    """Fold `b_t = E` into the one top-level line that reads b_t, when b_t is assigned
    nowhere else, read nowhere else, and nothing E reads changes in between."""
    changed = True
    while changed:
        changed = False
        counts = {}
        for line in lines:
            if not line.lstrip().startswith("#"):
                for tok in _tokens(line):
                    counts[tok] = counts.get(tok, 0) + 1
        i = -1
        while i + 1 < len(lines):
            i += 1
            line = lines[i]
            m = _DEF.match(line)  # top level: no indentation
            if not m or m.group(1) == seed or m.group(1) in primal:
                continue
            name, expr = m.group(1), m.group(2)
            if counts.get(name, 0) != 2 or name in _tokens(expr):
                continue  # not exactly one definition and one use
            reads = set(_tokens(expr))
            for j in range(i + 1, len(lines)):
                later = lines[j]
                if later.lstrip().startswith("#"):
                    continue
                assigned = _TARGETS.match(later)
                targets = {t.strip() for t in assigned.group(1).split(",")} if assigned else set()
                loop = _FOR.match(later)
                if loop:
                    targets.add(loop.group(1))
                if later.startswith(" ") or loop or later.rstrip().endswith(":"):
                    # inside (or opening) a block: a use there is left alone, and an
                    # assignment there to what E reads ends the search
                    if name in _tokens(later) or targets & (reads | {name}):
                        break
                    continue
                if name in _tokens(later):
                    if later.startswith("return") or not assigned:
                        break
                    lhs, rhs = later.split(" = ", 1)
                    if name in lhs or rhs.count(name) != 1:
                        break
                    lines = lines[:i] + lines[i + 1 : j] + [
                        lhs + " = " + re.sub(rf"(?<![\w.]){re.escape(name)}(?!\w)", f"({expr})", rhs)
                    ] + lines[j + 1 :]
                    # every other name keeps its count; go on from the line after the
                    # removed one (another pass catches folds this one made possible)
                    counts[name] = 0
                    changed = True
                    i -= 1
                    break
                if targets & (reads | {name}):
                    break  # something E reads is reassigned before the use
    return [_unparen_simple(line) for line in lines]


_SIMPLE_ASSIGN = re.compile(r"^([A-Za-z_]\w*) = (?!=)(.+)$")


def _fold_pure_temps(lines, temps, pure):
    """Fold a top-level temporary `t = E` of the forward pass into the one line that reads
    it, as the user wrote the expression: `a = sin_x * y + mul_1 * x`.

    Only where nothing can tell the difference: t is a temporary of the transformer that
    the pullback does not read, and E, every line between and the line that reads t are
    top-level assignments of pure arithmetic on real or complex numbers (names in `pure`,
    math/cmath functions). The value is the same bit for bit (the expression tree is
    unchanged) and no side effect or exception moves past another.
    """
    counts = {}
    for line in lines:
        if not line.lstrip().startswith("#"):
            for tok in _tokens(line):
                counts[tok] = counts.get(tok, 0) + 1
    changed = set()
    i = 0
    while i < len(lines):
        m = _SIMPLE_ASSIGN.match(lines[i])
        folded = False
        if m and m.group(1) in temps and counts.get(m.group(1)) == 2:
            name, expr = m.group(1), m.group(2)
            reads = _tokens(expr)
            if name not in reads and all(t in pure for t in reads):
                for j in range(i + 1, len(lines)):
                    later = lines[j]
                    if later.startswith("#"):
                        continue
                    m2 = _SIMPLE_ASSIGN.match(later)
                    if not m2 or "#" in later:
                        break
                    target, rhs = m2.group(1), m2.group(2)
                    used = _tokens(rhs)
                    if not all(t in pure for t in used) or target in reads or target == name:
                        break
                    if name in used:
                        new = re.sub(rf"(?<![\w.]){re.escape(name)}(?!\w)", lambda _: f"({expr})", rhs, count=1)
                        lines = lines[:i] + lines[i + 1 : j] + [f"{target} = {new}"] + lines[j + 1 :]
                        changed.add(lines[j - 1])
                        counts[name] = 0
                        folded = True
                        break
        if not folded:
            i += 1
    # a folded line is printed again from its tree: the same expression, minimal parentheses
    return [_reprint(line) if line in changed else line for line in lines]


def _reprint(line):
    target, rhs = line.split(" = ", 1)
    return f"{target} = {ast.unparse(ast.parse(rhs, mode='eval').body)}"


_ADD_NEGATED = re.compile(r"^(\s*)(b_\w+) = \2 \+ \(-(b_\w+)\) \* (.+)$")


def _subtract_negated(line, real_adjoints):
    """b_x = b_x + (-b_y) * r reads (and runs) as b_x = b_x - b_y * r: for real scalars
    the two are equal bit for bit. Left alone when r has an operator of the same
    precedence as * that does not distribute a sign (%, //) or a conditional."""
    m = _ADD_NEGATED.match(line)
    if not m or m.group(2) not in real_adjoints or m.group(3) not in real_adjoints:
        return line
    rest = m.group(4)
    if "%" in rest or "//" in rest or " if " in rest or "#" in rest:
        return line
    return f"{m.group(1)}{m.group(2)} = {m.group(2)} - {m.group(3)} * {rest}"


_PAREN_PRODUCT = re.compile(r"(?<![\w.)\]])\(([\w.]+(?: \* [\w.]+)*)\) \* ")


def _unparen_simple(line):
    """(b_x * y) * z reads as b_x * y * z when the parenthesised part is a plain product
    (never a call's parentheses, never a comment)."""
    if line.lstrip().startswith("#"):
        return line
    return _PAREN_PRODUCT.sub(r"\1 * ", line)


def _blank_shape_reads(line, names):
    """line with the given names blanked where they are read only for their shape and
    type: the ``like`` of ``_rt.unbroadcast(g, like)`` and the old container of
    ``_rt.setitem_grad(b, old, idx, v)`` and ``_rt.setitem_grad_acc(b, old, idx, v, acc)``
    (not for a slice: a list can change length)."""
    for fn, pos in (("_rt.unbroadcast(", -1), ("_rt.setitem_grad(", 1), ("_rt.setitem_grad_acc(", 1)):
        start = line.find(fn)
        while start >= 0:
            spans = _call_args(line, start + len(fn))
            if spans is not None and len(spans) >= 2:
                a, b = spans[pos]
                arg = line[a:b].strip()
                idx = line[spans[2][0]:spans[2][1]] if fn != "_rt.unbroadcast(" and len(spans) > 2 else ""
                if arg in names and "slice(" not in idx:
                    line = line[:a] + " " * (b - a) + line[b:]
            start = line.find(fn, start + 1)
    return line


def _call_args(line, i):
    """The (start, end) spans of the top-level arguments of the call whose '(' ends at
    line[i - 1], or None when the line ends first."""
    spans, depth, begin, quote = [], 0, i, None
    while i < len(line):
        c = line[i]
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                spans.append((begin, i))
                return spans
            depth -= 1
        elif c == "," and depth == 0:
            spans.append((begin, i))
            begin = i + 1
        i += 1
    return None


def _names_read(lines, fallback):
    """The names generated lines mention (outside strings, comments and attributes).

    A superset of the names they read (assignment targets count too), which is all the
    callers need; a tokenising regex is much cheaper than parsing.
    """
    out = set()
    for line in lines:
        out.update(_tokens(line))
    return out


def _fix_empty_blocks(lines):
    """Insert `pass` where a block header is followed by no code (only comments)."""
    out = []
    n = len(lines)
    for i, line in enumerate(lines):
        out.append(line)
        if line.rstrip().endswith(":") and not line.lstrip().startswith("#"):
            indent = len(line) - len(line.lstrip())
            j = i + 1
            has_code = False
            while j < n:
                nxt = lines[j]
                ind = len(nxt) - len(nxt.lstrip())
                if nxt.strip() == "":
                    j += 1
                    continue
                if ind <= indent:
                    break
                if not nxt.lstrip().startswith("#"):
                    has_code = True
                    break
                j += 1
            if not has_code:
                out.append(" " * (indent + 4) + "pass")
    return out
