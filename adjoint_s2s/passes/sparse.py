"""Scatter adjoints that stay sparse until something needs the whole array.

The adjoint of ``y = x[idx]`` is g at idx of an array of zeros shaped like x. Written
out, it costs an array of zeros, a scatter and, when x has other uses, an addition of the
whole array into the other contributions; ``logp[rows, labels]`` in a cross-entropy
pays all three for a thousand nonzeros. ``_rt.getitem_grad_sparse`` returns a
``runtime.Scattered`` instead, which ``acc`` adds into the other contribution position
by position and ``unbroadcast`` sums without the zeros.

A Scattered must never reach a rule, a callee or the user. This pass reads and rewrites
only the text of the pair (it parses it to follow names, and edits by position). Run on
the pair's finished source, it follows each candidate ``b_x = _rt.getitem_grad(...)``
of a pullback through the statements after it. A name that may hold a Scattered may be read by
``_rt.unbroadcast`` (as the adjoint), unary minus, the branches of a conditional expression
and plain assignment (whose results may hold one in turn), by ``_rt.acc`` and its fused
forms (whose results are arrays), and by ``is None`` tests. Any other read is wrapped in
``_rt.dense(...)``, which writes the array out when the value is a Scattered and returns
anything else as it is. A candidate inside a loop or read by a nested function stays an
array, as does one that would gain nothing (no addition or reduction reads it).
"""
import ast

_RT = "_rt"
_ACCS = {"acc": None, "acc_getitem_grad": 0, "acc_extremum_adjoint": 0}  # sparse-capable args


class _Unsafe(Exception):
    pass


def _rt_call(node, name=None):
    """The helper's name when node is ``_rt.<helper>(...)`` with positional arguments."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == _RT
        and not node.keywords
        and not any(isinstance(a, ast.Starred) for a in node.args)
    ):
        if name is None or node.func.attr == name:
            return node.func.attr
    return None


class _Flow:
    """One candidate's walk: which names may hold its Scattered, which reads to wrap."""

    def __init__(self, candidate):
        self.candidate = candidate
        self.wrap = []  # expression nodes to write out with _rt.dense
        self.benefit = False

    # -- expressions --------------------------------------------------------------------
    def expr(self, e, live):
        """Whether e may evaluate to the Scattered; reads it may not see are queued."""
        if isinstance(e, ast.Name):
            return e.id in live
        helper = _rt_call(e)
        if helper == "unbroadcast" and len(e.args) == 2:
            sparse = self.expr(e.args[0], live)
            self.benefit |= sparse  # a reduction reads only the nonzeros
            self.dense(e.args[1], live)
            return sparse
        if helper in _ACCS:
            only = _ACCS[helper]
            for i, a in enumerate(e.args):
                if only is None or i == only:
                    self.benefit |= self.expr(a, live)
                else:
                    self.dense(a, live)
            return False
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            return self.expr(e.operand, live)
        if isinstance(e, ast.IfExp):  # passes/projected.py's `b if y is z else unbroadcast(b, y)`
            self.dense(e.test, live)
            body = self.expr(e.body, live)
            return self.expr(e.orelse, live) or body
        if (
            isinstance(e, ast.Compare)
            and len(e.ops) == 1
            and isinstance(e.ops[0], (ast.Is, ast.IsNot))
            and isinstance(e.comparators[0], ast.Constant)
            and e.comparators[0].value is None
        ):
            self.expr(e.left, live)
            return False
        self.dense(e, live)
        return False

    def dense(self, e, live):
        """e must not see a Scattered: wrap the reads in it that may."""
        if _chain(e, live):
            self.wrap.append(e)
            return
        for child in ast.iter_child_nodes(e):
            if isinstance(child, ast.expr):
                self.dense(child, live)
            elif isinstance(child, (ast.keyword, ast.comprehension)):
                for sub in ast.iter_child_nodes(child):
                    if isinstance(sub, ast.expr):
                        self.dense(sub, live)
        if isinstance(e, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            if any(isinstance(n, ast.Name) and n.id in live for n in ast.walk(e)):
                raise _Unsafe  # a read the wrapping above cannot reach safely

    # -- statements ---------------------------------------------------------------------
    def block(self, stmts, live, started):
        for s in stmts:
            if s is self.candidate:
                live, started = {s.targets[0].id}, True
                continue
            if not started:
                if isinstance(s, ast.If) and _contains(s, self.candidate):
                    live, started = self.branches(s, live, started)
                elif _contains(s, self.candidate):
                    raise _Unsafe  # in a loop, a with or a try: leave it an array
                continue
            live = self.stmt(s, live)
        return live, started

    def branches(self, s, live, started):
        if started:
            self.expr(s.test, live)
        body, b_started = self.block(s.body, set(live), started)
        orelse, o_started = self.block(s.orelse, set(live), started)
        return body | orelse, b_started or o_started

    def stmt(self, s, live):
        if not live:
            return live
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            sparse = self.expr(s.value, live)
            target = s.targets[0].id
            return live | {target} if sparse else live - {target}
        if isinstance(s, ast.If):
            return self.branches(s, live, True)[0]
        if isinstance(s, (ast.Return, ast.Expr, ast.Assign, ast.AugAssign)) and not any(
            isinstance(n, (ast.FunctionDef, ast.Lambda)) for n in ast.walk(s)
        ):
            value = s.value
            if value is not None:
                self.dense(value, live)
            if isinstance(s, (ast.Assign, ast.AugAssign)):
                targets = s.targets if isinstance(s, ast.Assign) else [s.target]
                for t in targets:
                    names = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
                    if isinstance(s, ast.Assign) and all(isinstance(n, ast.Name) for n in names):
                        live = live - {n.id for n in names}  # rebound to what dense() gave
                    elif any(isinstance(n, ast.Name) and n.id in live for n in ast.walk(t)):
                        raise _Unsafe  # written into (b[i] = ..., b += ...)
            return live
        if any(isinstance(n, ast.Name) and n.id in live for n in ast.walk(s)):
            raise _Unsafe  # a loop, a nested function...: reads we do not follow
        return live


def _chain(e, live):
    """e is a name that may hold the Scattered, or unbroadcast / unary minus over one."""
    if isinstance(e, ast.Name):
        return e.id in live
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        return _chain(e.operand, live)
    if _rt_call(e, "unbroadcast") and len(e.args) == 2:
        return _chain(e.args[0], live)
    return False


def _contains(tree, node):
    return any(n is node for n in ast.walk(tree))


def _candidates(fn):
    """``b_x = _rt.getitem_grad(obj, idx, g)`` statements of fn (not of nested functions)."""
    out = []

    def visit(stmts):
        for s in stmts:
            if (
                isinstance(s, ast.Assign)
                and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name)
                and _rt_call(s.value, "getitem_grad")
                and len(s.value.args) == 3
            ):
                out.append(s)
            elif isinstance(s, ast.If):
                visit(s.body)
                visit(s.orelse)

    visit(fn.body)
    return out


