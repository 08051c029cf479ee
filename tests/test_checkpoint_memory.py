"""Checkpointing trades time for memory: only the inputs of each step are kept."""
import tracemalloc

import numpy as np

import adjoint_s2s as ad


def step(x):
    """One loop body with several intermediate arrays the backward pass would need."""
    y = np.tanh(x)
    z = np.sin(y) * y
    w = np.exp(-z * z)
    return x + 0.01 * w * np.cos(z)


def plain_loop(x):
    for _ in range(200):
        x = step(x)
    return np.sum(x * x)


def checkpointed_loop(x):
    for _ in range(200):
        x = ad.checkpoint(step, x)
    return np.sum(x * x)


def peak_of(fn, x):
    tracemalloc.start()
    tracemalloc.reset_peak()
    (g,) = ad.gradient(fn, x)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return g, peak


def test_checkpointing_a_loop_body_cuts_peak_memory_at_least_fivefold():
    x = np.random.default_rng(0).normal(size=100_000)
    ad.gradient(plain_loop, x[:10])  # transform outside the measurement
    ad.gradient(checkpointed_loop, x[:10])
    g_plain, peak_plain = peak_of(plain_loop, x)
    g_ckpt, peak_ckpt = peak_of(checkpointed_loop, x)
    assert np.allclose(g_plain, g_ckpt, rtol=1e-12, atol=0)
    assert peak_plain >= 5 * peak_ckpt, (peak_plain, peak_ckpt)
