"""The adjoint of a read ``x[idx]`` stays a ``runtime.project.Scattered`` (g at idx, zeros
elsewhere) while only ``unbroadcast``, unary minus and ``acc`` read it: passes/sparse.py
decides where, the runtime adds it position by position. It must give what the written-out
array gives, never reach a rule or the user, and never change an array another name holds."""

import ast
import sys

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import emit, runtime
from adjoint_s2s.passes.sparse import sparse_scatters
from adjoint_s2s.testing import numerical_gradient

RNG = np.random.default_rng(5)
ROWS = np.arange(6)
COLS = np.array([3, 0, 4, 4, 1, 2])
NEG = np.array([-1, 0, -5, 2, -2, 1])


# ----- the functions: a gather whose array has other uses -----------------------------

def xent(logits):
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(logp[ROWS, COLS])


def negative_and_repeated(x):
    y = x * x
    return np.sum(np.sin(y)) + np.sum(y[ROWS, NEG] * y[ROWS, NEG])


def repeated_rows(x):
    y = np.tanh(x)
    t = np.sum(y, axis=1) @ np.arange(6.0)
    r = y[np.array([0, 0, 2, 5, 5, 5]), COLS]  # the same element twice: the adjoints add
    return t + np.sum(r ** 2)


def broadcast_index(x):
    y = np.exp(x)
    t = np.sum(y - np.mean(y, axis=0, keepdims=True)) ** 2
    block = y[np.array([[0], [3]]), np.array([[1, 2, 4]])]  # index arrays that broadcast
    return t + np.sum(block * block)


def slice_read(x):
    y = x * 3.0
    return -np.sum(np.cos(y)) + np.sum(y[1:4] ** 3)


def row_sum_of_gather(x):
    y = np.sin(x)
    s = y - np.sum(y, axis=1, keepdims=True)
    return np.sum(s * s) + np.sum(s[ROWS, COLS])


def whole_sum_of_gather(x):
    y = x * 2.0
    s = y - np.sum(y)  # unbroadcast to a float: the sum of the nonzeros
    return np.sum(s[ROWS, COLS] ** 2)


def gather_only(x):
    return np.sum(x[ROWS, COLS] ** 2)


def gather_in_loop(x):
    total = 0.0
    for i in range(3):
        total = total + np.sum(x * x) + np.sum(x[ROWS, COLS] * i)
    return total


def float32_gather(x):
    y = x * np.float32(2.0)
    return np.sum(y) + np.sum(y[ROWS, COLS] ** 2)


CASES = [xent, negative_and_repeated, repeated_rows, broadcast_index, slice_read,
         row_sum_of_gather, whole_sum_of_gather]


