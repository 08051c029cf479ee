"""Random numbers in differentiated code: a generator and its uniform draws are constants
to the gradient (as a fixed seed makes them), and what random.py computes from them in
Python (gauss, uniform: mu + sigma * z) is differentiated through its source, a
reparameterised gradient. A draw made by rejection (gammavariate, betavariate) is refused
where a gradient reaches it: its formula's derivative would be biased. Before, a seeded
Monte Carlo loop was refused (random.Random's constructor, seed, random had no rule)."""
import math
import random

import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads


def call_payoff(mu, sigma):
    rng = random.Random(0)
    s = 0.0
    for _ in range(40):
        z = rng.gauss(0.0, 1.0)
        s = s + max(mu + sigma * z, 0.0)
    return s / 40


def module_level(mu, sigma):
    random.seed(1)
    s = 0.0
    for _ in range(40):
        s = s + random.gauss(mu, sigma) ** 2 + random.uniform(mu, mu + sigma) + random.random() * mu
    return s / 40


def constant_gamma(x):
    rng = random.Random(2)
    return rng.gammavariate(2.0, 1.0) * x + rng.betavariate(2.0, 3.0)


def gamma_of_a_parameter(alpha):
    rng = random.Random(3)
    return rng.gammavariate(alpha, 1.0) * 2.0


@pytest.mark.parametrize("f", [call_payoff, module_level])
def test_seeded_draws_are_differentiated_through_what_they_compute(f):
    y, _ = ad.pullback(f, 0.1, 0.3)
    assert y == f(0.1, 0.3)  # the same draws: the value of the plain call
    check_grads(f, 0.1, 0.3, order=2)


def test_a_draw_by_rejection():
    rng = random.Random(2)
    assert ad.gradient(constant_gamma, 0.5)[0] == pytest.approx(rng.gammavariate(2.0, 1.0))
    with pytest.raises(ad.NotDifferentiableError, match="gammavariate .*draws by rejection") as info:
        ad.gradient(gamma_of_a_parameter, 2.0)
    assert f"{__file__}, line" in str(info.value) and "mu + sigma * random.gauss" in str(info.value)


def test_the_way_out_the_message_names_works_for_bound_builtin_methods():
    # a C type's method read off an object and called later, as random.gauss does with
    # self.random: its rule is the rule the type's method has
    def noisy(x):
        rng = random.Random(5)
        draw = rng.random  # a bound method of a C type, called later
        return x * draw() + math.sin(x)

    r = random.Random(5).random()
    assert ad.gradient(noisy, 0.4)[0] == pytest.approx(r + math.cos(0.4))
