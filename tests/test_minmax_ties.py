"""The builtin min and max at a tie split the gradient evenly among the equal numbers, as
np.maximum and np.minimum do: max(a, c) + min(a, c) is a + c, and its gradient at a == c
is (1, 1), not (2, 0); a simulation starting at rest (`max(v, 0.0)` at v = 0.0) meets the
tie. Away from ties, and for NaN, the gradient goes to the number Python picks."""
import math

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads


def max_plus_min(a, c):
    return max(a, c) + min(a, c)


def odd_part(a):
    return max(a, 0.0) - max(-a, 0.0)  # a itself


def of_a_list_and_three(a, c):
    return max([a, c, a]) + min(a, c, 2.0)


def in_a_loop(a, c):
    s = 0.0
    for i in range(3):
        s = s + max(a, c) * i + min(c, a)
    return s


def test_a_tie_splits_the_gradient():
    assert ad.gradient(max_plus_min, 1.0, 1.0) == pytest.approx((1.0, 1.0))
    assert ad.gradient(odd_part, 0.0) == pytest.approx((1.0,))
    # three equal items of max([a, c, a]): a third each; min(a, c, 2.0): a half each
    assert ad.gradient(of_a_list_and_three, 1.0, 1.0) == pytest.approx((2 / 3 + 1 / 2, 1 / 3 + 1 / 2))
    assert ad.gradient(in_a_loop, 0.5, 0.5) == pytest.approx((3.0, 3.0))
    assert ad.gradient(lambda a, c: np.maximum(a, c), 1.0, 1.0) == pytest.approx((0.5, 0.5))


def operands_named_as_the_template(b, a):
    # the inline template's own names are a and b: `min(c, a)` once read `c < c` (a
    # silently wrong gradient, (0.0, 6.0) for (3.0, 3.0) in in_a_loop)
    return max(b, a) * 2.0 + min(a, b) * 3.0


@pytest.mark.parametrize("f, args", [
    (operands_named_as_the_template, (0.3, 0.8)), (operands_named_as_the_template, (0.8, 0.3)),
    (max_plus_min, (1.0, 2.0)), (odd_part, (0.5,)), (of_a_list_and_three, (1.0, 3.0)), (in_a_loop, (0.2, 0.7)),
])
def test_away_from_ties_the_picked_number_gets_it(f, args):
    check_grads(f, *args, order=2)


def test_nan_goes_to_the_number_python_returns():
    nan = float("nan")
    assert ad.gradient(max_plus_min, nan, 1.0) == (2.0, 0.0)  # max and min return a
    assert ad.gradient(max_plus_min, 1.0, nan) == (2.0, 0.0)
    assert math.isnan(max_plus_min(nan, 1.0))


def tie_left_unused(a, xs):
    s = sum(xs)
    m = max(s, s)  # a tie whose value nothing reads: no gradient to split
    return a * 2.0 + 0.0 * (m > 0.0)


def test_a_tie_with_no_gradient():
    assert ad.gradient(tie_left_unused, 0.5, [0.2, 0.3]) == (2.0, None)


def clamp_three(x, y, z):
    s = 0.0
    for i in range(3):
        s = s + min(x, y, z) * 2.0 + max(x * 0.5, y, 1.0) * i
    return s


def clamp_three_of_a_list(x, y, z):  # the run-time rule's way: the same gradient
    s = 0.0
    for i in range(3):
        s = s + min([x, y, z]) * 2.0 + max([x * 0.5, y, 1.0]) * i
    return s


def eleven(a, b):
    return max(a, b, a * 2.0, b * 2.0, a * 3.0, b * 3.0, a * 4.0, b * 4.0, a * 5.0, b * 5.0, 0.0)


def test_min_and_max_of_three_numbers_are_inline_like_two():
    # (min(x, y, z) dispatched at run time once cost 38 times the plain call in a loop)
    text = ad.show_adjoint(clamp_three, 0.7, 1.3, 0.9)
    assert "_rt.call(" not in text and "# dispatched" not in text
    assert "_rt.call(" in ad.show_adjoint(eleven, 0.5, 0.25)  # past ten arguments: the rule


@pytest.mark.parametrize("args", [
    (0.7, 1.3, 0.9), (1.0, 1.0, 1.0), (2.0, 1.0, 1.0), (1.0, 1.0, 2.0), (2.0, 2.0, 1.0), (3.0, 1.0, 1.0),
    (float("nan"), 1.0, 2.0), (1.0, float("nan"), 0.0), (1.0, 2.0, float("nan")),
])
def test_three_arguments_at_ties_and_nan_as_the_run_time_rule(args):
    got = ad.gradient(clamp_three, *args)
    want = ad.gradient(clamp_three_of_a_list, *args)
    assert got == pytest.approx(want, nan_ok=True)
    y, _ = ad.pullback(clamp_three, *args)
    assert y == pytest.approx(clamp_three(*args), nan_ok=True)


@pytest.mark.parametrize("f, args", [(clamp_three, (0.7, 1.3, 0.9)), (clamp_three, (0.2, 1.3, 3.0)),
                                     (eleven, (0.5, 0.25)), (eleven, (-0.5, -0.25))])
def test_several_arguments_away_from_ties(f, args):
    check_grads(f, *args, order=2)


def of_array_items(v):
    return max(v[2], v[2], 0.5) + min(v[0], v[1], v[0]) * 2.0


def test_ties_among_numpy_numbers_count_each():
    # (NumPy's booleans add as `or`: counted as bools, two equal np.float64 arguments
    # tied as one and each took the whole gradient, 2 where it is 1; found by the fuzzer)
    v = np.array([0.2, 0.7, 0.9])
    assert ad.gradient(of_array_items, v)[0] == pytest.approx([2.0, 0.0, 1.0])
    assert ad.gradient(of_array_items, np.array([0.2, 0.1, 0.4]))[0] == pytest.approx([0.0, 2.0, 0.0])
    check_grads(of_array_items, np.array([0.3, 0.7, 0.2]))
