"""The fields of a record argument read once, at the entry, as variables of known kinds.

``def loss(p, x): ... p.k * x ... p.c * x ...`` with ``p`` an instance of the user's
class (a dataclass of parameters, say) reads ``p.k`` and ``p.c`` in every iteration; the
object has no static kind, so every operation on what it reads was dispatched at run time
(a pullback closure per operation, 80 times the plain call). The dispatch cache knows the
kinds of such an argument's fields (``kinds.field_kinds``, part of the cache key and
checked at each call); with them, this pass reads each field once, at the entry
(``p_k = p.k``), and the function computes on variables of known kinds. The adjoint of
``p`` is then assembled once per call from those of the variables.

Reading at the entry instead of at each use keeps the meaning exactly only where nothing
in between can rebind the field, and nothing reads it in another way. So the pass applies
only when (after inlining):

- ``p`` is a positional parameter whose field kinds are known (a number, a complex, an
  array or a constant: str, bool, None), never rebound, and read only as ``p.attr`` of
  such fields: never passed, returned, compared, called or captured;
- every other argument and captured variable is a number, an array or a constant (no
  object whose methods or operators could run the user's code), and every global the
  body names is a module, a number, an array, a constant, or a builtin or library
  function (no function or class of the user's: nothing user-written runs);
- the body writes no attribute of anything, has no nested function, lambda or class, no
  ``global``/``nonlocal``/``del``/``yield``, and names none of ``setattr``, ``vars``,
  ``exec``, ``eval``, ``globals``, ``locals``, ``__dict__``.

transform.py then checks the generated code: if anything is still dispatched at run time
besides the reads themselves, the function is transformed again without this pass
(``Undo``). The fields are what Python's attribute lookup finds in the instance dict (the
dispatch key says so: no ``__getattribute__``/``__getattr__`` of the class's own, and a
field that a data descriptor of the class would shadow has no readable kind there).
"""
import builtins
import sys
import types

import gast
import numpy as np

from ..kinds import ARRAY, COMPLEX, CONST, REAL
from ..runtime.sites import is_library_file

_READABLE = (REAL, COMPLEX, ARRAY, CONST)
_PLAIN_KINDS = _READABLE
_REFUSED = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef, gast.Global, gast.Nonlocal,
            gast.Delete, gast.Yield, gast.YieldFrom, gast.Await, gast.Import, gast.ImportFrom)
_WRITING = frozenset(("setattr", "delattr", "vars", "exec", "eval", "globals", "locals", "__import__",
                      "compile", "__dict__", "__class__", "__setattr__", "__delattr__", "object"))
_DATA = (int, float, complex, bool, str, bytes, type(None), np.ndarray, np.generic)


class Undo(Exception):
    """The code generated with the fields read at the entry still dispatches at run time:
    transform the function again without (transform.py)."""


def read_fields_at_entry(node, fn, globals_, arg_kinds, cell_kinds, fields, taken):
    """Rewrite node (fn's tree, inlined) so that the fields of its record arguments are read
    once, at its entry, when that keeps the meaning (the module's docstring). fields: the
    cache key's ``((index, ((field, kind), ...)), ...)``. Returns ``{local name: (param,
    field, kind)}`` of the reads put in, empty when the pass does not apply."""
    params = [a.id for a in node.args.posonlyargs + node.args.args]
    records = {params[i]: dict(fs) for i, fs in fields if i < len(params)}
    if not records or any(k not in _PLAIN_KINDS for i, k in enumerate(arg_kinds)
                          if i >= len(params) or params[i] not in records):
        return {}
    if any(k not in _PLAIN_KINDS for k in cell_kinds) or node.args.vararg or node.args.kwarg:
        return {}
    used = _reads(node, records, fn, globals_)
    if not used:
        return {}
    out, names = {}, {}
    for p, attrs in used.items():
        for attr in sorted(attrs, key=attrs.get):
            name = _fresh(f"{p}_{attr}", taken)
            names[(p, attr)] = name
            out[name] = (p, attr, records[p][attr])
    _Replace(names).visit(node)
    at = 1 if node.body and _is_docstring(node.body[0]) else 0
    first = node.body[at] if at < len(node.body) else node
    line = getattr(first, "lineno", None) or fn.__code__.co_firstlineno  # (errors name the line)
    reads = []
    for (p, attr), name in names.items():
        s = gast.Assign(targets=[gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)],
                        value=gast.Attribute(value=gast.Name(id=p, ctx=gast.Load(), annotation=None,
                                                             type_comment=None), attr=attr, ctx=gast.Load()),
                        type_comment=None)
        s.lineno = s.end_lineno = line
        s.col_offset = s.end_col_offset = 0
        s.origin_text = f"{p}.{attr}: read once, here (nothing in the function rebinds it)"
        reads.append(s)
    node.body[at:at] = reads
    return out


