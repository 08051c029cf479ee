"""runtime/dispatch.py: the one order of resolution, the pair cache, constructors."""
import collections
import dataclasses
import math

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import rules as R
from adjoint_s2s.errors import MissingAdjointError
from adjoint_s2s.runtime.dispatch import call, forget_pairs, resolve, rule_pair


def cube(x):
    return x * x * x


def test_rule_pair_order_user_rule_then_builtin_then_none_for_source():
    assert rule_pair(cube, 1) is None  # no rule: its source is transformed
    y, pb = rule_pair(math.sin, 1)(0.5)  # a primitive
    assert y == math.sin(0.5) and pb(1.0)[1] == pytest.approx(math.cos(0.5))
    y, pb = rule_pair(isinstance, 2)(1.0, float)  # non-differentiable
    assert y is True and pb(1.0) == (None, None, None)
    assert rule_pair([], 0) is None  # unhashable: no built-in rule

    @ad.adjoint(math.sin)
    def _(x):
        return math.sin(x), lambda g: (7.0 * g,)

    try:
        y, pb = rule_pair(math.sin, 1)(0.5)  # the user's rule wins over the primitive
        assert pb(1.0)[1:] == (7.0,)
    finally:
        del R.USER_RULES[math.sin]
        R.bump(math.sin)


def test_call_caches_the_pair_on_the_function_until_a_rule_changes():
    y, pb = call(cube, 2.0)
    assert y == 8.0 and pb(1.0) == (None, 12.0)
    assert float in {k[0] for k in cube.__adjoint_pairs__}
    R.bump(cube)  # a rule changed: rules.ON_CHANGE reaches forget_pairs
    assert "__adjoint_pairs__" not in cube.__dict__
    call(cube, 2.0)
    forget_pairs()
    assert "__adjoint_pairs__" not in cube.__dict__


def test_resolve_refuses_a_builtin_without_a_rule():
    ufunc = np.frompyfunc(abs, 1, 1)  # no Python source, no rule
    assert rule_pair(ufunc, 1) is None
    with pytest.raises(MissingAdjointError):
        resolve(ufunc, 1)(-2.0)


@dataclasses.dataclass
class Point:
    x: float
    y: float


Pair = collections.namedtuple("Pair", "a b")


def test_constructors_give_each_argument_its_fields_gradient():
    obj, pb = call(Point, 1.0, 2.0)
    assert obj == Point(1.0, 2.0)
    assert pb({"x": 3.0, "y": 4.0}) == (None, 3.0, 4.0)
    obj, pb = call(Pair, 1.0, b=2.0)
    assert pb(Pair(5.0, 6.0)) == (None, 5.0, {"b": 6.0})
    lst, pb = call(list, (1.0, 2.0))
    assert lst == [1.0, 2.0] and pb([3.0, 4.0]) == (None, (3.0, 4.0))
