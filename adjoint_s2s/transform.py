"""The transformer's pipeline: a parsed function becomes the source of its pair.

Each pass is one call, in order; each module's docstring says what the pass reads and
writes. ``emit.py`` compiles the text, registers it with linecache, caches and binds it.

    inline    small leaf helpers of the same module: their bodies in place of the calls;
              objects made here and read only by field: their fields as variables
    check     refuse what cannot be differentiated, before anything is rewritten
    fields    a record argument's fields read once, at the entry, where nothing rebinds them
    anf       normalise: one operation per statement, temporaries named for what they hold
    scalarize a dict display's item read by key: the name it was made from
    activity  kinds, activity and liveness (read-only from here on)
    reverse   forward code and pullback blocks, saves and restores still markers
    tape      which saved values the pullback reads, kept in fresh names or on the tape
    cleanup   exact rewrites of the rendered text (copies, single uses, pure temporaries)
    projected an unbroadcast onto what its adjoint was projected onto: an identity test
    sparse    scatter adjoints kept sparse until something needs the whole array
    text      the pair's source: forward lines, the pullback and its default arguments
"""
import builtins
import math
import sys
import types

import gast

from . import rules as R, runtime, source
from .kinds import ARRAY, CONST, DICT_ITEMS, FIELDS, ITEMS, NONE, REAL, TUPLE_ITEMS, VECTOR, forwarding_chain, static_attr
from .naming import Namer, names_in
from .passes import (activity, anf, check, cleanup, codegen, inline, item_vars, lazy, none_params, param_fields,
                     projected, rebound_globals, reverse, scalarize, self_writes, sparse, tape, text_numbers, whole)
from .passes.reverse.generator import _DISPATCHED


