"""Fusion: a generated pair and its pullback as one "value and gradient" function.

``gradient(f, x, y)`` runs f's pair, which builds a pullback closure (one default argument
per value it keeps) and returns it, then calls that closure with the seed 1.0 at once.
For a small scalar function that structure costs as much as the arithmetic. When the
result is a real number, the same work can be one function: the forward lines, then the
pullback's lines with its seed set to 1.0, returning ``(value, gradients)``.

This module derives that function from the generated module text of a pair (its tree
decides; the lines, comments included, are kept as they are), or says why it declines;
compiles it and keeps it with the emitted entry (``fused_of``); and binds it like the
pair (``fused_for``). It runs after ``emit`` (it reads finished generated code, not a
pass's draft), lazily: on the first call of ``gradient`` that finds the pair cached.

Before (the pair of ``def f(x): s = x * x; return math.sin(s)``)::

    def f_pair(x):
        # s = x * x
        s = x * x
        # return math.sin(s)
        result = math.sin(s)
        def f_pullback(b_result, s=s, x=x):
            if type(b_result) is not float:
                b_result = _rt.real(b_result)
            b_s = b_result * math.cos(s)
            # s = x * x
            b_x = b_s * (2 * x)
            return (None, b_x)
        return result, f_pullback

After (``show-adjoint --fused``)::

    def f_fused(x):
        # s = x * x
        s = x * x
        # return math.sin(s)
        result = math.sin(s)
        # the pullback, run now with the seed 1.0: (value, gradients)
        b_result = 1.0
        b_s = b_result * math.cos(s)
        # s = x * x
        b_x = b_s * (2 * x)
        return result, (None, b_x)

(``fold.py`` then writes those pullback lines as a person would, bit for bit the same:
``b_s = math.cos(s)``, and for float arguments a form returning ``(b_x,)`` alone.)

What differs between "a closure called later" and "the same lines run now", and how each
is kept exact:

* the pullback's default arguments were evaluated where it was defined, at the end of the
  forward lines: those that are not ``name=name`` become assignments there (all at once
  when one reads another's name);
* the pullback may rebind forward names (a value restored from the tape): the value is
  captured in a fresh name before the pullback's lines run when they bind its name;
* every ``return`` of the pullback (not of functions nested in it) returns
  ``(value, gradients)``; a forward line that returns, a pullback that may end without a
  return, or one called or named anywhere else, is declined;
* scopes: a name the pullback binds must not be captured by a closure of the forward
  lines (a cell they share), nor be a captured variable or a global the forward lines read
  (binding it would make it local); ``global``, ``nonlocal``, ``yield`` and ``await``
  are declined. A global's ``DT=DT`` (for a pullback called later) is not bound;
* the result is a real number (the generator's ``REAL`` kind: the seed check ``if
  type(b_result) is not float`` is dropped, 1.0 is a float) or of an array's kind (a NumPy
  scalar: ``_rt.real_scalar``, gradient's own check, tests it before the pullback's lines,
  which give ``(value, None)`` when it fails; the entry ``_rt.seed`` and its ``is None``
  exit are dropped): a value that runs them is an immutable number or a 0-d array;
* NumPy's reductions in the forward lines call ``_rt.np_sum`` & co (fastprimal.py);
* lines are dedented by one level: a string constant over several lines is declined.
"""
import ast
import inspect
import math
import types

import numpy as np

from . import emit, fastprimal, fold

from .kinds import ARRAY, REAL
from .naming import PAIR_SUFFIX

FUSED_SUFFIX = "_fused"


class Declined(Exception):
    """The pair has no fused form; the message says why."""


class Fused:
    """The fused module text (a factory ``make_<name>`` with the pair's parameters); its
    lines before ``same_below`` are the pair's, at the same numbers."""

    __slots__ = ("source", "name", "same_below", "seed", "grads_name", "checked")

    def __init__(self, source, name, same_below, seed, grads_name, checked=False):
        self.source, self.name, self.same_below = source, name, same_below
        self.seed = seed  # the pullback's seed parameter, set to 1.0
        self.grads_name = grads_name  # a free name for the gradients-only form
        self.checked = checked  # the value is tested (_rt.real_scalar) before the pullback


