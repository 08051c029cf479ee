"""The cache of generated code: keyed weakly, invalidated by new rules, refresh()."""
import gc
import inspect
import linecache
import math
import traceback
import weakref

import pytest

import adjoint_s2s as ad
from adjoint_s2s import emit
from adjoint_s2s.runtime import kinds_of


def square_plus_sin(x):
    return x * x + math.sin(x)


def test_generated_code_is_reused():
    ad.gradient(square_plus_sin, 1.0)
    e1 = emit.entry_for(square_plus_sin, kinds_of((1.0,)))
    ad.gradient(square_plus_sin, 2.0)
    assert emit.entry_for(square_plus_sin, kinds_of((1.0,))) is e1


def test_specialised_on_argument_kinds():
    real = emit.entry_for(square_plus_sin, kinds_of((1.0,)))
    cplx = emit.entry_for(square_plus_sin, kinds_of((1.0j,)))
    assert real is not cplx and real.source != cplx.source


def test_a_rule_for_an_inlined_primitive_invalidates_exactly_its_dependents():
    def uses_exp(x):
        return math.exp(x) * 2.0

    def no_exp(x):
        return x * 3.0

    assert ad.gradient(uses_exp, 0.0) == (2.0,)
    other = emit.entry_for(no_exp, kinds_of((0.0,)))
    ad.adjoint(math.exp)(lambda x: (math.exp(x), lambda d: (100.0 * d,)))
    try:
        assert ad.gradient(uses_exp, 0.0) == (200.0,)  # no refresh() needed
        assert emit.entry_for(no_exp, kinds_of((0.0,))) is other  # untouched
    finally:
        from adjoint_s2s import rules

        rules.USER_RULES.pop(math.exp)
        rules.bump(math.exp)
    assert ad.gradient(uses_exp, 0.0) == (2.0,)


def test_replacing_a_rule_takes_effect():
    def k(x):
        return x

    def uses_k(x):
        return k(x) * 1.0

    ad.adjoint(k)(lambda x: (x, lambda d: (2.0 * d,)))
    assert ad.gradient(uses_k, 1.0) == (2.0,)
    ad.adjoint(k)(lambda x: (x, lambda d: (5.0 * d,)))
    assert ad.gradient(uses_k, 1.0) == (5.0,)


def test_refresh_clears_everything_and_is_harmless():
    ad.gradient(square_plus_sin, 1.0)
    ad.refresh()
    assert square_plus_sin.__code__ not in emit._CACHE
    assert ad.gradient(square_plus_sin, 1.0) == (2.0 + math.cos(1.0),)


def test_cache_is_weak_on_code_objects():
    ns = {}
    src = "def temp(x):\n    return x * 3.0\n"
    filename = "<adjoint_s2s test: weak cache>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), ns)
    fn = ns.pop("temp")
    assert ad.gradient(fn, 1.0) == (3.0,)
    ref = weakref.ref(fn.__code__)
    del fn, ns
    gc.collect()
    assert ref() is None


def test_generated_source_is_in_linecache_and_inspectable():
    entry = emit.entry_for(square_plus_sin, kinds_of((1.0,)))
    assert "".join(linecache.getlines(entry.filename)) == entry.source
    pair = emit.raw_pair_for(square_plus_sin, kinds_of((1.0,)))
    assert "def square_plus_sin_pair" in inspect.getsource(pair)


def test_errors_in_the_backward_pass_show_generated_lines():
    def bad_rule_user(x):
        return bad(x) * 2.0

    def bad(x):
        return x

    ad.adjoint(bad)(lambda x: (x, lambda d: (d / 0.0,)))
    with pytest.raises(ZeroDivisionError) as err:
        ad.gradient(bad_rule_user, 1.0)
    text = "".join(traceback.format_exception(err.value))
    assert "bad_rule_user_pullback" in text  # the generated frame is named and shown


# ----- the key: the identity of the code object, and what the code assumed of its globals ---

SAME_TEXT = "import numpy as np\nC = {c}\n\n\ndef f(x):\n    return np.sum(x * C)\n"


def _module_from(tmp_path, name, text):
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_equal_code_from_two_files_gets_two_entries(tmp_path):
    import numpy as np
    from adjoint_s2s.testing import numerical_gradient

    # the same text at the same line: the code objects compare equal in Python
    a = _module_from(tmp_path, "cache_same_a", SAME_TEXT.format(c="2.0"))
    b = _module_from(tmp_path, "cache_same_b", SAME_TEXT.format(c="np.array([1.0, 2.0, 3.0])"))
    assert a.f.__code__ == b.f.__code__ and a.f.__code__ is not b.f.__code__
    assert ad.gradient(a.f, 1.5) == (2.0,)
    assert ad.gradient(b.f, 1.5)[0] == pytest.approx(6.0)
    assert ad.gradient(a.f, 1.5) == (2.0,)
    x = np.array([0.5, -1.0, 2.0])
    for m in (b, a):
        assert np.allclose(ad.gradient(m.f, x)[0], numerical_gradient(m.f, x)[0])
    assert emit.source_of(a.f, kinds_of((1.5,))) is not emit.source_of(b.f, kinds_of((1.5,)))


