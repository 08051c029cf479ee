"""Advanced adjoints (Zygote's seed): hooks, showgrad, checkpointing; Jacobians, Hessians.

Each is an ordinary function plus a rule, like a user would write them with
``@adjoint`` — and, like any rule, differentiable again when gradients are nested.
"""
import ctypes

import numpy as np

from . import checkpoint_guard as _checkpoint_guard
from . import rules as _rules
from . import runtime as _runtime
from .api import _pullback, adjoint, gradient, pullback
from .checkpoint_guard import as_it_was as _checkpoint_as_it_was
from .checkpoint_guard import rebound as _checkpoint_rebound
from .checkpoint_guard import same as _checkpoint_same
from .checkpoint_guard import state as _checkpoint_state
from .errors import NotDifferentiableError


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
        return g, None  # (the label: text, no gradient)

    return x, showgrad_pullback


def checkpoint(f, *args):
    """f(*args), keeping only the arguments: the backward pass runs f forward again.

    Memory for time: nothing f computes is stored between the passes, and f's side
    effects happen twice (once in each pass). A function that draws from np.random's
    global stream must seed it itself (the run again then draws the same numbers):
    one whose run again draws other numbers is refused.
    """
    return f(*args)


def _stream_mark():
    """The state of np.random's global stream, compared to tell whether a call drew from
    it: MT19937's position and three words of its key (drawing moves the position, or,
    by whole rounds of 624 words, makes a new key), read in place; the state's text for
    another bit generator."""
    bg = np.random.get_bit_generator()
    if bg is not _MT19937[0]:
        if type(bg).__name__ != "MT19937":
            return repr(bg.state)
        _MT19937[:] = [bg, (ctypes.c_uint32 * 625).from_address(bg.ctypes.state_address)]
    words = _MT19937[1]
    return (words[624], words[0], words[311], words[623])


_MT19937 = [None, None]  # the global stream's MT19937, and its key and position in place


def _check_replayed(f, before, after, again):
    """f drew from the stream in the forward pass (before != after): its run again in
    the backward pass must have drawn the same numbers, ending where the first ended."""
    if before != after and again != after:
        name = getattr(f, "__name__", repr(f))
        raise NotDifferentiableError(
            f"adjoint_s2s.checkpoint({name}, ...): {name} draws from np.random's global "
            f"stream, and the backward pass runs it again from a later point of the stream, "
            f"drawing other numbers: the gradient would not be that of the value computed. "
            f"Seed the stream inside {name} (np.random.seed), or draw outside it and pass "
            f"the draws in"
        )


_rules.nondifferentiable_builtin(_stream_mark, _check_replayed,
                                reason="it watches np.random's stream")


@adjoint(checkpoint)
def _checkpoint_rule(f, *args):
    state = _checkpoint_state(f)
    before = _stream_mark()
    y = _checkpoint_call(f, args, state)
    after = _stream_mark()

    def checkpoint_pullback(g):
        if _checkpoint_rebound(f, state):
            again = _checkpoint_as_it_was(f, state)
        else:
            again = f
        y_again, back = _pullback(again, *args)
        _check_replayed(f, before, after, _stream_mark())  # (random draws: named as such)
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


def _one_output(y):
    """jacobian's check of f's output: a number, an array, or a tuple or list of parts of
    one shape (stacked, as np.asarray stacks them); a dict, or parts of different shapes
    (a residual vector and a penalty), are refused with the way out."""
    if isinstance(y, dict) or isinstance(y, (tuple, list)) and len({np.shape(v) for v in y}) > 1:
        part = "f(x)[key]" if isinstance(y, dict) else "f(x)[0]"
        raise NotDifferentiableError(
            f"jacobian takes a function with one output (a number or an array); this one "
            f"returned a {type(y).__name__} of parts of different shapes or kinds: take the "
            f"Jacobian of each part (`jacobian(lambda x: {part}, x)`), or concatenate them "
            f"into one array")


_rules.nondifferentiable_builtin(_one_output, reason="a check of jacobian's output")


