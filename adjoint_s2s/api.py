"""The public API: the pipeline in a few lines.

``_pullback(f, *args)`` runs the generated pair of ``f`` and returns ``(y, back)``;
``back(dy)`` returns ``(df, *dargs)``, ``df`` being the tangent of the function object
(its captured variables). Everything else is built on it.

These functions are themselves written in the subset the transformer supports, so a
call to ``gradient`` inside differentiated code is differentiated too (nested AD).
"""

import io
import types
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from . import emit, fastpath, fuse, tracebacks
from . import rules as R
from . import runtime as _rt
from .errors import NotDifferentiableError
from .kinds import OTHER, field_kinds, kinds_of, reads_items
from .passes import check
from .runtime.rules_helpers import _OPEN, _claim_cells, _fill
from .misuse import (
    _argnums, _check_argnums, _check_aux, _check_bare, _check_call, _check_rule_signature,
    _check_scalar, _check_target, _is_scalar,
)
from .sidebyside import show
from .source import function_node
from .tangents import AbstractZero, Tangent, Thunk, unthunk

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
R_ = TypeVar("R_", bound=Callable[..., Any])

def _pullback(f: Callable[..., Any], /, *args: Any, **kwargs: Any) -> tuple[Any, Callable[[Any], tuple]]:
    """(y, back) with back(dy) -> (df, *dargs): Zygote's ``_pullback``."""
    y, pb = _rt.call(f, *args, **kwargs)

    def back(dy):
        grads = pb(dy)
        df = unthunk(grads[0])
        if isinstance(f, types.MethodType):
            if _rt.is_mutable_object(f.__self__):
                # a bound method: its tangent is its object's, whose field gradients the
                # method's reads left in the store (as for a callable object)
                df = _merge_object_fields(df, f.__self__)
        elif _rt.is_mutable_object(f):  # a callable object: the gradients of its fields
            df = _merge_object_fields(df, f)
        return (df,) + _project_args(grads, args)

    return y, back


def pullback(f: Callable[..., Any], /, *args: Any, **kwargs: Any) -> tuple[Any, Callable[[Any], tuple]]:
    """(y, back): y = f(*args, **kwargs), and back(dy) gives one gradient per positional
    argument for the cotangent dy of y (a vector-Jacobian product), with the structure
    ``gradient`` describes. The value y is what the plain call returns."""
    _check_call(f, args, kwargs)
    y, pb = _rt.call(f, *args, **kwargs)

    def pullback_back(dy):
        grads = _project_args(pb(dy), args)  # the function's own tangent is never forced
        _rt.drop_callee_fields(f)
        return grads

    return y, pullback_back


def gradient(f: Callable[..., Any], /, *args: Any, **kwargs: Any) -> tuple:
    """The gradient of a scalar-valued f at args: ``pullback`` seeded with 1.0.

    Returns one gradient per positional argument, each with its argument's structure: a
    float for a number (an int argument too), an array of the argument's shape and dtype,
    a dict with the argument's keys in its order, a list or tuple of the same length, a
    ``Tangent`` for an object. An argument nothing flowed to gets ``None`` (Zygote's
    convention; ``grad`` gives zeros instead, as JAX does); an entry of a container that
    nothing flowed to gets a zero of its shape (``zero_like``). Raises ``TypeError`` when
    f's result is not a real scalar (use ``withgradient`` for ``(loss, aux)``, ``pullback``
    or ``jacobian`` otherwise) or when the arguments do not fit f's signature."""
    try:
        if type(f) is _FUNCTION and not kwargs:
            # the hottest path: the last cached call's float argument types and fused forms,
            # while f's code and all its code resolved are unchanged (fastpath.remember;
            # getattr: a missing attribute raised and caught would cost 0.7 us a call)
            last = getattr(f, "__adjoint_last__", None)
            if last is not None:
                try:  # (a deleted name, a value with no truth value: no fit)
                    fits = last[7](f, args)
                except Exception:
                    fits = False
                if fits:
                    return last[2](*args)
        if not kwargs and type(f) is _FUNCTION:
            # the dispatch cache's entry (differentiated, gradient's rule takes _gradient)
            hit = fastpath.hit(f, args)
            if hit is not None:
                run = hit[5]
                if run is not None:
                    # float arguments, a value proven a float (fold.py): the gradients alone
                    return run(*args)
                fused = hit[4]
                if fused is not None:
                    # the pair and its pullback in one function (fuse.py): (value, gradients)
                    y, grads = fused(*args)
                    if type(y) is float and hit[2]:
                        return grads[1:]
                    if type(y) is not _FLOAT64:  # (np.mean's value: always a scalar)
                        _check_scalar(y, f)
                    return _project_args(grads, args)
                y, pb = hit[1](*args)
                if type(y) is float and hit[2]:
                    return pb(1.0)[1:]  # generated code, float arguments: float gradients
                if type(y) is not float:
                    _check_scalar(y, f)
                return _project_args(pb(1.0), args)  # f is a plain function here: no fields
        return _gradient(f, *args, **kwargs)
    except Exception as exc:
        tracebacks.note_user_line(exc)  # (the user's line, when generated code raised)
        raise


