"""Fusion: a generated pair and its pullback as one "value and gradient" function.

``gradient(f, x, y)`` runs f's pair, which builds a pullback closure (one default argument
per value it keeps) and returns it, then calls that closure with the seed 1.0 at once.
For a small scalar function that structure costs as much as the arithmetic. When the
result is a real number, the same work can be one function: the forward lines, then the
pullback's lines with its seed set to 1.0, returning ``(value, gradients)``.

This module derives that function from the generated module text of a pair (its tree
decides; the lines, comments included, are kept as they are), or says why it declines.
It runs after ``emit`` (it reads finished generated code, not a pass's draft), lazily: on
the first call of ``gradient`` that finds the pair cached (``emit.fused_for``).

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
  are declined;
* only a real result (the generator's ``REAL`` kind: the seed is then a float, and the
  value an immutable number the pullback cannot change) is fused; the seed check
  ``if type(b_result) is not float`` is dropped, since 1.0 is a float;
* lines are dedented by one level: a string constant over several lines is declined.
"""
import ast

from .kinds import REAL
from .naming import PAIR_SUFFIX

FUSED_SUFFIX = "_fused"


class Declined(Exception):
    """The pair has no fused form; the message says why."""


class Fused:
    """The fused module text (a factory ``make_<name>`` with the pair's parameters)."""

    __slots__ = ("source", "name")

    def __init__(self, source, name):
        self.source = source
        self.name = name


def fuse(text, pair_name, result_kind):
    """The Fused form of the generated module text of the pair named pair_name, whose
    result has the kind result_kind; raises Declined when there is none."""
    if result_kind != REAL:
        raise Declined(f"the result's kind is {result_kind}, not a real number")
    tree = ast.parse(text)
    factory, pair = _factory_and_pair(tree, pair_name)
    pb, value = _pullback_and_value(pair)
    _check_scopes(text, pair, pb, value)
    names = _identifiers(tree)
    name = _fresh(pair_name[: -len(PAIR_SUFFIX)] + FUSED_SUFFIX
                  if pair_name.endswith(PAIR_SUFFIX) else pair_name + FUSED_SUFFIX, names)
    lines = text.splitlines()
    body = _fused_body(text, lines, pair, pb, value, names)
    out = lines[: factory.lineno - 1]
    out.append(_renamed_header(lines, factory, "make_" + pair_name, "make_" + name))
    out.extend(lines[factory.lineno: pair.lineno - 1])
    out.append(_renamed_header(lines, pair, pair_name, name))
    out.extend(lines[pair.lineno: _header_end(pair)])
    out.extend(body)
    ret = factory.body[-1]
    pad = lines[ret.lineno - 1][: len(lines[ret.lineno - 1]) - len(lines[ret.lineno - 1].lstrip())]
    out.append(f"{pad}return {name}")
    out.extend(lines[ret.end_lineno:])
    return Fused("\n".join(out) + "\n", name)


def decline_reason(text, pair_name, result_kind):
    """Why the pair has no fused form, or None when it has one."""
    try:
        fuse(text, pair_name, result_kind)
    except Declined as exc:
        return str(exc)
    return None


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
    value = ret.value.elts[0]
    uses = [n for n in ast.walk(pair) if isinstance(n, ast.Name) and n.id == pb.name]
    if len(uses) != 1:
        raise Declined("the pullback is named elsewhere than in the pair's return")
    for node in _own_scope(pair.body[:-2]):
        if isinstance(node, ast.Return):
            raise Declined("a forward line returns")
    return pb, value


def _own_scope(stmts):
    """The nodes of stmts, not entering the bodies of functions, lambdas and classes
    defined there (their defaults and decorators are in this scope, their bodies not)."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend(node.decorator_list)
            stack.extend(node.args.defaults)
            stack.extend(d for d in node.args.kw_defaults if d is not None)
        elif isinstance(node, ast.Lambda):
            stack.extend(node.args.defaults)
            stack.extend(d for d in node.args.kw_defaults if d is not None)
        elif isinstance(node, ast.ClassDef):
            stack.extend(node.decorator_list)
            stack.extend(node.bases)
            stack.extend(node.keywords)
        else:
            stack.extend(ast.iter_child_nodes(node))


# ----- scopes ----------------------------------------------------------------------------------


def _check_scopes(text, pair, pb, value):
    """Decline where running the pullback's lines in the pair's scope could differ from
    running them in their own (see the module docstring)."""
    for node in _own_scope(pair.body[:-2] + pb.body):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            raise Declined("a global or nonlocal declaration")
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            raise Declined("a yield or await")
    for node in ast.walk(pb):
        if isinstance(node, (ast.Constant, ast.JoinedStr)) and node.lineno != node.end_lineno:
            raise Declined("a string constant over several lines in the pullback")
    pair_code = _code_of(text, pair.name, ())
    pb_code = _code_of(text, pb.name, (pair.name,))
    pb_locals = set(pb_code.co_varnames) | set(pb_code.co_cellvars)
    shared = pb_locals & set(pair_code.co_cellvars)
    if shared:
        raise Declined(f"the pullback binds {_one(shared)}, which a closure of the forward lines captures")
    pair_locals = set(pair_code.co_varnames) | set(pair_code.co_cellvars)
    read = {n.id for s in pair.body[:-2] + pb.args.defaults + [value] for n in ast.walk(s)
            if isinstance(n, ast.Name)}
    outer = pb_locals & (set(pair_code.co_freevars) | (read - pair_locals))
    if outer:
        raise Declined(f"the pullback binds {_one(outer)}, which the forward lines read from outside")


def _one(names):
    return ", ".join(sorted(names)[:3])


def _code_of(text, name, path):
    """The code object of the function name (nested in the functions of path) of the
    factory in text."""
    code = compile(text, "<fuse>", "exec")
    code = next(c for c in code.co_consts if hasattr(c, "co_consts"))  # the factory
    for step in path + (name,):
        code = next(c for c in code.co_consts if hasattr(c, "co_name") and c.co_name == step)
    return code


def _identifiers(tree):
    """Every identifier the module text uses (fresh names avoid them all)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
    return out


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
    ends = [fn.lineno] + [n.end_lineno for n in ast.walk(fn.args) if hasattr(n, "end_lineno")]
    return max(ends)


