"""``binop`` and ``unop``: operators on values whose kinds the generator did not know
(objects with ``__add__``, dicts merged with ``|``, integers' bit operations)."""
import operator
import types

import numpy as np

from .. import rules as R
from ..errors import MissingAdjointError, NotDifferentiableError
from ..tangents import AbstractZero, add, Tangent
from .sites import _at
from .project import as_given, neg, numeric_list
from .structure import GradList
from .dispatch import call, resolve
from .methods import _drop_first


_BINOPS = {
    "Add": (operator.add, "__add__", "__radd__"),
    "Sub": (operator.sub, "__sub__", "__rsub__"),
    "Mult": (operator.mul, "__mul__", "__rmul__"),
    "Div": (operator.truediv, "__truediv__", "__rtruediv__"),
    "FloorDiv": (operator.floordiv, "__floordiv__", "__rfloordiv__"),
    "Mod": (operator.mod, "__mod__", "__rmod__"),
    "Pow": (operator.pow, "__pow__", "__rpow__"),
    "MatMult": (operator.matmul, "__matmul__", "__rmatmul__"),
}


_BITOPS = {
    "BitOr": (operator.or_, "__or__", "__ror__"),
    "BitAnd": (operator.and_, "__and__", "__rand__"),
    "BitXor": (operator.xor, "__xor__", "__rxor__"),
    "LShift": (operator.lshift, "__lshift__", "__rlshift__"),
    "RShift": (operator.rshift, "__rshift__", "__rrshift__"),
}


_BINOPS.update(_BITOPS)


_NUMBERS = (int, float, complex, np.ndarray, np.number)

# the pair of each operator on numbers and arrays, resolved once (a rule change clears it)
_NUMBER_PAIRS = {}
R.ON_CHANGE.append(_NUMBER_PAIRS.clear)


def number_pair(fn):
    """resolve(fn, 2), remembered (non-differentiable, as resolve: binop is differentiated
    again at second order, and only selects code here)."""
    pair = _NUMBER_PAIRS.get(fn)
    if pair is None:
        pair = _NUMBER_PAIRS[fn] = resolve(fn, 2)
    return pair


_BOOLS = (bool, np.bool_)


_SYMBOLS = {"BitOr": "|", "BitAnd": "&", "BitXor": "^", "LShift": "<<", "RShift": ">>",
            "Invert": "~"}


def _integral(y):
    """An integer or a bool (a number or an array of them): no tangent space."""
    if isinstance(y, (bool, int, np.integer, np.bool_)):
        return True
    return isinstance(y, np.ndarray) and y.dtype.kind in "biu"


def _no_tangent_result(fn, y, opname, *operands):
    """The pair of an operator whose result is an integer or a bool; anything else is
    refused, never given a zero gradient."""
    if _integral(y):
        n = len(operands)
        return y, lambda g: (None,) * n
    kinds = " and ".join(type(o).__name__ for o in operands)
    raise MissingAdjointError(
        fn, f"the operator {_SYMBOLS.get(opname, opname)} of {kinds} has no rule "
        f"(it gave a {type(y).__name__}, which may carry a gradient)" + _at())


def _bool_operand_pair(fn, a, b):
    """a OP b where a or b is a bool (True, np.True_) and the other a number: the bool is
    the constant 0 or 1, the number's gradient comes from the operator's rule."""
    y = fn(a, b)
    a_b, b_b = isinstance(a, _BOOLS), isinstance(b, _BOOLS)
    _, pb = resolve(fn, 2)(int(a) if a_b else a, int(b) if b_b else b)

    def bool_operand_pullback(g):
        _, da, db = pb(g)
        return (None if a_b else da, None if b_b else db)

    return y, bool_operand_pullback


def _dict_merge(a, b):
    """a | b for dicts: b's values win where both have a key."""
    def dict_merge_pullback(g):
        if g is None or isinstance(g, AbstractZero):
            return (None, None)
        return ({k: g[k] for k in a if k not in b and k in g}, {k: g[k] for k in b if k in g})

    return a | b, dict_merge_pullback


