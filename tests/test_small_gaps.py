"""Gaps found by probes of user-style programs, one test each: a rule on a bound method
reached through a local name, a method without gradients at the second order, seeds
given as a list for a number."""
import math

import numpy as np
import pytest

import adjoint_s2s as ad

scipy_stats = pytest.importorskip("scipy.stats")

Y = np.array([0.3, -0.5, 1.2])
S = np.array([0.8, 1.1, 1.4])


def norm_through_a_name(y, s):
    d = scipy_stats.norm
    return np.sum(d.logpdf(y, 0.1, s))


def norm_local_import(y, s):
    import scipy.stats as st
    return np.sum(st.norm.logpdf(y, 0.1, s))


@pytest.mark.parametrize("f", [norm_through_a_name, norm_local_import])
def test_rule_on_a_bound_method_through_a_local_name(f):
    """The rule for scipy.stats.norm.logpdf was consulted for `scipy.stats.norm.logpdf`
    written out, not for the distribution held by a name while the arguments are read
    again: scipy's own source was transformed (a NoSourceError about _parse_args)."""
    gy, gs = ad.gradient(f, Y, S)
    z = (Y - 0.1) / S
    np.testing.assert_allclose(gy, -z / S)
    np.testing.assert_allclose(gs, (z * z - 1) / S)


def tuple_count(x, y):
    t = (x, y)
    return t.count(x) * y + t[0] * x


def test_method_without_gradients_at_second_order():
    """tuple.count's pullback (Nones, as `(None,) * n`) differentiated again folded a
    cotangent into the Nones: a TypeError inside adjoint_s2s."""
    assert ad.gradient(tuple_count, 0.7, 1.3) == pytest.approx((1.4, 1.0))
    assert ad.gradient(lambda x, y: ad.gradient(tuple_count, x, y)[0], 0.7, 1.3) == pytest.approx((2.0, 0.0))


def test_list_seed_of_a_number_is_refused():
    y, back = ad.pullback(lambda x: math.sin(x) * x, 0.7)
    with pytest.raises(TypeError, match="seed of a pullback of a real number is a number, not a list"):
        back([1.0])


class Lin:
    def __init__(self, w):
        self.w = w

    def f(self, u):
        return self.w * u * u


def stored_bound_method(x):
    bm = Lin(x).f
    return bm(x)


def test_refusal_inside_adjoint_s2s_own_helper_names_the_users_function():
    """A third derivative through an object's fields reaches a helper of adjoint_s2s's
    that is not differentiable again. The refusal used to show that helper's own construct
    and way out (`Pass _OPEN in as an argument`) and ask the user for a rule on it."""
    from adjoint_s2s.errors import UnsupportedSyntaxError

    def d(f):
        return lambda x: ad.gradient(f, x)[0]

    assert d(d(stored_bound_method))(0.7) == pytest.approx(6 * 0.7)
    with pytest.raises(UnsupportedSyntaxError) as info:
        d(d(d(stored_bound_method)))(0.7)
    msg = str(info.value)
    assert "while differentiating" in msg and "test_small_gaps.py" in msg
    assert "adjoint_s2s's own" in msg and "Take one derivative fewer" in msg
    assert "_OPEN" not in msg


W4 = np.array([0.0, 1.0, 4.0, 9.0])


def reversed_into_itself(x):
    a = x * 1.0
    a[::-1] = a
    return np.sum(a * W4)


def whole_into_itself(x):
    a = x * 1.0
    a[:] = a
    return np.sum(a * W4)


def permuted_into_itself(x):
    a = x * 1.0
    a[[3, 2, 1, 0]] = a
    return np.sum(a * W4)


def list_into_itself(x):
    items = [x[0], x[1], x[2]]
    items[::-1] = items
    return items[0] * 1.0 + items[1] * 2.0 + items[2] * 3.0


@pytest.mark.parametrize("f", [reversed_into_itself, whole_into_itself, permuted_into_itself, list_into_itself])
def test_container_written_with_itself(f):
    """`a[::-1] = a`: Python reads the source before the write (NumPy copies an
    overlapping source, a list copies itself); the gradient treated the two as distinct
    (the value was right, the gradient wrong)."""
    x = np.array([1.0, 2.0, 3.0, 4.0])
    eps = 1e-6
    want = np.array([(f(x + e) - f(x - e)) / (2 * eps) for e in np.eye(4) * eps])
    y, back = ad.pullback(f, x)
    assert y == f(x)
    np.testing.assert_allclose(back(1.0)[0], want, atol=1e-8)


def write_into_fancy_copy(x, v):
    a = x * 1.0
    a[[0, 1]][0] = v
    return np.sum(a ** 2) + v


def write_into_mask_copy(x, v):
    a = x * 1.0
    a[a > 1.5][0] = v
    return np.sum(a ** 2) + v


@pytest.mark.parametrize("f", [write_into_fancy_copy, write_into_mask_copy])
def test_write_into_a_copy_made_by_indexing_is_refused(f):
    """NumPy writes into a temporary copy (a does not change); the normaliser's copy on
    write changed a."""
    from adjoint_s2s.errors import UnsupportedSyntaxError
    with pytest.raises(UnsupportedSyntaxError, match="fancy or boolean indexing"):
        ad.gradient(f, np.array([1.0, 2.0, 3.0]), 0.5)


def piecewise_constant(x):
    return np.sum(np.floor(x))


def test_hessian_and_hvp_of_a_function_without_gradient():
    x = np.array([1.3, 2.7])
    np.testing.assert_array_equal(ad.hessian(piecewise_constant, x), np.zeros((2, 2)))
    np.testing.assert_array_equal(ad.hvp(piecewise_constant, x, np.ones(2)), np.zeros(2))
    assert ad.hvp(lambda t: math.floor(t), 1.5, 1.0) == 0.0


def reversed_added_into_itself(x):
    a = x * 1.0
    a[::-1] += a
    return np.sum(a * W4)


def columns_into_itself(x):
    a = np.outer(x, x)
    a[:, ::-1] = a
    return np.sum(a * np.arange(16.0).reshape(4, 4))


@pytest.mark.parametrize("f", [reversed_added_into_itself, columns_into_itself])
def test_container_changed_with_itself_other_shapes(f):
    """The same family: an augmented write (`a[::-1] += a`) and a 2-D one (`a[:, ::-1] = a`)."""
    from adjoint_s2s.testing import numerical_gradient
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y, back = ad.pullback(f, x)
    assert y == f(x)
    np.testing.assert_allclose(back(1.0)[0], numerical_gradient(f, x)[0], atol=1e-7)
