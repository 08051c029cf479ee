"""`@` between a vector and a stack of matrices, and a name rebound to a call's value.

- `T @ v` (T of shape (2, 3, 4), v of (4,)) crashed in the pullback, and `v @ T` gave
  v a wrong gradient (the stack's axes were broadcast, not summed): the matmul adjoints
  now treat a 1-D operand against a stack per matrix, summed over the stack.
- `A = A @ A`, `x = x @ W` in a loop: the second order was wrong (a Hessian-vector
  product off by 30). The first-order pullback has `b_m = b_A; b_A = matmul_adjoint_a(b_m,
  ...)`; differentiating it again, the call was taken to change b_m in place and b_A,
  another name for that object before the statement, was named again after it (`b_A =
  b_m`), discarding the call's value. A name the statement binds anew is no longer in
  the group of names followed after an in-place change."""
import numpy as np
import pytest

import adjoint_s2s as ad

RNG = np.random.default_rng(7)


def central(f, x, h=1e-6):
    g = np.zeros(np.shape(x))
    for idx in np.ndindex(g.shape):
        p, m = np.array(x, dtype=float), np.array(x, dtype=float)
        p[idx] += h
        m[idx] -= h
        g[idx] = (f(p) - f(m)) / (2 * h)
    return g


def stack_at_vector(T, v):
    return np.sum((T @ v) ** 2)


def vector_at_stack(v, T):
    return np.sum((v @ T) ** 2)


def vector_at_stack_vector_out(v, T):
    return np.sum(np.tanh(v @ T))


CASES = [
    (stack_at_vector, ((2, 3, 4), (4,))),
    (stack_at_vector, ((2, 2, 3, 4), (4,))),
    (vector_at_stack, ((3,), (2, 3, 4))),
    (vector_at_stack, ((3,), (2, 2, 3, 4))),
    (vector_at_stack_vector_out, ((3,), (2, 3, 4))),
]


@pytest.mark.parametrize("f, shapes", CASES, ids=[f"{c[0].__name__}-{len(c[1][0])}d-{len(c[1][1])}d" for c in CASES])
def test_a_vector_against_a_stack_of_matrices(f, shapes):
    a, b = (RNG.standard_normal(s) for s in shapes)
    ga, gb = ad.gradient(f, a, b)
    assert np.allclose(ga, central(lambda t: f(t, b), a), rtol=1e-6, atol=1e-8)
    assert np.allclose(gb, central(lambda t: f(a, t), b), rtol=1e-6, atol=1e-8)
    # second order: a Hessian-vector product in the first argument
    w = RNG.standard_normal(a.shape)

    def hv(t):
        return np.sum(ad.gradient(f, t, b)[0] * w)

    assert np.allclose(ad.gradient(hv, a)[0], central(hv, a), rtol=1e-5, atol=1e-6)


def test_a_complex_vector_against_a_stack():
    z = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    T = RNG.standard_normal((2, 3, 4))

    def f(re, im):
        return np.sum(np.abs((re + 1j * im) @ T) ** 2)

    g_re, g_im = ad.gradient(f, z.real.copy(), z.imag.copy())
    assert np.allclose(g_re, central(lambda t: f(t, z.imag), z.real), rtol=1e-6, atol=1e-8)
    assert np.allclose(g_im, central(lambda t: f(z.real, t), z.imag), rtol=1e-6, atol=1e-8)


def squared_in_place_of_itself(A):
    A = A @ A
    return np.sum(A ** 2)


def layers(W, x):
    for _ in range(2):
        x = x @ W
    return np.sum(x ** 2)


def rebound_through_a_constant(A, W):
    A = A @ W
    return np.sum(A ** 2)


@pytest.mark.parametrize("f, extra", [
    (squared_in_place_of_itself, ()),
    (layers, (RNG.standard_normal(3),)),
    (rebound_through_a_constant, (RNG.standard_normal((3, 3)),)),
], ids=lambda v: getattr(v, "__name__", None))
def test_second_order_of_a_name_rebound_to_a_product(f, extra):
    A = RNG.standard_normal((3, 3))
    V = RNG.standard_normal((3, 3))

    def hv(a):
        return np.sum(ad.gradient(f, a, *extra)[0] * V)

    assert np.allclose(ad.gradient(hv, A)[0], central(hv, A), rtol=1e-5, atol=1e-6)


def push(lst, v):
    lst.append(v)
    return len(lst) * 1.0


def rebound_to_what_a_mutating_call_returns(x):
    L = [x]
    M = L
    M = push(L, 2.0 * x)  # M names the count now; L grew
    return sum(L) * M


def test_a_name_rebound_by_the_call_that_changes_its_old_object():
    # before: `M = L` was written after the call (M the list again): a TypeError
    f = rebound_to_what_a_mutating_call_returns
    assert ad.pullback(f, 0.5)[0] == f(0.5)
    assert ad.gradient(f, 0.5)[0] == pytest.approx(6.0)
