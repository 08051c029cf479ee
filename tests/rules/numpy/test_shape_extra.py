"""The rules of rules/numpy/shape_extra.py: meshgrid, ix_ (no gradient), block, ptp,
vander, insert, delete, diff's prepend=/append=, pad's modes mean and linear_ramp.

Each row is checked against central differences (adjoint_s2s.testing.numerical_gradient)
with the value under adjoint_s2s.pullback equal to the plain call, inline (arrays the
transformer sees) and at run time (the call made through the rule's run-time pair);
second order by the Hessian against differences of the (checked) gradient; the forms
the rules refuse by their error and its words.
"""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import MissingAdjointError
from adjoint_s2s.testing import isapprox, numerical_gradient

from .test_rules import _opaque

_rng = np.random.default_rng(7)
V4 = np.array([0.3, 1.2, -0.7, 2.0])
V3 = np.array([0.5, -1.1, 0.8])
M23 = _rng.normal(size=(2, 3))
M34 = _rng.normal(size=(3, 4))
M22 = _rng.normal(size=(2, 2))
M21 = _rng.normal(size=(2, 1))
T234 = _rng.normal(size=(2, 3, 4))
W = {s: _rng.normal(size=s) for s in [(3,), (4,), (5,), (6,), (7,), (2, 3), (3, 4), (4, 3),
                                       (4, 4), (3, 3), (4, 6), (6, 8), (5, 4), (3, 5), (4, 5),
                                       (2, 3, 4), (3, 4, 3), (5, 7), (2, 6)]}


def _w(y):
    """Weights of y's shape (fixed), so that every output element matters differently."""
    y = np.asarray(y)
    return W[y.shape] if y.shape in W else np.cos(np.arange(y.size).reshape(y.shape) + 0.5)


def _sum(y):
    return np.sum(_w(y) * np.sin(y))


# ----- rows: (id, f, args) ---------------------------------------------------------------------

def _meshgrid_xy(x, y):
    X, Y = np.meshgrid(x, y)
    return _sum(X * Y ** 2) + _sum(X)


def _meshgrid_ij(x, y):
    X, Y = np.meshgrid(x, y, indexing="ij")
    return _sum(X * np.cos(Y))


def _meshgrid_sparse(x, y):
    X, Y = np.meshgrid(x, y, sparse=True)
    return _sum(X * Y + X ** 2)


def _meshgrid_sparse_ij(x, y, z):
    X, Y, Z = np.meshgrid(x, y, z, sparse=True, indexing="ij")
    return _sum(X * Y * Z)


def _meshgrid_three(x, y, z):
    X, Y, Z = np.meshgrid(x, y, z, copy=False)
    return _sum(X + Y * Z)


def _meshgrid_one(x):
    (X,) = np.meshgrid(x)
    return _sum(X ** 2)


def _meshgrid_matrix_input(A, y):
    X, Y = np.meshgrid(A, y)  # A is flattened
    return _sum(X * Y)


def _meshgrid_one_output_used(x):
    return _sum(np.meshgrid(x, x ** 2)[1])


def _ix(A):
    return _sum(A[np.ix_([0, 2], [1, 2, 3])] ** 2)


def _ix_bool(A):
    return _sum(A[np.ix_(np.array([True, False, True]), [0, 3])])


def _block_2d(A, B, C):
    return _sum(np.block([[A, B], [C]]))


def _block_1d(a, b):
    return _sum(np.block([a, b, 2.0]))


def _block_numbers(a):
    return _sum(np.block([[a[0], a[1]], [a[1] * a[2], 3.0]]))


def _block_3d(T, U):
    return _sum(np.block([[[T, U]], [[U, T]]]))


def _block_promoted(A, b):
    return _sum(np.block([[A], [b]]))  # b (1-D) becomes a row


def _block_list_arg(L):
    return _sum(np.block(L))


def _ptp(a):
    return np.ptp(a ** 2)


def _ptp_axis0(A):
    return _sum(np.ptp(A, axis=0))


