"""Loops over `enumerate(xs)` and `zip(xs, ys)` keep the kinds of what they iterate over
(issue 15): a loop over enumerate is the loop over xs it stands for, its count kept in a
variable of its own (passes/targets.py), and the tuples of a loop over zip have the item
kinds of zip's arguments (passes/activity.py). Before, every operation of such a loop's
body was dispatched at run time (about 15x slower for `for i, v in enumerate(x)`). The
values and gradients are the plain call's, including where the loop is left early, is
empty, or `enumerate` is not the builtin. The same for what such loops compute with: an
int power `x ** k` of a loop over a range, `math.factorial` and friends (ints), `min` and
`max` of NumPy scalars (one of them), a tuple bound in a loop (`state = (a, b)`)."""

import numpy as np
import pytest

import adjoint_s2s as ad

from .source_modules import module_from_source

SOURCE = '''
import math

import numpy as np


def weighted(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + v * v * i
    return s


def counted_from_one(x):
    s = 0.0
    for n, v in enumerate(x, 1):
        if n == 2:
            continue
        if n > 4:
            break
        s = s + v / n
    return s * n  # the count the loop stopped at


def start_by_keyword(x):
    s = 0.0
    k = 3
    for i, v in enumerate(x, start=k):
        s = s + np.sin(v) * i
    return s


def nested_target(x):
    s = 0.0
    for i, (a, b) in enumerate(zip(x[:-1], x[1:])):
        s = s + a * b * (i + 1)
    return s


def over_a_list(x):
    parts = [x[0] * 2.0, x[1], x[2] * x[2]]
    s = 0.0
    for i, p in enumerate(parts):
        s = s + p * (i + 0.5)
    return s


def over_rows(x):
    m = np.outer(x, x[:2])
    s = 0.0
    for i, row in enumerate(m):
        s = s + np.sum(row * row) * i
    return s


def empty_then_read(x):
    v = x[0]
    i = -1
    for i, v in enumerate(x[:0]):
        pass
    return v * i  # neither is bound again by an empty loop


def pairs(x):
    s = 0.0
    for a, b in zip(x[:-1], x[1:]):
        s = s + a * b
    return s


def series(x):
    t = x[0]
    s = 0.0
    for k in range(12):
        s += t ** k / math.factorial(k)  # an int power of a real number, an int
    return s * math.floor(3.7) + x[1] * math.comb(5, 2)


def state_tuple(x):
    state = (x[0], x[1])
    for _ in range(4):
        a, b = state  # bound twice, to tuples of two: the items' kinds joined
        state = (a * 0.9 - b * 0.2, a * 0.2 + b * 0.9 + x[2] * 0.01)
    return state[0] * state[1]


def soft_min_items(x):
    s = 0.0
    for i in range(1, len(x)):
        m = min(x[i], x[i - 1], 0.5)  # NumPy scalars and a float: one of them
        s = s + m * m + max(x[i], x[i - 1])
    return s
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    m = module_from_source(tmp_path_factory.mktemp("loop_kinds"), "loop_kinds_mod", SOURCE)
    yield m
    ad.refresh()


X = np.array([0.3, -0.8, 1.1, 0.4, -0.2, 0.9])
NAMES = ["weighted", "counted_from_one", "start_by_keyword", "nested_target", "over_a_list", "over_rows",
         "empty_then_read", "pairs", "series", "state_tuple", "soft_min_items"]


def _fd(f, x):
    return np.array([(f(x + e) - f(x - e)) / 2e-6 for e in np.eye(len(x)) * 1e-6])


@pytest.mark.parametrize("name", NAMES)
def test_value_and_gradient_are_the_plain_calls(mod, name):
    f = getattr(mod, name)
    y, pb = ad.pullback(f, X.copy())
    assert y == f(X.copy())
    (g,) = pb(1.0)
    np.testing.assert_allclose(np.zeros_like(X) if g is None else g, _fd(f, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["weighted", "counted_from_one", "start_by_keyword", "nested_target", "pairs",
                                  "over_rows", "series"])
def test_nothing_in_the_loop_is_dispatched_at_run_time(mod, name):
    text = ad.show_adjoint(getattr(mod, name), X)
    assert "dispatched at run time" not in text, text
    assert "_rt.binop" not in text


def test_the_count_is_a_variable_of_its_own(mod):
    text = ad.show_adjoint(mod.weighted, X)
    assert "i_next = 0" in text and "i = i_next" in text and "i_next = i + 1" in text
    assert "enumerate" not in text.replace("# for i, v in enumerate(x):", "")


def test_second_order_through_an_enumerate_loop(mod):
    def first(x):
        return ad.gradient(mod.weighted, x)[0]

    H = np.array([(first(X + e) - first(X - e)) / 2e-6 for e in np.eye(len(X)) * 1e-6])
    got = np.array([ad.gradient(lambda x, k=k: first(x)[k], X)[0] for k in range(len(X))])
    np.testing.assert_allclose(got, H, rtol=1e-5, atol=1e-6)


def test_an_enumerate_of_the_users_own_is_called(tmp_path):
    src = (
        "def enumerate(xs, start=0):\n"
        "    return [(start + 10 * k, v) for k, v in zip(range(len(xs)), xs)]\n\n"
        "def f(x):\n"
        "    s = 0.0\n"
        "    for i, v in enumerate(x):\n"
        "        s = s + v * i\n"
        "    return s\n"
    )
    m = module_from_source(tmp_path, "own_enumerate", src)
    x = np.array([1.0, 2.0, 3.0])
    assert ad.pullback(m.f, x)[0] == m.f(x) == 80.0
    np.testing.assert_allclose(ad.gradient(m.f, x)[0], [0.0, 10.0, 20.0])
    assert "i_next" not in ad.show_adjoint(m.f, x)


def test_a_global_enumerate_defined_later_makes_the_code_again(tmp_path):
    src = (
        "def f(x):\n"
        "    s = 0.0\n"
        "    for i, v in enumerate(x):\n"
        "        s = s + v * i\n"
        "    return s\n"
    )
    m = module_from_source(tmp_path, "later_enumerate", src)
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(ad.gradient(m.f, x)[0], [0.0, 1.0, 2.0])
    m.enumerate = lambda xs: [(2 * k, v) for k, v in zip(range(len(xs)), xs)]
    assert m.f(x) == 16.0
    assert ad.pullback(m.f, x)[0] == 16.0
    np.testing.assert_allclose(ad.gradient(m.f, x)[0], [0.0, 2.0, 4.0])


def test_a_tuple_bound_in_a_loop_keeps_its_items_kinds(mod):
    # the items are NumPy scalars: read with a pair each, the arithmetic on them static
    text = ad.show_adjoint(mod.state_tuple, X)
    assert "_rt.binop" not in text
    x = (0.3, -0.8)  # numbers: no pair at all

    def on_numbers(a, b):
        return mod.state_tuple(np.array([a, b, 0.5]))

    assert ad.gradient(on_numbers, *x) == pytest.approx(
        [(on_numbers(x[0] + 1e-6, x[1]) - on_numbers(x[0] - 1e-6, x[1])) / 2e-6,
         (on_numbers(x[0], x[1] + 1e-6) - on_numbers(x[0], x[1] - 1e-6)) / 2e-6], rel=1e-6)


def test_min_and_max_of_array_items_keep_the_arithmetic_static(mod):
    text = ad.show_adjoint(mod.soft_min_items, X)
    assert "_rt.binop" not in text  # (min and max themselves: their run-time rule)


GROWN = '''
import numpy as np


