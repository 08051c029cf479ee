"""Writes through views that NumPy makes, and writes into an array while a view of it is
read. Python shows a write through every view of the memory; differentiated code writes
a copy (copy on write), so each shape must be either right (value and gradient) or
refused with an AdjointError, never silently wrong. Before: a method view taken with no
argument (`b.ravel()`, `b.squeeze()`, `b.transpose()`), the split family (lists of
views), `b.flat`, a view held by a list or an object, and the NumPy functions that give
their argument back for some values (np.diag of a matrix, a real array's conj()) were not
followed: the value or the gradient was the one without the write (all of WRONG_BEFORE on
95db829; on 17bc062 the method views and conj() are already refused when they run, by its
check of what a call returns)."""
import copy

import numpy as np
import pytest

import adjoint_s2s as ad


class Hold:
    def __init__(self, v):
        self.v = v


# ----- a write through a view, the base read afterwards --------------------------------
def ravel_written(x):
    b = x * 1.0
    r = b.ravel()
    r[0] = 0.0
    return float(np.sum(b))


def squeeze_written(x):
    b = x.reshape(1, 4) * 1.0
    r = b.squeeze()
    r[0] = 0.0
    return float(np.sum(b))


def transpose_method_written(x):
    b = x.reshape(2, 2) * 1.0
    t = b.transpose()
    t[0, 1] = 0.0
    return float(np.sum(b * b))


def transpose_method_augmented(x):
    b = x.reshape(2, 2) * 1.0
    t = b.transpose()
    t += x.reshape(2, 2)
    return float(np.sum(b * b))


def diagonal_base_read(x):
    b = x.reshape(2, 2) * 1.0
    d = b.diagonal()
    b[0, 0] = 0.0
    return float(np.sum(d))


def split_augmented(x):
    b = x * 1.0
    p1, p2 = np.split(b, [1])
    p2 *= 2.0
    return float(np.sum(b))


def array_split_item_written(x):
    b = x * 1.0
    p = np.array_split(b, 2)
    p[0][0] = 0.0
    return float(np.sum(b))


def hsplit_item_written(x):
    b = x * 1.0
    p = np.hsplit(b, 2)
    q = p[1]
    q[0] = 0.0
    return float(np.sum(b * x))


def vsplit_augmented(x):
    b = x.reshape(2, 2) * 1.0
    top, bottom = np.vsplit(b, 2)
    top += x[:2]
    return float(np.sum(b))


def split_item_augmented(x):
    b = x * 1.0
    parts = np.split(b, 2)
    parts[1] += x[2:]
    return float(np.sum(b * x))


def vsplit_item_written_twice_deep(x):
    b = x.reshape(2, 2) * 1.0
    rows = np.vsplit(b, 2)
    rows[1][0, 1] = 0.0
    return float(np.sum(b * b))


def split_then_base_written(x):
    b = x * 1.0
    parts = np.split(b, 2)
    b[0] = 0.0
    return float(np.sum(parts[0]))


def flat_written(x):
    b = x * 1.0
    b.flat[0] = 0.0
    return float(np.sum(b * x))


def conj_of_real_written(x):
    b = x * 1.0
    c = b.conj()
    c[0] = 0.0
    return float(np.sum(b))


def diag_of_matrix_base_read(x):
    b = x.reshape(2, 2) * 1.0
    d = np.diag(b)
    b[0, 0] = 0.0
    return float(np.sum(d * d))


def einsum_diagonal_base_read(x):
    b = x.reshape(2, 2) * 1.0
    d = np.einsum("ii->i", b)
    b[1, 1] = 0.0
    return float(np.sum(d))


def real_if_close_written(x):
    b = x * 1.0
    c = np.real_if_close(b)  # (a real array: b itself)
    c[0] = 0.0
    return float(np.sum(b * x))


def unstack_item_augmented(x):
    b = x.reshape(2, 2) * 1.0
    r0, r1 = np.unstack(b)
    r1 += x[:2]
    return float(np.sum(b * b))


def atleast_1d_of_two_then_base_written(x):
    b = x * 1.0
    c = x[:2] * 2.0
    u, v = np.atleast_1d(b, c)
    c[0] = 0.0
    return float(np.sum(v * x[:2]))


def linalg_diagonal_base_read(x):
    b = x.reshape(2, 2) * 1.0
    d = np.linalg.diagonal(b)
    b[0, 0] = 5.0
    return float(np.sum(d * d))


# ----- the base written, a view read afterwards ----------------------------------------
def ravel_then_base_written(x):
    b = x * 1.0
    t = b.ravel()
    b[0] = 0.0
    return float(np.sum(t))


def squeeze_then_base_written(x):
    b = x.reshape(1, 4) * 1.0
    t = b.squeeze()
    b += x.reshape(1, 4)
    return float(np.sum(t * t))


def view_in_list_then_base_written(x):
    b = x * 1.0
    l = [b[:2]]
    b[0] = 0.0
    return float(np.sum(l[0]))


def view_in_object_then_base_written(x):
    b = x * 1.0
    h = Hold(b[:2])
    b[0] = 0.0
    return float(np.sum(h.v))


def transposed_in_dict_then_base_augmented(x):
    b = x.reshape(2, 2) * 1.0
    d = {"t": b.T}
    b += 1.0
    return float(np.sum(d["t"] * x.reshape(2, 2)))


def flat_set(x):
    b = x * 1.0
    b.flat = 2.0
    return float(np.sum(b * x))


def shape_set(x):
    b = x * 1.0
    b.shape = (2, 2)
    return float(np.sum(b[0] * x[:2]))


def ravel_in_object_then_base_written(x):
    b = x * 1.0
    h = Hold(b.ravel())
    b[0] = 0.0
    return float(np.sum(h.v))