def test_same_code_other_globals_dict_gets_its_own_entry(tmp_path):
    import types

    import numpy as np

    a = _module_from(tmp_path, "cache_globals_a", SAME_TEXT.format(c="2.0"))
    # one code object, two globals dicts: C a number in one, an array in the other
    g2 = dict(vars(a), C=np.array([1.0, 2.0, 3.0]))
    f2 = types.FunctionType(a.f.__code__, g2, "f")
    assert ad.gradient(a.f, 1.5) == (2.0,)
    assert ad.gradient(f2, 1.5)[0] == pytest.approx(6.0)
    assert ad.gradient(a.f, 1.5) == (2.0,)
    # globals that give the same facts share the generated code
    g3 = dict(vars(a), C=7.0)
    f3 = types.FunctionType(a.f.__code__, g3, "f")
    assert ad.gradient(f3, 1.5) == (7.0,)
    assert emit.source_of(f3, kinds_of((1.5,))) is emit.source_of(a.f, kinds_of((1.5,)))


def test_a_global_callee_is_part_of_the_key(tmp_path):
    import types

    text = "import math\n\n\ndef g(x):\n    return math.sin(x)\n\n\ndef f(x):\n    return g(x) * 2.0\n"
    a = _module_from(tmp_path, "cache_callee_a", text)
    other = dict(vars(a), g=math.exp)  # a primitive where the module has a Python function
    f2 = types.FunctionType(a.f.__code__, other, "f")
    assert ad.gradient(f2, 0.3)[0] == pytest.approx(2.0 * math.exp(0.3))
    assert ad.gradient(a.f, 0.3)[0] == pytest.approx(2.0 * math.cos(0.3))
    assert ad.gradient(f2, 0.3)[0] == pytest.approx(2.0 * math.exp(0.3))


def test_two_closures_of_one_code_with_other_captured_values():
    import numpy as np

    def make(c):
        def f(x):
            return np.sum(x * c)

        return f

    f_num, f_arr = make(2.0), make(np.array([1.0, 2.0, 3.0]))
    assert f_num.__code__ is f_arr.__code__
    assert ad.gradient(f_num, 1.5) == (2.0,)
    assert ad.gradient(f_arr, 1.5)[0] == pytest.approx(6.0)
    assert ad.gradient(make(5.0), 1.5) == (5.0,)
    # a new closure with a captured value of the same kind reuses the generated code
    assert emit.source_of(make(3.0), kinds_of((1.5,))) is emit.source_of(f_num, kinds_of((1.5,)))


def test_exec_functions_and_file_functions_do_not_share(tmp_path):
    import numpy as np

    a = _module_from(tmp_path, "cache_exec_a", SAME_TEXT.format(c="2.0"))
    text = SAME_TEXT.format(c="np.array([1.0, 2.0, 3.0])")
    filename = "<adjoint_s2s test: exec'd twin>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    try:
        ns = {}
        exec(compile(text, filename, "exec"), ns)
        assert ns["f"].__code__ == a.f.__code__
        assert ad.gradient(a.f, 1.5) == (2.0,)
        assert ad.gradient(ns["f"], 1.5)[0] == pytest.approx(6.0)
    finally:
        linecache.cache.pop(filename, None)


def test_one_key_function_everywhere():
    """The key of generated code is built in one place (emit.cache_key)."""
    import pathlib
    import re

    root = pathlib.Path(emit.__file__).parent
    for path in root.rglob("*.py"):
        if path.name == "emit.py":
            continue
        text = path.read_text()
        # the kinds of captured variables are appended to a key nowhere else
        assert not re.search(r"key \+= tuple\(.*_cell_kind", text), path
        assert "_default_kinds" not in text, path


def test_a_data_global_rebound_after_the_first_call(tmp_path):
    import numpy as np

    m = _module_from(tmp_path, "cache_rebound", SAME_TEXT.format(c="2.0"))
    assert ad.gradient(m.f, 1.5) == (2.0,)
    m.C = np.array([1.0, 2.0, 3.0])  # a notebook cell run again with other data
    assert ad.gradient(m.f, 1.5)[0] == pytest.approx(6.0)
    assert ad.pullback(m.f, 1.5)[1](1.0)[0] == pytest.approx(6.0)
    m.C = 5.0
    assert ad.gradient(m.f, 1.5) == (5.0,)
    m.C = 7  # an int: a number all the same, but of another type
    assert ad.gradient(m.f, 1.5) == (7.0,)


def test_a_module_reloaded_after_an_edit_is_transformed_from_its_new_text(tmp_path):
    import importlib
    import os
    import sys

    path = tmp_path / "cache_reloaded.py"
    path.write_text("def f(x):\n    return x * 2.0\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import cache_reloaded as m

        assert ad.gradient(m.f, 1.0) == (2.0,)
        path.write_text("def f(x):\n    return x * 5.0\n")
        os.utime(path, ns=(10**18, 10**18))  # a new stamp even on a coarse clock
        m = importlib.reload(m)
        assert ad.gradient(m.f, 1.0) == (5.0,)
        # the same when linecache holds the file (a traceback printed it, say)
        linecache.getlines(str(path))
        path.write_text("def f(x):\n    return x * 7.0\n")
        os.utime(path, ns=(2 * 10**18, 2 * 10**18))
        m = importlib.reload(m)
        assert ad.gradient(m.f, 1.0) == (7.0,)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("cache_reloaded", None)