def pair_source(fn, node, filename, lines, key, globals_, reserved, noted=None, fuse=True):
    """(source of fn's pair for argument kinds key, the reverse pass, the FunctionInfo).
    node is fn's parsed tree (rewritten in place); reserved: names generated code uses.
    noted: (the names in node, the classes of check.NOTED in it), as
    source.function_copy_noting gives them with the tree: what check, names_in and
    lazy.hand_out_generators would find, while inlining leaves the tree as it is.
    fuse: keep arithmetic on numbers whole (passes/whole.py; whole.Undo when a name it
    took for a number is not one: the caller transforms again with fuse False)."""
    inlined = inline.inline_calls(
        fn, node, filename, globals_, source.function_node, source.fresh_copy,
        lambda code: runtime._not_users(code.co_filename), lambda tree: check.check(tree, filename),
        lines, noted[0] if noted is not None else None,
    )
    as_noted = noted is not None and not (inlined.callees or inlined.local or inlined.objects)
    if not as_noted or noted[1] & check.REJECTED:
        check.check(node, filename)
        user_names = names_in(node)
    else:  # nothing check rejects (it would pass), and the names the copy met
        user_names = noted[0]
    lazy.check_kept_iterators(node.body, filename)
    if ((not as_noted or gast.GeneratorExp in noted[1])
            and lazy.hand_out_generators(node.body, lambda: _is_builtin(fn, globals_, "iter"))):
        user_names = user_names | {"iter"}
    self_writes.rewrite_self_writes(node, filename)
    arg_kinds, cell_kinds, fields = _split_key(fn, key)
    none = ()
    if NONE in arg_kinds:  # parameters left to None: their tests folded
        none = none_params.none_parameters(node, arg_kinds)
        arg_kinds = tuple([CONST if k == NONE else k for k in arg_kinds])
        none_params.fold_none_tests(node, none)
        none = none_params.dead_entry_values(node.body, none)
    made = item_vars.item_variables(node, user_names | set(fn.__code__.co_freevars) | reserved)
    if made:  # a local list or dict used item by item at constant places: one name per item
        user_names = user_names | set(made)
    read = {}
    if fields:  # records' fields read once, at the entry (passes/param_fields.py)
        taken = set(user_names) | set(fn.__code__.co_freevars) | reserved
        read = param_fields.read_fields_at_entry(node, fn, globals_, arg_kinds, cell_kinds, fields, taken)
        user_names = user_names | set(read)
    items = param_fields.known_items(node, fn, globals_, arg_kinds, cell_kinds, fields) if fields else {}
    namer = Namer(user_names | set(fn.__code__.co_freevars) | reserved)
    namer.shown.update(made)  # (`s[0]` in messages, not s_0)
    rebound = rebound_globals.rebound_names(fn, node, user_names)
    statics = static_values(fn, user_names)
    math_call = whole.math_calls({n for n, v in statics.items() if v is math})
    anf.normalize(node, namer, filename, lines, static_names=statics,
                  plain_enumerate="enumerate" in user_names and _is_builtin(fn, globals_, "enumerate"),
                  rebound=(rebound, rebound_globals.statement_calls_users(fn)),
                  short_circuits=[n for n in _SHORT_CIRCUITS if n in user_names and _is_builtin(fn, globals_, n)],
                  zip_lists=_zip_lists(fn, node, globals_, items, user_names),
                  dict_params=_unbound(node, {p for p, (_, tag) in items.items() if tag == DICT_ITEMS}),
                  numbers=_numbers(fn, node, arg_kinds, cell_kinds, fuse, math_call), math_call=math_call)
    scalarize.scalarize_items(node, user_names)
    rebound_globals.snapshot_rebound_globals(node, namer, rebound)
    info = function_info(fn, node, filename, globals_)
    info.own = (fn, key)  # (a call of fn for this key: its result's kind, activity.own_result)
    info.param_fields = {(p, attr): kind for p, attr, kind in read.values()}
    info.field_arrays = {name: f"{p}.{attr}" for name, (p, attr, kind) in read.items() if kind == ARRAY}
    info.param_items = items
    info.dead_params = set(none)
    extra = set(arg_kinds[len(info.positional):]) if info.vararg else ()
    if extra == {REAL}:  # `*xs` of numbers: a tuple of numbers
        info.param_items[info.vararg] = (REAL, TUPLE_ITEMS)
    info.param_vectors = {info.positional[i] for i, fs in fields if fs[0][0] == VECTOR and i < len(info.positional)}
    for rep in inlined.objects:  # the class's functions the code inlined: guarded
        for attr in tuple(rep.functions) + inline.CLASS_GUARDS:
            info.module_attrs[(id(rep.cls), attr)] = (rep.cls, attr, static_attr(rep.cls, attr))
    facts = activity.analyse(node, info, arg_kinds, cell_kinds, user_names | set(fn.__code__.co_varnames))
    whole.verify(facts, node.wholes)  # (whole.Undo: the names taken for numbers are not all numbers)
    text_numbers.check_text_numbers(node, facts, filename)
    check.check_scope_dicts(facts, filename)
    if inlined.callees:  # the caller's code rests on them: guarded (emit) and versioned
        facts.callee_globals = frozenset(facts.callee_globals) | frozenset(inlined.callees)
    rev = reverse.Generator(node, info, facts, taken=namer.taken)
    for name, f in inlined.callees.items():  # (and the wrappers a global forwards through)
        for g in [f, *forwarding_chain(fn.__globals__.get(name))[:-1]]:
            rev.deps[g] = R.version(g)
    for rep in inlined.objects:
        for f in rep.functions.values():
            rev.deps[f] = R.version(f)
    draft = rev.generate()
    plan = tape.plan(draft, rev.namer)
    fwd_lines, pb_lines, passed = cleanup.clean(draft, plan, *tape.render(draft, plan))
    pb_lines = projected.reuse_projections(
        pb_lines, plan.shape_only, draft.locals - set(draft.params_names) - set(draft.freevars))
    text = sparse.sparse_scatters(codegen.pair_text(draft, fwd_lines, pb_lines, passed))
    if read and (rev.direct or _DISPATCHED.search(_without_reads(text, read))):
        raise param_fields.Undo  # the reads at the entry bought nothing sure: without them
    return text, rev, info


def _without_reads(text, read):
    """text without the run-time reads of the fields param_fields put at the entry."""
    for p, attr, _ in read.values():
        text = text.replace(f"_rt.getattr_pair({p}, {attr!r})", "")
    return text


def function_info(fn, node, filename, globals_):
    """What the passes know about fn besides its tree: names, globals, captured modules."""
    code = fn.__code__
    info = FunctionInfo(code.co_name, node, filename, globals_, code.co_freevars, code.co_cellvars)
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if isinstance(value, types.ModuleType):
            info.static_free[name] = value
    return info


