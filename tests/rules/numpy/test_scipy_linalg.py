"""The scipy.linalg and scipy.signal rules beyond their rows in test_rules.py (issue 14).

The rows (tests/rules/numpy/test_rules.py) check each rule by finite differences, inline
and at run time, real and complex, and the sweep (tests/rules/test_second_order_sweep.py)
at second order. Here:

* every rule of rules/scipy_linalg.py and rules/scipy_signal.py accepts SciPy's
  signature (``inspect.signature``): SciPy's names, order and defaults; a SciPy
  parameter a rule lacks is in ``DECLINED`` with the reason, and passing it is refused;
* each rule called with every parameter by keyword;
* the factorizations compose with their solvers: the gradient flows through
  ``cho_solve(cho_factor(a), b)`` and ``lu_solve(lu_factor(a), b)`` to a and b, and
  the latter agrees with ``np.linalg.solve``'s;
* real inputs with complex results (sqrtm of a matrix with a negative eigenvalue,
  convolving a real signal with a complex kernel) get real gradients;
* the value under ``pullback`` is the plain call's.
"""
import inspect

import numpy as np
import pytest

sl = pytest.importorskip("scipy.linalg")
ss = pytest.importorskip("scipy.signal")

import adjoint_s2s as ad  # noqa: E402
from adjoint_s2s import rules as R  # noqa: E402
from adjoint_s2s.errors import MissingAdjointError  # noqa: E402
from adjoint_s2s.rules import scipy_linalg as SL  # noqa: E402
from adjoint_s2s.rules import scipy_signal as SS  # noqa: E402
from adjoint_s2s.testing import check_grads, isapprox, numerical_gradient  # noqa: E402

from .test_rules import ROWS  # noqa: E402

TABLES = {"scipy.linalg": (sl, SL.TABLE), "scipy.signal": (ss, SS.TABLE)}
PATHS = [(f"{mod}.{row[0]}", getattr(module, row[0])) for mod, (module, table) in TABLES.items()
         for row in table]

# SciPy parameters the rules do not take, with the reason (passing them is refused)
DECLINED = {
    ("scipy.linalg.sqrtm", "disp"): "deprecated by SciPy 1.16; disp=False returns an error "
                                    "estimate as well: not accepted",
    ("scipy.linalg.sqrtm", "blocksize"): "deprecated by SciPy 1.16 and unused: not accepted",
    ("scipy.linalg.logm", "disp"): "deprecated by SciPy 1.16; disp=False returns an error "
                                   "estimate as well: not accepted",
}


def _rule(path):
    for variants in R.PRIMITIVES.values():
        for prim in variants.values():
            if prim.path == path:
                return prim
    return None