_FUNCTION = fastpath.FUNCTION
_F64, _FLOAT64, _NDARRAY = np.dtype(np.float64), np.float64, np.ndarray


def _gradient(f, /, *args, **kwargs):
    """gradient in the subset adjoint_s2s differentiates (nested gradients use this)."""
    _check_call(f, args, kwargs)
    y, pb = _rt.call(f, *args, **kwargs)
    if type(y) is not float:
        _check_scalar(y, f)
    grads = _project_args(pb(1.0), args)
    _rt.drop_callee_fields(f)  # gradient gives no tangent for f itself
    return grads


def withgradient(f: Callable[..., Any], /, *args: Any, **kwargs: Any) -> tuple[Any, tuple]:
    """(value, gradients). If f returns a tuple, its first element is the loss and the
    rest are auxiliary outputs, returned untouched (Zygote's ``withgradient``)."""
    y, back = pullback(f, *args, **kwargs)
    if isinstance(y, tuple) and y and not _is_scalar(y):
        loss = y[0]
        _check_scalar(loss, f)
        seed = (1.0,) + (None,) * (len(y) - 1)
        return y, back(seed)
    _check_scalar(y, f)
    return y, back(1.0)


def grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """JAX-style: a function computing the gradient of the scalar-valued f with respect to
    its positional argument(s) `argnums` (an int, or a tuple of ints for a tuple of
    gradients). With ``has_aux=True``, f returns ``(loss, aux)`` and the new function
    returns ``(gradient, aux)``. An argument f does not use gets zeros of its shape, as
    in JAX (``gradient`` gives None there, Zygote's convention)."""
    nums = _argnums(f, argnums)
    many = isinstance(argnums, (tuple, list))

    def grad_f(*args, **kwargs):
        return _grad(f, nums, many, has_aux, args, kwargs)

    grad_f.__name__ = f"grad_{getattr(f, '__name__', 'f')}"
    grad_f.__doc__ = f"The gradient of {getattr(f, '__name__', 'f')} (adjoint_s2s.grad)."
    return grad_f


def value_and_grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable[..., tuple[Any, Any]]:
    """JAX-style: a function returning ``(f(*args), gradient)``, the gradient as ``grad``
    gives it; with ``has_aux=True``, ``((loss, aux), gradient)``."""
    nums = _argnums(f, argnums)
    many = isinstance(argnums, (tuple, list))

    def value_and_grad_f(*args, **kwargs):
        return _value_and_grad_fast(f, nums, many, has_aux, args, kwargs)

    value_and_grad_f.__name__ = f"value_and_grad_{getattr(f, '__name__', 'f')}"
    return value_and_grad_f


def _grad(f, nums, many, has_aux, args, kwargs):
    """grad's work: gradient's fast path when it applies (differentiated, its rule
    differentiates _grad_plain instead: see the end of this module)."""
    try:
        if not has_aux and not kwargs and max(nums) < len(args):
            last = fastpath.last(f, args)
            if last is not None:  # float arguments, a float value: the gradients alone
                return _pick(last[2](*args), nums, many, args)
        return _grad_plain(f, nums, many, has_aux, args, kwargs)
    except Exception as exc:
        tracebacks.note_user_line(exc)
        raise


