"""Run-time rules for builtins whose gradient depends on the structure of the arguments
(``sum``, ``min``, ``max``, ``map``, ...): pair functions registered with ``special``.

A pair is ``pair(*args, **kwargs) -> (y, pullback)``; ``pullback(g)`` returns the
function's own tangent, one gradient per positional argument, and a dict of keyword
gradients when keywords were passed. ``g`` may be None, a zero tangent or a thunk.

Gradients of sequences follow the sequence: a list for a list, a tuple for a tuple, an
array for an array, a dict for a dict; for an iterator or generator (consumed once) a
list with one entry per item taken from it, which is what the rule that made the
iterator (``map``, ``zip``, ``enumerate``, ``dict.values``, ...) expects back.

``zip``, ``enumerate``, ``reversed``, ``iter`` stay lazy, as in Python: their iterator
records what it hands out (the pullback knows how many, ``next`` where; a second reader
after items were taken is refused). ``map``, ``filter`` make their items at once (so that
a second differentiation sees the calls of the function). Methods of ``dict`` (``items``,
``values``, ``keys``, ``get``) are in ``runtime.call_method``'s table.
"""
import builtins
import collections
import math

import numpy as np

from .. import runtime as _rt
from ..errors import NotDifferentiableError
from ..runtime.protocols import recorder_item, refuse_read_again
from ..tangents import Tangent, add, part_value as _part, value_or_none as _seed
from . import special

_SEQUENCES = (list, tuple, np.ndarray)


# ----- helpers -------------------------------------------------------------------------------


def _items(iterable):
    """The items of an iterable, as a sequence (materialised once if it is an iterator)."""
    if isinstance(iterable, _SEQUENCES):
        return iterable
    return list(iterable)


def _project(g, x):
    """The gradient g of an item, in the space of the item x."""
    g = _seed(g)
    if g is None or isinstance(x, (bool, str, bytes)) or x is None:
        return None
    if isinstance(x, np.ndarray):
        return _rt.unbroadcast(g, x)
    if isinstance(x, (float, int, np.floating, np.integer)):
        if isinstance(g, np.ndarray):
            g = g.sum() if g.ndim else g[()]
        if isinstance(g, (complex, np.complexfloating)):
            return float(g.real)
        return float(g) if isinstance(g, (int, np.number)) else g
    if isinstance(x, (complex, np.complexfloating)) and isinstance(g, np.ndarray):
        return complex(g.sum())
    return g


def _collect(src, grads):
    """The gradient of the iterable src from the gradients of its first len(grads) items.

    Shaped like src (padded with None); None if nothing has a gradient or src holds no
    differentiable items (strings, ranges, sets, dict keys).
    """
    if all(g is None for g in grads):
        return None
    if isinstance(src, (str, bytes, range, set, frozenset, dict, type({}.keys()))):
        return None
    if isinstance(src, np.ndarray):
        if not np.issubdtype(src.dtype, np.inexact):
            return None
        out = np.zeros(src.shape, dtype=np.result_type(src.dtype, float))
        for i, g in enumerate(grads):
            if g is not None:
                if np.iscomplexobj(g) and not np.iscomplexobj(out):
                    g = np.real(g)
                out[i] = out[i] + g
        return out
    if isinstance(src, tuple) and hasattr(src, "_fields"):
        fields = {name: g for name, g in zip(src._fields, grads) if g is not None}
        return Tangent(type(src), **fields)
    if isinstance(src, (list, tuple)):
        out = list(grads) + [None] * (len(src) - len(grads))
        return tuple(out) if isinstance(src, tuple) else out
    return _rt.items_adjoint(src, list(grads))


def _item_grads(src, g, n):
    """Gradients of the first n items of src from a sequence gradient g, projected."""
    return [_project(_part(g, i), src[i]) for i in range(n)]


def _result(df, grads, kwargs, kwgrads=None):
    """(df, *grads) plus the dict of keyword gradients when keywords were passed."""
    out = (df,) + tuple(grads)
    if kwargs:
        kwgrads = kwgrads or {}
        out += ({k: kwgrads.get(k) for k in kwargs},)
    return out


