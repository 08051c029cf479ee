"""runtime/sites.py: library files, generated origins, the user's call site."""
import os

import numpy as np

import adjoint_s2s
from adjoint_s2s.runtime.sites import (
    _not_users, generated_origin, is_library_file, user_call_site,
)


def test_library_files_are_numpys_and_the_standard_librarys_not_adjoint_s2s_nor_the_users():
    assert is_library_file(np.__file__)
    assert is_library_file(os.__file__)
    assert not is_library_file(adjoint_s2s.__file__)
    assert not is_library_file(os.path.join(os.path.dirname(adjoint_s2s.__file__), "runtime", "dispatch.py"))
    assert not is_library_file(__file__)
    assert not is_library_file("<string>")


def test_adjoint_s2s_own_files_are_not_the_users():
    assert _not_users(adjoint_s2s.__file__)
    assert _not_users(os.path.join(os.path.dirname(adjoint_s2s.__file__), "rules", "math.py"))
    assert not _not_users(__file__)


def test_no_generated_origin_outside_generated_code():
    assert generated_origin(__file__) is None
    assert user_call_site() is None  # no generated frame on this stack