_IN_PLACE = {
    "Add": operator.iadd, "Sub": operator.isub, "Mult": operator.imul,
    "Div": operator.itruediv, "FloorDiv": operator.ifloordiv, "Mod": operator.imod,
    "Pow": operator.ipow, "MatMult": operator.imatmul, "BitOr": operator.ior,
    "BitAnd": operator.iand, "BitXor": operator.ixor, "LShift": operator.ilshift,
    "RShift": operator.irshift,
}
_ndarray = np.ndarray


def in_place(old, new, v, opname):
    """The value ``old OP= v`` leaves in old when old is a NumPy array, given new = old OP
    v. NumPy writes the result into old, so it keeps old's shape and dtype, or raises (a
    result that broadcasts bigger, a float into an int array, a complex into a real
    one); differentiated code rebinds old to new (copy on write), so this gives new the
    value and the type Python shows, or the error it raises. Anything but an array: new.

    Wherever it does not raise, the value is new cast to old's dtype (NumPy computes the
    operation in the common type and casts on writing), so its adjoint with respect to
    new is g projected onto new."""
    if type(new) is _ndarray and type(old) is _ndarray and new.shape == old.shape and (
            new.dtype is old.dtype or new.dtype == old.dtype):
        return new  # the usual case: what the write in place leaves
    if not isinstance(old, _ndarray):
        return new  # numbers, lists, objects: `a OP= v` as Python does it elsewhere
    return _IN_PLACE[opname](old.copy(), v)  # NumPy's own write: its values, its errors


def binop(opname, a, b, inplace=False):
    """(y, pullback) of a OP b for values not known statically; pullback -> (da, db).
    inplace: from `a OP= b`, so an object's __iadd__ (& co.) is tried first."""
    if inplace and isinstance(a, _ndarray):  # `a OP= b` writes into the array a
        y, pb = binop(opname, a, b)
        return in_place(a, y, b, opname), pb
    fn, dunder, rdunder = _BINOPS[opname]
    if inplace and not isinstance(a, _NUMBERS):
        imeth = getattr(type(a), "__i" + dunder[2:], None)
        if isinstance(imeth, types.FunctionType):
            y, pb = call(imeth, a, b)
            if y is not NotImplemented:
                return y, _drop_first(pb)
    if opname in _BITOPS:
        if isinstance(a, _NUMBERS + (np.bool_,)) and isinstance(b, _NUMBERS + (np.bool_,)):
            return _no_tangent_result(fn, fn(a, b), opname, a, b)
        if opname == "BitOr" and type(a) is dict and type(b) is dict:
            return _dict_merge(a, b)
    if (isinstance(a, _BOOLS) or isinstance(b, np.bool_)) and (
        isinstance(a, _BOOLS + _NUMBERS) and isinstance(b, _BOOLS + _NUMBERS)
    ):
        return _bool_operand_pair(fn, a, b)
    if isinstance(a, _NUMBERS) and isinstance(b, _NUMBERS) and not isinstance(a, bool):
        y, pb = number_pair(fn)(a, b)
        return y, _drop_first(pb)
    if inplace and opname == "Add" and (type(a) is list or type(a) is GradList):
        # `lst += vs` extends the list in place, as Python does: every name for it (the
        # caller's too) sees the new items
        na, vs = len(a), list(b)
        a += vs
        nb, tb = len(vs), type(b)
        return a, lambda g: _split_extend(g, na, nb, tb)
    got = _sequence_pair(opname, a, b)
    if got is not None:
        return got
    if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)) or a is None or b is None:
        return fn(a, b), lambda g: (None, None)
    meth = getattr(type(a), dunder, None)
    if isinstance(meth, types.FunctionType):
        y, pb = call(meth, a, b)
        if y is not NotImplemented:
            return y, _drop_first(pb)
    rmeth = getattr(type(b), rdunder, None)
    if isinstance(rmeth, types.FunctionType):
        y, pb = call(rmeth, b, a)
        if y is not NotImplemented:
            return y, lambda g: tuple(reversed(pb(g)[1:]))
    if isinstance(a, (Tangent, AbstractZero)) or isinstance(b, (Tangent, AbstractZero)):
        y, pb = resolve(fn, 2)(a, b)
        return y, _drop_first(pb)
    y = fn(a, b)
    raise MissingAdjointError(
        fn, f"{type(a).__name__} {_SYMBOLS.get(opname, opname)} {type(b).__name__} is not "
        "written in Python" + _at()
    )


