"""Assignment expressions (``a := e``) for the normaliser (``passes/anf.py``): a mixin of
``Normalizer``.

Python evaluates a statement's parts left to right, and a ``:=`` binds its name at its
place in that order: in ``a + (a := a * 3)`` the left operand is the old ``a``, in
``f(a, (a := 2 * a), a)`` the first argument is the old value and the third the new.
The normaliser emits a statement's parts as statements in that same order, so a read of
a name the statement binds by ``:=`` is copied into a temporary where it stands (the
value at that point); the ``:=`` itself becomes ``a = e`` (``a = a * 3`` with a
temporary first, as any ``x = f(x)``).

Before::

    r = a + (a := a * 3.0)

After::

    a_1 = a
    mul = a * 3.0
    a = mul
    r = a_1 + a
"""
import gast

from .. import templates as T

_BLOCKS = frozenset(("body", "orelse", "finalbody", "handlers"))


def walrus_targets(s):
    """The names statement s binds by ``:=`` in its own expressions (not in the blocks
    it holds, nor in a lambda or a def: their own scopes)."""
    out = set()
    todo = [getattr(s, f, None) for f in s._fields if f not in _BLOCKS]
    while todo:
        n = todo.pop()
        if n.__class__ is list:
            todo.extend(n)
        elif isinstance(n, gast.AST) and not isinstance(n, (gast.Lambda, gast.FunctionDef)):
            if n.__class__ is gast.NamedExpr:
                out.add(n.target.id)
            todo.extend(getattr(n, f, None) for f in n._fields)
    return out


class WalrusOrder:
    """What the normaliser does of ``:=`` (the module's docstring)."""

    has_walrus = True  # (normalize: False when the function's text has no `:=`)
    walrus = frozenset()  # the names the statement being normalised binds by `:=`
    # the data globals a call of the user's code may rebind, and whether a statement's own
    # expressions make such a call (passes/rebound_globals.py): read where they stand too
    rebound, calls_users = frozenset(), None

    def ordered_stmt(self, s):
        """self.stmt(s), the reads of what s binds by ``:=`` taken where they stand."""
        if not self.has_walrus:
            return self.stmt(s)
        outer = self.walrus
        self.walrus = walrus_targets(s)
        if self.rebound and self.calls_users(s):
            self.walrus = self.walrus | self.rebound
        try:
            return self.stmt(s)
        finally:
            self.walrus = outer

    def snapshot(self, node, out):
        """An atom for node, a name or a constant: a name the statement binds by ``:=``
        copied into a temporary (its value here), else node itself."""
        if node.__class__ is gast.Name and node.id in self.walrus and node.ctx.__class__ is gast.Load:
            tmp = self.namer.fresh(node.id)
            out.append(T.assign(tmp, T.name(node.id)))
            return T.name(tmp)
        return node

    def named_expr(self, node, out):
        """``a := e``: ``a = e`` (a temporary first where e reads a), then a's value."""
        target = node.target.id
        val = self.flat(node.value, out)
        if val.__class__ not in (gast.Name, gast.Constant) and target in T.names_in(val):
            val = self.atom(val, out)
        out.append(T.assign(target, val))
        return T.name(target)
