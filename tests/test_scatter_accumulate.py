"""Adjoints that are zero but at a few positions (reading x[i], a max or min) are added
into the accumulator at those positions: ``_rt.acc_getitem_grad`` and
``_rt.acc_extremum_adjoint`` must give what ``acc(b, contribution)`` gives, and must
never change an accumulator that something else still holds."""

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import emit, runtime
from adjoint_s2s.testing import numerical_gradient

RNG = np.random.default_rng(11)


# (the helpers are called with plain positional arguments, as generated code calls them:
# a call with *args would hold the accumulator in a tuple too)
def private_call(helper, acc0, *args):
    """helper(b, ...) where the variable b is the only holder of the accumulator."""
    b = acc0.copy()
    first = id(b)
    if len(args) == 3:
        b = helper(b, args[0], args[1], args[2])
    else:
        b = helper(b, args[0], args[1], args[2], args[3], args[4])
    return b, id(b) == first


def shared_call(helper, acc0, *args):
    """helper(b, ...) while a second variable holds the accumulator too."""
    b = acc0.copy()
    seen = b
    if len(args) == 3:
        b = helper(b, args[0], args[1], args[2])
    else:
        b = helper(b, args[0], args[1], args[2], args[3], args[4])
    return b, seen, acc0


# ----- max / min ----------------------------------------------------------------------------

def _extremum_case(shape, axis, keepdims, twist, reduce=np.max):
    a = RNG.standard_normal(shape)
    if twist == "tie":  # two equal extrema in the first slice(s)
        a.reshape(-1)[:2] = 10.0 if reduce is np.max else -10.0
        if len(shape) > 1 and axis not in (None, -1, len(shape) - 1):
            a[(0,) * (len(shape) - 1)] = a[(1,) + (0,) * (len(shape) - 2)] = 10.0
    elif twist == "nan":
        a.reshape(-1)[1] = np.nan
    ans = reduce(a, axis=axis, keepdims=keepdims)
    g = RNG.standard_normal(np.shape(ans))
    return a, ans, g


EXTREMUM_CASES = [
    ((7,), None, False, ""),
    ((7,), 0, True, ""),
    ((5, 6), None, False, ""),
    ((5, 6), 1, True, ""),
    ((5, 6), -1, False, ""),
    ((5, 6), 0, False, ""),
    ((3, 4, 5), 2, True, ""),
    ((3, 4, 5), 1, False, ""),
    ((3, 4, 5), (0, 2), True, ""),
    ((5, 6), 1, True, "tie"),
    ((5, 6), None, False, "tie"),
    ((5, 6), 0, True, "tie"),
    ((5, 6), 1, False, "nan"),
    ((6,), None, False, "nan"),
]


@pytest.mark.parametrize("reduce", [np.max, np.min])
@pytest.mark.parametrize("shape, axis, keepdims, twist", EXTREMUM_CASES)
def test_acc_extremum_adjoint_is_acc_of_the_adjoint(shape, axis, keepdims, twist, reduce):
    a, ans, g = _extremum_case(shape, axis, keepdims, twist, reduce)
    acc0 = RNG.standard_normal(shape)
    want = acc0 + runtime.np_extremum_adjoint(g, a, ans, axis, keepdims)
    got, _same = private_call(runtime.acc_extremum_adjoint, acc0, g, a, ans, axis, keepdims)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    got, seen, before = shared_call(runtime.acc_extremum_adjoint, acc0, g, a, ans, axis, keepdims)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(seen, before)  # the other holder's array is unchanged


def test_acc_extremum_adjoint_writes_in_place_when_private_and_tie_free():
    a, ans, g = _extremum_case((40, 30), 1, True, "")
    _, same = private_call(runtime.acc_extremum_adjoint, np.zeros((40, 30)), g, a, ans, 1, True)
    assert same
    # a float32 accumulator would have to change type: the sum is a new array
    got, same = private_call(runtime.acc_extremum_adjoint, np.zeros((40, 30), np.float32), g, a, ans, 1, True)
    assert not same and got.dtype == np.float64


# ----- x[idx] -------------------------------------------------------------------------------

GETITEM_CASES = [
    ((6,), 2, "scalar"),
    ((6,), slice(1, 4), "array"),
    ((4, 5), (1, slice(None)), "array"),
    ((4, 5), (Ellipsis, 2), "array"),
    ((6,), np.array([0, 2, 2, 5]), "array"),  # repeated: both reads accumulate
    ((4, 5), (np.array([0, 1, 1, 3]), np.array([4, 0, 0, 2])), "array"),
    ((4, 5), "mask", "array"),
]


@pytest.mark.parametrize("shape, idx, gkind", GETITEM_CASES)
def test_acc_getitem_grad_is_acc_of_the_scatter(shape, idx, gkind):
    x = RNG.standard_normal(shape)
    if isinstance(idx, str):
        idx = x > 0
    part = x[idx]
    g = float(RNG.standard_normal()) if gkind == "scalar" else RNG.standard_normal(np.shape(part))
    acc0 = RNG.standard_normal(shape)
    want = acc0 + runtime.getitem_grad(x, idx, g)
    got, same = private_call(runtime.acc_getitem_grad, acc0, x, idx, g)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    assert same  # O(1) a read: no new array
    got, seen, before = shared_call(runtime.acc_getitem_grad, acc0, x, idx, g)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    assert got is not seen
    np.testing.assert_array_equal(seen, before)


