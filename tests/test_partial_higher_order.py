"""functools.partial at the second and third orders. A partial called with keywords lost
the tangent of what it binds at the second order (0.0 for 12x², `partial(q, a=x)(u=1.0)`),
and one binding a value by position at the third (0.0 for 24x): the tangent of the
partial's parts was not handed back to the pair's cells they came from."""
import functools

import pytest

import adjoint_s2s as ad


def q(a, u):
    return a ** 4 * u


def bound_by_position(x):
    return functools.partial(q, x)(1.0)


def bound_by_keyword(x):
    return functools.partial(q, a=x)(u=1.0)


def called_with_keyword(x):
    return functools.partial(q, x)(u=1.0)


def bound_both(x):
    return functools.partial(q, x, u=x)()  # x ** 5


def _pp(a, u):
    return a * u ** 3


def gradient_of_partial(x):  # 3 x ** 3
    return ad.gradient(functools.partial(_pp, x), x)[0]


def d(f):
    return lambda x: ad.gradient(f, x)[0]


@pytest.mark.parametrize("f", [bound_by_position, bound_by_keyword, called_with_keyword])
def test_partial_to_the_third_order(f):
    x = 0.7
    assert d(f)(x) == pytest.approx(4 * x ** 3)
    assert d(d(f))(x) == pytest.approx(12 * x ** 2)
    assert d(d(d(f)))(x) == pytest.approx(24 * x)


def test_partial_binding_both_ways():
    x = 0.7
    assert d(bound_both)(x) == pytest.approx(5 * x ** 4)
    assert d(d(bound_both))(x) == pytest.approx(20 * x ** 3)


def test_second_derivative_of_a_gradient_of_a_partial():
    x = 0.7
    assert d(gradient_of_partial)(x) == pytest.approx(9 * x ** 2)
    assert d(d(gradient_of_partial))(x) == pytest.approx(18 * x)
