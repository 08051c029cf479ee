"""Checking gradients against finite differences, from a user's test suite too.

``numerical_gradient(f, *args)`` differentiates a real scalar function numerically (a
central stencil, each real degree of freedom in turn; complex numbers get
``∂f/∂re + i·∂f/∂im``, Zygote's convention). ``check_grads(f, *args)`` compares it with
``adjoint_s2s.gradient`` and raises ``AssertionError`` with a per-argument diff.
"""
import copy
import inspect
import numbers
import types
import warnings

import numpy as np

from . import api
from . import rules as R
from .api import gradient
from .tangents import AbstractZero, NoTangent, Tangent, Thunk, _eq, iszero, unthunk

_STENCILS = {
    3: ((-1, -0.5), (1, 0.5)),
    5: ((-2, 1 / 12), (-1, -8 / 12), (1, 8 / 12), (2, -1 / 12)),
}


def _flat_real(x):
    """A list of (get, set) accessors for every real degree of freedom of x."""
    dofs = []

    def walk(get, set_, v):
        if isinstance(v, bool) or v is None or isinstance(v, (str, bytes)):
            return
        if isinstance(v, (float, int)):
            dofs.append(("real", get, set_, float))
        elif isinstance(v, complex):
            dofs.append(("re", get, set_, complex))
            dofs.append(("im", get, set_, complex))
        elif isinstance(v, np.ndarray):
            if not np.issubdtype(v.dtype, np.inexact):
                return
            for idx in np.ndindex(v.shape):
                def g(idx=idx, get=get):
                    return get()[idx]

                def s(val, idx=idx, get=get):
                    get()[idx] = val

                if np.iscomplexobj(v):
                    dofs.append(("re", g, s, complex))
                    dofs.append(("im", g, s, complex))
                else:
                    dofs.append(("real", g, s, float))
    walk(None, None, x)
    return dofs


def numerical_gradient(f, *args, eps=1e-6, order=5):
    """The gradient of real scalar f at args by central differences, shaped like args.

    Floats, complex numbers and float/complex arrays are perturbed; lists, tuples,
    dicts and objects with attributes are walked into; anything else gets None.
    """
    args = list(args)
    out = []
    for i, a in enumerate(args):
        out.append(_grad_of(f, args, i, a, eps, order))
    return tuple(out)


def _grad_of(f, args, i, a, eps, order):
    def evaluate(new):
        trial = list(args)
        trial[i] = new
        y = f(*trial)
        return float(np.real(y))

    if isinstance(a, bool) or a is None or isinstance(a, (str, bytes)):
        return None
    if isinstance(a, (int, np.integer)):
        # an integer is a real number only if f takes it as one (not as an index)
        try:
            return _diff(lambda t: evaluate(float(a) + t), eps, order)
        except Exception:  # noqa: BLE001
            return None
    if isinstance(a, (float, np.floating)):
        return _diff(lambda t: evaluate(float(a) + t), eps, order)
    if isinstance(a, complex):
        dr = _diff(lambda t: evaluate(a + t), eps, order)
        di = _diff(lambda t: evaluate(a + 1j * t), eps, order)
        return complex(dr, di)
    if isinstance(a, np.ndarray):
        if not np.issubdtype(a.dtype, np.inexact):
            return None
        g = np.zeros(a.shape, dtype=complex if np.iscomplexobj(a) else float)
        for idx in np.ndindex(a.shape):
            def at(t, idx=idx, unit=1.0):
                b = a.astype(g.dtype if np.iscomplexobj(a) else np.float64, copy=True)
                b[idx] = b[idx] + unit * t
                return evaluate(b)

            d = _diff(at, eps, order)
            if np.iscomplexobj(a):
                d = d + 1j * _diff(lambda t, idx=idx: at(t, idx, 1j), eps, order)
            g[idx] = d
        return g.astype(a.dtype) if a.dtype == np.float32 else g
    if isinstance(a, (list, tuple)) and not hasattr(a, "_fields"):
        parts = []
        for j, item in enumerate(a):
            def f_item(*xs, j=j):
                new = list(a)
                new[j] = xs[i]
                trial = list(xs)
                trial[i] = type(a)(new) if isinstance(a, tuple) else new
                return f(*trial)

            parts.append(_grad_of(f_item, args, i, item, eps, order))
        return tuple(parts) if isinstance(a, tuple) else parts
    if isinstance(a, dict):
        res = {}
        for k, item in a.items():
            def f_item(*xs, k=k):
                new = dict(a)
                new[k] = xs[i]
                trial = list(xs)
                trial[i] = new
                return f(*trial)

            res[k] = _grad_of(f_item, args, i, item, eps, order)
        return res
    names = _field_names(a)
    if names:
        res = {}
        for name in names:
            def f_item(*xs, name=name):
                new = _replace(a, name, xs[i])
                trial = list(xs)
                trial[i] = new
                return f(*trial)

            res[name] = _grad_of(f_item, args, i, getattr(a, name), eps, order)
        return res
    return None


