"""The NumPy rules added for issue 14 (np.fft, more of np.linalg, more reductions and
shape functions), checked as tests/rules/numpy/test_rules.py checks the others: every
row against finite differences, inline and at run time, real and (``cplx=True``)
complex; and, for every row, at second order: the Hessian-vector product of
``Re <gy, f(x)>`` against finite differences of its gradient, for real inputs and, where
the row takes them, complex ones.

``test_rules.test_every_numpy_rule_has_a_row`` counts the rows of this file too.
"""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import isapprox, numerical_gradient

from .test_rules import NAN, SQ, A, Arg, P, Row, S, U, _check, _cotangent, _realise, _rng

# ----- np.fft ----------------------------------------------------------------------------------


def f_fft(x, n=None, axis=-1, norm=None):
    return np.fft.fft(x, n, axis, norm)


def f_fft_kw(x):
    return np.fft.fft(x, n=6, axis=0, norm="ortho")


def f_ifft(x, n=None, axis=-1, norm=None):
    return np.fft.ifft(x, n, axis, norm)


def f_rfft(x, n=None, axis=-1, norm=None):
    return np.fft.rfft(x, n, axis, norm)


def f_irfft(x, n=None, axis=-1, norm=None):
    return np.fft.irfft(x, n, axis, norm)


def f_hfft(x, n=None, axis=-1, norm=None):
    return np.fft.hfft(x, n, axis, norm)


def f_ihfft(x, n=None, axis=-1, norm=None):
    return np.fft.ihfft(x, n, axis, norm)


def f_fftn(x, s=None, axes=None, norm=None):
    return np.fft.fftn(x, s, axes, norm)


def f_ifftn(x, s=None, axes=None, norm=None):
    return np.fft.ifftn(x, s, axes, norm)


def f_rfftn(x, s=None, axes=None, norm=None):
    return np.fft.rfftn(x, s, axes, norm)


def f_irfftn(x, s=None, axes=None, norm=None):
    return np.fft.irfftn(x, s, axes, norm)


def f_fft2(x, s=None, axes=(-2, -1), norm=None):
    return np.fft.fft2(x, s, axes, norm)


def f_fft2_default(x):
    return np.fft.fft2(x)


def f_ifft2(x, s=None, axes=(-2, -1), norm=None):
    return np.fft.ifft2(x, s, axes, norm)


def f_rfft2(x, s=None, axes=(-2, -1), norm=None):
    return np.fft.rfft2(x, s, axes, norm)


def f_irfft2(x, s=None, axes=(-2, -1), norm=None):
    return np.fft.irfft2(x, s, axes, norm)


def f_fftshift(x, axes=None):
    return np.fft.fftshift(x, axes)


def f_ifftshift(x, axes=None):
    return np.fft.ifftshift(x, axes)


def f_fft_power(x):
    """A non-linear function of a spectrum: a second derivative is not zero."""
    y = np.fft.rfft(np.sin(x))
    return np.real(y * np.conj(y))


_ONE_D = [A(5), A(6), (A(6), 8), (A(6), 4), (A(3, 4), None, 0), (A(3, 5), 7, -1, "ortho"),
          (A(4, 3), 3, 0, "forward"), (A(4), None, -1, "backward")]
_N_D = [A(3, 4), A(2, 3, 4), (A(3, 4), (4, 6), (0, 1)), (A(3, 5), (2, 4), (0, 1)),
        (A(2, 3, 4), None, (0, 2), "ortho"), (A(3, 4), (5,), (0,), "forward"),
        (A(2, 3, 4), (3, 3), (-1, 0))]
_TWO_D = [A(3, 4), A(2, 3, 5), (A(3, 4), (4, 6)), (A(2, 3, 4), None, (0, 2), "ortho"),
          (A(3, 4), (2, 3), (-2, -1), "forward")]

FFT_ROWS = [
    Row("fft.fft", np.fft.fft, f_fft, _ONE_D, cplx=True),
    Row("fft.fft-keywords", np.fft.fft, f_fft_kw, [A(4, 3), A(7, 2)], cplx=True),
    Row("fft.ifft", np.fft.ifft, f_ifft, _ONE_D, cplx=True),
    Row("fft.rfft", np.fft.rfft, f_rfft, _ONE_D),
    Row("fft.irfft", np.fft.irfft, f_irfft, _ONE_D, cplx=True),
    Row("fft.hfft", np.fft.hfft, f_hfft, _ONE_D, cplx=True),
    Row("fft.ihfft", np.fft.ihfft, f_ihfft, _ONE_D),
    Row("fft.fftn", np.fft.fftn, f_fftn, _N_D, cplx=True),
    Row("fft.ifftn", np.fft.ifftn, f_ifftn, _N_D, cplx=True),
    Row("fft.rfftn", np.fft.rfftn, f_rfftn, _N_D),
    Row("fft.irfftn", np.fft.irfftn, f_irfftn, _N_D, cplx=True),
    Row("fft.fft2", np.fft.fft2, f_fft2, _TWO_D, cplx=True),
    Row("fft.fft2-default", np.fft.fft2, f_fft2_default, [A(3, 4), A(2, 3, 4)], cplx=True),
    Row("fft.ifft2", np.fft.ifft2, f_ifft2, _TWO_D, cplx=True),
    Row("fft.rfft2", np.fft.rfft2, f_rfft2, _TWO_D),
    Row("fft.irfft2", np.fft.irfft2, f_irfft2, _TWO_D, cplx=True),
    Row("fft.fftshift", np.fft.fftshift, f_fftshift, [A(5), A(4), (A(3, 4), (0,)), (A(3, 5), 1)],
        cplx=True),
    Row("fft.ifftshift", np.fft.ifftshift, f_ifftshift, [A(5), (A(3, 4), (0, 1)), (A(3, 5), -1)],
        cplx=True),
    Row("fft.power-spectrum", np.fft.rfft, f_fft_power, [A(6), A(7)]),
]

