"""What generated code calls: accumulation, projection, unbroadcast, and dispatch.

Generated code names this module ``_rt``. The helpers sit on hot paths: each starts
with the fast case (a float, an array of the right shape) and falls back to the
general one.

Dispatch (``call``, ``call_method``, ``binop``, ...) resolves a callee once per
(function, argument kinds) and caches the pair function on the function object:
user rule → built-in rule → Python source (transformed) → bound method → class →
``MissingAdjointError``.
"""
import ast
import cmath
import functools
import linecache
import math
import operator
import sys
import types
import weakref

import numpy as np

from . import rules as R
from .errors import (
    MissingAdjointError,
    MutationError,
    NotDifferentiableError,
    describe,
    shared_write_message,
    short_name,
)
from .passes.activity import ARRAY, COMPLEX, CONST, OTHER, REAL
from .tangents import AbstractZero, NoTangent, Tangent, Thunk, ZeroTangent, add, unthunk

def acc(a, b):
    """a + b for generated code's accumulators (``b_x = _rt.acc(b_x, part)``).

    An array accumulator that only the calling variable refers to (see _PRIVATE_REFS)
    is added to in place, as a hand-written reverse sweep would: no new array per
    contribution. Failing that, a contribution that is a temporary no variable holds
    (``_rt.acc(b_x, b_y * c)``) takes the sum (floating-point addition commutes).
    Anything else is tangents.add."""
    if (
        type(a) is np.ndarray
        and type(b) is np.ndarray
        and a.shape == b.shape
        and a.dtype == b.dtype
    ):
        if a.base is None and sys.getrefcount(a) <= _PRIVATE_REFS and a.flags.writeable:
            a += b
            return a
        if b.base is None and sys.getrefcount(b) <= _TEMP_REFS and b.flags.writeable:
            b += a
            return b
    if type(a) is Scattered or type(b) is Scattered:
        # the sum is always an array, never a Scattered (see passes/sparse.py). Into an
        # array only the caller holds, or a temporary, the few positions go in place.
        if type(b) is Scattered:
            if (type(a) is np.ndarray and a.shape == b.shape and a.dtype == b.dtype
                    and a.base is None and a.flags.writeable
                    and sys.getrefcount(a) <= _PRIVATE_REFS):
                return b.add_into(a)
            a, b = b, a
        elif (type(b) is np.ndarray and b.shape == a.shape and b.dtype == a.dtype
                and b.base is None and b.flags.writeable
                and sys.getrefcount(b) <= _TEMP_REFS):
            return a.add_into(b)
        if type(b) is Scattered:
            return b.add_into(a.add_into(None))
        if type(b) is np.ndarray and b.shape == a.shape:
            return a.add_into(b, copy=True)
        return add(b, a.add_into(None))
    return add(a, b)

# ----- zeros, seeds and projection ----------------------------------------------------------


def real(x):
    """An adjoint of a real scalar: a float, with zeros as 0.0."""
    t = type(x)
    if t is float:
        return x
    if x is None or isinstance(x, AbstractZero):
        return 0.0
    if isinstance(x, Thunk):  # stay lazy: the thunk runs only if its value is used
        return Thunk(lambda: real(x.unthunk()))
    if t is complex or isinstance(x, complex):
        return x.real
    if isinstance(x, np.ndarray):
        if x.ndim == 0:
            return float(x.real)
        return x.real
    if isinstance(x, (int, np.integer, np.floating)):
        return float(x)
    if isinstance(x, np.complexfloating):
        return float(x.real)
    return x


def scalar(x):
    """An adjoint of a complex scalar: a number, with zeros as 0.0."""
    if type(x) is complex or type(x) is float:
        return x
    if x is None or isinstance(x, AbstractZero):
        return 0.0
    return x


def seed(x):
    """An adjoint of any other value: zeros become None, thunks are forced."""
    if x is None or isinstance(x, AbstractZero):
        return None
    if isinstance(x, Thunk):
        return x.unthunk()
    return x


def seed_result(x, result):
    """The seed of a pullback whose result may be an object: a structural tangent of a
    mutable object goes into the field store (reads and writes of its fields use it)."""
    x = seed(x)
    if x is not None and is_mutable_object(result) and not isinstance(x, (list, tuple)):
        _seed_fields(result, x)
        return None
    return x


def re(x):
    if x is None or isinstance(x, AbstractZero):
        return None
    return x.real


def im(x):
    if x is None or isinstance(x, AbstractZero):
        return None
    return x.imag


def im_seed(g):
    """Adjoint of y = z.imag (Zygote: z̄ = i·real(ȳ))."""
    if g is None:
        return None
    return 1j * real(g)


def re_or_self(g, x):
    if isinstance(x, (complex, np.complexfloating)):
        return g
    return re(g)


def conj(x):
    t = type(x)
    if t is float:
        return x
    if t is np.ndarray:
        return x.conj() if x.dtype.kind == "c" else x
    if isinstance(x, np.ndarray):
        return x.conj() if np.iscomplexobj(x) else x
    if isinstance(x, complex):
        return x.conjugate()
    return x


def neg(g):
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(g, tuple):
        return tuple(neg(e) for e in g)
    return -g


_add_reduce = np.add.reduce  # g.sum(axis=0) without ndarray.sum's Python wrapper

_ONES = {}
_BLAS_ROW = 4096  # the longest row _trailing_sum sums through BLAS


def _ones(k):
    v = _ONES.get(k)
    if v is None:
        v = _ONES[k] = np.ones(k)
        v.flags.writeable = False
    return v


def _trailing_sum(g, ls):
    """g summed over its trailing axes where ls (same ndim) has 1s, or None.

    A matrix-vector product with ones: NumPy's sum over a short last axis loops per row
    (38 µs for 1000 rows of 100, against 11 µs through BLAS). Only for float64 and rows
    of at most _BLAS_ROW elements, so the summation error stays that of NumPy's sum."""
    gs = g.shape
    j = len(ls)
    while j and ls[j - 1] == 1:
        j -= 1
    if j == len(ls) or gs[:j] != ls[:j] or not g.flags.c_contiguous:
        return None
    k = g.size // max(1, math.prod(gs[:j]))
    if not 1 < k <= _BLAS_ROW or g.size < 4 * k:
        return None
    return (g.reshape(-1, k) @ _ones(k)).reshape(ls)


def unbroadcast(g, like):
    """Sum g down to the shape of like (broadcasting undone); project onto like's space."""
    if type(g) is np.ndarray and type(like) is np.ndarray:
        gs, ls = g.shape, like.shape
        if gs == ls:
            if g.dtype == like.dtype:
                return g  # the common case: nothing to undo
        elif len(gs) == len(ls) + 1 and gs[1:] == ls and g.dtype == like.dtype:
            return _add_reduce(g, 0)  # the next most common: a bias added to a batch
        elif len(gs) == len(ls) and g.dtype == like.dtype == np.float64:
            out = _trailing_sum(g, ls)  # a per-row quantity (a row max, a row sum)
            if out is not None:
                return out
    elif g is None:
        return None
    elif type(g) is Scattered:
        if type(like) is np.ndarray:
            return g if g.shape == like.shape and g.dtype == like.dtype else g.reduce_to(like)
        return unbroadcast(g.add_into(None), like)
    if isinstance(like, np.ndarray):
        if not isinstance(g, np.ndarray):
            g = np.asarray(g)
        if g.shape != like.shape:
            extra = g.ndim - like.ndim
            if extra > 0:
                g = g.sum(axis=tuple(range(extra)))
            axes = tuple(i for i, n in enumerate(like.shape) if n == 1 and g.shape[i] != 1)
            if axes:
                g = g.sum(axis=axes, keepdims=True)
            if g.shape != like.shape:
                g = np.broadcast_to(g, like.shape).copy()
        if not np.iscomplexobj(like) and np.iscomplexobj(g):
            g = g.real
        if g.dtype != like.dtype and np.issubdtype(like.dtype, np.inexact):
            g = g.astype(like.dtype)
        return g
    if isinstance(g, np.ndarray):
        g = g.sum()
    if isinstance(like, (float, int)) and not isinstance(like, bool):
        if isinstance(g, (complex, np.complexfloating)):
            g = g.real
        return float(g) if isinstance(g, np.generic) else g
    return g


# ----- special functions ------------------------------------------------------------------

_B2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def digamma(x):
    """ψ(x), accurate to about 1e-12 for real x (not a pole)."""
    x = float(x)
    if x <= 0 and x == math.floor(x):
        return math.nan
    if x < 0.5:  # reflection: ψ(1-x) - ψ(x) = π cot(πx), with πx reduced near a pole
        return digamma(1.0 - x) - math.pi / math.tan(math.pi * (x - round(x)))
    acc_ = 0.0
    while x < 10.0:
        acc_ -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series = 0.0
    p = inv2
    for k, b in enumerate(_B2K, start=1):
        series += b / (2 * k) * p
        p *= inv2
    return acc_ + math.log(x) - 0.5 / x - series


def trunc_div(x, y):
    return float(math.trunc(x / y))


def abs_adjoint(g, x, ans):
    """|z| for complex z (Zygote: z̄ = real(ȳ)·z/|z|) and for arrays."""
    if isinstance(x, np.ndarray):
        if np.iscomplexobj(x):
            return np.where(ans == 0, 0, np.real(g) * x / np.where(ans == 0, 1, ans))
        return g * np.sign(x)
    if ans == 0:
        return 0j if isinstance(x, complex) else 0.0
    if isinstance(x, complex):
        return real(g) * x / ans
    return g * (1.0 if x > 0 else -1.0)


def phase_adjoint(g, z):
    r2 = abs(z) ** 2
    if r2 == 0:
        return 0j
    return real(g) * 1j * z / r2


def matmul_adjoint_a(g, a, b):
    if type(g) is np.ndarray and type(a) is np.ndarray and type(b) is np.ndarray:
        if g.ndim == 2 and a.ndim == 2 and b.ndim == 2 and b.dtype.kind != "c":
            out = g @ b.T  # matrices, b real: the common case, no projection needed
            if out.dtype == a.dtype:
                return out
    a_, b_ = np.asarray(a), np.asarray(b)
    g = np.asarray(g)
    bc = b_.conj() if np.iscomplexobj(b_) else b_
    if a_.ndim == 1 and b_.ndim == 1:
        out = g * bc
    elif b_.ndim == 1:
        out = g[..., None] * bc  # an outer product (written so it can be differentiated again)
    elif a_.ndim == 1:
        out = bc @ g if g.ndim == 1 else (g @ np.swapaxes(bc, -1, -2))
    else:
        out = g @ np.swapaxes(bc, -1, -2)
    return unbroadcast(out, a_) if isinstance(a, np.ndarray) else unbroadcast(out, a)


def matmul_adjoint_b(g, a, b):
    if type(g) is np.ndarray and type(a) is np.ndarray and type(b) is np.ndarray:
        if g.ndim == 2 and a.ndim == 2 and b.ndim == 2 and a.dtype.kind != "c":
            out = a.T @ g
            if out.dtype == b.dtype:
                return out
    a_, b_ = np.asarray(a), np.asarray(b)
    g = np.asarray(g)
    ac = a_.conj() if np.iscomplexobj(a_) else a_
    if a_.ndim == 1 and b_.ndim == 1:
        out = g * ac
    elif a_.ndim == 1:
        out = ac[..., :, None] * g[..., None, :]  # an outer product
    elif b_.ndim == 1:
        out = np.swapaxes(ac, -1, -2) @ g
    else:
        out = np.swapaxes(ac, -1, -2) @ g
    return unbroadcast(out, b_) if isinstance(b, np.ndarray) else unbroadcast(out, b)


# ----- structure: tuples, lists, dicts, objects, closures ------------------------------------


class GradList(list):
    """A list tangent owned by generated code (it may be updated in place)."""


def part(g, i):
    """Component i of a tuple/list/dict/Tangent tangent; None for zeros."""
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(g, Thunk):
        g = g.unthunk()
    if isinstance(g, dict):
        return g.get(i)
    if isinstance(g, Tangent):
        return g[i]
    if isinstance(g, (tuple, list)):
        if isinstance(i, slice):
            return g[i]
        return g[i] if -len(g) <= i < len(g) else None
    if isinstance(g, np.ndarray):
        return g[i]
    raise NotDifferentiableError(
        f"expected a tuple or list gradient, got {type(g).__name__} ({g!r}); "
        "a rule or pullback returned the wrong structure"
    )


def part_adjoint(v, i, g):
    """The adjoint of part(v, i): g placed at i in a tangent shaped like v."""
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(v, dict):
        return {i: g}
    if isinstance(v, Tangent):
        if isinstance(i, str):
            return Tangent(v.primal_type, **{i: g})
        els = [None] * len(v._elements)
        els[i] = g
        return Tangent(v.primal_type, *els)
    if isinstance(v, np.ndarray):
        return getitem_grad(v, i, g)
    out = [None] * len(v)
    out[i] = g
    return tuple(out) if isinstance(v, tuple) else out


def field_adjoint(name, g):
    if g is None or isinstance(g, AbstractZero):
        return None
    return Tangent(types.FunctionType, **{name: g})