def jacobian(f, *args):
    """Reverse-mode Jacobians of f at args, one per argument (one pullback per output).

    For an output of shape S and an argument of shape A the Jacobian has shape S + A
    (scalars have shape ()).

    Complex numbers: for a complex output and a real argument t, the entry is dy/dt,
    complex (each output's pullback runs twice, with the seeds 1 and 1j). For a complex
    argument z = x + iv, the entry of a real output is the gradient as ``gradient`` gives
    it, ∂y/∂x + i·∂y/∂v; that of a complex output is dy/dz where f is holomorphic, which
    the two pullbacks show (the Cauchy-Riemann equations), and a ``NotDifferentiableError``
    otherwise: take the Jacobians of ``np.real(f(z))`` and ``np.imag(f(z))`` instead.
    """
    # (written so that it is differentiated again, as jacobian inside a gradient is: the
    # rows are collected with plain names, no method call on an expression receiver)
    y, back = pullback(f, *args)
    _one_output(y)
    y_arr = np.asarray(y)
    y_complex = np.iscomplexobj(y_arr)
    dtype = np.result_type(y_arr.dtype, float)
    all_grads = []
    all_imag = []
    for i in range(y_arr.size):
        seed = np.zeros(y_arr.size, dtype=dtype)
        seed[i] = 1.0
        seed = seed.reshape(y_arr.shape)
        all_grads.append(back(seed if y_arr.ndim else seed[()]))
        if y_complex:
            seed_i = seed * 1j
            all_imag.append(back(seed_i if y_arr.ndim else seed_i[()]))
    out = []
    for j, a in enumerate(args):
        rows = []
        for k, grads in enumerate(all_grads):
            g = grads[j]
            if y_complex:
                rows.append(_complex_entry(g, all_imag[k][j], a))
            elif np.iscomplexobj(a):
                rows.append(np.zeros(np.shape(a)) if g is None else np.asarray(g, dtype=complex))
            else:
                rows.append(np.zeros(np.shape(a)) if g is None else np.asarray(g, dtype=float))
        stacked = np.stack(rows) if rows else np.zeros((0,) + np.shape(a))
        out.append(stacked.reshape(y_arr.shape + np.shape(a)))
    return tuple(out)


def _complex_entry(g, gi, a):
    """dy/da from the pullbacks of the seeds 1 (g) and 1j (gi) of a complex output y:
    g + i·gi for a real a; conj(g) for a complex a where gi = i·g (holomorphic)."""
    g = np.zeros(np.shape(a)) if g is None else np.asarray(g)
    gi = np.zeros(np.shape(a)) if gi is None else np.asarray(gi)
    if not np.iscomplexobj(a):
        return np.real(g) + 1j * np.real(gi)
    scale = max(1.0, float(np.max(np.abs(g), initial=0.0)))
    if not np.allclose(gi, 1j * g, rtol=1e-8, atol=1e-12 * scale):
        raise NotDifferentiableError(
            "jacobian of a complex output with respect to a complex argument: the function "
            "is not holomorphic there (its pullbacks break the Cauchy-Riemann equations), so "
            "dy/dz does not exist; take the Jacobians of np.real(f(z)) and np.imag(f(z)) "
            "instead (or of f(x + 1j*v) in the real x and v)")
    return np.conj(g)


def hessian(f, x):
    """The Hessian of a scalar function of a float or an array (reverse over reverse)."""

    def grad_f(x):
        g = gradient(f, x)[0]
        return np.zeros(np.shape(x)) if g is None else g  # (f constant: zeros, in x's shape)

    (h,) = jacobian(grad_f, x)
    return h if np.ndim(x) else float(h)


def hvp(f, x, v):
    """The Hessian-vector product H(x) @ v, by reverse over reverse (there is no
    forward mode): the gradient of x -> <∇f(x), v>."""

    def directional(x):
        g = gradient(f, x)[0]
        return 0.0 if g is None else np.sum(g * v)  # (f constant: no gradient, H = 0)

    hv = gradient(directional, x)[0]
    return (np.zeros(np.shape(x)) if np.ndim(x) else 0.0) if hv is None else hv