def _reads(node, records, fn, globals_):
    """{param: [fields read]} when every use of the records is a read of a field of a
    readable kind and the body may not rebind any (the module's docstring), else None."""
    used = {}
    nodes = [n for s in node.body for n in gast.walk(s)]
    local = {n.id for n in nodes if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
    if local & set(records):
        return None  # a record's parameter rebound
    local |= {a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
    parents = {}
    for n in nodes:
        for child in gast.iter_child_nodes(n):
            parents[id(child)] = n
    for n in nodes:
        if isinstance(n, _REFUSED):
            return None
        if isinstance(n, gast.Attribute):
            if not isinstance(n.ctx, gast.Load) or n.attr in _WRITING:
                return None
        elif isinstance(n, gast.Name):
            if n.id in records:
                parent = parents.get(id(n))
                if not isinstance(parent, gast.Attribute) or parent.value is not n:
                    return None  # p itself: passed, returned, compared, called, captured
                if records[n.id].get(parent.attr) not in _READABLE:
                    return None
                got = used.setdefault(n.id, {})
                at = (getattr(n, "lineno", 0) or 0, getattr(n, "col_offset", 0) or 0)
                if parent.attr not in got or at < got[parent.attr]:
                    got[parent.attr] = at  # (read at the entry in the order of the source)
                call = parents.get(id(parent))
                if isinstance(call, gast.Call) and call.func is parent:
                    return None  # p.f(...): a field called
            elif isinstance(n.ctx, gast.Load) and n.id not in local and not _plain_global(n.id, fn, globals_):
                return None
    return used


def _plain_global(name, fn, globals_):
    """Does the global or builtin `name` hold nothing user-written: a module, data, or a
    builtin or library function or type?"""
    if name in globals_:
        v = globals_[name]
    else:
        bi = fn.__globals__.get("__builtins__", builtins)
        bi = bi if isinstance(bi, dict) else vars(bi)
        if name not in bi or name in _WRITING:
            return False
        v = bi[name]
    if isinstance(v, types.ModuleType):
        return not _users_module(v)
    if isinstance(v, _DATA):
        return True
    if isinstance(v, (types.BuiltinFunctionType, np.ufunc)):
        return getattr(v, "__name__", "") not in _WRITING
    if isinstance(v, types.FunctionType):
        return is_library_file(v.__code__.co_filename)
    if callable(v):  # a class, or a callable object (np.mean): where it was defined
        home = sys.modules.get(getattr(v, "__module__", None) or "")
        return home is builtins or home is not None and not _users_module(home) and \
            getattr(home, "__file__", None) is not None
    return False


def _users_module(m):
    file = getattr(m, "__file__", None)
    return file is not None and not is_library_file(file)


def _is_docstring(s):
    return isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant) and isinstance(s.value.value, str)


def _fresh(base, taken):
    name, i = base, 1
    while name in taken:
        name, i = f"{base}_{i}", i + 1
    taken.add(name)
    return name


class _Replace(gast.NodeTransformer):
    def __init__(self, names):
        self.names = names

    def visit_Attribute(self, node):
        v = node.value
        if isinstance(v, gast.Name) and isinstance(node.ctx, gast.Load):
            name = self.names.get((v.id, node.attr))
            if name is not None:
                return gast.copy_location(gast.Name(id=name, ctx=gast.Load(), annotation=None,
                                                    type_comment=None), node)
        self.generic_visit(node)
        return node