class FunctionInfo:
    """What the reverse pass needs to know about the function it transforms."""

    def __init__(self, name, node, filename, globals_, freevars, cellvars, line_offset=0):
        self.name = name
        self.node = node
        self.filename = filename
        self.globals = globals_
        self.freevars = tuple(freevars)
        self.cellvars = set(cellvars)
        self.line_offset = line_offset
        self.static_free = {}  # captured variables holding modules: resolved like globals
        self.module_attrs = {}  # (id(module), attr) -> (module, attr, value) resolved
        self.param_fields = {}  # (parameter, field) -> kind: passes/param_fields.py
        self.field_arrays = {}  # name a record's array field is read into -> "p.attr"
        self.param_items = {}  # list or tuple parameter -> the kind of all its items (kinds.ITEMS)
        self.param_vectors = set()  # 1-D float64 array parameters (kinds.VECTOR)
        self.dead_params = set()  # parameters whose value at the entry nothing reads (none_params)
        a = node.args
        self.posonly = [p.id for p in a.posonlyargs]
        self.positional = [p.id for p in a.posonlyargs + a.args]
        self.vararg = a.vararg.id if a.vararg else None
        self.kwonly = [p.id for p in a.kwonlyargs]
        self.kwarg = a.kwarg.id if a.kwarg else None

    @property
    def params(self):
        out = list(self.positional)
        if self.vararg:
            out.append(self.vararg)
        out += self.kwonly
        if self.kwarg:
            out.append(self.kwarg)
        return out


def _split_key(fn, key):
    """(kinds of the arguments, kinds of the captured variables, the records' field kinds:
    kinds.field_kinds, or ())."""
    fields = ()
    if key and type(key[-1]) is tuple and key[-1][0] == FIELDS:
        fields, key = key[-1][1], key[:-1]
    n = len(fn.__code__.co_freevars)
    return (key[: len(key) - n], key[len(key) - n:], fields) if n else (key, (), fields)


def without_fields(key):
    """key without its records' field kinds: what the code is made for when reading them at
    the entry does not apply (param_fields.Undo)."""
    return key[:-1] if key and type(key[-1]) is tuple and key[-1][0] == FIELDS else key


# builtins whose generator expressions the normaliser writes as loops of their own: any,
# all and next stop at the item that decides; sum adds each item as it comes, which is
# Python's own sum only before 3.12 (since then it compensates the rounding of floats)
_SHORT_CIRCUITS = ("any", "all", "next", "map", "filter") + (("sum",) if sys.version_info < (3, 12) else ())


def _zip_lists(fn, node, globals_, items, user_names):
    """The list and tuple parameters whose items' kind the key holds (param_fields.known_items:
    only read, nothing else reaching them) that nothing rebinds, when `zip` appears and
    zip, len, min and range are the builtins: their loops over zip(...) read by position
    (targets.zip_loop)."""
    lists = {p for p, (_, tag) in items.items() if tag in (ITEMS, TUPLE_ITEMS)}
    if not lists or "zip" not in user_names or not all(_is_builtin(fn, globals_, n) for n in ("zip", "len", "min", "range")):
        return frozenset()
    return _unbound(node, lists)


def _unbound(node, names):
    """The names of names that no statement of node's body binds."""
    if not names:
        return frozenset()
    return frozenset(names - {n.id for s in node.body for n in gast.walk(s)
                              if n.__class__ is gast.Name and n.ctx.__class__ is not gast.Load})


def _is_builtin(fn, globals_, name):
    """Does `name` in fn's code mean the builtin of that name? Not a local or captured
    variable, and no global of that name (asked through globals_, emit's recording
    mapping: a global defined later makes the code again)."""
    code = fn.__code__
    if name in code.co_varnames or name in code.co_cellvars or name in code.co_freevars or name in globals_:
        return False
    bi = fn.__globals__.get("__builtins__", builtins)
    bi = bi if isinstance(bi, dict) else vars(bi)
    return bi.get(name) is getattr(builtins, name, None)


def _numbers(fn, node, arg_kinds, cell_kinds, fuse, math_call):
    """The names the normaliser takes for numbers, to keep arithmetic on them whole
    (passes/whole.py), from the positional parameters and the captured variables the
    key says are numbers; None when fuse is off."""
    if not fuse:
        return None
    a = node.args
    known = {p.id for p, k in zip(a.posonlyargs + a.args, arg_kinds) if k == REAL}
    known.update(c for c, k in zip(fn.__code__.co_freevars, cell_kinds) if k == REAL)
    return whole.number_names(node, known, math_call)


def static_values(fn, names):
    """{name: value} of the names among `names` that fn reads from outside (a captured
    variable, a global, a builtin) and that hold a module or a class now:
    `np.linalg.norm(x)` names a callee, where `A.T.sum()` (A a parameter) calls a method
    of a value."""
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
    out = {}
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
            out[name] = value
    return out