def broadcast_like(g, v):
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(v, np.ndarray) and np.shape(g) != v.shape:
        return np.broadcast_to(g, v.shape).copy()
    return g


def seq_adjoint(v, g):
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(v, dict):
        # iterating over a dict hands out its keys: its structure, constants (a key made
        # from the inputs is refused where it is inserted, see dict_key), with no
        # gradient to give the dict (whose tangent holds its values')
        return None
    if isinstance(v, tuple):
        return tuple(g)
    if isinstance(v, np.ndarray):
        return np.asarray(g)
    return list(g)


def np_pad_transpose(v, pad_width, mode="constant"):
    """The transpose of np_pad_adjoint (a linear map of its gradient): np.pad again, with
    zeros for the constant mode (the padding's values are not the array's)."""
    if mode in ("edge", "reflect", "symmetric", "wrap"):
        return np.pad(v, pad_width, mode)
    return np.pad(v, pad_width)


_LABEL_KEYS = (str, bytes, bool, type(None), int, np.integer)


def _is_label(key):
    """A dict key that is a label, not a point of a tangent space: a str, bool, None or
    an integer (an index: `{i: t for i, t in enumerate(v)}`; the one gradient it could
    have, that of an integer argument used as a key, is not carried), or a tuple of them."""
    if isinstance(key, tuple):
        return all(_is_label(k) for k in key)
    return isinstance(key, _LABEL_KEYS)


def dict_key(obj, key, line):
    """Generated before `{key: v}`, `obj[key] = v` or obj.setdefault(key, v) where key may
    depend on the differentiated inputs (obj None for a display). A dict's keys are its
    structure (its tangent is keyed by them): a key made from the inputs would be handed
    back by iterating the dict without its gradient. Refused, unless obj is no dict (a
    list's index) or the key is a label (see _is_label)."""
    if obj is not None and not isinstance(obj, dict):
        return
    if _is_label(key):
        return
    site = user_call_site()
    raise NotDifferentiableError(
        f"a dict key computed from the differentiated inputs ({type(key).__name__} "
        f"{key!r}), in differentiated code at {site[1] if site else '?'}, line {line}: a dict's keys "
        f"are its structure and carry no gradient, so iterating the dict (for k in d, "
        f"d.keys(), d.items(), sorted(d), max(d)...) would hand the key back without it. "
        f"Use a list of (key, value) pairs, or keys that do not depend on the inputs "
        f"(names or integer labels)"
    )


def check_pair_keys(pairs):
    """dict(pairs) is differentiated with label keys only (see dict_key): whether a
    float there depends on the differentiated inputs is not known at run time."""
    for pair in pairs:
        if len(pair) == 2 and not _is_label(pair[0]):
            site = user_call_site()
            where = f" in {site[0]} ({site[1]}, line {site[2]})" if site else ""
            raise NotDifferentiableError(
                f"dict(pairs) with a key that is not a label ({type(pair[0]).__name__} "
                f"{pair[0]!r}){where}: a dict's keys carry no gradient, and whether this one "
                f"depends on the differentiated inputs is not known here. Build the dict with "
                f"a display or `d[k] = v` in a loop (keys computed from the inputs are "
                f"refused there, constant ones work), or keep a list of (key, value) pairs"
            )


def _nonzero_grad(g):
    g = unthunk(g)
    if g is None or isinstance(g, AbstractZero):
        return False
    try:
        return bool(np.any(np.asarray(g) != 0))
    except (TypeError, ValueError):
        return True


def trigamma(x):
    """ψ'(x) for real x (not a pole), accurate to about 1e-12."""
    x = float(x)
    if x <= 0 and x == math.floor(x):
        return math.nan
    if x < 0.5:  # reflection: ψ'(1-x) + ψ'(x) = π² / sin²(πx)
        return -trigamma(1.0 - x) + (math.pi / math.sin(math.pi * (x - round(x)))) ** 2
    acc_ = 0.0
    while x < 10.0:
        acc_ += 1.0 / (x * x)
        x += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    # ψ'(x) ~ 1/x + 1/(2x²) + Σ B_2k / x^(2k+1)
    series = inv + 0.5 * inv2
    p = inv * inv2
    for b in _B2K:
        series += b * p
        p *= inv2
    return acc_ + series


def polygamma2(x):
    """ψ''(x), by a central difference of trigamma (used only for third derivatives)."""
    h = 1e-5 * max(1.0, abs(float(x)))
    return (trigamma(x + h) - trigamma(x - h)) / (2 * h)


def star_part(g, sizes, i, like):
    """The gradient of element (or starred group) i of a display with *items."""
    if g is None or isinstance(g, AbstractZero):
        return None
    pos = sum(1 if s is None else s for s in sizes[:i])
    n = sizes[i]
    if n is None:
        return part(g, pos)
    chunk = [part(g, pos + j) for j in range(n)]
    return tuple(chunk) if isinstance(like, tuple) else chunk


def subdict(g, d):
    if g is None:
        return None
    return {k: g.get(k) for k in d}


def field(g, name):
    """The gradient of a captured variable from a closure's tangent."""
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(g, Tangent):
        v = g._fields.get(name)
        return v
    if isinstance(g, dict):
        return g.get(name)
    return getattr(g, name, None)


def fn_tangent(**fields):
    """The tangent of a closure: one field per captured variable with a gradient."""
    if all(v is None or isinstance(v, AbstractZero) for v in fields.values()):
        return None
    return Tangent(types.FunctionType, **fields)


def _arg_offset(i, lens):
    """Where argument i (0 is the callee) starts in a flat gradient tuple."""
    return 1 + sum(1 if n is None else n for n in lens[: i - 1])


def arg_grad(grads, i, lens):
    """The gradient of plain argument i of a call with *starred arguments."""
    if i == 0:
        return grads[0]
    j = _arg_offset(i, lens)
    return grads[j] if j < len(grads) else None


def starred_grad(grads, i, value, lens):
    """The gradients of the items of a *starred argument, shaped like the value."""
    j = _arg_offset(i, lens)
    n = lens[i - 1]
    # (positions past the positional arguments are not read: a dict there is the keyword
    # arguments' gradient, but within them a dict is a dict argument's gradient)
    chunk = [grads[k] if k < len(grads) else None for k in range(j, j + n)]
    if all(c is None for c in chunk):
        return None
    return tuple(chunk) if isinstance(value, tuple) else chunk


def kw_grad(grads, key):
    last = grads[-1] if grads else None
    return last.get(key) if isinstance(last, dict) else None


def kwargs_grad(grads, d):
    last = grads[-1] if grads else None
    if not isinstance(last, dict):
        return None
    out = {k: last.get(k) for k in d if last.get(k) is not None}
    return out or None


def with_defaults(df, names, grads):
    """The function tangent df with the gradients of defaulted parameters as fields."""
    fields = {n: g for n, g in zip(names, grads) if g is not None and not isinstance(g, AbstractZero)}
    if not fields:
        return df
    t = Tangent(types.FunctionType, **fields)
    return t if df is None or isinstance(df, AbstractZero) else add(df, t)


def with_kw_defaults(df, kwgrads):
    """The function tangent df with the gradients of keyword-only parameters that took
    their default (a dict by name) as fields."""
    if not isinstance(kwgrads, dict) or not kwgrads:
        return df
    return with_defaults(df, tuple(kwgrads), tuple(kwgrads.values()))


def fold_self(g, names):
    """The tangent of a recursive closure that captures itself, or other local functions
    that call it back, under `names`: each call's pullback nests the tangent of the
    function it called in that field. Their fields name the same enclosing variables, so
    all the nested tangents add up into one."""
    out = None
    todo = [g]
    while todo:
        g = todo.pop()
        if g is None or isinstance(g, AbstractZero):
            continue
        for n in names:
            todo.append(field(g, n))
        out = add(out, without_fields(g, names))
    return out


def fold_self_adjoint(gg, g, names):
    """The adjoint of fold_self (linear in g): every nested tangent gets gg's fields."""
    if not isinstance(g, Tangent) or gg is None or isinstance(gg, AbstractZero):
        return None
    fields = {}
    for k, v in g._fields.items():
        fields[k] = fold_self_adjoint(gg, v, names) if k in names else field(gg, k)
    return Tangent(g.primal_type, **fields)


def without_fields(g, names):
    """A function tangent without the given fields (None if nothing is left)."""
    if not isinstance(g, Tangent):
        return g
    rest = {k: v for k, v in g._fields.items() if k not in names}
    return Tangent(g.primal_type, **rest) if rest else None


def expand(g, n):
    if g is None or isinstance(g, AbstractZero):
        return (None,) * n
    g = tuple(g)
    return g + (None,) * (n - len(g))


def dict_or_empty(d):
    return {} if d is None else d


def seq(it):
    """A sequence to iterate over that can also be indexed by the backward pass."""
    if type(it) in (list, tuple, range) or isinstance(it, np.ndarray):
        return it
    if isinstance(it, dict):
        return list(it)
    return list(it)


def item_grad(acc_, sequence, k, g):
    """Add g at position k of the gradient of a sequence iterated over.

    The accumulator is updated in place (O(1) a step) only when it is ours and nothing
    else holds it: when gradients are nested, the outer level keeps references to
    earlier values, and those must not change under it.
    """
    if g is None or isinstance(g, AbstractZero):
        return acc_
    if isinstance(sequence, np.ndarray):
        if acc_ is None:
            acc_ = np.zeros(sequence.shape, dtype=np.result_type(sequence.dtype, float))
            _own(acc_)
        elif not (_owned(acc_) and sys.getrefcount(acc_) <= _PRIVATE_REFS):
            acc_ = np.array(acc_, dtype=np.result_type(acc_.dtype, sequence.dtype, float))
            _own(acc_)
        acc_[k] += g
        return acc_
    n = len(sequence)
    if acc_ is None:
        acc_ = GradList([None] * n)
    elif not (type(acc_) is GradList and sys.getrefcount(acc_) <= _PRIVATE_REFS):
        acc_ = GradList(list(acc_) + [None] * (n - len(acc_)))
    acc_[k] = add(acc_[k], g)
    return acc_


def _count_private_refs():
    """References to a value that only one variable of a calling function holds, as
    ``sys.getrefcount`` sees them from a function it was passed to: the caller's
    variable, this function's argument, and getrefcount's own on CPython 3.11 (counted,
    not assumed: interpreters differ)."""

    def probe(obj):
        return sys.getrefcount(obj)

    def holder():
        a = np.zeros(1)
        return probe(a)

    return holder()


# references to an accumulator that only generated code holds
_PRIVATE_REFS = _count_private_refs()


def _count_temp_refs():
    """References to a temporary passed straight to a function (``f(g(x))``), as seen
    there by ``sys.getrefcount``: one fewer than a variable's, since no name holds it."""

    def probe(obj):
        return sys.getrefcount(obj)

    return probe(np.zeros(1))


_TEMP_REFS = _count_temp_refs()


_OWNED = {}


def _own(a):
    import weakref

    _OWNED[id(a)] = weakref.ref(a, lambda _r, i=id(a): _OWNED.pop(i, None))


def _owned(a):
    r = _OWNED.get(id(a))
    return r is not None and r() is a


def getitem_grad(obj, idx, g):
    """The gradient of obj from the gradient g of obj[idx] (getindex's adjoint: setindex)."""
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(g, Thunk):
        g = g.unthunk()
    if isinstance(obj, np.ndarray):
        dtype = np.result_type(obj.dtype, np.asarray(g).dtype, float)
        out = np.zeros(obj.shape, dtype=dtype)
        if _is_basic_index(idx):
            out[idx] += g
        else:  # scatter-add: repeated positions accumulate (since NumPy 1.25 as fast
            np.add.at(out, idx, g)  # as a plain write)
        if not np.iscomplexobj(obj) and np.iscomplexobj(out):
            out = out.real
        return out
    if isinstance(obj, dict):
        return {idx: g}
    if isinstance(obj, (list, tuple)):
        n = len(obj)
        out = [None] * n
        if isinstance(idx, slice):
            for j, i in enumerate(range(*idx.indices(n))):
                out[i] = part(g, j)
        else:
            out[idx] = g
        return tuple(out) if isinstance(obj, tuple) else GradList(out)
    if isinstance(obj, str):
        return None
    raise NotDifferentiableError(f"no gradient for indexing a {type(obj).__name__}")


