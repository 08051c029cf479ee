"""Small helper functions inlined into their caller at transform time (issue 15,
passes/inline.py): the gradient is the plain call's, the generated code says which call
was inlined, and everything the inlined code rests on is checked like the caller's own
code (a callee redefined, a rule registered for it, a global it reads rebound). Helpers
that may not be inlined keep their calls."""
import linecache
import math
import sys
import types

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import rules
from adjoint_s2s.errors import UnsupportedSyntaxError
from adjoint_s2s.testing import numerical_gradient

SOURCE = '''
import math
import numpy as np

SCALE = 2.0


def step(theta, omega, k):
    """A docstring, dropped."""
    omega = omega - 0.01 * k * math.sin(theta)
    theta = theta + 0.01 * omega
    return theta, omega


def pendulum(k):
    theta = 1.0
    omega = 0.0
    for _ in range(30):
        theta, omega = step(theta, omega, k)
    return theta


def doubled(a):
    a = a * 2.0
    return a


def keeps_its_argument(x):
    y = doubled(x)  # the callee assigns its parameter: the caller's x is unchanged
    return x * y


def clash(x):
    y = 3.0
    return x * y + 1.0


def names_clash(x):
    y = x - 1.0
    x_clash = 0.5
    z = clash(y + x)  # the callee's y and x are not the caller's
    return z * y + x_clash * x


def scaled(x):
    return x * SCALE


def uses_scale(x):
    y = scaled(x)
    return y + 1.0


def branchy(x, n):
    s = 0.0
    for i in range(n):
        if x > 0:
            s = s + x * i
        else:
            s = s - x
    return s


def twice(x):
    a = branchy(x, 3)
    b = branchy(a, 2)
    branchy(b, 1)  # an expression statement: its value is dropped
    return a * b


def early(x):
    if x > 0:
        return x * x
    return -x


def with_default(x, c=3.0):
    return c * x


def by_keyword(x):
    return with_default(x=x, c=2.0)


def default_used(x):
    return with_default(x)


def comprehended(x):
    return sum([x * i for i in range(3)])


def calls_comprehended(x):
    y = comprehended(x)
    return y * 2.0


def calls_early(x):
    a = early(x)
    return a + early(-x)


def power(x, n):
    if n <= 1:
        return x
    return x * power(x, n - 1)


def calls_power(x):
    return power(x, 3)


def divide(a, b):
    c = a / b
    return c


def calls_divide(x):
    return divide(1.0, x - x)


def shadowing(x):
    math = 2.0  # the caller's own name: a callee reading the module `math` is not inlined
    y = step(x, 0.0, math)
    return y[0]


def appends(xs, v):
    xs.append(v * 2.0)
    return xs


def calls_appends(x):
    xs = [x]
    xs = appends(xs, x * x)
    return xs[0] + xs[1]


def swapper(p, q):
    p = p * 2.0
    return q, p


def swaps(x):
    y = x * x
    for _ in range(3):
        x, y = swapper(y, x)  # x's old value is read by the body after y is taken over
    return x + 3.0 * y


def twist(p, q):
    p = p + q
    q = q * p
    return p, q


def twists(x):
    a = x
    b = 0.5
    a, b = twist(a, a * 2.0)  # a is given twice: it is copied
    b, a = twist(b, a)  # b, a taken over; the items are assigned in turn
    return a * b


def arrays(w):
    v = np.tanh(w)
    return v * v


def calls_arrays(w):
    v = arrays(w)
    return np.sum(v * w)
'''


@pytest.fixture
def mod(tmp_path):
    path = tmp_path / "inline_mod.py"
    path.write_text(SOURCE)
    m = types.ModuleType("inline_mod")
    m.__file__ = str(path)
    exec(compile(SOURCE, str(path), "exec"), m.__dict__)
    sys.modules["inline_mod"] = m
    yield m
    sys.modules.pop("inline_mod", None)


def _close(f, *args, rel=1e-6):
    got = ad.gradient(f, *args)
    want = numerical_gradient(f, *args)
    for g, w in zip(got, want):
        if w is None or g is None:
            assert g is None and w is None or np.allclose(g if g is not None else 0.0, w or 0.0)
            continue
        assert np.allclose(g, w, rtol=rel, atol=1e-8), (g, w)
    return got


def _line(mod, text):
    return SOURCE.splitlines().index(text) + 1


@pytest.mark.parametrize(
    "name, args",
    [
        ("pendulum", (9.81,)),
        ("keeps_its_argument", (0.7,)),
        ("names_clash", (0.7,)),
        ("uses_scale", (0.7,)),
        ("calls_arrays", (np.array([0.3, -0.2, 0.9]),)),
        ("swaps", (0.7,)),
        ("twists", (0.7,)),
    ],
)
def test_inlined_helpers_give_the_plain_gradient(mod, name, args):
    f = getattr(mod, name)
    _close(f, *args)
    assert "# (inlined " in ad.show_adjoint(f, *args)
    assert "# (inlined " in ad.show_adjoint(f)  # the code for kinds known only at run time


def test_the_value_is_the_plain_call(mod):
    y, _ = ad.pullback(mod.names_clash, 0.7)
    assert y == mod.names_clash(0.7)
    assert ad.pullback(mod.keeps_its_argument, 0.7)[0] == mod.keeps_its_argument(0.7)


