"""Tangents of structured values: tuples, lists, dicts, closures, and the gradients of
the arguments of a call (``*starred``, keywords, defaults).

    >>> part((1.0, 2.0), 1)
    2.0
"""
import types
import weakref

import numpy as np

from ..errors import NotDifferentiableError
from ..tangents import AbstractZero, add, Tangent, Thunk, unthunk
from .sites import _at, user_call_site


# ----- structure: tuples, lists, dicts, objects, closures ------------------------------------


class GradList(list):
    """A list tangent owned by generated code (it may be updated in place)."""


class OneItem(GradList):
    """The gradient of a list from one item's (``getitem_grad`` of ``xs[i]``): None but
    at ``index``. ``acc`` adds it into a list accumulator that only the caller holds by
    that item alone, so reading n items of a list costs O(n), not O(n * len)."""


def part(g, i):
    """Component i of a tuple/list/dict/Tangent tangent; None for zeros."""
    if type(g) is tuple and type(i) is int:  # the common case first (a callee's tuple result)
        return g[i] if -len(g) <= i < len(g) else None
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
    if isinstance(g, (float, complex, np.generic)) and isinstance(i, tuple):
        # a 0-d array's cotangent as a number (x[..., None] of a 0-d x, differentiated
        # again through np.trace's adjoint at third order)
        return np.asarray(g)[i]
    raise NotDifferentiableError(
        f"expected a tuple or list gradient, got {type(g).__name__} ({g!r}); "
        "a rule or pullback returned the wrong structure"
    )


def field_adjoint(name, g):
    if g is None or isinstance(g, AbstractZero):
        return None
    return Tangent(types.FunctionType, **{name: g})


def seq_adjoint(v, g):
    if type(v) is not list and user_object(v):
        return loop_adjoint(v, g)  # (g None too: the items' pullback runs once per loop)
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
    return items_adjoint(v, list(g))


def _iterates_in_python(cls):
    """Does cls hand out its items through methods of its own written in Python?"""
    for name in ("__iter__", "__next__", "__getitem__"):
        if isinstance(getattr(cls, name, None), types.FunctionType):
            return True
    return False


_ITERATED_AT = weakref.WeakKeyDictionary()  # object -> the site of the loop over it


def _weakrefable(obj):
    try:
        weakref.ref(obj)
        return True
    except TypeError:
        return False


def items_adjoint(src, grads):
    """The gradients of the items handed out by iterating src, as the gradient of src: a
    list, which the rule that made src (map, zip, np.ndenumerate...: a class marked
    ``_items_adjoint``) takes back. An object whose own Python methods hand out its items
    has no such rule: its tangent is its fields', and a list would be dropped there
    (a zero gradient where the items carry data). Refused instead, when any item has
    a gradient."""
    cls = type(src)
    if getattr(cls, "_items_adjoint", False) or not _iterates_in_python(cls):
        return grads
    if all(g is None or isinstance(g, AbstractZero) for g in grads):
        return grads
    site = _ITERATED_AT.get(src) if _weakrefable(src) else None
    site = site or user_call_site()
    raise NotDifferentiableError(
        f"the items of a {cls.__module__}.{cls.__qualname__} object, handed out by its own "
        f"__iter__/__next__/__getitem__ (iterated in differentiated code"
        f"{f' at {site[1]}, line {site[2]}' if site else ''}), carry a gradient that adjoint_s2s cannot give "
        f"back to the object; iterate over the list or array it holds instead (for an "
        f"array's elements with their indices: zip(np.ndindex(x.shape), x.ravel()))"
    )


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


def display_part(g, entries, i):
    """The gradient of entry i of a dict display ``{k: v, **d, ...}`` from the
    display's gradient g. entries: ``(is_star, key or the ** dict)`` of every entry, in
    order. A key that a later entry sets again was replaced in the dict: it gets none."""
    if g is None:
        return None
    later = _later_keys(entries, i)
    star, what = entries[i]
    if not star:
        return None if what in later else part(g, what)
    if not isinstance(what, dict):  # (`{**m}` of a mapping of a class of its own)
        return mapping_grad(what, [g.get(k) for k in what.keys() if k not in later])
    return {k: g.get(k) for k in what if k not in later}


def mapping_grad(obj, grads):
    """The gradient of a mapping of a class of its own (keys() and __getitem__, or a
    collections.abc.Mapping) whose items `f(**m)`, `{**m}` or `dict(m)` took, from the
    gradients of those items: none if they have none; refused otherwise, as its items come
    from its __getitem__, which Python ran there undifferentiated (a dict of gradients
    given to the object would be dropped: a zero)."""
    if all(g is None or isinstance(g, AbstractZero) for g in grads):
        return None
    cls = type(obj)
    raise NotDifferentiableError(
        f"the items of a {cls.__module__}.{cls.__qualname__} object (a mapping of a class of its "
        f"own, unpacked with ** or given to dict()) carry a gradient that adjoint_s2s cannot give "
        f"back to the object{_at()}: Python took them through its keys() and __getitem__, which "
        f"are not differentiated there. Read its items by key (`m[\"a\"]`, differentiated) and pass "
        f"them by name, or keep the values in a dict")


def display_part_adjoint(t, entries, i, g):
    """The adjoint of display_part(t, entries, i) in t (it is linear in t): g placed
    where display_part read it."""
    if g is None or isinstance(g, AbstractZero):
        return None
    later = _later_keys(entries, i)
    star, what = entries[i]
    if not star:
        return None if what in later else {what: g}
    return {k: v for k, v in g.items() if k not in later}


def _later_keys(entries, i):
    """The keys the entries after entry i of a dict display set (a dict: its equality)."""
    later = {}
    for star, what in entries[i + 1:]:
        if star:
            later.update(dict.fromkeys(what))
        else:
            later[what] = None
    return later


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


def starred_len(value):
    """len(value) of a *starred argument, asked in the pullback: for an iterator a rule
    made (map, zip, filter, reversed, iter: the forward pass used it up) the number of
    items it handed out."""
    if getattr(type(value), "_items_adjoint", False):
        return len(value.taken)
    return len(value)


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
    if not isinstance(d, dict):  # (`f(**m)` of a mapping of a class of its own)
        return mapping_grad(d, [last.get(k) for k in d.keys()])
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
    if type(it) is SizedLoop:  # (its keys checked as the loop goes: loop_writing)
        return it
    if user_object(it):  # its __iter__ (or __getitem__) through AD: loop_adjoint reverses it
        items = loop_items(it)
        if items is not None:
            return items
    if getattr(type(it), "_items_adjoint", False):  # (a rule's iterator: next() after it refused)
        it.looped = True
    elif _iterates_in_python(type(it)):
        try:  # where the loop is, for the refusal its pullback may raise (items_adjoint)
            _ITERATED_AT[it] = user_call_site()
        except TypeError:  # no weak references to it
            pass
    return list(it)


# loops over objects of user classes (seq, seq_adjoint) go through their methods, which the
# dispatch runs: imported last (the dispatch imports this module), complete when called
from .protocols import loop_adjoint, loop_items, user_object  # noqa: E402
from .resized import SizedLoop  # noqa: E402
