"""The workloads of bench/workloads.py written for the anchors adjoint_s2s is compared with:
autograd, JAX and PyTorch, each in its own idiom (autograd and JAX have no in-place
assignment into arrays, so the rnn builds H with a list and ``stack`` for autograd and
with ``H.at[t].set(h)`` for JAX).

Each ``build_<peer>(name, args)`` returns ``(run, to_numpy)``: ``run()`` computes the
gradient with respect to all of ``args`` and waits for it (JAX is asynchronous),
``to_numpy(run())`` turns that into a tuple of NumPy values to check it against the
hand-written gradient. ``available()`` says which peers import; a peer that does not is
simply left out.
"""
import importlib
import importlib.metadata

import numpy as np

import workloads as W

PEERS = ("autograd", "jax", "jax.jit", "torch")
# the workloads written for each peer; elsewhere a peer's column says n/a. autograd has
# the forms of issue 15's cliffs too (each in autograd's idiom: the same Python code with
# autograd.numpy for math); JAX and PyTorch the first six.
WORKLOADS = ("scalar_poly", "scalar_loop", "mlp", "xent", "rnn", "big_matmul")
AUTOGRAD_MORE = ("pendulum", "pendulum_unpack", "pendulum_helper", "pendulum_global",
                 "seq_stacked", "seq_list", "ode_ifexp", "ode_min", "loop_inlined", "loop_helper",
                 "loop_params", "loop_dict", "mlp_xent_32", "mlp_xent_512")


def has(peer, name):
    if peer == "autograd":
        return name in WORKLOADS + AUTOGRAD_MORE
    return peer in PEERS and name in WORKLOADS


def available():
    """{peer: None if importable else the reason}; jax.jit goes with jax."""
    out = {}
    for mod in ("autograd", "jax", "torch"):
        try:
            importlib.import_module(mod)
            out[mod] = None
        except Exception as exc:  # ImportError, or a broken install
            out[mod] = f"{type(exc).__name__}: {exc}"
    out["jax.jit"] = out["jax"]
    return out


def version(peer):
    dist = peer.split(".")[0]
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return getattr(importlib.import_module(dist), "__version__", "?")


def build(peer, name, args):
    if peer == "autograd":
        return build_autograd(name, args)
    if peer == "jax":
        return build_jax(name, args, jit=False)
    if peer == "jax.jit":
        return build_jax(name, args, jit=True)
    if peer == "torch":
        return build_torch(name, args)
    raise ValueError(peer)


# ----- autograd ---------------------------------------------------------------------------------


