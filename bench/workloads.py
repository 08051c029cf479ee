"""Benchmark workloads for adjoint_s2s, each next to a hand-written gradient.

Every workload is a plain Python function returning a real scalar, written the way a
person would write it, plus ``<name>_grad`` computing the same value and its gradient
by hand (the baseline each AD system is divided by). ``WORKLOADS`` lists them with the
arguments to differentiate at.

Data that is not differentiated (inputs, labels, targets) lives in module globals:
adjoint_s2s, like Zygote, treats globals as constants, so every contender computes the
gradient with respect to exactly the arguments and nothing else.
"""
import dataclasses
import math

import numpy as np

try:  # (imported as bench.workloads by the tests, as workloads by bench/run.py)
    from . import pendulum_model
except ImportError:
    import pendulum_model

_rng = np.random.default_rng(0)

# ----- scalar workloads ---------------------------------------------------------------------


def scalar_poly(x, y):
    """About 25 float operations with sin, exp and cos."""
    a = math.sin(x) * y + 0.5 * x * x
    b = math.exp(-0.1 * a) * math.cos(y)
    c = a * b - 3.0 * x + y / (1.0 + x * x)
    d = math.sin(c) + math.cos(a * y)
    return d * d + c * b - 0.25 * a


def scalar_poly_grad(x, y):
    sx = math.sin(x)
    a = sx * y + 0.5 * x * x
    e = math.exp(-0.1 * a)
    cy = math.cos(y)
    b = e * cy
    q = 1.0 + x * x
    c = a * b - 3.0 * x + y / q
    ay = a * y
    d = math.sin(c) + math.cos(ay)
    value = d * d + c * b - 0.25 * a
    # reverse sweep, one adjoint per intermediate
    g_d = 2.0 * d
    g_c = b + g_d * math.cos(c)
    g_b = c + g_c * a
    g_ay = -g_d * math.sin(ay)
    g_a = -0.25 + g_c * b + g_ay * y - 0.1 * b * g_b
    gx = g_a * (math.cos(x) * y + x) - 3.0 * g_c - g_c * y * 2.0 * x / (q * q)
    gy = g_ay * a + g_c / q - g_b * e * math.sin(y) + g_a * sx
    return value, (gx, gy)


def scalar_loop(x):
    """100 iterations of a contraction."""
    for _ in range(100):
        x = 0.99 * x + 0.01 * math.sin(x)
    return x


def scalar_loop_grad(x):
    # forward-mode by hand: one pass, no tape
    d = 1.0
    for _ in range(100):
        d = d * (0.99 + 0.01 * math.cos(x))
        x = 0.99 * x + 0.01 * math.sin(x)
    return x, (d,)


# ----- NumPy workloads ------------------------------------------------------------------------

# mlp: batch 64, 32 inputs, 64 hidden (tanh), 10 outputs, mean squared error
MLP_X = _rng.standard_normal((64, 32))
MLP_Y = _rng.standard_normal((64, 10))
_MLP_ARGS = (
    _rng.standard_normal((32, 64)) / math.sqrt(32),
    0.1 * _rng.standard_normal(64),
    _rng.standard_normal((64, 10)) / 8.0,
    0.1 * _rng.standard_normal(10),
)


def mlp(W1, b1, W2, b2):
    h = np.tanh(MLP_X @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - MLP_Y) ** 2)


def mlp_grad(W1, b1, W2, b2):
    h = np.tanh(MLP_X @ W1 + b1)
    r = h @ W2 + b2 - MLP_Y
    value = np.mean(r * r)
    g_out = (2.0 / r.size) * r
    dW2 = h.T @ g_out
    db2 = g_out.sum(axis=0)
    g_z = (g_out @ W2.T) * (1.0 - h * h)
    dW1 = MLP_X.T @ g_z
    db1 = g_z.sum(axis=0)
    return value, (dW1, db1, dW2, db2)


# xent: softmax cross-entropy, 1000 rows of 100 logits, integer labels
XENT_LABELS = _rng.integers(0, 100, size=1000)
_XENT_ARGS = (2.0 * _rng.standard_normal((1000, 100)),)


