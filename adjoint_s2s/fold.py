"""Folding a fused function: the seed 1.0 and the copies it leaves, bit for bit the same.

``fuse.py`` runs a pullback's lines with ``b_result = 1.0``, so they multiply by a seed
that is always 1.0 (``b_c = b_result * b``) and copy names into adjoints (``b_c = b``,
then ``b_c = b_c + ...``). A person writes ``b_c = b + ...``. This module rewrites the
pullback's part of a fused function's text that way, and where the value is proven a
float, also gives the gradients-only form ``gradient`` runs (``return (b_x, b_y)``
instead of ``return result, (None, b_x, b_y)``). Each rewrite keeps every result
identical, bit for bit:

* the seed is never rebound, so each read of it reads the float 1.0: it becomes the
  constant ``1.0`` (and its line goes once nothing reads it);
* ``1.0 * e``, ``e * 1.0`` and ``e / 1.0`` become ``e`` only where ``e`` is proven a
  ``float`` (below): for a float that is exact (infinities, NaN and -0.0 included); for
  an int it is not (``1.0 * 3`` is ``3.0``), so unproven operands keep their ``1.0 *``;
* products, sums, differences and quotients of two number constants, one of them a
  float, become their value (what CPython's constant folding computes anyway);
* an int constant beside a proven float (``2 * d``) is written as a float (``2.0 * d``):
  the operation converts it exactly (up to 2**53) and then computes the same, but float
  with float is the interpreter's fast form (about 40 ns less);
* ``n = m`` (a name, or a float constant) makes later reads of ``n`` read ``m`` until
  either is rebound, and goes once nothing reads ``n``; ``m`` must be surely bound there.

"Proven a float" (type exactly ``float``): a float constant; a positional parameter when
every argument is a float (the dispatch cache's key says so: ``floats``); a name last
bound (on every path) to a proven float; ``+ - * / // %`` of two operands each a proven
float or an int constant, one a float; a float to an int constant's power; ``-`` or
``+`` of a float; a conditional of two floats; a call of ``math``'s functions that
always return a float, when ``math`` is the helper module the generated code is given.
Loops are taken to a fixpoint; a loop with ``break`` or ``continue``, and a ``try``,
``with`` or ``match``, forget what they bind. Only statements after the seed's line are
rewritten (the forward lines keep their numbers); only simple statements, never inside
nested functions, lambdas or comprehensions; a walrus's target is never a float here.
"""
import ast
import math
import operator
import types

_MATH_FLOAT = frozenset(
    "acos acosh asin asinh atan atan2 atanh cbrt copysign cos cosh degrees erf erfc exp "
    "exp2 expm1 fabs fmod gamma hypot ldexp lgamma log log10 log1p log2 pow radians "
    "remainder sin sinh sqrt tan tanh".split()
)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)
_ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
          ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
FLOAT, INT = "float", "int"
_NO = object()  # not a constant
_SIMPLE = (ast.Assign, ast.AugAssign, ast.Return, ast.Expr)


def math_float_functions():
    """The names of _MATH_FLOAT that are math's own builtins now (never one replaced)."""
    return {n for n in _MATH_FLOAT if type(getattr(math, n, None)) is types.BuiltinFunctionType}


class _State:
    """What holds at a point: fl, the names proven floats; df, the names surely bound;
    cp, name -> ("n", other name) or ("c", repr of a float constant) it equals."""

    __slots__ = ("fl", "df", "cp")

    def __init__(self, fl, df, cp):
        self.fl, self.df, self.cp = fl, df, cp

    def copy(self):
        return _State(set(self.fl), set(self.df), dict(self.cp))

    def forget(self, name, bound=True):
        self.fl.discard(name)
        self.cp.pop(name, None)
        for k in [k for k, v in self.cp.items() if v == ("n", name)]:
            del self.cp[k]
        if bound:
            self.df.add(name)
        else:
            self.df.discard(name)

    def meet(self, other):
        self.fl &= other.fl
        self.df &= other.df
        self.cp = {k: v for k, v in self.cp.items() if other.cp.get(k) == v}
        return self

    def same(self, other):
        return self.fl == other.fl and self.df == other.df and self.cp == other.cp


def _binders(nodes):
    """The names the statements or expressions bind in their own scope, once per binding."""
    out, stack = [], list(nodes)
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.Name:
            if type(n.ctx) is not ast.Load:
                out.append(n.id)
            continue
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            out.append(n.name)
            stack.extend(n.decorator_list)
            continue
        if t in (ast.Import, ast.ImportFrom):
            out.extend((a.asname or a.name).split(".")[0] for a in n.names)
        elif t is ast.ExceptHandler and n.name:
            out.append(n.name)
        elif t in (ast.MatchAs, ast.MatchStar) and n.name:
            out.append(n.name)
        elif t is ast.MatchMapping and n.rest:
            out.append(n.rest)
        if t in _SCOPES:
            continue
        stack.extend(_children(n))
    return out


