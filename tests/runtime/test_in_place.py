"""`a OP= v` on a NumPy array: Python writes into a, so the result keeps a's shape and
dtype or NumPy raises; differentiated code rebinds a, and `_rt.in_place` gives the value
(and the error) Python gives. The value under pullback equals the plain call."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import runtime
from adjoint_s2s.testing import isapprox, numerical_gradient

RNG = np.random.default_rng(15)


def add_into(p, q):
    p += q
    return np.sum(p * p)


def each_operator(p, q):
    r = p * 1.0
    r += q
    r -= 0.5 * q
    r *= q
    r /= 2.0 + q * q
    r **= 2
    return np.sum(r)


def matmul_into(m, w):
    r = m * 1.0
    r @= w
    return np.sum(r * r)


def local_float32(q):
    r = np.array([0.1, 0.2, 0.3], np.float32)
    r += q
    return np.sum(r * r)


def zero_d(x):
    r = np.array(1.5)
    r += x * x
    return r * x


def second_order(q):
    r = np.ones(3)
    r += q * q
    return np.sum(r * q)


def test_a_float32_array_plus_float64_stays_float32_as_in_python():
    p = np.array([0.1, 0.2, 0.3], np.float32)
    q = np.array([0.3, -0.5, 0.7])
    plain = add_into(p.copy(), q)
    y, back = ad.pullback(add_into, p.copy(), q)
    assert type(y) is type(plain) and y == plain  # float32, bit for bit
    y2 = local_float32(q)
    got = ad.gradient(local_float32, q)[0]
    assert ad.pullback(local_float32, q)[0] == y2
    want = 2 * (np.array([0.1, 0.2, 0.3], np.float32) + q).astype(np.float32)
    assert isapprox(got, want.astype(np.float64), rtol=1e-6)


@pytest.mark.parametrize("p, q, error", [
    (np.ones(3), np.ones((2, 3)), ValueError),  # the result broadcasts bigger than p
    (np.arange(3), 0.5 * np.ones(3), TypeError),  # a float into an int array
    (np.ones(3), 1j * np.ones(3), TypeError),  # a complex into a real array
])
def test_what_numpy_refuses_in_place_is_refused_with_its_error(p, q, error):
    with pytest.raises(error) as plain:
        add_into(p.copy(), q)
    with pytest.raises(error) as got:
        ad.pullback(add_into, p.copy(), q)
    assert str(got.value) == str(plain.value)


@pytest.mark.parametrize("f, shapes", [
    (each_operator, [(4,), (4,)]),
    (each_operator, [(2, 3), (3,)]),
    (matmul_into, [(3, 3), (3, 3)]),
    (add_into, [(2, 3), (3,)]),
])
def test_gradients_through_augmented_assignments_match_differences(f, shapes):
    args = [RNG.standard_normal(s) for s in shapes]
    plain = f(*[a.copy() for a in args])
    y, back = ad.pullback(f, *[a.copy() for a in args])
    assert y == plain
    got = back(1.0)
    want = numerical_gradient(lambda *xs: f(*[x.copy() for x in xs]), *args)  # (f writes into its first)
    for g, w in zip(got, want):
        assert isapprox(g, w, rtol=1e-6, atol=1e-8)


def test_a_zero_d_array_stays_an_array():
    plain = zero_d(0.7)
    y, back = ad.pullback(zero_d, 0.7)
    assert type(y) is type(plain) and y == plain
    assert isapprox(back(1.0)[0], 1.5 + 3 * 0.7 ** 2, rtol=1e-12)


def test_second_order_through_an_augmented_assignment():
    q = np.array([0.3, -0.5, 0.7])
    assert isapprox(ad.hessian(second_order, q), np.diag(6 * q), rtol=1e-12, atol=1e-12)


def test_in_place_is_the_array_itself_when_nothing_changes():
    a, b = np.ones(3), np.ones(3)
    new = a + b
    assert runtime.in_place(a, new, b, "Add") is new
    assert runtime.in_place(2.0, 3.0, 1.0, "Add") == 3.0  # a number rebinds: as it is
    out = runtime.in_place(a.astype(np.float32), new, b, "Add")
    assert out.dtype == np.float32 and out.tolist() == [2.0, 2.0, 2.0]


def test_run_time_dispatch_of_an_augmented_assignment_writes_as_numpy_does():
    a = np.array([0.1, 0.2], np.float32)
    y, _ = runtime.binop("Add", a, np.array([0.3, 0.4]), True)
    assert y.dtype == np.float32
    with pytest.raises(ValueError):
        runtime.binop("Add", np.ones(2), np.ones((3, 2)), True)