class Scattered:
    """The adjoint of ``obj[idx]`` for an array obj, before it is written out: g at idx of
    an array of zeros shaped like obj.

    Generated code asks for one (``getitem_grad_sparse``) only where passes/sparse.py
    has checked that nothing but ``unbroadcast``, unary minus, ``acc`` and None tests
    reads it, so it never reaches a rule or the user: ``acc`` adds the few positions into
    the other contribution instead of adding a whole array of zeros to it, and a
    reduction by ``unbroadcast`` (a row sum) reads only them."""

    __slots__ = ("shape", "dtype", "idx", "g")

    def __init__(self, shape, dtype, idx, g):
        self.shape, self.dtype, self.idx, self.g = shape, dtype, idx, g

    def __neg__(self):
        return Scattered(self.shape, self.dtype, self.idx, -self.g)

    def add_into(self, out, copy=False):
        """out + self: into out itself (an array nobody else holds), a copy of it (copy),
        or, out None, an array of zeros."""
        if out is None:
            out = np.zeros(self.shape, self.dtype)
        elif copy or type(out) is not np.ndarray or out.dtype != self.dtype:
            out = np.array(np.broadcast_to(out, self.shape), dtype=np.result_type(out, self.dtype))
        flat = self.flat(self.shape)
        if flat is not None and out.flags.c_contiguous and out.dtype == self.dtype:
            np.add.at(out.reshape(-1), flat, self.g)  # one index: several times faster
        elif _is_basic_index(self.idx):
            out[self.idx] += self.g
        else:  # repeated positions accumulate
            np.add.at(out, self.idx, self.g)
        return out

    def flat(self, shape, keep=None):
        """The positions as flat indices into an array of shape (the axes not in keep
        taken at 0), when the index is one integer array per axis; else None. The
        indices are valid: the primal read x[idx] succeeded."""
        idx = self.idx
        if not (type(idx) is tuple and len(idx) == len(shape) and all(
                type(i) is np.ndarray and i.dtype.kind in "iu" for i in idx)):
            return None
        if keep is None:
            return np.ravel_multi_index(idx, shape, mode="wrap")  # wrap: negative indices
        # the reduced axes have size 1: the kept ones alone place an element
        kept = [(i, n) for i, n, k in zip(idx, shape, keep) if k]
        if not kept:
            flat = np.zeros(idx[0].shape, np.intp)
        elif len(kept) == 1:
            flat = np.remainder(kept[0][0], kept[0][1])
        else:
            flat = np.ravel_multi_index(
                tuple(i for i, _ in kept), tuple(n for _, n in kept), mode="wrap")
        first = idx[0].shape
        if any(i.shape != first for i in idx):
            flat = np.broadcast_to(flat, np.broadcast_shapes(*(i.shape for i in idx)))
        return flat

    def reduce_to(self, like):
        """unbroadcast(self, like): summed over the axes where like has size 1, reading
        only the nonzeros when the index is one integer array per axis."""
        shape = like.shape
        if len(shape) == len(self.shape) and all(
                n == m or n == 1 for n, m in zip(shape, self.shape)):
            flat = self.flat(shape, [n != 1 for n in shape])
            if flat is not None:
                size = math.prod(shape)
                g = self.g
                if np.shape(g) != flat.shape:
                    g = np.broadcast_to(g, flat.shape)
                if self.dtype == np.float64 and type(g) is np.ndarray:
                    out = np.bincount(flat.reshape(-1), g.reshape(-1), size)
                else:
                    out = np.zeros(size, self.dtype)
                    np.add.at(out, flat, g)
                return unbroadcast(out.reshape(shape), like)
        return unbroadcast(self.add_into(None), like)


def dense(v):
    """v, with a Scattered written out as an array (see passes/sparse.py)."""
    return v.add_into(None) if type(v) is Scattered else v


def getitem_grad_sparse(obj, idx, g):
    """getitem_grad as a Scattered for a float array obj (else the array itself). Only
    generated code that passes/sparse.py checked calls it."""
    if type(obj) is np.ndarray and obj.dtype.kind in "fc" and (
        type(g) is float or type(g) is np.ndarray or isinstance(g, np.floating)
    ):
        dtype = np.result_type(obj.dtype, g.dtype if type(g) is not float else float, float)
        if dtype == obj.dtype:
            return Scattered(obj.shape, dtype, idx, g)
    return getitem_grad(obj, idx, g)


def acc_getitem_grad(acc_, obj, idx, g):
    """``acc(acc_, getitem_grad(obj, idx, g))`` for generated code's accumulators: g is
    added at idx of the accumulator, in place when only the calling variable holds it
    (see ``acc``), else in a copy. Reading x[i] in a loop costs O(1) a step, not a zero
    array the size of x and an addition."""
    if (
        type(acc_) is np.ndarray
        and type(obj) is np.ndarray
        and acc_.shape == obj.shape
        and (type(g) is float or isinstance(g, (np.ndarray, np.generic)))
        and acc_.dtype == np.result_type(obj.dtype, float if type(g) is float else g.dtype, float)
    ):
        if not (acc_.base is None and sys.getrefcount(acc_) <= _PRIVATE_REFS and acc_.flags.writeable):
            acc_ = acc_.copy()
        if _is_basic_index(idx):
            acc_[idx] += g
        else:  # repeated positions accumulate, as in getitem_grad
            np.add.at(acc_, idx, g)
        return acc_
    return acc(acc_, getitem_grad(obj, idx, g))


def _list_slice_grad(obj, positions, g):
    if g is None or isinstance(g, AbstractZero):
        return None
    out = [None] * len(obj)
    for j, i in enumerate(positions):
        out[i] = part(g, j)
    return GradList(out)


def _is_basic_index(idx):
    if isinstance(idx, (int, slice, type(None), type(Ellipsis))):
        return True
    if isinstance(idx, tuple):
        return all(isinstance(i, (int, slice, type(None), type(Ellipsis))) for i in idx)
    return False


def attr_grad(obj, name, g):
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(obj, np.ndarray):
        if name in ("T",):
            return np.transpose(g)
        if name == "mT":
            return np.swapaxes(g, -1, -2)
        if name == "real":
            return np.real(g) if np.iscomplexobj(obj) else g
        if name == "imag":
            return 1j * np.real(g)
    raise NotDifferentiableError(f"no gradient for the attribute .{name} of {type(obj).__name__}")


def append(lst, v):
    """lst.append(v) in differentiated code: the index v went to (lists), or the pullback
    of a Python append method (other objects)."""
    if type(lst) is list or type(lst) is GradList:
        n = len(lst)
        lst.append(v)
        return n
    return call_method(lst, "append", v)[1]


def extend(lst, vs):
    """lst.extend(vs) in differentiated code: (where the new items start, how many);
    the pullback of a Python extend method for other objects."""
    if type(lst) is list or type(lst) is GradList:
        n = len(lst)
        vs = list(vs)
        lst.extend(vs)
        return (n, len(vs))
    return call_method(lst, "extend", vs)[1]


def unextend(b_lst, where, vs):
    """Undo lst.extend(vs) on the gradient: (gradient of the shorter list, gradient of vs)."""
    if callable(where):
        grads = where(None)
        return grads[0], grads[1]
    n, k = where
    if b_lst is None or isinstance(b_lst, AbstractZero):
        return None, None
    items = [b_lst[i] if i < len(b_lst) else None for i in range(n, n + k)]
    g_vs = None if all(g is None for g in items) else (tuple(items) if isinstance(vs, tuple) else items)
    return GradList(list(b_lst)[:n]), g_vs


def unextend_adjoint(g, b_lst, where):
    """The adjoint of unextend (linear in b_lst): the two parts put back together."""
    if g is None or isinstance(g, AbstractZero) or callable(where):
        return None
    n, k = where
    head, items = part(g, 0), part(g, 1)
    length = len(b_lst) if isinstance(b_lst, (list, tuple)) else n + k
    out = list(head) if head is not None else [None] * n
    out += [None] * (length - len(out))
    for j in range(k):
        if items is not None and n + j < length:
            out[n + j] = add(out[n + j], part(items, j))
    return out


def pop(lst, *index):
    """v = lst.pop(i) in differentiated code: (v, (position, length after))."""
    if type(lst) is list or type(lst) is GradList:
        i = index[0] if index else -1
        pos = i + len(lst) if i < 0 else i
        v = lst.pop(pos)
        return v, (pos, len(lst))
    v, pb = call_method(lst, "pop", *index)
    return v, pb


def unpop(b_lst, where, b_v):
    """Undo v = lst.pop(i) on the gradient: the list's gradient with b_v put back."""
    if callable(where):
        return where(b_v)[0]
    pos, n_after = where
    if (b_lst is None or isinstance(b_lst, AbstractZero)) and b_v is None:
        return None
    out = list(b_lst) if b_lst is not None and not isinstance(b_lst, AbstractZero) else []
    out += [None] * (n_after - len(out))
    out.insert(pos, b_v)
    return GradList(out)


def insert(lst, i, v):
    """lst.insert(i, v) in differentiated code: the position v went to."""
    if type(lst) is list or type(lst) is GradList:
        pos = max(0, min(len(lst), i + len(lst) if i < 0 else i))
        lst.insert(pos, v)
        return pos
    return call_method(lst, "insert", i, v)[1]


def uninsert(b_lst, pos):
    """Undo lst.insert(i, v) on the gradient: (gradient of the shorter list, of v)."""
    if callable(pos):
        grads = pos(None)
        return grads[0], grads[2]
    if b_lst is None or isinstance(b_lst, AbstractZero):
        return None, None
    out = list(b_lst)
    g = out.pop(pos) if pos < len(out) else None
    return GradList(out), g


def uninsert_adjoint(g, b_lst, pos):
    """The adjoint of uninsert (linear in b_lst): the item's part put back at pos."""
    if g is None or isinstance(g, AbstractZero) or callable(pos):
        return None
    head, item = part(g, 0), part(g, 1)
    if head is None and item is None:
        return None
    length = len(b_lst) if isinstance(b_lst, (list, tuple)) else None
    out = list(head) if head is not None else []
    if length is not None:
        out += [None] * (length - 1 - len(out))
    out.insert(pos, item)
    return out


def unpop_adjoint(g, where):
    """The adjoint of unpop in its two gradients (linear): (list part, popped part)."""
    if g is None or isinstance(g, AbstractZero) or callable(where):
        return None, None
    pos, n_after = where
    out = list(g) + [None] * (n_after + 1 - len(g))
    item = out.pop(pos)
    return out, item


def unappend(b_lst, n):
    """Undo lst.append(v) on the gradient: (gradient of the shorter list, gradient of v)."""
    if callable(n):  # an object's own append method: run its pullback
        grads = n(None)
        return grads[0], grads[1]
    if b_lst is None or isinstance(b_lst, AbstractZero):
        return None, None
    g = b_lst[n] if n < len(b_lst) else None
    return GradList(list(b_lst)[:n]), g


def unappend_adjoint(g, b_lst, n):
    """The adjoint of unappend (a linear map of b_lst): the two parts put back together."""
    if g is None or isinstance(g, AbstractZero):
        return None
    head, item = part(g, 0), part(g, 1)
    if head is None and item is None:
        return None
    length = len(b_lst) if isinstance(b_lst, (list, tuple)) else n + 1
    out = list(head) if head is not None else [None] * n
    out += [None] * (length - len(out))
    if n < length:
        out[n] = add(out[n], item)
    return out


def setitem(obj, idx, v):
    """obj[idx] = v, copy on write: the old container stays intact for the backward pass.

    An array that nothing but the generated code's own variable refers to (no alias, no
    view, no tape entry, not the caller's argument: its reference count says so) is
    written in place, as Python would: nobody can see the old values, and the pullback
    only reads its shape (the reverse pass saves it otherwise, which adds a reference).
    A loop writing ``H[t] = h`` is then O(1) per step instead of a copy of H.
    """
    if isinstance(obj, np.ndarray):
        tv = type(v)
        if tv is np.ndarray:
            complex_v = v.dtype.kind == "c"
        else:
            complex_v = tv is not float and tv is not int and np.iscomplexobj(v)
        if complex_v and obj.dtype.kind != "c":
            out = obj.astype(complex)
        elif (
            type(obj) is np.ndarray
            and obj.base is None
            and sys.getrefcount(obj) <= _PRIVATE_REFS
            and obj.flags.writeable
        ):
            out = obj
        else:
            out = obj.copy()
        out[idx] = v
        if _KEEP_DEPTH and out is not obj:
            _REPLACED.append(obj)
        return out
    if isinstance(obj, list):
        out = list(obj)
        out[idx] = v
    elif isinstance(obj, dict):
        out = dict(obj)
        out[idx] = v
    else:
        obj[idx] = v
        return obj
    if _KEEP_DEPTH:
        _REPLACED.append(obj)
    return out


# A callee that writes into an array, list or dict it was given writes into a copy (see
# setitem): a caller that reads its own variable afterwards would see the old values,
# where Python shows the write. Generated code calls such functions through
# call_keeping, naming the arguments it reads again; while one runs, setitem logs the
# containers it copied, and call_keeping raises if one of them is such an argument.
_KEEP_DEPTH = 0
_REPLACED = []


def call_keeping(keep, f, /, *args, **kwargs):
    """call(f, *args, **kwargs) for a caller that reads args[i], i in keep, afterwards:
    an error instead of a stale value if f wrote into one of them (copy on write)."""
    return keeping(keep, f, args, call, kwargs)


def call_primal_keeping(keep, f, /, *args, **kwargs):
    """call_primal(f, *args, **kwargs) for a caller that reads args[i], i in keep,
    afterwards: a callee changing one in place (`a op= v`) leaves its new value for the
    caller to take with kept(), as Python shows it (see call_keeping)."""
    return keeping(keep, f, args, call_primal, kwargs)


