"""Assemble, compile and cache generated code.

One generated module per (function, argument kinds): a factory whose parameters are
the helper modules and the function's captured variables, returning the pair. The
source is registered with ``linecache`` under a readable name, so tracebacks,
``inspect`` and pdb show generated lines; and the transformer can read it again, which
is how generated code is differentiated (nested gradients).

The cache is keyed on the identity of the function's code object (held weakly: equal
code objects from different files, or from one file run twice, compare equal in Python
and must never share an entry), then on ``cache_key`` (the kinds of the arguments, of
the defaults and of the captured variables). An entry also records what it assumed of
the function's globals (the kind of a global number or array, the identity of a callee
it resolved), so a function with the same code but other globals gets its own entry.
Each entry records the rule version of every function it inlined or resolved, so a new
rule invalidates exactly the entries that depended on it.

Memory is bounded: an entry holds no strong reference to the user's function, globals
or callees; it goes when the code object goes; the generated source stays in
``linecache`` exactly as long as some generated code object of it is alive (tracebacks
and pdb of live pullbacks keep working). ``refresh()`` drops every entry and the parsed
source caches.
"""
import builtins
import gc
import itertools
import linecache
import math
import cmath
import operator
import sys
import types
import weakref

import gast
import numpy as np

from . import rules as R
from . import adapters, runtime, source, transform
from .errors import AdjointError, UnsupportedSyntaxError, short_name, show_user_names
from .guards import (_ARRAY_ITEMS, _F8_VECTOR, _REAL_ITEMS, _REAL_RECORDS, _REAL_ROWS, MISSING as _MISSING,
                     _attribute_guard, _callee_guard, _data_guard, _fact, _identity_guard, _library_guard,
                     _same_fact, _weak)
from .kinds import ARRAY, FIELDS, OTHER, RECORDS, ROWS, VECTOR, cache_key
from .passes import activity, check, param_fields, whole
from .passes.linetokens import _TOKENS as _tokens
from .passes.reprint import _print_again, _printed_parts
from .templates import _parse as _parse_template

_MEMOS = (_tokens, _print_again, _printed_parts, _parse_template)
# the token memo grows as one transform needs (tens of thousands of lines for a long
# function): between transforms it keeps at most this many
_TOKENS_KEPT = 8192

ORIGINS = source.ORIGINS  # generated filename -> {generated line: (user file, user line)}
_COUNTER = itertools.count()


class _CodeTable:
    """code object -> value, by identity, holding the code objects weakly.

    (``weakref.WeakKeyDictionary`` compares keys with ``==``, and equal code from two
    files compares equal.)"""

    def __init__(self):
        self._items = {}  # id(code) -> (weak reference to code, value)

    def _drop(self, ident, ref):
        item = self._items.get(ident)
        if item is not None and item[0] is ref:
            del self._items[ident]

    def get(self, code, default=None):
        item = self._items.get(id(code))
        if item is None or item[0]() is not code:
            return default
        return item[1]

    def __setitem__(self, code, value):
        ident = id(code)
        ref = weakref.ref(code, lambda r, i=ident: self._drop(i, r))
        self._items[ident] = (ref, value)

    def __contains__(self, code):
        return self.get(code, _MISSING) is not _MISSING

    def __len__(self):
        return len(self._items)

    def values(self):
        return [item[1] for item in list(self._items.values())]

    def clear(self):
        self._items.clear()


_CACHE = _CodeTable()  # code object -> {cache_key: [Entry, one per distinct globals]}


def data_guard_of(fn, key):
    """The data guard of fn's generated code for key (see _data_guard)."""
    return entry_for(fn, key).guard


class _RecordingGlobals:
    """The function's globals as the transformer reads them, remembering each name read."""

    def __init__(self, g):
        self._g = g
        self.read = {}

    def _note(self, name):
        if name not in self.read:
            self.read[name] = _fact(self._g.get(name, _MISSING))

    def assume_items(self, name, kind):
        """The code assumes that global list (or tuple) holds number arrays only (kind
        ARRAY), ints and floats only (REAL), rows of those (ROWS) or dicts of them by
        string keys (RECORDS), or it is a 1-D float64 array (VECTOR)."""
        facts = {ARRAY: _ARRAY_ITEMS, ROWS: _REAL_ROWS, VECTOR: _F8_VECTOR, RECORDS: _REAL_RECORDS}
        fact = facts.get(kind, _REAL_ITEMS)
        self.read[name] = (fact, type(self._g[name]))

    def __contains__(self, name):
        self._note(name)
        return name in self._g

    def __getitem__(self, name):
        self._note(name)
        return self._g[name]

    def get(self, name, default=None):
        if name not in self.read:  # (_note, inline: the passes ask once per callee read)
            self.read[name] = _fact(self._g.get(name, _MISSING))
        return self._g.get(name, default)


