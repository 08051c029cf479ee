"""A rule's pullback may give one tangent per argument passed, or one per parameter of its
function (defaults included, as the rule's own signature reads): both are mapped to how
the call passed its arguments, keywords included."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import numerical_gradient


def logsumexp(z, axis=-1):
    m = np.max(z, axis=axis, keepdims=True)
    return np.squeeze(m, axis) + np.log(np.sum(np.exp(z - m), axis=axis))


@ad.rrule(logsumexp)
def logsumexp_rule(z, axis=-1):
    y = logsumexp(z, axis)

    def logsumexp_pullback(dy):
        p = np.exp(z - np.expand_dims(y, axis))
        return ad.NoTangent(), np.expand_dims(dy, axis) * p, ad.NoTangent()  # one per parameter

    return y, logsumexp_pullback


def scaled(x, *, s):
    return x * s


@ad.rrule(scaled)
def scaled_rule(x, *, s):
    return scaled(x, s=s), lambda d: (ad.NoTangent(), d * s, d * x)


Z = np.array([0.1, 0.5, -0.3])


@pytest.mark.parametrize("call", [
    lambda z: logsumexp(z),            # the default taken
    lambda z: logsumexp(z, -1),        # passed by position
    lambda z: logsumexp(z, axis=-1),   # passed by keyword
])
def test_a_pullback_with_one_tangent_per_parameter_fits_every_way_of_calling(call):
    g = ad.gradient(call, Z)[0]
    assert np.allclose(g, numerical_gradient(call, Z)[0], atol=1e-7)


def test_a_keyword_arguments_tangent_reaches_its_variable():
    g = ad.gradient(lambda x, s: scaled(x, s=s), 2.0, 3.0)
    assert g == (3.0, 2.0)
    assert ad.hessian(lambda x: scaled(x, s=x), 2.0) == pytest.approx(2.0)


def test_a_pullback_with_the_wrong_count_is_still_refused():
    def twice(x, y=1.0):
        return 2.0 * x * y

    @ad.rrule(twice)
    def twice_rule(x, y=1.0):
        return twice(x, y), lambda d: (ad.NoTangent(), d, d, d)  # four for two parameters

    try:
        with pytest.raises(ad.RuleError, match=r"returned 4 gradients, expected 2"):
            ad.gradient(lambda x: twice(x), 1.0)
    finally:
        from adjoint_s2s import rules

        rules.USER_RULES.pop(twice, None)
        rules.bump(twice)


def test_a_number_passed_by_keyword_without_its_tangent_is_refused():
    def mix(x, w=1.0):
        return x * w

    @ad.rrule(mix)
    def mix_rule(x, w=1.0):
        return mix(x, w=w), lambda d: (ad.NoTangent(), d * w)  # no tangent for w

    try:
        assert ad.gradient(lambda x: mix(x), 2.0) == (1.0,)  # w took its default: fine
        with pytest.raises(ad.RuleError, match=r"passed w= a number by keyword"):
            ad.gradient(lambda x, w: mix(x, w=w), 2.0, 3.0)
    finally:
        from adjoint_s2s import rules

        rules.USER_RULES.pop(mix, None)
        rules.bump(mix)


def test_a_container_of_numbers_passed_by_keyword_without_its_tangent_is_refused():
    def weigh(x, *, ws):
        return x * sum(ws["scales"])

    @ad.rrule(weigh)
    def weigh_rule(x, *, ws):
        return weigh(x, ws=ws), lambda d: (ad.NoTangent(), d * sum(ws["scales"]))

    try:
        with pytest.raises(ad.RuleError, match=r"passed ws= a dict holding a number by keyword"):
            ad.gradient(lambda x, w: weigh(x, ws={"scales": [w, 1.0]}), 2.0, 3.0)
        with pytest.raises(ad.RuleError, match=r"passed ws= a dict holding a float array"):
            ad.gradient(lambda x, w: np.sum(weigh(x, ws={"scales": [w]})), 2.0, np.ones(2))
        # integers and labels carry no gradient: no complaint
        assert ad.gradient(lambda x: weigh(x, ws={"scales": [2, 1], "name": "a"}), 2.0) == (3.0,)
    finally:
        from adjoint_s2s import rules

        rules.USER_RULES.pop(weigh, None)
        rules.bump(weigh)
