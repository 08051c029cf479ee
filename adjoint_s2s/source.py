"""Find and parse the source of a function: named functions, nested functions, lambdas.

A def's first transform parses its own lines alone, at their line numbers and columns
(``_segment``); where that cut does not parse, and for lambdas, the whole file is parsed
once (with the standard ast; only the function asked for is converted to gast). The
node is found by line, name and argument names; several lambdas on one line are told
apart by the columns the code object's instructions point at. A function defined in a
class body has its private names mangled as Python compiled them (``self.__k`` is
``self._C__k``). Functions made by exec, or typed into an interactive
session, have no file to read: that is a clear ``NoSourceError``.
"""
import ast
import linecache
import os
import sys
from collections import OrderedDict, deque

import gast

from .errors import NoSourceError, ORIGINS as _ORIGINS
from .togast import ast_to_gast, convert_noting

# The files read, most recently used last: a few are kept (a module's functions are
# usually transformed one after another), so memory does not grow with the number of
# files a program differentiates. refresh() empties it, so a file is read again.
# filename -> [text, lines, _Parsed, (mtime, size)]
_TREES = OrderedDict()

# The plain parses of file texts, keyed by the text itself: kept across refresh() (a
# refreshed but unchanged file is not parsed again; an edited one has another text).
# Parsing with the standard ast and converting to gast only the function asked for
# costs a fraction of converting the whole module.
_PARSED = OrderedDict()

# generated filename -> {generated line: (user file, user line)}: where each def/lambda
# of generated code came from (emit fills it), so a function defined inside
# differentiated code is read from the user's source (kept in errors.py, which names
# such a function by it too)
ORIGINS = _ORIGINS
_KEEP_TREES = 16


class _Parsed:
    """One file text: its plain ast, the (name, line) indexes of its defs and lambdas, and the
    gast form of each function node asked for so far."""

    __slots__ = ("tree", "index", "lambdas", "gast")

    def __init__(self, tree):
        self.tree = tree
        self.index = None  # (name, line) -> its defs, made on the first def asked for
        self.lambdas = None  # ("<lambda>", line) -> its lambdas, made on the first lambda
        self.gast = {}  # id(ast node) -> gast node (the ast nodes live as long as tree)

    def to_gast(self, node):
        g = self.gast.get(id(node))
        if g is None:
            g = self.gast[id(node)] = ast_to_gast(node)
        return g


def _stamp(filename):
    """(mtime, size) of a real file, None for names like <string>."""
    if filename.startswith("<"):
        return None
    try:
        st = os.stat(filename)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _parse(text):
    parsed = _PARSED.get(text)
    if parsed is None:
        try:
            parsed = _Parsed(ast.parse(text))
        except SyntaxError:
            return None
        _PARSED[text] = parsed
        while len(_PARSED) > _KEEP_TREES:
            _PARSED.popitem(last=False)
    else:
        _PARSED.move_to_end(text)
    return parsed


def _file_tree(filename, module_globals, code=None, first=None):
    """(_Parsed or None, lines) of a file; with first (the line a def starts on), of just
    that def's lines when the whole file has not been parsed yet (_segment)."""
    item = _TREES.get(filename)
    real = not filename.startswith("<")
    if item is not None and real and item[3] != _stamp(filename):
        item = None  # the file changed since it was read (a reloaded module)
    if item is not None and real:
        lines = item[1]
    else:  # names like <string> are read from linecache each time: they may be re-registered
        had = filename in linecache.cache
        if had and real:
            linecache.checkcache(filename)  # its copy in linecache may predate an edit
        lines = linecache.getlines(filename, module_globals) or _command_lines(filename, code)
        if not had and real:
            # read for us alone: linecache keeps it no longer than it would without us
            linecache.cache.pop(filename, None)
    if not lines:
        return None, None
    if item is None or item[1] is not lines:
        text = "".join(lines)
        if first is not None and text not in _PARSED:  # the whole file not parsed yet
            seg = _segment(text, lines, first)
            if seg is not None:
                return seg, lines
        if item is None or item[0] != text:
            parsed = _parse(text)
            if parsed is None:
                return None, lines
            item = _TREES[filename] = [text, lines, parsed, _stamp(filename)]
            while len(_TREES) > _KEEP_TREES:
                _TREES.popitem(last=False)
    _TREES.move_to_end(filename)
    return item[2], lines


