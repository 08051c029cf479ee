"""Named tuples as arguments keep the kinds of their fields: the key of the code notes them
(kinds.field_kinds), and the function reads them once at its entry as it reads a plain
record's (passes/param_fields.py). A 200-step pendulum over `p.k`, `p.c` of a
namedtuple was dispatched at run time, about 600 times the plain call (issue 15). Its
gradient is a Tangent of the named tuple, also when it is read by position too."""
import collections
import math
import typing

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.tangents import Tangent
from adjoint_s2s.testing import check_grads

from .source_modules import module_from_source

SOURCE = '''
import math
import numpy as np


def pendulum(p):
    th, om = 1.0, 0.0
    for _ in range(50):
        om = om - 0.01 * (p.k * math.sin(th) + p.c * om)
        th = th + 0.01 * om
    return th


def by_position_and_by_name(p):
    k, c = p
    return k * c + p[0] * p.k


def iterated_and_read_by_name(p):
    s = 0.0
    for v in p:
        s = s + v * p.k
    return s


def layer(q, x):
    return np.tanh(q.w * x + q.b).sum()
'''

Params = collections.namedtuple("Params", "k c")


class Layer(typing.NamedTuple):
    w: np.ndarray
    b: float = 0.5


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return module_from_source(tmp_path_factory.mktemp("namedtuple_args"), "namedtuple_args_mod", SOURCE)


def test_the_fields_keep_their_kinds(mod):
    text = ad.show_adjoint(mod.pendulum, Params(0.9, 0.1))
    assert "p_k = p.k" in text
    assert "dispatched" not in text and "_rt.binop" not in text and "_rt.call(" not in text
    assert "_rt.binop" not in ad.show_adjoint(mod.layer, Layer(np.ones(2), 0.3), 0.7)


@pytest.mark.parametrize("name, arg", [
    ("pendulum", Params(0.9, 0.1)), ("pendulum", Params(np.float64(0.9), 1)),
    ("by_position_and_by_name", Params(0.9, 0.3)), ("iterated_and_read_by_name", Params(0.9, 0.3)),
])
def test_values_and_gradients(mod, name, arg):
    f = getattr(mod, name)
    assert ad.pullback(f, arg)[0] == f(arg)
    (g,) = check_grads(f, arg)
    assert isinstance(g, Tangent) and g.primal_type is Params


def test_a_field_read_by_name_and_by_position_adds_up(mod):
    (g,) = ad.gradient(mod.iterated_and_read_by_name, Params(0.9, 0.3))
    # s = k * k + c * k: d/dk = 2k + c, d/dc = k
    assert (g.k, g.c) == pytest.approx((2.1, 0.9))
    (g,) = ad.gradient(mod.by_position_and_by_name, Params(0.9, 0.3))
    assert (g.k, g.c) == pytest.approx((2 * 0.9 + 0.3, 0.9))


def test_array_fields(mod):
    q = Layer(np.array([0.1, -0.4]), 0.3)
    g = check_grads(mod.layer, q, 0.7)
    assert g[0].w.shape == (2,)


def test_fields_of_another_kind_make_the_code_again(mod):
    a = ad.gradient(mod.pendulum, Params(0.9, 0.1))[0]
    b = ad.gradient(mod.pendulum, Params(0.9, np.float64(0.1)))[0]
    assert (a.k, a.c) == pytest.approx((b.k, b.c))
    x = np.array([0.2, -0.5])
    for q in (Layer(x, 0.3), Layer(x, 1), Layer(x, np.array([0.3, 0.1])), Layer(x.astype(complex).real, 0.3)):
        g = check_grads(mod.layer, q, 0.7)
        assert ad.pullback(mod.layer, q, 0.7)[0] == mod.layer(q, 0.7)
        assert isinstance(g[0], Tangent)


def test_second_order_through_a_named_tuple(mod):
    def dk(k):
        return ad.gradient(mod.pendulum, Params(k, 0.1))[0].k

    want = (dk(0.9 + 1e-5) - dk(0.9 - 1e-5)) / 2e-5
    assert ad.gradient(dk, 0.9)[0] == pytest.approx(want, rel=1e-5)
    assert math.isfinite(want)


def _read_by_field_first(p):
    a = p.k * 2.0
    s = 0.0
    for v in p:
        s = s + v * 3.0
    return a + s


def _read_by_position_first(p):
    s = 0.0
    for v in p:
        s = s + v * 3.0
    return p.k * 2.0 + s


def _unpacked_then_field(p):
    k, c = p
    return k * c + p.c * 5.0


@pytest.mark.parametrize("f, want", [(_read_by_field_first, (5.0, 3.0)), (_read_by_position_first, (5.0, 3.0)),
                                     (_unpacked_then_field, (0.3, 0.9 + 5.0))])
def test_field_and_position_gradients_add_up_in_either_order(f, want):
    # (a tuple's gradient plus a Tangent's by field dropped the fields: (3, 3) for (5, 3))
    (g,) = ad.gradient(f, Params(0.9, 0.3))
    assert isinstance(g, Tangent) and (g.k, g.c) == pytest.approx(want)

