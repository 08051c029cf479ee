"""Tangent types, after ChainRules: zeros, structural tangents and thunks.

Zero is structural: ``None`` (Zygote's ``nothing``), ``ZeroTangent()`` and ``NoTangent()``
all mean "no gradient here" and cost nothing to carry. Tuples get tuples, lists get
lists, dicts get dicts, objects get ``Tangent(T, field=...)``. A closure's tangent is a
``Tangent`` of its function with one field per captured variable.

Thunks delay work: ``Thunk(fn)`` runs ``fn`` only when its value is needed (arithmetic,
``unthunk``, ``iszero``, comparison); adding one to a zero, storing it in a ``Tangent``
or printing it leaves it unforced.

The thunks themselves are in thunks.py; this module re-exports them.
"""
import copy
import numbers

import numpy as np


class AbstractZero:
    """A zero that is never materialised: adding it is the identity."""

    __slots__ = ()

    def __add__(self, other):
        return self if other is None else other

    __radd__ = __add__

    def __sub__(self, other):
        return -other

    def __rsub__(self, other):
        return other

    def __mul__(self, other):
        return self

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self

    def __neg__(self):
        return self

    def __bool__(self):
        return False

    def __eq__(self, other):
        return iszero(other)

    def __hash__(self):
        return hash(type(self))

    def __iter__(self):
        return iter(())

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self


class ZeroTangent(AbstractZero):
    """The tangent is zero: the output does not depend on this input."""

    __slots__ = ()

    def __repr__(self):
        return "ZeroTangent()"


class NoTangent(AbstractZero):
    """There is no tangent space (strings, integers used as indices, functions)."""

    __slots__ = ()

    def __repr__(self):
        return "NoTangent()"


def _type_name(t):
    """Point, Outer.Inner: the qualified name without the ``<locals>`` noise."""
    qual = getattr(t, "__qualname__", None)
    if isinstance(qual, str) and "<locals>" not in qual:
        return qual
    return getattr(t, "__name__", None) or repr(t)


