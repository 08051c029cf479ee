"""A field stored into an object that a module global (or a class attribute) holds.

Generated code reads a module global, and what it holds, as a constant unless it stores
through the global's own name. A field stored through another name (an alias, an
argument, an item of a global list or dict, a class attribute reached through an
instance) and read back through the global gave a gradient of 0. Those stores are
refused when reversed, naming the construct, the user's file and line and the way out;
stores into objects of the function's own (made in it, passed in, dataclasses) and a
store through the global's own name are differentiated and checked against central
differences.
"""
import sys
from dataclasses import dataclass

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import UnsupportedSyntaxError

from .refusals import agrees, line_of, refused


class Cfg:
    def __init__(self):
        self.w = 1.0


G = Cfg()
_this_module = sys.modules[__name__]
OBJS = [Cfg()]
BY_NAME = {"a": Cfg()}


class Outer:
    shared = Cfg()


def alias_of_global(x):
    g = G
    g.w = x * x
    return G.w * 2.0


def item_of_global_list(x):
    OBJS[0].w = x * x
    return OBJS[0].w * 2.0


def item_of_global_list_by_name(x):
    o = OBJS[0]
    o.w = x * x
    return OBJS[0].w * 2.0


def item_of_global_dict(x):
    BY_NAME["a"].w = x * x
    return BY_NAME["a"].w * 2.0


def _store(g, x):
    g.w = x * x
    return 0.0


def global_changed_by_helper(x):
    _store(G, x)
    return G.w * 2.0


def global_passed_in(x, c):
    c.w = x * x
    return G.w * 2.0


def class_attribute_through_instance(x):
    o = Outer()
    o.shared.w = x * x
    return Outer.shared.w


def class_attribute_through_class(x):
    Outer.shared.w = x * x
    return Outer.shared.w


def test_field_of_global_through_another_namerefused():
    refused(alias_of_global, 1.5, "g.w = x * x", "global `G`", "`G.w = value`")
    refused(global_changed_by_helper, 1.5, "g.w = x * x", "global `G`", where=_store)


def test_field_of_global_passed_inrefused():
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.gradient(global_passed_in, 1.5, G)
    assert f"{__file__}, line {line_of(global_passed_in, 'c.w = x * x')}" in str(info.value)
    assert "global `G`" in str(info.value)


def test_item_of_global_containerrefused():
    refused(item_of_global_list, 1.5, "OBJS[0].w = x * x", "`OBJS[0]`, held by the module's global `OBJS`")
    refused(item_of_global_list_by_name, 1.5, "o.w = x * x", "`OBJS`")
    refused(item_of_global_dict, 1.5, 'BY_NAME["a"].w = x * x', "`BY_NAME`")


def test_class_attribute_objectrefused():
    refused(class_attribute_through_instance, 1.5, "o.shared.w = x * x",
             "`Outer.shared`, held by the module's global `Outer`", "own in `__init__`")
    refused(class_attribute_through_class, 1.5, "Outer.shared.w = x * x", "`Outer.shared`")


class Model:
    def __init__(self):
        self.w = 1.0

    def set(self, x):
        self.w = x * x

    def get(self):
        return self.w * 2.0


MODEL = Model()


def methods_of_global(x):
    MODEL.set(x)
    return MODEL.get()


def method_then_global_read(x):
    MODEL.set(x)
    return MODEL.w * 3.0


class Holder:
    def __init__(self):
        self.sub = Cfg()


HOLDER = Holder()


def field_of_global(x):
    HOLDER.sub.w = x * x
    return HOLDER.sub.w * 2.0


NESTED = [[Cfg()]]


class Shelf:
    objs = [Cfg()]

    def __init__(self):
        self.items = [Cfg()]


SHELF = Shelf()


def nested_item(x):
    NESTED[0][0].w = x * x
    return NESTED[0][0].w * 2.0


def item_of_a_field(x):
    SHELF.items[0].w = x * x
    return SHELF.items[0].w * 2.0


def item_of_a_class_attribute(x):
    Shelf.objs[0].w = x * x
    return Shelf.objs[0].w * 2.0


def test_object_held_deeperrefused():
    refused(nested_item, 1.5, "NESTED[0][0].w = x * x", "`NESTED[0][0]`, held by")
    refused(item_of_a_field, 1.5, "SHELF.items[0].w = x * x", "`SHELF.items[0]`, held by")
    refused(item_of_a_class_attribute, 1.5, "Shelf.objs[0].w = x * x", "`Shelf.objs[0]`")


def _read_g(n):
    if n <= 0:
        return G.w
    return _read_g(n - 1) * 1.0


def read_in_plain_call(x, c):
    c.w = x * x
    return _read_g(2)  # no active argument: run as plain Python, G.w a constant