def _field_names(a):
    fields = getattr(a, "__dataclass_fields__", None)
    if fields:
        return list(fields)
    if isinstance(a, tuple) and hasattr(a, "_fields"):
        return list(a._fields)
    d = getattr(a, "__dict__", None)
    return list(d) if isinstance(d, dict) else []


def _replace(a, name, value):
    if isinstance(a, tuple) and hasattr(a, "_fields"):
        return a._replace(**{name: value})
    new = copy.copy(a)
    object.__setattr__(new, name, value)
    return new


def _diff(g, eps, order):
    return sum(w * g(k * eps) for k, w in _STENCILS[order]) / eps


def isapprox(a, b, rtol=1e-7, atol=1e-9):
    """Tolerant equality of two gradients of any structure (zeros match None)."""

    a, b = unthunk(a), unthunk(b)
    if iszero(a) and iszero(b):
        return True
    if iszero(a) or iszero(b):
        z = b if iszero(a) else a
        if isinstance(z, (int, float, complex, np.ndarray, np.number)):
            return bool(np.allclose(np.asarray(z), 0.0, rtol=rtol, atol=atol))
        if _is_struct(z):
            return all(isapprox(None, v, rtol, atol) for v in _as_dict(z).values())
        if isinstance(z, (list, tuple)):
            return all(isapprox(None, v, rtol, atol) for v in z)
        if isinstance(z, dict):
            return all(isapprox(None, v, rtol, atol) for v in z.values())
        return isapprox(_zero_like(z), z, rtol, atol) if _zero_like(z) is not None else False
    if isinstance(a, Tangent):
        a = dict(a._fields) if not a._elements else tuple(a._elements)
    if isinstance(b, Tangent):
        b = dict(b._fields) if not b._elements else tuple(b._elements)
    if isinstance(a, dict) or isinstance(b, dict) or _is_struct(a) or _is_struct(b):
        # Tangent, dict and natural (same-type) tangents of a structure compare by field
        da = a if isinstance(a, dict) else _as_dict(a)
        db = b if isinstance(b, dict) else _as_dict(b)
        return all(isapprox(da.get(k), db.get(k), rtol, atol) for k in set(da) | set(db))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        n = max(len(a), len(b))
        pad = lambda s: list(s) + [None] * (n - len(s))  # noqa: E731
        return all(isapprox(x, y, rtol, atol) for x, y in zip(pad(a), pad(b)))
    if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
        return a == b
    try:
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False  # no broadcasting: a gradient has the shape of its argument
        return bool(np.allclose(a, b, rtol=rtol, atol=atol))
    except (TypeError, ValueError):
        return False


def _is_struct(x):
    """A natural tangent with fields (dataclass, namedtuple, object), not a container."""
    if isinstance(x, (dict, list, np.ndarray, numbers.Number, str, bytes)) or x is None:
        return False
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return False
    if isinstance(x, (types.FunctionType, type, types.ModuleType)):
        return False
    return bool(_field_names(x))


def _as_dict(x):
    names = _field_names(x)
    return {n: getattr(x, n) for n in names}


def _zero_like(z):
    if isinstance(z, np.ndarray):
        return np.zeros_like(z)
    if isinstance(z, (int, float, complex)):
        return 0.0
    return None


def check_grads(f, *args, rtol=1e-6, atol=1e-8, eps=1e-6, order=1, seed=0):
    """Assert that ``adjoint_s2s.gradient(f, *args)`` matches central differences, and
    return the gradient.

    ``f`` must return a real scalar. Every argument that finite differences can perturb
    is checked (floats, complex numbers, float/complex arrays, and those inside lists,
    tuples, dicts and objects); an argument they cannot perturb (an int used as an index,
    a string) must get ``None`` from adjoint_s2s too. A gradient agrees with the finite
    difference ``w`` when ``|g - w| <= atol + rtol * |w|`` component by component.

    ``order=2`` (or more) also checks higher derivatives, as autograd's ``check_grads``
    does: with a fixed random direction ``v`` shaped like the gradient (``seed``), the
    function ``args -> <v, gradient(f, *args)>`` is checked the same way, which compares
    a Hessian-vector product with finite differences of the gradient. Higher orders
    repeat this on that function. Their differences are less accurate: ``rtol``/``atol``
    apply to every order.

    On a mismatch it raises ``AssertionError`` naming the argument, adjoint_s2s's value
    and the finite difference (and, above order 1, the order that failed). Errors of
    the gradient itself (``UnsupportedSyntaxError``, ``RuleError``...) propagate.
    """
    got = gradient(f, *args)
    want = numerical_gradient(f, *args, eps=eps)
    bad = []
    for i, (g, w) in enumerate(zip(got, want)):
        if not isapprox(g, w, rtol=rtol, atol=atol):
            bad.append(f"  argument {i}: adjoint_s2s gave {g!r}, finite differences {w!r}")
    if bad:
        raise AssertionError(
            f"gradient of {getattr(f, '__name__', f)} does not match finite differences:\n"
            + "\n".join(bad)
        )
    if order > 1:
        _check_projected_gradient(f, args, got, rtol, atol, eps, order, seed)
    return got


