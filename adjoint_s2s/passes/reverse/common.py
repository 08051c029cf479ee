"""The reverse pass, shared pieces: adjoint status bookkeeping (``Status``), accumulation
lines, constants and small helpers on normalised expressions used by several families.
"""
import dataclasses
import functools
import os
import sys
import types

import gast
import numpy as np

from ..activity import ARRAY, COMPLEX, NUMERIC, OTHER, REAL, SCALAR
from ..cleanup import call_args
from ..codegen import Block, If, Loop, Release, Restore, src
from ..whole import leaves
from ... import rules as R
from ...naming import ADJOINT_PREFIX

NUM, MAYBE = "num", "maybe"

_BITOP_NAMES = {
    gast.BitOr: "BitOr", gast.BitAnd: "BitAnd", gast.BitXor: "BitXor",
    gast.LShift: "LShift", gast.RShift: "RShift",
}
_MUTATING_METHODS = {"append", "extend", "insert", "pop", "remove", "update", "setdefault",
                     "add", "discard", "clear", "sort", "reverse", "fill", "__setitem__"}


# contributions that are zero but at a few positions: added into the accumulator there
_SCATTERING = {
    "_rt.getitem_grad(": "_rt.acc_getitem_grad(",
    "_rt.np_extremum_adjoint(": "_rt.acc_extremum_adjoint(",
}


_AUG_SYMBOLS = {
    "Add": "+", "Sub": "-", "Mult": "*", "Div": "/", "FloorDiv": "//", "Mod": "%", "Pow": "**",
    "MatMult": "@", "BitOr": "|", "BitAnd": "&", "BitXor": "^", "LShift": "<<", "RShift": ">>",
}

# what can return a view of its first argument (memory shared with it), or a list of views
# of it (the split family)
_VIEW_FUNCS = frozenset(
    f for f in (
        getattr(np, n, None) for n in (
            "flip", "fliplr", "flipud", "transpose", "permute_dims", "matrix_transpose",
            "swapaxes", "moveaxis", "rollaxis", "expand_dims", "squeeze", "broadcast_to",
            "reshape", "ravel", "diagonal", "real", "imag", "asarray", "asanyarray",
            "atleast_1d", "atleast_2d", "atleast_3d", "rot90", "trim_zeros", "asmatrix",
        )
    ) if f is not None
) | frozenset(
    f for f in (
        getattr(getattr(np.lib, "stride_tricks", None), "as_strided", None),
        getattr(getattr(np.lib, "stride_tricks", None), "sliding_window_view", None),
        getattr(np.linalg, "diagonal", None),
        getattr(np.linalg, "matrix_transpose", None),
    ) if f is not None
)
# what returns a list (or tuple) of views of its first argument: the list is no view
# (`parts[0] = v` rebinds an item), its items are, so a write is checked when it runs
_VIEW_LISTS = frozenset(
    f for f in (
        getattr(np, n, None) for n in ("split", "array_split", "hsplit", "vsplit", "dsplit", "unstack")
    ) if f is not None
)
# a view of an array that may not be contiguous (a view itself, or one with views) is a
# copy: checked when it runs then
_VIEW_IF_CONTIGUOUS = frozenset({np.reshape, np.ravel, "reshape", "ravel"})
# what returns its first argument itself or a view of it for some values only (np.diag
# of a matrix, np.ascontiguousarray of a contiguous array, np.array(a, copy=None)): the
# run tells whether they share (runtime.check_shared)
_MAYBE_VIEW_FUNCS = frozenset(
    f for f in (
        getattr(np, n, None) for n in (
            "diag", "ascontiguousarray", "asfortranarray", "require", "asarray_chkfinite",
            "real_if_close", "array",
        )
    ) if f is not None
)
# what may return views of any of its arguments (np.einsum("ii->i", a), np.broadcast_arrays,
# np.meshgrid(..., copy=False), np.atleast_1d(a, b)): checked when it runs too
_MAYBE_VIEW_OF_ANY = frozenset(
    f for f in (
        getattr(np, n, None) for n in (
            "einsum", "broadcast_arrays", "meshgrid", "atleast_1d", "atleast_2d", "atleast_3d",
        )
    ) if f is not None
)
_VIEW_METHODS = frozenset({"reshape", "ravel", "view", "transpose", "swapaxes", "squeeze", "diagonal"})
# methods giving the array itself for some values (a real array's conj(), astype to its own
# dtype with copy=False, __array__())
_MAYBE_VIEW_METHODS = frozenset({"conj", "conjugate", "astype", "__array__"})
_VIEW_ATTRS = frozenset({"T", "mT", "real", "imag", "flat"})
_OWN_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep  # adjoint_s2s/


