"""Values where a derivative formula divides by zero or loses its input: the gradient is
the limit (or the exact value), never NaN, None or an exception, at first and second order.

Each case is checked against finite differences; ``check2`` also differentiates the
gradient (reverse over reverse) and checks that against finite differences of it.
"""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads

RNG = np.random.default_rng(12)


def check2(f, *args, rtol=1e-6, atol=1e-7):
    """First and second order: the gradient, then <w, gradient> differentiated again."""
    check_grads(f, *args, rtol=rtol, atol=atol)
    for i, a in enumerate(args):
        w = RNG.standard_normal(np.shape(a)) if np.ndim(a) else 1.0

        def dot_grad(*xs, i=i, w=w):
            return np.sum(w * ad.gradient(f, *xs)[i])

        check_grads(dot_grad, *args, rtol=rtol, atol=atol)


# ----- powers with a variable exponent ----------------------------------------------------


def poly(x):
    coeffs = [1.0, 2.0, 3.0]
    return sum(c * x ** k for k, c in enumerate(coeffs))


def poly_array(v):
    coeffs = [1.0, 2.0, 3.0]
    return np.sum(sum(c * v ** k for k, c in enumerate(coeffs)))


def power_k(x, k):
    return x ** k


def np_power_k(v, k):
    return np.sum(np.power(v, k) + v ** k)


@pytest.mark.parametrize("x", [0.0, 0.6, -1.3])
def test_polynomial_with_variable_exponent(x):
    assert ad.gradient(poly, x) == (2.0 + 6.0 * x,)
    check2(poly, x)


@pytest.mark.parametrize("v", [np.zeros(3), np.array([0.3, 0.0, -1.0])])
def test_polynomial_with_variable_exponent_array(v):
    check2(poly_array, v)


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_integer_power_at_zero(k):
    """d/dx x**0 = 0 and d²/dx² x**1 = 0 at x = 0 (not 0·inf)."""
    check2(lambda x: power_k(x, k), 0.0)
    check2(lambda v: np_power_k(v, k), np.zeros(2))
    check2(lambda v: np_power_k(v, k), np.array([0.0, 0.7]))


def test_fractional_power_at_zero_is_infinite_not_an_error():
    assert ad.gradient(lambda x: x ** 0.5, 0.0) == (np.inf,)
    assert ad.gradient(lambda x, b: x ** b, 0.0, 0.5)[0] == np.inf
    check2(lambda x: x ** 0.5 + x ** 1.5, 2.0)


def test_power_third_order_at_zero():
    for k, want in [(3, 6.0), (2, 0.0), (1, 0.0), (0, 0.0)]:
        d3 = ad.gradient(lambda x: ad.gradient(lambda y: ad.gradient(
            lambda z: power_k(z, k), y)[0], x)[0], 0.0)[0]
        assert d3 == want, (k, d3)
    v = np.array([0.0, 0.5])
    d3 = ad.gradient(lambda x: np.sum(ad.gradient(lambda y: np.sum(ad.gradient(
        lambda z: np_power_k(z, 3), y)[0]), x)[0]), v)[0]
    assert np.allclose(d3, 12.0)


# ----- std and var where the spread is zero -------------------------------------------------


def std_one(x):
    return np.std(np.array([x]))


def std_constant(x):
    return np.std(x * np.ones(3))  # np.std gives 1.1e-16 at x = 0.7: rounding, not spread


def var_constant(x):
    return np.var(x * np.ones(3)) + np.var(np.array([x]))


def std_rows(a):
    return np.sum(np.std(a, axis=1) ** 2) + np.sum(np.std(a, axis=0, ddof=1))


@pytest.mark.parametrize("f", [std_one, std_constant, var_constant])
@pytest.mark.parametrize("x", [0.7, 0.1, -2.3, 0.0])
def test_std_of_equal_values_has_derivative_zero(f, x):
    # (var is smooth: its adjoint keeps NumPy's rounding of the mean, ~1e-16)
    assert ad.gradient(f, x)[0] == pytest.approx(0.0, abs=1e-12)
    assert ad.gradient(lambda y: ad.gradient(f, y)[0], x)[0] == pytest.approx(0.0, abs=1e-12)


