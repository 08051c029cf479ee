"""The variables of a comprehension renamed inside it (the normaliser turns a
comprehension into a loop in the function's own scope, where its variables get names of
their own). A lambda made in the comprehension has a scope of its own: its defaults are
renamed, a read of a comprehension variable in its body (late binding) is refused."""
import gast

from ..errors import UnsupportedSyntaxError


class ComprehensionRename(gast.NodeTransformer):
    """A comprehension's variables renamed in it. A lambda made in it has its own scope:
    its defaults (evaluated where it is made) are renamed; a read of a comprehension
    variable in its body is refused (Python gives each run of the comprehension a scope of
    its own, the renamed variable is shared by every run)."""

    def __init__(self, renames, norm=None):
        self.renames = renames
        self.norm = norm

    def visit_Name(self, node):
        if node.id in self.renames:
            return gast.Name(
                id=self.renames[node.id], ctx=node.ctx, annotation=None, type_comment=None
            )
        return node

    def visit_Lambda(self, node):
        a = node.args
        a.defaults = [self.visit(d) for d in a.defaults]
        a.kw_defaults = [d if d is None else self.visit(d) for d in a.kw_defaults]
        own = {p.id for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p is not None}
        late = sorted({
            n.id for n in gast.walk(node.body)
            if isinstance(n, gast.Name) and n.id in self.renames and n.id not in own
        })
        if late and self.norm is not None:
            k = late[0]
            raise UnsupportedSyntaxError(
                f"a lambda made in a comprehension that reads the comprehension's variable "
                f"`{k}` when it is called (late binding)",
                self.norm.filename,
                getattr(node, "lineno", 0) + self.norm.line_offset,
                getattr(node, "col_offset", None),
                hint=f"bind the value as a default (`lambda ..., {k}={k}: ...`), or define "
                f"the function outside the comprehension",
            )
        return node  # its own scope
