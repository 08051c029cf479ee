"""A call with *args (`q(*t, 1.0)`, `h(x, *rest)`) goes through the run-time check that a
callee leaves the caller's arguments as Python would (runtime/mutation.keeping). Its pair
is differentiated at the second order; at the third, its source was transformed and
refused (a `global` inside adjoint_s2s's own helper, named as the user's problem). The
same refusal stopped fourth derivatives (`d(d(d(d(math.sin))))`, nested hessians of
arrays). keeping has a rule now."""
import math

import numpy as np
import pytest

import adjoint_s2s as ad


def q(a, u):
    return a ** 4 * u


def star_tuple(x):
    t = (x,)
    return q(*t, 1.0)


def star_list(x):
    t = [x, 1.0]
    return q(*t)


def takes_rest(x, *rest):
    return q(x, *rest)


def passes_rest(x):
    return takes_rest(x, 1.0)


def d(f):
    return lambda x: ad.gradient(f, x)[0]


@pytest.mark.parametrize("f", [star_tuple, star_list, passes_rest])
def test_third_derivative_through_a_starred_call(f):
    x = 0.7
    assert d(f)(x) == pytest.approx(4 * x ** 3)
    assert d(d(f))(x) == pytest.approx(12 * x ** 2)
    assert d(d(d(f)))(x) == pytest.approx(24 * x)


def test_fourth_derivative_of_sin():
    assert d(d(d(d(math.sin))))(0.4) == pytest.approx(math.sin(0.4))


def test_fourth_order_on_arrays():
    """A gradient of a gradient of a gradient of an array function, against finite
    differences of the third level."""
    w = np.array([1.0, 2.0])

    def fv(v):
        return np.sum(np.tanh(v) * v)

    def g1(v):
        return np.sum(ad.gradient(fv, v)[0] * w)

    def g2(v):
        return np.sum(ad.gradient(g1, v)[0] * w)

    def g3(v):
        return np.sum(ad.gradient(g2, v)[0] * w)

    v = np.array([0.3, -0.5])
    got = ad.gradient(g3, v)[0]
    eps = 1e-5
    want = np.array([(g3(v + e) - g3(v - e)) / (2 * eps) for e in np.eye(2) * eps])
    np.testing.assert_allclose(got, want, rtol=1e-5)
