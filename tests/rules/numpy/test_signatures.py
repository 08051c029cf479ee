"""Every NumPy rule accepts what NumPy accepts (issue 14, "Signatures").

Three sweeps over the rule table (``rules.PRIMITIVES``, every ``np.*`` and
``np.linalg.*`` rule):

* ``test_parameters_match_numpy``: the rule's parameters against ``inspect.signature``
  of the NumPy function (ufuncs introspect too: ``(x, /, out=None, *, where=True,
  casting=..., order=..., dtype=..., subok=..., signature=...)``). Each rule parameter is
  NumPy's, under NumPy's name (positional-only ones may be named freely), in NumPy's
  positional order, keyword-only where NumPy's is, with NumPy's default. Each NumPy
  parameter a rule lacks is in ``DECLINED`` (by name, or by rule and name) with the
  reason; variadic functions (``*operands``, ``*arys``) are in ``VARIADIC``.
* ``test_keyword_call``: each rule called with every parameter by keyword (positional
  only where NumPy allows nothing else), the optional ones too, with the rule's
  defaults spelled out: the value must be NumPy's, the gradient the finite-difference
  one, inline (arrays known to the transformer) and at run time (opaque arrays).
* ``test_declined_parameters_are_refused``: passing a declined parameter is a clear
  refusal (``MissingAdjointError`` naming the keyword), never a silently wrong gradient.

Then the regressions reported in issue 14, at first and second order.
"""
import inspect
import linecache

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import rules as R
from adjoint_s2s.errors import MissingAdjointError, NotDifferentiableError
from adjoint_s2s.testing import check_grads, isapprox

from .test_rules import (
    A, Arg, NAN, P, SPD, SQ, U, S, _cotangent, _numeric, _opaque, _realise, _rng,
)
from .test_rules_more import Fixed, _tensor_square

_EMPTY = inspect.Parameter.empty
_VAR = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _numpy_rules():
    """{path: (fn, [variants])} for the rules of np.* and np.linalg.* functions."""
    out = {}
    for fn, variants in R.PRIMITIVES.items():
        for prim in variants.values():
            if prim.path.startswith("np."):
                out.setdefault(prim.path, (fn, []))[1].append(prim)
    return dict(sorted(out.items()))


RULES = _numpy_rules()

# ----- what the rules deliberately leave out --------------------------------------------------

_UFUNC_KW = ("casting", "order", "dtype", "subok", "signature")

# by parameter name, for every rule that lacks it
DECLINED = {
    "out": "writes the result into an array the caller holds, which would carry the "
           "value without its gradient: refused (rules that list out= refuse any "
           "out other than None when they run)",
    "where": "a mask that leaves entries of the output uninitialised or out of a "
             "reduction: not yet",
    "initial": "a reduction's starting value: not yet",
    "casting": "ufunc/stacking casting rules: not yet (the default casting is used)",
    "order": "memory layout only: not yet accepted (the values are the default layout's)",
    "subok": "subclass passthrough: not accepted (gradients are plain arrays)",
    "signature": "ufunc loop selection: not accepted",
    "like": "__array_function__ dispatch to another array library: not accepted",
    "device": "arrays live on the CPU: not accepted",
    "copy": "copy/no-copy request: not yet accepted",
    "dtype": "the result's dtype (ufuncs and the functions without it): not yet",
}

# by rule and parameter name
DECLINED_FOR = {
    ("np.std", "mean"): "a precomputed mean: not yet",
    ("np.var", "mean"): "a precomputed mean: not yet",
    ("np.std", "correction"): "the array-API name of ddof: not yet (use ddof)",
    ("np.var", "correction"): "the array-API name of ddof: not yet (use ddof)",
    ("np.take", "mode"): "index clipping/wrapping: not yet",
    ("np.clip", "min"): "the NumPy 2.1 alias of a_min: not yet (use a_min)",
    ("np.clip", "max"): "the NumPy 2.1 alias of a_max: not yet (use a_max)",
    ("np.linalg.pinv", "rtol"): "the array-API name of rcond: not yet (use rcond)",
    ("np.linalg.trace", "dtype"): "accumulator dtype: not yet",
    ("np.matmul", "axes"): "gufunc axes: not yet",
    ("np.matmul", "axis"): "gufunc axis: not yet",
    ("np.matmul", "keepdims"): "gufunc keepdims: not yet",
    ("np.vecdot", "axes"): "gufunc axes: not yet (axis= is accepted)",
    ("np.vecdot", "keepdims"): "gufunc keepdims: not yet",
    ("np.array", "ndmin"): "not yet: reshape the result",
    ("np.array", "ndmax"): "not yet",
    ("np.full_like", "shape"): "not yet",
    ("np.complex128", "imag"): "complex128(re, im): not yet (write re + 1j * im)",
    ("np.broadcast_to", "subok"): DECLINED["subok"],
    ("np.nanstd", "mean"): "a precomputed mean: not yet",
    ("np.nanvar", "mean"): "a precomputed mean: not yet",
    ("np.nanstd", "correction"): "the array-API name of ddof: not yet (use ddof)",
    ("np.nanvar", "correction"): "the array-API name of ddof: not yet (use ddof)",
    ("np.quantile", "weights"): "weighted quantiles (inverted_cdf only in NumPy): not yet",
    ("np.percentile", "weights"): "weighted percentiles (inverted_cdf only in NumPy): not yet",
    ("np.nanquantile", "weights"): "weighted quantiles (inverted_cdf only in NumPy): not yet",
    ("np.nanpercentile", "weights"): "weighted percentiles (inverted_cdf only in NumPy): not yet",
}

