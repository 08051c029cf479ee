"""Misuse named at the user's call, before anything runs: a call that does not fit the
function's signature, a result that is not a scalar loss, argnums and has_aux that do not
fit, a bare ``@adjoint``, a rule whose signature does not match its function's. Each
message names the user's function with its signature and the way out."""
import inspect
import types

import numpy as np


def _check_argnums(f, nums, args):
    for i in nums:
        if i >= len(args):
            raise TypeError(
                f"argnums asks for the gradient of positional argument {i} of "
                f"{_signature_text(f)}, which was called with {len(args)} positional "
                f"argument{'s' if len(args) != 1 else ''}"
            )


def _check_aux(y, f):
    if not (isinstance(y, tuple) and len(y) == 2):
        raise TypeError(
            f"has_aux=True needs {getattr(f, '__name__', f)} to return a pair "
            f"(loss, aux), but it returned {_describe(y)}"
        )


def _argnums(f, argnums):
    nums = tuple(argnums) if isinstance(argnums, (tuple, list)) else (argnums,)
    if not nums or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in nums):
        raise TypeError(
            f"argnums must be a non-negative int or a tuple of them, not {argnums!r} "
            f"(for {getattr(f, '__name__', f)})"
        )
    return nums


def _describe(y):
    if isinstance(y, tuple):
        return f"a tuple of {len(y)}"
    if isinstance(y, np.ndarray):
        return f"an array of shape {y.shape}"
    return type(y).__name__


def _signature_text(f):
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    try:
        return f"{name}{inspect.signature(f)}"
    except (TypeError, ValueError):
        return name


def _example_call(f):
    params = [
        p.name for p in inspect.signature(f).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    return f"gradient({', '.join([getattr(f, '__name__', 'f')] + params)})"


def _check_call(f, args, kwargs):
    """A call that cannot bind to f's parameters is the user's mistake: say so with f's
    own name and signature (not the generated pair's). Cheap when it binds."""
    if type(f) is not types.FunctionType:
        if not callable(f):
            raise TypeError(
                f"the function to differentiate comes first and must be callable, not "
                f"{type(f).__name__}: gradient(f, x)"
            )
        return  # objects, methods, partials: their own binding errors name them
    code = f.__code__
    if not kwargs and not code.co_kwonlyargcount:
        n = len(args)
        top = code.co_argcount
        if top - len(f.__defaults__ or ()) <= n and (n <= top or code.co_flags & 0x04):
            return
    try:
        inspect.signature(f).bind(*args, **kwargs)
    except TypeError as exc:
        n = len(args)
        raise TypeError(
            f"{_signature_text(f)} was given {n} positional argument{'s' if n != 1 else ''}"
            f"{' and keywords ' + ', '.join(kwargs) if kwargs else ''}: {exc}. Pass the "
            f"function first, then its arguments: {_example_call(f)}"
        ) from None
    except ValueError:
        return


def _is_scalar(y):
    if isinstance(y, (bool,)):
        return False
    if isinstance(y, (int, float, np.floating, np.integer)):
        return True
    return isinstance(y, np.ndarray) and y.ndim == 0 and not np.iscomplexobj(y)


def _check_scalar(y, f):
    if not _is_scalar(y):
        name = getattr(f, '__name__', f)
        if isinstance(y, tuple):
            raise TypeError(
                f"gradient needs a real scalar output, but {name} returned {_describe(y)}; "
                f"for a loss with auxiliary outputs, (loss, aux), use withgradient({name}, x) "
                f"or grad({name}, has_aux=True)"
            )
        raise TypeError(
            f"gradient needs a real scalar output, but {name} returned {_describe(y)}; "
            "use pullback(f, x) for a vector-Jacobian product, or jacobian(f, x)"
        )


def _check_target(f, style):
    if not callable(f):
        raise TypeError(
            f"@adjoint_s2s.{style}(f) takes the function the rule is for, and {f!r} is not "
            f"callable: write @adjoint_s2s.{style}(f) above the rule"
        )


def _check_bare(f, style, rule, more, kw):
    """`@adjoint` written bare above a rule makes the rule's name the registration
    function: the first call of it lands here, with the rule's arguments."""
    if callable(rule) and not more and not kw:
        return
    name = getattr(f, "__name__", f)
    raise TypeError(
        f"@adjoint_s2s.{style} was used without the function it gives a rule for: {name} "
        f"became the registration, and calling it registers nothing. Write "
        f"@adjoint_s2s.{style}(the_function) above def {name}(...)"
    )


def _check_rule_signature(f, rule, style, config=False):
    """A rule takes the arguments of the function it is for (an rrule with config=True,
    a RuleConfig first): checked when it is registered, naming both."""
    try:
        fsig, rsig = inspect.signature(f), inspect.signature(rule)
    except (TypeError, ValueError):
        return  # a builtin or ufunc without a signature: nothing to compare
    fpos = _positional(fsig)
    rparams = list(rsig.parameters.values())
    if config:
        if not rparams or rparams[0].kind not in (rparams[0].POSITIONAL_ONLY, rparams[0].POSITIONAL_OR_KEYWORD, rparams[0].VAR_POSITIONAL):
            _rule_mismatch(f, fsig, rule, rsig, style, "takes no RuleConfig first (config=True)")
        if rparams[0].kind != rparams[0].VAR_POSITIONAL:
            rparams = rparams[1:]
    rpos = _positional(rsig.replace(parameters=rparams))
    if rpos[0] > fpos[0]:
        _rule_mismatch(f, fsig, rule, rsig, style, f"needs {rpos[0]} positional arguments where "
                       f"the function can be called with {fpos[0]}")
    if rpos[1] < fpos[1]:
        _rule_mismatch(f, fsig, rule, rsig, style, f"takes at most {rpos[1]} positional "
                       f"arguments where the function takes {fpos[1]}")
    rkw = {p.name for p in rparams if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    if not any(p.kind == p.VAR_KEYWORD for p in rparams):
        for p in fsig.parameters.values():
            if p.kind == p.KEYWORD_ONLY and p.name not in rkw:
                _rule_mismatch(f, fsig, rule, rsig, style, f"has no keyword parameter {p.name}")


def _positional(sig):
    """(required, most) positional arguments a signature takes (most: inf with *args)."""
    ps = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(p.default is p.empty for p in ps)
    most = float("inf") if any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values()) else len(ps)
    return required, most


def _rule_mismatch(f, fsig, rule, rsig, style, why):
    fname = getattr(f, "__qualname__", getattr(f, "__name__", f))
    rname = getattr(rule, "__qualname__", getattr(rule, "__name__", rule))
    raise TypeError(
        f"the rule {rname}{rsig} registered with @adjoint_s2s.{style}({getattr(f, '__name__', fname)}) "
        f"does not take the arguments of {fname}{fsig}: it {why}. A rule has the "
        "signature of its function (with config=True, after a RuleConfig)"
    )
