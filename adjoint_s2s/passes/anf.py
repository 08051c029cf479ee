"""Normalise a function into the small set of statement shapes the reverse pass knows.

The second pass: it rewrites the function's tree in place (a private copy), taking
fresh names from the ``Namer`` it is given; it reads the names that resolve statically
(modules, classes) and nothing of the kinds or the activity.

Before::

    def f(x, y):
        if x > 0:
            return math.sin(x) * y
        z = [x * v for v in (1.0, 2.0)]
        return sum(z)

After (names abridged)::

    def f(x, y):
        gt = x > 0
        if gt:
            sin_x = math.sin(x)
            _retval = sin_x * y
        else:
            z = []
            for v in (1.0, 2.0):
                mul = x * v
                z.append(mul)
            _retval = sum(z)
        return _retval

The invariant afterwards (what ``reverse.py`` may assume), for the function body and
every nested block:

* ``name = E`` where E is an atom (a Name or a Constant), ``a OP b``, ``OP a``,
  ``a CMP b``, a call ``f(atoms, *atom, k=atom, **atom)`` whose callee is a Name, an
  attribute chain ``mod.sub.fn`` or a method ``atom.meth``, ``atom.attr``,
  ``atom[index]`` (index made of atoms and slices of atoms), a tuple/list/set/dict
  display of atoms, a lambda (a closure, kept whole), or an f-string (inactive);
* ``atom[index] = atom``, ``atom.attr = atom``, and ``atom.meth(atoms)`` as a statement;
* ``if name: ... else: ...``; ``for name in atom: ...``; ``while True: ...``;
* ``break`` and ``continue`` only in tail position of a loop body (nothing of the
  iteration runs after them), and exactly one ``return atom``, the last statement;
* nested ``def`` (a closure), ``assert``, ``import``, ``raise``.

Every statement that starts a user statement carries ``origin``: the source text of the
user statement it came from, for the comments of the generated code.
"""
import gast

from .. import templates as T
from ..errors import UnsupportedSyntaxError
from ..naming import BINOP_HINTS, child_fields, names_in
from .exits import ControlFlow
from .comprehension_scope import ComprehensionRename
from .walrus import WalrusOrder
from .lazy_loops import LazyLoops
from .targets import Targets
from .whole import ROOTS as WHOLE_ROOTS, fold_signs, hint as whole_hint, operations

def _hint(node):
    """A readable temporary name for the value of node."""
    if isinstance(node, gast.Call):
        f = node.func
        fname = f.attr if isinstance(f, gast.Attribute) else getattr(f, "id", "call")
        if node.args and isinstance(node.args[0], gast.Name) and len(node.args) == 1:
            return f"{fname}_{node.args[0].id}"
        return fname
    if isinstance(node, gast.BinOp):
        return BINOP_HINTS.get(type(node.op), "t")
    if isinstance(node, gast.UnaryOp):
        return "neg" if isinstance(node.op, gast.USub) else "t"
    if isinstance(node, gast.Attribute):
        return node.attr
    if isinstance(node, gast.Subscript):
        return f"{node.value.id}_i" if isinstance(node.value, gast.Name) else "item"
    if isinstance(node, gast.Compare):
        return "cond"
    if isinstance(node, (gast.Tuple, gast.List)):
        return "seq"
    if isinstance(node, gast.Dict):
        return "dct"
    if isinstance(node, gast.Lambda):
        return "fn"
    return "t"


def _is_atom(node):
    return node.__class__ in _ATOMS


_ATOMS = frozenset((gast.Name, gast.Constant))


def _temp_name(id_, ctx_class=gast.Load):
    """T.name(id_) (T.store(id_) with gast.Store), built without gast's keyword
    constructor: the normaliser makes one or two per temporary."""
    node = _NAME_NEW(gast.Name)
    node.__dict__.update(id=id_, ctx=ctx_class.__new__(ctx_class), annotation=None, type_comment=None)
    return node


def _temp_assign(id_, value):
    """T.assign(id_, value): `id_ = value`, built as _temp_name builds a name."""
    node = _ASSIGN_NEW(gast.Assign)
    node.__dict__.update(targets=[_temp_name(id_, gast.Store)], value=value, type_comment=None)
    return node


