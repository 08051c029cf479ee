"""``functools.reduce``: a run-time rule (registered with ``special``) that calls the
function on the running value and each item in turn, as reduce calls it, each call a pair
of its own (``runtime.call``: inlined rules, generated code, or a rule of the user's);
the pullback runs the calls' pullbacks backwards. Python's own errors are Python's: an
empty iterable without an initial value raises reduce's TypeError.

    reduce(lambda a, b: a * b, [x, y, z])      # ((x * y) * z)
    # pullback: b_acc = g; (b_acc, b_z) = pb_3(b_acc); (b_x, b_y) = pb_2(b_acc)
"""
import functools

from .. import runtime as _rt
from ..tangents import add, value_or_none as _seed
from . import special
from .sequences import _collect, _items, _project


@special(functools.reduce)
def reduce_pair(f, iterable, *initial):
    """(the reduced value, its pullback): (None, f's tangent, the iterable's gradient
    shaped like it, and the initial value's when one was given)."""
    items = _items(iterable)
    if len(initial) > 1 or not initial and len(items) == 0:
        return functools.reduce(f, items, *initial), None  # (Python's TypeError)
    acc = initial[0] if initial else items[0]
    start = 0 if initial else 1
    pullbacks = []
    for i in range(start, len(items)):
        acc, pb = _rt.call(f, acc, items[i])
        pullbacks.append(pb)

    def reduce_pullback(g):
        g = _seed(g)
        if g is None:
            return (None, None, None) + (None,) * len(initial)
        df = None
        grads = [None] * len(items)
        for k in range(len(pullbacks) - 1, -1, -1):
            if g is None:  # (nothing flows to the calls before)
                break
            got = pullbacks[k](g)
            df = add(df, got[0])
            g = _seed(got[1])  # the running value's, for the call before
            grads[start + k] = _project(got[2], items[start + k])
        if not initial and g is not None:
            grads[0] = _project(g, items[0])
        return (None, df, _collect(iterable, grads)) + ((g,) if initial else ())

    return acc, reduce_pullback