# ----- np.linalg -------------------------------------------------------------------------------


def f_eig(a):
    """Eigenvalues and phase-invariant functions of the unit eigenvectors."""
    w, v = np.linalg.eig(a)
    return w, np.real(v * np.conj(v))


def f_eig_values_only(a):
    w, v = np.linalg.eig(a)
    return w * w


def f_eigvals(a):
    return np.linalg.eigvals(a)


def f_tensorinv(a, ind=2):
    return np.linalg.tensorinv(a, ind)


def f_tensorsolve(a, b, axes=None):
    return np.linalg.tensorsolve(a, b, axes)


def f_multi_dot(a, b, c):
    return np.linalg.multi_dot([a, b, c])


def f_multi_dot_two(a, b):
    return np.linalg.multi_dot((a, b))


def _tensor_square(shape, ind):
    """A well-conditioned array whose first ind axes and the rest are a square matrix."""
    def make(rng, cplx):
        n = int(np.prod(shape[:ind]))
        m = np.eye(n) * 2 + 0.4 * rng.standard_normal((n, n))
        if cplx:
            m = m + 0.3j * rng.standard_normal((n, n))
        return m.reshape(shape)

    arg = A(*shape)
    arg.make = make
    return arg


LINALG_ROWS = [
    Row("linalg.eig", np.linalg.eig, f_eig, [SQ(3, 3), SQ(4, 4), SQ(2, 3, 3)], cplx=True),
    Row("linalg.eig-values", np.linalg.eig, f_eig_values_only, [SQ(3, 3), SQ(2, 4, 4)], cplx=True),
    Row("linalg.eigvals", np.linalg.eigvals, f_eigvals, [SQ(3, 3), SQ(5, 5), SQ(2, 3, 3)],
        cplx=True),
    Row("linalg.tensorinv", np.linalg.tensorinv, f_tensorinv,
        [_tensor_square((2, 3, 6), 2), (_tensor_square((4, 2, 2), 1), 1), _tensor_square((2, 2, 4), 2)],
        cplx=True),
    Row("linalg.tensorsolve", np.linalg.tensorsolve, f_tensorsolve,
        [(_tensor_square((2, 3, 6), 2), A(2, 3)), (_tensor_square((6, 2, 3), 1), A(6)),
         (_tensor_square((2, 3, 6), 2), A(6), (0, 1))],
        cplx=True),
    Row("linalg.multi_dot", np.linalg.multi_dot, f_multi_dot,
        [(A(2, 3), A(3, 4), A(4, 2)), (A(3), A(3, 4), A(4)), (A(3), A(3, 2), A(2, 5))], cplx=True),
    Row("linalg.multi_dot-tuple", np.linalg.multi_dot, f_multi_dot_two,
        [(A(2, 3), A(3, 4)), (A(3), A(3))], cplx=True),
]

# ----- more functions --------------------------------------------------------------------------


def f_append(a, b, axis=None):
    return np.append(a, b, axis)


def f_ediff1d(x):
    return np.ediff1d(x)


def f_ediff1d_ends(x, end, begin):
    return np.ediff1d(x, to_end=end, to_begin=begin)


def f_rollaxis(a, axis, start=0):
    return np.rollaxis(a, axis, start)


def f_partition(a, kth, axis=-1):
    return np.partition(a, kth, axis)


def f_select(a, b):
    return np.select([a > 0.5, b > 0.0], [a * 2.0, b], -1.0)


def f_select_default(a, d):
    return np.select([a > 0.0], [a], d)


def f_select_complex(a, b):
    """Conditions on the real parts, complex choices (and a complex default)."""
    return np.select([np.real(a) > 0.5, np.real(b) > 0.0], [a * 2.0, b * b], 1.0 - 0.5j)


def f_logspace_ends(a, b):
    return np.logspace(a, b, 4) + np.sum(np.logspace(a, b, 3, endpoint=False, base=2.0), 0)


def f_real_if_close(a):
    return np.real_if_close(a * 1.0 + 0j) * 2.0


def f_polyval(p, x):
    return np.polyval(p, x)


def f_trapezoid(y, x=None, dx=1.0, axis=-1):
    return np.trapezoid(y, x, dx, axis)


def f_trapezoid_dx(y, dx):
    return np.trapezoid(y, dx=dx)


def f_convolve(a, v, mode="full"):
    return np.convolve(a, v, mode)


def f_correlate(a, v, mode="valid"):
    return np.correlate(a, v, mode)


def f_interp(x, fp):
    return np.interp(x, np.array([-1.0, -0.2, 0.5, 1.5]), fp)


def f_interp_all(x, xp, fp, left, right):
    return np.interp(x, xp, fp, left, right)


