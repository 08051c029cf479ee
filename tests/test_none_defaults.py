"""Parameters left to a default of None (`def f(k, theta0=None)`): the code made for such
a call knows the parameter holds None, and folds its `is None` tests where nothing can
have bound it again (passes/none_params.py). Before, `th = theta0 if theta0 is not None
else 1.0` was None on one path and a float on the other, and every line after it in the
loop was dispatched at run time: about 400 times the plain call (issue 15)."""
import math

import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads

from .source_modules import module_from_source

SOURCE = '''
import math


def conditional(k, theta0=None):
    th = theta0 if theta0 is not None else 1.0
    om = 0.0
    for _ in range(50):
        om = om - 0.01 * k * math.sin(th)
        th = th + 0.01 * om
    return th


def rebound(k, theta0=None):
    if theta0 is None:
        theta0 = 1.0
    om = 0.0
    for _ in range(50):
        om = om - 0.01 * k * math.sin(theta0)
        theta0 = theta0 + 0.01 * om
    return theta0


def keyword_only(k, *, scale=None, offset=None):
    scale = 2.0 if scale is None else scale
    if offset is not None:
        k = k + offset
    return k * scale


def read_before(k, p=None):
    q = p
    if p is None:
        p = 1.0
    return k * p + (0.0 if q is None else q)


def tested_in_a_loop(k, p=None):
    s = 0.0
    for _ in range(3):
        if p is None:  # None only on the first trip
            p = k
        s = s + p * k
    return s


def rebound_by_a_closure(k, p=None):
    def set_p():
        nonlocal p
        p = 2.0
    set_p()
    return k * (1.0 if p is None else p)


def tested_later(k, p=None):
    late = lambda: 3.0 if p is None else p  # noqa: E731 (runs after p is bound)
    p = k * 0.5
    return late() * k


def own_p_in_a_comprehension(k, p=None):
    return sum([0.0 if p is None else p for p in (k, 2.0 * k)])


def walrus_in_the_test(k, p=None):
    if (p := k * 2.0) is None:
        return 0.0
    return p * k


def accel(th, k, damping=None):
    d = 0.0 if damping is None else damping
    return -k * math.sin(th) - d * th


def accel_rebinding(th, k, damping=None):
    if damping is None:
        damping = 0.1
    return -k * math.sin(th) - damping * th


def accel_returning(th, k, damping=None):
    return -k * math.sin(th) - (0.0 if damping is None else damping) * th


def pendulum(k, c):
    th, om = 1.0, 0.0
    for _ in range(100):
        a = accel(th, k) + accel_rebinding(th, k) + accel_returning(th, k)
        b = accel(th, k, c) + accel_rebinding(th, k, None) + accel_returning(th, k, damping=c)
        om = om + 0.01 * (a + b)
        th = th + 0.01 * om
    return th
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return module_from_source(tmp_path_factory.mktemp("none_defaults"), "none_defaults_mod", SOURCE)


@pytest.mark.parametrize("name", ["conditional", "rebound"])
def test_a_none_default_keeps_the_loop_inline(mod, name):
    f = getattr(mod, name)
    text = ad.show_adjoint(f, 0.9)
    assert "dispatched" not in text and "_rt.binop" not in text and "_rt.call(" not in text
    check_grads(f, 0.9, order=2)
    # given a number, the parameter is an input like any other, with its gradient
    check_grads(f, 0.9, 1.0, order=2)
    assert ad.gradient(f, 0.9) == pytest.approx(ad.gradient(f, 0.9, 1.0)[:1])
    assert len(ad.gradient(f, 0.9, theta0=None)) == 1


def test_keyword_only_none_defaults(mod):
    f = mod.keyword_only
    assert "_rt.binop" not in ad.show_adjoint(f, 0.9)
    assert ad.gradient(f, 0.9) == (2.0,)
    assert ad.gradient(f, 0.9, scale=3.0) == (3.0,)
    assert ad.gradient(f, 0.9, scale=None, offset=0.5) == (2.0,)
    assert ad.pullback(f, 0.9, offset=0.5)[0] == f(0.9, offset=0.5)


@pytest.mark.parametrize("name", ["read_before", "tested_in_a_loop", "rebound_by_a_closure", "tested_later",
                                  "own_p_in_a_comprehension", "walrus_in_the_test"])
def test_tests_where_the_parameter_may_be_bound_again_stay(mod, name):
    f = getattr(mod, name)
    assert ad.pullback(f, 0.9)[0] == f(0.9)
    check_grads(f, 0.9)
    check_grads(f, 0.9, 0.4)


def test_the_values_and_gradients_of_the_folds(mod):
    assert ad.gradient(mod.read_before, 0.9) == (1.0,)  # q is None: p = 1.0
    assert ad.gradient(mod.tested_in_a_loop, 0.9) == pytest.approx((6 * 0.9,))  # s = 3 k * k
    assert ad.gradient(mod.rebound_by_a_closure, 0.9) == (2.0,)
    assert ad.gradient(mod.tested_later, 0.9) == pytest.approx((0.9,))  # late() is p = k / 2
    assert ad.gradient(mod.walrus_in_the_test, 0.9) == pytest.approx((4 * 0.9,))


def test_a_default_changed_to_a_number_makes_the_code_again(mod):
    f = mod.conditional
    before = ad.gradient(f, 0.9)
    f.__defaults__ = (1.2,)
    try:
        assert ad.gradient(f, 0.9) == pytest.approx(ad.gradient(f, 0.9, 1.2)[:1])
        assert ad.gradient(f, 0.9) != pytest.approx(before)
    finally:
        f.__defaults__ = (None,)
    assert ad.gradient(f, 0.9) == pytest.approx(before)


def test_none_passed_by_position_is_not_taken_for_a_default(mod):
    # (a positional None keys as a constant: the tests stay, and the value is right)
    y, back = ad.pullback(mod.conditional, 0.9, None)
    assert y == mod.conditional(0.9)
    assert back(1.0)[0] == pytest.approx(ad.gradient(mod.conditional, 0.9)[0])
    assert back(1.0)[1] is None


def test_a_helper_with_a_none_default_called_from_differentiated_code(mod):
    def outer(k):
        return mod.conditional(k) * 2.0 + mod.keyword_only(k, offset=None)

    check_grads(outer, 0.7, order=2)
    assert ad.gradient(outer, 0.7)[0] == pytest.approx(
        2.0 * ad.gradient(mod.conditional, 0.7)[0] + 2.0)
    assert math.isfinite(ad.gradient(outer, 0.7)[0])


def test_helpers_inlined_with_a_none_default_keep_their_kinds(mod):
    # (the inlined body tested `None is None`, or a parameter bound to None: dispatched,
    # about 380 times the plain call in a 200-step loop)
    text = ad.show_adjoint(mod.pendulum, 0.9, 0.2)
    assert "(inlined accel" in text
    assert "dispatched" not in text and "_rt.binop" not in text and "_rt.call(" not in text
    check_grads(mod.pendulum, 0.9, 0.2, order=2)
    assert ad.pullback(mod.pendulum, 0.9, 0.2)[0] == mod.pendulum(0.9, 0.2)