def test_the_generated_code_names_the_inlined_call(mod):
    text = ad.show_adjoint(mod.pendulum, 9.81)
    lines = [line.strip() for line in text.splitlines()]
    at = lines.index("# theta, omega = step(theta, omega, k)")
    assert lines[at + 1] == "# (inlined step)"
    assert "# omega = omega - 0.01 * k * math.sin(theta)" in lines  # the callee's lines
    assert "step_pair" not in text and "_rt.call" not in text


def test_an_expression_statement_and_two_sites(mod):
    _close(mod.twice, 0.8)
    _close(mod.twice, -0.8)
    assert ad.show_adjoint(mod.twice, 0.8).count("# (inlined branchy)") == 3


@pytest.mark.parametrize(
    "name, callee",
    [
        ("calls_early", "early"),  # an early return
        ("calls_comprehended", "comprehended"),  # a nested scope
        ("calls_power", "power"),  # recursion
        ("shadowing", "step"),  # a global of the callee is a local of the caller
        ("calls_appends", "appends"),  # a method call: maybe a write into an argument
    ],
)
def test_helpers_that_keep_their_calls(mod, name, callee):
    f = getattr(mod, name)
    _close(f, 0.6)
    _close(f, -0.6)
    assert f"(inlined {callee})" not in ad.show_adjoint(f, 0.6)


@pytest.mark.parametrize("name", ["by_keyword", "default_used"])
def test_keywords_and_constant_defaults_bind_as_the_call_would(mod, name):
    f = getattr(mod, name)
    _close(f, 0.6)
    _close(f, -0.6)
    assert "(inlined with_default)" in ad.show_adjoint(f, 0.6)


def test_a_redefined_callee_gets_the_caller_made_again(mod):
    first = _close(mod.pendulum, 9.81)
    mod.step = lambda theta, omega, k: (theta + 0.02 * omega, omega - 0.02 * k * theta)
    second = _close(mod.pendulum, 9.81)
    assert second != first
    assert ad.gradient(mod.pendulum, 9.81) == second  # the cached path, too


def test_a_rule_registered_for_the_callee_takes_effect(mod):
    _close(mod.uses_scale, 0.8)
    assert "(inlined scaled)" in ad.show_adjoint(mod.uses_scale, 0.8)
    ad.adjoint(mod.scaled)(lambda x: (mod.scaled(x), lambda d: (10.0 * d,)))
    try:
        assert ad.gradient(mod.uses_scale, 0.8)[0] == pytest.approx(10.0)
        assert "(inlined scaled)" not in ad.show_adjoint(mod.uses_scale, 0.8)
    finally:
        rules.USER_RULES.pop(mod.scaled)
        rules.bump(mod.scaled)
    assert _close(mod.uses_scale, 0.8)[0] == pytest.approx(2.0)


def test_a_global_the_inlined_callee_reads_is_guarded(mod):
    assert _close(mod.uses_scale, 0.7)[0] == pytest.approx(2.0)
    mod.SCALE = 5.0
    assert ad.gradient(mod.uses_scale, 0.7)[0] == pytest.approx(5.0)
    mod.SCALE = np.array([1.0, -2.0])
    got = ad.gradient(lambda x: np.sum(mod.uses_scale(x)), 0.7)[0]
    assert got == pytest.approx(-1.0)


def test_an_error_inside_the_inlined_callee_names_its_line(mod):
    """A run-time error in inlined code stops in the caller's generated code (as any error
    in generated code stops there), at a line under the callee's own line's comment."""
    with pytest.raises(ZeroDivisionError) as info:
        ad.gradient(mod.calls_divide, 0.5)
    last = list(_walk(info.value.__traceback__))[-1]
    gname = last.tb_frame.f_code.co_filename
    assert gname.startswith("<adjoint_s2s: calls_divide")
    text = linecache.getlines(gname)
    above = [line.strip() for line in text[: last.tb_lineno] if line.strip().startswith("#")]
    assert above[-1] == "# c = a / b" and "# (inlined divide)" in above


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_a_construct_refused_inside_the_callee_names_its_line(tmp_path):
    src = (
        "def pick(x):\n"
        "    s = {x, 2.0}\n"
        "    return max(s)\n"
        "\n"
        "\n"
        "def outer(x):\n"
        "    y = pick(x)\n"
        "    return y\n"
    )
    path = tmp_path / "inline_refused.py"
    path.write_text(src)
    m = types.ModuleType("inline_refused")
    m.__file__ = str(path)
    exec(compile(src, str(path), "exec"), m.__dict__)
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.gradient(m.outer, 3.0)
    assert info.value.lineno == 2 and str(path) in str(info.value)


def test_a_callee_writing_into_an_argument_or_calling_a_function_keeps_its_call(tmp_path):
    src = (
        "def fill(a, v):\n"
        "    a[0] = v\n"
        "    return v\n"
        "\n"
        "\n"
        "def calls_fill(a, v):\n"
        "    w = fill(a, v)\n"
        "    return w\n"
        "\n"
        "\n"
        "def outer(x):\n"
        "    a = [0.0, 1.0]\n"
        "    y = fill(a, x)\n"
        "    z = calls_fill([0.0, 1.0], x)\n"
        "    return y * a[0] + z\n"
    )
    path = tmp_path / "inline_writes.py"
    path.write_text(src)
    m = types.ModuleType("inline_writes")
    m.__file__ = str(path)
    exec(compile(src, str(path), "exec"), m.__dict__)
    text = ad.show_adjoint(m.outer, 0.7)
    assert "(inlined fill)" not in text and "(inlined calls_fill)" not in text
    assert ad.gradient(m.outer, 0.7)[0] == pytest.approx(2.0 * 0.7 + 1.0)
