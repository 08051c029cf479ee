"""Functions once treated as constants (no derivative) although what they return carries
the data: np.ndenumerate and np.broadcast hand out the elements, np.random's permutation
and choice rearrange them, its draws shift and scale their parameters, np.sign of a
complex number is z/|z|, np.heaviside(x1, x2) is x2 where x1 is 0. Each gives the
gradient of central differences now, or is refused with a clear error, never a zero.
Objects that hand out their items through their own Python __iter__ are refused."""
import inspect

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import AdjointError, NotDifferentiableError
from adjoint_s2s.testing import numerical_gradient

from .refusals import agrees, line_of

X = np.array([1.0, 2.0, -3.0, 4.5])
W = np.array([0.5, -1.0, 2.0, 3.0])


def agrees_all(fn, *args):
    """fn's gradient in every argument is the central differences'."""
    got = ad.gradient(fn, *args)
    want = numerical_gradient(fn, *args)
    for g, w in zip(got, want):
        assert g is not None, (got, want)
        assert np.allclose(g, w, rtol=1e-6, atol=1e-6), (got, want)


def refused_at(fn, args, statement, *words, error=NotDifferentiableError):
    """fn is refused with error (by gradient and by pullback's pullback), naming the
    statement's file and line and each of words."""
    for run in (lambda: ad.gradient(fn, *args), lambda: ad.pullback(fn, *args)[1](1.0)):
        with pytest.raises(error) as info:
            run()
        msg = str(info.value)
        assert isinstance(info.value, AdjointError)
        assert f"{inspect.getsourcefile(fn)}, line {line_of(fn, statement)}" in msg, msg
        for w in words:
            assert w in msg, (w, msg)


# ----- iteration: np.ndenumerate, np.broadcast ------------------------------------------------


def ndenumerate_squares(x):
    s = 0.0
    for _, v in np.ndenumerate(x):
        s = s + v * v
    return s


def ndenumerate_weighted(x):
    s = 0.0
    for (i, j), v in np.ndenumerate(x):
        s = s + v * (i + 2.0 * j + 1.0) * v
    return s


def test_ndenumerate_carries_the_elements():
    agrees(ndenumerate_squares, X)
    agrees(ndenumerate_weighted, np.arange(6.0).reshape(2, 3) - 2.5)


def test_ndenumerate_second_order():
    h = ad.hessian(ndenumerate_squares, X)
    np.testing.assert_allclose(h, 2 * np.eye(4))


def test_ndenumerate_taken_in_part():
    def first_two(x):
        s = 0.0
        for k, v in enumerate(np.ndenumerate(x)):
            if k == 2:
                break
            s = s + v[1] ** 3
        return s

    agrees(first_two, X)


def broadcast_products(x, y):
    s = 0.0
    for a, b in np.broadcast(x, y):
        s += a * b * a
    return s


def test_broadcast_carries_the_elements():
    agrees_all(broadcast_products, X, W)
    # broadcast axes: the gradient sums over them
    agrees_all(broadcast_products, X[:3].reshape(3, 1), W)
    agrees_all(broadcast_products, 1.5, W)


def test_broadcast_shape_only_is_still_a_constant():
    def by_shape(x, y):
        n = np.broadcast(x, y).shape[0]
        return np.sum(x * y) * n

    agrees_all(by_shape, X, W)


# ----- objects whose own __iter__ hands out the items: refused ---------------------------------


class Holder:
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)


class Countdown:
    def __init__(self, items):
        self.items = items
        self.i = len(items)

    def __iter__(self):
        return self

    def __next__(self):
        if self.i == 0:
            raise StopIteration
        self.i -= 1
        return self.items[self.i]


def loop_over_holder(x):
    s = 0.0
    for v in Holder(x):
        s = s + v * v
    return s


def loop_over_countdown(x):
    s = 0.0
    for v in Countdown(x):
        s = s + v * v
    return s


def list_of_holder(x):
    return sum(v * v for v in list(Holder(x)))


def test_python_iterator_objects_are_refused():
    # (an iterator of its own: its __next__ changes it as it hands out items)
    with pytest.raises(NotDifferentiableError, match="Countdown"):
        ad.gradient(loop_over_countdown, X)


def test_objects_whose_iter_hands_out_a_container_are_differentiated():
    # their __iter__ runs through AD (runtime/protocols.py): the items' gradients go back
    agrees(loop_over_holder, X)
    agrees(list_of_holder, X)


def test_python_iterator_objects_of_constants_still_work():
    def scaled(x):
        s = 0.0
        for c in Holder([1.0, 2.0, 3.0, 4.0]):
            s = s + c * np.sum(x)
        return s

    agrees(scaled, X)


# ----- np.random: permutation and choice pass the data on ------------------------------------


def permuted(x):
    np.random.seed(3)
    return np.sum(np.random.permutation(x) * np.arange(len(x), dtype=float) ** 2)


