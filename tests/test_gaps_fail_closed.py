"""Programs where adjoint_s2s gave a value or a gradient other than Python's without an
error, or crashed inside its own code: a loop over a dict or a set whose body adds items
to it, an iterator a helper returned read twice, an attribute read through a class's own
__getattribute__, recursion deeper than the recursion limit allows under differentiated
code, a mapping of a class of its own unpacked with ** or given to dict(). Each is now
what Python does, or refused where the user wrote it."""
import collections.abc
import inspect
import sys

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import AdjointError, NotDifferentiableError, UnsupportedSyntaxError
from tests.refusals import agrees, line_of, refused


XS = np.array([0.5, 0.7, 0.1, 0.4])


def _same_as_python(fn, x, message):
    """fn raises Python's RuntimeError when called plainly, and so do gradient, pullback
    and a second-order gradient."""
    with pytest.raises(RuntimeError, match=message):
        fn(x)
    for run in (lambda: ad.gradient(fn, x), lambda: ad.pullback(fn, x),
                lambda: ad.gradient(lambda t: ad.gradient(fn, t)[0], x)):
        with pytest.raises(RuntimeError, match=message):
            run()


# ----- a dict or a set changed in size inside a loop over it --------------------------------


def dict_key_added(x):
    d = {"a": x}
    for k in d:
        d["b"] = x * 2.0
    return d["a"] + len(d)


def constant_dict_key_added(x):
    d = {"a": 1.0}
    s = x
    for k in d:
        d["b"] = 2.0
        s = s * x
    return s


def key_added_over_items(x):
    d = {"a": x}
    for k, v in d.items():
        d[k + "x"] = v * 2.0
    return d["a"]


def key_added_over_keys(x):
    d = {"a": x}
    for k in d.keys():
        d["b"] = x
    return d["a"]


def key_added_over_values(x):
    d = {"a": x}
    for v in d.values():
        d["b"] = v * 2.0
    return d["a"]


def dict_updated(x):
    d = {"a": 1.0}
    for k in d:
        d.update(b=2.0)
    return x * len(d)


def set_grown(x):
    s = {1.0, 2.0}
    t = x
    for v in s:
        s.add(3.0)
        t = t * x
    return t


@pytest.mark.parametrize("fn", [dict_key_added, constant_dict_key_added, key_added_over_items,
                                key_added_over_keys, key_added_over_values, dict_updated])
def test_a_dict_grown_in_a_loop_over_it_raises_as_python_does(fn):
    # before: the write went into a copy, and the loop went on over the old keys: a value
    _same_as_python(fn, 0.7, "dictionary changed size during iteration")


def test_a_set_grown_in_a_loop_over_it_raises_as_python_does():
    _same_as_python(set_grown, 0.7, "Set changed size during iteration")


def key_added_then_break(x):
    d = {"a": x, "b": 2.0}
    for k in d:
        d["c"] = d[k] * x
        break
    return d["a"] * d["c"]


def visited_keys_written(x):
    d = {"a": x, "b": 2.0}
    for k in d:
        d[k] = d[k] * x
    return d["a"] * d["b"]


def existing_keys_updated(x):
    d = {"a": 1.0, "b": 2.0}
    s = x
    for k in d:
        d.update(b=3.0)
        s = s * d[k]
    return s


@pytest.mark.parametrize("fn", [key_added_then_break, visited_keys_written, existing_keys_updated])
def test_loops_that_python_runs_are_differentiated(fn):
    agrees(fn, 0.7)
    agrees(lambda t: ad.gradient(fn, t)[0], 0.7)


# ----- an iterator a helper returned, read twice -----------------------------------------


def _scale(v):
    return v * 3.0


def iter_of(xs):  # (not inlined: it calls another function of the module)
    ys = [_scale(v) for v in xs]
    return iter(ys)


def map_of(xs):
    t = _scale(1.0)
    return map(lambda v: v * t, xs)


def squares_of(xs):
    return (v * v for v in xs)


def squares_named(xs, c):
    g = (v * c for v in xs)
    return g


def total(it):
    s = 0.0
    for v in it:
        s = s + v
    return s


def next_then_loop(xs):
    it = iter_of(xs)
    s = next(it) * 100.0
    for v in it:
        s = s + v
    return s


