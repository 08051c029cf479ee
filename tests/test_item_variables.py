"""A local list or dict used only item by item at constant places becomes one variable
per item (passes/item_vars.py): a state kept as `s = [x, v]` or `st = {"x": x, "v": v}`
and updated by position or key in a loop was dispatched at run time, 300 to 570 times
the plain call (issue 15). The values, errors and gradients are those of the container;
a container used in any other way is left as it was."""
import math
import re

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads

from .source_modules import module_from_source

SOURCE = '''
import math
import numpy as np


def list_state(k):
    s = [1.0, 0.0]
    for _ in range(50):
        s[1] = s[1] - 0.01 * k * s[0]
        s[0] = s[0] + 0.01 * s[-1]
    return s[0]


def dict_state(k, c):
    st = {"x": 1.0, "v": 0.0, "damping": c}
    for _ in range(50):
        st["v"] = st["v"] - 0.01 * (k * math.sin(st["x"]) + st["damping"] * st["v"])
        st["x"] = st["x"] + 0.01 * st["v"]
    return st["x"] * st["v"]


def int_keys_and_arrays(w, x):
    layers = {0: w, 1: w * 2.0}
    h = np.tanh(layers[0] * x)
    layers[1] = layers[1] + h
    return float(np.sum(layers[1] * h))


def read_before_any_write(a, b):
    s = [a * b, b]
    t = s[0] + s[1]
    s[0] = t * t
    return s[0] + s[1]


def swap_through_names(a, b):
    s = [a, b]
    for _ in range(3):
        t = s[0]
        s[0] = s[1] * 0.5
        s[1] = t + s[0]
    return s[0] * s[1]


def in_a_branch(a, b):
    s = [a, b]
    if a > 0.5:
        s[0] = a * b
    else:
        s[1] = a - b
    return s[0] + s[1] ** 2


def one_display_reads_another(a, b):
    s = [a, b]
    d = {"p": s[0] * 2.0, "q": s[1]}
    s[0] = d["q"] * d["p"]
    return s[0] + d["p"]


# ----- left as they were -----

def measured(a):
    s = [a, 2.0 * a]
    s[0] = s[0] * s[1]
    return s[0] + len(s)


def passed_on(a):
    s = [a, 2.0 * a]
    s[1] = s[0] * s[1]
    return sum(s)


def augmented(a):
    s = [a, 2.0 * a]
    s[0] += s[1]
    return s[0] * s[1]


def computed_place(a):
    s = [a, 2.0 * a]
    for i in range(2):
        s[i] = s[i] * a
    return s[0] + s[1]


def captured(a):
    s = [a, 2.0 * a]
    f = lambda: s[0] * s[1]  # noqa: E731
    s[0] = a * a
    return f()


def new_key(a):
    d = {"x": a}
    d["y"] = a * 3.0
    return d["x"] * d["y"]


def bound_twice(a):
    s = [a]
    s = [a * 2.0, a]
    s[0] = s[0] * s[1]
    return s[0]


def out_of_range(a):
    s = [a, a]
    return s[2]


def missing_key(a):
    d = {"x": a}
    return d["y"]
'''

KEPT = ["measured", "passed_on", "augmented", "computed_place", "captured", "new_key", "bound_twice"]


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return module_from_source(tmp_path_factory.mktemp("item_variables"), "item_variables_mod", SOURCE)


@pytest.mark.parametrize("name, args", [
    ("list_state", (0.9,)), ("dict_state", (0.9, 0.1)), ("read_before_any_write", (0.7, 0.4)),
    ("swap_through_names", (0.7, 0.4)), ("in_a_branch", (0.7, 0.4)), ("in_a_branch", (0.3, 0.4)),
    ("one_display_reads_another", (0.7, 0.4)),
])
def test_items_become_variables(mod, name, args):
    f = getattr(mod, name)
    text = ad.show_adjoint(f, *args)
    assert "_rt.getitem_pair" not in text and "_rt.setitem" not in text and "_rt.binop" not in text
    assert "dispatched" not in text
    assert ad.pullback(f, *args)[0] == f(*args)
    check_grads(f, *args, order=2)


def test_the_generated_code_reads_like_names(mod):
    text = ad.show_adjoint(mod.list_state, 0.9)
    assert re.search(r"s_1 = s_1 - mul(_\d+)? \* s_0", text) and "# s[1] = s[1] - 0.01 * k * s[0]" in text
    text = ad.show_adjoint(mod.dict_state, 0.9, 0.1)
    assert "st_v" in text and "st_damping" in text


def test_arrays_as_items(mod):
    w = np.array([0.2, -0.4, 0.7])
    assert ad.pullback(mod.int_keys_and_arrays, w, 0.8)[0] == mod.int_keys_and_arrays(w, 0.8)
    check_grads(mod.int_keys_and_arrays, w, 0.8)
    assert "_rt.getitem_pair" not in ad.show_adjoint(mod.int_keys_and_arrays, w, 0.8)


@pytest.mark.parametrize("name", KEPT)
def test_containers_used_another_way_are_left_alone(mod, name):
    f = getattr(mod, name)
    text = ad.show_adjoint(f, 0.7)
    assert "_rt.getitem_pair" in text or "_rt.setitem" in text or "[0]" in text
    assert "s_0" not in text and "d_x" not in text
    assert ad.pullback(f, 0.7)[0] == f(0.7)
    check_grads(f, 0.7)


def test_errors_stay_pythons(mod):
    with pytest.raises(IndexError):
        ad.gradient(mod.out_of_range, 0.7)
    with pytest.raises(KeyError):
        ad.gradient(mod.missing_key, 0.7)


def test_gradients_agree_with_the_same_code_written_with_names(mod):
    def with_names(k):
        x, v = 1.0, 0.0
        for _ in range(50):
            v = v - 0.01 * k * x
            x = x + 0.01 * v
        return x

    assert ad.gradient(mod.list_state, 0.9)[0] == pytest.approx(ad.gradient(with_names, 0.9)[0], rel=1e-14)
    assert math.isfinite(ad.gradient(mod.list_state, 0.9)[0])


# ----- the shapes the containers' own code refuses, with their items as variables -----
#
# A list or dict holding an object that the function then changes in place through the
# list (`p[0][0] = x`) or through its own name while the list is read, used only at
# constant places: its items are names of that object, and a change through one shows
# through the others as the aliases of names do. Their value and gradient are Python's
# (with containers kept, tests/test_held_elsewhere.py and tests/test_inactive_writes.py
# show them refused); what is still refused names the user's expression (`C[0]`).

def _shapes():
    from . import test_held_elsewhere as H, test_inactive_writes as W

    return (list(H.REFUSED) + list(H.MORE) + list(H.WRITTEN_BY_NAME)
            + [W.append_through_an_item, W.append_through_a_name])


@pytest.mark.parametrize("f", _shapes(), ids=lambda f: f.__name__)
def test_what_containers_refuse_is_right_or_refused_with_items_as_variables(f):
    x = 1.5
    try:
        y, back = ad.pullback(f, x)
    except (ad.UnsupportedSyntaxError, ad.MutationError) as exc:
        msg = str(exc)
        assert "_0`" not in msg and "_1`" not in msg and "_a`" not in msg  # (the user's `C[0]`)
        return
    assert y == pytest.approx(f(x))
    check_grads(f, x)