def keeping(keep, f, args, run, kwargs):
    """run(f, *args, **kwargs), raising MutationError if it copied args[i] on write for
    an i in keep (call_keeping, and its rule for differentiating generated code again)."""
    global _KEEP_DEPTH
    mark = len(_REPLACED)
    rmark = len(_REBOUND)
    _KEEP_DEPTH += 1
    try:
        out = run(f, *args, **kwargs)
        if len(_REPLACED) > mark or len(_REBOUND) > rmark:
            for k in keep:  # a position, or (position, the other name it is read by)
                i, via = (k, None) if type(k) is int else k
                a = args[i]
                if any(r is a for r in _REPLACED[mark:]):
                    raise _written_argument(f, i, via or None)
                final = a
                for old, new in _REBOUND[rmark:]:
                    if old is final:
                        final = new
                if final is not a:
                    if via is not None:  # read through another name (or False: a method)
                        raise _written_argument(f, i, via or None)
                    _KEPT[id(a)] = (a, final)  # the caller takes it with kept()
        return out
    finally:
        _KEEP_DEPTH -= 1
        if not _KEEP_DEPTH:
            _REPLACED.clear()
            _REBOUND.clear()


_REBOUND = []  # (old, new): an argument rebound by `a op= v` while a keeping call runs
_KEPT = {}  # id(argument) -> (argument, the value the callee left in it), for kept()


def rebinding(old, new):
    """Generated before `a = new` for `a op= v` on a parameter: Python changes an array,
    list or dict in place there, and a caller reading its own variable again sees the
    change; differentiated code rebinds. Logged, so that call_keeping hands the new
    value to the caller (kept), as Python shows it."""
    if _KEEP_DEPTH and new is not old and isinstance(old, (np.ndarray, list, dict)):
        _REBOUND.append((old, new))


def setitem_arg(obj, idx, v):
    """setitem for a parameter of the calling function: a copy it made (copy on write)
    is logged as a rebinding, so that a caller reading its own variable again takes the
    written container (kept), as Python shows the write."""
    n = len(_REPLACED)
    out = setitem(obj, idx, v)
    if len(_REPLACED) > n:
        del _REPLACED[n:]
        _REBOUND.append((obj, out))
    return out


def kept(a):
    """The value a callee left in the argument a (`a op= v` inside it: see rebinding),
    or a itself: the caller rebinds its variable to it, as Python would show it."""
    entry = _KEPT.pop(id(a), None)
    return entry[1] if entry is not None and entry[0] is a else a


def hand_over(obj, g):
    """put_items for any value: the caller's gradient of obj after a call, for a callee
    that rebound its argument (see kept) to take (take_items); None if stored."""
    if g is None or isinstance(g, AbstractZero):
        return g
    return _store_items(obj, g)


def check_shared(value, other, name, other_name, op, line):
    """Generated before a write into `name` (``name[i] = v``, or ``name op= v`` when op is
    given) while `other_name` may name the same container and is read afterwards, where
    that depends on values: differentiated code writes a copy (or rebinds), so the other
    name would keep the old values where Python shows the new ones. Raises MutationError
    when they do share: arrays sharing memory, `value` an element of the list or dict
    `other`, or the same container."""
    if isinstance(value, (int, float, complex, str, tuple, np.generic)) or value is None:
        return  # numbers: `a += v` rebinds in Python too; they cannot be written into
    element = False
    if isinstance(value, np.ndarray) and isinstance(other, np.ndarray):
        shared = np.may_share_memory(value, other)
    elif isinstance(other, (list, dict)) and other is not value:
        items = other.values() if isinstance(other, dict) else other
        shared = element = any(item is value for item in items)
    else:
        shared = other is value
    if shared:
        what, hint = shared_write_message(name, other_name, op, element)
        raise MutationError(f"{what}, in differentiated code at {_user_file()}, line {line}: {hint}")


def _user_file():
    """The user's file that the generated code calling check_shared came from."""
    gname = sys._getframe(2).f_code.co_filename
    head = linecache.getline(gname, 1)
    if "(" in head and ", line" in head:
        return head[head.index("(") + 1:head.rindex(", line")]
    return gname


_GENERATED = "# generated by adjoint_s2s from "


def _user_site():
    """(function, file, line) of the user's statement that the innermost generated code on
    the stack is running: the function from the first line of the generated source, the
    statement from the `# ...` comment above the running line, found again in the user's
    file below the function's first line. None when no generated code is running."""
    frame = sys._getframe(1)
    while frame is not None:
        gname = frame.f_code.co_filename
        if gname.startswith("<adjoint_s2s: "):
            first = linecache.getline(gname, 1)
            if first.startswith(_GENERATED):
                break
        frame = frame.f_back
    else:
        return None
    desc = first[len(_GENERATED):].strip()  # f (path, line N)
    try:
        fname = desc[:desc.index(" (")]
        path = desc[desc.index(" (") + 2:desc.rindex(", line ")]
        start = int(desc[desc.rindex(", line ") + 7:-1])
    except ValueError:
        return None
    lines = linecache.getlines(gname)
    origin = None
    for k in range(min(frame.f_lineno, len(lines)) - 2, 0, -1):
        text = lines[k].strip()
        if text.startswith("def "):
            break
        if text.startswith("# "):
            origin = text[2:]
            break
    line = start
    if origin:
        for n, text in enumerate(linecache.getlines(path)[start - 1:], start):
            text = text.strip()
            if text and (text.startswith(origin) or origin.startswith(text)):
                line = n
                break
    return fname, path, line


def _at():
    """' (at path, line N, in f)' for an error raised under generated code, or ''."""
    site = _user_site()
    return f" (at {site[1]}, line {site[2]}, in {site[0]})" if site else ""


def _written_argument(f, i, via=None):
    code = getattr(f, "__code__", None)
    if code is not None and i < code.co_argcount:
        what = f"its argument `{code.co_varnames[i]}`"
    else:
        what = f"its argument #{i + 1}"
    name = short_name(f).rsplit(".", 1)[-1]
    if via is None:
        read = "the calling function reads that container again after the call"
        way = (f"Return the container from {name} and rebind it (`x = {name}(x, ...)`), or "
               f"pass a copy the caller does not read again")
    else:
        read = (f"the calling function reads it again after the call through `{via}`, "
                f"another name for it or a view of it")
        way = (f"Take `{via}` after the call, or pass {name} a copy "
               f"(`{name}(x.copy(), ...)`)")
    return MutationError(
        f"{describe(f)} writes into {what} (directly or through a function it calls), "
        f"and {read}. Inside differentiated code a write into an array, list or dict that "
        f"other code still refers to goes to a copy, so the caller would keep the old "
        f"values where Python shows the new ones. {way}"
    )


def setitem_grad_acc(b_new, old, idx, v, acc_):
    """``b_old, g_v = setitem_grad(b_new, old, idx, v)`` and then ``acc(acc_, g_v)``, as
    one call: for an array written into a row of another (``H[t] = h`` in a loop), the
    row's adjoint is added straight into v's accumulator when only the calling variables
    hold the two arrays, with no copy of the row."""
    if (
        type(b_new) is np.ndarray
        and type(acc_) is np.ndarray
        and type(v) is np.ndarray
        and acc_.shape == v.shape
        and b_new.base is None
        and acc_.base is None
        and b_new.flags.writeable
        and acc_.flags.writeable
        and sys.getrefcount(b_new) <= _PRIVATE_REFS
        and sys.getrefcount(acc_) <= _PRIVATE_REFS
    ):
        row = b_new[idx]
        if (type(row) is np.ndarray and row.shape == acc_.shape and row.dtype == acc_.dtype
                and _lost_writes(b_new.shape, idx) is None):
            acc_ += row
            b_new[idx] = 0
            return b_new, acc_
    b_old, g_v = setitem_grad(b_new, old, idx, v)
    return b_old, acc(acc_, g_v)


def _lost_writes(shape, idx):
    """For ``a[idx] = v`` (a of this shape): a mask broadcastable over the written region,
    False where a later element of v overwrites the same position (an index array that
    repeats a position: NumPy writes in order, the last one stays), or None when none
    does. Basic and boolean indices cannot repeat a position; an index array is checked
    by letting NumPy write the element numbers and reading back which one stayed."""
    if type(idx) is list and idx and type(idx[0]) is int:
        idx = np.asarray(idx)
    if type(idx) is np.ndarray:  # one index array, along the first axis: the fast case
        if idx.dtype.kind not in "iu" or idx.size < 2 or not shape:
            return None
        flat = idx.ravel()
        if flat.size <= 64:  # a few positions: a set says it sooner than NumPy
            lst = flat.tolist()
            if min(lst) >= 0 and len(set(lst)) == len(lst):
                return None
        order = np.arange(flat.size, dtype=np.intp)
        pos = np.empty(shape[0], dtype=np.intp)
        pos[flat] = order
        kept = pos[flat] == order
        if kept.all():
            return None
        return kept.reshape(idx.shape + (1,) * (len(shape) - 1))
    if _is_basic_index(idx):
        return None
    parts = idx if isinstance(idx, tuple) else (idx,)
    if not any(
        isinstance(p, (list, np.ndarray)) and np.asarray(p).dtype != bool and np.size(p) > 1
        for p in parts
    ):
        return None
    pos = np.empty(shape, dtype=np.intp)
    region = np.shape(pos[idx])
    order = np.arange(int(np.prod(region)), dtype=np.intp).reshape(region)
    pos[idx] = order
    kept = pos[idx] == order
    return None if kept.all() else kept


def setitem_grad(b_new, old, idx, v=None):
    """Adjoint of new = setitem(old, idx, v): (gradient of old, gradient of v).

    A value broadcast into several places (a scalar into a slice) gets the sum. Where an
    index array repeats a position, only the element written last reaches the result: the
    others get a zero gradient."""
    if type(b_new) is np.ndarray and type(v) is np.ndarray:  # an array row into an array
        g_v = b_new[idx]
        if type(g_v) is np.ndarray:
            g_v = g_v.copy()
            lost = _lost_writes(b_new.shape, idx)
            if lost is not None:
                np.copyto(g_v, 0, where=~lost)
            if g_v.shape != v.shape:
                g_v = unbroadcast(g_v, v)
            private = b_new.base is None and b_new.flags.writeable
            b_old = b_new if private and sys.getrefcount(b_new) <= _PRIVATE_REFS else b_new.copy()
            b_old[idx] = 0
            return b_old, g_v
    if b_new is None or isinstance(b_new, AbstractZero):
        return None, None
    if isinstance(b_new, Thunk):
        b_new = b_new.unthunk()
    if isinstance(b_new, np.ndarray):
        part_ = b_new[idx]
        g_v = part_.copy() if isinstance(part_, np.ndarray) else part_
        if isinstance(part_, np.ndarray):
            lost = _lost_writes(b_new.shape, idx)
            if lost is not None:
                np.copyto(g_v, 0, where=~lost)
        if v is not None and np.shape(g_v) != np.shape(v):
            g_v = unbroadcast(np.asarray(g_v), v) if isinstance(v, np.ndarray) else np.sum(g_v)
        del part_  # a view of b_new holds it too
        # the gradient array is reused when nothing else holds it (O(1) per write in a
        # loop instead of a copy): not when another adjoint is the same array (b_v below
        # `b_a1 = unbroadcast(b_add, a1); b_v = unbroadcast(b_add, v)`)
        private = b_new.base is None and b_new.flags.writeable
        b_old = b_new if private and sys.getrefcount(b_new) <= _PRIVATE_REFS else b_new.copy()
        b_old[idx] = 0
        return b_old, g_v
    if isinstance(b_new, dict):
        b_old = dict(b_new)
        g_v = b_old.pop(idx, None)
        return b_old, g_v
    b_old = list(b_new) + [None] * (len(old) - len(b_new)) if isinstance(old, list) else list(b_new)
    if isinstance(idx, slice):
        rng = range(*idx.indices(len(b_old)))
        g_v = [b_old[i] for i in rng]
        for i in rng:
            b_old[i] = None
    else:
        g_v = b_old[idx] if idx < len(b_old) else None
        if idx < len(b_old):
            b_old[idx] = None
    return GradList(b_old), g_v


# ----- kinds of run-time values ---------------------------------------------------------------

KIND = {
    float: REAL,
    int: REAL,
    complex: COMPLEX,
    np.ndarray: ARRAY,
    bool: CONST,
    str: CONST,
    type(None): CONST,
    np.float64: REAL,
    bytes: CONST,
}


def kinds_of(args):
    return tuple([KIND.get(type(a), OTHER) for a in args])


def _cell_kind(cell):
    try:
        return KIND.get(type(cell.cell_contents), OTHER)
    except ValueError:
        return OTHER


# ----- dispatch ---------------------------------------------------------------------------


