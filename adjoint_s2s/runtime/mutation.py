"""Mutation: list methods and their inverses (``append``/``unappend``, ...), ``setitem``
on a copy, and the calls that keep the arguments their caller reads again
(``call_keeping``), which must see a callee's writes."""
import copy
import sys
import types

import numpy as np

from ..errors import MutationError, shared_write_message
from ..tangents import AbstractZero, add
from .sites import _user_file
from .user_classes import refuse_tuple_item
from .argument_writes import (
    contents,
    _check_shared_arguments,
    _held_ids,
    _written_argument,
    _changed_inside,
    _check_slice_length,
    _items,
    _tuple_put_back,
    _written_held,
    _written_inner,
    inner_containers,
    shared_arguments_error,
)
from .structure import GradList, part
from .accumulate import _PRIVATE_REFS
from .fields import _store_items
from .user_classes import own_setitem, refuse_own_setitem
from .. import rules as R
from .dispatch import call, call_primal, rule_pair
from .methods import _drop_first, call_method


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
    if type(b_lst) is GradList and _refcount(b_lst) <= _PRIVATE_REFS:
        del b_lst[n:]  # (only the caller holds it: shortened in place, as a pop)
        return b_lst, g
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


_ndarray = np.ndarray
_F64 = np.dtype(np.float64)  # (compared by identity first: the usual dtype)
_refcount = sys.getrefcount


def setitem(obj, idx, v):
    """obj[idx] = v, copy on write: the old container stays intact for the backward pass.

    An array that nothing but the generated code's own variable refers to (no alias, no
    view, no tape entry, not the caller's argument: its reference count says so) is
    written in place, as Python would: nobody can see the old values, and the pullback
    only reads its shape (the reverse pass saves it otherwise, which adds a reference).
    A loop writing ``H[t] = h`` is then O(1) per step instead of a copy of H.
    """
    if (  # a real array row into a private real array (H[t] = h in a loop): in place
        type(obj) is _ndarray
        and type(v) is _ndarray
        and obj.base is None
        and _refcount(obj) <= _PRIVATE_REFS
        and (v.dtype is _F64 or v.dtype.kind in "fiub")
    ):
        try:  # NumPy raises before writing into a read-only obj (then: copy on write below)
            obj[idx] = v
        except ValueError:
            pass
        else:
            return obj
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
    tobj = type(obj)
    if tobj is not list and tobj is not dict and own_setitem(tobj):
        refuse_own_setitem(tobj)
    if isinstance(obj, (list, dict)):
        if type(idx) is slice and isinstance(obj, list):
            _check_slice_length(obj, idx, v)
        # a subclass's copy keeps its type and behaviour (defaultdict, OrderedDict, the user's)
        out = list(obj) if tobj is list else dict(obj) if tobj is dict else copy.copy(obj)
        out[idx] = v
    elif isinstance(obj, tuple):  # the write-back of `t[0][0] = v`
        return _tuple_write_back(obj, idx, v)
    else:
        obj[idx] = v
        return obj
    if _KEEP_DEPTH:
        _REPLACED.append(obj)
    return out