def _children(n):
    """ast.iter_child_nodes(n) as a list (without its generators: walked for every node)."""
    out = []
    for f in n._fields:
        v = getattr(n, f, None)
        if v.__class__ is list:
            out.extend([x for x in v if isinstance(x, ast.AST)])
        elif isinstance(v, ast.AST):
            out.append(v)
    return out


def _nodes(node):
    """Every node of node's tree, node included: what ast.walk gives, in another order."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        out.append(n)
        if n.__class__ is not ast.Name:  # (a name holds its context only)
            stack.extend(_children(n))
    return out


def _bound_in(nodes):
    return set(_binders(nodes))


def _jumps(stmts):
    """Whether a break or continue of this loop is among stmts (a nested loop's body has
    its own; its else clause is this loop's)."""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        t = type(n)
        if t in (ast.Break, ast.Continue):
            return True
        if t in (ast.For, ast.While, ast.AsyncFor):
            stack.extend(n.orelse)
        elif t not in _SCOPES:
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                v = getattr(n, field, None)
                if type(v) is list:
                    stack.extend(v)
    return False


def _const(v):
    """The constant node of the float v (a negative one as ``-c``, folded by CPython)."""
    if v > 0.0 or (v == 0.0 and math.copysign(1.0, v) > 0.0):
        return ast.Constant(v)
    return ast.UnaryOp(ast.USub(), ast.Constant(-v))


def _arith_kind(op, lk, rk):
    if op is ast.Pow:
        return FLOAT if lk == FLOAT and rk == INT else None
    if op not in _ARITH or lk not in (FLOAT, INT) or rk not in (FLOAT, INT):
        return None
    if FLOAT in (lk, rk) or op is ast.Div:
        return FLOAT
    return INT


class _Folder:
    def __init__(self, seed, math_ok, never, first_line):
        self.seed = seed
        self.math_ok = math_ok
        self.never = never  # names never proven anything (a walrus binds them mid-expression)
        self.first_line = first_line  # statements from this line on may be rewritten
        self.new = {}  # statement -> its new value expression
        self.copies = []  # (statement, name): `name = ...` that may go if nothing reads name
        self.returns = []  # (return statement, its value a proven float)
        self.pure = set()  # `name = e` with e float arithmetic that cannot raise

    # ----- statements -----

    def block(self, stmts, st, edit):
        for s in stmts:
            st = self.stmt(s, st, edit and s.lineno >= self.first_line)
        return st

    def stmt(self, s, st, edit):
        t = type(s)
        if t in _SIMPLE:
            return self.simple(s, st, edit)
        if t is ast.If:
            self.expr(s.test, st)
            a = self.block(s.body, st.copy(), edit)
            return a.meet(self.block(s.orelse, st, edit))
        if t in (ast.For, ast.While):
            return self.loop(s, st, edit)
        if t in (ast.Pass, ast.Break, ast.Continue, ast.Raise, ast.Assert, ast.Global, ast.Nonlocal):
            return st
        surely = t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
        for name in _bound_in([s]):  # anything else: what it binds is known no more
            st.forget(name, bound=surely)
        return st

    def simple(self, s, st, edit):
        if type(s) is ast.Return:  # its gradients keep their names: no copies read there
            st = _State(st.fl, st.df, {})
        value, kind, const = self.expr(s.value, st) if s.value is not None else (None, None, _NO)
        if edit and value is not s.value:
            self.new[s] = value
        t = type(s)
        if t is ast.Return:
            if edit:
                self.returns.append((s, self.value_is_float(value, st)))
            return st
        if t is ast.Expr:
            return st
        if t is ast.AugAssign:
            if type(s.target) is ast.Name:
                name = s.target.id
                k = _arith_kind(type(s.op), FLOAT if name in st.fl else None, kind)
                st.forget(name)
                if k == FLOAT and name not in self.never:
                    st.fl.add(name)
            return st
        target = s.targets[0] if len(s.targets) == 1 else None
        if type(target) is not ast.Name:
            for name in _bound_in(s.targets):
                st.forget(name)
            return st
        name = target.id
        if self.harmless(s.value, st):
            self.pure.add(s)
        st.forget(name)
        if name in self.never:
            return st
        if kind == FLOAT:
            st.fl.add(name)
        if not edit:
            return st
        if const is not _NO and kind == FLOAT:
            st.cp[name] = ("c", repr(const))
        elif type(value) is ast.Name and value.id != name and value.id in st.df and value.id not in self.never:
            st.cp[name] = ("n", value.id)
        else:
            return st
        self.copies.append((s, name))
        return st

    def harmless(self, e, st):
        """Whether e is + - * of proven floats and small int constants: it cannot raise
        (a float overflows to inf) and does nothing else."""
        t = type(e)
        if t is ast.Name:
            return e.id in st.fl
        if t is ast.Constant:
            return type(e.value) is float or (type(e.value) is int and abs(e.value) <= 2 ** 53)
        if t is ast.UnaryOp:
            return type(e.op) in (ast.USub, ast.UAdd) and self.harmless(e.operand, st)
        if t is ast.BinOp and type(e.op) in (ast.Add, ast.Sub, ast.Mult):
            return (self.harmless(e.left, st) and self.harmless(e.right, st)
                    and self.expr(e, st)[1] == FLOAT)
        return False

    def value_is_float(self, value, st):
        """Whether a return's (value, gradients) has a value proven a float."""
        if type(value) is not ast.Tuple or len(value.elts) != 2:
            return False
        return self.expr(value.elts[0], st)[1] == FLOAT

    def loop(self, s, st, edit):
        target = [s.target] if type(s) is ast.For else []
        if type(s) is ast.For:
            self.expr(s.iter, st)
        if _jumps(s.body):
            for name in _bound_in(s.body + target):
                st.forget(name, bound=name in st.df)
            entry = st
        else:
            entry = st
            for _ in range(8):
                st2 = self.body(s, entry.copy(), target, False)
                new = entry.copy().meet(st2)
                if new.same(entry):
                    break
                entry = new
            else:
                for name in _bound_in(s.body + target):
                    entry.forget(name, bound=name in entry.df)
        self.body(s, entry.copy(), target, edit)
        return self.block(s.orelse, entry, edit)

    def body(self, s, st, target, edit):
        for name in _bound_in(target):
            st.forget(name)
        if type(s) is ast.While:
            self.expr(s.test, st)
        return self.block(s.body, st, edit)

    # ----- expressions: (the expression rewritten, its kind, its constant value) -----

    def expr(self, node, st):
        t = type(node)
        if t is ast.Constant:
            v = node.value
            if type(v) is float:
                return node, FLOAT, v
            return (node, INT, v) if type(v) is int else (node, None, _NO)
        if t is ast.Name:
            return self.name(node, st)
        if t is ast.BinOp:
            return self.binop(node, st)
        if t is ast.UnaryOp:
            o, k, c = self.expr(node.operand, st)
            op = type(node.op)
            new = node if o is node.operand else ast.UnaryOp(node.op, o)
            if op not in (ast.USub, ast.UAdd) or k not in (FLOAT, INT):
                return new, None, _NO
            if c is _NO:
                return new, k, _NO
            c = -c if op is ast.USub else c
            return (_const(c) if k == FLOAT and new is not node else new), k, c
        if t is ast.IfExp:
            test = self.expr(node.test, st)[0]
            (a, ka, _), (b, kb, _) = self.expr(node.body, st), self.expr(node.orelse, st)
            same = test is node.test and a is node.body and b is node.orelse
            new = node if same else ast.IfExp(test, a, b)
            return new, (FLOAT if ka == kb == FLOAT else None), _NO
        if t in _SCOPES or t is ast.NamedExpr:
            return node, None, _NO
        new = self.children(node, st)
        kind = None
        if (t is ast.Call and self.math_ok and type(node.func) is ast.Attribute
                and type(node.func.value) is ast.Name and node.func.value.id == "math"
                and node.func.attr in self.math_ok):
            kind = FLOAT
        return new, kind, _NO

    def name(self, node, st):
        if node.id == self.seed:
            return ast.Constant(1.0), FLOAT, 1.0
        cp = st.cp.get(node.id)
        kind = FLOAT if node.id in st.fl else None
        if cp is None:
            return node, kind, _NO
        if cp[0] == "c":
            v = float(cp[1])
            return _const(v), FLOAT, v
        return ast.Name(cp[1], ast.Load()), kind, _NO

    def binop(self, node, st):
        (l, lk, lc), (r, rk, rc) = self.expr(node.left, st), self.expr(node.right, st)
        op = type(node.op)
        if op is ast.Mult and type(lc) is float and lc == 1.0 and rk == FLOAT:
            return r, rk, rc
        if op in (ast.Mult, ast.Div) and type(rc) is float and rc == 1.0 and lk == FLOAT:
            return l, lk, lc
        kind = _arith_kind(op, lk, rk)
        if kind == FLOAT and op in _ARITH and (lc is _NO or rc is _NO):
            # an int constant beside a float is converted to a float by the operation;
            # written as a float the operation is float's own (CPython's fast form)
            if lk == INT and rk == FLOAT and lc is not _NO and abs(lc) <= 2 ** 53:
                l = _const(float(lc))
            elif rk == INT and lk == FLOAT and rc is not _NO and abs(rc) <= 2 ** 53:
                r = _const(float(rc))
        if kind == FLOAT and lc is not _NO and rc is not _NO and op in _ARITH:
            try:
                v = _ARITH[op](lc, rc)
            except (ArithmeticError, ValueError):
                v = None
            if type(v) is float and math.isfinite(v):
                return _const(v), FLOAT, v
        new = node if l is node.left and r is node.right else ast.BinOp(l, node.op, r)
        return new, kind, _NO

    def children(self, node, st):
        """node with its expressions rewritten (a shallow copy if any changed)."""
        changed = {}
        for field, v in ast.iter_fields(node):
            if isinstance(v, ast.expr):
                if getattr(v, "ctx", None) is not None and type(v.ctx) is not ast.Load:
                    continue
                new = self.expr(v, st)[0]
                if new is not v:
                    changed[field] = new
            elif type(v) is list and v:
                items = [self.item(c, st) for c in v]
                if any(a is not b for a, b in zip(items, v)):
                    changed[field] = items
        if not changed:
            return node
        new = type(node)(**{f: changed.get(f, getattr(node, f, None)) for f in node._fields})
        return new

    def item(self, c, st):
        if isinstance(c, ast.expr):
            return self.expr(c, st)[0]
        if type(c) is ast.keyword:
            v = self.expr(c.value, st)[0]
            return c if v is c.value else ast.keyword(c.arg, v)
        return c


def _own_statements(fn):
    """Every statement of fn's own scope, with the list that holds it."""
    out, stack = [], [fn.body]
    while stack:
        body = stack.pop()
        for s in body:
            out.append((s, body))
            if isinstance(s, _SCOPES):
                continue
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(s, field, None)
                if type(sub) is list and sub and isinstance(sub[0], ast.stmt):
                    stack.append(sub)
            for h in getattr(s, "handlers", ()):
                stack.append(h.body)
            for c in getattr(s, "cases", ()):
                stack.append(c.body)
    return out


class _Names:
    """The names each statement (or expression) mentions, walked once each."""

    def __init__(self):
        self.seen = {}

    def __call__(self, node):
        got = self.seen.get(id(node))
        if got is None:
            got = self.seen[id(node)] = (node, {n.id for n in _nodes(node) if type(n) is ast.Name})
        return got[1]


def _dead_after(body, i, name, top, names, removed=frozenset()):
    """Whether the value `name` gets at statement body[i] is read nowhere: the statements
    after it in its block (those whose ids are in removed aside) bind name again before
    any reads it (or the function ends, when body is the function's own). names: a _Names.
    (The position is given: finding it in the body made the fold quadratic.)"""
    for j in range(i + 1, len(body)):
        t = body[j]
        if id(t) in removed or name not in names(t):
            continue
        return (type(t) is ast.Assign and len(t.targets) == 1 and type(t.targets[0]) is ast.Name
                and t.targets[0].id == name and name not in names(t.value))
    return body is top


def fold(text, name, seed, floats, math_ok, grads_name):
    """(the folded text of the fused function ``name`` in text, the text of its
    gradients-only form ``grads_name`` or None). seed: the name set to 1.0 on the line
    after which the pullback's lines run; floats: whether every positional argument is a
    float; math_ok: the names of math's functions that return floats
    (math_float_functions()) when ``math`` there is the math module, else an empty set."""
    tree = ast.parse(text)
    factory = tree.body[0]
    fn = factory.body[0]
    own = _own_statements(fn)
    lines = text.split("\n")
    seed_stmt = next(
        (s for s, body in own if body is fn.body and type(s) is ast.Assign and len(s.targets) == 1
         and type(s.targets[0]) is ast.Name and s.targets[0].id == seed), None)
    if fn.name != name or seed_stmt is None or not _editable(own, lines):
        return text, None
    params = {a.arg for a in _params(fn)}
    bound = _binders(fn.body)
    local = set(bound) | params
    never = {n.target.id for n in _nodes(fn) if type(n) is ast.NamedExpr and type(n.target) is ast.Name}
    binds_seed = bound.count(seed) + (seed in params)
    math_ok = set() if "math" in local or "math" not in {a.arg for a in _params(factory)} else math_ok
    folder = _Folder(seed if binds_seed == 1 else None, math_ok, never, seed_stmt.lineno)
    fl = {a.arg for a in fn.args.posonlyargs + fn.args.args} - never if floats else set()
    folder.block(fn.body, _State(fl, params, {}), True)
    for s, value in folder.new.items():
        s.value = value
    cells = set()  # names nested scopes read or bind: never dropped
    for e in _nodes(fn):  # (walked again: the new values are in place)
        if e is not fn and isinstance(e, _SCOPES):
            cells.update(n.id for n in _nodes(e) if type(n) is ast.Name)
    body_of = {id(s): body for s, body in own}
    at = {id(t): i for body in {id(b): b for _, b in own}.values() for i, t in enumerate(body)}
    names = _Names()
    gone = {s for s, n in folder.copies
            if n not in cells and _dead_after(body_of[id(s)], at[id(s)], n, fn.body, names)}
    emptied = {}
    for s, body in own:
        emptied[id(body)] = emptied.get(id(body), 0) + (s in gone)
    gone -= {s for s, body in own if emptied[id(body)] == len(body)}  # a block never empty
    edits = {s: _unparse(s) for s in folder.new}
    out = _apply(lines, own, edits, gone)
    if not (floats and folder.returns and all(ok and _grads_only(s) for s, ok in folder.returns)):
        return out, None
    for s, _ in folder.returns:
        s.value = ast.Tuple(s.value.elts[1].elts[1:], ast.Load())
        edits[s] = _unparse(s)
    lines = list(lines)
    body, names, removed = fn.body, _Names(), set()  # the returns changed: walked again
    for k in range(len(body) - 1, -1, -1):  # the value's lines, when nothing else reads them
        s = body[k]
        if s in folder.pure and s not in gone and s.lineno == s.end_lineno and (
                s.targets[0].id not in cells and _dead_after(body, k, s.targets[0].id, body, names, removed)):
            removed.add(id(s))
            line = lines[s.lineno - 1]
            lines[s.lineno - 1] = line[: s.col_offset] + "# " + line[s.col_offset:] + _UNUSED
            edits.pop(s, None)
    head, ret = fn.lineno - 1, factory.body[-1].lineno - 1
    lines[head] = lines[head].replace(f"def {name}(", f"def {grads_name}(", 1)
    lines[ret] = lines[ret].replace(f"return {name}", f"return {grads_name}", 1)
    lines = [line.replace(_VALUE_AND_GRADIENTS, _GRADIENTS) for line in lines]
    return out, _apply(lines, own, edits, gone)


_UNUSED = "  (not needed for the gradients alone, and cannot raise)"
_VALUE_AND_GRADIENTS = "run now with the seed 1.0: (value, gradients)"
_GRADIENTS = "run now with the seed 1.0, the value a float: the gradients alone"


def _unparse(s):
    """A statement's text (``return a, b`` without parentheses around the pair)."""
    v = s.value
    if type(s) is ast.Return and type(v) is ast.Tuple and len(v.elts) > 1:
        text = "return " + ", ".join(ast.unparse(e) for e in v.elts)
        if ast.dump(ast.parse(text).body[0]) == ast.dump(s):
            return text
    return ast.unparse(s)


def _params(fn):
    a = fn.args
    return a.posonlyargs + a.args + a.kwonlyargs + [p for p in (a.vararg, a.kwarg) if p]


def _grads_only(ret):
    """``return value, (None, g1, ...)``: the gradients tuple a literal after a None."""
    v = ret.value
    g = v.elts[1] if type(v) is ast.Tuple and len(v.elts) == 2 else None
    return (type(g) is ast.Tuple and g.elts and type(g.elts[0]) is ast.Constant
            and g.elts[0].value is None and not any(type(e) is ast.Starred for e in g.elts))


def _editable(own, lines):
    """Whether every simple statement has its lines to itself (none shares a line)."""
    seen = set()
    for s, _ in own:
        first, last = lines[s.lineno - 1], lines[s.end_lineno - 1]
        if s.lineno in seen or first[: s.col_offset].strip() or last.encode()[s.end_col_offset:].strip():
            return False
        seen.add(s.lineno)
    return True


def _apply(lines, own, edits, gone):
    """lines with each edited statement's lines replaced by its new text, gone ones left out."""
    out = list(lines)
    for s, _ in sorted(own, key=lambda p: -p[0].lineno):
        if s in gone:
            out[s.lineno - 1: s.end_lineno] = []
        elif s in edits:
            out[s.lineno - 1: s.end_lineno] = [" " * s.col_offset + edits[s]]
    return "\n".join(out)
