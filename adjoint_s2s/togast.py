"""ast -> gast, as ``gast.ast_to_gast`` converts, in a sixth of its time; and a private
gast copy of a function straight from its plain parse (``convert_noting``).

A function's tree is converted on its first transform; for a long function that was a
large part of the first call (a 640-line function: ~25 ms of gast's converter against
~9 ms for parsing the whole file), and the transform then copied the converted tree
(~9 ms more), which it rewrites in place. ``convert_noting`` makes the private tree by
converting the cached plain parse each time (~11 ms), noting on the way what the copy
noted (the names, whether check would reject a node).

Two converters, giving gast's tree node for node, locations and field order included:

* the fast one: a conversion per ast class, made on first use: the parsed node's dict
  taken over whole (its fields, then its locations: gast's order), the fields that may
  hold a node converted; gast's special cases of this Python (``visit_Name``,
  ``visit_arg``, ``visit_ExceptHandler``, ``visit_FunctionDef``, ``visit_ClassDef``)
  written out; any other special case of gast's left to gast's way. A probe at import
  compares it with gast's way; on any difference only gast's way is used;
* gast's way: gast's converter (a subclass), its dispatch by a class looked up once and
  its generic case filling one dict, gast's special cases kept as gast's code.

tests/test_togast.py compares both with gast over the project's and the standard
library's sources. Where the installed gast has no converter class to extend,
``gast.ast_to_gast`` itself is used.
"""
import ast

import gast

_MISSING = object()

try:
    from gast.ast3 import Ast3ToGAst as _GastConverter
except ImportError:  # (a gast laid out otherwise: its own converter, at its own speed)
    _GastConverter = None


def _generic_for(cls):
    """The conversion of an ast node of class cls with no gast special case."""
    target = getattr(gast, cls.__name__, None)
    if target is None:  # a node gast does not have: gast's generic_visit gives None
        return lambda self, node: None
    new = target.__new__
    fields = tuple(cls._fields)
    attributes = tuple(cls._attributes)

    def convert(self, node):
        out = new(target)
        d = out.__dict__
        visit = self._visit
        for f in fields:
            v = getattr(node, f, _MISSING)
            if v is not _MISSING:
                d[f] = visit(v)
        for a in attributes:
            v = getattr(node, a, _MISSING)
            if v is not _MISSING:
                d[a] = v
        return out

    return convert


if _GastConverter is not None:
    _DISPATCH = {}  # ast class -> function(converter, node)
    _GENERIC = {}  # ast class -> its generic conversion (for gast's special cases' fallback)
    _AST = ast.AST

    class _Converter(_GastConverter):
        def visit(self, node):
            cls = node.__class__
            f = _DISPATCH.get(cls)
            if f is None:
                special = getattr(_GastConverter, "visit_" + cls.__name__, None)
                f = _DISPATCH[cls] = special if special is not None else _generic_for(cls)
            return f(self, node)

        def generic_visit(self, node):  # (gast's special cases fall back to it)
            cls = node.__class__
            f = _GENERIC.get(cls)
            if f is None:
                f = _GENERIC[cls] = _generic_for(cls)
            return f(self, node)

        def _visit(self, node):
            cls = node.__class__
            if cls is list:
                return [self._visit(n) for n in node]
            if isinstance(node, _AST):
                return self.visit(node)
            return node

    def _gast_way(node):
        return _Converter().visit(node)

else:  # pragma: no cover - depends on the installed gast
    _gast_way = gast.ast_to_gast


# ----- a private gast copy of a function, straight from its plain ast ----------------------------
#
# The transform rewrites its tree in place, so each transform needs a tree of its own. Converting
# the cached plain ast node afresh gives one, in about the time copying a cached gast tree takes
# (source.fresh_copy_noting), where converting and then copying cost twice that on a function's
# first transform. Like the copy, the conversion notes the names it meets and which of
# given classes are in the tree (what check and names_in would find).

_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


class _Table(dict):
    """ast class -> its conversion, function(node, table, names, seen) -> gast node, for one
    set of flagged gast classes (self.flag)."""

    def __init__(self, flag):
        super().__init__()
        self.flag = flag

    def __missing__(self, cls):
        f = self[cls] = _conversion(cls, self.flag)
        return f


def _conversion(cls, flag):
    name = cls.__name__
    target = getattr(gast, name, None)
    special = getattr(_GastConverter, "visit_" + name, None)
    if special is getattr(ast.NodeTransformer, "visit_" + name, None):
        special = None  # (ast's visit_Constant only keeps visit_Num and the like working)
    if special is None:
        return _generic(target, cls, target in flag) if target is not None else _other
    # gast's special cases of Python 3.8 to 3.11, written out (the probe at import checks
    # them); any other goes gast's way
    if name in ("Name", "arg"):
        return _name if name == "Name" else _arg
    if name in ("FunctionDef", "AsyncFunctionDef", "ClassDef"):
        return _with_type_params(target, cls, target in flag)
    if name == "ExceptHandler":
        return _handler(target, cls, target in flag)
    return _other


def _generic(target, cls, flagged):
    new = target.__new__
    if not cls._fields and not cls._attributes and not flagged:  # Load, Add...: no content
        return lambda node, table, names, seen: new(target)
    # the fields that may hold a node or a list (copied: never the plain tree's list)
    fields = tuple(f for f in cls._fields if f not in _PLAIN)

    def convert(node, table, names, seen):
        out = new(target)
        d = out.__dict__
        old = node.__dict__
        d.update(old)  # (a parsed node's fields, then its locations: gast's order)
        for f in fields:
            v = old.get(f)
            if v.__class__ is list:
                d[f] = [table[x.__class__](x, table, names, seen) if isinstance(x, _AST) else x for x in v]
            elif isinstance(v, _AST):
                d[f] = table[v.__class__](v, table, names, seen)
        if flagged:
            seen.append(target)
        return out

    return convert