def call(f, /, *args, **kwargs):
    """(y, pullback) of f(*args, **kwargs); the pullback returns (df, *dargs[, dkwargs]).

    The hot path: a plain function already seen with arguments of these types finds its
    pair in a dict on the function object (cleared whenever a rule changes).
    """
    if kwargs:
        return _call_kw(f, args, kwargs)
    if type(f) is types.FunctionType:
        n = len(args)
        try:
            hit = f.__adjoint_pairs__[
                (type(args[0]), type(args[1])) if n == 2
                else (type(args[0]),) if n == 1
                else tuple(map(type, args))
            ]
        except (AttributeError, KeyError):
            hit = None  # resolved below, outside the handler (no chained exceptions)
        if (
            hit is None
            or (hit[0] is not None and hit[0] != _cell_kinds(f))
            or (hit[3] and not globals_fit(f.__globals__, hit[3]))
        ):
            return _function_pair(f, args)(*args)
        return hit[1](*args)
    return resolve(f, len(args))(*args)


def globals_fit(g, guard):
    """Whether the data globals the generated code assumed still have its kinds."""
    for name, typ, kind in guard:
        v = g.get(name)
        if type(v) is not typ or (kind is not None and v.dtype.kind != kind):
            return False
    return True


_CACHED_FUNCTIONS = weakref.WeakSet()  # functions that hold a pair cache


def forget_pairs():
    """Drop the pair caches of every function (a rule changed)."""
    for fn in list(_CACHED_FUNCTIONS):
        fn.__dict__.pop("__adjoint_pairs__", None)
    _CACHED_FUNCTIONS.clear()


_LIBRARY_FILES = {}  # code file -> whether it belongs to an installed library


def is_library_code(code):
    """Whether code comes from the standard library or an installed package (NumPy, SciPy,
    ...), not from the user's program nor from adjoint_s2s itself."""
    return is_library_file(code.co_filename)


def is_library_file(filename):
    known = _LIBRARY_FILES.get(filename)
    if known is None:
        known = _LIBRARY_FILES[filename] = _library_file(filename)
    return known


def _library_file(filename):
    import os
    import sysconfig

    if filename.startswith("<"):
        return False
    path = os.path.realpath(filename)
    if path.startswith(os.path.dirname(os.path.realpath(__file__)) + os.sep):
        return False  # adjoint_s2s's own code, wherever it is installed
    roots = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots |= {os.path.dirname(os.path.realpath(np.__file__))}
    return any(path.startswith(os.path.realpath(r) + os.sep) for r in roots if r)


def _cell_kinds(f):
    return tuple([_cell_kind(c) for c in f.__closure__]) if f.__closure__ else None


def call_primal(f, /, *args, **kwargs):
    """f(*args, **kwargs) as differentiated code sees it: rules run, no pullback is kept."""
    if type(f) is types.FunctionType:
        if f.__closure__ is None and R.lookup_user(f) is None and is_library_code(f.__code__):
            # no argument depends on the inputs and it captures nothing: its value is a
            # constant, and a library's internals (np.issubdtype's try) are not ours to read
            return f(*args, **kwargs)
        return call(f, *args, **kwargs)[0]
    if isinstance(f, (types.BuiltinFunctionType, type)) and R.lookup_user(f) is None:
        if not isinstance(f, type) or not _python_class(f):
            return f(*args, **kwargs)
    return call(f, *args, **kwargs)[0]


def _python_class(cls):
    import dataclasses

    return (
        dataclasses.is_dataclass(cls)
        or isinstance(getattr(cls, "__init__", None), types.FunctionType)
        or (issubclass(cls, tuple) and hasattr(cls, "_fields"))
    )


def call_method(obj, name, /, *args, **kwargs):
    """(y, pullback) of obj.name(*args); the pullback returns (dobj, *dargs)."""
    meth = getattr(type(obj), name, None)
    if isinstance(meth, types.FunctionType):
        y, pb = call(meth, obj, *args, **kwargs)
        return y, _drop_first(pb)
    if isinstance(meth, (staticmethod,)):
        y, pb = call(meth.__func__, *args, **kwargs)
        return y, lambda g: (None,) + tuple(pb(g)[1:])
    bound = getattr(obj, name)
    if isinstance(bound, types.MethodType) and isinstance(bound.__func__, types.FunctionType):
        # a classmethod or an instance attribute holding a method
        y, pb = call(bound, *args, **kwargs)
        return y, lambda g: (None,) + tuple(pb(g)[1:])
    if meth is not None:
        rule = _method_rule(type(obj), name, meth)
        if rule is not None:
            return rule(obj, *args, **kwargs)
    if isinstance(obj, types.ModuleType) or isinstance(obj, type):
        fn = getattr(obj, name)
        y, pb = call(fn, *args, **kwargs)
        return y, lambda g: (None,) + tuple(pb(g)[1:])
    if name in _DUNDER_OPS and type(bound).__name__ == "method-wrapper" and not kwargs:
        return _dunder_pair(bound)(*args)  # x.__mul__(v): its pullback gives (dx, dv)
    if callable(bound) and not isinstance(bound, types.BuiltinMethodType):
        y, pb = call(bound, *args, **kwargs)
        return y, lambda g: (None,) + tuple(pb(g)[1:])
    raise MissingAdjointError(
        bound, f"the method .{name} of {type(obj).__name__} has no rule and no Python source"
        + _at()
    )


def call_method_keeping(keep, obj, name, /, *args, **kwargs):
    """call_method for a caller that reads args[i], i in keep, again (see call_keeping)."""
    meth = getattr(type(obj), name, None)
    if isinstance(meth, types.FunctionType):
        # (k + 1, False): a method's argument rebound by `a op= v` is not handed back to
        # the caller (kept): refused, as a write into it
        y, pb = call_keeping(tuple((k + 1, False) if type(k) is int else (k[0] + 1, k[1]) for k in keep), meth, obj, *args, **kwargs)
        return y, _drop_first(pb)
    return call_method(obj, name, *args, **kwargs)


def call_method_primal(obj, name, /, *args, **kwargs):
    meth = getattr(type(obj), name, None)
    if isinstance(meth, types.FunctionType):
        return call(meth, obj, *args, **kwargs)[0]
    return getattr(obj, name)(*args, **kwargs)


def _drop_first(pb):
    def method_pullback(g):
        grads = pb(g)
        return tuple(grads[1:])

    return method_pullback


_METHOD_RULES = {}


def method_rule(cls, name):
    """Register the pair of ``obj.name(...)`` for objects of a builtin type cls."""

    def deco(pair):
        _METHOD_RULES[(cls, name)] = pair
        return pair

    return deco


@method_rule(dict, "items")
def _dict_items(d):
    keys = list(d)

    def items_pullback(g):
        if g is None or isinstance(g, AbstractZero):
            return (None,)
        return ({k: part(kv, 1) for k, kv in zip(keys, g) if part(kv, 1) is not None},)

    return list(d.items()), items_pullback


@method_rule(dict, "values")
def _dict_values(d):
    keys = list(d)

    def values_pullback(g):
        if g is None or isinstance(g, AbstractZero):
            return (None,)
        return ({k: v for k, v in zip(keys, g) if v is not None},)

    return list(d.values()), values_pullback


@method_rule(dict, "get")
def _dict_get(d, key, default=None):
    present = key in d

    def get_pullback(g):
        if present:
            return ({key: g}, None, None)
        return (None, None, g)

    return d.get(key, default), get_pullback


def _conjugate(z):
    return z.conjugate(), lambda g: (conj(g),)


for _t in (complex, float, int, np.complexfloating, np.floating):
    _METHOD_RULES[(_t, "conjugate")] = _conjugate


@method_rule(list, "copy")
def _list_copy(lst):
    return list(lst), lambda g: (None if g is None else list(g),)


@method_rule(dict, "copy")
def _dict_copy(d):
    return dict(d), lambda g: (None if g is None else dict(g),)


_NO_GRAD_TYPES = (str, bytes, bool, type(None), range, slice)
_NO_GRAD_METHODS = {"index", "count", "keys", "__len__", "__contains__"}
_NO_GRAD_RULES = {}  # (class, method name) -> its rule, built once


# ndarray methods that write into the array (np.sort returns a sorted copy, a.sort()
# sorts a) or whose np. namesake does something else (np.resize repeats, a.resize
# zero-fills): never differentiated with the rule of the np. function of the same name
_ARRAY_METHODS_IN_PLACE = frozenset({
    "sort", "partition", "fill", "put", "resize", "itemset", "setfield", "setflags",
    "byteswap", "view", "getfield", "dump", "tofile",
})


def _method_rule(cls, name, meth):
    rule = _METHOD_RULES.get((cls, name))
    if rule is None:  # numpy scalar types: look along the class hierarchy
        for base in cls.__mro__[1:]:
            rule = _METHOD_RULES.get((base, name))
            if rule is not None:
                break
    if rule is not None:
        return rule
    if issubclass(cls, _NO_GRAD_TYPES) or name in _NO_GRAD_METHODS:
        rule = _NO_GRAD_RULES.get((cls, name))
        if rule is None:
            def no_gradient_method(obj, *args, **kwargs):
                y = getattr(obj, name)(*args, **kwargs)
                n = len(args)
                return y, lambda g: (None,) * (n + 1) + (({},) if kwargs else ())

            # differentiated again (inside a pullback), it is a constant as well
            rule = _NO_GRAD_RULES[(cls, name)] = no_gradient_method
            R.NONDIFF[rule] = f"{cls.__name__}.{name} carries no gradient"
        return rule
    fn = None
    if issubclass(cls, np.ndarray):
        if name in _ARRAY_METHODS_IN_PLACE:
            raise MissingAdjointError(
                _Attribute(cls, name),
                f"the method .{name} of {cls.__name__} changes the array in place (or "
                f"differs from np.{name}) and has no rule{_at()}"
                + ("; write `a = np.sort(a)` (a sorted copy) instead" if name == "sort" else ""),
            )
        fn = R.ARRAY_METHODS.get(name) or getattr(np, name, None)
    if fn is not None:
        def ndarray_method(obj, *args, **kwargs):
            y, pb = call(fn, obj, *args, **kwargs)
            return y, lambda g: tuple(pb(g)[1:])

        return ndarray_method
    return None


_BINOPS = {
    "Add": (operator.add, "__add__", "__radd__"),
    "Sub": (operator.sub, "__sub__", "__rsub__"),
    "Mult": (operator.mul, "__mul__", "__rmul__"),
    "Div": (operator.truediv, "__truediv__", "__rtruediv__"),
    "FloorDiv": (operator.floordiv, "__floordiv__", "__rfloordiv__"),
    "Mod": (operator.mod, "__mod__", "__rmod__"),
    "Pow": (operator.pow, "__pow__", "__rpow__"),
    "MatMult": (operator.matmul, "__matmul__", "__rmatmul__"),
}
_BITOPS = {
    "BitOr": (operator.or_, "__or__", "__ror__"),
    "BitAnd": (operator.and_, "__and__", "__rand__"),
    "BitXor": (operator.xor, "__xor__", "__rxor__"),
    "LShift": (operator.lshift, "__lshift__", "__rlshift__"),
    "RShift": (operator.rshift, "__rshift__", "__rrshift__"),
}
_BINOPS.update(_BITOPS)
_NUMBERS = (int, float, complex, np.ndarray, np.number)
_BOOLS = (bool, np.bool_)
_SYMBOLS = {"BitOr": "|", "BitAnd": "&", "BitXor": "^", "LShift": "<<", "RShift": ">>",
            "Invert": "~"}


def _integral(y):
    """An integer or a bool (a number or an array of them): no tangent space."""
    if isinstance(y, (bool, int, np.integer, np.bool_)):
        return True
    return isinstance(y, np.ndarray) and y.dtype.kind in "biu"


def _no_tangent_result(fn, y, opname, *operands):
    """The pair of an operator whose result is an integer or a bool; anything else is
    refused, never given a zero gradient."""
    if _integral(y):
        n = len(operands)
        return y, lambda g: (None,) * n
    kinds = " and ".join(type(o).__name__ for o in operands)
    raise MissingAdjointError(
        fn, f"the operator {_SYMBOLS.get(opname, opname)} of {kinds} has no rule "
        f"(it gave a {type(y).__name__}, which may carry a gradient)" + _at())


def _bool_operand_pair(fn, a, b):
    """a OP b where a or b is a bool (True, np.True_) and the other a number: the bool is
    the constant 0 or 1, the number's gradient comes from the operator's rule."""
    y = fn(a, b)
    a_b, b_b = isinstance(a, _BOOLS), isinstance(b, _BOOLS)
    _, pb = resolve(fn, 2)(int(a) if a_b else a, int(b) if b_b else b)

    def bool_operand_pullback(g):
        _, da, db = pb(g)
        return (None if a_b else da, None if b_b else db)

    return y, bool_operand_pullback


def _dict_merge(a, b):
    """a | b for dicts: b's values win where both have a key."""
    def dict_merge_pullback(g):
        if g is None or isinstance(g, AbstractZero):
            return (None, None)
        return ({k: g[k] for k in a if k not in b and k in g}, {k: g[k] for k in b if k in g})

    return a | b, dict_merge_pullback


