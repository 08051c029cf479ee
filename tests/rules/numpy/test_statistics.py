"""cov, corrcoef, polyfit, bincount, np.linalg.cond / matrix_rank (rules/numpy/statistics.py),
the where= and initial= of sum, mean, prod, max/min (rules/numpy/reductions.py, extremum.py)
and einsum's optimize= (rules/numpy/linalg.py): each against central differences
(adjoint_s2s.testing.check_grads, numerical_gradient) at several shapes and keywords, inline
and at run time (arrays the transformer does not know), the value under pullback the plain
call's, second order where the function is twice differentiable, and the refused forms."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import MissingAdjointError
from adjoint_s2s.rules.numpy.statistics import np_cond_adjoint
from adjoint_s2s.testing import check_grads, numerical_gradient

from .test_rules import _opaque

RNG = np.random.default_rng(20261129)


def _arr(*shape):
    return RNG.standard_normal(shape)


_FLAT = np.random.default_rng(7).standard_normal(64)


def _weighting(shape, seed):
    """A fixed, non-symmetric weighting of an output: every entry of the cotangent differs
    (read from a fixed vector, so that differentiated code may call it)."""
    return np.reshape(_FLAT[seed:seed + int(np.prod(shape))], shape)


def _check(f, *args, order=2, rtol=1e-5, atol=1e-6):
    """Inline gradient vs central differences (and second order), the run-time gradient
    (opaque arrays) equal to the inline one."""
    got = check_grads(f, *args, order=order, rtol=rtol, atol=atol)
    runtime = ad.gradient(f, *[_opaque(a) for a in args])
    for g, r in zip(got, runtime):
        if g is None:
            assert r is None
        else:
            np.testing.assert_allclose(np.asarray(r), np.asarray(g), rtol=1e-10, atol=1e-12)
    return got


def _same_value(f, *args):
    """The value under pullback is the plain call's, inline and at run time."""
    want = f(*args)
    for call in (args, [_opaque(a) for a in args]):
        y, _ = ad.pullback(f, *call)
        np.testing.assert_array_equal(np.asarray(y), np.asarray(want))


# ----- np.cov --------------------------------------------------------------------------------

M35 = _arr(3, 5)
M53 = _arr(5, 3)
V6 = _arr(6)
Y25 = _arr(2, 5)
FW5 = np.array([1, 3, 2, 1, 2])
AW5 = np.array([0.7, 1.3, 0.4, 2.1, 1.0])


def _weighted(out, seed=1):
    return np.sum(np.asarray(out) * _weighting(np.shape(out), seed))


COV_CASES = {
    "2d": (lambda m: _weighted(np.cov(m)), (M35,)),
    "2d_rowvar_false": (lambda m: _weighted(np.cov(m, rowvar=False)), (M53,)),
    "1d": (lambda v: np.cov(v) ** 2, (V6,)),
    "1d_rowvar_false": (lambda v: np.cov(v, rowvar=False) * 3.0, (V6,)),
    "bias": (lambda m: _weighted(np.cov(m, bias=True)), (M35,)),
    "ddof": (lambda m: _weighted(np.cov(m, ddof=3)), (M35,)),
    "ddof0_bias_ignored": (lambda m: _weighted(np.cov(m, bias=True, ddof=0)), (M35,)),
    "y_2d": (lambda m, y: _weighted(np.cov(m, y)), (M35, Y25)),
    "y_1d": (lambda v, w: _weighted(np.cov(v, w)), (V6, _arr(6))),
    "y_rowvar_false": (lambda m, y: _weighted(np.cov(m, y, rowvar=False)), (M53, _arr(5, 2))),
    "m_1d_y_2d": (lambda v, y: _weighted(np.cov(v, y)), (_arr(5), Y25)),
    "fweights": (lambda m: _weighted(np.cov(m, fweights=FW5)), (M35,)),
    "aweights": (lambda m, a: _weighted(np.cov(m, aweights=a)), (M35, AW5)),
    "aweights_ddof0": (lambda m, a: _weighted(np.cov(m, aweights=a, ddof=0)), (M35, AW5)),
    "aweights_ddof2": (lambda m, a: _weighted(np.cov(m, aweights=a, ddof=2)), (M35, AW5)),
    "both_weights": (lambda m, a: _weighted(np.cov(m, fweights=FW5, aweights=a)), (M35, AW5)),
    "both_weights_y": (lambda m, y, a: _weighted(np.cov(m, y, False, False, None, FW5, a)),
                       (M53, _arr(5), AW5)),
    "keywords": (lambda m, a: _weighted(np.cov(m=m, rowvar=False, bias=True, aweights=a)),
                 (M53, AW5)),
}