def grown(x):
    items = [x[0], x[1], x[2]]
    s = 0.0
    for v in items:
        if len(items) < 5:
            items.append(v * 2.0)  # visited by this very loop
        s = s + v
    return s


def grown_enumerate(x):
    items = [x[0], x[1]]
    s = 0.0
    for i, v in enumerate(items):
        if i == 0:
            items.append(v * 2.0)
        s = s + v * (i + 1)
    return s


def grown_augmented(x):
    items = [x[0]]
    s = 0.0
    for v in items:
        if len(items) < 3:
            items += [v * v]
        s = s + v
    return s


def over_a_copy(x):
    items = [x[0], x[1], x[2]]
    s = 0.0
    for v in list(items):  # the way out: the new items are not visited
        items.append(v * 2.0)
        s = s + v
    return s + items[-1]


def written_ahead(x):
    a = x * 1.0
    s = 0.0
    for i, v in enumerate(a):
        if i + 1 < len(a):
            a[i + 1] = a[i + 1] + v  # the loop visits the new value next
        s = s + v * v
    return s


def written_without_a_count(x):
    a = x * 1.0
    s = 0.0
    for v in a:
        a[2] = a[2] * 2.0
        s = s + v * v
    return s


def written_through_zip(x):
    a = [x[0], x[1]]
    b = [x[2], x[1]]
    s = 0.0
    for p, q in zip(a, b):
        a[1] = a[1] + q
        s = s + p * q
    return s


def by_index(x):
    a = x * 1.0
    s = 0.0
    for i in range(len(a)):  # the way out: read by index, as the plain loop sees it
        v = a[i]
        if i + 1 < len(a):
            a[i + 1] = a[i + 1] + v
        s = s + v * v
    return s


def items_rewritten(x):
    items = [x[0], x[1], x[2]]
    for i, v in enumerate(items):
        items[i] = v * (i + 2.0)  # same length: right
    return items[0] * items[1] + items[2]
