"""NumPy values through which a gradient used to leak away silently (a None gradient):
sample grids built from differentiated ends, index tricks, values leaving the array
world, integer array arguments. First and second order, against finite differences."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads

from .test_numpy_singular import check2

# ----- linspace, logspace, geomspace: the ends are differentiated ---------------------------


def lin_squares(x):
    return np.sum(np.linspace(0.0, x, 5) ** 2)


def lin_axis(a, b):
    w = np.arange(8.0).reshape(2, 4)
    return np.sum(np.sin(np.linspace(a, b, 4, endpoint=False, axis=-1)) * w)


def lin_step(a, b):
    s, step = np.linspace(a, b, num=3, retstep=True)
    return np.sum(s ** 3) + step ** 2


def log_grid(a, b, base):
    return np.sum(np.logspace(a, b, 4, base=base) ** 0.5)


def geo_grid(a, b):
    return np.sum(np.geomspace(a, b, 5, axis=1) ** 1.5 * np.arange(10.0).reshape(2, 5))


def lin_int(x):
    return np.sum(np.linspace(x, 2 * x, 1)) + np.sum(np.linspace(0.0, x, 3, dtype=int))


@pytest.mark.parametrize("f, args", [
    (lin_squares, (0.7,)),
    (lin_axis, (np.array([0.1, 0.3]), 1.2)),
    (lin_step, (0.2, 1.1)),
    (log_grid, (0.1, 0.6, 2.5)),
    (geo_grid, (np.array([1.2, 0.5]), np.array([3.0, 2.0]))),
    (lin_int, (0.7,)),
])
def test_sample_grids_pass_gradients_to_their_ends(f, args):
    check2(f, *args, rtol=1e-5, atol=1e-6)


def test_linspace_end_gradient_value():
    assert ad.gradient(lin_squares, 0.7)[0] == pytest.approx(2.625)
