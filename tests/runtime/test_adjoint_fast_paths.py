"""The fast paths of the NumPy adjoints (issue 15: a softmax head's fixed cost) give what
the general paths give, on the inputs they must not get wrong.

``acc_extremum_adjoint`` routes a max's gradient to one position per slice only when a
comparison finds exactly one per slice and no extremum is NaN (a NaN row matches
nowhere, so a NaN row and a tie elsewhere would balance the count); ``Scattered``'s row
sums hand the indices to ``np.bincount`` as given and wrap them only when one is
negative; ``_spread`` fills a fresh array (``spread_fill``); ``np_reciprocal_adjoint``
divides by d. Each is checked against the general form and, through generated code,
against finite differences."""

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import runtime
from adjoint_s2s.rules.numpy.base import spread_fill
from adjoint_s2s.testing import isapprox, numerical_gradient

RNG = np.random.default_rng(15)


# ----- max / min: one position per slice, or the general path ---------------------------------

def _rows(*rows):
    return np.array(rows, dtype=float)


EXTREMA = {
    # a NaN row (no match) and a tied row (two): as many matches as rows
    "nan and tie": (_rows([1.0, np.nan, 0.0], [2.0, 5.0, 5.0], [0.0, 1.0, -1.0]), np.max),
    "tie only": (_rows([3.0, 3.0, 1.0], [0.0, 1.0, 2.0]), np.max),
    "-0.0 ties 0.0": (_rows([0.0, -0.0, -1.0], [1.0, 2.0, 3.0]), np.max),
    "all -inf": (_rows([-np.inf, -np.inf], [1.0, 2.0]), np.max),
    "inf and -inf": (_rows([np.inf, 1.0], [-np.inf, -3.0]), np.max),
    "nanmax, NaN beside": (_rows([np.nan, 1.0, 4.0], [2.0, np.nan, 0.0]), np.nanmax),
    "nanmin, all NaN row": (_rows([np.nan, np.nan], [2.0, 1.0]), np.nanmin),
    "min": (_rows([4.0, -2.0, 3.0], [1.0, 0.5, 9.0]), np.min),
}


def _general(acc0, g, a, ans, axis, keepdims):
    return acc0 + runtime.np_extremum_adjoint(g, a, ans, axis, keepdims)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (nanmax of an all-NaN row)
@pytest.mark.parametrize("case", sorted(EXTREMA))
@pytest.mark.parametrize("axis, keepdims", [(1, True), (-1, False), (None, False), (None, True)])
def test_acc_extremum_adjoint_matches_the_general_form(case, axis, keepdims):
    a, reduce = EXTREMA[case]
    ans = reduce(a, axis=axis, keepdims=keepdims)
    g = RNG.standard_normal(np.shape(ans))
    acc0 = RNG.standard_normal(a.shape)
    want = _general(acc0, g, a, ans, axis, keepdims)
    b = acc0.copy()
    b = runtime.acc_extremum_adjoint(b, g, a, ans, axis, keepdims)
    np.testing.assert_array_equal(b, want)


@pytest.mark.parametrize("dtype", [np.complex128, np.float32, np.int64])
def test_acc_extremum_adjoint_of_other_dtypes_matches_the_general_form(dtype):
    a = RNG.standard_normal((5, 4)) * 10
    if dtype is np.complex128:
        a = a + 1j * RNG.standard_normal((5, 4))
    a = a.astype(dtype)
    a[2, 1] = a[2, 3] = np.max(a[2]) + 1  # a tie
    ans = np.max(a, axis=1, keepdims=True)
    g = RNG.standard_normal(ans.shape)
    acc0 = RNG.standard_normal(a.shape)
    want = _general(acc0, g, a, ans, 1, True)
    b = acc0.copy()
    b = runtime.acc_extremum_adjoint(b, g, a, ans, 1, True)
    np.testing.assert_allclose(b, want, rtol=1e-15, atol=0)