for _name in _UFUNC_KW + ("out", "where"):  # the ufuncs' keywords
    assert _name in DECLINED

# functions NumPy declares with *args: the rule's variants name the positions
VARIADIC = {
    "np.einsum": "einsum(*operands): one variant per operand count (subscripts, op0, ...), "
                 "string or sublist form",
    "np.atleast_1d": "atleast_1d(*arys): variants for one to three arrays",
    "np.atleast_2d": "atleast_2d(*arys): variants for one to three arrays",
    "np.atleast_3d": "atleast_3d(*arys): variants for one to three arrays",
    "np.pad": "pad(array, pad_width, mode, **kwargs): constant_values (mode constant), "
              "stat_length (mode mean) and end_values (mode linear_ramp) are the keywords "
              "the rule takes (reflect_type is not accepted)",
    "np.meshgrid": "meshgrid(*xi, copy, sparse, indexing): one variant per number of "
                   "arrays (x0, ...), up to 6",
    "np.clip": "clip(..., **kwargs): the ufunc keywords go to **kwargs (declined above)",
    "np.gradient": "gradient(f, *varargs, axis=None, edge_order=1): variants for no "
                   "spacing and for one to four (h0, h1, ...: a number or coordinates each)",
}
# the methods of ufuncs: reduce(array, /, axis=0, dtype=None, out=None, **kwargs) takes
# keepdims by keyword (initial= and where= are refused: no variant takes them);
# outer(A, B, /, **kwargs) takes the ufunc's keywords, all declined
_UFUNC_METHODS = [p for p in RULES if isinstance(getattr(np, p.split(".")[1], None), np.ufunc)]
for _fn in _UFUNC_METHODS:
    if _fn.endswith(".reduce"):
        VARIADIC[_fn] = ("ufunc.reduce(array, axis=0, dtype=None, out=None, **kwargs): keepdims "
                         "is accepted; initial= and where= are not yet")
    elif _fn.endswith(".outer"):
        VARIADIC[_fn] = "ufunc.outer(A, B, **kwargs): the ufunc keywords (out=, where=...) are declined"

# parameters NumPy lets out that the rule requires
REQUIRED_HERE = {
    ("np.where", "x"): "where(condition) alone gives indices (no gradient, no rule)",
    ("np.where", "y"): "where(condition) alone gives indices (no gradient, no rule)",
}

# keyword-only in NumPy's text signature, yet NumPy takes them in position too
POSITIONAL_TOO = {
    ("np.arange", "dtype"): "np.arange(0, 3, 0.5, int) works: the C function reads four "
                            "positional arguments",
}

# a rule default NumPy spells differently, with the same meaning (checked by the calls)
DEFAULTS_DIFFER = {
    ("np.arange", "step"): "step=None means 1 (NumPy accepts None too)",
    ("np.arange", "stop"): "NumPy's arange(start_or_stop, /, stop=None, ...)",
}


def _declined(path, name):
    return DECLINED_FOR.get((path, name)) or DECLINED.get(name)


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):  # pragma: no cover - every NumPy 2 function has one
        return None


