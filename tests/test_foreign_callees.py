"""Helpers imported from another module of the user's keep their result kinds (issue 15:
`from physics import accel` or `physics.step(...)` in a loop was dispatched at run time,
40-130 times the same helper defined next to the caller). The caller's code rests on what
the helper's code assumed of its own module, checked at each call as that module's
attributes: the tests change them (the helper redefined, a global of its module rebound
to another kind, the caller's name for the module rebound) and ask for the right
gradient again."""
import importlib
import math
import sys

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads

HELPERS = '''
import math

K = 0.5
WEIGHTS = [1.0, 2.0]


def accel(theta, k):
    return -k * math.sin(theta) * K


def step(theta, omega, k, dt):
    omega = omega + dt * accel(theta, k)
    return theta + dt * omega, omega


def weighted(x):
    return WEIGHTS[0] * x + WEIGHTS[1] * x * x
'''

CALLER = '''
import fc_helpers
from fc_helpers import accel


def from_import(theta, k):
    omega = 0.0
    for _ in range(100):
        omega = omega + 0.05 * accel(theta, k)
        theta = theta + 0.05 * omega
    return theta


def by_attribute(theta, k):
    omega = 0.0
    for _ in range(100):
        theta, omega = fc_helpers.step(theta, omega, k, 0.05)
    return theta


def items_of_its_module(x):
    s = 0.0
    for _ in range(10):
        s = s + fc_helpers.weighted(x + s * 0.01)
    return s
'''


@pytest.fixture
def mods(tmp_path, monkeypatch):
    ad.refresh()
    (tmp_path / "fc_helpers.py").write_text(HELPERS)
    (tmp_path / "fc_caller.py").write_text(CALLER)
    monkeypatch.syspath_prepend(str(tmp_path))
    helpers = importlib.import_module("fc_helpers")
    caller = importlib.import_module("fc_caller")
    yield helpers, caller
    for name in ("fc_helpers", "fc_caller"):
        sys.modules.pop(name, None)
    ad.refresh()


def _inline(f, *args):
    text = ad.show_adjoint(f, *args)
    return "dispatched at run time" not in text and "_rt.binop" not in text


@pytest.mark.parametrize("name", ["from_import", "by_attribute"])
def test_a_helper_of_another_module_keeps_its_result_kind(mods, name):
    f = getattr(mods[1], name)
    assert _inline(f, 1.0, 2.0)
    check_grads(f, 1.0, 2.0)


def test_the_helper_redefined_in_its_module(mods):
    helpers, caller = mods
    check_grads(caller.by_attribute, 1.0, 2.0)
    helpers.accel = lambda theta, k: -k * theta  # step reads it from its module
    got = check_grads(caller.by_attribute, 1.0, 2.0)
    caller.accel = helpers.accel  # the caller's own name for it
    check_grads(caller.from_import, 1.0, 2.0)
    assert got[0] != pytest.approx(0.0)


def test_a_global_of_the_helpers_module_rebound(mods):
    helpers, caller = mods
    before = check_grads(caller.from_import, 1.0, 2.0)
    helpers.K = 1.5
    after = check_grads(caller.from_import, 1.0, 2.0)
    assert after[0] != pytest.approx(before[0])
    helpers.K = np.array(0.5)  # another kind: the helper's code is made again
    assert np.allclose(ad.gradient(caller.from_import, 1.0, 2.0), before)


def test_the_callers_module_name_rebound(mods):
    helpers, caller = mods
    check_grads(caller.by_attribute, 1.0, 2.0)
    other = type(helpers)("fc_other")
    other.step = lambda theta, omega, k, dt: (theta + dt * omega * k, omega - dt * theta)
    caller.fc_helpers = other
    check_grads(caller.by_attribute, 1.0, 2.0)


def test_a_helper_that_took_its_modules_list_items_stays_dispatched(mods):
    helpers, caller = mods
    check_grads(caller.items_of_its_module, 0.3)
    helpers.WEIGHTS[1] = 3.0  # in place: the helper's code checks the items at each call
    got = check_grads(caller.items_of_its_module, 0.3)
    helpers.WEIGHTS.append("label")
    assert ad.gradient(caller.items_of_its_module, 0.3) == pytest.approx(got)
    assert math.isfinite(got[0])
