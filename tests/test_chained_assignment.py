"""`a = b = E` binds one object to two names. The normaliser made it `t = E; a = t;
b = t`, and the alias tracking (which follows the user's names) did not see that a and b
are one object: a change through a showed neither in b's value nor in its gradient.
It is `a = E; b = a` now, a copy the tracking follows."""
import numpy as np
import pytest

import adjoint_s2s as ad


def array_changed_through_the_first(x):
    a = b = x * 1.0
    a[0] = 3.0
    return float(np.sum(b))


def list_changed_through_the_first(x):
    a = b = [x]
    a[0] = x * x
    return b[0]


def list_grown_through_the_first(x):
    a = b = []
    a.append(x * x)
    return b[0]


def three_names(x):
    a = b = c = x * 2.0
    a += 1.0
    return float(np.sum(b * c))


def numbers(x):
    a = b = x * 2.0
    a = a + 1.0
    return a * b


@pytest.mark.parametrize("f,x", [
    (array_changed_through_the_first, np.array([0.5, -1.0])),
    (list_changed_through_the_first, 2.0),
    (list_grown_through_the_first, 2.0),
    (three_names, np.array([0.5, -1.0])),
    (numbers, 1.5),
], ids=lambda v: getattr(v, "__name__", ""))
def test_chained_assignment_is_one_object(f, x):
    y, pb = ad.pullback(f, x)
    assert np.allclose(y, f(x))
    got = pb(1.0)[0]
    if isinstance(x, float):
        want = (f(x + 1e-6) - f(x - 1e-6)) / 2e-6
    else:
        want = np.array([(f(x + e) - f(x - e)) / 2e-6 for e in np.eye(x.size) * 1e-6])
    assert np.allclose(np.zeros_like(x) if got is None else got, want, rtol=1e-6, atol=1e-8)

