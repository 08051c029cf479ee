"""NumPy's whole-array reductions in a fused function's forward lines, without their
Python layers.

``np.sum(z, axis=1, keepdims=True)`` on an ndarray is ``np.add.reduce(z, 1, None, None,
keepdims=True)`` behind NumPy's dispatcher and ``_wrapreduction``, which cost a few
microseconds a call: as much as the reduction of a small array. In the forward lines of
a fused function (fuse.py), a call of ``np.sum``, ``np.max``, ``np.min`` or ``np.mean``
with an array, maybe an axis (by position or by name) and maybe ``keepdims=`` calls
``_rt.np_sum`` & co instead (rules/numpy/reductions.py, extremum.py): the same ufunc
reduce for an exact ndarray (``np.mean``: for a whole float64 array, its sum divided by
its size as NumPy divides it; ``np.max``/``np.min`` along the last axis of many short
float rows: each row's extremum read where argmax/argmin finds it, the reduce's very
array when no extremum is NaN or zero), the NumPy function itself for anything else.
Same values, same types.

Before and after (``show-adjoint --fused``)::

    max_logits = np.max(logits, axis=1, keepdims=True)
    max_logits = _rt.np_max(logits, axis=1, keepdims=True)

Only where ``np`` is the factory's parameter holding NumPy (fuse's caller checks the
module, this the names) and the pair binds no ``np`` of its own; never inside a nested
function or lambda. The pair itself, and so every nested gradient, still calls NumPy.
"""
import ast

FAST = {"sum": "np_sum", "max": "np_max", "min": "np_min", "mean": "np_mean"}
_KEYWORDS = frozenset(("axis", "keepdims"))
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)


def applies(factory, pair_code):
    """Whether the factory's parameters name NumPy ``np`` and the run time ``_rt`` (the
    caller checked that ``np`` holds NumPy), and the pair (its code) binds no ``np``."""
    return {"np", "_rt"} <= {a.arg for a in factory.args.args} and (
        "np" not in pair_code.co_varnames + pair_code.co_cellvars)


def fits(call):
    """Whether call is ``np.<reduction>(a[, axis][, axis=...][, keepdims=...])``."""
    f = call.func
    if not (type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == "np"
            and f.attr in FAST and f.lineno == f.end_lineno):
        return False
    args, names = call.args, [k.arg for k in call.keywords]
    if not 1 <= len(args) <= 2 or any(type(a) is ast.Starred for a in args):
        return False
    if None in names or len(set(names)) != len(names) or not set(names) <= _KEYWORDS:
        return False  # (**kwargs, or another keyword: NumPy's own call)
    return not (len(args) == 2 and "axis" in names)


def rewrite(lines, stmts, char_col):
    """Edit lines (a list of the module's lines) so that each fitting call in stmts, the
    forward statements, calls ``_rt.<FAST>``; char_col(line, byte offset) -> index."""
    edits = {}  # line number -> [(start, end, new text)]
    stack = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        if type(node) is ast.Call and fits(node):
            f = node.func
            line = lines[f.lineno - 1]
            start, end = char_col(line, f.col_offset), char_col(line, f.end_col_offset)
            edits.setdefault(f.lineno, []).append((start, end, "_rt." + FAST[f.attr]))
        stack.extend(ast.iter_child_nodes(node))
    for number, spans in edits.items():
        line = lines[number - 1]
        for start, end, new in sorted(spans, reverse=True):
            line = line[:start] + new + line[end:]
        lines[number - 1] = line
    return bool(edits)