def xent(logits):
    n = logits.shape[0]
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(n), XENT_LABELS])


def xent_grad(logits):
    n = logits.shape[0]
    z = logits - logits.max(axis=1, keepdims=True)
    ez = np.exp(z)
    s = ez.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    value = -np.mean(z[rows, XENT_LABELS] - np.log(s[:, 0]))
    g = ez / s
    g[rows, XENT_LABELS] -= 1.0
    g /= n
    return value, (g,)


# rnn: 50 steps, batch 16, 8 inputs, hidden 32; hidden states stored in a preallocated H
RNN_X = _rng.standard_normal((50, 16, 8))
RNN_TARGET = 0.5 * _rng.standard_normal((50, 16, 32))
_RNN_ARGS = (
    0.3 * _rng.standard_normal((8, 32)),
    0.9 * _rng.standard_normal((32, 32)) / math.sqrt(32),
    0.1 * _rng.standard_normal(32),
)


def rnn(Wx, Wh, b):
    T = RNN_X.shape[0]
    H = np.zeros((T, RNN_X.shape[1], Wh.shape[0]))
    h = np.zeros((RNN_X.shape[1], Wh.shape[0]))
    for t in range(T):
        h = np.tanh(RNN_X[t] @ Wx + h @ Wh + b)
        H[t] = h
    return np.mean((H - RNN_TARGET) ** 2)


def rnn_grad(Wx, Wh, b):
    T = RNN_X.shape[0]
    H = np.zeros((T, RNN_X.shape[1], Wh.shape[0]))
    h = np.zeros((RNN_X.shape[1], Wh.shape[0]))
    for t in range(T):
        h = np.tanh(RNN_X[t] @ Wx + h @ Wh + b)
        H[t] = h
    r = H - RNN_TARGET
    value = np.mean(r * r)
    g_H = (2.0 / r.size) * r
    dWx = np.zeros_like(Wx)
    dWh = np.zeros_like(Wh)
    db = np.zeros_like(b)
    g_h = np.zeros_like(h)
    for t in range(T - 1, -1, -1):  # backpropagation through time
        g_a = (g_H[t] + g_h) * (1.0 - H[t] * H[t])
        dWx += RNN_X[t].T @ g_a
        if t > 0:  # h before step 0 is zero
            dWh += H[t - 1].T @ g_a
        db += g_a.sum(axis=0)
        g_h = g_a @ Wh.T
    return value, (dWx, dWh, db)


# big_matmul: sum(tanh(A @ B)) for two 1000x1000 matrices
_BIG_ARGS = (
    0.1 * _rng.standard_normal((1000, 1000)),
    0.1 * _rng.standard_normal((1000, 1000)),
)


def big_matmul(A, B):
    return np.sum(np.tanh(A @ B))


def big_matmul_grad(A, B):
    Y = np.tanh(A @ B)
    G = 1.0 - Y * Y
    return Y.sum(), (G @ B.T, A.T @ G)


# ----- ordinary code that loses kinds (issue 15's cliffs) -------------------------------------
#
# Each group computes one thing written in forms a person would write; the hand-written
# gradient is the same for every form of a group, so the ratios compare the forms directly.

def pendulum(k):
    """A 1000-step pendulum (symplectic Euler), gradient with respect to the stiffness k."""
    theta = 1.0
    omega = 0.0
    for _ in range(1000):
        omega = omega - 0.01 * k * math.sin(theta)
        theta = theta + 0.01 * omega
    return theta


def pendulum_unpack(k):
    """The same pendulum, its state initialised by tuple unpacking."""
    theta, omega = 1.0, 0.0
    for _ in range(1000):
        omega = omega - 0.01 * k * math.sin(theta)
        theta = theta + 0.01 * omega
    return theta


def _pendulum_step(theta, omega, k):
    omega = omega - 0.01 * k * math.sin(theta)
    theta = theta + 0.01 * omega
    return theta, omega


def pendulum_helper(k):
    """The same pendulum, the loop body in a helper function."""
    theta = 1.0
    omega = 0.0
    for _ in range(1000):
        theta, omega = _pendulum_step(theta, omega, k)
    return theta