_EXHAUSTED = object()  # what next(it, _EXHAUSTED) returns at the end


class _Recorder:
    """An iterator that hands out items of a lazy rule and counts them for the pullback.

    Its gradient is a list of item gradients, not a tangent of its fields: it has no
    __dict__, so the core does not track it as a mutable object."""

    __slots__ = ("_it", "taken", "start", "looped", "__weakref__")
    _items_adjoint = True  # its gradient is the list of its items'

    def __init__(self, it):
        self._it = it
        self.taken, self.start, self.looped = [], None, False  # (looped: by _rt.seq, all at once)

    def __iter__(self):  # (a loop, list(), zip()...: refused after another read)
        if self.taken or self.start is not None:
            refuse_read_again()
        return self

    def __next__(self):
        v = next(self._it)
        self.taken.append(v)
        return v

    def unpacked(self, idx):
        """(item, pullback) of item idx of what is left (`a, b = zip(...)`)."""
        return recorder_item(self, idx)


@special(_Recorder)
def _recorder_pair(it):
    """A recorder hands out the items of it: the gradient of its items is that of it's.

    Rules build recorders in code that a second differentiation reads; this keeps the
    gradient of an iterator what the rules exchange (a list of item gradients)."""
    return _Recorder(it), lambda g: (None, _seed(g))


# ----- sum, math.fsum, math.prod ---------------------------------------------------------------


def _other_keys(kwargs, allowed):
    """Whether a keyword outside `allowed` was passed (Python raises the TypeError)."""
    return any(k not in allowed for k in kwargs)


def _is_numeric(v):
    return isinstance(v, (int, float, complex, np.number, np.ndarray))


@special(builtins.sum)
def sum_pair(*args, **kwargs):
    if not 1 <= len(args) <= 2 or _other_keys(kwargs, ("start",)) or isinstance(
        args[-1] if len(args) == 2 else kwargs.get("start"), (str, bytes, bytearray)
    ):
        return builtins.sum(*args, **kwargs), None  # Python's TypeError
    iterable = args[0]
    start = args[1] if len(args) > 1 else kwargs.get("start", 0)
    items = _items(iterable)
    n = len(items)
    if all(_is_numeric(v) for v in items) and _is_numeric(start):
        y = builtins.sum(items, start)

        def sum_pullback(g):
            g = _seed(g)
            if g is None:
                grads = (None,) * len(args)
                return _result(None, grads, kwargs)
            it_grad = _collect(iterable, [_project(g, items[i]) for i in range(n)])
            g_start = _project(g, start)
            grads = (it_grad, g_start)[: len(args)]
            return _result(None, grads, kwargs, {"start": g_start})

        return y, sum_pullback
    # lists, tuples, objects: fold with the + each operand defines (differentiated)
    acc, pbs = start, []
    for v in items:
        acc, pb = _rt.binop("Add", acc, v)
        pbs.append(pb)

    def sum_fold_pullback(g):
        g = _seed(g)
        per_item = [None] * n
        for i in range(n - 1, -1, -1):
            # (g None too: the sum of objects of a mutable class has its gradient in
            # their fields, in the store, which each + passes on to its operands)
            g, per_item[i] = pbs[i](g)
            g = _seed(g)
        it_grad = _collect(iterable, per_item)
        grads = (it_grad, g)[: len(args)]
        return _result(None, grads, kwargs, {"start": g})

    return acc, sum_fold_pullback


@special(math.fsum)
def fsum_pair(iterable):
    items = _items(iterable)
    y = math.fsum(items)

    def fsum_pullback(g):
        g = _seed(g)
        if g is None:
            return (None, None)
        g = _project(g, 0.0)
        return (None, _collect(iterable, [g if _is_numeric(v) else None for v in items]))

    return y, fsum_pullback


