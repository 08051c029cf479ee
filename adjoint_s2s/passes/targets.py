"""Assignment targets, for the normaliser (``passes/anf.py``): a mixin of ``Normalizer``.

``x = v`` stays; ``a, *b, c = v`` unpacks into item reads of v (a starred target takes
``list(v[i:j])``); ``obj.f = v`` and ``a[i] = v`` write into an atom; a nested
container (``b.data[0] = v``, ``m[i][j] = v``) is read into a name, written into and put
back where it came from. ``a op= v`` becomes ``a = a op v``, marked augmented (in place
for arrays and lists).

Before::

    x, y = p
    m[i][j] += v

After::

    x = p[0]
    y = p[1]
    m_i = m[i]
    m_i_i = m_i[j]
    add = m_i_i + v
    m_i[j] = add
    m[i] = m_i

A loop over ``enumerate(xs[, start])`` becomes the loop over xs it stands for, the count
in a variable of its own (``enumerate_loop``): its items keep xs's kind, where enumerate's
tuples have none (every operation of the body dispatched at run time). A loop over
``zip(xs, ys)`` of list or tuple parameters whose items the cache key knows becomes a
loop over positions (``zip_loop``): each item a known read of its list; one over
``d.items()`` or ``d.values()`` of such a dict parameter a loop over its keys
(``dict_loop``).
"""
import gast

from .. import templates as T
from ..errors import UnsupportedSyntaxError


