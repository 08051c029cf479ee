"""kinds.py: the kinds of run-time values and the one cache key."""
import numpy as np

from adjoint_s2s import emit
from adjoint_s2s.kinds import ARRAY, COMPLEX, CONST, OTHER, REAL, cache_key, cell_kinds, kinds_of


def test_kinds_of_values():
    assert kinds_of((1, 2.0, np.float64(1), 1j, np.ones(2), True, "s", None, b"", [1])) == (
        REAL, REAL, REAL, COMPLEX, ARRAY, CONST, CONST, CONST, CONST, OTHER)


def scaled(x, k=2.0, name="a"):
    return x * k


def make_closure(c):
    def inner(x):
        return x * c

    return inner


def test_cache_key_adds_the_defaults_left_out_and_the_captured_variables():
    assert cache_key(scaled, (REAL,)) == (REAL, REAL, CONST)
    assert cache_key(scaled, (REAL, COMPLEX)) == (REAL, COMPLEX, CONST)
    assert cache_key(scaled, (REAL,), keywords=True) == (REAL, OTHER, OTHER)
    f = make_closure(np.ones(2))
    assert cell_kinds(f) == (ARRAY,) and cell_kinds(scaled) is None
    assert cache_key(f, (REAL,)) == (REAL, ARRAY)


def test_emit_uses_this_one_cache_key():
    assert emit.cache_key is cache_key