@pytest.mark.parametrize("name", list(COV_CASES))
def test_cov(name):
    f, args = COV_CASES[name]
    _check(f, *args)


def test_cov_values_and_shapes():
    for m, kw in ((M35, {}), (V6, {}), (M53, {"rowvar": False}), (M35, {"aweights": AW5})):
        _same_value(lambda x: np.cov(x, **kw), m)
    y, back = ad.pullback(lambda v: np.cov(v), V6)
    assert np.ndim(y) == 0
    assert back(1.0)[0].shape == V6.shape


def test_cov_list_argument():
    def f(a, b):
        return np.cov([a, b, a * b, b - a])

    got = ad.gradient(f, 0.3, -1.1)
    want = numerical_gradient(f, 0.3, -1.1)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_cov_complex():
    z = _arr(3, 4) + 1j * _arr(3, 4)

    def f(z):
        c = np.cov(z)
        return np.real(np.sum(c * _weighting(c.shape, 3))) + np.imag(np.sum(c * _weighting(c.shape, 4)))

    check_grads(f, z, rtol=1e-6, atol=1e-8)


def _reference_cov(m, f, a, ddof):
    """np.cov's formula with real-valued weights f (NumPy takes whole numbers only) and a."""
    w = f * a
    sw = np.sum(w)
    xc = m - np.sum(m * w, axis=1, keepdims=True) / sw
    fact = sw if ddof == 0 else sw - ddof * np.sum(w * a) / sw
    return (xc * w) @ xc.T / fact


@pytest.mark.parametrize("ddof", [0, 1, 2])
@pytest.mark.parametrize("aweights", [False, True])
def test_cov_fweights_by_the_formula_for_real_weights(ddof, aweights):
    K = _weighting((3, 3), 5)
    fw = FW5 if aweights else FW5.astype(float)  # (float64 beside aweights: refused below)

    def ours(f, a):
        return np.sum(np.cov(M35, fweights=f, aweights=a if aweights else None, ddof=ddof) * K)

    def ref(f, a):
        return np.sum(_reference_cov(M35, f, a if aweights else np.ones(5), ddof) * K)

    np.testing.assert_allclose(ours(fw, AW5.copy()), ref(fw.astype(float), AW5), rtol=1e-12)
    got = ad.gradient(ours, fw, AW5.copy())
    want = numerical_gradient(ref, fw.astype(float), AW5)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-8)
    if aweights:
        np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-8)


def test_cov_refuses_float_fweights_beside_aweights():
    def f(m):  # np.cov multiplies a float64 fweights array by aweights in place
        return _weighted(np.cov(m, fweights=FW5.astype(float), aweights=AW5))

    with pytest.raises(MissingAdjointError, match="fweights of dtype float64 beside aweights"):
        ad.gradient(f, M35)


# ----- np.corrcoef ---------------------------------------------------------------------------

