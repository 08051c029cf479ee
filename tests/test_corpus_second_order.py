"""Second derivatives of the construct corpus: every real-argument ``grad`` row of
test_corpus, differentiated twice (reverse over reverse), against central differences of
its gradient. This is how the generated code is checked to be differentiable itself: its
names (b_x, b_q, x_saved), restores, stores and complex partials meet the transformer
again.
"""
import pytest

import adjoint_s2s as ad

from .test_corpus import ROWS

# Known gaps: see docs/index.md, "Known limitations".
_WRONG = {
}


def _rows():
    for p in ROWS:
        mode, fn, args, _ = p.values
        if mode != "grad" or p.marks or not args or not all(type(a) is float for a in args):
            continue
        marks = ()
        if p.id in _WRONG:
            marks = pytest.mark.xfail(strict=True, raises=AssertionError, reason=_WRONG[p.id])
        yield pytest.param(fn, args, marks=marks, id=p.id)


@pytest.mark.parametrize("fn, args", list(_rows()))
def test_second_derivatives_match_differences_of_the_gradient(fn, args):
    n, e = len(args), 1e-5
    for i in range(n):

        def gi(*a):
            g = ad.gradient(fn, *a)[i]
            return 0.0 if g is None else g

        hess_row = ad.gradient(gi, *args)
        for j in range(n):
            up = list(args)
            dn = list(args)
            up[j] += e
            dn[j] -= e
            fd = (gi(*up) - gi(*dn)) / (2 * e)
            h = 0.0 if hess_row[j] is None else hess_row[j]
            assert h == pytest.approx(fd, rel=1e-4, abs=1e-4), (i, j)
