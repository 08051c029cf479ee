"""Dispatch: the pair of any callee, resolved once per (function, argument kinds).

``call(f, *args)`` returns ``(y, pullback)``, the pair cached on the function object. The
order of ``resolve``: user rule → built-in rule (special, primitive, non-differentiable) → the
Python source → bound method → constructor → a C type's bound method → MissingAdjointError."""
import cmath
import dataclasses
import functools
import linecache
import math
import operator
import sys
import types
import weakref

import numpy as np

from .. import rules as R
from ..errors import MissingAdjointError, NotDifferentiableError, no_variant
from ..kinds import FIELDS, cell_kinds as _cell_kinds, field_kinds as _field_kinds, keyword_call_key, kinds_of, reads_items
from ..tangents import AbstractZero, add, Tangent, Thunk, unthunk
# adapters imports the run time: imported as a module, read when called
from .. import adapters, emit
from ..guards import globals_fit, own_state, same_defaults
from .sites import _at, _met_while, _where_met, is_library_code, too_deep
from .project import _fit_other, as_given, conj, numbers_list, seed, unbroadcast
from .structure import field, GradList, items_adjoint, part, with_defaults, with_kw_defaults
from .fields import _seed_fields, add_field_grad, field_names_of, forget_fields, take_field_grad, take_fields
from .protocols import PLAIN, has_objects, object_call, table_rule


# ----- dispatch ---------------------------------------------------------------------------


def call(f, /, *args, **kwargs):
    """(y, pullback) of f(*args, **kwargs); the pullback returns (df, *dargs[, dkwargs]).
    The hot path: a pair cached on f, for the code and defaults it has (hit[-2], hit[-1])."""
    try:
        if kwargs:
            return _call_kw(f, args, kwargs)
        if type(f) is types.FunctionType:
            n = len(args)
            try:
                hit = f.__adjoint_pairs__[
                    (type(args[0]), type(args[1])) if n == 2
                    else (type(args[0]),) if n == 1
                    else tuple(map(type, args))
                ]
            except (AttributeError, KeyError):
                hit = None  # resolved below, outside the handler (no chained exceptions)
            if (
                hit is None
                or hit[-2] is not f.__code__
                or (hit[-1] is not None and not same_defaults(f, hit[-1]))
                or (hit[0] is not None and (hit[0] != _cell_kinds(f) if type(hit[0]) is tuple
                                            else not hit[0].fits(f, args)))
                or (hit[3] and not globals_fit(f.__globals__, hit[3]))
            ):
                return _function_pair(f, args)(*args)
            return hit[1](*args)
        pair = resolve(f, len(args))
        for a in args:  # float(obj), sum(obj) of an object of a user class: protocols.py
            if type(a) not in PLAIN and has_objects(args) and table_rule(f):
                return object_call(f, pair, args, {})
        return pair(*args)
    except RecursionError as exc:  # (the innermost user's function with room left names itself)
        if type(exc) is RecursionError and (deep := too_deep(f)) is not None:
            raise deep from None
        raise


class _KindsCheck(tuple):
    """A cache entry's kinds to check at a call, where an argument is a record whose fields'
    kinds the code was specialised on: (kinds of the captured variables, field kinds)."""

    __slots__ = ()

    def fits(self, f, args):
        return self[0] == _cell_kinds(f) and self[1] == _field_kinds(args, reads_items(f.__code__))


_CACHED_FUNCTIONS = weakref.WeakSet()  # functions that hold a pair cache


def forget_pairs():
    """Drop the pair caches of every function (a rule changed), and the memo of
    ``gradient``'s hot path taken from them (fastpath.remember)."""
    for fn in list(_CACHED_FUNCTIONS):
        fn.__dict__.pop("__adjoint_pairs__", None)
        fn.__dict__.pop("__adjoint_last__", None)
    _CACHED_FUNCTIONS.clear()