WRONG_BEFORE = [
    ravel_written, squeeze_written, transpose_method_written, transpose_method_augmented,
    diagonal_base_read, split_augmented, array_split_item_written, hsplit_item_written,
    vsplit_augmented, split_item_augmented, vsplit_item_written_twice_deep,
    split_then_base_written, flat_written, conj_of_real_written,
    diag_of_matrix_base_read, einsum_diagonal_base_read, real_if_close_written,
    unstack_item_augmented, atleast_1d_of_two_then_base_written, linalg_diagonal_base_read, ravel_then_base_written, squeeze_then_base_written,
    view_in_list_then_base_written, view_in_object_then_base_written,
    transposed_in_dict_then_base_augmented, ravel_in_object_then_base_written, flat_set,
    shape_set,
]


# ----- correct programs that must keep working -----------------------------------------
def copy_of_ravel_written(x):
    b = x * 1.0
    r = b.ravel().copy()
    r[0] = 0.0
    return float(np.sum(b) + np.sum(r * x))


def copy_in_list_then_base_written(x):
    b = x * 1.0
    l = [b[:2].copy()]
    b[0] = 0.0
    return float(np.sum(l[0] * x[:2]) + np.sum(b * x))


def diag_of_vector_then_written(x):
    b = x * 1.0
    d = np.diag(b)  # (a new matrix: a vector's diag shares nothing)
    b[0] = 0.0
    return float(np.sum(d * d) + np.sum(b * x))


def split_read_only(x):
    b = x * 1.0
    p1, p2 = np.split(b, [1])
    return float(np.sum(p1 * 2.0) + np.sum(p2 * p2))


def conj_of_complex_written(x):
    b = x * (1.0 + 1.0j)
    c = b.conj()  # (a new array: conj of a complex array)
    c[0] = 0.0
    return float(np.sum(np.abs(b * x)) + np.sum(np.real(c)))


def ravel_written_base_not_read(x):
    b = x * 1.0
    r = b.ravel()
    r[0] = 0.0
    return float(np.sum(r * x))


def split_item_rebound(x):
    b = x * 1.0
    parts = np.split(b, 2)
    parts[0] = parts[0] * 3.0
    return float(np.sum(b * x) + np.sum(parts[0] * x[:2]))


def ravel_of_transposed_written(x):
    b = x.reshape(2, 2) * 1.0
    r = b.T.ravel()  # (a copy: b.T is not contiguous)
    r[0] = 0.0
    return float(np.sum(b * b) + np.sum(r * x))


def flat_of_constant_written(x):
    b = np.zeros(4)
    b.flat[1] = 1.0  # (no gradient: written in place, as Python)
    return float(np.sum(b * x))


RIGHT = [
    split_item_rebound, ravel_of_transposed_written, flat_of_constant_written,
    copy_of_ravel_written, copy_in_list_then_base_written, diag_of_vector_then_written,
    split_read_only, conj_of_complex_written, ravel_written_base_not_read,
]

X = np.array([1.0, 2.0, 3.0, 4.0])


def _numerical(f, x, h=1e-6):
    g = np.zeros_like(x)
    for k in range(x.size):
        xp, xm = x.copy(), x.copy()
        xp[k] += h
        xm[k] -= h
        g[k] = (f(xp) - f(xm)) / (2 * h)
    return g


def _outcome(f):
    """'refused', or (value, gradient) under the pullback."""
    try:
        y, back = ad.pullback(f, X.copy())
        (g,) = back(1.0)
    except ad.AdjointError:
        return "refused"
    return y, (np.zeros_like(X) if g is None else np.asarray(g, dtype=float))


@pytest.mark.parametrize("f", WRONG_BEFORE, ids=lambda f: f.__name__)
def test_write_seen_through_a_view_is_refused_or_right(f):
    got = _outcome(f)
    if got == "refused":
        return
    y, g = got
    assert y == pytest.approx(f(X.copy()))
    np.testing.assert_allclose(g, _numerical(f, X), atol=1e-5)


@pytest.mark.parametrize("f", WRONG_BEFORE, ids=lambda f: f.__name__)
def test_refusal_names_the_way_out(f):
    with pytest.raises(ad.AdjointError) as info:
        ad.gradient(f, X.copy())
    text = str(info.value)
    assert (" while " in text or "in place" in text) and "line" in text and ("copy" in text or "after" in text or "instead" in text)


@pytest.mark.parametrize("f", RIGHT, ids=lambda f: f.__name__)
def test_programs_with_no_shared_write_stay_right(f):
    y, g = _outcome(f)
    assert y == pytest.approx(f(X.copy()))
    np.testing.assert_allclose(g, _numerical(f, X), atol=1e-5)


def test_runtime_check_shared_sees_views_in_lists_and_flat():
    from adjoint_s2s.runtime import check_shared

    b = np.arange(4.0)
    parts = np.split(b, 2)
    with pytest.raises(ad.MutationError):
        check_shared(b, parts, "b", "parts", None, 1)
    check_shared(parts, b, "parts", "b", None, 1)  # (parts[0] = v rebinds an item)
    with pytest.raises(ad.MutationError):
        check_shared(b.flat, b, "flat", "b", None, 1)
    check_shared(b, [b.copy()], "b", "l", None, 1)  # (a copy: nothing shared)


def test_runtime_check_held_sees_a_held_view():
    from adjoint_s2s.runtime import check_held

    b = np.arange(4.0)
    with pytest.raises(ad.MutationError):
        check_held(b, [b[:2]], "b", "l", 1)
    with pytest.raises(ad.MutationError):
        check_held(b, Hold({"k": b.T}), "b", "h", 1)
    check_held(b, [b[:2].copy()], "b", "l", 1)
    check_held(b, Hold(np.zeros(2)), "b", "h", 1)
