"""runtime/project.py: zeros, seeds, projection, unbroadcast, Scattered."""
import numpy as np
import pytest

from adjoint_s2s.runtime.project import (
    Scattered, conj, dense, im_seed, neg, re_or_self, real, scalar, seed, unbroadcast,
)
from adjoint_s2s.tangents import Thunk, ZeroTangent


def test_real_turns_every_zero_into_0_0_and_drops_the_imaginary_part():
    assert real(None) == 0.0 and real(ZeroTangent()) == 0.0
    assert real(3) == 3.0 and type(real(3)) is float
    assert real(2 + 5j) == 2.0
    assert type(real(np.float32(1.5))) is float
    assert isinstance(real(Thunk(lambda: 4.0)), Thunk)  # stays lazy
    assert real(Thunk(lambda: 4.0)).unthunk() == 4.0


def test_scalar_and_seed_keep_values_and_map_zeros():
    assert scalar(1j) == 1j and scalar(None) == 0.0
    assert seed(ZeroTangent()) is None and seed(Thunk(lambda: 2.0)) == 2.0
    assert seed([1.0]) == [1.0]


def test_conj_neg_im_seed_re_or_self():
    assert conj(1 + 2j) == 1 - 2j and conj(3.0) == 3.0
    assert conj(np.float64(3.0)) == 3.0 and conj(np.complex128(1 + 2j)) == 1 - 2j
    np.testing.assert_array_equal(conj(np.array([1j])), np.array([-1j]))
    assert neg(None) is None and neg((1.0, None)) == (-1.0, None)
    assert im_seed(2.0) == 2j and im_seed(None) is None
    assert re_or_self(1 + 1j, 2.0) == 1.0 and re_or_self(1 + 1j, 2j) == 1 + 1j


@pytest.mark.parametrize("gshape, lshape", [
    ((3, 2), (2,)), ((3, 2), (3, 1)), ((4, 3, 2), (3, 2)), ((2, 2), (2, 2)), ((5, 100), (5, 1)),
])
def test_unbroadcast_sums_down_to_the_shape_of_like(gshape, lshape):
    g = np.arange(np.prod(gshape), dtype=float).reshape(gshape)
    like = np.zeros(lshape)
    out = unbroadcast(g, like)
    want = g
    while want.ndim > like.ndim:
        want = want.sum(axis=0)
    want = want.sum(axis=tuple(i for i, n in enumerate(lshape) if n == 1 and want.shape[i] != 1),
                    keepdims=True)
    assert out.shape == lshape
    np.testing.assert_allclose(out, want)


def test_unbroadcast_projects_onto_real_scalars_and_real_arrays():
    assert unbroadcast(np.array([1.0, 2.0]), 1.0) == 3.0
    assert type(unbroadcast(np.float64(2.0), 1.0)) is float
    # an array's item in scalar code (a float64 gradient of a float64 value): a float
    got = unbroadcast(np.float64(2.0), np.float64(1.0))
    assert type(got) is float and got == 2.0
    assert unbroadcast(np.complex128(1 + 2j), np.float64(1.0)) == 1.0
    assert unbroadcast(1 + 2j, 1.0) == 1.0
    out = unbroadcast(np.array([1 + 1j]), np.zeros(1, np.float32))
    assert out.dtype == np.float32 and out[0] == 1.0
    assert unbroadcast(None, 1.0) is None


def test_scattered_writes_out_and_reduces_reading_only_its_positions():
    idx = (np.array([0, 2, 0]), np.array([1, 1, 1]))
    s = Scattered((3, 2), np.dtype(float), idx, np.array([1.0, 2.0, 3.0]))
    full = dense(s)
    assert full.tolist() == [[0.0, 4.0], [0.0, 0.0], [0.0, 2.0]]  # repeats accumulate
    np.testing.assert_allclose(unbroadcast(s, np.zeros((3, 1))), full.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(dense(-s), -full)
    assert dense(5.0) == 5.0