def f_median(a, axis=None, keepdims=False):
    return np.median(a, axis=axis, keepdims=keepdims)


def f_quantile(a, q, axis=None, keepdims=False):
    return np.quantile(a, q, axis, keepdims=keepdims)


def f_percentile(a, q, axis=None):
    return np.percentile(a, q, axis)


def f_nanprod(a, axis=None, keepdims=False):
    return np.nanprod(a, axis, keepdims=keepdims)


def f_nanvar(a, axis=None, ddof=0, keepdims=False):
    return np.nanvar(a, axis, ddof=ddof, keepdims=keepdims)


def f_nanstd(a, axis=None, ddof=0, keepdims=False):
    return np.nanstd(a, axis, ddof=ddof, keepdims=keepdims)


def f_nancumsum(a, axis=None):
    return np.nancumsum(a, axis)


def f_nancumprod(a, axis=None):
    return np.nancumprod(a, axis)


def f_gradient(f):
    return np.gradient(f)


def f_gradient_axis(f, axis, edge_order=1):
    return np.gradient(f, axis=axis, edge_order=edge_order)


def f_gradient_square(f):
    return np.gradient(f * f, edge_order=2)


def f_gradient_h(f, h, edge_order=1):
    return np.gradient(f, h, edge_order=edge_order)


def f_gradient_h_axis(f, h, axis):
    return np.gradient(f, h, axis=axis, edge_order=2)


def f_gradient_coordinates(f, x, edge_order=1):
    return np.gradient(f, x, edge_order=edge_order)


def f_gradient_mixed(f, h, y):
    """One spacing per axis: a number for the first, coordinates for the second."""
    return np.gradient(f, h, y, edge_order=2)


def f_gradient_spacing_nonlinear(f, x):
    gx = np.gradient(f, x)
    return gx * gx


def f_nanmedian(a, axis=None, keepdims=False):
    return np.nanmedian(a, axis, keepdims=keepdims)


def f_nanquantile(a, q, axis=None):
    return np.nanquantile(a, q, axis)


def f_nanpercentile(a, q, axis=None):
    return np.nanpercentile(a, q, axis)


class Fixed(Arg):
    """A differentiated argument with a fixed value (sorted knots, quantiles)."""

    def __init__(self, value):
        super().__init__(np.shape(value))
        self.value = np.asarray(value, dtype=float)

    def make(self, rng, cplx):
        return self.value.copy()


def Q(*values):
    return Fixed(values)


_XS = Fixed([-1.4, -0.6, 0.1, 0.7, 1.2, 1.8])  # points inside and outside the knots

