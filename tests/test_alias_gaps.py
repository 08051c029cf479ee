"""Two ways one object got two names that the alias tracking did not follow, found by a
probe of user-style programs: the value under pullback differed from the plain call.

* One item at two places of a list or dict (``[[0.0, 0.0]] * 2``, ``n * [x]``, one list
  appended twice, ``{"x": inner, "y": inner}``), written into through one place
  (``rows[0][0] = v``, ``rows[0][0] += v``) and read through the other: the normaliser's
  write-back put the copy on write at the written place only. Refused when the write
  runs (runtime.replaced), naming the item, the container, the file and the line; distinct
  items (a comprehension, a copy put at the place first) run and are right.
* The result of ``a if t else b`` or ``a or b`` (also an inlined helper returning one of
  its arguments) changed in place (``c *= 2``, ``c[0] = v``) while ``a`` or ``b`` is read
  afterwards: the normaliser's temporary broke the chain of names. Refused when it runs
  if the result is the object read afterwards; right where only the result is read.
  A list method through such a name (``c.append(v)``, also after ``if t: c = a``) kept
  the value but lost the gradient of what is read through ``a``: now right, to second
  order.
"""
import copy

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads, numerical_gradient


def _line(f, text):
    """The line number of the first source line of f containing text."""
    import inspect

    lines, start = inspect.getsourcelines(f)
    return start + next(i for i, s in enumerate(lines) if text in s)


# ----- one item at two places ---------------------------------------------------------
def repeated_rows(a):
    rows = [[0.0, 0.0]] * 2
    rows[0][0] = a[0]
    return rows[1][0] * a[1]


def repeated_rows_left(a):
    rows = 2 * [[0.0, 0.0]]
    rows[1][1] = a[0]
    return rows[0][1] * a[1]


def repeated_rows_augmented(a):
    rows = [[0.0, 0.0]] * 2
    rows[0][0] += a[0]
    return rows[1][0] * a[1]


def repeated_arrays(a):
    rows = [np.zeros(2)] * 2
    rows[0][0] = a[0]
    return rows[1][0] * a[1]


def same_list_twice(a):
    inner = [0.0, 0.0]
    rows = [inner, inner]
    rows[0][0] = a[0]
    return rows[1][0] * a[1] * (len(rows) - 1)  # (len: rows stays a list, passes/item_vars.py)


def appended_twice(a):
    inner = [0.0, 0.0]
    rows = []
    rows.append(inner)
    rows.append(inner)
    rows[0][0] = a[0]
    return rows[1][0] * a[1]


def written_in_a_loop(a):
    rows = [[0.0, 0.0]] * 2
    for i in range(2):
        rows[i][i] = a[i]
    return rows[0][1] * a[0] + rows[1][0]


def given_rows(a, rows):
    rows[0][0] = a[0]
    return rows[1][0] * a[1]


def dict_of_one_list(a):
    inner = [0.0, 0.0]
    d = {"x": inner, "y": inner}
    d["x"][0] = a[0]
    return d["y"][0] * a[1] * (len(d) - 1)  # (len: d stays a dict, passes/item_vars.py)


def items_as_names(a):
    inner = [0.0, 0.0]
    rows = [inner, inner]
    d = {"x": inner, "y": rows[1]}
    rows[0][0] = a[0]
    d["x"][1] = a[1] * rows[1][0]
    return rows[1][0] * a[1] + d["y"][1] * inner[1]


def test_items_held_twice_by_a_container_used_item_by_item_are_names_aliasing_one():
    # rows and d are used only at constant places: their items are variables, which
    # name one list, and a write through one shows through the others (as in Python)
    a = np.array([1.0, 2.0])
    assert ad.pullback(items_as_names, a)[0] == items_as_names(a.copy())
    check_grads(items_as_names, a)


@pytest.mark.parametrize("f,item,container", [
    (repeated_rows, "rows[0]", "rows"),
    (repeated_rows_left, "rows[1]", "rows"),
    (repeated_rows_augmented, "rows[0]", "rows"),
    (repeated_arrays, "rows[0]", "rows"),
    (same_list_twice, "rows[0]", "rows"),
    (appended_twice, "rows[0]", "rows"),
    (written_in_a_loop, "rows[i]", "rows"),
    (dict_of_one_list, "d['x']", "d"),
], ids=lambda p: p.__name__ if callable(p) else None)
def test_an_item_held_twice_is_refused_when_written(f, item, container):
    a = np.array([1.0, 2.0])
    with pytest.raises(ad.MutationError) as info:
        ad.pullback(f, a)
    msg = str(info.value)
    assert f"writing into `{item}` changes in place an item that `{container}` holds at more than one place" in msg
    assert f"test_alias_gaps.py, line {_line(f, item.replace(chr(39), chr(34)) + '[')}" in msg
    assert f"`{item} = {item}.copy()`" in msg  # the way out
    with pytest.raises(ad.MutationError):
        ad.gradient(f, a)