def test_method_of_globalrefused():
    refused(methods_of_global, 1.5, "self.w = x * x", "global `MODEL`", where=Model.set)
    refused(method_then_global_read, 1.5, "self.w = x * x", "`MODEL`", where=Model.set)


def test_field_of_global_objectrefused():
    refused(field_of_global, 1.5, "HOLDER.sub.w = x * x", "`HOLDER.sub`, held by")


def test_read_in_a_plain_callrefused():
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.gradient(read_in_plain_call, 1.5, G)
    assert f"{__file__}, line {line_of(read_in_plain_call, 'c.w = x * x')}" in str(info.value)


def module_attribute_alias(x):
    g = _this_module.G  # a global reached as an attribute of its module
    g.w = x * x
    return _this_module.G.w * 2.0


def test_global_of_a_modulerefused():
    refused(module_attribute_alias, 1.5, "g.w = x * x", "global `G`")


def argument_only(x, c):
    c.w = x * x
    return c.w


def test_refusal_leaves_no_field_gradient_behind():
    # a refused pullback had read G.w through g (its gradient in the store, keyed by G)
    def alias_read_back(x):
        g = G
        g.w = x * x
        return g.w * 2.0

    with pytest.raises(UnsupportedSyntaxError):
        ad.gradient(alias_read_back, 1.5)
    assert np.isclose(ad.gradient(argument_only, 1.5, G)[0], 3.0)


# ----- what is differentiated --------------------------------------------------------------


def global_by_own_name(x):
    G.w = x * x
    return G.w * 2.0


def made_here(x):
    c = Cfg()
    c.w = x * x
    return c.w * 2.0 + G.w


@dataclass
class Point:
    a: float
    b: float


def dataclass_fields(x):
    p = Point(x, 2.0)
    p.b = p.a * x + p.b
    for _ in range(3):
        p.a = p.a * p.b
    return p.a + p.b * OBJS[0].w


def argument_fields(x, c):
    c.w = x * x
    return c.w * 3.0


def test_ordinary_stores_differentiated():
    agrees(global_by_own_name, 1.5)
    agrees(made_here, 1.5)
    agrees(dataclass_fields, 0.7)
    got = ad.gradient(argument_fields, 1.5, Cfg())[0]
    assert np.isclose(got, 9.0), got  # d(3 x^2)/dx at 1.5
    agrees(lambda x: argument_fields(x, Cfg()), 1.5)


def test_second_order_through_own_name():
    # d/dx of the gradient 4x of 2x^2, the field stored through the global's own name
    assert np.isclose(ad.gradient(lambda x: ad.gradient(global_by_own_name, x)[0], 1.5)[0], 4.0)
    with pytest.raises(UnsupportedSyntaxError):
        ad.gradient(lambda x: ad.gradient(alias_of_global, x)[0], 1.5)


acc = Cfg()  # named as a helper the generated code calls (`_rt.acc`): no read of this global


def rescale(obj, c):
    obj.w = obj.w * c
    return obj.w + obj.w


def test_global_passed_in_and_not_read_differentiated():
    acc.w = 5.0
    got = ad.gradient(rescale, acc, 3.0)
    assert np.isclose(got[0].w, 6.0) and np.isclose(got[1], 10.0), got


LOG = []


def global_list_alias_read_back(x):
    LOG.clear()
    log = LOG
    log.append(x * x)
    return 1.0 + len(LOG) * x + LOG[0]


def global_list_alias_read_through_alias(x):
    LOG.clear()
    log = LOG
    log.append(x * x)
    return log[0]


def test_global_list_changed_through_a_local_name_and_read_through_the_global_refused():
    # (the change made the global's name a local of the generated code: a bare
    # UnboundLocalError before)
    refused(global_list_alias_read_back, 1.5, "log.append(x * x)", "`LOG` from outside", "`log = list(LOG)`")
    agrees(global_list_alias_read_through_alias, 1.5)


WEIGHTS = [np.array([0.2, -0.4, 0.7]), np.array([0.1, 0.5, -0.3])]


class Box:
    def __init__(self, k, lib):
        self.k = k
        self.lib = lib  # (a module in a field: the object stays an object)


def stores_beside_a_global_list_of_arrays(x):
    # the global list is searched for the object stored into, by identity: `b in
    # WEIGHTS` would compare b with each array (an ambiguous truth value, a crash)
    b = Box(x, np)
    alias = b
    h = np.full(3, alias.k)
    for W in WEIGHTS:
        h = np.tanh(W * h + b.k)
    return np.sum(h) * b.lib.cos(x)


def test_a_store_beside_a_global_list_of_arrays_is_differentiated():
    x = 0.3
    want = (stores_beside_a_global_list_of_arrays(x + 1e-6) - stores_beside_a_global_list_of_arrays(x - 1e-6)) / 2e-6
    assert ad.gradient(stores_beside_a_global_list_of_arrays, x)[0] == pytest.approx(want, rel=1e-6)
