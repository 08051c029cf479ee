"""Lists and dicts whose gradient or value a probe of user-style programs found wrong:
each case is checked against central differences (or its value against the plain call).

* W7: a list tested by its truth (``if st:``, ``while st:``, ``a if st else b``) and
  changed in place after (``st.pop()``): the pullback tested the list again, emptied by
  then, and took the other branch (a gradient of 0). The decision is kept now.
* W8: a list or dict held inside another (``d["x"]``, ``mm[0]``, a loop's row, a field's
  item ``self.log["x"]``) changed in place (``.append``, ``.extend``, ``.insert``) by a
  helper or a closure while the caller reads the outer container again: the gradient of
  what is read through it was 0. Refused: when the helper's call runs (runtime.keeping
  compares what a kept argument holds), or when the function is transformed (a captured
  container's item, a field's item); the ways out the messages give are right.
* W10: a dict or list subclass (defaultdict, OrderedDict, Counter, the user's) written
  into became a plain dict or list (copy on write): a different value, a missing key's
  KeyError, a method gone. Copies keep the type now. And a list slice written with
  another number of items (``m[0:1] = [x, x]``, the list's length changes) gave a gradient
  of 0: refused (the tail, ``m[i:] = vs``, is right and runs).
* Refusals that were not needed: a list's slice (a copy) written into while the list is
  read again; ``copy.deepcopy`` of plain data (now a rule: the copy shares nothing), then
  written into. ``d.setdefault(k, []).append(v)`` stays refused (an inner list changed in
  place, as W8), its message now giving the way out.
"""
import collections
import copy
import inspect

import numpy as np
import pytest

import adjoint_s2s as ad
from tests.refusals import agrees, line_of, refused


# ----- W7: the truth of a list, then a pop --------------------------------------------
def if_list_pop(x):
    st = [x]
    if st:
        return st.pop()
    return 0.0


def while_list_pop(x):
    st = [x, x * 2.0]
    acc = 0.0
    while st:
        acc += st.pop()
    return acc


def while_queue_pop(x):
    q = [x, x * 3.0]
    t = 1.0
    while q:
        t = t * 0.5 + q.pop(0)
    return t


def ifexp_list_pop(x):
    st = [x * 2.0]
    return st.pop() if st else 0.0


def while_list_and(x):
    q = [x, x * x]
    t = 0.0
    while q and t < 100.0:
        t = t * 2.0 + q.pop()
    return t


def or_list_then_append(x):
    q = []
    t = q or [1.0]
    q.append(x)
    return t[0] * x + q[0]


class _Stack:
    def __init__(self, v):
        self.items = [v, v * v]

    def take(self):
        if self.items:
            return self.items.pop()
        return 0.0


def method_if_pop(x):
    s = _Stack(x * 3.0)
    return s.take() + s.take() * 2.0 + s.take()


@pytest.mark.parametrize(
    "fn",
    [if_list_pop, while_list_pop, while_queue_pop, ifexp_list_pop, while_list_and,
     or_list_then_append, method_if_pop],
)
def test_truth_of_a_list_changed_after(fn):
    assert ad.pullback(fn, 0.7)[0] == fn(0.7)
    agrees(fn, 0.7)


def test_truth_of_a_list_second_order():
    # t = 2 x^2 + x: its second derivative is 4
    assert np.allclose(ad.gradient(lambda x: ad.gradient(while_list_and, x)[0], 0.7)[0], 4.0)


# ----- W8: an inner list changed in place by a helper or a closure ----------------------
def closure_appends_to_a_dict_item(x):
    log = {"x": []}

    def rec(d, v):
        d["x"].append(v)

    rec(log, x)
    return log["x"][0]


def _extend_first(mm, v):
    mm[0].extend([v, v])


def helper_extends_an_inner_list(x):
    mm = [[1.0]]
    _extend_first(mm, x)
    return mm[0][1] + mm[0][2] * 2.0


def _insert_last(mm, v):
    mm[-1].insert(0, v)


def helper_inserts_into_an_inner_list(x):
    mm = [[1.0], [2.0]]
    _insert_last(mm, x)
    return mm[1][0] * 3.0


def _append(lst, v):
    lst.append(v)