class _Pendulum:
    """The pendulum's state as an object, stepped by a method (the object-oriented form)."""

    def __init__(self, k):
        self.k = k
        self.theta = 1.0
        self.omega = 0.0

    def step(self, dt):
        self.omega = self.omega - dt * self.k * math.sin(self.theta)
        self.theta = self.theta + dt * self.omega


def pendulum_object(k):
    """The same pendulum, its state the fields of an object stepped by a method."""
    p = _Pendulum(k)
    for _ in range(1000):
        p.step(0.01)
    return p.theta


# the record form, written twice on purpose: here (a class and a helper of the caller's
# own file, which the transformer inlines) and in bench/pendulum_model.py (a module of
# their own, called), the two places users keep them
@dataclasses.dataclass(frozen=True)
class _PendulumParams:
    k: float
    dt: float


def _swing(p, steps):
    theta = 1.0
    omega = 0.0
    for _ in range(steps):
        omega = omega - p.dt * p.k * math.sin(theta)
        theta = theta + p.dt * omega
    return theta


def pendulum_record(k):
    """The same pendulum, its parameters a record handed to a helper that reads its fields."""
    return _swing(_PendulumParams(k, 0.01), 1000)


def pendulum_module(k):
    """The same, the record and the simulation in a model module of their own: the
    simulation is called (not inlined), with the record as its argument."""
    return pendulum_model.swing(pendulum_model.PendulumParams(k, 0.01), 1000)


PENDULUM_STEPS = 1000
PENDULUM_DT = 0.01


def pendulum_global(k):
    """The same pendulum, its step count and time step module constants."""
    theta = 1.0
    omega = 0.0
    for _ in range(PENDULUM_STEPS):
        omega = omega - PENDULUM_DT * k * math.sin(theta)
        theta = theta + PENDULUM_DT * omega
    return theta


def pendulum_grad(k):
    # forward accumulation of d/dk alongside the state
    theta, omega = 1.0, 0.0
    d_theta, d_omega = 0.0, 0.0
    dt = 0.01
    for _ in range(1000):
        s = math.sin(theta)
        d_omega = d_omega - dt * (s + k * math.cos(theta) * d_theta)
        omega = omega - dt * k * s
        d_theta = d_theta + dt * d_omega
        theta = theta + dt * omega
    return theta, (d_theta,)


# a tanh RNN over a global list of per-step inputs, and over the same data as one array
SEQ_T = 50
SEQ_XS = [_rng.standard_normal((16, 8)) for _ in range(SEQ_T)]
SEQ_X = np.stack(SEQ_XS)
_SEQ_ARGS = (
    0.3 * _rng.standard_normal((8, 32)),
    0.9 * _rng.standard_normal((32, 32)) / math.sqrt(32),
)


def seq_list(Wx, Wh):
    h = np.zeros((16, 32))
    for t in range(SEQ_T):
        h = np.tanh(SEQ_XS[t] @ Wx + h @ Wh)
    return np.sum(h * h)


def seq_stacked(Wx, Wh):
    h = np.zeros((16, 32))
    for t in range(SEQ_T):
        h = np.tanh(SEQ_X[t] @ Wx + h @ Wh)
    return np.sum(h * h)


def seq_grad(Wx, Wh):
    hs = [np.zeros((16, 32))]
    for t in range(SEQ_T):
        hs.append(np.tanh(SEQ_X[t] @ Wx + hs[-1] @ Wh))
    h = hs[-1]
    value = np.sum(h * h)
    dWx = np.zeros_like(Wx)
    dWh = np.zeros_like(Wh)
    g_h = 2.0 * h
    for t in range(SEQ_T - 1, -1, -1):
        g_a = g_h * (1.0 - hs[t + 1] * hs[t + 1])
        dWx += SEQ_X[t].T @ g_a
        dWh += hs[t].T @ g_a
        g_h = g_a @ Wh.T
    return value, (dWx, dWh)