def _check_projected_gradient(f, args, got, rtol, atol, eps, order, seed):
    rng = np.random.default_rng(seed)
    direction = _random_like(got, rng)

    def projected(*xs):
        return _projection(direction, gradient(f, *xs))

    projected.__name__ = f"<v, gradient({getattr(f, '__name__', f)})>"
    try:
        check_grads(projected, *args, rtol=rtol, atol=atol, eps=eps, order=order - 1,
                    seed=seed + 1)
    except AssertionError as e:
        raise AssertionError(f"order {order} of {getattr(f, '__name__', f)}: {e}") from None


def _random_like(g, rng):
    """A random direction with the structure of the gradient g (None where g is None)."""
    if g is None or isinstance(g, AbstractZero):
        return None
    if isinstance(g, (float, np.floating)):
        return float(rng.standard_normal())
    if isinstance(g, (complex, np.complexfloating)):
        return complex(rng.standard_normal(), rng.standard_normal())
    if isinstance(g, np.ndarray):
        v = rng.standard_normal(g.shape)
        return v + 1j * rng.standard_normal(g.shape) if g.dtype.kind == "c" else v
    if isinstance(g, (list, tuple)):
        return type(g)(_random_like(x, rng) for x in g)
    if isinstance(g, dict):
        return {k: _random_like(x, rng) for k, x in g.items()}
    raise TypeError(
        f"check_grads(order > 1) projects gradients made of numbers, arrays, lists, tuples "
        f"and dicts; got a {type(g).__name__}"
    )


def _projection(v, g):
    """Re<v, g> summed over the leaves of the gradient structure (a zero where g is)."""
    if v is None or g is None or isinstance(g, AbstractZero):
        return 0.0
    if isinstance(v, (list, tuple)):
        return sum(_projection(a, b) for a, b in zip(v, g))
    if isinstance(v, dict):
        return sum(_projection(v[k], g[k]) for k in v)
    return np.real(np.sum(np.conj(v) * g))


def test_rrule(
    f,
    *args,
    output_tangent=None,
    rtol=1e-9,
    atol=1e-9,
    check_thunked_output_tangent=True,
    rng=None,
):
    """Check the rule of ``f`` (or its generated pullback) against finite differences.

    After ChainRulesTestUtils' ``test_rrule``. If ``f`` has an ``@rrule`` or ``@adjoint``
    rule it is called directly (a ``config=True`` rrule gets a ``RuleConfig`` first);
    otherwise the pullback adjoint_s2s generates for ``f`` is checked. It asserts that

    * the rule's primal equals ``f(*args)`` called plainly;
    * the pullback returns a tuple of ``1 + len(args)`` tangents for an rrule (the
      function's own first), ``len(args)`` for an ``@adjoint`` rule;
    * each tangent (unthunked) matches the vector-Jacobian product ``⟨ȳ, f(x)⟩'`` computed
      by finite differences with a random output tangent ``ȳ`` (or ``output_tangent``);
      structured arguments (tuples, lists, dicts, dataclasses, namedtuples, objects with
      attributes, closures) are walked field by field and their tangent may be a
      ``Tangent``, a dict or an object of the argument's own type;
    * arguments with no tangent space (str, bytes, bool, None, integer arrays, integers
      the function cannot take as floats, e.g. indices) get a zero: ``NoTangent()``,
      ``ZeroTangent()``, ``None`` or numeric zeros. Other integers are perturbed as reals;
    * the pullback gives the same tangents when ``ȳ`` comes wrapped in a ``Thunk``.

    Finite differences: a 5-point central stencil with step ``h = 1e-3·max(1, |x|)`` for
    each real degree of freedom ``x`` (complex numbers: real and imaginary parts; when
    float32 limits the precision ε, ``h = ε^(1/5)·max(1, |x|)``), also evaluated at
    ``h/2``; the ``h/2`` value is the reference. Its error is estimated as
    ``e = |D(h) − D(h/2)| + 16·ε·S/(h/2) + 4·ε_x·|x|·|D|/h``, where ``S`` bounds the size of
    the terms of ``⟨ȳ, f(x)⟩`` (rounding in ``f``) and ``ε_x`` the precision of ``x``
    (float32 arrays). If ``e`` exceeds the requested tolerance, or ``f`` fails near ``x``,
    steps ten and a hundred times smaller are tried and the most accurate kept. A
    component ``g`` of a tangent then passes when

        |g − fd| ≤ atol + rtol·max(|g|, |fd|) + e

    so ``rtol=1e-9`` is meaningful for smooth, well-conditioned functions, while a
    derivative off by a factor (3x instead of 2x) fails at any sensible tolerance.

    ``rng``: a seed or ``numpy.random.Generator`` for the random output tangent (default:
    fresh entropy; the tangent used is printed on failure). Non-differentiable functions
    (``non_differentiable``) are checked for their primal and for zero tangents only.
    Raises ``AssertionError`` listing every mismatch by argument and field.
    """

    fname = getattr(f, "__name__", None) or repr(f)
    rule = R.lookup_user(f)
    style = rule.style if rule is not None else None
    n = len(args)
    names = _argument_labels(f, n)

    def forward():
        call_args = _safe_deepcopy(args)
        if style == "rrule":
            out = rule.rule(api.RuleConfig(), *call_args) if rule.config else rule.rule(*call_args)
            what = f"the @rrule rule for {fname}"
        elif style == "adjoint":
            out = rule.rule(*call_args)
            what = f"the @adjoint rule for {fname}"
        else:
            out = api._pullback(f, *call_args)
            what = f"the pullback adjoint_s2s generates for {fname}"
        if not (isinstance(out, tuple) and len(out) == 2 and callable(out[1])):
            raise AssertionError(
                f"test_rrule({fname}): {what} must return (value, pullback), got {out!r}"
            )
        return out, what

    (y, back), what = forward()
    problems = []

    # (a) the primal
    want_y = f(*_safe_deepcopy(args))
    if not _primal_matches(y, want_y, rtol, atol):
        problems.append(f"  primal: {fname}(*args) = {want_y!r}, but {what} returned {y!r}")

    # (b) the pullback and its tangents
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    dy = _rand_tangent(y, rng) if output_tangent is None else output_tangent
    try:
        _inner(dy, y)
    except Exception as e:  # noqa: BLE001 - a caller's mistake, said plainly
        raise ValueError(
            f"test_rrule({fname}): the output tangent {dy!r} does not fit the output "
            f"{y!r} ({type(e).__name__}: {e})"
        ) from None
    grads = _normalise_grads(back(dy), n, style, what, fname)
    labels = ["the function's own tangent"] + names

    if style == "nondiff":
        for label, g in zip(labels, grads):
            if not _zeroish(g):
                problems.append(f"  {label}: non_differentiable, yet its tangent is {g!r}")
        _raise_if(problems, fname, what, dy, rtol, atol)
        return None

    # (e) the same tangents for a thunked output tangent (from a fresh forward pass)
    if check_thunked_output_tangent:
        (_, back2), _w = forward()
        try:
            grads2 = _normalise_grads(back2(Thunk(lambda: dy)), n, style, what, fname)
        except AssertionError:
            raise
        except Exception as e:  # noqa: BLE001 - reported as a failure of the rule
            problems.append(
                f"  the pullback fails when the output tangent is a Thunk: "
                f"{type(e).__name__}: {e}"
            )
        else:
            for label, g1, g2 in zip(labels, grads, grads2):
                if not isapprox(g2, g1, rtol=rtol, atol=atol):
                    problems.append(
                        f"  {label}: pullback(Thunk(dy)) gave {g2!r}, pullback(dy) gave {g1!r}"
                    )

    # (c, d) every tangent against finite differences
    fd = _FiniteDifferences(f, args, dy, rtol, atol)
    expected = fd.expectations(labels)
    for i, (label, g, exp) in enumerate(zip(labels, grads, expected)):
        if i == 0 and style in ("rrule", "adjoint") and _zeroish(g):
            continue  # a rule may declare NoTangent() for the function object itself
        _compare(g, exp, label, problems, rtol, atol)
    if fd.warnings:

        for w in fd.warnings:
            warnings.warn(f"test_rrule({fname}): {w}", stacklevel=2)
    _raise_if(problems, fname, what, dy, rtol, atol)
    return None


