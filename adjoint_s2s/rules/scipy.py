"""Rules for scipy.special (registered only when scipy is installed).

``TABLE`` is plain data, readable without scipy (``scripts/gen_numpy_docs.py`` lists
it): the function's name in ``scipy.special``, its parameters, then either one partial
derivative per parameter (``None``: no gradient) or a dict of whole adjoint templates.
Templates reach scipy through ``_rt.sp_special`` (``scipy.special``, imported lazily).

A partial given as ``Declined(reason)`` is a derivative adjoint_s2s does not compute
(the order of a Bessel function, the shape parameters of the incomplete gamma and beta
functions: no closed form): differentiating that argument raises
``NotDifferentiableError`` with the reason, and a fixed value costs nothing
(``_rt.sp_declined``). Never a zero. Integer-only parameters (yn's and polygamma's n)
have no gradient (``None``).
"""
from . import nondifferentiable_builtin
from .numpy import rule
from .numpy.scipy_special import DECLINED

try:
    import scipy.special as sc
except ImportError:  # scipy is optional: the table stays readable, nothing is registered
    sc = None

_S = "_rt.sp_special"


class Declined:
    """A parameter whose derivative is declined, with the reason (docs/numpy.md)."""

    def __init__(self, reason):
        self.reason = reason

    def __repr__(self):
        return f"Declined({self.reason!r})"


_ORDER = Declined("the derivative in the order of a Bessel function has no closed form "
                  "(a series in the order; at an integer order too, where it is not zero)")
_GAMMA_A = Declined("the derivative of the regularized incomplete gamma function in its "
                    "shape a has no closed form (JAX sums a series; adjoint_s2s does not "
                    "yet)")
_BETA_AB = Declined("the derivatives of the regularized incomplete beta function in a and b "
                    "have no closed form (hypergeometric series; not yet)")
_BETAINC_X = f"np.exp((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - {_S}.betaln(a, b))"

TABLE = [
    # logistic and error functions
    ("expit", "x", ("ans * (1 - ans)",)),
    ("logit", "x", ("1 / (x * (1 - x))",)),
    ("log_expit", "x", (f"{_S}.expit(-x)",)),
    ("softplus", "x", (f"{_S}.expit(x)",)),
    ("erf", "x", ("2 / np.sqrt(np.pi) * np.exp(-x * x)",)),
    ("erfc", "x", ("-2 / np.sqrt(np.pi) * np.exp(-x * x)",)),
    ("erfinv", "x", ("np.sqrt(np.pi) / 2 * np.exp(ans * ans)",)),
    ("erfcinv", "x", ("-np.sqrt(np.pi) / 2 * np.exp(ans * ans)",)),
    ("erfcx", "x", ("2 * x * ans - 2 / np.sqrt(np.pi)",)),
    ("dawsn", "x", ("1 - 2 * x * ans",)),
    ("ndtr", "x", ("np.exp(-x * x / 2) / np.sqrt(2 * np.pi)",)),
    ("log_ndtr", "x", ("np.exp(-x * x / 2 - ans) / np.sqrt(2 * np.pi)",)),
    ("ndtri", "x", ("np.sqrt(2 * np.pi) * np.exp(ans * ans / 2)",)),
    # gamma family
    ("gamma", "x", (f"ans * {_S}.digamma(x)",)),
    ("gammaln", "x", (f"{_S}.digamma(x)",)),
    ("loggamma", "x", (f"{_S}.digamma(x)",)),
    ("rgamma", "x", (f"-ans * {_S}.digamma(x)",)),
    ("digamma", "x", ("_rt.sp_trigamma(x)",)),
    ("polygamma", "n, x", (None, f"{_S}.polygamma(n + 1, x)")),
    ("gammainc", "a, x", (_GAMMA_A, f"np.exp(-x + (a - 1) * np.log(x) - {_S}.gammaln(a))")),
    ("gammaincc", "a, x", (_GAMMA_A, f"-np.exp(-x + (a - 1) * np.log(x) - {_S}.gammaln(a))")),
    ("betainc", "a, b, x", (_BETA_AB, _BETA_AB, _BETAINC_X)),
    ("betaincc", "a, b, x", (_BETA_AB, _BETA_AB, f"-{_BETAINC_X}")),
    ("beta", "a, b", (f"ans * ({_S}.digamma(a) - {_S}.digamma(a + b))",
                      f"ans * ({_S}.digamma(b) - {_S}.digamma(a + b))")),
    ("betaln", "a, b", (f"{_S}.digamma(a) - {_S}.digamma(a + b)",
                        f"{_S}.digamma(b) - {_S}.digamma(a + b)")),
    # logarithms and entropies
    ("xlogy", "x, y", ("np.log(y)", "x / y")),
    ("xlog1py", "x, y", ("np.log1p(y)", "x / (1 + y)")),
    ("entr", "x", ("-(np.log(x) + 1)",)),
    ("rel_entr", "x, y", ("np.log(x / y) + 1", "-x / y")),
    ("kl_div", "x, y", ("np.log(x / y)", "1 - x / y")),
    ("exp1", "x", ("-np.exp(-x) / x",)),
    ("expi", "x", ("np.exp(x) / x",)),
    ("exp2", "x", ("ans * np.log(2)",)),
    ("exp10", "x", ("ans * np.log(10)",)),
    ("expm1", "x", ("ans + 1",)),
    ("log1p", "x", ("1 / (1 + x)",)),
    ("cosm1", "x", ("-np.sin(x)",)),
    ("cbrt", "x", ("1 / (3 * ans * ans)",)),
    # Bessel functions
    ("i0", "x", (f"{_S}.i1(x)",)),
    ("i1", "x", ("_rt.sp_i1_partial(x)",)),
    ("i0e", "x", (f"{_S}.i1e(x) - np.sign(x) * ans",)),
    ("i1e", "x", ("_rt.sp_i1e_partial(x, ans)",)),
    ("j0", "x", (f"-{_S}.j1(x)",)),
    ("j1", "x", (f"({_S}.j0(x) - {_S}.jv(2, x)) / 2",)),
    ("y0", "x", (f"-{_S}.y1(x)",)),
    ("y1", "x", (f"({_S}.y0(x) - {_S}.yv(2, x)) / 2",)),
    ("jv", "v, z", (_ORDER, f"({_S}.jv(v - 1, z) - {_S}.jv(v + 1, z)) / 2")),
    ("yv", "v, z", (_ORDER, f"({_S}.yv(v - 1, z) - {_S}.yv(v + 1, z)) / 2")),
    ("iv", "v, z", (_ORDER, f"({_S}.iv(v - 1, z) + {_S}.iv(v + 1, z)) / 2")),
    ("kv", "v, z", (_ORDER, f"-({_S}.kv(v - 1, z) + {_S}.kv(v + 1, z)) / 2")),
    ("ive", "v, z", (_ORDER, "_rt.sp_ive_partial(v, z, ans)")),
    ("kve", "v, z", (_ORDER, f"ans - ({_S}.kve(v - 1, z) + {_S}.kve(v + 1, z)) / 2")),
    ("yn", "n, x", (None, f"({_S}.yn(n - 1, x) - {_S}.yn(n + 1, x)) / 2")),
    # reductions
    ("logsumexp", "a, axis=None, b=None, keepdims=False, return_sign=False", {
        "a": "_rt.sp_logsumexp_adjoint(g, a, ans, axis, b, keepdims, return_sign)",
        "b": "_rt.sp_logsumexp_adjoint_b(g, a, ans, axis, b, keepdims, return_sign)",
    }),
    ("softmax", "x, axis=None", {"x": "_rt.sp_softmax_adjoint(g, x, ans, axis)"}),
    ("log_softmax", "x, axis=None", {"x": "_rt.sp_log_softmax_adjoint(g, x, ans, axis)"}),
]

