"""Golden tests: the generated code of representative functions, as people read it.

A change to the generator shows up here as a diff to review. To accept new output:
    ADJOINT_S2S_REGEN=1 .venv/bin/python -m pytest tests/test_golden.py
"""
import ast
import os

import pytest

from adjoint_s2s import emit
from tests.golden.functions import CASES

HERE = os.path.join(os.path.dirname(__file__), "golden")


def generated(fn, kinds):
    text = emit.source_of(fn, kinds).source
    return text.split("\n", 1)[1]  # the first line names the file: it depends on the checkout


@pytest.mark.parametrize("fn, kinds", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_generated_source_matches_golden(fn, kinds):
    text = generated(fn, kinds)
    path = os.path.join(HERE, f"{fn.__name__}.py.txt")
    if os.environ.get("ADJOINT_S2S_REGEN") or not os.path.exists(path):
        with open(path, "w") as fh:
            fh.write(text)
    with open(path) as fh:
        assert text == fh.read(), f"generated code of {fn.__name__} changed (see {path})"


@pytest.mark.parametrize("fn, kinds", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_generated_source_is_readable_python(fn, kinds):
    text = generated(fn, kinds)
    tree = ast.parse(text)
    defs = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    assert f"{fn.__name__}_pair" in defs and f"{fn.__name__}_pullback" in defs
    assert "#" in text  # each primal statement is named in a comment
    for line in text.splitlines():
        assert len(line) < 200


_DUMP = """
import hashlib, sys
from adjoint_s2s import emit, runtime
from tests import test_corpus
h = hashlib.sha256()
for p in test_corpus.ROWS:
    fn, args = p.values[1], p.values[2]
    try:
        h.update(emit.source_of(fn, runtime.kinds_of(args)).source.encode())
    except Exception as e:
        h.update(type(e).__name__.encode())
print(h.hexdigest())
"""


def test_generated_code_does_not_depend_on_the_hash_seed():
    """The corpus's generated code, in two processes with different string hashing."""
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digests = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", _DUMP], cwd=root, env=env,
                             capture_output=True, text=True, check=True)
        digests.add(out.stdout.strip())
    assert len(digests) == 1
