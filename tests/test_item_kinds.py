"""List and tuple arguments, and global lists, whose items are all numbers (or all number
arrays), and dict arguments whose values are, give their items' reads that kind (issue 15: kinds flow through homogeneous lists
and tuples, including globals). The key of the generated code holds the items' kind, and
every call checks it, so a list whose items change kind between calls gets code made
again. Reads of such an argument are plain subscripts with their adjoint added at their
position, only where nothing in the function can change the list while it runs."""
import fractions
import math

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads

from .source_modules import registered_module

SOURCE = '''
import math
import numpy as np
from adjoint_s2s import dropgrad as ad_dropgrad

XS = [0.01 * i for i in range(40)]
YS = [math.sin(0.3 * i) for i in range(40)]
GROWN = []
DATA = [0.1 * i for i in range(30)]
WS = [np.full(3, 0.5), np.full(3, -0.2)]


def nll(mu, s, data):
    tot = 0.0
    for i in range(len(data)):
        tot += (data[i] - mu) ** 2 / (s * s) + math.log(s)
    return tot


def net(w):
    s = 0.0
    for i in range(20):
        x = 0.05 * i
        h = math.tanh(w[0] * x + w[1])
        s += (w[2] * h - math.sin(3 * x)) ** 2
    return s


def unpacked(p):
    k, c = p
    x, v = 1.0, 0.0
    for _ in range(50):
        v = v - 0.02 * (k * x + c * v)
        x = x + 0.02 * v
    return x


def layers(params, x):
    w1, b1, w2 = params
    h = np.tanh(w1 @ x + b1)
    return np.sum(w2 @ h)


def from_the_end(p, a):
    s = 0.0
    for i in range(-3, 0):
        s = s + p[i] * a * p[-1]
    return s


def over_items(p, a):
    s = 0.0
    for v in p:
        s = s + math.sin(v * a)
    return s


def fit(a, b):
    s = 0.0
    for i in range(len(XS)):
        r = a * XS[i] + b - YS[i]
        s = s + r * r
    return s


def over_data(k):
    s = 0.0
    for i, d in enumerate(DATA):
        s = s + (k * d - 1.0) ** 2 * (i + 1)
    return s


def over_weights(x):
    h = np.ones(3) * x
    for w in WS:
        h = np.tanh(w * h + x)
    return float(np.sum(h))


def by_key(p, x):
    s = 0.0
    for i in range(20):
        s = s + p["a"] * math.sin(p["b"] * x + 0.1 * i)
    return s


def by_name(p, x):
    s = 0.0
    for k in p:  # a dict iterated gives its keys
        s = s + p[k] * x
    return s + len(p)


def pytree(params, x):
    h = np.tanh(params["W"] @ x + params["b"])
    return np.sum(h * h)


def rosen(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    return s


def vector_rebound(x):
    s = x[0] * x[1]
    x = x.reshape(2, 2)
    return s + np.sum(x[0] * x[1])


def gathered(*xs):
    s = 0.0
    for i in range(20):
        s = s + xs[0] * math.sin(xs[1] * i) + xs[-1]
    return s


def grow(v):
    GROWN.append(ad_dropgrad(v))
    return 0.0


def calls_a_user_function(p, a):
    s = 0.0
    for i in range(len(p)):
        s = s + p[i] * a + grow(s)
    return s
'''


@pytest.fixture
def mod(tmp_path):
    with registered_module(tmp_path, "item_kinds_mod", SOURCE) as m:
        yield m


def _flat(g):
    if isinstance(g, dict):
        return _flat([g[k] for k in sorted(g, key=str)])
    if isinstance(g, (list, tuple)):
        return np.concatenate([np.ravel(np.asarray(_flat(v), dtype=float)) for v in g]) if g else np.zeros(0)
    return np.ravel(np.asarray(g, dtype=float))


def _close(f, *args):
    got = check_grads(f, *args)
    assert ad.value_and_grad(f)(*args)[0] == pytest.approx(f(*args))
    return got


def _inline(text):
    return "dispatched at run time" not in text and "_rt.binop" not in text and "_rt.getitem_pair" not in text


def test_a_list_argument_read_by_index_is_inline(mod):
    data = [math.sin(0.7 * i) for i in range(30)]
    text = ad.show_adjoint(mod.nll, 0.1, 0.9, data)
    assert _inline(text), text
    assert "= data[i]" in text
    got = _close(mod.nll, 0.1, 0.9, data)
    assert type(got[2]) is list and len(got[2]) == 30


