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
    ("sqrtm", "A", {"A": "_rt.sp_sqrtm_adjoint(g, A, ans)"},
     "the adjoint solves a Sylvester equation in the root (solve_sylvester, which "
     "differentiates again); disp= and blocksize= (deprecated by SciPy) are not accepted"),
    ("logm", "A", {"A": "_rt.sp_logm_adjoint(g, A)"},
     "the Fréchet derivative, as a logm of a block matrix (differentiates again); disp= "
     "(deprecated by SciPy) is not accepted"),
    ("solve_sylvester", "a, b, q",
     {"a": "_rt.sp_solve_sylvester_adjoint_a(g, a, b, q, ans)",
      "b": "_rt.sp_solve_sylvester_adjoint_b(g, a, b, q, ans)",
      "q": "_rt.sp_solve_sylvester_adjoint_q(g, a, b, q, ans)"},
     "A X + X B = Q: the adjoint solves Aᴴ Q̄ + Q̄ Bᴴ = X̄"),
    ("cho_factor", "a, lower=False, overwrite_a=False, check_finite=True",
     {"a": "_rt.sp_cho_factor_adjoint(g, a, ans, lower)"}, "gradient to the triangle "
     "read (and to the other one, which c carries unchanged); composes with cho_solve"),
    ("lu_factor", "a, overwrite_a=False, check_finite=True",
     {"a": "_rt.sp_lu_factor_adjoint(g, a, ans)"},
     "square matrices; gradient through the packed factors (the pivots are constant); "
     "composes with lu_solve"),
    ("solve_banded",
     "l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True",
     {"ab": "_rt.sp_solve_banded_adjoint_ab(g, l_and_u, ab, b, ans)",
      "b": "_rt.sp_solve_banded_adjoint_b(g, l_and_u, ab, b, ans)"},
     "gradient to the band of ab (zero in its unused corners) and to b"),
]

# rules whose result is a tuple (c, lower) or (lu, piv)
_KIND = {"cho_factor": "other", "lu_factor": "other"}


def _register():
    if sl is None:
        return
    for name, params, adjoints, note in TABLE:
        fn = getattr(sl, name, None)
        if fn is None:
            continue
        rule(fn, params, adjoints=adjoints, path=f"scipy.linalg.{name}", section="scipy.linalg",
             note=note, kind=_KIND.get(name, "array"))


_register()