def _grad_plain(f, nums, many, has_aux, args, kwargs):
    """grad's work in the subset adjoint_s2s differentiates."""
    value, g = _value_and_grad(f, nums, many, has_aux, args, kwargs)
    return (g, value[1]) if has_aux else g


def _value_and_grad_fast(f, nums, many, has_aux, args, kwargs):
    """value_and_grad's work: the fused function of a cached pair when it applies
    (differentiated, its rule differentiates _value_and_grad instead)."""
    try:
        if not has_aux and not kwargs and max(nums) < len(args):
            last = fastpath.last(f, args)
            if last is not None:
                fused, floats = last[3], True
            else:
                hit = fastpath.hit(f, args) if type(f) is _FUNCTION else None
                fused, floats = (hit[4], hit[2]) if hit is not None else (None, False)
            if fused is not None:
                y, grads = fused(*args)
                if type(y) is float and floats:
                    return y, _pick(grads[1:], nums, many, args)
                _check_scalar(y, f)
                return y, _pick(_project_args(grads, args), nums, many, args)
        return _value_and_grad(f, nums, many, has_aux, args, kwargs)
    except Exception as exc:
        tracebacks.note_user_line(exc)
        raise


def _pick(grads, nums, many, args):
    """grad's gradients of the arguments nums from the gradients of all (projected):
    an argument nothing flowed to gets zeros (_zero_gradient)."""
    out = []
    for i in nums:
        g = grads[i] if i < len(grads) else None
        out.append(_zero_gradient(args[i]) if g is None else g)
    return tuple(out) if many else out[0]


def _value_and_grad(f, nums, many, has_aux, args, kwargs):
    """value_and_grad's work, in the subset adjoint_s2s differentiates (as _gradient)."""
    _check_call(f, args, kwargs)
    _check_argnums(f, nums, args)
    y, pb = _rt.call(f, *args, **kwargs)
    if has_aux:
        _check_aux(y, f)
        _check_scalar(y[0], f)
        grads = _project_args(pb((1.0, None)), args)
    else:
        _check_scalar(y, f)
        grads = _project_args(pb(1.0), args)
    _rt.drop_callee_fields(f)
    picked = []
    for i in nums:
        g = grads[i]
        if g is None:
            g = _zero_gradient(args[i])
        picked.append(g)
    if many:
        return y, tuple(picked)
    return y, picked[0]


def _zero_gradient(x):
    """grad's gradient of an argument nothing flowed to: zeros of its shape (JAX)."""
    z = zero_like(x)
    if z is None:
        raise TypeError(
            f"grad: an argument of type {type(x).__name__} has no gradient; leave it out "
            "of argnums"
        )
    return z


def _project_args(grads, args):
    """Unthunk and project the argument gradients of a pullback's (df, *dargs); objects
    get the gradients of their fields that were read (and not overwritten) added."""
    out = []
    n = len(grads)
    for i, x in enumerate(args):
        g = grads[1 + i] if 1 + i < n else None
        tg = type(g)
        if tg is float and type(x) is float:  # the common cases, fast
            out.append(g)
            continue
        if tg is _NDARRAY and type(x) is _NDARRAY and (
                (g.dtype is _F64 and x.dtype is _F64)  # (float64, by identity: the usual case)
                or (g.dtype == x.dtype and x.dtype.kind in "fc")) and g.shape == x.shape:
            out.append(g if g.flags.writeable else g.copy())  # a broadcast view: a copy
            continue
        g = _merge_object_fields(g, x)
        out.append(project(g, x))
    return tuple(out)