MISC_ROWS = [
    Row("append", np.append, f_append,
        [(A(3), A(2)), (A(2, 3), A(4)), (A(2, 3), A(2, 2), 1), (A(2, 3), A(1, 3), 0)], cplx=True),
    Row("ediff1d", np.ediff1d, f_ediff1d, [A(5), A(2, 3)], cplx=True),
    Row("ediff1d-ends", np.ediff1d, f_ediff1d_ends, [(A(4), A(2), A(1)), (A(2, 3), A(1), A(3))]),
    Row("rollaxis", np.rollaxis, f_rollaxis,
        [(A(2, 3, 4), 2), (A(2, 3, 4), 0, 3), (A(2, 3, 4), -1, 1), (A(2, 3, 4), 1, 0),
         (A(3, 2), 1), (A(2, 2, 3, 2), 3, 1)], cplx=True),
    Row("partition", np.partition, f_partition, [(A(6), 2), (A(3, 5), 1), (A(4, 3), (0, 2), 0)]),
    Row("select", np.select, f_select, [(A(5), A(5)), (A(2, 3), A(3))]),
    Row("select-default", np.select, f_select_default, [(A(5), S()), (A(2, 3), A(3))]),
    Row("select-complex", np.select, f_select_complex, [(A(5), A(5)), (A(2, 3), A(3))], cplx=True),
    Row("real_if_close", np.real_if_close, f_real_if_close, [A(4), A(2, 3)], cplx=True),
    Row("polyval", np.polyval, f_polyval, [(A(3), A(4)), (A(4), S()), (A(1), A(2, 3))],
        cplx=True),
    Row("trapezoid", np.trapezoid, f_trapezoid,
        [A(5), (A(3, 4), None, 1.0, 0), (A(2, 5), Q(0.0, 0.5, 1.5, 1.7, 3.0)),
         (A(4, 3), Q(0.0, 0.3, 1.0, 2.0), 1.0, 0)], cplx=True),
    Row("trapezoid-x2d", np.trapezoid, f_trapezoid, [(A(2, 3), Fixed([[0.0, 1.0, 1.5], [0.0, 0.2, 2.0]]))]),
    Row("trapezoid-dx", np.trapezoid, f_trapezoid_dx, [(A(5), S("pos")), (A(2, 3), S("pos"))]),
    Row("convolve", np.convolve, f_convolve,
        [(A(5), A(3)), (A(3), A(5)), (A(5), A(3), "same"), (A(4), A(6), "same"),
         (A(5), A(2), "valid"), (A(3), A(6), "valid"), (A(4), A(4), "same")], cplx=True),
    Row("correlate", np.correlate, f_correlate,
        [(A(5), A(3)), (A(3), A(5)), (A(5), A(3), "same"), (A(4), A(6), "full"),
         (A(4), A(4), "same")], cplx=True),
    Row("interp", np.interp, f_interp, [(_XS, A(4)), (Fixed([[0.1, -1.2], [0.9, 1.0]]), A(4))],
        cplx=True),
    Row("interp-all", np.interp, f_interp_all, [(_XS, Q(-1.0, -0.2, 0.5, 1.5), A(4), S(), S())]),
    Row("median", np.median, f_median,
        [A(5), A(4), (A(3, 4), 0), (A(3, 5), 1, True), (A(2, 3), None, True)]),
    Row("quantile", np.quantile, f_quantile,
        [(A(5), Q(0.3)), (A(6), Q(0.1, 0.55, 0.9)), (A(3, 4), Q(0.25, 0.6), 1),
         (A(4, 3), Q(0.4), 0, True)]),
    Row("percentile", np.percentile, f_percentile,
        [(A(5), Q(30.0)), (A(3, 6), Q(10.0, 75.0), 1)]),
    Row("logspace-ends", np.logspace, f_logspace_ends, [(U(2), S("unit")), (S("unit"), U(3, 2))],
        cplx=True),
    Row("gradient", np.gradient, f_gradient, [A(5), A(2), A(3, 4), A(2, 3, 4)], cplx=True),
    Row("gradient-axis", np.gradient, f_gradient_axis,
        [(A(5), 0, 2), (A(3, 4), 1), (A(3, 4), -2, 2), (A(3, 4, 2), (0, 2))], cplx=True),
    Row("gradient-square", np.gradient, f_gradient_square, [A(4), A(3, 4)]),
    Row("gradient-spacing", np.gradient, f_gradient_h,
        [(A(5), S("pos")), (A(4), S("pos"), 2), (A(3, 4), S("pos")), (A(3, 4), S("pos"), 2)],
        cplx=True),
    Row("gradient-spacing-axis", np.gradient, f_gradient_h_axis,
        [(A(3, 4), S("pos"), 1), (A(4, 3, 3), S("pos"), (0, 2))], cplx=True),
    Row("gradient-coordinates", np.gradient, f_gradient_coordinates,
        [(A(5), Q(0.0, 0.5, 1.5, 1.7, 3.0)), (A(4), Q(-1.0, 0.2, 0.5, 2.0), 2),
         (A(3), Q(0.0, 1.0, 2.5), 2)], cplx=True),
    Row("gradient-mixed", np.gradient, f_gradient_mixed,
        [(A(3, 4), S("pos"), Q(0.0, 0.4, 1.1, 2.0)), (A(4, 3), S("pos"), Q(0.0, 0.7, 1.0))],
        cplx=True),
    Row("gradient-spacing-nonlinear", np.gradient, f_gradient_spacing_nonlinear,
        [(A(5), Q(0.0, 0.5, 1.5, 1.7, 3.0)), (A(4), Q(0.0, 0.3, 1.0, 1.2))]),
    Row("nanmedian", np.nanmedian, f_nanmedian, [NAN(5), NAN(6), (NAN(3, 4), 1), (NAN(4, 3), 0, True)]),
    Row("nanquantile", np.nanquantile, f_nanquantile,
        [(NAN(6), Q(0.3)), (NAN(3, 5), Q(0.2, 0.7), 1), (NAN(5, 3), Q(0.45), 0)]),
    Row("nanpercentile", np.nanpercentile, f_nanpercentile,
        [(NAN(6), Q(35.0)), (NAN(3, 5), Q(20.0, 70.0), 1)]),
    Row("nanprod", np.nanprod, f_nanprod, [NAN(4), (NAN(2, 3), 1), (NAN(3, 2), 0, True)]),
    Row("nanvar", np.nanvar, f_nanvar, [NAN(5), (NAN(2, 4), 1), (NAN(3, 3), 0, 1, True)]),
    Row("nanstd", np.nanstd, f_nanstd, [NAN(5), (NAN(2, 4), 1), (NAN(3, 3), 0, 1, True)]),
    Row("nancumsum", np.nancumsum, f_nancumsum, [NAN(5), (NAN(2, 4), 1), (NAN(3, 3), 0)]),
    Row("nancumprod", np.nancumprod, f_nancumprod, [NAN(5), (NAN(2, 4), 1), (NAN(3, 3), 0)]),
]

# ----- ufunc methods, np.vectorize, np.r_ / np.c_ ---------------------------------------------


def f_add_reduce(a, axis=0, keepdims=False):
    return np.add.reduce(a, axis, keepdims=keepdims)


def f_multiply_reduce(a, axis=0):
    return np.multiply.reduce(a, axis=axis)


def f_maximum_reduce(a, axis=0):
    return np.maximum.reduce(a, axis)


def f_minimum_reduce(a, axis=0, keepdims=False):
    return np.minimum.reduce(a, axis, None, None, keepdims)


def f_logaddexp_reduce(a, axis=0, keepdims=False):
    return np.logaddexp.reduce(a, axis, keepdims=keepdims)


def f_logaddexp2_reduce(a, axis=0):
    return np.logaddexp2.reduce(a, axis=axis)


def f_add_accumulate(a, axis=0):
    return np.add.accumulate(a, axis)


def f_multiply_accumulate(a, axis=0):
    return np.multiply.accumulate(a, axis=axis)