@pytest.mark.parametrize("path, fn", PATHS, ids=[p for p, _ in PATHS])
def test_parameters_match_scipy(path, fn):
    prim = _rule(path)
    assert prim is not None, f"{path} is not registered"
    ps = inspect.signature(fn).parameters
    names = list(prim.params)
    positional = [n for n, p in ps.items() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert names == positional[:len(names)], (path, names, positional)
    for name in names:
        default = ps[name].default
        if default is inspect.Parameter.empty:
            assert name not in prim.defaults, (path, name)
        else:
            assert eval(prim.defaults[name]) == default, (path, name)  # noqa: S307 (our table)
    for name in positional[len(names):]:
        assert (path, name) in DECLINED, f"{path}: SciPy's {name!r} is neither accepted nor declined"


def _spd(n, rng):
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


def _sq(n, rng):
    return 2 * np.eye(n) + 0.4 * rng.standard_normal((n, n))


@pytest.mark.parametrize("path, name", sorted(DECLINED))
def test_declined_parameters_are_refused(path, name):
    rng = np.random.default_rng(0)
    a = _sq(3, rng)
    if name == "disp":
        def f(x):
            return np.sum(getattr(sl, path.rsplit(".", 1)[1])(x, disp=True))
    else:
        def f(x):
            return np.sum(sl.sqrtm(x, blocksize=64))
    with pytest.raises(MissingAdjointError, match=name):
        ad.gradient(f, a)


def test_every_rule_has_a_row():
    covered = {c for row in ROWS for c in row.covers if isinstance(c, str)}
    missing = [path for path, _ in PATHS if path not in covered]
    assert not missing, f"rules without a test row: {missing}"


# ----- every parameter by keyword ---------------------------------------------------------------


def k_sqrtm(a):
    return np.sum(np.sin(sl.sqrtm(A=a)))


def k_logm(a):
    return np.sum(np.sin(sl.logm(A=a)))


def k_sylvester(a, b, q):
    return np.sum(np.sin(sl.solve_sylvester(a=a, b=b, q=q)))


def k_cho_factor(a, b):
    c = sl.cho_factor(a=a, lower=True, overwrite_a=False, check_finite=True)
    return np.sum(np.sin(sl.cho_solve(c_and_lower=c, b=b, overwrite_b=False, check_finite=True)))


def k_lu_factor(a, b):
    f = sl.lu_factor(a=a, overwrite_a=False, check_finite=True)
    return np.sum(np.sin(sl.lu_solve(lu_and_piv=f, b=b, trans=1, overwrite_b=False,
                                     check_finite=True)))


def k_banded(ab, b):
    x = sl.solve_banded(l_and_u=(1, 1), ab=ab, b=b, overwrite_ab=False, overwrite_b=False,
                        check_finite=True)
    return np.sum(np.sin(x))


def k_convolve(a, b):
    return np.sum(np.sin(ss.convolve(in1=a, in2=b, mode="same", method="direct")))


def k_correlate(a, b):
    return np.sum(np.sin(ss.correlate(in1=a, in2=b, mode="valid", method="fft")))


def _banded(rng):
    ab = rng.standard_normal((3, 5))
    ab[1] += 4
    return ab


KEYWORD_CASES = [
    ("sqrtm", k_sqrtm, lambda r: (_sq(3, r),)),
    ("logm", k_logm, lambda r: (_sq(3, r),)),
    ("solve_sylvester", k_sylvester, lambda r: (_sq(3, r), _sq(2, r), r.standard_normal((3, 2)))),
    ("cho_factor", k_cho_factor, lambda r: (_spd(3, r), r.standard_normal(3))),
    ("lu_factor", k_lu_factor, lambda r: (r.standard_normal((3, 3)), r.standard_normal((3, 2)))),
    ("solve_banded", k_banded, lambda r: (_banded(r), r.standard_normal(5))),
    ("convolve", k_convolve, lambda r: (r.standard_normal((4, 3)), r.standard_normal((2, 2)))),
    ("correlate", k_correlate, lambda r: (r.standard_normal(6), r.standard_normal(3))),
]


@pytest.mark.parametrize("name, f, make", KEYWORD_CASES, ids=[c[0] for c in KEYWORD_CASES])
def test_keyword_call(name, f, make):
    args = make(np.random.default_rng(1))
    check_grads(f, *args, rtol=1e-5, atol=1e-7)


# ----- the factorizations compose with their solvers ----------------------------------------------


def f_cho(a, b):
    return np.sum(np.sin(sl.cho_solve(sl.cho_factor(a), b)))


def f_lu(a, b):
    return np.sum(np.sin(sl.lu_solve(sl.lu_factor(a), b)))


def f_np_solve(a, b):
    return np.sum(np.sin(np.linalg.solve(a, b)))


def test_cho_solve_of_cho_factor_reaches_a_and_b():
    rng = np.random.default_rng(2)
    a, b = _spd(4, rng), rng.standard_normal((4, 2))
    ga, gb = check_grads(f_cho, a, b, rtol=1e-5, atol=1e-7)
    # cho_factor reads the upper triangle: the lower one gets nothing
    assert np.all(np.tril(ga, -1) == 0)
    assert np.any(np.triu(ga, 1) != 0)
    # the gradient of the symmetric matrix the triangle stands for: np.linalg.solve's,
    # symmetrised and folded onto the triangle
    wa, wb = ad.gradient(f_np_solve, a, b)
    sym = wa + wa.T
    assert isapprox(ga, np.triu(sym) - 0.5 * np.diag(np.diag(sym)), rtol=1e-8, atol=1e-10)
    assert isapprox(gb, wb, rtol=1e-8, atol=1e-10)


def test_lu_solve_of_lu_factor_is_np_linalg_solve():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4, 4)), rng.standard_normal(4)
    got = check_grads(f_lu, a, b, rtol=1e-5, atol=1e-7)
    want = ad.gradient(f_np_solve, a, b)
    for g, w in zip(got, want):
        assert isapprox(g, w, rtol=1e-8, atol=1e-10)


