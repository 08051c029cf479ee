"""Assemble, compile and cache generated code.

One generated module per (function, argument kinds): a factory whose parameters are
the helper modules and the function's captured variables, returning the pair. The
source is registered with ``linecache`` under a readable name, so tracebacks,
``inspect`` and pdb show generated lines; and the transformer can read it again, which
is how generated code is differentiated (nested gradients).

The cache is keyed weakly on the function's code object, then on the argument kinds;
each entry records the rule version of every function it inlined or resolved, so a
new rule invalidates exactly the entries that depended on it. ``refresh()`` clears it.
"""
import builtins
import itertools
import linecache
import math
import cmath
import operator
import types
import weakref

import gast
import numpy as np

from . import rules as R
from .errors import AdjointError, UnsupportedSyntaxError
from .naming import Namer
from .passes import anf, check, sparse
from .passes.activity import OTHER
from .passes.reverse import FunctionInfo, Generator

_CACHE = weakref.WeakKeyDictionary()  # code object -> {key: Entry}
ORIGINS = {}  # generated filename -> {generated line: (user file, user line)}
_COUNTER = itertools.count()


class Entry:
    __slots__ = ("code", "source", "filename", "deps", "helpers", "pair_name", "epoch", "callees")

    def __init__(self, code, source, filename, deps, helpers, pair_name):
        self.code = code
        self.source = source
        self.filename = filename
        self.deps = deps
        self.helpers = helpers
        self.pair_name = pair_name
        self.epoch = R.EPOCH[0]
        self.callees = []

    def valid(self):
        if self.epoch == R.EPOCH[0]:
            return True
        for obj, ver in self.deps.items():
            if R.version(obj) != ver or R.lookup_user(obj) is not None:
                return False
        self.epoch = R.EPOCH[0]
        return True


def refresh():
    """Forget every generated function (always allowed, never needed after a new rule)."""
    _CACHE.clear()
    R.EPOCH[0] += 1
    from .runtime import forget_pairs

    forget_pairs()


def _helper_values():
    from . import runtime

    return {"_rt": runtime, "math": math, "cmath": cmath, "np": np, "operator": operator}


def _static_names(fn, names):
    """The names among `names` that fn reads from outside (a captured variable, a global,
    a builtin) and that hold a module or a class now: `np.linalg.norm(x)` names a callee,
    where `A.T.sum()` (A a parameter) calls a method of a value."""
    code = fn.__code__
    local = set(code.co_varnames) | set(code.co_cellvars)
    cells = {}
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            cells[name] = cell.cell_contents
        except ValueError:
            pass
    g = fn.__globals__
    bi = g.get("__builtins__", builtins)
    bi = bi if isinstance(bi, dict) else vars(bi)
    out = set()
    for name in names:
        if name in local:
            continue
        if name in cells:
            value = cells[name]
        elif name in code.co_freevars:
            continue
        elif name in g:
            value = g[name]
        else:
            value = bi.get(name)
        if isinstance(value, (types.ModuleType, type)):
            out.add(name)
    return out


