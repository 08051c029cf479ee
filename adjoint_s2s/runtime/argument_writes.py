"""Arguments a callee wrote into, for ``runtime.keeping``: whether another argument
refers to the same memory (`f(a, a)`, `f(y, y[::-1])`), what a kept argument holds,
and the MutationError messages that name the callee, the call's site and the way out."""
import numpy as np

from ..errors import describe, MutationError, short_name
from .sites import _at, _user_site


def contents(c):
    """What container or object c holds, by one level (a list's items, a dict's values, an
    object's fields), or () for an array, a number, a string, None."""
    t = type(c)
    if t is list or t is tuple or t is set or t is frozenset:
        return c
    if t is dict:
        return c.values()
    if isinstance(c, (np.ndarray, np.generic, int, float, complex, str, bytes)) or c is None:
        return ()
    fields = getattr(c, "__dict__", None)
    return fields.values() if isinstance(fields, dict) else ()


_PLAIN = {int, float, complex, str, bytes, bool, type(None), np.ndarray, np.float64}


def inner_containers(c, depth, seen, out):
    """(container, what it holds now) for each list, dict or set that the list, tuple or
    dict c holds, through lists, tuples and dicts, within depth levels: what a callee may
    change in place (`d["x"].append(v)`) while the caller reads c again. (An object's
    fields are not looked into: a field's item changed in place is refused where the
    callee is transformed, and objects of the run time keep caches there.)"""
    if depth == 0 or id(c) in seen or not isinstance(c, (list, tuple, dict)):
        return out
    seen.add(id(c))
    items = c.values() if isinstance(c, dict) else c
    if not items or set(map(type, items)) <= _PLAIN:
        return out
    for item in items:
        if isinstance(item, (list, dict, set)):
            out.append((item, _items(item)))
        if isinstance(item, (list, tuple, dict)):
            inner_containers(item, depth - 1, seen, out)
    return out


def _items(c):
    """What container c holds now, compared by identity: a list's items in order, a
    dict's keys and values, a set's members."""
    if isinstance(c, dict):
        return [(k, _Same(v)) for k, v in c.items()]
    if type(c) is set:
        return set(c)
    return [_Same(v) for v in c]


class _Same:
    """An item compared by identity (what a list, dict or set holds, see _items)."""

    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __eq__(self, other):
        return self.x is other.x

    def __hash__(self):
        return id(self.x)


def _held_ids(c, depth, seen, out):
    """The ids of what container or object c holds, within depth levels (see _holds)."""
    if depth == 0 or id(c) in seen:
        return out
    seen.add(id(c))
    items = contents(c)
    for item in items:
        out.add(id(item))
        _held_ids(item, depth - 1, seen, out)
    return out


def _overlap(a, b):
    """Whether arrays a and b share memory (when that is too hard to tell: yes)."""
    if not np.may_share_memory(a, b):
        return False
    try:
        return bool(np.shares_memory(a, b, max_work=10000))
    except np.exceptions.TooHardError if hasattr(np, "exceptions") else Exception:
        return True


def shared_arguments_error(name, other, op, where, held=False, roles=None):
    """The MutationError of a write into the argument `name` (``name[...] = v``, or ``name
    op= v``) while the argument `other` is the same array or a view of it (``f(W, W)``;
    held: `other` holds it, a record or list also passed): named as the call-site check
    names it, with the statement that called the function when a differentiated
    function did. roles: how each came from the caller, when not both as arguments
    (("argument", "captured variable"): `p.W` passed in, `A` captured by a closure)."""
    site = _user_site()
    caller = _user_site(outer=1)
    fname = site[0] if site else "the function"
    called = f", called (at {caller[1]}, line {caller[2]}, in {caller[0]})," if caller else ""
    mine, theirs = roles or ("argument", "argument")
    what = f"writes into its {mine} `{name}`" if op is None else (
        f"changes in place its {mine} `{name}` (`{name} {op}= ...`)")
    is_ = "holds it or a view of it" if held else "is the same array or a view of it"
    both = "both passed in" if roles is None else "both from outside the function"
    return MutationError(
        f"{fname}{called} {what} at {where}, and its {theirs} `{other}` {is_} ({both}), "
        f"read afterwards. Inside differentiated code a write into an array that other "
        f"code still refers to goes to a copy, so `{other}` would show the old values where "
        f"Python shows the new ones. Pass arrays that do not share memory (a copy of the "
        f"array, `.copy()`, for one of them), or copy inside the function (`{name} = "
        f"{name}.copy()` first)"
    )


def _check_shared_arguments(f, args, kwargs, written):
    """A callee wrote an argument that another argument also refers to (`f(a, a)`, a
    view of it `f(y, y[::-1])`): Python shows the write through both, differentiated
    code writes a copy, and the other still shows the old values."""
    given = [(i, a) for i, a in enumerate(args)] + list(kwargs.items())
    given = [(i, a) for i, a in given if isinstance(a, (np.ndarray, list, dict, set))]
    if len(given) < 2:
        return
    for i, a in given:
        if not any(r is a for r in written):
            continue
        for j, b in given:
            if j == i:
                continue
            if b is a or (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                          and _overlap(a, b)):
                raise _written_argument(f, i, None, other=j)


