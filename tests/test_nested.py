"""Advanced adjoints and nested differentiation (reverse over reverse)."""
import collections
import dataclasses
import math

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads

approx = pytest.approx


def d(f):
    """The derivative of a scalar function, as a function (nesting gradient)."""
    return lambda x: ad.gradient(f, x)[0]


def poly(x):
    return 3.0 * x ** 4 - 2.0 * x ** 3 + x


def loop_poly(x):
    y = 1.0
    for _ in range(3):
        y = y * x + 1.0  # x^3 + x^2 + x + 1
    return y


@pytest.mark.parametrize(
    "f, derivs, x",
    [
        (math.sin, [math.cos, lambda x: -math.sin(x), lambda x: -math.cos(x)], 0.7),
        (poly, [lambda x: 12 * x ** 3 - 6 * x ** 2 + 1, lambda x: 36 * x ** 2 - 12 * x, lambda x: 72 * x - 12], 1.3),
        (loop_poly, [lambda x: 3 * x ** 2 + 2 * x + 1, lambda x: 6 * x + 2, lambda x: 6.0], 0.4),
        (lambda x: math.exp(x) * math.sin(x), [
            lambda x: math.exp(x) * (math.sin(x) + math.cos(x)),
            lambda x: 2 * math.exp(x) * math.cos(x),
            lambda x: 2 * math.exp(x) * (math.cos(x) - math.sin(x))], 0.3),
    ],
    ids=["sin", "polynomial", "loop", "exp_sin"],
)
def test_first_second_third_derivatives_match_closed_forms(f, derivs, x):
    df = d(f)
    d2f = d(df)
    d3f = d(d2f)
    assert df(x) == approx(derivs[0](x), rel=1e-12)
    assert d2f(x) == approx(derivs[1](x), rel=1e-12)
    assert d3f(x) == approx(derivs[2](x), rel=1e-10)


def test_nested_closure_over_the_outer_variable():
    assert ad.gradient(lambda x: ad.gradient(lambda y: x * y ** 2, 1.0)[0], 3.0) == (2.0,)


def test_nested_through_a_user_adjoint():
    def cube(x):
        return x ** 3

    @ad.adjoint(cube)
    def _(x):
        return cube(x), lambda g: (3.0 * x * x * g,)

    assert d(d(cube))(2.0) == approx(12.0)


def test_nested_through_pullback_and_underscore_pullback():
    def inner(x):
        y, back = ad.pullback(lambda t: t * math.sin(t), x)
        return back(1.0)[0]

    def inner2(x):
        return ad._pullback(math.exp, x)[1](2.0)[1]

    assert ad.gradient(inner, 0.5)[0] == approx(2 * math.cos(0.5) - 0.5 * math.sin(0.5))
    assert ad.gradient(inner2, 0.5)[0] == approx(2 * math.exp(0.5))


def test_seed_reflection_nestlevel(capsys):
    def nestlevel():
        return 0

    @ad.adjoint(nestlevel)
    def _():
        return nestlevel() + 1, lambda _: None

    def f(x):
        print(nestlevel(), "levels of nesting")
        return x

    def grad(f, x):
        return ad.gradient(f, x)[0]

    f(1.0)
    grad(f, 1.0)
    grad(lambda x: x * grad(f, x), 1.0)
    grad(lambda x: x * grad(lambda y: y * grad(f, y), x), 1.0)
    assert capsys.readouterr().out.splitlines() == [
        "0 levels of nesting",
        "1 levels of nesting",
        "2 levels of nesting",
        "3 levels of nesting",
    ]


def test_isderiving_at_any_depth():
    seen = []

    def f(x):
        seen.append(ad.isderiving())
        return x * x

    f(1.0)
    ad.gradient(f, 1.0)
    ad.gradient(d(f), 1.0)
    assert seen == [False, True, True]


