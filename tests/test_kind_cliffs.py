"""Values whose kind the transformer knows where ordinary code left it unknown (each made
the loop after it dispatch every operation at run time: 60-140 times slower). The
generated code is checked for the dispatch comment, the gradients against central
differences at first and second order."""
import math

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import NotDifferentiableError
from adjoint_s2s.testing import check_grads

KL = [2.0, 3.0]
KARR = np.array([2.0, 3.0])


def stiffness_from_a_global_list(theta, omega):
    k = float(KL[0]) + float(KARR[1])
    for _ in range(20):
        omega = omega - 0.01 * k * math.sin(theta)
        theta = theta + 0.01 * omega
    return theta


def from_an_argument_list(xs, y):
    k = float(xs[0])
    c = complex(xs[1])
    for _ in range(3):
        y = y * k + math.sin(y)
    return y + (c * c).real


def test_float_of_anything_is_a_real_number():
    src = ad.show_adjoint(stiffness_from_a_global_list, 1.0, 0.0)
    assert "dispatched at run time" not in src and "_rt.binop" not in src
    check_grads(stiffness_from_a_global_list, 1.0, 0.0, order=2)


def test_float_and_complex_of_a_differentiated_item():
    src = ad.show_adjoint(from_an_argument_list, [0.5, 0.3], 0.7)
    loop = src[src.index("for "):src.index("# return")]
    assert "dispatched at run time" not in loop
    check_grads(from_an_argument_list, [0.5, 0.3], 0.7, order=2)


def fractional_powers(x, p):
    s = 0.0
    for i in range(5):
        s = s + (x + i) ** 0.5 + (x + i) ** p + x ** 1.5 + 2.0 ** (p * i)
    return s


def negative_root(x):
    y = x - 1.0
    return y ** 0.5 * 2.0


def test_a_real_number_to_a_fractional_power_is_real():
    src = ad.show_adjoint(fractional_powers, 0.5, 1.3)
    assert "dispatched at run time" not in src and "_rt.binop" not in src
    assert src.count("_rt.complex_power(") == 3  # (2.0 ** q is real: its base is positive)
    check_grads(fractional_powers, 0.5, 1.3, order=2)


def test_where_python_gives_a_complex_number_it_is_refused():
    assert isinstance(negative_root(0.5), complex)
    for run in (lambda: ad.gradient(negative_root, 0.5), lambda: ad.pullback(negative_root, 0.5)):
        with pytest.raises(NotDifferentiableError) as info:
            run()
        msg = str(info.value)
        assert "`(-0.5) ** 0.5`" in msg and f"{__file__}, line" in msg
        assert "complex(x) ** p" in msg
    assert ad.gradient(negative_root, 1.5)[0] == pytest.approx(1.0 / 0.5 ** 0.5)


def numpy_functions_of_numbers(x):
    s = 0.0
    for i in range(6):
        s = s + np.exp(-x * i * 0.1) * np.cos(x) + np.sqrt(1.0 + x * x) + np.arctan2(x, 2.0)
    return s


def numpy_add_of_ints(x):
    n = np.add(2, 3)  # an int64: not a Python number's kind
    s = x
    for _ in range(3):
        s = s * n * 0.1 + np.sqrt(n) * x
    return s


def test_a_numpy_function_of_numbers_that_gives_floats_is_a_number():
    src = ad.show_adjoint(numpy_functions_of_numbers, 0.7)
    assert "dispatched at run time" not in src and "_rt.binop" not in src
    assert src.count("_rt.unbroadcast") <= 3  # (the partials of np.exp, np.cos, np.arctan2; not the products: 11 before)
    check_grads(numpy_functions_of_numbers, 0.7, order=2)
    assert ad.pullback(numpy_functions_of_numbers, 0.7)[0] == numpy_functions_of_numbers(0.7)


def test_a_numpy_function_that_keeps_ints_is_not_taken_for_a_float():
    check_grads(numpy_add_of_ints, 0.7, order=2)
    assert ad.pullback(numpy_add_of_ints, 0.7)[0] == numpy_add_of_ints(0.7)
