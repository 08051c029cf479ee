"""Rules for NumPy: at least the functions HIPS autograd differentiates.

Elementwise ufuncs give one partial derivative per argument (the reverse pass writes
``unbroadcast(g * conj(partial), x)``); everything else gives the whole adjoint of an
argument as a template calling a helper (``_rt.<name>``) written beside the rule, which
projects its result onto the argument (shape, real part, float dtype, list structure).

Functions that return tuples (``slogdet``, ``eigh``, ``svd``, ``qr``, ``split``...) are
``kind="other"``: their adjoint arrives as a tuple or a ``Tangent`` of the named tuple,
with ``None`` for outputs that got no gradient.

``SECTIONS`` and ``NOTES`` (by rule path) feed ``scripts/gen_numpy_docs.py``.

    base.py           the rule language (rule, keyword calls) and np_fit / np_parts
    elementwise.py    ufuncs and elementwise functions
    reductions.py     sum, mean, prod, max/min, var/std, cumsum, norms, trace, average
    extremum.py       max/min's helpers: a fused function's np_max/np_min, the adjoint
    shape.py          reshape, transpose, stacking, splitting, pad, diag, sort, take, ...
    linalg.py         products: dot, matmul, inner, outer, kron, cross, tensordot, einsum
    decompositions.py inv, det, solve, cholesky, eigh, svd, qr, pinv, lstsq, matrix_power
    constructors.py   array, linspace & co, ndarray methods, functions with no gradient
    scipy_special.py  helpers of the scipy.special rules (rules/scipy.py)
    scipy_linalg.py   helpers of the scipy.linalg rules (rules/scipy_linalg.py)
    scipy_signal.py   helpers of the scipy.signal rules (rules/scipy_signal.py)
    fft.py            np.fft: the transforms (adjoint: the dual transform) and shifts
    linalg_more.py    eig, eigvals, tensorinv, tensorsolve, multi_dot
    shape_more.py     append, ediff1d, rollaxis, partition, select, real_if_close
    shape_extra.py    meshgrid, block, insert, delete, vander, ptp; diff's prepend/append,
                      pad's modes mean and linear_ramp; ix_ (no gradient)
    samples.py        polyval, trapezoid, convolve, correlate, interp (1-D samples)
    quantiles.py      median, quantile, percentile (order statistics)
    nan_reductions.py nanprod, nanvar, nanstd, nanmedian, nanquantile, nanpercentile
    gradient.py       np.gradient, with unit spacing or with spacings
    vectorize.py      np.vectorize, element by element through the function's own pair
    ufunc_methods.py  np.add.reduce, np.multiply.accumulate, np.add.outer, ...; np.add.at refused
    draws.py          np.random's draws: reparameterised, permutation/choice pass the data on
    statistics.py     cov, corrcoef, bincount, polyfit, linalg.cond (matrix_rank: no gradient)
    iteration.py      np.ndenumerate, np.broadcast: their items' gradients back to the arrays
                      (imported by rules/__init__.py after rules/sequences.py, whose recorder it uses)

Importing this package registers the rules, section by section, in that order.
"""
from .base import NOTES, SECTION_ORDER, SECTIONS, rule  # noqa: F401
from . import elementwise, reductions, shape, linalg, decompositions, constructors, scipy_special, scipy_linalg, scipy_signal  # noqa: F401,E402
from . import fft, linalg_more, shape_more, samples, quantiles, nan_reductions, gradient  # noqa: F401,E402
from . import vectorize, ufunc_methods, draws, statistics, shape_extra  # noqa: F401,E402