def fuse(text, pair_name, result_kind, numpy=False, code=None):
    """The Fused form of the generated module text of the pair named pair_name, whose
    result has the kind result_kind (numpy: the factory's ``np`` is NumPy, whose
    reductions the forward lines then call as fastprimal.py says; code: the pair's code
    object, when emit compiled the text already); raises Declined when there is none."""
    if result_kind != REAL and result_kind != ARRAY:
        raise Declined(f"the result's kind is {result_kind}, not a real number or an array")
    if "\r" in text or "\f" in text:
        raise Declined("a carriage return or form feed in the text")
    tree = ast.parse(text)
    factory, pair = _factory_and_pair(tree, pair_name)
    checked = result_kind == ARRAY  # the value is tested when the code runs
    if checked and "_rt" not in {a.arg for a in factory.args.args}:
        raise Declined("an array result, and no run time to test it with")
    pb, value = _pullback_and_value(pair)
    survey = _Survey(tree, pair, pb, value)
    pair_code, pb_code = _codes(text, pair.name, pb.name, code)
    kept = _check_scopes(survey, pair_code, pb_code, pb)
    names = survey.identifiers
    name = _fresh(pair_name[: -len(PAIR_SUFFIX)] + FUSED_SUFFIX
                  if pair_name.endswith(PAIR_SUFFIX) else pair_name + FUSED_SUFFIX, names)
    lines = text.split("\n")
    if numpy and fastprimal.applies(factory, pair_code):
        fastprimal.rewrite(lines, pair.body[:-2], _char_col)
    bound = (set(pb_code.co_varnames) | set(pb_code.co_cellvars)) - kept
    body = _fused_body(lines, pair, pb, value, names, bound, survey.returns, checked)
    out = lines[: factory.lineno - 1]
    out.append(_renamed_header(lines, factory, "make_" + pair_name, "make_" + name))
    out.extend(lines[factory.lineno: pair.lineno - 1])
    out.append(_renamed_header(lines, pair, pair_name, name))
    out.extend(lines[pair.lineno: _header_end(pair)])
    out.extend(body)
    ret = factory.body[-1]
    head = lines[ret.lineno - 1]
    out.append(f"{head[: len(head) - len(head.lstrip())]}return {name}")
    out.extend(line for line in lines[ret.end_lineno:] if line)
    base = pair_name[: -len(PAIR_SUFFIX)] if pair_name.endswith(PAIR_SUFFIX) else pair_name
    grads_name = _fresh(base + "_grads", names)
    return Fused("\n".join(out) + "\n", name, pb.lineno, pb.args.args[0].arg, grads_name, checked)


# ----- the shape of the pair -----------------------------------------------------------------


def _factory_and_pair(tree, pair_name):
    """The factory ``def make_<pair>(...): def <pair>(...): ...; return <pair>``."""
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        raise Declined("not a generated module of one factory")
    factory = tree.body[0]
    body = factory.body
    if (
        len(body) != 2
        or not isinstance(body[0], ast.FunctionDef)
        or body[0].name != pair_name
        or not isinstance(body[1], ast.Return)
        or not isinstance(body[1].value, ast.Name)
        or body[1].value.id != pair_name
    ):
        raise Declined("the factory does not define and return the pair alone")
    pair = body[0]
    if pair.decorator_list:
        raise Declined("the pair is decorated")
    return factory, pair


