"""The shrinker: reduce a failing program to a few lines with the same verdict.

Greedy and AST-based: delete a statement (module-level definitions included), replace a
compound statement by one of its bodies, replace an expression by one of its
sub-expressions or by a constant; keep an edit when the oracle still gives the same
``Verdict.key()`` (verdict, order, kind). Passes repeat until nothing more can go or the
time budget is spent.
"""

import ast
import copy
import time
import warnings

from .oracle import check

_FIELDS = ("body", "orelse", "finalbody")


def _stmt_lists(node, out):
    """Every list of statements in preorder, as (owner, field)."""
    for name in _FIELDS:
        value = getattr(node, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            out.append((node, name))
            for child in value:
                _stmt_lists(child, out)
    return out


def _exprs(node, out):
    """Every (owner, field, index, expr) in preorder: larger expressions first."""
    for name, value in ast.iter_fields(node):
        if isinstance(value, ast.expr) and not isinstance(value, ast.Name | ast.Constant):
            out.append((node, name, None, value))
            _exprs(value, out)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, ast.expr) and not isinstance(item, ast.Name | ast.Constant):
                    out.append((node, name, i, item))
                if isinstance(item, ast.AST):
                    _exprs(item, out)
        elif isinstance(value, ast.AST):
            _exprs(value, out)
    return out


def _edits(tree):
    """The number of candidate edits of each kind, in a fixed order."""
    lists = _stmt_lists(tree, [])
    stmts = [(o, f, i) for o, f in lists for i in range(len(getattr(o, f)))]
    exprs = _exprs(tree, [])
    edits = []
    for k, (o, f, i) in enumerate(stmts):
        s = getattr(o, f)[i]
        edits.append(("del", k, 0))
        for j, name in enumerate(("body", "orelse")):
            if isinstance(getattr(s, name, None), list) and getattr(s, name) and not isinstance(s, ast.FunctionDef | ast.ClassDef):
                edits.append(("inline", k, j))
    for k, (o, f, i, e) in enumerate(exprs):
        kids = [c for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr)]
        for j in range(len(kids)):
            edits.append(("sub", k, j))
        if not (isinstance(o, ast.Call) and f == "func"):
            edits.append(("const", k, 0))
    return edits


def _apply(source, edit):
    tree = ast.parse(source)
    what, k, j = edit
    if what in ("del", "inline"):
        lists = _stmt_lists(tree, [])
        stmts = [(o, f, i) for o, f in lists for i in range(len(getattr(o, f)))]
        o, f, i = stmts[k]
        body = getattr(o, f)
        if what == "del":
            new = []
        else:
            new = getattr(body[i], ("body", "orelse")[j])
        body[i:i + 1] = new
        if not body:
            body.append(ast.Pass())
    else:
        o, f, i, e = _exprs(tree, [])[k]
        if what == "sub":
            kids = [c for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr)]
            new = copy.deepcopy(kids[j])
        else:
            new = ast.Constant(0.5)
        if i is None:
            setattr(o, f, new)
        else:
            getattr(o, f)[i] = new
    ast.fix_missing_locations(tree)
    try:
        text = ast.unparse(tree) + "\n"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<shrink>", "exec")
    except Exception:
        return None
    return text


def shrink(source, seed, verdict, second=None, budget=60.0, log=None):
    """The smallest program found within `budget` seconds whose verdict has the same key."""
    target = verdict.key()
    deadline = time.monotonic() + budget
    best = ast.unparse(ast.parse(source)) + "\n"
    if check(best, seed, second).key() != target:  # unparsing changed line numbers only
        best = source
    tried = set()
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        k = 0
        while time.monotonic() < deadline:
            edits = _edits(ast.parse(best))
            if k >= len(edits):
                break
            cand = _apply(best, edits[k])
            if cand is None or cand == best or cand in tried:
                k += 1
                continue
            tried.add(cand)
            if check(cand, seed, second).key() == target:
                best = cand
                changed = True
                if log:
                    log(f"shrunk to {len(best.splitlines())} lines")
                continue  # the same position now holds the next candidate
            k += 1
    return best
