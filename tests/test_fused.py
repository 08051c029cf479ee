"""The fused value-and-gradient function of gradient's fast path (adjoint_s2s/fuse.py).

A cached ``gradient`` call runs one function, the pair's forward lines then its
pullback's lines seeded with 1.0, where fuse.py finds that safe. These tests check that
it gives what the pair and its pullback give (bit for bit), that the value is the plain
call's, finite differences, that it is used where it should be and declined where it must
be, and that whatever drops a pair drops its fused form.
"""
import math
import os
import subprocess
import sys
import textwrap
import traceback

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import api, emit, fuse, runtime
from adjoint_s2s.kinds import LIBRARY
from adjoint_s2s.testing import numerical_gradient

from . import corpus_funcs as C


# ----- functions (in this file: the transformer reads their source) ---------------------------


def straight(x, y):
    a = math.sin(x) * y + 0.5 * x * x
    b = math.exp(-0.1 * a) * math.cos(y)
    return a * b - 3.0 * x + y / (1.0 + x * x)


def loop_tape(x):
    # the pullback restores x from the tape: the value must be taken before it runs
    for _ in range(7):
        x = 0.9 * x + 0.1 * math.sin(x)
    return x


def branches(x, y):
    if x > y:
        z = x * y
    else:
        z = x - y * y
    return z * z


def while_loop(x):
    i = 0
    s = x
    while i < 4:
        s = s * x + 0.5
        i += 1
    return s


def early_return(x):
    if x > 1.0:
        return x * x
    y = x * 3.0
    return y * math.sin(y)


def _helper(t, u):
    return t * math.cos(u) + u


def calls_helper(x, y):
    return _helper(x, y) * _helper(y, x)


def nested_closure(x):
    def g(t):
        return t * x + 1.0

    s = 0.0
    for k in range(3):
        s = s + g(s + x)
    return s * 1.0


def list_writes(x, y):
    lst = [x, y, 1.0]
    lst[0] = lst[0] * y
    lst[2] = lst[0] + lst[1]
    s = 0.0
    for v in lst:
        s = s + v * x
    return s


def array_argument(a, x):
    b = a * x
    b[0] = 0.0
    s = 0.0
    for i in range(3):
        s = s + x * x
    return s + 0.0 * x


def augmented(x, y):
    z = x
    for k in range(3):
        z = z * y
        z += x
    return z


def unused_closure(x):
    def g(t):
        return t * 2.0

    y = x * x
    return y * 3.0


def constant(x):
    return 1.0


def cube(x):
    return x * x * x


def d_cube(x):
    return ad.gradient(cube, x)[0]


def log_times(x):
    y = x * 2.0
    return math.log(y) * y


def complex_result(x):
    return x * 1j


def tuple_result(x):
    return x * x, x


SCALE = 2.0


def uses_global(x):
    return SCALE * x * x


def _leaf(x):
    return x * x


def uses_leaf(x):
    return _leaf(x) + x


# ----- helpers --------------------------------------------------------------------------------


def fused_of(f, args):
    """The fused function gradient's cache holds for f at args (after two calls)."""
    hit = f.__adjoint_pairs__[tuple(map(type, args))]
    return hit[4] if len(hit) > 4 else None


def entry_of(f, args):
    hit = f.__adjoint_pairs__[tuple(map(type, args))]
    return next(e for es in emit._CACHE.get(f.__code__).values() for e in es
                if e.code is hit[1].__code__)


def both(f, *args):
    """(the pair-based gradient, the gradient of a cached call): the second call of
    ``gradient`` finds the pair cached and runs the fused function when there is one."""
    want = api._gradient(f, *args)
    ad.gradient(f, *args)
    return want, ad.gradient(f, *args)


FUSED = [
    (straight, (0.7, 1.3)),
    (straight, (1, 2.0)),  # an int argument: gradients projected, still floats
    (loop_tape, (0.8,)),
    (branches, (2.0, 0.5)),
    (branches, (0.5, 2.0)),
    (while_loop, (0.9,)),
    (early_return, (1.5,)),
    (early_return, (0.5,)),
    (calls_helper, (0.3, 1.1)),
    (augmented, (1.1, 0.9)),
    (constant, (2.0,)),
    (cube, (1.5,)),
    (unused_closure, (1.5,)),
]


