"""Helpers of the ``scipy.stats`` rules (rules/scipy_stats.py): partial derivatives of
the log-densities, densities and distribution functions, written in NumPy and
``scipy.special`` calls that have rules, so that adjoint_s2s differentiates them again.

A location-scale family is ``f(x; θ, loc, scale) = f0(z; θ) / scale`` with
``z = (x - loc) / scale``: given ``d = ∂ log f0 / ∂z``, the partials of ``log f`` are
``d / scale`` in x, ``-d / scale`` in loc and ``(-z·d - 1) / scale`` in scale; those of
``F(x) = F0(z)`` are ``f0(z) / scale``, ``-f0(z) / scale`` and ``-z·f0(z) / scale``.
Outside the support the log-density is a constant (-inf) and every partial is 0."""
import numpy as np

from .base import np_fit
from .scipy_special import sp_special

__all__ = [  # the helpers templates reach as _rt.<name>
    "sp_beta_cdf_d",
    "sp_beta_logpdf_d",
    "sp_dirichlet_adjoint_alpha",
    "sp_dirichlet_adjoint_x",
    "sp_gamma_cdf_d",
    "sp_gamma_logpdf_d",
    "sp_mvn_adjoint_cov",
    "sp_mvn_adjoint_mean",
    "sp_mvn_adjoint_x",
    "sp_poisson_cdf_dmu",
    "sp_poisson_logpmf_dmu",
    "sp_t_cdf_d",
    "sp_t_logpdf_d",
]


def _loc_scale(which, z, d, scale):
    """The partial in x, loc or scale (``which``: "dx", "dloc", "dscale") of F0(z) from
    d = f0(z); templates name the partial "d" + parameter, a string no template
    parameter is (rules.fill substitutes the parameters' names)."""
    if which == "dx":
        return d / scale
    if which == "dloc":
        return -d / scale
    return -z * d / scale


def _logpdf_loc_scale(which, z, d, scale):
    if which == "dscale":
        return (-z * d - 1) / scale
    return _loc_scale(which, z, d, scale)


# ----- Student's t -----------------------------------------------------------------------------


def sp_t_logpdf_d(which, x, df, loc, scale):
    """Partial of t.logpdf(x, df, loc, scale) in x, df, loc or scale."""
    z = (x - loc) / scale
    q = df + z * z
    if which == "ddf":
        return (sp_special.digamma((df + 1) / 2) - sp_special.digamma(df / 2) - 1 / df
                - np.log1p(z * z / df) + (df + 1) * z * z / (df * q)) / 2
    return _logpdf_loc_scale(which, z, -(df + 1) * z / q, scale)


def _t_logpdf0(z, df):
    return (sp_special.gammaln((df + 1) / 2) - sp_special.gammaln(df / 2)
            - np.log(df * np.pi) / 2 - (df + 1) / 2 * np.log1p(z * z / df))


def sp_t_cdf_d(which, x, df, loc, scale, ans=None):
    """Partial of t.cdf (ans None) or t.logcdf (ans its value) in x, loc or scale."""
    z = (x - loc) / scale
    logp = _t_logpdf0(z, df)
    if ans is not None:
        logp = logp - ans
    return _loc_scale(which, z, np.exp(logp), scale)


# ----- gamma ---------------------------------------------------------------------------------


def sp_gamma_logpdf_d(which, x, a, loc, scale):
    """Partial of gamma.logpdf(x, a, loc, scale) in x, a, loc or scale (0 off z > 0)."""
    z = (x - loc) / scale
    inside = z > 0
    zs = np.where(inside, z, 1.0)
    if which == "da":
        d = np.log(zs) - sp_special.digamma(a)
    else:
        d = _logpdf_loc_scale(which, zs, (a - 1) / zs - 1, scale)
    return np.where(inside, d, 0.0)