# an RK4 integrator of y' = -k*y + sin(t), the right-hand side written out in the loop
# and as a local function called four times per step (a closure over k)
RK4_STEPS = 200


def rk4_inline(k):
    y, t, h = 1.0, 0.0, 0.01
    for _ in range(RK4_STEPS):
        k1 = -k * y + math.sin(t)
        k2 = -k * (y + h / 2 * k1) + math.sin(t + h / 2)
        k3 = -k * (y + h / 2 * k2) + math.sin(t + h / 2)
        k4 = -k * (y + h * k3) + math.sin(t + h)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t = t + h
    return y


def rk4_local(k):
    def f(t, y):
        return -k * y + math.sin(t)

    y, t, h = 1.0, 0.0, 0.01
    for _ in range(RK4_STEPS):
        k1 = f(t, y)
        k2 = f(t + h / 2, y + h / 2 * k1)
        k3 = f(t + h / 2, y + h / 2 * k2)
        k4 = f(t + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t = t + h
    return y


def rk4_grad(k):
    # forward accumulation of d/dk through each stage
    y, t, h = 1.0, 0.0, 0.01
    dy = 0.0
    for _ in range(RK4_STEPS):
        k1 = -k * y + math.sin(t)
        d1 = -y - k * dy
        y2 = y + h / 2 * k1
        k2 = -k * y2 + math.sin(t + h / 2)
        d2 = -y2 - k * (dy + h / 2 * d1)
        y3 = y + h / 2 * k2
        k3 = -k * y3 + math.sin(t + h / 2)
        d3 = -y3 - k * (dy + h / 2 * d2)
        y4 = y + h * k3
        k4 = -k * y4 + math.sin(t + h)
        d4 = -y4 - k * (dy + h * d3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        dy = dy + h / 6 * (d1 + 2 * d2 + 2 * d3 + d4)
        t = t + h
    return y, (dy,)


# a power series with weights from a module array, by index and by enumerate
ENUM_N = 200
ENUM_W = 1.0 / (np.arange(ENUM_N) + 1.0)


def enum_range(x):
    s = 0.0
    for i in range(ENUM_N):
        s = s + ENUM_W[i] * x ** i
    return s


def enum_enumerate(x):
    s = 0.0
    for i, w in enumerate(ENUM_W):
        s = s + w * x ** i
    return s


def enum_grad(x):
    s, g = 0.0, 0.0
    p = 1.0  # x ** i
    for i in range(ENUM_N):
        w = float(ENUM_W[i])
        if i:
            g = g + w * i * (p / x)
        s = s + w * p
        p = p * x
    return s, (g,)


# an adaptive-step explicit Euler for y' = -k*y, the step capped at 1.0


def ode_min(k):
    y = 1.0
    t = 0.0
    h = 0.01
    while t < 20.0:
        f = -k * y
        y = y + h * f
        t = t + h
        h = 1.05 * h / (1.0 + h * f * f)
        h = min(h, 1.0)
    return y


def ode_ifexp(k):
    y = 1.0
    t = 0.0
    h = 0.01
    while t < 20.0:
        f = -k * y
        y = y + h * f
        t = t + h
        h = 1.05 * h / (1.0 + h * f * f)
        h = h if h < 1.0 else 1.0
    return y


def ode_grad(k):
    # forward accumulation: d/dk of y and of the step h
    y, t, h = 1.0, 0.0, 0.01
    dy, dh = 0.0, 0.0
    while t < 20.0:
        f = -k * y
        df = -y - k * dy
        dy = dy + dh * f + h * df
        y = y + h * f
        t = t + h
        den = 1.0 + h * f * f
        d_den = dh * f * f + 2.0 * h * f * df
        h_new = 1.05 * h / den
        dh = 1.05 * (dh * den - h * d_den) / (den * den)
        h = h_new
        if not h < 1.0:
            h, dh = 1.0, 0.0
    return y, (dy,)


# a one-line helper called in a loop, and the same code inlined


def _relax(x, a):
    return x - 0.01 * a * math.sin(x)


def loop_helper(a):
    x = 1.0
    for _ in range(200):
        x = _relax(x, a)
    return x


def loop_inlined(a):
    x = 1.0
    for _ in range(200):
        x = x - 0.01 * a * math.sin(x)
    return x


def loop_relax_grad(a):
    x, dx = 1.0, 0.0
    for _ in range(200):
        s = math.sin(x)
        dx = dx - 0.01 * (s + a * math.cos(x) * dx)
        x = x - 0.01 * a * s
    return x, (dx,)


# parameters read from a dict inside a loop, and the same loop on the parameters themselves


def loop_params(a, b):
    x = 1.0
    for _ in range(200):
        x = a * x + b * math.sin(x)
    return x


def loop_dict(a, b):
    p = {"decay": a, "gain": b}
    x = 1.0
    for _ in range(200):
        x = p["decay"] * x + p["gain"] * math.sin(x)
    return x


def loop_dict_grad(a, b):
    x, dxa, dxb = 1.0, 0.0, 0.0
    for _ in range(200):
        s = math.sin(x)
        j = a + b * math.cos(x)  # d(next x)/dx
        dxa = x + j * dxa
        dxb = s + j * dxb
        x = a * x + b * s
    return x, (dxa, dxb)


# an MLP with a softmax cross-entropy head: batch 64, 32 inputs, hidden width w, 10 classes
HEAD_X = _rng.standard_normal((64, 32))
HEAD_LABELS = _rng.integers(0, 10, size=64)


def _head_args(width):
    return (
        _rng.standard_normal((32, width)) / math.sqrt(32),
        0.1 * _rng.standard_normal(width),
        _rng.standard_normal((width, 10)) / math.sqrt(width),
        0.1 * _rng.standard_normal(10),
    )


def mlp_xent(W1, b1, W2, b2):
    h = np.tanh(HEAD_X @ W1 + b1)
    logits = h @ W2 + b2
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(HEAD_X.shape[0]), HEAD_LABELS])


