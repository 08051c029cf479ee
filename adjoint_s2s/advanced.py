"""Advanced adjoints (Zygote's seed): hooks, showgrad, checkpointing; Jacobians, Hessians.

Each is an ordinary function plus a rule, like a user would write them with
``@adjoint`` — and, like any rule, differentiable again when gradients are nested.
"""
import numpy as np

from .api import _pullback, adjoint, gradient, pullback


def hook(f, x):
    """x; in the backward pass, f is applied to the gradient flowing into x."""
    return x


@adjoint(hook)
def _hook_rule(f, x):
    return x, lambda g: (None, f(g))


def showgrad(x, label=None):
    """x; in the backward pass, prints the gradient of this use of x: ``∂(x) = value``.

    The transformer fills ``label`` with (source of the expression, file:line).
    """
    return x


@adjoint(showgrad)
def _showgrad_rule(x, label=None):
    def showgrad_pullback(g):
        expr, where = label if isinstance(label, tuple) else (label or "x", None)
        print(f"∂({expr}) = {g}" + (f"    at {where}" if where else ""))
        return (g,)

    return x, showgrad_pullback


def checkpoint(f, *args):
    """f(*args), keeping only the arguments: the backward pass runs f forward again.

    Memory for time: nothing f computes is stored between the passes, and f's side
    effects happen twice (once in each pass).
    """
    return f(*args)


@adjoint(checkpoint)
def _checkpoint_rule(f, *args):
    y = f(*args)

    def checkpoint_pullback(g):
        back = _pullback(f, *args)[1]
        grads = back(g)
        return (grads[0],) + tuple(grads[1:])

    return y, checkpoint_pullback


def jacobian(f, *args):
    """Reverse-mode Jacobians of f at args, one per argument (one pullback per output).

    For an output of shape S and an argument of shape A the Jacobian has shape S + A
    (scalars have shape ()).
    """
    # (written so that it is differentiated again, as jacobian inside a gradient is: the
    # rows are collected with plain names, no method call on an expression receiver)
    y, back = pullback(f, *args)
    y_arr = np.asarray(y)
    dtype = np.result_type(y_arr.dtype, float)
    all_grads = []
    for i in range(y_arr.size):
        seed = np.zeros(y_arr.size, dtype=dtype)
        seed[i] = 1.0
        seed = seed.reshape(y_arr.shape)
        all_grads.append(back(seed if y_arr.ndim else seed[()]))
    out = []
    for j, a in enumerate(args):
        rows = []
        for grads in all_grads:
            g = grads[j]
            rows.append(np.zeros(np.shape(a)) if g is None else np.asarray(g, dtype=float))
        stacked = np.stack(rows) if rows else np.zeros((0,) + np.shape(a))
        out.append(stacked.reshape(y_arr.shape + np.shape(a)))
    return tuple(out)


def hessian(f, x):
    """The Hessian of a scalar function of a float or an array (reverse over reverse)."""

    def grad_f(x):
        return gradient(f, x)[0]

    (h,) = jacobian(grad_f, x)
    return h if np.ndim(x) else float(h)


def hvp(f, x, v):
    """The Hessian-vector product H(x) @ v, by reverse over reverse (there is no
    forward mode): the gradient of x -> <∇f(x), v>."""

    def directional(x):
        return np.sum(gradient(f, x)[0] * v)

    return gradient(directional, x)[0]