@special(math.prod)
def prod_pair(iterable, **kwargs):
    start = kwargs.get("start", 1)
    items = _items(iterable)
    n = len(items)
    y = math.prod(items, **kwargs)

    def prod_pullback(g):
        g = _seed(g)
        if g is None:
            return _result(None, (None,), kwargs)
        # the product of all factors but one, without dividing (zeros are fine)
        run = start
        prefix = [start]
        for v in items:
            run = run * v
            prefix.append(run)
        suffix = [1] * (n + 1)
        for i in range(n - 1, -1, -1):
            suffix[i] = items[i] * suffix[i + 1]
        grads = [_project(g * _rt.conj(prefix[i] * suffix[i + 1]), items[i]) for i in range(n)]
        g_start = _project(g * _rt.conj(suffix[0]), start)
        return _result(None, (_collect(iterable, grads),), kwargs, {"start": g_start})

    return y, prod_pullback


if hasattr(math, "sumprod"):  # Python 3.12

    @special(math.sumprod)
    def sumprod_pair(p, q):
        ps, qs = _items(p), _items(q)
        y = math.sumprod(ps, qs)

        def sumprod_pullback(g):
            g = _seed(g)
            if g is None:
                return (None, None, None)
            gp = [_project(g * _rt.conj(b), a) for a, b in zip(ps, qs)]
            gq = [_project(g * _rt.conj(a), b) for a, b in zip(ps, qs)]
            return (None, _collect(p, gp), _collect(q, gq))

        return y, sumprod_pullback


# ----- math.hypot, math.dist ----------------------------------------------------------------


@special(math.hypot)
def hypot_pair(*coords):
    y = math.hypot(*coords)

    def hypot_pullback(g):
        g = _seed(g)
        if g is None or y == 0:
            return (None,) + (None,) * len(coords)
        g = _project(g, 0.0)
        return (None,) + tuple(g * c / y for c in coords)

    return y, hypot_pullback


@special(math.dist)
def dist_pair(p, q):
    ps, qs = _items(p), _items(q)
    y = math.dist(ps, qs)

    def dist_pullback(g):
        g = _seed(g)
        if g is None or y == 0:
            return (None, None, None)
        g = _project(g, 0.0)
        gp = [g * (a - b) / y for a, b in zip(ps, qs)]
        return (None, _collect(p, gp), _collect(q, [-v for v in gp]))

    return y, dist_pullback


# ----- min, max ------------------------------------------------------------------------------


def _select(fn):
    """The pair of min or max: the gradient goes to the element Python picks, split evenly
    among the numbers equal to it (a tie, as np.maximum: max(a, c) + min(a, c) has a + c's
    gradient) unless key= chose; key= carries no gradient."""

    def minmax_pair(*args, **kwargs):
        if not args or _other_keys(kwargs, ("key", "default")):
            return fn(*args, **kwargs), None  # Python's TypeError
        key = kwargs.get("key")
        one = len(args) == 1
        items = _items(args[0]) if one else args
        n = len(items)
        if n == 0 or (not one and "default" in kwargs):
            # empty: the default (or Python's error); default with several args: the error
            y = fn(items, **kwargs) if one else fn(*args, **kwargs)

            def default_pullback(g):
                return _result(None, (None,) * len(args), kwargs, {"default": _seed(g)})

            return y, default_pullback
        score = items.__getitem__ if key is None else (lambda i: key(items[i]))
        idx = fn(range(n), key=score)
        y = items[idx]
        numbers = (float, int, np.float64)
        tied = [idx]
        if key is None and type(y) in numbers:  # a tie: every number equal to y
            tied = [i for i in range(n) if type(items[i]) in numbers and items[i] == y] or tied

        def minmax_pullback(g):
            gi = _project(g, y)
            grads = [None] * n
            for i in tied:
                grads[i] = gi / len(tied) if len(tied) > 1 and gi is not None else gi
            return _result(None, (_collect(args[0], grads),) if one else grads, kwargs)

        return y, minmax_pullback

    minmax_pair.__name__ = f"{fn.__name__}_pair"
    return minmax_pair


special(builtins.min)(_select(builtins.min))
special(builtins.max)(_select(builtins.max))


# ----- map, enumerate, zip, reversed, filter -------------------------------------------------


