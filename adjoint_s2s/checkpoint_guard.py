"""What ``checkpoint``'s replay must see as the forward pass saw it.

The backward pass of ``checkpoint(f, *args)`` runs f again on the arguments it kept.
That replay reads f's state as it is then, not as it was: a name f's closure reads,
rebound since (a loop rebinding ``scale`` under ``checkpoint(lambda t: scale * t, h)``);
a field of a callable object set again; an array f reads, written in place; an argument
f itself changed in place. Replayed with other state the gradient is silently wrong, so:

* a name of f's closure rebound since the call is read as it was: the replay runs a copy
  of f whose cells hold the values they held when f was called;
* an argument f changes in place is refused when f runs (its arrays are read-only while
  it does, its lists and dicts are compared);
* a field of the callable object (or of a bound method's object) set again since, or a
  closure of a function f's closure holds rebound, is refused;
* what the replay returns is compared with what the call returned: other state read in
  place (an array written into, a global changed, random numbers) is refused.
"""
import types

import numpy as np

from .errors import MutationError, NotDifferentiableError
from .runtime.sites import _at

_EMPTY = object()  # a cell not bound yet


class State:
    """What f's replay reads, as it was when checkpoint called f."""

    __slots__ = ("cells", "values", "nested", "fields")

    def __init__(self, cells, values, nested):
        self.cells = cells  # f's own cells (f.__closure__) or ()
        self.values = values  # what they held
        self.nested = nested  # (cell, value) of functions f's closure or defaults hold
        self.fields = ()  # (object, its fields) of a callable object, after the call


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return _EMPTY


def _nested_cells(fn, depth, seen, out):
    """(cell, value) of the closures of the functions fn's closure or defaults hold."""
    if depth == 0 or id(fn) in seen:
        return out
    seen.add(id(fn))
    held = [_cell_value(c) for c in fn.__closure__ or ()] + list(fn.__defaults__ or ())
    for v in held:
        if type(v) is types.FunctionType:
            for c in v.__closure__ or ():
                out.append((c, _cell_value(c)))
            _nested_cells(v, depth - 1, seen, out)
    return out


def state(f):
    """The state of f's closure now (before checkpoint calls it)."""
    if type(f) is not types.FunctionType:
        return State((), (), ())
    cells = f.__closure__ or ()
    if not cells and not f.__defaults__:
        return State((), (), ())
    return State(cells, tuple(_cell_value(c) for c in cells), _nested_cells(f, 3, set(), []))


def _object_of(f):
    if type(f) is types.FunctionType:
        return None
    if isinstance(f, types.MethodType):
        f = f.__self__
    elif isinstance(f, (types.FunctionType, types.BuiltinFunctionType)):
        return None
    fields = getattr(f, "__dict__", None)
    return f if isinstance(fields, dict) else None


def call(f, args, st):
    """f(*args), refused if f changes an argument in place; notes the fields of a callable
    object (or a bound method's) as the call left them."""
    frozen = []
    lists = []
    for i, a in enumerate(args):
        for item in [a] + (list(a.values()) if type(a) is dict else list(a) if type(a) in (list, tuple) else []):
            if type(item) is np.ndarray and item.flags.writeable:
                item.flags.writeable = False
                frozen.append((i, item))
        if type(a) in (list, dict):
            lists.append((i, a, list(a.items()) if type(a) is dict else list(a)))
    try:
        y = f(*args)
    except ValueError as e:
        if frozen and "read-only" in str(e):
            raise _written(f, frozen[0][0], args) from e
        raise
    finally:
        for _, item in frozen:
            item.flags.writeable = True
    for i, a, before in lists:
        now = list(a.items()) if type(a) is dict else list(a)
        if len(now) != len(before) or any(
                x is not y_ and x != y_ for x, y_ in zip(now, before)):
            raise _written(f, i, args)
    obj = _object_of(f)
    if obj is not None:
        st.fields = (obj, dict(obj.__dict__))
    return y


def _name(f):
    """f as a message names it: `step`, `the lambda`, `the Layer object`."""
    if isinstance(f, (types.FunctionType, types.MethodType)):
        name = f.__name__
        return "the lambda" if name == "<lambda>" else f"`{name}`"
    return f"the {type(f).__name__} object"


