"""``copy.deepcopy`` of plain data: numbers, arrays, strings and lists, tuples and dicts
of them. The copy shares nothing that can change, and its tangent has the structure of
the original's, so the copy's gradient is the original's. An object (a user class, a
subclass of a container) is refused: its fields' gradients are kept by object, and the
copy's would not reach the original's."""
import copy

import numpy as np

from ..errors import MissingAdjointError
from . import special

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
