"""A loop writing into an array (`traj[i] = x`) keeps on the tape only the shape of the
array it writes into, when the pullback reads the old arrays for nothing else: the write
goes into the array in place, O(1) a trip. It was a copy of the whole array a trip, and
each copy kept: quadratic in time and memory (129 MB for 4000 steps)."""
import tracemalloc

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads


def trajectory(x0, v0, n):
    traj = np.zeros(n)
    x, v = x0, v0
    for i in range(n):
        v = v - 0.01 * x
        x = x + 0.01 * v
        traj[i] = x
    return np.sum(traj ** 2)


def recurrence(x0, v0, n):
    traj = np.zeros(n)
    traj[0] = x0
    for i in range(1, n):
        traj[i] = traj[i - 1] + 0.01 * (v0 - traj[i - 1])
    return np.sum(traj)


def rows_read_back(w):
    h = np.zeros((4, 3))
    for t in range(1, 4):
        h[t] = np.tanh(h[t - 1] * w + 0.1 * t)
    return np.sum(h * h)


def test_the_tape_keeps_the_shape_of_the_array_written_into():
    src = ad.show_adjoint(trajectory, 1.0, 0.0, 5)
    assert "_tape.append(_rt.shape_like(traj))" in src


@pytest.mark.parametrize("f, args", [(trajectory, (1.0, 0.3, 6)), (recurrence, (1.0, 0.2, 6)),
                                     (rows_read_back, (np.array([0.3, -0.2, 0.5]),))])
def test_gradients_of_writes_in_loops(f, args):
    n = len(args) if not isinstance(args[-1], int) else len(args) - 1
    check_grads(lambda *a: f(*a, *args[n:]), *args[:n], order=2)
    y, back = ad.pullback(f, *args)
    assert y == pytest.approx(f(*args))
    first = back(1.0)
    again = back(1.0)  # the pullback reads the tape without changing it
    for a, b in zip(first, again):
        assert a is None and b is None or np.allclose(a, b)


def test_memory_grows_with_the_steps_not_their_square():
    ad.gradient(trajectory, 1.0, 0.0, 50)
    tracemalloc.start()
    try:
        ad.gradient(trajectory, 1.0, 0.0, 4000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4e6  # 4000 steps: about 1 MB of tape; copies of the array took 129 MB
