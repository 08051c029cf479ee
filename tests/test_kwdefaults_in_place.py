"""Keyword defaults changed in place (`f.__kwdefaults__["w"] = 5.0`): the same dict holds
other values. The cached code was bound to a copy of the old ones and the checks compared
the dict by identity, so the value under pullback and the gradient stayed those of the old
default (4.5 for 11.25). Assigning a new dict was, and is, noticed too."""
import numpy as np
import pytest

import adjoint_s2s as ad


def scaled(x, *, w=2.0):
    return w * x * x


def power(x, *, p=2):
    return x ** p


def calls_power(x):
    return power(x) * 1.0


def summed(x, *, w=2.0):
    return np.sum(w * x * x)


class Model:
    def loss(self, x, *, k=2.0):
        return k * x * x


@pytest.fixture
def restore():
    saved = [(f, dict(f.__kwdefaults__)) for f in (scaled, power, summed, Model.loss)]
    yield
    for f, kw in saved:
        f.__kwdefaults__.clear()
        f.__kwdefaults__.update(kw)


def test_own_keyword_default_changed_in_place(restore):
    for _ in range(3):  # (the later calls take the cached fast paths)
        assert ad.gradient(scaled, 1.5) == pytest.approx((6.0,))
    scaled.__kwdefaults__["w"] = 5.0
    y, back = ad.pullback(scaled, 1.5)
    assert y == scaled(1.5) == 11.25
    assert back(1.0) == pytest.approx((15.0,))
    for _ in range(3):
        assert ad.gradient(scaled, 1.5) == pytest.approx((15.0,))


def test_callee_keyword_default_changed_in_place(restore):
    for _ in range(3):
        assert ad.gradient(calls_power, 0.7) == pytest.approx((1.4,))
    power.__kwdefaults__["p"] = 3
    assert ad.pullback(calls_power, 0.7)[0] == pytest.approx(calls_power(0.7))
    for _ in range(3):
        assert ad.gradient(calls_power, 0.7) == pytest.approx((3 * 0.49,))


def test_method_keyword_default_changed_in_place(restore):
    m = Model()
    assert ad.gradient(m.loss, 1.5) == pytest.approx((6.0,))
    Model.loss.__kwdefaults__["k"] = 5.0
    assert ad.pullback(m.loss, 1.5)[0] == 11.25
    assert ad.gradient(m.loss, 1.5) == pytest.approx((15.0,))


def test_keyword_default_becomes_an_array(restore):
    """The code was made for a number; the default is now an array: made again."""
    assert ad.gradient(summed, 1.5) == pytest.approx((6.0,))
    summed.__kwdefaults__["w"] = np.array([1.0, 3.0])
    assert ad.pullback(summed, 1.5)[0] == pytest.approx(summed(1.5))
    assert ad.gradient(summed, 1.5) == pytest.approx((12.0,))
