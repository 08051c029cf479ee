"""The oracle's verdicts on programs whose answer is known: a wrong adjoint is ``wrong`` at
every step, a point within a step of a kink is ``invalid``, not ``wrong``."""
import numpy as np

from .oracle import check, inputs

NEAR_TIE = """\
import numpy as np

def h3(a):
    return (a.sum(), a)

def f(x, v, w, A):
    p5, q6 = h3(A.max(axis=0))
    s7 = p5 * np.sum(q6)
    return s7
"""

WRONG_RULE = """\
import numpy as np
import adjoint_s2s as ad

def cube(t):
    return t * t * t

@ad.adjoint(cube)
def _(t):
    return cube(t), lambda dy: (dy * 3.0 * t * t * 1.001,)  # 0.1 % off

def f(x, v, w, A):
    return np.sum(cube(v)) + x * np.sum(A)
"""


def test_a_point_within_a_step_of_a_max_kink_is_invalid_not_wrong():
    # seed 2509314: two entries of a column of A 3e-6 apart, closer than the steps along u
    x, v, w, A = inputs(2509314, ["x", "v", "w", "A"])
    assert abs(A[0, 0] - A[2, 0]) < 1e-5
    verdict = check(NEAR_TIE, 2509314, second=True)
    assert (verdict.verdict, verdict.order, verdict.kind) == ("invalid", 2, "kink within the steps")


def test_a_wrong_adjoint_stays_wrong_at_every_step():
    for second in (False, True):
        verdict = check(WRONG_RULE, 12345, second=second)
        assert (verdict.verdict, verdict.order) == ("wrong", 1), verdict


def test_the_same_programs_far_from_kinks_pass():
    assert check(NEAR_TIE, 12345, second=True).verdict == "pass"
    assert check(WRONG_RULE.replace(" * 1.001", ""), 12345, second=True).verdict == "pass"


AUGMENTED = """\
import numpy as np

def f(x, v, w, A):
    v += np.cos(A[0]) * x  # (A[0] float32, np.cos of it float32: no mixing)
    v += np.ones(v.shape) * w  # float64 into v: float32 stays float32 in Python
    return np.sum(v * v)
"""


def test_a_float32_value_other_than_the_plain_calls_is_wrong(monkeypatch):
    """The program passes as it is; with its arrays made float32 the value under pullback
    must be the plain call's own float32. `_rt.in_place` put back to the old behaviour
    (the rebound `v + w * x`, float64) is caught; the real one passes."""
    assert check(AUGMENTED, 11, second=False).verdict == "pass"
    from adjoint_s2s import runtime
    monkeypatch.setattr(runtime, "in_place", lambda old, new, v, op: new)
    verdict = check(AUGMENTED.replace("* x", "* (x)"), 12, second=False)  # (a fresh pair)
    assert (verdict.verdict, verdict.order, verdict.kind) == ("wrong", 1, "float32 value")