R.ON_CHANGE.append(forget_pairs)


def call_primal(f, /, *args, **kwargs):
    """f(*args, **kwargs) as differentiated code sees it: rules run, no pullback is kept."""
    if type(f) is types.FunctionType:
        if f.__closure__ is None and R.lookup_user(f) is None and is_library_code(f.__code__):
            # no argument depends on the inputs and it captures nothing: its value is a
            # constant, and a library's internals (np.issubdtype's try) are not ours to read
            return f(*args, **kwargs)
        return call(f, *args, **kwargs)[0]
    if isinstance(f, (types.BuiltinFunctionType, type)) and R.lookup_user(f) is None:
        if not isinstance(f, type) or not _python_class(f):
            return f(*args, **kwargs)
    return call(f, *args, **kwargs)[0]


def _python_class(cls):
    return (
        dataclasses.is_dataclass(cls)
        or isinstance(getattr(cls, "__init__", None), types.FunctionType)
        or (issubclass(cls, tuple) and hasattr(cls, "_fields"))
    )


# ----- resolution --------------------------------------------------------------------------


def rule_pair(f, nargs, kwnames=()):
    """The pair of f's rule, in the one order of resolution: a user rule (@adjoint,
    @rrule, non_differentiable), a built-in special pair, a primitive (the variant for
    nargs positional arguments and these keywords), a non-differentiable builtin. None
    when f has none: its Python source is transformed (a function), or ``resolve`` goes
    on (a bound method, a class, a callable object)."""
    rule = R.lookup_user(f)
    if rule is not None:
        return _user_rule_pair(rule)
    if not _hashable(f):
        return None
    sp = R.SPECIAL.get(f)
    if sp is not None:
        return sp
    prim = R.lookup_primitive(f, nargs, kwnames)
    if prim is not None:
        return _primitive_pair(prim)
    if f in R.NONDIFF:
        return _const_pair(f)
    return None


def _function_pair(f, args):
    """Resolve a plain Python function (user rule first) and cache it on f."""
    nargs = len(args)
    cells = _cell_kinds(f)
    guard = ()
    pair = rule_pair(f, nargs)
    if pair is None:
        key = emit.cache_key(f, kinds_of(args))
        fields = _field_kinds(args, reads_items(f.__code__))
        if fields:  # records' fields: their kinds too, checked at each call (_KindsCheck)
            key += ((FIELDS, fields),)
            cells = _KindsCheck((cells, fields))
        pair = emit.pair_for(f, key, nargs)
        guard = emit.data_guard_of(f, key)
    cache = f.__dict__.get("__adjoint_pairs__")
    if cache is None:
        cache = f.__dict__["__adjoint_pairs__"] = {}
        _CACHED_FUNCTIONS.add(f)
    # gradients of generated code for float arguments are floats (or None) already
    floats = (R.lookup_user(f) is None and R.lookup_primitive(f, nargs) is None
              and all(type(a) is float for a in args))
    cache[tuple(map(type, args))] = (cells, pair, floats and nargs == f.__code__.co_argcount, guard,
                                     f.__code__, own_state(f, nargs))
    return pair


def _hashable(obj):
    try:
        return hash(obj) is not None
    except TypeError:
        return False


