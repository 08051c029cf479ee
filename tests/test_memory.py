"""Memory: differentiating functions from many files does not leave memory behind.

Each function differentiated used to leave its generated source in linecache, the parsed
tree of its file and its cache entries for good (about 13 KB per file). Now an entry
goes with the function's code object, the generated lines go with the last generated
code object alive, the parsed files are a small most-recently-used set, and refresh()
drops all of it.
"""
import gc
import importlib.util
import linecache
import sys
import traceback
import tracemalloc

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import emit, source

N = 120
TEXT = (
    "import numpy as np\n"
    "C = {i}.0\n"
    "\n"
    "\n"
    "def f(x):\n"
    "    y = x * C + np.sin(x) * {i}.5\n"
    "    return np.sum(y * y)\n"
)


def _module(path, name, i):
    path.write_text(TEXT.format(i=i))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _differentiate_many(tmp_path, start, n=N):
    for i in range(start, start + n):
        mod = _module(tmp_path / f"mem_{i}.py", f"adjoint_s2s_mem_{i}", i)
        ad.gradient(mod.f, np.ones(3))
        del mod
    gc.collect()


def _clear_bounded_memos():
    """The passes memoise token lists and templates, and keep the last few parsed files,
    in bounded tables: empty them so that only what grows with the number of functions
    is measured. The interpreter's attribute cache also holds the last few thousand
    attribute names looked up (the passes look up `visit_<node>` names): emptied too, or
    whatever ran before this test decides how much of that cache turns over here."""
    for memo in getattr(emit, "_MEMOS", ()):
        memo.cache_clear()
    getattr(source, "forget_sources", lambda: None)()
    sys._clear_type_cache()


def _sizes():
    return len(linecache.cache), len(emit._CACHE), len(emit.ORIGINS), len(source._TREES)


def _lines_kept():
    return set(linecache.cache)


def _measure(tmp_path, start, after):
    _differentiate_many(tmp_path, start, 10)  # warm up the one-off tables
    _clear_bounded_memos()
    gc.collect()
    sizes = _sizes()
    kept = _lines_kept()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        _differentiate_many(tmp_path, start + 10)
        assert len(source._TREES) <= getattr(source, "_KEEP_TREES", 16)  # a few parsed files
        after()
        _clear_bounded_memos()
        gc.collect()
        # linecache's own table is left out: whether it is resized here depends on how
        # many files ran before (its entries are checked by _sizes and _lines_kept)
        table = [tracemalloc.Filter(False, linecache.__file__)]
        diff = tracemalloc.take_snapshot().filter_traces(table).compare_to(
            before.filter_traces(table), "lineno")
        grown = sum(s.size_diff for s in diff)
        largest = "\n".join(str(s) for s in sorted(diff, key=lambda s: -s.size_diff)[:8])
    finally:
        tracemalloc.stop()
    return sizes, _lines_kept() - kept, grown, largest


@pytest.mark.parametrize("after", ["gc", "refresh"])
def test_functions_from_many_files_leave_no_memory(tmp_path, after):
    sizes, new_lines, grown, largest = _measure(
        tmp_path, 0 if after == "gc" else 1000, ad.refresh if after == "refresh" else gc.collect
    )
    now = _sizes()
    assert now[0] <= sizes[0]  # linecache: neither the generated nor the user's lines stay
    assert not new_lines, sorted(new_lines)[:5]
    assert now[1] <= sizes[1]  # cache entries go with their code objects
    assert now[2] <= sizes[2]  # generated-line origins go with the generated code
    # about 13 KB per function before; now about 200 bytes, the file names tracemalloc
    # itself keeps for the frames it traced, plus the odd table resize
    assert grown < N * 1024, f"{grown / N:.0f} bytes left per function; largest:\n{largest}"


def test_refresh_keeps_the_lines_of_generated_code_still_alive():
    def scaled(x):
        return x * 3.0

    y, back = ad.pullback(scaled, 2.0)
    live = [name for name in linecache.cache if name.startswith("<adjoint_s2s: ") and "scaled" in name]
    assert live
    ad.refresh()
    gc.collect()
    # the pullback the user holds still runs generated code: its lines stay readable
    assert all(linecache.getlines(name) for name in live)
    assert back(1.0) == (3.0,)
    del back
    gc.collect()
    assert not any(linecache.getlines(name) for name in live)


def test_tracebacks_of_live_generated_code_show_generated_lines():
    def bad(x):
        return x

    def uses_bad(x):
        return bad(x) * 2.0

    ad.adjoint(bad)(lambda x: (x, lambda d: (d / 0.0,)))
    try:
        y, back = ad.pullback(uses_bad, 1.0)
        gc.collect()
        with pytest.raises(ZeroDivisionError) as err:
            back(1.0)
        text = "".join(traceback.format_exception(err.value))
        assert "uses_bad_pullback" in text
        assert "b_" in text  # the generated line itself is printed
    finally:
        from adjoint_s2s import rules

        rules.USER_RULES.pop(bad, None)
        rules.bump(bad)


def test_dropping_the_function_drops_its_entries(tmp_path):
    mod = _module(tmp_path / "mem_drop.py", "adjoint_s2s_mem_drop", 7)
    ad.gradient(mod.f, 1.5)
    code = mod.f.__code__
    assert code in emit._CACHE
    names = [n for n in linecache.cache if n.startswith("<adjoint_s2s: f #")]
    entry = emit.source_of(mod.f, (ad.runtime.KIND[float],))
    gname = entry.filename
    assert gname in linecache.cache
    del mod, code, entry
    sys.modules.pop("adjoint_s2s_mem_drop", None)
    gc.collect()
    assert gname not in linecache.cache
    assert gname not in emit.ORIGINS
    assert names  # (the function's lines were there while it lived)
