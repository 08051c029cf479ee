"""The scipy.special rules added for issue 14 (betainc, betaincc, ive, kve, yn) and the
scipy.stats rules (norm, t, gamma, beta, poisson, dirichlet, multivariate_normal),
checked as tests/rules/numpy/test_rules.py checks the others: every row against finite
differences, inline and at run time, on scalars, arrays and broadcast mixtures of
them. The second-order sweep (tests/rules/test_second_order_sweep.py) runs these rows
too, and ``test_rules.test_every_numpy_rule_has_a_row`` counts them.

Then: the derivatives adjoint_s2s declines are refused when differentiated (never a
zero, an integer given for a real order too) and cost nothing when the argument is
fixed; yn's integer n has no gradient; each rule's parameters are scipy's.
"""
import inspect

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import rules as R
from adjoint_s2s.errors import NotDifferentiableError
from adjoint_s2s.testing import check_grads

from .test_rules import A, Arg, G1, P, PR, Row, S, U, _check

sc = pytest.importorskip("scipy.special")
st = pytest.importorskip("scipy.stats")


def _sp(name, fn, cases, **kw):
    return Row("scipy." + name, "scipy.special." + name, fn, cases, **kw)


def _st(name, fn, cases, **kw):
    return Row("scipy.stats." + name, "scipy.stats." + name, fn, cases, **kw)


# ----- scipy.special -----------------------------------------------------------------------------

_A3 = np.array([1.5, 2.0, 3.0])  # a fixed array of shapes (a closure, not an argument)

SPECIAL_ROWS = [
    _sp("betainc", lambda x: sc.betainc(2.5, 1.5, x), [PR(3), PR(2, 3), S("prob")]),
    _sp("betaincc", lambda x: sc.betaincc(_A3, 0.7, x) + sc.betaincc(1.5, 0.7, x), [PR(3), PR(2, 3)]),
    _sp("ive", lambda z: sc.ive(1.5, z * z + 0.1) + sc.ive(2, z), [A(3), A(2, 3)]),
    _sp("kve", lambda z: sc.kve(0.5, z), [P(3), P(2, 3)], cplx=True),
    _sp("yn", lambda x, n=2: sc.yn(n, x), [P(3), (P(2, 3), np.array([0, 1, 3])), (S("pos"), 1)]),
]

# ----- scipy.stats -------------------------------------------------------------------------------


def f_norm(method):
    meth = getattr(st.norm, method)

    def f(x, loc=0.0, scale=1.0):
        return getattr(st.norm, method)(x, loc, scale) + meth(x, loc=loc, scale=scale)

    return f


def f_norm_x(method):
    return lambda x: getattr(st.norm, method)(x)


_LOC_SCALE = [(A(3), A(3), P(3)), (A(2, 3), S(), S("pos")), (S(), A(2, 1), P(3)),
              (A(2, 3), A(3), P(2, 1))]

NORM_ROWS = []
for _m in ("logpdf", "pdf", "cdf", "logcdf"):
    NORM_ROWS.append(_st(f"norm.{_m}", f_norm(_m), _LOC_SCALE))
    NORM_ROWS.append(Row(f"scipy.stats.norm.{_m}/x", f"scipy.stats.norm.{_m}", f_norm_x(_m),
                         [A(3), S()]))


def f_t_logpdf(x, df, loc, scale):
    return st.t.logpdf(x, df, loc, scale) + st.t.logpdf(x, df, loc=loc, scale=scale)


def f_t_pdf(x, df, loc, scale):
    return st.t.pdf(x, df, loc=loc, scale=scale)


def f_t_cdf(x, loc, scale):
    return st.t.cdf(x, 2.5, loc, scale)


def f_t_logcdf(x, loc, scale):
    return st.t.logcdf(x, df=2.5, loc=loc, scale=scale)


_T = [(A(3), P(3), A(3), P(3)), (A(2, 3), S("pos"), S(), S("pos")), (S(), P(2, 1), A(3), P(3))]

# gamma: z = (x - loc)/scale > 0 (x in (1.3, 3), loc in (-0.8, 0.8))


def f_gamma_logpdf(x, a, loc, scale):
    return st.gamma.logpdf(x, a, loc, scale) + st.gamma.logpdf(x, a=a, loc=loc, scale=scale)


def f_gamma_pdf(x, a, loc, scale):
    return st.gamma.pdf(x, a, loc, scale)


