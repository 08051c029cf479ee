"""Delayed gradients, after ChainRules: ``Thunk``, ``InplaceableThunk`` and the
contagious ``DeclinedGradient``.

``Thunk(fn)`` runs ``fn`` only when its value is needed (arithmetic, ``unthunk``,
``iszero``, comparison); adding one to a zero, storing it in a ``Tangent`` or printing
it leaves it unforced. ``InplaceableThunk`` can also add itself into a gradient it is
handed (ChainRules' ``add!``).

Import these from ``adjoint_s2s.tangents`` (or ``adjoint_s2s``): the thunks need the
tangent algebra (``add``, ``unthunk``) and the algebra needs the thunks, so tangents.py
imports this module at its end, once ``add``, ``unthunk`` and ``_eq`` exist, and
re-exports its classes.
"""
import numpy as np

from .tangents import _eq, add, unthunk


class Thunk:
    """A delayed gradient: ``Thunk(fn)`` runs ``fn()`` only when the value is needed."""

    __slots__ = ("fn", "_value", "_done")

    def __init__(self, fn):
        self.fn = fn
        self._done = False
        self._value = None

    def unthunk(self):
        if not self._done:
            self._value = unthunk(self.fn())
            self._done = True
        return self._value

    def __add__(self, other):
        return add(self.unthunk(), other)

    def __radd__(self, other):
        return add(other, self.unthunk())

    def __mul__(self, other):
        return self.unthunk() * other

    def __rmul__(self, other):
        return other * self.unthunk()

    def __truediv__(self, other):
        return self.unthunk() / other

    def __neg__(self):
        return -self.unthunk()

    def __sub__(self, other):
        return self.unthunk() - other

    def __rsub__(self, other):
        return other - self.unthunk()

    def __rtruediv__(self, other):
        return other / self.unthunk()

    def __pow__(self, other):
        return self.unthunk() ** other

    def __abs__(self):
        return abs(self.unthunk())

    def __eq__(self, other):
        # comparing needs the value; a thunk equals what it computes
        return _eq(self.unthunk(), unthunk(other))

    def __hash__(self):
        return id(self)

    def __matmul__(self, other):
        return self.unthunk() @ other

    def __rmatmul__(self, other):
        return other @ self.unthunk()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.unthunk(), name)

    def __getitem__(self, key):
        return self.unthunk()[key]

    def __float__(self):
        return float(self.unthunk())

    def __complex__(self):
        return complex(self.unthunk())

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.unthunk(), dtype=dtype)

    def __repr__(self):
        return "Thunk(...)" if not self._done else f"Thunk({self._value!r})"


class DeclinedGradient(Thunk):
    """A gradient adjoint_s2s declines to compute (the order of a Bessel function):
    ``fn()`` raises the refusal. It is contagious: sums, products, projections with it
    give it back unforced, so a gradient nobody reads (an argument held fixed, a
    constant captured by a rule's pullback at second order) never raises, while reading
    one that depends on it (the value given to the user) does."""

    __slots__ = ()
    __array_ufunc__ = None  # ndarray + it: NumPy defers to the reflected operators below

    def _same(self, *_):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _same
    __truediv__ = __rtruediv__ = __pow__ = __matmul__ = __rmatmul__ = _same

    def __neg__(self):
        return self

    def __getitem__(self, key):
        return self


class InplaceableThunk(Thunk):
    """A thunk that can also add itself into an existing gradient (ChainRules' ``add!``).

    ``fn()`` computes the value; ``add_fn(acc)`` returns ``acc + value`` and may write into
    ``acc`` to save an allocation. ``add`` only hands it an array it has just copied, so
    the gradients a caller holds are never modified behind its back.
    """

    __slots__ = ("add_fn",)

    def __init__(self, add_fn, fn):
        super().__init__(fn)
        self.add_fn = add_fn

    def __repr__(self):
        return "InplaceableThunk(...)" if not self._done else f"InplaceableThunk({self._value!r})"


def _add_inplaceable(acc, th):
    """acc + th for an InplaceableThunk th (acc neither zero nor a thunk)."""
    if th._done:
        return add(acc, th._value)
    if isinstance(acc, np.ndarray) and acc.ndim > 0:
        return th.add_fn(acc.copy())
    return add(acc, th.unthunk())