def _node(cls, **fields):
    """cls(**fields), without gast's generic constructor (the fields set as given, as
    it sets them): the normaliser builds a few nodes per statement."""
    node = cls.__new__(cls)
    node.__dict__.update(fields)
    return node


_NAME_NEW = gast.Name.__new__
_ASSIGN_NEW = gast.Assign.__new__


def _reads_name(value, name):
    """Does a flattened expression (atoms as children) read name?"""
    if isinstance(value, (gast.Lambda, gast.JoinedStr)):
        return name in names_in(value, gast.Load)
    for field in child_fields(value.__class__):  # contexts and operators read nothing
        v = getattr(value, field, None)
        for child in v if v.__class__ is list else (v,):
            if child.__class__ is gast.Name:
                if child.id == name:
                    return True
            elif isinstance(child, gast.AST) and child.__class__ is not gast.Constant:
                if name in names_in(child, gast.Load):
                    return True
    return False


def _fold_constant(node):
    """-1.0 and +2 are constants, not operations."""
    if (
        isinstance(node, gast.UnaryOp)
        and isinstance(node.op, (gast.USub, gast.UAdd))
        and isinstance(node.operand, gast.Constant)
        and isinstance(node.operand.value, (int, float, complex))
        and not isinstance(node.operand.value, bool)
    ):
        v = node.operand.value
        return T.const(-v if isinstance(node.op, gast.USub) else v)
    return None


def _static_chain(node):
    """True for Name and Name.attr.attr (a callee looked up by name)."""
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name)


def _chain_root(node):
    while isinstance(node, gast.Attribute):
        node = node.value
    return node.id