class Targets:
    """What Normalizer does with assignment targets (it supplies atom, index, filename
    and line_offset)."""

    def assign_target(self, tgt, value, out):
        if isinstance(tgt, gast.Name):
            out.append(T.assign(tgt.id, value))
        elif isinstance(tgt, (gast.Tuple, gast.List)):
            star = [i for i, e in enumerate(tgt.elts) if isinstance(e, gast.Starred)]
            n = len(tgt.elts)
            mark = len(out)
            for i, e in enumerate(tgt.elts):
                if star and i == star[0]:
                    hi = i - n + 1
                    sl = gast.Slice(
                        lower=T.const(i), upper=T.const(hi) if hi else None, step=None
                    )
                    part = self.atom(gast.Subscript(value=value, slice=sl, ctx=gast.Load()), out)
                    lst = self.atom(gast.Call(func=T.name("list"), args=[part], keywords=[]), out)
                    self.assign_target(e.value, lst, out)
                    continue
                idx = i if not star or i < star[0] else i - n
                item = gast.Subscript(value=value, slice=T.const(idx), ctx=gast.Load())
                if isinstance(e, gast.Name):
                    out.append(T.assign(e.id, item))
                else:
                    self.assign_target(e, self.atom(item, out), out)
            if len(out) > mark and value.__class__ is gast.Name:
                # Python iterates value: the reverse pass checks it is a sequence of n items
                out[mark].unpacks = (value.id, n, star[0] if star else None)
        elif isinstance(tgt, gast.Subscript):
            obj, write_back = self.container(tgt.value, out)
            idx = self.index(tgt.slice, out)
            store = gast.Subscript(value=obj, slice=idx, ctx=gast.Store())
            out.append(gast.Assign(targets=[store], value=value, type_comment=None))
            write_back()
        elif isinstance(tgt, gast.Attribute):
            obj = self.atom(tgt.value, out)
            store = gast.Attribute(value=obj, attr=tgt.attr, ctx=gast.Store())
            out.append(gast.Assign(targets=[store], value=value, type_comment=None))
        else:
            raise UnsupportedSyntaxError(
                f"assignment to {type(tgt).__name__}",
                self.filename,
                getattr(tgt, "lineno", 0) + self.line_offset,
                None,
            )

    def container(self, e, out):
        """The container a subscript write goes into, as an atom, and a function that
        appends the statements putting it back where it came from. Writes copy on write
        (runtime.setitem), so ``b.data[0] = v`` is ``data = b.data; data[0] = v;
        b.data = data``, and ``m[i][j] = v`` writes the row back into ``m``: what was
        written shows where Python shows it."""
        if isinstance(e, gast.Attribute):
            base = self.atom(e.value, out)
            read = gast.Attribute(value=base, attr=e.attr, ctx=gast.Load())
            read.written_back = True  # the write goes back into base (below)
            obj = self.atom(read, out)

            def write_back():
                store = gast.Attribute(value=base, attr=e.attr, ctx=gast.Store())
                store.field_write_back = True  # base's own field? (runtime.own_field)
                out.append(gast.Assign(targets=[store], value=obj, type_comment=None))

            return obj, write_back
        if isinstance(e, gast.Subscript):
            base, outer_back = self.container(e.value, out)
            idx = self.index(e.slice, out)
            part = gast.Subscript(value=base, slice=idx, ctx=gast.Load())
            part.written_back = True  # not a view to watch: the write goes back into base
            obj = self.atom(part, out)

            def write_back():
                store = gast.Subscript(value=base, slice=idx, ctx=gast.Store())
                out.append(gast.Assign(targets=[store], value=obj, type_comment=None))
                outer_back()

            return obj, write_back
        return self.atom(e, out), lambda: None

    def augassign(self, s):
        out = []
        tgt = s.target
        if isinstance(tgt, gast.Name):
            if tgt.id in self.walrus:  # (Python reads the target first, then the value)
                raise UnsupportedSyntaxError(
                    f"`{tgt.id} op= ...` whose value rebinds `{tgt.id}` with `:=`", self.filename,
                    s.lineno + self.line_offset, None,
                    "bind the new value to another name, or write the two steps apart")
            rhs = self.atom(s.value, out)
            binop = gast.BinOp(left=T.name(tgt.id), op=s.op, right=rhs)
            binop.augmented = True  # objects may define __iadd__ & co.
            new = self.atom(binop, out)
            out.append(T.assign(tgt.id, new))
            out[-1].augmented = True  # `a op= v`: in place for arrays and lists (reverse.py)
            return out
        if isinstance(tgt, gast.Subscript):
            obj, write_back = self.container(tgt.value, out)
            idx = self.index(tgt.slice, out)
            cur = self.atom(gast.Subscript(value=obj, slice=idx, ctx=gast.Load()), out)
            rhs = self.atom(s.value, out)
            binop = gast.BinOp(left=cur, op=s.op, right=rhs)
            binop.element_augmented = True  # Python changes an array or list element in place
            new = self.atom(binop, out)
            store = gast.Subscript(value=obj, slice=idx, ctx=gast.Store())
            out.append(gast.Assign(targets=[store], value=new, type_comment=None))
            write_back()
            return out
        if isinstance(tgt, gast.Attribute):
            obj = self.atom(tgt.value, out)
            cur = self.atom(gast.Attribute(value=obj, attr=tgt.attr, ctx=gast.Load()), out)
            rhs = self.atom(s.value, out)
            binop = gast.BinOp(left=cur, op=s.op, right=rhs)
            binop.element_augmented = True
            new = self.atom(binop, out)
            store = gast.Attribute(value=obj, attr=tgt.attr, ctx=gast.Store())
            store.field_write_back = True  # in place for a list or an array (own_field)
            out.append(gast.Assign(targets=[store], value=new, type_comment=None))
            return out
        raise UnsupportedSyntaxError("this augmented assignment", self.filename, s.lineno)

    def enumerate_loop(self, s, out):
        """``for i, v in enumerate(xs, start): body`` as::

            i_next = start
            for v in xs:
                i = i_next
                i_next = i + 1
                body

        the same values in the same order (xs computing its items: each as it is taken,
        lazy_loops.py), the same names bound after the loop, the count kept through a
        ``continue`` or ``break``. Only for the builtin enumerate (see normalize), an
        index target that is a name, an item target of other names, a start that is an
        int constant or a name. True when s was so rewritten into out."""
        call, t = s.iter, s.target
        if (
            call.__class__ is not gast.Call
            or call.func.__class__ is not gast.Name
            or call.func.id != "enumerate"
            or t.__class__ not in (gast.Tuple, gast.List)
            or len(t.elts) != 2
            or any(k.arg != "start" for k in call.keywords)
        ):
            return False
        args = list(call.args) + [k.value for k in call.keywords]
        index, item = t.elts
        if (
            not 1 <= len(args) <= 2
            or any(a.__class__ is gast.Starred for a in args)
            or index.__class__ is not gast.Name
            or not _names_only(item)
            or index.id in {n.id for n in gast.walk(item) if n.__class__ is gast.Name}
        ):
            return False
        start = args[1] if len(args) == 2 else T.const(0)
        if start.__class__ is gast.Name:
            if any(n.__class__ in (gast.Call, gast.NamedExpr) for n in gast.walk(args[0])):
                return False  # (read before xs here: nothing xs runs may change it)
        elif not (start.__class__ is gast.Constant and type(start.value) is int):
            return False
        counter = self.namer.fresh(f"{index.id}_next")
        out.append(T.assign(counter, T.name(start.id) if start.__class__ is gast.Name else T.const(start.value)))
        body = [T.assign(index.id, T.name(counter)),
                T.assign(counter, gast.BinOp(left=T.name(index.id), op=gast.Add(), right=T.const(1)))]
        for b in body:
            gast.copy_location(b, s)
        if self.lazy_source(args[0]):
            return self.lazy_enumerate(s, item, args[0], body, out)
        it = self.atom(args[0], out)
        target = item
        if item.__class__ is not gast.Name:
            name = self.namer.fresh("item")
            self.assign_target(item, T.name(name), body)
            target = T.store(name)
        body.extend(self.block(s.body))
        loop = gast.For(target=target, iter=it, body=body, orelse=self.block(s.orelse), type_comment=None)
        loop.enumerate_index = index.id  # (the item at this index is the one visited)
        out.append(loop)
        return True

    def zip_loop(self, s, out):
        """``for a, b in zip(xs, ys): body``, xs and ys parameters in ``self.zip_lists``
        (lists or tuples whose items' kind the cache key holds, only read by the function
        and never rebound, and zip, len, min and range the builtins: see transform.py), as::

            n = min(len(xs), len(ys))
            for k in range(n):
                a, b = xs[k], ys[k]
                body

        the same items in the same order (nothing changes the lists meanwhile), bound to
        the same names, read as items of xs and ys (their kinds known, their adjoints
        added at their positions). True when s was so rewritten into out."""
        call = s.iter
        if (call.__class__ is not gast.Call or call.func.__class__ is not gast.Name or call.func.id != "zip"
                or call.keywords or not call.args
                or not all(a.__class__ is gast.Name and a.id in self.zip_lists for a in call.args)):
            return False
        lengths = [gast.Call(func=T.name("len"), args=[T.name(a.id)], keywords=[]) for a in call.args]
        size = lengths[0] if len(lengths) == 1 else gast.Call(func=T.name("min"), args=lengths, keywords=[])
        n = self.atom(size, out)
        k = self.namer.fresh("k")
        items = gast.Tuple(elts=[gast.Subscript(value=T.name(a.id), slice=T.name(k), ctx=gast.Load())
                                 for a in call.args], ctx=gast.Load())
        loop = gast.For(target=T.store(k), iter=gast.Call(func=T.name("range"), args=[n], keywords=[]),
                        body=[gast.Assign(targets=[s.target], value=items, type_comment=None)] + s.body,
                        orelse=s.orelse, type_comment=None)
        gast.copy_location(loop, s)
        gast.copy_location(loop.body[0], s)
        loop.body[0].no_origin = True  # (under the loop's own comment)
        self.for_(loop, out)
        return True

    def dict_loop(self, s, out):
        """``for k, v in d.items(): body`` (or ``for v in d.values()``), d a parameter in
        ``self.dict_params`` (a dict whose values' kind the cache key holds, with string
        keys, only read by the function and never rebound: see transform.py), as::

            for k in d:
                v = d[k]
                body

        the same pairs in the same order (nothing changes d meanwhile), v read as an item
        of d (its kind known, its adjoint added at its key). True when s was so rewritten."""
        call = s.iter
        if (call.__class__ is not gast.Call or call.args or call.keywords
                or call.func.__class__ is not gast.Attribute or call.func.attr not in ("items", "values")
                or call.func.value.__class__ is not gast.Name or call.func.value.id not in self.dict_params):
            return False
        d = call.func.value.id
        key = self.namer.fresh("key")
        value = gast.Subscript(value=T.name(d), slice=T.name(key), ctx=gast.Load())
        t = s.target
        if call.func.attr == "values":
            binds = [(t, value)]
        elif t.__class__ in (gast.Tuple, gast.List) and len(t.elts) == 2 and not any(
                e.__class__ is gast.Starred for e in t.elts):
            binds = [(t.elts[0], T.name(key)), (t.elts[1], value)]  # (k, then v: Python's order)
        else:
            binds = [(t, gast.Tuple(elts=[T.name(key), value], ctx=gast.Load()))]
        body = [gast.Assign(targets=[tgt], value=v, type_comment=None) for tgt, v in binds]
        loop = gast.For(target=T.store(key), iter=T.name(d), body=body + s.body, orelse=s.orelse, type_comment=None)
        gast.copy_location(loop, s)
        for b in body:
            gast.copy_location(b, s)
            b.no_origin = True  # (under the loop's own comment)
        self.for_(loop, out)
        return True


def _names_only(t):
    """Is t a name, or a tuple or list of such (nested)?"""
    if t.__class__ is gast.Name:
        return True
    return t.__class__ in (gast.Tuple, gast.List) and all(_names_only(e) for e in t.elts)
