"""Rules for Python's builtins.

Numeric builtins with a one-expression derivative are templates; ``sum``, ``min``,
``max``, ``divmod``, ``map`` and friends are run-time rules in ``runtime.py`` because
their gradient depends on the structure of their arguments.
"""
import builtins

from . import nondifferentiable_builtin, primitive

# ----- numbers ---------------------------------------------------------------------------
primitive(
    abs,
    "x",
    "(1.0 if x > 0 else -1.0 if x < 0 else 0.0)",
    kind="abs",
    adjoints={"x": {"complex": "_rt.abs_adjoint(g, x, ans)", "array": "_rt.abs_adjoint(g, x, ans)"}},
)
primitive(float, "x", "1", kind="real")
primitive(
    complex,
    "re, im",
    adjoints={"re": "_rt.re(g)", "im": "_rt.im(g)"},
    kind="complex",
)
primitive(complex, "re", adjoints={"re": "_rt.re_or_self(g, re)"}, kind="complex")
primitive(pow, "a, b", "b * a ** (b - 1)", "_rt.pow_exponent_partial(a, ans)", kind="same")

# ----- no gradient -------------------------------------------------------------------------
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