def test_acc_extremum_adjoint_copies_an_accumulator_it_may_not_write():
    a = RNG.standard_normal((4, 6))
    ans = np.max(a, axis=1, keepdims=True)
    g = RNG.standard_normal(ans.shape)
    base = RNG.standard_normal((6, 4))
    for acc0 in (base.T, base[:4, :4].repeat(2, axis=1)[:, :6]):  # F-ordered; a view
        before = acc0.copy()
        got = runtime.acc_extremum_adjoint(acc0, g, a, ans, 1, True)
        np.testing.assert_allclose(got, _general(before, g, a, ans, 1, True), rtol=1e-15)
        np.testing.assert_array_equal(acc0, before)  # the caller's array is untouched


# ----- Scattered: row sums of x[rows, cols] -----------------------------------------------------

@pytest.mark.parametrize("rows, cols", [
    (np.arange(5), np.array([1, 0, 3, 3, 2])),
    (np.array([-1, 0, -5, 2, 2]), np.array([1, -4, 3, 3, 2])),  # negative, repeated
    (np.arange(5, dtype=np.uint64), np.array([1, 0, 3, 3, 2], dtype=np.uint32)),
    (np.array([[0], [4]]), np.array([[1, 2, 2]])),  # broadcast index arrays
])
def test_row_and_column_sums_of_a_scattered_match_the_array(rows, cols):
    x = np.zeros((5, 4))
    g = RNG.standard_normal(np.shape(x[rows, cols]))
    s = runtime.getitem_grad_sparse(x, (rows, cols), g)
    assert type(s) is runtime.project.Scattered
    dense = runtime.getitem_grad(x, (rows, cols), g)
    for like in (np.zeros((5, 1)), np.zeros((1, 4)), np.zeros((1, 1)), np.zeros(4)):
        got = runtime.unbroadcast(s, like)
        np.testing.assert_allclose(got, runtime.unbroadcast(dense, like), rtol=1e-14, atol=1e-15)
        assert got.shape == like.shape
    other = RNG.standard_normal((5, 4))
    np.testing.assert_allclose(runtime.acc(other.copy(), s), other + dense, rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "empty"])
def test_row_sums_of_a_scattered_on_every_dtype_and_layout(dtype, layout):
    """One gathered value a row (x[np.arange(n), y]): float64 takes np.bincount on the
    rows, the others the general path; strided index and value arrays, no rows."""
    n = 0 if layout == "empty" else 6
    x = np.zeros((n, 4), dtype)
    rows, cols = np.arange(n), RNG.integers(0, 4, n)
    g = RNG.standard_normal(2 * n).astype(dtype)[::2]
    if layout == "strided":
        rows, cols = np.repeat(rows, 2)[::2], np.repeat(cols, 2)[::2]  # views, stride 2
    else:
        g = g.copy()
    s = runtime.getitem_grad_sparse(x, (rows, cols), g)
    dense = runtime.getitem_grad(x, (rows, cols), g)
    got = runtime.unbroadcast(s, np.zeros((n, 1), dtype))
    np.testing.assert_allclose(got, dense.sum(axis=1, keepdims=True), rtol=1e-6)
    assert got.shape == (n, 1) and got.dtype == dtype


@pytest.mark.parametrize("n", [3, 300])  # np.add.at on the index tuple (a few), or flat indices
def test_a_scattered_adds_into_an_array_with_repeated_and_negative_positions(n):
    rows = RNG.integers(-5, 5, n)
    cols = RNG.integers(-4, 4, n)
    rows[:2], cols[:2] = 1, 2  # a repeated position accumulates
    x = np.zeros((5, 4))
    g = RNG.standard_normal(n)
    s = runtime.getitem_grad_sparse(x, (rows, cols), g)
    other = RNG.standard_normal((5, 4))
    np.testing.assert_allclose(runtime.acc(other.copy(), s), other + runtime.getitem_grad(x, (rows, cols), g), rtol=1e-14)
    mixed = runtime.getitem_grad_sparse(x, (rows[:3], slice(None)), RNG.standard_normal((3, 4)))
    np.testing.assert_allclose(runtime.dense(mixed), runtime.getitem_grad(x, mixed.idx, mixed.g), rtol=1e-15)


