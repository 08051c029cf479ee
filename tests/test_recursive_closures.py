"""Recursive local functions that capture differentiated variables: every level of the
recursion contributes to the captured variable's gradient (first and second order).

Each call's pullback nests the tangent of the function it called (itself, or a local
function that calls it back) in the field named after it; the reverse pass folds all
of them into one tangent (``_rt.fold_self``) where the function was made.
"""
import math

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import isapprox, numerical_gradient


def rec_default_depth(x, s):
    def g(z, n=3):
        return z if n == 0 else g(math.sin(z) + s * 0.1, n - 1)

    return g(x)


def rec_two_captured(x, s):
    def g(z, n):
        if n == 0:
            return z * s
        return g(z * s + x, n - 1) + s

    return g(x, 4)


def rec_factorial(x, s):
    def fact(n):
        return 1.0 if n == 0 else n * s * fact(n - 1)

    return fact(3) * x


def rec_mutual(x, s):
    def even(z, n):
        return z * s if n == 0 else odd(z + s, n - 1)

    def odd(z, n):
        return z * z if n == 0 else even(z * s, n - 1)

    return even(x, 5)


def rec_lambda(x, s):
    f = lambda z, n: z * s if n == 0 else f(z * z + s, n - 1)  # noqa: E731
    return f(x, 3)


def rec_array(v, s):
    def g(z, n):
        return z if n == 0 else g(np.tanh(z) * s, n - 1)

    return np.sum(g(v, 3))


@pytest.mark.parametrize("fn, args", [
    (rec_default_depth, (0.7, 0.4)),
    (rec_two_captured, (0.7, 0.4)),
    (rec_factorial, (0.7, 0.4)),
    (rec_mutual, (0.7, 0.4)),
    (rec_lambda, (0.7, 0.4)),
    (rec_array, (np.array([0.3, -0.8, 1.1]), 0.9)),
], ids=lambda v: getattr(v, "__name__", None))
def test_every_level_of_a_recursion_contributes(fn, args):
    y, back = ad.pullback(fn, *args)
    assert isapprox(y, fn(*args), rtol=1e-12, atol=1e-12)
    got = back(1.0)
    want = numerical_gradient(fn, *args)
    for g, w in zip(got, want):
        assert isapprox(g, w, rtol=1e-6, atol=1e-8), (got, want)
    u = [np.random.default_rng(4).standard_normal(np.shape(a)) for a in args]

    def directional(*xs):
        return sum(np.sum(g * d) for g, d in zip(ad.gradient(fn, *xs), u))

    got2 = ad.gradient(directional, *args)
    want2 = numerical_gradient(directional, *args)
    for g, w in zip(got2, want2):
        assert isapprox(g, w, rtol=1e-5, atol=1e-7), (got2, want2)


def lambda_default_by_keyword(t, s):
    f = lambda a, w=1.0: a * w * a  # noqa: E731
    return f(t, w=s)


def lambda_default_taken(t, s):
    f = lambda a, w=s: a * w * a  # noqa: E731
    return f(t) + f(s, w=t)


@pytest.mark.parametrize("fn", [lambda_default_by_keyword, lambda_default_taken],
                         ids=lambda v: v.__name__)
def test_a_lambda_with_a_default_first_and_second_order(fn):
    args = (0.7, 1.3)
    got = ad.gradient(fn, *args)
    want = numerical_gradient(fn, *args)
    for g, w in zip(got, want):
        assert isapprox(g, w, rtol=1e-6, atol=1e-8)
    for i in range(2):
        h = ad.gradient(lambda *a: ad.gradient(fn, *a)[i], *args)
        hn = numerical_gradient(lambda *a: ad.gradient(fn, *a)[i], *args)
        for g, w in zip(h, hn):
            assert isapprox(g, w, rtol=1e-5, atol=1e-7), (i, h, hn)