def helper_appends_to_an_item_given(x):
    log = {"x": []}
    _append(log["x"], x)
    return log["x"][0]


def _append_to_key(d, v):
    _append(d["x"], v)


def helper_hands_an_item_on(x):
    log = {"x": []}
    _append_to_key(log, x)
    return log["x"][0]


class _Items:
    def __init__(self):
        self.items = []


def helper_appends_to_a_field_given(x):
    s = _Items()
    _kept(s)  # (passed on: it stays an object; as a local object it is right, below)
    it = s.items
    _append(it, x)
    return s.items[0] * 2.0


def _kept(obj):
    return obj


def helper_appends_to_a_field_of_a_local_object(x):
    s = _Items()  # only read by field: s.items is a variable (passes/local_objects.py)
    it = s.items
    _append(it, x)
    return s.items[0] * 2.0


def test_an_inner_list_of_a_local_object_changed_by_a_callee_is_followed():
    f = helper_appends_to_a_field_of_a_local_object
    assert ad.pullback(f, 0.7)[0] == f(0.7)
    assert ad.gradient(f, 0.7)[0] == pytest.approx(2.0)


def _append_to_rows(rows, v):
    for row in rows:
        row.append(v)


def helper_appends_to_each_row(x):
    rows = [[1.0], [2.0]]
    _append_to_rows(rows, x)
    return rows[0][1] + rows[1][1] * 2.0


RUN_TIME = [
    (closure_appends_to_a_dict_item, "rec(log, x)", "held inside its argument `d`"),
    (helper_extends_an_inner_list, "_extend_first(mm, x)", "held inside its argument `mm`"),
    (helper_inserts_into_an_inner_list, "_insert_last(mm, x)", "held inside its argument `mm`"),
    (helper_appends_to_an_item_given, "_append(log", "read out of `log`"),
    (helper_appends_to_a_field_given, "_append(it, x)", "read out of `s.items`"),
    (helper_appends_to_each_row, "_append_to_rows(rows, x)", "held inside its argument `rows`"),
]


