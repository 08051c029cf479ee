"""``copy.deepcopy`` of plain data, and ``dataclasses.replace``.

``copy.deepcopy`` of plain data: numbers, arrays, strings and lists, tuples and dicts
of them. The copy shares nothing that can change, and its tangent has the structure of
the original's, so the copy's gradient is the original's. An object (a user class, a
subclass of a container) is refused: its fields' gradients are kept by object, and the
copy's would not reach the original's.

``dataclasses.replace(s, v=e)`` is what it does in Python: the class called with the
fields it keeps, each read off s, and the changes: the pullback is that of the reads and
of the constructor (it was differentiated through dataclasses' own source, about 300 us a
call). A class with init=False fields or InitVars goes through that source still."""
import copy
import dataclasses
import types

import numpy as np

from ..errors import MissingAdjointError
from .. import runtime as _rt
from . import special
from .. import rules as R

_LEAVES = (int, float, complex, bool, str, bytes, type(None), np.ndarray, np.generic)


def _plain(x, depth=0):
    """Is x plain data (see the module's docstring)? (A cycle or deep nesting: no.)"""
    if isinstance(x, _LEAVES):
        return type(x) is not np.ndarray or x.dtype != object
    if depth > 20:
        return False
    t = type(x)
    if t is list or t is tuple:
        return all(_plain(v, depth + 1) for v in x)
    if t is dict:
        return all(_plain(k, depth + 1) and _plain(v, depth + 1) for k, v in x.items())
    return False


@special(copy.deepcopy)
def deepcopy_pair(x, *memo):
    if not _plain(x):
        raise MissingAdjointError(
            copy.deepcopy,
            f"a deep copy of a {type(x).__name__} (or of a container holding an object) has "
            f"no rule: the gradients of an object's fields are kept by object, and the "
            f"copy's would not reach the original's. Deep-copy numbers, arrays, strings and "
            f"lists, tuples and dicts of them, or build the copy yourself",
        )
    y = copy.deepcopy(x, *memo)

    def deepcopy_pullback(g):
        return (None, g) + (None,) * len(memo)

    return y, deepcopy_pullback


# dataclasses.replace as its own source, for the classes replace_pair leaves to it
_REPLACE_SOURCE = types.FunctionType(dataclasses.replace.__code__, dataclasses.replace.__globals__, "replace",
                                     dataclasses.replace.__defaults__, dataclasses.replace.__closure__)


def _init_fields(obj, changes=()):
    """The names of the fields dataclasses.replace passes to obj's class (its init fields),
    or None where replace does more than that (init=False fields, InitVars) or is given
    a name that is none of them (its error)."""
    fields = getattr(type(obj), "__dataclass_fields__", None)
    if not isinstance(fields, dict) or isinstance(obj, type):
        return None
    kinds = [f._field_type for f in fields.values()]
    if dataclasses._FIELD_INITVAR in kinds or any(not f.init for f in fields.values()
                                                   if f._field_type is dataclasses._FIELD):
        return None
    names = tuple(n for n, f in fields.items() if f._field_type is dataclasses._FIELD)
    return names if all(k in names for k in changes) else None


R.nondifferentiable_builtin(_init_fields, reason="it reads a class's field names")


def _replace_plain(obj, **changes):
    """dataclasses.replace(obj, **changes) for a class whose init fields _init_fields names,
    in the subset adjoint_s2s differentiates (at first order and again)."""
    kwargs = {}
    for name in _init_fields(obj):
        if name in changes:
            kwargs[name] = changes[name]
        else:
            kwargs[name] = getattr(obj, name)
    return type(obj)(**kwargs)


@special(dataclasses.replace)
def replace_pair(obj, /, **changes):
    if _init_fields(obj, tuple(changes)) is None:
        y, pb = _rt.call(_REPLACE_SOURCE, obj, **changes)
        return y, pb
    y, pb = _rt.call(_replace_plain, obj, **changes)
    return y, pb