def _merge_object_fields(g, x, depth=0):
    """Add the field gradients of mutable objects found in x (itself, the items of a
    container, the fields of an object) to its structural gradient g."""
    if depth > 20 or isinstance(x, (int, float, complex, str, bytes, np.ndarray)) or x is None:
        return g
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        if not any(_rt.is_mutable_object(v) or isinstance(v, (list, tuple, dict)) for v in x):
            return g
        items = list(g) if isinstance(g, (list, tuple)) else [None] * len(x)
        items += [None] * (len(x) - len(items))
        merged = [_merge_object_fields(gi, xi, depth + 1) for gi, xi in zip(items, x)]
        if all(m is None for m in merged):
            return g
        return tuple(merged) if isinstance(x, tuple) else merged
    if isinstance(x, dict):
        base = dict(g) if isinstance(g, dict) else {}
        for k, v in x.items():
            m = _merge_object_fields(base.get(k), v, depth + 1)
            if m is not None:
                base[k] = m
        return base or g
    if _rt.is_mutable_object(x):
        g = _rt.with_fields(g, x)
        if g is not None and not isinstance(g, Tangent):
            return g  # a natural tangent from a custom rule: taken as it is
        fields = dict(g._fields) if g is not None else {}
        for name, v in _rt.fields_of(x).items():  # objects (and containers) held by this one
            if _rt.is_mutable_object(v) or isinstance(v, (list, tuple, dict)):
                m = _merge_object_fields(fields.get(name), v, depth + 1)
                if m is not None:
                    fields[name] = m
        return Tangent(type(x), **fields) if fields else g
    return g


def project(g: Any, x: Any) -> Any:
    """Project a gradient onto the space of x (ChainRules' ProjectTo)."""
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(g, Thunk):
        g = g.unthunk()
    if isinstance(x, bool) or isinstance(x, (str, bytes)) or x is None:
        return None
    if isinstance(x, (float, int)):
        if isinstance(g, (complex, np.complexfloating)):
            g = g.real
        if isinstance(g, (int, np.integer, np.floating)):
            return float(g)
        if isinstance(g, np.ndarray) and g.ndim == 0:
            return float(g.real)
        return g
    if isinstance(x, (complex, np.complexfloating)):
        # a complex argument gets a complex gradient, ∂L/∂x + i·∂L/∂y, also where it is
        # real (the gradient of z.real is 1+0j), as ChainRules' ProjectTo does
        if isinstance(g, (int, float, complex, np.number)) and not isinstance(g, bool):
            return g if type(g) is type(x) else type(x)(g)
        if isinstance(g, np.ndarray) and g.ndim == 0:
            return type(x)(g[()])
        return g
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "fc":
            if x.dtype.kind not in "iu":  # booleans (and the rest) have no tangent space
                return None
            # integer arrays get a float gradient, as int scalars do (docs/correctness.md)
            g = np.asarray(unthunk(g))
            g = g.real if np.iscomplexobj(g) else g
            if g.shape != x.shape:
                g = _rt.unbroadcast(g, x)
            return np.asarray(g, dtype=np.result_type(g.dtype, float))
        if type(g) is np.ndarray and g.shape == x.shape and g.dtype == x.dtype:
            # already the gradient of x; a read-only broadcast view (a sum's adjoint)
            # becomes an array of the caller's own
            return g if g.flags.writeable else g.copy()
        g = np.asarray(unthunk(g))
        if not np.iscomplexobj(x) and np.iscomplexobj(g):
            g = g.real
        if g.shape != x.shape:
            g = _rt.unbroadcast(g, x)
        if g.dtype != x.dtype:
            g = g.astype(x.dtype)
        return g if not isinstance(g, np.ndarray) or g.flags.writeable else np.array(g)
    if isinstance(x, (list, tuple)) and isinstance(g, (list, tuple)) and not hasattr(x, "_fields"):
        items = [project(gi, xi) for gi, xi in zip(g, x)]
        items += [None] * (len(x) - len(items))
        # inside a container, an unused entry is a zero of its own shape, not None: a
        # list of numbers is a vector, a list of arrays a list of parameters
        items = [zero_like(xi) if gi is None else gi for gi, xi in zip(items, x)]
        # the function may have popped items off the list it was given: their
        # gradients stay, after the others
        items += [unthunk(gi) for gi in list(g)[len(x):]]
        return tuple(items) if isinstance(x, tuple) else list(items)
    if isinstance(x, dict) and isinstance(g, dict):
        # the argument's keys, in its order, so that `{k: p[k] - lr * g[k] for k in p}`
        # works; an unused entry is a zero of its shape (keys the function added after)
        out = {}
        for k, v in x.items():
            gk = project(g.get(k), v)
            out[k] = zero_like(v) if gk is None else gk
        for k, v in g.items():
            if k not in x:
                out[k] = unthunk(v)
        return out
    return unthunk(g)