def resolve(f, nargs, kwnames=()):
    """The pair function for any callable f called with nargs positional arguments (and
    the keywords kwnames: they choose the variant of a rule, ``np.tile(x, reps=...)``)."""
    if type(f) is types.FunctionType:
        return lambda *a, **k: call(f, *a, **k)
    pair = rule_pair(f, nargs, kwnames)
    if pair is not None:
        return pair
    if isinstance(f, types.MethodType):
        fn, obj = f.__func__, f.__self__

        def bound_method_pair(*args, **kwargs):
            y, pb = call(fn, obj, *args, **kwargs)

            def bound_method_pullback(g):
                # d(self) is the bound method's tangent; a mutable object's field gradients
                # stay in the store (call_method): a field write before the call takes them
                grads = pb(g)
                return (grads[1],) + tuple(grads[2:])

            return y, bound_method_pullback

        return bound_method_pair
    if isinstance(f, type):
        return _constructor_pair(f)
    if isinstance(f, functools.partial):
        return wrappers.partial_pair(f)
    if isinstance(f, wrappers.CACHE_WRAPPERS) and callable(getattr(f, "__wrapped__", None)):
        # functools.lru_cache / cache: the function it wraps computes the same values
        # (a cache is only right for a pure function); differentiate that
        return resolve(f.__wrapped__, nargs, kwnames)
    if wrappers.is_bound_operator(f):
        return wrappers.dunder_pair(f)
    if isinstance(f, (types.BuiltinFunctionType, types.BuiltinMethodType, np.ufunc)):
        pair = wrappers.bound_builtin_pair(f, nargs, kwnames, rule_pair)  # (`rng.random`)
        if pair is not None:
            return pair
        raise MissingAdjointError(f, _where_met())
    call_ = getattr(type(f), "__call__", None)
    if isinstance(call_, types.FunctionType):
        def callable_object_pair(*args, **kwargs):
            y, pb = call(call_, f, *args, **kwargs)

            def callable_object_pullback(g):
                # the object's tangent is the function's; its field gradients stay in the
                # store (call_method): a field write before the call (m.w = v) takes them
                grads = pb(g)
                return tuple(grads[1:])

            return y, callable_object_pullback

        return callable_object_pair
    raise MissingAdjointError(f, _where_met()) if callable(f) else TypeError(f"'{type(f).__name__}' object is not callable")


def _const_pair(f):
    def nondifferentiable_pair(*args, **kwargs):
        y = f(*args, **kwargs)
        n = len(args)
        if kwargs:
            return y, lambda g: (None,) * (n + 1) + ({},)
        return y, lambda g: (None,) * (n + 1)

    return nondifferentiable_pair


_PRIM_PAIRS = {}


def _primitive_source(prim, params):
    """The lines of ``core``: the primitive's call and a pullback from its templates."""
    sig = ", ".join(f"{p}={prim.defaults[p]}" if p in prim.defaults else p for p in params)
    kwonly = prim.kwonly  # passed by name (np.vstack's dtype=, np.pad's ...)
    call_args = ", ".join(f"{p}={p}" if p in kwonly else p for p in params)
    lines = [f"def core({sig}):"]
    if "out" in params:  # the array written into would hold the value without its gradient
        lines.append("    if out is not None: raise NotDifferentiableError(OUT)")
    lines += [f"    ans = fn({call_args})", "    def back(g):"]
    lines.append("        g = seed(g)")
    cast = " or _rt.integral_dtype(dtype)" if "dtype" in params else ""  # a cast: as int()
    lines.append(f"        if g is None{cast}: return ({'None, ' * len(params)})")
    outs = []
    mapping = dict({p: p for p in params}, ans="ans", g="g")
    # the helpers that take adjoints (kind "other": acc, setitem_grad, ...) take None for
    # a zero of unknown shape: its cotangent is passed on as it is, not summed to a number
    fit = "fit_other" if prim.kind == "other" else "unbroadcast"
    for p in params:
        adj = prim.adjoints.get(p)
        if isinstance(adj, dict):
            adj = adj.get("array", adj.get("any"))
        if adj is not None:
            outs.append(f"{fit}({R.fill(adj, mapping)}, {p})")
        elif prim.partials.get(p) is not None:
            d = R.fill(prim.partials[p], mapping)
            outs.append(f"unbroadcast(g * conj({d}), {p})")
        else:
            outs.append("None")
    lines.append(f"        return ({', '.join(outs)},)")
    lines.append("    return ans, back")
    return lines


_SEQUENCES = frozenset((list, tuple))