CORR_CASES = {
    "2d": (lambda x: _weighted(np.corrcoef(x)), (M35,)),
    "rowvar_false": (lambda x: _weighted(np.corrcoef(x, rowvar=False)), (M53,)),
    "x_y_1d": (lambda x, y: _weighted(np.corrcoef(x, y)), (V6, _arr(6))),
    "x_y_2d": (lambda x, y: _weighted(np.corrcoef(x, y), 2), (M35, Y25)),
    "y_rowvar_false": (lambda x, y: _weighted(np.corrcoef(x, y, rowvar=False)), (M53, _arr(5))),
    "squared": (lambda x: np.sum(np.corrcoef(x) ** 2), (M35,)),
}


@pytest.mark.parametrize("name", list(CORR_CASES))
def test_corrcoef(name):
    f, args = CORR_CASES[name]
    _check(f, *args)


def test_corrcoef_values_and_the_constant_one():
    _same_value(lambda x: np.corrcoef(x), M35)
    _same_value(lambda x, y: np.corrcoef(x, y, rowvar=False), M53, _arr(5))
    g = ad.gradient(lambda v: np.corrcoef(v) * 2.0, V6)[0]  # 1-D alone: always 1
    np.testing.assert_allclose(g, 0.0, atol=1e-12)


# ----- np.polyfit ----------------------------------------------------------------------------

X8 = np.array([-1.3, -0.8, -0.2, 0.1, 0.6, 0.9, 1.4, 2.0])
Y8 = np.sin(X8) + 0.1 * _arr(8)
Y83 = np.stack([np.sin(X8), np.cos(X8), X8 ** 3], axis=1) + 0.1 * _arr(8, 3)
W8 = np.array([1.0, 0.5, 2.0, 1.5, 0.8, 1.2, 0.7, 1.1])


def _coef(c, seed=6):
    return np.sum(c * _weighting(np.shape(c), seed))


POLY_CASES = {
    "deg1": (lambda x, y: _coef(np.polyfit(x, y, 1)), (X8, Y8)),
    "deg2": (lambda x, y: _coef(np.polyfit(x, y, 2)), (X8, Y8)),
    "deg3": (lambda x, y: _coef(np.polyfit(x, y, 3)), (X8, Y8)),
    "deg0": (lambda x, y: _coef(np.polyfit(x, y, 0)), (X8, Y8)),
    "y_2d": (lambda x, y: _coef(np.polyfit(x, y, 2)), (X8, Y83)),
    "weights": (lambda x, y, w: _coef(np.polyfit(x, y, 2, w=w)), (X8, Y8, W8)),
    "weights_2d": (lambda x, y, w: _coef(np.polyfit(x, y, 3, w=w)), (X8, Y83, W8)),
    "rcond": (lambda x, y: _coef(np.polyfit(x, y, 2, rcond=1e-10)), (X8, Y8)),
    "keywords": (lambda x, y: _coef(np.polyfit(x=x, y=y, deg=2, full=False, cov=False)), (X8, Y8)),
    "through_polyval": (lambda x, y: np.sum(np.polyval(np.polyfit(x, y, 2), x) ** 2), (X8, Y8)),
    "zero_in_x": (lambda x, y: _coef(np.polyfit(x, y, 3)), (np.append(X8, 0.0), np.append(Y8, 0.3))),
}


def test_polyfit_data_is_well_posed():
    for deg in (1, 2, 3):
        v = np.vander(X8, deg + 1)
        assert np.linalg.cond(v) < 1e2


@pytest.mark.parametrize("name", list(POLY_CASES))
def test_polyfit(name):
    f, args = POLY_CASES[name]
    _check(f, *args)


def test_polyfit_values():
    _same_value(lambda x, y: np.polyfit(x, y, 2), X8, Y8)
    _same_value(lambda x, y, w: np.polyfit(x, y, 3, w=w), X8, Y83, W8)


@pytest.mark.parametrize("kw, words", [
    ({"full": True}, ["full=True", "full=False"]),
    ({"cov": True}, ["cov=True", "cov=False"]),
    ({"cov": "unscaled"}, ["cov='unscaled'", "cov=False"]),
])
def test_polyfit_refuses_full_and_cov(kw, words):
    def f(y):
        out = np.polyfit(X8, y, 2, **kw)
        return np.sum(out[0])

    with pytest.raises(MissingAdjointError) as info:
        ad.gradient(f, Y8)
    for w in words:
        assert w in str(info.value)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.RankWarning")
