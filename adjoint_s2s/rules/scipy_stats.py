"""Rules for scipy.stats distributions (registered only when scipy is installed); their
helpers are in rules/numpy/scipy_stats.py.

scipy builds the methods of its distributions with ``exec`` (no source to transform), so
each gets a rule. A rule's key is the bound method of the module-level instance:
``scipy.stats.norm.logpdf`` is a new bound method object at each access, but bound
methods compare equal (and hash alike) when their instance and function are the same,
so the table finds it; calls ``scipy.stats.norm.logpdf(...)`` consult it before the
method's source (``rules.BOUND_RULE_CLASSES``).

``TABLE`` is plain data like rules/scipy.py's: the distribution, the method, its
parameters (scipy's ``(x, *args, **kwds)`` spelled out: the shapes, then loc and
scale), one partial per parameter (``None``: no gradient by nature, an integer count or
shift; ``Declined``: refused when differentiated) or a dict of adjoint templates, and a
note for docs/numpy.md. Frozen distributions (``norm(loc, scale).logpdf(x)``) call
these methods with their stored parameters.
"""
from .numpy import rule
from .scipy import Declined, _declined

try:
    import scipy.stats as st
except ImportError:  # scipy is optional: the table stays readable, nothing is registered
    st = None

_Z = "((x - loc) / scale)"
_PHI = f"np.exp(-{_Z} * {_Z} / 2) / np.sqrt(2 * np.pi) / scale"
_LOG_PHI = f"np.exp(-{_Z} * {_Z} / 2 - ans) / np.sqrt(2 * np.pi) / scale"

_CDF_SHAPE = Declined("the derivative of the distribution function in a shape parameter "
                      "is one of the incomplete gamma or beta function in its shape: no "
                      "closed form (not yet)")
_MVN_CDF = Declined("the multivariate normal distribution function is a numerical, "
                    "randomised integral (Genz's method): no derivative is computed")


def _each(helper, params, extra=""):
    """One partial per parameter: ``_rt.<helper>('d<param>', <params>)``."""
    names = [p.split("=")[0].strip() for p in params.split(",")]
    args = ", ".join(names)
    return tuple(f"_rt.{helper}('d{n}', {args}{extra})" for n in names)


def _times_ans(partials):
    return tuple(None if p is None else f"ans * {p}" for p in partials)


def _cdf(helper, params, shapes, extra=""):
    names = [p.split("=")[0].strip() for p in params.split(",")]
    each = _each(helper, params, extra)
    return tuple(_CDF_SHAPE if n in shapes else p for n, p in zip(names, each))


_T = "x, df, loc=0, scale=1"
_GAMMA = "x, a, loc=0, scale=1"
_BETA = "x, a, b, loc=0, scale=1"
_POISSON = "k, mu, loc=0"
_MVN = "x, mean=None, cov=1, allow_singular=False"
_MVN_CDF_PARAMS = ("x, mean=None, cov=1, allow_singular=False, maxpts=None, abseps=1e-05, "
                   "releps=1e-05, lower_limit=None, rng=None")

_NORM_LOGPDF = (f"-{_Z} / scale", f"{_Z} / scale", f"({_Z} * {_Z} - 1) / scale")
_LOC_SCALE = "gradient in x, loc and scale"
_DISCRETE = ("gradient in mu; none in k and loc (integer-valued: the pmf is a step "
             "function of them)")
_SHAPE_DECLINED = "; declined in the shape parameters (refused when differentiated)"


_DIRICHLET_NOTE = ("gradient in alpha and in x (components along axis 0): with K-1 of them, "
                   "the last being 1 - their sum; with all K, the partial derivatives of the "
                   "density's formula (scipy refuses x off the simplex)")


def _dirichlet(scale):
    g = "g * ans" if scale else "g"
    return {"x": f"_rt.sp_dirichlet_adjoint_x({g}, x, alpha)",
            "alpha": f"_rt.sp_dirichlet_adjoint_alpha({g}, x, alpha)"}


def _mvn(scale):
    g = "g * ans" if scale else "g"
    return {"x": f"_rt.sp_mvn_adjoint_x({g}, x, mean, cov)",
            "mean": f"_rt.sp_mvn_adjoint_mean({g}, x, mean, cov)",
            "cov": f"_rt.sp_mvn_adjoint_cov({g}, x, mean, cov)"}