@pytest.mark.parametrize("f, args", FUSED, ids=lambda v: getattr(v, "__name__", str(v)))
def test_fused_gives_the_pairs_gradient_bit_for_bit(f, args):
    want, got = both(f, *args)
    assert fused_of(f, args) is not None, fuse.fused_of(entry_of(f, args))[1]
    assert repr(got) == repr(want)
    assert all(type(g) is float or (g is None and f is constant) for g in got)
    # the value under the fused function is the plain call's
    value, grads = fused_of(f, args)(*args)
    assert value == f(*args)
    num = numerical_gradient(f, *[float(a) for a in args])
    assert np.allclose([0.0 if g is None else g for g in got], num, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("f, args", [
    (nested_closure, (0.4,)),
    (list_writes, (1.5, 0.7)),
    (array_argument, (np.array([1.0, 2.0, 3.0]), 2.0)),
])
def test_functions_fused_or_not_give_the_same_gradient(f, args):
    want, got = both(f, *args)
    assert repr(got) == repr(want)


def test_the_benchmark_scalar_workloads_are_fused():
    # fails if gradient's fast path silently stops using the gradients-only form for them
    from bench import workloads as W

    for f, args in [(W.scalar_poly, (0.7, 1.3)), (W.scalar_loop, (0.7,))]:
        want, got = both(f, *args)
        key = tuple(map(type, args))
        hit = f.__adjoint_pairs__[key]
        fz, grads = hit[4], hit[5]
        assert fz is not None and fz.__name__ == f.__name__ + "_fused"
        assert grads is not None and grads.__name__ == f.__name__ + "_grads"
        assert got == want and grads(*args) == want and fz(*args)[1][1:] == want
        calls = []
        spy = lambda *a: calls.append(a) or grads(*a)  # noqa: E731
        # the memo of the last call (api._remember), then the dispatch cache's entry
        last = f.__adjoint_last__
        assert last[2] is grads and last[3] is fz
        f.__adjoint_last__ = last[:2] + (spy, fz) + last[4:]
        assert ad.gradient(f, *args) == want and calls == [args]
        del f.__adjoint_last__
        f.__adjoint_pairs__[key] = hit[:5] + (spy,) + hit[6:]  # (hit[-2:]: f's code, defaults)
        assert ad.gradient(f, *args) == want and calls == [args, args]
        assert f.__adjoint_last__[2] is spy
        f.__adjoint_pairs__[key] = hit
        del f.__adjoint_last__


def test_a_cached_call_checks_names_not_the_builtins_dict():
    # scalar_loop reads `range` and `math`: the module's __builtins__ (a dict) was in the
    # data guard, checked by a Python call at every gradient() call; what the code
    # assumed is that `range` is no global of the module (it is the builtin) and that
    # `math` is the module it was (tests/test_rebinding.py rebinds them), two identity
    # checks
    from bench import workloads as W

    # (and, one tuple comparison each, that the math module and the builtins hold the
    # math.sin and range it resolved: guards._library_guard)
    both(W.scalar_loop, 0.7)
    guard = W.scalar_loop.__adjoint_pairs__[(float,)][3]
    names = [item for item in guard if item[1] is not LIBRARY]
    assert sorted(item[0] for item in names) == ["math", "range"]
    assert all(item[1] is None for item in names)
    assert W.scalar_loop.__adjoint_last__[4] == tuple((item[0], item[2]()) for item in names)
    held = {item[0]: item[2][2] for item in guard if item[1] is LIBRARY}
    assert held == {"builtins": range, "math": math.sin}
    both(while_loop, 0.9)
    assert "__builtins__" not in [item[0] for item in while_loop.__adjoint_pairs__[(float,)][3]]


def test_the_corpus_fused_matches_the_pair_and_most_scalar_functions_fuse():
    from .test_corpus import ROWS

    fused = declined = 0
    for row in ROWS:
        mode, f, args, _ = row.values
        if mode != "grad" or row.marks:
            continue
        try:
            want = api._gradient(f, *args)
        except Exception as exc:  # the same error both ways
            with pytest.raises(type(exc)):
                ad.gradient(f, *args)
            continue
        ad.gradient(f, *args)
        got = ad.gradient(f, *args)
        assert repr(got) == repr(want), f.__name__
        hit = f.__adjoint_pairs__.get(tuple(map(type, args)))
        if hit is not None and len(hit) > 4 and hit[4] is not None:
            fused += 1
        else:
            declined += 1
    assert fused >= 90 and declined >= 1  # 111 of 217 when written


def test_declined_where_the_result_is_not_a_real_number():
    for f, args, words in [(complex_result, (0.5,), "complex"), (tuple_result, (0.5,), "other")]:
        with pytest.raises(TypeError):
            ad.gradient(f, *args)
        code, reason = fuse.fused_of(emit.entry_for(f, emit.cache_key(f, runtime.kinds_of(args))))
        assert code is None and words in reason
        with pytest.raises(TypeError):
            ad.gradient(f, *args)


def test_nested_gradient_keeps_working_through_the_plain_twin():
    assert both(cube, 2.0)[1] == (12.0,)
    want, got = both(d_cube, 2.0)
    assert got == want == (12.0,)
    assert d_cube(3.0) == 27.0


def test_an_error_is_the_pairs_error_and_its_traceback_shows_fused_lines():
    want, got = both(log_times, 1.0)
    assert got == want and fused_of(log_times, (1.0,)) is not None
    with pytest.raises(ValueError):
        api._gradient(log_times, -1.0)
    with pytest.raises(ValueError) as info:
        ad.gradient(log_times, -1.0)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert any(fr.filename.endswith("fused>") and "math.log(y)" in fr.line for fr in frames)


def test_refresh_drops_the_fused_function_with_the_pair():
    both(straight, 0.7, 1.3)
    first = fused_of(straight, (0.7, 1.3))
    assert first is not None
    ad.refresh()
    assert "__adjoint_pairs__" not in straight.__dict__
    want, got = both(straight, 0.7, 1.3)
    again = fused_of(straight, (0.7, 1.3))
    assert again is not None and again is not first and again.__code__ is not first.__code__
    assert got == want


def test_a_new_rule_drops_the_fused_function_of_its_callers():
    assert both(uses_leaf, 2.0)[1] == (5.0,)
    before = fused_of(uses_leaf, (2.0,))
    assert before is not None

    @ad.adjoint(_leaf)
    def leaf_rule(x):
        return x * x, lambda g: (10.0 * g,)

    assert ad.gradient(uses_leaf, 2.0) == (11.0,)
    assert ad.gradient(uses_leaf, 2.0) == (11.0,)
    after = fused_of(uses_leaf, (2.0,))
    assert after is not before


def test_a_global_read_when_the_code_runs_and_its_kind_guarded():
    global SCALE
    try:
        assert both(uses_global, 3.0)[1] == (12.0,)
        SCALE = 5.0  # the same kind: the same code, reading the new value
        assert ad.gradient(uses_global, 3.0) == (30.0,)
        SCALE = np.array(1.0)  # another kind: the guard fails, other code is made
        assert ad.gradient(uses_global, 3.0) == (6.0,)
    finally:
        SCALE = 2.0


def test_first_gradient_call_does_not_derive_the_fused_function():
    ad.refresh()
    ad.gradient(augmented, 1.1, 0.9)
    assert len(augmented.__adjoint_pairs__[(float, float)]) == 6  # (cells .. guard, code, defaults)
    ad.gradient(augmented, 1.1, 0.9)
    assert len(augmented.__adjoint_pairs__[(float, float)]) == 8  # the fused forms at 4, 5


def test_a_function_the_forward_lines_define_maps_to_the_users_line():
    both(unused_closure, 1.5)
    entry = entry_of(unused_closure, (1.5,))
    code, _ = fuse.fused_of(entry)
    fused_file = code.co_filename
    assert emit.ORIGINS[fused_file] == emit.ORIGINS[entry.filename]
    assert list(emit.ORIGINS[fused_file].values()) == [
        (__file__, unused_closure.__code__.co_firstlineno + 1)]


def test_fused_source_keeps_comments_and_adjoint_names():
    ad.gradient(straight, 0.7, 1.3)
    code, text = fuse.fused_of(entry_of(straight, (0.7, 1.3)))
    assert code is not None
    assert "def straight_fused(x, y):" in text
    assert "# a = math.sin(x) * y + 0.5 * x * x" in text
    assert "b_x" in text and "b_result" not in text  # the seed 1.0 folded (fold.py)
    assert "def straight_pullback" not in text and "_rt.real" not in text
    assert "return result, (None, b_x, b_y)" in text


def test_show_adjoint_fused_on_the_command_line(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent("""
        import math

        def f(x, y):
            return math.sin(x) * y

        def g(x):
            return x * 1j
    """))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.getcwd() + os.pathsep + env.get("PYTHONPATH", "")
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "adjoint_s2s", "show-adjoint", *a], cwd=tmp_path,
        capture_output=True, text=True, env=env)
    out = run("model:f", "--fused")  # float arguments: the gradients-only form
    assert out.returncode == 0, out.stderr
    assert "def f_grads(x, y):" in out.stdout and "return b_x, b_y" in out.stdout
    out = run("model:f", "--fused", "--types", "int,float")
    assert out.returncode == 0, out.stderr
    assert "def f_fused(x, y):" in out.stdout and "return result, (None, b_x, b_y)" in out.stdout
    out = run("model:g", "--fused")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("# no fused form (the result's kind is complex")
    assert "def g_pair(x):" in out.stdout


