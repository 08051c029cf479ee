"""Representative functions whose generated code is checked in (tests/test_golden.py).

The generated code is a product people read: these files are reviewed like code.
"""
import math
from dataclasses import dataclass

import numpy as np


def polynomial(x, y):
    a = math.sin(x) * y + 0.5 * x * x
    return a * math.exp(-a)


def branch(x):
    if x > 0:
        return x * x
    return -x


def fixed_loop(x):
    for _ in range(10):
        x = 0.99 * x + 0.01 * math.sin(x)
    return x


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x


def helper(x):
    return x * x


def calls_and_closures(x, c):
    scale = lambda t: c * t  # noqa: E731 - a closure over c
    return scale(helper(x))


def complex_power(z):
    w = z * z.conjugate() + 1j * z
    return abs(w)


def array_loss(W, x):
    h = np.tanh(W @ x)
    return np.sum(h * h)


def comprehension(xs):
    return sum(v * v for v in xs if v > 0)


@dataclass
class Point:
    x: float
    y: float


def object_fields(p):
    return math.hypot(p.x, p.y)


def write_rows(x):
    H = np.zeros((3, 2))
    for t in range(3):
        H[t] = x * (t + 1)
    return np.sum(H * H)


def early_exit(xs):
    total = 0.0
    for v in xs:
        if v < 0:
            break
        if v > 10:
            continue
        total += v * v
    return total


CASES = [
    (polynomial, ("real", "real")),
    (branch, ("real",)),
    (fixed_loop, ("real",)),
    (newton_sqrt, ("real",)),
    (calls_and_closures, ("real", "real")),
    (complex_power, ("complex",)),
    (array_loss, ("array", "array")),
    (comprehension, ("other",)),
    (object_fields, ("other",)),
    (write_rows, ("real",)),
    (early_exit, ("other",)),
]