@pytest.mark.parametrize("fn, call, words", RUN_TIME, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.usefixtures("containers_kept")
def test_an_inner_list_changed_by_a_callee_is_refused_when_it_runs(fn, call, words):
    where = f"at {inspect.getsourcefile(fn)}, line {line_of(fn, call)}"
    for run in (lambda: ad.gradient(fn, 0.7), lambda: ad.pullback(fn, 0.7)[1](1.0)):
        with pytest.raises(ad.MutationError) as info:
            run()
        msg = str(info.value)
        assert where in msg and words in msg, msg
        assert "changes in place" in msg and "put them back" in msg, msg


def test_an_item_handed_on_by_a_helper_is_refused_where_it_is_handed_on():
    with pytest.raises(ad.MutationError) as info:
        ad.gradient(helper_hands_an_item_on, 0.7)
    msg = str(info.value)
    assert f"line {line_of(_append_to_key, '_append(d')}, in _append_to_key" in msg, msg
    assert "read out of `d`" in msg


def closure_appends_to_a_captured_item(x):
    log = [[]]

    def rec(v):
        log[0].append(v)

    rec(x * 2.0)
    return log[0][0]


class _Log:
    def __init__(self):
        self.log = {"x": []}

    def rec(self, v):
        self.log["x"].append(v)

    def run(self, v):
        self.rec(v)
        return self


def method_appends_to_a_field_item(x):
    return _Log().run(x * 2.0).log["x"][0]


def test_an_inner_list_of_a_captured_name_or_a_field_is_refused():
    refused(closure_appends_to_a_captured_item, 0.7, "log[0].append(v)", "read out of `log`",
            "captured", "passing `log` in as an argument")
    refused(method_appends_to_a_field_item, 0.7, 'self.log["x"].append(v)', "read out of `self`",
            "self.log[k] = self.log[k] + [v]", where=_Log.rec)


# the ways out the messages give
def closure_writes_the_item_back(x):
    log = {"x": []}

    def rec(d, v):
        d["x"] = d["x"] + [v]

    rec(log, x)
    return log["x"][0] * x


def _extend_first_back(mm, v):
    mm[0] = mm[0] + [v, v * v]


def helper_writes_the_item_back(x):
    mm = [[1.0]]
    _extend_first_back(mm, x)
    return mm[0][1] + mm[0][2] * 2.0


class _LogBack(_Log):
    def rec(self, v):
        self.log["x"] = self.log["x"] + [v]


def method_writes_the_field_item_back(x):
    return _LogBack().run(x * 2.0).log["x"][0] * x


def a_name_for_the_same_list(x):
    a = [1.0]
    b = a
    _append(a, x)
    return b[1] * 3.0 + a[1]


def an_inner_list_not_read_again(x):
    mm = [[1.0]]
    m0 = mm[0]
    m0.append(x * x)
    return m0[1]


@pytest.mark.parametrize(
    "fn",
    [closure_writes_the_item_back, helper_writes_the_item_back, method_writes_the_field_item_back,
     a_name_for_the_same_list, an_inner_list_not_read_again],
)
def test_the_ways_out_are_right(fn):
    assert ad.pullback(fn, 0.7)[0] == fn(0.7)
    agrees(fn, 0.7)


# ----- W10: dict and list subclasses keep their type; slices that resize ------------------
def _tag(c, cls):
    return 2.0 if type(c) is cls else 1.0


def defaultdict_written(x):
    t = collections.defaultdict(float)
    t["x"] = x
    return t["x"] * _tag(t, collections.defaultdict)


def defaultdict_missing_key(x):
    t = collections.defaultdict(float)
    t["x"] += x
    t["x"] += x * x
    return t["x"] * _tag(t, collections.defaultdict) + t["z"]


def defaultdict_of_lists(x):
    t = collections.defaultdict(list)
    t["a"] += [x]
    t["a"] += [x * x]
    return t["a"][1] * _tag(t, collections.defaultdict) + len(t["zz"])


def ordereddict_written(x):
    od = collections.OrderedDict()
    od["b"] = 1.0
    od["a"] = x
    od["b"] = x * 3.0
    return list(od.values())[0] * _tag(od, collections.OrderedDict) + len(list(od)[0])


class _MyList(list):
    pass


class _MyDict(dict):
    def total(self):
        return sum(self.values())


def user_list_written(x):
    m = _MyList([1.0, 2.0])
    m[0] = x * x
    return m[0] * _tag(m, _MyList) + m[1]


def user_dict_written(x):
    m = _MyDict(a=1.0)
    m["b"] = x * x
    return m.total() * _tag(m, _MyDict)


def list_tail_replaced(x):
    m = [1.0, 2.0]
    m[1:] = [x, 2.0 * x, 3.0 * x]
    return m[1] + m[2] * m[3] + m[0]


@pytest.mark.parametrize(
    "fn",
    [defaultdict_written, defaultdict_missing_key, defaultdict_of_lists, ordereddict_written,
     user_list_written, user_dict_written, list_tail_replaced],
)
def test_a_subclass_keeps_its_type_when_written(fn):
    assert ad.pullback(fn, 0.7)[0] == fn(0.7)
    agrees(fn, 0.7)


def ordereddict_moved(x):
    od = collections.OrderedDict()
    od["a"] = x
    od["b"] = 2.0 * x
    od.move_to_end("a")
    return list(od.values())[0] * 3.0 + od["a"]


def test_a_subclass_method_with_no_rule_is_refused():
    with pytest.raises(ad.AdjointError, match="move_to_end"):
        ad.gradient(ordereddict_moved, 0.7)


def list_slice_grown(x):
    m = [1.0, 2.0]
    m[0:1] = [x, x]
    return m[1]


def list_slice_shrunk(x):
    m = [1.0, 2.0, 3.0]
    m[-3:-1] = [x]
    return m[0] * m[1]


@pytest.mark.parametrize("fn, line", [(list_slice_grown, "m[0:1] ="), (list_slice_shrunk, "m[-3:-1] =")])
def test_a_list_slice_written_with_another_length_is_refused(fn, line):
    with pytest.raises(ad.MutationError) as info:
        ad.gradient(fn, 0.7)
    msg = str(info.value)
    assert f"{inspect.getsourcefile(fn)}, line {line_of(fn, line)}" in msg, msg
    assert "changes the list's length" in msg and "lst = lst[:i] + vs + lst[j:]" in msg


# ----- a list's slice is a copy (an array's a view: refused when it runs) ---------------
def list_slice_copy_written(x):
    buf = [x, 2.0 * x, 3.0 * x]
    tail = buf[-2:]
    tail[0] = 100.0
    return buf[1] + tail[0] * x + tail[1]


def list_slice_then_base_written(x):
    buf = [x, 2.0 * x, 3.0 * x]
    tail = buf[-2:]
    buf[2] = x * x
    return buf[2] + tail[1] * x


def test_a_list_slice_is_a_copy():
    for fn in (list_slice_copy_written, list_slice_then_base_written):
        assert ad.pullback(fn, 0.7)[0] == fn(0.7)
        agrees(fn, 0.7)


def _made(x):
    return np.array([x, 2.0 * x, 3.0 * x])


def array_slice_of_unknown_kind_written(x):
    buf = _made(x)
    tail = buf[-2:]
    tail[0] = 100.0
    return buf[1] + tail[0] * x + tail[1]


def list_slice_holding_the_same_rows(x):
    buf = [[x], [2.0 * x]]
    tail = buf[1:]
    tail[0][0] = 7.0
    return buf[1][0] + tail[0][0] * x


@pytest.mark.parametrize("fn, line, words", [
    (array_slice_of_unknown_kind_written, "tail[0] = 100.0", "`buf` names the same container or a view"),
    (list_slice_holding_the_same_rows, "tail[0][0] = 7.0", "while `buf` holds it"),
])
def test_a_slice_sharing_with_its_base_is_refused_when_it_runs(fn, line, words):
    with pytest.raises(ad.MutationError) as info:
        ad.gradient(fn, 0.7)
    msg = str(info.value)
    assert f"{inspect.getsourcefile(fn)}, line {line_of(fn, line)}" in msg and words in msg, msg


# ----- copy.deepcopy of plain data; setdefault's way out ---------------------------------
def deepcopy_then_written(x):
    cfg = {"a": x, "b": [x, 2.0], "c": np.array([x, 1.0])}
    c2 = copy.deepcopy(cfg)
    c2["a"] = 5.0
    c2["b"][1] = x * x
    c2["c"][0] = 3.0
    return cfg["a"] * x + cfg["b"][1] + c2["b"][1] * c2["a"] + cfg["c"][0] * c2["c"][1]


def test_a_deep_copy_shares_nothing():
    fn = deepcopy_then_written
    assert ad.pullback(fn, 0.7)[0] == fn(0.7)
    agrees(fn, 0.7)
    # its pullback is differentiated again: fn = 6 x^2 + x + 2, whose second derivative is 12
    assert np.allclose(ad.gradient(lambda x: ad.gradient(fn, x)[0], 0.7)[0], 12.0)


class _Cfg:
    def __init__(self, a):
        self.a = a


def deepcopy_of_an_object(x):
    c = copy.deepcopy(_Cfg(x))
    return c.a * 2.0


def test_a_deep_copy_of_an_object_is_refused():
    with pytest.raises(ad.MissingAdjointError, match="deep copy of a _Cfg"):
        ad.gradient(deepcopy_of_an_object, 0.7)


def grouped_with_setdefault(x):
    groups = {}
    for k, v in [("a", x), ("b", 2.0 * x), ("a", 3.0 * x)]:
        groups.setdefault(k, []).append(v)
    return sum(groups["a"]) * 2.0 + groups["b"][0]


def grouped_with_get(x):
    groups = {}
    for k, v in [("a", x), ("b", 2.0 * x), ("a", 3.0 * x)]:
        groups[k] = groups.get(k, []) + [v]
    return sum(groups["a"]) * 2.0 + groups["b"][0]


def test_setdefault_then_append_is_refused_with_the_way_out():
    with pytest.raises(ad.MutationError) as info:
        ad.gradient(grouped_with_setdefault, 0.7)
    msg = str(info.value)
    assert inspect.getsourcefile(grouped_with_setdefault) in msg, msg
    assert "d[k] = d.get(k, []) + [v]" in msg
    assert ad.pullback(grouped_with_get, 0.7)[0] == grouped_with_get(0.7)
    agrees(grouped_with_get, 0.7)
