"""Rules for Python's builtins.

Numeric builtins with a one-expression derivative are templates; ``sum``, ``min``,
``max``, ``map``, ``sorted`` and friends are run-time rules in ``special.py`` because
their gradient depends on the structure of their arguments.
"""
import builtins
import logging
import operator
import random

from ..errors import NotDifferentiableError
from ..runtime.sites import _at
from ..tangents import AbstractZero
from . import RANDOM_DRAW, nondifferentiable_builtin, primitive, special

# ----- numbers ---------------------------------------------------------------------------
# abs: sign(x) for real x; real(ȳ)·z/|z| for complex z (not holomorphic); 0 at 0. The
# same for operator.abs, which `x.__abs__()` of a number or an array calls
for _abs in (abs, operator.abs):
    primitive(
        _abs,
        "x",
        "(1.0 if x > 0 else -1.0 if x < 0 else 0.0)",
        kind="abs",
        adjoints={
            "x": {"complex": "_rt.modulus_adjoint(g, x, ans)", "array": "_rt.modulus_adjoint(g, x, ans)"}
        },
    )
primitive(float, "x", "1", kind="real")
# complex(re, im) = re + i·im, and either part may itself be complex
primitive(
    complex,
    "real, imag",
    adjoints={"real": "_rt.re_or_self(g, real)", "imag": "_rt.complex_im_adjoint(g, imag)"},
    kind="complex",
)
primitive(complex, "real", adjoints={"real": "_rt.re_or_self(g, real)"}, kind="complex")
# pow(base, exp): a real base and exponent can give a complex result (pow(-8.0, 1/3)),
# so their adjoints go through helpers that take real(g·conj(partial)) and accept None.
_POW_BASE = "_rt.pow_base_partial(base, exp)"
_POW_EXP = "_rt.pow_exp_partial(base, ans)"
primitive(
    pow,
    "base, exp",
    _POW_BASE,
    _POW_EXP,
    kind="same",
    adjoints={
        "base": {
            "real": "_rt.pow_base_adjoint(g, base, exp, ans)",
            "complex": f"g * _rt.conj({_POW_BASE})",
        },
        "exp": {"real": "_rt.pow_exp_adjoint(g, base, ans)", "complex": f"g * _rt.conj({_POW_EXP})"},
    },
)
# pow(base, exp, mod) is modular integer arithmetic: no gradient (mod=None is plain pow)
primitive(
    pow,
    "base, exp, mod",
    f"{_POW_BASE} if mod is None else 0.0",
    f"{_POW_EXP} if mod is None else 0.0",
    None,
    kind="same",
    adjoints={
        "base": {
            "real": "_rt.pow_base_adjoint(g, base, exp, ans) if mod is None else 0.0",
            "complex": f"g * _rt.conj({_POW_BASE}) if mod is None else 0.0",
        },
        "exp": {
            "real": "_rt.pow_exp_adjoint(g, base, ans) if mod is None else 0.0",
            "complex": f"g * _rt.conj({_POW_EXP}) if mod is None else 0.0",
        },
    },
)
# divmod(a, b) = (a // b, a - (a // b)·b): the quotient is piecewise constant
primitive(
    divmod,
    "a, b",
    adjoints={"a": "_rt.divmod_adjoint_a(g, a, b, ans)", "b": "_rt.divmod_adjoint_b(g, a, b, ans)"},
    kind="other",
)

# ----- no gradient -------------------------------------------------------------------------
# `Base.__init__(self)` of a base class without an __init__ of its own: object's, which
# does nothing (super().__init__() finds it too: runtime/methods.py)
nondifferentiable_builtin(object.__init__, reason="object.__init__ does nothing")
nondifferentiable_builtin(
    len,
    range,
    round,
    int,
    bool,
    str,
    repr,
    format,
    type,
    id,
    hash,
    isinstance,
    issubclass,
    callable,
    print,
    hasattr,
    ord,
    chr,
    bin,
    hex,
    oct,
    input,
    open,
    any,
    all,
    slice,
    object,
    getattr(builtins, "breakpoint"),
    reason="it returns no differentiable value",
)


# logging: a record of what the code did, no value; its methods test levels inside a try
# (refused when differentiated through), so a log call in a simulation's loop was refused
nondifferentiable_builtin(
    *[getattr(cls, name) for cls in (logging.Logger, logging.LoggerAdapter)
      for name in ("debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log",
                   "isEnabledFor", "setLevel", "getEffectiveLevel") if hasattr(cls, name)],
    *[getattr(logging, name) for name in ("debug", "info", "warning", "warn", "error", "exception", "critical",
                                          "fatal", "log", "getLogger", "basicConfig", "disable")
      if hasattr(logging, name)],
    reason="logging records messages: it returns no differentiable value",
)

# random draws: a generator and the uniform numbers it hands out are constants to the
# gradient, as a fixed seed makes them; what random.py computes from them in Python
# (gauss, uniform, normalvariate: mu + sigma * z) is differentiated through its source
nondifferentiable_builtin(
    random.Random, random.Random.seed, random.Random.getstate, random.Random.setstate,
    random.Random.random, random.Random.getrandbits, random.Random.__init__,
    reason=RANDOM_DRAW,
)


def _rejection_sampled(method):
    """The pair of a draw random.py makes by rejection (gammavariate, betavariate,
    vonmisesvariate): the accepted proposal is no smooth function of the parameters (which
    proposals are accepted depends on them too), so the formula's derivative would be a
    biased gradient. Its value is drawn as in Python; a gradient reaching it is refused."""

    def rejection_sampled_pair(rng, *args, **kwargs):
        y = method(rng, *args, **kwargs)

        def rejection_sampled_pullback(g):
            if g is None or isinstance(g, AbstractZero) or g == 0:
                return (None,) * (len(args) + 2) + (({},) if kwargs else ())
            raise NotDifferentiableError(
                f"random.{method.__name__}{_at()} draws by rejection: its value has no derivative in "
                f"its parameters that adjoint_s2s can give (the accepted draw changes with them). "
                f"Pass the parameters as constants, or write the draw as a smooth function of "
                f"parameter-free noise (`mu + sigma * random.gauss(0.0, 1.0)`)")

        return y, rejection_sampled_pullback

    return rejection_sampled_pair


for _name in ("gammavariate", "betavariate", "vonmisesvariate", "binomialvariate"):
    if hasattr(random.Random, _name):
        special(getattr(random.Random, _name))(_rejection_sampled(getattr(random.Random, _name)))
