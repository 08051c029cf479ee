"""A long optimisation with a progress bar: logistic regression with an L2 penalty on
20,000 synthetic points whose features have scales from 0.1 to 10 (an ill-conditioned
problem, as unscaled real data is), fitted by full-batch gradient descent with momentum.
The loss is shown on a tqdm bar as it goes.

    python examples/progress_tqdm.py               # 3000 steps
    python examples/progress_tqdm.py --steps 200   # a short run
"""
import argparse

import numpy as np
from tqdm import tqdm

import adjoint_s2s as ad


def make_data(n=20_000, d=20, seed=0):
    rng = np.random.default_rng(seed)
    w_true = rng.normal(size=d)
    x = rng.normal(size=(n, d)) * np.logspace(-1.0, 1.0, d)
    w_true = w_true / np.logspace(-1.0, 1.0, d)
    p = 1.0 / (1.0 + np.exp(-(x @ w_true)))
    y = (rng.uniform(size=n) < p).astype(float)
    return x, y, w_true


def loss(w, b, x, y, penalty):
    z = x @ w + b
    nll = np.mean(np.logaddexp(0.0, z) - y * z)      # -log-likelihood of the labels
    return nll + penalty * np.sum(w * w)


def fit(steps=3000, lr=0.01, momentum=0.9, penalty=1e-4, seed=0, disable=False):
    x, y, w_true = make_data(seed=seed)
    w, b = np.zeros(x.shape[1]), 0.0
    vw, vb = np.zeros_like(w), 0.0
    losses = []
    with tqdm(range(steps), desc="fitting", unit="step", disable=disable) as bar:
        for step in bar:
            value, (gw, gb, _, _, _) = ad.withgradient(loss, w, b, x, y, penalty)
            vw, vb = momentum * vw - lr * gw, momentum * vb - lr * gb
            w, b = w + vw, b + vb
            losses.append(value)
            if step % 50 == 0:
                bar.set_postfix(loss=f"{value:.5f}")
    return w, b, w_true, losses


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    args = parser.parse_args()
    w, b, w_true, losses = fit(args.steps)
    cosine = w @ w_true / (np.linalg.norm(w) * np.linalg.norm(w_true))
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}; the fitted weights point along the true ones: cosine {cosine:.4f}")