test_rrule.__test__ = False  # not a pytest test itself


# ----- test_rrule: the pieces ----------------------------------------------------------


def _raise_if(problems, fname, what, dy, rtol, atol):
    if problems:
        raise AssertionError(
            f"test_rrule({fname}): {what} is wrong "
            f"(output tangent {dy!r}; rtol={rtol:g}, atol={atol:g}):\n" + "\n".join(problems)
        )


def _argument_labels(f, n):

    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    labels = []
    for i in range(n):
        name = None
        if i < len(params) and params[i].kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            name = params[i].name
        elif params and params[min(i, len(params) - 1)].kind == inspect.Parameter.VAR_POSITIONAL:
            star = next(p for p in params if p.kind == inspect.Parameter.VAR_POSITIONAL)
            name = f"*{star.name}"
        labels.append(f"argument {i} ({name})" if name else f"argument {i}")
    return labels


def _safe_deepcopy(args):
    try:
        return copy.deepcopy(args)
    except Exception:  # noqa: BLE001 - uncopyable objects are passed as they are
        return args


def _normalise_grads(grads, n, style, what, fname):
    """The tangents as (df, *dargs), unthunked; AssertionError on a wrong count."""

    if style in ("adjoint", "nondiff") and grads is None:
        grads = (None,) * n  # Zygote's `nothing`: no gradient for any argument
    if style == "adjoint" and isinstance(grads, list):
        grads = tuple(grads)
    expected = n if style == "adjoint" else n + 1
    if not isinstance(grads, tuple):
        raise AssertionError(
            f"test_rrule({fname}): the pullback of {what} must return a tuple of "
            f"{expected} tangents, got {type(grads).__name__} {grads!r}"
        )
    if len(grads) != expected:
        detail = (
            "one per argument"
            if style == "adjoint"
            else "the function's own tangent first (NoTangent() for a plain function), "
            "then one per argument"
        )
        raise AssertionError(
            f"test_rrule({fname}): the pullback of {what} returned {len(grads)} tangents, "
            f"expected {expected} ({detail})"
        )
    if style == "adjoint":
        grads = (NoTangent(),) + grads
    return tuple(unthunk(g) for g in grads)