def generate(fn, key):
    """Generate the source of fn's pair for argument kinds key. Returns an Entry."""
    code = fn.__code__
    node, filename, lines = _source_node(fn)
    from .source import fresh_copy

    node = fresh_copy(node)  # normalisation rewrites the tree: never the cached one
    if isinstance(node, gast.Lambda):
        node = gast.FunctionDef(
            name="<lambda>",
            args=node.args,
            body=[gast.Return(value=node.body)],
            decorator_list=[],
            returns=None,
            type_comment=None,
            type_params=[],
        )
        node.body[0].lineno = node.body[0].value.lineno = getattr(node.args, "lineno", code.co_firstlineno)
        node.body[0].end_lineno = node.body[0].lineno
    check.check(node, filename)
    user_names = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    taken = user_names | set(code.co_freevars) | set(_helper_values())
    namer = Namer(taken)
    try:
        anf.normalize(node, namer, filename, lines, static_names=_static_names(fn, user_names))
        info = FunctionInfo(
            code.co_name, node, filename, fn.__globals__, code.co_freevars, code.co_cellvars
        )
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if isinstance(value, types.ModuleType):
                info.static_free[name] = value
        free_kinds = key[len(key) - len(code.co_freevars):] if code.co_freevars else ()
        arg_kinds = key[: len(key) - len(code.co_freevars)] if code.co_freevars else key
        gen = Generator(
            node, info, arg_kinds, free_kinds, lines, taken=namer.taken,
            user_names=user_names | set(code.co_varnames),
        )
        pair_src = sparse.sparse_scatters(gen.generate())
    except AdjointError:
        raise
    except RecursionError:
        raise
    except Exception as exc:  # a bug of ours: say where, never a bare internal traceback
        raise UnsupportedSyntaxError(
            f"a construct the transformer failed on ({type(exc).__name__}: {exc})",
            filename,
            code.co_firstlineno,
            hint="please report this with the function's source; meanwhile give the function "
            "a rule with @adjoint_s2s.adjoint",
        ) from exc
    helpers = sorted(h for h in gen.helpers | {"_rt"} if h not in code.co_freevars)
    params = helpers + list(code.co_freevars)
    pair_name = pair_src.split("(", 1)[0][4:]
    text = (
        f"# generated by adjoint_s2s from {code.co_name} ({filename}, line {code.co_firstlineno})\n"
        f"def make_{pair_name}({', '.join(params)}):\n"
        + "".join("    " + line + "\n" if line else "\n" for line in pair_src.splitlines())
        + f"    return {pair_name}\n"
    )
    gname = f"<adjoint_s2s: {code.co_qualname if hasattr(code, 'co_qualname') else code.co_name} #{next(_COUNTER)}>"
    try:
        module_code = compile(text, gname, "exec")
    except SyntaxError as exc:  # pragma: no cover - a bug of ours
        raise UnsupportedSyntaxError(
            f"generated code that does not compile ({exc.msg}, generated line {exc.lineno})",
            filename,
            code.co_firstlineno,
            hint="please report this with the function's source; meanwhile give the function "
            "a rule with @adjoint_s2s.adjoint",
        ) from exc
    linecache.cache[gname] = (len(text), None, text.splitlines(True), gname)
    ORIGINS[gname] = _origins(text, gen.raw_items, filename)
    ns = {"__builtins__": builtins}
    exec(module_code, ns)
    factory = ns[f"make_{pair_name}"]
    pair_code = next(
        c for c in factory.__code__.co_consts if isinstance(c, types.CodeType) and c.co_name == pair_name
    )
    helper_vals = _helper_values()
    helper_cells = {h: types.CellType(helper_vals[h]) for h in helpers}
    entry = Entry(pair_code, text, gname, dict(gen.deps), helper_cells, pair_name)
    entry.callees = [d for d in gen.deps if isinstance(d, types.FunctionType)]
    return entry


def _origins(text, raw_items, user_file):
    """Where each nested def/lambda of the generated module came from in the user's file."""
    lines = text.splitlines()
    out = {}
    pos = 0
    for raw in raw_items:
        if raw.origin is None or not raw.lines:
            continue
        first = raw.lines[0].strip()
        for i in range(pos, len(lines)):
            if lines[i].strip() == first:
                out[i + 1] = (user_file, raw.origin)
                pos = i + 1
                break
    return out


def _source_node(fn):
    from .source import function_node

    return function_node(fn)


def entry_for(fn, key):
    code = fn.__code__
    variants = _CACHE.get(code)
    if variants is None:
        variants = {}
        _CACHE[code] = variants
    entry = variants.get(key)
    if entry is None or not entry.valid():
        entry = generate(fn, key)
        variants[key] = entry
    return entry


def bind(fn, entry):
    """The pair function of entry, sharing fn's globals, defaults and closure cells."""
    code = fn.__code__
    cells = []
    own = dict(zip(code.co_freevars, fn.__closure__ or ()))
    for name in entry.code.co_freevars:
        cell = own.get(name)
        if cell is None:
            cell = entry.helpers.get(name)
        if cell is None:  # pragma: no cover
            cell = types.CellType()
        cells.append(cell)
    pair = types.FunctionType(entry.code, fn.__globals__, entry.pair_name, fn.__defaults__, tuple(cells))
    if fn.__kwdefaults__:
        pair.__kwdefaults__ = dict(fn.__kwdefaults__)
    return pair


def raw_pair_for(fn, key):
    """The generated pair bound to fn; key holds the kinds of the arguments, then of the
    captured variables."""
    return bind(fn, entry_for(fn, key))


def pair_for(fn, key, nargs):
    """A pair callable with exactly nargs positional arguments (gradients trimmed)."""
    pair = raw_pair_for(fn, key)
    code = fn.__code__
    npos = code.co_argcount
    has_var = bool(code.co_flags & 0x04)
    has_kw = bool(code.co_kwonlyargcount) or bool(code.co_flags & 0x08)
    if nargs == npos and not has_var and not has_kw:
        return pair
    from .adapters import trimmed

    defaulted = code.co_varnames[nargs:npos] if nargs < npos else ()
    return trimmed(pair, nargs, has_kw, defaulted)


def source_of(fn, key=None):
    """The generated source for fn (for show-adjoint)."""
    from .runtime import _cell_kind

    code = fn.__code__
    if key is None:
        key = (OTHER,) * code.co_argcount
    key = tuple(key) + tuple(_cell_kind(c) for c in fn.__closure__ or ())
    return entry_for(fn, key)
