"""adjoint_s2s: reverse-mode automatic differentiation for Python by source-to-source
transformation, after Zygote.

    >>> import math, adjoint_s2s as ad
    >>> ad.gradient(lambda x, y: math.sin(x) * y, 0.5, 2.0)
    (1.7551651237807455, 0.479425538604203)
"""
from . import rules as _rules  # noqa: F401  (importing the rules registers the built-in ones)

from .api import (  # noqa: E402
    RuleConfig,
    _pullback,
    adjoint,
    differentiable,
    dropgrad,
    grad,
    gradient,
    ignore_derivatives,
    isderiving,
    non_differentiable,
    project,
    pullback,
    refresh,
    rrule,
    rrule_via_ad,
    show_adjoint,
    value_and_grad,
    withgradient,
    zero_like,
)
from .advanced import checkpoint, hessian, hook, hvp, jacobian, showgrad  # noqa: E402
from .errors import (  # noqa: E402
    AdjointError,
    MissingAdjointError,
    MutationError,
    NoSourceError,
    NotDifferentiableError,
    RecursionLimitError,
    RuleError,
    UnsupportedSyntaxError,
)
from .testing import check_grads, numerical_gradient, test_rrule  # noqa: E402
from .tangents import (  # noqa: E402
    InplaceableThunk,
    NoTangent,
    Tangent,
    Thunk,
    ZeroTangent,
    iszero,
    unthunk,
)

from ._version import __version__  # noqa: E402
from .tracebacks import install as _install_traceback_filter  # noqa: E402

_install_traceback_filter()

__all__ = [
    "pullback",
    "_pullback",
    "gradient",
    "withgradient",
    "grad",
    "value_and_grad",
    "show_adjoint",
    "zero_like",
    "differentiable",
    "adjoint",
    "rrule",
    "non_differentiable",
    "refresh",
    "RuleConfig",
    "rrule_via_ad",
    "isderiving",
    "dropgrad",
    "ignore_derivatives",
    "project",
    "hook",
    "showgrad",
    "checkpoint",
    "jacobian",
    "hessian",
    "hvp",
    "test_rrule",
    "check_grads",
    "numerical_gradient",
    "iszero",
    "NoTangent",
    "ZeroTangent",
    "Tangent",
    "Thunk",
    "InplaceableThunk",
    "unthunk",
    "AdjointError",
    "UnsupportedSyntaxError",
    "MissingAdjointError",
    "MutationError",
    "NoSourceError",
    "NotDifferentiableError",
    "RecursionLimitError",
    "RuleError",
]