def _zeroish(g):

    try:
        return iszero(g)
    except Exception:  # noqa: BLE001
        return False


def _is_number(v):
    return (isinstance(v, numbers.Number) and not isinstance(v, (bool, np.bool_))) or (
        isinstance(v, np.ndarray) and v.ndim == 0
    )


def _primal_matches(got, want, rtol, atol):
    if _is_number(want):
        return _is_number(got) and bool(
            np.allclose(complex(got), complex(want), rtol=rtol, atol=atol, equal_nan=True)
        )
    if type(got) is not type(want):
        return False
    if isinstance(want, np.ndarray):
        if got.shape != want.shape:
            return False
        if np.issubdtype(want.dtype, np.number):
            return bool(np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True))

    if _eq(got, want):
        return True
    try:
        return isapprox(got, want, rtol=rtol, atol=atol)
    except Exception:  # noqa: BLE001
        return False


def _rand_scalar(rng):
    # magnitudes in [0.5, 2] with a random sign: never near zero, never huge
    return float(rng.uniform(0.5, 2.0) * rng.choice((-1.0, 1.0)))


def _rand_tangent(y, rng):
    """A random tangent for the output y (ChainRulesTestUtils' rand_tangent)."""

    if y is None or isinstance(y, (bool, np.bool_, str, bytes)):
        return NoTangent()
    if isinstance(y, (int, np.integer)):
        return NoTangent()  # integer outputs have no tangent space
    if isinstance(y, (float, np.floating)):
        return _rand_scalar(rng)
    if isinstance(y, (complex, np.complexfloating)):
        return complex(_rand_scalar(rng), _rand_scalar(rng))
    if isinstance(y, np.ndarray):
        if np.issubdtype(y.dtype, np.complexfloating):
            re = rng.uniform(0.5, 2.0, y.shape) * rng.choice((-1.0, 1.0), y.shape)
            im = rng.uniform(0.5, 2.0, y.shape) * rng.choice((-1.0, 1.0), y.shape)
            return (re + 1j * im).astype(y.dtype)
        if np.issubdtype(y.dtype, np.floating):
            v = rng.uniform(0.5, 2.0, y.shape) * rng.choice((-1.0, 1.0), y.shape)
            return v.astype(y.dtype)
        return NoTangent()
    names = _struct_names(y)
    if names is not None:
        return Tangent(type(y), **{k: _rand_tangent(getattr(y, k), rng) for k in names})
    if type(y) is tuple:
        return tuple(_rand_tangent(e, rng) for e in y)
    if isinstance(y, list):
        return [_rand_tangent(e, rng) for e in y]
    if isinstance(y, dict):
        return {k: _rand_tangent(v, rng) for k, v in y.items()}
    return NoTangent()


def _struct_names(x):
    """Field names of a structured value (namedtuple, dataclass, object), else None."""
    if isinstance(x, tuple):
        return list(x._fields) if hasattr(type(x), "_fields") else None
    if isinstance(x, (list, dict, np.ndarray, numbers.Number, str, bytes)) or x is None:
        return None
    if isinstance(x, (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                      types.ModuleType, type, np.ufunc)):
        return None
    fields = getattr(x, "__dataclass_fields__", None)
    if isinstance(fields, dict):
        return list(fields)
    d = getattr(x, "__dict__", None)
    if isinstance(d, dict) and d:
        return list(d)
    slots = []
    for klass in type(x).__mro__:
        s = klass.__dict__.get("__slots__", ())
        slots += [s] if isinstance(s, str) else list(s)
    slots = [s for s in slots if s not in ("__weakref__", "__dict__") and hasattr(x, s)]
    return slots or None


def _component(g, key, kind):
    """Component `key` of a tangent g (a Tangent, dict, sequence or natural object)."""

    if g is None:
        return None
    if isinstance(g, Tangent):
        return g[key]
    if isinstance(g, dict):
        return g.get(key)
    if kind == "item":
        return g[key] if key < len(g) else None
    return getattr(g, key, None)


def _inner(dy, y):
    """(⟨dy, y⟩, the sum of the sizes of its terms, the precision of y) for real AD."""

    eps = _EPS64
    dy = unthunk(dy)
    if dy is None or isinstance(dy, AbstractZero):
        return 0.0, 0.0, eps
    if y is None or isinstance(y, (bool, np.bool_, str, bytes)):
        return 0.0, 0.0, eps
    if isinstance(y, (numbers.Number, np.number)):
        if isinstance(y, np.number):
            eps = max(eps, float(np.finfo(y.dtype).eps)) if np.issubdtype(
                y.dtype, np.inexact) else eps
        d = complex(dy) if not isinstance(dy, np.ndarray) else complex(dy.item())
        p = d.conjugate() * complex(y)
        return p.real, abs(d) * abs(complex(y)), eps
    if isinstance(y, np.ndarray):
        if not np.issubdtype(y.dtype, np.inexact):
            return 0.0, 0.0, eps
        eps = max(eps, float(np.finfo(y.dtype).eps))
        d = np.asarray(dy)
        if d.shape != y.shape:
            d = np.broadcast_to(d, y.shape)
        val = np.vdot(d.astype(complex), y.astype(complex)).real
        return float(val), float(np.sum(np.abs(d) * np.abs(y))), eps
    total = size = 0.0
    names = _struct_names(y)
    if names is not None:
        parts = [(_component(dy, k, "attr"), getattr(y, k)) for k in names]
    elif isinstance(y, (tuple, list)):
        if isinstance(dy, Tangent):
            dy = tuple(dy)
        parts = [(_component(dy, i, "item"), e) for i, e in enumerate(y)]
    elif isinstance(y, dict):
        parts = [(_component(dy, k, "key"), v) for k, v in y.items()]
    else:
        return 0.0, 0.0, eps
    for dpart, ypart in parts:
        v, s, e = _inner(dpart, ypart)
        total += v
        size += s
        eps = max(eps, e)
    return total, size, eps