class Tangent:
    """The structural tangent of an object of type ``primal_type``.

    ``Tangent(Point, x=1.0)`` is the tangent of a ``Point`` whose ``x`` moved; fields not
    listed are zero. Positional fields describe a tuple-like primal.
    """

    __slots__ = ("primal_type", "_fields", "_elements")

    def __init__(self, primal_type, /, *elements, **fields):  # (a field may be named `self`)
        object.__setattr__(self, "primal_type", primal_type)
        object.__setattr__(self, "_elements", tuple(elements))
        object.__setattr__(
            self, "_fields", {k: v for k, v in fields.items() if not _is_zero_value(v)}
        )

    # -- field access --------------------------------------------------------------
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._fields.get(name, ZeroTangent())

    def __setattr__(self, name, value):
        raise AttributeError("Tangent is immutable; build a new one with Tangent(T, ...)")

    def __getitem__(self, key):
        if isinstance(key, str):
            return self._fields.get(key, ZeroTangent())
        if self._elements:
            return self._elements[key]
        names = _positional_names(self.primal_type)
        if names is not None and isinstance(key, int):
            # the tangent of a namedtuple is indexed like the namedtuple
            return self._fields.get(names[key], ZeroTangent())
        return ZeroTangent()

    def __len__(self):
        return len(self._elements) if self._elements else len(self._fields)

    def __iter__(self):
        if self._elements:
            return iter(self._elements)
        names = _positional_names(self.primal_type)
        if names is not None:
            return iter([self._fields.get(n, ZeroTangent()) for n in names])
        return iter(())

    def fields(self):
        """The nonzero fields, as a dict."""
        return dict(self._fields)

    def items(self):
        return self._fields.items()

    # -- vector space ---------------------------------------------------------------
    # numpy scalars and arrays defer to the methods below instead of treating a Tangent
    # as a sequence (np.float64(2.0) * t is t.__rmul__)
    __array_ufunc__ = None

    def __add__(self, other):
        if other is None or isinstance(other, AbstractZero):
            return self
        if isinstance(other, Thunk):
            other = other.unthunk()
        if isinstance(other, Tangent):
            fields = dict(self._fields)
            for k, v in other._fields.items():
                fields[k] = add(fields.get(k), v)
            n = max(len(self._elements), len(other._elements))
            els = tuple(
                add(_at(self._elements, i), _at(other._elements, i)) for i in range(n)
            )
            return Tangent(self.primal_type, *els, **fields)
        if isinstance(other, dict):  # a dict-like tangent of the same object
            fields = dict(self._fields)
            for k, v in other.items():
                fields[k] = add(fields.get(k), v)
            return Tangent(self.primal_type, *self._elements, **fields)
        if type(other) in (tuple, list) and (self._elements or not self._fields):
            n = max(len(self._elements), len(other))
            els = tuple(add(_at(self._elements, i), _at(other, i)) for i in range(n))
            return Tangent(self.primal_type, *els)
        names = _positional_names(self.primal_type)
        if type(other) in (tuple, list) and names is not None and len(other) <= len(names):
            # a namedtuple's tangent by field (`p.k` read) and by position (`for v in p`)
            fields = dict(self._fields)
            for k, v in zip(names, other):
                fields[k] = add(fields.get(k), v)
            return Tangent(self.primal_type, **fields)
        if isinstance(other, numbers.Number) and other == 0:
            return self  # sum() starts from 0
        # a "natural" tangent (e.g. a Point from a custom adjoint) meets a structural one
        if not isinstance(other, (numbers.Number, np.ndarray, str, bytes)) and type(other) not in (
            tuple,
            list,
        ):
            res = _add_natural(other, self)
            if res is not NotImplemented:
                return res
        return NotImplemented

    __radd__ = __add__

    def __mul__(self, c):
        if isinstance(c, Thunk):
            c = c.unthunk()
        if isinstance(c, numbers.Number) or (isinstance(c, np.ndarray) and c.ndim == 0):
            return Tangent(
                self.primal_type,
                *(scale(e, c) for e in self._elements),
                **{k: scale(v, c) for k, v in self._fields.items()},
            )
        return NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, c):
        if isinstance(c, numbers.Number):
            return self * (1 / c)
        return NotImplemented

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        if other is None or isinstance(other, AbstractZero):
            return self
        return self + (-1) * unthunk(other)

    def __rsub__(self, other):
        return (-1) * self + other

    def __eq__(self, other):
        if isinstance(other, AbstractZero) or other is None:
            return iszero(self)
        if not isinstance(other, Tangent):
            return NotImplemented
        keys = set(self._fields) | set(other._fields)
        return all(_eq(getattr(self, k), getattr(other, k)) for k in keys) and all(
            _eq(_at(self._elements, i), _at(other._elements, i))
            for i in range(max(len(self._elements), len(other._elements)))
        )

    def __hash__(self):
        return id(self)

    def isapprox(self, other, rtol=1e-9, atol=1e-12):
        """Equality with tolerance, field by field."""
        from .testing import isapprox  # testing imports this module: read when called

        return isapprox(self, other, rtol=rtol, atol=atol)

    def __repr__(self):
        parts = [_fmt(e) for e in self._elements]
        order = _field_order(self.primal_type)
        keys = [k for k in order if k in self._fields]
        keys += [k for k in self._fields if k not in keys]
        parts += [f"{k}={_fmt(self._fields[k])}" for k in keys]
        name = _type_name(self.primal_type)
        return f"Tangent({name}{', ' if parts else ''}{', '.join(parts)})"


def _positional_names(t):
    """The field names of a namedtuple type, else None."""
    names = getattr(t, "_fields", None)
    if isinstance(t, type) and issubclass(t, tuple) and isinstance(names, tuple):
        return names
    return None


