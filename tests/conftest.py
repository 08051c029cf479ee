"""Fixtures shared by the test modules."""
import pytest

import adjoint_s2s as ad
from adjoint_s2s.passes import item_vars


@pytest.fixture
def containers_kept():
    """A local list or dict used item by item at constant places stays a container
    (passes/item_vars.py off): for the tests of what the containers' own code refuses or
    follows; tests/test_item_variables.py runs the same shapes with the pass on."""
    item_vars.ENABLED[0] = False
    ad.refresh()
    yield
    item_vars.ENABLED[0] = True
    ad.refresh()