def mlp_xent_grad(W1, b1, W2, b2):
    n = HEAD_X.shape[0]
    h = np.tanh(HEAD_X @ W1 + b1)
    logits = h @ W2 + b2
    z = logits - logits.max(axis=1, keepdims=True)
    ez = np.exp(z)
    s = ez.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    value = -np.mean(z[rows, HEAD_LABELS] - np.log(s[:, 0]))
    g = ez / s
    g[rows, HEAD_LABELS] -= 1.0
    g /= n
    dW2 = h.T @ g
    db2 = g.sum(axis=0)
    g_z = (g @ W2.T) * (1.0 - h * h)
    return value, (HEAD_X.T @ g_z, g_z.sum(axis=0), dW2, db2)


# ----- scaling: loop trips and sequence length --------------------------------------------------


def loop_trips(x, n):
    """n iterations of the scalar_loop contraction (n is an int: no gradient)."""
    for _ in range(n):
        x = 0.99 * x + 0.01 * math.sin(x)
    return x


def loop_trips_grad(x, n):
    d = 1.0
    for _ in range(n):
        d = d * (0.99 + 0.01 * math.cos(x))
        x = 0.99 * x + 0.01 * math.sin(x)
    return x, (d, None)


# the rnn workload over the first T of 1000 steps (T an int argument: no gradient)
RNNL_X = _rng.standard_normal((1000, 16, 8))
RNNL_TARGET = 0.5 * _rng.standard_normal((1000, 16, 32))


def rnn_len(Wx, Wh, b, T):
    H = np.zeros((T, 16, 32))
    h = np.zeros((16, 32))
    for t in range(T):
        h = np.tanh(RNNL_X[t] @ Wx + h @ Wh + b)
        H[t] = h
    return np.mean((H - RNNL_TARGET[:T]) ** 2)