class Entry:
    __slots__ = (
        "code", "source", "filename", "deps", "helpers", "pair_name", "epoch", "_callees",
        "assumed", "guard", "result", "direct", "grads_num", "fused", "home", "identity", "module",
        "__weakref__",
    )

    def __init__(self, code, source, filename, deps, helpers, pair_name):
        self.code = code
        self.source = source
        self.filename = filename
        # (weak reference, rule version) of every function inlined or resolved
        self.deps = [(_weak(obj), ver) for obj, ver in deps.items()]
        self.helpers = helpers
        self.pair_name = pair_name
        self.epoch = R.EPOCH[0]
        self._callees = []
        self.assumed = {}  # global (or captured module) name -> _fact of its value
        self.guard = ()  # (name, type, dtype kind): the data globals, checked at every call
        self.home = None  # id of the globals the code resolved its names in
        self.module = None  # the name of the module whose globals those are
        self.identity = ()  # the part of guard that is _identity_guard's
        self.result = None  # (kind, item kinds or None) of what the function returns
        self.direct = {}  # name in the code -> Entry of a callee called directly (its pair)
        self.grads_num = ()  # per positional parameter: is its gradient surely a real number
        self.fused = None  # (code or None, its source or why there is none): fuse.fused_of

    @property
    def callees(self):
        return [f for f in (r() for r in self._callees) if f is not None]

    def valid(self):
        if self.epoch == R.EPOCH[0]:
            return True
        for ref, ver in self.deps:
            obj = ref()
            if obj is None or R.version(obj) != ver or R.lookup_user(obj) is not None:
                return False
        if not all(e.valid() for e in self.direct.values()):
            return False
        self.epoch = R.EPOCH[0]
        return True

    def fits(self, fn):
        """Whether fn's globals (and captured modules) are what this code assumed."""
        g = fn.__globals__
        cells = None
        for name, fact in self.assumed.items():
            if type(name) is tuple:  # ("cell", name): a captured module
                if cells is None:
                    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
                try:
                    value = cells[name[1]].cell_contents
                except (KeyError, ValueError):
                    value = _MISSING
            else:
                value = g.get(name, _MISSING)
            if not _same_fact(fact, value):
                return False
        # and what the guard checks at a call: a callee's callees and their state, the
        # attributes of modules (guards._callee_guard, _attribute_guard, _library_guard)
        return runtime.globals_fit(g, self.guard)


def refresh():
    """Forget every generated function and the parsed sources (always allowed, never
    needed after a new rule). Generated code still running keeps its lines in linecache."""
    _CACHE.clear()
    R.EPOCH[0] += 1

    runtime._LIBRARY_FILES.clear()
    runtime.forget_pairs()
    source.forget_sources(keep_parsed=True)
    gc_generated()
    for memo in _MEMOS:  # bounded memo tables of the passes
        memo.cache_clear()


# ----- the lifetime of generated source in linecache ------------------------------------

_LIVE_CODES = {}  # generated filename -> how many of its code objects are alive


def _register_source(gname, text, code):
    """Put the generated text in linecache for as long as a code object of it is alive."""
    linecache.cache[gname] = (len(text), None, text.splitlines(True), gname)
    codes = []
    stack = [code]
    while stack:
        c = stack.pop()
        codes.append(c)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    _LIVE_CODES[gname] = len(codes)
    runtime.user_classes.note_generated(gname, codes)
    for c in codes:
        weakref.finalize(c, _code_gone, gname)


def _code_gone(gname):
    n = _LIVE_CODES.get(gname, 0) - 1
    if n > 0:
        _LIVE_CODES[gname] = n
        return
    _LIVE_CODES.pop(gname, None)
    ORIGINS.pop(gname, None)
    runtime.user_classes.forget_generated(gname)
    cached = linecache.cache.get(gname)
    if cached is not None and cached[1] is None:
        del linecache.cache[gname]


def gc_generated():
    """Drop the linecache lines of generated code no longer alive (for refresh())."""
    for gname in [n for n in ORIGINS if n not in _LIVE_CODES]:
        ORIGINS.pop(gname, None)


def _helper_values():
    return {"_rt": runtime, "math": math, "cmath": cmath, "np": np, "operator": operator}


_IN_PROGRESS = set()  # the code objects being transformed now (callee kinds wait on them)


def in_progress(code):
    return code in _IN_PROGRESS


def runtime_code(code):
    """Whether code is adjoint_s2s's own (its run time differentiated again)."""
    return runtime._not_users(code.co_filename)


