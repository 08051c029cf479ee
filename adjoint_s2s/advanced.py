"""Advanced adjoints (Zygote's seed): hooks, showgrad, checkpointing; Jacobians, Hessians.

Each is an ordinary function plus a rule, like a user would write them with
``@adjoint`` — and, like any rule, differentiable again when gradients are nested.
"""
import numpy as np

from . import checkpoint_guard as _checkpoint_guard
from . import rules as _rules
from . import runtime as _runtime
from .api import _pullback, adjoint, gradient, pullback
from .checkpoint_guard import as_it_was as _checkpoint_as_it_was
from .checkpoint_guard import rebound as _checkpoint_rebound
from .checkpoint_guard import same as _checkpoint_same
from .checkpoint_guard import state as _checkpoint_state


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
    state = _checkpoint_state(f)
    y = _checkpoint_call(f, args, state)

    def checkpoint_pullback(g):
        if _checkpoint_rebound(f, state):
            again = _checkpoint_as_it_was(f, state)
        else:
            again = f
        y_again, back = _pullback(again, *args)
        _checkpoint_same(f, y, y_again)
        grads = back(g)
        return (grads[0],) + tuple(grads[1:])

    return y, checkpoint_pullback


def _checkpoint_call(f, args, state):
    """f(*args), refused if f changes an argument in place: the replay would start from
    the changed values, and the gradient through the change itself is not followed."""
    return _checkpoint_guard.call(f, args, state)


def _checkpoint_call_again(f, args, state):
    # (what _checkpoint_call differentiates as, when the rule itself is differentiated)
    return f(*args)


def _register_checkpoint_rules():
    _rules.nondifferentiable_builtin(_checkpoint_state, _checkpoint_rebound, _checkpoint_same,
                                reason="it only checks")

    @_rules.special(_checkpoint_as_it_was)
    def checkpoint_as_it_was_pair(f, state):
        # the copy's cells would carry no gradient of what they hold
        raise _checkpoint_guard.twice(f)

    @_rules.special(_checkpoint_call)
    def checkpoint_call_pair(f, args, state):
        return _runtime.call(_checkpoint_call_again, f, args, state)


_register_checkpoint_rules()


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
