"""Lazy iterators kept in a name (a generator expression, zip, map, enumerate, a dict view)
read their sources when consumed; adjoint_s2s takes their items where they are made. When
what they read changes in between, the value and the gradient were those of the old
contents (21.0 where Python gives 2.1, silently): refused now, naming the iterator and
the name that changes (passes/lazy.py). Where nothing they read changes before they are
used, or only a name Python looked up where the iterator was made is rebound, they are
differentiated, checked against central differences."""
import numpy as np
import pytest

import adjoint_s2s as ad


def element_reads_a_rebound_name(x):
    a = x
    g = (a * t for t in [1.0, 2.0])
    a = a * 10.0
    return sum(g)


def zip_of_a_list_written_into(x):
    xs = [x, 2.0]
    z = zip(xs, [1.0, 1.0])
    xs[0] = xs[0] * 10.0
    return sum(u * v for u, v in z)


def dict_view_of_a_dict_written_into(x):
    d = {"a": x, "b": 1.0}
    it = d.values()
    d["a"] = d["a"] * 10.0
    return sum(it)


def generator_over_a_list_appended_to(x):
    xs = [x, 2.0]
    g = (v * v for v in xs)
    xs.append(x * 3.0)
    return sum(g)


@pytest.mark.parametrize("f, changed, kept", [
    (element_reads_a_rebound_name, "a", "g"),
    (zip_of_a_list_written_into, "xs", "z"),
    (dict_view_of_a_dict_written_into, "d", "it"),
    (generator_over_a_list_appended_to, "xs", "g"),
], ids=lambda v: getattr(v, "__name__", None))
def test_a_kept_iterator_whose_source_changes_is_refused(f, changed, kept):
    with pytest.raises(ad.UnsupportedSyntaxError) as info:
        ad.gradient(f, 0.7)
    msg = str(info.value)
    assert f"kept in `{kept}`" in msg and f"`{changed}`, which it reads" in msg and "list(...)" in msg


def read_by_a_library_call_in_between(x, ws):
    g = (w * x for w in ws)
    scale = np.max(ws)
    return sum(g) / scale


def zip_consumed_by_a_loop(x, ys):
    xs = [x, 2.0 * x]
    pairs = zip(xs, ys)
    total = 0.0
    for a, b in pairs:
        total += a * b
    return total


def view_then_len(x):
    d = {"a": x, "b": 2.0 * x}
    it = d.items()
    n = len(d)
    return sum(v * v for k, v in it) / n


def iterable_rebound_after(x, ws):
    g = (w * x for w in ws)  # ws is looked up here: rebinding it later changes nothing
    ws = ws * 2.0
    return sum(g) + float(np.sum(ws))


@pytest.mark.parametrize("f, rest", [
    (read_by_a_library_call_in_between, (np.array([1.0, 2.0]),)),
    (zip_consumed_by_a_loop, ([1.0, 3.0],)),
    (view_then_len, ()),
    (iterable_rebound_after, (np.array([1.0, 2.0]),)),
], ids=lambda v: getattr(v, "__name__", None))
def test_kept_iterators_whose_sources_do_not_change_are_differentiated(f, rest):
    x = 0.7
    want = (f(x + 1e-6, *rest) - f(x - 1e-6, *rest)) / 2e-6
    assert ad.gradient(f, x, *rest)[0] == pytest.approx(want, rel=1e-6)
    assert ad.pullback(f, x, *rest)[0] == pytest.approx(f(x, *rest), rel=1e-12)