def test_seed_hooks_and_showgrad(capsys):
    assert ad.gradient(lambda a, b: ad.hook(lambda g: -g, a) * b, 2.0, 3.0) == (-3.0, 2.0)
    clip = lambda g: max(-1.0, min(1.0, g))  # noqa: E731 - gradient clipping
    assert ad.gradient(lambda a, b: ad.hook(clip, a) * b, 2.0, 3.0) == (1.0, 2.0)
    assert ad.gradient(lambda a, b: ad.showgrad(a) * b, 2.0, 3.0) == (3.0, 2.0)
    out = capsys.readouterr().out
    assert out.startswith("∂(a) = 3.0") and "test_nested.py:" in out


def test_showgrad_with_a_label(capsys):
    """The documented label, by position or keyword: printed, no gradient of its own (the
    rule returned one gradient for the two arguments: a RuleError after printing)."""
    by_position = lambda x: ad.showgrad(x * x, "sq") * 3.0  # noqa: E731
    by_keyword = lambda x: ad.showgrad(x * x, label="sq") * 3.0  # noqa: E731
    for f in (by_position, by_keyword):
        assert ad.gradient(f, 0.7) == approx((4.2,))
        assert capsys.readouterr().out == "∂(sq) = 3.0\n"
    assert ad.gradient(lambda x: ad.gradient(by_position, x)[0], 0.7) == approx((6.0,))


def test_seed_checkpoint_runs_forward_twice(capsys):
    def foo(x):
        print(x)
        return math.sin(x)

    assert ad.gradient(lambda x: ad.checkpoint(foo, x), 1.0) == approx((math.cos(1.0),))
    assert capsys.readouterr().out.split() == ["1.0", "1.0"]


def test_withgradient_and_auxiliary_outputs():
    val, grads = ad.withgradient(lambda x: x ** 2, 3.0)
    assert val == 9.0 and grads == (6.0,)
    (loss, aux), grads = ad.withgradient(lambda x: (x ** 2, "aux"), 3.0)
    assert loss == 9.0 and aux == "aux" and grads == (6.0,)


def test_jacobian_and_hessian_of_scalars():
    (j,) = ad.jacobian(lambda x: x ** 3, 2.0)
    assert j == approx(12.0)
    assert ad.hessian(lambda x: x ** 3 + math.sin(x), 0.5) == approx(3.0 - math.sin(0.5))
    assert ad.hvp(lambda x: x ** 4, 1.5, 2.0) == approx(12 * 1.5 ** 2 * 2.0)


def test_jacobian_of_a_vector_function():
    A = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    (j,) = ad.jacobian(lambda x: A @ x, np.array([0.5, -1.0]))
    assert j.shape == (3, 2) and np.allclose(j, A)


def test_second_derivative_through_a_default_value():
    def outer(x):
        def inner(s, a=x):
            return s * a * a * a
        return inner(1.0)

    assert d(outer)(2.0) == approx(12.0)
    assert d(d(outer))(2.0) == approx(12.0)


def test_third_derivative_through_a_default_value():
    def outer(x):
        def inner(s, a=x):
            return s * a * a * a
        return inner(1.0)

    assert d(d(d(outer)))(2.0) == approx(6.0)


def _by_differences(f, x, e=1e-4):
    return (f(x + e) - f(x - e)) / (2 * e)


def _captured_cube(x):
    inner = lambda s: s * x * x * x  # noqa: E731  (x captured, not passed)
    return inner(1.0)


def _captured_quartic(x):
    inner = lambda s: s * x * x * x * x  # noqa: E731
    return inner(1.0)


def _defaulted_cube(x):
    def inner(s, a=x):
        return s * a * a * a
    return inner(1.0)


def _gradient_of_a_closure(x):
    return x * ad.gradient(lambda y: x * y, 2.0)[0]  # x**2


def _gradient_of_a_closure_squared(x):
    return ad.gradient(lambda y: x ** 2 * y * y, 1.0)[0]  # 2 x**2


def _pullback_of_a_closure(x):
    inner = lambda y: x * x * x * y * y  # noqa: E731
    return ad.pullback(inner, 2.0)[1](1.0)[0]  # 4 x**3


def _underscore_pullback_of_a_closure(x):
    inner = lambda y: x * x * y * y  # noqa: E731
    return ad._pullback(inner, 2.0)[1](1.0)[1]  # 4 x**2


