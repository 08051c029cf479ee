"""Rules for NumPy (the full family lands with the NumPy issue).

Elementwise ufuncs are templates like the ``math`` ones; the reverse pass adds the
conjugate and the ``unbroadcast`` the operands need.
"""
import numpy as np

from . import nondifferentiable_builtin, primitive

_A = dict(kind="array")

# ----- elementwise -----------------------------------------------------------------------
primitive(np.sin, "x", "np.cos(x)", **_A)
primitive(np.cos, "x", "-np.sin(x)", **_A)
primitive(np.tan, "x", "1 + ans * ans", **_A)
primitive(np.exp, "x", "ans", **_A)
primitive(np.log, "x", "1 / x", **_A)
primitive(np.sqrt, "x", "0.5 / ans", **_A)
primitive(np.tanh, "x", "1 - ans * ans", **_A)
primitive(np.square, "x", "2 * x", **_A)
primitive(np.negative, "x", "-1", **_A)
primitive(np.add, "a, b", "1", "1", **_A)
primitive(np.subtract, "a, b", "1", "-1", **_A)
primitive(np.multiply, "a, b", "b", "a", **_A)
primitive(np.divide, "a, b", "1 / b", "-ans / b", **_A)

# ----- no gradient -------------------------------------------------------------------------
nondifferentiable_builtin(
    np.shape,
    np.ndim,
    np.size,
    np.zeros,
    np.ones,
    np.empty,
    np.zeros_like,
    np.ones_like,
    np.empty_like,
    np.arange,
    np.linspace,
    np.eye,
    np.identity,
    np.argmax,
    np.argmin,
    np.argsort,
    np.sign,
    np.floor,
    np.ceil,
    np.round,
    np.isnan,
    np.isinf,
    np.isfinite,
    np.allclose,
    np.array_equal,
    reason="its result is constant, integer-valued or boolean",
)
