"""The reverse pass, operators: ``x op y`` and ``op x`` on numbers, arrays and objects, and
the builtin ``min`` and ``max`` of numbers.

Reads the kinds of the operands (from the activity analysis); writes the forward line,
and a recipe that adds each active operand's contribution to its adjoint. Numbers and
arrays get the inline templates of ``rules``; anything else goes through ``_rt.binop``,
whose pullback is called in the backward pass.

Before (normalised, x and y floats)::

    result = x * y - x

After (the forward line is kept; the pullback's part)::

    b_x = -b_result
    b_x = b_x + b_result * y
    b_y = b_result * x
"""
import gast

from ..activity import ARRAY, BINOP_NAMES, CONST, NUMERIC, OTHER, REAL, SCALAR
from ..codegen import _BIN, src
from ... import rules as R
from .common import NUM, _BITOP_NAMES, _contribution, _pow_const_partial, fill


_NUM_CONST = NUMERIC + (CONST,)
_PLACES = "abcdefhijk"  # the arguments of an inline min or max, in templates (g: the adjoint)


class OperatorsMixin:
    """Binary and unary operators, and the elementwise templates they share with calls."""

    # ----- operators ------------------------------------------------------------------------
    def binop(self, x, e, fwd):
        a, b = e.left, e.right
        ka, kb = self.kind_of(a), self.kind_of(b)
        opname = BINOP_NAMES.get(type(e.op))
        numeric = ka in _NUM_CONST and kb in _NUM_CONST and CONST not in (ka, kb)
        if opname is None:
            # |, &, ^, <<, >>: integers and bools carry no tangent; anything else (an
            # object's __or__, dicts merged with |) goes to run-time dispatch
            opname = _BITOP_NAMES.get(type(e.op))
            if (
                opname is None
                or not (self.is_active(a) or self.is_active(b))
                or ka in (REAL, CONST) and kb in (REAL, CONST)
            ):
                fwd.append(f"{x} = {src(e)}")
                return None
            numeric = False
        if opname == "MatMult" and numeric:
            fwd.append(self.op_line(x, e, ka, src(a), src(b), opname))
            self.helpers.add("_rt")

            def rev(st):
                def body(g, num):
                    if self.is_active(a):
                        st.acc(a.id, f"_rt.matmul_adjoint_a({g}, {src(a)}, {src(b)})", True)
                    if self.is_active(b):
                        st.acc(b.id, f"_rt.matmul_adjoint_b({g}, {src(a)}, {src(b)})", True)

                self.read_g(st, x, body)

            return rev
        if numeric:
            fn, pa, pb = R.operators.BINARY[opname] if opname != "MatMult" else (None, None, None)
            sa = a.id if a.__class__ is gast.Name else src(a)  # (src of a name, inline)
            sb = b.id if b.__class__ is gast.Name else src(b)
            fwd.append(self.op_line(x, e, ka, sa, sb, opname))
            if opname == "Pow" and ka == REAL and kb == REAL and self.kinds.get(x) == REAL and not (
                    b.__class__ is gast.Constant and float(b.value).is_integer()
                    or b.__class__ is gast.Name and b.id in self.int_names
                    or a.__class__ is gast.Constant and a.value >= 0):
                # (the kind analysis took it for real: refused where Python gives complex)
                self.helpers.add("_rt")
                fwd.append(f"if type({x}) is complex:")
                fwd.append(f"    _rt.complex_power({sa}, {sb})")
            if opname == "Mult" and a.__class__ is gast.Name and b.__class__ is gast.Name and a.id == b.id:
                # a square: one contribution, g * (2 * a), instead of two
                return self.elementwise(x, [("a", a)], {"a": "2 * a"}, {}, "same", None, [ka], [sa])
            if opname == "Pow" and isinstance(b, gast.Constant):
                pa = _pow_const_partial(b.value, ka in SCALAR)
            return self._binop_numbers(x, a, b, ka, kb, sa, sb, pa, pb)
        # objects, lists, tuples: dispatch at run time (user dunders are differentiated)
        self.helpers.add("_rt")
        pbn = self.fresh_local(f"{x}_pullback", self.fwd, self.depth)
        inplace = ", True" if getattr(e, "augmented", False) else ""
        fwd.append(f"{x}, {pbn} = _rt.binop({opname!r}, {src(a)}, {src(b)}{inplace})")
        return self.rev_call_pullback(x, pbn, [a, b])

    def op_line(self, x, e, ka, sa, sb, opname):
        """The forward line of ``x = a OP b`` (src(e)). From ``a OP= b`` with a an array:
        NumPy writes into a, keeping its shape and dtype or raising, where the generated
        code rebinds, so the value goes through ``_rt.in_place`` (the same array in the
        usual case; a float32 array plus a float64 one stays float32, as in Python)."""
        text = f"{sa} {_BIN[type(e.op)]} {sb}"
        if ka == ARRAY and getattr(e, "augmented", False):
            self.helpers.add("_rt")
            return f"{x} = _rt.in_place({sa}, {text}, {sb}, {opname!r})"
        return f"{x} = {text}"

    def unaryop(self, x, e, fwd):
        a = e.operand
        fwd.append(f"{x} = {src(e)}")
        if isinstance(e.op, gast.Invert) and self.is_active(a) and self.kind_of(a) == OTHER:
            self.helpers.add("_rt")
            fwd.pop()
            pbn = self.fresh_local(f"{x}_pullback", self.fwd, self.depth)
            fwd.append(f"{x}, {pbn} = _rt.unop('Invert', {src(a)})")
            return self.rev_call_pullback(x, pbn, [a])
        if isinstance(e.op, (gast.Not, gast.Invert)):
            return None
        k = self.kind_of(a)
        partial = "-1" if isinstance(e.op, gast.USub) else "1"
        if k in NUMERIC:
            return self.elementwise(x, [("a", a)], {"a": partial}, {}, "same")

        self.helpers.add("_rt")
        fwd.pop()
        pbn = self.fresh_local(f"{x}_pullback", self.fwd, self.depth)
        opname = "USub" if partial == "-1" else "UAdd"
        fwd.append(f"{x}, {pbn} = _rt.unop({opname!r}, {src(a)})")
        return self.rev_call_pullback(x, pbn, [a])

    def min_max(self, x, e, obj, fwd):
        """min(a, b, ...) / max(a, b, ...) of real numbers, inline: the gradient goes to the
        one Python picks, split evenly among the arguments equal to it (a tie, as the
        run-time rule and np.maximum); None when the call does not fit."""
        n = len(e.args)
        if not 2 <= n <= len(_PLACES) or e.keywords or any(a.__class__ is gast.Starred for a in e.args):
            return None
        if any(self.kind_of(a) != REAL for a in e.args) or self.kinds.get(x) != REAL:
            return None
        fwd.append(f"{x} = {src(e)}")
        # (the template's own a, b..., filled once: `min(c, a)` filled by hand read `c < c`)
        places = _PLACES[:n]
        if n == 2:
            op = "<" if obj is min else ">"
            adjoints = {"a": f"(0.0 if b {op} a else 0.5 * g if a == b else g)",  # (a tie: split)
                        "b": f"(g if b {op} a else 0.5 * g if a == b else 0.0)"}
        else:  # ans is the one picked: a share to each argument equal to it; NaN only as
            # the first argument (no comparison with it holds), which Python then gives.
            # (Counted as ints: NumPy's booleans add as `or`, np.True_ + np.True_ is True.)
            ties = " + ".join(f"(1 if {p} == ans else 0)" for p in places)
            adjoints = {p: f"(g / ({ties}) if {p} == ans else 0.0)" for p in places[1:]}
            adjoints["a"] = f"(g / ({ties}) if a == ans else g if ans != ans else 0.0)"
        return self.elementwise(x, list(zip(places, e.args)), {}, adjoints, "same")

    def elementwise(self, x, args, partials, adjoints, prim_kind, extra=None, kinds=None, srcs=None):
        """Reverse of a primitive: b_arg += g * partial (conj, unbroadcast) or a template.
        kinds, srcs: the operands' kinds and sources, when the caller has them already."""
        if kinds is None:
            kinds = [self.kind_of(v) for _, v in args]
        if prim_kind == "array" or prim_kind == "other":
            cls = "array"
        else:  # of the operands with a partial or an adjoint (no constant): all real,
            all_real = all_scalar = True  # all real or complex, or else arrays
            for (p, _), k in zip(args, kinds):
                if k != CONST and k != REAL and (partials.get(p) is not None or p in adjoints):
                    all_real = False
                    if k not in SCALAR:
                        all_scalar = False
                        break
            cls = "real" if all_real else "complex" if all_scalar else "array"
        if cls == "real" and self.kinds.get(x, OTHER) not in (REAL, CONST):
            cls = "complex"  # real operands, a possibly complex result (x ** 0.5 of x < 0)
        if srcs is None:
            srcs = [src(v) for _, v in args]
        mapping = dict(zip([p for p, _ in args], srcs))
        if extra:
            mapping.update(extra)
        mapping["ans"] = x
        # per operand that is a name and has an adjoint template or a partial:
        # (its name, kind, source, adjoint template or None, partial or None)
        ops = []
        for (p, v), k, v_src in zip(args, kinds, srcs):
            if v.__class__ is not gast.Name:
                continue
            adj = adjoints.get(p)
            if adj is not None and isinstance(adj, dict):
                adj = adj.get(cls, adj.get("any"))
            partial = partials.get(p) if adj is None else None
            if adj is not None or partial is not None:
                ops.append((v.id, k, v_src, adj, partial))
        return self._rev_partials(x, ops, mapping, cls)

    def _binop_numbers(self, x, a, b, ka, kb, sa, sb, pa, pb):
        """elementwise(x, [("a", a), ("b", b)], {"a": pa, "b": pb}, {}, "same", None,
        [ka, kb], [sa, sb]) of `x = a op b` on numbers or arrays, its lists and dicts
        made directly (most statements of arithmetic code)."""
        cls = "real"
        for k, p in ((ka, pa), (kb, pb)):
            if k != CONST and k != REAL and p is not None:
                cls = "complex" if k in SCALAR and cls != "array" else "array"
        if cls == "real" and self.kinds.get(x, OTHER) not in (REAL, CONST):
            cls = "complex"  # real operands, a possibly complex result (x ** 0.5 of x < 0)
        ops = []
        if pa is not None and a.__class__ is gast.Name:
            ops.append((a.id, ka, sa, None, pa))
        if pb is not None and b.__class__ is gast.Name:
            ops.append((b.id, kb, sb, None, pb))
        return self._rev_partials(x, ops, {"a": sa, "b": sb, "ans": x}, cls)

    def _rev_partials(self, x, ops, mapping, cls):
        """The recipe of elementwise: each active operand of ops adds its contribution
        (its adjoint template filled, or g times its partial) to its adjoint."""

        def body(st, g, num):
            mapping["g"] = g
            active = self.active  # (asked here: a later statement may make a name active)
            for name, k, v_src, adj, partial in ops:
                if name not in active:
                    continue
                if adj is not None:
                    expr = fill(adj, mapping)
                    self.note_helpers(expr)
                    if k == REAL and cls == "complex":
                        expr = f"_rt.re({expr})"
                    st.acc(name, expr, num and cls != "array" or num and k == ARRAY)
                    continue
                d = fill(partial, mapping)
                if "." in d:
                    self.note_helpers(d)
                expr = _contribution(g, d, cls, k, v_src)
                if "_rt." in expr:
                    self.helpers.add("_rt")
                st.acc(name, expr, num)

        def rev(st):
            s = st.status.get(x)
            if s is None:
                return
            if s == NUM:  # (read_g's first case, inline: most statements of numbers)
                body(st, st.adj(x), True)
            else:
                self.read_g(st, x, lambda g, num: body(st, g, num))

        return rev

    def note_helpers(self, text):
        if "." not in text:  # (every prefix ends with a dot)
            return
        for mod, prefix in _HELPER_PREFIXES:
            if prefix in text:
                self.helpers.add(mod)


_HELPER_PREFIXES = tuple((mod, f"{mod}.") for mod in ("_rt", "math", "cmath", "np", "operator"))
