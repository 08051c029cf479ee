"""Acceptance audit of issue 14's NumPy list: each function it names has rows in
tests/rules/ checked by finite differences on several shapes, complex inputs where they
are meaningful, at first order (test_rules.py, test_rules_more.py: ``test_rule``) and at
second order (tests/rules/test_second_order_sweep.py runs every row of both tables).

The list is the issue's "Coverage" section (NumPy part; the SciPy functions have their
own tables). ``np.add.at`` is refused (it writes in place): its row is the refusal test.
"""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import MutationError

from ..test_second_order_sweep import REFUSED, ROWS as SWEPT
from .test_rules import ROWS as FIRST, Arg
from .test_rules_more import ROWS as MORE

_fft = np.fft
_la = np.linalg

# the issue's list, by name: (function or "np.r_"-style key, complex inputs meaningful)
ISSUE_14 = {
    "np.fft.fft": (_fft.fft, True), "np.fft.ifft": (_fft.ifft, True),
    "np.fft.rfft": (_fft.rfft, False), "np.fft.irfft": (_fft.irfft, True),
    "np.fft.fft2": (_fft.fft2, True), "np.fft.ifft2": (_fft.ifft2, True),
    "np.fft.fftn": (_fft.fftn, True), "np.fft.ifftn": (_fft.ifftn, True),
    "np.fft.rfft2": (_fft.rfft2, False), "np.fft.rfftn": (_fft.rfftn, False),
    "np.fft.irfftn": (_fft.irfftn, True), "np.fft.hfft": (_fft.hfft, True),
    "np.fft.ihfft": (_fft.ihfft, False), "np.fft.fftshift": (_fft.fftshift, True),
    "np.fft.ifftshift": (_fft.ifftshift, True),
    "np.linalg.eig": (_la.eig, True), "np.linalg.eigvals": (_la.eigvals, True),
    "np.linalg.eigvalsh": (_la.eigvalsh, True), "np.linalg.eigh": (_la.eigh, True),
    "np.linalg.matrix_power": (_la.matrix_power, True), "np.linalg.pinv": (_la.pinv, True),
    "np.linalg.lstsq": (_la.lstsq, True), "np.linalg.tensorsolve": (_la.tensorsolve, True),
    "np.linalg.tensorinv": (_la.tensorinv, True), "np.linalg.multi_dot": (_la.multi_dot, True),
    "np.append": (np.append, True), "np.gradient": (np.gradient, True),
    "np.rollaxis": (np.rollaxis, True),
    "np.partition": (np.partition, False),  # an order statistic: real
    "np.select": (np.select, True), "np.real_if_close": (np.real_if_close, True),
    "np.r_": ("np.r_", True), "np.c_": ("np.c_", True),
    "np.convolve": (np.convolve, True), "np.correlate": (np.correlate, True),
    "np.interp": (np.interp, True),
    "np.median": (np.median, False), "np.percentile": (np.percentile, False),
    "np.quantile": (np.quantile, False),
    "np.nansum": (np.nansum, False), "np.nanmean": (np.nanmean, False),
    "np.nanprod": (np.nanprod, False), "np.nanvar": (np.nanvar, False),
    "np.nanstd": (np.nanstd, False), "np.nanmax": (np.nanmax, False),
    "np.nanmin": (np.nanmin, False), "np.nanmedian": (np.nanmedian, False),
    "np.nanquantile": (np.nanquantile, False), "np.nanpercentile": (np.nanpercentile, False),
    "np.polyval": (np.polyval, True), "np.trapezoid": (np.trapezoid, True),
    "np.cumprod": (np.cumprod, True), "np.diff": (np.diff, True), "np.ediff1d": (np.ediff1d, True),
    "np.linspace": (np.linspace, True), "np.logspace": (np.logspace, True),
    "np.vectorize": (np.vectorize.__call__, True),
    "np.add.reduce": (np.add.reduce, True), "np.multiply.accumulate": (np.multiply.accumulate, True),
    "np.maximum.reduce": (np.maximum.reduce, False), "np.add.outer": (np.add.outer, True),
}


def _covers(row, fn):
    return any(c is fn or (type(c) is type(fn) and c == fn) for c in row.covers)


def _shapes(row):
    """The shapes of the differentiated arguments, case by case."""
    out = set()
    for case in row.cases:
        shapes = []
        for c in case:
            items = c if isinstance(c, list) else [c]
            shapes += [tuple(e.shape) for e in items if isinstance(e, Arg)]
        out.add(tuple(shapes))
    return out


@pytest.mark.parametrize("name", list(ISSUE_14))
def test_issue_function_has_rows(name):
    fn, complex_meaningful = ISSUE_14[name]
    rows = [r for r in FIRST + MORE if _covers(r, fn)]
    assert rows, f"{name}: no row in tests/rules/"
    shapes = set().union(*(_shapes(r) for r in rows))
    assert len(shapes) >= 2, f"{name}: rows on one shape only: {shapes}"
    swept = {r.id for r in SWEPT}
    second = [r for r in rows if r.id in swept and r.id not in REFUSED]
    assert second, f"{name}: no row is checked at second order"
    if complex_meaningful:
        assert any(r.cplx for r in rows), f"{name}: no row with complex inputs"


def _add_at(x, b):
    a = x * 1.0
    np.add.at(a, np.array([0, 0, 2]), b)
    return np.sum(a * a)


def _multiply_at(x):
    a = x + 0.0
    np.multiply.at(a, [1], 2.0)
    return np.sum(a)


@pytest.mark.parametrize("fn, args", [(_add_at, (np.ones(3), np.arange(3.0))),
                                      (_multiply_at, (np.ones(3),))])
def test_ufunc_at_is_refused(fn, args):
    """ufunc.at writes into its first argument: refused, with the replacement."""
    with pytest.raises(MutationError, match=r"\.at\(a, indices, b\) changes a in place"):
        ad.gradient(fn, *args)


def test_the_refusal_points_at_the_user_line():
    with pytest.raises(MutationError) as info:
        ad.gradient(_add_at, np.ones(3), np.arange(3.0))
    assert "test_issue14_audit.py" in str(info.value)
