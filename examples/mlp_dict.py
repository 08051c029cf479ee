"""Train a small NumPy multi-layer perceptron whose parameters live in a dict.

The gradient of a dict argument is a dict: the update reads it by key,
`{k: p[k] - lr * g[k] for k in p}`, as one would with JAX pytrees or PyTorch's
`named_parameters()`. The task: classify points of two interleaved spirals.

    python examples/mlp_dict.py            # 1500 steps of Adam
    python examples/mlp_dict.py 300        # fewer steps
"""
import sys

import numpy as np

import adjoint_s2s as ad


def spirals(n=100, seed=0):
    rng = np.random.default_rng(seed)
    r = np.linspace(0.2, 1.0, n)
    angle = np.linspace(0.0, 3.0 * np.pi, n)
    a = np.stack([r * np.cos(angle), r * np.sin(angle)], axis=1)
    x = np.concatenate([a, -a]) + 0.02 * rng.normal(size=(2 * n, 2))
    y = np.concatenate([np.zeros(n), np.ones(n)])
    return x, y


def init(sizes=(2, 32, 32, 1), seed=1):
    rng = np.random.default_rng(seed)
    params = {}
    for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:]), start=1):
        params[f"W{i}"] = rng.normal(size=(m, n)) / np.sqrt(m)
        params[f"b{i}"] = np.zeros(n)
    return params


def predict(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    h = np.tanh(h @ params["W2"] + params["b2"])
    return (h @ params["W3"] + params["b3"])[:, 0]          # logits


def loss(params, x, y):
    z = predict(params, x)
    # binary cross-entropy with logits, written to be stable for large |z|
    return np.mean(np.maximum(z, 0.0) - z * y + np.log1p(np.exp(-np.abs(z))))


def accuracy(params, x, y):
    return np.mean((predict(params, x) > 0) == (y > 0.5))


def train(steps=1500, lr=0.01, log_every=250):
    x, y = spirals()
    params = init()
    m = {k: np.zeros_like(v) for k, v in params.items()}    # Adam's moments
    v = {k: np.zeros_like(w) for k, w in params.items()}
    b1, b2, eps = 0.9, 0.999, 1e-8
    history = []
    for step in range(1, steps + 1):
        value, (g, _, _) = ad.withgradient(loss, params, x, y)
        history.append(value)
        for k in params:
            m[k] = b1 * m[k] + (1 - b1) * g[k]
            v[k] = b2 * v[k] + (1 - b2) * g[k] ** 2
            m_hat, v_hat = m[k] / (1 - b1 ** step), v[k] / (1 - b2 ** step)
            params[k] = params[k] - lr * m_hat / (np.sqrt(v_hat) + eps)
        if log_every and step % log_every == 0:
            print(f"step {step:5d}  loss {value:.4f}  accuracy {accuracy(params, x, y):.3f}")
    return params, history, accuracy(params, x, y)


if __name__ == "__main__":
    train(int(sys.argv[1]) if len(sys.argv) > 1 else 1500)
