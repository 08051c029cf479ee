"""ast -> gast, as ``gast.ast_to_gast`` converts, in a third of its time.

A function's tree is converted on its first transform; for a long function that was a
large part of the first call (a 640-line function: ~25 ms of gast's converter against
~9 ms for parsing the whole file). gast's converter is a ``NodeTransformer`` whose
generic case builds each node through keyword arguments after a ``hasattr`` per field,
and whose dispatch concatenates a method name per node. This converter is gast's own
(a subclass: every special case of the installed gast, ``visit_Name``, ``visit_arg``,
``visit_FunctionDef``..., is gast's code), with two parts made fast:

* the dispatch: a node's class is looked up once, giving gast's ``visit_<Class>`` if it
  has one, else the generic conversion made for that class;
* the generic conversion: the gast node of the same name is made empty and its fields
  and location attributes filled in one dict, the fields a node lacks left out (as
  gast's ``hasattr`` leaves them out).

Its result equals gast's node for node (tests/test_togast.py compares both over the
project's and the standard library's sources). Where the installed gast has no
converter class to extend, ``gast.ast_to_gast`` itself is used.
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

    def ast_to_gast(node):
        return _Converter().visit(node)

else:  # pragma: no cover - depends on the installed gast
    ast_to_gast = gast.ast_to_gast
