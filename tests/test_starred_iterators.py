"""A lazy iterator unpacked into a call or a display (`h(*map(...))`, `h(*filter(...))`,
`(*reversed(xs),)`): the forward pass uses it up, and the pullback asked its len() (a
TypeError from generated code). It now counts the items the iterator handed out."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient


def h(a, b):
    return a * 3.0 + b


def star_map(x, y):
    return h(*map(lambda v: v * 2.0, [x, y]))


def star_filter(x, y):
    return h(*filter(lambda v: v > 0.0, [x, -1.0, y]))


def star_reversed(x, y):
    return h(*reversed([x, y]))


def star_iter(x, y):
    return h(*iter([x * y, y]))


def star_enumerate(x, y):
    def k(pair_a, pair_b):
        return pair_a[1] * pair_b[1] + pair_b[0]

    return k(*enumerate([x, y]))


def star_zip_then_more(x, y):
    def m(a, b, c):
        return a[0] * b[1] + c

    return m(*zip([x, y], [y, x]), x * x)


@pytest.mark.parametrize("fn", [star_map, star_filter, star_reversed, star_iter, star_enumerate,
                                star_zip_then_more])
def test_a_starred_lazy_iterator(fn):
    args = (0.7, 1.3)
    y, back = ad.pullback(fn, *args)
    assert np.isclose(y, fn(*args))
    assert np.allclose(back(1.0), numerical_gradient(fn, *args), rtol=1e-6)


def in_a_tuple(x, y):
    t = (*map(lambda v: v * 2.0, [x, y]),)
    return t[0] * t[1]


def in_a_list(x, y):
    items = [*map(lambda v: v * 2.0, [x, y]), x]
    return items[0] * items[1] + items[2]


def list_rebuilt_from_itself(x, y):
    items = [x, y]
    items = [*items, x * y]
    return items[0] * items[2]


@pytest.mark.parametrize("fn", [in_a_tuple, in_a_list, list_rebuilt_from_itself])
def test_a_starred_lazy_iterator_in_a_display(fn):
    args = (0.7, 1.3)
    y, back = ad.pullback(fn, *args)
    assert np.isclose(y, fn(*args))
    assert np.allclose(back(1.0), numerical_gradient(fn, *args), rtol=1e-6)


def test_a_starred_lazy_iterator_twice_differentiated():
    def f(x):
        return h(*map(lambda v: v * v, [x, x]))  # 3x**2 + x**2

    assert ad.hessian(f, 0.7) == pytest.approx(8.0)