def f_gamma_cdf(x, loc, scale):
    return st.gamma.cdf(x, 1.7, loc, scale)


def f_gamma_logcdf(x, loc, scale):
    return st.gamma.logcdf(x, 1.7, loc=loc, scale=scale)


_GAMMA = [(G1(3), P(3), U(3), P(3)), (G1(2, 3), S("pos"), S("unit"), S("pos")),
          (Arg((), "gt1", scalar=True), P(2, 1), U(3), P(3))]

# beta: 0 < z < 1 (x in (0.1, 0.9), loc = 0.05 l with l in (-0.8, 0.8), scale = 1 + 0.05 s)


def f_beta_logpdf(x, a, b, loc, scale):
    return (st.beta.logpdf(x, a, b, 0.05 * loc, 1 + 0.05 * scale)
            + st.beta.logpdf(x, a=a, b=b, loc=0.05 * loc, scale=1 + 0.05 * scale))


def f_beta_pdf(x, a, b, loc, scale):
    return st.beta.pdf(x, a, b, 0.05 * loc, 1 + 0.05 * scale)


def f_beta_cdf(x, loc, scale):
    return st.beta.cdf(x, 2.5, 1.5, 0.05 * loc, 1 + 0.05 * scale)


def f_beta_logcdf(x, loc, scale):
    return st.beta.logcdf(x, 2.5, 1.5, loc=0.05 * loc, scale=1 + 0.05 * scale)


_BETA = [(PR(3), P(3), P(3), U(3), P(3)), (PR(2, 3), S("pos"), P(3), S("unit"), S("pos")),
         (S("prob"), P(2, 1), S("pos"), U(3), P(3))]

_K = np.array([0, 1, 3])
_K2 = np.array([[0.0, 2.0, 4.0], [1.0, 1.0, 6.0]])


def f_poisson_logpmf(mu, k=_K):
    return st.poisson.logpmf(k, mu) + st.poisson.logpmf(k, mu=mu, loc=0)


def f_poisson_pmf(mu, k=_K):
    return st.poisson.pmf(k, mu, 1)


def f_poisson_cdf(mu, k=_K):
    return st.poisson.cdf(k, mu) + st.poisson.cdf(k + 0.5, mu=mu)


def f_poisson_logcdf(mu, k=_K):
    return st.poisson.logcdf(k, mu, loc=-1)


_POISSON = [P(3), (P(2, 3), _K2), (S("pos"), _K2), (S("pos"), 2)]


def f_dirichlet_logpdf(x, alpha):
    """x: the first two of three components, per point (axis 0)."""
    return st.dirichlet.logpdf(0.45 * x, 1 + alpha) + st.dirichlet.logpdf(0.45 * x, alpha=1 + alpha)


def f_dirichlet_pdf(x, alpha):
    return st.dirichlet.pdf(0.45 * x, 1 + alpha)


_SIMPLEX = np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]])


def f_dirichlet_alpha(alpha):
    """Every component given: x on the simplex is fixed, alpha differentiated."""
    return st.dirichlet.logpdf(_SIMPLEX, alpha) + st.dirichlet.pdf(_SIMPLEX[:, 0], alpha)


_DIRICHLET = [(PR(2), P(3)), (PR(2, 4), P(3))]


def f_mvn_logpdf(x, mean, cov):
    return (st.multivariate_normal.logpdf(x, mean, cov)
            + st.multivariate_normal.logpdf(x, mean=mean, cov=cov))


def f_mvn_pdf(x, mean, cov):
    return st.multivariate_normal.pdf(x, mean, cov)


def f_mvn_default(x):
    return st.multivariate_normal.logpdf(x)


def f_mvn_cdf(x):
    """The value only: the cdf of fixed arguments, beside a differentiated x."""
    return x * st.multivariate_normal.cdf(np.array([0.1, 0.2]), np.zeros(2), np.eye(2),
                                          rng=np.random.default_rng(0))


def f_mvn_logcdf(x):
    return x * st.multivariate_normal.logcdf(np.array([0.1, 0.2]), np.zeros(2), np.eye(2),
                                             rng=np.random.default_rng(0))


def _spd(n):
    return Arg((n, n), "spd")


_MVN = [(A(2), A(2), _spd(2)), (A(4, 3), A(3), _spd(3)), (A(2, 3, 2), A(2), P(2)),
        (A(3), S(), S("pos")), (S(), S(), S("pos"))]