def _gradients_in_a_loop(x):
    s = 0.0
    for k in range(3):
        s = s + ad.gradient(lambda y: x * y * y * k, 1.0)[0]
    return s * x  # 6 x**2


@pytest.mark.parametrize("f, order", [
    (_captured_cube, 3),
    (_defaulted_cube, 3),
    (_captured_quartic, 4),
    (_gradient_of_a_closure, 2),
    (_gradient_of_a_closure_squared, 2),
    (_pullback_of_a_closure, 2),
    (_pullback_of_a_closure, 3),
    (_underscore_pullback_of_a_closure, 2),
    (_gradients_in_a_loop, 2),
])
def test_high_order_through_a_captured_variable(f, order):
    # the pair that _rt.call runs for a closure is bound to its captured cells and
    # defaults; a level that differentiates call_pair itself must hand the tangent of
    # that pair back to the closure (it was dropped: zero or half the derivative)
    lower = f
    for _ in range(order - 1):
        lower = d(lower)
    for x in (1.3, -0.7):
        assert d(lower)(x) == approx(_by_differences(lower, x), rel=1e-5, abs=1e-6)


def _default_beside_a_keyword(x):
    def inner(s, a=x, b=1.0):
        return s * a * a * b
    return inner(1.0, b=2.0)  # a takes its default, b is passed by keyword


def _keyword_only_default(x):
    def inner(s, *, a=x):
        return s * a * a
    return inner(1.0)


def _keyword_call_of_a_closure(x):
    def inner(s, a=1.0):
        return s * x * x * x * a
    return inner(1.0, a=2.0)


def _gradient_with_a_keyword(x):
    inner = lambda y, w=1.0: x * x * y * w  # noqa: E731
    return ad.gradient(inner, 2.0, w=x)[0]  # x**3


@pytest.mark.parametrize("f, order", [
    (f, n) for f in (_default_beside_a_keyword, _keyword_only_default, _keyword_call_of_a_closure)
    for n in (1, 2, 3)
] + [(_gradient_with_a_keyword, 1), (_gradient_with_a_keyword, 2)])
def test_defaults_and_captures_of_a_closure_called_with_keywords(f, order):
    # a call with keywords (or a keyword-only parameter left to its default) used to
    # drop the gradient of the defaults and, one level up, of the captured variables
    lower = f
    for _ in range(order - 1):
        lower = d(lower)
    x = 1.3
    assert d(lower)(x) == approx(_by_differences(lower, x), rel=1e-5, abs=1e-6)


class _Held(collections.namedtuple("_Held", "w")):
    def f(self, y):
        return self.w * self.w * y * y


@dataclasses.dataclass(frozen=True)
class _Frozen:
    w: float

    def f(self, y):
        return self.w * self.w * y * y

    def __call__(self, y):
        return self.w * self.w * y * y


class _Plain:
    def __init__(self, w):
        self.w = w

    def f(self, y):
        return self.w * self.w * y * y

    def __call__(self, y):
        return self.w * self.w * y * y


@pytest.mark.parametrize("make, method, order", [
    (make, method, order)
    for make, method in ((_Held, True), (_Frozen, True), (_Frozen, False))
    for order in (1, 2)
] + [(_Plain, True, 1), (_Plain, False, 1)])
def test_gradient_of_a_bound_method_or_callable_object_inside_a_gradient(make, method, order):
    # the pair of a bound method (a callable object) holds its receiver: the tangent of
    # that pair is the receiver's, not filtered by the method's free variables (it was
    # dropped for immutable receivers: a zero first derivative)
    def f(x):
        obj = make(x)
        return ad.gradient(obj.f if method else obj, 1.0)[0] * x  # 2 x**3

    lower = f
    for _ in range(order - 1):
        lower = d(lower)
    x = 1.3
    assert d(lower)(x) == approx(_by_differences(lower, x), rel=1e-5, abs=1e-6)


def test_hessian_of_a_function_that_takes_a_gradient_of_a_closure():
    def f(v):
        return v[0] * ad.gradient(lambda y: v[1] * y * y * v[0], 1.5)[0]  # 3 v0**2 v1

    v = np.array([1.2, 0.7])
    want = np.array([[6 * v[1], 6 * v[0]], [6 * v[0], 0.0]])
    assert ad.hessian(f, v) == approx(want)
    assert ad.hvp(f, v, np.array([1.0, 2.0])) == approx(want @ np.array([1.0, 2.0]))