def _argument_name(f, i):
    if type(i) is str:
        return f"its argument `{i}`"
    code = getattr(f, "__code__", None)
    if code is not None and 0 <= i < code.co_argcount:
        return f"its argument `{code.co_varnames[i]}`"
    return f"its argument #{i + 1}"


def _written_inner(f, i, via):
    """A callee changed in place (its items) a list, dict or set the caller read out of
    the container or object `via` and reads again through it."""
    name = short_name(f).rsplit(".", 1)[-1]
    return MutationError(
        f"{describe(f)}, called{_at() or ' from differentiated code'}, changes in place "
        f"(`.append`, `.extend`, `.insert`...) {_argument_name(f, i)}, a list or dict the "
        f"calling function read out of `{via}` and reads again through `{via}`: the "
        f"gradient of what is read through `{via}` would not reach the new items. Return "
        f"the new items from {name} and put them back through `{via}` in the calling "
        f"function (`{via}[k] = {via}[k] + new`), or pass a copy"
    )


def _written_argument(f, i, via=None, held=False, other=None):
    what = _argument_name(f, i)
    name = short_name(f).rsplit(".", 1)[-1]
    if other is not None:
        read = (f"{_argument_name(f, other)[4:]} is the same object or a view of it, so "
                f"Python shows the write through both")
        way = (f"Pass {name} a copy (`{name}(x, x.copy())`), or give it one argument "
               f"and let it use that one twice")
    elif via == "":
        read = ("it was given through *args or **kwargs, which differentiated code "
                "cannot follow back to the calling function's names")
        way = (f"Pass it by name (`{name}(x)`) and read it again after the call, or pass "
               f"a copy")
    elif via is None:
        read = "the calling function reads that container again after the call"
        way = (f"Return the container from {name} and rebind it (`x = {name}(x, ...)`), or "
               f"pass a copy the caller does not read again")
    else:
        read = (f"the calling function reads it again after the call through `{via}`, "
                f"another name for it or a view of it")
        way = (f"Take `{via}` after the call, or pass {name} a copy "
               f"(`{name}(x.copy(), ...)`)")
    if held:
        what = f"an array, list or dict that {what} holds (an item or a field of it)"
        way = (f"Return the changed value from {name} and put it back into the container "
               f"or object in the calling function, or pass a copy")
    return MutationError(
        f"{describe(f)}, called{_at() or ' from differentiated code'}, writes into {what} "
        f"(directly or through a function it calls), and {read}. Inside differentiated code a write into an array, list or dict that "
        f"other code still refers to goes to a copy, so the caller would keep the old "
        f"values where Python shows the new ones. {way}"
    )


def _changed_inside(f, i, via):
    """A callee changed in place a list or dict held inside argument i (`d["x"].append(v)`),
    which the caller reads again (through `via`, or by its own name)."""
    name = short_name(f).rsplit(".", 1)[-1]
    through = f" through `{via}`" if via else ""
    return MutationError(
        f"{describe(f)}, called{_at() or ' from differentiated code'}, changes in place "
        f"(`.append`, `.extend`, `.insert`...) a list or dict held inside "
        f"{_argument_name(f, i)}, and the calling function reads it again{through} after "
        f"the call: the gradient of what is read there would not reach the new items. "
        f"Write the new item back in {name} (`d[k] = d[k] + [v]`), or return the new "
        f"items from {name} and put them back in the calling function"
    )


def _written_held(f, i, name):
    what = _argument_name(f, i)
    fname = short_name(f).rsplit(".", 1)[-1]
    return MutationError(
        f"{describe(f)}, called{_at() or ' from differentiated code'}, changes in place an object that {what} holds (directly or through "
        f"a function it calls), and the calling function reads that object again after "
        f"the call as `{name}`. Differentiated code follows an object by the names the "
        f"calling function gives it: `{name}` would keep the old values where Python shows "
        f"the new ones (an array is changed copy on write), or its gradient would miss the "
        f"change (a list, dict or set). Read the "
        f"values back through the argument after the call (or return them from {fname}), "
        f"or change `{name}` itself"
    )


def _check_slice_length(obj, idx, v):
    """`lst[i:j] = vs` with another number of items than the slice has changes the
    list's length: the pullback finds the items by their places after the write, and
    would give the old ones' gradients to the wrong places. Refused."""
    n = len(range(*idx.indices(len(obj))))
    try:
        k = len(v)
    except TypeError:
        return  # (Python raises its own error for the write)
    if k == n or (  # (the tail replaced, `lst[i:] = vs`: the places before agree)
        idx.step in (None, 1) and (idx.start is None or idx.start >= 0)
        and idx.indices(len(obj))[1] == len(obj)
    ):
        return
    raise MutationError(
        f"writing {k} items into a slice of {n} items of a list (`lst[i:j] = vs`, which "
        f"changes the list's length) is not supported inside a differentiated function"
        f"{_at()}: the gradient would reach the wrong items. Build the new list instead "
        f"(`lst = lst[:i] + vs + lst[j:]`)"
    )


def _tuple_put_back(t, idx, v):
    """`t[idx][...] = w` on a tuple t (a *args parameter): the item's copy on write v put
    back into a new tuple. Storing anything else into a tuple fails, as in Python."""
    old = t[idx]
    if not isinstance(old, (np.ndarray, list, dict, set)) or type(v) is not type(old):
        raise TypeError("'tuple' object does not support item assignment")
    out = list(t)
    out[idx] = v
    return tuple(out)