STATS_ROWS = NORM_ROWS + [
    _st("t.logpdf", f_t_logpdf, _T),
    _st("t.pdf", f_t_pdf, _T),
    _st("t.cdf", f_t_cdf, [c[:1] + c[2:] for c in _T]),
    _st("t.logcdf", f_t_logcdf, [c[:1] + c[2:] for c in _T]),
    _st("gamma.logpdf", f_gamma_logpdf, _GAMMA),
    _st("gamma.pdf", f_gamma_pdf, _GAMMA),
    _st("gamma.cdf", f_gamma_cdf, [c[:1] + c[2:] for c in _GAMMA]),
    _st("gamma.logcdf", f_gamma_logcdf, [c[:1] + c[2:] for c in _GAMMA]),
    _st("beta.logpdf", f_beta_logpdf, _BETA),
    _st("beta.pdf", f_beta_pdf, _BETA),
    _st("beta.cdf", f_beta_cdf, [c[:1] + c[3:] for c in _BETA]),
    _st("beta.logcdf", f_beta_logcdf, [c[:1] + c[3:] for c in _BETA]),
    _st("poisson.logpmf", f_poisson_logpmf, _POISSON),
    _st("poisson.pmf", f_poisson_pmf, _POISSON),
    _st("poisson.cdf", f_poisson_cdf, _POISSON),
    _st("poisson.logcdf", f_poisson_logcdf, _POISSON),
    _st("dirichlet.logpdf", f_dirichlet_logpdf, _DIRICHLET),
    _st("dirichlet.pdf", f_dirichlet_pdf, _DIRICHLET),
    Row("scipy.stats.dirichlet/alpha", ["scipy.stats.dirichlet.logpdf", "scipy.stats.dirichlet.pdf"],
        f_dirichlet_alpha, [P(3)]),
    _st("multivariate_normal.logpdf", f_mvn_logpdf, _MVN),
    _st("multivariate_normal.pdf", f_mvn_pdf, _MVN),
    Row("scipy.stats.multivariate_normal/default", "scipy.stats.multivariate_normal.logpdf",
        f_mvn_default, [A(3), S(), A(4, 1)]),
    _st("multivariate_normal.cdf", f_mvn_cdf, [A(3)]),
    _st("multivariate_normal.logcdf", f_mvn_logcdf, [A(3)]),
]

ROWS = SPECIAL_ROWS + STATS_ROWS


def _params():
    out = []
    for row in ROWS:
        for path in ("inline", "runtime"):
            out.append(pytest.param(row, path, id=f"{row.id}-{path}"))
    return out


@pytest.mark.parametrize("row, path", _params())
def test_rule(row, path):
    for i in range(len(row.cases)):
        _check(row, i, path, False)
    if row.cplx:
        for i in range(len(row.cases)):
            _check(row, i, path, True)


def test_every_new_rule_has_a_row():
    from adjoint_s2s.rules import scipy_stats

    covered = {c for row in ROWS for c in row.covers}
    paths = [f"scipy.stats.{d}.{m}" for d, m, *_ in scipy_stats.TABLE]
    assert not [p for p in paths if p not in covered]


# ----- declined derivatives: refused when differentiated, never a zero -------------------------


class Opaque(np.ndarray):
    """Arrays the transformer does not know: the run-time version of each rule."""