NOTES = {
    "polygamma": "gradient in x (n is an integer)",
    "gammainc": "gradient in x; declined in a (refused when differentiated): no closed form",
    "gammaincc": "gradient in x; declined in a (refused when differentiated): no closed form",
    "betainc": "gradient in x; declined in a and b (refused when differentiated): no "
               "closed form",
    "betaincc": "gradient in x; declined in a and b (refused when differentiated): no "
                "closed form",
    "jv": "gradient in z; declined in the order v (refused when differentiated, an "
          "integer v too: the derivative exists there): no closed form",
    "yv": "gradient in z; the order v as jv's",
    "iv": "gradient in z; the order v as jv's",
    "kv": "gradient in z; the order v as jv's",
    "ive": "gradient in real z (e^-|z| is not holomorphic: complex z refused); the order "
           "v as jv's",
    "kve": "gradient in z; the order v as jv's",
    "yn": "gradient in x (n is an integer)",
    "logsumexp": "gradient to a and to the weights b; with return_sign=True, to log|s| "
                 "(the sign has none; real inputs only)",
}

# piecewise constant: a zero derivative almost everywhere (as np.sign of reals)
NONDIFF = ["gammasgn"]


def _register():
    if sc is None:
        return
    for name, params, spec in TABLE:
        fn = getattr(sc, name, None)
        if fn is None:
            continue
        path = f"scipy.special.{name}"
        if isinstance(spec, dict):
            rule(fn, params, adjoints=spec, path=path, section="scipy.special",
                 note=NOTES.get(name))
        else:
            partials, adjoints = _declined(path, params, spec)
            rule(fn, params, *partials, adjoints=adjoints, path=path, section="scipy.special",
                 note=NOTES.get(name))
    nondifferentiable_builtin(*[getattr(sc, n) for n in NONDIFF if hasattr(sc, n)],
                              reason="it is piecewise constant (a sign)")


def _declined(path, params, partials):
    """(partials, adjoints): each Declined partial becomes an adjoint that refuses."""
    names = [p.split("=")[0].strip() for p in params.split(",")]
    out, adjoints = [], {}
    for name, d in zip(names, partials):
        if isinstance(d, Declined):
            # the key has no bare identifier a template's parameters would replace
            key = f"{path}.{name}"
            DECLINED[key] = (path, name, d.reason)
            adjoints[name] = f"_rt.sp_declined({key!r})"
            out.append(None)
        else:
            out.append(d)
    return out, adjoints


_register()