def _same(a, b):
    try:
        return a is b or bool(a == b)
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.parametrize("path", list(RULES))
def test_parameters_match_numpy(path):
    fn, variants = RULES[path]
    sig = _signature(fn)
    assert sig is not None, f"{path}: NumPy gives no signature; document it here"
    ps = sig.parameters
    variadic = any(p.kind in _VAR for p in ps.values())
    if variadic:
        assert path in VARIADIC, f"{path}: NumPy takes *args/**kwargs; say how in VARIADIC"
    problems = []
    positional = [n for n, p in ps.items() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for prim in variants:
        names = list(prim.params)
        for i, name in enumerate(names):
            p = ps.get(name)
            if p is None or p.kind in _VAR:
                # a positional-only parameter may have any name; variadic rules name positions
                if not (i < len(positional) and ps[positional[i]].kind is inspect.Parameter.POSITIONAL_ONLY) \
                        and not variadic:
                    problems.append(f"{name!r} is not a parameter of NumPy's {path}{sig}")
                continue
            if p.kind is p.KEYWORD_ONLY:
                if name not in prim.kwonly and (path, name) not in POSITIONAL_TOO:
                    problems.append(f"{name!r} is keyword-only in NumPy")
            elif i >= len(positional) or positional[i] != name:
                problems.append(f"{name!r} is at position {i}, NumPy's is {positional.index(name)}")
            if name in prim.defaults and p.default is not _EMPTY and p.default is not np._NoValue:
                value = eval(prim.defaults[name], {"np": np})  # noqa: S307 (our own table)
                if not _same(value, p.default) and (path, name) not in DEFAULTS_DIFFER:
                    problems.append(f"{name}={prim.defaults[name]}, NumPy's default is {p.default!r}")
            if name not in prim.defaults and p.default is not _EMPTY \
                    and (path, name) not in REQUIRED_HERE:
                problems.append(f"{name!r} has a default in NumPy but none in the rule")
    have = set().union(*(set(v.params) for v in variants))
    for name, p in ps.items():
        if p.kind in _VAR or name in have:
            continue
        if p.kind is p.POSITIONAL_ONLY and len(have) >= list(ps).index(name) + 1:
            continue  # renamed positional-only parameter
        if not _declined(path, name):
            problems.append(f"NumPy's {name!r} is neither accepted nor in DECLINED")
    assert not problems, f"{path}{sig}:\n  " + "\n  ".join(problems)


# ----- calling every rule with keywords --------------------------------------------------------

_ARRAYISH = {"x", "a", "x1", "x2", "m", "arr", "array", "A", "v", "val", "z", "b", "ary", "y",
             "object"}

# example values of the required parameters (and of optional ones worth exercising);
# anything not given here: an array A(2, 3) for an array-ish name
EXAMPLES = {
    "np.arccosh": {"x": Arg((2, 3), "gt1")},
    "np.arcsin": {"x": U(2, 3)}, "np.arccos": {"x": U(2, 3)}, "np.arctanh": {"x": U(2, 3)},
    "np.log": {"x": P(2, 3)}, "np.log2": {"x": P(2, 3)}, "np.log10": {"x": P(2, 3)},
    "np.log1p": {"x": P(2, 3)}, "np.sqrt": {"x": P(2, 3)}, "np.cbrt": {"x": P(2, 3)},
    "np.reciprocal": {"x": P(2, 3)}, "np.power": {"x1": P(2, 3), "x2": A(2, 3)},
    "np.float_power": {"x1": P(2, 3), "x2": A(2, 3)},
    "np.fmod": {"x1": P(2, 3), "x2": Arg((2, 3), "gt1")},
    "np.remainder": {"x1": P(2, 3), "x2": Arg((2, 3), "gt1")},
    "np.float64": {"x": S()}, "np.float32": None, "np.complex128": {"x": S()},
    "np.arange": {"start": 0.5, "stop": 3.0, "step": S("pos")},
    "np.array": {"object": [S(), S()]},
    "np.array_split": {"ary": A(4, 3), "indices_or_sections": 2},
    "np.split": {"ary": A(4, 3), "indices_or_sections": 2},
    "np.vsplit": {"ary": A(4, 3), "indices_or_sections": 2},
    "np.hsplit": {"ary": A(3, 4), "indices_or_sections": 2},
    "np.dsplit": {"ary": A(2, 2, 4), "indices_or_sections": 2},
    "np.astype": {"dtype": np.float64},
    "np.broadcast_to": {"array": A(3), "shape": (2, 3)},
    "np.clip": {"a_min": -0.5, "a_max": 0.5},
    "np.cross": {"a": A(2, 3), "b": A(2, 3)},
    "np.linalg.cross": {"x1": A(2, 3), "x2": A(2, 3)},
    "np.cumprod": {"a": P(2, 3), "axis": 1},
    "np.cumsum": {"axis": 1},
    "np.dot": {"a": A(2, 3), "b": A(3, 2)},
    "np.matmul": {"x1": A(2, 3), "x2": A(3, 2)},
    "np.linalg.matmul": {"x1": A(2, 3), "x2": A(3, 2)},
    "np.inner": {"a": A(2, 3), "b": A(4, 3)},
    "np.vdot": {"a": A(2, 3), "b": A(2, 3)},
    "np.outer": {"a": A(3), "b": A(2)}, "np.linalg.outer": {"x1": A(3), "x2": A(2)},
    "np.kron": {"a": A(2, 2), "b": A(2, 3)},
    "np.tensordot": {"a": A(2, 3), "b": A(3, 2), "axes": 1},
    "np.linalg.tensordot": {"x1": A(2, 3), "x2": A(3, 2), "axes": 1},
    "np.expand_dims": {"axis": 1},
    "np.full": {"shape": (2, 3), "fill_value": S()},
    "np.full_like": {"fill_value": S()},
    "np.geomspace": {"start": S("pos"), "stop": Arg((), "gt1", scalar=True), "num": 4},
    "np.linspace": {"start": S(), "stop": S(), "num": 4},
    "np.logspace": {"start": S(), "stop": S(), "num": 4},
    "np.diag": {"v": A(3, 3)},
    "np.diagonal": {"a": A(3, 3)},
    "np.linalg.diagonal": {"x": A(3, 3)},
    "np.trace": {"a": A(3, 3)}, "np.linalg.trace": {"x": A(3, 3)},
    "np.linalg.cholesky": {"a": SPD(3, 3)},
    "np.linalg.det": {"a": SQ(3, 3)}, "np.linalg.inv": {"a": SQ(3, 3)},
    "np.linalg.slogdet": {"a": SQ(3, 3)},
    "np.linalg.solve": {"a": SQ(3, 3), "b": A(3, 2)},
    "np.linalg.eigh": {"a": SPD(3, 3)}, "np.linalg.eigvalsh": {"a": SPD(3, 3)},
    "np.linalg.lstsq": {"a": A(4, 3), "b": A(4)},
    "np.linalg.matrix_power": {"a": SQ(3, 3), "n": 2},
    "np.linalg.pinv": {"a": A(3, 2)},
    "np.linalg.qr": {"a": A(3, 3)},
    "np.linalg.svd": {"a": A(3, 2), "full_matrices": False},
    "np.linalg.svdvals": {"x": A(3, 2)},
    "np.linalg.matrix_norm": {"x": A(3, 3)},
    "np.linalg.vecdot": {"x1": A(2, 3), "x2": A(2, 3)}, "np.vecdot": {"x1": A(2, 3), "x2": A(2, 3)},
    "np.moveaxis": {"source": 0, "destination": 1},
    "np.swapaxes": {"axis1": 0, "axis2": 1},
    "np.pad": {"pad_width": 1},
    "np.repeat": {"repeats": 2, "axis": 1},
    "np.reshape": {"shape": (3, 2)},
    "np.roll": {"shift": 1},
    "np.rot90": {"m": A(2, 3)},
    "np.squeeze": {"a": A(2, 1, 3)},
    "np.take": {"indices": [0, 2, 2]},
    "np.take_along_axis": {"arr": A(2, 3), "indices": np.array([[0, 2], [1, 1]]), "axis": 1},
    "np.tile": {"reps": (2, 1)},
    "np.unstack": {"x": A(2, 3)},
    "np.where": {"condition": np.array([[True, False, True], [False, True, True]]),
                 "x": A(2, 3), "y": A(2, 3)},
    "np.average": {"weights": P(2, 3)},
    "np.nan_to_num": {"x": A(2, 3)},
    "np.sort": {"a": A(2, 3)},
    "np.std": {"ddof": 1}, "np.var": {"ddof": 1},
    "np.einsum": None, "np.atleast_1d": None, "np.atleast_2d": None, "np.atleast_3d": None,
}

# the rules added for issue 14 (fft, linalg_more, the former misc.py, ufunc methods)
_COND = [np.array([[True, False, True], [False, False, True]]),
         np.array([[False, True, True], [True, False, False]])]
EXAMPLES.update({
    "np.append": {"arr": A(2, 3), "values": A(1, 3), "axis": 0},
    "np.convolve": {"a": A(5), "v": A(3), "mode": "same"},
    "np.correlate": {"a": A(5), "v": A(3), "mode": "full"},
    "np.gradient": {"f": A(3, 4), "axis": 1, "edge_order": 2},
    # (by number of parameters where a function's variants need different examples)
    "np.gradient/4": {"f": A(3, 4), "h0": S("pos"), "axis": 1, "edge_order": 2},
    "np.gradient/5": {"f": A(3, 4), "h0": S("pos"), "h1": Fixed([0.0, 0.4, 1.1, 2.0])},
    "np.gradient/6": {"f": A(2, 3, 4), "h0": S("pos"), "h1": Fixed([0.0, 0.5, 1.6]),
                      "h2": S("pos"), "edge_order": 1},
    "np.gradient/7": {"f": A(3, 3, 3, 4), "h0": S("pos"), "h1": S("pos"), "h2": S("pos"),
                      "h3": Fixed([0.0, 0.4, 1.1, 2.0]), "edge_order": 2, "axis": None},
    "np.interp": {"x": U(2, 3), "xp": np.array([-1.0, -0.2, 0.5, 1.5]), "fp": A(4),
                  "left": S(), "right": S()},
    "np.linalg.eig": {"a": SQ(3, 3)},
    "np.linalg.eigvals": {"a": SQ(3, 3)},
    "np.linalg.multi_dot": {"arrays": [A(2, 3), A(3, 4), A(4, 2)]},
    "np.linalg.tensorinv": {"a": _tensor_square((4, 2, 2), 1), "ind": 1},
    "np.linalg.tensorsolve": {"a": _tensor_square((2, 3, 6), 2), "b": A(2, 3)},
    "np.nanpercentile": {"a": NAN(3, 4), "q": 30.0, "axis": 1},
    "np.nanquantile": {"a": NAN(3, 4), "q": 0.3, "axis": 1},
    "np.partition": {"a": A(3, 4), "kth": 1, "axis": 0},
    "np.percentile": {"a": A(3, 4), "q": 70.0, "axis": 1},
    "np.quantile": {"a": A(3, 4), "q": 0.4, "axis": 0, "keepdims": True},
    "np.polyval": {"p": A(3), "x": A(2, 3)},
    "np.rollaxis": {"a": A(2, 3, 4), "axis": 2, "start": 1},
    "np.select": {"condlist": _COND, "choicelist": [A(2, 3), A(2, 3)], "default": S()},
})
# where= and initial= of the reductions (the variants that take them)
_WMASK = np.array([[True, False, True], [True, True, False]])
EXAMPLES.update({"np.sum/7": {"initial": S(), "where": _WMASK},
                 "np.prod/7": {"initial": S(), "where": _WMASK},
                 "np.mean/6": {"where": _WMASK, "axis": 1}})
for _path in ("np.max", "np.min", "np.amax", "np.amin"):
    EXAMPLES[_path + "/6"] = {"initial": S(), "where": _WMASK, "axis": 0}
# statistics.py
EXAMPLES.update({
    "np.cov": {"m": A(3, 5), "fweights": np.array([1, 2, 1, 3, 1]), "aweights": P(5)},
    "np.corrcoef": {"x": A(3, 5), "y": A(5), "rowvar": True},
    "np.polyfit": {"x": A(6), "y": A(6, 2), "deg": 2, "w": P(6)},
    "np.bincount": {"x": np.array([0, 2, 1, 2, 4]), "weights": A(5), "minlength": 6},
    "np.linalg.cond": {"x": SQ(3, 3), "p": "fro"},
})
# the rules of rules/numpy/shape_extra.py
EXAMPLES.update({
    "np.vander": {"x": A(4), "N": 3},
    "np.insert": {"arr": A(2, 3), "obj": [0, 2], "values": A(2, 1), "axis": 1},
    "np.delete": {"arr": A(2, 3), "obj": [0, 2], "axis": 1},
    "np.diff/5": {"a": A(2, 3), "axis": 0, "prepend": S(), "append": A(1, 3)},
    "np.ptp": {"axis": 1},
    "np.block": {"arrays": [A(2, 3), A(2, 1)]},  # (nested lists: test_shape_extra.py)
    "np.meshgrid/4": {"x0": A(3), "indexing": "ij"},
    "np.meshgrid/5": {"x0": A(3), "x1": A(2), "sparse": True},
    "np.meshgrid/6": {"x0": A(3), "x1": A(2), "x2": A(2)},
    "np.meshgrid/7": {"x0": A(2), "x1": A(2), "x2": A(2), "x3": A(3), "indexing": "ij"},
    "np.meshgrid/8": {"x0": A(2), "x1": A(1), "x2": A(2), "x3": A(1), "x4": A(2)},
    "np.meshgrid/9": {"x0": A(2), "x1": A(1), "x2": A(2), "x3": A(1), "x4": A(2), "x5": A(1),
                      "sparse": True},
})
for _path in _UFUNC_METHODS:
    if _path.endswith(".outer"):
        _positive = _path in ("np.divide.outer", "np.power.outer")
        EXAMPLES[_path] = {"A": P(3) if _positive else A(3), "B": P(2) if _positive else A(2)}

# no keyword sweep (with the reason); each is still covered by tests/rules/numpy/test_rules.py
NO_KEYWORD_SWEEP = {
    "np.float32": "float32 rounding: finite differences need a looser tolerance (test_rules)",
    "np.einsum": "*operands (subscripts and operands in position; optimize= by keyword): "
                 "tests/rules/numpy/test_statistics.py and the sublist tests below",
    "np.atleast_1d": "*arys only", "np.atleast_2d": "*arys only", "np.atleast_3d": "*arys only",
    # (by number of parameters: one variant of a function)
    "np.pad/5": "stat_length and end_values belong to different modes: NumPy refuses a call "
                "with both (tests/rules/numpy/test_shape_extra.py calls each with its mode)",
}
# draws: each call draws other numbers; tests/rules/numpy/test_rules_more.py's rows and
# tests/test_constant_functions.py check them seeded, keyword calls too
NO_KEYWORD_SWEEP.update({p: "a draw (checked seeded elsewhere)" for p in RULES
                         if p.startswith("np.random.")})

# tuple outputs whose later entries the rule does not differentiate (no cotangent fed)
DROP = {
    "np.linalg.lstsq": (2,),  # the rank (an integer)
    "np.linalg.eig": (1,),  # eigenvectors: LAPACK's phase, a gradient only for phase-free uses
}

# matrix functions of a symmetric argument whose gradient is symmetrised (docs/numpy.md)
SYMMETRISED = {"np.linalg.cholesky", "np.linalg.eigh", "np.linalg.eigvalsh"}


def _given(path, prim):
    """The example values chosen for prim (by path and number of parameters, or path)."""
    return EXAMPLES.get(f"{path}/{len(prim.params)}") or EXAMPLES.get(path) or {}


def _example(path, prim):
    """{param: value or Arg} for a call of prim (required parameters and chosen ones)."""
    given = _given(path, prim)
    out = {}
    for name in prim.params:
        if name in given:
            out[name] = given[name]
        elif name in prim.defaults:
            out[name] = eval(prim.defaults[name], {"np": np})  # noqa: S307
        elif name in ("tup", "arrays"):
            out[name] = [A(2, 3), A(2, 3)]
        elif name in _ARRAYISH:
            out[name] = A(2, 3)
        else:
            raise AssertionError(f"{path}: no example for {name!r}: add one to EXAMPLES")
    return out


def _keyword_function(path, fn, prim, example, only=None):
    """A function of the differentiated arguments calling fn with keywords (source kept
    in linecache so the transformer can read it); ``only``: pass just these parameters."""
    sig = _signature(fn)
    posonly = {n for n, p in sig.parameters.items() if p.kind is p.POSITIONAL_ONLY} if sig else set()
    positional = [n for n, p in sig.parameters.items()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    args, pieces, consts = [], [], {}
    has_varargs = sig is not None and any(
        p.kind is p.VAR_POSITIONAL for p in sig.parameters.values())
    # the positions of NumPy's *args (np.gradient's spacings), and all before them, go
    # in position
    last_vararg = max([i for i, n in enumerate(prim.params)
                       if has_varargs and n not in sig.parameters], default=-1)
    for i, name in enumerate(prim.params):
        if only is not None and name not in only:
            continue
        value = example[name]
        diff = isinstance(value, Arg) or (isinstance(value, list) and value and isinstance(value[0], Arg))
        if diff:
            ref = f"d_{name}"
            args.append(name)
        else:
            ref = f"C_{name}"
            consts[ref] = value
        if name in posonly or (i < len(positional) and positional[i] in posonly) \
                or i <= last_vararg:
            # positional-only in NumPy (the rule may rename it: value=), or a position of
            # NumPy's *args (np.gradient's spacings)
            pieces.append(ref)
        else:
            pieces.append(f"{name}={ref}")
    fname = "kw_" + path.replace(".", "_") + ("_plain" if only is not None else "")
    src = (f"def {fname}({', '.join('d_' + a for a in args)}):\n"
           f"    return FN({', '.join(pieces)})\n")
    filename = f"<test_signatures {fname}/{len(prim.params)}{'/' + str(sorted(only)) if only else ''}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = dict(consts, FN=fn, np=np)
    exec(compile(src, filename, "exec"), ns)  # noqa: S102
    return ns[fname], args


def _sweep_params():
    out = []
    for path, (fn, variants) in RULES.items():
        if path in NO_KEYWORD_SWEEP:
            continue
        for prim in variants:
            if f"{path}/{len(prim.params)}" in NO_KEYWORD_SWEEP:
                continue
            for where in ("inline", "runtime"):
                out.append(pytest.param(path, len(prim.params), where,
                                        id=f"{path}/{len(prim.params)}-{where}"))
    return out


@pytest.mark.parametrize("path, nparams, where", _sweep_params())
def test_keyword_call(path, nparams, where):
    fn, variants = RULES[path]
    prim = next(v for v in variants if len(v.params) == nparams)
    example = _example(path, prim)
    f, names = _keyword_function(path, fn, prim, example)
    rng = _rng("signatures", path, nparams)
    values, diff = _realise([example[n] for n in names], rng, False)
    # the rule's defaults, spelled out, are NumPy's: the same call without them
    given = set(_given(path, prim)) | {n for n in prim.params if n not in prim.defaults}
    f_plain, plain_names = _keyword_function(path, fn, prim, example, only=given)
    plain = f_plain(*[values[names.index(n)] for n in plain_names])
    y = f(*values)
    _assert_same(y, plain, path)
    gy = _cotangent(y, rng, DROP.get(path, ()))
    want = list(_numeric(f, values, diff, gy))
    call = values if where == "inline" else [_opaque(v) for v in values]
    got_y, back = ad.pullback(f, *call)
    _assert_same(got_y, y, path)
    got = back(gy)
    for k, i in enumerate(diff):
        if path in SYMMETRISED:  # either convention: one triangle read, or symmetrised
            w = np.asarray(want[k])
            if not isapprox(got[i], w, rtol=1e-5, atol=1e-7):
                want[k] = (w + np.swapaxes(w, -1, -2).conj()) / 2
        assert isapprox(got[i], want[k], rtol=1e-5, atol=1e-7), (
            f"{path} ({where}) gradient of {names[i]}:\n  adjoint_s2s: {got[i]!r}\n"
            f"  finite differences: {want[k]!r}")


def _assert_same(got, want, path):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), path
        for a, b in zip(got, want):
            _assert_same(a, b, path)
        return
    if isinstance(want, list):
        assert len(got) == len(want), path
        for a, b in zip(got, want):
            _assert_same(a, b, path)
        return
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12,
                               err_msg=path)


