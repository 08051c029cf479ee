"""Arguments that share memory, written in place: `f(W, W)`, a view passed beside its
array, a record or list holding an array also passed.

Python shows a write into one through the other; the generated code writes copy on write
and follows each argument by its name, so the other would keep the old values (the value
and the gradient silently differing from the plain call). Such a call is refused when it
runs, naming both and the line; arguments that do not share memory are differentiated as
before (checked against central differences).
"""
import dataclasses

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import MutationError


def writes_then_reads_other(v, w, x):
    w[0] = x * 2.0
    return np.sum(v * x)


def central_x(f, make, x, h=1e-6):
    return (f(*make(), x + h) - f(*make(), x - h)) / (2 * h)


def test_one_array_passed_twice_is_refused_when_written():
    W = np.array([1.0, 2.0, 3.0])
    with pytest.raises(MutationError) as info:
        ad.gradient(writes_then_reads_other, W, W, 0.5)
    msg = str(info.value)
    assert "`w`" in msg and "`v`" in msg and "both passed in" in msg and "line 20" in msg
    assert "copy" in msg


def test_a_view_passed_beside_its_array_is_refused_when_written():
    W = np.array([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(MutationError):
        ad.gradient(writes_then_reads_other, W[1:], W[:3], 0.5)


def test_distinct_arrays_are_differentiated():
    def make():
        return np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0])

    got = ad.gradient(writes_then_reads_other, *make(), 0.5)
    assert got[2] == pytest.approx(central_x(writes_then_reads_other, make, 0.5), rel=1e-6)
    assert np.allclose(got[0], [0.5, 0.5, 0.5])


@dataclasses.dataclass
class Rec:
    W: object
    k: float


def record_and_array(p, w, x):
    w[0] = x * 2.0
    return np.sum(p.W * x) * p.k


class Opaque:
    pass


def record_kept_in_place(p, w, x, o):
    w[0] = x * 2.0
    return np.sum(p.W * x) * p.k


def list_and_array(ws, w, x):
    w[0] = x * 2.0
    return np.sum(ws[0] * x)


@pytest.mark.parametrize("f, extra", [(record_and_array, ()), (record_kept_in_place, (Opaque(),))])
def test_a_record_holding_the_array_written_is_refused(f, extra):
    W = np.array([1.0, 2.0, 3.0])
    with pytest.raises(MutationError) as info:
        ad.gradient(f, Rec(W, 0.7), W, 0.5, *extra)
    assert "p" in str(info.value)

    def make():
        return Rec(np.array([1.0, 2.0, 3.0]), 0.7), np.array([1.0, 2.0, 3.0])

    got = ad.gradient(f, *make(), 0.5, *extra)
    assert got[2] == pytest.approx(central_x(lambda p, w, x: f(p, w, x, *extra), make, 0.5), rel=1e-6)
    assert np.allclose(got[0].W, 0.5 * 0.7)


def test_a_list_holding_the_array_written_is_refused():
    W = np.array([1.0, 2.0, 3.0])
    with pytest.raises(MutationError):
        ad.gradient(list_and_array, [W], W, 0.5)
    got = ad.gradient(list_and_array, [np.array([1.0, 2.0, 3.0])], np.array([1.0, 2.0, 3.0]), 0.5)
    assert got[2] == pytest.approx(6.0)


CAPTURED = np.array([1.0, 2.0, 3.0])


def make_reader(A):
    def f(W, x):
        W[0] = x * 2.0
        return np.sum(A * x)
    return f


def keyword_default_reader(W, x, *, A=CAPTURED):
    W[0] = x * 2.0
    return np.sum(A * x)


@pytest.mark.parametrize("f", [make_reader(CAPTURED), keyword_default_reader],
                         ids=["captured", "keyword-only default"])
def test_a_captured_or_default_array_written_through_an_argument_is_refused(f):
    CAPTURED[:] = [1.0, 2.0, 3.0]
    with pytest.raises(MutationError):
        ad.gradient(f, CAPTURED, 0.7)
    CAPTURED[:] = [1.0, 2.0, 3.0]
    got = ad.gradient(f, np.array([1.0, 2.0, 3.0]), 0.7)
    assert got[1] == pytest.approx(6.0)


# An array read out of an argument (`p.W`, `ws[0]`, `p.layers[0].W`) and written in place is
# the caller's array: it may be a captured array too. Before, only a record whose fields were
# read once at the entry was checked; a record written through (`p.W[0] = ...`) gave a
# gradient that missed the captured array's dependence on the write.


class Layer:
    def __init__(self, W):
        self.W = W


class Net:
    def __init__(self, W, k):
        self.W, self.k, self.layers = W, k, [Layer(W)]


def make_field_writer(A):
    def f(p, x):
        p.W[0] = x * 2.0
        return np.sum(A * x) * p.k
    return f


def make_item_writer(A):
    def f(ws, x):
        ws[0][0] = x * 2.0
        return np.sum(A * x)
    return f


def make_deep_writer(A):
    def f(p, x):
        p.layers[0].W[0] = x * 2.0
        return np.sum(A * x) * p.k
    return f


def make_augmented_writer(A):
    def f(p, x):
        W = p.W
        W += x
        return np.sum(A * x) * p.k
    return f


@pytest.mark.parametrize("make_f, wrap, shown", [
    (make_field_writer, lambda W: (Net(W, 1.5),), "`p.W`"),
    (make_item_writer, lambda W: ([W],), "`ws[0]`"),
    (make_deep_writer, lambda W: (Net(W, 1.5),), "`p.layers[0].W`"),
    (make_augmented_writer, lambda W: (Net(W, 1.5),), "`p.W`"),
], ids=["field", "list item", "field of an item of a field", "augmented"])
def test_an_array_read_out_of_an_argument_and_written_is_checked_against_captured_arrays(make_f, wrap, shown):
    shared = np.array([1.0, 2.0, 3.0])
    f = make_f(shared)
    with pytest.raises(MutationError) as info:
        ad.gradient(f, *wrap(shared), 0.5)
    msg = str(info.value)
    assert shown in msg and "captured variable `A`" in msg and "line" in msg
    # apart, the same function is differentiated: A does not depend on the write
    A = np.array([1.0, 2.0, 3.0])
    f = make_f(A)

    def make():
        return wrap(np.array([1.0, 2.0, 3.0]))

    got = ad.gradient(f, *make(), 0.5)
    want = (f(*make(), 0.5 + 1e-6) - f(*make(), 0.5 - 1e-6)) / 2e-6
    assert got[-1] == pytest.approx(want, rel=1e-6)
    value, _ = ad.pullback(f, *make(), 0.5)
    assert value == f(*make(), 0.5)


def test_a_list_item_written_while_the_list_is_read_again_is_not_refused():
    # the list the item came out of sees the write (it is written back): no alias to check
    def f(ws, x):
        ws[0][0] = x * 2.0
        return np.sum(ws[0] * x)

    def make():
        return ([np.array([1.0, 2.0, 3.0])],)

    got = ad.gradient(f, *make(), 0.5)
    want = (f(*make(), 0.5 + 1e-6) - f(*make(), 0.5 - 1e-6)) / 2e-6
    assert got[1] == pytest.approx(want, rel=1e-6)
