"""Rules of NumPy's legacy random functions (``np.random.normal``, ``np.random.permutation``,
...: the methods of the global RandomState).

A draw's value is always the plain call's: the rule calls the function once, with the
arguments it was given, so a seeded stream gives the same numbers under ``pullback`` as
without it. Its derivative is the reparameterised one (JAX's, PyTorch's ``rsample``): the
standard draw ε is held fixed, ``normal(loc, scale) = loc + scale·ε``, so ∂/∂loc = 1 and
∂/∂scale = ε = (draw - loc)/scale; uniform, exponential, gamma's scale, lognormal, laplace,
gumbel, logistic and rayleigh are such shifts and scalings too (ε read back from the
draw; a zero scale, which loses it, is refused when differentiated). Parameters that
are no shift or scale (gamma's shape, beta's a and b, multivariate_normal's cov) are
refused when differentiated, never given a zero. ``permutation`` and ``choice`` hand
out the data itself, rearranged: the gradient goes back to the items they picked (the
indices are drawn from the same stream with the same calls NumPy makes). Draws of
integers (randint, binomial, poisson) and of no parameters carry no gradient.
"""
import numpy as np

from .. import nondifferentiable_builtin, special
from ...errors import NotDifferentiableError
from ...runtime import dispatch
from ...tangents import DeclinedGradient
from .base import _CURRENT, SECTION_ORDER, np_fit, rule
from .scipy_special import DECLINED

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_draw_scaled",
    "np_draw_shifted",
    "np_draw_uniform",
]


_BEFORE = _CURRENT[0]
SECTION_ORDER.append("Random draws")
_CURRENT[0] = "Random draws"


def _declined(path, param, why):
    def refuse():
        raise NotDifferentiableError(
            f"{path} is not differentiable in {param} in adjoint_s2s: {why}. If its "
            f"gradient is not wanted, hold it fixed with adjoint_s2s.dropgrad({param}); "
            f"otherwise draw the standard variate yourself and shift and scale it "
            f"(loc + scale * np.random.standard_normal(size))"
        )

    return DeclinedGradient(refuse)


_LOST = "the scale is 0 there, so the draw no longer holds its standard variate"


def np_draw_shifted(g, ans, loc, scale, key):
    """∂/∂scale of loc + scale·ε: g·ε, ε = (draw - loc)/scale. Declined (refused where
    read) where scale is 0. key: "np.random.<name>.<parameter>" (a template's string
    names no parameter on its own: those are replaced by the arguments)."""
    if g is None:
        return None
    scale_ = np.asarray(scale)
    if np.any(scale_ == 0):
        path, _, param = key.rpartition(".")
        return _declined(path, param, _LOST)
    return np_fit(np.asarray(g) * ((np.asarray(ans) - loc) / scale_), scale)


def np_draw_scaled(g, ans, scale, key):
    """∂/∂scale of scale·ε (exponential, gamma, rayleigh): g·draw/scale (key as for
    np_draw_shifted, with loc 0)."""
    return np_draw_shifted(g, ans, 0.0, scale, key)


def np_draw_uniform(g, ans, low, high, which):
    """uniform(low, high) = low + (high - low)·u: ∂/∂low = 1 - u, ∂/∂high = u."""
    if g is None:
        return None
    width = np.asarray(high) - np.asarray(low)
    if np.any(width == 0):
        return _declined("np.random.uniform", "high" if which else "low",
                         "high equals low there, so the draw no longer holds its standard variate")
    u = (np.asarray(ans) - low) / width
    return np_fit(np.asarray(g) * (u if which else 1 - u), high if which else low)


def _decline(path, param, why):
    key = f"{path}.{param}"
    DECLINED[key] = (path, param, why)
    return f"_rt.sp_declined({key!r})"


_SHIFT = "loc=0.0, scale=1.0, size=None"


def _shift_rule(name, loc="loc", scale="scale"):
    path = f"np.random.{name}"
    rule(getattr(np.random, name), _SHIFT.replace("loc", loc).replace("scale", scale),
         path=path, adjoints={
             loc: f"_rt.np_fit(g, {loc})",
             scale: f"_rt.np_draw_shifted(g, ans, {loc}, {scale}, '{path}.{scale}')",
         }, note=f"reparameterised: {loc} + {scale}·ε, ε held fixed")


for _name in ("normal", "laplace", "gumbel", "logistic"):
    _shift_rule(_name)


rule(np.random.uniform, "low=0.0, high=1.0, size=None", path="np.random.uniform", adjoints={
    "low": "_rt.np_draw_uniform(g, ans, low, high, 0)",
    "high": "_rt.np_draw_uniform(g, ans, low, high, 1)",
}, note="reparameterised: low + (high - low)·u, u held fixed")