def _outer_fn(u):
    def f_outer(a, b):
        return u.outer(a, b)

    f_outer.__name__ = f"f_{u.__name__}_outer"
    return f_outer


def f_ufunc_chain(x):
    """Methods on a ufunc chosen when the function runs (the run-time path)."""
    u = [np.add, np.multiply][1]
    return u.reduce(np.sin(x)) + np.add.outer(x[0], x[-1])


def _vsoftplus(t):
    if t > 0.0:
        return t + np.log1p(np.exp(-t))
    return np.log1p(np.exp(t))


VSOFTPLUS = np.vectorize(_vsoftplus)


def f_vectorize(x):
    return VSOFTPLUS(x)


def f_vectorize_closure(x, w):
    scaled = np.vectorize(lambda t: np.sin(t * w) * t)
    return scaled(x)


def f_vectorize_two(x, y):
    return np.vectorize(lambda a, b: a * b + a ** 3)(x, y)


def f_vectorize_otypes(x):
    return np.vectorize(lambda t: t * t, otypes=[np.float64])(x)


def f_vectorize_excluded(x, p):
    poly = np.vectorize(lambda t, c: c[0] + c[1] * t + c[2] * t * t, excluded={1})
    return poly(x, p)


def f_vectorize_outputs(x):
    y, z = np.vectorize(lambda t: (t * t, 2.0 * t + t ** 3))(x)
    return y * z


def f_r_(x, y):
    return np.r_[x, y, 0:2, 2.0 * x]


def f_c_(x, y):
    return np.c_[x, y, 1:4]


def f_c_matrices(a, x):
    return np.c_[a, x, a * 2.0]


UFUNC_ROWS = [
    Row("add.reduce", np.add.reduce, f_add_reduce,
        [A(4), (A(3, 4), 1), (A(2, 3, 2), (0, 2), True), (A(3, 4), None)], cplx=True),
    Row("multiply.reduce", np.multiply.reduce, f_multiply_reduce,
        [A(4), (A(3, 4), 1), (A(2, 3, 2), None)], cplx=True),
    Row("maximum.reduce", np.maximum.reduce, f_maximum_reduce, [A(5), (A(3, 4), 1), (A(2, 3, 2), -1)]),
    Row("minimum.reduce", np.minimum.reduce, f_minimum_reduce,
        [A(5), (A(3, 4), 1, True), (A(2, 3, 2), 0)]),
    Row("logaddexp.reduce", np.logaddexp.reduce, f_logaddexp_reduce,
        [A(5), (A(3, 4), 1), (A(2, 3, 2), (0, 2), True), (A(3, 4), None)]),
    Row("logaddexp2.reduce", np.logaddexp2.reduce, f_logaddexp2_reduce, [A(4), (A(3, 4), 1), (A(2, 3, 2), -1)]),
    Row("add.accumulate", np.add.accumulate, f_add_accumulate, [A(4), (A(3, 4), 1), (A(2, 3, 2), -1)],
        cplx=True),
    Row("multiply.accumulate", np.multiply.accumulate, f_multiply_accumulate,
        [A(4), (A(3, 4), 1), (A(2, 3, 2), 0)], cplx=True),
    Row("add.outer", np.add.outer, _outer_fn(np.add), [(A(3), A(2)), (A(2, 2), A(3)), (A(2), S())],
        cplx=True),
    Row("subtract.outer", np.subtract.outer, _outer_fn(np.subtract),
        [(A(3), A(2)), (A(2, 2), A(3))], cplx=True),
    Row("multiply.outer", np.multiply.outer, _outer_fn(np.multiply),
        [(A(3), A(2)), (A(2, 2), A(3)), (A(3), A(2, 2))], cplx=True),
    Row("divide.outer", np.divide.outer, _outer_fn(np.divide), [(P(3), P(2)), (P(2, 2), P(3))],
        cplx=True),
    Row("power.outer", np.power.outer, _outer_fn(np.power), [(P(3), A(2)), (P(2, 2), A(3))],
        cplx=True),
    Row("maximum.outer", np.maximum.outer, _outer_fn(np.maximum), [(A(3), A(2)), (A(2, 2), A(3))]),
    Row("minimum.outer", np.minimum.outer, _outer_fn(np.minimum), [(A(3), A(2)), (A(2, 2), A(3))]),
    Row("hypot.outer", np.hypot.outer, _outer_fn(np.hypot), [(A(3), A(2)), (A(2, 2), A(3))]),
    Row("arctan2.outer", np.arctan2.outer, _outer_fn(np.arctan2), [(A(3), A(2)), (A(2, 2), A(3))]),
    Row("logaddexp.outer", np.logaddexp.outer, _outer_fn(np.logaddexp),
        [(A(3), A(2)), (A(2, 2), A(3))]),
    Row("ufunc-method-at-run-time", np.multiply.reduce, f_ufunc_chain, [A(3, 2), A(4, 3)]),
    Row("vectorize", [np.vectorize, np.vectorize.__call__], f_vectorize, [A(4), A(2, 3), S()]),
    Row("vectorize-closure", [np.vectorize, np.vectorize.__call__], f_vectorize_closure,
        [(A(4), S()), (A(2, 3), S())]),
    Row("vectorize-two", np.vectorize.__call__, f_vectorize_two,
        [(A(3), A(3)), (A(2, 3), A(3)), (S(), A(2, 2))], cplx=True),
    Row("vectorize-otypes", np.vectorize.__call__, f_vectorize_otypes, [A(3), A(2, 2)]),
    Row("vectorize-excluded", np.vectorize.__call__, f_vectorize_excluded,
        [(A(4), A(3)), (A(2, 3), A(3))]),
    Row("vectorize-outputs", np.vectorize.__call__, f_vectorize_outputs, [A(3), A(2, 2)]),
    Row("r_", "np.r_", f_r_, [(A(3), A(2)), (A(4), S())], cplx=True),
    Row("c_", "np.c_", f_c_, [(A(3), A(3)), (A(3, 2), A(3, 1))], cplx=True),
    Row("c_-matrices", "np.c_", f_c_matrices, [(A(2, 3), A(2)), (A(3, 2), A(3, 2))]),
]


