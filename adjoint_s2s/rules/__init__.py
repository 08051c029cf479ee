"""The adjoint table and the rule language.

Two kinds of entries share one table, looked up by the function object:

* **Primitives** (built in): a derivative written as a *template*, inlined into the
  generated code. ``primitive(math.sin, "x", "math.cos(x)")`` says: for ``y = sin(x)``
  the partial derivative is ``cos(x)``; the reverse pass writes ``b_x = b_y * math.cos(x)``
  (with the conjugate and unbroadcast it needs for complex numbers and arrays).
  In a template, the parameters stand for the arguments, ``ans`` for the result and
  ``g`` for the incoming adjoint.
* **User rules**: ``@adjoint(f)`` (Zygote style), ``@rrule(f)`` (ChainRules style) and
  ``non_differentiable(f)``. They win over primitives and over differentiating ``f``.

Every change to the table bumps ``EPOCH`` and the version of the function it is
about; generated code remembers the versions of the functions it inlined or resolved,
so a new rule invalidates exactly what depended on it.
"""
import inspect
import re
import types
import weakref

EPOCH = [0]

_VERSIONS = {}  # id(fn) -> version, with a weak reference to keep ids honest


def _keyword_only(fn):
    """The names of fn's keyword-only parameters (none when it has no signature)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return frozenset()
    return frozenset(p.name for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY)


class Primitive:
    """A built-in rule with inline templates."""

    __slots__ = ("fn", "path", "params", "defaults", "partials", "adjoints", "kind", "doc",
                 "kwonly")

    def __init__(self, fn, path, params, partials=None, adjoints=None, kind="real", doc="",
                 defaults=None):
        self.fn = fn
        self.path = path
        self.params = params
        self.defaults = defaults or {}  # param -> source text of its default
        self.partials = partials or {}
        self.adjoints = adjoints or {}
        self.kind = kind
        self.doc = doc
        self.kwonly = _keyword_only(fn)  # parameters the function takes only by name

    def bind(self, nargs, kwnames):
        """Map a call (nargs positional, keyword names) to parameters, or None if it cannot."""
        if nargs > len(self.params) or any(p in self.kwonly for p in self.params[:nargs]):
            return None  # too many positional arguments: NumPy would refuse them too
        bound = list(self.params[:nargs])
        for k in kwnames:
            if k not in self.params or k in bound:
                return None
            bound.append(k)
        missing = [p for p in self.params if p not in bound and p not in self.defaults]
        return None if missing else bound

    @property
    def source_name(self):
        """path/number of parameters, the keyword-only ones named (``np.einsum/4+optimize``):
        the file name of its run-time source, which a nested gradient reads back, one per
        variant (``einsum(s, a, b, c)`` and ``einsum(s, a, b, optimize=)`` are as long)."""
        kw = "".join(f"+{p}" for p in self.params if p in self.kwonly)
        return f"{self.path}/{len(self.params)}{kw}"

    def __repr__(self):
        return f"Primitive({self.path})"


PRIMITIVES = {}  # fn object -> {number of arguments (or a key of its own): Primitive}
NONDIFF = {}  # fn object -> reason (built-in non-differentiable functions)
USER_RULES = {}  # fn object -> UserRule
SPECIAL = {}  # fn object -> pair function (runtime-level rules: rrule style)
STOPS_GRADIENT = set()  # functions whose result carries no gradient (dropgrad)
BOUND_RULE_CLASSES = set()  # classes of the instances with rules on their bound methods
ARRAY_METHODS = {}  # ndarray method name -> the function whose rule it uses (x.sum -> np.sum)
ARRAY_CONST_METHODS = {"argmax", "argmin", "argsort", "nonzero", "any", "all"}


def array_method(name, fn):
    """Differentiate ``x.name(...)`` on arrays with the rule of ``fn(x, ...)``."""
    ARRAY_METHODS[name] = fn


class UserRule:
    __slots__ = ("fn", "rule", "style", "config", "__weakref__")

    def __init__(self, fn, rule, style, config=False):
        self.fn = fn
        self.rule = rule
        self.style = style  # "adjoint" | "rrule" | "nondiff"
        self.config = config


def _split(params):
    """'x, axis=None, keepdims=False' -> (names, {name: default source})."""
    names, defaults = [], {}
    parts, depth, cur = [], 0, ""
    for ch in params:  # split on commas outside brackets: axes=(0, 1) is one default
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for part in parts:
        part = part.strip()
        if not part:
            continue
        if "=" in part:
            name, default = part.split("=", 1)
            defaults[name.strip()] = default.strip()
            part = name.strip()
        names.append(part)
    return tuple(names), defaults


def primitive(fn, params, *partials, path=None, kind="real", adjoints=None, doc="", key=None):
    """Register a rule with inline templates.

    ``params`` names the parameters, with defaults (``"x, axis=None"``). Then either one
    *partial derivative* per parameter (elementwise functions: the reverse pass writes
    ``b_x = g * partial``, conjugating and unbroadcasting as the operands need), or
    ``adjoints={"x": "template"}``: the whole contribution to ``b_x``, in terms of the
    parameters, ``ans`` (the result) and ``g`` (the incoming adjoint). ``None`` (or a
    parameter left out) means no gradient. ``kind`` says what the result is: "real",
    "complex", "same" (as the operands), "array" (NumPy: array templates always).
    ``key``: the variant's key in the table, the number of parameters unless given (a
    variant with a keyword-only parameter as long as another: ``einsum(..., optimize=)``).
    """
    names, defaults = _split(params)
    reserved = {"g", "ans"} & set(names)
    if reserved:  # templates use them for the cotangent and the result
        raise ValueError(f"{path or fn}: a parameter may not be named {sorted(reserved)[0]!r}")
    if len(partials) not in (0, len(names)):
        raise ValueError(f"{path or fn}: {len(names)} parameters but {len(partials)} partials")
    prim = Primitive(
        fn,
        path or _default_path(fn),
        names,
        dict(zip(names, partials)),
        adjoints or {},
        kind,
        doc,
        defaults,
    )
    PRIMITIVES.setdefault(fn, {})[len(names) if key is None else key] = prim
    owner = getattr(fn, "__self__", None)
    if isinstance(fn, types.MethodType) and not isinstance(owner, (types.ModuleType, type)):
        # a rule keyed on a bound method of an instance (scipy.stats.norm.logpdf): calls
        # obj.name(...) on that class consult the table before the method's source
        BOUND_RULE_CLASSES.add(type(owner))
    return prim


def lookup_primitive(fn, nargs, kwnames=()):
    """The primitive rule for a call of fn, or None (a variant whose parameters bind)."""
    try:
        variants = PRIMITIVES.get(fn)
    except TypeError:
        return None
    if not variants:
        return None
    exact = variants.get(nargs)
    if exact is not None and not kwnames and (not exact.kwonly or exact.bind(nargs, ())):
        return exact
    for prim in sorted(variants.values(), key=lambda p: len(p.params)):
        if prim.bind(nargs, kwnames) is not None:
            return prim
    return None


# the reason of a generator's draws (rules/builtins.py): a number computed from the
# generator object's fields that is still no function of anything differentiated
RANDOM_DRAW = "a random draw is a constant to the gradient"


def nondifferentiable_builtin(*fns, reason="it returns no differentiable value"):
    for fn in fns:
        NONDIFF[fn] = reason


def special(fn):
    """Register a run-time rule that returns (y, pullback) with the function tangent first."""

    def deco(pair):
        SPECIAL[fn] = pair
        return pair

    return deco



def _default_path(fn):
    mod = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__name__", repr(fn))
    if mod in ("builtins", ""):
        return name
    if mod == "numpy":
        return f"np.{name}"
    return f"{mod}.{name}"


def version(fn):
    return _VERSIONS.get(_key(fn), 0)


def _key(fn):
    try:
        hash(fn)
        return fn
    except TypeError:
        return id(fn)


def bump(fn):
    k = _key(fn)
    _VERSIONS[k] = _VERSIONS.get(k, 0) + 1
    EPOCH[0] += 1
    for forget in ON_CHANGE:
        forget()


# called whenever a rule changes: the run time registers the clearing of its pair caches
# (rules/ does not import the run time for it; the run time imports the rules)
ON_CHANGE = []


def set_user_rule(fn, rule):
    USER_RULES[fn] = rule
    bump(fn)


def lookup_user(fn):
    try:
        return USER_RULES.get(fn)
    except TypeError:
        return None


_IDENT = re.compile(r"(?<![\w.])([A-Za-z_]\w*)")


def fill(template, mapping):
    """Substitute identifiers of a template (not attribute names) from mapping."""
    return _IDENT.sub(lambda m: mapping.get(m.group(1), m.group(1)), template)


__all__ = [
    "EPOCH",
    "PRIMITIVES",
    "BOUND_RULE_CLASSES",
    "NONDIFF",
    "STOPS_GRADIENT",
    "USER_RULES",
    "SPECIAL",
    "Primitive",
    "UserRule",
    "primitive",
    "lookup_primitive",
    "nondifferentiable_builtin",
    "special",
    "array_method",
    "version",
    "bump",
    "fill",
    "ON_CHANGE",
    "weakref",
]


# The built-in rules register themselves into the tables above when imported; the run
# time registers the rules of its own helpers (runtime/rules_calls.py, rules_helpers.py).
from . import builtins as _builtins  # noqa: E402,F401
from . import math as _math  # noqa: E402,F401
# the run time next: its namespace (_rt) imports the NumPy rules' helpers, which import
# its projection (unbroadcast); importing rules/numpy/ registers the NumPy rules
from .. import runtime as _runtime  # noqa: E402,F401
from . import numpy as _numpy  # noqa: E402,F401
from . import operators as _operators  # noqa: E402,F401
from . import sequences as _sequences  # noqa: E402,F401
from . import folds as _folds  # noqa: E402,F401  (functools.reduce)
from .numpy import iteration as _np_iteration  # noqa: E402,F401  (uses sequences' recorder)
from . import copies as _copies  # noqa: E402,F401

try:
    import scipy.special as _scipy_special  # noqa: F401  (as: `scipy` here is rules/scipy.py)
except ImportError:  # scipy is optional
    pass
else:
    from . import scipy as _scipy  # noqa: E402,F401
    from . import scipy_linalg as _scipy_linalg  # noqa: E402,F401
    from . import scipy_signal as _scipy_signal  # noqa: E402,F401
    from . import scipy_stats as _scipy_stats  # noqa: E402,F401
