"""Pair functions around user rules, written in the subset adjoint_s2s differentiates.

A user rule (``@adjoint`` / ``@rrule``) is adapted to the pair convention here rather
than in ``runtime.py`` because code that runs inside a gradient is itself
differentiated when gradients are nested: these adapters, the user's rule and the
pullback it returns are all transformed by the outer level (Zygote does the same by
differentiating its own ``_pullback``). So: no try/except, no generators, no writes
to attributes.
"""
from . import checks
from . import rules as R
from . import runtime as rt

R.nondifferentiable_builtin(checks.call_layout, checks.parameter_names, checks.no_number_keywords,
                            reason="it reads how a call passed its arguments, or checks them")


def adjoint_pair(rule, fn):
    """The pair of a Zygote-style rule: its pullback gets the function tangent prepended."""
    return _rule_pair(rule, fn, "adjoint", None)


def rrule_pair(rule, fn, config):
    """The pair of a ChainRules-style rule (its pullback returns the function tangent)."""
    return _rule_pair(rule, fn, "rrule", config)


def _rule_pair(rule, fn, style, config):
    """Both styles: call the rule (with the config first when it takes one), check what it
    returns, and give the pullback the shape of a pair's: the function tangent first,
    then one gradient per argument, then the keyword gradients ({}) if there were any."""
    own_tangent = style == "rrule"  # an rrule's pullback returns the function tangent itself
    names = checks.parameter_names(fn)

    def rule_pair(*args, **kwargs):
        if config is not None:
            out = rule(config, *args, **kwargs)
        else:
            out = rule(*args, **kwargs)
        checks.rule_output(out, rule, fn, style)
        y = out[0]
        back = out[1]
        n = len(args)
        has_kw = len(kwargs) > 0

        def rule_pullback(g):
            g = rt.output_tangent(g, y)
            if g is None:  # a zero seed: the rule's pullback is not called
                zeros = (None,) * (n + 1)
                return zeros + ({},) if has_kw else zeros
            off = 1 if own_tangent else 0
            if own_tangent:  # (an @adjoint's gets None there, as Zygote's gets nothing)
                g = rt.rrule_seed(g)
            raw = back(g)
            idx = checks.call_layout(raw, off, n, list(kwargs), names)
            if idx is not None:  # one tangent per parameter: those of the arguments passed
                picked = []
                for i in idx:
                    if i < 0:
                        picked.append(None)
                    else:
                        picked.append(raw[i])
                raw = tuple(picked)
            expected = n + off
            if has_kw and isinstance(raw, tuple) and len(raw) == n + len(kwargs) + off:
                expected = len(raw)  # one per argument passed, the keywords' last
            elif has_kw:
                checks.no_number_keywords(kwargs, rule, fn, style)
            grads = checks.rule_grads(raw, expected, rule, fn, style)
            grads = checks.tangent_shapes(grads, args, rule, fn, style)
            if not own_tangent:
                grads = (None,) + grads
            if has_kw:
                kw = {}
                i = 1 + n
                for k in kwargs:
                    kw[k] = grads[i] if i < len(grads) else None
                    i += 1
                return grads[: 1 + n] + (kw,)
            return grads

        return y, rule_pullback

    return rule_pair


def trimmed(pair, nargs, has_kw, defaulted=()):
    """A pair whose pullback returns gradients for the nargs arguments actually passed;
    the gradients of parameters that took their default go into the function tangent
    (a default value belongs to the function, like a captured variable)."""

    def trimmed_pair(*args):
        out = pair(*args)
        y = out[0]
        pb = out[1]

        def trimmed_pullback(g):
            grads = pb(g)
            if has_kw:
                # called without keywords: every keyword-only parameter took its default
                df = rt.with_kw_defaults(grads[0], grads[-1])
                grads = (df,) + tuple(grads[1:-1])
            if defaulted:
                df = rt.with_defaults(grads[0], defaulted, grads[1 + nargs : 1 + nargs + len(defaulted)])
                return (df,) + tuple(grads[1 : 1 + nargs])
            return grads[: 1 + nargs]

        return y, trimmed_pullback

    return trimmed_pair


def first(pair):
    """The primal of a pair call (for calls whose pullback is not needed)."""

    def primal_only(*args, **kwargs):
        return pair(*args, **kwargs)[0]

    return primal_only