def permuted_rows(x):
    np.random.seed(3)
    return np.sum(np.random.permutation(x.reshape(2, 2)) * np.array([[1.0, 2.0], [3.0, 5.0]]))


def bootstrap(x):
    np.random.seed(1)
    return np.sum(np.random.choice(x, 7) ** 2 * np.arange(7.0))


def choice_by_keywords(x):
    np.random.seed(2)
    return np.sum(np.random.choice(x, size=3, replace=False, p=[0.1, 0.2, 0.3, 0.4]) * W[:3])


def choice_of_a_list(x):
    np.random.seed(5)
    picks = np.random.choice([x[0], x[1], x[2]], size=(2, 2))
    return np.sum(picks * picks)


@pytest.mark.parametrize("fn", [permuted, permuted_rows, bootstrap, choice_by_keywords,
                                choice_of_a_list])
def test_rearranging_draws_carry_the_data(fn):
    agrees(fn, X)
    # the value, and the stream after it, are the plain call's
    y, back = ad.pullback(fn, X)
    after = np.random.random()
    assert y == fn(X) and after == np.random.random()


@pytest.mark.parametrize("args, kwargs", [
    ((X,), {}),
    ((X.reshape(2, 2),), {}),
    ((list(X),), {}),
])
def test_permutation_value_is_the_plain_calls(args, kwargs):
    def draw(x):
        return np.random.permutation(x)

    np.random.seed(11)
    want = np.random.permutation(*args, **kwargs)
    want_next = np.random.random()
    np.random.seed(11)
    got, _ = ad.pullback(lambda x: np.sum(draw(x) * 1.0), args[0])
    assert np.random.random() == want_next
    assert got == np.sum(want)


@pytest.mark.parametrize("kwargs", [
    {}, {"size": 5}, {"size": ()}, {"size": (2, 3)}, {"size": 3, "replace": False},
    {"size": 4, "p": [0.4, 0.3, 0.2, 0.1]},
])
def test_choice_value_is_the_plain_calls(kwargs):
    from adjoint_s2s.rules.numpy.draws import np_random_choice_pair

    np.random.seed(7)
    want = np.random.choice(X, **kwargs)
    np.random.seed(7)
    got, _ = np_random_choice_pair(X, **kwargs)
    assert type(got) is type(want) and np.shape(got) == np.shape(want)
    np.testing.assert_array_equal(got, want)


def test_choice_of_integers_carries_no_gradient():
    def pick(x):
        np.random.seed(0)
        return np.sum(x[np.random.choice(4, 3)])

    agrees(pick, X)


# ----- np.random: reparameterised draws -------------------------------------------------------


def _draw(name):
    f = getattr(np.random, name)

    def loss(p):
        np.random.seed(0)
        return np.sum(f(p, 2.0) ** 2 * W)

    return loss


def _draw_scale(name):
    f = getattr(np.random, name)

    def loss(s):
        np.random.seed(0)
        return np.sum(f(1.5, s) ** 2 * W)

    return loss


@pytest.mark.parametrize("name", ["normal", "laplace", "gumbel", "logistic", "lognormal"])
def test_shifted_draws_are_reparameterised(name):
    agrees(_draw(name), X * 0.1)
    agrees(_draw_scale(name), 0.1 * np.abs(X) + 0.3)


def test_uniform_exponential_gamma_rayleigh_mvn():
    def uniform(lo):
        np.random.seed(0)
        return np.sum(np.random.uniform(lo, 2.0 * lo + 5.0) ** 2)

    def exponential(s):
        np.random.seed(0)
        return np.sum(np.random.exponential(s, size=(3, 4)) * W)

    def gamma(s):
        np.random.seed(0)
        return np.sum(np.random.gamma(2.5, s) ** 2)

    def rayleigh(s):
        np.random.seed(0)
        return np.sum(np.random.rayleigh(scale=s) * W)

    def mvn(m):
        np.random.seed(0)
        return np.sum(np.random.multivariate_normal(m, np.eye(4) + 0.5, size=3) ** 2)

    for fn in (uniform, exponential, gamma, rayleigh, mvn):
        agrees(fn, np.abs(X) + 0.5)


def test_draw_by_keywords_and_size():
    def loss(loc, scale):
        np.random.seed(4)
        return np.sum(np.random.normal(loc=loc, scale=scale, size=(5, 4)) ** 2)

    agrees_all(loss, X, np.abs(W) + 0.1)
    np.random.seed(4)
    want = loss(X, np.abs(W) + 0.1)
    assert ad.pullback(loss, X, np.abs(W) + 0.1)[0] == want


