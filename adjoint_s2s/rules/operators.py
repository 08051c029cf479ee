"""Rules for Python's operators, by AST operator name.

Each entry: the ``operator`` function, then the partial derivative with respect to each
operand, in terms of ``a``, ``b`` and ``ans`` (the result). ``None``: no gradient.
"""
import operator

from . import primitive

# ----- binary operators ---------------------------------------------------------------
BINARY = {
    "Add": (operator.add, "1", "1"),
    "Sub": (operator.sub, "1", "-1"),
    "Mult": (operator.mul, "b", "a"),
    "Div": (operator.truediv, "1 / b", "-ans / b"),
    "FloorDiv": (operator.floordiv, None, None),
    "Mod": (operator.mod, "1", "-(a // b)"),
    "Pow": (operator.pow, "_rt.pow_base_partial(a, b)", "_rt.pow_exp_partial(a, ans)"),
}
MATMUL = operator.matmul

# ----- unary operators ----------------------------------------------------------------
UNARY = {
    "USub": (operator.neg, "-1"),
    "UAdd": (operator.pos, "1"),
}

for _name, (_fn, *_partials) in BINARY.items():
    primitive(_fn, "a, b", *_partials, path=f"operator.{_fn.__name__}", kind="same")
for _name, (_fn, _partial) in UNARY.items():
    primitive(_fn, "a", _partial, path=f"operator.{_fn.__name__}", kind="same")

# ----- matrix product (operands not known to be arrays when the code was generated) --------
primitive(
    MATMUL,
    "a, b",
    adjoints={"a": "_rt.matmul_adjoint_a(g, a, b)", "b": "_rt.matmul_adjoint_b(g, a, b)"},
    path="operator.matmul",
    kind="array",
)