def sparse_scatters(src):
    """src with the scatter adjoints that may stay sparse made so (see the module doc)."""
    if "_rt.getitem_grad(" not in src:
        return src
    tree = ast.parse(src)
    renames, wraps = [], []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for cand in _candidates(fn):
            flow = _Flow(cand)
            try:
                flow.block(fn.body, set(), False)
            except _Unsafe:
                continue
            if flow.benefit:
                renames.append(cand.value.func)
                wraps.extend(flow.wrap)
    if not renames:
        return src
    return _edit(src, renames, wraps)


def _edit(src, renames, wraps):
    """Apply the edits by position, so that comments and layout stay as generated."""
    lines = [line.encode() for line in src.split("\n")]
    edits = []  # (line, col, end_col or None, kind)
    for node in renames:
        edits.append((node.lineno, node.col_offset, node.end_col_offset, "rename"))
    seen = set()
    for node in wraps:
        key = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
        if key in seen:
            continue
        seen.add(key)
        if node.lineno != node.end_lineno:
            raise AssertionError("a wrapped read spans lines")  # generated reads do not
        edits.append((node.lineno, node.col_offset, node.end_col_offset, "wrap"))
    # right to left within a line, so that earlier offsets stay valid; nested wraps
    # (an outer and an inner read) keep their order by end position
    for lineno, col, end, kind in sorted(edits, key=lambda e: (e[0], e[1], e[2]), reverse=True):
        line = lines[lineno - 1]
        if kind == "rename":
            assert line[col:end] == b"_rt.getitem_grad"
            line = line[:col] + b"_rt.getitem_grad_sparse" + line[end:]
        else:
            line = line[:col] + b"_rt.dense(" + line[col:end] + b")" + line[end:]
        lines[lineno - 1] = line
    return "\n".join(line.decode() for line in lines)