def _segment(text, lines, first):
    """The _Parsed of the def starting on line `first` alone (decorators included), parsed
    at its own line numbers and columns (blank lines before it; an indented def under an
    `if 1:`): a module of a thousand lines costs milliseconds to parse, its function
    tenths. The def ends before the first line that is not blank or a comment and is
    indented no deeper than it; a cut that is wrong (a string or bracket running past a
    dedented line) does not parse, and the caller reads the whole file then."""
    key = (text, first)
    got = _PARSED.get(key)
    if got is not None:
        return got
    i = j = first - 1
    while j < len(lines) and lines[j].lstrip().startswith("@"):
        j += 1
    if j >= len(lines) or not lines[j].lstrip().startswith(("def ", "async def ")):
        return None
    indent = len(lines[j]) - len(lines[j].lstrip())
    end = j + 1
    while end < len(lines):
        line = lines[end]
        t = line.strip()
        if t and not t.startswith("#") and len(line) - len(line.lstrip()) <= indent:
            break
        end += 1
    head = "\n" * (i - 1) + "if 1:\n" if indent else "\n" * i
    try:
        got = _Parsed(ast.parse(head + "".join(lines[i:end])))
    except (SyntaxError, ValueError):
        return None
    _PARSED[key] = got
    while len(_PARSED) > _KEEP_TREES:
        _PARSED.popitem(last=False)
    return got


def _command_lines(filename, code):
    """The program of `python -c "..."`: Python compiles it as <string> and keeps no
    lines, but the command line it came from is still there (sys.orig_argv). Code exec'd
    from another string is also named <string>: the text is used only if compiling it
    gives this very code object (equal code, so equal source)."""
    argv = getattr(sys, "orig_argv", None) or []
    if filename != "<string>" or code is None or "-c" not in argv[:-1]:
        return []
    text = argv[argv.index("-c") + 1]
    try:
        stack = [compile(text, filename, "exec")]
    except (SyntaxError, ValueError):
        return []
    while stack:
        c = stack.pop()
        if c == code:
            return text.splitlines(True)
        stack.extend(k for k in c.co_consts if isinstance(k, type(c)))
    return []


def forget_sources(keep_parsed=False):
    """Forget the files read, so that they are read again (refresh(), with keep_parsed:
    the parse of a text already seen is kept, an edited file has another text); without
    keep_parsed, drop the parses too."""
    _TREES.clear()
    if not keep_parsed:
        _PARSED.clear()


def function_node(fn):
    """(node, filename, lines): the FunctionDef or Lambda that defines fn."""
    node, parsed, filename, lines = _plain_node(fn)
    return _mangled(parsed.to_gast(node), fn.__code__), filename, lines


def function_copy_noting(fn, flag):
    """(node, filename, lines, names, flagged): a private gast copy of the FunctionDef or
    Lambda that defines fn, for the passes to rewrite, with what fresh_copy_noting notes
    (the ids of its names, the classes of flag that are in it). Converted from
    the plain parse, which costs what copying a converted tree costs: a function's first
    transform no longer converts and then copies."""
    node, parsed, filename, lines = _plain_node(fn)
    got = convert_noting(node, flag)
    if got is None:  # (a gast whose conversion togast does not copy)
        got = fresh_copy_noting(parsed.to_gast(node), flag)
    prefix = _private_prefix(fn.__code__)
    if prefix is not None:
        _mangled(got[0], fn.__code__)
        got = (got[0], {_mangle(n, prefix) for n in got[1]}) + tuple(got[2:])
    return (got[0], filename, lines) + got[1:]


def _private_prefix(code):
    """`_C` for a function defined in the body of class C (at any depth of nested
    functions), whose private names (`self.__k`) Python stores mangled (`_C__k`); None
    elsewhere."""
    parts = getattr(code, "co_qualname", code.co_name).split(".")
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] == "<locals>" or parts[i + 1] == "<locals>":
            continue  # (a function's name is followed by <locals>)
        cls = parts[i].lstrip("_")
        return "_" + cls if cls else None
    return None


def _mangle(name, prefix):
    return prefix + name if name.startswith("__") and not name.endswith("__") else name


