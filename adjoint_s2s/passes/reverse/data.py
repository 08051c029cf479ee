"""The reverse pass, reading data: attributes, subscripts and displays (tuples, lists,
dicts).

Reads the kind of the container; writes the forward read and a recipe that sends the
adjoint of what was read back into the adjoint of the container (a structural tangent
for objects, a scatter for arrays, the run time's pair for anything else).

Before (``xs`` a list)::

    xs_i = xs[0]
    xs_i_1 = xs[1]

After::

    xs_i, xs_i_pullback = _rt.getitem_pair(xs, 0)
    xs_i_1, xs_i_1_pullback = _rt.getitem_pair(xs, 1)
    ...
    b_xs = xs_i_1_pullback(b_xs_i_1)
    b_xs = _rt.acc(b_xs, xs_i_pullback(b_xs_i))
"""
import gast

from .. import codegen as C
from ..activity import ARRAY, REAL, SCALAR
from ..codegen import If, src
from ...errors import UnsupportedSyntaxError
from ...kinds import ITEMS, ROW_ITEMS
from .common import _item_key


class DataMixin:
    """Attribute reads, subscripts and displays."""

    # ----- attributes, subscripts, displays ------------------------------------------------
    def attribute(self, x, e, fwd):
        base = e.value
        k = self.kind_of(base)
        if not self.is_active(base):
            fwd.append(f"{x} = {src(e)}")
            return None
        self.helpers.add("_rt")
        if k in SCALAR and e.attr in ("real", "imag"):
            fwd.append(f"{x} = {src(e)}")
            part = "_rt.re" if e.attr == "real" else "_rt.im_seed"

            def rev(st):
                def body(g, num):
                    expr = f"{part}({g})" if e.attr == "imag" else f"{g}"
                    if k == REAL and e.attr == "imag":
                        return
                    st.acc(base.id, expr, num)

                self.read_g(st, x, body)

            return rev
        if k == ARRAY:
            fwd.append(f"{x} = {src(e)}")
            return self._rev_read(x, base, lambda g: f"_rt.attr_grad({src(base)}, {e.attr!r}, {g})")
        if (base.id, e.attr) in self.info.param_fields and base.id in self.info.params:
            # a record's field read once at the entry (param_fields.py): a plain field
            fwd.append(f"{x} = {src(e)}")
            return self._rev_read(x, base, lambda g: f"_rt.entry_field_grad({src(base)}, {e.attr!r}, {g})")
        return self._rev_pair_read(x, base, f"_rt.getattr_pair({src(base)}, {e.attr!r})", fwd)

    def _rev_read(self, x, base, adjoint):
        """The adjoint of reading part of base (an array): b_base += adjoint(g)."""

        def rev(st):
            self.read_g(st, x, lambda g, num: st.acc(base.id, adjoint(g), False))

        return rev

    def _rev_pair_read(self, x, base, pair_call, fwd):
        """Reading part of a value of unknown kind: x, x_pullback = pair_call, and
        b_base += x_pullback(b_x)."""
        pbn = self.fresh_local(f"{x}_pullback", self.fwd, self.depth)
        fwd.append(f"{x}, {pbn} = {pair_call}")

        def rev(st):
            if st.get(x) is None:
                return
            st.acc(base.id, f"{pbn}({st.adj(x)})", False)

        return rev

    def subscript(self, x, e, fwd):
        base = e.value
        if not self.is_active(base):
            rev = self._keyed_read(x, e, fwd)
            if rev is not None:
                return rev
            fwd.append(f"{x} = {src(e)}")
            return None
        items = self.unpacked.get(base.id)
        if items is not None:  # `a, b = f(...)`: a copy of the item's adjoint
            fwd.append(f"{x} = {src(e)}")
            return self.rev_copy(x, items[_item_key(e, items)])
        self.helpers.add("_rt")
        idx = C.index_value_src(e.slice)
        k = self.kind_of(base)
        if k == ARRAY or self._known_item(base, e.slice):
            fwd.append(f"{x} = {src(e)}")
            return self._rev_read(x, base, lambda g: f"_rt.getitem_grad({src(base)}, {idx}, {g})")
        return self._rev_pair_read(x, base, f"_rt.getitem_pair({src(base)}, {idx})", fwd)

    def _known_item(self, base, key):
        """Is base[key] an item of a list, tuple or dict argument whose items all have one kind,
        read only by item (param_fields.known_items)? Read as it is, its adjoint added
        at its position: a tuple's or a dict's at any key, a list's at one that cannot
        be negative (its length when the pullback runs may not be the same)."""
        got = self.info.param_items.get(base.id)
        if got is None or got[1] == ROW_ITEMS:  # a table argument, one of its rows, a captured
            return base.id in self.facts.known_seqs and self.facts.counts_up(key)  # list: at >= 0
        return (base.id in self.list_items and key.__class__ in (gast.Name, gast.Constant)
                and (got[1] != ITEMS or self.facts.counts_up(key)))

    def _keyed_read(self, x, e, fwd):
        """obj[key] where only the key depends on the inputs (np.r_[x, y], a __getitem__
        computing with its key): _rt.index_get at run time, whose rule differentiates
        what the key computes, gives no gradient to a plain lookup's key, or refuses."""
        if self.kind_of(e.value) == ARRAY:
            return None  # an array's lookup: piecewise constant in its key
        sl = e.slice
        elts = list(sl.elts) if isinstance(sl, gast.Tuple) else [sl]

        def active_in(node):
            return any(isinstance(n, gast.Name) and self.is_active(n) for n in gast.walk(node))

        if not any(active_in(v) for v in elts):
            return None
        if any(isinstance(v, gast.Slice) and active_in(v) for v in elts):
            self.refuse(
                "a slice whose bounds depend on the differentiated inputs",
                "compute the values with np.linspace or np.arange outside the index",
            )
        self.helpers.add("_rt")
        pbn = self.fresh_local(f"{x}_pullback", self.fwd, self.depth)
        keys = "".join(", " + C.index_value_src(v) for v in elts)
        fwd.append(f"{x}, {pbn} = _rt.call(_rt.index_get, {src(e.value)}, {isinstance(sl, gast.Tuple)}{keys})")
        none = gast.Constant(value=None, kind=None)
        return self.rev_call_pullback(x, pbn, [none, e.value, none] + elts)

    def display(self, x, e, fwd):
        elts = e.elts
        starred = any(isinstance(v, gast.Starred) for v in elts)
        self.helpers.add("_rt")
        if starred:  # (the sizes once the display is made: a lazy iterator is used up then)
            lens = self.fresh_local(f"{x}_sizes", fwd, self.depth)
            parts = ", ".join(
                f"_rt.starred_len({src(v.value)})" if isinstance(v, gast.Starred) else "None" for v in elts
            )
            rebinds = any(isinstance(v, gast.Starred) and src(v.value) == x for v in elts)
            if rebinds:  # (`l = [*l, y]`: l's size before it is rebound)
                fwd.append(f"{lens} = ({parts},)")
        fwd.append(f"{x} = {src(e)}")
        if starred and not rebinds:
            fwd.append(f"{lens} = ({parts},)")

        def rev(st):
            def body(g, num):
                for i, v in enumerate(elts):
                    if isinstance(v, gast.Starred):
                        if self.is_active(v.value):
                            st.acc(v.value.id, f"_rt.star_part({g}, {lens}, {i}, {src(v.value)})", False)
                    elif self.is_active(v):
                        part = f"_rt.star_part({g}, {lens}, {i}, None)" if starred else f"_rt.part({g}, {i})"
                        st.acc(v.id, part, False)

            active = [i for i, v in enumerate(elts) if self.is_active(v)]
            s = st.get(x)
            if (
                starred
                or s is None
                or not active
                or not all(isinstance(elts[i], gast.Name) and self.kinds.get(elts[i].id) == REAL for i in active)
            ):
                self.read_g(st, x, body)
                return
            # a tuple of real numbers (a callee's `return theta, omega`): its seed is most
            # often a tuple of floats, taken apart as it is; anything else goes the general way
            b = st.adj(x)
            test = f"type({b}) is tuple and len({b}) == {len(elts)}"
            test += "".join(f" and type({b}[{i}]) is float" for i in active)
            fast = If(test)
            before = st.snapshot()
            out = st.out
            st.out = fast.body
            for i in active:
                st.acc(elts[i].id, f"{b}[{i}]", True)
            fast_status = st.snapshot()
            st.status = before
            st.out = fast.orelse
            self.read_g(st, x, body)
            st.out = out
            st.status = st.merge(fast_status, st.snapshot(), fast.body, fast.orelse)
            out.append(fast)

        return rev

    def dict_display(self, x, e, fwd):
        fwd.append(f"{x} = {src(e)}")
        self.helpers.add("_rt")

        # an entry whose key a later one sets again is not in the dict: no gradient. With
        # constant keys that is known now; a computed key or ** asks at run time
        keys = [k.value if k is not None and k.__class__ is gast.Constant else _DYNAMIC for k in e.keys]
        dynamic = _DYNAMIC in keys
        if dynamic:
            entries = "(" + "".join(
                f"({k is None}, {src(v) if k is None else src(k)}), " for k, v in zip(e.keys, e.values)) + ")"
        else:
            later, replaced = {}, set()
            for i in range(len(keys) - 1, -1, -1):
                if keys[i] in later:  # (dict equality: 1, 1.0 and True are one key)
                    replaced.add(i)
                later[keys[i]] = None

        def rev(st):
            def body(g, num):
                for i, (k, v) in enumerate(zip(e.keys, e.values)):
                    if not self.is_active(v) or (not dynamic and i in replaced):
                        continue
                    if dynamic:
                        st.acc(v.id, f"_rt.display_part({g}, {entries}, {i})", False)
                    else:
                        st.acc(v.id, f"_rt.part({g}, {src(k)})", False)

            self.read_g(st, x, body)

        return rev

    def refuse(self, construct, hint):
        """UnsupportedSyntaxError for the statement being generated, at the user's line."""
        line = getattr(self.cur_stmt, "src_line", None)
        raise UnsupportedSyntaxError(
            construct, self.info.filename, line if line is not None else getattr(self, "last_line", None),
            hint=hint,
        )


_DYNAMIC = object()  # a key known only at run time (or a ** entry)