def _autograd_fns():
    import autograd.numpy as anp

    def scalar_poly(x, y):
        a = anp.sin(x) * y + 0.5 * x * x
        b = anp.exp(-0.1 * a) * anp.cos(y)
        c = a * b - 3.0 * x + y / (1.0 + x * x)
        d = anp.sin(c) + anp.cos(a * y)
        return d * d + c * b - 0.25 * a

    def scalar_loop(x):
        for _ in range(100):
            x = 0.99 * x + 0.01 * anp.sin(x)
        return x

    def mlp(W1, b1, W2, b2):
        h = anp.tanh(W.MLP_X @ W1 + b1)
        out = h @ W2 + b2
        return anp.mean((out - W.MLP_Y) ** 2)

    def xent(logits):
        n = logits.shape[0]
        z = logits - anp.max(logits, axis=1, keepdims=True)
        logp = z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True))
        return -anp.mean(logp[anp.arange(n), W.XENT_LABELS])

    def rnn(Wx, Wh, b):
        T = W.RNN_X.shape[0]
        h = anp.zeros((W.RNN_X.shape[1], Wh.shape[0]))
        hs = []
        for t in range(T):
            h = anp.tanh(W.RNN_X[t] @ Wx + h @ Wh + b)
            hs.append(h)
        H = anp.stack(hs)
        return anp.mean((H - W.RNN_TARGET) ** 2)

    def big_matmul(A, B):
        return anp.sum(anp.tanh(A @ B))

    def pendulum(k):
        theta = 1.0
        omega = 0.0
        for _ in range(1000):
            omega = omega - 0.01 * k * anp.sin(theta)
            theta = theta + 0.01 * omega
        return theta

    def pendulum_unpack(k):
        theta, omega = 1.0, 0.0
        for _ in range(1000):
            omega = omega - 0.01 * k * anp.sin(theta)
            theta = theta + 0.01 * omega
        return theta

    def step(theta, omega, k):
        omega = omega - 0.01 * k * anp.sin(theta)
        theta = theta + 0.01 * omega
        return theta, omega

    def pendulum_helper(k):
        theta = 1.0
        omega = 0.0
        for _ in range(1000):
            theta, omega = step(theta, omega, k)
        return theta

    def pendulum_global(k):
        theta = 1.0
        omega = 0.0
        for _ in range(W.PENDULUM_STEPS):
            omega = omega - W.PENDULUM_DT * k * anp.sin(theta)
            theta = theta + W.PENDULUM_DT * omega
        return theta

    def seq_stacked(Wx, Wh):
        h = anp.zeros((16, 32))
        for t in range(W.SEQ_T):
            h = anp.tanh(W.SEQ_X[t] @ Wx + h @ Wh)
        return anp.sum(h * h)

    def seq_list(Wx, Wh):
        h = anp.zeros((16, 32))
        for t in range(W.SEQ_T):
            h = anp.tanh(W.SEQ_XS[t] @ Wx + h @ Wh)
        return anp.sum(h * h)

    def ode_ifexp(k):
        y, t, h = 1.0, 0.0, 0.01
        while t < 20.0:
            f = -k * y
            y = y + h * f
            t = t + h
            h = 1.05 * h / (1.0 + h * f * f)
            h = h if h < 1.0 else 1.0
        return y

    def ode_min(k):
        y, t, h = 1.0, 0.0, 0.01
        while t < 20.0:
            f = -k * y
            y = y + h * f
            t = t + h
            h = 1.05 * h / (1.0 + h * f * f)
            h = min(h, 1.0)
        return y

    def relax(x, a):
        return x - 0.01 * a * anp.sin(x)

    def loop_inlined(a):
        x = 1.0
        for _ in range(200):
            x = x - 0.01 * a * anp.sin(x)
        return x

    def loop_helper(a):
        x = 1.0
        for _ in range(200):
            x = relax(x, a)
        return x

    def loop_params(a, b):
        x = 1.0
        for _ in range(200):
            x = a * x + b * anp.sin(x)
        return x

    def loop_dict(a, b):
        p = {"decay": a, "gain": b}
        x = 1.0
        for _ in range(200):
            x = p["decay"] * x + p["gain"] * anp.sin(x)
        return x

    def mlp_xent(W1, b1, W2, b2):
        h = anp.tanh(W.HEAD_X @ W1 + b1)
        logits = h @ W2 + b2
        z = logits - anp.max(logits, axis=1, keepdims=True)
        logp = z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True))
        return -anp.mean(logp[anp.arange(W.HEAD_X.shape[0]), W.HEAD_LABELS])

    mlp_xent_32 = mlp_xent_512 = mlp_xent
    return {k: v for k, v in locals().items() if callable(v)}


def build_autograd(name, args):
    import autograd

    f = _autograd_fns()[name]
    g = autograd.grad(f, argnum=tuple(range(len(args))))

    def run():
        return g(*args)

    return run, lambda out: tuple(np.asarray(o) for o in out)


# ----- JAX --------------------------------------------------------------------------------------