def sp_gamma_cdf_d(which, x, a, loc, scale, ans=None):
    """Partial of gamma.cdf (ans None) or gamma.logcdf in x, loc or scale."""
    z = (x - loc) / scale
    inside = z > 0
    zs = np.where(inside, z, 1.0)
    logp = (a - 1) * np.log(zs) - zs - sp_special.gammaln(a)
    if ans is not None:
        logp = logp - np.where(inside, ans, 0.0)
    return np.where(inside, _loc_scale(which, zs, np.exp(logp), scale), 0.0)


# ----- beta ----------------------------------------------------------------------------------


def sp_beta_logpdf_d(which, x, a, b, loc, scale):
    """Partial of beta.logpdf(x, a, b, loc, scale) in x, a, b, loc or scale (0 off
    0 < z < 1)."""
    z = (x - loc) / scale
    inside = (z > 0) & (z < 1)
    zs = np.where(inside, z, 0.5)
    if which == "da":
        d = np.log(zs) - sp_special.digamma(a) + sp_special.digamma(a + b)
    elif which == "db":
        d = np.log1p(-zs) - sp_special.digamma(b) + sp_special.digamma(a + b)
    else:
        d = _logpdf_loc_scale(which, zs, (a - 1) / zs - (b - 1) / (1 - zs), scale)
    return np.where(inside, d, 0.0)


def sp_beta_cdf_d(which, x, a, b, loc, scale, ans=None):
    """Partial of beta.cdf (ans None) or beta.logcdf in x, loc or scale."""
    z = (x - loc) / scale
    inside = (z > 0) & (z < 1)
    zs = np.where(inside, z, 0.5)
    logp = (a - 1) * np.log(zs) + (b - 1) * np.log1p(-zs) - sp_special.betaln(a, b)
    if ans is not None:
        logp = logp - np.where(inside, ans, 0.0)
    return np.where(inside, _loc_scale(which, zs, np.exp(logp), scale), 0.0)


# ----- Poisson -------------------------------------------------------------------------------


def sp_poisson_logpmf_dmu(k, mu, loc):
    """∂/∂mu of poisson.logpmf(k, mu, loc): m/mu - 1 at the integers m = k - loc ≥ 0
    (elsewhere the log-pmf is the constant -inf)."""
    m = k - loc
    inside = (m >= 0) & (m == np.floor(m))
    return np.where(inside, m / mu - 1, 0.0)


def sp_poisson_cdf_dmu(k, mu, loc, ans=None):
    """∂/∂mu of poisson.cdf (ans None) or poisson.logcdf: the cdf is Q(⌊m⌋ + 1, mu), whose
    derivative is -pmf(⌊m⌋, mu); 0 below the support."""
    m = np.floor(k - loc)
    inside = m >= 0
    ms = np.where(inside, m, 0.0)
    logp = sp_special.xlogy(ms, mu) - mu - sp_special.gammaln(ms + 1)
    if ans is not None:
        logp = logp - np.where(inside, ans, 0.0)
    return np.where(inside, -np.exp(logp), 0.0)


# ----- Dirichlet -----------------------------------------------------------------------------


def _dirichlet_full(x, alpha):
    """x with its last component appended when given K-1 of them (as scipy does), the
    components along axis 0; and whether it was appended."""
    x = np.asarray(x)
    if x.shape[0] == np.shape(alpha)[0]:
        return x, False
    last = 1 - np.sum(x, 0)
    return np.concatenate([x, np.reshape(last, (1,) + np.shape(last))], 0), True


def _column(alpha, ndim):
    """alpha (K,) as (K, 1, ..., 1): the components along axis 0 of x."""
    alpha = np.asarray(alpha)
    return np.reshape(alpha, np.shape(alpha) + (1,) * (ndim - 1))


def sp_dirichlet_adjoint_x(g, x, alpha):
    """x̄ of dirichlet.logpdf(x, alpha) (g: the cotangent of the log-density): (α-1)/x
    per component, the last one taken off the others when x holds K-1 components."""
    xf, appended = _dirichlet_full(x, alpha)
    gx = np.asarray(g) * (_column(alpha, xf.ndim) - 1) / xf
    if appended:
        gx = gx[:-1] - gx[-1:]
    return np_fit(gx, x)