@pytest.mark.parametrize("seq", [list, tuple])
def test_a_parameter_vector_keeps_the_type_of_its_gradient(mod, seq):
    w = seq([0.5, 0.1, -0.3])
    assert _inline(ad.show_adjoint(mod.net, w))
    got = _close(mod.net, w)[0]
    assert type(got) is seq and len(got) == 3


@pytest.mark.parametrize("seq", [list, tuple])
def test_unpacking_a_parameter_tuple_keeps_real_kinds(mod, seq):
    p = seq([2.0, 0.3])
    assert _inline(ad.show_adjoint(mod.unpacked, p))
    assert type(_close(mod.unpacked, p)[0]) is seq


def test_a_list_of_arrays_gives_arrays(mod):
    rng = np.random.default_rng(0)
    params = [rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=(2, 4))]
    assert _inline(ad.show_adjoint(mod.layers, params, np.ones(3)))
    got = _close(mod.layers, params, np.ones(3))[0]
    assert [g.shape for g in got] == [(4, 3), (4,), (2, 4)]


def test_items_changing_kind_between_calls_make_the_code_again(mod):
    _close(mod.net, [0.5, 0.1, -0.3])
    # an item of another kind: the key differs, the code is made for it
    _close(mod.net, [0.5, fractions.Fraction(1, 10), -0.3])
    assert not _inline(ad.show_adjoint(mod.net, [0.5, fractions.Fraction(1, 10), -0.3]))
    # ints are numbers too; arrays of one number are arrays
    _close(mod.net, [1, 0.1, -0.3])
    got = ad.gradient(mod.net, [np.array(0.5), np.array(0.1), np.array(-0.3)])[0]
    want = ad.gradient(mod.net, [0.5, 0.1, -0.3])[0]
    assert np.allclose(_flat(got), _flat(want))


def test_negative_positions_and_iteration(mod):
    p = [0.3, -1.2, 0.8, 2.0]
    _close(mod.from_the_end, p, 1.5)
    _close(mod.over_items, p, 0.7)
    assert _inline(ad.show_adjoint(mod.over_items, p, 0.7))


def test_a_list_grown_after_the_call_keeps_the_gradient_of_the_call(mod):
    p = [0.3, -1.2, 0.8, 2.0]
    y, back = ad.pullback(mod.from_the_end, p, 1.5)
    p.append(5.0)
    got = back(1.0)
    want = ad.gradient(mod.from_the_end, [0.3, -1.2, 0.8, 2.0], 1.5)
    assert y == pytest.approx(mod.from_the_end([0.3, -1.2, 0.8, 2.0], 1.5))
    assert np.allclose(_flat(got[0])[:4], _flat(want[0])) and not any(_flat(got[0])[4:])
    assert got[1] == pytest.approx(want[1])


def test_user_code_run_in_the_function_keeps_the_reads_at_run_time(mod):
    # grow() could reach the list: its items are not taken as fixed
    text = ad.show_adjoint(mod.calls_a_user_function, [0.5, 1.5], 2.0)
    assert "_rt.getitem_pair(p, i)" in text
    got = ad.gradient(mod.calls_a_user_function, [0.5, 1.5], 2.0)
    assert list(got[0]) == pytest.approx([2.0, 2.0]) and got[1] == pytest.approx(2.0)


def test_second_order_through_a_parameter_list(mod):
    w = [0.5, 0.1, -0.3]

    def first(a):
        return ad.gradient(mod.net, [a, 0.1, -0.3])[0][0]

    h = 1e-5
    want = (first(0.5 + h) - first(0.5 - h)) / (2 * h)
    assert ad.gradient(first, 0.5)[0] == pytest.approx(want, rel=1e-5)
    assert ad.gradient(mod.net, w)[0][0] == pytest.approx(first(0.5))


def test_a_global_list_of_numbers_gives_numbers(mod):
    assert _inline(ad.show_adjoint(mod.fit, 0.7, 0.2))
    _close(mod.fit, 0.7, 0.2)
    mod.XS.append(fractions.Fraction(1, 3))  # in place: every call checks the items
    mod.YS.append(0.5)
    assert not _inline(ad.show_adjoint(mod.fit, 0.7, 0.2))
    _close(mod.fit, 0.7, 0.2)
    mod.XS[:] = [1.0, 2.0]
    mod.YS[:] = [0.0, 1.0]
    assert ad.gradient(mod.fit, 0.5, 0.0) == pytest.approx((1.0, 1.0))  # r = (0.5, 0.0)