def _pullback_and_value(pair):
    """(the pullback's def, the value expression): the pair must end with
    ``def PB(seed, name=default, ...): ...`` then ``return VALUE, PB``."""
    if len(pair.body) < 2:
        raise Declined("the pair is too short to end with a pullback")
    pb, ret = pair.body[-2], pair.body[-1]
    if not (
        isinstance(pb, ast.FunctionDef)
        and isinstance(ret, ast.Return)
        and isinstance(ret.value, ast.Tuple)
        and len(ret.value.elts) == 2
        and isinstance(ret.value.elts[1], ast.Name)
        and ret.value.elts[1].id == pb.name
    ):
        raise Declined("the pair does not end with `def pullback(...)` and `return value, pullback`")
    a = pb.args
    if (
        pb.decorator_list
        or a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg
        or not a.args
        or len(a.defaults) != len(a.args) - 1
    ):
        raise Declined("the pullback's parameters are not a seed and defaults")
    if not isinstance(pb.body[-1], ast.Return):
        raise Declined("the pullback may end without a return")
    return pb, ret.value.elts[0]


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class _Survey:
    """One walk over the module tree (``ast.walk`` is slow; this is walked once):

    identifiers: every identifier (fresh names avoid them); read: the names of the forward
    lines (nested scopes included), of the pullback's defaults and of the value; returns:
    the returns of the pullback's own scope; and what declines: global/nonlocal, yield or
    await, a return in the forward lines, a string over several lines in the pullback,
    the pullback named elsewhere."""

    def __init__(self, tree, pair, pb, value):
        self.identifiers, self.read, self.returns, self.pb_stores = set(), set(), [], set()
        self.declined = None
        fwd = pair.body[:-2]
        # (node, region: "fwd" / "pb" / "", own scope of its region)
        stack = [(n, "fwd", True) for n in fwd] + [(n, "pb", True) for n in pb.body]
        stack += [(n, "dflt", True) for n in pb.args.defaults] + [(value, "dflt", True)]
        stack += [(n, "", False) for n in (pair.args, pb.args, tree.body[0].args)]
        pb_uses = 0
        while stack:
            node, region, own = stack.pop()
            t = type(node)
            if t is ast.Name:
                self.identifiers.add(node.id)
                if region in ("fwd", "dflt"):
                    self.read.add(node.id)
                pb_uses += node.id == pb.name
                if region == "pb" and own and type(node.ctx) is not ast.Load:
                    self.pb_stores.add(node.id)
                continue
            if t is ast.arg:
                self.identifiers.add(node.arg)
            elif t is ast.Attribute:
                self.identifiers.add(node.attr)
            elif t in (ast.Constant, ast.JoinedStr):
                if region == "pb" and node.lineno != node.end_lineno:
                    self._decline("a string constant over several lines in the pullback")
            elif own and region:
                self._own_scope_node(node, t, region)
            inner = own and not isinstance(node, _SCOPES)
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                self.identifiers.add(node.name)
            for field in node._fields:
                v = getattr(node, field, None)
                if type(v) is list:
                    stack.extend((c, region, inner) for c in v if isinstance(c, ast.AST))
                elif isinstance(v, ast.AST):
                    stack.append((v, region, inner))
        if pb_uses:
            self._decline("the pullback is named elsewhere than in the pair's return")
        self.identifiers |= {pair.name, pb.name, tree.body[0].name}

    def _own_scope_node(self, node, t, region):
        if t in (ast.Global, ast.Nonlocal):
            self._decline("a global or nonlocal declaration")
        elif t in (ast.Yield, ast.YieldFrom, ast.Await):
            self._decline("a yield or await")
        elif t is ast.Return:
            if region == "fwd":
                self._decline("a forward line returns")
            elif region == "pb":
                self.returns.append(node)

    def _decline(self, why):
        if self.declined is None:
            self.declined = why


# ----- scopes ----------------------------------------------------------------------------------


_GENERATORS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _codes(text, pair_name, pb_name, pair=None):
    """The code objects of the pair (given, or the text compiled once) and of its pullback."""
    if pair is None:  # (emit's entry holds it: the same text, compiled)
        factory = next(c for c in compile(text, "<fuse>", "exec").co_consts if hasattr(c, "co_consts"))
        pair = next(c for c in factory.co_consts if getattr(c, "co_name", None) == pair_name)
    pb = next(c for c in pair.co_consts if getattr(c, "co_name", None) == pb_name)
    return pair, pb


def _check_scopes(survey, pair_code, pb_code, pb):
    """Decline where running the pullback's lines in the pair's scope could differ from
    running them in their own (see the module docstring); else the pullback's ``name=name``
    parameters naming globals, which the fused form does not bind."""
    if survey.declined:
        raise Declined(survey.declined)
    if (pair_code.co_flags | pb_code.co_flags) & _GENERATORS:
        raise Declined("a yield or await")
    pair_locals = set(pair_code.co_varnames) | set(pair_code.co_cellvars)
    kept = {p.arg for p, d in zip(pb.args.args[1:], pb.args.defaults) if getattr(d, "id", None) == p.arg}
    kept -= pair_locals | set(pair_code.co_freevars) | survey.pb_stores
    pb_locals = (set(pb_code.co_varnames) | set(pb_code.co_cellvars)) - kept
    shared = pb_locals & set(pair_code.co_cellvars)
    if shared:
        raise Declined(f"the pullback binds {_one(shared)}, which a closure of the forward lines captures")
    outer = pb_locals & (set(pair_code.co_freevars) | (survey.read - pair_locals))
    if outer:
        raise Declined(f"the pullback binds {_one(outer)}, which the forward lines read from outside")
    return kept