def rnn_len_grad(Wx, Wh, b, T):
    H = np.zeros((T, 16, 32))
    h = np.zeros((16, 32))
    for t in range(T):
        h = np.tanh(RNNL_X[t] @ Wx + h @ Wh + b)
        H[t] = h
    r = H - RNNL_TARGET[:T]
    value = np.mean(r * r)
    g_H = (2.0 / r.size) * r
    dWx = np.zeros_like(Wx)
    dWh = np.zeros_like(Wh)
    db = np.zeros_like(b)
    g_h = np.zeros_like(h)
    for t in range(T - 1, -1, -1):
        g_a = (g_H[t] + g_h) * (1.0 - H[t] * H[t])
        dWx += RNNL_X[t].T @ g_a
        if t > 0:
            dWh += H[t - 1].T @ g_a
        db += g_a.sum(axis=0)
        g_h = g_a @ Wh.T
    return value, (dWx, dWh, db, None)


RNN_LEN_PARAMS = _RNN_ARGS  # Wx, Wh, b of the rnn workload


def straight_line_source(n, name="straight"):
    """The source of a straight-line scalar function of n assignments (and a return),
    cycling through four kinds of line; every value stays bounded."""
    out = [f"def {name}(x, y):", "    v0 = x * y", "    v1 = math.sin(x) + y", "    v2 = v0 * v1"]
    forms = (
        "    v{i} = math.sin(v{a}) + 0.5 * v{b}",
        "    v{i} = v{a} * math.cos(y) - 0.1 * x",
        "    v{i} = math.tanh(v{a} + v{c})",
        "    v{i} = 0.5 * v{a} * v{b} + y",
    )
    for i in range(3, n):
        out.append(forms[i % 4].format(i=i, a=i - 1, b=i - 2, c=i - 3))
    out.append(f"    return v{n - 1}")
    return "\n".join(out) + "\n"


# ----- the transform-time workload (about 40 lines of source) ----------------------------------


def transform_target(x, y):
    """Scalar code with branches, a loop and a dozen math functions: its first-call cost
    (parse, transform, compile) is what bench/run.py measures."""
    a = math.sin(x) * y
    b = math.cos(y) + x * x
    if a > b:
        c = a - b
    else:
        c = b - a
    d = math.exp(-0.5 * c * c)
    e = d * x + (1.0 - d) * y
    s = 0.0
    for i in range(5):
        t = e * (i + 1) * 0.1
        s = s + math.sin(t) * math.cos(t + a)
        if s > 1.0:
            s = s * 0.5
    r = math.sqrt(1.0 + s * s)
    u = math.log(1.0 + r) - math.atan(e)
    v = u * u + a * b
    w = v / (1.0 + abs(c))
    p = math.tanh(w) + math.sinh(0.1 * u)
    q = math.hypot(p, d)
    z1 = q * math.exp(-0.1 * x)
    z2 = z1 + math.pow(abs(y) + 1.0, 0.5)
    z3 = z2 * math.cos(z1) - math.sin(z2) * 0.5
    k = 0.0
    j = 0
    while j < 3:
        k = k + z3 / (j + 2.0)
        j += 1
    m = k * k - z1 * z2
    if m < 0.0:
        m = -m
    n = math.log1p(m) + math.atan2(k, 1.0 + z1 * z1)
    o = n * math.cosh(0.1 * y) - d * e
    out = o + 0.1 * s + 0.01 * v
    return out * out


TRANSFORM_ARGS = (0.7, 1.3)


# ----- the registry -------------------------------------------------------------------------------


class Workload:
    def __init__(self, name, fn, grad, args, what, group=None):
        self.group = group  # forms of one computation: the first of a group is its plain form
        self.name = name
        self.fn = fn
        self.grad = grad
        self.args = args
        self.what = what