def _imported_names(fn_node):
    """Names the function binds with import statements (modules, or what they hold).
    Imports are statements: only the statement lists are walked, never an expression."""
    out = set()
    stack = [fn_node]
    while stack:
        n = stack.pop()
        if isinstance(n, (gast.Import, gast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in n.names}
            continue
        for field in _BODIES:
            v = getattr(n, field, None)
            if v:
                stack.extend(x for x in v if isinstance(x, _STATEMENT_LIKE))
    return out


# the fields that hold statements (and except clauses, match cases): never an expression's
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


# what holds statements: a statement's body, an except clause, a match case
_STATEMENT_LIKE = (gast.stmt, gast.excepthandler, gast.match_case) if hasattr(gast, "match_case") else (
    gast.stmt, gast.excepthandler)


_SHORT_CIRCUITS = frozenset(("any", "all", "next"))


class Normalizer(Targets, WalrusOrder, LazyLoops):
    def __init__(self, namer, filename, source_lines, line_offset=0, static_names=None, plain_enumerate=False):
        self.namer = namer
        self.plain_enumerate = plain_enumerate  # `enumerate` is the builtin (targets.py)
        self.short_circuits = frozenset()  # of any, all, next, map, filter: those that are the builtins
        self.zip_lists = frozenset()  # parameters a loop over zip(...) of reads by position (targets.py)
        self.dict_params = frozenset()  # dict parameters a loop over .items() of reads by key (targets.py)
        # names that hold a module or a class (`np` in `np.linalg.norm(x)`): a chain from
        # one of them names a callee; from any other name it reads a value
        self.static_names = frozenset(static_names or ())
        self.filename = filename
        self.source_lines = source_lines
        self.line_offset = line_offset
        self.flag_count = 0
        # the temporaries of `a if t else b` and `a or b`: the object of one of the values
        # (reverse/mutation.py's note_alias follows them as it follows the user's names)
        self.picks = set()
        # the names taken for numbers, its temporaries of whole arithmetic added (whole.py):
        # None, nothing is kept whole
        self.numbers = None
        self.math_call = None  # whole.math_calls' test of `m.f(...)`
        self.wholes = []  # the statements `t = e` with e kept whole

    # ----- expressions -----------------------------------------------------------
    def atom(self, node, out, hint=None):
        """Emit statements computing node into out; return an atom for its value."""
        cls = node.__class__
        if cls in _ATOMS:
            return self.snapshot(node, out) if self.walrus else node
        if cls is gast.UnaryOp:  # (only a sign of a number folds)
            folded = _fold_constant(node)
            if folded is not None:
                return folded
        if self.numbers is not None and cls in WHOLE_ROOTS and self.kept_whole(node):
            tmp = self.namer.fresh(hint or whole_hint(node))
            self.namer.shown[tmp] = node
            self.whole(tmp, node, out)
            return _temp_name(tmp)
        value = self.flat(node, out)
        if value.__class__ in _ATOMS:
            return value
        tmp = self.namer.fresh(hint or _hint(value))
        self.namer.shown[tmp] = node
        out.append(_temp_assign(tmp, value))
        return _temp_name(tmp)

    def kept_whole(self, node):
        """Is node arithmetic on numbers of two operations or more, kept whole (whole.py)?"""
        return (operations(node, self.numbers, self.math_call) >= 2
                and not getattr(node, "augmented", False) and not getattr(node, "element_augmented", False))

    def whole(self, target, node, out, names=None, calls=None):
        """`target = node`, node kept whole: marked for the passes after this one (names,
        calls: what fold_signs noted of node, when it has run)."""
        if names is None:
            names, calls = set(), []
            node = fold_signs(node, names, calls)
        node.whole = (frozenset(names), tuple(calls))  # (what activity and whole.verify ask)
        s = _temp_assign(target, node)
        out.append(s)
        self.wholes.append(s)
        self.numbers.add(target)

    def flat(self, node, out):
        """Return node with atom children (emitting their computation into out)."""
        if node.__class__ in _ATOMS:
            return node
        if isinstance(node, gast.BinOp):  # (most of them)
            out_ = _node(gast.BinOp, left=self.atom(node.left, out), op=node.op,
                         right=self.atom(node.right, out))
            if getattr(node, "augmented", False):
                out_.augmented = True
            if getattr(node, "element_augmented", False):
                out_.element_augmented = True  # (check_held_elsewhere, reverse/in_place.py)
            return out_
        a = lambda n: self.atom(n, out)  # noqa: E731
        if isinstance(node, gast.UnaryOp):
            return gast.UnaryOp(op=node.op, operand=a(node.operand))
        if isinstance(node, gast.Compare):
            return self.compare(node, out)
        if isinstance(node, gast.BoolOp):
            return self.boolop(node, out)
        if isinstance(node, gast.IfExp):
            return self.ifexp(node, out)
        if isinstance(node, gast.Call):
            return self.call(node, out)
        if isinstance(node, gast.Attribute):
            return _node(gast.Attribute, value=a(node.value), attr=node.attr, ctx=_node(gast.Load))
        if isinstance(node, gast.Subscript):
            out_ = gast.Subscript(
                value=a(node.value), slice=self.index(node.slice, out), ctx=gast.Load()
            )
            if getattr(node, "written_back", False):
                out_.written_back = True
            return out_
        if isinstance(node, (gast.Tuple, gast.List, gast.Set)):
            return self.display(node, out)
        if isinstance(node, gast.Dict):  # (Python's order: each key, then its value)
            keys, values = [], []
            for k, v in zip(node.keys, node.values):
                keys.append(None if k is None else a(k))
                values.append(a(v))
            return gast.Dict(keys=keys, values=values)
        if isinstance(node, (gast.ListComp, gast.GeneratorExp, gast.SetComp, gast.DictComp)):
            return self.comprehension(node, out)
        if isinstance(node, gast.NamedExpr):
            return self.named_expr(node, out)  # (walrus.py)
        if isinstance(node, gast.Lambda):
            self.defaults(node, out)
            return node  # a closure value
        if isinstance(node, gast.JoinedStr):
            return node  # an inactive string
        if isinstance(node, gast.Starred):
            return gast.Starred(value=a(node.value), ctx=gast.Load())
        if isinstance(node, gast.Slice):
            return self.index(node, out)
        raise UnsupportedSyntaxError(
            f"the expression {type(node).__name__}",
            self.filename,
            getattr(node, "lineno", 0) + self.line_offset,
            getattr(node, "col_offset", None),
        )

    def ifexp(self, node, out):
        """``a if t else b``: an if statement assigning one temporary."""
        tmp = self.namer.fresh("ifexp")
        self.picks.add(tmp)  # (another name for the object of either branch)
        test = self.atom(node.test, out)
        b1, b2 = [], []
        b1.append(T.assign(tmp, self.flat(node.body, b1)))
        b2.append(T.assign(tmp, self.flat(node.orelse, b2)))
        out.append(gast.If(test=test, body=b1, orelse=b2))
        return T.name(tmp)

    def display(self, node, out):
        """A tuple, list or set display with atom (or starred atom) elements."""
        elts = [
            gast.Starred(value=self.atom(e.value, out), ctx=gast.Load())
            if isinstance(e, gast.Starred)
            else self.atom(e, out)
            for e in node.elts
        ]
        if isinstance(node, gast.Set):
            return gast.Set(elts=elts)
        return type(node)(elts=elts, ctx=gast.Load())

    def defaults(self, fn, out):
        """Default values are computed where the function is made: atoms, so that their
        gradients (from the function's tangent) have somewhere to go."""
        fn.args.defaults = [self.atom(d, out, "default") for d in fn.args.defaults]
        fn.args.kw_defaults = [
            None if d is None else self.atom(d, out, "default") for d in fn.args.kw_defaults
        ]

    def index(self, node, out):
        if isinstance(node, gast.Slice):
            part = lambda p: None if p is None else self.atom(p, out)  # noqa: E731
            return gast.Slice(lower=part(node.lower), upper=part(node.upper), step=part(node.step))
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.index(e, out) for e in node.elts], ctx=gast.Load())
        return self.atom(node, out)

    def call(self, node, out):
        func = node.func
        if (func.__class__ is gast.Name and func.id in _SHORT_CIRCUITS and func.id in self.short_circuits
                and node.args and not node.keywords and node.args[0].__class__ is gast.GeneratorExp
                and len(node.args[0].generators) == 1):
            rest = node.args[1:]
            if func.id == "next" and len(rest) <= 1 and all(d.__class__ in _ATOMS for d in rest):
                return self.first_item(node.args[0], rest[0] if rest else None, out)
            if func.id != "next" and not rest:
                return self.short_circuit(node.args[0], out, func.id == "any")
        if (func.__class__ is gast.Name and func.id == "sum" and "sum" in self.short_circuits and not node.keywords
                and 1 <= len(node.args) <= 2 and node.args[0].__class__ is gast.GeneratorExp
                and not any(g.is_async for g in node.args[0].generators)
                and all(type(getattr(a, "value", None)) in (int, float) for a in node.args[1:])):
            return self.total(node.args[0], node.args[1] if len(node.args) == 2 else T.const(0), out)
        if isinstance(func, gast.Attribute) and _static_chain(func) and (
            isinstance(func.value, gast.Name) or _chain_root(func) in self.static_names
        ):
            pass  # module.fn or obj.method: the chain is resolved by the reverse pass
        elif isinstance(func, gast.Attribute):
            # a method of a value read from an expression (A.T.sum()): the receiver gets a
            # name, so that its gradient has somewhere to go (super() gets its arguments)
            recv = func.value
            hint = f"{recv.value.id}_{recv.attr}" if (
                isinstance(recv, gast.Attribute) and isinstance(recv.value, gast.Name)
            ) else None
            func = gast.Attribute(value=self.atom(recv, out, hint), attr=func.attr, ctx=gast.Load())
        elif not isinstance(func, gast.Name):
            func = self.atom(func, out, "fn")
        if (isinstance(func, gast.Name) and func.id == "super" and not node.args
                and not node.keywords and self.first_param and "super" in self.static_names):
            node.args = [T.name("__class__"), T.name(self.first_param)]
        args = []
        for x in node.args:
            if isinstance(x, gast.Starred):
                args.append(gast.Starred(value=self.atom(x.value, out), ctx=gast.Load()))
            elif isinstance(x, (gast.GeneratorExp,)):
                args.append(self.atom(x, out, "gen"))
            else:
                args.append(self.atom(x, out))
        kws = [gast.keyword(arg=k.arg, value=self.atom(k.value, out)) for k in node.keywords]
        call = _node(gast.Call, func=func, args=args, keywords=kws)
        fname = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", None)
        if fname == "showgrad" and len(node.args) == 1 and not node.keywords:
            # showgrad prints the expression it watches, and where
            where = f"{self.filename.rsplit('/', 1)[-1]}:{getattr(node, 'lineno', 0) + self.line_offset}"
            label = (T.to_source(node.args[0]), where)
            call.keywords.append(gast.keyword(arg="label", value=T.const(label)))
        return call

    def compare(self, node, out):
        if len(node.ops) == 1:
            return gast.Compare(
                left=self.atom(node.left, out),
                ops=node.ops,
                comparators=[self.atom(node.comparators[0], out)],
            )
        # a < b < c  ->  t = a < b; if t: t = b < c   (b evaluated once, lazily)
        tmp = self.namer.fresh("cond")
        left = self.atom(node.left, out)
        block = out
        for i, (op, comp) in enumerate(zip(node.ops, node.comparators)):
            right = self.atom(comp, block)
            block.append(T.assign(tmp, gast.Compare(left=left, ops=[op], comparators=[right])))
            if i < len(node.ops) - 1:
                inner = []
                block.append(gast.If(test=T.name(tmp), body=inner, orelse=[]))
                block = inner
            left = right
        return T.name(tmp)

    def boolop(self, node, out):
        # a and b -> t = a; if t: t = b      a or b -> t = a; if not t: t = b
        tmp = self.namer.fresh("and_" if isinstance(node.op, gast.And) else "or_")
        self.picks.add(tmp)  # (another name for the object of one of the values)
        out.append(T.assign(tmp, self.flat(node.values[0], out)))
        block = out
        for v in node.values[1:]:
            inner = []
            inner.append(T.assign(tmp, self.flat(v, inner)))
            if isinstance(node.op, gast.And):
                block.append(gast.If(test=T.name(tmp), body=inner, orelse=[]))
            else:
                block.append(gast.If(test=T.name(tmp), body=[], orelse=inner))
            block = inner
        return T.name(tmp)

    def short_circuit(self, node, out, is_any):
        """any(e for x in xs if c) -> found = False; for x in xs: if c: if e: found = True;
        break (all: the first false item). Python stops at the item that decides: the
        items after it are never computed (they may raise, or never end)."""
        tmp = self.namer.fresh("any_true" if is_any else "all_true")
        out.append(T.assign(tmp, T.const(not is_any)))
        node = self._own_names(node)
        test = node.elt if is_any else gast.UnaryOp(op=gast.Not(), operand=node.elt)
        decided = [gast.If(test=test, body=[T.assign(tmp, T.const(is_any)), gast.Break()], orelse=[])]
        out.extend(self.stmt(self._stopping_loop(node, decided)))
        return T.name(tmp)

    def total(self, node, start, out):
        """sum(e for x in xs if c) -> total = 0; for x in xs: if c: total = total + e: each
        item added as it is made, in order, as sum takes them. Python 3.11's sum adds ints
        and floats in order (its fast paths keep the sum in a C long or double: the same
        values); later versions compensate the rounding of floats, and transform.py does
        not ask for this there. The loop's items keep their kinds (no list of them)."""
        tmp = self.namer.fresh("total")
        out.append(T.assign(tmp, start))
        node = self._own_names(node)
        inner = [T.assign(tmp, gast.BinOp(left=T.name(tmp), op=gast.Add(), right=node.elt))]
        for gen in reversed(node.generators):
            for cond in reversed(gen.ifs):
                inner = [gast.If(test=cond, body=inner, orelse=[])]
            inner = [gast.For(target=gen.target, iter=gen.iter, body=inner, orelse=[], type_comment=None)]
        out.extend(self.stmt(inner[0]))
        return T.name(tmp)

    def first_item(self, node, default, out):
        """next(e for x in xs if c[, d]) -> first = d; for x in xs: if c: first = e; break
        (without d: StopIteration where no item comes), as Python takes the first item only."""
        tmp = self.namer.fresh("first")
        out.append(T.assign(tmp, default if default is not None else T.const(None)))
        node = self._own_names(node)
        took = self.namer.fresh("took") if default is None else None
        hit = [T.assign(tmp, node.elt)] + ([T.assign(took, T.const(True))] if took else []) + [gast.Break()]
        if took:
            out.append(T.assign(took, T.const(False)))
        out.extend(self.stmt(self._stopping_loop(node, hit)))
        if took:
            stop = gast.Raise(exc=T.expr("StopIteration()"), cause=None)
            out.append(gast.If(test=gast.UnaryOp(op=gast.Not(), operand=T.name(took)), body=[stop], orelse=[]))
        return T.name(tmp)

    def _own_names(self, node):
        """A generator expression with its variables renamed apart (they must not leak)."""
        renames = {n.id: self.namer.fresh(n.id) for gen in node.generators
                   for n in gast.walk(gen.target) if isinstance(n, gast.Name)}
        gen = node.generators[0]
        first, gen.iter = gen.iter, T.const(None)  # (read where the expression stands)
        node = ComprehensionRename(renames, self).visit(node)
        node.generators[0].iter = first
        return node

    @staticmethod
    def _stopping_loop(node, decided):
        """for x in xs: if c: <decided> (decided ends in a break)."""
        gen = node.generators[0]
        inner = decided
        for cond in reversed(gen.ifs):
            inner = [gast.If(test=cond, body=inner, orelse=[])]
        return gast.For(target=gen.target, iter=gen.iter, body=inner, orelse=[], type_comment=None)

    def comprehension(self, node, out):
        """[e for x in xs if c] -> acc = []; for x in xs: if c: acc.append(e)."""
        tmp = self.namer.fresh("dct" if isinstance(node, gast.DictComp) else "lst")
        if isinstance(node, gast.DictComp):
            out.append(T.assign(tmp, gast.Dict(keys=[], values=[])))
        elif isinstance(node, gast.SetComp):
            out.append(T.assign(tmp, T.expr("set()")))
        else:
            out.append(T.assign(tmp, gast.List(elts=[], ctx=gast.Load())))
        # the comprehension's own variables get fresh names: they must not leak
        renames = {}
        for gen in node.generators:
            for n in gast.walk(gen.target):
                if isinstance(n, gast.Name):
                    renames[n.id] = self.namer.fresh(n.id)
        first, node.generators[0].iter = node.generators[0].iter, T.const(None)  # (read outside)
        node = ComprehensionRename(renames, self).visit(node)
        node.generators[0].iter = first

        def build(gens, block):
            if not gens:
                if isinstance(node, gast.DictComp):
                    k = self.atom(node.key, block)
                    v = self.atom(node.value, block)
                    tgt = gast.Subscript(value=T.name(tmp), slice=k, ctx=gast.Store())
                    block.append(gast.Assign(targets=[tgt], value=v, type_comment=None))
                else:
                    e = self.atom(node.elt, block)
                    meth = "add" if isinstance(node, gast.SetComp) else "append"
                    block.append(T.stmt(f"{tmp}.{meth}(e)", e=e))
                return
            gen = gens[0]
            it = gen.iter  # (a loop over enumerate(...) or zip(...): rewritten as a statement's)
            if not (it.__class__ is gast.Call and it.func.__class__ is gast.Name and it.func.id in ("enumerate", "zip")):
                it = self.atom(it, block)
            body = []
            inner = body
            for cond in gen.ifs:
                c = self.atom(cond, inner)
                nxt = []
                inner.append(gast.If(test=c, body=nxt, orelse=[]))
                inner = nxt
            build(gens[1:], inner)
            loop = gast.For(target=gen.target, iter=it, body=body, orelse=[], type_comment=None)
            block.extend(self.stmt(loop))

        build(node.generators, out)
        return T.name(tmp)

    # ----- statements -------------------------------------------------------------
    def block(self, stmts):
        out = []
        for s in stmts:
            new = self.ordered_stmt(s)
            if hasattr(s, "lineno"):
                for n in new:  # the user's line, for errors found later
                    if not hasattr(n, "src_line"):
                        n.src_line = s.lineno + self.line_offset
            if new and hasattr(s, "inlined"):  # the first statement of an inlined call
                new[0].inlined = s.inlined
            if new and hasattr(s, "lineno") and not hasattr(new[0], "origin") and not hasattr(s, "no_origin"):
                new[0].origin = getattr(s, "origin_text", None) or self.origin_of(s)
                if not hasattr(new[-1], "origin_end"):
                    new[-1].origin_end = new[0].origin
            out.extend(new)
        return out

    def origin_of(self, s):
        lines = self.source_lines
        lo = getattr(s, "lineno", None)
        if not lines or lo is None or lo > len(lines):
            return None
        text = lines[lo - 1].strip()
        if isinstance(s, (gast.If, gast.For, gast.While)):
            return text
        end = getattr(s, "end_lineno", lo) or lo
        if end > lo:
            text = " ".join(line.strip() for line in lines[lo - 1 : end])
        return text[:100]

    def stmt(self, s):
        out = []
        if isinstance(s, gast.Assign):
            return self.assign(s, out)
        if isinstance(s, gast.AnnAssign):
            if s.value is None:
                return out
            return self.stmt(gast.Assign(targets=[s.target], value=s.value, type_comment=None))
        if isinstance(s, gast.AugAssign):
            return self.augassign(s)
        if isinstance(s, gast.Expr):
            v = s.value
            if isinstance(v, gast.Constant):
                return out  # docstrings and bare constants
            if isinstance(v, gast.Call):
                out.append(gast.Expr(value=self.call(v, out)))
                return out
            self.atom(v, out)
            return out
        if isinstance(s, gast.Return):
            value = T.const(None) if s.value is None else self.atom(s.value, out, "result")
            out.append(gast.Return(value=value))
            return out
        if isinstance(s, gast.If):
            test = self.atom(s.test, out, "cond")
            out.append(gast.If(test=test, body=self.block(s.body), orelse=self.block(s.orelse)))
            return out
        if isinstance(s, gast.For):
            return self.for_(s, out)
        if isinstance(s, gast.While):
            return self.while_(s, out)
        if isinstance(s, (gast.Pass,)):
            return out
        if isinstance(s, (gast.Break, gast.Continue, gast.Import, gast.ImportFrom)):
            out.append(s)
            return out
        if isinstance(s, gast.Assert):
            out.append(s)  # evaluated in the forward pass only; carries no gradient
            return out
        if isinstance(s, gast.Raise):
            out.append(s)
            return out
        if isinstance(s, gast.FunctionDef):
            self.defaults(s, out)
            out.append(s)
            return out
        raise UnsupportedSyntaxError(
            f"the statement {type(s).__name__}",
            self.filename,
            getattr(s, "lineno", 0) + self.line_offset,
            getattr(s, "col_offset", None),
        )

    def assign(self, s, out):
        """``x = e`` keeps e flat (one operation); other targets get an atom to unpack."""
        if len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
            target = s.targets[0].id
            value = s.value
            if (self.numbers is not None and target in self.numbers and value.__class__ in WHOLE_ROOTS
                    and self.kept_whole(value)):
                names, calls = set(), []
                value = fold_signs(value, names, calls)
                if target not in names:  # (`x = 0.5 * x + 1`: its operands whole, as below)
                    self.whole(target, value, out, names, calls)
                    return out
            value = self.flat(value, out)
            if not _is_atom(value) and _reads_name(value, target):
                value = self.atom(value, out)
            out.append(_temp_assign(target, value))
            return out
        if isinstance(s.targets[0], gast.Name):  # `a = b = E`: `a = E; b = a` (one object, two names)
            first = s.targets[0]
            self.assign(_node(gast.Assign, targets=[first], value=s.value, type_comment=None), out)
            for tgt in s.targets[1:]:
                self.assign_target(tgt, _temp_name(first.id), out)
            return out
        if len(s.targets) == 1 and isinstance(s.targets[0], (gast.Tuple, gast.List)):
            value = self.atom(s.value, out, "seq")
        else:
            value = self.atom(s.value, out)
        for tgt in s.targets:
            self.assign_target(tgt, value, out)
        return out

    def for_(self, s, out):
        """A for loop over an atom, with a name as its target (unpacked in the body)."""
        if s.iter.__class__ is gast.GeneratorExp:
            return self.for_(self.generator_loop(s), out)
        if self.lazy_call(s.iter):
            return self.for_(self.map_filter_loop(s, out), out)
        if (self.plain_enumerate and self.enumerate_loop(s, out) or self.zip_lists and self.zip_loop(s, out)
                or self.dict_params and self.dict_loop(s, out)):
            return out
        self.check_interleaved(s)
        it = self.atom(s.iter, out)
        body = []
        target = s.target
        if not isinstance(target, gast.Name):
            item = self.namer.fresh("item")
            self.assign_target(target, T.name(item), body)
            target = T.store(item)
        body.extend(self.block(s.body))
        out.append(
            gast.For(
                target=target, iter=it, body=body, orelse=self.block(s.orelse), type_comment=None
            )
        )
        return out

    def while_(self, s, out):
        """``while t: body else: e`` becomes ``while True: if t: body else: e; break``."""
        body = []
        test = self.atom(s.test, body, "cond")
        # while-else: the else clause runs when the test fails (not after a break)
        exit_ = self.block(s.orelse) + [gast.Break()]
        body.append(gast.If(test=test, body=self.block(s.body), orelse=exit_))
        loop = gast.While(test=T.const(True), body=body, orelse=[])
        loop.from_while = True
        out.append(loop)
        return out