def fill(template, mapping):
    """rules.fill(template, mapping): the template's identifiers (not attribute names)
    replaced from mapping, by the template's pieces split once (a rule's templates are
    filled once per operand of every statement that uses the rule)."""
    plan = _FILL_PLANS.get(template)
    if plan is None:
        plan = _fill_plan(template)
    if plan.__class__ is str:  # one identifier: `b`, `g`
        return mapping.get(plan, plan)
    if plan is _NO_IDENTIFIER:  # `1`, `-1`
        return template
    out = list(plan)
    for i in range(1, len(out), 2):  # the identifiers stand at the odd places
        out[i] = mapping.get(out[i], out[i])
    return "".join(out)


_FILL_PLANS = {}  # template -> _fill_plan(template)
_NO_IDENTIFIER = object()  # (a plan: the template is returned as it is)


def _fill_plan(template):
    """What fill does with a template: the identifier it is (a str), _NO_IDENTIFIER,
    or [text, identifier, text, ..., text] as rules.fill's pattern splits it."""
    parts = tuple(R._IDENT.split(template))
    if len(parts) == 1:
        plan = _NO_IDENTIFIER
    elif len(parts) == 3 and not parts[0] and not parts[2]:
        plan = parts[1]
    else:
        plan = parts
    if len(_FILL_PLANS) >= 4096:  # (templates made per call site, min/max's, come and go)
        _FILL_PLANS.clear()
    _FILL_PLANS[template] = plan
    return plan


def _passed_through(expr):
    """The adjoint name expr may return as it is (``b_z``, ``_rt.unbroadcast(b_z, z)``),
    or None."""
    if expr.startswith(ADJOINT_PREFIX) and expr.isidentifier():
        return expr
    if expr.startswith("_rt.unbroadcast(" + ADJOINT_PREFIX):
        spans = call_args(expr, len("_rt.unbroadcast("))
        if spans and len(spans) == 2 and spans[-1][1] == len(expr) - 1:
            first = expr[spans[0][0]:spans[0][1]].strip()
            if first.isidentifier():
                return first
    return None


def _scattered(expr):
    """The helper call name when expr is one call to a helper whose result is a scatter
    into zeros (getitem_grad, np_extremum_adjoint), else None."""
    for name in _SCATTERING:
        spans = call_args(expr, len(name)) if expr.startswith(name) else None
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




_FIX = {True: "_rt.real", False: "_rt.scalar"}  # a real adjoint made a number; any other


class Status:
    """Adjoint bookkeeping while recipes write the pullback, in pullback order."""

    def __init__(self, gen):
        self.gen = gen
        self.status = {}
        self.out = Block()
        self.aliases = {}  # adjoint name -> adjoint names that may be the same array
        self.added_to = set()  # adjoint names some line adds to (acc and friends)
        # adj(name): the adjoint's name (the generator's adj_name, bound here: asked for
        # every line a recipe writes)
        self.adj = gen.adj_name

    def snapshot(self):
        return dict(self.status)

    def get(self, name):
        return self.status.get(name)

    def line(self, text):
        self.out.append(text)

    def acc(self, name, expr, num):
        """Add expr to the adjoint of name (num: expr is surely a number/array)."""
        gen = self.gen
        if name not in gen.active:
            return
        kind = gen.kinds.get(name, OTHER)
        b = gen._adj.get(name)  # (adj(name), its usual case inline)
        if b is None:
            b = self.adj(name)
        status = self.status
        s = status.get(name)
        scalar = kind in SCALAR
        if s is None:
            if num or not scalar:
                self.out.append(f"{b} = {expr}")
                status[name] = NUM if (num and kind in NUMERIC) else MAYBE
                if not scalar:
                    src_ = _passed_through(expr)
                    if src_ is not None:
                        self.aliases.setdefault(src_, set()).add(b)
            else:
                self.out.append(f"{b} = {_FIX[kind == REAL]}({expr})")
                status[name] = NUM
        elif s == NUM and kind in NUMERIC:
            if num and expr.startswith("-") and not expr.startswith("-("):
                self.out.append(f"{b} = {b} - {expr[1:]}")
                return
            if not scalar and (not num or _scattered(expr)):
                self.out.append(f"{b} = {acc_call(b, expr)}")
                self.added_to.add(b)
                if not num:
                    status[name] = MAYBE
            else:
                self.out.append(f"{b} = {b} + {expr}" if num else f"{b} = {b} + {_FIX[kind == REAL]}({expr})")
        else:
            self.out.append(f"{b} = {acc_call(b, expr)}")
            status[name] = MAYBE
            self.added_to.add(b)

    def consume(self, name):
        """The adjoint of name has been passed on: older versions start from zero."""
        self.status.pop(name, None)
        if not self.aliases:  # (nothing to release: most pullbacks of numbers)
            return
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