def test_acc_getitem_grad_keeps_the_real_part_for_a_real_array():
    x = RNG.standard_normal(5)
    acc0 = RNG.standard_normal(5)
    got, same = private_call(runtime.acc_getitem_grad, acc0, x, 1, 2.0 + 3.0j)
    assert not same and got.dtype == np.float64
    np.testing.assert_allclose(got, acc0 + np.eye(5)[1] * 2.0)


# ----- in generated code ----------------------------------------------------------------------

def sum_of_cubes_by_index(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * x[i] * x[i]
    return s


def shifted_log_sum_exp(x):
    z = x - np.max(x, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(z), axis=1))) + np.sum(np.min(x, axis=1) * x[:, 0])


def test_reading_x_i_in_a_loop_scatters_into_the_accumulator():
    x = RNG.standard_normal(6)
    text = emit.source_of(sum_of_cubes_by_index, runtime.kinds_of((x,))).source
    assert "b_x = _rt.acc_getitem_grad(b_x, x, i, " in text
    (g,) = ad.gradient(sum_of_cubes_by_index, x)
    np.testing.assert_allclose(g, 3 * x**2, rtol=1e-12)
    np.testing.assert_allclose(ad.hessian(sum_of_cubes_by_index, x), np.diag(6 * x), rtol=1e-12, atol=1e-12)


def test_max_and_min_adjoints_accumulate_at_first_and_second_order():
    x = RNG.standard_normal((4, 5))
    text = emit.source_of(shifted_log_sum_exp, runtime.kinds_of((x,))).source
    assert "_rt.acc_extremum_adjoint(b_x, " in text
    (g,) = ad.gradient(shifted_log_sum_exp, x)
    np.testing.assert_allclose(g, numerical_gradient(shifted_log_sum_exp, x)[0], rtol=1e-7, atol=1e-8)
    u = RNG.standard_normal(x.shape)

    def directional(x):
        return np.sum(ad.gradient(shifted_log_sum_exp, x)[0] * u)

    (h,) = ad.gradient(directional, x)
    np.testing.assert_allclose(h, numerical_gradient(directional, x)[0], rtol=1e-6, atol=1e-7)


def shift_by_row_max(x):
    z = x - np.max(x, axis=1, keepdims=True)
    return np.sum(z * z)


def shift_by_constant(x):
    z = x - 1.5
    return np.sum(z * z)


def test_a_passed_on_adjoint_is_let_go_when_its_alias_is_added_to():
    """b_x = unbroadcast(b_z, x) may be b_z itself: once b_z is passed on, the pullback
    lets go of it, so the max adjoint is added into b_x in place, not into a copy."""
    x = RNG.standard_normal((3, 4))
    text = emit.source_of(shift_by_row_max, runtime.kinds_of((x,))).source
    lines = [line.strip() for line in text.splitlines()]
    assert "b_z = None" in lines
    assert lines.index("b_z = None") < next(i for i, s in enumerate(lines) if "acc_extremum_adjoint" in s)
    (g,) = ad.gradient(shift_by_row_max, x)
    np.testing.assert_allclose(g, numerical_gradient(shift_by_row_max, x)[0], rtol=1e-7, atol=1e-8)
    # nothing is added to b_x later: no line lets go of b_z
    text = emit.source_of(shift_by_constant, runtime.kinds_of((x,))).source
    assert "b_z = None" not in [line.strip() for line in text.splitlines()]



# ----- a row written into an array: setitem_grad_acc ---------------------------------------

ROW_WRITES = [
    ((5, 3), 2, (3,)),
    ((5, 3), -1, (3,)),
    ((4, 2, 3), 1, (2, 3)),
    ((6, 4), slice(1, 3), (2, 4)),
    ((6, 4), (slice(None), 2), (6,)),
]


def _row_case(shape, idx, vshape):
    b_new = RNG.standard_normal(shape)
    old = RNG.standard_normal(shape)
    v = RNG.standard_normal(vshape)
    acc0 = RNG.standard_normal(vshape)
    b_ref, g_v = runtime.setitem_grad(b_new.copy(), old, idx, v)
    return b_new, old, v, acc0, b_ref, acc0 + g_v


@pytest.mark.parametrize("shape, idx, vshape", ROW_WRITES)
def test_setitem_grad_acc_is_setitem_grad_then_acc(shape, idx, vshape):
    b_new, old, v, acc0, b_want, acc_want = _row_case(shape, idx, vshape)
    # private: both arrays held by these variables only, as in generated code
    b, a = b_new.copy(), acc0.copy()
    ids = (id(b), id(a))
    b, a = runtime.setitem_grad_acc(b, old, idx, v, a)
    np.testing.assert_array_equal(b, b_want)
    np.testing.assert_allclose(a, acc_want, rtol=1e-15)
    assert (id(b), id(a)) == ids  # in place: no copy of either
    # shared: another name holds each array, which must keep its values
    b, a = b_new.copy(), acc0.copy()
    b_seen, a_seen = b, a
    b, a = runtime.setitem_grad_acc(b, old, idx, v, a)
    np.testing.assert_array_equal(b, b_want)
    np.testing.assert_allclose(a, acc_want, rtol=1e-15)
    np.testing.assert_array_equal(b_seen, b_new)
    np.testing.assert_array_equal(a_seen, acc0)


def test_setitem_grad_acc_with_no_accumulator_or_no_adjoint():
    b_new, old, v, acc0, b_want, _ = _row_case((5, 3), 2, (3,))
    b, a = runtime.setitem_grad_acc(b_new.copy(), old, 2, v, None)
    np.testing.assert_array_equal(b, b_want)
    np.testing.assert_array_equal(a, b_new[2])
    b, a = runtime.setitem_grad_acc(None, old, 2, v, acc0)
    assert b is None and a is acc0