def quintic_by_products(x):
    q = x * x  # a value read by the pullback, then a reassigned adjoint: b_q = b_q + ...
    c = x * q
    return c * q


def scalar_poly_like(x, y):
    a = math.sin(x) * y + 0.5 * x * x
    b = math.exp(-0.1 * a) * math.cos(y)
    c = a * b - 3.0 * x + y / (1.0 + x * x)
    return c * b


def test_second_derivative_when_the_pullback_reassigns_an_adjoint():
    # differentiating the pullback again meets primal names such as b_q that are
    # restored (b_q = b_q_saved): the clean-ups must not treat them as adjoint copies
    assert d(d(quintic_by_products))(0.7) == approx(20 * 0.7 ** 3, rel=1e-12)
    assert d(d(d(quintic_by_products)))(0.7) == approx(60 * 0.7 ** 2, rel=1e-12)


def test_hessian_of_a_two_argument_function_matches_finite_differences():
    x, y, e = 0.7, 1.3, 1e-6
    for i in range(2):
        gi = lambda u, v: ad.gradient(scalar_poly_like, u, v)[i]  # noqa: E731
        fd = ((gi(x + e, y) - gi(x - e, y)) / (2 * e), (gi(x, y + e) - gi(x, y - e)) / (2 * e))
        assert ad.gradient(gi, x, y) == approx(fd, rel=1e-6, abs=1e-8)


# ----- second order through the run time's helpers and library internals ------------------
# The pullbacks of zip, enumerate, map, sorted, dict iteration and of constructors are
# Python (runtime helpers): a Hessian differentiates them again. Their inactive calls into
# NumPy (np.issubdtype inside the gradient of zip's items) must stay plain calls, never a
# transformation of NumPy's own source, and every value they pass on keeps its gradient.


_XS = np.array([1.0, 2.0, 3.0])
_YS = np.array([2.0, 3.0, 5.0])
_Pair = collections.namedtuple("_Pair", "a b")


@dataclasses.dataclass
class _Pt:
    a: float
    b: float

    def norm2(self):
        return self.a ** 2 * self.b + self.b ** 3


def _zip_fit(w):
    return sum((w[0] * x - y) ** 2 * w[1] for x, y in zip(_XS, _YS))


def _zip_own(v):
    return sum(a * b ** 2 for a, b in zip(v, v[::-1]))


def _enumerate_weighted(v):
    return sum(k * t ** 3 for k, t in enumerate(v, 1))


def _map_cubes(v):
    return sum(map(lambda t: t ** 3, v))


def _sorted_weighted(v):
    return sum(i * t ** 3 for i, t in enumerate(sorted(v)))


def _max_by_key(v):
    return max(v, key=lambda t: t * t) ** 3 + min(v) ** 2


def _dict_of_items(v):
    d = {i: t ** 2 for i, t in enumerate(v)}
    return sum(d[k] * v[k] for k in d)


def _dict_values(v):
    d = {"a": v[0], "b": v[1] * v[2]}
    return sum(t ** 3 for t in d.values())


def _rows_of_matrix(v):
    m = v.reshape(2, 2)
    return sum(np.dot(r, s) ** 2 for r, s in zip(m, m[::-1]))


def _dtype_checked(v):
    return np.sum(v ** 3) if np.issubdtype(v.dtype, np.floating) else 0.0


def _iterable_checked(v):
    return np.sum(v ** 3) * float(np.iterable(v)) + float(len(np.broadcast_shapes(v.shape, (1,))))


def _namedtuple_fields(v):
    p = _Pair(v[0], v[1] * v[2])
    return p.a ** 2 * p.b + p[1] * v[3]


def _dataclass_method(v):
    return _Pt(v[0], v[1]).norm2() * v[2]


def _scalar_zip(v):
    w = v[0]
    return sum((w * a - b) ** 2 for a, b in zip([1.0, 2.0, 3.0], [2.0, 3.0, 5.0]))


