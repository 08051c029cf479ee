"""User classes that take over a write, and class attributes shared by every instance.

Each case here gave a silently wrong gradient before: an item write into a class with its
own ``__setitem__`` (it ran as plain Python), a store run by a property's setter, a
descriptor's ``__set__`` or an own ``__setattr__`` (the gradient went to the field the
getter reads, never taken back out), and a container that the class (or a module global)
holds, changed in place through an instance (followed as that instance's own field).
They are refused, naming the construct, the user's file and line and the way out; the
ways out named in the messages, and the ordinary uses next to them, are differentiated
and checked against central differences. A field stored into an object whose class keeps
its fields in ``__slots__`` (no ``__dict__``) kept the old field's gradient: slots are
now followed through the field store like a ``__dict__``'s fields, and differentiated.
"""
from dataclasses import dataclass

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import UnsupportedSyntaxError
from adjoint_s2s.testing import numerical_gradient

from .refusals import agrees, refused

X2 = np.array([0.5, -1.0])


# ----- a class with its own __setitem__ ------------------------------------------------------


class Vec:
    def __init__(self, data):
        self.data = data

    def __getitem__(self, i):
        return self.data[i]

    def __setitem__(self, i, v):
        self.data[i] = v

    def __len__(self):
        return len(self.data)


def custom_setitem(x):
    v = Vec(x * 1.0)
    v[0] = x[1] * 3
    return float(v[0] * v[1])


def custom_setitem_shared(x):
    d = x * 1.0
    v = Vec(d)
    v[0] = x[1] * 3
    return float(np.sum(d))


def custom_setitem_list(x):
    v = Vec([x[0], x[1]])
    v[0] = x[1] * 3
    return float(v[0] * v[1])


def custom_setitem_augmented(x):
    v = Vec(x * 1.0)
    v[0] += x[1] * 3
    return float(v[0] * v[1])


def custom_setitem_slice(x):
    v = Vec(x * 1.0)
    v[0:1] = x[1] * 3
    return float(v[0] * v[1])


def custom_setitem_constant(x):
    v = Vec(x * 1.0)
    v[0] = 0.0
    return float(v[0] + v[1])


def _fill(v, x):
    v[0] = x[1] * 3
    return v[0] * v[1]


def custom_setitem_in_helper(x):
    v = Vec(x * 1.0)
    return float(_fill(v, x))


class Doubling(dict):
    def __setitem__(self, k, val):
        super().__setitem__(k, val * 2)


def dict_subclass_setitem(x):
    d = Doubling()
    d["a"] = x[0]
    return d["a"] * x[1]


@pytest.mark.parametrize("fn, statement", [
    (custom_setitem, "v[0] = x[1] * 3"),
    (custom_setitem_shared, "v[0] = x[1] * 3"),
    (custom_setitem_list, "v[0] = x[1] * 3"),
    (custom_setitem_augmented, "v[0] += x[1] * 3"),
    (custom_setitem_slice, "v[0:1] = x[1] * 3"),
    (custom_setitem_constant, "v[0] = 0.0"),
    (_fill, "v[0] = x[1] * 3"),
])
def test_own_setitem_isrefused(fn, statement):
    run = custom_setitem_in_helper if fn is _fill else fn
    refused(run, X2.copy(), statement, "class Vec", "`__setitem__`",
             "obj.__setitem__(key, value)", where=fn)


def test_dict_subclass_with_own_setitem_isrefused():
    refused(dict_subclass_setitem, X2.copy(), 'd["a"] = x[0]', "class Doubling")


def explicit_setitem_call(x):
    v = Vec(x * 1.0)
    v.__setitem__(0, x[1] * 3)
    return float(v[0] * v[1])


def own_getitem_only(x):
    v = Vec(x * 2.0)
    return float(v[0] * v[1] + v[0:2].sum())


def plain_containers(x):
    a = x * 1.0
    a[0] = x[1] * 3
    lst = [x[0], x[1]]
    lst[1] = a[0] * x[0]
    d = {"k": x[0]}
    d["k"] = lst[1] * 2
    return float(a[0] * a[1] + lst[0] * lst[1] + d["k"])


@pytest.mark.parametrize("fn", [explicit_setitem_call, own_getitem_only, plain_containers])
def test_way_out_and_ordinary_items_are_differentiated(fn):
    agrees(fn, X2.copy())


def test_explicit_setitem_gives_the_new_value():
    # the way out named in the refusal: the probe's program written with the method call
    assert np.allclose(ad.gradient(explicit_setitem_call, X2.copy())[0], [0.0, -6.0])


# ----- stores the class takes over: property setters, descriptors, __setattr__ --------------


