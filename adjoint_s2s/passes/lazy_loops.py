"""Loops over items computed as they are taken: a generator expression, ``map`` and
``filter`` as the iterable of a ``for`` statement (a part of the normaliser, anf.py).

Python computes such an item when the loop takes it: the loop's body runs between two
items, so a name the body rebinds shows in the next item (``for a in (s * v for v in vs):
s = s + a``), and a ``break`` leaves the later items uncomputed (an endless iterable, an
item that would raise). The normaliser turns a comprehension into a list made before it
is used, which computes every item first; for these loops it writes the loop Python runs
instead::

    for t in (e for x in xs if c):      for x' in xs:          (x renamed apart)
        body                                if c':
                                                t = e'
                                                body

    for t in map(f, xs): body           f' = f; for v in xs: t = f'(v); body
    for t in filter(p, xs): body        p' = p; for v in xs: if p'(v): t = v; body

A generator expression with several ``for`` clauses becomes nested loops, exact unless the
body breaks out of the loop (it would leave the inner loop only): refused then. A
generator expression inside the iterable (``zip((s * v for v in vs), ws)``) whose names
the body rebinds or changes would give the old values: refused.
"""
import gast

from .. import templates as T
from ..errors import UnsupportedSyntaxError
from ..naming import names_in

# calls that take every item of a generator expression at once, where the loop's iterable
# is made: nothing in the loop's body can run between two of its items
_CONSUMING = frozenset(("sum", "sorted", "list", "tuple", "set", "frozenset", "dict", "min", "max",
                        "any", "all", "len", "array", "asarray", "stack", "concatenate", "fromiter"))


class LazyLoops:
    """The rewrites above, mixed into the normaliser (self.namer, self.short_circuits,
    self.filename, self.line_offset, self._own_names)."""

    def generator_loop(self, s):
        """The loop over a generator expression as loops over its iterables."""
        node = self._own_names(s.iter)
        if len(node.generators) > 1 and _breaks(s.body):
            self._refuse(s, "a `break` in a loop over a generator expression with several "
                            "`for` clauses",
                         "write the nested loops out (`for v in vs: for w in ws: ...`), with a "
                         "flag to leave the outer one")
        inner = [gast.Assign(targets=[s.target], value=node.elt, type_comment=None)] + list(s.body)
        for gen in reversed(node.generators):
            for cond in reversed(gen.ifs):
                inner = [gast.If(test=cond, body=inner, orelse=[])]
            inner = [gast.copy_location(
                gast.For(target=gen.target, iter=gen.iter, body=inner, orelse=[], type_comment=None), s)]
        inner[0].orelse = s.orelse
        return inner[0]

    def lazy_call(self, node):
        """Is node a call of the builtin map over one iterable, or of filter?"""
        func = node.func if node.__class__ is gast.Call else None
        return (func.__class__ is gast.Name and func.id in ("map", "filter")
                and func.id in self.short_circuits and len(node.args) == 2 and not node.keywords
                and not any(a.__class__ is gast.Starred for a in node.args))

    def lazy_source(self, node):
        """Does a loop over node compute its items as it takes them (rewritten so)?"""
        return node.__class__ is gast.GeneratorExp or self.lazy_call(node)

    def map_filter_loop(self, s, out):
        """The loop over map(f, xs) or filter(p, xs) as a loop over xs, f or p evaluated
        once, first, as map and filter do."""
        call = s.iter
        fn = call.args[0]
        if not (fn.__class__ is gast.Constant and fn.value is None):
            hint = "fn" if call.func.id == "map" else "pred"
            fn = self.atom(fn, out, hint)
            if fn.__class__ is gast.Name and fn.id in _changed_names(s.body):
                # (map holds the function it was given: the body's rebinding is not it)
                held = self.namer.fresh(hint)
                out.append(gast.Assign(targets=[T.store(held)], value=fn, type_comment=None))
                fn = T.name(held)
        v = self.namer.fresh("item")
        if call.func.id == "map":
            got = gast.Call(func=fn, args=[T.name(v)], keywords=[])
            body = [gast.Assign(targets=[s.target], value=got, type_comment=None)] + list(s.body)
        else:
            test = T.name(v) if fn.__class__ is gast.Constant else gast.Call(func=fn, args=[T.name(v)], keywords=[])
            take = gast.Assign(targets=[s.target], value=T.name(v), type_comment=None)
            body = [gast.If(test=test, body=[take] + list(s.body), orelse=[])]
        loop = gast.For(target=T.store(v), iter=call.args[1], body=body, orelse=s.orelse, type_comment=None)
        return gast.copy_location(loop, s)

    def lazy_enumerate(self, s, item, source, counting, out):
        """``for i, t in enumerate(source): body`` (targets.enumerate_loop), source a
        generator expression, map or filter: the loop over source, the count first."""
        loop = gast.For(target=item, iter=source, body=counting + list(s.body), orelse=s.orelse,
                        type_comment=None)
        self.for_(gast.copy_location(loop, s), out)
        return True

    def check_interleaved(self, s):
        """Refuse a loop whose iterable holds a generator expression (not taken at once by
        sum, sorted, list...) that reads a name the loop's body rebinds or changes."""
        lazy = _lazy_generators(s.iter)
        if not lazy:
            return
        changed = _changed_names(s.body)
        for g in lazy:
            own = {n.id for gen in g.generators for n in gast.walk(gen.target) if n.__class__ is gast.Name}
            hit = sorted((names_in(g) - own) & changed)
            if hit:
                self._refuse(s, f"a loop over a generator expression inside `{_called(s.iter)}` "
                                f"whose body changes `{hit[0]}`, which the expression reads",
                             f"Python computes each item when the loop takes it, after the "
                             f"body changed `{hit[0]}`; adjoint_s2s would compute them all "
                             f"first. Loop over the generator expression itself, or compute "
                             f"the items in the loop's body")

    def _refuse(self, s, what, hint):
        raise UnsupportedSyntaxError(what, self.filename, getattr(s, "lineno", 0) + self.line_offset,
                                     getattr(s, "col_offset", None), hint=hint)


