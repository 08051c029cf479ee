"""Benchmark workloads for adjoint_s2s, each next to a hand-written gradient.

Every workload is a plain Python function returning a real scalar, written the way a
person would write it, plus ``<name>_grad`` computing the same value and its gradient
by hand (the baseline each AD system is divided by). ``WORKLOADS`` lists them with the
arguments to differentiate at.

Data that is not differentiated (inputs, labels, targets) lives in module globals:
adjoint_s2s, like Zygote, treats globals as constants, so every contender computes the
gradient with respect to exactly the arguments and nothing else.
"""
import math

import numpy as np

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
    def __init__(self, name, fn, grad, args, what):
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
]

BY_NAME = {w.name: w for w in WORKLOADS}