class Prop:
    def __init__(self, x):
        self._x = x

    @property
    def sq(self):
        return self._x * self._x

    @property
    def x(self):
        return self._x

    @x.setter
    def x(self, v):
        self._x = v

    def set_x(self, v):
        self._x = v


def property_getset(x):
    p = Prop(x)
    p.x = p.sq + x
    return p.sq


def property_set_only(x):
    p = Prop(x)
    p.x = 3 * x
    return p.x


class SetInInit:
    def __init__(self, x):
        self.x = x

    @property
    def x(self):
        return self._x

    @x.setter
    def x(self, v):
        self._x = v


def property_set_in_init(x):
    p = SetInInit(x)
    return p.x * 2


class Twice:
    def __setattr__(self, name, v):
        object.__setattr__(self, name, v * 2)


def own_setattr(x):
    s = Twice()
    s.a = x
    return s.a


class Doubler:
    def __set_name__(self, owner, name):
        self.name = "_" + name

    def __get__(self, obj, typ=None):
        return getattr(obj, self.name)

    def __set__(self, obj, v):
        setattr(obj, self.name, 2 * v)


class WithDescriptor:
    val = Doubler()


def descriptor_set(x):
    d = WithDescriptor()
    d.val = x
    return d.val


@pytest.mark.parametrize("fn, statement, words", [
    (property_getset, "p.x = p.sq + x", ("setter of its property `x`", "class Prop")),
    (property_set_only, "p.x = 3 * x", ("setter of its property `x`",)),
    (property_set_in_init, "self.x = x", ("setter of its property `x`", "class SetInInit")),
    (own_setattr, "s.a = x", ("its own `__setattr__`", "class Twice")),
    (descriptor_set, "d.val = x", ("`__set__` of its descriptor `val`", "a Doubler")),
])
def test_store_taken_over_by_the_class_isrefused(fn, statement, words):
    where = SetInInit.__init__ if fn is property_set_in_init else fn
    refused(fn, 0.5, statement, *words, where=where)


def property_through_method(x):
    p = Prop(x)
    p.set_x(p.sq + x)
    return p.sq


def property_getters(x):
    p = Prop(x)
    return p.sq + p.x


class Plain:
    def __init__(self, w):
        self.w = w

    def scale(self, s):
        self.w = self.w * s


def plain_attribute_stores(x):
    b = Plain(x)
    b.w = b.w * 3
    b.scale(x)
    return b.w


@pytest.mark.parametrize("fn", [property_through_method, property_getters, plain_attribute_stores])
def test_way_out_and_ordinary_stores_are_differentiated(fn):
    agrees(fn, 0.5)


def test_property_way_out_value():
    # p.sq after p._x = x*x + x: (x^2 + x)^2, derivative 2 (x^2 + x)(2x + 1) = 3 at 0.5
    assert np.isclose(ad.gradient(property_through_method, 0.5)[0], 3.0)


# ----- a container the class or a module global holds, changed through an instance --------


class Reg:
    shared = []
    table = {}
    arr = np.zeros(2)
    count = 0.0
    W = np.array([[1.0, 2.0], [3.0, 4.0]])

    def __init__(self, v):
        self.v = v

    def bump(self, v):
        self.count += v


def class_attr_list(x):
    Reg.shared.clear()
    r = Reg(x)
    r.shared.append(x * x)
    return Reg.shared[0]


def class_attr_list_by_name(x):
    Reg.shared.clear()
    r = Reg(x)
    s = r.shared
    s.append(x * x)
    return Reg.shared[0]


def class_attr_list_item(x):
    Reg.shared.clear()
    Reg.shared.append(0.0)
    r = Reg(x)
    r.shared[0] = x * x
    return Reg.shared[0]


def class_attr_list_other_instance(x):
    Reg.shared.clear()
    r = Reg(x)
    r2 = Reg(x)
    r.shared.append(x * x)
    return r2.shared[0]


def class_attr_list_augmented(x):
    Reg.shared.clear()
    r = Reg(x)
    r.shared += [x * x]
    return Reg.shared[0]


def class_attr_dict(x):
    Reg.table.clear()
    r = Reg(x)
    r.table["a"] = x * x
    return Reg.table["a"]


def class_attr_array(x):
    Reg.arr = np.zeros(2)
    r = Reg(x)
    r.arr[0] = x * x
    return r.arr[0] + Reg.arr[0]


def class_attr_array_augmented(x):
    Reg.arr = np.zeros(2)
    r = Reg(x)
    r.arr += x * x
    return Reg.arr[0]


LOG = []
GARR = np.zeros(2)