def binop(opname, a, b, inplace=False):
    """(y, pullback) of a OP b for values not known statically; pullback -> (da, db).
    inplace: from `a OP= b`, so an object's __iadd__ (& co.) is tried first."""
    fn, dunder, rdunder = _BINOPS[opname]
    if inplace and not isinstance(a, _NUMBERS):
        imeth = getattr(type(a), "__i" + dunder[2:], None)
        if isinstance(imeth, types.FunctionType):
            y, pb = call(imeth, a, b)
            if y is not NotImplemented:
                return y, _drop_first(pb)
    if opname in _BITOPS:
        if isinstance(a, _NUMBERS + (np.bool_,)) and isinstance(b, _NUMBERS + (np.bool_,)):
            return _no_tangent_result(fn, fn(a, b), opname, a, b)
        if opname == "BitOr" and type(a) is dict and type(b) is dict:
            return _dict_merge(a, b)
    if (isinstance(a, _BOOLS) or isinstance(b, np.bool_)) and (
        isinstance(a, _BOOLS + _NUMBERS) and isinstance(b, _BOOLS + _NUMBERS)
    ):
        return _bool_operand_pair(fn, a, b)
    if isinstance(a, _NUMBERS) and isinstance(b, _NUMBERS) and not isinstance(a, bool):
        y, pb = resolve(fn, 2)(a, b)
        return y, _drop_first(pb)
    if inplace and opname == "Add" and (type(a) is list or type(a) is GradList):
        # `lst += vs` extends the list in place, as Python does: every name for it (the
        # caller's too) sees the new items
        na, vs = len(a), list(b)
        a += vs
        nb, tb = len(vs), type(b)
        return a, lambda g: _split_extend(g, na, nb, tb)
    if isinstance(a, (list, tuple)) and opname == "Add" and type(a) is type(b):
        na = len(a)
        return a + b, lambda g: _split_concat(g, na)
    if isinstance(a, (list, tuple)) and opname == "Mult" and isinstance(b, int):
        return a * b, lambda g: (_fold_repeat(g, len(a), b, type(a)), None)
    if isinstance(b, (list, tuple)) and opname == "Mult" and isinstance(a, int):
        return a * b, lambda g: (None, _fold_repeat(g, len(b), a, type(b)))
    if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)) or a is None or b is None:
        return fn(a, b), lambda g: (None, None)
    meth = getattr(type(a), dunder, None)
    if isinstance(meth, types.FunctionType):
        y, pb = call(meth, a, b)
        if y is not NotImplemented:
            return y, _drop_first(pb)
    rmeth = getattr(type(b), rdunder, None)
    if isinstance(rmeth, types.FunctionType):
        y, pb = call(rmeth, b, a)
        if y is not NotImplemented:
            return y, lambda g: tuple(reversed(pb(g)[1:]))
    if isinstance(a, (Tangent, AbstractZero)) or isinstance(b, (Tangent, AbstractZero)):
        y, pb = resolve(fn, 2)(a, b)
        return y, _drop_first(pb)
    y = fn(a, b)
    raise MissingAdjointError(
        fn, f"{type(a).__name__} {_SYMBOLS.get(opname, opname)} {type(b).__name__} is not "
        "written in Python" + _at()
    )


_UNOPS = {"USub": (operator.neg, "__neg__"), "UAdd": (operator.pos, "__pos__"),
          "Invert": (operator.invert, "__invert__")}


def unop(opname, a):
    """(y, pullback) of OP a for values not known statically; pullback -> (da,)."""
    fn, dunder = _UNOPS[opname]
    if opname == "Invert" and isinstance(a, _NUMBERS + (np.bool_,)):
        return _no_tangent_result(fn, fn(a), opname, a)
    if isinstance(a, _NUMBERS):
        y, pb = resolve(fn, 1)(a)
        return y, _drop_first(pb)
    meth = getattr(type(a), dunder, None)
    if isinstance(meth, types.FunctionType):
        y, pb = call(meth, a)
        return y, _drop_first(pb)
    if isinstance(a, (tuple, list, Tangent, AbstractZero)) or a is None:
        return fn(a), lambda g: (neg(g) if opname == "USub" else g,)
    raise MissingAdjointError(fn, f"{opname} on {type(a).__name__} is not written in Python" + _at())


def _split_concat(g, na):
    if g is None or isinstance(g, AbstractZero):
        return (None, None)
    g = list(g)
    return g[:na], g[na:]


def _split_extend(g, na, nb, tb):
    """The gradients of lst and vs from that of lst after `lst += vs`."""
    if g is None or isinstance(g, AbstractZero):
        return (None, None)
    g = list(g) + [None] * (na + nb - len(g))
    items = g[na:na + nb]
    if all(v is None for v in items):
        items = None
    elif tb is tuple:
        items = tuple(items)
    return GradList(g[:na]), items


def _fold_repeat(g, n, times, typ):
    if g is None:
        return None
    out = [None] * n
    for i, v in enumerate(g):
        out[i % n] = add(out[i % n], v)
    return typ(out)


# ----- mutable objects: field gradients by identity (Zygote's IdDict for setfield!) -----------
#
# Reading a field of a mutable object adds the field's gradient to a store keyed by the
# object's identity; writing the field takes the gradient back out (it belongs to the
# value written). Constructors and the API boundary merge the store into the object's
# structural tangent. Aliases (self inside a method, the caller's name outside) share one
# entry, which is what makes mutation through methods correct.

_FIELDS = {}  # id(obj) -> [obj, {field: gradient}]


_NOT_OBJECTS = (type, types.ModuleType, types.FunctionType, np.ndarray, np.generic, list, dict,
                tuple, set, Tangent, AbstractZero, Thunk)


def is_mutable_object(obj):
    """An instance of a user class whose fields can be written (not frozen, not arrays)."""
    d = getattr(obj, "__dict__", None)
    if not isinstance(d, dict) or isinstance(obj, _NOT_OBJECTS):
        return False
    params = getattr(type(obj), "__dataclass_params__", None)
    return not (params is not None and params.frozen)


def add_field_grad(obj, name, g):
    if g is None or isinstance(g, AbstractZero):
        return
    entry = _FIELDS.get(id(obj))
    if entry is None or entry[0] is not obj:
        entry = _FIELDS[id(obj)] = [obj, {}]
    entry[1][name] = add(entry[1].get(name), g)


def take_field_grad(obj, name):
    """The gradient of obj.name at this point of the backward pass, removed from the store."""
    entry = _FIELDS.get(id(obj))
    if entry is None or entry[0] is not obj:
        return None
    return entry[1].pop(name, None)


def changes_in_place(v):
    """Does `v op= w` change v in place in Python (a list, an array, a dict)?"""
    return isinstance(v, (list, np.ndarray, dict))


def field_grad_if(moved, obj, name):
    """take_field_grad(obj, name) if `moved` (the field still holds what a name for it
    changed in place: `t = obj.items; t += vs`), else nothing."""
    return take_field_grad(obj, name) if moved else None


def take_fields(obj):
    """Every field gradient of obj, removed from the store (as a dict, or None)."""
    entry = _FIELDS.get(id(obj))
    if entry is None or entry[0] is not obj:
        return None
    del _FIELDS[id(obj)]
    return entry[1] or None


def forget_fields(obj):
    """Drop obj's field gradients: obj was made from constants, so they go nowhere."""
    take_fields(obj)


def drop_callee_fields(f):
    """After gradient or pullback's back: the field gradients the pullback left in the store
    for the function object itself (a mutable callable object, or the object of a bound
    method). Those entry points give back no tangent for the function, so they go
    nowhere; left in the store, an outer pullback that reverses the object's
    construction would take them again (a gradient counted twice)."""
    obj = getattr(f, "__self__", f)
    if is_mutable_object(obj):
        forget_fields(obj)


def with_fields(g, obj):
    """The structural tangent g of obj, plus obj's field gradients from the store."""
    fields = take_fields(obj)
    if not fields:
        return g
    t = Tangent(type(obj), **fields)
    if g is None or isinstance(g, AbstractZero):
        return t
    return add(g, t)


_ITEMS = {}  # id(container) -> [container, its tangent after the call being reversed]


def put_items(obj, g):
    """Before a callee's pullback: hand it the tangent of a container it may have mutated.
    Returns what the caller keeps: nothing for a list or dict, g for anything else."""
    if g is None or isinstance(g, AbstractZero) or not isinstance(obj, (list, dict)):
        return g
    return _store_items(obj, g)


def _store_items(obj, g):
    """Add g to the tangent stored for obj (by identity) for its callee to take."""
    entry = _ITEMS.get(id(obj))
    if entry is not None and entry[0] is obj:
        entry[1] = add(entry[1], g)
    else:
        _ITEMS[id(obj)] = [obj, g]
    return None


def move_grad(moved, a, b):
    """(a, b) of two names' gradients, or (a + b, None) when `moved`: the second name held
    the object the first changed in place (``b = a; a += v``), so its gradient joins the
    first's before the change is reversed."""
    if not moved or b is None or isinstance(b, AbstractZero):
        return a, b
    return (b if a is None or isinstance(a, AbstractZero) else add(a, b)), None


def kept_adjoint(obj, g):
    return None if isinstance(obj, (list, dict)) else g


def take_items(obj):
    """The tangent handed over by put_items (a callee that mutated obj takes it; the
    caller takes back what was not taken)."""
    entry = _ITEMS.get(id(obj))
    if entry is None or entry[0] is not obj:
        return None
    del _ITEMS[id(obj)]
    return entry[1]


def output_tangent(g, y):
    """The seed for a rule's pullback: g plus field gradients of a mutable output; None
    when both are zero."""
    if is_mutable_object(y):
        g = with_fields(g, y)
    if g is None or isinstance(g, AbstractZero):
        return None
    return g


def setattr_grad(obj, name):
    """Adjoint of `obj.name = v`: the gradient of v (taken from the store)."""
    return take_field_grad(obj, name)


def getattr_pair(obj, name):
    """(y, pullback) of obj.name; properties written in Python are differentiated."""
    prop = getattr(type(obj), name, None)
    if isinstance(prop, property) and isinstance(prop.fget, types.FunctionType):
        y, pb = call(prop.fget, obj)
        return y, lambda g: pb(g)[1]
    y = getattr(obj, name)
    if isinstance(obj, _NUMERIC_VALUES) and not isinstance(obj, bool):
        return y, _numeric_attr_pullback(obj, name)
    if isinstance(obj, (types.ModuleType, type)):
        return y, lambda g: None
    if isinstance(y, types.MethodType):
        if y.__self__ is obj:  # a bound method's tangent is its object's (see resolve)
            return y, lambda g: None if g is None or isinstance(g, AbstractZero) else g
        return y, lambda g: None  # a classmethod: bound to a class, a constant
    typ = type(obj)
    if isinstance(obj, Tangent) and name in ("_fields", "_elements"):
        # a tangent's parts read in a pullback differentiated again: the cotangent of the
        # dict of fields (tuple of elements) is a tangent with those fields (elements)
        def tangent_parts_pullback(g):
            g = seed(g)
            if g is None:
                return None
            if name == "_fields":
                return Tangent(obj.primal_type, **{k: v for k, v in g.items() if v is not None})
            return Tangent(obj.primal_type, *g)

        return y, tangent_parts_pullback
    if name == "__dict__":
        return y, lambda g: _fields_dict_grad(obj, g)
    if is_mutable_object(obj):
        def mutable_getfield_pullback(g):
            add_field_grad(obj, name, g)
            return None

        return y, mutable_getfield_pullback

    def getfield_pullback(g):
        if g is None or isinstance(g, AbstractZero):
            return None
        return Tangent(typ, **{name: g})

    return y, getfield_pullback


_NUMERIC_VALUES = (int, float, complex, np.number, np.ndarray)
# attributes of numbers and arrays that are integers, dtypes or flags: no tangent space
_NUMERIC_CONST_ATTRS = frozenset(
    {"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides", "flags", "__class__"}
)


class _Attribute:
    """Names `type.attr` in a MissingAdjointError."""

    __module__ = None

    def __init__(self, typ, name):
        self.__qualname__ = f"{typ.__name__}.{name}"


def _numeric_attr_pullback(obj, name):
    """The pullback of reading obj.name, obj a number or an array: real, imag, T, mT have
    rules, shape & co. carry no gradient, anything else is refused (never a zero)."""
    if name in _NUMERIC_CONST_ATTRS:
        return lambda g: None
    if isinstance(obj, np.ndarray):
        if name in ("real", "imag", "T", "mT"):
            return lambda g: attr_grad(obj, name, g)
    elif name == "real" or name == "T" and isinstance(obj, np.generic):
        return lambda g: None if g is None or isinstance(g, AbstractZero) else (
            g if isinstance(obj, (complex, np.complexfloating)) and name == "T" else real(g))
    elif name == "imag":
        if isinstance(obj, (complex, np.complexfloating)):
            return lambda g: None if g is None or isinstance(g, AbstractZero) else im_seed(g)
        return lambda g: None  # the imaginary part of a real number is the constant 0
    where = _at()

    def numeric_attr_pullback(g):
        if g is None or isinstance(g, AbstractZero):
            return None
        raise MissingAdjointError(
            _Attribute(type(obj), name),
            f"the attribute .{name} of {type(obj).__name__} has no rule{where}; read it "
            "inside a helper function that has a rule",
        )

    return numeric_attr_pullback