DECLINED_CALLS = [
    ("gammainc", "a", lambda a, x: sc.gammainc(a, x), (2.5, np.array([0.5, 1.5]))),
    ("gammaincc", "a", lambda a, x: sc.gammaincc(a, x), (2.5, np.array([0.5, 1.5]))),
    ("betainc", "a", lambda a, x: sc.betainc(a, 1.5, x), (2.5, np.array([0.2, 0.7]))),
    ("betaincc", "b", lambda b, x: sc.betaincc(1.5, b, x), (2.5, np.array([0.2, 0.7]))),
    ("jv", "v", lambda v, x: sc.jv(v, x), (1.5, np.array([0.5, 1.5]))),
    ("yv", "v", lambda v, x: sc.yv(v, x), (1.5, np.array([0.5, 1.5]))),
    ("iv", "v", lambda v, x: sc.iv(v, x), (1.5, np.array([0.5, 1.5]))),
    ("kv", "v", lambda v, x: sc.kv(v, x), (1.5, np.array([0.5, 1.5]))),
    ("ive", "v", lambda v, x: sc.ive(v, x), (1.5, np.array([0.5, 1.5]))),
    ("kve", "v", lambda v, x: sc.kve(v, x), (1.5, np.array([0.5, 1.5]))),
    ("t.cdf", "df", lambda df, x: st.t.cdf(x, df), (2.5, np.array([0.5, 1.5]))),
    ("t.logcdf", "df", lambda df, x: st.t.logcdf(x, df), (2.5, np.array([0.5, 1.5]))),
    ("gamma.cdf", "a", lambda a, x: st.gamma.cdf(x, a), (2.5, np.array([0.5, 1.5]))),
    ("gamma.logcdf", "a", lambda a, x: st.gamma.logcdf(x, a), (2.5, np.array([0.5, 1.5]))),
    ("beta.cdf", "b", lambda b, x: st.beta.cdf(x, 1.5, b), (2.5, np.array([0.2, 0.7]))),
    ("beta.logcdf", "a", lambda a, x: st.beta.logcdf(x, a, 1.5), (2.5, np.array([0.2, 0.7]))),
    ("multivariate_normal.cdf", "cov",
     lambda c, x: st.multivariate_normal.cdf(x, np.zeros(2), c * np.eye(2)),
     (1.5, np.array([0.2, 0.7]))),
]


@pytest.mark.parametrize("name, param, f, args", DECLINED_CALLS, ids=[c[0] for c in DECLINED_CALLS])
def test_declined_derivative_is_refused(name, param, f, args):
    def loss(p, x):
        return np.sum(f(p, x))

    # the value is the plain call's, and differentiating the parameter is a clear refusal
    y, back = ad.pullback(loss, *args)
    assert y == loss(*args)
    with pytest.raises(NotDifferentiableError, match=rf"{name} is not differentiable in {param}"):
        ad.gradient(loss, args[0], ad.dropgrad(args[1]))
    with pytest.raises(NotDifferentiableError, match="dropgrad"):
        ad.gradient(loss, args[0], args[1].view(Opaque))


@pytest.mark.parametrize("name, param, f, args", DECLINED_CALLS[:-1],
                         ids=[c[0] for c in DECLINED_CALLS[:-1]])
def test_declined_parameter_held_fixed_costs_nothing(name, param, f, args):
    p, x = args

    def fixed(x):
        return np.sum(f(p, x))

    def dropped(q, x):
        return np.sum(f(ad.dropgrad(q), x))

    check_grads(fixed, x)
    (got,) = ad.gradient(fixed, x.view(Opaque))  # at run time the order's thunk is not forced
    np.testing.assert_allclose(got, ad.gradient(fixed, x)[0], rtol=1e-12)
    gq, gx = ad.gradient(dropped, p, x)
    np.testing.assert_allclose(gx, ad.gradient(fixed, x)[0], rtol=1e-12)


def test_integer_orders():
    """yn's n (an integer by definition) has no gradient; jv's v is a real order even when
    an integer is given (its derivative exists there): refused, never a zero."""
    n, x = np.array([0, 1, 2]), np.array([0.5, 1.5, 2.5])

    def f(n, x):
        return np.sum(sc.yn(n, x) * sc.yn(n, 2 * x))

    gn, gx = ad.gradient(f, n, x)
    assert gn is None
    check_grads(lambda x: f(n, x), x)
    gn, gx = ad.gradient(f, n.view(Opaque), x.view(Opaque))
    assert gn is None

    def h(n, x):
        return np.sum(sc.jv(n, x))

    for args in ((n, x), (2, x), (n.view(Opaque), x.view(Opaque))):
        with pytest.raises(NotDifferentiableError, match="jv is not differentiable in v"):
            ad.gradient(h, *args)
    check_grads(lambda x: h(n, x), x)


def test_ive_of_complex_z_is_refused():
    with pytest.raises(NotDifferentiableError, match="holomorphic"):
        ad.gradient(lambda z: np.real(sc.ive(1.5, z)), 0.5 + 0.2j)


def test_gammasgn_is_piecewise_constant():
    (g,) = ad.gradient(lambda x: np.sum(sc.gammasgn(x) * x), np.array([-1.5, -0.5, 2.0]))
    np.testing.assert_allclose(g, sc.gammasgn(np.array([-1.5, -0.5, 2.0])))


# ----- logsumexp(..., return_sign=True), b= at first and second order --------------------------