def _hessian_by_differences(f, x, e=1e-5):
    g = lambda a: ad.gradient(f, a)[0]  # noqa: E731
    return np.array([(g(x + u * e) - g(x - u * e)) / (2 * e) for u in np.eye(x.size)])


@pytest.mark.parametrize(
    "f",
    [
        _zip_fit, _zip_own, _enumerate_weighted, _map_cubes, _sorted_weighted, _max_by_key,
        _dict_of_items, _dict_values, _rows_of_matrix, _dtype_checked, _iterable_checked,
        _namedtuple_fields, _dataclass_method, _scalar_zip,
    ],
    ids=lambda f: f.__name__.strip("_"),
)
def test_hessian_through_the_run_times_helpers(f):
    from adjoint_s2s.testing import numerical_gradient

    x = np.array([0.7, 1.3, 0.4, 1.1])
    assert np.allclose(ad.gradient(f, x)[0], numerical_gradient(f, x)[0], rtol=1e-6, atol=1e-8)
    h = ad.hessian(f, x)
    assert np.allclose(h, _hessian_by_differences(f, x), rtol=1e-5, atol=1e-6)


def test_hessian_of_the_zip_example_over_float_arrays():
    def loss(w):
        xs = np.array([1.0, 2.0, 3.0])
        ys = np.array([2.0, 3.0, 5.0])
        return np.sum(sum((w * x - y) ** 2 for x, y in zip(xs, ys)))

    w = np.array([0.7, 0.2])
    assert np.allclose(ad.hessian(loss, w), 28.0 * np.eye(2))
    assert ad.hessian(loss, 0.7) == approx(28.0)


def test_a_second_derivative_through_a_namedtuple_constructor():
    def s(a, b):
        p = _Pair(a, b)
        return p.a ** 2 * p.b

    assert ad.gradient(lambda a: ad.gradient(s, a, 1.3)[0], 0.7) == approx((2.0 * 1.3,))


# the adjoints of gathers (np.take, take_along_axis, repeat with counts) and of np.pad's
# copying modes scatter-add with np.add.at / np.bincount, which have no rule: they are
# linear in their gradient, with the gather (the pad) itself as their transpose
_IDX = np.array([0, 0, 2])


def _take_flat(v):
    return np.sum(np.take(v, _IDX) ** 3)


def _take_axis(v):
    return np.sum(np.take(v.reshape(2, 2), [1, 1], axis=1) ** 3)


def _take_scalar(v):
    return np.take(v, 2) ** 3 * v[0]


def _take_along(v):
    return np.sum(np.take_along_axis(v.reshape(2, 2), np.array([[1, 1], [0, 0]]), axis=1) ** 3)


def _repeat_counts(v):
    return np.sum(np.repeat(v, [1, 2, 1, 1]) ** 3)


def _pad_edge(v):
    return np.sum(np.pad(v, 2, mode="edge") ** 3)


def _pad_reflect(v):
    return np.sum(np.pad(v.reshape(2, 2), 1, mode="reflect") ** 3)


def _pad_constant(v):
    return np.sum(np.pad(v, (1, 2), constant_values=0.5) ** 3)


@pytest.mark.parametrize(
    "f",
    [_take_flat, _take_axis, _take_scalar, _take_along, _repeat_counts, _pad_edge,
     _pad_reflect, _pad_constant],
    ids=lambda f: f.__name__.strip("_"),
)
def test_hessian_through_gather_and_pad_adjoints(f):
    from adjoint_s2s.testing import numerical_gradient

    x = np.array([0.3, 1.2, -0.5, 0.9])
    assert np.allclose(ad.gradient(f, x)[0], numerical_gradient(f, x)[0], rtol=1e-6, atol=1e-8)
    assert np.allclose(ad.hessian(f, x), _hessian_by_differences(f, x), rtol=1e-5, atol=1e-6)


def test_third_derivative_through_take_and_pad():
    def f(t):
        v = np.array([t, 2.0 * t, 0.5])
        return np.sum(np.take(np.pad(v, 1, mode="edge"), [0, 1, 1, 4]) ** 3)

    # v padded: [t, t, 2t, 0.5, 0.5]; taken [0, 1, 1, 4]: t, t, t, 0.5 -> 3 t^3 + 0.125
    assert d(d(d(f)))(0.7) == approx(18.0)