def _fields_dict_grad(obj, g):
    """The adjoint of obj.__dict__ (its fields as a dict): each field's gradient, into the
    field store for an object whose fields can be written, else as its tangent."""
    g = seed(g)
    if g is None:
        return None
    if not isinstance(g, dict):
        raise NotDifferentiableError(
            f"the gradient of {type(obj).__name__}.__dict__ is a {type(g).__name__}, not a dict")
    fields = {k: v for k, v in g.items() if v is not None and not isinstance(v, AbstractZero)}
    if is_mutable_object(obj):
        for k, v in fields.items():
            add_field_grad(obj, k, v)
        return None
    return Tangent(type(obj), **fields) if fields else None


@R.special(getattr)
def _getattr_builtin_pair(obj, name, *default):
    if default and not hasattr(obj, name):
        return default[0], lambda g: (None, None, None, g)
    y, pb = getattr_pair(obj, name)

    def getattr_builtin_pullback(g):
        return (None, pb(g), None) + ((None,) if default else ())

    return y, getattr_builtin_pullback


def index_get(obj, is_tuple, *keys):
    """obj[keys] (obj[keys[0]] for a key that is not a tuple): the read that generated code
    emits where only the key depends on the inputs (``np.r_[x, y]``, a ``__getitem__``
    that computes with its key). Its rule (rules/runtime_rules.py) differentiates it."""
    return obj[keys if is_tuple else keys[0]]


def getitem_pair(obj, idx):
    """(y, pullback) of obj[idx]; __getitem__ written in Python is differentiated."""
    if isinstance(obj, (list, tuple, dict, np.ndarray, str)):
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            typ = type(obj)
            y = obj[idx]

            def namedtuple_pullback(g):
                if g is None:
                    return None
                return Tangent(typ, **{typ._fields[idx]: g}) if isinstance(idx, int) else (
                    Tangent(typ, **dict(zip(typ._fields[idx], g))))

            return y, namedtuple_pullback
        if type(obj) is list:  # the list may grow later: pin the positions now
            if type(idx) is int and idx < 0:
                idx += len(obj)
            elif type(idx) is slice:
                positions = range(*idx.indices(len(obj)))
                return obj[idx], lambda g: _list_slice_grad(obj, positions, g)
        return obj[idx], lambda g: getitem_grad(obj, idx, g)
    if isinstance(obj, Tangent):  # a tangent read in a pullback differentiated again
        return obj[idx], lambda g: part_adjoint(obj, idx, g)
    y, pb = call_method(obj, "__getitem__", idx)
    return y, lambda g: pb(g)[0]


# ----- resolution --------------------------------------------------------------------------


def _function_pair(f, args):
    """Resolve a plain Python function (user rule first) and cache it on f."""
    nargs = len(args)
    cells = _cell_kinds(f)
    guard = ()
    rule = R.lookup_user(f)
    prim = R.lookup_primitive(f, nargs) if rule is None else None
    if rule is not None:
        pair = _user_rule_pair(rule)
    elif f in R.SPECIAL:
        pair = R.SPECIAL[f]
    elif prim is not None:
        pair = _primitive_pair(prim)
    elif f in R.NONDIFF:
        pair = _const_pair(f)
    else:
        from . import emit

        key = emit.cache_key(f, kinds_of(args))
        pair = emit.pair_for(f, key, nargs)
        guard = emit.data_guard_of(f, key)
    cache = f.__dict__.get("__adjoint_pairs__")
    if cache is None:
        cache = f.__dict__["__adjoint_pairs__"] = {}
        _CACHED_FUNCTIONS.add(f)
    # gradients of generated code for float arguments are floats (or None) already
    floats = rule is None and prim is None and all(type(a) is float for a in args)
    cache[tuple(map(type, args))] = (cells, pair, floats and nargs == f.__code__.co_argcount, guard)
    return pair


def _hashable(obj):
    try:
        hash(obj)
        return True
    except TypeError:
        return False


def resolve(f, nargs):
    """The pair function for any callable f called with nargs positional arguments."""
    if type(f) is types.FunctionType:
        return lambda *a, **k: call(f, *a, **k)
    rule = R.lookup_user(f)
    if rule is not None:
        return _user_rule_pair(rule)
    if _hashable(f):
        sp = R.SPECIAL.get(f)
        if sp is not None:
            return sp
        prim = R.lookup_primitive(f, nargs)
        if prim is not None:
            return _primitive_pair(prim)
        if f in R.NONDIFF:
            return _const_pair(f)
    if isinstance(f, types.MethodType):
        fn, obj = f.__func__, f.__self__

        def bound_method_pair(*args, **kwargs):
            y, pb = call(fn, obj, *args, **kwargs)

            def bound_method_pullback(g):
                # d(self) is the bound method's tangent; the gradients of a mutable
                # object's fields stay in the store, as for obj.name(...) (call_method):
                # a write of a field before the call (obj.a = v) takes them from there
                grads = pb(g)
                return (grads[1],) + tuple(grads[2:])

            return y, bound_method_pullback

        return bound_method_pair
    if isinstance(f, type):
        return _constructor_pair(f)
    if isinstance(f, functools.partial):
        return _partial_pair(f)
    if isinstance(f, _CACHE_WRAPPERS) and callable(getattr(f, "__wrapped__", None)):
        # functools.lru_cache / cache: the function it wraps computes the same values
        # (a cache is only right for a pure function); differentiate that
        return resolve(f.__wrapped__, nargs)
    if type(f).__name__ == "method-wrapper" and f.__name__ in _DUNDER_OPS:
        return _dunder_pair(f)
    if isinstance(f, (types.BuiltinFunctionType, types.BuiltinMethodType, np.ufunc)):
        raise MissingAdjointError(f, _where_met())
    call_ = getattr(type(f), "__call__", None)
    if isinstance(call_, types.FunctionType):
        def callable_object_pair(*args, **kwargs):
            y, pb = call(call_, f, *args, **kwargs)

            def callable_object_pullback(g):
                # the object's tangent is the function's; the gradients of its fields stay
                # in the store, as for a method (call_method): a write of a field before
                # the call (m.w = v) takes them from there
                grads = pb(g)
                return tuple(grads[1:])

            return y, callable_object_pullback

        return callable_object_pair
    raise MissingAdjointError(f, _where_met())


_CACHE_WRAPPERS = (functools._lru_cache_wrapper,)

# `x.__mul__` and friends, bound to a number or an array: the operator, x first (or second)
_DUNDER_OPS = {
    f"__{name}__": (getattr(operator, name), False)
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "neg", "pos", "abs")
}
_DUNDER_OPS.update({
    f"__r{name}__": (getattr(operator, name), True)
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul")
})


def _dunder_pair(f):
    op, reflected = _DUNDER_OPS[f.__name__]
    obj = f.__self__

    def dunder_pair(*args):
        y, pb = call(op, *args, obj) if reflected else call(op, obj, *args)

        def dunder_pullback(g):
            grads = pb(g)[1:]
            if reflected:
                return (grads[-1],) + tuple(grads[:-1])  # the bound object's, then the rest
            return tuple(grads)

        return y, dunder_pullback

    return dunder_pair


def _partial_pair(p):
    """functools.partial(fn, *bound, **kw): fn called with the bound arguments first. Their
    gradients make the partial object's tangent, as captured variables make a closure's."""
    fn, bound, keywords = p.func, p.args, p.keywords
    n = len(bound)

    def partial_pair(*args, **kwargs):
        y, pb = call(fn, *bound, *args, **{**keywords, **kwargs})

        def partial_pullback(g):
            grads = pb(g)
            own = tuple(grads[1:1 + n])
            mine = tuple(grads[1 + n:1 + n + len(args)])
            dkw = grads[1 + n + len(args)] if len(grads) > 1 + n + len(args) else None
            own_kw = {k: v for k, v in (dkw or {}).items() if k not in kwargs and v is not None}
            out = (mine + ({k: v for k, v in dkw.items() if k in kwargs},)) if kwargs and dkw else mine
            if grads[0] is not None or any(d is not None for d in own) or own_kw:
                return (Tangent(functools.partial, func=grads[0], args=own, keywords=own_kw),) + out
            return (None,) + out

        return y, partial_pullback

    return partial_pair


def _partial_constructor_pair(fn, *args, **kwargs):
    """functools.partial(fn, *args, **kwargs) in differentiated code: the object's tangent
    (made by _partial_pair's pullback) hands its arguments' gradients back."""
    p = functools.partial(fn, *args, **kwargs)

    def partial_constructor_pullback(g):
        own = field(g, "args")
        kw = field(g, "keywords") or {}
        dargs = tuple(own) if own is not None else (None,) * len(args)
        out = (None, field(g, "func")) + dargs  # functools.partial itself, then fn
        if kwargs:
            out += ({k: kw.get(k) for k in kwargs},)
        return out

    return p, partial_constructor_pullback


R.SPECIAL[functools.partial] = _partial_constructor_pair


_GENERATED_HEAD = "# generated by adjoint_s2s from "


def generated_origin(gname):
    """(function, file, line) that the generated file gname was made from, followed through
    generated code made from generated code (a pullback differentiated again) down to
    the first file that is not generated; None if gname is not generated code."""
    origin = None
    for _ in range(32):
        if not gname.startswith("<adjoint_s2s: "):
            break
        head = linecache.getline(gname, 1)
        if not head.startswith(_GENERATED_HEAD):
            break
        rest = head[len(_GENERATED_HEAD):].strip()
        name, _, loc = rest.partition(" (")
        where, _, line = loc[:-1].rpartition(", line ")
        try:
            origin = (name, where, int(line))
        except ValueError:
            break
        gname = where
    return origin


def user_call_site(frame=None, callee=False):
    """(function, file, line) of the innermost user function being differentiated on the
    stack, line being the line of the statement that was running (found through the
    comment naming it in the generated code): the generated frames are followed back to
    the code they were made from, and adjoint_s2s's own helpers and libraries' functions
    are passed over. With callee=True, also the function that statement called, as
    (function, file, line, called) (called: None when not found)."""
    frame = frame or sys._getframe(1)
    called = None
    for _ in range(400):
        if frame is None:
            return None
        code = frame.f_code
        fname = code.co_filename
        if fname.startswith("<adjoint_s2s: "):
            origin = generated_origin(fname)
            if origin is not None and not _not_users(origin[1]):
                site = origin[:2] + (_statement_line(fname, frame.f_lineno, origin),)
                return site + (called,) if callee else site
        elif code.co_name in _CALL_ENTRIES and fname == __file__:
            called = frame.f_locals.get("f", called)
        frame = frame.f_back
    return None


_CALL_ENTRIES = frozenset({"call", "call_keeping", "_call_kw", "call_method"})


def _statement_line(gname, lineno, origin):
    """The user's line of the primal statement a generated line belongs to: the comment
    above it names the statement; its text is looked up among the statements of the
    user's function. The function's first line when it cannot be told."""
    name, filename, first = origin
    named = None
    for n in range(lineno, 0, -1):
        text = linecache.getline(gname, n).strip()
        if text.startswith("# ") and not text.startswith("# generated by"):
            named = text[2:].rstrip(":")
            break
    lines = linecache.getlines(filename)
    if named is None or not lines:
        return first
    try:
        tree = ast.parse("".join(lines))
    except SyntaxError:
        return first
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and (
            getattr(node, "lineno", None) == first
            or any(d.lineno == first for d in getattr(node, "decorator_list", ()))
        ):
            for st in ast.walk(node):
                if isinstance(st, ast.stmt) and st is not node:
                    if ast.unparse(st).splitlines()[0].rstrip(":") == named:
                        return st.lineno
    return first


def _not_users(filename):
    import os

    if filename.startswith("<adjoint_s2s"):
        return True
    path = os.path.realpath(filename) if not filename.startswith("<") else filename
    own = os.path.dirname(os.path.realpath(__file__)) + os.sep
    return path.startswith(own) or is_library_file(filename)


def _where_met():
    """Which differentiated function made the call (from the generated frames on the
    stack), and whether a nested gradient was differentiating a rule's own code."""
    frame = sys._getframe(2)
    names = []
    while frame is not None and len(names) < 40:
        fname = frame.f_code.co_filename
        if fname.startswith("<adjoint_s2s: "):
            first = linecache.getline(fname, 1)
            if first.startswith(_GENERATED_HEAD):
                names.append(first[len(_GENERATED_HEAD):].strip())
        frame = frame.f_back
    if not names:
        return None
    site = user_call_site(sys._getframe(2))
    where = names[0].partition(" (")[2].rpartition(", line ")[0]
    if site is not None and _not_users(where):
        # the call is in generated code differentiated again, or in one of adjoint_s2s's
        # helpers: name the user's function that led there
        how = "differentiated to second order" if where.startswith("<adjoint_s2s") else (
            f"through adjoint_s2s's {names[0].partition(' (')[0]}, differentiated again")
        names[0] = f"{site[0]} ({site[1]}, line {site[2]}), {how}"
    reason = f"it has no Python source and no rule; the call is in {names[0]}"
    if len(names) > 1 and any("adapters.py" in n or "rule" in n for n in names[:3]):
        reason += (
            ", which a nested gradient differentiates again: if that is a rule's code, write "
            "its forward and pullback with differentiable operations"
        )
    return reason


