"""Activity and kind analysis on normalised code.

*Activity*: a name is active when its value may depend on a differentiated input (the
arguments and captured variables). Inactive values are neither saved for the backward
pass nor given adjoint code.

*Kinds*: what the transformer knows statically about a value, from the argument types
the generated code is specialised on. ``REAL`` (int/float), ``COMPLEX``, ``ARRAY``
(ndarray), ``OTHER`` (anything else), ``CONST`` (str/bool/None: no tangent space).
Numbers and arrays get inline templates; ``OTHER`` goes through run-time dispatch.

Before (x: float, n: int)::

    s = 0.0
    for i in range(n):
        s = s + x * i
    label = f"{s:.2f}"

After: active = {x, s}; kinds: x REAL, s REAL, i REAL, label CONST.
"""
import gast

REAL, COMPLEX, ARRAY, OTHER, CONST = "real", "complex", "array", "other", "const"
_ORDER = {REAL: 0, COMPLEX: 1, ARRAY: 2, OTHER: 3}
SCALAR = (REAL, COMPLEX)
NUMERIC = (REAL, COMPLEX, ARRAY)


def join(a, b):
    if a is None:
        return b
    if b is None or a == b:
        return a
    if a == CONST or b == CONST:
        return OTHER
    return a if _ORDER[a] >= _ORDER[b] else b


def stmt_targets(s):
    """Names a normalised statement binds."""
    if isinstance(s, gast.Assign):
        return [t.id for t in s.targets if isinstance(t, gast.Name)]
    if isinstance(s, gast.FunctionDef):
        return [s.name]
    if isinstance(s, gast.For):
        return [s.target.id]
    if isinstance(s, (gast.Import, gast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in s.names]
    return []


def walk_block(block):
    """Every statement of a normalised block, depth first, loops included."""
    for s in block:
        yield s
        if isinstance(s, gast.If):
            yield from walk_block(s.body)
            yield from walk_block(s.orelse)
        elif isinstance(s, (gast.For, gast.While)):
            yield from walk_block(s.body)


def reads(node):
    out = set()
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            out.add(n.id)
    return out


def free_names_of_function(node):
    """Names a lambda/def reads from its enclosing scope (not its own params/locals)."""
    params = set()
    a = node.args
    for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
        if p is not None:
            params.add(p.id)
    body = node.body if isinstance(node.body, list) else [node.body]
    assigned = set(params)
    loaded = set()
    for s in body:
        for n in gast.walk(s):
            if isinstance(n, gast.Name):
                if isinstance(n.ctx, gast.Load):
                    loaded.add(n.id)
                else:
                    assigned.add(n.id)
    defaults = set()
    for d in a.defaults + [d for d in a.kw_defaults if d is not None]:
        defaults |= {n.id for n in gast.walk(d) if isinstance(n, gast.Name)}
    return (loaded - assigned) | defaults
