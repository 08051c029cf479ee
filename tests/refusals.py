"""Assertions that a function is refused where the user wrote the construct, or that its
gradient agrees with central differences: shared by the tests of refused families."""
import inspect

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import UnsupportedSyntaxError
from adjoint_s2s.testing import numerical_gradient


def line_of(fn, text):
    """The line of fn's file where text first appears in fn's source."""
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def refused(fn, x, statement, *words, where=None):
    """fn is refused (by gradient and by pullback's pullback) at the line of statement
    (in fn, or in the function where), in that function's file, with each of words in
    the message."""
    at = where or fn
    for run in (lambda: ad.gradient(fn, x), lambda: ad.pullback(fn, x)[1](1.0)):
        with pytest.raises(UnsupportedSyntaxError) as info:
            run()
        msg = str(info.value)
        assert f"{inspect.getsourcefile(at)}, line {line_of(at, statement)}" in msg, msg
        for w in words:
            assert w in msg, (w, msg)


def agrees(fn, x):
    """fn's gradient at x is the central differences'."""
    got = ad.gradient(fn, x)[0]
    want = numerical_gradient(fn, x)[0]
    assert np.allclose(got, want, rtol=1e-6, atol=1e-6), (got, want)