def test_an_argument_holding_one_list_twice_is_refused():
    rows = [[0.0, 0.0]] * 2
    with pytest.raises(ad.MutationError, match=r"writing into `rows\[0\]` changes in place"):
        ad.pullback(given_rows, np.array([1.0, 2.0]), rows)
    assert rows == [[0.0, 0.0], [0.0, 0.0]] and rows[0] is rows[1]


def distinct_rows(a):
    rows = [[0.0, 0.0] for _ in range(2)]
    rows[0][0] = a[0]
    rows[1][1] = a[1]
    return rows[1][0] * a[1] + rows[0][0] * rows[1][1]


def distinct_repeated_numbers(a):
    rows = [[0.0] * 2 for _ in range(2)]
    rows[0][0] = a[0]
    return rows[1][0] * a[1] + rows[0][0] * a[1]


def a_new_row_at_one_place(a):
    rows = [[0.0, 0.0]] * 2
    rows[0] = [a[0], 0.0]
    return rows[1][0] * a[1] + rows[0][0] * a[1]


def a_copy_put_there_first(a):
    rows = [[0.0, 0.0]] * 2
    rows[0] = rows[0].copy()
    rows[0][0] += a[0]
    return rows[1][0] * a[1] + rows[0][0] * a[1]


def given_distinct_rows(a, rows):
    rows[0][0] = a[0]
    return rows[1][0] * a[1] + rows[0][0]


@pytest.mark.parametrize("f,extra", [
    (distinct_rows, ()),
    (distinct_repeated_numbers, ()),
    (a_new_row_at_one_place, ()),
    (a_copy_put_there_first, ()),
    (given_distinct_rows, ([[0.0, 3.0], [0.5, 0.0]],)),
], ids=lambda p: p.__name__ if callable(p) else None)
def test_distinct_items_run_and_are_right(f, extra):
    for a in (np.array([1.0, 2.0]), np.array([0.5, -1.5])):
        y, pb = ad.pullback(f, a.copy(), *copy.deepcopy(extra))
        assert y == f(a.copy(), *copy.deepcopy(extra))
        g = pb(1.0)[0]
        want = numerical_gradient(lambda v: f(v, *copy.deepcopy(extra)), a)[0]
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


# ----- the result of a conditional expression -----------------------------------------
def returns_arg(a, b):  # inlined into its callers
    return a if np.sum(a) > np.sum(b) else b


def helper_returns_arg_mutate(x):
    a = x * 1.0
    b = x * 0.0 + 0.25
    c = returns_arg(a, b)
    c *= 2.0
    return float(np.sum(a * x) + np.sum(b))


def conditional_expression(x):
    a = x * 1.0
    b = x * 0.0 + 0.25
    c = a if np.sum(a) > np.sum(b) else b
    c *= 2.0
    return float(np.sum(a * x) + np.sum(b))


def written_by_item(x):
    a = x * 1.0
    b = x * 0.0 + 0.25
    c = returns_arg(a, b)
    c[0] = x[1] * 3.0
    return float(np.sum(a * x) + np.sum(b))


def in_a_loop(x):
    a = x * 1.0
    b = x * 0.0 + 0.25
    for _ in range(2):
        c = returns_arg(a, b)
        c += x
    return float(np.sum(a * x) + np.sum(b))


def or_expression(x):
    a = x * 1.0
    b = x * 0.0 + 0.25
    c = (np.sum(a) > 10.0 and a) or b
    c *= 2.0
    return float(np.sum(a * x) + np.sum(b))


def list_picked(x):
    a = [x[0] * 1.0]
    b = [x[1] * 1.0]
    c = a if x[0] > x[1] else b
    c[0] = c[0] * 3.0
    return a[0] * x[0] + b[0] * x[1]


@pytest.mark.parametrize("f", [helper_returns_arg_mutate, conditional_expression, written_by_item,
                               in_a_loop, or_expression, list_picked], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [[0.5, -1.0], [2.0, 1.0]], ids=["second", "first"])
def test_a_change_of_the_picked_object_is_refused_when_the_other_name_is_read(f, x):
    x = np.array(x)
    with pytest.raises(ad.MutationError) as info:
        ad.pullback(f, x)
    msg = str(info.value)
    assert "while `a` names the same container" in msg or "while `b` names the same container" in msg
    assert "test_alias_gaps.py, line" in msg


def only_the_result_read(x):
    a = x * 1.0
    b = x * 0.0 + 0.25
    c = returns_arg(a, b)
    c *= 2.0
    return float(np.sum(c * x))


def a_copy_on_one_branch(x):
    a = x * 1.0
    c = a if np.sum(x) > 100.0 else a.copy()
    c *= 2.0
    return float(np.sum(a * x) + np.sum(c))


