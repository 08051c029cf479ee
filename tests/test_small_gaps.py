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