def test_polyfit_refuses_a_rank_deficient_fit():
    x = np.array([1.0, 1.0, 1.0, 2.0, 2.0])
    y = np.array([0.3, 0.1, 0.2, 1.0, 1.2])

    def f(y):
        return np.sum(np.polyfit(x, y, 2))

    with pytest.raises(MissingAdjointError, match="rank-deficient"):
        ad.gradient(f, y)


# ----- np.bincount ---------------------------------------------------------------------------

IDX = np.array([0, 3, 1, 3, 3, 5, 0])


BIN_CASES = {
    "weights": (lambda v: _weighted(np.bincount(IDX, weights=v)), (_arr(7),)),
    "positional": (lambda v: _weighted(np.bincount(IDX, v)), (_arr(7),)),
    "minlength": (lambda v: _weighted(np.bincount(IDX, weights=v ** 2, minlength=9)), (_arr(7),)),
    "squared": (lambda v: np.sum(np.bincount(IDX, weights=np.sin(v)) ** 2), (_arr(7),)),
}


@pytest.mark.parametrize("name", list(BIN_CASES))
def test_bincount(name):
    f, args = BIN_CASES[name]
    _check(f, *args)


def test_bincount_values_and_counts():
    v = _arr(7)
    _same_value(lambda v: np.bincount(IDX, weights=v, minlength=8), v)

    def counts_times(v):  # no weights: an integer count, which carries no gradient
        return np.sum(np.bincount(IDX, minlength=7) * v)

    _check(counts_times, v, order=1)
    np.testing.assert_array_equal(ad.gradient(counts_times, v)[0], np.bincount(IDX, minlength=7))


def test_bincount_list_weights():
    got = ad.gradient(lambda a, b: np.sum(np.bincount([0, 1, 1], weights=[a, b, a * b]) ** 2), 0.4, 1.3)
    want = numerical_gradient(lambda a, b: np.sum(np.bincount([0, 1, 1], weights=[a, b, a * b]) ** 2), 0.4, 1.3)
    np.testing.assert_allclose(got, want, rtol=1e-6)


# ----- where= and initial= of the reductions -------------------------------------------------

A34 = _arr(3, 4)
MASK = A34 > -0.3
ROW = np.array([True, False, True, True])  # broadcast along the rows

REDUCE_CASES = {
    "sum_where": lambda a: np.sum(a ** 2, where=MASK),
    "sum_where_axis": lambda a: np.sum(np.sum(a ** 2, axis=1, where=MASK) ** 2),
    "sum_where_broadcast": lambda a: np.sum(np.sum(np.sin(a), axis=0, where=ROW) ** 2),
    "sum_initial": lambda a: np.sum(a ** 2, initial=1.5) ** 2,
    "sum_both_keepdims": lambda a: np.sum(np.sum(a ** 3, axis=0, keepdims=True, initial=0.5, where=MASK) ** 2),
    "sum_axes_tuple": lambda a: np.sum(a[None] ** 2, axis=(0, 2), where=MASK[None]).sum() ** 2,
    "mean_where": lambda a: np.mean(a ** 2, where=MASK),
    "mean_where_axis": lambda a: np.sum(np.mean(a ** 3, axis=0, where=MASK) ** 2),
    "mean_where_keepdims": lambda a: np.sum(np.mean(a, axis=1, keepdims=True, where=ROW) ** 2),
    "prod_where": lambda a: np.prod(a, where=MASK),
    "prod_initial_axis": lambda a: np.sum(np.prod(a, axis=1, initial=2.0, where=MASK) ** 2),
    "prod_initial": lambda a: np.prod(a[0], initial=-1.5),
    "max_where": lambda a: np.max(a, where=MASK, initial=-5.0),
    "max_axis_where": lambda a: np.sum(np.max(a ** 2, axis=1, where=MASK, initial=0.1) ** 2),
    "min_initial_axis": lambda a: np.sum(np.min(a, axis=0, initial=-0.2) ** 2),
    "min_where_keepdims": lambda a: np.sum(np.min(a, axis=1, keepdims=True, where=ROW, initial=9.0) ** 2),
    "amax_initial_wins": lambda a: np.amax(a, initial=10.0) + np.sum(a),
    "amin_where": lambda a: np.amin(np.cos(a), axis=0, where=MASK, initial=2.0).sum(),
    "method_sum": lambda a: a.sum(where=MASK, initial=1.0) ** 2,
    "method_max": lambda a: np.sum(a.max(axis=0, where=MASK, initial=-1.0) ** 2),
    "method_min": lambda a: np.sum(a.min(1, None, False, 0.0) ** 2),
    "method_mean": lambda a: a.mean(axis=1, where=MASK).sum() ** 2,
    "method_prod": lambda a: np.sum(a.prod(axis=0, initial=3.0)),
}


