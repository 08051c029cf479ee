"""Recover the drag coefficient of a projectile from noisy position measurements.

The simulation is a plain Python loop (explicit Euler steps of a projectile with
quadratic air drag); adjoint_s2s differentiates through all of it. The fit is
`scipy.optimize.least_squares` with the Jacobian of the residuals from `ad.jacobian`.

    python examples/drag_fit.py
"""
import math

import numpy as np
from scipy.optimize import least_squares

import adjoint_s2s as ad

G = 9.81                  # m/s²
DT = 0.02                 # s, the simulation step
STEPS = 100               # 2 s of flight
EVERY = 10                # a measurement every 0.2 s
ANGLE = math.radians(40.0)
TRUE_DRAG, TRUE_SPEED = 0.02, 25.0    # 1/m, m/s


def simulate(drag, speed):
    """Positions (x, y) every EVERY steps of a projectile launched at ANGLE."""
    x, y = 0.0, 0.0
    vx, vy = speed * math.cos(ANGLE), speed * math.sin(ANGLE)
    xs, ys = [], []
    for step in range(1, STEPS + 1):
        v = math.sqrt(vx * vx + vy * vy)
        vx = vx - DT * drag * v * vx
        vy = vy - DT * (G + drag * v * vy)
        x = x + DT * vx
        y = y + DT * vy
        if step % EVERY == 0:
            xs.append(x)
            ys.append(y)
    return np.array(xs), np.array(ys)


def measurements(seed=0, noise=0.05):
    rng = np.random.default_rng(seed)
    xs, ys = simulate(TRUE_DRAG, TRUE_SPEED)
    return xs + noise * rng.normal(size=xs.shape), ys + noise * rng.normal(size=ys.shape)


def residuals(theta, xs_obs, ys_obs):
    xs, ys = simulate(float(theta[0]), float(theta[1]))
    return np.concatenate([xs - xs_obs, ys - ys_obs])


def jac(theta, xs_obs, ys_obs):
    return ad.jacobian(residuals, theta, xs_obs, ys_obs)[0]


def fit(theta0=(0.0, 20.0)):
    xs_obs, ys_obs = measurements()
    return least_squares(residuals, np.array(theta0), jac=jac, args=(xs_obs, ys_obs))


if __name__ == "__main__":
    result = fit()
    drag, speed = result.x
    print(result.message)
    print(f"{result.nfev} simulations, {result.njev} Jacobians")
    print(f"drag  true {TRUE_DRAG:.4f}  fitted {drag:.4f} 1/m")
    print(f"speed true {TRUE_SPEED:.2f}  fitted {speed:.2f} m/s")