def _ptp_axis1_keep(A):
    return _sum(np.ptp(np.sin(A), axis=1, keepdims=True))


def _ptp_axes(T):
    return _sum(np.ptp(T, axis=(0, 2)))


def _vander(x):
    return _sum(np.vander(x))


def _vander_n(x):
    return _sum(np.vander(x, 5))


def _vander_inc(x):
    return _sum(np.vander(x, N=3, increasing=True))


def _insert_int(v, s):
    return _sum(np.insert(v, 1, s * 2))


def _insert_negative(v, w):
    return _sum(np.insert(v, -1, w))


def _insert_slice(v, w):
    return _sum(np.insert(v, slice(0, 3), w[:3]))


def _insert_list(v, w):
    return _sum(np.insert(v, [0, 2, 2, 4], w[:4]))


def _insert_flat(A, s):
    return _sum(np.insert(A, 3, s))  # axis None: A flattened


def _insert_axis0(A, b):
    return _sum(np.insert(A, 1, b, axis=0))


def _insert_axis1_broadcast(A, s):
    return _sum(np.insert(A, [0, 2], s, axis=1))  # one number fills both columns


def _insert_axis1_column(A, c):
    return _sum(np.insert(A, 1, c, axis=1))


def _insert_mask(v, s):
    return _sum(np.insert(v, np.array([True, False, True, False]), s))


def _delete_int(v):
    return _sum(np.delete(v, 1))


def _delete_slice(v):
    return _sum(np.delete(v, slice(0, None, 2)))


def _delete_list(A):
    return _sum(np.delete(A, [0, 2, 5]))


def _delete_mask(v):
    return _sum(np.delete(v, np.array([True, False, False, True])))


def _delete_axis(A):
    return _sum(np.delete(A, [0, 3], axis=1))


def _delete_axis0(A):
    return _sum(np.delete(A, -1, axis=0))


def _diff_prepend_number(v):
    return _sum(np.diff(v, prepend=0.5))


def _diff_append_number(v):
    return _sum(np.diff(v, append=v[0]))


def _diff_both(v, p, q):
    return _sum(np.diff(v, 2, prepend=p, append=q))


def _diff_matrix(A, p):
    return _sum(np.diff(A, axis=0, prepend=p))


def _diff_matrix_number(A, s):
    return _sum(np.diff(A, n=2, axis=1, append=s))


def _diff_zero_order(v, p):
    return _sum(np.diff(v, 0, prepend=p)) + p  # (n = 0: a itself, prepend unused)


def _pad_mean(v):
    return _sum(np.pad(v, 2, mode="mean"))


def _pad_mean_stat(v):
    return _sum(np.pad(v, (2, 1), mode="mean", stat_length=2))


def _pad_mean_2d(A):
    return _sum(np.pad(A, ((1, 2), (2, 1)), mode="mean"))


def _pad_mean_2d_stat(A):
    return _sum(np.pad(A, 1, "mean", stat_length=((1, 2), (3, 9))))


def _pad_ramp(v):
    return _sum(np.pad(v, 2, mode="linear_ramp"))


def _pad_ramp_end(v, e):
    return _sum(np.pad(v, (3, 2), mode="linear_ramp", end_values=e))


def _pad_ramp_2d(A, e):
    return _sum(np.pad(A, ((1, 2), (2, 1)), mode="linear_ramp", end_values=e))


def _pad_ramp_pairs(A, e):
    return _sum(np.pad(A, 2, mode="linear_ramp", end_values=e))


def _pad_ramp_one_side(A):
    return _sum(np.pad(A, ((0, 2), (1, 0)), mode="linear_ramp", end_values=(1.5, -2.0)))


def _pad_dict_widths(A):
    """pad_width as {axis: width} (NumPy 2.3): for mean, linear_ramp and constant."""
    return (_sum(np.pad(A, {0: (1, 2)}, mode="mean"))
            + _sum(np.pad(A, {-1: 2}, mode="linear_ramp", end_values=0.3))
            + _sum(np.pad(A, {1: (0, 2)}, constant_values=0.3)))