@pytest.mark.parametrize("n, m", [(3, 5), (4, 5), (6, 1), (5, 2), (4, 5000)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_row_sums_of_a_matrix_match_numpys_sum(n, m, order):
    g = np.asarray(RNG.standard_normal((n, m)), order=order)
    got = runtime.unbroadcast(g, np.zeros((n, 1)))
    np.testing.assert_allclose(got, g.sum(axis=1, keepdims=True), rtol=1e-12)
    assert got.shape == (n, 1)
    g32 = g.astype(np.float32)  # not float64: NumPy's sum
    np.testing.assert_array_equal(runtime.unbroadcast(g32, np.zeros((n, 1), np.float32)),
                                  g32.sum(axis=1, keepdims=True))


def test_getitem_grad_sparse_keeps_the_gathered_dtype():
    rows, cols = np.arange(3), np.array([2, 0, 2])
    for obj, g, want in [
        (np.zeros((3, 4), np.complex128), RNG.standard_normal(3), np.complex128),
        (np.zeros((3, 4)), RNG.standard_normal(3) + 1j, None),  # complex g: the array path
        (np.zeros((3, 4), np.float32), RNG.standard_normal(3), None),  # would widen
    ]:
        got = runtime.getitem_grad_sparse(obj, (rows, cols), g)
        if want is None:
            assert type(got) is np.ndarray
            np.testing.assert_allclose(got, runtime.getitem_grad(obj, (rows, cols), g))
        else:
            assert type(got) is runtime.project.Scattered and got.dtype == want


# ----- sum/mean spread, log's adjoint -----------------------------------------------------------

@pytest.mark.parametrize("shape, axis, keepdims", [
    ((4, 3), 1, True), ((4, 3), 0, False), ((2, 3, 4), (0, 2), False), ((5,), None, False),
])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32])
def test_sum_and_mean_adjoints_spread_a_fresh_array(shape, axis, keepdims, dtype):
    a = RNG.standard_normal(shape).astype(dtype)
    ans = np.sum(a, axis=axis, keepdims=keepdims)
    g = RNG.standard_normal(np.shape(ans)).astype(dtype)
    want = np.broadcast_to(np.sum(np.ones(shape), axis=axis, keepdims=True) * 0 + (
        g if keepdims or axis is None else np.expand_dims(g, axis)), shape)
    rtol = 1e-6 if dtype is np.float32 else 1e-14
    got = runtime.np_sum_adjoint(g, a, axis, keepdims)
    np.testing.assert_allclose(got, want, rtol=rtol)
    assert got.dtype == a.dtype and got.flags.writeable and got.base is None
    got = runtime.np_mean_adjoint(g, a, axis, keepdims)
    np.testing.assert_allclose(got, want / (a.size / np.size(ans)), rtol=rtol)


@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (4, 3)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_whole_array_sum_and_mean_adjoints_of_a_float_seed(shape, dtype):
    """A float seed: a fresh array of a's shape filled with g (sum) or g / a.size (mean);
    an integer array gets a float gradient, an empty one an empty gradient."""
    a = np.ones(shape, dtype)
    got = runtime.np_sum_adjoint(1.5, a)
    assert got.shape == shape and got.flags.writeable
    np.testing.assert_array_equal(got, np.full(shape, 1.5))
    with np.errstate(divide="ignore", invalid="ignore"):
        got = runtime.np_mean_adjoint(1.5, a)
    assert got.shape == shape and got.dtype.kind == "f"
    np.testing.assert_allclose(got, np.full(shape, 1.5 / max(a.size, 1)), rtol=1e-6)


def test_sum_and_mean_adjoints_of_small_arrays_hold_at_second_order():
    """The small-array spreads (filled, spread_fill) are primitives with adjoints of their
    own: the Hessian of a mean times a sum, against differences of the gradient."""
    def f(x):
        return np.mean(x * x) * np.sum(np.sum(x, axis=1, keepdims=True) ** 2) + np.mean(np.sum(x, axis=0))

    x = RNG.standard_normal((3, 2))
    hess = ad.hessian(f, x)
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = 1e-5
        e = e.reshape(x.shape)
        fd = (ad.gradient(f, x + e)[0] - ad.gradient(f, x - e)[0]) / 2e-5
        assert isapprox(np.reshape(hess, (x.size, x.size))[:, j], fd.reshape(-1), rtol=1e-6, atol=1e-8)


