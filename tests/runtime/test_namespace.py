"""``_rt`` (runtime/__init__.py) is an explicit namespace: every ``_rt.<name>`` that
generated code or a rule's template can write resolves there, and is listed."""
import ast
import glob
import os
import re

import adjoint_s2s
from adjoint_s2s import runtime
from adjoint_s2s.rules import scalar_adjoints
from adjoint_s2s.rules.numpy import (
    base, constructors, decompositions, elementwise, fft, linalg, reductions, scipy_special, shape,
    linalg_more, shape_more, samples, quantiles, nan_reductions, gradient, scipy_stats, statistics,
)

HELPER_MODULES = (base, elementwise, reductions, shape, linalg, decompositions, constructors,
                  scipy_special, scalar_adjoints, fft, linalg_more, shape_more, samples, quantiles,
                  nan_reductions, gradient, scipy_stats, statistics)

PACKAGE = os.path.dirname(adjoint_s2s.__file__)

# the names the reverse pass composes (``_rt.{how}(...)``) rather than writes out
COMPOSED = {"call_method", "call_method_keeping", "setitem", "setitem_arg",
            "unappend", "unextend", "uninsert", "unpop"}


def _written_names():
    names = set()
    for path in glob.glob(os.path.join(PACKAGE, "**", "*.py"), recursive=True):
        if path.endswith(("api.py", "adapters.py", os.path.join("rules", "sequences.py"))):
            continue  # these name the run time `_rt` for their own calls
        with open(path, encoding="utf-8") as fh:
            names |= set(re.findall(r"(?<![\w.])_rt\.([A-Za-z_]\w*)", fh.read()))
    return names - {"py"}


def test_every_name_generated_code_writes_is_listed_and_resolves():
    listed = set(runtime.__all__)
    missing = (_written_names() | COMPOSED) - listed
    assert not missing, sorted(missing)
    for name in listed:
        assert getattr(runtime, name, None) is not None, name


def test_the_rules_helpers_are_listed():
    for mod in HELPER_MODULES:
        for name in mod.__all__:
            assert name in runtime.__all__, name
            assert getattr(runtime, name) is getattr(mod, name), name


def test_no_star_import():
    with open(runtime.__file__, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    stars = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
             and any(a.name == "*" for a in n.names)]
    assert not stars


def test_generated_code_gets_this_namespace_as_rt():
    from adjoint_s2s import emit

    assert emit._helper_values()["_rt"] is runtime