def test_show_adjoint_function_shows_the_fused_form():
    text = ad.show_adjoint(straight, 0.7, 1.3, fused=True)
    assert "def straight_fused(x, y):" in text


# ----- fuse.fuse on module texts: each way it declines, and the rewrites ------------------------

PAIR = """\
# generated by adjoint_s2s from f (test, line 1)
def make_f_pair(_rt, math):
    def f_pair(x):
{forward}
        def f_pullback({params}):
{pullback}
        return {value}, f_pullback
    return f_pair
"""


def module(forward, pullback, params="b_result, x=x", value="result"):
    ind = lambda s, n: textwrap.indent(textwrap.dedent(s).strip("\n"), " " * n)  # noqa: E731
    return PAIR.format(forward=ind(forward, 8), pullback=ind(pullback, 12), params=params,
                       value=value)


def run_both(text, *args):
    """(the pair then its pullback with 1.0, the fused function) of a module text."""
    ns = {}
    exec(compile(text, "<pair>", "exec"), ns)
    pair = ns["make_f_pair"](runtime, math)
    y, pb = pair(*args)
    fused = fuse.fuse(text, "f_pair", "real")
    ns = {}
    exec(compile(fused.source, "<fused>", "exec"), ns)
    return (y, pb(1.0)), ns["make_" + fused.name](runtime, math)(*args), fused.source