E22 = np.array([[0.4, -1.0], [2.0, 0.7]])
ROWS = [
    ("meshgrid_xy", _meshgrid_xy, (V4, V3)),
    ("meshgrid_ij", _meshgrid_ij, (V4, V3)),
    ("meshgrid_sparse", _meshgrid_sparse, (V4, V3)),
    ("meshgrid_sparse_ij", _meshgrid_sparse_ij, (V3, V4, np.array([0.2, -0.4]))),
    ("meshgrid_three", _meshgrid_three, (V3, V4, np.array([0.2, -0.4]))),
    ("meshgrid_one", _meshgrid_one, (V4,)),
    ("meshgrid_matrix_input", _meshgrid_matrix_input, (M23, V4)),
    ("meshgrid_one_output_used", _meshgrid_one_output_used, (V3,)),
    ("ix", _ix, (M34,)),
    ("ix_bool", _ix_bool, (M34,)),
    ("block_2d", _block_2d, (M22, M21, V3)),
    ("block_1d", _block_1d, (V3, V4)),
    ("block_numbers", _block_numbers, (V3,)),
    ("block_3d", _block_3d, (T234, _rng.normal(size=(2, 3, 2)))),
    ("block_promoted", _block_promoted, (M23, V3)),
    ("block_list_arg", _block_list_arg, ([[M22, M21], [M21.T, np.array([[0.3]])]],)),
    ("ptp", _ptp, (V4,)),
    ("ptp_axis0", _ptp_axis0, (M34,)),
    ("ptp_axis1_keep", _ptp_axis1_keep, (M34,)),
    ("ptp_axes", _ptp_axes, (T234,)),
    ("vander", _vander, (V4,)),
    ("vander_n", _vander_n, (np.array([0.0, 1.3, -0.6]),)),
    ("vander_inc", _vander_inc, (V4,)),
    ("insert_int", _insert_int, (V4, 0.7)),
    ("insert_negative", _insert_negative, (V4, V3)),
    ("insert_slice", _insert_slice, (V4, V3)),
    ("insert_list", _insert_list, (V4, V4[::-1].copy())),
    ("insert_flat", _insert_flat, (M23, 0.4)),
    ("insert_axis0", _insert_axis0, (M23, V3)),
    ("insert_axis1_broadcast", _insert_axis1_broadcast, (M23, 0.9)),
    ("insert_axis1_column", _insert_axis1_column, (M23, np.array([[0.1], [-0.2]]))),
    ("insert_mask", _insert_mask, (V4, -0.3)),
    ("delete_int", _delete_int, (V4,)),
    ("delete_slice", _delete_slice, (V4,)),
    ("delete_list", _delete_list, (M23,)),
    ("delete_mask", _delete_mask, (V4,)),
    ("delete_axis", _delete_axis, (M34,)),
    ("delete_axis0", _delete_axis0, (M34,)),
    ("diff_prepend_number", _diff_prepend_number, (V4,)),
    ("diff_append_number", _diff_append_number, (V4,)),
    ("diff_both", _diff_both, (V4, 0.3, V3)),
    ("diff_matrix", _diff_matrix, (M34, np.array([[0.2, -0.1, 0.5, 1.0]]))),
    ("diff_matrix_number", _diff_matrix_number, (M34, -0.8)),
    ("diff_zero_order", _diff_zero_order, (V4, 0.3)),
    ("pad_mean", _pad_mean, (V4,)),
    ("pad_mean_stat", _pad_mean_stat, (V4,)),
    ("pad_mean_2d", _pad_mean_2d, (M34,)),
    ("pad_mean_2d_stat", _pad_mean_2d_stat, (M34,)),
    ("pad_ramp", _pad_ramp, (V4,)),
    ("pad_ramp_end", _pad_ramp_end, (V4, 1.5)),
    ("pad_ramp_end_pair", _pad_ramp_end, (V4, np.array([1.5, -0.5]))),
    ("pad_ramp_2d", _pad_ramp_2d, (M34, 0.6)),
    ("pad_ramp_pairs", _pad_ramp_pairs, (M34, E22)),
    ("pad_ramp_pair_all_axes", _pad_ramp_pairs, (M34, np.array([0.6, -1.2]))),
    ("pad_ramp_one_side", _pad_ramp_one_side, (M34,)),
    ("pad_dict_widths", _pad_dict_widths, (M34,)),
]