def test_a_loop_over_a_global_list_of_numbers_or_arrays_gives_them(mod):
    # (`for d in DATA` was dispatched: 141x the plain call; 3.3x now)
    assert _inline(ad.show_adjoint(mod.over_data, 0.7))
    assert _inline(ad.show_adjoint(mod.over_weights, 0.7))
    _close(mod.over_data, 0.7)
    _close(mod.over_weights, 0.7)
    mod.DATA.append(fractions.Fraction(1, 3))  # in place: every call checks the items
    assert not _inline(ad.show_adjoint(mod.over_data, 0.7))
    _close(mod.over_data, 0.7)
    mod.DATA[:] = [1.0, 2.0]
    assert ad.gradient(mod.over_data, 0.5)[0] == pytest.approx(2 * (0.5 - 1) + 2 * 2 * (1.0 - 1) * 2)
    mod.WS.append(0.5)  # a number among arrays
    assert not _inline(ad.show_adjoint(mod.over_weights, 0.7))
    _close(mod.over_weights, 0.7)


def test_a_dict_argument_read_by_key_is_inline(mod):
    p = {"a": 1.5, "b": 0.7, "unused": 3.0}
    assert _inline(ad.show_adjoint(mod.by_key, p, 0.3))
    got = _close(mod.by_key, p, 0.3)[0]
    assert type(got) is dict and got["unused"] == 0.0


def test_a_dict_iterated_or_keyed_by_numbers_keeps_its_reads_at_run_time(mod):
    _close(mod.by_name, {"a": 1.5, "b": 0.7}, 0.3)
    assert ad.gradient(mod.by_name, {1: 1.5, 2: 0.7}, 0.3)[1] == pytest.approx(2.2)


def test_a_dict_of_arrays(mod):
    rng = np.random.default_rng(1)
    params = {"W": rng.normal(size=(3, 2)), "b": rng.normal(size=3)}
    assert _inline(ad.show_adjoint(mod.pytree, params, np.ones(2)))
    got = ad.gradient(mod.pytree, params, np.ones(2))[0]
    h = 1e-6
    for key in params:
        for j in np.ndindex(params[key].shape):
            up = {k: v.copy() for k, v in params.items()}
            down = {k: v.copy() for k, v in params.items()}
            up[key][j] += h
            down[key][j] -= h
            want = (mod.pytree(up, np.ones(2)) - mod.pytree(down, np.ones(2))) / (2 * h)
            assert got[key][j] == pytest.approx(want, rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("make", [np.array, list, lambda v: [np.float64(a) for a in v], tuple])
def test_items_of_a_vector_at_computed_positions(mod, make):
    x = make([0.3, -0.8, 1.1, 0.4, -0.2])
    text = ad.show_adjoint(mod.rosen, x)
    assert "dispatched at run time" not in text and "_rt.binop" not in text and "getitem_pair" not in text, text
    _close(mod.rosen, x)


def test_a_float_array_read_at_a_position_gives_numbers(mod):
    x = np.array([0.5, 0.1, -0.3])
    assert _inline(ad.show_adjoint(mod.net, x))
    got = _close(mod.net, x)[0]
    assert type(got) is np.ndarray and got.shape == (3,)
    # of another dtype, or rebound in the function: arrays as before
    _close(mod.net, np.array([0.5, 0.1, -0.3], dtype=np.float32).astype(np.float64))
    xs = np.array([0.5, 0.1, -0.3, 0.7])
    _close(mod.vector_rebound, xs)
    y, back = ad.pullback(mod.from_the_end, np.array([[0.5, 0.1], [0.1, 0.2], [-0.3, 0.4]]), 1.5)
    assert y.shape == (2,) and back(np.ones(2))[0].shape == (3, 2)  # 2-D: p[i] is a row


def test_numbers_gathered_by_star_args(mod):
    assert _inline(ad.show_adjoint(mod.gathered, 0.5, 0.2, 1.5))
    _close(mod.gathered, 0.5, 0.2, 1.5)
    _close(mod.gathered, 0.5, 0.2, 1.5, 0.7)
    _close(mod.gathered, 0.5, np.array(0.2), 1.5)  # numbers and an array: as before