@pytest.mark.parametrize("name", list(REDUCE_CASES))
def test_where_initial(name):
    f = REDUCE_CASES[name]
    _check(f, A34)
    _same_value(f, A34)


def test_where_leaves_elements_out():
    g = ad.gradient(lambda a: np.sum(a ** 2, where=MASK), A34)[0]
    np.testing.assert_array_equal(g[~MASK], 0.0)
    np.testing.assert_allclose(g[MASK], 2 * A34[MASK])
    g = ad.gradient(lambda a: np.mean(a, axis=0, where=MASK).sum(), A34)[0]
    counts = MASK.sum(axis=0)
    np.testing.assert_allclose(g, np.where(MASK, 1.0 / np.maximum(counts, 1), 0.0))


def test_initial_gets_its_gradient():
    def f(a, c):
        return (np.sum(np.max(a, axis=1, initial=c) ** 2) + np.sum(a, initial=c) * c
                + np.prod(a[0], initial=c) + np.min(a, where=MASK, initial=c))

    for c in (0.4, 5.0, -4.0):  # initial loses, wins every max, wins the min
        check_grads(f, A34, c, order=2, rtol=1e-5, atol=1e-6)
        _same_value(f, A34, c)
    ga, gc = ad.gradient(lambda a, c: np.max(a, initial=c), A34, 10.0)
    np.testing.assert_array_equal(ga, 0.0)  # initial is the max: no element gets any
    assert gc == 1.0


def test_max_initial_tie_splits_evenly():
    a = np.array([1.0, 3.0, 2.0])
    ga, gc = ad.gradient(lambda a, c: np.max(a, initial=c), a, 3.0)
    np.testing.assert_allclose(ga, [0.0, 0.5, 0.0])
    assert gc == 0.5


def test_calls_without_where_keep_their_rule():
    from adjoint_s2s import rules as R

    for fn, n in ((np.sum, 5), (np.mean, 5), (np.prod, 5), (np.max, 4), (np.min, 4)):
        assert len(R.lookup_primitive(fn, 1, ("axis", "keepdims")).params) == n
        assert "where" in R.lookup_primitive(fn, 1, ("where",)).params


# ----- einsum's optimize= --------------------------------------------------------------------

B33, B34 = _arr(3, 3), _arr(3, 4)


@pytest.mark.parametrize("optimize", [False, True, "greedy", "optimal", ["einsum_path", (0, 1)]],
                         ids=str)
def test_einsum_optimize_two_operands(optimize):
    def f(a, b):
        return np.sum(np.einsum("ij,jk->ik", a, b, optimize=optimize) ** 2)

    _check(f, B33, B34)
    _same_value(lambda a, b: np.einsum("ij,jk->ik", a, b, optimize=optimize), B33, B34)