@special(builtins.map)
def map_pair(f, *iterables):
    """map calls f on every item when it is made (eagerly, as Zygote's map does), so that
    a second differentiation sees the calls; it still returns an iterator."""
    rows = list(zip(*iterables))
    calls = [_rt.call(f, *row) for row in rows]
    pbs = [c[1] for c in calls]
    out = _Recorder(builtins.iter([c[0] for c in calls]))

    def map_pullback(g):
        g = _seed(g)
        if g is None:
            return (None, None) + (None,) * len(iterables)
        df = None
        per = []
        for i in range(len(pbs)):
            gi = _part(g, i)
            if gi is None:
                per.append(None)
            else:
                grads = pbs[i](gi)
                df = add(df, grads[0])
                per.append(grads)
        out_grads = [
            _collect(src, [None if p is None else _seed(p[1 + j]) for p in per])
            for j, src in enumerate(iterables)
        ]
        return (None, df) + tuple(out_grads)

    return out, map_pullback


@special(builtins.enumerate)
def enumerate_pair(*args, **kwargs):
    src = args[0]
    rec = _Recorder(builtins.enumerate(builtins.iter(src), *args[1:], **kwargs))

    def enumerate_pullback(g):
        grads = [_project(_part(_part(g, i), 1), v) for i, (_, v) in enumerate(rec.taken)]
        return _result(None, (_collect(src, grads),) + (None,) * (len(args) - 1), kwargs)

    return rec, enumerate_pullback


@special(builtins.zip)
def zip_pair(*iterables, **kwargs):
    if len({id(a) for a in iterables if type(a) is _Recorder}) < sum(type(a) is _Recorder for a in iterables):
        refuse_read_again()  # (`zip(it, it)`: its items taken in turns)
    rec = _Recorder(builtins.zip(*iterables, **kwargs))

    def zip_pullback(g):
        grads = []
        for j, src in enumerate(iterables):
            gs = [_project(_part(_part(g, i), j), row[j]) for i, row in enumerate(rec.taken)]
            grads.append(_collect(src, gs))
        return _result(None, grads, kwargs)

    return rec, zip_pullback


@special(builtins.reversed)
def reversed_pair(seq):
    rec = _Recorder(builtins.reversed(seq))

    def reversed_pullback(g):
        k = len(rec.taken)
        if k == 0 or _seed(g) is None:
            return (None, None)
        n = len(seq)
        grads = [None] * n
        for i in range(k):
            grads[n - 1 - i] = _project(_part(g, i), rec.taken[i])
        return (None, _collect(seq, grads))

    return rec, reversed_pullback


@special(builtins.filter)
def filter_pair(function, iterable):
    """filter keeps some items (chosen eagerly): their gradients go back to their places."""
    items = _items(iterable)
    keep = [i for i in range(len(items)) if (items[i] if function is None else function(items[i]))]
    out = _Recorder(builtins.iter([items[i] for i in keep]))

    def filter_pullback(g):
        g = _seed(g)
        if g is None or not keep:
            return (None, None, None)
        grads = [None] * len(items)
        for j in range(len(keep)):
            i = keep[j]
            grads[i] = _project(_part(g, j), items[i])
        return (None, None, _collect(iterable, grads))

    return out, filter_pullback


@special(builtins.iter)
def iter_pair(*args):
    if len(args) != 1:  # iter(callable, sentinel): calls, not items of an argument
        return builtins.iter(*args), lambda g: (None,) * (1 + len(args))
    src = args[0]
    if isinstance(src, _Recorder):  # already a recording iterator: iter() is the identity
        return src, lambda g: (None, _seed(g))
    rec = _Recorder(builtins.iter(src))

    def iter_pullback(g):
        g = _seed(g)
        if g is None:
            return (None, None)
        return (None, _collect(src, _item_grads(rec.taken, g, len(rec.taken))))

    return rec, iter_pullback


