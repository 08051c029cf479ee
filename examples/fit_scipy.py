"""Fit a damped oscillation to noisy measurements with scipy.optimize.minimize.

`withgradient` returns the loss and its gradient in one pass, which is what
`minimize(..., jac=True)` wants: a function returning `(value, gradient)`.

    python examples/fit_scipy.py
"""
import numpy as np
from scipy.optimize import minimize

import adjoint_s2s as ad

TRUE = np.array([2.0, 0.3, 3.0, 0.5])          # amplitude, decay, angular frequency, phase


def model(theta, t):
    amplitude, decay, omega, phase = theta[0], theta[1], theta[2], theta[3]
    return amplitude * np.exp(-decay * t) * np.cos(omega * t + phase)


def make_data(seed=0, n=80, noise=0.05):
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 6.0, n)
    return t, model(TRUE, t) + noise * rng.normal(size=n)


def loss(theta, t, y):
    residual = model(theta, t) - y
    return np.mean(residual ** 2)


def fit(t, y, theta0):
    def objective(theta):
        value, (g, _, _) = ad.withgradient(loss, theta, t, y)
        return value, g

    return minimize(objective, theta0, jac=True, method="BFGS")


def main():
    t, y = make_data()
    theta0 = np.array([1.0, 0.1, 2.8, 0.0])
    result = fit(t, y, theta0)
    print(result.message)
    print(f"{result.nit} iterations, {result.nfev} gradient evaluations, loss {result.fun:.5f}")
    for name, true, found in zip(["amplitude", "decay", "omega", "phase"], TRUE, result.x):
        print(f"  {name:9s} true {true:5.2f}  fitted {found:6.3f}")
    return result


if __name__ == "__main__":
    main()