def test_gradient_through_jacobian_hessian_and_hvp():
    """jacobian is differentiated again like any code (it gave None: its rows were
    collected with a method call on an expression receiver, rows[j].append)."""
    x0 = np.array([0.3, 0.5])
    W = np.array([[1.0, 2.0], [3.0, 4.0]])

    def jac_sum(x):
        return np.sum(ad.jacobian(lambda y: np.sin(y) * y, x)[0])

    (g,) = ad.gradient(jac_sum, x0)
    assert np.allclose(g, 2 * np.cos(x0) - x0 * np.sin(x0))
    check_grads(lambda x: np.sum(ad.jacobian(lambda y: np.sin(y) * y, x)[0] * W), x0)
    check_grads(lambda x: np.sum(ad.hessian(lambda y: np.sum(np.sin(y) * y ** 2), x) * W), x0)
    check_grads(lambda x: np.sum(ad.hvp(lambda y: np.sum(np.sin(y) * y ** 2), x, np.array([1.0, -2.0]))), x0)
    check_grads(lambda x, w: np.sum(ad.jacobian(lambda a, b: a * b + np.sin(a), x, w)[1]),
                x0, np.array([1.2, 0.7]))
    check_grads(lambda t: ad.jacobian(lambda s: s ** 3, t)[0], 0.7)
    check_grads(lambda t: ad.hessian(lambda s: s ** 4, t), 0.7)


# ----- `x = x`: the identity, in user code and in a generated pullback --------------------


def _scale_sum(a, b, scale=1.0):
    return (a + b) * scale


def _comb(*args, **kw):
    total = 0.0
    for a in args:
        total = total + a
    return total * kw.get("scale", 1.0) + kw.get("shift", 0.0)


def _self_assigned(x, y):
    s = x * y
    s = s
    return s * x + (s)


def _self_assigned_in_loop(x, y):
    s = x * y
    for _ in range(2):
        s = (s)
        s = s * y
    return s * x


def _rebound_then_helper(x, y):
    # the first-order pullback reverses `s = s + 0.5` as `b_s = (b_s)` (fuzz seed 267)
    s = x * y
    s = s + 0.5
    return _scale_sum(x, s, scale=x)


def _rebound_then_varargs_helper(x, y):
    s = x * y
    s = s + 0.5
    return _comb(x * -0.96, math.sqrt(1.0 + s * s), scale=x - 0.55)


@pytest.mark.parametrize(
    "f",
    [_self_assigned, _self_assigned_in_loop, _rebound_then_helper, _rebound_then_varargs_helper],
    ids=lambda f: f.__name__.strip("_"),
)
def test_self_assignment_is_the_identity(f):
    """Float arguments: the gradient of each partial against differences of it."""
    check_grads(f, 1.3, 0.7)
    for i in range(2):
        partial = lambda x, y, i=i: ad.gradient(f, x, y)[i]  # noqa: E731
        check_grads(partial, 1.3, 0.7)


def _same_then_rebound_in_a_loop(x, q):
    # (fuzz seed 267) `s3 = s2`, then s3 rebound in a while loop that ends by its else:
    # differentiated again, the first-order pair's `math.cos(s3)` is a call that may change
    # s3 in place, and the generated code rebound `s2 = s3` in every pass (s2 took the
    # value of s3 from the second pass on)
    s2 = q[0] * q[1]
    s3 = s2
    k = 0
    while k < 1:
        k += 1
        s3 = 0.7 * s3 + math.cos(s3) * x
    else:
        s3 = s3 + 0.5
    return (s2 + s3) * x


def test_same_object_before_a_loop_rebound_in_it():
    p = np.array([1.1, 0.5, -0.8])
    f = lambda p: _same_then_rebound_in_a_loop(p[0], p[1:])  # noqa: E731
    check_grads(f, p)
    assert np.allclose(ad.hessian(f, p), _hessian_by_differences(f, p), rtol=1e-5, atol=1e-6)
