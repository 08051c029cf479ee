"""A number computed in a loop from what the loop never rebinds (`mul = dt * k` of the
pendulum's `omega - dt * k * sin(theta)`): the same value every trip, so it is not taped
(passes/reverse/assign.py, loop_invariant). Checked against central differences, first
and second order, with loops that run no time, nested loops whose outer loop rebinds an
operand (taped then), a binding under a branch, and a while loop."""
import math

import pytest

import adjoint_s2s as ad


def pendulum(k, n):
    theta, omega = 1.0, 0.0
    for _ in range(n):
        omega = omega - 0.01 * k * math.sin(theta)
        theta = theta + 0.01 * omega
    return theta


def outer_rebinds(k, n):
    s = 0.0
    c = k
    for i in range(n):
        for j in range(2):
            m = c * 0.5
            s = s + m * s + math.sin(m + s)
        c = c * 1.1
    return s


def under_a_branch(k, n):
    s = 1.0
    for i in range(n):
        if i % 2:
            m = k * k
            s = s * m + 0.1
        s = math.tanh(s)
    return s


def in_a_while(k, n):
    s = k
    i = 0
    while True:
        m = -k
        s = s + m * math.sin(s)
        i += 1
        if i >= n:
            break
    return s


def central(f, x, *rest, h=1e-6):
    return (f(x + h, *rest) - f(x - h, *rest)) / (2 * h)


CASES = [(pendulum, 2.0, 50), (pendulum, 2.0, 0), (outer_rebinds, 0.3, 3), (outer_rebinds, 0.3, 0),
         (under_a_branch, 0.7, 5), (in_a_while, 0.4, 4)]


@pytest.mark.parametrize("f, x, n", CASES, ids=[f"{c[0].__name__}-{c[2]}" for c in CASES])
def test_first_and_second_order(f, x, n):
    assert ad.gradient(f, x, n)[0] == pytest.approx(central(f, x, n), rel=1e-6, abs=1e-9)

    def df(y):
        return ad.gradient(f, y, n)[0]

    assert ad.gradient(df, x)[0] == pytest.approx(central(df, x), rel=1e-5, abs=1e-8)


def test_the_invariant_product_is_not_taped_and_a_rebound_operand_is():
    taped = [ln.strip() for ln in ad.show_adjoint(pendulum, 2.0, 50).splitlines() if "_tape.append" in ln]
    assert taped == ["_tape.append(sin_theta)", "_tape.append(theta)"]
    taped = [ln.strip() for ln in ad.show_adjoint(outer_rebinds, 0.3, 3).splitlines() if "_tape.append" in ln]
    assert "_tape.append(m)" in taped
