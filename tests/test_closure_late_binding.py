"""A local def or lambda reads the variables it captures when it is *called* (Python's
closures bind late), while the gradient of what it read goes to the variables' adjoints
where it was *defined*. A variable bound again, or a container changed in place, between
the two gave a silently wrong gradient (1 where it is 4, None, 0...): such a program is
now refused (passes/reverse/closures.py), with the line and the way out, where the local
function is called as a closure; called directly after its def, it is inlined and right. A lambda made in
a comprehension with the comprehension's variable as a default failed with a NameError
from generated code (the default was not renamed with the variable): now right; one that
reads the variable when it runs is refused."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.passes import inline


def rebound_after_def(x):
    y = x
    def g():
        return y
    y = x * x
    return g()


def parameter_rebound_after_def(x):
    def g():
        return x
    x = x * x
    return g()


def dict_item_written_after_def(x):
    d = {"k": 1.0}
    def g():
        return d["k"]
    d["k"] = x * x
    return g()


def list_item_written_after_def(x):
    l = [x]
    def g():
        return l[0]
    l[0] = 3.0
    return g()


def list_appended_after_def(x):
    l = []
    def g():
        return l[0]
    l.append(x * x)
    return g()


def lambda_rebound_after_def(x):
    y = x
    g = lambda t: t * y
    y = x * x
    return g(2.0)


def rebound_at_the_end_of_a_loop(x):
    y = x
    def g():
        return y
    s = 0.0
    for _ in range(2):
        s = s + g()
        y = y * x
    return s


def rebound_in_a_branch(x):
    y = x
    def g():
        return y
    if x > 0:
        y = x * x
    return g()


def called_through_another_name(x):
    y = x
    def g():
        return y
    h = g
    y = x * x
    return h()


def called_by_another_local_function(x):
    y = x
    def g():
        return y
    def h():
        return g() * 2.0
    y = x * x
    return h()


def handed_on_then_rebound(x):
    y = x
    def g():
        return y
    fs = [g]
    y = x * x
    return fs[0]()


def appended_by_another_local_function(x):
    buf = [x]
    def add(v):
        buf.append(v)
    def total():
        return sum(buf)
    add(x * x)
    return total()


REFUSED = [
    rebound_after_def,
    parameter_rebound_after_def,
    dict_item_written_after_def,
    list_item_written_after_def,
    list_appended_after_def,
    lambda_rebound_after_def,
    rebound_at_the_end_of_a_loop,
    rebound_in_a_branch,
    called_through_another_name,
    called_by_another_local_function,
    handed_on_then_rebound,
    appended_by_another_local_function,
]


# called where they are defined, most of them are inlined (passes/inline.py): the inlined
# body reads the variables when it runs, as the closure would, and the gradient is right
# (a local function called by another one too, both inlined where the outer one is called)
STILL_CALLED = [called_through_another_name, handed_on_then_rebound]


@pytest.fixture
def not_inlined():
    """The transform without inlining: every local function stays a closure, called."""
    inline.ENABLED[0] = False
    ad.refresh()
    yield
    inline.ENABLED[0] = True
    ad.refresh()


@pytest.mark.parametrize("f", REFUSED, ids=lambda f: f.__name__)
def test_refused_with_the_line(f, not_inlined):
    with pytest.raises(ad.AdjointError) as info:
        ad.gradient(f, 2.0)
    msg = str(info.value)
    assert "local function" in msg and "line" in msg and "as an argument" in msg


@pytest.mark.parametrize("f", STILL_CALLED, ids=lambda f: f.__name__)
def test_refused_with_the_line_when_called_as_a_closure(f):
    with pytest.raises(ad.AdjointError) as info:
        ad.gradient(f, 2.0)
    assert "local function" in str(info.value)


@pytest.mark.parametrize("f", [f for f in REFUSED if f not in STILL_CALLED], ids=lambda f: f.__name__)
def test_inlined_where_called_and_right(f):
    x = 2.0
    assert "# (inlined" in ad.show_adjoint(f, x)
    y, pb = ad.pullback(f, x)
    assert y == f(x)
    assert pb(1.0)[0] == pytest.approx((f(x + 1e-6) - f(x - 1e-6)) / 2e-6, rel=1e-6, abs=1e-8)


# the same shapes where the definition and the call see the same value: allowed, right


def changed_before_def(x):
    y = x
    y = x * x
    d = {"k": 1.0}
    d["k"] = y
    def g():
        return d["k"] + y
    return g()


def called_before_the_change(x):
    y = x
    def g():
        return y * 3.0
    s = g()
    y = x * x
    return s + y


def defined_again_in_each_iteration(x):
    y = x
    s = 0.0
    for _ in range(3):
        def g():
            return y * y
        s = s + g()
        y = y * x
    return s


def uncaptured_name_rebound(x):
    y = x
    z = x
    def g():
        return y * 2.0
    z = z * x
    return g() + z


def default_keeps_the_value(x):
    y = x
    def g(y=y):
        return y
    y = x * x
    return g() + y


def lambda_default_in_comprehension(x):
    fs = [lambda v, k=k: v * k for k in range(3)]
    return fs[1](x) + fs[2](x * x)


# a local function that changes a list it captures: its pullback keeps the list's gradient
# by object (runtime put_items), taken where the function is made (it was lost: the
# gradient of the items the function read, or of the first call's append, was missing)


def make_accumulator(init):
    buf = [init]
    def add(v):
        buf.append(v)
        return sum(buf)
    return add


def factory_closure_appends(x):
    add = make_accumulator(x)
    add(x * x)
    return add(3.0)


def local_closure_appends_twice(x):
    buf = [x]
    def add(v):
        buf.append(v)
        return sum(buf)
    add(x * x)
    return add(3.0)


def local_closure_appends_once(x):
    buf = [x]
    def add(v):
        buf.append(v)
        return sum(buf)
    return add(x * x)


def list_read_between_the_calls(x):
    buf = [x]
    def add(v):
        buf.append(v)
        return sum(buf)
    add(x * x)
    s = buf[1] * 3.0
    return add(3.0) + s


ALLOWED = [
    factory_closure_appends,
    local_closure_appends_twice,
    local_closure_appends_once,
    list_read_between_the_calls,
    changed_before_def,
    called_before_the_change,
    defined_again_in_each_iteration,
    uncaptured_name_rebound,
    default_keeps_the_value,
    lambda_default_in_comprehension,
]


@pytest.mark.parametrize("f", ALLOWED, ids=lambda f: f.__name__)
def test_allowed_and_right(f):
    x, h = 1.3, 1e-6
    y, pb = ad.pullback(f, x)
    assert y == pytest.approx(f(x))
    (g,) = pb(1.0)
    fd = (f(x + h) - f(x - h)) / (2 * h)
    assert g == pytest.approx(fd, rel=1e-5, abs=1e-6)


def lambda_reads_the_comprehension_variable(x):
    fs = [lambda v: v * k for k in range(3)]
    return fs[1](x)


def test_comprehension_variable_read_late_refused():
    with pytest.raises(ad.AdjointError, match=r"late binding.*line \d+.*k=k"):
        ad.gradient(lambda_reads_the_comprehension_variable, 2.0)


def test_array_closure_read_after_a_method_that_only_reads():
    def f(w):
        def g(t):
            return np.sum(w * t)
        s = w.sum()
        return g(2.0) + s

    w = np.array([0.5, -1.0, 2.0])
    (g,) = ad.gradient(f, w)
    np.testing.assert_allclose(g, np.full(3, 3.0))


def lambdas_kept_in_a_loop(x):
    fs = []
    for i in range(3):
        y = x * i
        fs.append(lambda: y)
    return fs[0]()


def test_a_function_kept_then_its_variable_rebound_is_refused():
    # Python: every lambda reads the last y (2x); the gradient went to each iteration's y
    with pytest.raises(ad.AdjointError, match="handed on"):
        ad.gradient(lambdas_kept_in_a_loop, 2.0)


def sorted_by_a_closure_then_rebound(x):
    w = x
    key = lambda t: t * w
    ys = sorted([x, 2.0 * x, -x], key=key)
    w = x * x
    return ys[0] * w


def test_a_function_only_called_by_sorted_is_not_watched():
    x, h = 1.3, 1e-6
    f = sorted_by_a_closure_then_rebound
    (g,) = ad.gradient(f, x)
    assert g == pytest.approx((f(x + h) - f(x - h)) / (2 * h), rel=1e-5)