_EPS64 = float(np.finfo(float).eps)


class _EvalError(Exception):
    pass


# expectations: what the tangent of each part of the arguments must be
_NONE = "no tangent space"
_SKIP = "not checked"


class _Num:
    __slots__ = ("value", "err")

    def __init__(self, value, err):
        self.value, self.err = value, err


class _Arr:
    __slots__ = ("value", "err", "shape")

    def __init__(self, value, err):
        self.value, self.err, self.shape = value, err, value.shape


class _Seq:
    __slots__ = ("type", "items")

    def __init__(self, typ, items):
        self.type, self.items = typ, items


class _Map:
    __slots__ = ("items",)

    def __init__(self, items):
        self.items = items


class _Struct:
    __slots__ = ("type", "fields")

    def __init__(self, typ, fields):
        self.type, self.fields = typ, fields


def _replace_at(obj, steps, value):
    """obj with the part at `steps` replaced by value; containers on the way are copied."""
    if not steps:
        return value
    (kind, key), rest = steps[0], steps[1:]
    if kind == "elem":
        arr = obj.copy()
        arr[key] = value
        return arr
    if kind == "item":
        items = list(obj)
        items[key] = _replace_at(obj[key], rest, value)
        return items if isinstance(obj, list) else tuple(items)
    if kind == "key":
        new = copy.copy(obj)
        new[key] = _replace_at(obj[key], rest, value)
        return new
    if kind == "self":
        return types.MethodType(obj.__func__, _replace_at(obj.__self__, rest, value))
    if kind == "cell":
        names = obj.__code__.co_freevars
        cells = tuple(
            types.CellType(_replace_at(c.cell_contents, rest, value)) if nm == key else c
            for nm, c in zip(names, obj.__closure__)
        )
        new = types.FunctionType(obj.__code__, obj.__globals__, obj.__name__,
                                 obj.__defaults__, cells)
        new.__kwdefaults__ = obj.__kwdefaults__
        return new
    # an attribute
    inner = _replace_at(getattr(obj, key), rest, value)
    if isinstance(obj, tuple) and hasattr(obj, "_replace"):
        return obj._replace(**{key: inner})
    new = copy.copy(obj)
    object.__setattr__(new, key, inner)
    return new