def f_lse_sign(a, b):
    s, sign = sc.logsumexp(a, axis=0, b=b, return_sign=True)
    return np.sum(s * np.array([1.0, 2.0, 0.5])) + np.sum(sign)


def f_lse_sign_all(a, b):
    return sc.logsumexp(a, b=b, keepdims=True, return_sign=True)[0][0, 0]


@pytest.mark.parametrize("f", [f_lse_sign, f_lse_sign_all])
def test_logsumexp_return_sign(f):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3))
    b = np.array([[1.0, -2.0, 0.5], [-0.3, 0.4, 1.5]])
    check_grads(f, a, b)
    rng2 = np.random.default_rng(4)
    wa, wb = rng2.standard_normal(a.shape), rng2.standard_normal(b.shape)

    def second(a, b):
        ga, gb = ad.gradient(f, a, b)
        return np.sum(ga * wa) + np.sum(gb * wb)

    check_grads(second, a, b, rtol=1e-5, atol=1e-6)


def test_logsumexp_return_sign_of_complex_is_refused():
    with pytest.raises(NotDifferentiableError, match="return_sign"):
        ad.gradient(lambda a: np.real(sc.logsumexp(a, return_sign=True)[0]),
                    np.array([0.5 + 0.1j, 0.2 - 0.3j]))


# ----- frozen distributions ---------------------------------------------------------------------


def test_frozen_distribution_is_refused_clearly():
    """norm(loc, scale).logpdf(x): not yet (the call builds a frozen object in scipy's own
    code); a refusal, never a wrong gradient."""
    from adjoint_s2s.errors import AdjointError

    def f(x, m):
        return st.norm(m, 2.0).logpdf(x)

    with pytest.raises(AdjointError):
        ad.gradient(f, 0.5, 0.1)


# ----- the rules take scipy's parameters ------------------------------------------------------


def _rules(prefix):
    out = {}
    for fn, variants in R.PRIMITIVES.items():
        for prim in variants.values():
            if prim.path.startswith(prefix):
                out.setdefault(prim.path, (fn, []))[1].append(prim)
    return dict(sorted(out.items()))


@pytest.mark.parametrize("path", list(_rules("scipy.stats.")))
def test_stats_parameters_match_scipy(path):
    """scipy declares (x, *args, **kwds): the parameters are x (k), the distribution's
    shapes, loc (and scale for a continuous one); the multivariate ones have their own."""
    fn, variants = _rules("scipy.stats.")[path]
    dist = fn.__self__
    (prim,) = variants
    if isinstance(dist, (st.rv_continuous, st.rv_discrete)):
        first = "k" if isinstance(dist, st.rv_discrete) else "x"
        shapes = [s.strip() for s in (dist.shapes or "").split(",") if s.strip()]
        want = [first] + shapes + ["loc"] + (["scale"] if isinstance(dist, st.rv_continuous) else [])
        assert list(prim.params) == want, (prim.params, want)
        assert prim.defaults.get("loc") == "0"
        assert "scale" not in want or prim.defaults.get("scale") == "1"
        assert not set(shapes) & set(prim.defaults)
    else:
        sig = inspect.signature(fn)
        assert list(prim.params) == list(sig.parameters), (prim.params, list(sig.parameters))
        for name, p in sig.parameters.items():
            if p.default is inspect.Parameter.empty:
                assert name not in prim.defaults
            else:
                assert eval(prim.defaults[name]) == p.default, name  # noqa: S307
            assert (p.kind is p.KEYWORD_ONLY) == (name in prim.kwonly), name


@pytest.mark.parametrize("path", list(_rules("scipy.special.")))
def test_special_parameters_match_scipy(path):
    """A ufunc takes its nin arguments in position (named freely); a Python function its
    own names and defaults."""
    fn, variants = _rules("scipy.special.")[path]
    (prim,) = variants
    if isinstance(fn, np.ufunc):
        assert len(prim.params) == fn.nin and not prim.defaults
        return
    sig = inspect.signature(fn)
    ps = {n: p for n, p in sig.parameters.items() if p.kind is not p.VAR_KEYWORD}
    assert list(prim.params) == list(ps)
    for name, p in ps.items():
        if p.default is inspect.Parameter.empty:
            assert name not in prim.defaults
        else:
            assert eval(prim.defaults[name]) == p.default, name  # noqa: S307
