"""passes/linetokens.py: the names of generated lines, memoised, and the tokens the
clean-ups record for the lines they make without tokenising them again.

A recorded token list that differed from the line's own would let a clean-up count a
name wrong (a fold of a temporary read twice): every one the transformer records while
it generates the corpus, mutation and golden functions is checked against a fresh
tokenisation here."""
import pytest

from adjoint_s2s import emit, runtime, transform
from adjoint_s2s.passes import cleanup, linetokens
from tests import test_corpus, test_mutation
from tests.golden.functions import CASES


def _fresh(line):
    """tokens(line) from a table of its own (nothing recorded in it)."""
    return linetokens._TokenTable()[line]


def test_tokens_of_plain_lines_comments_and_strings():
    tokens = linetokens.tokens
    assert tokens("b_x = b_x + b_v1 * math.cos(x)") == ("b_x", "b_x", "b_v1", "math", "x")
    assert tokens("v = 0.5 * x1 + 1e-3 * y") == ("v", "x1", "y")
    assert tokens("# v0 = x * y") == ()
    assert tokens("s = 'a b' + t  # c d") == ("s", "t")
    assert tokens("    a.b = c[d]") == ("a", "c", "d")


def test_the_table_is_bounded_and_cleared(monkeypatch):
    monkeypatch.setattr(linetokens, "_TOKENS_MAX", 4)
    table = linetokens._TokenTable()
    for i in range(10):
        assert table[f"a{i} = b{i}"] == (f"a{i}", f"b{i}")
        assert len(table) <= 4
    table.cache_clear()
    assert not table


def test_known_tokens_skips_lines_with_strings_or_comments():
    linetokens._TOKENS.cache_clear()
    linetokens.known_tokens("x = 'y'", ("wrong",))
    linetokens.known_tokens("x = y  # z", ("wrong",))
    assert linetokens.tokens("x = 'y'") == ("x",)
    assert linetokens.tokens("x = y  # z") == ("x", "y")


def _rows():
    for p in test_corpus.ROWS:
        yield p.id, p.values[1], runtime.kinds_of(p.values[2])
    for p in test_mutation.ROWS:
        yield p.id, p.values[0], runtime.kinds_of(p.values[1])
    for fn, kinds in CASES:
        yield fn.__name__, fn, kinds


def test_recorded_tokens_are_the_lines_own(monkeypatch):
    recorded, wrong = [], []
    original = linetokens.known_tokens

    def checked(line, toks):  # (an error raised here would read as a refusal: noted)
        recorded.append(line)
        if toks != _fresh(line):
            wrong.append((line, toks))
        original(line, toks)

    monkeypatch.setattr(cleanup, "known_tokens", checked)
    emit.refresh()
    try:
        for _name, fn, kinds in _rows():
            try:
                emit.source_of(fn, kinds)
            except Exception:  # a refusal: nothing to check
                pass
    finally:
        emit.refresh()
    assert not wrong
    assert len(recorded) > 500  # (renames, folds and dropped parentheses all met)


@pytest.mark.parametrize("whole", [True, False], ids=["whole", "one_operation_each"])
@pytest.mark.parametrize("n", [10, 40])
def test_recorded_tokens_of_straight_line_code(monkeypatch, tmp_path, n, whole):
    import importlib.util
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "bench"))
    try:
        import workloads as W
    finally:
        sys.path.pop(0)
    path = tmp_path / f"straight_{n}.py"
    path.write_text("import math\n\n\n" + W.straight_line_source(n))
    spec = importlib.util.spec_from_file_location(f"straight_{n}_tokens", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    seen, wrong = [], []

    def checked(line, toks):
        seen.append(line)
        if toks != _fresh(line):
            wrong.append((line, toks))
        linetokens.known_tokens(line, toks)

    monkeypatch.setattr(cleanup, "known_tokens", checked)
    if not whole:  # (the clean-up folds a statement of each operation back: most tokens recorded)
        monkeypatch.setattr(transform, "_numbers", lambda *args: None)
    emit.refresh()
    try:
        emit.entry_for(mod.straight, runtime.kinds_of((0.7, 1.3)))
    finally:
        emit.refresh()
    assert (seen or whole) and not wrong
