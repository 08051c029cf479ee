"""Checks on what user rules return: clear errors naming the rule, the argument, expected
vs got. Registered as non-differentiable passthroughs: they validate and hand back."""
import inspect
import types

import numpy as np

from .errors import RuleError, describe
from .tangents import AbstractZero


def _rule_name(fn, style):
    return f"the {'@adjoint' if style == 'adjoint' else '@rrule'} rule for {describe(fn)}"


def rule_output(out, rule, fn, style):
    if not (isinstance(out, tuple) and len(out) == 2 and callable(out[1])):
        raise RuleError(
            f"{_rule_name(fn, style)} must return (value, pullback), got "
            f"{type(out).__name__}{'' if not isinstance(out, tuple) else ' of length %d' % len(out)}"
        )


def parameter_names(fn):
    """The names of fn's parameters in order (None: no signature, or *args/**kwargs)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None
    return [p.name for p in params]


def call_layout(raw, off, n, kwnames, names):
    """Where the tangents of the arguments a call passed are in a pullback's output that
    gives one per PARAMETER of the function (defaults included): their indices (the own
    tangent, the positional arguments, then the keywords in the order given; -1 for a
    keyword the function does not name), or None when the output is laid out by call."""
    if names is None or not isinstance(raw, tuple) or len(raw) - off != len(names):
        return None
    if len(raw) - off == n + len(kwnames):
        return None
    return list(range(off + n)) + [off + names.index(k) if k in names else -1 for k in kwnames]


def _differentiable_kind(v, seen=None):
    """How v can carry a gradient, in words ("a number", "a list holding a float array",
    ...), or None when nothing in it can: numbers, float arrays, and containers or objects
    holding them."""
    if isinstance(v, (bool, int, np.integer)):
        return None
    if isinstance(v, (float, complex, np.floating, np.complexfloating)):
        return "a number"
    if isinstance(v, np.ndarray):
        return "a float array" if v.dtype.kind in "fc" else None
    seen = set() if seen is None else seen
    if id(v) in seen:
        return None
    seen.add(id(v))
    if isinstance(v, dict):
        parts, holder = v.values(), "a dict"
    elif isinstance(v, (list, tuple)):
        parts, holder = v, f"a {type(v).__name__}"
    elif hasattr(v, "__dict__") and not isinstance(v, (type, types.ModuleType)) and not callable(v):
        parts, holder = vars(v).values(), f"a {type(v).__name__} object"
    else:
        return None
    for part in parts:
        inner = _differentiable_kind(part, seen)
        if inner:
            return f"{holder} holding {inner.split(' holding ')[-1]}"
    return None


def no_number_keywords(kwargs, rule, fn, style):
    """A pullback that gave tangents for the positional arguments only, while a keyword
    argument holds a number or a float array (it may depend on the input): refused rather
    than a zero gradient for it."""
    for k, v in kwargs.items():
        what = _differentiable_kind(v)
        if what:
            raise RuleError(
                f"{_rule_name(fn, style)}: the call passed {k}= {what} by keyword, and the "
                f"pullback returned tangents for the positional arguments only. Return one "
                f"tangent per argument passed, the keywords' last in the order given (or one "
                f"per parameter of the function): NoTangent() where there is none"
            )


def rule_grads(grads, expected, rule, fn, style):
    """Normalise a rule's pullback output to a tuple of expected gradients."""
    if grads is None:
        return (None,) * expected
    if not isinstance(grads, tuple):
        if isinstance(grads, list) and style == "adjoint":
            grads = tuple(grads)
        elif expected == 1:
            grads = (grads,)
        else:
            raise RuleError(
                f"{_rule_name(fn, style)}: its pullback must return a tuple of {expected} "
                f"gradients, got {type(grads).__name__}"
            )
    if len(grads) != expected:
        what = (
            "the function's own tangent first, then one per argument"
            if style == "rrule"
            else "one per argument"
        )
        raise RuleError(
            f"{_rule_name(fn, style)}: its pullback returned {len(grads)} "
            f"gradient{'s' if len(grads) != 1 else ''}, expected {expected} ({what})"
        )
    return tuple(None if isinstance(g, AbstractZero) else g for g in grads)


_NUMBERS = (int, float, complex, np.number)


def tangent_shapes(grads, args, rule, fn, style):
    """An array tangent must have its argument's shape: say which rule and argument."""
    offset = 1 if style == "rrule" else 0
    for i, a in enumerate(args):
        g = grads[i + offset] if i + offset < len(grads) else None
        if isinstance(a, np.ndarray) and isinstance(g, np.ndarray) and g.shape != a.shape:
            raise RuleError(
                f"{_rule_name(fn, style)}: the gradient of argument {i} has shape {g.shape}, "
                f"but the argument has shape {a.shape}"
            )
        if (type(a) in (list, tuple) and type(g) in (list, tuple) and len(g) != len(a)):
            raise RuleError(
                f"{_rule_name(fn, style)}: the gradient of argument {i} has {len(g)} items, "
                f"but the argument has {len(a)}: return one gradient per item"
            )
        if isinstance(g, np.ndarray) and g.ndim > 0 and isinstance(a, _NUMBERS) and not isinstance(a, bool):
            raise RuleError(
                f"{_rule_name(fn, style)}: the gradient of argument {i} is an array of shape "
                f"{g.shape}, but the argument is a number ({type(a).__name__}): return a "
                f"number (or an array of shape ())"
            )
    return grads