def test_defaults_that_read_each_other_are_bound_at_once():
    text = module(
        "a = x * 2.0\nb = x * 3.0\nresult = a * b",
        "b_x = b_result * a + 10.0 * b\nreturn (None, b_x)",
        params="b_result, a=b, b=a",
    )
    want, got, src = run_both(text, 1.5)
    assert got == want
    assert "a, b = b, a" in src


def test_returns_in_branches_and_nested_defs():
    text = module(
        "result = x * x",
        """
        def inner(t):
            return t + 1.0
        if x > 0.0:
            return (None, inner(b_result) * x)
        return None, -x
        """,
    )
    for x in (2.0, -2.0):
        want, got, src = run_both(text, x)
        assert got == want
    assert "return t + 1.0" in src  # the nested def keeps its own return
    assert "return result, (None, inner(b_result) * x)" in src
    assert "return result, (None, -x)" in src


def test_the_value_is_taken_before_the_pullback_rebinds_it():
    text = module(
        "_tape = [x]\nx = x * 3.0",
        "x = _tape[0]\nreturn (None, b_x * 3.0 if False else 3.0 * b_result)",
        params="b_x, _tape=_tape, x=x", value="x",
    )
    text = text.replace("b_x * 3.0 if False else 3.0 * b_result", "3.0 * b_x")
    want, got, src = run_both(text, 2.0)
    assert got == want == (6.0, (None, 3.0))
    assert "value = x" in src


@pytest.mark.parametrize("forward, pullback, params, words", [
    ("result = x\ng = lambda: x", "x = 1.0\nreturn (None, b_result)", "b_result, x=x",
     "a closure of the forward lines captures"),
    ("result = math.sin(x)", "math = 1.0\nreturn (None, b_result)", "b_result, x=x",
     "the forward lines read from outside"),
    ("result = len([x]) * x", "len = 1.0\nreturn (None, b_result)", "b_result, x=x",
     "the forward lines read from outside"),
    ("global G\nresult = x", "return (None, b_result)", "b_result", "global or nonlocal"),
    ("result = x", "s = '''a\nb'''\nreturn (None, b_result)", "b_result", "several lines"),
    ("result = x", "b_x = b_result", "b_result", "may end without a return"),
    ("if x > 9.0:\n    return x, None\nresult = x", "return (None, b_result)", "b_result",
     "a forward line returns"),
    ("result = x", "return (None, f_pullback)", "b_result", "named elsewhere"),
    ("result = x", "return (None, b_result)", "b_result, *rest", "a seed and defaults"),
])
def test_declined(forward, pullback, params, words):
    text = module(forward, pullback, params=params)
    with pytest.raises(fuse.Declined, match=words):
        fuse.fuse(text, "f_pair", "real")


