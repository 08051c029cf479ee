"""The pendulum of bench/workloads.py as a model module: its parameters a record, its
simulation a function of the record (the form a project keeps its model in, imported
by the script that differentiates it)."""
import dataclasses
import math


@dataclasses.dataclass(frozen=True)
class PendulumParams:
    k: float
    dt: float


def swing(p, steps):
    """theta after `steps` symplectic Euler steps from theta = 1.0, omega = 0.0."""
    theta = 1.0
    omega = 0.0
    for _ in range(steps):
        omega = omega - p.dt * p.k * math.sin(theta)
        theta = theta + p.dt * omega
    return theta
