"""The methods of NumPy's ufuncs: ``np.add.reduce``, ``np.multiply.accumulate``,
``np.add.outer``, ... and the refusal of ``np.add.at``.

A rule is keyed by the bound method (``np.add.reduce``): NumPy makes a new bound method
object at each attribute read, but they compare and hash equal (same ufunc, same method),
so the table finds the rule from any of them. The transformer resolves ``np.add.reduce``
statically (an attribute of a ufunc), and the run time finds the rule of ``u.reduce``
for a ufunc known only when it runs (``runtime/methods.py``).

* ``reduce`` / ``accumulate`` are the reductions and scans of the same ufunc, with
  ``axis=0`` by default: ``add.reduce`` is ``sum``, ``multiply.reduce`` ``prod``,
  ``maximum.reduce`` / ``minimum.reduce`` ``max`` / ``min`` (ties split evenly),
  ``logaddexp.reduce`` / ``logaddexp2.reduce`` a log-sum-exp (its adjoint the softmax),
  ``add.accumulate`` ``cumsum`` and ``multiply.accumulate`` ``cumprod``; their adjoints
  are those functions'.
* ``outer(A, B)`` is the ufunc of ``A`` with ``B.ndim`` new trailing axes and ``B``:
  the elementwise rule's partial derivatives, evaluated on that broadcast, give both
  adjoints (``B``'s with broadcasting undone, ``A``'s summed over ``B``'s axes).
* ``at(a, indices, b)`` adds (multiplies, ...) into ``a`` in place, which the pullback
  cannot follow (the values it saved would change under it): it is refused with the way
  out, never differentiated wrongly.
"""
import numpy as np

from .. import PRIMITIVES, fill, special
from ...errors import MutationError
from ...runtime.sites import _at
from .base import _CURRENT, np_fit, rule

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_ufunc_outer_left",
    "np_ufunc_outer_adjoint",
    "np_logaddexp_reduce_adjoint",
]


def np_ufunc_outer_left(a, b):
    """A with B.ndim trailing axes of length one: ufunc.outer(A, B) is ufunc(that, B)."""
    a = np.asarray(a)
    return np.reshape(a, np.shape(a) + (1,) * np.ndim(b))


def np_ufunc_outer_adjoint(c, a, b):
    """A's adjoint of an outer: the contribution c (the result's shape) summed over the
    axes of B."""
    c = np.asarray(c)
    na = np.ndim(a)
    summed = np.sum(c, axis=tuple(range(na, c.ndim))) if c.ndim > na else c
    return np_fit(np.reshape(summed, np.shape(a)), a)


def np_logaddexp_reduce_adjoint(g, array, ans, axis=0, keepdims=False, two=False):
    """logaddexp.reduce is log(sum(exp(a))) along axis, and its adjoint the softmax:
    ā = g·exp(a - ans); for logaddexp2 (log2 of a sum of powers of two) ā = g·2**(a - ans)."""
    a = np.asarray(array)
    if not keepdims:
        axes = tuple(range(a.ndim)) if axis is None else axis
        g, ans = np.expand_dims(g, axes), np.expand_dims(ans, axes)
    d = a - np.where(ans == -np.inf, 0.0, ans)  # (every term -inf: weights 0, not NaN)
    w = np.exp2(d) if two else np.exp(d)
    return np_fit(g * w, array)


_CURRENT[0] = "Reductions"

_REDUCE = "array, axis=0, dtype=None, out=None, keepdims=False"
_ACCUMULATE = "array, axis=0, dtype=None, out=None"

# ufunc.reduce: the adjoint of the reduction of the same ufunc
_REDUCTIONS = {
    np.add: "_rt.np_sum_adjoint(g, array, axis, keepdims)",
    np.multiply: "_rt.np_prod_adjoint(g, array, axis, keepdims)",
    np.maximum: "_rt.np_extremum_adjoint(g, array, ans, axis, keepdims)",
    np.minimum: "_rt.np_extremum_adjoint(g, array, ans, axis, keepdims)",
    np.logaddexp: "_rt.np_logaddexp_reduce_adjoint(g, array, ans, axis, keepdims)",
    np.logaddexp2: "_rt.np_logaddexp_reduce_adjoint(g, array, ans, axis, keepdims, True)",
}

for _u, _adj in _REDUCTIONS.items():
    rule(_u.reduce, _REDUCE, adjoints={"array": _adj}, path=f"np.{_u.__name__}.reduce",
         note="ties split evenly" if _u in (np.maximum, np.minimum) else None)

# ufunc.accumulate: the scans
rule(np.add.accumulate, _ACCUMULATE,
     adjoints={"array": "_rt.np_cumsum_adjoint(g, array, axis)"}, path="np.add.accumulate")
rule(np.multiply.accumulate, _ACCUMULATE,
     adjoints={"array": "_rt.np_cumprod_adjoint(g, array, ans, axis)"},
     path="np.multiply.accumulate", note="exact with zeros")


# ufunc.outer: from the partial derivatives of the elementwise rule
_CURRENT[0] = "Linear algebra"

_OUTER = (np.add, np.subtract, np.multiply, np.divide, np.power, np.maximum, np.minimum,
          np.hypot, np.arctan2, np.logaddexp)


def _outer_rule(u):
    elementwise = PRIMITIVES[u][2]
    p1, p2 = elementwise.params
    on_broadcast = {p1: "_rt.np_ufunc_outer_left(A, B)", p2: "B"}
    da = fill(elementwise.partials[p1], on_broadcast)
    db = fill(elementwise.partials[p2], on_broadcast)
    return rule(u.outer, "A, B",
                adjoints={"A": f"_rt.np_ufunc_outer_adjoint(g * _rt.conj({da}), A, B)",
                          "B": f"_rt.np_fit(g * _rt.conj({db}), B)"},
                path=f"np.{u.__name__}.outer",
                note="ties split evenly" if u in (np.maximum, np.minimum) else None)


for _u in _OUTER:
    _outer_rule(_u)


# ufunc.at: in place, refused
def _refuse_at(u):
    name = f"np.{u.__name__}.at"

    def ufunc_at_pair(*args, **kwargs):
        raise MutationError(
            f"{name}(a, indices, b) changes a in place{_at()}, which differentiated code "
            f"cannot follow (the pullback would read the changed values). Build a new "
            f"array instead: for a 1-d a and integer indices, `a = a + "
            f"(np.arange(a.shape[0])[:, None] == indices) @ b` adds with repeated indices "
            f"counted, as {name} does")

    special(u.at)(ufunc_at_pair)


for _name in sorted(dir(np)):
    _obj = getattr(np, _name)
    if isinstance(_obj, np.ufunc) and _obj.nin == 2 and _obj.__name__ == _name:
        _refuse_at(_obj)