def _one(names):
    return ", ".join(sorted(names)[:3])


def _fresh(base, names):
    name, i = base, 0
    while name in names:
        i += 1
        name = f"{base}_{i}"
    names.add(name)
    return name


# ----- text, kept line for line ------------------------------------------------------------------


def _header_end(fn):
    """The last line of fn's ``def`` header (its parameters may span lines)."""
    a = fn.args
    parts = a.posonlyargs + a.args + a.defaults + a.kwonlyargs + [d for d in a.kw_defaults if d]
    parts += [n for n in (a.vararg, a.kwarg) if n is not None]
    return max([fn.lineno] + [n.end_lineno for n in parts])


def _renamed_header(lines, fn, old, new):
    """fn's first header line with its name old replaced by new."""
    line = lines[fn.lineno - 1]
    at = _char_col(line, fn.col_offset) + len("def ")
    if line[at: at + len(old)] != old:
        raise Declined("a def header not as generated")
    return line[:at] + new + line[at + len(old):]


def _char_col(line, byte_col):
    """The character index of a byte offset (ast counts UTF-8 bytes)."""
    return len(line.encode()[:byte_col].decode()) if not line.isascii() else byte_col


def _segment(lines, node):
    """The source text of node (as ast.get_source_segment, from the lines)."""
    first, last = lines[node.lineno - 1], lines[node.end_lineno - 1]
    start, end = _char_col(first, node.col_offset), _char_col(last, node.end_col_offset)
    if node.lineno == node.end_lineno:
        return first[start:end]
    middle = lines[node.lineno: node.end_lineno - 1]
    return "\n".join([first[start:]] + middle + [last[:end]])


def _fused_body(lines, pair, pb, value, names, bound, returns, checked=False):
    """The lines of the fused function's body: the forward lines, the value captured if
    the pullback rebinds it, the pullback's non-trivial defaults, (checked) the test of
    the value, the seed, the pullback's lines one level less indented with each return
    giving (value, gradients)."""
    pad = " " * pair.body[0].col_offset
    out = lines[_header_end(pair): pb.lineno - 1]  # the forward lines, comments included
    if isinstance(value, ast.Constant):
        value_src = _segment(lines, value)
    elif isinstance(value, ast.Name) and value.id not in bound:
        value_src = value.id
    else:  # the pullback's lines rebind it (or it is an expression): captured now
        value_src = _fresh("value", names)
        out.append(f"{pad}{value_src} = {_segment(lines, value)}")
    out.append(f"{pad}# the pullback, run now with the seed 1.0: (value, gradients)")
    out.extend(pad + line for line in _defaults_as_assignments(lines, pb))
    if checked:
        # a value gradient() refuses (it checks before pulling back): (value, None)
        out.append(f"{pad}if not _rt.real_scalar({value_src}):")
        out.append(f"{pad}    return {value_src}, None")
    out.append(f"{pad}{pb.args.args[0].arg} = 1.0")
    out.extend(_pullback_lines(lines, pb, value_src, len(pad), returns, checked))
    return out


def _defaults_as_assignments(lines, pb):
    """``name = default`` for each default that is not the name itself; one tuple
    assignment when a default reads another of the names assigned (defaults are all
    evaluated before any is bound)."""
    params = pb.args.args[1:]
    pairs = [
        (p.arg, d) for p, d in zip(params, pb.args.defaults)
        if not (isinstance(d, ast.Name) and d.id == p.arg)
    ]
    if not pairs:
        return []
    assigned = {n for n, _ in pairs}
    crossing = any(
        isinstance(n, ast.Name) and n.id in assigned - {name}
        for name, d in pairs for n in ast.walk(d)
    )
    srcs = [(n, _segment(lines, d)) for n, d in pairs]
    if crossing and len(pairs) > 1:
        return [", ".join(n for n, _ in srcs) + " = " + ", ".join(s for _, s in srcs)]
    return [f"{n} = {s}" for n, s in srcs]


