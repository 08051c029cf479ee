"""Callables that wrap a function: ``functools.partial`` (also made in differentiated
code), ``functools.lru_cache``/``cache`` wrappers, operator methods bound to a value
(``x.__mul__``) and methods of C types bound to an object (``rng.random``). Each is called
through the function it wraps, its gradients mapped back to how the arguments were bound."""
import functools
import operator
import types

from .. import rules as R
from ..tangents import Tangent
from .structure import field

# dispatch imports this module; `call` is read from it when a pair runs
from . import dispatch

CACHE_WRAPPERS = (functools._lru_cache_wrapper,)

# `x.__mul__` and friends, bound to a number or an array: the operator, x first (or second)
DUNDER_OPS = {
    f"__{name}__": (getattr(operator, name), False)
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "neg", "pos", "abs")
}
DUNDER_OPS.update({
    f"__r{name}__": (getattr(operator, name), True)
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul")
})


def is_bound_operator(f):
    return type(f).__name__ == "method-wrapper" and f.__name__ in DUNDER_OPS


def dunder_pair(f):
    """The pair of `x.__op__`; its pullback gives (dx, *dargs): x's gradient in the place
    of the function's tangent, as for a bound method."""
    op, reflected = DUNDER_OPS[f.__name__]
    obj = f.__self__

    def dunder_pair_(*args):
        y, pb = dispatch.call(op, *args, obj) if reflected else dispatch.call(op, obj, *args)

        def dunder_pullback(g):
            grads = pb(g)[1:]
            if reflected:
                return (grads[-1],) + tuple(grads[:-1])  # the bound object's, then the rest
            return tuple(grads)

        return y, dunder_pullback

    return dunder_pair_


def partial_pair(p):
    """functools.partial(fn, *bound, **kw): fn called with the bound arguments first. Their
    gradients (and fn's own tangent) make the partial object's tangent, as captured
    variables make a closure's."""
    fn, bound, keywords = p.func, p.args, p.keywords
    n = len(bound)

    def partial_pair_(*args, **kwargs):
        y, pb = dispatch.call(fn, *bound, *args, **{**keywords, **kwargs})

        def partial_pullback(g):
            grads = pb(g)
            own = tuple(grads[1:1 + n])
            mine = tuple(grads[1 + n:1 + n + len(args)])
            dkw = grads[1 + n + len(args)] if len(grads) > 1 + n + len(args) else None
            own_kw = {k: v for k, v in (dkw or {}).items() if k not in kwargs and v is not None}
            out = (mine + ({k: v for k, v in dkw.items() if k in kwargs},)) if kwargs and dkw else mine
            if grads[0] is not None or any(d is not None for d in own) or own_kw:
                return (Tangent(functools.partial, func=grads[0], args=own, keywords=own_kw),) + out
            return (None,) + out

        return y, partial_pullback

    return partial_pair_


def partial_constructor_pair(fn, *args, **kwargs):
    """functools.partial(fn, *args, **kwargs) in differentiated code: the object's tangent
    (made by partial_pair's pullback) hands its arguments' gradients back."""
    p = functools.partial(fn, *args, **kwargs)
    # a partial of a partial: Python makes one partial of the inner one's function, its
    # bound arguments first (p.args = inner.args + args): theirs go back to the inner one
    inner = fn if p.func is not fn else None

    def partial_constructor_pullback(g):
        own = field(g, "args")
        kw = field(g, "keywords") or {}
        own = tuple(own) if own is not None else (None,) * len(p.args)
        d_fn = field(g, "func")
        if inner is not None:
            k = len(inner.args)
            inner_kw = {n: v for n, v in kw.items() if n in inner.keywords and n not in kwargs and v is not None}
            d_fn = Tangent(functools.partial, func=d_fn, args=own[:k], keywords=inner_kw) if (
                d_fn is not None or any(d is not None for d in own[:k]) or inner_kw) else None
            own = own[k:]
        out = (None, d_fn) + own  # functools.partial itself, then fn
        if kwargs:
            out += ({k: kw.get(k) for k in kwargs},)
        return out

    return p, partial_constructor_pullback


def partial_tangent(f, cells):
    """The tangent of partial f from the tangent of its pair's cells (fn, bound, keywords),
    for a partial called in code differentiated again."""
    func, bound, kw = cells.get("fn"), cells.get("bound"), cells.get("keywords")
    if func is None and bound is None and not kw:
        return None
    bound = tuple(bound) if bound is not None else (None,) * len(f.args)
    return Tangent(functools.partial, func=func, args=bound, keywords=dict(kw or {}))


R.SPECIAL[functools.partial] = partial_constructor_pair


def bound_builtin_pair(f, nargs, kwnames, rule_pair):
    """The pair of a method of a C type bound to an object (``random = self.random`` in
    random.gauss, then ``random()``), from the rule of the method as its type holds it
    (``non_differentiable(Random.random)``, the way out the missing rule's message names):
    called with the object first, the object's gradient left out. None when it has none."""
    owner = getattr(f, "__self__", None)
    if owner is None or isinstance(owner, (types.ModuleType, type)) or not isinstance(f, types.BuiltinMethodType):
        return None
    method = getattr(type(owner), getattr(f, "__name__", ""), None)
    pair = rule_pair(method, nargs + 1, kwnames) if method is not None and method is not f else None
    if pair is None:
        return None

    def bound_builtin_method_pair(*args, **kwargs):
        y, pb = pair(owner, *args, **kwargs)
        return y, lambda g: (None,) + tuple(pb(g)[2:])

    return bound_builtin_method_pair