def _name(node, table, names, seen):  # gast's visit_Name
    old = node.__dict__
    ctx = old["ctx"].__class__
    i = old["id"]
    names.add(i)
    out = _NEW_NAME(_NAME)
    try:
        out.__dict__.update(
            id=i, ctx=_NEW_NAME(_CONTEXTS[ctx]), annotation=None, type_comment=None, lineno=old["lineno"],
            col_offset=old["col_offset"], end_lineno=old["end_lineno"], end_col_offset=old["end_col_offset"])
    except KeyError:  # (not a parsed node: locations missing, a context of its own)
        out.__dict__.clear()
        out.__dict__.update(id=i, ctx=table[ctx](old["ctx"], table, names, seen),
                            annotation=None, type_comment=None)
        _locate(out, old)
    return out


def _arg(node, table, names, seen):  # gast's visit_arg: a Name of context Param
    old = node.__dict__
    ann = old.get("annotation")
    out = _NEW_NAME(_NAME)
    names.add(old["arg"])
    out.__dict__.update(
        id=old["arg"], ctx=gast.Param(),
        annotation=table[ann.__class__](ann, table, names, seen) if isinstance(ann, _AST) else ann,
        type_comment=old.get("type_comment"))
    _locate(out, old)
    return out


def _locate(out, old):  # ast.copy_location of a parsed node
    d = out.__dict__
    for a in _LOCATION:
        v = old.get(a, _MISSING)
        if v is not _MISSING and (v is not None or a[0] == "e"):
            d[a] = v


def _with_type_params(target, cls, flagged):  # gast's visit_FunctionDef, visit_ClassDef
    generic = _generic(target, cls, flagged)
    fields = tuple(cls._fields)

    def convert(node, table, names, seen):
        got = generic(node, table, names, seen).__dict__
        out = target.__new__(target)
        d = out.__dict__
        for f in fields:  # (gast's order: type_params last of the fields)
            if f in got:
                d[f] = got.pop(f)
        d["type_params"] = []
        d.update(got)
        return out

    return convert


def _handler(target, cls, flagged):  # gast's visit_ExceptHandler: the name, a Name
    generic = _generic(target, cls, flagged)

    def convert(node, table, names, seen):
        out = generic(node, table, names, seen)
        name = node.__dict__.get("name")
        if name:
            names.add(name)
            out.__dict__["name"] = gast.Name(name, gast.Store(), None, None)
        return out

    return convert


def _other(node, table, names, seen):
    """A class gast converts in a way of its own that is not copied here: gast's converter,
    then a walk noting what the fast conversions note."""
    out = _gast_way(node)
    for n in gast.walk(out) if out is not None else ():  # (None: a class gast lacks)
        if n.__class__ is _NAME:
            names.add(n.id)
        elif n.__class__ in table.flag:
            seen.append(n.__class__)
    return out


_AST = ast.AST
_NAME = gast.Name
_PLAIN = frozenset(
    ("id", "type_comment", "kind", "attr", "arg", "module", "level", "conversion", "is_async", "name",
     "lineno", "col_offset", "end_lineno", "end_col_offset"))
_CONTEXTS = {ast.Load: gast.Load, ast.Store: gast.Store, ast.Del: gast.Del}
_NEW_NAME = gast.Name.__new__
_TABLES = {}


def convert_noting(node, flag):
    """(node's gast tree, the ids of every Name in it, the gast classes of flag that are
    in it): ``source.fresh_copy_noting(ast_to_gast(node), flag)`` in one walk.
    None when this gast's conversion is not the one copied here (then use that)."""
    if not _FAST_AGREES:
        return None
    table = _TABLES.get(flag)
    if table is None:
        table = _TABLES[flag] = _Table(flag)
    names, seen = set(), []
    out = table[node.__class__](node, table, names, seen)
    return out, names, frozenset(seen)


def _agrees():
    """Whether the fast conversion gives gast's tree for a probe of the syntax it handles."""
    if _GastConverter is None:
        return False
    probe = ast.parse(
        "@d\ndef f(x: int, /, y=1, *a, k=2, **kw) -> float:\n"
        "    class C(B, m=1):\n        pass\n"
        "    try:\n        y = x[1:2, ::3] + g(*a, k=k).t\n"
        "    except E as e:\n        del e\n    except:\n        raise\n"
        "    return [z for z in {x: 1} if z], lambda q, *r: q, f'{x!r:>{y}}'\n")
    try:
        got = convert_noting.__wrapped__(probe)
    except Exception:  # pragma: no cover - a gast laid out otherwise
        return False
    return gast.dump(got, include_attributes=True) == gast.dump(_gast_way(probe), include_attributes=True)


def _convert_plain(node):
    table = _Table(frozenset())
    return table[node.__class__](node, table, set(), [])


convert_noting.__wrapped__ = _convert_plain
_FAST_AGREES = _agrees()
# ast -> gast: the conversion above where it agrees with gast's (a node with no name
# noted: its cost), else gast's own way made fast
ast_to_gast = _convert_plain if _FAST_AGREES else _gast_way