def generated(fn, *args):
    return emit.source_of(fn, runtime.kinds_of(args)).source


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_sparse_adjoint_matches_finite_differences(fn):
    x = RNG.standard_normal((6, 5))
    assert "getitem_grad_sparse" in generated(fn, x)  # the case this file is about
    got = ad.gradient(fn, x)[0]
    assert type(got) is np.ndarray and got.flags.writeable
    np.testing.assert_allclose(got, numerical_gradient(fn, x)[0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_second_order_through_a_sparse_adjoint(fn):
    """Differentiated again, the scatter is written out (the Scattered is first order)."""
    x = RNG.standard_normal((6, 5))
    u = RNG.standard_normal((6, 5))

    def directional(x):
        return np.sum(ad.gradient(fn, x)[0] * u)

    got = ad.gradient(directional, x)[0]
    np.testing.assert_allclose(got, numerical_gradient(directional, x)[0], rtol=1e-5, atol=1e-6)


def test_pullback_given_an_array_seed_and_called_twice():
    x = RNG.standard_normal((6, 5))
    y, back = ad.pullback(row_sum_of_gather, x)
    first = back(1.0)[0].copy()
    again = back(1.0)[0]
    np.testing.assert_array_equal(first, again)  # nothing saved was written into
    np.testing.assert_allclose(back(2.5)[0], 2.5 * first)


def test_no_sparse_form_where_it_gains_nothing_or_cannot_be_followed():
    x = RNG.standard_normal((6, 5))
    assert "getitem_grad_sparse" not in generated(gather_only, x)  # returned as it is
    assert "getitem_grad_sparse" not in generated(gather_in_loop, x)  # in a loop
    np.testing.assert_allclose(
        ad.gradient(gather_in_loop, x)[0], numerical_gradient(gather_in_loop, x)[0], rtol=1e-6)


def test_float32_gather_keeps_its_dtype():
    x = RNG.standard_normal((6, 5)).astype(np.float32)
    got = ad.gradient(float32_gather, x)[0]
    assert got.dtype == np.float32
    want = numerical_gradient(float32_gather, x.astype(np.float64))[0]
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


# ----- the pass on its own ----------------------------------------------------------------

PULLBACK = '''\
def pullback(g, a, b, idx):
    b_y = _rt.getitem_grad(a, idx, g)
    if b_y is not None:
        b_x = _rt.unbroadcast(b_y, a)
        b_m = -_rt.unbroadcast(b_y, b)
    else:
        b_x = None
        b_m = None
    b_y = None
    b_x = _rt.acc(b_x, g * 2)
    b_w = b_m * 3  # an arithmetic read: written out first
    return (b_x, b_m, b_w)
'''


def test_pass_follows_names_and_writes_out_other_reads():
    out = sparse_scatters(PULLBACK)
    ast.parse(out)
    assert "b_y = _rt.getitem_grad_sparse(a, idx, g)" in out
    assert "b_w = _rt.dense(b_m) * 3  # an arithmetic read: written out first" in out
    assert "return (b_x, _rt.dense(b_m), b_w)" in out  # b_x is an acc result: an array
    assert "_rt.unbroadcast(b_y, a)" in out  # the readers that take one are left alone


def test_pass_rebinding_by_tuple_assignment_ends_the_sparse_value():
    src = ("def pullback(g, a, idx, h):\n"
           "    b_x = _rt.getitem_grad(a, idx, g)\n"
           "    b_z = _rt.unbroadcast(b_x, a)\n"
           "    b_y, b_x = _rt.setitem_grad(b_z, a, 0, h)\n"
           "    return (b_x, b_y)\n")
    out = sparse_scatters(src)
    assert "_rt.getitem_grad_sparse(a, idx, g)" in out
    assert "_rt.setitem_grad(_rt.dense(b_z), a, 0, h)" in out
    assert "return (b_x, b_y)" in out  # both rebound to arrays


@pytest.mark.parametrize("reader", [
    "    for i in range(2):\n        b_q = b_x + i\n",  # a loop reads it
    "    f = lambda: b_x\n",  # a nested function reads it
    "    b_x += 1\n",  # written in place
])
def test_pass_leaves_an_array_where_it_cannot_follow(reader):
    src = ("def pullback(g, a, idx):\n"
           "    b_x = _rt.getitem_grad(a, idx, g)\n"
           "    b_z = _rt.acc(b_x, g)\n" + reader + "    return (b_z,)\n")
    assert sparse_scatters(src) == src


# ----- the runtime pieces -------------------------------------------------------------------

SCATTERS = [
    ((6, 5), (ROWS, COLS)),
    ((6, 5), (ROWS, NEG)),
    ((6, 5), (np.array([0, 0, 5, 5]), np.array([1, 1, 2, 2]))),  # repeated positions
    ((6, 5), (np.array([[0], [3]]), np.array([[1, 2, 4]]))),
    ((6, 5), (slice(1, 4),)),
    ((6, 5), 2),
    ((6, 5, 3), (ROWS, COLS, np.array([0, 2, 1, 0, 2, 2]))),
    ((8,), (np.array([1, -1, 1]),)),
]


def _scattered(shape, idx):
    obj = np.zeros(shape)
    g = RNG.standard_normal(np.shape(obj[idx]))
    dense = runtime.getitem_grad(obj, idx, g)
    return obj, runtime.getitem_grad_sparse(obj, idx, g), dense


@pytest.mark.parametrize("shape, idx", SCATTERS)
def test_reductions_of_a_scattered_match_the_array(shape, idx):
    obj, s, dense = _scattered(shape, idx)
    assert type(s) is runtime.project.Scattered
    likes = [np.zeros(shape), np.zeros((1,) * len(shape)), np.zeros(shape[1:]), 0.0]
    if len(shape) > 1:
        likes += [np.zeros(shape[:-1] + (1,)), np.zeros((1,) + shape[1:])]
    for like in likes:
        np.testing.assert_allclose(
            runtime.dense(runtime.unbroadcast(s, like)), runtime.unbroadcast(dense, like),
            rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(runtime.dense(-s), -dense)


@pytest.mark.parametrize("shape, idx", SCATTERS)
def test_acc_with_a_scattered_is_an_array_and_spares_shared_ones(shape, idx):
    obj, s, dense = _scattered(shape, idx)
    other = RNG.standard_normal(shape)
    held = other.copy()
    keep = held  # a second name: acc must not write into it
    for got in (runtime.acc(held, s), runtime.acc(s, held), runtime.acc(None, s),
                runtime.acc(s, None), runtime.acc(s, s)):
        assert type(got) is np.ndarray
    np.testing.assert_allclose(runtime.acc(held, s), other + dense)
    np.testing.assert_allclose(runtime.acc(s, held), other + dense)
    np.testing.assert_allclose(runtime.acc(s, s), 2 * dense)
    np.testing.assert_array_equal(keep, other)  # untouched


def test_acc_adds_in_place_into_a_private_or_temporary_array():
    obj, s, dense = _scattered((6, 5), (ROWS, COLS))
    b = RNG.standard_normal((6, 5))
    want = b + dense
    first = id(b)
    b = runtime.acc(b, s)  # only this variable holds b
    assert id(b) == first
    np.testing.assert_allclose(b, want)
    got = runtime.acc(s, np.ones((6, 5)) * 2.0)  # a temporary
    np.testing.assert_allclose(got, 2.0 + dense)
    assert sys.getrefcount(got) == 2


def test_no_scattered_for_what_it_does_not_cover():
    assert type(runtime.getitem_grad_sparse([1.0, 2.0], 0, 1.0)) is not runtime.project.Scattered
    ints = np.arange(6)
    assert type(runtime.getitem_grad_sparse(ints, 1, 1.0)) is np.ndarray  # integers
    c = np.zeros(4)
    assert type(runtime.getitem_grad_sparse(c, 1, 1.0 + 2.0j)) is np.ndarray  # complex g