def normalize(fn_node, namer, filename, source_lines, line_offset=0, static_names=(), plain_enumerate=False,
              rebound=((), None), short_circuits=frozenset(), zip_lists=frozenset(), dict_params=frozenset(),
              numbers=None, math_call=None):
    """Normalise fn_node (a gast FunctionDef) in place and return it. static_names: the
    names of modules and classes the function reads from outside (globals, builtins,
    captured variables); a name the function binds by import is one too. plain_enumerate:
    the name `enumerate` is the builtin there (its loops are rewritten: targets.py).
    rebound: (data globals a call may rebind, whether a statement makes such a call), read
    where they stand (rebound_globals.py); short_circuits: of `any`, `all`, `next`, `map` and `filter`, those
    that are the builtins (their generator expressions stop at the item that decides);
    zip_lists: parameters whose loops over zip(...) read them by position; dict_params: dict
    parameters whose loops over .items() and .values() read them by key (targets.py);
    numbers: the names taken for numbers (whole.number_names), math_call: whole.math_calls'
    test, to keep arithmetic on numbers whole (whole.py; None: nothing is). The
    statements kept whole are fn_node.wholes."""
    norm = Normalizer(
        namer, filename, source_lines, line_offset, set(static_names) | _imported_names(fn_node),
        plain_enumerate,
    )
    first = fn_node.args.posonlyargs + fn_node.args.args
    norm.first_param = first[0].id if first else None
    norm.short_circuits = frozenset(short_circuits)
    norm.zip_lists = frozenset(zip_lists)
    norm.dict_params = frozenset(dict_params)
    norm.has_walrus = source_lines is None or any(":=" in line for line in source_lines)
    if rebound[0]:  # (rebound_globals.py: a global read before a call that may rebind it)
        norm.rebound, norm.calls_users = frozenset(rebound[0]), rebound[1]
        norm.has_walrus = True
    if numbers is not None and not norm.has_walrus:  # (snapshots of names: one operation each)
        norm.numbers, norm.math_call = set(numbers), math_call
    fn_node.shown = namer.shown  # (for the messages of errors met later: emit)
    fn_node.body = norm.block(fn_node.body)
    fn_node.body = ControlFlow(namer).function(fn_node.body)
    fn_node.picks = frozenset(norm.picks)
    fn_node.wholes = norm.wholes
    return fn_node