# ----- draws of np.random, iteration, sign, heaviside (tests/test_constant_functions.py) --------


def f_normal(loc, scale):
    np.random.seed(0)
    return np.random.normal(loc, scale)


def f_normal_size(loc, scale):
    np.random.seed(0)
    return np.random.normal(loc, scale, size=(3, 4))


def f_uniform(low, high):
    np.random.seed(0)
    return np.random.uniform(low, low + high)


def f_laplace(loc, scale):
    np.random.seed(0)
    return np.random.laplace(loc, scale)


def f_gumbel(loc, scale):
    np.random.seed(0)
    return np.random.gumbel(loc, scale)


def f_logistic(loc, scale):
    np.random.seed(0)
    return np.random.logistic(loc, scale)


def f_lognormal(mean, sigma):
    np.random.seed(0)
    return np.random.lognormal(mean, 0.2 * sigma)


def f_exponential(scale):
    np.random.seed(0)
    return np.random.exponential(scale)


def f_rayleigh(scale):
    np.random.seed(0)
    return np.random.rayleigh(scale, size=(2, 3))


def f_gamma(scale):
    np.random.seed(0)
    return np.random.gamma(2.5, scale)


def f_beta_fixed(x):
    np.random.seed(0)
    return x * np.random.beta(2.0, 3.0, size=np.shape(x))


def f_mvn(mean):
    np.random.seed(0)
    return np.random.multivariate_normal(mean, np.eye(3) + 0.5, size=2)


def f_permutation(x):
    np.random.seed(0)
    return np.random.permutation(x)


def f_choice(x):
    np.random.seed(0)
    return np.random.choice(x, size=(2, 3))


def f_choice_kw(x):
    np.random.seed(0)
    return np.random.choice(x, 3, replace=False, p=[0.1, 0.2, 0.3, 0.4])


def f_ndenumerate(x):
    out = []
    for i, v in np.ndenumerate(x):
        out.append(v * v * (1.0 + sum(i)))
    return np.array(out)


def f_broadcast(x, y):
    out = []
    for a, b in np.broadcast(x, y):
        out.append(a * b)
    return np.array(out)


def f_sign(x):
    return np.sign(x) + 0.5 * x  # (a real x's gradient: 0.5, sign adding none)


def f_heaviside(h):
    return np.heaviside(np.array([0.0, 1.0, 0.0, -2.0]), h)


DRAW_ROWS = [
    Row("random.normal", np.random.normal, f_normal, [(A(4), P(4)), (S(), P(4)), (A(4), S("pos"))]),
    Row("random.normal-size", np.random.normal, f_normal_size, [(A(4), P(4)), (A(3, 1), S("pos"))]),
    Row("random.uniform", np.random.uniform, f_uniform, [(A(4), P(4)), (S(), P(2, 3))]),
    Row("random.laplace", np.random.laplace, f_laplace, [(A(4), P(4))]),
    Row("random.gumbel", np.random.gumbel, f_gumbel, [(A(4), P(4))]),
    Row("random.logistic", np.random.logistic, f_logistic, [(A(4), P(4))]),
    Row("random.lognormal", np.random.lognormal, f_lognormal, [(A(4), P(4))]),
    Row("random.exponential", np.random.exponential, f_exponential, [P(4), P(2, 2)]),
    Row("random.rayleigh", np.random.rayleigh, f_rayleigh, [P(3), S("pos")]),
    Row("random.gamma", np.random.gamma, f_gamma, [P(4)]),
    Row("random.beta-fixed", np.random.beta, f_beta_fixed, [A(4)]),
    Row("random.multivariate_normal", np.random.multivariate_normal, f_mvn, [A(3)]),
    Row("random.permutation", np.random.permutation, f_permutation, [A(5), A(3, 2)]),
    Row("random.choice", np.random.choice, f_choice, [A(4)]),
    Row("random.choice-kw", np.random.choice, f_choice_kw, [A(4)]),
    Row("ndenumerate", np.ndenumerate, f_ndenumerate, [A(4), A(2, 3)]),
    Row("broadcast", np.broadcast, f_broadcast, [(A(3), A(3)), (A(2, 1), A(3)), (S(), A(2))]),
    Row("sign", np.sign, f_sign, [A(4)], cplx=True),
    Row("heaviside", np.heaviside, f_heaviside, [A(4)]),
]

