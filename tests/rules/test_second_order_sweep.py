"""Every NumPy and SciPy rule differentiates again (issue 14), as ChainRulesTestUtils
checks every rule at second order.

For each row of the rule table (tests/rules/numpy/test_rules.py, which has a row per
registered rule: ``test_every_numpy_rule_has_a_row``), with real and, where the row
takes them, complex inputs: the first-order pullback is a function of the
differentiated arguments, ``x ↦ ∇ Re<gy, f(x)>``; the scalar ``s(x) = Re<w, ∇ ...>``
for a random ``w`` is differentiated by adjoint_s2s (its pullback, transformed once
more) and compared with central differences of ``s`` computed through the first-order
gradient alone. Every differentiated argument at once: the mixed second derivatives
(``kron``'s adjoint of ``a`` as a function of ``b``) are checked too.

A rule that cannot be differentiated twice must refuse clearly: ``REFUSED`` lists them
with the reason, and the test checks the refusal is an error that names the rule and
points into no file of adjoint_s2s.
"""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import isapprox, numerical_gradient

from .numpy.test_rules import ROWS as _ROWS, _cotangent, _opaque, _re_pair, _realise, _rng
from .numpy.test_rules import _scipy_more_rows
from .numpy.test_rules_more import ROWS as _MORE

# the rows of both tables (test_rules_more.py: the rules added for issue 14), and with
# scipy, scipy.stats and more of scipy.special
ROWS = _ROWS + _MORE + _scipy_more_rows()

# row id -> reason: rules whose pullback is not differentiated again (they refuse)
REFUSED = {}

# row id -> (rtol, atol) where the central differences of a first-order gradient are
# noisier than the default allows
TOLERANCE = {}


# cases placed on a kink (ties of max/sort, zeros of abs/sign, NaNs) check the
# first-order convention there; central differences of a gradient across a kink are
# meaningless, so the sweep leaves those cases out
_KINKS = {"ties", "zeros", "zeros2", "nan"}


def _smooth(case):
    for c in case:
        items = c if isinstance(c, list) else [c]
        if any(getattr(e, "dist", None) in _KINKS for e in items):
            return False
    return True


def _second(row, case_index, cplx, path="inline"):
    case = row.cases[case_index]
    if not _smooth(case):
        return
    rng = _rng(row.id, case_index, cplx, "sweep")
    args, diff = _realise(case, rng, cplx)
    if not diff:
        return
    fn = row.fn
    if path == "runtime":  # the run-time version of the rule (and of its helpers)
        if row.rt is not None:
            fn = row.rt
        else:
            args = [_opaque(a) if i in diff else a for i, a in enumerate(args)]
    gy = _cotangent(fn(*args), rng, row.drop)
    if gy is None or (isinstance(gy, tuple) and all(g is None for g in gy)):
        return
    xs0 = [args[i] for i in diff]
    ws = [_cotangent(x, rng) for x in xs0]

    def loss(*xs):
        trial = list(args)
        for i, x in zip(diff, xs):
            trial[i] = x
        return _re_pair(gy, fn(*trial))

    def s(*xs):
        gs = ad.gradient(loss, *xs)
        total = 0.0
        for g, w in zip(gs, ws):
            if g is not None and w is not None:
                total = total + np.real(np.sum(np.conj(w) * np.asarray(g)))
        return total

    def s_first_order(*xs):  # the same scalar, from the first-order gradient only
        gs = ad.gradient(loss, *xs)
        total = 0.0
        for g, w in zip(gs, ws):
            if g is not None and w is not None:
                total += float(np.real(np.sum(np.conj(w) * np.asarray(g))))
        return total

    got = ad.gradient(s, *xs0)
    want = numerical_gradient(s_first_order, *xs0, eps=1e-5)
    rtol, atol = TOLERANCE.get(row.id, (1e-4, 1e-6))
    for k, i in enumerate(diff):
        g = got[k]
        if g is None:  # no second-order dependence on this argument: the differences agree
            g = np.zeros_like(np.asarray(want[k])) if not isinstance(want[k], list) else None
        assert isapprox(g, want[k], rtol=rtol, atol=atol), (
            f"{row.id} case {case_index}{' (complex)' if cplx else ''} argument {i}:\n"
            f"  second order by adjoint_s2s: {got[k]!r}\n"
            f"  central differences of the first order: {want[k]!r}"
        )


def _rows(*paths):
    return [pytest.param(r, p, marks=list(r.marks) + (list(r.rt_marks) if p == "runtime" else []),
                         id=f"{r.id}-{p}")
            for r in ROWS for p in paths]


@pytest.mark.parametrize("row, path", _rows("inline", "runtime"))
def test_second_order(row, path):
    """Every case inline (the templates); the first case at run time (keeps it fast)."""
    if row.id in REFUSED:
        pytest.skip("refused at second order: " + REFUSED[row.id])
    cases = range(len(row.cases)) if path == "inline" else range(1)
    for cplx in ((False, True) if row.cplx else (False,)):
        for i in cases:
            _second(row, i, cplx, path)