for _name in ("exponential", "rayleigh"):
    rule(getattr(np.random, _name), "scale=1.0, size=None", path=f"np.random.{_name}",
         adjoints={"scale": f"_rt.np_draw_scaled(g, ans, scale, 'np.random.{_name}.scale')"},
         note="reparameterised: scale·ε, ε held fixed")


rule(np.random.gamma, "shape, scale=1.0, size=None", path="np.random.gamma", adjoints={
    "shape": _decline("np.random.gamma", "shape", "its draws are no shift or scale of a fixed one"),
    "scale": "_rt.np_draw_scaled(g, ans, scale, 'np.random.gamma.scale')",
}, note="reparameterised in scale (scale·ε); refused in shape")


rule(np.random.lognormal, "mean=0.0, sigma=1.0, size=None", path="np.random.lognormal",
     adjoints={
         "mean": "_rt.np_fit(g * ans, mean)",
         "sigma": "_rt.np_draw_shifted(g * ans, np.log(ans), mean, sigma, 'np.random.lognormal.sigma')",
     }, note="reparameterised: exp(mean + sigma·ε), ε held fixed")


rule(np.random.beta, "a, b, size=None", path="np.random.beta", adjoints={
    "a": _decline("np.random.beta", "a", "its draws are no shift or scale of a fixed one"),
    "b": _decline("np.random.beta", "b", "its draws are no shift or scale of a fixed one"),
}, note="refused in a and b")


rule(np.random.multivariate_normal, "mean, cov, size=None, check_valid='warn', tol=1e-8",
     path="np.random.multivariate_normal", adjoints={
         "mean": "_rt.np_fit(g, mean)",
         "cov": _decline("np.random.multivariate_normal", "cov",
                         "its draws depend on cov through a matrix square root that "
                         "adjoint_s2s does not differentiate"),
     }, note="reparameterised in mean (mean + ε·A); refused in cov")


# ----- draws that rearrange the data ---------------------------------------------------------


def _take_pair(a, idx, extra):
    """a's rows at idx (np.take along axis 0, through its rule), and a pullback giving a its
    gradient and None to the extra arguments."""
    y, pb = dispatch.call(np.take, a, idx, 0)

    def take_rows_pullback(g):
        return (None, pb(g)[1]) + (None,) * extra

    return y, take_rows_pullback


@special(np.random.permutation)
def np_random_permutation_pair(x):
    """permutation(x) is x[permutation(len(x))]: the same swaps of the same stream (NumPy
    shuffles the copy of x exactly as it shuffles arange(len(x)))."""
    if isinstance(x, (int, np.integer)):
        return np.random.permutation(x), lambda g: (None, None)
    arr = np.asarray(x)
    if arr.ndim < 1:
        return np.random.permutation(x), lambda g: (None, None)  # NumPy's error
    return _take_pair(x, np.random.permutation(arr.shape[0]), 0)


def _choice_pair(a, size=None, replace=True, p=None):
    """choice(a, ...) is a[choice(len(a), ...)]: NumPy draws the indices the same way for
    both. The picks are piecewise constant in p: no gradient to it."""
    arr = np.asarray(a)
    if arr.ndim != 1:  # an int (a range of integers) or NumPy's error
        return np.random.choice(a, size, replace, p), lambda g: (None,) * 5
    idx = np.random.choice(arr.shape[0], size, replace, p)
    y, pb = _take_pair(a, idx, 3)
    if size is not None and np.ndim(idx) == 0:
        y = np.array(y)  # size=(): NumPy gives a 0-d array, not a scalar
    return y, pb


_CHOICE = ("a", "size", "replace", "p")


@special(np.random.choice)
def np_random_choice_pair(*args, **kwargs):
    """np.random.choice with its arguments in position or by name."""
    if len(args) > 4 or any(k not in _CHOICE[len(args):] for k in kwargs):
        return np.random.choice(*args, **kwargs), None  # NumPy's TypeError
    y, pb = _choice_pair(*args, **kwargs)
    n = len(args)

    def choice_pullback(g):
        grads = pb(g)
        out = grads[:1 + n]
        if kwargs:
            out += ({k: grads[1 + _CHOICE.index(k)] for k in kwargs},)
        return out

    return y, choice_pullback


nondifferentiable_builtin(
    *[
        getattr(np.random, n)
        for n in (
            "rand", "randn", "random", "random_sample", "standard_normal", "standard_exponential",
            "standard_cauchy", "seed", "default_rng", "randint", "binomial", "poisson",
            "geometric", "get_state", "set_state",
        )
        if hasattr(np.random, n)
    ],
    reason="it draws with no parameters, draws integers or sets the stream",
)


_CURRENT[0] = _BEFORE  # the rules registered after these keep their own section