def test_every_rule_is_swept_or_excused():
    for path in RULES:
        assert path not in NO_KEYWORD_SWEEP or NO_KEYWORD_SWEEP[path], path
    assert {p.split("/")[0] for p in NO_KEYWORD_SWEEP} <= set(RULES) | {"np.float32"}


# ----- declined parameters are refused ---------------------------------------------------------


def _declined_params():
    out = []
    for path, (fn, variants) in RULES.items():
        sig = _signature(fn)
        if sig is None or path in NO_KEYWORD_SWEEP:
            continue
        have = set().union(*(set(v.params) for v in variants))
        for name, p in sig.parameters.items():
            if p.kind in _VAR or p.kind is p.POSITIONAL_ONLY or name in have:
                continue
            out.append(pytest.param(path, name, id=f"{path}-{name}"))
    return out


@pytest.mark.parametrize("path, name", _declined_params())
def test_declined_parameters_are_refused(path, name):
    fn, variants = RULES[path]
    prim = min(variants, key=lambda v: len(v.params))
    example = _example(path, prim)
    default = _signature(fn).parameters[name].default
    value = None if default in (_EMPTY, np._NoValue) else default
    f, names = _keyword_function(path, fn, prim, example)
    values, _ = _realise([example[n] for n in names], _rng("declined", path, name), False)
    src = linecache.getlines(f.__code__.co_filename)
    # the same call with the declined keyword added
    text = "".join(src).rstrip()
    text = text[:-1] + f", {name}=C_declined)\n"
    filename = f.__code__.co_filename.replace(">", f" +{name}>")
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    ns = dict(f.__globals__, C_declined=value)
    exec(compile(text, filename, "exec"), ns)  # noqa: S102
    g = ns[f.__name__]
    with pytest.raises(MissingAdjointError, match=name):
        ad.pullback(g, *values)[1](_cotangent(fn(*[values[names.index(n)] if n in names
                                                   else example[n] for n in prim.params]),
                                              _rng("gy")))


