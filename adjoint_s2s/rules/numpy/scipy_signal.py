"""Helpers of the ``scipy.signal`` rules (rules/scipy_signal.py): ``_rt.sp_signal`` is
``scipy.signal``, imported on first use (scipy is optional, and this module is imported
without it). The adjoints are convolutions again (correlate of the cotangent), so they
differentiate again through the same rules."""
import numpy as np

from .. import nondifferentiable_builtin
from .base import np_fit
from .scipy_special import LazyModule

__all__ = [  # the helpers templates reach as _rt.<name>
    "sp_convolve_adjoint_in1",
    "sp_convolve_adjoint_in2",
    "sp_correlate_adjoint_in1",
    "sp_correlate_adjoint_in2",
    "sp_signal",
]


sp_signal = LazyModule("scipy.signal")  # imported on first use (scipy is optional)


def _full_pad(gshape, s1, s2):
    """Where the output of a mode sits in the full convolution (length s1 + s2 - 1 on
    each axis): 'same' and 'valid' take the centred part, starting at (full - out) // 2."""
    pad = []
    for n, a, b in zip(gshape, s1, s2):
        full = a + b - 1
        start = (full - n) // 2
        pad.append((start, full - n - start))
    return tuple(pad)


nondifferentiable_builtin(_full_pad, reason="it computes padding widths")


def _full_cotangent(g, in1, in2, ans):
    """The cotangent of the full convolution: zero outside what the mode kept."""
    g = np.asarray(g)
    g = g + np.zeros(np.shape(ans), dtype=g.dtype)  # a broadcast scalar made whole
    return np.pad(g, _full_pad(np.shape(ans), np.shape(in1), np.shape(in2)))


def _flip_conj(x):
    """x reversed on every axis and conjugated: correlate(a, b) = convolve(a, that of b)."""
    return np.conj(np.flip(np.asarray(x)))


def sp_convolve_adjoint_in1(g, in1, in2, ans, method="auto"):
    """y[n] = Σ_k in1[k] in2[n - k]: in1̄[k] = Σ_m ȳ[k + m] conj(in2[m]), the valid
    correlation of the full cotangent with in2."""
    gf = _full_cotangent(g, in1, in2, ans)
    return np_fit(sp_signal.correlate(gf, in2, "valid", method), in1)


def sp_convolve_adjoint_in2(g, in1, in2, ans, method="auto"):
    """The convolution is symmetric in its inputs: in2̄ is the valid correlation of the
    full cotangent with in1."""
    gf = _full_cotangent(g, in1, in2, ans)
    return np_fit(sp_signal.correlate(gf, in1, "valid", method), in2)


def sp_correlate_adjoint_in1(g, in1, in2, ans, method="auto"):
    """correlate(in1, in2) = convolve(in1, c) with c = conj(flip(in2)) (every mode): in1̄
    as for convolve."""
    gf = _full_cotangent(g, in1, in2, ans)
    return np_fit(sp_signal.correlate(gf, _flip_conj(in2), "valid", method), in1)


def sp_correlate_adjoint_in2(g, in1, in2, ans, method="auto"):
    """c̄ as convolve's in2̄, then carried back through c = conj(flip(in2))."""
    gf = _full_cotangent(g, in1, in2, ans)
    return np_fit(_flip_conj(sp_signal.correlate(gf, in1, "valid", method)), in2)