def _written(f, i, args):
    code = getattr(f, "__code__", None)
    what = (f"its argument `{code.co_varnames[i]}`" if code is not None and i < code.co_argcount
            else f"its argument #{i + 1}")
    return MutationError(
        f"checkpoint of {_name(f)}{_at() or ''}, which changes {what} in place: "
        f"the backward pass would run it again on the changed values, and the "
        f"gradient through the change itself is not followed. Let it work on a "
        f"copy (`a = a.copy()` at its start) and return the new value, or call it without "
        f"checkpoint"
    )


def rebound(f, st):
    """Whether a name f's closure reads was rebound since the call (the replay then runs
    as_it_was(f, st)); refuses a change the replay cannot undo."""
    if st.fields:
        obj, before = st.fields
        now = obj.__dict__
        for k, v in before.items():
            if k not in now or (now[k] is not v and not _same(now[k], v)):
                raise _changed(f, f"the field `{k}` of the {type(obj).__name__} it runs "
                                  f"with was set again")
    for c, v in st.nested:
        if _cell_value(c) is not v:
            raise _changed(f, "a name that a function its closure holds reads was rebound")
    return any(_cell_value(c) is not v for c, v in zip(st.cells, st.values))


def as_it_was(f, st):
    """A copy of f whose closure holds what f's held when checkpoint called it."""
    cells = tuple(types.CellType() if v is _EMPTY else types.CellType(v) for v in st.values)
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, cells)
    g.__kwdefaults__ = f.__kwdefaults__
    g.__qualname__ = f.__qualname__
    g.__dict__.update(f.__dict__)
    return g


def twice(f):
    """The replay of a closure rebound since, differentiated again (a gradient of a
    gradient): the copy as_it_was makes would hold its values without their gradients."""
    return NotDifferentiableError(
        f"checkpoint of {_name(f)}{_at() or ''}, differentiated twice: a name its closure "
        f"reads was rebound after the call, and the copy of it that the backward pass "
        f"replays does not carry the gradients of the values it held. Pass those values "
        f"as arguments of checkpoint (`checkpoint(f, x, w)` with `def f(x, w)`)"
    )


def _changed(f, what):
    return MutationError(
        f"checkpoint of {_name(f)}{_at() or ''}: its backward pass runs it again, "
        f"and {what} after the forward pass, so the replay would compute another function "
        f"than the one differentiated (a silently wrong gradient). Pass the values "
        f"it reads as arguments of checkpoint (`checkpoint(f, x, w)` with `def f(x, w)`), or "
        f"leave them unchanged until the gradient is taken"
    )


def _same(a, b, depth=0):
    """Whether a and b hold the same values (numbers and arrays within rounding)."""
    if a is b:
        return True
    ta = type(a)
    if ta is type(b) and (ta is float or (ta is np.ndarray and a.shape == b.shape)):
        if ta is float:
            if a == b:
                return True
        elif (a == b).all():  # (the usual case, at a tenth of allclose's cost)
            return True
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(
            _same(x, y, depth + 1) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k], depth + 1) for k in a)
    if isinstance(a, (np.ndarray, np.generic, int, float, complex)) and isinstance(
            b, (np.ndarray, np.generic, int, float, complex)):
        if np.shape(a) != np.shape(b):
            return False
        try:
            return bool(np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True))
        except TypeError:
            return bool(np.array_equal(a, b))
    fa, fb = getattr(a, "__dict__", None), getattr(b, "__dict__", None)
    if isinstance(fa, dict) and isinstance(fb, dict) and type(a) is type(b) and depth < 4:
        return _same(fa, fb, depth + 1)
    try:
        return bool(a == b)
    except Exception:  # (no comparison: taken as the same, the other checks stand)
        return True


def same(f, y, y_again):
    """Refuses a replay that returned another value than the call did."""
    if not _same(y, y_again):
        raise _changed(f, "what it reads changed (an array written in place, a global or "
                          "an object's field set, random numbers drawn: its replay returned "
                          "another value than the call did)")