def _numbers(args):
    return [float(a) if isinstance(a, float) else a for a in args]


def _leaves(x):
    if isinstance(x, (list, tuple)):
        return [v for e in x for v in _leaves(e)]
    return [x]


def _check(f, args, got):
    want = numerical_gradient(f, *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        gs, ws = _leaves(g), _leaves(w)
        assert len(gs) == len(ws)
        for a, b in zip(gs, ws):
            assert np.shape(a) == np.shape(b) and isapprox(a, b, rtol=1e-6, atol=1e-7), (g, w)


@pytest.mark.parametrize("name, f, args", ROWS, ids=[r[0] for r in ROWS])
def test_first_order(name, f, args):
    args = _numbers(args)
    y, back = ad.pullback(f, *args)
    assert y == f(*args)
    _check(f, args, back(1.0))


@pytest.mark.parametrize("name, f, args", ROWS, ids=[r[0] for r in ROWS])
def test_value_and_gradient_at_run_time(name, f, args):
    """Arrays of a kind the transformer does not know: the rules' run-time pairs."""
    args = _numbers(args)
    y, back = ad.pullback(f, *[_opaque(a) for a in args])
    assert y == f(*args)
    _check(f, args, back(1.0))


def _hess_rows():
    out = []
    for name, f, args in ROWS:
        if isinstance(args[0], np.ndarray) and args[0].ndim == 1 and not name.startswith("ix"):
            out.append((name, f, args))
    return out


@pytest.mark.parametrize("name, f, args", _hess_rows(), ids=[r[0] for r in _hess_rows()])
def test_second_order(name, f, args):
    rest = list(args[1:])

    def first(x):
        return f(x, *rest)

    H = ad.hessian(first, args[0])
    for i in range(args[0].size):
        row = numerical_gradient(lambda x: ad.gradient(first, x)[0][i], args[0])[0]
        assert isapprox(H[i], row, rtol=1e-5, atol=1e-6), (name, i, H[i], row)


def test_second_order_matrices():
    """Hessians in a matrix argument: block, ptp (zero: piecewise linear), insert, pad."""
    for f in (lambda A: _sum(np.block([[A, A ** 2]]) ** 2),
              lambda A: np.sum(np.ptp(A, axis=1) ** 2),
              lambda A: _sum(np.insert(A, 1, A[:, 0] ** 2, axis=1)),
              lambda A: _sum(np.delete(A, 1, axis=0) ** 2),
              lambda A: _sum(np.pad(A, 1, mode="mean") ** 2),
              lambda A: _sum(np.pad(A, (1, 2), mode="linear_ramp", end_values=A[0, 0]) ** 2)):
        H = ad.hessian(f, M23)
        for i in range(M23.size):
            idx = np.unravel_index(i, M23.shape)
            row = numerical_gradient(lambda x: ad.gradient(f, x)[0][idx], M23)[0]
            assert isapprox(H[idx], row, rtol=1e-5, atol=1e-6), (f, idx)


# ----- equal to the neighbouring rules ---------------------------------------------------------


@pytest.mark.parametrize("a, axis", [(np.array([1.0, 3.0, 3.0, 0.0, 0.0, 0.0]), None),
                                     (np.array([[2.0, 2.0], [1.0, 5.0], [2.0, 5.0]]), 0),
                                     (np.array([[2.0, 2.0], [1.0, 5.0], [2.0, 5.0]]), 1)])
def test_ptp_ties_split_as_max_and_min(a, axis):
    """Ties: the gradient of ptp is exactly that of max minus that of min."""
    w = np.arange(1.0, 1.0 + np.size(np.ptp(a, axis=axis)))
    (got,) = ad.gradient(lambda x: np.sum(w * np.ptp(x, axis=axis)), a)
    (hi,) = ad.gradient(lambda x: np.sum(w * np.max(x, axis=axis)), a)
    (lo,) = ad.gradient(lambda x: np.sum(w * np.min(x, axis=axis)), a)
    np.testing.assert_array_equal(got, hi - lo)


def test_ptp_constant_is_zero():
    (g,) = ad.gradient(lambda x: np.ptp(x), np.full(3, 2.0))
    np.testing.assert_array_equal(g, np.zeros(3))


def test_ix_results_carry_no_gradient():
    y, back = ad.pullback(lambda A: A[np.ix_([0, 2], [1, 2])], M34)
    np.testing.assert_array_equal(y, M34[np.ix_([0, 2], [1, 2])])
    (g,) = back(np.ones((2, 2)))
    want = np.zeros((3, 4))
    want[np.ix_([0, 2], [1, 2])] = 1.0
    np.testing.assert_array_equal(g, want)


def test_meshgrid_values_under_pullback():
    """The grids are NumPy's; with cotangents of ones, each input element gets the number
    of times it is repeated (the other input's length; 1 when sparse)."""
    for kw in ({}, {"indexing": "ij"}, {"sparse": True}, {"sparse": True, "indexing": "ij"}):
        y, back = ad.pullback(lambda a, b: np.meshgrid(a, b, **kw), V4, V3)
        want = np.meshgrid(V4, V3, **kw)
        assert len(y) == len(want)
        for p, q in zip(y, want):
            np.testing.assert_array_equal(p, q)
        ga, gb = back(tuple(np.ones_like(q) for q in want))
        sparse = kw.get("sparse", False)
        np.testing.assert_array_equal(ga, np.full(4, 1.0 if sparse else 3.0))
        np.testing.assert_array_equal(gb, np.full(3, 1.0 if sparse else 4.0))


def test_complex_inputs():
    """insert/delete/block/meshgrid/pad keep complex cotangents (no real part taken)."""
    z = V4 + 1j * V4[::-1]
    for f in (lambda v: np.sum(np.abs(np.insert(v, 2, v[0] * 1j)) ** 2),
              lambda v: np.sum(np.abs(np.delete(v, [0, 3])) ** 2),
              lambda v: np.sum(np.abs(np.block([v, v[:2]])) ** 2),
              lambda v: np.sum(np.abs(np.pad(v, 2, mode="linear_ramp", end_values=1j)) ** 2),
              lambda v: np.sum(np.abs(np.pad(v, 2, mode="mean")) ** 2),
              lambda v: np.sum(np.abs(np.diff(v, prepend=1j)) ** 2)):
        _check(f, [z], ad.gradient(f, z))


# ----- refused forms ---------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (NumPy's mean of no values)
def test_pad_stat_length_zero_is_refused():
    with pytest.raises(MissingAdjointError, match="stat_length"):
        ad.gradient(lambda v: np.sum(np.pad(v, 2, mode="mean", stat_length=0)), V4)


@pytest.mark.parametrize("mode", ["maximum", "minimum", "median"])
def test_other_stat_modes_stay_refused(mode):
    with pytest.raises(MissingAdjointError, match=f"mode='{mode}'"):
        ad.gradient(lambda v: np.sum(np.pad(v, 2, mode=mode)), V4)
    with pytest.raises(MissingAdjointError, match=f"mode='{mode}'"):
        ad.gradient(lambda v: np.sum(np.pad(v, 2, mode=mode, stat_length=2)), V4)


def test_diff_without_ends_is_the_former_rule():
    """np.diff(a) and np.diff(a, n, axis) still take the three-parameter variant."""
    from adjoint_s2s.rules import lookup_primitive
    assert len(lookup_primitive(np.diff, 1, ()).params) == 3
    assert len(lookup_primitive(np.diff, 3, ()).params) == 3
    assert len(lookup_primitive(np.diff, 1, ("prepend",)).params) == 5


# ----- rows of the rule tables (tests/rules/numpy/test_rules_more.py runs them: inline and
# at run time, real and complex, against finite differences with random cotangents; and
# tests/rules/test_second_order_sweep.py runs each at second order) ---------------------------


def f_meshgrid(x, y, indexing="xy", sparse=False):
    return np.meshgrid(x, y, indexing=indexing, sparse=sparse)


def f_meshgrid3(x, y, z, indexing="xy"):
    return np.meshgrid(x, y, z, indexing=indexing)


def f_block(a, b, c):
    return np.block([[a, b], [c]])


def f_block_flat(a, b):
    return np.block([a, b])


def f_ptp(a, axis=None, keepdims=False):
    return np.ptp(a, axis=axis, keepdims=keepdims)


def f_vander(x, N=None, increasing=False):
    return np.vander(x, N, increasing)


def f_insert(arr, values, obj, axis=None):
    return np.insert(arr, obj, values, axis)


def f_delete(arr, obj, axis=None):
    return np.delete(arr, obj, axis)


def f_diff_ends(a, p, q):
    return np.diff(a, prepend=p, append=q)


def f_diff_ends_axis(a, p, q):
    return np.diff(a, n=2, axis=0, prepend=p, append=q)


def f_pad_mean(a, stat_length=None):
    return np.pad(a, ((1, 2),) * np.ndim(a), mode="mean", stat_length=stat_length)


def f_pad_ramp(a, e):
    return np.pad(a, 2, mode="linear_ramp", end_values=e)


def _table_rows():
    from .test_rules import A, S, Row

    return [
        Row("meshgrid", np.meshgrid, f_meshgrid,
            [(A(3), A(2)), (A(3), A(2), "ij"), (A(3), A(2), "xy", True),
             (A(2, 2), A(3), "ij", True)], cplx=True),
        Row("meshgrid-3", np.meshgrid, f_meshgrid3,
            [(A(3), A(2), A(2)), (A(2), A(3), A(2), "ij")], cplx=True),
        Row("block", np.block, f_block,
            [(A(2, 2), A(2, 1), A(1, 3)), (A(2, 2), A(2, 1), A(3))], cplx=True),
        Row("block-flat", np.block, f_block_flat, [(A(3), A(2)), (A(2, 3), A(2, 2))], cplx=True),
        Row("ptp", np.ptp, f_ptp, [A(5), (A(3, 4), 0), (A(3, 4), 1, True), (A(2, 3, 4), (0, 2))]),
        Row("vander", np.vander, f_vander, [A(4), (A(3), 5), (A(4), 2, True)], cplx=True),
        Row("insert", np.insert, f_insert,
            [(A(5), S(), 2), (A(5), A(3), [0, 2, 5]), (A(2, 3), A(2), 1, 1),
             (A(2, 3), A(3), -1, 0), (A(2, 3), S(), slice(0, 2))], cplx=True),
        Row("delete", np.delete, f_delete,
            [(A(5), 1), (A(5), [0, 3]), (A(3, 4), [0, 2], 1), (A(3, 4), slice(0, None, 2), 0)],
            cplx=True),
        Row("diff-ends", np.diff, f_diff_ends, [(A(4), S(), A(2)), (A(2, 3), A(2, 1), S())],
            cplx=True),
        Row("diff-ends-axis", np.diff, f_diff_ends_axis, [(A(3, 4), A(1, 4), S())], cplx=True),
        Row("pad-mean", np.pad, f_pad_mean,
            [A(5), (A(3, 4), 2), (A(3, 4), ((1, 2), (3, 1)))], cplx=True),
        Row("pad-linear_ramp", np.pad, f_pad_ramp, [(A(5), S()), (A(3, 4), A(2)), (A(3, 4), A(2, 2))],
            cplx=True),
    ]
