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
