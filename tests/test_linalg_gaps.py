"""Gaps of the linear-algebra, NaN-ignoring and order-statistic rules: outputs whose
cotangent was dropped (lstsq's residuals and singular values), explicit zeros for vectors
that are not functions of the input (svd's and qr's completions, now refused), NaN for an
entry a NaN-ignoring reduction ignores, the imaginary part jacobian dropped, and bare
LinAlgError / NotImplementedError / ValueError from rules (det of a singular matrix,
qr(mode='raw'), quantile methods, interp(period=), pad modes, average(returned=True))."""
import warnings

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import AdjointError
from adjoint_s2s.errors import MissingAdjointError, NotDifferentiableError
from adjoint_s2s.testing import numerical_gradient

RNG = np.random.default_rng(7)
A32 = RNG.standard_normal((3, 2))
A42 = RNG.standard_normal((4, 2))
Y4 = RNG.standard_normal((4, 3))
y4 = Y4[:, 0]
w3 = RNG.standard_normal(3)
SING = np.array([[1.0, 2.0], [2.0, 4.0]])
RANK2 = np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 2.0]) + np.outer([0.0, 1.0, 1.0], [2.0, 1.0, 0.0])
x4 = np.array([0.2, 0.7, 0.4, 0.9])
neg4 = np.array([0.3, -0.5, 0.8, 1.2])