def _called(node):
    f = getattr(node, "func", None)
    return f"{getattr(f, 'id', None) or getattr(f, 'attr', 'the call')}(...)" if f is not None else "the iterable"


def _lazy_generators(node):
    """The generator expressions in node not taken at once by a consuming call."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.__class__ is gast.GeneratorExp:
            out.append(n)
            continue
        if n.__class__ is gast.Call:
            f = n.func
            name = getattr(f, "id", None) or getattr(f, "attr", None)
            if name in _CONSUMING:
                stack.extend(a for a in n.args if a.__class__ is not gast.GeneratorExp)
                stack.extend(k.value for k in n.keywords)
                stack.append(f)
                continue
        stack.extend(c for c in gast.iter_child_nodes(n))
    return out


def _changed_names(stmts):
    """The names the statements rebind, write into (`x[i] = v`, `x.a = v`) or call a
    method of (`xs.append(v)`), nested blocks included."""
    out = set()
    for st in stmts:
        for n in gast.walk(st):
            cls = n.__class__
            if cls is gast.Name and n.ctx.__class__ in (gast.Store, gast.Del):
                out.add(n.id)
            elif cls in (gast.Subscript, gast.Attribute) and n.ctx.__class__ is not gast.Load:
                root = n.value
                while root.__class__ in (gast.Subscript, gast.Attribute):
                    root = root.value
                if root.__class__ is gast.Name:
                    out.add(root.id)
            elif cls is gast.Call and n.func.__class__ is gast.Attribute and n.func.value.__class__ is gast.Name:
                out.add(n.func.value.id)
    return out


def _breaks(stmts):
    """Does a `break` of this loop stand in stmts (not one of a loop nested in them)?"""
    for st in stmts:
        cls = st.__class__
        if cls is gast.Break:
            return True
        if cls in (gast.For, gast.While):
            if _breaks(st.orelse):
                return True
        elif cls is gast.If:
            if _breaks(st.body) or _breaks(st.orelse):
                return True
        elif cls in (gast.With, gast.Try):
            blocks = [st.body] + [getattr(st, f, []) for f in ("orelse", "finalbody")]
            blocks += [h.body for h in getattr(st, "handlers", [])]
            if any(_breaks(b) for b in blocks):
                return True
    return False