def test_var_hessian_at_equal_values():
    """var is smooth at a constant array: its Hessian there is 2/n (I - 1/n)."""
    want = 2 / 3 * (np.eye(3) - 1 / 3)
    assert np.allclose(ad.hessian(np.var, np.full(3, 0.7)), want)
    assert np.allclose(ad.hessian(lambda v: np.var(v), np.array([0.1, 0.5, 0.9])), want)


def test_std_along_an_axis_with_a_constant_row():
    a = np.array([[0.7, 0.7, 0.7, 0.7], [0.3, -1.0, 2.0, 0.5], [0.1, 0.2, 0.2, 0.4]])
    g = ad.gradient(std_rows, a)[0]
    assert np.all(np.isfinite(g))
    check_grads(std_rows, a, rtol=1e-5, atol=1e-6)
    check2(lambda b: np.sum(np.std(b, axis=0) * np.arange(1.0, 5.0)), a[1:], rtol=1e-5)
    assert np.allclose(ad.gradient(lambda v: np.std(v), np.full(4, 0.7))[0], 0)


# ----- sqrt at 0: a zero cotangent contributes zero ------------------------------------------


def pairwise_distance_sum(X):
    d = X[:, None, :] - X[None, :, :]
    r = np.sqrt(np.sum(d * d, axis=-1))  # 0 on the diagonal, which triu drops
    return np.sum(np.triu(r, 1))


def sqrt_where(v):
    return np.sum(np.where(v > 0, np.sqrt(np.abs(v)), 0.0))


def radius_dropped(x, y):
    import math

    r = math.sqrt(x * x + y * y)
    return 0.0 * r + x


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_sqrt_at_zero_with_zero_cotangent():
    X = np.random.default_rng(1).standard_normal((4, 2))
    check2(pairwise_distance_sum, X, rtol=1e-5, atol=1e-6)
    v = np.array([0.0, 4.0, -1.0, 0.25])
    assert np.array_equal(ad.gradient(sqrt_where, v)[0], [0.0, 0.25, 0.0, 1.0])
    assert ad.gradient(radius_dropped, 0.0, 0.0) == (1.0, 0.0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_sqrt_at_zero_with_a_nonzero_cotangent_is_infinite():
    import math

    assert ad.gradient(lambda x: math.sqrt(x), 0.0) == (np.inf,)
    assert np.array_equal(ad.gradient(lambda v: np.sum(np.sqrt(v)), np.array([0.0, 4.0]))[0],
                          [np.inf, 0.25])


# ----- tuple outputs of linalg, differentiated twice --------------------------------------
# (their adjoints read the cotangent's entries with np_parts: the second derivative with
# respect to that cotangent used to be lost when it came as a Tangent of the named tuple)

C3 = np.array([[0.3, -1.0, 0.5], [0.2, 0.7, -0.4], [1.1, 0.1, 0.6]])


def eigh_value(A):
    lam, vecs = np.linalg.eigh(A)
    return lam[1] ** 2


def eigh_vectors(A):
    r = np.linalg.eigh(A)
    return np.sum(r[1][:, 0] * C3[0]) ** 2 + np.sum(r[0] ** 3)


def svd_parts(A):
    r = np.linalg.svd(A)
    return np.sum(r[1] ** 3) + np.sum(r[0][:, 0] * C3[1]) ** 2


def qr_parts(A):
    q, r = np.linalg.qr(A)
    return np.sum(r ** 3) + np.sum(q * C3)


def slogdet_part(A):
    r = np.linalg.slogdet(A)
    return r[1] ** 2 + r.logabsdet


def sym(p):
    return np.array([[p[0], p[1], p[2]], [p[1], p[3], p[4]], [p[2], p[4], p[5]]])


P6 = np.array([2.0, 0.3, -0.2, 1.0, 0.4, -1.5])
A3 = np.eye(3) * 2 + C3 * 0.5


@pytest.mark.parametrize("f, x", [
    (lambda p: eigh_value(sym(p)), P6),
    (lambda p: eigh_vectors(sym(p)), P6),
    (svd_parts, A3),
    (qr_parts, A3),
    (slogdet_part, A3),
])
def test_tuple_outputs_second_order(f, x):
    check2(f, x, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f, x", [
    (lambda p: eigh_vectors(sym(p)), P6),
    (svd_parts, A3),
    (qr_parts, A3),
    (slogdet_part, A3),
])
def test_double_backward_through_tuple_outputs_depends_on_the_seed(f, x):
    """back(s) is linear in s: d/ds <W, back(s)> = <W, gradient> (it used to be 0)."""
    W = np.random.default_rng(5).standard_normal(np.shape(x))
    (g,) = ad.gradient(f, x)

    def h(s):
        return np.sum(ad.pullback(f, x)[1](s)[0] * W)

    assert ad.gradient(h, 1.5)[0] == pytest.approx(np.sum(g * W), rel=1e-9)
    check_grads(h, 1.5)