def zero_like(x: Any) -> Any:
    """The zero gradient of a value inside a container: 0.0 for a real number, 0j for a
    complex one, zeros for a float or complex array (float zeros for an integer one), the
    same structure for lists, tuples and dicts; None where there is no tangent space
    (strings, booleans, None, objects)."""
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, (float, int, np.floating, np.integer)):
        return 0.0
    if isinstance(x, (complex, np.complexfloating)):
        return 0j
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "fc":
            return np.zeros_like(x)
        return np.zeros(x.shape) if x.dtype.kind in "iu" else None
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        items = [zero_like(v) for v in x]
        return tuple(items) if isinstance(x, tuple) else items
    if isinstance(x, dict):
        return {k: zero_like(v) for k, v in x.items()}
    return None


def show_adjoint(f: Callable[..., Any], *args: Any, callees: bool = False, fused: bool = False) -> str:
    """The generated primal-plus-pullback pair of f as Python source, specialised on the
    kinds of args as a call with them would be (any kind when no args are given); with
    ``callees=True`` also the pairs of the Python functions it calls; with ``fused=True``
    what a cached ``gradient`` call runs instead: the pair and its pullback fused into one
    function, or the pair under a comment saying why there is none. For notebooks:
    ``print(ad.show_adjoint(f, x))``; the command line's ``show-adjoint`` prints the same."""
    fn, kinds, fields = f, kinds_of(args), field_kinds(args, reads_items(getattr(f, "__code__", None)))
    if isinstance(f, types.MethodType):
        fn, kinds, fields = f.__func__, (OTHER,) + kinds, field_kinds((f.__self__,) + args, reads_items(f.__func__.__code__))
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"show_adjoint needs a Python function or method, not {type(f).__name__}")
    if not args:
        kinds = (OTHER,) * fn.__code__.co_argcount
    if fused:
        return fuse.fused_text(fn, kinds, fields=fields)
    out = io.StringIO()
    show(fn, kinds, callees, out, fields=fields)
    return out.getvalue()


def differentiable(fn: F) -> F:
    """Transform fn now (unsupported syntax fails here, with file and line); fn stays as it was."""
    node, filename, _ = function_node(fn)
    check.check(node, filename)
    emit.entry_for(fn, emit.cache_key(fn, (), keywords=True))
    return fn


def adjoint(f: Callable[..., Any]) -> Callable[[R_], R_]:
    """Register a Zygote-style rule: ``@adjoint(f)`` on a function with f's signature that
    returns ``(y, back)``; ``back(dy)`` returns one gradient per argument (None: zero)."""

    _check_target(f, "adjoint")

    def register(rule=None, *more, **kw):
        _check_bare(f, "adjoint", rule, more, kw)
        _check_rule_signature(f, rule, "adjoint")
        R.set_user_rule(f, R.UserRule(f, rule, "adjoint"))
        return rule

    return register


def rrule(f: Callable[..., Any], config: bool = False) -> Callable[[R_], R_]:
    """Register a ChainRules-style rule: ``back(dy)`` returns the function's own tangent
    first (``NoTangent()`` for plain functions), then one per argument. With
    ``config=True`` the rule takes a ``RuleConfig`` first (for ``rrule_via_ad``)."""

    _check_target(f, "rrule")

    def register(rule=None, *more, **kw):
        _check_bare(f, "rrule", rule, more, kw)
        _check_rule_signature(f, rule, "rrule", config)
        R.set_user_rule(f, R.UserRule(f, rule, "rrule", config=config))
        return rule

    return register


def non_differentiable(f: F) -> F:
    """Mark f (or a list of functions) as passing no gradient; usable as a decorator."""
    if isinstance(f, (list, tuple)):
        for g in f:
            non_differentiable(g)
        return f
    R.set_user_rule(f, R.UserRule(f, None, "nondiff"))
    return f