TABLE = [
    ("norm", "logpdf", "x, loc=0, scale=1", _NORM_LOGPDF, _LOC_SCALE),
    ("norm", "pdf", "x, loc=0, scale=1", _times_ans(_NORM_LOGPDF), _LOC_SCALE),
    ("norm", "cdf", "x, loc=0, scale=1", (_PHI, f"-{_PHI}", f"-{_Z} * {_PHI}"), _LOC_SCALE),
    ("norm", "logcdf", "x, loc=0, scale=1", (_LOG_PHI, f"-{_LOG_PHI}", f"-{_Z} * {_LOG_PHI}"),
     _LOC_SCALE),
    ("t", "logpdf", _T, _each("sp_t_logpdf_d", _T), "gradient in x, df, loc and scale"),
    ("t", "pdf", _T, _times_ans(_each("sp_t_logpdf_d", _T)), "gradient in x, df, loc and scale"),
    ("t", "cdf", _T, _cdf("sp_t_cdf_d", _T, {"df"}), _LOC_SCALE + _SHAPE_DECLINED),
    ("t", "logcdf", _T, _cdf("sp_t_cdf_d", _T, {"df"}, ", ans"), _LOC_SCALE + _SHAPE_DECLINED),
    ("gamma", "logpdf", _GAMMA, _each("sp_gamma_logpdf_d", _GAMMA),
     "gradient in x, a, loc and scale"),
    ("gamma", "pdf", _GAMMA, _times_ans(_each("sp_gamma_logpdf_d", _GAMMA)),
     "gradient in x, a, loc and scale"),
    ("gamma", "cdf", _GAMMA, _cdf("sp_gamma_cdf_d", _GAMMA, {"a"}), _LOC_SCALE + _SHAPE_DECLINED),
    ("gamma", "logcdf", _GAMMA, _cdf("sp_gamma_cdf_d", _GAMMA, {"a"}, ", ans"),
     _LOC_SCALE + _SHAPE_DECLINED),
    ("beta", "logpdf", _BETA, _each("sp_beta_logpdf_d", _BETA),
     "gradient in x, a, b, loc and scale"),
    ("beta", "pdf", _BETA, _times_ans(_each("sp_beta_logpdf_d", _BETA)),
     "gradient in x, a, b, loc and scale"),
    ("beta", "cdf", _BETA, _cdf("sp_beta_cdf_d", _BETA, {"a", "b"}), _LOC_SCALE + _SHAPE_DECLINED),
    ("beta", "logcdf", _BETA, _cdf("sp_beta_cdf_d", _BETA, {"a", "b"}, ", ans"),
     _LOC_SCALE + _SHAPE_DECLINED),
    ("poisson", "logpmf", _POISSON, (None, "_rt.sp_poisson_logpmf_dmu(k, mu, loc)", None),
     _DISCRETE),
    ("poisson", "pmf", _POISSON, (None, "ans * _rt.sp_poisson_logpmf_dmu(k, mu, loc)", None),
     _DISCRETE),
    ("poisson", "cdf", _POISSON, (None, "_rt.sp_poisson_cdf_dmu(k, mu, loc)", None), _DISCRETE),
    ("poisson", "logcdf", _POISSON, (None, "_rt.sp_poisson_cdf_dmu(k, mu, loc, ans)", None),
     _DISCRETE),
    ("dirichlet", "logpdf", "x, alpha", _dirichlet(False), _DIRICHLET_NOTE),
    ("dirichlet", "pdf", "x, alpha", _dirichlet(True), _DIRICHLET_NOTE),
    ("multivariate_normal", "logpdf", _MVN, _mvn(False),
     "gradient in x, mean and cov (to the lower triangle scipy reads; the diagonal of a "
     "1-d cov, the trace for a scalar); cov must be invertible"),
    ("multivariate_normal", "pdf", _MVN, _mvn(True), "as logpdf"),
    ("multivariate_normal", "cdf", _MVN_CDF_PARAMS, (_MVN_CDF,) * 3 + (None,) * 6,
     "the value only: differentiating x, mean or cov is refused (a randomised numerical "
     "integral)"),
    ("multivariate_normal", "logcdf", _MVN_CDF_PARAMS, (_MVN_CDF,) * 3 + (None,) * 6,
     "as cdf"),
]


def _split(path, params, spec):
    """(partials, adjoints) for rule(): a dict of adjoints as it is; partials with each
    Declined one turned into an adjoint that refuses (rules/scipy.py's _declined)."""
    if isinstance(spec, dict):
        return (), spec
    return _declined(path, params, spec)


def _register():
    if st is None:
        return
    for dist, method, params, spec, note in TABLE:
        obj = getattr(st, dist, None)
        fn = getattr(obj, method, None)
        if fn is None:
            continue
        path = f"scipy.stats.{dist}.{method}"
        partials, adjoints = _split(path, params, spec)
        rule(fn, params, *partials, adjoints=adjoints, path=path, section="scipy.stats",
             note=note)


_register()