def _is_seed_check(stmt, seed):
    """``if type(seed) is not float: seed = ...`` (a no-op for the seed 1.0)."""
    t = stmt.test if isinstance(stmt, ast.If) else None
    return (
        isinstance(t, ast.Compare)
        and not stmt.orelse
        and len(stmt.body) == 1
        and isinstance(t.left, ast.Call)
        and isinstance(t.left.func, ast.Name) and t.left.func.id == "type"
        and len(t.left.args) == 1 and not t.left.keywords
        and isinstance(t.left.args[0], ast.Name) and t.left.args[0].id == seed
        and len(t.ops) == 1 and isinstance(t.ops[0], ast.IsNot)
        and isinstance(t.comparators[0], ast.Name) and t.comparators[0].id == "float"
        and isinstance(stmt.body[0], ast.Assign)
        and len(stmt.body[0].targets) == 1
        and isinstance(stmt.body[0].targets[0], ast.Name)
        and stmt.body[0].targets[0].id == seed
    )


def _is_array_seed(stmts, seed):
    """How many of stmts, from the first, are ``seed = _rt.seed(seed)`` then maybe ``if seed
    is None: return ...``: no-ops for the seed 1.0 (seed keeps a float, never None)."""
    s = stmts[0] if stmts else None
    if not (
        isinstance(s, ast.Assign)
        and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and s.targets[0].id == seed
        and ast.dump(s.value) == ast.dump(ast.parse(f"_rt.seed({seed})", mode="eval").body)
    ):
        return 0
    s = stmts[1] if len(stmts) > 1 else None
    if (
        isinstance(s, ast.If) and not s.orelse and len(s.body) == 1
        and isinstance(s.body[0], ast.Return)
        and ast.dump(s.test) == ast.dump(ast.parse(f"{seed} is None", mode="eval").body)
    ):
        return 2
    return 1


def _pullback_lines(lines, pb, value_src, indent, returns, checked=False):
    """The pullback's body lines: the seed check (checked: the seed's entry) dropped,
    each of its returns giving (value, gradients), dedented to indent."""
    seed = pb.args.args[0].arg
    first, last = _header_end(pb) + 1, pb.end_lineno
    edits = {}  # first line -> (last line, replacement lines)
    for stmt in pb.body[: _is_array_seed(pb.body, seed) if checked else 0]:
        edits[stmt.lineno] = (stmt.end_lineno, [])
    for stmt in pb.body:
        if _is_seed_check(stmt, seed):
            edits[stmt.lineno] = (stmt.end_lineno, [])
    for node in returns:
        edits[node.lineno] = (node.end_lineno, _return_lines(lines, node, value_src))
    out = []
    i = first
    while i <= last:
        if i in edits:
            end, new = edits[i]
            out.extend(new)
            i = end + 1
            continue
        out.append(lines[i - 1])
        i += 1
    shift = pb.body[0].col_offset - indent
    return [line[shift:] if line[:shift].isspace() else line for line in out]


def _second_of_pair(src):
    """Whether ``value, <src>`` reads as a pair whose second item is src (a tuple in
    parentheses, a name, a call: not a bare tuple, nor a lambda or a conditional)."""
    try:
        alone = ast.parse(f"({src})", mode="eval").body
        both = ast.parse(f"value, {src}", mode="eval").body
    except SyntaxError:
        return False
    return len(both.elts) == 2 and ast.dump(both.elts[1]) == ast.dump(alone)


def _return_lines(lines, node, value_src):
    """The lines of ``return <value>, <what the pullback returned>`` for node."""
    head = lines[node.lineno - 1]
    before = head[: _char_col(head, node.col_offset)]
    tail_line = lines[node.end_lineno - 1]
    after = tail_line[_char_col(tail_line, node.end_col_offset):]
    v = node.value
    if v is None:
        grads = "None"
    else:
        grads = _segment(lines, v)
        if not _second_of_pair(grads):
            grads = f"({grads})"
    return (f"{before}return {value_src}, {grads}{after}").split("\n")


# ----- compiled, kept with the emitted entry, bound like the pair ------------------------------


def fused_of(entry, floats=False):
    """(code or None, its source or why there is none) of entry's fused value-and-gradient
    function (above), folded (fold.py); with floats, the form for arguments that are all
    floats. Derived on the first request, not with the pair (a transform does not pay for
    it), and kept with the entry: whatever drops the entry (refresh, a new rule it
    depended on, its code object gone) drops it too."""
    return _forms(entry, floats)[:2]


def grads_of(entry):
    """(code or None, source) of the gradients-only form for float arguments: the fused
    lines returning just the arguments' gradients, where fold.py proves the value a float
    (what ``gradient`` returns for it, with no value to check)."""
    return _forms(entry, True)[2:]