def test_spread_fill_is_a_fresh_broadcast():
    v = RNG.standard_normal((3, 1)) + 1j
    out = spread_fill(v, (2, 3, 4))
    np.testing.assert_array_equal(out, np.broadcast_to(v, (2, 3, 4)))
    assert out.flags.writeable and out.dtype == v.dtype and not np.shares_memory(out, v)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (g / 0 where g != 0: inf, as it is)
@pytest.mark.parametrize("d", [
    np.array([0.5, 2.0, 3.0]),
    np.array([0.0, 2.0, 3.0]),  # a zero: 1 stands in where g == 0
    np.array([np.nan, 2.0, 1.0]),
    np.array([1.0 + 1j, 2.0, -1j]),
    np.array([0.5, 2.0, 3.0], np.float32),  # g / d is float64: projected back to float32
])
def test_reciprocal_adjoint_is_g_over_d(d):
    g = np.array([1.5, -2.0, 0.0])
    got = runtime.np_reciprocal_adjoint(g, d, d)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where(g == 0, 0.0, g / np.conj(np.where(g == 0, 1, d)))
    rtol = 1e-6 if d.dtype == np.float32 else 1e-15
    np.testing.assert_allclose(got, want if np.iscomplexobj(d) else want.real, rtol=rtol)
    assert got.dtype == d.dtype
    np.testing.assert_allclose(runtime.np_reciprocal_adjoint(g, d, d, 2.0), want / 2, rtol=rtol)


# ----- through generated code: finite differences ---------------------------------------------

LABELS = np.array([2, 0, 4, 4, 1, 3])


def softmax_head(W, b, x):
    logits = np.tanh(x @ W + b)
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(x.shape[0]), LABELS])


def log_of_complex(z, w):
    return np.sum(np.abs(np.log(z * w)) ** 2) + np.sum(np.max(np.real(z) * w, axis=0))


def test_softmax_head_matches_finite_differences_at_first_and_second_order():
    W, b, x = RNG.standard_normal((3, 5)), RNG.standard_normal(5), RNG.standard_normal((6, 3))
    got = ad.gradient(softmax_head, W, b, x)
    want = numerical_gradient(softmax_head, W, b, x)
    for u, v in zip(got, want):
        assert isapprox(u, v, rtol=1e-7, atol=1e-9)
    hess = ad.hessian(lambda b: softmax_head(W, b, x), b)
    for j in range(b.size):  # column j: central differences of the gradient along b[j]
        e = np.zeros_like(b)
        e[j] = 1e-5
        fd = (ad.gradient(softmax_head, W, b + e, x)[1]
              - ad.gradient(softmax_head, W, b - e, x)[1]) / 2e-5
        assert isapprox(hess[:, j], fd, rtol=1e-6, atol=1e-8)


def test_complex_log_and_a_max_over_rows_match_finite_differences():
    z = RNG.standard_normal((4, 3)) + 1j * RNG.standard_normal((4, 3))
    w = RNG.standard_normal(3) + 2.0
    got = ad.gradient(log_of_complex, z, w)
    want = numerical_gradient(log_of_complex, z, w)
    for u, v in zip(got, want):
        assert isapprox(u, v, rtol=1e-7, atol=1e-9)


# ----- a whole-array mean's adjoint of a small array: a fresh filled array per call -----------

@pytest.mark.parametrize("g", [1.0, -1.0, 2.5, 0.0, -0.0, np.nan, np.inf])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_whole_array_mean_adjoint_of_a_small_array_is_the_filled_array(g, dtype):
    """Bit for bit the array filled with g / a.size, a writable array of its own each
    call: a user rule may change its cotangent in place (`dy *= 2`)."""
    a = RNG.standard_normal((6, 5)).astype(dtype)
    want = np.empty(a.shape, a.dtype)
    want.fill(g / a.size)
    got = runtime.np_mean_adjoint(g, a, None, False)
    assert got.dtype == a.dtype and got.shape == a.shape
    assert got.tobytes() == want.tobytes()
    again = runtime.np_mean_adjoint(g, a, None, False)
    assert again is not got and got.flags.writeable and again.flags.writeable