def _renamed_header(lines, fn, old, new):
    """fn's first header line with its name old replaced by new."""
    line = lines[fn.lineno - 1]
    at = _char_col(line, fn.col_offset) + len("def ")
    if line[at: at + len(old)] != old:
        raise Declined("a def header not as generated")
    return line[:at] + new + line[at + len(old):]


def _char_col(line, byte_col):
    """The character index of a byte offset (ast counts UTF-8 bytes)."""
    return len(line.encode()[:byte_col].decode())


def _fused_body(text, lines, pair, pb, value, names):
    """The lines of the fused function's body: the forward lines, the value captured if
    the pullback rebinds it, the pullback's non-trivial defaults, the seed, the
    pullback's lines one level less indented with each return giving (value, gradients)."""
    pad = " " * pair.body[0].col_offset
    out = lines[_header_end(pair): pb.lineno - 1]  # the forward lines, comments included
    pb_code = _code_of(text, pb.name, (pair.name,))
    bound = set(pb_code.co_varnames) | set(pb_code.co_cellvars)
    if isinstance(value, ast.Constant):
        value_src = ast.get_source_segment(text, value)
    elif isinstance(value, ast.Name) and value.id not in bound:
        value_src = value.id
    else:  # the pullback's lines rebind it (or it is an expression): captured now
        value_src = _fresh("value", names)
        out.append(f"{pad}{value_src} = {ast.get_source_segment(text, value)}")
    out.append(f"{pad}# the pullback, run now with the seed 1.0: (value, gradients)")
    out.extend(pad + line for line in _defaults_as_assignments(text, pb))
    out.append(f"{pad}{pb.args.args[0].arg} = 1.0")
    out.extend(_pullback_lines(text, lines, pb, value_src, len(pad)))
    return out


def _defaults_as_assignments(text, pb):
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
    srcs = [(n, ast.get_source_segment(text, d)) for n, d in pairs]
    if crossing and len(pairs) > 1:
        return [", ".join(n for n, _ in srcs) + " = " + ", ".join(s for _, s in srcs)]
    return [f"{n} = {s}" for n, s in srcs]


def _is_seed_check(stmt, seed):
    """``if type(seed) is not float: seed = _rt.real(seed)`` (a no-op for the seed 1.0)."""
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
        and [ast.dump(x) for x in stmt.body[0].targets] == [ast.dump(ast.Name(seed, ast.Store()))]
    )


def _pullback_lines(text, lines, pb, value_src, indent):
    """The pullback's body lines: the seed check dropped, each of its returns giving
    (value, gradients), dedented to indent."""
    seed = pb.args.args[0].arg
    first, last = _header_end(pb) + 1, pb.end_lineno
    edits = {}  # first line -> (last line, replacement lines)
    for stmt in pb.body:
        if _is_seed_check(stmt, seed):
            edits[stmt.lineno] = (stmt.end_lineno, [])
    for node in _own_scope(pb.body):
        if isinstance(node, ast.Return):
            edits[node.lineno] = (node.end_lineno, _return_lines(text, lines, node, value_src))
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


def _return_lines(text, lines, node, value_src):
    """The lines of ``return <value>, <what the pullback returned>`` for node."""
    head = lines[node.lineno - 1]
    before = head[: _char_col(head, node.col_offset)]
    tail_line = lines[node.end_lineno - 1]
    after = tail_line[_char_col(tail_line, node.end_col_offset):]
    v = node.value
    if v is None:
        grads = "None"
    else:
        grads = ast.get_source_segment(text, v)
        if not _second_of_pair(grads):
            grads = f"({grads})"
    return (f"{before}return {value_src}, {grads}{after}").split("\n")