def test_factor_then_solve_at_second_order():
    rng = np.random.default_rng(4)
    a, b = _spd(3, rng), rng.standard_normal(3)
    u = rng.standard_normal((3, 3))

    for f in (f_cho, f_lu):
        def directional(x):
            return np.sum(u * ad.gradient(f, x, b)[0])

        (got,) = ad.gradient(directional, a)
        (want,) = numerical_gradient(directional, a, eps=1e-5)
        assert isapprox(got, want, rtol=1e-4, atol=1e-6), f.__name__


def test_factors_composed_with_solvers_by_the_same_batch():
    """cho_factor and lu_factor over a batch of matrices (SciPy loops over the batch)."""
    rng = np.random.default_rng(5)
    a = np.stack([_spd(3, rng), _spd(3, rng)])

    def f(x):
        c, low = sl.cho_factor(x)
        lu, piv = sl.lu_factor(x)
        return np.sum(np.sin(c)) + np.sum(np.cos(lu))

    check_grads(f, a, rtol=1e-5, atol=1e-7)


def test_lu_factor_of_a_non_square_matrix_refuses():
    def f(x):
        lu, piv = sl.lu_factor(x)
        return np.sum(lu)

    with pytest.raises(NotImplementedError, match="non-square"):
        ad.gradient(f, np.random.default_rng(6).standard_normal((3, 4)))


# ----- real inputs, complex results ---------------------------------------------------------------


def test_sqrtm_of_a_real_matrix_with_a_complex_root():
    a = np.array([[-1.0, 0.3, 0.1], [0.2, 2.0, 0.4], [0.0, 0.5, 3.0]])
    assert np.iscomplexobj(sl.sqrtm(a))

    def f(x):
        r = sl.sqrtm(x)
        return np.sum(np.real(r) * np.arange(9.0).reshape(3, 3)) + np.sum(np.imag(r))

    (g,) = check_grads(f, a, rtol=1e-5, atol=1e-7)
    assert g.dtype == np.float64


def test_convolve_real_signal_complex_kernel():
    rng = np.random.default_rng(7)
    x = rng.standard_normal(6)
    k = rng.standard_normal(3) + 1j * rng.standard_normal(3)

    def f(x, k):
        y = ss.convolve(x, k, "same")
        return np.sum(np.real(y * np.conj(y)))

    gx, gk = check_grads(f, x, k, rtol=1e-5, atol=1e-7)
    assert gx.dtype == np.float64 and gk.dtype == np.complex128


# ----- values -------------------------------------------------------------------------------------


def test_values_under_pullback_are_the_plain_calls():
    rng = np.random.default_rng(8)
    a, q = _sq(3, rng), rng.standard_normal((3, 3))
    ab = _banded(rng)
    x, k = rng.standard_normal((4, 5)), rng.standard_normal((2, 3))
    for f, args in [
        (lambda m: sl.sqrtm(m), (a,)),
        (lambda m: sl.logm(m), (a,)),
        (lambda m, q: sl.solve_sylvester(m, m.T, q), (a, q)),
        (lambda m: sl.cho_factor(m @ m.T, lower=True)[0], (a,)),
        (lambda m: sl.lu_factor(m)[0], (a,)),
        (lambda ab, b: sl.solve_banded((1, 1), ab, b), (ab, q[0, :].repeat(2)[:5])),
        (lambda x, k: ss.convolve(x, k, "valid"), (x, k)),
        (lambda x, k: ss.correlate(x, k, "same", "fft"), (x, k)),
    ]:
        y, _ = ad.pullback(f, *args)
        assert np.array_equal(y, f(*args))


def test_helper_names_reach_templates_unshadowed():
    """The helpers of these rules are the run time's _rt.<name>, and no other helper module
    of rules/numpy/ defines the same name."""
    import importlib
    import pkgutil

    from adjoint_s2s import runtime
    from adjoint_s2s.rules import numpy as N
    from adjoint_s2s.rules.numpy import scipy_linalg, scipy_signal

    mine = {}
    for mod in (scipy_linalg, scipy_signal):
        for name in mod.__all__:
            assert name not in mine, name
            mine[name] = getattr(mod, name)
            assert getattr(runtime, name) is mine[name], name
    for info in pkgutil.iter_modules(N.__path__):
        mod = importlib.import_module(f"{N.__name__}.{info.name}")
        if mod in (scipy_linalg, scipy_signal):
            continue
        clash = set(getattr(mod, "__all__", ())) & set(mine)
        assert not clash, (info.name, clash)