WORKLOADS = [
    Workload("scalar_poly", scalar_poly, scalar_poly_grad, (0.7, 1.3),
             "~25 float ops with sin/exp/cos, 2 scalar inputs"),
    Workload("scalar_loop", scalar_loop, scalar_loop_grad, (0.7,),
             "100 iterations of x = 0.99*x + 0.01*sin(x)"),
    Workload("mlp", mlp, mlp_grad, _MLP_ARGS,
             "batch 64, 32-64-10, tanh, MSE; d/d(W1, b1, W2, b2)"),
    Workload("xent", xent, xent_grad, _XENT_ARGS,
             "softmax cross-entropy, 1000x100 logits; d/d logits"),
    Workload("rnn", rnn, rnn_grad, _RNN_ARGS,
             "tanh RNN, 50 steps, batch 16, hidden 32, H[t] = h; d/d(Wx, Wh, b)"),
    Workload("big_matmul", big_matmul, big_matmul_grad, _BIG_ARGS,
             "sum(tanh(A @ B)), A and B 1000x1000; d/d(A, B)"),
    Workload("pendulum", pendulum, pendulum_grad, (9.81,),
             "1000-step pendulum, theta = 1.0 / omega = 0.0 on two lines; d/dk", group="pendulum"),
    Workload("pendulum_unpack", pendulum_unpack, pendulum_grad, (9.81,),
             "the same, theta, omega = 1.0, 0.0", group="pendulum"),
    Workload("pendulum_helper", pendulum_helper, pendulum_grad, (9.81,),
             "the same, the loop body in a helper returning (theta, omega)", group="pendulum"),
    Workload("pendulum_global", pendulum_global, pendulum_grad, (9.81,),
             "the same, step count and dt read from module globals", group="pendulum"),
    Workload("pendulum_object", pendulum_object, pendulum_grad, (9.81,),
             "the same, the state an object's fields, p.step(dt) a method", group="pendulum"),
    Workload("pendulum_record", pendulum_record, pendulum_grad, (9.81,),
             "the same, k and dt a dataclass handed to a helper reading p.k, p.dt", group="pendulum"),
    Workload("pendulum_module", pendulum_module, pendulum_grad, (9.81,),
             "the same, the record and the simulation in a module of their own", group="pendulum"),
    Workload("seq_stacked", seq_stacked, seq_grad, _SEQ_ARGS,
             "tanh RNN over a global (50, 16, 8) array, XS[t]; d/d(Wx, Wh)", group="seq"),
    Workload("seq_list", seq_list, seq_grad, _SEQ_ARGS,
             "the same over a global list of 50 (16, 8) arrays", group="seq"),
    Workload("ode_ifexp", ode_ifexp, ode_grad, (0.5,),
             "adaptive-step Euler, ~100 steps, h = h if h < 1.0 else 1.0; d/dk", group="ode"),
    Workload("ode_min", ode_min, ode_grad, (0.5,),
             "the same with h = min(h, 1.0)", group="ode"),
    Workload("loop_inlined", loop_inlined, loop_relax_grad, (0.8,),
             "200 steps of x = x - 0.01*a*sin(x); d/da", group="helper"),
    Workload("loop_helper", loop_helper, loop_relax_grad, (0.8,),
             "the same step in a one-line helper function", group="helper"),
    Workload("rk4_inline", rk4_inline, rk4_grad, (0.7,),
             "200 RK4 steps of y' = -k*y + sin(t), the right-hand side written out; d/dk", group="rk4"),
    Workload("rk4_local", rk4_local, rk4_grad, (0.7,),
             "the same, the right-hand side a local function f(t, y) called four times a step",
             group="rk4"),
    Workload("enum_range", enum_range, enum_grad, (0.9,),
             "200 terms w[i] * x ** i, for i in range(n) over a module array; d/dx", group="enum"),
    Workload("enum_enumerate", enum_enumerate, enum_grad, (0.9,),
             "the same, for i, w in enumerate(W)", group="enum"),
    Workload("loop_params", loop_params, loop_dict_grad, (0.97, 0.02),
             "200 steps of x = a*x + b*sin(x); d/d(a, b)", group="dict"),
    Workload("loop_dict", loop_dict, loop_dict_grad, (0.97, 0.02),
             "the same, a and b read as p['decay'], p['gain'] from a dict", group="dict"),
    Workload("mlp_xent_32", mlp_xent, mlp_xent_grad, _head_args(32),
             "MLP 32-32-10, softmax cross-entropy head, batch 64; d/d(W1, b1, W2, b2)"),
    Workload("mlp_xent_512", mlp_xent, mlp_xent_grad, _head_args(512),
             "the same, hidden width 512"),
]

BY_NAME = {w.name: w for w in WORKLOADS}