def _mangled(node, code):
    """node with the private names of a method (`__k` as an attribute, a variable, a
    parameter or a keyword) as Python compiled them (`_C__k`): the generated code runs
    outside the class, where nothing mangles them."""
    prefix = _private_prefix(code)
    if prefix is None:
        return node
    for n in gast.walk(node):
        cls = n.__class__
        if cls is gast.Name:
            n.id = _mangle(n.id, prefix)
        elif cls is gast.Attribute:
            n.attr = _mangle(n.attr, prefix)
        elif cls is gast.keyword and n.arg is not None:
            n.arg = _mangle(n.arg, prefix)
    return node


def _plain_node(fn):
    """(the plain ast node defining fn, its file's _Parsed, filename, lines)."""
    code = fn.__code__
    filename = code.co_filename
    first = code.co_firstlineno
    mapped = ORIGINS.get(filename, {}).get(first)
    if mapped is not None:  # defined inside differentiated code: read the user's source
        filename, first = mapped
    segment = first if mapped is None and code.co_name != "<lambda>" else None
    parsed, lines = _file_tree(filename, getattr(fn, "__globals__", None), code, segment)
    if segment is not None and parsed is not None and (code.co_name, first) not in _index(parsed):
        parsed, lines = _file_tree(filename, getattr(fn, "__globals__", None), code)  # the whole file
    if parsed is None and filename == "<stdin>":
        raise NoSourceError(
            f"cannot find the source of {getattr(fn, '__qualname__', fn)}: it was typed at the "
            "plain Python prompt or piped in with `python -`, and Python keeps no copy of "
            "that text. Put the function in a file (or a `python -c` string), use "
            "IPython/Jupyter, which keep each cell's source, or give it a rule with "
            f"@adjoint_s2s.adjoint({getattr(fn, '__name__', 'f')})"
        )
    if parsed is None:
        raise NoSourceError(
            f"cannot find the source of {getattr(fn, '__qualname__', fn)} (defined in "
            f"{filename}): functions made by exec or typed into an interactive session have "
            f"no source file to transform. Define it in a module, or give it a rule with "
            f"@adjoint_s2s.adjoint({getattr(fn, '__name__', 'f')})"
        )
    name = code.co_name
    if name == "<lambda>":
        if parsed.lambdas is None:
            parsed.lambdas = _build_index(parsed.tree, lambdas=True)
        candidates = list(parsed.lambdas.get((name, first), ()))
    else:
        candidates = list(_index(parsed).get((name, first), ()))
    if len(candidates) > 1:
        argnames = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
        # (the same parameters first: `lambda p: lambda: p * p` holds two lambdas on one
        # line, and a lambda without parameters is not the one taking p)
        candidates = ([c for c in candidates if _argnames(c) == argnames]
                      or [c for c in candidates if _argnames(c)[: len(argnames)] == argnames]
                      or candidates)
    if len(candidates) > 1 and mapped is None:
        cols = {
            (p[0], p[2])
            for p in code.co_positions()
            if p[0] is not None and p[2] is not None
        }
        best = [c for c in candidates if _covers(c, cols)]
        candidates = best or candidates
    elif len(candidates) > 1:  # made by generated code: its columns are not the user's
        candidates = _by_names(candidates, code, fn, filename, first)
    if not candidates:
        raise NoSourceError(
            f"cannot find the definition of {getattr(fn, '__qualname__', name)} at "
            f"{filename}, line {first}: the file changed since it was imported? "
            f"Re-import it, or give the function a rule with @adjoint_s2s.adjoint"
        )
    return candidates[0], parsed, filename, lines


def _index(parsed):
    if parsed.index is None:
        parsed.index = _build_index(parsed.tree)
    return parsed.index


def _build_index(tree, lambdas=False):
    """(name, line) -> the (plain ast) function nodes there, for a parsed file: its defs
    or, with lambdas, its lambdas (keyed "<lambda>"). A def is always a statement, so the
    defs are found through the statement lists alone (a tenth of a file's nodes); a lambda
    may sit in any expression, so the lambdas take a walk of every node, made only when
    a lambda is asked for. Either way in ast.walk's order."""
    table = {}
    if lambdas:
        for node in ast.walk(tree):
            if isinstance(node, ast.Lambda):
                table.setdefault(("<lambda>", node.lineno), []).append(node)
        return table
    todo = deque([tree])
    while todo:
        node = todo.popleft()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            table.setdefault((node.name, start), []).append(node)
            if start != node.lineno:
                table.setdefault((node.name, node.lineno), []).append(node)
        for field in node._fields:
            value = getattr(node, field, None)
            if value.__class__ is list:
                todo.extend(v for v in value if isinstance(v, _HOLDS_STATEMENTS))
    return table


