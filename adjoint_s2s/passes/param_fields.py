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
only where no code of the user's can run in the function (after inlining), by a list of
what may, not of what may not:

- ``p`` is a positional parameter whose field kinds are known (a number, a complex, an
  array or a constant: str, bool, None), never rebound, and read only as ``p.attr`` of
  such fields: never passed, returned, compared, called or captured;
- every other argument is a number, an array or a constant, nothing is captured, and
  every default is plain data (exactly a number, bool, str, None, or a number array);
- every global the body names is NumPy, SciPy, math or cmath (a module or one of its
  functions) or plain data, every builtin it names is one of a short list (``abs``,
  ``min``, ``range``, ``len``, ``zip``...: no ``print``, whose stdout may be anyone's),
  and every call is of one of those, of a library function reached from such a module
  (not one that calls back a function it is given, ``np.vectorize``, ``minimize``, or
  installs a hook, ``np.seterrcall``), or a method of a value the body computed;
- the body writes no attribute of anything and has no nested function, lambda or class,
  no ``global``/``nonlocal``/``del``/``yield``, and NumPy has no error callback.

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

from ..kinds import ARRAY, COMPLEX, CONST, DICT_ITEMS, ITEMS, REAL, ROW_ITEMS, TUPLE_ITEMS, VECTOR, number_array

_SEQUENCES = (ITEMS, TUPLE_ITEMS, DICT_ITEMS, ROW_ITEMS)  # kinds.field_kinds' entries of list, tuple, dict arguments
_READABLE = (REAL, COMPLEX, ARRAY, CONST)  # the kinds of fields read, and of the other arguments
_REFUSED = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef, gast.Global, gast.Nonlocal,
            gast.Delete, gast.Yield, gast.YieldFrom, gast.Await, gast.Import, gast.ImportFrom)
_COMPUTED = (gast.Call, gast.BinOp, gast.UnaryOp)
_WRITING = frozenset(("__dict__", "__class__", "__setattr__", "__delattr__", "__getattribute__"))
_DATA = frozenset((int, float, complex, bool, str, bytes, type(None)))
_LIBRARIES = frozenset(("numpy", "scipy", "math", "cmath"))
# builtins that run no code of the user's on numbers and arrays (print has a hook: stdout)
_BUILTINS = frozenset((
    "abs", "min", "max", "sum", "len", "range", "float", "int", "bool", "complex", "round", "pow",
    "divmod", "enumerate", "zip", "reversed", "list", "tuple", "any", "all", "isinstance",
))
# library functions that call a function they are given, or install one to be called
_CALLING_BACK = frozenset((
    "vectorize", "frompyfunc", "apply_along_axis", "apply_over_axes", "piecewise", "fromfunction",
    "seterrcall", "seterr", "errstate", "load", "loads", "loadtxt", "genfromtxt", "fromregex",
    "set_printoptions", "printoptions", "minimize", "minimize_scalar", "root", "root_scalar",
    "quad", "dblquad", "tplquad", "nquad", "solve_ivp", "odeint", "brentq", "newton", "fsolve",
    "least_squares", "curve_fit", "differential_evolution", "basinhopping",
))


class Undo(Exception):
    """The code generated with the fields read at the entry still dispatches at run time:
    transform the function again without (transform.py)."""


def read_fields_at_entry(node, fn, globals_, arg_kinds, cell_kinds, fields, taken):
    """Rewrite node (fn's tree, inlined) so that the fields of its record arguments are read
    once, at its entry, when that keeps the meaning (the module's docstring). fields: the
    cache key's ``((index, ((field, kind), ...)), ...)``. Returns ``{local name: (param,
    field, kind)}`` of the reads put in, empty when the pass does not apply."""
    params = [a.id for a in node.args.posonlyargs + node.args.args]
    records = {params[i]: dict(fs) for i, fs in fields
               if i < len(params) and fs[0][0] not in _SEQUENCES and fs[0][0] != VECTOR}
    if not records or any(k not in _READABLE for i, k in enumerate(arg_kinds)
                          if i >= len(params) or params[i] not in records):
        return {}
    if cell_kinds or node.args.vararg or node.args.kwarg or np.geterrcall() is not None:
        return {}  # (captured values, and NumPy's error callback, could be anything)
    if not all(plain_data(d) for d in (fn.__defaults__ or ()) + tuple((fn.__kwdefaults__ or {}).values())):
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


