"""A value a call hands back that something else also holds, then changed in place.

`max(L1, L2, key=len)`, `next(iter(rows))`, `getattr`, `min` give back one of their
arguments (or an item of one), `d.setdefault(k, y)` gives back d's item or y itself: a
change through the result shows through the other names, in Python. The generated code
gave such a value with no gradient a private copy before changing it (the other names
kept the old values: a wrong value, 1.5 where Python gives 1.75), and, with a gradient,
followed the change by the result's name only (a wrong gradient). Found by the fuzzer's
other_name family (`D.setdefault('k', y)` then `.append`). Now the values match the plain
call, and a change with a gradient is refused when it runs, naming both names."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import MutationError


def longest_then_append(x):
    L1 = [1.0, 2.0]
    L2 = [3.0]
    a = max(L1, L2, key=len)
    a.append(0.5)
    return x * sum(L1)


def first_row_then_append(x):
    rows = [[1.0], [2.0]]
    a = next(iter(rows))
    a.append(0.5)
    return x * sum(rows[0])


def longest_array_then_write(x):
    A = np.array([1.0, 2.0])
    B = np.array([3.0])
    a = max(A, B, key=len)
    a[0] = 5.0
    return x * float(np.sum(A))


def setdefault_then_append(x):
    y = [0.63, 0.5]
    d = {}
    a = d.setdefault("k", y)
    a.append(0.29)
    return sum(d["k"])  # (the fuzzer's program: 1.13 for 1.42)


@pytest.mark.parametrize("f", [longest_then_append, first_row_then_append, longest_array_then_write,
                               setdefault_then_append], ids=lambda f: f.__name__)
def test_a_change_without_gradient_shows_through_the_other_names(f):
    x = 0.5
    assert ad.pullback(f, x)[0] == pytest.approx(f(x), rel=1e-12)
    want = (f(x + 1e-6) - f(x - 1e-6)) / 2e-6
    assert (ad.gradient(f, x)[0] or 0.0) == pytest.approx(want, rel=1e-6, abs=1e-9)


def longest_then_append_active(x):
    L1 = [x, 2.0]
    L2 = [3.0]
    a = max(L1, L2, key=len)
    a.append(x * x)
    return sum(L1)


def first_row_then_append_active(x):
    rows = [[x], [2.0]]
    a = next(iter(rows))
    a.append(x * 3.0)
    return sum(rows[0])


def longest_array_then_write_active(x):
    A = np.array([x, 2.0])
    B = np.array([3.0])
    a = max(A, B, key=len)
    a[0] = x * 5.0
    return float(np.sum(A))


@pytest.mark.parametrize("f, names", [
    (longest_then_append_active, ("`a`", "`L1`")),
    (first_row_then_append_active, ("`a`", "`rows`")),
    (longest_array_then_write_active, ("`a`", "`A`")),
], ids=lambda v: getattr(v, "__name__", None))
def test_a_change_with_a_gradient_is_refused_naming_both(f, names):
    with pytest.raises(MutationError) as info:
        ad.gradient(f, 0.5)
    assert all(n in str(info.value) for n in names)


def grouped(x):
    d = {}
    for k in ("a", "b"):
        d.setdefault(k, []).append(x * 2.0)
    return sum(d["a"]) + sum(d["b"])


def test_the_refusal_names_the_call_as_written():
    # (not the normaliser's name for its value, `setdefault`)
    with pytest.raises(MutationError) as info:
        ad.gradient(grouped, 0.5)
    msg = str(info.value)
    assert "writing into `d.setdefault(...)` while `d` holds it" in msg and "line 95" in msg
