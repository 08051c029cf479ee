"""A cast of a differentiated value to an integer or bool dtype: its result is piecewise
constant, so no gradient goes through it, as none goes through ``int(v)``. The gradient
was passed through silently (``(3*x).astype(int)`` gave 3 where the truth is 0): by
``astype``, by the ``dtype=`` of constructors and reductions, by ``np.full_like`` into
an integer array and by item writes into integer or bool arrays. Casts to float32 or
complex keep their gradients; astype(float) of a complex value drops the imaginary part,
as np.real does.

Each case: the gradient (a zero for None) against central differences, by ``gradient``
(the generated code, inlined templates where they fit) and by ``pullback``."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient

X = np.array([0.2, -0.9, 1.3, 0.5])  # 3*X and X/0.7 are no integers: away from the steps


def _dense(g, x):
    return np.zeros(np.shape(x)) if g is None else np.asarray(g)


def agrees(fn, x=X):
    """fn's gradient at x, by gradient and by pullback, is the central differences'."""
    want = numerical_gradient(fn, x)[0]
    got = _dense(ad.gradient(fn, x)[0], x)
    assert np.allclose(got, want, rtol=1e-6, atol=1e-6), (got, want)
    y, back = ad.pullback(fn, x)
    assert np.allclose(y, fn(x))
    got = _dense(back(1.0)[0], x)
    assert np.allclose(got, want, rtol=1e-6, atol=1e-6), (got, want)


# ----- astype and the dtype= of constructors and reductions --------------------------------
def astype_int(x):
    return np.sum((3 * x).astype(int)) * 1.0


def astype_int_string(x):
    return np.sum((3 * x).astype("int64") * x)


def astype_np_int32(x):
    return np.sum((3 * x).astype(np.int32) * x)


def astype_uint8(x):
    return np.sum((30 * x * x).astype(np.uint8) * x)


def astype_bool(x):
    return np.sum((3 * x).astype(bool) * x)


def astype_dtype_keyword(x):
    return np.sum((3 * x).astype(dtype=int) * x)


def astype_dtype_of_an_integer_array(x):
    k = x.astype(int)
    return np.sum((3 * x).astype(k.dtype) * x)


def astype_dtype_in_a_local(x):
    dt = "int64"
    return np.sum((3 * x).astype(dt) * x)


def asarray_dtype_int(x):
    return np.sum(np.asarray(3 * x, dtype=int) * x)


def asarray_dtype_in_position(x):
    return np.sum(np.asarray(3 * x, int) * x)


def asarray_dtype_string(x):
    return np.sum(np.asarray(3 * x, dtype="int64") * x)


def asanyarray_dtype_int(x):
    return np.sum(np.asanyarray(3 * x, int) * x)


def array_dtype_int8(x):
    return np.sum(np.array(3 * x, dtype=np.int8) * x)


def array_of_a_scalar(x):
    return float(np.array(3 * x[0], dtype=np.int8)) * x[1]


def array_dtype_np_dtype(x):
    return np.sum(np.array(3 * x, dtype=np.dtype("int32")) * x)


def array_of_a_list(x):
    return np.sum(np.array([3 * x[0], x[1] * x[2]], dtype=int) * x[:2])


def sum_dtype_int(x):
    return np.sum(3 * x, dtype=int) * 1.0


def sum_dtype_in_position(x):
    return np.sum(3 * x, None, int) * x[0]


def sum_method_dtype_int(x):
    return (3 * x).sum(dtype=int) * 1.0


def cumsum_dtype_int(x):
    return np.sum(np.cumsum(3 * x, dtype=int) * x)


def cumprod_dtype_int(x):
    return np.sum(np.cumprod(x + 2, dtype=int) * x)


def prod_dtype_int(x):
    return np.prod(3 * x + 5, dtype=int) * 1.0


def mean_dtype_int(x):
    return np.mean(3 * x, dtype=int) * 1.0


def std_dtype_int(x):  # the squares are summed as integers: a float, piecewise constant
    return np.std(3 * x, dtype=int) * 1.0


def nansum_dtype_int(x):
    return np.nansum(3 * x, dtype=int) * 1.0


def trace_dtype_int(x):
    return np.trace(np.outer(x, x), dtype=int) * 1.0


def add_reduce_dtype_int(x):
    return np.add.reduce(3 * x, 0, int) * 1.0


def add_accumulate_dtype_int(x):
    return np.sum(np.add.accumulate(3 * x, 0, int) * x)


def maximum_reduce_dtype_int(x):
    return np.maximum.reduce(3 * x, 0, int) * 1.0


def full_dtype_int(x):
    return np.sum(np.full(4, 3 * x[0], dtype=int) * x)


def full_dtype_in_position(x):
    return np.sum(np.full(4, 3 * x[0], int) * x)


def full_like_dtype_int(x):
    return np.sum(np.full_like(x, 3 * x[0], dtype=int) * x)


def full_like_of_an_integer_array(x):
    return np.sum(np.full_like(x.astype(int), 3 * x[0]) * x)


def linspace_dtype_int(x):
    return np.sum(np.linspace(3 * x[2], 10.0, 5, dtype=int) * 1.0)


def integer_scalar_types(x):
    return float(np.int64(3 * x[0])) * x[1] + float(np.int32(3 * x[2])) + float(np.bool_(x[3])) * x[3]


def through_a_helper(x):
    return np.sum(_to_int32(3 * x) * x)


def _to_int32(v):
    return v.astype(np.int32)


CASTS = [
    astype_int, astype_int_string, astype_np_int32, astype_uint8, astype_bool,
    astype_dtype_keyword, astype_dtype_of_an_integer_array, astype_dtype_in_a_local,
    asarray_dtype_int, asarray_dtype_in_position, asarray_dtype_string, asanyarray_dtype_int,
    array_dtype_int8, array_of_a_scalar, array_dtype_np_dtype, array_of_a_list,
    sum_dtype_int, sum_dtype_in_position, sum_method_dtype_int, cumsum_dtype_int,
    cumprod_dtype_int, prod_dtype_int, mean_dtype_int, std_dtype_int, nansum_dtype_int,
    trace_dtype_int, add_reduce_dtype_int, add_accumulate_dtype_int, maximum_reduce_dtype_int,
    full_dtype_int, full_dtype_in_position, full_like_dtype_int, full_like_of_an_integer_array,
    linspace_dtype_int, integer_scalar_types, through_a_helper,
]


@pytest.mark.parametrize("fn", CASTS, ids=lambda f: f.__name__)
def test_a_cast_to_integers_has_no_gradient(fn):
    agrees(fn)


def test_the_cast_alone_gives_zero():
    """The repro: (3x).astype(int) summed has the gradient 0 everywhere, not 3."""
    for fn in (astype_int, sum_dtype_int, slice_write):
        g = ad.gradient(fn, X)[0]
        assert g is None or not np.any(g), (fn.__name__, g)


# ----- writes into integer and bool arrays ----------------------------------------------------
def slice_write(x):
    k = np.zeros(4, dtype=int)
    k[:] = 3 * x
    return np.sum(k * 1.0)


def item_write(x):
    k = np.zeros(4, dtype=int)
    k[1] = 3 * x[1]
    return np.sum(k * x)


def mask_write(x):
    k = np.zeros(4, dtype=int)
    k[x > 0] = 3 * x[x > 0]
    return np.sum(k * x)


def index_array_write(x):
    k = np.zeros(4, dtype=int)
    k[[0, 2]] = 3 * x[[1, 3]]
    return np.sum(k * x)


def row_write(x):
    k = np.zeros((2, 2), dtype=int)
    k[0] = 3 * x[:2]
    return np.sum(k * x.reshape(2, 2))


def writes_in_a_loop(x):
    k = np.zeros(4, dtype=int)
    for i in range(4):
        k[i] += 3 * x[i]
    return np.sum(k * x)


def rows_written_in_a_loop(x):
    k = np.zeros((2, 2), dtype=np.int32)
    for i in range(2):
        k[i] = 3 * x[2 * i: 2 * i + 2]
    return np.sum(k * x.reshape(2, 2))


def bool_mask_buffer(x):
    k = np.zeros(4, dtype=bool)
    k[:] = x
    return np.sum(k * x)


def into_an_astype_result(x):
    k = x.astype(int)
    k[0] = 3 * x[0]
    return np.sum(k * x)


def into_an_arange(x):
    k = np.arange(4)
    k[1:3] = 3 * x[1:3]
    return np.sum(k * x)


def into_a_field():
    class Box:
        def __init__(self):
            self.k = np.zeros(4, dtype=int)

    def fn(x):
        b = Box()
        b.k[1] = 3 * x[1]
        return np.sum(b.k * x)

    return fn


def int_buffer_then_float_buffer(x):
    k = np.zeros(4, dtype=int)
    k[:] = 3 * x
    y = np.zeros(4)
    y[:] = 3 * x  # a float array keeps the gradient
    return np.sum(k * x) + np.sum(y * x)


WRITES = [
    slice_write, item_write, mask_write, index_array_write, row_write, writes_in_a_loop,
    rows_written_in_a_loop, bool_mask_buffer, into_an_astype_result, into_an_arange,
    into_a_field(), int_buffer_then_float_buffer,
]


@pytest.mark.parametrize("fn", WRITES, ids=lambda f: f.__name__)
def test_a_write_into_integers_has_no_gradient(fn):
    agrees(fn)


def test_a_write_into_an_integer_argument():
    def fn(x, k):
        k[0] = 3 * x[0]
        k[2] = 5 * x[2]
        return np.sum(k * x)

    got = ad.gradient(fn, X, np.array([1, 2, 3, 4]))[0]
    k = np.array([1, 2, 3, 4])
    k[0], k[2] = int(3 * X[0]), int(5 * X[2])
    assert np.allclose(got, k), got  # the written values are constants: x's gradient is k


# ----- the realistic case: quantisation ------------------------------------------------------
def quantised(x, w=0.7):
    centers = ((x / w).astype(int) + 0.5) * w
    return np.sum((x - centers) ** 2)


def quantised_by_a_loop(x, w=0.7):
    bins = np.zeros(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        bins[i] = x[i] / w
    centers = (bins + 0.5) * w
    return np.sum((x - centers) ** 2)


@pytest.mark.parametrize("fn", [quantised, quantised_by_a_loop], ids=lambda f: f.__name__)
def test_quantisation_error(fn):
    x = np.array([0.2, 0.9, 1.3, 2.5, 3.1])
    centers = ((x / 0.7).astype(int) + 0.5) * 0.7
    g = ad.gradient(fn, x)[0]
    assert np.allclose(g, 2 * (x - centers)), g
    agrees(fn, x)


def test_quantisation_second_order():
    """The Hessian of the quantisation error is 2·I (the centers are constants)."""
    x = np.array([0.2, 0.9, 1.3, 2.5])
    assert np.allclose(ad.hessian(quantised, x), 2 * np.eye(4))
    jac = ad.jacobian(lambda v: (3 * v).astype(int) * v, x)[0]
    assert np.allclose(jac, np.diag((3 * x).astype(int)))


# ----- casts that keep the gradient --------------------------------------------------------------
def test_float_casts_keep_the_gradient():
    fns = [
        lambda x: np.sum((3 * x).astype(np.float32) * 1.0),
        lambda x: np.sum((3 * x).astype("float32") * 1.0),
        lambda x: np.sum(np.asarray(3 * x, dtype=np.float32) * 1.0),
        lambda x: np.sum(3 * x, dtype=np.float32) * 1.0,
        lambda x: np.sum(np.full_like(x, 3 * x[0], dtype=np.float32)) / 4 + 3 * np.sum(x[1:]),
        lambda x: np.sum((3 * x).astype(x.dtype)),
        lambda x: np.sum((3 * x).astype(float)),
        lambda x: np.sum(np.asarray(3 * x, dtype=float)),
    ]
    for fn in fns:
        assert np.allclose(ad.gradient(fn, X)[0], 3.0, rtol=1e-6), fn


def test_complex_casts_keep_the_gradient():
    """|x·(1 + 2i)|² = 5x²: the gradient 10x (complex64 rounds: no finite differences)."""
    for fn in (lambda x: np.sum(np.abs((x * (1 + 2j)).astype(np.complex64)) ** 2),
               lambda x: np.sum(np.abs(np.asarray(x, dtype=complex) * (1 + 2j)) ** 2)):
        assert np.allclose(ad.gradient(fn, X)[0], 10 * X, rtol=1e-6), fn


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_complex_to_real_drops_the_imaginary_part():
    z = np.array([0.2 + 0.5j, -0.9 + 0.1j])
    want = ad.gradient(lambda z: np.sum(np.real(z * z)), z)[0]
    for fn in (lambda z: np.sum((z * z).astype(float)), lambda z: np.sum(np.asarray(z * z, dtype=float))):
        got = ad.gradient(fn, z)[0]
        assert np.allclose(got, want), got
        assert np.allclose(got, numerical_gradient(fn, z)[0], atol=1e-6)
    got = ad.gradient(lambda z: np.sum((z * z).astype(int) * 1.0), z)[0]
    assert got is None or not np.any(got), got


def test_integer_arguments_still_count_as_numbers():
    """No cast, no change: an integer argument's gradient through arithmetic (2k) and a
    float array's gradient through an integer one (k)."""
    k = np.array([1, 2, 3])
    assert np.allclose(ad.gradient(lambda k: np.sum(k * k), k)[0], 2 * k)
    assert np.allclose(ad.gradient(lambda x, k: np.sum(x * k), np.ones(3), k)[0], k)


def test_a_written_out_cast_is_a_constant_in_the_generated_code():
    """dtype written out (int, "int64"): the result is known now to carry no gradient, the
    generated code calls astype plainly and its pullback has nothing to do."""
    text = ad.show_adjoint(astype_int, X)
    assert ".astype(int)" in text and "_rt.call_method" not in text, text
    assert "return (None, None)" in text, text
    text = ad.show_adjoint(asarray_dtype_string, X)
    assert "np.asarray(mul, dtype='int64')" in text and "asarray_mul_pullback" not in text, text


def test_second_order_through_a_run_time_cast():
    """The run-time rule of a call with dtype= (differentiated again at second order)
    reads the dtype: sum(x)·sum(x, dtype=float) has the Hessian 2 (every entry); with
    dtype=int the second factor is a constant: none."""
    d = np.dtype(float)
    h = ad.hessian(lambda x: np.sum(x * np.sum(x, dtype=d)), X)
    assert np.allclose(h, 2 * np.ones((4, 4))), h
    d = np.dtype(int)
    h = ad.hessian(lambda x: np.sum(x * np.sum(3 * x, dtype=d)), X)
    assert np.allclose(h, 0), h