def numbers_picked(x):
    a = x[0] * 1.0
    b = x[1] * 2.5
    c = a if a > b else b
    c *= 2.0
    return a * x[0] + b + c


@pytest.mark.parametrize("f", [only_the_result_read, a_copy_on_one_branch, numbers_picked],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [[0.5, -1.0], [2.0, 1.0], [-2.0, 1.0]])
def test_what_the_change_does_not_reach_runs_and_is_right(f, x):
    x = np.array(x)
    y, pb = ad.pullback(f, x.copy())
    assert y == f(x.copy())
    np.testing.assert_allclose(pb(1.0)[0], numerical_gradient(f, x)[0], rtol=1e-6, atol=1e-8)


# ----- a list method through a name bound to the object on some paths only -----------
def appended_through_the_pick(x):
    a = [x[0] * 1.0]
    b = [x[1] * 1.0]
    c = a if x[0] > x[1] else b
    c.append(x[0])
    return sum(a) * x[0] + sum(b) * x[1]


def appended_through_an_if(x):
    a = [x[0] * 1.0]
    b = [x[1] * 1.0]
    if x[0] > x[1]:
        c = a
    else:
        c = b
    c.append(x[0])
    return sum(a) * x[0] + sum(b) * x[1]


def appended_in_a_loop(x):
    a = [x[0]]
    b = [x[1]]
    for i in range(3):
        c = a if i % 2 == 0 else b
        c.append(x[0] * i)
    return sum(a) * x[1] + sum(b) * x[0]


def extended_through_the_pick(x):
    a = [x[0]]
    b = [x[1]]
    c = a if x[0] > x[1] else b
    c.extend([x[0] * x[1], x[1]])
    return sum(a) * x[1] + sum(b) * x[0]


def inserted_through_the_pick(x):
    a = [x[0]]
    b = [x[1]]
    c = a if x[0] > x[1] else b
    c.insert(0, x[0] * x[1])
    return a[0] * x[1] + b[0] * x[0]


def popped_through_the_pick(x):
    a = [x[0], x[1] * 2.0]
    b = [x[1], x[0] * 3.0]
    c = a if x[0] > x[1] else b
    v = c.pop()
    return sum(a) * x[1] + sum(b) * x[0] + v


def appended_through_or(x):
    a = []
    b = [x[1]]
    c = a or b
    c.append(x[0] * x[0])
    return sum(b) * x[1] + len(a)


PICKED_LISTS = [appended_through_the_pick, appended_through_an_if, appended_in_a_loop,
                extended_through_the_pick, inserted_through_the_pick, popped_through_the_pick,
                appended_through_or]


@pytest.mark.parametrize("f", PICKED_LISTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [[1.0, 2.0], [0.5, -1.0], [-2.0, 1.0]])
def test_a_list_changed_through_a_picked_name_has_its_gradient(f, x):
    x = np.array(x)
    y, pb = ad.pullback(f, x.copy())
    assert y == f(x.copy())
    np.testing.assert_allclose(pb(1.0)[0], numerical_gradient(f, x)[0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [appended_through_the_pick, appended_through_an_if, appended_in_a_loop,
                               extended_through_the_pick], ids=lambda f: f.__name__)
def test_a_list_changed_through_a_picked_name_second_order(f):
    x = np.array([1.0, 2.0])
    grad = lambda v: ad.gradient(f, v)[0]  # noqa: E731
    hess = np.asarray(ad.jacobian(grad, x)[0])
    h = 1e-5
    want = np.array([(grad(x + h * e) - grad(x - h * e)) / (2 * h) for e in np.eye(2)]).T
    np.testing.assert_allclose(hess, want, rtol=1e-6, atol=1e-6)


def _tuple_of_lists(v):
    t = ([0.0, 0.0], [0.0, 0.0])
    t[0][0] = v
    return t[0][0] * t[1][1] + t[0][0] * v


def _tuple_of_arrays(v):
    t = (np.zeros(2), np.ones(2))
    t[0][0] = v
    return np.sum(t[0] * t[1]) + t[0][0] * v


def _list_of_lists(v):
    t = [[0.0, 0.0], [0.0, 1.0]]
    t[0][0] = v
    return t[0][0] * t[1][1] + t[0][0] * v


@pytest.mark.parametrize("f", [_tuple_of_lists, _tuple_of_arrays])
def test_an_item_of_a_tuple_written_into_is_refused_with_the_way_out(f):
    # (the write-back of the changed item into the tuple raised a bare TypeError)
    with pytest.raises(ad.AdjointError, match="item of a tuple") as info:
        ad.gradient(f, 2.0)
    assert "list instead" in str(info.value) and "line" in str(info.value)


def test_the_way_out_a_list_of_lists_is_right():
    y, pb = ad.pullback(_list_of_lists, 2.0)
    assert y == _list_of_lists(2.0)
    assert pb(1.0)[0] == pytest.approx(1.0 + 2 * 2.0)