@special(builtins.next)
def next_pair(it, *default):
    """next(it): the gradient goes to the position of the item in what it handed out."""
    if not isinstance(it, _Recorder):
        raise NotDifferentiableError(
            f"next() of a {type(it).__name__} that adjoint_s2s did not create: the position "
            "of the item it hands out is unknown, so its gradient cannot be placed; make "
            "the iterator inside the differentiated code (iter, map, zip, enumerate, ...)"
        )
    if it.looped:  # (a loop took every item, where Python's may have stopped early)
        refuse_read_again()
    k = len(it.taken)
    y = builtins.next(it, _EXHAUSTED)
    if y is _EXHAUSTED:
        if not default:
            raise StopIteration
        return default[0], lambda g: (None, None, _seed(g))

    def next_pullback(g):
        gi = _project(g, y)
        grad = None if gi is None else [None] * k + [gi]
        return (None, grad) + (None,) * len(default)

    return y, next_pullback


# ----- sorted, list, tuple -----------------------------------------------------------------


@special(builtins.sorted)
def sorted_pair(iterable, **kwargs):
    if _other_keys(kwargs, ("key", "reverse")):
        return builtins.sorted(iterable, **kwargs), None  # Python's TypeError
    key = kwargs.get("key")
    items = _items(iterable)
    n = len(items)
    score = items.__getitem__ if key is None else (lambda i: key(items[i]))
    # the same comparisons on the same keys: the same stable permutation as sorted(items)
    perm = builtins.sorted(range(n), key=score, reverse=bool(kwargs.get("reverse", False)))
    y = [items[i] for i in perm]

    def sorted_pullback(g):
        g = _seed(g)
        if g is None:
            return _result(None, (None,), kwargs)
        grads = [None] * n
        for j, i in enumerate(perm):
            grads[i] = _project(_part(g, j), items[i])
        return _result(None, (_collect(iterable, grads),), kwargs)

    return y, sorted_pullback


def _sequence_pair(cls):
    def sequence_pair(*args):
        if not args:
            return cls(), lambda g: (None,)
        src = args[0]
        y = cls(src)

        def sequence_pullback(g):
            g = _seed(g)
            if g is None:
                return (None, None)
            return (None, _collect(src, _item_grads(y, g, len(y))))

        return y, sequence_pullback

    sequence_pair.__name__ = f"{cls.__name__}_pair"
    return sequence_pair


special(builtins.list)(_sequence_pair(builtins.list))
special(builtins.tuple)(_sequence_pair(builtins.tuple))


# ----- dict methods (dispatched by runtime.call_method; pullback -> (dobj, *dargs)) ---------


def _dict_values(d):
    keys = list(d)
    values = list(d.values())

    def values_pullback(g):
        g = _seed(g)
        if g is None:
            return (None,)
        out = {}
        for i, k in enumerate(keys):
            gi = _project(_part(g, i), values[i])
            if gi is not None:
                out[k] = gi
        return (out or None,)

    return d.values(), values_pullback


def _dict_items(d):
    pairs = list(d.items())

    def items_pullback(g):
        g = _seed(g)
        if g is None:
            return (None,)
        out = {}
        for i, (k, v) in enumerate(pairs):
            gi = _project(_part(_part(g, i), 1), v)
            if gi is not None:
                out[k] = gi
        return (out or None,)

    return d.items(), items_pullback


def _dict_keys(d):
    return d.keys(), lambda g: (None,)


def _dict_get(d, key, *default):
    if key in d:
        y = d[key]

        def get_pullback(g):
            gv = _project(g, y)
            return (None if gv is None else {key: gv}, None) + (None,) * len(default)

        return y, get_pullback
    y = default[0] if default else None

    def get_default_pullback(g):
        return (None, None) + ((_seed(g),) if default else ())

    return y, get_default_pullback


for _cls in (dict, collections.OrderedDict, collections.defaultdict):
    _rt._METHOD_RULES[(_cls, "values")] = _dict_values
    _rt._METHOD_RULES[(_cls, "items")] = _dict_items
    _rt._METHOD_RULES[(_cls, "keys")] = _dict_keys
    _rt._METHOD_RULES[(_cls, "get")] = _dict_get
