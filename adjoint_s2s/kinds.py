"""The kinds of run-time values, and the one key of a function's generated code.

A *kind* is what the transformer knows statically about a value, from the argument
types the generated code is specialised on: ``REAL`` (int/float), ``COMPLEX``,
``ARRAY`` (ndarray), ``OTHER`` (anything else), ``CONST`` (str/bool/None: no tangent
space). This module imports nothing of adjoint_s2s: the passes, the run time and the
cache all read kinds from here.

    >>> kinds_of((1.0, 2j, "s", [1]))
    ('real', 'complex', 'const', 'other')
"""
import numpy as np

REAL, COMPLEX, ARRAY, OTHER, CONST = "real", "complex", "array", "other", "const"

KIND = {
    float: REAL,
    int: REAL,
    complex: COMPLEX,
    np.ndarray: ARRAY,
    bool: CONST,
    str: CONST,
    type(None): CONST,
    np.float64: REAL,
    bytes: CONST,
}


MODULE_ATTR = "module attribute"  # a cache guard's item type: a module's or class's attribute
FUNCTION = "function"  # a guard's item type: a global naming a function, in the same state
LIBRARY = "library attributes"  # a guard's item type: the functions a library module held
MISSING = object()  # what a guard reads of a name that is not there


def static_attr(base, attr):
    """base's attribute as stored (a module's, or a class's along its MRO: a classmethod
    itself, not a new bound method per read), or None; what the cache checks of
    ``helpers.act`` or ``Acts.act`` (guards._attribute_guard)."""
    if not isinstance(base, type):
        return getattr(base, "__dict__", {}).get(attr)
    for klass in base.__mro__:
        d = klass.__dict__
        if attr in d:
            return d[attr]
    return None


def kinds_of(args):
    """The kind of each value in args."""
    return tuple([KIND.get(type(a), OTHER) for a in args])


def cell_kind(cell):
    """The kind of a captured variable (OTHER while the cell is still empty)."""
    try:
        return KIND.get(type(cell.cell_contents), OTHER)
    except ValueError:
        return OTHER


def cell_kinds(f):
    """The kinds of f's captured variables, or None when it captures nothing."""
    return tuple([cell_kind(c) for c in f.__closure__]) if f.__closure__ else None


def cache_key(fn, arg_kinds, keywords=False):
    """The one key of fn's generated code: the kinds of the positional arguments passed,
    then of the positional parameters they leave out (their defaults' kinds; OTHER when
    keywords may fill them), then of the captured variables."""
    key = tuple(arg_kinds)
    npos = fn.__code__.co_argcount
    n = len(key)
    if n < npos:
        if keywords:
            key += (OTHER,) * (npos - n)
        else:
            defaults = fn.__defaults__
            if defaults:
                first = npos - len(defaults)
                key += tuple(
                    KIND.get(type(defaults[i - first]), OTHER) for i in range(max(n, first), npos)
                )
    if fn.__closure__:
        key += tuple([cell_kind(c) for c in fn.__closure__])
    return key