class _FiniteDifferences:
    """The expected tangent of f and of each argument, ⟨dy, f(x)⟩ differentiated numerically."""

    def __init__(self, f, args, dy, rtol, atol):
        self.root = [f, *args]
        self.dy = dy
        self.rtol, self.atol = rtol, atol
        self.warnings = []

    def expectations(self, labels):
        return [
            self._expect(v, [("item", i)], set(), label)
            for i, (v, label) in enumerate(zip(self.root, labels))
        ]

    # -- evaluation ---------------------------------------------------------------------
    def _evaluate(self, steps, value):
        root = _replace_at(self.root, steps, value)
        fn, args = root[0], _safe_deepcopy(root[1:])
        try:
            with np.errstate(all="ignore"):
                y = fn(*args)
            val, size, eps = _inner(self.dy, y)
        except Exception as e:  # noqa: BLE001 - f is not defined there
            raise _EvalError(f"{type(e).__name__}: {e}") from None
        if not np.isfinite(val):
            raise _EvalError("not finite")
        return val, size, eps

    def _derivative(self, steps, x0, unit, eps_x, label):
        """(estimate, error) of d/dt ⟨dy, f(x0 + t·unit)⟩ at 0, or None if f fails."""
        scale = max(1.0, abs(x0))
        reason = None
        try:
            eps = max(eps_x, self._evaluate(steps, x0)[2])
        except _EvalError as e:
            eps, reason = eps_x, str(e)
        # 1e-3 for float64; larger steps when float32 limits the precision (ε^(1/5))
        base = max(1e-3, eps ** 0.2) * scale
        best = None
        for h in (base, base / 10, base / 100):
            cache = {}

            def at(k):
                if k not in cache:
                    cache[k] = self._evaluate(steps, x0 + (k * h) * unit)
                return cache[k]

            try:
                # D(h) on ±h, ±2h; D(h/2) on ±h/2, ±h
                pts = {k: at(k) for k in (-2, -1, -0.5, 0.5, 1, 2)}
            except _EvalError as e:
                reason = str(e)
                continue
            d_h = (pts[-2][0] - 8 * pts[-1][0] + 8 * pts[1][0] - pts[2][0]) / (12 * h)
            hh = h / 2
            d_hh = (pts[-1][0] - 8 * pts[-0.5][0] + 8 * pts[0.5][0] - pts[1][0]) / (12 * hh)
            size = max(p[1] for p in pts.values())
            eps_out = max(p[2] for p in pts.values())
            err = (
                abs(d_h - d_hh)
                + 16 * eps_out * size / hh
                + 4 * eps_x * abs(x0) * abs(d_hh) / hh
            )
            if best is None or err < best[1]:
                best = (d_hh, err)
            if err <= max(self.atol, self.rtol * abs(d_hh)):
                break
        if best is None:
            self.warnings.append(
                f"{label}: finite differences could not evaluate the function near "
                f"{x0!r} ({reason}); not checked"
            )
        return best

    # -- the walk over the arguments -----------------------------------------------------
    def _expect(self, v, steps, active, label):

        if v is None or isinstance(v, (bool, np.bool_, str, bytes, AbstractZero)):
            return _NONE
        if isinstance(v, (int, np.integer)):
            try:  # an integer is a real number if f takes it as one
                self._evaluate(steps, float(v))
            except _EvalError:
                return _NONE
            r = self._derivative(steps, float(v), 1.0, 0.0, label)
            return _NONE if r is None else _Num(*r)
        if isinstance(v, (float, np.floating)):
            eps_x = float(np.finfo(v.dtype).eps) if isinstance(v, np.floating) else _EPS64
            r = self._derivative(steps, float(v), 1.0, eps_x, label)
            return _SKIP if r is None else _Num(*r)
        if isinstance(v, (complex, np.complexfloating)):
            z = complex(v)
            re = self._derivative(steps, z, 1.0, _EPS64, label)
            im = self._derivative(steps, z, 1j, _EPS64, label)
            if re is None or im is None:
                return _SKIP
            return _Num(complex(re[0], im[0]), re[1] + im[1])
        if isinstance(v, np.ndarray):
            return self._expect_array(v, steps, label)
        if isinstance(v, Tangent):
            return _SKIP
        if id(v) in active:
            return _SKIP  # a cycle
        active = active | {id(v)}
        if isinstance(v, types.FunctionType):
            if not v.__closure__:
                return _NONE
            fields = {}
            for name, cell in zip(v.__code__.co_freevars, v.__closure__):
                try:
                    content = cell.cell_contents
                except ValueError:
                    continue
                fields[name] = self._expect(content, steps + [("cell", name)], active,
                                            f"{label}.{name}")
            return _Struct(types.FunctionType, fields)
        if isinstance(v, (types.BuiltinFunctionType, types.ModuleType, type, np.ufunc)):
            return _NONE
        if isinstance(v, types.MethodType):
            # a bound method's tangent is the tangent of the object it is bound to
            if isinstance(v.__self__, (type, types.ModuleType)):
                return _NONE
            return self._expect(v.__self__, steps + [("self", None)], active, label)
        names = _struct_names(v)
        if names is not None:
            return _Struct(type(v), {
                k: self._expect(getattr(v, k), steps + [("attr", k)], active,
                                f"{label}.{k}")
                for k in names
            })
        if isinstance(v, (tuple, list)):
            return _Seq(type(v), [
                self._expect(e, steps + [("item", i)], active, f"{label}[{i}]")
                for i, e in enumerate(v)
            ])
        if isinstance(v, dict):
            return _Map({
                k: self._expect(e, steps + [("key", k)], active, f"{label}[{k!r}]")
                for k, e in v.items()
            })
        return _SKIP

    def _expect_array(self, v, steps, label):
        if not np.issubdtype(v.dtype, np.inexact):
            return _NONE
        eps_x = float(np.finfo(v.dtype).eps)
        cplx = np.iscomplexobj(v)
        value = np.zeros(v.shape, dtype=complex if cplx else float)
        err = np.zeros(v.shape)
        for idx in np.ndindex(v.shape):
            x0 = v[idx].item()
            st = steps + [("elem", idx)]
            lab = f"{label}[{', '.join(map(str, idx))}]"
            re = self._derivative(st, x0, 1.0, eps_x, lab)
            if re is None:
                value[idx], err[idx] = np.nan, np.inf
                continue
            value[idx], err[idx] = re
            if cplx:
                im = self._derivative(st, x0, 1j, eps_x, lab)
                if im is None:
                    value[idx], err[idx] = np.nan, np.inf
                    continue
                value[idx] += 1j * im[0]
                err[idx] += im[1]
        return _Arr(value, err)