# the nodes a def can be under: statements, and the except and case clauses between
# a statement and its body
_HOLDS_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)


def fresh_copy(node):
    """A private copy of a function node, locations included, for the passes to rewrite.

    A direct structural copy: about twice as fast as parsing the lines again or
    copy.deepcopy (the transform pays it once per function and argument kinds). Nodes
    without fields or locations (a context like Load, an operator like Add: about a third
    of the nodes) are shared, as the standard parser shares them: no pass writes to one.
    The tree is one the parser made (fields and locations only): the fields copied are
    those that may hold a node (_COPIED), the others (names, numbers, locations) are
    taken over as they are.
    """
    cls = node.__class__
    new = cls.__new__(cls)
    fields = new.__dict__
    old = node.__dict__
    fields.update(old)
    for k in _COPIED.get(cls) or _copied(cls):
        v = old.get(k)
        if v.__class__ is list:
            fields[k] = [
                (fresh_copy(x) if x.__dict__ else x) if isinstance(x, _AST) else x for x in v
            ]
        elif isinstance(v, _AST) and v.__dict__:
            fields[k] = fresh_copy(v)
    return new


def fresh_copy_noting(node, flag):
    """(fresh_copy(node), the ids of every Name in it, the classes of flag that are in
    it): the copy's walk visits every node that holds a name or a field, so the
    names (``naming.names_in``) and the classes (``check.check``'s rejects) are seen on
    the way, not in two more walks of the tree."""
    names = set()
    seen = []
    new = _copy_noting(node, names, seen, flag)
    return new, names, frozenset(seen)


def _copy_noting(node, names, seen, flag):
    cls = node.__class__
    new = cls.__new__(cls)
    fields = new.__dict__
    old = node.__dict__
    fields.update(old)
    if cls is _NAME:
        names.add(old["id"])
    elif cls in flag:
        seen.append(cls)
    for k in _COPIED.get(cls) or _copied(cls):
        v = old.get(k)
        if v.__class__ is list:
            fields[k] = [
                (_copy_noting(x, names, seen, flag) if x.__dict__ else x) if isinstance(x, _AST) else x
                for x in v
            ]
        elif isinstance(v, _AST) and v.__dict__:
            fields[k] = _copy_noting(v, names, seen, flag)
    return new


_NAME = gast.Name


# fields that never hold a node: taken over by fresh_copy as they are
_PLAIN = frozenset(
    ("id", "type_comment", "kind", "attr", "arg", "module", "level", "conversion", "is_async")
)
_COPIED = {}  # node class -> the fields of it that may hold a node or a list of them


def _copied(cls):
    got = _COPIED[cls] = tuple(f for f in cls._fields if f not in _PLAIN)
    return got


_AST = gast.AST


def _by_names(candidates, code, fn, filename, line):
    """The candidates (lambdas on one line of the user's file, made by generated code)
    that read the names, attributes and numbers fn's code reads; refused when lambdas
    that differ remain (`lambda: b * dy` and `lambda: dy * b` on one line)."""
    want = set(code.co_freevars) | set(code.co_names)
    consts = {c for c in code.co_consts if type(c) in (int, float, complex, str)}
    fit = []
    for c in candidates:
        names, nums = set(), set()
        for n in ast.walk(c.body):
            if isinstance(n, ast.Name):
                names.add(n.id)
            elif isinstance(n, ast.Attribute):
                names.add(n.attr)
            elif isinstance(n, ast.Constant):
                nums.add(n.value)
                if type(n.value) in (int, float, complex):
                    nums.add(-n.value)  # (`-1` is a constant of the code)
        if want <= names and consts <= nums:
            fit.append(c)
    fit = fit or candidates
    if len({ast.dump(c) for c in fit}) > 1:
        raise NoSourceError(
            f"cannot tell which of the lambdas at {filename}, line {line} "
            f"{getattr(fn, '__qualname__', 'the lambda')} is: they read the same names. Put "
            f"them on lines of their own, or make them named functions (def)"
        )
    return fit


def _argnames(node):
    a = node.args
    return [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]  # plain ast nodes


def _covers(node, positions):
    body = node.body
    lo = (body.lineno, body.col_offset)
    hi = (body.end_lineno, body.end_col_offset)
    return any(lo <= pos <= hi for pos in positions)