def test_draw_with_a_zero_scale():
    def loss(loc, scale):
        np.random.seed(0)
        return np.sum(np.random.normal(loc, scale) ** 2)

    scale = np.array([1.0, 0.0, 2.0, 1.0])
    # held fixed, a zero scale is no trouble: ∂/∂loc is still 1
    (g,) = ad.gradient(lambda loc: loss(loc, scale), X)
    np.testing.assert_allclose(g, 2 * X * (scale == 0) + 2 * loss_draws(X, scale) * (scale != 0))
    with pytest.raises(NotDifferentiableError, match=r"np.random.normal is not differentiable in scale"):
        ad.gradient(loss, X, scale)


def loss_draws(loc, scale):
    np.random.seed(0)
    return np.random.normal(loc, scale)


@pytest.mark.parametrize("call, param", [
    (lambda p: np.random.gamma(p, 2.0), "shape"),
    (lambda p: np.random.beta(p, 2.0), "a"),
    (lambda p: np.random.beta(2.0, p), "b"),
    (lambda p: np.random.multivariate_normal(np.zeros(2), p * np.eye(2)), "cov"),
])
def test_draws_of_other_parameters_are_refused(call, param):
    def loss(p):
        np.random.seed(0)
        return np.sum(call(p))

    with pytest.raises(NotDifferentiableError, match=rf"is not differentiable in {param}.*dropgrad"):
        ad.gradient(loss, 1.5)


def test_integer_draws_and_parameterless_draws_stay_constants():
    def loss(x):
        np.random.seed(0)
        return np.sum(x * np.random.randint(0, 3, size=4) + x * np.random.standard_normal(4))

    agrees(loss, X)


def test_generator_methods_are_refused():
    def loss(x):
        rng = np.random.default_rng(0)
        return np.sum(rng.normal(x, 1.0))

    with pytest.raises(AdjointError, match="Generator.normal"):
        ad.gradient(loss, X)


# ----- np.sign of complex numbers, np.heaviside's x2 ------------------------------------------


def test_sign_of_complex_is_the_unit_direction():
    def loss(a, b):
        z = np.sign(a + 1j * b)
        return np.sum(z.real * W + z.imag * W[::-1])

    agrees_all(loss, X, np.array([0.5, -2.0, 1.0, 0.25]))


def test_sign_of_reals_has_no_gradient():
    def loss(x):
        return np.sum(np.sign(x) * x)

    agrees(loss, X)


def test_heaviside_passes_x2_where_x1_is_zero():
    def loss(h):
        return np.sum(np.heaviside(np.array([0.0, -1.0, 0.0, 2.0]), h) * W)

    (g,) = ad.gradient(loss, X)
    np.testing.assert_allclose(g, W * np.array([1.0, 0.0, 1.0, 0.0]))
    agrees(loss, X)


# ----- the others that hand out data without a rule: refused, never a zero -------------------


def loop_over_nditer(x):
    s = 0.0
    for v in np.nditer(x):
        s = s + v * v
    return s


def loop_over_flat(x):
    s = 0.0
    for v in x.flat:
        s = s + v * v
    return s


def shuffled(x):
    np.random.seed(0)
    y = x * 1.0
    np.random.shuffle(y)
    return np.sum(y * W)


def own_random_state(x):
    return np.sum(np.random.RandomState(0).permutation(x) * W)


@pytest.mark.parametrize("fn, words", [
    (loop_over_nditer, ["numpy.nditer"]),
    (loop_over_flat, [".flat", "x.ravel()"]),
    (shuffled, ["shuffle"]),
    (own_random_state, ["RandomState.permutation"]),
])
def test_data_without_a_rule_is_refused(fn, words):
    with pytest.raises(AdjointError) as info:
        ad.gradient(fn, X)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


# ----- draws inside adjoint_s2s.checkpoint: run again, they must draw the same numbers --------


def drawn_inside(loc):
    return np.random.normal(loc, 2.0) ** 2


def seeded_inside(loc):
    np.random.seed(5)
    return np.random.normal(loc, 2.0) ** 2


def test_checkpoint_of_a_seeded_draw_is_differentiated():
    def loss(loc):
        return np.sum(ad.checkpoint(seeded_inside, loc) * W)

    agrees(loss, X)
    np.testing.assert_allclose(ad.hessian(loss, X), np.diag(2 * W))


def test_checkpoint_of_an_unseeded_draw_is_refused():
    def loss(loc):
        return np.sum(ad.checkpoint(drawn_inside, loc))

    np.random.seed(0)
    y, back = ad.pullback(loss, X)
    with pytest.raises(NotDifferentiableError, match=r"checkpoint\(drawn_inside.*Seed the stream"):
        back(1.0)
    # a constant draw too: run again, its other numbers would change the gradient
    def scaled(x):
        return np.sum(ad.checkpoint(lambda v: v * np.random.standard_normal(4), x) ** 2)

    with pytest.raises(NotDifferentiableError, match="draws from np.random"):
        ad.gradient(scaled, X)


def test_checkpoint_without_draws_is_unchanged():
    def loss(x):
        return np.sum(ad.checkpoint(lambda v: np.sin(v) * v, x))

    agrees(loss, X)
