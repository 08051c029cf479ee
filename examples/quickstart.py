"""A first look at adjoint_s2s: gradients, a pullback, a custom adjoint, generated code."""
import math

import adjoint_s2s as ad
from adjoint_s2s.cli import show


def f(x, y):
    """A small function with a loop and a branch."""
    z = math.sin(x) * y
    for _ in range(3):
        z = z * 0.5 + math.exp(-z * z)
    if z > 0:
        return z * x
    return -z


def mul(a, b):
    return a * b


@ad.adjoint(mul)
def _(a, b):
    return mul(a, b), lambda c: (c * b, c * a)


if __name__ == "__main__":
    print("gradient(f, 0.5, 2.0)       =", ad.gradient(f, 0.5, 2.0))
    y, back = ad.pullback(math.sin, 0.5)
    print("pullback(sin, 0.5): y       =", y, " back(1.0) =", back(1.0))
    print("gradient(mul, 2, 3)         =", ad.gradient(mul, 2, 3), "(a custom adjoint)")
    print("gradient of |z|^2 at 1+2j   =", ad.gradient(lambda z: abs(z) ** 2, 1 + 2j))
    print()
    print("The generated pair for f (what `adjoint-s2s show-adjoint quickstart:f` prints):")
    print()
    show(f, ("real", "real"))