def _compare(got, exp, label, problems, rtol, atol):
    """Append a line to problems for every part of got that does not match exp."""

    got = unthunk(got)
    if exp is _SKIP:
        return
    if exp is _NONE:
        if not _zeroish(got):
            problems.append(
                f"  {label}: has no tangent space, so its tangent must be NoTangent(), "
                f"ZeroTangent(), None or zero; got {got!r}"
            )
        return
    zero = _zeroish(got) and not isinstance(got, np.ndarray)
    if isinstance(exp, _Num):
        if zero:
            g = 0.0
        elif _is_number(got):
            g = got.item() if isinstance(got, (np.ndarray, np.generic)) else got
        else:
            problems.append(f"  {label}: expected a number, got {type(got).__name__} {got!r}")
            return
        diff = abs(g - exp.value)
        tol = atol + rtol * max(abs(g), abs(exp.value)) + exp.err
        if not diff <= tol:
            problems.append(
                f"  {label}: expected {exp.value!r} (finite differences, ±{exp.err:.1e}), "
                f"got {g!r}"
            )
        return
    if isinstance(exp, _Arr):
        if zero:
            g = np.zeros(exp.shape)
        elif isinstance(got, np.ndarray):
            if got.shape != exp.shape:
                problems.append(
                    f"  {label}: expected an array of shape {exp.shape}, got shape {got.shape}"
                )
                return
            g = got
        else:
            problems.append(
                f"  {label}: expected an array of shape {exp.shape}, got "
                f"{type(got).__name__} {got!r}"
            )
            return
        with np.errstate(all="ignore"):
            diff = np.abs(g - exp.value)
            tol = atol + rtol * np.maximum(np.abs(g), np.abs(exp.value)) + exp.err
            bad = ~(diff <= tol) & np.isfinite(exp.err)
        if bad.any():
            where = [tuple(int(i) for i in idx) for idx in np.argwhere(bad)]
            shown = ", ".join(
                f"[{', '.join(map(str, idx))}]: expected {exp.value[idx].item()!r}, "
                f"got {np.asarray(g)[idx].item()!r}"
                for idx in where[:4]
            )
            more = f" (and {len(where) - 4} more)" if len(where) > 4 else ""
            problems.append(
                f"  {label}: {len(where)} of {bad.size} entries differ from finite "
                f"differences (largest gap {float(np.max(diff[bad])):.3g}): {shown}{more}\n"
                f"      expected {np.array2string(exp.value, precision=6, threshold=20)}\n"
                f"      got      {np.array2string(np.asarray(g), precision=6, threshold=20)}"
            )
        return
    if isinstance(exp, _Seq):
        if zero:
            items = []
        elif isinstance(got, Tangent) and (got._elements or not got._fields):
            items = list(got._elements)
        elif isinstance(got, (tuple, list)):
            items = list(got)
        else:
            problems.append(
                f"  {label}: expected a {exp.type.__name__} of tangents, got "
                f"{type(got).__name__} {got!r}"
            )
            return
        if len(items) > len(exp.items):
            problems.append(
                f"  {label}: {len(items)} tangents for a {exp.type.__name__} of "
                f"{len(exp.items)}"
            )
            return
        for i, e in enumerate(exp.items):
            _compare(items[i] if i < len(items) else None, e, f"{label}[{i}]", problems,
                     rtol, atol)
        return
    if isinstance(exp, _Map):
        if zero:
            got = {}
        elif isinstance(got, Tangent):
            got = got.fields()
        if not isinstance(got, dict):
            problems.append(f"  {label}: expected a dict of tangents, got {type(got).__name__}"
                            f" {got!r}")
            return
        extra = [k for k in got if k not in exp.items and not _zeroish(got[k])]
        if extra:
            problems.append(f"  {label}: tangents for keys the dict does not have: {extra!r}")
        for k, e in exp.items.items():
            _compare(got.get(k), e, f"{label}[{k!r}]", problems, rtol, atol)
        return
    # a structure: Tangent, dict-like, a plain tuple for a namedtuple, or a natural object
    tname = getattr(exp.type, "__name__", repr(exp.type))
    fields = list(exp.fields)
    if zero:
        parts = {}
    elif isinstance(got, Tangent):
        pt = got.primal_type
        if exp.type is not types.FunctionType and isinstance(pt, type) and not (
            issubclass(pt, exp.type) or issubclass(exp.type, pt)
        ):
            problems.append(
                f"  {label}: a Tangent of {getattr(pt, '__name__', pt)} for a {tname}"
            )
            return
        if got._elements and hasattr(exp.type, "_fields"):
            parts = dict(zip(fields, got._elements))
        else:
            parts = got.fields()
    elif isinstance(got, dict):
        parts = dict(got)
    elif type(got) is tuple and hasattr(exp.type, "_fields"):
        parts = dict(zip(fields, got))
    elif isinstance(got, exp.type) and not isinstance(got, types.FunctionType):
        parts = {k: getattr(got, k, None) for k in fields}
    else:
        problems.append(
            f"  {label}: expected a Tangent({tname}, ...), a dict or a {tname}, got "
            f"{type(got).__name__} {got!r}"
        )
        return
    extra = [k for k in parts if k not in exp.fields and not _zeroish(parts[k])]
    if extra:
        problems.append(f"  {label}: {', '.join(map(str, extra))}: not a field of {tname}")
    for k in fields:
        _compare(parts.get(k), exp.fields[k], f"{label}.{k}", problems, rtol, atol)