def sp_dirichlet_adjoint_alpha(g, x, alpha):
    """ᾱ of dirichlet.logpdf: Σ over the points of g·(log x - ψ(α) + ψ(Σα))."""
    xf, _ = _dirichlet_full(x, alpha)
    alpha_ = np.asarray(alpha)
    g = np.asarray(g)
    per = np.log(xf) - _column(sp_special.digamma(alpha_) - sp_special.digamma(np.sum(alpha_)),
                               xf.ndim)
    total = g * per
    if total.ndim > 1:
        total = np.sum(np.reshape(total, (np.shape(total)[0], -1)), 1)
    return np_fit(total, alpha)


# ----- multivariate normal -------------------------------------------------------------------


def _mvn_parts(x, mean, cov):
    """As scipy reads them: x as (n, d), the mean (d,), the covariance (d, d) from its
    lower triangle (scipy's eigh reads that one), its inverse, the residuals r = x - mean
    and u = r·Σ⁻¹."""
    cov_ = np.asarray(cov)
    if mean is not None:
        dim = np.size(mean)
    elif cov_.ndim:
        dim = cov_.shape[0]
    else:
        dim = 1
    mean_ = np.zeros(dim) if mean is None else np.reshape(np.asarray(mean), (dim,))
    if cov_.ndim == 0:
        full = cov_ * np.eye(dim)
    elif cov_.ndim == 1:
        full = np.diag(cov_)
    else:
        full = np.tril(cov_) + np.swapaxes(np.tril(cov_, -1), 0, 1)
    x_ = np.asarray(x)
    if x_.ndim == 0:
        x2 = np.reshape(x_, (1, 1))
    elif x_.ndim == 1 and dim == 1:
        x2 = np.reshape(x_, (-1, 1))
    else:
        x2 = np.reshape(x_, (-1, dim))
    inv = np.linalg.inv(full)
    r = x2 - mean_
    return dim, inv, r, r @ inv


def sp_mvn_adjoint_x(g, x, mean, cov):
    """x̄ of multivariate_normal.logpdf: -g·Σ⁻¹(x - mean) per point."""
    dim, inv, r, u = _mvn_parts(x, mean, cov)
    gx = -np.reshape(np.asarray(g), (-1, 1)) * u
    return np_fit(np.reshape(gx, np.shape(x)), x)


def sp_mvn_adjoint_mean(g, x, mean, cov):
    """mean̄ of multivariate_normal.logpdf: Σ over the points of g·Σ⁻¹(x - mean)."""
    if mean is None:
        return None
    dim, inv, r, u = _mvn_parts(x, mean, cov)
    gm = np.sum(np.reshape(np.asarray(g), (-1, 1)) * u, 0)
    return np_fit(np.reshape(gm, np.shape(mean)), mean)


def sp_mvn_adjoint_cov(g, x, mean, cov):
    """cov̄ of multivariate_normal.logpdf: G = (Σ⁻¹ R Rᵀ Σ⁻¹ - (Σg) Σ⁻¹)/2 with the
    points' residuals weighted by g, then onto what scipy reads: the lower triangle
    (G + Gᵀ below the diagonal), the diagonal of a 1-d cov, the trace of a scalar one."""
    dim, inv, r, u = _mvn_parts(x, mean, cov)
    gv = np.reshape(np.asarray(g), (-1,))
    big = (np.swapaxes(u, 0, 1) @ (gv[:, None] * u) - np.sum(gv) * inv) / 2
    cov_ = np.asarray(cov)
    if cov_.ndim == 0:
        return np_fit(np.trace(big), cov)
    if cov_.ndim == 1:
        return np_fit(np.diagonal(big), cov)
    lower = np.tril(big + np.swapaxes(big, 0, 1), -1) + np.diag(np.diagonal(big))
    return np_fit(lower, cov)