def _tuple_write_back(obj, idx, v):
    """`t[i] = item` that puts back the item of `t[i][j] = v`: the tuple already holds an
    item written in place; a copy (a list's copy on write) it cannot take back."""
    if type(idx) is int and -len(obj) <= idx < len(obj) and obj[idx] is v:
        return obj
    refuse_tuple_item(obj, idx)


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
    an i in keep (call_keeping, and its rule for differentiating generated code again).

    An entry of keep names an argument by its position, or by its keyword (a str): alone
    (the caller takes what the callee left in it, kept), as (which, the other name the
    caller reads it by; False for a method's argument: refused if written), or as
    (which, name, object) for an object the argument holds that the caller reads again
    by name. "*" stands for every argument (a call with *args or **kwargs, whose
    positions are known only now): any of them written is refused."""
    global _KEEP_DEPTH
    mark = len(_REPLACED)
    rmark = len(_REBOUND)
    if "*" in keep:
        keep = tuple(k for k in keep if k != "*") + tuple(
            (i, "") for i in range(len(args))) + tuple((k, "") for k in kwargs)
    held, watched = _watch(keep, args, kwargs)
    _KEEP_DEPTH += 1
    try:
        out = run(f, *args, **kwargs)
        for c, before, (error, i, via) in watched:
            if _items(c) != before:
                raise error(f, i, via)
        if len(_REPLACED) > mark or len(_REBOUND) > rmark:
            written = [r for r in _REPLACED[mark:]] + [old for old, _ in _REBOUND[rmark:]]
            for k in held:  # an object an argument holds, copied on write
                if any(r is k[2] for r in written):
                    raise _written_held(f, k[0], k[1])
            _check_shared_arguments(f, args, kwargs, written)
            _check_kept(f, keep, args, kwargs, _REPLACED[mark:], _REBOUND[rmark:], written)
        return out
    finally:
        _KEEP_DEPTH -= 1
        if not _KEEP_DEPTH:
            _REPLACED.clear()
            _REBOUND.clear()


def _watch(keep, args, kwargs):
    """What keeping compares after the call: (the entries (position, name, object) whose
    argument does hold the object now, [(a list, dict or set, what it holds now, (the
    error if that changes, position, name))]). Watched: an object an argument holds
    that the caller reads again by name; an argument read out of the container `name`
    (position, name, True); what a kept argument holds inside a list, tuple or dict
    (`mm[0]`). The callee changes them in place, as Python does, but the caller's
    gradient of them would not see the change."""
    held = [k for k in keep if type(k) is tuple and len(k) == 3 and k[2] is not True
            and k[2] is not _arg(args, kwargs, k[0]) and _holds(_arg(args, kwargs, k[0]), k[2], 4, set())]
    watched = [(k[2], _items(k[2]), (_written_held, k[0], k[1])) for k in held
               if type(k[2]) in (list, dict, set)]
    for k in keep:
        if type(k) is tuple and len(k) == 3 and k[2] is not True:
            continue
        i, via = k[:2] if type(k) is tuple else (k, None)
        a = _arg(args, kwargs, i)
        if type(k) is tuple and len(k) == 3 and type(a) in (list, dict, set):
            watched.append((a, _items(a), (_written_inner, i, via)))
        watched += [(c, before, (_changed_inside, i, via)) for c, before in inner_containers(a, 4, set(), [])]
    return held, watched


def _check_kept(f, keep, args, kwargs, replaced, rebound, written):
    """After a keeping call that wrote something: raise MutationError for a kept argument
    copied on write, or holding a written object not put back into it, or rebound while
    the caller reads it by another name; note the value the callee left in the others
    (kept)."""
    for k in keep:  # an argument, or (argument, the other name it is read by)
        if type(k) is tuple and len(k) == 3 and k[2] is not True:
            continue
        i, via = k[:2] if type(k) is tuple else (k, None)
        via = None if via is False else via  # (a method's argument)
        a = _arg(args, kwargs, i)
        if any(r is a or (type(r) is np.ndarray and type(a) is np.ndarray and np.may_share_memory(r, a))
               for r in replaced):  # (a view of it written: `r = a[:2]; r[0] = v` in the callee)
            raise _written_argument(f, i, via)
        final = a
        for old, new in rebound:
            if old is final:
                final = new
        # an object the argument holds (an array in a list or dict, a field),
        # written and not put back into it: the caller reads it again there
        if not isinstance(final, np.ndarray):
            inside = _held_ids(final, 4, set(), set())
            if any(id(r) in inside and r is not a for r in written):
                raise _written_argument(f, i, via, held=True)
        if final is not a:
            if k is not i:  # read through another name, a method's, or any (*args)
                raise _written_argument(f, i, via)
            _KEPT[id(a)] = (a, final)  # the caller takes it with kept()


def _arg(args, kwargs, i):
    """The argument at position i (an int) or given by the keyword i (a str)."""
    return args[i] if type(i) is int else kwargs[i]


_REBOUND = []  # (old, new): an argument rebound by `a op= v` while a keeping call runs


_KEPT = {}  # id(argument) -> (argument, the value the callee left in it), for kept()


def rebinding(old, new):
    """Generated before `a = new` for `a op= v` on a parameter: Python changes an array,
    list or dict in place there, and a caller reading its own variable again sees the
    change; differentiated code rebinds. Logged, so that call_keeping hands the new
    value to the caller (kept), as Python shows it."""
    if _KEEP_DEPTH and new is not old and isinstance(old, (np.ndarray, list, dict)):
        _REBOUND.append((old, new))


def replaced(old, container=None, container_name=None, line=None, written=None):
    """Generated before an item's new value is stored for `c[k] op= v` (`obj.f op= v`):
    Python changes the item in place there when it is an array, list, dict or set, and
    every other name for it shows the change; differentiated code binds a new value
    into the container. Logged as a copy on write while a keeping call runs, so that a
    caller reading the old object again is refused the change (see keeping). Given the
    container it was read out of: refused if the container holds it at another place
    too (`[y] * 2`), which Python would change as well. With written (the item's source,
    `rows[0]`): the same for a write into an item (`rows[0][1] = v`, its copy on write
    put back at that one place of `rows` only)."""
    if not isinstance(old, (np.ndarray, list, dict, set)):
        return
    if _KEEP_DEPTH:
        _REPLACED.append(old)
    # (at two places of the container it has two references there, besides this frame's
    # and the caller's: fewer, and the scan of the container is skipped)
    if type(container) in (list, dict) and sys.getrefcount(old) > 4:
        items = container.values() if type(container) is dict else container
        if sum(1 for item in items if item is old) > 1:  # (`[y] * 2`, y appended twice)
            c = container_name
            what, out = (f"`{c}[...] op= ...` changes", f"write `{c}[k] = {c}[k] op ...`")
            if written is not None:  # (`rows[0][1] = v`)
                what, out = f"writing into `{written}` changes", (
                    f"put a copy at that place first (`{written} = {written}.copy()`)")
            raise MutationError(
                f"{what} in place an item that `{c}` holds at more than one place, in "
                f"differentiated code at {_user_file()}, line {line}: Python shows the change "
                f"at every place, differentiated code only at the one written. Put distinct "
                f"objects into `{c}` (`[y.copy() for _ in range(n)]`), or {out}"
            )


def snapshot(x):
    """A copy of x's contents as they are now, for the pullback, before the forward code
    changes x in place as Python does (x carries no gradient, so the write is not made
    copy on write: every other name for x, and the caller, see it). Arrays, lists, dicts
    and sets are copied (shallowly); anything else is kept as it is."""
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, (list, dict, set)):
        return copy.copy(x)
    return x


def private(x):
    """x itself when nothing but the calling code's variable holds it (no other name, no
    view, no tape entry, no pullback closure), else a copy: the forward code then
    changes it in place as Python does, and whoever held the old object keeps the values
    it saw (see InPlaceMixin.snapshot_writes). Values that are not arrays, lists,
    dicts or sets are returned as they are."""
    if type(x) is np.ndarray:
        if x.base is None and sys.getrefcount(x) <= _PRIVATE_REFS and x.flags.writeable:
            return x
        if _KEEP_DEPTH:  # (a copy on write: see keeping)
            _REPLACED.append(x)
        return x.copy()
    if isinstance(x, (list, dict, set)) and sys.getrefcount(x) > _PRIVATE_REFS:
        if _KEEP_DEPTH:
            _REPLACED.append(x)
        return copy.copy(x)
    return x


def setitem_arg(obj, idx, v):
    """setitem for a parameter of the calling function: a copy it made (copy on write)
    is logged as a rebinding, so that a caller reading its own variable again takes the
    written container (kept), as Python shows the write."""
    n = len(_REPLACED)
    if type(obj) is tuple:  # a *args parameter: an item written into, put back
        out = _tuple_put_back(obj, idx, v)
    else:
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


def check_shared(value, other, name, other_name, op, line, arguments=False):
    """Generated before a write into `name` (``name[i] = v``, or ``name op= v`` when op is
    given) while `other_name` may name the same container and is read afterwards, where
    that depends on values: differentiated code writes a copy (or rebinds), so the other
    name would keep the old values where Python shows the new ones. Raises MutationError
    when they do share: arrays sharing memory (a flat iterator, ``a.flat``, by its array),
    `value` an element of the list or dict `other` (or an array sharing memory with an
    item of a list or tuple of views, ``np.split(a, 2)``), or the same container; a write
    into a list never changes an array. arguments: both came from the caller (``f(W, W)``),
    or a pair of words saying how each did ("argument", "captured variable")."""
    if isinstance(value, (int, float, complex, str, tuple, np.generic)) or value is None:
        return  # numbers: `a += v` rebinds in Python too; they cannot be written into
    element = False
    if type(value) is np.flatiter:
        value = value.base
    if type(other) is np.flatiter:
        other = other.base
    if isinstance(value, np.ndarray) and isinstance(other, np.ndarray):
        shared = np.may_share_memory(value, other)
    elif isinstance(other, (list, dict, tuple)) and other is not value:
        items = other.values() if isinstance(other, dict) else other
        shared = element = any(item is value for item in items)
        if not shared and isinstance(value, np.ndarray):
            shared = _holds(other, value, 2, set())  # (a view of value among them)
    elif isinstance(value, (list, dict)) and isinstance(other, np.ndarray):
        shared = False  # (a write into a list of views, np.split's, rebinds an item)
    else:
        shared = other is value
    if shared and arguments:
        raise shared_arguments_error(name, other_name, op, f"{_user_file()}, line {line}", held=element,
                                     roles=arguments if isinstance(arguments, tuple) else None)
    if shared:
        what, hint = shared_write_message(name, other_name, op, element)
        raise MutationError(f"{what}, in differentiated code at {_user_file()}, line {line}: {hint}")


def check_held(value, holder, name, holder_name, line, arguments=False):
    """Generated before a change in place of `name` (``name[i] = v``, ``name op= v``,
    ``name.append(v)``) while `holder_name`, a container or object that may hold it (or a
    view of it), is read afterwards: Python shows the change through the holder,
    differentiated code would not. Raises MutationError when the holder does hold this
    very object, or an array sharing memory with it (``[a[:2]]``, ``Box(a.T)``), at any
    depth (lists, tuples, dicts, sets, the fields of objects)."""
    if isinstance(value, (int, float, complex, str, tuple, np.generic)) or value is None:
        return  # (numbers, tuples: not changed in place)
    if arguments and _holds(holder, value, 4, set()):  # f(W, Box(W)), f(W, [W])
        raise shared_arguments_error(name, holder_name, None, f"{_user_file()}, line {line}", held=True)
    if _holds(holder, value, 4, set()):
        raise MutationError(
            f"changing `{name}` in place while `{holder_name}` holds it or a view of it "
            f"(`{holder_name}` is used afterwards), in differentiated code at {_user_file()}, "
            f"line {line}: differentiated code follows `{name}` by its name, so what is read "
            f"through `{holder_name}` would keep the old values or miss the gradient of the "
            f"change. Put `{name}` (or its view) into `{holder_name}` after changing it, "
            f"change it through `{holder_name}`, or put a copy (`{name}.copy()`) into "
            f"`{holder_name}` if it should keep the old values"
        )


def _holds(c, value, depth, seen):
    """Whether container or object c holds value (by identity; for an array, any array
    sharing memory with it: a view) within depth levels."""
    if depth == 0 or id(c) in seen:
        return False
    seen.add(id(c))
    items = contents(c)
    array = isinstance(value, np.ndarray)
    for item in items:
        if item is value or _holds(item, value, depth - 1, seen):
            return True
        if array and isinstance(item, (np.ndarray, np.flatiter)) and np.may_share_memory(
                item.base if type(item) is np.flatiter else item, value):
            return True
    return False


def call_method_keeping(keep, obj, name, /, *args, **kwargs):
    """call_method for a caller that reads args[i], i in keep, again (see call_keeping)."""
    if type(obj) in R.BOUND_RULE_CLASSES and rule_pair(getattr(obj, name), len(args), tuple(kwargs)):
        return call_method(obj, name, *args, **kwargs)  # (a rule: it writes into no argument)
    meth = getattr(type(obj), name, None)
    if isinstance(meth, types.FunctionType) and name not in getattr(obj, "__dict__", ()):
        # (k + 1, False): a method's argument rebound by `a op= v` is not handed back to
        # the caller (kept): refused, as a write into it
        if "*" in keep:  # every argument but the object itself (a method changes it)
            keep = tuple(k for k in keep if k != "*") + tuple(range(len(args))) + tuple(kwargs)
            keep = tuple((k, "") if type(k) in (int, str) else k for k in keep)
        y, pb = call_keeping(tuple(_shifted(k) for k in keep), meth, obj, *args, **kwargs)
        return y, _drop_first(pb)
    return call_method(obj, name, *args, **kwargs)


def _shifted(k):
    """A keep entry of a method call for its function (self first). (k + 1, False): a
    method's argument rebound by `a op= v` is not handed back to the caller (kept):
    refused, as a write into it."""
    if type(k) is int:
        return (k + 1, False)
    if type(k) is str:
        return (k, False)
    i = k[0] + 1 if type(k[0]) is int else k[0]
    return (i,) + tuple(k[1:])