def refresh() -> None:
    """Clear every cached generated function. Never needed after registering a rule."""
    emit.refresh()


class RuleConfig:
    """Passed to ``@rrule(f, config=True)`` rules: this AD system has reverse mode."""

    has_reverse_mode = True

    def __repr__(self):
        return "RuleConfig(adjoint_s2s)"


def rrule_via_ad(config: Any, f: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, Callable[[Any], tuple]]:
    """(y, pullback) of f by adjoint_s2s, for rules that call back into AD.
    The pullback returns the function's tangent first, as an rrule's does."""
    return _pullback(f, *args, **kwargs)


def isderiving() -> bool:
    """False when called normally; True inside code being differentiated."""
    return False


def dropgrad(x: T) -> T:
    """x, with no gradient flowing through it."""
    return x


ignore_derivatives = dropgrad


def _register_api_rules():
    @R.special(isderiving)
    def isderiving_pair():
        return True, lambda g: (None,)

    R.STOPS_GRADIENT.add(dropgrad)  # its result is inactive: the transformer knows it

    @R.special(dropgrad)
    def dropgrad_pair(x):
        return x, lambda g: (None, None)

    @R.special(_project_args)
    def project_args_pair(grads, args):
        # projection onto the arguments' spaces is linear: its adjoint passes through.
        # A mutable object's argument also takes its fields' gradients from the store
        # (the reads of its fields put them there): as with_fields' rule, each take of a
        # field hands the cotangent of that field back to the reads.
        taken = {}
        for i, x in enumerate(args):
            if _rt.is_mutable_object(x):
                entry = _rt._FIELDS.get(id(x))
                names = list(entry[1]) if entry is not None and entry[0] is x else []
                taken[i] = {name: _claim_cells(x, name) for name in names}
        out = _project_args(grads, args)
        _refuse_nested_fields(args)

        def project_args_pullback(g):
            if g is None:
                return (None, None, None)
            for i, cells in taken.items():
                gi = g[i] if i < len(g) else None
                for name, c in cells.items():
                    _fill(c, _rt.field(gi, name))
            return (None, (None,) + tuple(g), None)

        return out, project_args_pullback

    def _refuse_nested_fields(args, depth=0):
        """An object held by an argument (an item, a field) whose fields were read: its
        gradient at second order is not computed; refused rather than a zero."""
        held = []
        for x in args:
            if isinstance(x, (list, tuple)):
                held.extend(x)
            elif isinstance(x, dict):
                held.extend(x.values())
            elif _rt.is_mutable_object(x):
                held.extend(_rt.fields_of(x).values())
        for v in held:
            if _rt.is_mutable_object(v) and any(e[0] is v and e[1] for e in _OPEN.values()):
                raise NotDifferentiableError(
                    f"a gradient with respect to an argument holding a {type(v).__name__} "
                    "whose fields it reads is differentiated once, not twice: pass the "
                    "object itself (or its fields) as the argument"
                )
            if depth < 5 and (isinstance(v, (list, tuple, dict)) or _rt.is_mutable_object(v)):
                _refuse_nested_fields([v], depth + 1)

    R.nondifferentiable_builtin(_check_scalar, _is_scalar, _check_call, _check_argnums, _check_aux,
                                reason="it only checks")
    R.nondifferentiable_builtin(_zero_gradient, zero_like, reason="a zero carries no gradient")

    @R.special(gradient)
    def gradient_pair(f, *args, **kwargs):
        # gradient's fast path is not in the differentiable subset: differentiate its
        # plain twin instead
        y, pb = _rt.call(_gradient, f, *args, **kwargs)
        return y, pb

    @R.special(_grad)
    def grad_pair(f, nums, many, has_aux, args, kwargs):
        return _rt.call(_grad_plain, f, nums, many, has_aux, args, kwargs)

    @R.special(_value_and_grad_fast)
    def value_and_grad_pair(f, nums, many, has_aux, args, kwargs):
        return _rt.call(_value_and_grad, f, nums, many, has_aux, args, kwargs)


_register_api_rules()
