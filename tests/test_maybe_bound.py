"""A name bound on some paths only (an `if` with no `else`, a loop that may not run), read
there, then bound again and read: the pullback of the first reads needs the first value
back on the paths that bound it.

Before, the forward pass saved a value only where its name was surely bound, and a loop
gave its saved names None before it: the pullback of the branch read the later value
(a wrong gradient, 5.0 where central differences give 3.75) or None (a TypeError from
inside generated code). The fuzzer's maybe_bound family found 85 wrong and 106 crashing
programs in 90 s of this shape. Such names are now bound to None at the entry of the
forward pass and saved and restored on every path (passes/tape.py)."""
import numpy as np
import pytest

import adjoint_s2s as ad


def branch_then_rebound(x, flag):
    if flag:
        a = x * x
        first = a * x
    else:
        first = 0.0
    a = 3.0 * x
    return first + a * x


def array_branch_then_rebound(x, flag):
    if flag:
        a = np.sin(x)
        first = np.sum(a * x)
    else:
        first = 0.0
    a = 3.0 * x
    return first + np.sum(a * x)


def branch_then_loop(x, n, flag):
    if flag:
        a = x * x
        first = a * x
    else:
        first = 0.0
    s = first
    for j in range(n):
        a = x * j
        s = s + a * x
    return s


def loop_then_rebound(x, n):
    s = 0.0
    for j in range(n):
        a = x * (j + 1.0)
        s = s + a * a
    a = 2.0 * x
    return s + a * x


def twice(u, v=1.0):
    return u * u * v


def starred_in_branch_then_loop(x, n, flag):
    if flag:
        a = [x]
        first = twice(*a)
    else:
        first = 0.0
    s = first
    for j in range(n):
        a = [x * (j + 1)]
        s = s + twice(*a)
    return s


def central(f, x, *rest, h=1e-6):
    if np.ndim(x) == 0:
        return (f(x + h, *rest) - f(x - h, *rest)) / (2 * h)
    return np.array([(f(x + h * e, *rest) - f(x - h * e, *rest)) / (2 * h) for e in np.eye(x.size)])


CASES = [
    (branch_then_rebound, 0.5, (True,)),
    (branch_then_rebound, 0.5, (False,)),
    (array_branch_then_rebound, np.array([0.5, 0.7]), (True,)),
    (branch_then_loop, 0.5, (3, True)),
    (branch_then_loop, 0.5, (0, True)),
    (branch_then_loop, 0.5, (2, False)),
    (loop_then_rebound, 0.7, (3,)),
    (loop_then_rebound, 0.7, (0,)),
    (starred_in_branch_then_loop, 0.5, (3, True)),
]


@pytest.mark.parametrize("f, x, rest", CASES, ids=[f"{c[0].__name__}-{c[2]}" for c in CASES])
def test_first_order_matches_central_differences(f, x, rest):
    got = ad.gradient(f, x, *rest)[0]
    assert np.allclose(got, central(f, x, *rest), rtol=1e-6, atol=1e-8)
    value, _ = ad.pullback(f, x, *rest)
    assert np.allclose(value, f(x, *rest))


@pytest.mark.parametrize("f, x, rest", [c for c in CASES if np.ndim(c[1]) == 0],
                         ids=[f"{c[0].__name__}-{c[2]}" for c in CASES if np.ndim(c[1]) == 0])
def test_second_order_matches_central_differences(f, x, rest):
    def df(y):
        return ad.gradient(f, y, *rest)[0]

    got = ad.gradient(df, x)[0]
    assert got == pytest.approx(central(df, x), rel=1e-5, abs=1e-7)


def test_the_forward_pass_binds_such_a_name_at_its_entry():
    text = ad.show_adjoint(branch_then_rebound, 0.5, True)
    lines = [ln.strip() for ln in text.splitlines()]
    at = lines.index("def branch_then_rebound_pair(x, flag):")
    assert "a = None" in lines[at + 1:lines.index("# if flag:")]
    # saved before the second binding only (the first has nothing to save), no dead None
    assert [ln for ln in lines if ln.startswith("a_saved")] == ["a_saved_1 = a"]
    assert [ln for ln in lines if ln.endswith("= None")] == ["a = None"]