def test_a_user_rule_may_scale_a_small_mean_adjoint_in_place():
    """The cotangent a user's rule receives from a mean of a small array is its own:
    `dy *= 2` works and later calls are unchanged."""
    def doubled(x):
        return 2.0 * x

    @ad.adjoint(doubled)
    def doubled_rule(x):
        def back(dy):
            dy *= 2.0
            return (dy,)
        return 2.0 * x, back

    def f(x):
        return np.mean(doubled(x))

    x = RNG.standard_normal((4, 3))
    try:
        for _ in range(3):
            np.testing.assert_array_equal(ad.gradient(f, x)[0], np.full(x.shape, 2.0 / 12))
    finally:
        from adjoint_s2s import rules
        rules.USER_RULES.pop(doubled, None)
        ad.refresh()


def test_a_mean_adjoint_reaches_the_user_as_an_array_of_their_own():
    """gradient, pullback and the accumulation of a second contribution: the user may
    write into what they get, and later calls are unchanged."""
    x = RNG.standard_normal((4, 3))
    for _ in range(2):
        g = ad.gradient(lambda x: np.mean(x), x)[0]
        assert g.flags.writeable
        g[0, 0] = 7.0
    np.testing.assert_array_equal(ad.gradient(lambda x: np.mean(x), x)[0], np.full(x.shape, 1 / 12))
    _, pb = ad.pullback(lambda x: np.mean(x), x)
    got = pb(1.0)[0]
    got[0, 0] = 5.0
    np.testing.assert_array_equal(pb(1.0)[0], np.full(x.shape, 1 / 12))
    # a mean and a second use of x: the contributions add into a fresh array
    f = lambda x: np.mean(x) + np.sum(x * x)  # noqa: E731
    np.testing.assert_allclose(ad.gradient(f, x)[0], 1 / 12 + 2 * x, rtol=1e-14)
    np.testing.assert_allclose(ad.gradient(f, x)[0], numerical_gradient(f, x)[0], rtol=1e-6)
    np.testing.assert_array_equal(runtime.np_mean_adjoint(1.0, x), np.full(x.shape, 1 / 12))


@pytest.mark.parametrize("y", [1.5, np.float64(-2.0), 3, True, np.array(1.0), np.array(1 + 1j),
                               np.ones(2), 1j, np.float32(1.0), "s", None])
def test_real_scalar_is_the_scalar_test_of_gradient(y):
    from adjoint_s2s.misuse import _is_scalar
    assert runtime.real_scalar(y) == _is_scalar(y)


def test_a_mean_adjoint_handed_on_as_a_field_gradient_stays_the_users():
    """An object's field gradient is the adjoint as it is: nothing the user does to what
    they got may change a later call's gradient (a read-only array refuses the write and
    the flag; a writable one is their own)."""
    class Holder:
        def __init__(self, w):
            self.w = w

    def mean_of_field(p):
        return np.mean(p.w)

    x = RNG.standard_normal((4, 3))
    want = np.full(x.shape, 1 / 12)
    try:
        for get in (lambda: ad.gradient(mean_of_field, Holder(x))[0].w,
                    lambda: ad.pullback(mean_of_field, Holder(x))[1](1.0)[0].w):
            g = get()
            np.testing.assert_array_equal(g, want)
            if not g.flags.writeable:
                with pytest.raises(ValueError):
                    g[0, 0] = 7.0
                with pytest.raises(ValueError):
                    g.flags.writeable = True
            else:
                g[0, 0] = 7.0
            np.testing.assert_array_equal(get(), want)
            np.testing.assert_array_equal(runtime.np_mean_adjoint(1.0, x), want)
    finally:
        ad.refresh()  # (the generated functions go, with their lines in linecache)
