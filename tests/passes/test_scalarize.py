"""passes/scalarize.py on the normalised tree: ``x = p[key]`` of a dict display reads the
name the display was made from, where nothing can bind it again; anything else stays."""
from adjoint_s2s.passes import scalarize
from adjoint_s2s.templates import to_source

from .pipeline import normalised


def _after(fn):
    node, _, user_names, _, _ = normalised(fn)
    n = scalarize.scalarize_items(node, user_names)
    return n, to_source(node)


def loop_over_params(a, b):
    p = {"decay": a, "gain": b}
    x = 1.0
    for _ in range(3):
        x = p["decay"] * x + p["gain"]
    return x


def user_copy(a, b):
    p = {"a": a}
    d = p["a"]
    return d * b


def name_bound_again(a, b):
    p = {"a": a}
    a = a * 2.0
    return p["a"] * a


def constant_value(a, b):
    p = {"lr": 0.5, "a": a}
    return p["lr"] * p["a"]


def test_the_module_docstring_example():
    n, text = _after(loop_over_params)
    assert n == 2
    assert "    for _ in range_1:\n        mul = a * x\n        x = mul + b\n" in text


def test_a_users_copy_stays_a_copy():
    n, text = _after(user_copy)
    assert n == 1 and "d = a" in text


def test_a_name_bound_again_keeps_the_read():
    n, text = _after(name_bound_again)
    assert n == 0 and "p['a']" in text


def test_constant_values():
    n, text = _after(constant_value)
    assert n == 2 and "    result = 0.5 * a\n" in text