# statistics.py (more shapes and keywords: tests/rules/numpy/test_statistics.py)
_BIN_IDX = np.array([0, 3, 1, 3, 5, 0])


def f_cov(m):
    return np.cov(m)


def f_cov_y(m, y):
    return np.cov(m, y, rowvar=False, ddof=2)


def f_corrcoef(x):
    return np.corrcoef(x)


def f_polyfit(x, y):
    return np.polyfit(x, y, 2)


def f_bincount(w):
    return np.bincount(_BIN_IDX, weights=w, minlength=7)


def f_cond(x):
    return np.linalg.cond(x)


def f_cond_fro(x):
    return np.linalg.cond(x, "fro")


STAT_ROWS = [
    Row("cov", np.cov, f_cov, [A(3, 5), A(6)], cplx=True),
    Row("cov-y", np.cov, f_cov_y, [(A(5, 2), A(5)), (A(6), A(6))], cplx=True),
    Row("corrcoef", np.corrcoef, f_corrcoef, [A(3, 5), A(2, 6)]),
    Row("polyfit", np.polyfit, f_polyfit, [(A(7), A(7)), (A(6), A(6, 2))]),
    Row("bincount", np.bincount, f_bincount, [A(6)]),
    Row("linalg.cond", np.linalg.cond, f_cond, [SQ(3, 3), SQ(2, 3, 3), A(4, 3)], cplx=True),
    Row("linalg.cond-fro", np.linalg.cond, f_cond_fro, [SQ(3, 3), SQ(2, 3, 3)], cplx=True),
]

# (meshgrid, block, ptp, vander, insert, delete, diff's and pad's new forms)
from .test_shape_extra import _table_rows  # noqa: E402

ROWS = FFT_ROWS + LINALG_ROWS + MISC_ROWS + UFUNC_ROWS + DRAW_ROWS + STAT_ROWS + _table_rows()


def _params():
    out = []
    for row in ROWS:
        for path in ("inline", "runtime"):
            marks = list(row.marks) + (list(row.rt_marks) if path == "runtime" else [])
            out.append(pytest.param(row, path, id=f"{row.id}-{path}", marks=marks))
    return out


@pytest.mark.parametrize("row, path", _params())
def test_rule(row, path):
    for i in range(len(row.cases)):
        _check(row, i, path, False)
    if row.cplx:
        for i in range(len(row.cases)):
            _check(row, i, path, True)


def _re_pair(gy, y):
    """Re <gy, y> written for the transformer (the loss of the second-order checks)."""
    if isinstance(gy, tuple):
        total = 0.0
        for a, b in zip(gy, y):
            if a is not None:
                total = total + _re_pair(a, b)
        return total
    return np.real(np.sum(np.conj(gy) * y))


def _second_order(row, case, cplx):
    rng = _rng(row.id, "second order", case, cplx)
    args, diff = _realise(row.cases[case], rng, cplx)
    gy = _cotangent(row.fn(*args), rng, row.drop)
    i = diff[0]
    u = rng.standard_normal(np.shape(args[i]))
    if cplx:
        u = u + 1j * rng.standard_normal(np.shape(args[i]))

    def loss(x):
        trial = list(args)
        trial[i] = x
        return _re_pair(gy, row.fn(*trial))

    def directional(x):  # Re <u, ∇loss(x)>: its gradient is the Hessian applied to u
        return np.real(np.sum(np.conj(u) * ad.gradient(loss, x)[0]))

    (got,) = ad.gradient(directional, args[i])
    (want,) = numerical_gradient(directional, args[i])
    assert isapprox(got, want, rtol=1e-4, atol=1e-6), (row.id, case, cplx, got, want)


@pytest.mark.parametrize("row", [pytest.param(r, marks=list(r.marks), id=r.id) for r in ROWS])
def test_second_order(row):
    """Each rule's pullback differentiates again (first and last case, real and complex)."""
    cases = sorted({0, len(row.cases) - 1})
    for case in cases:
        _second_order(row, case, False)
        if row.cplx:
            _second_order(row, case, True)


# ----- eigh's convention (docs/numpy.md) -------------------------------------------------------


def f_eigh_loss(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w * np.arange(1.0, w.shape[-1] + 1)) + np.sum(np.abs(v[:, 0]) ** 4)


def f_eigh_lower_loss(a):
    """The one-triangle reading written out: the gradient flows to the lower triangle."""
    return f_eigh_loss(np.tril(a) + np.conj(np.tril(a, -1)).T)


@pytest.mark.parametrize("cplx", [False, True])
def test_eigh_gradient_is_the_hermitian_projection(cplx):
    rng = np.random.default_rng(14)
    a = rng.standard_normal((4, 4))
    if cplx:
        a = a + 1j * rng.standard_normal((4, 4))
    a = a + np.conj(a).T + np.diag([0.0, 3.0, 6.0, 9.0])  # distinct eigenvalues
    (got,) = ad.gradient(f_eigh_loss, a)
    (fd,) = numerical_gradient(f_eigh_loss, a)  # NumPy reads the lower triangle only
    assert np.allclose(np.triu(fd, 1), 0, atol=1e-6)
    assert isapprox(got, np.conj(got).T)
    assert isapprox(got, (fd + np.conj(fd).T) / 2, rtol=1e-5, atol=1e-6)
    (lower,) = ad.gradient(f_eigh_lower_loss, a)
    assert isapprox(lower, fd, rtol=1e-5, atol=1e-6)