def map_listed_twice(xs):
    it = map_of(xs)
    a = sum(list(it))
    return a + 10.0 * sum(list(it))


def generator_next_then_sum(xs):
    it = squares_of(xs)
    a = next(it)
    return a * 100.0 + sum(it)


def generator_summed_twice(xs):
    it = squares_of(xs)
    a = sum(it)
    return a + 10.0 * sum(it)


def loops_sharing_a_helpers_iterator(xs):
    it = iter_of(xs)
    s = 0.0
    for a in it:
        for b in it:
            s = s + a * b
            break
    return s


def zipped_with_itself(xs):
    it = iter_of(xs)
    s = 0.0
    for a, b in zip(it, it):
        s = s + a * b
    return s


def next_after_a_loop_that_stopped(xs):
    it = iter_of(xs)
    s = 0.0
    for v in it:
        s = s + v
        if s > 1.0:
            break
    return s + next(it, 0.0) * 10.0


def next_after_any(xs):
    it = iter_of(xs)
    found = any(v > 1.0 for v in it)
    return next(it, 0.0) * 10.0 + found


class Box:
    pass


def two_generators(xs):
    return (v * v for v in xs), (v * 2.0 for v in xs)


def generator_in_a_field(xs, box):
    box.g = (v * v for v in xs)
    return box


def keyword_generator(xs, g=None):
    return sum(g) + xs[0]


def one_of_two_summed_twice(xs):
    a, b = two_generators(xs)
    return sum(a) + sum(a)


def field_generator_summed_twice(xs):
    box = generator_in_a_field(xs, Box())
    return sum(box.g) + 10.0 * sum(box.g)


@pytest.mark.parametrize("fn, statement", [
    (one_of_two_summed_twice, "return sum(a) + sum(a)"),
    (field_generator_summed_twice, "return sum(box.g) + 10.0"),
    (next_then_loop, "for v in it:"),
    (next_after_a_loop_that_stopped, "return s + next(it, 0.0)"),
    (next_after_any, "return next(it, 0.0)"),
    (map_listed_twice, "return a + 10.0"),
    (generator_next_then_sum, "return a * 100.0"),
    (generator_summed_twice, "return a + 10.0"),
    (loops_sharing_a_helpers_iterator, "for b in it:"),
    (zipped_with_itself, "zip(it, it)"),
])
def test_an_iterator_read_again_after_items_were_taken_is_refused(fn, statement):
    # before: the second reader started from the first item again (a generator expression
    # was a list: generator_summed_twice was 11 times the plain value; the nested loops
    # gave 0.0; next() after a loop that stopped early found the iterator used up: 0.0 for
    # the next item), or the gradients of the items went to the wrong places
    refused(fn, XS.copy(), statement, "read again", "list(...)", "items[0]")


def next_of_a_helpers_generator(xs):
    it = squares_of(xs)
    return next(it) * 3.0 + next(it)


def generator_given_to_a_function(xs):
    return total(v * v for v in xs)


def returned_generator_summed(xs):
    return sum(squares_named(xs, 2.0)) ** 2


def one_loop_over_a_helpers_iterator(xs):
    s = 0.0
    for v in iter_of(xs):
        s = s + v * v
    return s


def two_generators_of_a_helper(xs):
    return total(squares_of(xs)) + max(squares_of(xs))


def both_generators_summed(xs):
    a, b = two_generators(xs)
    return sum(a) + sum(b)


def field_generator_summed(xs):
    return sum(generator_in_a_field(xs, Box()).g)


def generator_by_keyword(xs):
    return keyword_generator(xs, g=(v * v for v in xs))


def generator_in_an_item(xs):
    d = {}
    d["g"] = (v * v for v in xs)
    return sum(d["g"])


@pytest.mark.parametrize("fn", [both_generators_summed, field_generator_summed, generator_by_keyword,
                                generator_in_an_item,
                                next_of_a_helpers_generator, generator_given_to_a_function,
                                returned_generator_summed, one_loop_over_a_helpers_iterator,
                                two_generators_of_a_helper])
def test_an_iterator_read_once_is_differentiated(fn):
    assert ad.pullback(fn, XS.copy())[0] == pytest.approx(fn(XS.copy()))
    agrees(fn, XS.copy())
    agrees(lambda t: ad.gradient(fn, t)[0][0], XS.copy())