def _numbers_listed(args):  # numbers_list of an argument, after one C-level type test: every call
    return not _SEQUENCES.isdisjoint(map(type, args)) and any(map(numbers_list, args))


R.NONDIFF[_numbers_listed] = "a test of the arguments' types"


def _primitive_pair(prim):
    """A run-time pair for a primitive (for calls the generator could not inline)."""
    pair = _PRIM_PAIRS.get(id(prim))
    if pair is not None:
        return pair
    params = list(prim.params)
    lines = _primitive_source(prim, params)
    ns = {
        "fn": prim.fn,
        "seed": seed,
        "unbroadcast": unbroadcast,
        "fit_other": _fit_other,
        "NotDifferentiableError": NotDifferentiableError,
        "OUT": f"{prim.path}(..., out=...) is not differentiable: the array written into "
               "holds the value without its gradient; use the returned value instead",
        "conj": conj,
        "math": math,
        "cmath": cmath,
        "np": np,
        "_rt": sys.modules[__package__],
        "operator": operator,
    }
    text = "\n".join(lines) + "\n"
    filename = f"<adjoint_s2s rule for {prim.source_name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), ns)
    core = ns["core"]
    arrays = prim.kind == "array"  # (NumPy's: a list of numbers is the array it makes)

    def primitive_pair(*args, **kwargs):
        given = args
        if arrays and _numbers_listed(args):
            args = tuple(np.asarray(a) if numbers_list(a) else a for a in args)
        ans, back = core(*args, **kwargs)
        if args is not given:
            back = as_given(back, given)
        if not kwargs:
            return ans, lambda g: (None,) + back(g)[: len(args)]

        def keyword_pullback(g):
            grads = back(g)
            kw = {k: grads[params.index(k)] for k in kwargs}
            return (None,) + grads[: len(args)] + (kw,)

        return ans, keyword_pullback

    primitive_pair.prim = prim  # keyed by id: keep prim alive so no other rule reuses its id
    _PRIM_PAIRS[id(prim)] = primitive_pair
    return primitive_pair


def _user_rule_pair(rule):
    """Adapt an @adjoint / @rrule / non_differentiable entry to the pair convention."""
    if rule.style == "nondiff":
        return _const_pair(rule.fn)
    if rule.style == "adjoint":
        return adapters.adjoint_pair(rule.rule, rule.fn)
    if rule.config:
        from ..api import RuleConfig  # (api imports the run time: a cycle at import time)

        return adapters.rrule_pair(rule.rule, rule.fn, RuleConfig())
    return adapters.rrule_pair(rule.rule, rule.fn, None)


def _constructor_pair(cls):
    """Dataclasses and namedtuples: the gradient of the arguments from the object's tangent."""
    if dataclasses.is_dataclass(cls) and not hasattr(cls, "__post_init__"):
        return _plain_dataclass_pair(cls)
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return _namedtuple_pair(cls)
    if cls in (list, tuple, GradList):
        return _sequence_pair(cls)
    if cls in (float, int, bool, str):
        return _const_pair(cls)
    if dataclasses.is_dataclass(cls):
        return _dataclass_post_init_pair(cls)
    init = getattr(cls, "__init__", None)
    if isinstance(init, types.FunctionType) and cls.__new__ is object.__new__:
        return _init_constructor_pair(cls, init)
    raise MissingAdjointError(
        cls, "its constructor is not written in Python (give the class a rule with @adjoint)"
        + _met_while()
    )


def _plain_dataclass_pair(cls):
    """A dataclass without __post_init__: each argument's gradient is its field's."""
    names = [f.name for f in dataclasses.fields(cls) if f.init]

    def dataclass_pair(*args, **kwargs):
        obj = cls(*args, **kwargs)
        n = len(args)

        def constructor_pullback(g):
            # field by field from the store (take_field_grad: second order sees the reads)
            g = unthunk(g)
            vals = []
            for name in names:
                vals.append(add(field(g, name), take_field_grad(obj, name)))
            forget_fields(obj)
            pos = tuple(vals[:n])
            if kwargs:
                return (None,) + pos + ({k: vals[names.index(k)] for k in kwargs},)
            return (None,) + pos

        return obj, constructor_pullback

    return dataclass_pair