class Logged:
    def __init__(self, v):
        self.v = v
        self.log = LOG
        self.arr = GARR


def global_list_through_field(x):
    LOG.clear()
    r = Logged(x)
    r.log.append(x * x)
    return LOG[0]


def global_array_through_field(x):
    GARR[:] = 0.0
    r = Logged(x)
    r.arr[0] = x * x
    return GARR[0] + r.arr[0]


@pytest.mark.parametrize("fn, statement, words", [
    (class_attr_list, "r.shared.append(x * x)", ("attribute `shared`", "class itself holds")),
    (class_attr_list_by_name, "s.append(x * x)", ("attribute `shared`",)),
    (class_attr_list_item, "r.shared[0] = x * x", ("a list that the class itself holds",)),
    (class_attr_list_other_instance, "r.shared.append(x * x)", ("class Reg",)),
    (class_attr_list_augmented, "r.shared += [x * x]", ("attribute `shared`",)),
    (class_attr_dict, 'r.table["a"] = x * x', ("a dict that the class itself holds",)),
    (class_attr_array, "r.arr[0] = x * x", ("a ndarray that the class itself holds",)),
    (class_attr_array_augmented, "r.arr += x * x", ("attribute `arr`",)),
    (global_list_through_field, "r.log.append(x * x)", ("module's global `LOG`",)),
    (global_array_through_field, "r.arr[0] = x * x", ("module's global `GARR`",)),
])
def test_shared_container_changed_through_an_instance_isrefused(fn, statement, words):
    refused(fn, 2.0, statement, "self.", *words)


class Own:
    def __init__(self, v):
        self.items = []
        self.arr = np.zeros(2)
        self.v = v


def own_containers(x):
    o = Own(x)
    o.items.append(x * x)
    o.arr[0] = x * o.v
    o.arr += x
    return o.items[0] + o.arr[0] * o.arr[1]


def class_float_counter(x):
    r = Reg(x)
    r.count += x * x
    r.bump(x)
    return r.count


def class_array_read(x):
    r = Reg(x)
    return float(np.sum(r.W @ np.array([x, x * x])))


@pytest.mark.parametrize("fn", [own_containers, class_float_counter, class_array_read])
def test_own_containers_and_class_constants_are_differentiated(fn):
    agrees(fn, 2.0)


# ----- fields kept in __slots__: followed through the field store like a __dict__'s -------


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a):
        self.a = a
        self.b = a * a

    def total(self):
        return self.a + self.b

    def scale(self, s):
        self.a = self.a * s


@dataclass(slots=True)
class SlottedData:
    a: float
    b: float


def slot_store(x):
    s = Slotted(x)
    s.a = s.a * 3
    return s.a


def slot_store_by_method(x):
    s = Slotted(x)
    s.scale(x)
    s.b = s.b + s.a
    return s.total() * s.a


def slots_in_a_list(x):
    ss = [Slotted(x), Slotted(2 * x)]
    for s in ss:
        s.a = s.a * x
    return ss[0].a + ss[1].b * ss[1].a


def slotted_dataclass_store(x):
    d = SlottedData(x, 2.0)
    d.b = d.a * d.b * x
    return d.a + d.b


@pytest.mark.parametrize("fn", [slot_store, slot_store_by_method, slots_in_a_list,
                                slotted_dataclass_store])
def test_slot_stores_are_differentiated(fn):
    agrees(fn, 1.5)
    # second order: against differences of the gradient
    got = ad.gradient(lambda t: ad.gradient(fn, t)[0], 1.5)[0]
    want = numerical_gradient(lambda t: ad.gradient(fn, t)[0], 1.5)[0]
    assert np.allclose(got, want, rtol=1e-5, atol=1e-6), (got, want)


def slot_argument(s, x):
    s.a = s.a * x
    return s.a * s.b


def test_slotted_argument_gets_its_fields_gradient():
    gs, gx = ad.gradient(slot_argument, Slotted(3.0), 2.0)
    # s.a * x * s.b with a = 3, b = 9, x = 2: d/da = x b = 18, d/db = a x = 6, d/dx = a b = 27
    assert np.isclose(gs.a, 18.0) and np.isclose(gs.b, 6.0) and np.isclose(gx, 27.0)


@pytest.mark.parametrize("fn", [global_list_through_field, global_array_through_field,
                                class_attr_list, property_getset])
def test_refused_when_differentiated_again(fn):
    # the checks run in the generated code's rules too: the globals asked are those of the
    # generated code on the stack, and the site is the user's file
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.gradient(lambda t: ad.gradient(fn, t)[0], 2.0)
    assert f"at {__file__}, line " in str(info.value)