def _const_pair(f):
    def nondifferentiable_pair(*args, **kwargs):
        y = f(*args, **kwargs)
        n = len(args)
        if kwargs:
            return y, lambda g: (None,) * (n + 1) + ({},)
        return y, lambda g: (None,) * (n + 1)

    return nondifferentiable_pair


_PRIM_PAIRS = {}


def _fit_other(g, like):
    return g if like is None else unbroadcast(g, like)


def _primitive_pair(prim):
    """A run-time pair for a primitive (for calls the generator could not inline)."""
    pair = _PRIM_PAIRS.get(id(prim))
    if pair is not None:
        return pair
    params = list(prim.params)
    sig = ", ".join(f"{p}={prim.defaults[p]}" if p in prim.defaults else p for p in params)
    lines = [f"def core({sig}):", f"    ans = fn({', '.join(params)})", "    def back(g):"]
    lines.append("        g = seed(g)")
    lines.append(f"        if g is None: return ({'None, ' * len(params)})")
    outs = []
    mapping = {p: p for p in params}
    mapping.update(ans="ans", g="g")
    # the helpers that take adjoints (kind "other": acc, setitem_grad, ...) take None for
    # a zero of unknown shape: its cotangent is passed on as it is, not summed to a number
    fit = "fit_other" if prim.kind == "other" else "unbroadcast"
    for p in params:
        adj = prim.adjoints.get(p)
        if isinstance(adj, dict):
            adj = adj.get("array", adj.get("any"))
        if adj is not None:
            outs.append(f"{fit}({R.fill(adj, mapping)}, {p})")
        elif prim.partials.get(p) is not None:
            d = R.fill(prim.partials[p], mapping)
            outs.append(f"unbroadcast(g * conj({d}), {p})")
        else:
            outs.append("None")
    lines.append(f"        return ({', '.join(outs)},)")
    lines.append("    return ans, back")
    import sys

    ns = {
        "fn": prim.fn,
        "seed": seed,
        "unbroadcast": unbroadcast,
        "fit_other": _fit_other,
        "conj": conj,
        "math": math,
        "cmath": cmath,
        "np": np,
        "_rt": sys.modules[__name__],
        "operator": operator,
    }
    text = "\n".join(lines) + "\n"
    filename = f"<adjoint_s2s rule for {prim.path}/{len(params)}>"
    import linecache

    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), ns)
    core = ns["core"]

    def primitive_pair(*args, **kwargs):
        ans, back = core(*args, **kwargs)
        if not kwargs:
            return ans, lambda g: (None,) + back(g)[: len(args)]

        def keyword_pullback(g):
            grads = back(g)
            kw = {k: grads[params.index(k)] for k in kwargs}
            return (None,) + grads[: len(args)] + (kw,)

        return ans, keyword_pullback

    _PRIM_PAIRS[id(prim)] = primitive_pair
    return primitive_pair


def _user_rule_pair(rule):
    """Adapt an @adjoint / @rrule / non_differentiable entry to the pair convention."""
    from . import adapters

    if rule.style == "nondiff":
        return _const_pair(rule.fn)
    if rule.style == "adjoint":
        return adapters.adjoint_pair(rule.rule, rule.fn)
    if rule.config:
        from .api import RuleConfig

        return adapters.rrule_pair(rule.rule, rule.fn, RuleConfig())
    return adapters.rrule_pair(rule.rule, rule.fn, None)


def _constructor_pair(cls):
    """Dataclasses and namedtuples: the gradient of the arguments from the object's tangent."""
    import dataclasses

    if dataclasses.is_dataclass(cls) and not hasattr(cls, "__post_init__"):
        names = [f.name for f in dataclasses.fields(cls) if f.init]

        def dataclass_pair(*args, **kwargs):
            obj = cls(*args, **kwargs)
            n = len(args)

            def constructor_pullback(g):
                # field by field from the store (take_field_grad: differentiated again,
                # unlike a bulk take of every field, so second order sees the reads)
                g = unthunk(g)
                vals = []
                for name in names:
                    vals.append(add(field(g, name), take_field_grad(obj, name)))
                forget_fields(obj)
                pos = tuple(vals[:n])
                if kwargs:
                    return (None,) + pos + ({k: vals[names.index(k)] for k in kwargs},)
                return (None,) + pos

            return obj, constructor_pullback

        return dataclass_pair
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        names = list(cls._fields)

        def namedtuple_pair(*args, **kwargs):
            obj = cls(*args, **kwargs)
            n = len(args)

            def constructor_pullback(g):
                vals = _fields_of(g, names)
                res = (None,) + tuple(vals[:n])
                if kwargs:
                    return res + ({k: vals[names.index(k)] for k in kwargs},)
                return res

            return obj, constructor_pullback

        return namedtuple_pair
    if cls in (list, tuple, GradList):
        def sequence_pair(*args):
            obj = cls(*args)
            src_ = args[0] if args else ()

            def sequence_pullback(g):
                if g is None:
                    return (None, None)
                if isinstance(src_, (list, tuple)):
                    return (None, type(src_)(unthunk(g)))
                return (None, list(g))

            return obj, sequence_pullback

        return sequence_pair
    if cls in (float, int, bool, str):
        return _const_pair(cls)
    if dataclasses.is_dataclass(cls):
        return _dataclass_post_init_pair(cls)
    init = getattr(cls, "__init__", None)
    if isinstance(init, types.FunctionType) and cls.__new__ is object.__new__:
        return _init_constructor_pair(cls, init)
    raise MissingAdjointError(
        cls, "its constructor is not written in Python (give the class a rule with @adjoint)"
        + _met_while()
    )


def _met_while():
    """'; met while differentiating f (file, line N), through its call of g' when a
    library function the user's code called led here, or ''."""
    site = user_call_site(sys._getframe(2), callee=True)
    if site is None:
        return ""
    name, filename, line, called = site
    via = ""
    if called is not None:
        try:
            via = f", through its call of {short_name(called)} (give that a rule instead)"
        except Exception:  # a callable short_name cannot name: leave it out
            via = ""
    return f"; met while differentiating {name} ({filename}, line {line}){via}"


def new_instance(cls):
    """An uninitialised instance (its __init__ runs through AD next)."""
    return cls.__new__(cls)


def _init_constructor_pair(cls, init):
    """A class whose __init__ is Python: differentiate __init__ (its attribute writes)."""

    def init_constructor_pair(*args, **kwargs):
        obj = new_instance(cls)
        _none, init_pb = call(init, obj, *args, **kwargs)

        def init_constructor_pullback(g):
            _seed_fields(obj, g)
            grads = init_pb(None)
            take_fields(obj)  # what __init__ read of itself before writing it: nothing to pass on
            return (None,) + tuple(grads[2:])

        return obj, init_constructor_pullback

    return init_constructor_pair


def field_names(obj):
    """The names of obj's instance attributes (no gradient flows through them)."""
    return tuple(vars(obj))


def _isderiving():
    from .api import isderiving  # (a rule makes it True in code differentiated again)

    return isderiving()


def set_field(obj, name, value):
    """object.__setattr__ (frozen dataclasses too), with a rule: `obj.name = value`."""
    object.__setattr__(obj, name, value)


def instance_with_fields(cls, names, values):
    """A new instance of cls with its fields set (frozen dataclasses too): the start of
    a dataclass constructor whose __post_init__ is differentiated. Its rule gives each
    value the gradient of its field, from the object's structural tangent (a frozen
    object's reads) and from the store (a mutable one's)."""
    obj = new_instance(cls)
    for name, value in zip(names, values):
        object.__setattr__(obj, name, value)
    return obj


def _dataclass_post_init_pair(cls):
    """A dataclass with __post_init__: fields are set plainly, __post_init__ through AD."""
    import dataclasses

    names = [f.name for f in dataclasses.fields(cls) if f.init]
    specs = [(f.name, f.default, f.default_factory) for f in dataclasses.fields(cls) if f.init]
    post = cls.__post_init__

    def post_init_constructor_pair(*args, **kwargs):
        bound = {}  # (a plain loop: this pair is differentiated again for second order)
        for i in range(len(args)):
            bound[names[i]] = args[i]
        for k in kwargs:
            bound[k] = kwargs[k]
        values = []
        for name, default, factory in specs:
            if name in bound:
                value = bound[name]
            elif default is not dataclasses.MISSING:
                value = default
            else:
                value = factory()
            values.append(value)
        obj = instance_with_fields(cls, names, values)
        _none, post_pb = call(post, obj)
        n = len(args)

        def post_init_constructor_pullback(g):
            g = unthunk(g)
            for k in field_names(obj):  # g into the store, field by field (add_field_grad:
                add_field_grad(obj, k, field(g, k))  # differentiated again, unlike a bulk seed)
            # a frozen object's reads in __post_init__ give `self` a structural tangent
            # (a mutable one's go to the store)
            b_self = part(post_pb(None), 1)
            fields = {}
            for name in names:  # one by one: take_field_grad is differentiated again
                fields[name] = add(take_field_grad(obj, name), field(b_self, name))
            forget_fields(obj)
            pos = tuple(fields.get(name) for name in names[:n])
            if kwargs:
                return (None,) + pos + ({k: fields.get(k) for k in kwargs},)
            return (None,) + pos

        return obj, post_init_constructor_pullback

    return post_init_constructor_pair


def _seed_fields(obj, g):
    """Put the structural tangent g of obj into the field store, field by field."""
    g = unthunk(g)
    if g is None or isinstance(g, AbstractZero):
        return
    if isinstance(g, Tangent):
        items = g._fields.items()
    elif isinstance(g, dict):
        items = g.items()
    else:
        items = ((k, getattr(g, k, None)) for k in vars(obj))
    for k, v in items:
        add_field_grad(obj, k, v)


def _fields_of(g, names):
    if g is None or isinstance(g, AbstractZero):
        return [None] * len(names)
    if isinstance(g, Thunk):
        g = g.unthunk()
    if isinstance(g, (Tangent, dict)):
        # through field (which has a rule): differentiated again, the fields' gradients
        # pass back into the tangent (reading g._fields directly dropped them)
        return [field(g, n) for n in names]
    if isinstance(g, tuple) and not hasattr(g, "_fields"):
        return list(g) + [None] * (len(names) - len(g))
    return [getattr(g, n, None) for n in names]


def _takes_keywords(code):
    """Whether a pair's pullback ends with the keyword gradients (a flag test, kept out
    of the differentiated _call_kw: a bit operation on ints has no rule)."""
    return bool(code.co_kwonlyargcount) or bool(code.co_flags & 0x08)


def _call_kw(f, args, kwargs):
    """Calls with keywords: map gradients back to how each argument was passed."""
    if (
        type(f) is types.FunctionType
        and R.lookup_user(f) is None
        and f not in R.SPECIAL
        and f not in R.NONDIFF
        and not R.PRIMITIVES.get(f)
    ):
        from . import emit

        code = f.__code__
        npos = code.co_argcount
        pos_names = code.co_varnames[:npos]
        pair = emit.raw_pair_for(f, emit.cache_key(f, kinds_of(args), keywords=True))
        y, pb = pair(*args, **kwargs)

        def keyword_call_pullback(g):
            grads = pb(g)
            has_kw = _takes_keywords(code)
            kwdict = grads[-1] if has_kw else {}
            flat = grads[:-1] if has_kw else grads
            n_extra = max(0, len(args) - npos)
            pos = tuple(flat[1 : 1 + min(len(args), npos)]) + tuple(flat[1 + npos : 1 + npos + n_extra])
            kw = {}
            for k in kwargs:
                if k in pos_names:
                    kw[k] = flat[1 + pos_names.index(k)]
                else:
                    kw[k] = (kwdict or {}).get(k)
            # parameters that took their default hand their gradients to the function
            # tangent (a default value belongs to the function, like a captured variable)
            took = tuple([k for k in pos_names[len(args):] if k not in kwargs])
            df = with_defaults(flat[0], took, tuple([flat[1 + pos_names.index(k)] for k in took]))
            if isinstance(kwdict, dict):
                df = with_kw_defaults(df, {k: v for k, v in kwdict.items() if k not in kwargs})
            return (df,) + pos + (kw,)

        return y, keyword_call_pullback
    if type(f) is types.FunctionType:
        rule = R.lookup_user(f)
        if rule is not None:
            pair = _user_rule_pair(rule)
        elif f in R.SPECIAL:
            pair = R.SPECIAL[f]
        elif f in R.NONDIFF:
            pair = _const_pair(f)
        else:
            prim = R.lookup_primitive(f, len(args), tuple(kwargs))
            pair = _primitive_pair(prim)
    else:
        pair = resolve(f, len(args))
    return pair(*args, **kwargs)


__all__ = ["call", "call_primal", "call_method", "binop", "ZeroTangent", "NoTangent"]


# template helpers written next to their rules are reached as _rt.<name> too
from .rules.helpers_numpy import *  # noqa: E402,F401,F403
from .rules.helpers_scalar import *  # noqa: E402,F401,F403