def _field_order(t):
    """The declared order of t's fields (dataclass, namedtuple, __slots__), if any."""
    fields = getattr(t, "__dataclass_fields__", None)
    if isinstance(fields, dict):
        return list(fields)
    names = _positional_names(t)
    if names is not None:
        return list(names)
    slots = getattr(t, "__slots__", None)
    if isinstance(slots, str):
        return [slots]
    if isinstance(slots, (tuple, list)):
        return list(slots)
    return []


def _add_natural(natural, structural):
    """Add a structural Tangent to a natural tangent (e.g. a Point), field by field.

    The result has the natural tangent's type; NotImplemented if the Tangent has
    fields the natural tangent does not.
    """
    names = _field_order(type(natural))
    if not names:
        names = list(getattr(natural, "__dict__", {}) or ())
    if not names or structural._elements or any(k not in names for k in structural._fields):
        return NotImplemented
    vals = {n: add(getattr(natural, n), structural._fields.get(n)) for n in names
            if n in structural._fields}
    try:
        if _positional_names(type(natural)) is not None:
            return natural._replace(**vals)
        if hasattr(natural, "__dataclass_fields__"):
            try:
                return type(natural)(**{n: vals.get(n, getattr(natural, n)) for n in names})
            except TypeError:  # fields not in __init__: copy and set
                pass

        out = copy.copy(natural)
        for n, v in vals.items():
            object.__setattr__(out, n, v)
        return out
    except Exception:  # noqa: BLE001 - an object that cannot be rebuilt
        return NotImplemented


def _fmt(v):
    """A short, readable form of a tangent component (three significant digits)."""
    if isinstance(v, (float, np.floating)):
        t = f"{v:.3g}"
        return t + ".0" if t.lstrip("-").isdigit() else t
    if isinstance(v, (complex, np.complexfloating)):
        return f"({v.real:.3g}{v.imag:+.3g}j)"
    if isinstance(v, np.ndarray):
        body = np.array2string(v, precision=3, separator=", ", threshold=8, edgeitems=2)
        return f"array({body})"
    return repr(v)


def _at(seq, i):
    return seq[i] if i < len(seq) else None


def _eq(a, b):
    if iszero(a) and iszero(b):
        return True
    try:
        r = a == b
        return bool(r) if not hasattr(r, "all") else bool(r.all())
    except Exception:
        return False


def value_or_none(g):
    """A gradient as a value for a rule's arithmetic: zeros become None, thunks are forced."""
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(g, Thunk):
        return value_or_none(g.unthunk())
    return g


def part_value(g, i):
    """Entry i of a sequence, dict or Tangent gradient, as a value (None when absent)."""
    g = value_or_none(g)
    if g is None:
        return None
    if isinstance(g, (list, tuple, np.ndarray)):
        return value_or_none(g[i]) if -len(g) <= i < len(g) else None
    if isinstance(g, dict):
        return value_or_none(g.get(i))
    return value_or_none(g[i])


def unthunk(x):
    """Force a thunk (recursively through tuples, lists and dicts); other values pass.

    Containers without thunks come back as they are (the same object).
    """
    if isinstance(x, Thunk):
        return x.unthunk()
    if type(x) is tuple:
        if any(isinstance(e, _MAY_HOLD_THUNKS) for e in x):
            return tuple(unthunk(e) for e in x)
        return x
    if isinstance(x, list):
        if any(isinstance(e, _MAY_HOLD_THUNKS) for e in x):
            return [unthunk(e) for e in x]
        return x
    if type(x) is dict:
        if any(isinstance(v, _MAY_HOLD_THUNKS) for v in x.values()):
            return {k: unthunk(v) for k, v in x.items()}
        return x
    if isinstance(x, Tangent):
        if any(isinstance(v, _MAY_HOLD_THUNKS) for v in x._fields.values()) or any(
            isinstance(e, _MAY_HOLD_THUNKS) for e in x._elements
        ):
            return Tangent(
                x.primal_type,
                *(unthunk(e) for e in x._elements),
                **{k: unthunk(v) for k, v in x._fields.items()},
            )
    return x


def _is_zero_value(v):
    return v is None or isinstance(v, AbstractZero)