def _jax_fns():
    import jax.numpy as jnp

    mlp_x, mlp_y = jnp.asarray(W.MLP_X), jnp.asarray(W.MLP_Y)
    labels = jnp.asarray(W.XENT_LABELS)
    rnn_x, rnn_target = jnp.asarray(W.RNN_X), jnp.asarray(W.RNN_TARGET)

    def scalar_poly(x, y):
        a = jnp.sin(x) * y + 0.5 * x * x
        b = jnp.exp(-0.1 * a) * jnp.cos(y)
        c = a * b - 3.0 * x + y / (1.0 + x * x)
        d = jnp.sin(c) + jnp.cos(a * y)
        return d * d + c * b - 0.25 * a

    def scalar_loop(x):
        for _ in range(100):
            x = 0.99 * x + 0.01 * jnp.sin(x)
        return x

    def mlp(W1, b1, W2, b2):
        h = jnp.tanh(mlp_x @ W1 + b1)
        out = h @ W2 + b2
        return jnp.mean((out - mlp_y) ** 2)

    def xent(logits):
        n = logits.shape[0]
        z = logits - jnp.max(logits, axis=1, keepdims=True)
        logp = z - jnp.log(jnp.sum(jnp.exp(z), axis=1, keepdims=True))
        return -jnp.mean(logp[jnp.arange(n), labels])

    def rnn(Wx, Wh, b):
        T = rnn_x.shape[0]
        H = jnp.zeros((T, rnn_x.shape[1], Wh.shape[0]))
        h = jnp.zeros((rnn_x.shape[1], Wh.shape[0]))
        for t in range(T):
            h = jnp.tanh(rnn_x[t] @ Wx + h @ Wh + b)
            H = H.at[t].set(h)
        return jnp.mean((H - rnn_target) ** 2)

    def big_matmul(A, B):
        return jnp.sum(jnp.tanh(A @ B))

    return {k: v for k, v in locals().items() if callable(v)}


def _jax_setup():
    import jax

    # float64 like every other contender (JAX computes in float32 by default)
    jax.config.update("jax_enable_x64", True)
    return jax


def build_jax(name, args, jit):
    jax = _jax_setup()
    import jax.numpy as jnp

    f = _jax_fns()[name]
    g = jax.grad(f, argnums=tuple(range(len(args))))
    if jit:
        g = jax.jit(g)
    # arrays live on the device once, as parameters would; Python floats stay floats
    jargs = tuple(a if isinstance(a, float) else jnp.asarray(a) for a in args)

    def run():
        return jax.block_until_ready(g(*jargs))

    return run, lambda out: tuple(np.asarray(o) for o in out)


# ----- PyTorch ------------------------------------------------------------------------------------


def _torch_fns():
    import torch

    mlp_x, mlp_y = torch.from_numpy(W.MLP_X), torch.from_numpy(W.MLP_Y)
    labels = torch.from_numpy(W.XENT_LABELS)
    rnn_x, rnn_target = torch.from_numpy(W.RNN_X), torch.from_numpy(W.RNN_TARGET)

    def scalar_poly(x, y):
        a = torch.sin(x) * y + 0.5 * x * x
        b = torch.exp(-0.1 * a) * torch.cos(y)
        c = a * b - 3.0 * x + y / (1.0 + x * x)
        d = torch.sin(c) + torch.cos(a * y)
        return d * d + c * b - 0.25 * a

    def scalar_loop(x):
        for _ in range(100):
            x = 0.99 * x + 0.01 * torch.sin(x)
        return x

    def mlp(W1, b1, W2, b2):
        h = torch.tanh(mlp_x @ W1 + b1)
        out = h @ W2 + b2
        return torch.mean((out - mlp_y) ** 2)

    def xent(logits):
        n = logits.shape[0]
        z = logits - torch.amax(logits, dim=1, keepdim=True)
        logp = z - torch.log(torch.sum(torch.exp(z), dim=1, keepdim=True))
        return -torch.mean(logp[torch.arange(n), labels])

    def rnn(Wx, Wh, b):
        T = rnn_x.shape[0]
        H = torch.zeros((T, rnn_x.shape[1], Wh.shape[0]), dtype=torch.float64)
        h = torch.zeros((rnn_x.shape[1], Wh.shape[0]), dtype=torch.float64)
        for t in range(T):
            h = torch.tanh(rnn_x[t] @ Wx + h @ Wh + b)
            H[t] = h
        return torch.mean((H - rnn_target) ** 2)

    def big_matmul(A, B):
        return torch.sum(torch.tanh(A @ B))

    return {k: v for k, v in locals().items() if callable(v)}


def build_torch(name, args):
    import torch

    f = _torch_fns()[name]
    params = tuple(
        torch.tensor(a, dtype=torch.float64, requires_grad=True)
        if isinstance(a, float)
        else torch.from_numpy(a).requires_grad_(True)
        for a in args
    )

    def run():
        return torch.autograd.grad(f(*params), params)

    return run, lambda out: tuple(o.detach().numpy() for o in out)

