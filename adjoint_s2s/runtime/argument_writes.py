"""Arguments a callee wrote into, for ``runtime.keeping``: whether another argument
refers to the same memory (`f(a, a)`, `f(y, y[::-1])`), what a kept argument holds,
and the MutationError messages that name the callee, the call's site and the way out."""
import numpy as np

from ..errors import describe, MutationError, short_name
from .sites import _at


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