def known_items(node, fn, globals_, arg_kinds, cell_kinds, fields):
    """{list, tuple or dict parameter: (the kind of all its items, ITEMS, TUPLE_ITEMS or DICT_ITEMS)} of the
    cache key's ``(index, ((ITEMS, kind),))`` entries (kinds.field_kinds), where the items and the length of
    such an argument stay as they were at the entry for the whole call: by the
    conditions under which this pass reads fields at the entry (the module's docstring),
    no code of the user's runs and nothing reaches the lists but through their names.
    (activity.py then takes the kinds for the parameters read only by item.)"""
    params = [a.id for a in node.args.posonlyargs + node.args.args]
    lists = {params[i]: fs[0][::-1] for i, fs in fields if i < len(params) and fs[0][0] in _SEQUENCES}
    if not lists or any(k not in _READABLE for i, k in enumerate(arg_kinds)
                        if i >= len(params) or params[i] not in lists):
        return {}
    if cell_kinds or node.args.vararg or node.args.kwarg or np.geterrcall() is not None:
        return {}
    if not all(plain_data(d) for d in (fn.__defaults__ or ()) + tuple((fn.__kwdefaults__ or {}).values())):
        return {}
    return lists if _reads(node, {}, fn, globals_) is not None else {}


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
        if isinstance(n, gast.Call) and not _plain_call(n.func, local, fn, globals_):
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


def _plain_call(func, local, fn, globals_):
    """May the call of func run nothing user-written? A builtin of _BUILTINS, a function
    of NumPy, SciPy, math or cmath reached from a module global (not one that takes a
    callback or installs a hook), or a method of a value the body computed (numbers and
    arrays only, by what the rest of the checks let in)."""
    if isinstance(func, gast.Name):
        return func.id not in local and _plain_global(func.id, fn, globals_, call=True)
    path = []
    while isinstance(func, gast.Attribute):
        path.append(func.attr)
        func = func.value
    if not path:
        return False  # (FUNCS[0](x), f()(x): whatever they hold)
    if func.__class__ in _COMPUTED:
        return True  # a method of what the body computed (`np.tanh(z).sum()`), whose parts the walk checks
    if not isinstance(func, gast.Name):
        return False
    if func.id in local:
        return True  # a method of a local value (x.sum(), A.T.dot(b))
    v = globals_.get(func.id)
    if not isinstance(v, types.ModuleType):
        return False  # a method of a global object: the user's, maybe
    for attr in reversed(path):
        v = getattr(v, attr, None)
    return v is not None and _library_callable(v)


def _plain_global(name, fn, globals_, call=False):
    """Does the global or builtin `name` hold nothing user-written: NumPy, SciPy, math or
    cmath (the module or one of its functions), data of a plain type (exactly int,
    float, complex, bool, str, bytes, None, a NumPy number, a number array), or a
    builtin of _BUILTINS?"""
    if name in globals_:
        v = globals_[name]
    else:
        bi = fn.__globals__.get("__builtins__", builtins)
        bi = bi if isinstance(bi, dict) else vars(bi)
        return name in bi and name in _BUILTINS and bi[name] is getattr(builtins, name, None)
    if isinstance(v, types.ModuleType):
        return v.__name__.split(".")[0] in _LIBRARIES
    if plain_data(v):
        return not call
    return callable(v) and _library_callable(v)


def plain_data(v):
    """Is v data whose operations run no user code: exactly a number, a bool, a string,
    None, a NumPy number, or a NumPy array of numbers?"""
    t = type(v)
    if t in _DATA:
        return True
    if t is np.ndarray:
        return number_array(v)
    return isinstance(v, (np.number, np.bool_)) and t.__module__ == "numpy"


def _library_callable(v):
    """A function or type of NumPy, SciPy, math or cmath, other than those that call back
    into the user's code or install a hook."""
    home = getattr(v, "__module__", None) or ""
    if not isinstance(home, str) or home.split(".")[0] not in _LIBRARIES:
        return False
    name = getattr(v, "__name__", None)
    if name in _CALLING_BACK:
        return False
    # the library's own function or type, found under its name in its module: not an
    # object a library class made of the user's function (`np.vectorize(f)` has NumPy's
    # module and f's name)
    mod = sys.modules.get(home)
    return isinstance(name, str) and mod is not None and getattr(mod, name, None) is v


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