def _namedtuple_pair(cls):
    names = list(cls._fields)

    def namedtuple_pair(*args, **kwargs):
        obj = cls(*args, **kwargs)
        n = len(args)

        def constructor_pullback(g):
            vals = _fields_of(g, names)
            res = (None,) + tuple(vals[:n])
            if kwargs:
                return res + ({k: vals[names.index(k)] for k in kwargs},)
            return res

        return obj, constructor_pullback

    return namedtuple_pair


def _sequence_pair(cls):
    """list(...), tuple(...): the gradient of the iterable, shaped like it."""
    def sequence_pair(*args):
        obj = cls(*args)
        src_ = args[0] if args else ()

        def sequence_pullback(g):
            if g is None:
                return (None, None)
            if isinstance(src_, (list, tuple)):
                return (None, type(src_)(unthunk(g)))
            return (None, items_adjoint(src_, list(g)))

        return obj, sequence_pullback

    return sequence_pair


def new_instance(cls):
    """An uninitialised instance (its __init__ runs through AD next)."""
    return cls.__new__(cls)


def _init_constructor_pair(cls, init):
    """A class whose __init__ is Python: differentiate __init__ (its attribute writes)."""

    def init_constructor_pair(*args, **kwargs):
        obj = new_instance(cls)
        _none, init_pb = call(init, obj, *args, **kwargs)

        def init_constructor_pullback(g):
            _seed_fields(obj, g)
            grads = init_pb(None)
            take_fields(obj)  # what __init__ read of itself before writing it: nothing to pass on
            return (None,) + tuple(grads[2:])

        return obj, init_constructor_pullback

    return init_constructor_pair


def field_names(obj):
    """The names of obj's instance attributes (no gradient flows through them)."""
    return tuple(field_names_of(obj))


def set_field(obj, name, value):
    """object.__setattr__ (frozen dataclasses too), with a rule: `obj.name = value`."""
    object.__setattr__(obj, name, value)


def instance_with_fields(cls, names, values):
    """A new instance of cls with its fields set (frozen dataclasses too): the start of
    a dataclass constructor whose __post_init__ is differentiated. Its rule gives each
    value the gradient of its field, from the object's structural tangent (a frozen
    object's reads) and from the store (a mutable one's)."""
    obj = new_instance(cls)
    for name, value in zip(names, values):
        object.__setattr__(obj, name, value)
    return obj


def _dataclass_post_init_pair(cls):
    """A dataclass with __post_init__: fields are set plainly, __post_init__ through AD."""
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    specs = [(f.name, f.default, f.default_factory) for f in dataclasses.fields(cls) if f.init]
    post = cls.__post_init__

    def post_init_constructor_pair(*args, **kwargs):
        bound = {}  # (a plain loop: this pair is differentiated again for second order)
        for i in range(len(args)):
            bound[names[i]] = args[i]
        for k in kwargs:
            bound[k] = kwargs[k]
        values = []
        for name, default, factory in specs:
            if name in bound:
                value = bound[name]
            elif default is not dataclasses.MISSING:
                value = default
            else:
                value = factory()
            values.append(value)
        obj = instance_with_fields(cls, names, values)
        _none, post_pb = call(post, obj)
        n = len(args)

        def post_init_constructor_pullback(g):
            g = unthunk(g)
            for k in field_names(obj):  # g into the store, field by field (add_field_grad:
                add_field_grad(obj, k, field(g, k))  # differentiated again, unlike a bulk seed)
            # a frozen object's reads in __post_init__ give `self` a tangent (mutable: the store)
            b_self = part(post_pb(None), 1)
            fields = {}
            for name in names:  # one by one: take_field_grad is differentiated again
                fields[name] = add(take_field_grad(obj, name), field(b_self, name))
            forget_fields(obj)
            pos = tuple(fields.get(name) for name in names[:n])
            if kwargs:
                return (None,) + pos + ({k: fields.get(k) for k in kwargs},)
            return (None,) + pos

        return obj, post_init_constructor_pullback

    return post_init_constructor_pair


