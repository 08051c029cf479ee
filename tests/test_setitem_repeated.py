"""Writes through an index array that repeats a position: the gradient is that of what
NumPy computes. ``b[i] = vals`` writes in order, so at a repeated position the last
element stays and the earlier ones get a zero gradient; ``b[i] += w`` is
``b[i] = b[i] + w``: one addition per position (of the last w among the repeats), not
one per repeat. Checked against finite differences at first and second order."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import runtime
from adjoint_s2s.testing import check_grads, numerical_gradient

WEIGHTS = np.arange(1.0, 5.0)


def scaled_in_place(v):
    b = v.copy()
    i = np.array([2, 0, 2])
    b[i] = b[i] * 3.0
    return np.sum(b * WEIGHTS * b)


def buffered_add(v, w):
    b = v.copy()
    i = np.array([2, 0, 2])
    b[i] += w
    return np.sum(b * WEIGHTS * b)


def list_index_write(v, w):
    b = v.copy()
    i = [2, 0, 2]
    b[i] = w * v[1]
    return np.sum(b * WEIGHTS * b)


def into_zeros(v, w):
    b = np.zeros(4)
    i = np.array([1, 1, 3])
    b[i] = w * v[0]
    return np.sum(b * WEIGHTS * b)


def scalar_into_repeats(v, w):
    b = v.copy()
    b[np.array([1, 3, 1])] = w[0] * w[1]
    return np.sum(b * b * WEIGHTS)


def two_dimensional(v, w):
    B = np.outer(v, v[:3])
    B[[0, 1, 0], [2, 2, 2]] = w * 2.0
    B[:, [0, 2, 0]] += np.sin(v)[:, None] * w
    return np.sum(B * B)


def in_a_loop(v, w):
    b = v.copy()
    for k in range(3):
        i = np.array([k, 3, k])
        b[i] = b[i] * w + v[k]
    return np.sum(b * b * WEIGHTS)


def row_into_matrix(v, w):
    H = np.zeros((3, 3))
    H[np.array([1, 1, 2])] = np.outer(w, v[:3])
    return np.sum(H * H * v[:3])


V = np.array([1.0, 2.0, 3.0, 4.0])
W = np.array([0.5, -1.0, 2.0])
CASES = [
    (scaled_in_place, (V,)),
    (buffered_add, (V, W)),
    (list_index_write, (V, W)),
    (into_zeros, (V, W)),
    (scalar_into_repeats, (V, W)),
    (two_dimensional, (V, W)),
    (in_a_loop, (V, W)),
    (row_into_matrix, (V, W)),
]


@pytest.mark.parametrize("f, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_repeated_indices_first_order(f, args):
    args = tuple(a.copy() for a in args)
    before = [a.copy() for a in args]
    check_grads(f, *args, atol=1e-6)
    for a, b in zip(args, before):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("f, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_repeated_indices_second_order(f, args):
    rng = np.random.default_rng(3)
    dirs = [rng.standard_normal(a.shape) for a in args]

    def inner(*a):
        gs = ad.gradient(f, *a)
        return sum(np.sum(g * r) for g, r in zip(gs, dirs) if g is not None)

    got = ad.gradient(inner, *args)
    want = numerical_gradient(inner, *args)
    for g, w in zip(got, want):
        g = np.zeros_like(w) if g is None else g
        assert np.allclose(g, w, rtol=1e-4, atol=1e-5), (g, w)


def test_lost_writes_mask():
    assert runtime.accumulate._lost_writes((4,), slice(0, 3)) is None
    assert runtime.accumulate._lost_writes((4,), np.array([2, 0, 1])) is None
    assert runtime.accumulate._lost_writes((4,), np.array([True, False, True, True])) is None
    m = runtime.accumulate._lost_writes((4,), np.array([2, 0, 2, 2]))
    assert m.tolist() == [False, True, False, True]
    m = runtime.accumulate._lost_writes((3, 3), (np.array([0, 1, 0]), slice(None)))
    assert m.tolist() == [[False] * 3, [True] * 3, [True] * 3]