'''


@pytest.mark.parametrize("name", ["grown", "grown_enumerate", "grown_augmented", "written_ahead",
                                  "written_without_a_count", "written_through_zip"])
def test_a_sequence_changed_by_the_loop_over_it_is_refused(more, name):
    # grown: the gradient of the items the loop itself added was silently lost (1 where it
    # is 3); written ahead: the loop visited the old values (a wrong value, 2.1 for 20.25)
    with pytest.raises(ad.AdjointError, match="inside a loop over it") as info:
        ad.gradient(getattr(more, name), X[:3].copy())
    assert "for v in list(" in str(info.value) and "line" in str(info.value)


@pytest.mark.parametrize("name", ["over_a_copy", "items_rewritten", "by_index"])
def test_a_copy_or_a_same_length_rewrite_is_right(more, name):
    f = getattr(more, name)
    x = X[:3].copy()
    y, pb = ad.pullback(f, x)
    assert y == f(x.copy())
    np.testing.assert_allclose(pb(1.0)[0], _fd(f, x), rtol=1e-6, atol=1e-8)


def test_a_dicts_values_rewritten_in_a_loop_over_its_keys_is_right(tmp_path):
    src = (
        "def f(x):\n"
        "    d = {'a': x, 'b': x * x}\n"
        "    for k in d:\n"
        "        d[k] = d[k] * 3.0  # the keys stay: the loop is unchanged\n"
        "    return d['a'] + d['b']\n"
    )
    m = module_from_source(tmp_path, "dict_loop", src)
    assert ad.pullback(m.f, 0.7)[0] == m.f(0.7)
    assert ad.gradient(m.f, 0.7)[0] == pytest.approx(3.0 + 6.0 * 0.7)


LISTS = '''
import math


def weights(x):
    ws = [0.5, 1.5, 2.0]  # a list of numbers, only read: its items are numbers
    mus = [0.0, x, 1.0]
    s = 0.0
    for w, m in zip(ws, mus):
        s = s + w * math.exp(-(x - m) ** 2)
    for k in range(len(ws)):
        s = s + ws[k] * x ** k
    return s


def grown_elsewhere(x):
    ws = [0.5, 1.5]
    ws.append(x)  # written into: its items' kind is not assumed
    s = 0.0
    for w in ws:
        s = s + w * x
    return s
'''


@pytest.mark.parametrize("name", ["weights", "grown_elsewhere"])
def test_lists_of_numbers_only_read_have_number_items(more, name):
    f = getattr(more, name)
    for x in (0.7, -1.2):
        y, pb = ad.pullback(f, x)
        assert y == f(x)
        assert pb(1.0)[0] == pytest.approx((f(x + 1e-6) - f(x - 1e-6)) / 2e-6, rel=1e-6)
    text = ad.show_adjoint(f, 0.7)
    if name == "weights":
        assert "_rt.binop" not in text and "dispatched at run time" not in text, text


INACTIVE = '''
def written_ahead_constants(x):
    items = [1.0, 2.0, 3.0]  # no gradient flows into it: a plain list
    s = 0.0
    for v in items:
        items[2] = 5.0  # the plain loop visits 5.0 as its last item
        s = s + v * x
    return s


def grown_constants(x):
    items = [1.0, 2.0, 3.0]
    s = 0.0
    for v in items:
        if len(items) < 5:
            items.append(1.5)
        s = s + v * x
    return s


def written_after_the_loop(x):
    items = [1.0, 2.0, 3.0]
    s = 0.0
    for i in range(3):
        for v in items:
            s = s + v * x
        items[2] = x  # between loops over it: right
    return s
'''


@pytest.mark.parametrize("name", ["written_ahead_constants", "grown_constants"])
def test_a_list_of_constants_changed_by_the_loop_over_it_is_refused(more, name):
    # the value under pullback was 4.2 where the plain call gives 5.6 (and 6.3)
    with pytest.raises(ad.AdjointError, match="inside a loop over it"):
        ad.pullback(getattr(more, name), 0.7)


def test_a_list_written_between_loops_over_it_is_right(more):
    f = more.written_after_the_loop
    y, pb = ad.pullback(f, 0.7)
    assert y == f(0.7)
    assert pb(1.0)[0] == pytest.approx((f(0.7 + 1e-6) - f(0.7 - 1e-6)) / 2e-6, rel=1e-6)


@pytest.fixture(scope="module")
def more(tmp_path_factory):
    """The loops over lists changed in place, lists of numbers, lists no gradient flows into."""
    src = GROWN + LISTS.replace("import math\n", "") + INACTIVE
    m = module_from_source(tmp_path_factory.mktemp("loop_more"), "loop_more_mod", "import math\n" + src)
    yield m
    ad.refresh()