def _fields_of(g, names):
    if g is None or isinstance(g, AbstractZero):
        return [None] * len(names)
    if isinstance(g, Thunk):
        g = g.unthunk()
    if isinstance(g, (Tangent, dict)):
        # through field (a rule): differentiated again, the gradients pass back into g
        return [field(g, n) for n in names]
    if isinstance(g, tuple) and not hasattr(g, "_fields"):
        return list(g) + [None] * (len(names) - len(g))
    return [getattr(g, n, None) for n in names]


def _takes_keywords(code):
    """Whether a pair's pullback ends with the keyword gradients (not in _call_kw: & has no rule)."""
    return bool(code.co_kwonlyargcount) or bool(code.co_flags & 0x08)


def _call_kw(f, args, kwargs):
    """Calls with keywords: map gradients back to how each argument was passed."""
    if (
        type(f) is types.FunctionType
        and R.lookup_user(f) is None
        and f not in R.SPECIAL
        and f not in R.NONDIFF
        and not R.PRIMITIVES.get(f)
    ):
        code = f.__code__
        npos = code.co_argcount
        pos_names = code.co_varnames[:npos]
        pair = emit.raw_pair_for(f, keyword_call_key(f, args, kwargs))
        y, pb = pair(*args, **kwargs)

        def keyword_call_pullback(g):
            grads = pb(g)
            has_kw = _takes_keywords(code)
            kwdict = grads[-1] if has_kw else {}
            flat = grads[:-1] if has_kw else grads
            n_extra = max(0, len(args) - npos)
            pos = tuple(flat[1 : 1 + min(len(args), npos)]) + tuple(flat[1 + npos : 1 + npos + n_extra])
            kw = {}
            for k in kwargs:
                if k in pos_names:
                    kw[k] = flat[1 + pos_names.index(k)]
                else:
                    kw[k] = (kwdict or {}).get(k)
            # parameters that took their default hand their gradients to the function
            # tangent (a default value belongs to the function, like a captured variable)
            took = tuple([k for k in pos_names[len(args):] if k not in kwargs])
            df = with_defaults(flat[0], took, tuple([flat[1 + pos_names.index(k)] for k in took]))
            if isinstance(kwdict, dict):
                df = with_kw_defaults(df, {k: v for k, v in kwdict.items() if k not in kwargs})
            return (df,) + pos + (kw,)

        return y, keyword_call_pullback
    if type(f) is types.FunctionType:
        pair = rule_pair(f, len(args), tuple(kwargs))
        if pair is None:  # rules for f, but none that takes these keywords
            raise MissingAdjointError(
                f, no_variant(len(args), tuple(kwargs)) + _at())
    else:
        pair = rule_pair(f, len(args), tuple(kwargs))
        if pair is None and _hashable(f) and R.PRIMITIVES.get(f):
            # a rule for f, but none of its variants takes these keywords (out=...)
            raise MissingAdjointError(
                f, no_variant(len(args), tuple(kwargs)) + _at())
        if pair is None:
            pair = resolve(f, len(args), tuple(kwargs))
        elif has_objects(args) and table_rule(f):
            return object_call(f, pair, args, kwargs)
    return pair(*args, **kwargs)


# the wrapped callables' pairs (partial, cached functions, bound operators) call back into
# `call` above: imported last, so that it finds this module complete
from . import wrappers  # noqa: E402
