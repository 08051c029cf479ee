"""NumPy values through which a gradient used to leak away silently (a None gradient):
sample grids built from differentiated ends, index tricks, values leaving the array
world, integer array arguments. First and second order, against finite differences."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads

from .test_singular import check2

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


# ----- values leaving the array world --------------------------------------------------------

V = np.array([0.6, 1.1, 0.8, 1.4])

LEAVING = {
    "item": lambda v: v.item(1) * 2.0,
    "item_2d": lambda v: v.reshape(2, 2).item(1, 0) ** 2 + v.reshape(2, 2).item((0, 1)),
    "item_flat_negative": lambda v: v.reshape(2, 2).item(-1) * v.item(0),
    "tolist": lambda v: v.tolist()[2] * 3.0,
    "tolist_sum": lambda v: sum(v.tolist()) * v.tolist()[0],
    "tolist_nested": lambda v: v.reshape(2, 2).tolist()[1][0] ** 2,
    "float_of_element": lambda v: float(v[0]) * 2.0,
    "element_item": lambda v: v[0].item() * 2.0,
    "flatten": lambda v: np.sum(v.reshape(2, 2).flatten() ** 2),
    "ravel": lambda v: np.sum(v.reshape(2, 2).ravel() ** 2),
    "squeeze": lambda v: np.sum(v.reshape(1, 4).squeeze() ** 2),
    "astype": lambda v: np.sum(v.astype(float) ** 2),
    "copy": lambda v: np.sum(v.copy() ** 2),
    "sum_item": lambda v: v.sum().item() * v.item(3),
    "max_item": lambda v: (v * v).max().item(),
    "float_of_sum": lambda v: float(np.sum(v)) ** 2,
    "item_and_int": lambda v: v.item(1) ** 2 + int(v.item(2)),
}


@pytest.mark.parametrize("name", sorted(LEAVING))
def test_values_leaving_the_array_world_keep_their_gradient(name):
    check2(LEAVING[name], V.copy(), rtol=1e-5, atol=1e-6)


def test_item_and_tolist_gradients():
    assert np.array_equal(ad.gradient(LEAVING["item"], V)[0], [0, 2.0, 0, 0])
    assert np.array_equal(ad.gradient(LEAVING["tolist"], V)[0], [0, 0, 3.0, 0])


def test_list_of_an_array_first_order():
    check_grads(lambda v: list(v)[1] * 2.0 + sum(list(v)), V.copy())


# ----- integer arrays get a float gradient, as int scalars do ------------------------------


@pytest.mark.parametrize("f", [
    lambda a: np.sum(a * 2.5),
    lambda a: np.sum(np.sin(a)) + np.mean(a) * 3,
    lambda a: a[0] * 2.0 + a[1] ** 3,
    lambda a: np.dot(a, a) * 1.0,
])
@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.uint16])
def test_integer_array_argument_gets_a_float_gradient(f, dtype):
    a = np.array([1, 2], dtype=dtype)
    (g,) = ad.gradient(f, a)
    (want,) = ad.gradient(f, a.astype(float))
    # (np.sin of int8 computes in float16: so does its derivative)
    assert g.dtype == np.float64 and np.allclose(g, want, rtol=1e-3)
    assert np.allclose(ad.pullback(f, a)[1](1.0)[0], want, rtol=1e-3)
    assert np.allclose(ad.hessian(f, a), ad.hessian(f, a.astype(float)), rtol=1e-3)


def test_int_scalar_and_int_array_agree():
    assert ad.gradient(lambda t: t * 2.5, 3) == (2.5,)
    assert np.array_equal(ad.gradient(lambda a: np.sum(a * 2.5), np.array([1, 2]))[0], [2.5, 2.5])


def test_boolean_and_index_arrays_get_no_gradient():
    assert ad.gradient(lambda a: np.sum(a * 2.5), np.array([True, False])) == (None,)
    g = ad.gradient(lambda a, i: np.sum(a[i] * 2.5), np.array([1.0, 2.0]), np.array([0, 0]))
    assert np.array_equal(g[0], [5.0, 0.0]) and g[1] is None


# ----- np.r_ / np.c_ and other reads whose key is differentiated ----------------------------

M23 = np.arange(6.0).reshape(2, 3) / 5 - 0.3
V3 = np.array([0.6, 1.1, 0.8])


class Squares:
    def __getitem__(self, k):
        return k * k


SQUARES = Squares()

KEYED = {
    "r_": (lambda x: np.sum(np.r_[x, x] ** 2), (V3,)),
    "c_": (lambda x: np.sum(np.c_[x, x] ** 2 * np.arange(6.0).reshape(3, 2)), (V3,)),
    "r_scalars_ranges": (lambda x, s: np.sum(np.r_[x, s, 0:3, 2.0 * x] ** 3), (V3, 0.4)),
    "r_scalar_first": (lambda x, s: np.sum(np.r_[s, x] * np.arange(4.0)), (V3, 0.4)),
    "r_one_item": (lambda x: np.sum(np.r_[x] ** 2), (V3,)),
    "r_matrices": (lambda A: np.sum(np.r_[A, A * 2] ** 2), (M23,)),
    "c_matrix_and_columns": (
        lambda A, x: np.sum(np.c_[A, x[:2], x[1:]] ** 2 * np.arange(10.0).reshape(2, 5)), (M23, V3)),
    "c_range": (lambda x: np.sum(np.c_[x, 1:4] ** 3), (V3,)),
    "getitem_computes": (lambda x: SQUARES[x] * 3.0, (0.7,)),
}


@pytest.mark.parametrize("name", sorted(KEYED))
def test_reads_whose_key_is_differentiated(name):
    f, args = KEYED[name]
    check2(f, *args, rtol=1e-5, atol=1e-6)


def test_r_gradient_value():
    f = KEYED["r_"][0]
    assert np.allclose(ad.gradient(f, V3)[0], 4 * V3)


def test_forms_of_r_without_a_rule_are_refused():
    with pytest.raises(ad.MissingAdjointError, match="np.concatenate"):
        ad.gradient(lambda x: np.sum(np.r_["0,2", x, x]), V3)
    with pytest.raises(ad.UnsupportedSyntaxError, match="slice whose bounds"):
        ad.gradient(lambda x: np.sum(np.r_[0:x:3j]), 0.7)


def test_plain_lookups_give_no_gradient_to_the_key():
    table = {0.5: 2.0}
    g = ad.gradient(lambda k, x: table[k] * x + [1.0, 2.0][int(k)] * x, 0.5, 3.0)
    assert g == (None, 3.0)


# ----- a complex argument gets a complex gradient, also where it is real ---------------------


@pytest.mark.parametrize("f, want", [
    (lambda z: np.real(z), 1 + 0j),
    (lambda z: z.real * 2.0, 2 + 0j),
    (lambda z: np.imag(z) * 3.0, 3j),
    (lambda z: np.real(z * z), 2 - 4j),
    (lambda z: np.real(np.conj(z) * z), 2 + 4j),
])
@pytest.mark.parametrize("z", [1 + 2j, np.complex128(1 + 2j)])
def test_complex_argument_gets_a_complex_gradient(f, want, z):
    (g,) = ad.gradient(f, z)
    assert type(g) is type(z) and g == want  # ∂L/∂x + i·∂L/∂y (docs/guide.md §3)
    assert ad.pullback(f, z)[1](1.0) == (want,)


def test_real_argument_of_np_real_gets_a_real_gradient():
    (g,) = ad.gradient(lambda x: np.real(x * (1 + 2j)), 0.7)
    assert type(g) is float and g == 1.0


def arange_start_step(x, s):
    return np.sum(np.arange(x, 3.0, s) ** 2) + np.sum(np.arange(0, 4, dtype=float) * x ** 2)


def test_arange_passes_gradients_to_start_and_step():
    check2(arange_start_step, 0.3, 0.7)
    assert ad.gradient(lambda x: np.sum(np.arange(x, 3.0, 0.5, int) * 1.0), 0.4)[0] in (None, 0.0)