def generate(fn, key):
    """Generate the source of fn's pair for argument kinds key. Returns an Entry.

    The cyclic garbage collector is paused meanwhile: the transform allocates tens of
    thousands of short-lived nodes, strings and sets (freed by reference counting), and
    each collection they trigger walks every object the process holds (NumPy, SciPy,
    the user's data), several times per transform. Its state is restored on the way out,
    even on an error; a transform nested in another leaves it to the outer one."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    _IN_PROGRESS.add(fn.__code__)
    try:
        return _generate(fn, key)
    finally:
        _IN_PROGRESS.discard(fn.__code__)
        if not _IN_PROGRESS and len(_tokens) > _TOKENS_KEPT:  # (a long function's lines)
            _tokens.cache_clear()
        if paused:
            gc.enable()


def _generate(fn, key):
    code = fn.__code__
    # normalisation rewrites the tree: a copy of its own
    node, filename, lines, names, noted = source.function_copy_noting(fn, check.NOTED)
    node = _as_def(node, code)
    seen_globals = _RecordingGlobals(fn.__globals__)
    try:
        fuse = True
        while True:  # (a guess undone: from a fresh copy, without it)
            try:
                pair_src, gen, info = transform.pair_source(
                    fn, node, filename, lines, key, seen_globals, set(_helper_values()), (names, noted), fuse
                )
                break
            except param_fields.Undo:  # a record's fields read at the entry: not here after all
                key = transform.without_fields(key)
            except whole.Undo:  # a name taken for a number is not one (passes/whole.py)
                fuse = False
            node, filename, lines, names, noted = source.function_copy_noting(fn, check.NOTED)
            node = _as_def(node, code)
            seen_globals = _RecordingGlobals(fn.__globals__)
    except AdjointError as exc:
        show_user_names(exc, getattr(node, "shown", None))  # (`p[1]`, not the temporary `p_i`)
        _blame_the_users_call(exc, fn)
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
    direct = dict(gen.direct)  # callees' pairs, called by name: bound with this code
    helpers = sorted(h for h in gen.helpers | {"_rt"} if h not in code.co_freevars and h not in direct)
    helpers += sorted(direct)
    params = helpers + list(code.co_freevars)
    pair_name = pair_src.split("(", 1)[0][4:]
    text = (
        f"# generated by adjoint_s2s from {code.co_name} ({filename}, line {code.co_firstlineno})\n"
        f"def make_{pair_name}({', '.join(params)}):\n"
        + "".join("    " + line + "\n" if line else "\n" for line in pair_src.splitlines())
        + f"    return {pair_name}\n"
    )
    gname = f"<adjoint_s2s: {code.co_qualname if hasattr(code, 'co_qualname') else code.co_name} #{next(_COUNTER)}>"
    pair_code = _compile(text, gname, pair_name, filename, code)
    _register_source(gname, text, pair_code)
    runtime.user_classes.note_origin(code, gname)
    ORIGINS[gname] = _origins(text, gen.raw_items, filename)
    helper_vals = _helper_values()
    helper_cells = {h: types.CellType(helper_vals[h]) for h in helpers if h not in direct}
    entry = Entry(pair_code, text, gname, dict(gen.deps), helper_cells, pair_name)
    entry.direct = direct
    entry.grads_num = getattr(gen, "grads_num", ())
    entry.result = activity.result_kinds(gen.facts)
    entry._callees = [weakref.ref(d) for d in gen.deps if isinstance(d, types.FunctionType)]
    entry.assumed = dict(seen_globals.read)
    entry.home = id(fn.__globals__)
    entry.module = getattr(fn, "__module__", None)
    callees = _callee_guard(fn, gen.facts)
    entry.identity = _identity_guard(entry.assumed, callees)
    entry.guard = (_data_guard(entry.assumed) + callees + entry.identity
                   + _attribute_guard(info.module_attrs)
                   + _library_guard(info.module_attrs, entry.assumed, fn.__globals__))
    for name in info.static_free:
        entry.assumed[("cell", name)] = _weak(info.static_free[name])
    return entry


def _as_def(node, code):
    """A lambda's tree as the tree of ``def <lambda>(...): return body``."""
    if not isinstance(node, gast.Lambda):
        return node
    lam = node
    node = gast.FunctionDef(
        name="<lambda>",
        args=node.args,
        body=[gast.Return(value=node.body)],
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    # the line of the lambda in the user's file (a lambda made by generated code, nested
    # in another one, has its first line in the generated text)
    line = getattr(lam, "lineno", None) or code.co_firstlineno
    node.body[0].lineno = node.body[0].value.lineno = line
    node.body[0].end_lineno = node.body[0].lineno
    return node


def _compile(text, gname, pair_name, filename, code):
    """The code object of the pair function defined in the generated module text."""
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
    ns = {"__builtins__": builtins}
    exec(module_code, ns)
    factory = ns[f"make_{pair_name}"]
    return next(
        c for c in factory.__code__.co_consts if isinstance(c, types.CodeType) and c.co_name == pair_name
    )


def _blame_the_users_call(exc, fn):
    """An error met while transforming code that is not the user's (a library function
    with no rule, or adjoint_s2s's own helper differentiated again): say which of the
    user's functions led there, and point there, not into the library."""

    code = fn.__code__
    if not runtime._not_users(code.co_filename) or getattr(exc, "_blamed", False):
        return
    mapped = ORIGINS.get(code.co_filename, {}).get(code.co_firstlineno)
    if mapped is not None and not runtime._not_users(mapped[0]):
        return  # a def inside differentiated code: the user's own, read from their file
    site = runtime.user_call_site(callee=True)
    if site is None:
        return

    name, filename, line, called = site
    callee = short_name(fn)
    named = None
    if called is not fn and getattr(called, "__code__", None) is not code:
        named = runtime.sites.callee_name(called)
    through = f"its call of {named} led adjoint_s2s to " if named else ""
    lead = (
        f"while differentiating {name} ({filename}, line {line}), "
        f"{through or 'adjoint_s2s reached '}"
        f"{callee} ({code.co_filename}, line {code.co_firstlineno}), which is not your code "
        f"and has no rule, and could not transform it: "
    )
    if named:
        callee = named  # the rule that helps is the one for what the user called
    way = (
        f". Give {callee} a rule with @adjoint_s2s.adjoint({callee}), or mark it with "
        f"adjoint_s2s.non_differentiable({callee}) if it carries no gradient"
    )
    if not named and not runtime.sites.is_library_file(code.co_filename) and not code.co_filename.startswith("<"):
        # adjoint_s2s's own helper, met at a higher order than it is differentiable to
        own = (f"while differentiating {name} ({filename}, line {line}): this order of derivative "
               f"needs adjoint_s2s's own {callee} differentiated again, which it does not support. "
               f"Take one derivative fewer, or give {name} (or the function of yours it calls "
               f"there) a rule with @adjoint_s2s.adjoint, whose pullback is differentiated instead")
        lead, way = own, ""  # (the helper's own construct and way out mean nothing to the user)
    exc._blamed = True
    if isinstance(exc, UnsupportedSyntaxError):
        exc.msg = lead + (exc.msg if way else "") + way
        exc.args = (exc.msg,)
        exc.filename, exc.lineno, exc.offset = filename, line, None
        exc.text = None
    else:
        exc.args = (lead + (str(exc) if way else "") + way,) + exc.args[1:]


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


def entry_for(fn, key):
    """The generated code of fn for cache_key key: shared by every function with this very
    code object and globals that give the same facts (closures made again and again)."""
    code = fn.__code__
    variants = _CACHE.get(code)
    if variants is None:
        variants = {}
        _CACHE[code] = variants
    entries = variants.get(key)
    if entries is None:
        entries = variants[key] = []
    for i, entry in enumerate(entries):
        if entry.fits(fn):
            if entry.valid():
                return entry
            del entries[i]
            break
    entry = generate(fn, key)
    entries.append(entry)
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
        if cell is None and name in entry.direct:
            cell = types.CellType(_bind_direct(entry.direct[name], fn.__globals__))
        if cell is None:  # pragma: no cover
            cell = types.CellType()
        cells.append(cell)
    pair = types.FunctionType(entry.code, fn.__globals__, entry.pair_name, fn.__defaults__, tuple(cells))
    if fn.__kwdefaults__:
        pair.__kwdefaults__ = dict(fn.__kwdefaults__)
    return pair


def _bind_direct(entry, globals_):
    """The pair of a callee called directly (a global function of these globals that
    captures nothing, called with all its positional arguments: see
    Queries.callee_result), bound to the globals it shares with its caller, or to its
    own module's (a callee of another module: passes/foreign.py)."""
    if entry.home != id(globals_):
        home = sys.modules.get(entry.module or "")
        if home is not None and id(home.__dict__) == entry.home:
            globals_ = home.__dict__
    cells = []
    for name in entry.code.co_freevars:
        cell = entry.helpers.get(name)
        if cell is None:
            cell = types.CellType(_bind_direct(entry.direct[name], globals_))
        cells.append(cell)
    return types.FunctionType(entry.code, globals_, entry.pair_name, None, tuple(cells))


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

    defaulted = code.co_varnames[nargs:npos] if nargs < npos else ()
    return adapters.trimmed(pair, nargs, has_kw, defaulted)


def source_of(fn, key=None, fields=()):
    """The generated source for fn (for show-adjoint): the code a call with arguments of
    the kinds in key runs (and no keywords: parameters left out have their defaults'
    kinds); fields: kinds.field_kinds of the arguments, as a call with them would key
    the code."""
    if key is None:
        key = (OTHER,) * fn.__code__.co_argcount
    key = cache_key(fn, key)
    return entry_for(fn, key + ((FIELDS, fields),) if fields else key)