def test_declined_when_the_pair_does_not_end_with_its_pullback():
    text = module("result = x", "return (None, b_result)").replace(
        "        return result, f_pullback", "        return result, None")
    with pytest.raises(fuse.Declined, match="does not end with"):
        fuse.fuse(text, "f_pair", "real")
    with pytest.raises(fuse.Declined, match="not a real number or an array"):
        fuse.fuse(module("result = x", "return (None, b_result)"), "f_pair", "complex")
    # an array's kind: fused, with the value tested before the pullback's lines
    fused = fuse.fuse(module("result = x", "return (None, b_result)"), "f_pair", "array")
    assert "if not _rt.real_scalar(result):" in fused.source
    with pytest.raises(fuse.Declined, match="no run time"):
        fuse.fuse(module("result = x", "return (None, b_result)").replace("(_rt, math)", "(math,)"),
                  "f_pair", "array")


def test_non_ascii_comments_keep_their_columns():
    text = module("# y = α * x\nresult = 2.0 * x",
                  "# y = α * x\nb_x = b_result * 2.0\nreturn (None, b_x)")
    want, got, src = run_both(text, 1.0)
    assert got == want and "# y = α * x" in src


# ----- random scalar programs: fused against the pair -------------------------------------------


def _expr(rng, names, depth=0):
    """A bounded real expression over names."""
    a, b = rng.choice(names), rng.choice(names)
    forms = [
        f"0.5 * {a} + 0.3 * math.sin({b})",
        f"{a} * math.tanh({b})",
        f"math.cos({a}) - 0.2 * {b}",
        f"{a} / (1.0 + {b} * {b})",
        f"0.7 * {a} * {b} - 0.1",
        f"math.exp(-0.5 * {a} * {a}) + {b}",
        f"_h({a}, {b})",
    ]
    e = rng.choice(forms)
    if depth < 1 and rng.random() < 0.3:
        e = f"({e}) * 0.5 + 0.25 * ({_expr(rng, names, depth + 1)})"
    return e


def _statements(rng, names, n, pad):
    out = []
    for _ in range(n):
        kind = rng.choice(["assign", "assign", "loop", "if", "while", "aug", "unpack", "ret"])
        new = f"t{len(names)}"
        v = rng.choice(names + [new]) if kind in ("assign", "unpack") else rng.choice(names)
        if kind == "assign":
            out.append(f"{pad}{v} = {_expr(rng, names)}")
        elif kind == "loop":
            out.append(f"{pad}for k in range({rng.randint(1, 4)}):")
            out.append(f"{pad}    {v} = {_expr(rng, names)}")
        elif kind == "if":
            out.append(f"{pad}if {rng.choice(names)} > {rng.uniform(-0.5, 0.5):.2f}:")
            out.append(f"{pad}    {v} = {_expr(rng, names)}")
            out.append(f"{pad}else:")
            out.append(f"{pad}    {v} = {_expr(rng, names)}")
        elif kind == "while":
            out.append(f"{pad}i = 0")
            out.append(f"{pad}while i < {rng.randint(1, 3)}:")
            out.append(f"{pad}    {v} = {_expr(rng, names)}")
            out.append(f"{pad}    i += 1")
        elif kind == "aug":
            out.append(f"{pad}{v} {rng.choice(['+=', '*=', '-='])} {_expr(rng, names)}")
        elif kind == "unpack":
            w = rng.choice(names)
            out.append(f"{pad}{v}, {w} = {_expr(rng, names)}, {_expr(rng, names)}")
        else:
            out.append(f"{pad}if {rng.choice(names)} > 0.9:")
            out.append(f"{pad}    return {_expr(rng, names)}")
        if v == new:
            names.append(v)
    return out


def random_program(rng, name):
    names = ["x", "y"]
    lines = [f"def {name}(x, y):"] + _statements(rng, names, rng.randint(2, 7), "    ")
    lines.append(f"    return {_expr(rng, names)} + 0.1 * {rng.choice(names)}")
    return "\n".join(lines) + "\n"


def test_random_scalar_programs_fused_equal_the_pair(tmp_path):
    import importlib.util
    import random

    rng = random.Random(20261124)
    count = 60
    text = "import math\n\n\ndef _h(a, b):\n    return a * math.cos(b) + 0.1 * b\n\n\n"
    text += "\n\n".join(random_program(rng, f"p{i}") for i in range(count))
    path = tmp_path / "fused_programs.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("fused_programs", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fused = 0
    for i in range(count):
        f = getattr(mod, f"p{i}")
        args = (rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0))
        want = api._gradient(f, *args)
        ad.gradient(f, *args)
        got = ad.gradient(f, *args)
        assert repr(got) == repr(want), (i, got, want)
        fz = fused_of(f, args)
        if fz is not None:
            fused += 1
            assert fz(*args)[0] == f(*args)
    assert fused >= count * 9 // 10, fused  # all 60 when written