def test_out_is_refused_where_a_rule_lists_it():
    def f(x):
        buf = np.zeros(3)
        np.sum(x, axis=0, out=buf)
        return np.sum(buf)

    def g(x):
        return np.sum(np.sum(x, 0, None, np.zeros(3)))

    for h in (f, g):
        with pytest.raises(NotDifferentiableError, match="out="):
            ad.gradient(h, np.ones((2, 3)))
    # out=None is NumPy's default: accepted
    check_grads(lambda x: np.sum(np.sum(x, axis=0, out=None) ** 2), np.arange(6.0).reshape(2, 3))


# ----- the regressions of issue 14 ------------------------------------------------------------


def _second(f, *args):
    """Check the gradient of <grad f(args), w> by finite differences (second order)."""
    rng = np.random.default_rng(7)
    ws = [rng.standard_normal(np.shape(a)) for a in args]

    def h(*xs):
        gs = ad.gradient(f, *xs)
        total = 0.0
        for g, w in zip(gs, ws):
            total = total + np.sum(np.asarray(g) * w)
        return total

    check_grads(h, *args, rtol=1e-5, atol=1e-6)


def _vec(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def cross_axis(a, b):
    return np.sum(np.cross(a, b, axis=0) ** 2)


def cross_axes(a, b):
    return np.sum(np.sin(np.cross(a, b, axisa=0, axisb=1, axisc=0)))


def linalg_cross_axis(a, b):
    return np.sum(np.linalg.cross(a, b, axis=0) ** 2)


def row_stack(a, b):
    return np.sum(np.vstack([a, b], dtype=np.float64) ** 3)


def tile_reps(a, b):
    return np.sum(np.tile(a, reps=(2, 1)) ** 2 * b[0, 0])


def repeat_repeats(a, b):
    return np.sum(np.repeat(a, repeats=2) ** 2 * b[0, 0])


def moveaxis_kw(a, b):
    return np.sum(np.moveaxis(a, source=0, destination=1) ** 2 * b.T)


def swapaxes_kw(a, b):
    return np.sum(np.swapaxes(a, axis1=0, axis2=1) ** 3 * b.T)


def einsum_sublists(a, b):
    return np.sum(np.einsum(a, [0, 1], b.T, [1, 2], [0, 2]) ** 2)


def einsum_sublists_implicit(a, b):
    return np.sum(np.einsum(a, [0, 1], b, [0, 1]) ** 2)


def std_list(a, b):
    return np.std([a[0, 0], b[1, 2], a[1, 1] * b[0, 0]])


def var_list(a, b):
    return np.var([a[0, 0], b[1, 2], a[1, 1] + 1.0])


def norm_list(a, b):
    return np.linalg.norm([a[0, 0], b[1, 2]])


def sin_list(a, b):
    return np.sum(np.sin([a[0, 0], a[0, 0] + 1.0, b[0, 1]]))


REGRESSIONS = [cross_axis, linalg_cross_axis, row_stack, tile_reps, repeat_repeats,
               moveaxis_kw, swapaxes_kw, einsum_sublists, einsum_sublists_implicit, std_list,
               var_list, norm_list, sin_list]


def _regression_args(f):
    if f in (cross_axis, linalg_cross_axis):
        return _vec(3, 2, seed=1), _vec(3, 2, seed=2)
    if f is cross_axes:
        return _vec(3, 2, seed=1), _vec(2, 3, seed=2)
    return _vec(2, 3, seed=1), _vec(2, 3, seed=2)


@pytest.mark.parametrize("f", REGRESSIONS + [cross_axes], ids=lambda f: f.__name__)
def test_regression_first_order(f):
    args = _regression_args(f)
    check_grads(f, *args, rtol=1e-6, atol=1e-8)
    # and at run time: the same calls on arrays the transformer does not know
    got = ad.gradient(f, *[_opaque(a) for a in args])
    want = ad.gradient(f, *args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", REGRESSIONS + [cross_axes], ids=lambda f: f.__name__)
def test_regression_second_order(f):
    _second(f, *_regression_args(f))


def test_lists_of_scalars_get_lists_back():
    a, b = 0.3, -1.2

    def f(a, b):
        return np.std([a, b, a * b])

    check_grads(f, a, b)

    def g(xs):
        return np.sum(np.sin(xs))

    got = ad.gradient(g, [a, b])[0]
    assert isinstance(got, list) and len(got) == 2
    np.testing.assert_allclose(got, np.cos([a, b]))


def test_keyword_that_no_variant_takes_is_a_clear_refusal():
    def f(x):
        return np.sum(np.cross(x, x, axisa=0, bogus=1))

    with pytest.raises((MissingAdjointError, TypeError), match="bogus"):
        ad.gradient(f, np.ones((3, 2)))
