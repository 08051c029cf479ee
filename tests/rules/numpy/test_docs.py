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
        "docs/numpy.md is stale (its rule tables or its coverage of NumPy's namespace): "
        "run `.venv/bin/python scripts/gen_numpy_docs.py` and commit docs/numpy.md"
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


def test_coverage_table_is_consistent():
    """The coverage table's hand-kept lists name real NumPy functions, none of which has a
    rule, and its totals add up."""
    import numpy as np
    from adjoint_s2s import rules as R

    gen = _generator()
    for reason, names in gen.NO_DERIVATIVE.items():
        for name in names.split():
            mod, _, attr = ("np." + name).rpartition(".")
            obj = getattr(eval(mod, {"np": np}), attr, None)  # noqa: S307 (our own list)
            assert obj is not None, f"np.{name} (listed as {reason!r}) is not in this NumPy"
            try:
                assert obj not in R.PRIMITIVES, f"np.{name} has a rule: take it off NO_DERIVATIVE"
            except TypeError:
                pass
    cov = gen.coverage(R)
    for label, table in cov.items():
        names = [n for status in table.values() for n, _ in status]
        assert len(names) == len(set(names)), label
    rules = {p for variants in R.PRIMITIVES.values() for p in (v.path for v in variants.values())}
    listed = {n for table in cov.values() for n, _ in table["rule"]}
    for path in rules:
        if path.startswith("np.") and path.count(".") <= 2 and path in _public(np):
            assert path in listed, path


def _public(np):
    out = set()
    for label, mod in (("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft)):
        out |= {f"{label}.{n}" for n in getattr(mod, "__all__", ())}
    return out