# ----- a class with a __getattribute__ of its own ------------------------------------------


class Tripled:
    def __init__(self, v):
        self.v = v
        self.label = "v"

    def __getattribute__(self, name):
        if name == "v":
            return object.__getattribute__(self, "v") * 3.0
        return object.__getattribute__(self, name)

    def doubled(self):
        return self.v * 2.0


class Computed:  # __getattr__: called for the attributes the object does not have
    def __init__(self, v):
        self.v = v

    def __getattr__(self, name):
        if name == "w":
            return self.v * 5.0
        raise AttributeError(name)


def field_of_a_local_object(x):
    o = Tripled(x)
    return o.v * o.v


def field_of_an_argument(x, o=Tripled(0.3)):
    return o.v * x


def field_through_getattr(x):
    o = Tripled(x)
    return getattr(o, "v")


@pytest.mark.parametrize("fn, statement", [
    (field_of_a_local_object, "return o.v * o.v"),
    (field_of_an_argument, "return o.v * x"),
    (field_through_getattr, 'getattr(o, "v")'),
])
def test_a_field_read_through_an_own_getattribute_is_refused(fn, statement):
    # before: the gradient went to the field as stored (1.0 for 3.0 in d(o.v)/dx)
    refused(fn, 0.7, statement, "Tripled", "__getattribute__", "property", "rrule")


def method_reading_the_field(x):
    return Tripled(x).doubled()


def test_a_method_reading_the_field_is_refused_in_the_method():
    refused(method_reading_the_field, 0.7, "return self.v * 2.0", "Tripled", where=Tripled.doubled)


def label_of_the_object(x):
    o = Tripled(x)
    return x * len(o.label)


def computed_by_getattr(x):
    o = Computed(x)
    return o.w + o.v


@pytest.mark.parametrize("fn", [label_of_the_object, computed_by_getattr])
def test_reads_that_carry_no_gradient_or_go_through_getattr_are_differentiated(fn):
    agrees(fn, 0.7)


def test_the_refusal_names_where_the_class_defines_it():
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.gradient(field_of_a_local_object, 0.7)
    where = f"{inspect.getsourcefile(Tripled)}, line {line_of(Tripled.__getattribute__, 'def __getattribute__')}"
    assert where in str(info.value)


# ----- recursion deeper than the recursion limit allows under differentiated code -----------


def nested(x, n):
    if n == 0:
        return x
    return nested(x * 1.001, n - 1)


def nested_600(x):
    return nested(x, 600)


def nested_300(x):
    return nested(x, 300)


def endless(x):
    return endless(x * 1.0)


def _limit_refusal(run, fn):
    with pytest.raises(RecursionError) as info:  # (what plain Python raises, still)
        run()
    assert isinstance(info.value, AdjointError)
    msg = str(info.value)
    where = f"{inspect.getsourcefile(fn)}, line {inspect.getsourcelines(fn)[1]}"
    assert f"differentiating {fn.__name__} ({where})" in msg, msg
    for w in ("recursion limit", "sys.setrecursionlimit", "loop"):
        assert w in msg, (w, msg)


def test_recursion_past_the_limit_names_the_recursive_function():
    # before: a bare RecursionError from inside adjoint_s2s (guards.py, dispatch.py)
    assert sys.getrecursionlimit() == 1000 and nested_600(0.7) > 0  # (fits plainly)
    _limit_refusal(lambda: ad.gradient(nested_600, 0.7), nested)
    _limit_refusal(lambda: ad.pullback(nested_600, 0.7), nested)
    _limit_refusal(lambda: ad.gradient(lambda t: ad.gradient(nested_300, t)[0], 0.7), nested)
    _limit_refusal(lambda: ad.gradient(endless, 0.7), endless)


def test_recursion_within_a_raised_limit_is_differentiated():
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(4 * old)
    try:
        assert ad.gradient(nested_600, 0.7)[0] == pytest.approx(1.001 ** 600)
        assert ad.gradient(lambda t: ad.gradient(nested_300, t)[0], 0.7)[0] == pytest.approx(0.0)
    finally:
        sys.setrecursionlimit(old)


# ----- a mapping of a class of its own unpacked with **, {**...} or given to dict() ----------