# ----- gathers differentiated twice (their adjoints scatter with np.add.at) -----------------


def gathers(x, v, w):
    A = np.outer(v, w)
    i = np.array([[0, 2], [1, 1], [3, 0], [2, 2]])
    return (np.sum(np.take_along_axis(A, i, 1) ** 2) + np.sum(np.take(A, [1, 1, 0], axis=0) ** 3)
            + np.sum(np.take(v * x, [0, 1, 1]) ** 2) + np.take(v, 2) * x)


def repeats(x, v, w):
    return (np.sum(np.repeat(v * x, [1, 2, 0, 3]) ** 2) + np.sum(np.repeat(np.outer(v, w), 2, axis=1) ** 3)
            + np.sum(np.take_along_axis(v * w, np.array([3, 3, 0]), None) ** 2))


@pytest.mark.parametrize("f", [gathers, repeats])
def test_gathers_second_order(f):
    rng = np.random.default_rng(0)
    check2(f, 0.7, rng.standard_normal(4), rng.standard_normal(4), rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("f", [
    lambda v: np.sum(np.where(v > 0, np.log(np.abs(v)), 0.0)),
    lambda v: np.sum(np.where(v > 0, np.log2(np.abs(v)) + np.log10(np.abs(v)), 0.0)),
    lambda v: np.sum(np.where(v > -1, np.log1p(v), 0.0)),
    lambda v: np.sum(np.where(v != 0, np.cbrt(v), 0.0)),
])
def test_log_and_cbrt_where_a_branch_drops_them(f):
    """The np.where trap: the branch not taken has an infinite partial at 0 (or -1), its
    cotangent is 0, and 0 * inf must not make the gradient NaN (first and second order)."""
    v = np.array([0.0, 2.0, -1.0, 0.5])
    (g,) = ad.gradient(f, v)
    h = ad.hessian(f, v)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))
    u = np.array([0.3, 2.0, -1.5, 0.5])  # no singular point: compare with differences
    check2(f, u, rtol=1e-5, atol=1e-6)
    assert np.allclose(g[1:], ad.gradient(f, np.array([0.3, 2.0, -1.0, 0.5]))[0][1:])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_inverse_functions_where_a_branch_drops_them():
    def f(v):
        return np.sum(np.where(np.abs(v) < 1, np.arcsin(v) + np.arccos(v) * 2 + np.arctanh(v), 0.0))

    v = np.array([1.0, 0.5, -1.0, -0.3])
    assert np.all(np.isfinite(ad.gradient(f, v)[0])) and np.all(np.isfinite(ad.hessian(f, v)))
    check2(f, np.array([0.7, 0.5, -0.2, -0.3]), rtol=1e-5, atol=1e-6)
    check2(lambda v: np.sum(np.arccosh(v) ** 2), np.array([1.2, 2.5]), rtol=1e-5, atol=1e-6)


def test_rule_parameters_may_not_shadow_the_template_names():
    """A parameter named g was shadowed by the cotangent in the run-time pair (a
    transpose rule projected onto the cotangent: its Hessian came out 4x)."""
    from adjoint_s2s.rules import primitive

    with pytest.raises(ValueError, match="'g'"):
        primitive(lambda g, a: g, "g, a", adjoints={"g": "g"}, path="test.shadow")