def _forms(entry, floats):
    forms = entry.fused if entry.fused is not None else {}
    entry.fused = forms
    if floats not in forms:
        forms[floats] = _derive(entry, floats)
    return forms[floats]


def _derive(entry, floats):
    """(code, source, gradients-only code, its source) or (None, why, None, None)."""
    kind = entry.result[0] if entry.result else None
    numpy = entry.helpers.get("np")
    try:
        fused = fuse(entry.source, entry.pair_name, kind,
                     numpy is not None and numpy.cell_contents is np, entry.code)
    except Declined as exc:
        return None, str(exc), None, None
    cell = entry.helpers.get("math")
    math_ok = fold.math_float_functions() if cell is not None and cell.cell_contents is math else set()
    try:
        text, grads = fold.fold(fused.source, fused.name, fused.seed, floats and not fused.checked,
                                math_ok, fused.grads_name)
    except Exception:  # pragma: no cover - a bug of ours: the text unfolded is exact too
        text, grads = fused.source, None
    code = _compiled(entry, fused, text, fused.name, " floats fused" if floats else " fused")
    if code is None:  # pragma: no cover - a bug of ours: the pair is used
        return None, "the fused code does not compile", None, None
    gcode = _compiled(entry, fused, grads, fused.grads_name, " gradients fused") if grads else None
    return code, text, gcode, grads if gcode is not None else None


def _compiled(entry, fused, text, name, what):
    """The code object of the function name in the fused module text, registered (lines
    for tracebacks, the origins of the functions its forward lines define)."""
    gname = entry.filename[:-1] + what + ">"
    try:
        module_code = compile(text, gname, "exec")
    except SyntaxError:  # pragma: no cover - a bug of ours
        return None
    factory = next(c for c in module_code.co_consts if isinstance(c, types.CodeType))
    code = next(c for c in factory.co_consts if isinstance(c, types.CodeType) and c.co_name == name)
    emit._register_source(gname, text, code)
    # functions the forward lines define come from the user's lines, as in the pair
    origins = emit.ORIGINS.get(entry.filename, {})
    emit.ORIGINS[gname] = {k: v for k, v in origins.items() if k < fused.same_below}
    return code


def fused_for(fn, pair, floats=False):
    """(the fused function, its gradients-only form or None) of fn's generated pair (a
    function ``emit.bind`` made), sharing the pair's globals, defaults and cells; (None,
    None) when the pair has no fused form. floats: every argument is a float, as many as
    fn's positional parameters (the dispatch cache's key says so)."""
    code = getattr(pair, "__code__", None)
    variants = emit._CACHE.get(fn.__code__) if code is not None else None
    entry = next((e for entries in (variants or {}).values() for e in entries if e.code is code), None)
    if entry is None:
        return None, None
    floats = floats and code.co_argcount == fn.__code__.co_argcount
    fcode = fused_of(entry, floats)[0]
    gcode = grads_of(entry)[0] if floats and fcode is not None else None
    return _bound(fcode, pair), _bound(gcode, pair)


def _bound(fcode, pair):
    if fcode is None:
        return None
    cells = dict(zip(pair.__code__.co_freevars, pair.__closure__ or ()))
    if not set(fcode.co_freevars) <= set(cells):  # pragma: no cover - fuse keeps the names
        return None
    closure = tuple(cells[name] for name in fcode.co_freevars)
    fused = types.FunctionType(fcode, pair.__globals__, fcode.co_name, pair.__defaults__, closure)
    if pair.__kwdefaults__:
        fused.__kwdefaults__ = dict(pair.__kwdefaults__)
    return fused


def fused_text(fn, kinds, floats=False, fields=()):
    """What a cached ``gradient`` call of fn runs for arguments of these kinds (floats:
    all floats; fields: kinds.field_kinds): the gradients-only form, or the fused
    value-and-gradient function, or the pair headed by a comment saying why there is none."""
    entry = emit.source_of(fn, kinds, fields)
    code, text = fused_of(entry, floats)
    if code is None:
        return f"# no fused form ({text}): gradient() calls the pair, then its pullback\n" + entry.source
    if floats and fn.__code__.co_argcount == len(kinds):
        grads = grads_of(entry)[1]
        if grads is not None:
            return grads
    return text