def _sequence_pair(opname, a, b):
    """(y, pullback) of lists and tuples joined (`a + b`) or repeated (`a * 3`), and of an
    array and a list of numbers (`v * [a, 2.0]`: computed as NumPy does, on the array it
    makes of the list); None for other operands."""
    if isinstance(a, _ndarray) and numeric_list(b) or isinstance(b, _ndarray) and numeric_list(a):
        y, pb = binop(opname, *(np.asarray(v) if numeric_list(v) else v for v in (a, b)))
        return y, as_given(pb, (a, b), numeric_list)
    if isinstance(a, (list, tuple)) and opname == "Add" and type(a) is type(b):
        na = len(a)
        return a + b, lambda g: _split_concat(g, na)
    if isinstance(a, (list, tuple)) and opname == "Mult" and isinstance(b, int):
        return a * b, lambda g: (_fold_repeat(g, len(a), b, type(a)), None)
    if isinstance(b, (list, tuple)) and opname == "Mult" and isinstance(a, int):
        return a * b, lambda g: (None, _fold_repeat(g, len(b), a, type(b)))
    return None


_UNOPS = {"USub": (operator.neg, "__neg__"), "UAdd": (operator.pos, "__pos__"),
          "Invert": (operator.invert, "__invert__")}


def unop(opname, a):
    """(y, pullback) of OP a for values not known statically; pullback -> (da,)."""
    fn, dunder = _UNOPS[opname]
    if opname == "Invert" and isinstance(a, _NUMBERS + (np.bool_,)):
        return _no_tangent_result(fn, fn(a), opname, a)
    if isinstance(a, _NUMBERS):
        y, pb = resolve(fn, 1)(a)
        return y, _drop_first(pb)
    meth = getattr(type(a), dunder, None)
    if isinstance(meth, types.FunctionType):
        y, pb = call(meth, a)
        return y, _drop_first(pb)
    if isinstance(a, (tuple, list, Tangent, AbstractZero)) or a is None:
        return fn(a), lambda g: (neg(g) if opname == "USub" else g,)
    raise MissingAdjointError(fn, f"{opname} on {type(a).__name__} is not written in Python" + _at())


def _split_concat(g, na):
    if g is None or isinstance(g, AbstractZero):
        return (None, None)
    g = list(g)
    return g[:na], g[na:]


def _split_extend(g, na, nb, tb):
    """The gradients of lst and vs from that of lst after `lst += vs`."""
    if g is None or isinstance(g, AbstractZero):
        return (None, None)
    g = list(g) + [None] * (na + nb - len(g))
    items = g[na:na + nb]
    if all(v is None for v in items):
        items = None
    elif tb is tuple:
        items = tuple(items)
    return GradList(g[:na]), items


def _fold_repeat(g, n, times, typ):
    if g is None:
        return None
    out = [None] * n
    for i, v in enumerate(g):
        out[i % n] = add(out[i % n], v)
    return typ(out)


def complex_power(base, exponent):
    """Raised where generated code took ``base ** exponent`` of real numbers for a real
    number (a fractional exponent: real for a base >= 0) and Python gave a complex one."""
    raise NotDifferentiableError(
        f"`({base!r}) ** {exponent!r}`{_at()} is a complex number in Python (a negative number to "
        f"a fractional power), where adjoint_s2s takes a real number to a power to be real, "
        f"so that the code after it runs at full speed. Write `complex({base!r}) ** "
        f"{exponent!r}` (or `complex(x) ** p`) where a complex result is meant; a real root "
        f"of a negative number is `-(abs(x) ** p)`")
