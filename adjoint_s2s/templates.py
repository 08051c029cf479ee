"""Build gast trees from small quoted templates.

``stmt("b_x = b_z * y", b_x="b_a", y=node)`` parses the template once and replaces the
names given as keywords: a string renames, an AST node is substituted. This keeps the
transformer's code close to the code it generates.
"""
import ast
import copy
import functools

import gast


_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


@functools.lru_cache(maxsize=4096)
def _parse(src, mode):
    tree = gast.parse(src)
    for node in gast.walk(tree):  # template lines are not user lines
        for attr in _LOCATION:
            if hasattr(node, attr):
                delattr(node, attr)
    if mode == "expr":
        return tree.body[0].value
    return tree.body


class _Replace(gast.NodeTransformer):
    def __init__(self, subs):
        self.subs = subs

    def visit_Name(self, node):
        new = self.subs.get(node.id)
        if new is None:
            return node
        if isinstance(new, str):
            return gast.Name(id=new, ctx=node.ctx, annotation=None, type_comment=None)
        new = copy.deepcopy(new)
        if isinstance(new, gast.Name):
            new.ctx = node.ctx
        return new

    def visit_arg(self, node):  # pragma: no cover - gast uses Name for params
        return node


def expr(src, **subs):
    node = copy.deepcopy(_parse(src, "expr"))
    return _Replace(subs).visit(node) if subs else node


def stmts(src, **subs):
    body = copy.deepcopy(_parse(src, "stmts"))
    if subs:
        rep = _Replace(subs)
        body = [rep.visit(s) for s in body]
    return body


def stmt(src, **subs):
    (s,) = stmts(src, **subs)
    return s


def name(id_, ctx=None):
    return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def store(id_):
    return name(id_, gast.Store())


def const(v):
    return gast.Constant(value=v, kind=None)


def assign(target, value):
    tgt = store(target) if isinstance(target, str) else target
    return gast.Assign(targets=[tgt], value=value, type_comment=None)


def names_in(node):
    """The set of names read in a tree."""
    return {
        n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }


def to_source(node):
    return ast.unparse(ast.fix_missing_locations(gast.gast_to_ast(node)))
