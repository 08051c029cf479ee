"""A local function of the differentiated function's own body (``def f(t, y): ...``
before the loop that calls it, the usual shape of an ODE right-hand side) is inlined
where it is called after its def, as module-level helpers are (passes/inline.py): no
run-time dispatch, so kinds flow through it. A closure reads its captured variables
when it is called; the inlined body reads them at the same place, so a variable rebound
between the def and a call gives the same value and gradient. Local functions that may
not be inlined keep their calls, and their gradients stay right."""
import math

import numpy as np
import pytest

import adjoint_s2s as ad

from .source_modules import module_from_source

SOURCE = '''
import math
import numpy as np


def rk4(x):
    def f(t, y):
        return -y * x + math.sin(t)
    y, t, h = 1.0, 0.0, 0.1
    for _ in range(10):
        k1 = f(t, y)
        k2 = f(t + h / 2, y + h / 2 * k1)
        k3 = f(t + h / 2, y + h / 2 * k2)
        k4 = f(t + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += h
    return y


def augmented_in_a_loop(x):
    k = 0.5
    def h(t):
        return t * k + math.sin(k)
    s = 0.0
    for i in range(3):
        s += h(x)  # (an augmented assignment's call: inlined, k read at the call)
        k = k * 1.2
    return s


def rebound_between(x):
    k = 1.5
    def times_k(v):
        return v * k
    k = x * x  # the closure reads k when called: this value
    y = times_k(x)
    k = 5.0  # after the call: not seen
    return y + k


def reads_caller_target(x):
    z = x * 2.0
    def f(a):
        a = a * 3.0  # the parameter is assigned, and the body reads the caller's z too
        return a + z
    z = f(z)
    return z


def loop_carried(x):
    s = x
    def g(i):
        return s * i
    total = 0.0
    for i in range(4):
        s = s * x
        total = total + g(i)
    return total


def defined_in_branch(x):
    if x > 0:
        def f(v):
            return v * v
    else:
        def f(v):
            return -v
    return f(x) + 1.0


def defined_twice(x):
    def f(v):
        return v * 2.0
    a = f(x)
    def f(v):
        return v * v * x
    return a + f(x)


def appends(x):
    out = [x]
    def push(v):
        out.append(v)
        return v
    push(x * x)
    return out[0] * out[1]


def recursive(x):
    def p(v, n):
        if n == 0:
            return 1.0
        return v * p(v, n - 1)
    return p(x, 4)


def arrays(w):
    b = np.array([0.5, -0.25, 1.0])
    def layer(h):
        return np.tanh(h * w + b)
    h = w
    for _ in range(3):
        h = layer(h)
    return np.sum(h * h)


def rhs(t, y, x):
    return -y * x + math.sin(t)


def euler_global(x):
    y, t, h = 1.0, 0.0, 0.1
    for _ in range(10):
        y = y + h * rhs(t, y, x)  # a call inside an expression: hoisted, then inlined
        t += h
    return y


def euler_local(x):
    def f(t, y):
        return -y * x + math.cos(t) * y
    y, t, h = 1.0, 0.0, 0.1
    for _ in range(10):
        y = y + h * f(t, y)
        t += h
    return y


def two_in_one_line(x):
    def sq(v):
        return v * v
    return sq(x) + 3.0 * sq(x - 1.0)


def after_another_call(x):
    log = []
    def sq(v):
        return v * v
    return _note(log, x) + sq(x)  # _note (a Python function, kept) runs first: sq stays a call


def _note(log, v):
    log.append(v)
    return v


def conditional_calls(x):
    def sq(v):
        return v * v
    a = x > 0 and sq(x)
    b = sq(x) if x > 1 else -x
    c = sum([sq(v) for v in (x, 2.0 * x)])
    return a + b + c


def called_before_def(x):
    y = f(x)  # noqa: F821 - raises UnboundLocalError, as in the plain call
    def f(v):
        return v
    return y


def local_calls_local(k):
    def accel(th):
        return -k * math.sin(th)
    def step(th, om):
        om2 = om + 0.01 * accel(th)
        return th + 0.01 * om2, om2
    th, om = 1.0, 0.0
    for _ in range(30):
        th, om = step(th, om)
    return th


def local_calls_a_later_local(k):
    def step(th):
        return th + 0.1 * accel(th)  # accel: the caller's, bound by the time step runs
    def accel(th):
        return -k * math.sin(th)
    th = 1.0
    for _ in range(10):
        th = step(th)
    return th


def local_calls_rebound_capture(x):
    c = 2.0
    def scale(v):
        return v * c
    def twice(v):
        return scale(v) + scale(v * v)
    a = twice(x)
    c = x  # scale reads c when called: the new value below
    return a + twice(x)


def mutually_recursive(x):
    def even(v, n):
        return v if n == 0 else odd(v * 0.5, n - 1)
    def odd(v, n):
        return even(math.sin(v), n - 1) + 0.0
    return even(x, 4)
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    m = module_from_source(tmp_path_factory.mktemp("inline_local"), "inline_local_mod", SOURCE)
    yield m
    ad.refresh()


def _fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("name, x", [
    ("rk4", 0.7), ("rebound_between", 1.3), ("reads_caller_target", 0.9), ("loop_carried", 0.8),
    ("defined_in_branch", 0.6), ("defined_in_branch", -0.6), ("defined_twice", 1.1),
    ("appends", 0.7), ("recursive", 1.2), ("euler_global", 0.7), ("euler_local", 0.7),
    ("two_in_one_line", 0.8), ("after_another_call", 0.8), ("conditional_calls", 0.8),
    ("conditional_calls", 1.3), ("conditional_calls", -0.4), ("augmented_in_a_loop", 0.7),
    ("local_calls_local", 0.9), ("local_calls_a_later_local", 0.9), ("local_calls_rebound_capture", 0.8),
    ("mutually_recursive", 0.7),
])
def test_value_and_gradient_are_the_plain_calls(mod, name, x):
    f = getattr(mod, name)
    value, back = ad.pullback(f, x)
    assert value == pytest.approx(f(x), rel=1e-13)
    (g,) = back(1.0)
    assert g == pytest.approx(_fd(f, x), rel=1e-6, abs=1e-8)
    assert ad.gradient(f, x)[0] == pytest.approx(g, rel=1e-13)


def test_caller_variable_read_by_the_body_is_not_taken_over(mod):
    # f(z) assigned to z, f assigns its parameter and reads z: the parameter must not
    # become the caller's z (the body would read its own write): value 4z, not 6z
    assert ad.pullback(mod.reads_caller_target, 0.5)[0] == pytest.approx(4.0)
    assert ad.gradient(mod.reads_caller_target, 0.5)[0] == pytest.approx(8.0)


def test_rebound_capture_is_read_at_the_call(mod):
    x = 1.3
    assert ad.gradient(mod.rebound_between, x)[0] == pytest.approx(3 * x * x)


def test_arrays_through_an_inlined_local_layer(mod):
    w = np.array([0.3, -0.7, 1.1])
    (g,) = ad.gradient(mod.arrays, w)
    want = np.array([
        (mod.arrays(w + d) - mod.arrays(w - d)) / 2e-6 for d in np.eye(3) * 1e-6
    ])
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


def test_second_order_through_an_inlined_closure(mod):
    def first(x):
        return ad.gradient(mod.rk4, x)[0]

    x = 0.7
    want = (first(x + 1e-5) - first(x - 1e-5)) / 2e-5
    assert ad.gradient(first, x)[0] == pytest.approx(want, rel=1e-5)


def test_generated_code_inlines_and_does_not_dispatch(mod):
    text = ad.show_adjoint(mod.rk4, 0.7)
    assert text.count("# (inlined f)") == 4
    assert "_rt.call" not in text and "_rt.binop" not in text
    assert "dispatched at run time" not in text
    text = ad.show_adjoint(mod.arrays, np.ones(3))
    assert "# (inlined layer)" in text


@pytest.mark.parametrize("name", ["local_calls_local", "local_calls_a_later_local", "local_calls_rebound_capture"])
def test_a_local_function_calling_another_is_inlined_all_the_way(mod, name):
    # (step calling accel, both local, stayed a call: 72 to 340 times the plain call)
    text = ad.show_adjoint(getattr(mod, name), 0.7)
    assert "# (inlined " in text
    assert "_rt.call" not in text and "_rt.binop" not in text and "dispatched at run time" not in text


@pytest.mark.parametrize("name", ["defined_in_branch", "defined_twice", "appends", "recursive"])
def test_local_functions_that_are_not_inlined_keep_their_calls(mod, name):
    assert "# (inlined" not in ad.show_adjoint(getattr(mod, name), 0.7)


def test_a_call_before_the_def_raises_as_the_plain_call_does(mod):
    with pytest.raises(UnboundLocalError):
        mod.called_before_def(1.0)
    with pytest.raises(UnboundLocalError):
        ad.gradient(mod.called_before_def, 1.0)


def test_the_closure_is_still_defined_for_other_uses(mod):
    # the def stays in the generated code: rk4's f is the user's closure as before
    assert "def f(t, y):" in ad.show_adjoint(mod.rk4, 0.7)
    assert math.isfinite(ad.gradient(mod.rk4, 0.7)[0])


@pytest.mark.parametrize("name, times", [("euler_global", 1), ("euler_local", 1), ("two_in_one_line", 2)])
def test_calls_inside_expressions_are_inlined(mod, name, times):
    text = ad.show_adjoint(getattr(mod, name), 0.7)
    assert text.count("# (inlined ") == times
    assert "_rt.call" not in text and "_rt.binop" not in text


@pytest.mark.parametrize("name", ["after_another_call", "conditional_calls"])
def test_calls_that_run_after_another_or_on_some_paths_stay_calls(mod, name):
    assert "# (inlined" not in ad.show_adjoint(getattr(mod, name), 0.7)


def test_the_calls_in_a_calls_own_arguments_run_before_its_body_either_way(tmp_path):
    src = (
        "import math\n"
        "import numpy as np\n\n"
        "def f(x):\n"
        "    s = x\n"
        "    def g(z):\n"
        "        return z * s\n"
        "    s = s * 2.0\n"
        "    return g(float(np.tanh(x))) + g(math.sin(x))\n\n"
        "def walrus_first(x):\n"
        "    y = x\n"
        "    def g(z):\n"
        "        return z * y\n"
        "    return (y := x * 3.0) + g(x)\n"
    )
    m = module_from_source(tmp_path, "args_first", src)
    assert ad.show_adjoint(m.f, 0.7).count("# (inlined g)") == 2
    for x in (0.7, -0.4):
        assert ad.pullback(m.f, x)[0] == m.f(x)
        assert ad.gradient(m.f, x)[0] == pytest.approx(_fd(m.f, x), rel=1e-6)
    # the walrus runs before g: g is not taken out of the expression; called as a
    # closure after the walrus rebound what it reads, it is refused (closures.py)
    with pytest.raises(ad.AdjointError, match="local function `g`"):
        ad.gradient(m.walrus_first, 0.7)


HELPERS = '''
import math
import numpy as np