class Doubling(collections.abc.Mapping):
    def __init__(self, a, b):
        self.d = {"a": a, "b": b}

    def __getitem__(self, k):
        return self.d[k] * 2.0

    def __iter__(self):
        return iter(["b", "a"])

    def __len__(self):
        return 2


class KeysOnly:  # the protocol ** and dict() use: keys() and __getitem__
    def __init__(self, a, b):
        self.d = {"a": a, "b": b}

    def keys(self):
        return ["b", "a"]

    def __getitem__(self, k):
        return self.d[k] * 2.0


def _weighted(a, b):
    return a * 3.0 + b


def mapping_as_keywords(x, cls=Doubling):
    return _weighted(**cls(x, 1.3))


def mapping_in_a_display(x, cls=Doubling):
    d = {**cls(x, 1.3)}
    return d["a"] * 3.0 + d["b"]


def mapping_given_to_dict(x, cls=Doubling):
    d = dict(cls(x, 1.3))
    return d["a"] * 3.0 + d["b"]


@pytest.mark.parametrize("fn, statement", [
    (mapping_as_keywords, "return _weighted(**cls(x, 1.3))"),
    (mapping_in_a_display, "d = {**cls(x, 1.3)}"),
    (mapping_given_to_dict, "d = dict(cls(x, 1.3))"),
])
@pytest.mark.parametrize("cls", [Doubling, KeysOnly])
def test_the_items_of_a_users_mapping_with_a_gradient_are_refused(fn, statement, cls):
    # before: a zero gradient for a collections.abc.Mapping (the dict of the items'
    # gradients given to the object was dropped), KeyError: 0 from inside adjoint_s2s for
    # keys() and __getitem__, a ValueError for dict() of either
    with pytest.raises(NotDifferentiableError) as info:
        ad.gradient(lambda t: fn(t, cls), 0.7)
    msg = str(info.value)
    assert f"{inspect.getsourcefile(fn)}, line {line_of(fn, statement)}" in msg, msg
    for w in (cls.__qualname__, "mapping", "keys()", "__getitem__", "by key"):
        assert w in msg, (w, msg)


def constant_mapping(x):
    return _weighted(**Doubling(1.0, 2.0)) * x + len(dict(KeysOnly(1.0, 2.0))) * x


def test_a_users_mapping_without_a_gradient_is_read_as_python_reads_it():
    agrees(constant_mapping, 0.7)


# ----- a field written through the instance's dict ------------------------------------------


class Record:
    pass


def field_written_through_dict(x):
    p = Record()
    p.__dict__["a"] = x * 2.0
    return p.a * x


def instance_dict_replaced(x):
    p = Record()
    p.__dict__ = {"a": x * 2.0}
    return p.a * x


class Cached:
    def __init__(self, v):
        self.v = v

    @property
    def cube(self):  # (a cached property written by hand)
        if "_cube" not in self.__dict__:
            self.__dict__["_cube"] = self.v * self.v * self.v
        return self.__dict__["_cube"]


def cached_by_hand(x):
    c = Cached(x)
    return c.cube + c.cube * x


@pytest.mark.parametrize("fn", [field_written_through_dict, instance_dict_replaced, cached_by_hand])
def test_fields_written_through_the_instance_dict_at_second_order(fn):
    # before: the second derivative took the gradient of a field named "__dict__" (none):
    # 2.0 for 4.0, 1.4 for 6.2
    agrees(fn, 0.7)
    agrees(lambda t: ad.gradient(fn, t)[0], 0.7)


def field_written_through_vars(x):
    p = Record()
    vars(p)["a"] = x * 2.0
    return p.a * x


def test_a_write_into_vars_of_an_object_is_refused():
    # before: AttributeError from generated code (the write went into a copy of the dict)
    refused(field_written_through_vars, 0.7, 'vars(p)["a"]', "vars(p)", "p.__dict__[key] = v")


def calls_its_argument(x):
    return x(2.0)


def test_calling_a_number_raises_pythons_type_error():
    # before: MissingAdjointError "cannot differentiate 0.7 ... Register a rule with
    # @adjoint_s2s.adjoint(0.7)"
    for run in (lambda: calls_its_argument(0.7), lambda: ad.gradient(calls_its_argument, 0.7)):
        with pytest.raises(TypeError, match="'float' object is not callable"):
            run()
