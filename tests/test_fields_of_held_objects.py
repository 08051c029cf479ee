"""A field written into an object read out of a container (`objs[0].v = x * y`, `for p in
ps: p.x = e`, `d["o"].v = e`, `objs[0].l.append(e)`): the container holds the object, and
reading the field through the container again carries the gradient. The activity
analysis took the container for a constant (it was made of constants), and the gradient
was silently lost (0.0 for 0.49, (0.0, 0.0) for a particle loop)."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient


class O:
    pass


class H:
    def __init__(self):
        self.d = {"k": 0.0}
        self.l = [0.0]


class Particle:
    def __init__(self, x, v):
        self.x = x
        self.v = v


class Node:
    def __init__(self, op=None, children=None, val=0.0):
        self.op, self.children, self.val = op, children or [], val

    def eval(self):
        if self.op is None:
            return self.val
        vals = [c.eval() for c in self.children]
        return sum(vals) if self.op == "+" else vals[0] * vals[1]


def item_field(x, y):
    objs = [O()]
    objs[0].v = x * y
    return objs[0].v * x


def dict_item_field(x, y):
    d = {"o": O()}
    d["o"].v = x * y
    return d["o"].v * x


def augmented_item_field(x, y):
    objs = [O(), O()]
    objs[0].v = x
    objs[0].v += y
    return objs[0].v * x


def particles(x, y):
    ps = [Particle(1.0, 1.0), Particle(1.0, 1.0)]
    for p in ps:
        p.x = x * y
    return ps[0].x * ps[1].x


def particles_stepped(x, y):
    ps = [Particle(1.0, 0.0) for _ in range(3)]
    for k, p in enumerate(ps):
        p.v = x * (k + 1)
    for _ in range(2):
        for p in ps:
            p.x = p.x + 0.1 * p.v * y
    return sum(p.x * p.x for p in ps)


def field_dict_item(x, y):
    objs = [H()]
    objs[0].d["k"] = x * y
    return objs[0].d["k"] * x


def field_list_append(x, y):
    objs = [H()]
    objs[0].l.append(x * y)
    return objs[0].l[-1] * x


def tree_filled_later(x, y):
    leaves = [Node(), Node(), Node()]
    t = Node("*", [leaves[0], Node("+", [leaves[1], leaves[2]])])
    leaves[0].val = x
    leaves[1].val = y
    leaves[2].val = x
    return t.eval()


def nested_containers(x, y):
    grid = [[O(), O()], [O(), O()]]
    grid[1][0].v = x * y
    grid[0][1].v = y
    return grid[1][0].v * grid[0][1].v


CASES = [item_field, dict_item_field, augmented_item_field, particles, particles_stepped, field_dict_item,
         field_list_append, tree_filled_later, nested_containers]


@pytest.mark.parametrize("fn", CASES)
def test_the_field_gradient_comes_back_through_the_container(fn):
    args = (0.7, 1.3)
    y, back = ad.pullback(fn, *args)
    assert np.isclose(y, fn(*args))
    got = back(1.0)
    want = numerical_gradient(fn, *args)
    assert np.allclose(got, want, rtol=1e-6, atol=1e-8), (got, want)


def array_fields(w, b):
    layers = [O(), O()]
    for layer in layers:
        layer.w = w
        layer.b = b
    h = np.ones(3)
    for layer in layers:
        h = np.tanh(layer.w @ h + layer.b)
    return np.sum(h ** 2)


def test_array_fields_set_in_a_loop_over_held_objects():
    rng = np.random.default_rng(0)
    w, b = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3) * 0.5
    got = ad.gradient(array_fields, w, b)
    want = numerical_gradient(array_fields, w, b)
    for g, n in zip(got, want):
        assert np.allclose(g, n, rtol=1e-6, atol=1e-8)


def test_second_derivative_through_a_held_objects_field():
    def f(x):
        objs = [O()]
        objs[0].v = x * x
        return objs[0].v * x  # x**3

    assert ad.hessian(f, 0.7) == pytest.approx(6 * 0.7)