def act(z):
    return np.tanh(z)


def layer(h, w, b):
    return act(h * w + b)  # a helper calling a helper: both inlined


def model(w):
    h = w
    for _ in range(3):
        h = layer(h, w, 0.5)
    return np.sum(h * h)


def even(n, x):
    return x if n == 0 else odd(n - 1, x) * 2.0


def odd(n, x):
    return x if n == 0 else even(n - 1, x) + 1.0


def mutual(x):
    return even(3, x)  # mutual recursion: called


def scaled(x, k=2.0, shift=0.0, label="s"):
    return k * x + shift


def keywords(x):
    a = scaled(x, shift=x * x, k=3.0)  # keywords out of order, values that call nothing
    b = scaled(x)  # constant defaults
    return a * b


def collect(x, into=[]):  # noqa: B006 - a mutable default: never inlined
    return x * len(into)


def mutable_default(x):
    return collect(x) + x


def keyword_calls(x):
    return scaled(x, shift=math.sin(x))  # a keyword value that calls: called


def local_defaults(x):
    c = x * 2.0
    def f(t, k=3.0):
        return t * k + c
    def g(t, k=c):  # made when the def ran: called
        return t * k
    return f(x) + f(x, k=x) + g(x)
'''


@pytest.fixture(scope="module")
def helpers(tmp_path_factory):
    m = module_from_source(tmp_path_factory.mktemp("inline_helpers"), "inline_helpers_mod", HELPERS)
    yield m
    ad.refresh()


def _check_scalar(f, x):
    y, back = ad.pullback(f, x)
    assert y == f(x)
    assert back(1.0)[0] == pytest.approx(_fd(f, x), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("name", ["mutual", "keywords", "mutable_default", "keyword_calls", "local_defaults"])
def test_helpers_with_keywords_defaults_and_recursion(helpers, name):
    for x in (0.7, -1.3):
        _check_scalar(getattr(helpers, name), x)


def test_a_helper_calling_a_helper_is_inlined_all_the_way(helpers):
    w = np.array([0.3, -0.7, 1.1])
    text = ad.show_adjoint(helpers.model, w)
    assert "(inlined layer, act)" in text or ("(inlined layer)" in text and "(inlined act)" in text), text
    assert "_pair(" not in text.split("def model_pair")[1]
    want = np.array([(helpers.model(w + e) - helpers.model(w - e)) / 2e-6 for e in np.eye(3) * 1e-6])
    np.testing.assert_allclose(ad.gradient(helpers.model, w)[0], want, rtol=1e-6, atol=1e-8)


def test_which_calls_bind_their_arguments_here(helpers):
    text = ad.show_adjoint(helpers.keywords, 0.7)
    assert text.count("(inlined scaled)") == 2
    assert "(inlined" not in ad.show_adjoint(helpers.mutable_default, 0.7)
    assert "(inlined" not in ad.show_adjoint(helpers.mutual, 0.7)
    assert "(inlined" not in ad.show_adjoint(helpers.keyword_calls, 0.7)
    text = ad.show_adjoint(helpers.local_defaults, 0.7)
    assert text.count("(inlined f)") == 2 and "(inlined g)" not in text


def test_each_line_of_inlined_calls_is_named_once(tmp_path):
    src = (
        "def f(v):\n"
        "    return v * v\n\n"
        "def g(x):\n"
        "    y = f(x)\n"
        "    y = f(x)\n"
        "    return y + f(x) * f(2.0 * x)\n"
    )
    m = module_from_source(tmp_path, "twice", src)
    fwd = ad.show_adjoint(m.g, 0.7).split("def g_pullback")[0]
    assert fwd.count("# y = f(x)\n") == 2  # two lines of the same text: each named
    assert fwd.count("# return y + f(x) * f(2.0 * x)\n") == 1  # two calls of one line: once
    assert fwd.count("# (inlined f)") == 4
