"""The check the tests of user-style programs share: the gradient against central
differences, argument by argument, and the value under ``pullback`` equal to the plain
call's (bit for bit)."""
import numpy as np

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient


def close_to_differences(f, *args, rtol=1e-6, atol=1e-9):
    """ad.gradient(f, *args), checked against numerical_gradient; the value checked too."""
    got = ad.gradient(f, *args)
    want = numerical_gradient(f, *args)
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want):
        if isinstance(w, dict):  # (a dict's gradient: a dict of its keys)
            assert isinstance(g, dict) and list(g) == list(w), (got, want)
            g, w = list(g.values()), list(w.values())
        assert np.allclose(np.asarray(g, dtype=float), np.asarray(w, dtype=float), rtol=rtol, atol=atol), (got, want)
    assert ad.pullback(f, *args)[0] == f(*args)
    return got


def code_lines(text):
    """The lines of generated text that are code: no comment (a comment names the user's
    line, which may say what the code no longer does)."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
