"""docs/numpy.md is generated from the rule table: it must not fall behind it."""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _generator():
    path = os.path.join(ROOT, "scripts", "gen_numpy_docs.py")
    spec = importlib.util.spec_from_file_location("gen_numpy_docs", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_numpy_docs_are_up_to_date():
    gen = _generator()
    with open(os.path.join(ROOT, "docs", "numpy.md"), encoding="utf-8") as fh:
        current = fh.read()
    assert current == gen.render(), (
        "docs/numpy.md is stale: run `.venv/bin/python scripts/gen_numpy_docs.py`"
    )


def test_numpy_docs_list_every_rule():
    from adjoint_s2s import rules as R

    with open(os.path.join(ROOT, "docs", "numpy.md"), encoding="utf-8") as fh:
        text = fh.read()
    for variants in R.PRIMITIVES.values():
        for prim in variants.values():
            if prim.path.startswith(("np.", "ndarray.")):
                assert f"`{prim.path}`" in text, prim.path
    for name in R.ARRAY_METHODS:
        assert f"`x.{name}`" in text, name
    assert "## How to add a rule" in text