def _item_key(sub, items):
    """The key of items that sub (`seq[key]`, a constant key) reads, or None (a key of no
    constant: `t[i]`)."""
    if sub.slice.__class__ is not gast.Constant:
        return None
    key = sub.slice.value
    if type(key) is int and len(items) and all(type(k) is int for k in items):
        key = key + len(items) if -len(items) <= key < 0 else key
    return key if key in items else None


def _tuple_src(parts):
    return f"({', '.join(parts)},)" if len(parts) == 1 else f"({', '.join(parts)})"


def _then_restore(rev, saves):
    """The recipe rev, then the restores of saves (their values before the statement)."""

    def recipe(st):
        rev(st)
        for sv in reversed(saves):
            st.out.append(Restore(sv))

    return recipe


def _default_atoms(fn):
    """(parameter, name of its default value) for defaults that are names."""
    a = fn.args
    pos = a.posonlyargs + a.args
    pairs = list(zip(pos[len(pos) - len(a.defaults):], a.defaults))
    pairs += [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    return [(p.id, d.id) for p, d in pairs if isinstance(d, gast.Name)]


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




def _index_operands(idx):
    if isinstance(idx, gast.Slice):
        return [idx.lower, idx.upper, idx.step]
    if isinstance(idx, gast.Tuple):
        return [p for e in idx.elts for p in _index_operands(e)]
    return [idx]


def _expr_operands(e):
    """The operands of a normalised expression that must be atoms (see check_operands)."""
    t = type(e)
    if getattr(e, "whole", False):  # (arithmetic on numbers kept whole: its names)
        return leaves(e)
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


def _contribution(g, d, cls, k, operand):
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


_OPERATOR_CHARS = frozenset(" +-*/%<>=")


def _balanced_call(d):
    k = d.find("(")
    if k >= 0 and d.find(")") == len(d) - 1 and d.find("(", k + 1) < 0:
        # `head(args)`, no other parenthesis (most calls of a partial): the loop below
        # looks at the head only (the rest stands inside the pair, closed at the end)
        return _OPERATOR_CHARS.isdisjoint(d[:k])
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
    for a in e.args:  # (loops, not any() of generators: asked of most calls, twice)
        if a.__class__ is gast.Starred:
            return True
    for k in e.keywords:
        if k.arg is None:
            return True
    return False


def _lens(call):
    parts = [f"_rt.starred_len({src(a.value)})" if isinstance(a, gast.Starred) else "None" for a in call.args]
    return "(" + ", ".join(parts) + ",)" if parts else "()"




@functools.lru_cache(maxsize=None)
def _runtime_append():
    return sys.modules[__name__.partition(".")[0] + ".runtime"].append  # see runtime_dispatch




def _is_user_class(obj):
    """A class whose construction runs Python code we differentiate."""
    if not isinstance(obj, type):
        return False
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


def _element_index(idx):
    """Only integers (no slice, ..., None): y[idx] may be an element, not a view."""
    parts = idx.elts if isinstance(idx, gast.Tuple) else [idx]
    return not any(isinstance(p, (gast.Slice, gast.Starred)) for p in parts) and not any(
        isinstance(p, gast.Constant) and p.value in (None, Ellipsis) for p in parts
    )


def _basic_index(idx, kind_of):
    """Could indexing with idx give a view (ints, slices, ..., None; not index arrays)?"""
    parts = idx.elts if isinstance(idx, gast.Tuple) else [idx]
    for p in parts:
        if isinstance(p, gast.Name) and kind_of(p) == ARRAY:
            return False
        if isinstance(p, (gast.List, gast.ListComp)):
            return False
    return True
