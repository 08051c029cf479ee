"""Rules for scipy.linalg (registered only when scipy is installed); their helpers are in
rules/numpy/scipy_linalg.py. ``TABLE`` is plain data like rules/scipy.py's: the name in
``scipy.linalg``, its parameters, the adjoint templates, a note for docs/numpy.md."""
from .numpy import rule

try:
    import scipy.linalg as sl
except ImportError:  # scipy is optional: the table stays readable, nothing is registered
    sl = None

_ST = "a, b, ans, trans, lower, unit_diagonal"

TABLE = [
    ("expm", "A", {"A": "_rt.sp_expm_adjoint(g, A)"},
     "the Fréchet derivative, as an expm of a block matrix (differentiates again)"),
    ("solve_triangular",
     "a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True",
     {"a": f"_rt.sp_solve_triangular_adjoint_a(g, {_ST})",
      "b": f"_rt.sp_solve_triangular_adjoint_b(g, {_ST})"},
     "gradient to the triangle read (not the diagonal with unit_diagonal=True)"),
    ("cho_solve", "c_and_lower, b, overwrite_b=False, check_finite=True",
     {"c_and_lower": "_rt.sp_cho_solve_adjoint_c(g, c_and_lower, b, ans)",
      "b": "_rt.sp_cho_solve_adjoint_b(g, c_and_lower, b)"},
     "gradient to the factor's triangle and to b"),
    ("lu_solve", "lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True",
     {"lu_and_piv": "_rt.sp_lu_solve_adjoint_lu(g, lu_and_piv, b, ans, trans)",
      "b": "_rt.sp_lu_solve_adjoint_b(g, lu_and_piv, b, ans, trans)"},
     "gradient to the packed factors (not the pivots) and to b"),
]


def _register():
    if sl is None:
        return
    for name, params, adjoints, note in TABLE:
        fn = getattr(sl, name, None)
        if fn is None:
            continue
        rule(fn, params, adjoints=adjoints, path=f"scipy.linalg.{name}", section="scipy.linalg",
             note=note)


_register()
