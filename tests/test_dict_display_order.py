"""A dict display is evaluated key, value, key, value, as Python does; the normaliser took
every key before the values, so calls with side effects ran in another order (a value of
2.1 for 3.5)."""
import numpy as np

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient


def ordered(x):
    order = []

    def k(t, v=None):
        order.append(t)
        return t if v is None else v

    d = {k("a"): x * k(1, 1.0), k("b"): x * 2.0}
    return d["a"] + d["b"] * order.index("b")


def test_a_dict_display_runs_key_then_value():
    y, back = ad.pullback(ordered, 0.7)
    assert np.isclose(y, ordered(0.7))
    assert np.isclose(back(1.0)[0], numerical_gradient(ordered, 0.7)[0])