def iszero(x):
    """True for the structural zeros and for containers/tangents made only of zeros."""
    if x is None or isinstance(x, AbstractZero):
        return True
    if isinstance(x, (int, float, complex)):
        return x == 0
    if isinstance(x, Thunk):
        return iszero(x.unthunk())
    if isinstance(x, Tangent):
        return all(iszero(v) for v in x._fields.values()) and all(
            iszero(e) for e in x._elements
        )
    if isinstance(x, (tuple, list)):
        return all(iszero(e) for e in x)
    if isinstance(x, dict):
        return all(iszero(v) for v in x.values())
    if hasattr(x, "shape") and hasattr(x, "any"):
        return not x.any()
    return False


# ----- accumulation -------------------------------------------------------------------


def add(a, b):
    """Add two tangents; None and the AbstractZeros are the identity.

    Fast paths for numbers and arrays come first: this is called on hot paths.
    """
    if type(a) is np.ndarray and type(b) is np.ndarray:
        return a + b
    if a is None or isinstance(a, AbstractZero):
        return None if isinstance(b, AbstractZero) else b
    if b is None or isinstance(b, AbstractZero):
        return a
    if type(b) is DeclinedGradient:  # contagious: forced only where it is read
        return b
    ta = type(a)
    if ta is DeclinedGradient:
        return a
    if ta is float or ta is complex or ta is int:
        if isinstance(b, Thunk):
            b = b.unthunk()
        return a + b
    if (ta is tuple or isinstance(a, list)) and isinstance(b, Tangent) and b._fields and (
            _positional_names(b.primal_type) is not None):
        return b + a  # a namedtuple's tangent by field, and one by position: its positions are its fields
    if ta is tuple:
        if isinstance(b, Tangent):
            b = tuple(b._elements)
        if isinstance(b, Thunk):
            b = b.unthunk()
        n = max(len(a), len(b))
        return tuple(add(_at(a, i), _at(b, i)) for i in range(n))
    if isinstance(a, list):
        if isinstance(b, Thunk):
            b = b.unthunk()
        n = max(len(a), len(b))
        return [add(_at(a, i), _at(b, i)) for i in range(n)]
    if ta is dict:
        if isinstance(b, Thunk):
            b = b.unthunk()
        out = dict(a)
        for k, v in b.items():
            out[k] = add(out.get(k), v)
        return out
    if isinstance(a, InplaceableThunk) and not isinstance(b, Thunk):
        return _add_inplaceable(b, a)
    if isinstance(b, InplaceableThunk) and not isinstance(a, Thunk):
        return _add_inplaceable(a, b)
    if isinstance(a, Thunk):
        a = a.unthunk()
    if isinstance(b, Thunk):
        b = b.unthunk()
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def scale(v, c):
    if v is None or isinstance(v, AbstractZero):
        return v
    if isinstance(v, tuple):
        return tuple(scale(e, c) for e in v)
    if isinstance(v, list):
        return [scale(e, c) for e in v]
    if isinstance(v, dict):
        return {k: scale(e, c) for k, e in v.items()}
    return v * c


def tangent_close(a, b, rtol=1e-9, atol=1e-12):
    """Numerical closeness of two tangents (used by the testing helpers)."""
    if iszero(a) and iszero(b):
        return True
    if isinstance(a, (int, float, complex)) and isinstance(b, (int, float, complex)):
        return abs(a - b) <= atol + rtol * abs(b)
    return False


# the thunks (thunks.py) call add, unthunk and _eq: imported here, once those exist
from .thunks import DeclinedGradient, InplaceableThunk, Thunk, _add_inplaceable  # noqa: E402,F401

_MAY_HOLD_THUNKS = (Thunk, tuple, list, dict, Tangent)


__all__ = [
    "AbstractZero",
    "ZeroTangent",
    "NoTangent",
    "Tangent",
    "Thunk",
    "DeclinedGradient",
    "InplaceableThunk",
    "unthunk",
    "iszero",
    "add",
]