@pytest.mark.parametrize("optimize", [True, "greedy", "optimal",
                                      ["einsum_path", (0, 1), (0, 1)]], ids=str)
def test_einsum_optimize_three_operands(optimize):
    def f(a, b, c):
        return np.sum(np.sin(np.einsum("ij,jk,kl->il", a, b, c, optimize=optimize)))

    def g(a, b, c):  # implicit output, a repeated label, '...'
        return np.einsum("ii,...j,jk", a, b, c, optimize=optimize).sum() ** 2

    _check(f, B33, B34, _arr(4, 2))
    _check(g, B33, B34, _arr(4, 2))


def test_einsum_optimize_sublists():
    def f(a, b):
        return np.sum(np.einsum(a, [0, 1], b, [1, 2], [0, 2], optimize=True) ** 2)

    _check(f, B33, B34)


# ----- np.linalg.cond, matrix_rank -----------------------------------------------------------

SQ3 = np.array([[2.0, 0.3, -0.5], [0.1, 1.5, 0.4], [-0.3, 0.2, 1.1]])
STACK = np.stack([SQ3, SQ3.T + 0.2 * np.eye(3)])
RECT = _arr(4, 3)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf], ids=str)
def test_cond(p):
    def f(x):
        return np.linalg.cond(x, p) ** 2

    def stacked(x):
        return np.sum(np.linalg.cond(x, p) * np.array([1.0, -0.7]))

    smooth = p in (None, 2, -2, "fro", "nuc")
    _check(f, SQ3, order=2 if smooth else 1)
    _check(stacked, STACK, order=1)
    _same_value(lambda x: np.linalg.cond(x, p), STACK)


@pytest.mark.parametrize("p", [None, 2, -2], ids=str)
def test_cond_of_a_rectangular_matrix(p):
    _check(lambda x: np.linalg.cond(x, p), RECT)


def test_cond_order_as_a_numpy_integer():
    _check(lambda x: np.linalg.cond(x, np.int64(-2)), SQ3, order=1)


def test_cond_refuses_other_orders():
    with pytest.raises(MissingAdjointError, match="p=3"):
        np_cond_adjoint(1.0, SQ3, np.linalg.cond(SQ3), 3)


def test_matrix_rank_carries_no_gradient():
    def f(a):
        return np.linalg.matrix_rank(a) * np.sum(a)

    g = _check(f, SQ3, order=1)[0]
    np.testing.assert_array_equal(g, np.full((3, 3), 3.0))
    low = np.outer([1.0, 2.0, 3.0], [0.5, -1.0, 2.0])
    np.testing.assert_array_equal(ad.gradient(f, low)[0], np.ones((3, 3)))


def test_einsum_variants_as_long_keep_their_own_run_time_source():
    """einsum(s, a, b, c) and einsum(s, a, b, optimize=) have as many parameters: a nested
    gradient at run time reads each one's source back by its own name (it read the other's)."""
    a, b, c = _arr(3, 3), _arr(3, 3), _arr(3, 3)

    def f1(a, b):
        return np.sum(np.einsum("ij,jk->ik", a, b, optimize=True) ** 2)

    def f2(a, b, c):
        return np.sum(np.einsum("ij,jk,kl->il", a, b, c) ** 2)

    ad.gradient(f1, _opaque(a), _opaque(b))  # both run-time sources compiled
    ad.gradient(f2, _opaque(a), _opaque(b), _opaque(c))

    def h2(a, b, c):
        return np.sum(ad.gradient(f2, a, b, c)[0] * 1.3)

    def h1(a, b):
        return np.sum(ad.gradient(f1, a, b)[1] * 0.7)

    check_grads(h2, _opaque(a), _opaque(b), _opaque(c), rtol=1e-5, atol=1e-6)
    check_grads(h1, _opaque(a), _opaque(b), rtol=1e-5, atol=1e-6)