def agrees(fn, x, tol=1e-6):
    """fn's gradient at x is the central differences' (warnings of sqrt(-1) silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = ad.gradient(fn, x)[0]
        want = numerical_gradient(fn, x)[0]
    assert got is not None
    assert np.allclose(got, want, rtol=tol, atol=tol), (got, want)
    return got


def refuses(fn, x, kind, *words):
    """gradient and pullback's pullback refuse fn at x with kind, each of words in the
    message."""
    for run in (lambda: ad.gradient(fn, x), lambda: ad.pullback(fn, x)[1](1.0)):
        with pytest.raises(kind) as info:
            run()
        assert isinstance(info.value, AdjointError)
        for w in words:
            assert w in str(info.value), (w, str(info.value))


# ----- lstsq: the residuals and singular values ---------------------------------------------


def _lstsq_all(A):
    x, res, rank, sv = np.linalg.lstsq(A, y4)
    return np.sum(x * 2.0) + res[0] * 3.0 + sv[0]


@pytest.mark.parametrize("fn, x", [
    (lambda A: np.linalg.lstsq(A, y4)[1][0], A42),
    (lambda A: np.sum(np.linalg.lstsq(A, y4)[3] * np.array([1.0, -2.0])), A42),
    (lambda A: np.sum(np.linalg.lstsq(A, Y4)[1] * np.array([1.0, 2.0, 3.0])), A42),
    (lambda Y: np.sum(np.linalg.lstsq(A42, Y)[1] * np.array([1.0, 2.0, 3.0])), Y4),
    (lambda y: np.linalg.lstsq(A42, y)[1][0], y4),
    (_lstsq_all, A42),
], ids=["residual-A", "singular-values", "residuals-2d-A", "residuals-2d-b", "residual-b",
        "all-outputs"])
def test_lstsq_residuals_and_singular_values_get_their_gradient(fn, x):
    agrees(fn, x)


# ----- svd and qr: completion vectors refused, the rest differentiated -------------------------


def _svd_rebuilt(A):
    U, s, Vh = np.linalg.svd(A)
    return np.sum((U[:, :2] * s @ Vh) * np.arange(8.0).reshape(4, 2))


@pytest.mark.parametrize("fn", [
    lambda A: np.sum(np.linalg.svd(A)[0][:, :2] * np.arange(8.0).reshape(4, 2)),
    lambda A: np.sum(np.linalg.svd(A.T)[2][:2] * np.arange(8.0).reshape(2, 4)),
    _svd_rebuilt,
], ids=["U-first-columns", "Vh-first-rows", "rebuilt"])
def test_full_svd_through_its_first_vectors(fn):
    agrees(fn, A42)


@pytest.mark.parametrize("fn, what", [
    (lambda A: np.sum(np.linalg.svd(A)[0][:, 2] ** 2 * w3), "columns of U"),
    (lambda A: np.sum(np.linalg.svd(A.T)[2] * 1.5), "rows of Vh"),
], ids=["U", "Vh"])
def test_full_svd_refuses_a_gradient_into_the_completion(fn, what):
    refuses(fn, A32 if what == "columns of U" else A42, MissingAdjointError,
            "numpy.linalg.svd", "full_matrices=True", what, "full_matrices=False")


def _qr_complete_first(A):
    q, r = np.linalg.qr(A, mode="complete")
    return np.sum(q[:, :2] * 2.0) + np.sum(r ** 2)


@pytest.mark.parametrize("fn, x", [
    (_qr_complete_first, A42),
    (lambda A: np.sum(np.linalg.qr(A, mode="complete")[1] * 1.5), A32),
    (lambda A: np.sum(np.linalg.qr(A.T, mode="complete")[0] * 2.0), A42),
    (lambda A: np.sum(np.linalg.qr(A, mode="r") * 1.5), A32),
], ids=["tall-first-columns", "tall-R", "wide", "r"])
def test_qr_complete_and_r(fn, x):
    agrees(fn, x)


def test_qr_complete_refuses_a_gradient_into_the_completion():
    refuses(lambda A: np.sum(np.linalg.qr(A, mode="complete")[0] * 1.5), A32,
            MissingAdjointError, "numpy.linalg.qr", "mode='complete'", "mode='reduced'")


def test_qr_raw_is_refused():
    refuses(lambda A: np.sum(np.linalg.qr(A, mode="raw")[0]), A32, MissingAdjointError,
            "numpy.linalg.qr", "mode='raw'", "mode='reduced'")


# ----- det at a singular matrix: the adjugate ------------------------------------------------


def test_det_of_a_singular_matrix_is_the_adjugate():
    (g,) = ad.gradient(np.linalg.det, SING)
    assert np.allclose(g, [[4.0, -2.0], [-2.0, 1.0]])
    (g2,) = ad.gradient(lambda a: np.linalg.det(a) ** 2, SING)
    assert np.allclose(g2, 0.0)


@pytest.mark.parametrize("x", [
    RANK2, np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 2.0]), RNG.standard_normal((3, 3)),
    np.stack([RANK2, RNG.standard_normal((3, 3))]),
], ids=["rank-2", "rank-1", "regular", "batch"])
def test_det_agrees_with_differences(x):
    agrees(lambda a: np.sum(np.linalg.det(a) * np.arange(1.0, 1.0 + np.size(a) // 9)), x)


def test_det_of_a_singular_complex_matrix_is_the_adjugate():
    z = np.array([[1.0 + 1j, 2.0], [2.0, 2.0 - 2j]])  # row 2 = (1 - i)·row 1: det = 0
    assert abs(np.linalg.det(z)) < 1e-12
    (g,) = ad.gradient(lambda a: np.real(np.linalg.det(a)), z)
    adj = np.array([[z[1, 1], -z[0, 1]], [-z[1, 0], z[0, 0]]])
    assert np.allclose(g, np.conj(adj.T))


def test_slogdet_of_a_singular_matrix_says_why():
    refuses(lambda a: np.linalg.slogdet(a)[1], SING, NotDifferentiableError,
            "singular", "-inf", "np.linalg.det")


# ----- NaN-ignoring reductions: an ignored entry gets exactly 0 -------------------------------


@pytest.mark.parametrize("fn", [
    lambda x: np.nanmean(np.sqrt(x)),
    lambda x: np.nansum(np.log(x) * 2.0),
    lambda x: np.nanprod(np.sqrt(x)),
    lambda x: np.nanmax(np.sqrt(x)),
    lambda x: np.nanmin(np.sqrt(x)),
    lambda x: np.nanstd(np.sqrt(x)),
    lambda x: np.nanvar(np.sqrt(x)),
    lambda x: np.nanmedian(np.sqrt(x)),
    lambda x: np.nanpercentile(np.sqrt(x), 30.0),
    lambda x: np.nanquantile(np.sqrt(x), 0.3),
    lambda x: np.sum(np.nancumsum(np.sqrt(x)) * np.arange(4.0)),
    lambda x: np.sum(np.nancumprod(np.sqrt(x)) * np.arange(4.0)),
], ids=["nanmean", "nansum-log", "nanprod", "nanmax", "nanmin", "nanstd", "nanvar",
        "nanmedian", "nanpercentile", "nanquantile", "nancumsum", "nancumprod"])
def test_an_entry_a_nan_reduction_ignores_gets_zero(fn):
    g = agrees(fn, neg4)
    assert g[1] == 0.0


@pytest.mark.parametrize("fn", [
    lambda x: np.sum(np.nancumsum(x, axis=1) * np.arange(6.0).reshape(2, 3)),
    lambda x: np.sum(np.nancumprod(x, axis=0) * np.arange(6.0).reshape(2, 3)),
    lambda x: np.sum(np.nancumprod(x) * np.arange(6.0)),
], ids=["nancumsum-axis", "nancumprod-axis", "nancumprod-flat"])
def test_nancumsum_and_nancumprod(fn):
    m = np.array([[0.3, np.nan, 0.8], [1.2, 0.5, np.nan]])
    g = agrees(fn, m, tol=1e-5)
    assert g[0, 1] == 0.0 and g[1, 2] == 0.0


# ----- jacobian of complex outputs --------------------------------------------------------------


def test_jacobian_of_a_complex_output_of_a_real_argument_is_complex():
    (j,) = ad.jacobian(lambda t: np.exp(1j * t), 0.3)
    assert np.allclose(j, 1j * np.exp(0.3j))
    t = np.array([0.3, 0.5, -0.2])
    (j,) = ad.jacobian(lambda t: np.exp(1j * t) * t[::-1], t)
    eps = 1e-6
    cols = [(np.exp(1j * (t + eps * e)) * (t + eps * e)[::-1]
             - np.exp(1j * (t - eps * e)) * (t - eps * e)[::-1]) / (2 * eps) for e in np.eye(3)]
    assert np.allclose(j, np.stack(cols, -1), atol=1e-8)


def test_jacobian_of_a_holomorphic_function():
    z = np.array([1 + 1j, 0.5 - 2j])
    (j,) = ad.jacobian(lambda z: z ** 3 * np.sin(z), z)
    assert np.allclose(j, np.diag(3 * z ** 2 * np.sin(z) + z ** 3 * np.cos(z)))
    ja, jz = ad.jacobian(lambda a, z: a * z, 0.5, 1 + 2j)
    assert np.allclose(ja, 1 + 2j) and np.allclose(jz, 0.5)


def test_jacobian_of_a_real_output_of_a_complex_argument_is_the_gradient():
    z = np.array([1 + 1j, 2.0])
    (j,) = ad.jacobian(lambda z: np.abs(z) ** 2, z)
    assert np.allclose(j, np.diag(2 * z))


@pytest.mark.parametrize("fn", [lambda z: np.conj(z), lambda z: z * abs(z)], ids=["conj", "z|z|"])
def test_jacobian_refuses_a_non_holomorphic_complex_function(fn):
    with pytest.raises(NotDifferentiableError) as info:
        ad.jacobian(fn, 1 + 1j)
    for w in ("not holomorphic", "np.real(f(z))", "np.imag(f(z))"):
        assert w in str(info.value)


# ----- quantile methods -----------------------------------------------------------------------


@pytest.mark.parametrize("method", ["nearest", "midpoint", "lower", "higher", "linear"])
@pytest.mark.parametrize("q", [0.3, 0.5, 0.9])
def test_quantile_methods(method, q):
    agrees(lambda x: np.quantile(x, q, method=method), np.array([0.2, 0.7, 0.4, 0.9, 0.1]))
    agrees(lambda x: np.percentile(x, 100 * q, method=method), x4)
    agrees(lambda x: np.nanquantile(x, q, method=method), np.array([0.2, np.nan, 0.4, 0.9, 0.1]))


def test_quantile_methods_along_an_axis_and_to_q():
    m = RNG.standard_normal((3, 5))
    agrees(lambda x: np.sum(np.quantile(x, [0.2, 0.7], axis=1, method="nearest") * w3), m)
    (gq,) = ad.gradient(lambda q: np.quantile(m, q, method="lower") + q, 0.3)
    assert gq == 1.0  # (piecewise constant in q)


def test_an_other_quantile_method_is_refused():
    refuses(lambda x: np.quantile(x, 0.3, method="weibull"), x4, MissingAdjointError,
            "numpy.quantile", "method='weibull'", "'nearest'")
    refuses(lambda x: np.nanpercentile(x, 30.0, method="hazen"), x4, MissingAdjointError,
            "numpy.nanpercentile", "method='hazen'")


# ----- interp(period=), pad, average(returned=True) -----------------------------------------


@pytest.mark.parametrize("fn, x", [
    (lambda x: np.sum(np.interp(x, [0.0, 0.5, 1.0], [1.0, 2.0, 0.0], period=1.0) * x), x4 + 1.33),
    (lambda f: np.sum(np.interp(x4 * 3 + 0.05, [0.1, 0.5, 0.8], f, period=1.0) * np.arange(4.0)),
     np.array([1.0, 2.0, 0.0])),
    (lambda p: np.sum(np.interp(x4 * 3 + 0.05, p, [1.0, 2.0, 0.0], period=1.0) * np.arange(4.0)),
     np.array([0.1, 1.5, -0.2])),
], ids=["x", "fp", "xp"])
def test_interp_with_a_period(fn, x):
    agrees(fn, x)


@pytest.mark.parametrize("fn", [
    lambda x: np.sum(np.pad(x, 2, constant_values=(x[0], 3.0)) * np.arange(8.0)),
    lambda x: np.sum(np.pad(x, 1, constant_values=x[1]) * np.arange(6.0)),
    lambda x: np.sum(np.pad(x.reshape(2, 2), ((1, 0), (0, 2)),
                            constant_values=((x[0], x[1]), (x[2], x[3] * 2))) * np.arange(12.0).reshape(3, 4)),
], ids=["pair", "scalar", "per-axis"])
def test_pad_constant_values_per_side(fn):
    agrees(fn, x4)


@pytest.mark.parametrize("mode", ["mean", "linear_ramp"])
def test_pad_mean_and_linear_ramp(mode):
    """(refused until rules/numpy/shape_extra.py; more in tests/rules/numpy/test_shape_extra.py)"""
    agrees(lambda x: np.sum(np.pad(x, 2, mode=mode) * np.arange(8.0)), x4)


@pytest.mark.parametrize("mode", ["maximum", "minimum", "median"])
def test_an_other_pad_mode_is_refused(mode):
    refuses(lambda x: np.sum(np.pad(x, 2, mode=mode)), x4, MissingAdjointError,
            "numpy.pad", f"mode={mode!r}", "np.concatenate")


M23 = np.arange(1.0, 7.0).reshape(2, 3)


@pytest.mark.parametrize("fn, x", [
    (lambda w: np.average(x4, weights=w, returned=True)[0], x4),
    (lambda w: np.average(x4, weights=w, returned=True)[1] * 2.0, x4),
    (lambda w: np.sum(np.average(M23, axis=1, weights=w, returned=True)[1] * np.array([2.0, 3.0])),
     x4[:3]),
    (lambda w: np.sum(np.prod(np.average(M23, axis=1, weights=w, returned=True), 0)), x4[:3]),
    (lambda x: np.prod(np.average(x, returned=True)), x4),
    (lambda x: np.average(x, weights=x, returned=True)[0], x4),
], ids=["average", "sum-of-weights", "axis", "pair-as-array", "no-weights", "both"])
def test_average_returned(fn, x):
    agrees(fn, x)


def test_lu_factor_of_a_rectangular_matrix_is_refused():
    sl = pytest.importorskip("scipy.linalg")
    refuses(lambda A: np.sum(sl.lu_factor(A)[0]), A32, MissingAdjointError, "lu_factor",
            "square", "3x2")


def test_lu_factor_of_a_singular_matrix_says_why():
    sl = pytest.importorskip("scipy.linalg")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sl.LinAlgWarning)
        refuses(lambda A: np.sum(sl.lu_factor(A)[0]), SING, NotDifferentiableError,
                "lu_factor", "singular", "U⁻¹")
