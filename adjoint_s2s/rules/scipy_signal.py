"""Rules for scipy.signal (registered only when scipy is installed); their helpers are in
rules/numpy/scipy_signal.py. ``TABLE`` is plain data like rules/scipy_linalg.py's: the
name in ``scipy.signal``, its parameters, the adjoint templates, a note for
docs/numpy.md."""
from .numpy import rule

try:
    import scipy.signal as ss
except ImportError:  # scipy is optional: the table stays readable, nothing is registered
    ss = None

_ARGS = "g, in1, in2, ans, method"

TABLE = [
    ("convolve", "in1, in2, mode='full', method='auto'",
     {"in1": f"_rt.sp_convolve_adjoint_in1({_ARGS})",
      "in2": f"_rt.sp_convolve_adjoint_in2({_ARGS})"},
     "n-d, modes full/same/valid, every method; gradient to both inputs (a valid "
     "correlation of the cotangent)"),
    ("correlate", "in1, in2, mode='full', method='auto'",
     {"in1": f"_rt.sp_correlate_adjoint_in1({_ARGS})",
      "in2": f"_rt.sp_correlate_adjoint_in2({_ARGS})"},
     "n-d, modes full/same/valid, every method; gradient to both inputs"),
]


def _register():
    if ss is None:
        return
    for name, params, adjoints, note in TABLE:
        fn = getattr(ss, name, None)
        if fn is None:
            continue
        rule(fn, params, adjoints=adjoints, path=f"scipy.signal.{name}", section="scipy.signal",
             note=note)


_register()