# ----- run-time pairs of rules are cached by the rule's id ------------------------------------


def test_a_rule_pair_keeps_its_rule_alive():
    """The run-time version of a keyword call builds a throwaway copy of the rule; its pair
    is cached by id(copy), so the copy must outlive the cache entry, or a later copy of
    another rule at the same address gets the first one's pair (scipy.special.softmax
    answered with logsumexp's pullback when more rules were loaded)."""
    import gc

    from adjoint_s2s.rules import Primitive
    from adjoint_s2s.runtime.dispatch import _primitive_pair

    pairs = []
    for fn in (np.sin, np.cos, np.tan, np.exp):
        # a path of its own: the pair's source is filed in linecache under the path
        pairs.append((fn, _primitive_pair(Primitive(fn, f"test_only.{fn.__name__}", ("x",),
                                                     {"x": "1.0"}, kind="array"))))
        gc.collect()
    for fn, pair in pairs:
        y, _ = pair(np.array([0.3]))
        assert np.allclose(y, fn(np.array([0.3]))), fn


# ----- third order through np.trace (issue 14) ------------------------------------------------


def _trace_cubed(x):
    return np.trace(x @ x @ x) ** 2


def _trace_offsets(x):
    return np.trace(x, 1) ** 3 + np.trace(np.sin(x), -1, 0, 1)


@pytest.mark.parametrize("fn", [_trace_cubed, _trace_offsets], ids=lambda f: f.__name__)
def test_third_order_through_trace(fn):
    """The third derivative reads the cotangent of a 0-d array's `g[..., None, None]`
    (trace's adjoint), which arrives as a number: it used to stop with "expected a tuple
    or list gradient, got float"."""
    rng = np.random.default_rng(3)
    x, u, v = (rng.standard_normal((3, 3)) for _ in range(3))

    def d1(x):
        return np.sum(ad.gradient(fn, x)[0] * u)

    def d2(x):
        return np.sum(ad.gradient(d1, x)[0] * v)

    for f in (d1, d2):
        (got,) = ad.gradient(f, x)
        (want,) = numerical_gradient(f, x)
        assert isapprox(got, want, rtol=1e-5, atol=1e-6), f.__name__


# ----- np.vectorize: what it refuses, keywords, outputs without a gradient ----------------------


def _vec_signature(x):
    return np.sum(np.vectorize(lambda v: v * 2.0, signature="(n)->(n)")(x))


def test_vectorize_signature_is_refused():
    from adjoint_s2s.errors import MissingAdjointError

    with pytest.raises(MissingAdjointError, match="signature="):
        ad.gradient(_vec_signature, np.ones((2, 3)))


def _vec_keywords(x, y):
    return np.sum(np.vectorize(lambda a, b=1.0: a * b * b)(x, b=y))


def _vec_int_output(x):
    counts = np.vectorize(lambda t: int(t > 0.0))(x)
    return np.sum(x * x) + np.sum(counts)


def _vec_excluded_keyword(x, w):
    scale = np.vectorize(lambda t, c=None: t * c[0] + c[1], excluded={"c"})
    return np.sum(scale(x, c=w) ** 2)


@pytest.mark.parametrize("fn, args", [
    (_vec_keywords, (np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.5, -0.7]))),
    (_vec_int_output, (np.array([[0.3, -1.2], [2.0, 0.1]]),)),
    (_vec_excluded_keyword, (np.array([0.3, -1.2, 2.0]), np.array([0.8, -0.4]))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_vectorize_first_and_second_order(fn, args):
    from adjoint_s2s.testing import check_grads

    check_grads(fn, *args)
    ws = [np.random.default_rng(1).standard_normal(np.shape(a)) for a in args]

    def second(*xs):
        gs = ad.gradient(fn, *xs)
        return sum(np.sum(np.asarray(g) * w) for g, w in zip(gs, ws))

    check_grads(second, *args, rtol=1e-5, atol=1e-6)


def test_vectorize_value_is_numpys():
    vec = np.vectorize(lambda t: t * t if t > 0 else -t)
    x = np.array([[0.5, -1.0], [2.0, -0.3]])
    y, back = ad.pullback(lambda v: vec(v), x)
    assert y.dtype == vec(x).dtype and np.array_equal(y, vec(x))
    assert np.array_equal(back(np.ones((2, 2)))[0], np.where(x > 0, 2 * x, -1.0))


@pytest.mark.parametrize("options, calls", [({}, 4), ({"cache": True}, 3), ({"otypes": [float]}, 3)],
                         ids=["probe call", "cache", "otypes"])
def test_vectorize_calls_the_function_as_often_as_numpy(options, calls):
    # NumPy calls the function on the first elements once more for the output types,
    # unless otypes or cache say otherwise: a function with a side effect runs as often
    # under pullback as in the plain call, and the value is the same
    seen = []

    def counted(t):
        seen.append(t)
        return t * t * (1.0 + 0.1 * len(seen))

    vec = np.vectorize(counted, **options)
    x = np.array([0.5, -1.0, 2.0])
    plain = vec(x)
    assert len(seen) == calls
    seen.clear()
    y, back = ad.pullback(lambda v: vec(v), x)
    assert len(seen) == calls
    assert np.array_equal(y, plain)
