"""Random programs in the style users write, for the differential fuzzer.

``generate(seed)`` returns a ``Program``: the source of a module that defines
``f(x, v, w)`` or ``f(x, v, w, A)`` (x a float, v and w float arrays of length N, A an
R x N float array) returning a float, and the sorted list of the construct families the
program uses. The same seed always gives the same text (only ``random.Random(seed)``
decides; no set or hash order leaks into the output).

Every construct family is one small method ``c_<family>`` that appends statements to the
body of ``f`` (and, for helpers and classes, a definition to the module) and records its
name. Expressions are built by shape (``expr(shape, depth)``), so every program is valid
Python that runs at the inputs.

The programs stay smooth where they are evaluated: every nonlinearity is squashed
(``tanh``, ``1 + z*z`` under logs, roots and divisions), branch tests and the kinks of
``maximum``/``clip``/``where`` compare against constants that random inputs only hit with
tiny probability, and loop and recursion counts are integers. The oracle drops the few
coordinates where central differences at two step sizes disagree.
"""

import random
from dataclasses import dataclass, field

N = 4  # length of v and w
R = 3  # rows of A

S = ()
V = (N,)
RV = (R,)
M = (R, N)
MT = (N, R)
SHAPES = [S, V, RV, M, MT]

HEADER = """\
import math
from dataclasses import dataclass

import numpy as np
"""


@dataclass
class Program:
    seed: int
    source: str
    constructs: list = field(default_factory=list)
    params: tuple = ("x", "v", "w")


def fmt(c):
    return repr(round(c, 2))


class Gen:
    def __init__(self, seed):
        self.seed = seed
        self.r = random.Random(seed)
        self.matrix = self.r.random() < 0.35
        self.params = ("x", "v", "w", "A") if self.matrix else ("x", "v", "w")
        self.env = {"x": S, "v": V, "w": V}
        if self.matrix:
            self.env["A"] = M
        self.owned = []  # local arrays that may be written in place (copies, and views of them)
        self.lists = []  # local lists of floats
        self.defs = []  # module-level definitions (source blocks)
        self.lines = []  # body of f, each (indent, text)
        self.used = set()
        self.n = 0
        self.early = False

    # ----- bookkeeping -------------------------------------------------------------------
    def new(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def emit(self, text, indent=0):
        self.lines.append((indent, text))

    def use(self, name):
        self.used.add(name)

    def names(self, shape):
        return [k for k, s in self.env.items() if s == shape]

    def const(self, lo=-1.0, hi=1.0):
        return fmt(self.r.uniform(lo, hi))

    def pick(self, options):
        return self.r.choice(options)

    def bind(self, name, shape):
        self.env[name] = shape

    # ----- expressions by shape ----------------------------------------------------------
    def leaf(self, shape):
        names = self.names(shape)
        if shape == S:
            opts = list(names) * 2 + [self.const(), f"v[{self.r.randrange(N)}]"]
            if self.matrix:
                opts.append(f"A[{self.r.randrange(R)}, {self.r.randrange(N)}]")
            return self.pick(opts)
        if names:
            return self.pick(names)
        if shape == RV:
            return "A[:, 1]" if self.matrix else "v[:3]"
        if shape == M:
            return "A" if self.matrix else "np.outer(v[:3], w)"
        if shape == MT:
            return "A.T" if self.matrix else "np.outer(w, v[1:])"
        if shape == (N, N):
            return "(A.T @ A)" if self.matrix else "np.outer(v, w)"
        if shape == (R, R):
            return "(A @ A.T)" if self.matrix else "np.outer(w[1:], v[:3])"
        return self.pick(["v", "w"])

    def expr(self, shape, d=2):
        if d <= 0 or self.r.random() < 0.2:
            return self.leaf(shape)
        if shape == S:
            return self.scalar(d)
        if len(shape) == 1:
            return self.vector(shape[0], d)
        return self.matrix_expr(shape, d)

    def scalar(self, d):
        r = self.r
        e = lambda: self.expr(S, d - 1)  # noqa: E731
        k = r.random()
        if k < 0.35:
            a, b = e(), e()
            return self.pick([
                f"({a} + {b})",
                f"({a} - {b})",
                f"{a} * {b}",
                f"{a} / (1.0 + {b} * {b})",
                f"{a} / (2.0 + math.cos({b}))",
                f"({a}) ** 2",
                f"max({a}, {b})",
            ])
        if k < 0.6:
            a = e()
            return self.pick([
                f"math.sin({a})",
                f"math.tanh({a})",
                f"math.cos({a})",
                f"math.exp(math.tanh({a}))",
                f"math.log(1.0 + {a} * {a})",
                f"math.sqrt(1.0 + {a} * {a})",
                f"math.atan({a})",
                f"float(np.tanh({a}))",
            ])
        self.use("reduction")
        return self.reduction(d)

    def reduction(self, d):
        a = self.expr(V, d - 1)
        b = self.expr(V, d - 1)
        c = self.const(-0.5, 0.5)
        opts = [
            f"np.sum({a})",
            f"({a}).sum()",
            f"({a}).mean()",
            f"np.dot({a}, {b})",
            f"({a}).dot({b})",
            f"({a} * {b}).sum()",
            f"({a}).max()",
            f"np.min({a})",
            f"np.linalg.norm({a})",
            f"np.prod(np.tanh({a}) + 1.5)",
            f"({a}).std()",
            f"np.sum(np.where({a} > {c}, {a}, 0.0))",
            f"({a})[({a}) > {c}].sum()",
            f"({a})[{self.r.randrange(-N, N)}]",
            f"({a}).reshape(2, 2).T.dot(({b})[:2]).sum()",
            f"({a})[::-1].cumsum()[-1]",
            f"float(({a})[{self.r.randrange(N)}])",
            f"np.var({a})",
            f"({a}).item({self.r.randrange(N)})",
            f"np.linspace(0.0, ({a})[0], 5).sum()",
            f"np.stack([{a}, {b}]).sum(axis=0).dot(v)",
            f"np.diag(np.outer({a}, {b})).sum()",
            f"np.triu(np.outer({a}, {b}), 1).sum()",
            f"np.einsum('i,i->', {a}, {b})",
            f"abs(({a}).sum() - {fmt(self.r.uniform(5.0, 8.0))})",
        ]
        if self.matrix or self.r.random() < 0.3:
            m = self.expr(M, d - 1)
            u = self.expr(RV, d - 1)
            opts += [
                f"({m}).T.sum()",
                f"({m}).sum(axis={self.r.randrange(2)}).mean()",
                f"np.sum({m}, axis=0, keepdims=True).sum()",
                f"np.trace(({m}) @ (({m}).T))",
                f"({m}).T.dot({u}).sum()",
                f"np.mean(({m})[::-1, 1])",
                f"({m})[{self.r.randrange(R)}, {self.r.randrange(N)}]",
                f"np.max({m}, axis=1).sum()",
                f"np.linalg.det(np.eye({R}) + 0.1 * (({m}) @ ({m}).T))",
                f"np.linalg.solve(np.eye({R}) + 0.1 * (({m}) @ ({m}).T), {u}).sum()",
                f"np.einsum('ij,j->i', {m}, v).sum()",
                f"np.linalg.norm({m}, axis=1).sum()",
                f"np.linalg.inv(np.eye({R}) + 0.1 * (({m}) @ ({m}).T)).dot({u}).sum()",
            ]
        return self.pick(opts)

    def vector(self, n, d):
        shape = (n,)
        e = lambda: self.expr(shape, d - 1)  # noqa: E731
        s = lambda: self.expr(S, d - 1)  # noqa: E731
        k = self.r.random()
        c = self.const(-0.5, 0.5)
        if k < 0.3:
            a, b = e(), e()
            return self.pick([
                f"({a} + {b})",
                f"({a} - {b})",
                f"{a} * {b}",
                f"{s()} * {a}",
                f"({a} + {s()})",
                f"{a} / (1.0 + {b} * {b})",
                f"({a}) ** 2",
            ])
        if k < 0.5:
            a = e()
            return self.pick([
                f"np.tanh({a})",
                f"np.sin({a})",
                f"np.exp(np.tanh({a}))",
                f"np.log1p({a} * {a})",
                f"np.sqrt(1.0 + {a} * {a})",
                f"np.cumsum({a})",
                f"np.roll({a}, 1)",
                f"np.sort({a})",
                f"np.flip({a})",
                f"np.exp(-({a}) * ({a}))",
                f"({a}).clip({fmt(-abs(float(c)) - 0.4)}, {fmt(abs(float(c)) + 0.4)})",
                f"np.take({a}, {[self.r.randrange(n) for _ in range(n)]})",
                f"np.linspace({s()}, {s()}, {n})",
                f"np.vstack([{a}, {e()}]).mean(axis=0)",
            ])
        if k < 0.7:
            a, b = e(), e()
            self.use("where_maximum_clip")
            return self.pick([
                f"np.where({a} > {c}, {a}, {b})",
                f"np.maximum({a}, {c})",
                f"np.minimum({a}, {b})",
                f"np.clip({a}, {fmt(-abs(float(c)) - 0.4)}, {fmt(abs(float(c)) + 0.4)})",
            ])
        if k < 0.82:
            a = e()
            self.use("indexing")
            perm = list(range(n))
            self.r.shuffle(perm)
            rep = [self.r.randrange(n) for _ in range(n)]
            return self.pick([
                f"({a})[::-1]",
                f"({a})[{perm}]",
                f"({a})[np.array({rep})]",
            ])
        # from matrices
        self.use("matrix_vector")
        other = N if n == R else R
        opts = [
            f"np.sum({self.expr((other, n), d - 1)}, axis=0)",
            f"({self.expr((n, other), d - 1)}).mean(axis=1)",
            f"({self.expr((other, n), d - 1)}).T.dot({self.expr((other,), d - 1)})",
            f"(({self.expr((n, other), d - 1)}) @ ({self.expr((other,), d - 1)}))",
            f"({self.expr((other, n), d - 1)})[{self.r.randrange(other)}]",
            f"({self.expr((n, other), d - 1)})[:, {self.r.randrange(other)}]",
            f"({self.expr((other, n), d - 1)}).max(axis=0)",
        ]
        if n == N:
            a, b = e(), e()
            opts += [
                f"({a}).reshape(2, 2).T.ravel()",
                f"({a}).reshape(2, 2).T.reshape(-1)",
                f"np.concatenate([({a})[:2], ({b})[2:]])",
                f"np.r_[({a})[:2], ({b})[2:]]",
            ]
        return self.pick(opts)

    def matrix_expr(self, shape, d):
        a_, b_ = shape
        e = lambda: self.expr(shape, d - 1)  # noqa: E731
        k = self.r.random()
        self.use("matrix")
        if k < 0.3:
            a, b = e(), e()
            return self.pick([
                f"({a} + {b})",
                f"{a} * {b}",
                f"{self.expr(S, d - 1)} * {a}",
                f"np.tanh({a})",
                f"({a})[::-1]",
                f"({a})[:, ::-1]",
            ])
        if k < 0.5:
            self.use("transpose")
            return f"({self.expr((b_, a_), d - 1)}).T"
        if k < 0.75:
            self.use("broadcasting")
            u, w = self.expr((a_,), d - 1), self.expr((b_,), d - 1)
            a = e()
            return self.pick([
                f"np.outer({u}, {w})",
                f"({u})[:, None] * ({w})[None, :]",
                f"({u}).reshape(-1, 1) + {w}",
                f"{a} - ({a}).mean(axis=1, keepdims=True)",
                f"{a} / (1.0 + np.sum({a} * {a}, axis=0, keepdims=True))",
                f"{a} * np.max({a}, axis=0, keepdims=True)",
            ])
        kk = self.pick([R, N])
        return f"(({self.expr((a_, kk), d - 1)}) @ ({self.expr((kk, b_), d - 1)}))"

    # ----- construct families (statements) ----------------------------------------------
    def c_assign(self, ind=0):
        shape = self.pick([S, S, V, V, RV, M] if self.matrix else [S, S, V, V])
        name = self.new("s" if shape == S else "u" if len(shape) == 1 else "B")
        self.emit(f"{name} = {self.expr(shape)}", ind)
        self.bind(name, shape)

    def c_inplace(self, ind=0, vector=False):
        self.use("inplace")
        if self.matrix and not vector and self.r.random() < 0.3:
            B = self.new("B")
            self.emit(f"{B} = {self.pick(['A.copy()', 'np.array(A)', 'A * 1.0'])}", ind)
            for _ in range(self.r.randint(1, 3)):
                self.emit(self.pick([
                    f"{B}[{self.r.randrange(R)}] = {self.expr(V, 1)}",
                    f"{B}[:, {self.r.randrange(N)}] *= {self.expr(S, 1)}",
                    f"{B}[{self.r.randrange(R)}, {self.r.randrange(N)}] += {self.expr(S, 1)}",
                    f"{B} -= {self.expr(M, 1)}",
                ]), ind)
            self.bind(B, M)
            return
        b = self.new("b")
        self.emit(f"{b} = {self.pick(['v.copy()', 'w.copy()', 'np.array(v)', 'v + 0.0'])}", ind)
        i, j = sorted(self.r.sample(range(N + 1), 2))
        idx = [self.r.randrange(N) for _ in range(3)]
        for _ in range(self.r.randint(1, 3)):
            self.emit(self.pick([
                f"{b}[{self.r.randrange(N)}] = {self.expr(S, 1)}",
                f"{b}[{self.r.randrange(N)}] += {self.expr(S, 1)}",
                f"{b}[{i}:{j}] = ({self.expr(V, 1)})[{i}:{j}]",
                f"{b}[{i}:{j}] *= {self.expr(S, 1)}",
                f"{b}[np.array({idx})] *= {self.const(0.5, 2.0)}",
                f"{b}[np.array({idx})] = {b}[np.array({idx})] * {self.expr(S, 1)}",
                f"{b}[np.array({idx})] += {self.expr(S, 1)}",
                f"{b} += {self.expr(V, 1)}",
                f"{b} *= {self.expr(S, 1)}",
                f"{b}[{b} > {self.const(0.3, 0.9)}] = {self.const()}",
            ]), ind)
        self.bind(b, V)
        self.owned.append(b)

    def c_const_inplace(self, ind=0):
        """An array without a gradient, read by a differentiated statement, then changed in
        place (the pullback must read the values the statement saw), maybe read again."""
        self.use("const_inplace")
        k = self.new("k")
        self.emit(f"{k} = {self.pick(['np.ones(4)', 'np.linspace(0.5, 1.5, 4)', 'np.array([0.3, -1.2, 2.0, 0.7])'])}", ind)
        s = self.new("s")
        if self.r.random() < 0.3:  # written inside the loop that reads it
            i = self.new("i")
            self.emit(f"{s} = 0.0", ind)
            self.emit(f"for {i} in range({N}):", ind)
            self.emit(f"{s} = {s} + np.sum({self.expr(V, 1)} * {k})", ind + 1)
            self.emit(f"{k}[{i}] = {self.const(0.5, 2.0)}", ind + 1)
        else:
            self.emit(f"{s} = np.sum({self.expr(V, 1)} * {k})", ind)
            i, j = sorted(self.r.sample(range(N + 1), 2))
            self.emit(self.pick([
                f"{k}[{self.r.randrange(N)}] = {self.const()}",
                f"{k}[{i}:{j}] = {self.const()}",
                f"{k}.fill({self.const()})",
                f"{k}.sort()",
                f"np.multiply({k}, {self.const(0.5, 2.0)}, out={k})",
                f"{k} *= {self.const(0.5, 2.0)}",
                f"{k}[{k} > {self.const(0.4, 0.9)}] = {self.const()}",
            ]), ind)
        self.bind(s, S)
        if self.r.random() < 0.5:
            s2 = self.new("s")
            self.emit(f"{s2} = np.sum({self.expr(V, 1)} * {k})", ind)
            self.bind(s2, S)

    def c_alias(self, ind=0):
        self.use("alias")
        if not self.owned:
            self.c_inplace(ind, vector=True)
        a = self.pick(self.owned)
        c = self.new("c")
        if self.r.random() < 0.5:
            self.emit(f"{c} = {a}", ind)
            self.emit(self.pick([f"{c} += {self.expr(V, 1)}", f"{c}[{self.r.randrange(N)}] *= {self.expr(S, 1)}",
                                 f"{c} *= {self.expr(S, 1)}"]), ind)
            self.bind(c, V)
        else:
            self.use("view")
            i = self.r.randrange(1, N - 1)
            self.emit(f"{c} = {a}[{i}:]", ind)
            self.emit(self.pick([f"{c} *= {self.expr(S, 1)}", f"{c}[0] = {self.expr(S, 1)}",
                                 f"{c} += 1.0"]), ind)
            self.bind(c, (N - i,))
        s = self.new("s")
        self.emit(f"{s} = np.sum({a} * {self.expr(V, 1)})", ind)
        self.bind(s, S)

    def c_list(self, ind=0):
        self.use("list")
        L = self.new("lst")
        k = self.r.random()
        if k < 0.3:
            self.emit(f"{L} = []", ind)
            i = self.new("i")
            self.emit(f"for {i} in range({N}):", ind)
            self.emit(f"{L}.append(({self.expr(V, 1)})[{i}] * {self.expr(S, 1)})", ind + 1)
        elif k < 0.5:
            self.emit(f"{L} = [{self.expr(S, 1)}, {self.expr(S, 1)}]", ind)
            self.emit(self.pick([f"{L}.append({self.expr(S, 1)})", f"{L} += [{self.expr(S, 1)}]",
                                 f"{L}.extend([{self.expr(S, 1)}, 0.5])", f"{L}.insert(0, {self.expr(S, 1)})"]), ind)
        elif k < 0.7:
            t = self.new("t")
            self.emit(f"{L} = [math.sin({t}) * {self.expr(S, 1)} for {t} in {self.pick(['v', 'w'])}]", ind)
        elif k < 0.75:
            self.use("generator_expr")
            s = self.new("s")
            c = self.new("c")
            self.emit(self.pick([
                f"{s} = sum(t * t for t in {self.expr(V, 1)})",
                f"{s} = sum({c} * {self.expr(S, 1)} ** k for k, {c} in enumerate({self.expr(V, 1)}))",
                f"{s} = sum([math.sin(t) for t in {self.expr(V, 1)} if t > {self.const()}])",
            ]), ind)
            self.bind(s, S)
            return
        elif k < 0.85:
            self.emit(f"{L} = {self.pick(['list(v)', 'list(w)', 'v.tolist()'])}", ind)
            self.emit(f"{L}[{self.r.randrange(N)}] = {self.expr(S, 1)}", ind)
        else:
            self.use("dict")
            D = self.new("d")
            self.emit(f"{D} = {{'a': {self.expr(S, 1)}, 'b': {self.expr(S, 1)}}}", ind)
            self.emit(f"{D}['c'] = {D}['a'] * {self.expr(S, 1)}", ind)
            self.emit(f"{D}['a'] += {self.expr(S, 1)}", ind)
            s = self.new("s")
            self.emit(self.pick([f"{s} = sum({D}.values())",
                                 f"{s} = sum(val * 0.5 for key, val in {D}.items())",
                                 f"{s} = {D}['a'] + {D}.get('c', 0.0)"]), ind)
            self.bind(s, S)
            return
        s = self.new("s")
        self.emit(self.pick([f"{s} = sum({L})", f"{s} = {L}[0] + {L}[-1]", f"{s} = max({L}) + min({L})",
                             f"{s} = sum({L}) / len({L})"]), ind)
        self.lists.append(L)
        self.bind(s, S)

    def c_unpack(self, ind=0):
        self.use("unpack")
        p, q = self.new("p"), self.new("q")
        k = self.r.random()
        if k < 0.4:
            self.emit(f"{p}, {q} = {self.expr(S, 1)}, {self.expr(S, 1)}", ind)
            self.emit(f"{p}, {q} = {q}, {p} * {self.expr(S, 1)}", ind)
        elif k < 0.7:
            z = self.new("z")
            self.emit(f"({p}, {q}), {z} = ({self.expr(S, 1)}, {self.expr(S, 1)}), {self.expr(S, 1)}", ind)
            self.emit(f"{p} = {p} + {z}", ind)
        else:
            a = self.new("a")
            self.emit(f"{p}, {q}, *{a} = {self.expr(V, 1)}", ind)
            self.emit(f"{p} = {p} * sum({a})", ind)
        self.bind(p, S)
        self.bind(q, S)

    def c_if(self, ind=0):
        self.use("if")
        t = self.new("s")
        cond = f"{self.expr(S, 1)} > {self.const()}"
        self.emit(f"if {cond}:", ind)
        self.emit(f"{t} = {self.expr(S)}", ind + 1)
        if self.r.random() < 0.5:
            self.use("elif")
            self.emit(f"elif {self.expr(S, 1)} < {self.const()}:", ind)
            self.emit(f"{t} = {self.expr(S)}", ind + 1)
        self.emit("else:", ind)
        self.emit(f"{t} = {self.expr(S)}", ind + 1)
        self.bind(t, S)
        if self.r.random() < 0.3:
            self.use("ifexp")
            u = self.new("s")
            self.emit(f"{u} = {self.expr(S, 1)} if {self.expr(S, 1)} > {self.const()} else {self.expr(S, 1)}", ind)
            self.bind(u, S)

    def c_for(self, ind=0):
        self.use("for")
        acc = self.new("s")
        self.emit(f"{acc} = {self.expr(S, 1)}", ind)
        i = self.new("i")
        kind = self.r.random()
        if kind < 0.4:
            self.emit(f"for {i} in range({self.r.randint(1, N)}):", ind)
            item = f"({self.expr(V, 1)})[{i}]"
        elif kind < 0.7:
            t = self.new("t")
            self.use("enumerate")
            self.emit(f"for {i}, {t} in enumerate({self.expr(V, 1)}):", ind)
            item = t
        else:
            t, t2 = self.new("t"), self.new("t")
            self.use("zip")
            self.emit(f"for {t}, {t2} in zip({self.expr(V, 1)}, {self.pick(['v', 'w'])}):", ind)
            self.emit(f"{i} = 1", ind + 1)
            item = f"{t} * {t2}"
        if self.r.random() < 0.4:
            self.use("continue")
            self.emit(f"if {i} == {self.r.randrange(N)}:", ind + 1)
            self.emit("continue", ind + 2)
        self.emit(self.pick([f"{acc} = {acc} * 0.8 + math.sin({item})",
                             f"{acc} = math.tanh({acc}) + {item} * {self.expr(S, 1)}",
                             f"{acc} += {item} * {item}"]), ind + 1)
        if self.r.random() < 0.4:
            self.use("break")
            self.emit(self.pick([f"if {i} >= {self.r.randrange(1, N)}:", f"if {acc} > {self.const(2.0, 4.0)}:"]), ind + 1)
            self.emit("break", ind + 2)
            if self.r.random() < 0.5:
                self.use("for_else")
                self.emit("else:", ind)
                self.emit(f"{acc} = {acc} * {self.expr(S, 1)}", ind + 1)
        self.bind(acc, S)

    def c_while(self, ind=0):
        self.use("while")
        acc, k = self.new("s"), self.new("k")
        self.emit(f"{acc} = {self.expr(S, 1)}", ind)
        self.emit(f"{k} = 0", ind)
        self.emit(f"while {k} < {self.r.randint(1, 4)}:", ind)
        self.emit(f"{k} += 1", ind + 1)
        if self.r.random() < 0.3:
            self.use("continue")
            self.emit(f"if {k} == 2:", ind + 1)
            self.emit("continue", ind + 2)
        self.emit(f"{acc} = 0.7 * {acc} + 0.2 * math.cos({acc}) * {self.expr(S, 1)}", ind + 1)
        if self.r.random() < 0.3:
            self.use("break")
            self.emit(f"if abs({acc}) > {self.const(3.0, 5.0)}:", ind + 1)
            self.emit("break", ind + 2)
            self.emit("else:", ind)
            self.emit(f"{acc} = {acc} + 0.5", ind + 1)
        self.bind(acc, S)

    def c_early_return(self, ind=0):
        if self.early:
            return self.c_assign(ind)
        self.early = True
        self.use("early_return")
        self.emit(f"if {self.expr(S, 1)} > {self.const(0.8, 1.6)}:", ind)
        self.emit(f"return {self.expr(S)}", ind + 1)

    def c_closure(self, ind=0):
        self.use("closure")
        g = self.new("g")
        z = "z"
        cap = self.expr(S, 1)
        c = self.new("s")
        self.emit(f"{c} = {cap}", ind)
        self.bind(c, S)
        if self.r.random() < 0.3:
            self.use("recursion")
            self.emit(f"def {g}(z, n=3):", ind)
            self.emit(f"return z if n == 0 else {g}(math.sin(z) + {c} * 0.1, n - 1)", ind + 1)
        else:
            self.emit(f"def {g}({z}):", ind)
            if self.r.random() < 0.5:
                self.emit(f"h = {z} * {c}", ind + 1)
                self.emit(f"return math.tanh(h) + {z}", ind + 1)
            else:
                self.emit(f"return {z} * {c} + math.sin({z})", ind + 1)
        if self.r.random() < 0.3:  # rebound after the def: the call reads the new value
            self.use("closure_rebound")
            self.emit(f"{c} = {c} * {self.expr(S, 1)}", ind)
        s = self.new("s")
        self.emit(f"{s} = {g}({self.expr(S, 1)}) + {g}({self.expr(S, 1)})", ind)
        self.bind(s, S)

    def c_lambda(self, ind=0):
        self.use("lambda")
        s = self.new("s")
        cap = self.pick(self.names(S))
        k = self.r.random()
        vec = self.expr(V, 1)
        if k < 0.25:
            sq = self.new("sq")
            self.emit(f"{sq} = lambda t: t * t + {cap}", ind)
            self.emit(f"{s} = {sq}({self.expr(S, 1)}) * 0.5", ind)
        elif k < 0.5:
            self.emit(f"{s} = sum(map(lambda t: math.sin(t) * {cap}, {vec}))", ind)
        elif k < 0.7:
            self.emit(f"{s} = sorted([{self.expr(S, 1)}, {self.expr(S, 1)}, {cap}], key=lambda t: -t)[0]", ind)
        elif k < 0.85:
            self.emit(f"{s} = max(list({vec}), key=lambda t: abs(t - {self.const(-3, -2)}))", ind)
        else:
            j = self.new("j")
            self.emit(f"{j} = min(range({N}), key=lambda i: v[i])", ind)
            self.emit(f"{s} = w[{j}] * {cap}", ind)
        self.bind(s, S)

    def c_dataclass(self, ind=0):
        self.use("dataclass")
        P = f"Pt{self.n}"
        self.n += 1
        self.defs.append(f"""\
@dataclass
class {P}:
    a: float
    b: float

    def norm2(self):
        return self.a * self.a + {self.const(0.5, 2.0)} * self.b * self.b

    def scaled(self, s):
        return {P}(self.a * s, self.b + s)
""")
        p, s = self.new("p"), self.new("s")
        self.emit(f"{p} = {P}({self.expr(S, 1)}, {self.expr(S, 1)})", ind)
        self.emit(self.pick([f"{s} = {p}.norm2()", f"{s} = {p}.scaled({self.expr(S, 1)}).norm2()",
                             f"{s} = {p}.a * {p}.b + {p}.scaled(0.5).a"]), ind)
        self.bind(s, S)

    def c_class(self, ind=0):
        self.use("class")
        C = f"Lin{self.n}"
        self.n += 1
        self.defs.append(f"""\
class {C}:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    @property
    def w2(self):
        return self.w * self.w

    def __call__(self, z):
        return self.w * z + self.b

    def shift(self, d):
        self.b = self.b + d
        return self
""")
        m, s = self.new("m"), self.new("s")
        self.emit(f"{m} = {C}({self.expr(S, 1)}, {self.const()})", ind)
        k = self.r.random()
        if k < 0.3:
            self.use("attr_write")
            self.emit(f"{m}.w = {m}.w * {self.expr(S, 1)}", ind)
        elif k < 0.5:
            self.emit(f"{m}.shift({self.expr(S, 1)})", ind)
        self.emit(self.pick([f"{s} = {m}({self.expr(S, 1)}) + {m}.w2",
                             f"{s} = np.sum({m}({self.expr(V, 1)}))",
                             f"{s} = {m}.w2 * {m}.b"]), ind)
        self.bind(s, S)

    def c_accumulator(self, ind=0):
        self.use("class_list_attr")
        C = f"Acc{self.n}"
        self.n += 1
        self.defs.append(f"""\
class {C}:
    def __init__(self):
        self.items = []

    def add(self, z):
        self.items.append(z)

    def total(self):
        return sum(self.items)
""")
        o, s, t = self.new("o"), self.new("s"), self.new("t")
        self.emit(f"{o} = {C}()", ind)
        self.emit(f"for {t} in {self.expr(V, 1)}:", ind)
        self.emit(f"{o}.add({t} * {self.expr(S, 1)})", ind + 1)
        self.emit(f"{s} = {o}.total()", ind)
        self.bind(s, S)

    def c_recursion(self, ind=0):
        self.use("recursion")
        g = f"rec{self.n}"
        self.n += 1
        if self.r.random() < 0.5:
            self.defs.append(f"""\
def {g}(z, n):
    if n == 0:
        return z
    return {g}(math.sin(z) + 0.5 * z, n - 1)
""")
            s = self.new("s")
            self.emit(f"{s} = {g}({self.expr(S, 1)}, {self.r.randint(1, 4)})", ind)
        else:
            self.defs.append(f"""\
def {g}(z, n):
    return z if n <= 0 else {g}(np.tanh(z) * 0.9 + 0.1, n - 1)
""")
            s = self.new("s")
            self.emit(f"{s} = np.sum({g}({self.expr(V, 1)}, {self.r.randint(1, 3)}))", ind)
        self.bind(s, S)

    def c_varargs(self, ind=0):
        self.use("varargs")
        g = f"comb{self.n}"
        self.n += 1
        self.defs.append(f"""\
def {g}(*args, **kw):
    total = 0.0
    for a in args:
        total = total + a
    return total * kw.get('scale', 1.0) + kw.get('shift', 0.0)
""")
        s = self.new("s")
        if self.r.random() < 0.5:
            self.emit(f"{s} = {g}({self.expr(S, 1)}, {self.expr(S, 1)}, scale={self.expr(S, 1)})", ind)
        else:
            kw = "{'shift': " + self.expr(S, 1) + "}"
            self.emit(f"{s} = np.sum({g}({self.expr(V, 1)}, {self.expr(V, 1)}, **{kw}))", ind)
        self.bind(s, S)

    def c_helper(self, ind=0):
        self.use("helper")
        g = self.new("h")  # (h{n} then n += 1 named two helpers alike with new("h"))
        k = self.r.random()
        if k < 0.4:
            self.defs.append(f"""\
def {g}(a, b=0.5):
    c = a * math.sin(b) + b
    return c * c
""")
            s = self.new("s")
            self.emit(self.pick([f"{s} = {g}({self.expr(S, 1)})", f"{s} = {g}({self.expr(S, 1)}, b={self.expr(S, 1)})"]), ind)
            self.bind(s, S)
        elif k < 0.7:
            self.use("tuple_return")
            self.defs.append(f"""\
def {g}(a):
    return a[:2].sum(), a[2:] * 2.0
""")
            p, q = self.new("p"), self.new("q")
            self.emit(f"{p}, {q} = {g}({self.expr(V, 1)})", ind)
            s = self.new("s")
            self.emit(f"{s} = {p} * np.sum({q})", ind)
            self.bind(s, S)
        else:
            self.use("helper_method_chain")
            self.defs.append(f"""\
def {g}(a, b):
    return (a * b).mean(axis=0)
""")
            s = self.new("s")
            self.emit(f"{s} = np.sum({g}({self.expr(V, 1)}, {self.expr(V, 1)}))", ind)
            self.bind(s, S)

    def c_mutating_helper(self, ind=0):
        self.use("mutating_helper")
        g = f"mut{self.n}"
        self.n += 1
        k = self.r.random()
        if k < 0.4:
            self.defs.append(f"""\
def {g}(a, s):
    a[1] += s
    a *= 0.5
""")
            b = self.new("b")
            self.emit(f"{b} = {self.pick(['v', 'w'])}.copy()", ind)
            self.emit(f"{g}({b}, {self.expr(S, 1)})", ind)
            self.bind(b, V)
            self.owned.append(b)
        elif k < 0.7:
            self.defs.append(f"""\
def {g}(lst, z):
    lst.append(z * 2.0)
""")
            L, s = self.new("lst"), self.new("s")
            self.emit(f"{L} = [{self.expr(S, 1)}]", ind)
            self.emit(f"{g}({L}, {self.expr(S, 1)})", ind)
            self.emit(f"{s} = sum({L})", ind)
            self.bind(s, S)
        else:
            self.defs.append(f"""\
def {g}(a):
    a /= np.sum(a * a) + 1.0
    return a
""")
            b, s = self.new("b"), self.new("s")
            self.emit(f"{b} = {self.expr(V, 1)} * 1.0", ind)
            self.emit(f"{s} = np.sum({g}({b})) + {b}[0]", ind)
            self.bind(s, S)

    def c_softmax(self, ind=0):
        """A max- (or min-) shifted softmax, log-softmax or logsumexp, as users write
        them, and forms that are not free of the shift (passes/invariance.py)."""
        self.use("softmax")
        shape = M if self.matrix and self.r.random() < 0.7 else V
        t, m, z, e, p, s = (self.new(n) for n in ("t", "m", "z", "e", "p", "s"))
        self.emit(f"{t} = {self.expr(shape, 1)}", ind)
        ax = self.pick([None, -1, 0, 1] if shape == M else [None, 0, -1])
        red = "" if ax is None else f"axis={ax}, keepdims=True"
        kw = "" if ax is None else ", " + red
        self.emit(self.pick([f"{m} = np.max({t}{kw})", f"{m} = {t}.max({red})",
                             f"{m} = np.min({t}{kw})"]), ind)
        k = self.r.random()
        if k < 0.25:  # log-softmax
            self.emit(f"{z} = {t} - {m}", ind)
            self.emit(f"{p} = {z} - np.log(np.sum(np.exp({z}){kw}))", ind)
        elif k < 0.5:  # softmax, the sum as a method
            self.emit(f"{e} = np.exp({t} - {m})", ind)
            self.emit(f"{p} = {e} / {e}.sum({red})", ind)
        elif k < 0.65:  # logsumexp, the max added back
            self.emit(f"{p} = {m} + np.log(np.mean(np.exp({t} - {m}){kw}))", ind)
        else:  # not free of the shift: its gradient must flow through the max
            self.emit(f"{z} = {t} - {m}", ind)
            other = "0" if ax in (1, -1) and shape == M else "1" if shape == M else None
            self.emit(self.pick([
                f"{p} = np.exp({z}) * {self.expr(shape, 1)}",
                f"{p} = {z} * {z}",
                f"{p} = np.exp({z} * {self.const(0.5, 2.0)})",
                f"{p} = {z} - np.log(np.sum(np.exp({z}), axis={other}, keepdims=True))" if other
                else f"{p} = np.tanh({z}) + {m}",
            ]), ind)
        self.emit(f"{s} = np.sum({p} * {self.expr(shape, 1)})", ind)
        self.bind(s, S)

    def c_record(self, ind=0):
        """A record of parameters (a dataclass or a plain class, a float field and an array
        field) made in f and handed to a helper that reads its fields in a loop: inlined
        (the record becomes variables, passes/local_objects.py), or kept a call (its
        fields read once at the helper's entry, passes/param_fields.py), or a helper that
        rebinds a field between reads (where neither may apply)."""
        self.use("record_arg")
        C, g = f"Rec{self.n}", f"run{self.n}"
        self.n += 1
        if self.r.random() < 0.5:
            self.defs.append(f"@dataclass\nclass {C}:\n    k: float\n    u: object\n")
        else:
            self.defs.append(f"class {C}:\n    def __init__(self, k, u):\n        self.k = k\n        self.u = u\n")
        kind = self.r.random()
        rest = ", *rest" if kind < 0.4 else ""  # (*rest: never inlined)
        rebind = kind > 0.75
        c = self.const(0.2, 0.6)
        body = [f"def {g}(q, z{rest}):", "    s = z", f"    for i in range({self.r.randint(1, 4)}):",
                f"        s = q.k * math.tanh(s) + np.sum(q.u) * {c}"]
        if rebind:
            body.append(f"        q.k = q.k * {self.const(0.5, 0.9)}")
        body.append("    return s + q.k * np.sum(q.u * q.u)")
        self.defs.append("\n".join(body) + "\n")
        r, s = self.new("r"), self.new("s")
        self.emit(f"{r} = {C}({self.expr(S, 1)}, {self.expr(V, 1)})", ind)
        self.emit(f"{s} = {g}({r}, {self.expr(S, 1)})", ind)
        self.bind(s, S)

    def c_maybe_bound(self, ind=0):
        """A name bound on one path only (an `if` with no `else`), read there, then bound
        again, after the branch or in a loop, and read: the pullback of the branch needs
        its first value back, on the path that bound it (passes/tape.py)."""
        self.use("maybe_bound")
        shape = self.pick([S, S, V])
        m, t, s = self.new("m"), self.new("s"), self.new("s")
        self.emit(f"{t} = {self.expr(S, 1)}", ind)
        self.emit(f"if {self.expr(S, 1)} > {self.const()}:", ind)
        self.emit(f"{m} = {self.expr(shape, 1)}", ind + 1)
        use = f"{m} * {m}" if shape == S else f"np.sum({m} * {m})"
        self.emit(f"{t} = {t} + {use} * {self.expr(S, 1)}", ind + 1)
        again = f"{m} * x" if shape == S else f"np.sum({m}) * x"
        if self.r.random() < 0.5:
            self.emit(f"{m} = {self.expr(shape, 1)}", ind)
            self.emit(f"{s} = {t} + {again}", ind)
        else:
            i = self.new("i")
            self.emit(f"{s} = {t}", ind)
            self.emit(f"for {i} in range({self.r.randint(0, 3)}):", ind)
            self.emit(f"{m} = {self.expr(shape, 1)} * {i}", ind + 1)
            self.emit(f"{s} = {s} + {again}", ind + 1)
        self.bind(s, S)

    def pure(self, d):
        """Arithmetic on numbers and nothing else (what the normaliser keeps whole:
        passes/whole.py), nested d deep, smooth where it runs."""
        if d <= 0 or self.r.random() < 0.25:
            return self.pick(self.names(S) * 2 + [self.const()])
        a, b = self.pure(d - 1), self.pure(d - 1)
        return self.pick([
            f"({a}) + ({b})", f"({a}) - ({b})", f"({a}) * ({b})", f"-({a}) * ({b})",
            f"({a}) / (1.0 + ({b}) * ({b}))", f"({a}) / (2.0 + math.cos({b}))",
            f"({a}) ** 2", f"({a}) ** 3", f"(1.5 + math.tanh({a})) ** -1", f"-({a})",
            f"math.sin({a})", f"math.tanh({a})", f"math.exp(math.tanh({a}))",
            f"math.log(1.0 + ({a}) * ({a}))", f"math.sqrt(1.0 + ({a}) * ({a}))", f"math.atan({a})",
            f"({a}) * {self.const(-2.0, 2.0)} - {self.const()}",
        ])

    def c_scalar_math(self, ind=0):
        """Nested arithmetic on numbers, as scalar code is written: a line of it, one that
        reads the name it binds (`s = 0.5 * s + ...`, `s += ...`), a pair of them unpacked,
        a loop over a range that reads its counter."""
        self.use("scalar_math")
        k = self.r.randrange(4)
        s = self.new("s")
        if k == 0:
            self.emit(f"{s} = {self.pure(3)}", ind)
        elif k == 1:
            self.emit(f"{s} = {self.pure(2)}", ind)
            self.emit(f"{s} = {self.const(0.3, 0.9)} * {s} + {self.pure(2)}", ind)
            self.emit(f"{s} += {self.pure(1)}", ind)
        elif k == 2:
            t = self.new("s")
            self.emit(f"{s}, {t} = {self.pure(2)}, {self.pure(2)}", ind)
            self.bind(t, S)
        else:
            i, t = self.new("i"), self.new("t")
            self.emit(f"{s} = {self.pure(1)}", ind)
            self.emit(f"for {i} in range({self.r.randint(0, 4)}):", ind)
            self.emit(f"{t} = {self.pure(2)} * ({i} + 1) * {self.const(0.1, 0.3)}", ind + 1)
            self.emit(f"{s} = {self.const(0.3, 0.8)} * {s} + math.tanh({t}) - ({self.pure(1)}) * {t}", ind + 1)
        self.bind(s, S)

    def c_recurrence(self, ind=0):
        """An array filled element by element from its previous element (`y[i] = c *
        y[i - 1] + v[i] * x`), as users write a time series, then reduced."""
        self.use("recurrence")
        y, i, s = self.new("y"), self.new("i"), self.new("s")
        self.emit(f"{y} = {self.pick(['np.zeros(len(v))', 'np.zeros_like(w)', 'v.copy()', 'np.empty(4)'])}", ind)
        self.emit(f"{y}[0] = {self.expr(S, 1)}", ind)
        self.emit(f"for {i} in range(1, len({y})):", ind)
        self.emit(self.pick([
            f"{y}[{i}] = {self.const(0.3, 0.9)} * {y}[{i} - 1] + {self.pick(['v', 'w'])}[{i}] * x",
            f"{y}[{i}] = math.tanh({y}[{i} - 1]) * {self.expr(S, 1)} + {self.pick(['v', 'w'])}[{i}]",
            f"{y}[{i}] = {y}[{i} - 1] + {self.const(0.1, 0.3)} * math.sin({y}[{i} - 1] + x)",
        ]), ind + 1)
        self.emit(f"{s} = {self.pick([f'np.sum({y} * {y})', f'{y}[-1]', f'np.sum({y}) * x', f'{y}[len({y}) - 1] + {y}[1]'])}", ind)
        self.bind(s, S)

    def c_walrus(self, ind=0):
        """An assignment expression in a test (`if (t := e) > c:`) and in a comprehension."""
        self.use("walrus")
        t, s = self.new("t"), self.new("s")
        self.emit(f"if ({t} := {self.expr(S, 1)}) > {self.const()}:", ind)
        self.emit(f"{s} = {t} * {self.expr(S, 1)}", ind + 1)
        self.emit("else:", ind)
        self.emit(f"{s} = {t} + {self.expr(S, 1)}", ind + 1)
        self.bind(s, S)
        if self.r.random() < 0.4:
            u = self.new("s")
            self.emit(f"{u} = sum([(q := z * x) * q for z in {self.pick(['v', 'w'])}])", ind)
            self.bind(u, S)

    def c_nonlocal(self, ind=0):
        """A helper that accumulates into a variable of f's (`nonlocal acc`), called a few
        times."""
        self.use("nonlocal")
        acc, g, s = self.new("acc"), self.new("add"), self.new("s")
        self.emit(f"{acc} = {self.expr(S, 1)}", ind)
        self.emit(f"def {g}(z):", ind)
        self.emit(f"nonlocal {acc}", ind + 1)
        self.emit(f"{acc} = {acc} * {self.const(0.5, 0.9)} + z * z", ind + 1)
        returns = self.r.random() < 0.4
        if returns:
            self.emit(f"return z * {acc}", ind + 1)
        for _ in range(self.r.randint(1, 3)):
            self.emit(f"{g}({self.expr(S, 1)})", ind)
        if returns:  # inside an expression: reading acc too (refused), or not
            self.emit(self.pick([f"{s} = {acc} + {g}(x)", f"{s} = {g}(x) * x + 1.0"]), ind)
        else:
            self.emit(f"{s} = {acc}", ind)
        self.bind(s, S)

    def c_swap(self, ind=0):
        """Two values updated together by tuple assignment in a loop (`a, b = b, a * c + b`)."""
        self.use("swap")
        a, b, i = self.new("a"), self.new("b"), self.new("i")
        self.emit(f"{a}, {b} = {self.expr(S, 1)}, {self.expr(S, 1)}", ind)
        self.emit(f"for {i} in range({self.r.randint(1, 4)}):", ind)
        self.emit(self.pick([f"{a}, {b} = {b}, {a} * {self.const(0.3, 0.8)} + math.sin({b})",
                             f"{a}, {b} = {b} * x, math.tanh({a} + {b})"]), ind + 1)
        self.bind(a, S)
        self.bind(b, S)

    def c_rows(self, ind=0):
        """Rows built in a loop into a list, stacked into a matrix and reduced."""
        self.use("rows")
        rows, i, Mx, s = self.new("rows"), self.new("i"), self.new("B"), self.new("s")
        self.emit(f"{rows} = []", ind)
        self.emit(f"for {i} in range({self.r.randint(1, 3)}):", ind)
        self.emit(f"{rows}.append({self.pick(['v', 'w'])} * {self.expr(S, 1)} + {i})", ind + 1)
        self.emit(f"{Mx} = {self.pick(['np.stack', 'np.array', 'np.vstack'])}({rows})", ind)
        self.emit(f"{s} = {self.pick([f'np.sum({Mx} @ w)', f'np.sum(np.tanh({Mx}))', f'float(np.mean({Mx} * {Mx}))'])}", ind)
        self.bind(s, S)

    def c_dict_acc(self, ind=0):
        """A dict of running totals updated by key in a loop."""
        self.use("dict_acc")
        d, k, i, s = self.new("d"), self.new("k"), self.new("i"), self.new("s")
        self.emit(f"{d} = {{'a': {self.expr(S, 1)}, 'b': 0.0}}", ind)
        self.emit(f"for {i} in range({self.r.randint(1, 3)}):", ind)
        self.emit(f"for {k} in ('a', 'b'):", ind + 1)
        self.emit(self.pick([f"{d}[{k}] = {d}[{k}] * {self.const(0.4, 0.9)} + x * {i}",
                             f"{d}[{k}] += math.sin({d}['a']) * x"]), ind + 2)
        self.emit(f"{s} = {d}['a'] + {d}['b'] * {self.expr(S, 1)}", ind)
        self.bind(s, S)

    def c_while_maybe(self, ind=0):
        """A while loop that binds a name only on some trips and may leave early, the
        name bound again after the loop and read."""
        self.use("while_maybe")
        k, s, t = self.new("k"), self.new("s"), self.new("t")
        self.emit(f"{k} = 0", ind)
        self.emit(f"{s} = {self.expr(S, 1)}", ind)
        self.emit(f"while {k} < {self.r.randint(1, 4)}:", ind)
        self.emit(f"if {k} % 2 == {self.r.randint(0, 1)}:", ind + 1)
        self.emit(f"{t} = math.sin({s}) * {self.expr(S, 1)}", ind + 2)
        self.emit(f"{s} = {s} + {t} * {t}", ind + 2)
        if self.r.random() < 0.4:
            self.emit(f"if {s} > {self.const(2.0, 3.0)}:", ind + 1)
            self.emit("break", ind + 2)
        self.emit(f"{k} += 1", ind + 1)
        self.emit(f"{t} = {s} * x", ind)
        self.emit(f"{s} = {s} + {t}", ind)
        self.bind(s, S)

    def c_mask(self, ind=0):
        """Boolean masks: a sum over the selected items, and a masked write into a copy."""
        self.use("mask")
        a, u, s = self.expr(V, 1), self.new("u"), self.new("s")
        c = self.const(-0.05, 0.05)
        self.emit(f"{u} = ({a}) * {self.pick(['1.0', 'x'])}", ind)
        if self.r.random() < 0.5:
            self.emit(f"{u}[{u} > {c}] = {self.pick([f'{u}[{u} > {c}] * x', '0.0', f'x * {self.const()}'])}", ind)
        self.emit(f"{s} = {self.pick([f'np.sum({u}[{u} < {c}])', f'np.sum({u}[np.abs({u}) > {self.const(0.0, 0.05)}] ** 2)', f'float(np.sum({u} * ({u} > {c})))'])}", ind)
        self.bind(s, S)

    def c_slice_update(self, ind=0):
        """In-place updates of slices of a copy, in a loop (a stencil, a shift)."""
        self.use("slice_update")
        y, i, s = self.new("y"), self.new("i"), self.new("s")
        self.emit(f"{y} = {self.pick(['v.copy()', 'w * x', 'np.array(w)'])}", ind)
        self.emit(f"for {i} in range({self.r.randint(1, 3)}):", ind)
        self.emit(self.pick([f"{y}[1:] = {y}[1:] + {self.const(0.2, 0.6)} * {y}[:-1]",
                             f"{y}[::2] *= {self.expr(S, 1)}",
                             f"{y}[1:-1] = 0.5 * ({y}[:-2] + {y}[2:]) * x",
                             f"{y}[-1] = {y}[0] * x + {y}[-1]"]), ind + 1)
        self.emit(f"{s} = np.sum({y} * {y})", ind)
        self.bind(s, S)

    def c_nested_comp(self, ind=0):
        """A comprehension over two sequences, with a condition."""
        self.use("nested_comp")
        s = self.new("s")
        inner = (f"a * b * {self.expr(S, 1)} for a in {self.pick(['v', 'w'])} for b in "
                 f"{self.pick(['v', 'w'])}[:{self.r.randint(1, N)}] if a > {self.const()}")
        form = self.r.randint(0, 3)  # a list summed, or a generator expression (anf.total)
        if form == 0:
            self.emit(f"{s} = sum([{inner}])", ind)
        elif form == 1:
            self.emit(f"{s} = sum({inner})", ind)
        elif form == 2:
            self.emit(f"{s} = sum((math.sin(c * {self.leaf(S)}) for i, c in enumerate({self.pick(['v', 'w'])}) "
                      f"if i != {self.r.randint(0, 3)}), {self.const()})", ind)
        else:
            self.emit(f"{s} = sum(a * b * {self.leaf(S)} for a, b in zip({self.pick(['v', 'w'])}, "
                      f"{self.pick(['v', 'w'])}))", ind)
        self.bind(s, S)

    def c_global_list(self, ind=0):
        """A loop over a module-level list of arrays (weights kept as globals)."""
        self.use("global_list")
        G, h, Wt, s = f"WS{self.n}", self.new("h"), self.new("Wt"), self.new("s")
        self.n += 1
        rows = ", ".join(f"np.array([{', '.join(self.const() for _ in range(N))}])" for _ in range(self.r.randint(1, 3)))
        self.defs.append(f"{G} = [{rows}]\n")
        self.emit(f"{h} = {self.expr(V, 1)}", ind)
        self.emit(f"for {Wt} in {G}:", ind)
        self.emit(f"{h} = np.tanh({Wt} * {h} + x)", ind + 1)
        self.emit(f"{s} = np.sum({h})", ind)
        self.bind(s, S)

    def c_extremum(self, ind=0):
        """min and max of three or four numbers, straight or in a loop that clamps a
        running value (ties meet at a clamp's bound: `max(h, 0.0, t)` with h at 0.0)."""
        self.use("extremum")
        s, h, i = self.new("s"), self.new("lo"), self.new("i")
        args = [self.expr(S, 1) for _ in range(self.r.randint(2, 3))]
        if self.r.random() < 0.3:
            args.append(args[0])  # a tie with itself (NumPy numbers' ties once counted as one)
        fn = self.pick(["min", "max"])
        if self.r.random() < 0.5:
            self.emit(f"{s} = {fn}({', '.join(args)}, {self.const()}) * {self.expr(S, 1)}", ind)
        else:
            self.emit(f"{h} = 0.0", ind)
            self.emit(f"{s} = 0.0", ind)
            self.emit(f"for {i} in range({self.r.randint(2, 4)}):", ind)
            self.emit(f"{h} = {fn}({h} * 0.5 + {args[0]}, {', '.join(args[1:])}, {self.const(-0.5, 0.5)})", ind + 1)
            self.emit(f"{s} = {s} + {h} * {h}", ind + 1)
        self.bind(s, S)

    def c_none_default(self, ind=0):
        """A parameter left to a default of None, tested and replaced by a number: a helper's
        (called without it, with None, with a number, by keyword), or f's own."""
        self.use("none_default")
        c, s, d = self.new("c"), self.new("s"), self.new("d")
        k = self.const(0.2, 0.9)
        form = self.pick([f"    {d} = {k} if {{c}} is None else {{c}}\n    return {{z}} * {d} + math.sin({{z}})",
                          f"    if {{c}} is None:\n        {{c}} = {k}\n    return {{z}} * {{c}} + math.sin({{z}})",
                          f"    return {{z}} * ({k} if {{c}} is None else {{c}})"])
        if self.r.random() < 0.3 and not any("=None" in p for p in self.params):  # f's own parameter
            self.params = self.params + (f"{c}=None",)  # (the oracle leaves it to its default)
            body = form.format(c=c, z=self.expr(S, 1)).splitlines()
            for line in body[:-1]:
                self.emit(line[4:], ind)
            self.emit(f"{s} = " + body[-1].strip()[len("return "):], ind)
            self.bind(s, S)
            return
        h = self.new("nd")
        self.defs.append(f"def {h}(z, {c}=None):\n" + form.format(c=c, z="z") + "\n")
        arg = self.pick(["", ", None", f", {self.expr(S, 1)}", f", {c}={self.expr(S, 1)}", f", {c}=None"])
        if self.r.random() < 0.5:
            self.emit(f"{s} = {h}({self.expr(S, 1)}{arg})", ind)
        else:
            self.emit(f"{s} = 0.0", ind)
            self.emit(f"for {self.new('i')} in range({self.r.randint(2, 4)}):", ind)
            self.emit(f"{s} = {s} * 0.5 + {h}({s} * 0.3 + {self.expr(S, 1)}{arg})", ind + 1)
        self.bind(s, S)

    def c_state_items(self, ind=0):
        """A state kept in a local list or dict and updated by position or key in a loop
        (its items become variables, passes/item_vars.py), sometimes also measured, which
        keeps it a container; sometimes an item is an array."""
        self.use("state_items")
        st, s, i = self.new("st"), self.new("s"), self.new("i")
        arr = self.r.random() < 0.25
        a = self.expr(V, 1) if arr else self.expr(S, 1)
        if self.r.random() < 0.5:
            self.emit(f"{st} = {{'p': {a}, 'q': {self.expr(S, 1)}, 'r': {self.const()}}}", ind)
            P, Q, R = f"{st}['p']", f"{st}['q']", f"{st}['r']"
        else:
            self.emit(f"{st} = [{a}, {self.expr(S, 1)}, {self.const()}]", ind)
            P, Q, R = f"{st}[0]", f"{st}[1]", f"{st}[-1]"
        sP = f"np.sum({P})" if arr else P
        self.emit(f"for {i} in range({self.r.randint(2, 4)}):", ind)
        self.emit(f"{Q} = {Q} * 0.5 - 0.1 * {sP} * {self.expr(S, 1)}", ind + 1)
        self.emit(f"{P} = {P} * 0.9 + 0.2 * math.sin({Q}) + {R} * 0.1", ind + 1)
        if self.r.random() < 0.3:
            self.emit(f"{R} = {Q} * {self.const(0.2, 0.8)}", ind + 1)
        tail = self.pick([f"{sP} * {Q}", f"{sP} + {R}", f"{Q} * {self.expr(S, 1)}", f"{sP} + {Q} * len({st})"])
        self.emit(f"{s} = {tail}", ind)
        self.bind(s, S)

    def c_decorated(self, ind=0):
        """A helper under a decorator: a wrapper that only forwards its arguments (seen
        through: inline_callees.unwrapped), two such wrappers, or one that also counts
        its calls (a side effect: kept), called straight or in a loop."""
        self.use("decorated")
        d, h, s = f"deco{self.n}", f"dh{self.n}", self.new("s")
        self.n += 1
        form = self.r.randint(0, 2)
        if form == 0:
            self.defs.append(f"import functools\n\n\ndef {d}(f):\n    @functools.wraps(f)\n"
                             f"    def wrapper(*args, **kwargs):\n        return f(*args, **kwargs)\n    return wrapper\n")
            deco = f"@{d}\n"
        elif form == 1:
            self.defs.append(f"def {d}(f):\n    def w(*a):\n        return f(*a)\n    return w\n")
            deco = f"@{d}\n@{d}\n"
        else:
            self.defs.append(f"CALLS{self.n} = [0]\n\n\ndef {d}(f):\n    def w(*a):\n"
                             f"        CALLS{self.n}[0] += 1\n        return f(*a)\n    return w\n")
            deco = f"@{d}\n"
        body = self.pick(["    return -k * math.sin(z) + 0.1 * z", "    u = z * k\n    return math.tanh(u) * z",
                          "    t = 0.0\n    for j in range(2):\n        t = t + math.sin(z + 0.1 * j) * k\n    return t"])
        self.defs.append(f"{deco}def {h}(z, k):\n{body}\n")
        if self.r.random() < 0.5:
            self.emit(f"{s} = {h}({self.expr(S, 1)}, {self.expr(S, 1)})", ind)
        else:
            th, om, i = self.new("th"), self.new("om"), self.new("i")
            self.emit(f"{th}, {om} = {self.expr(S, 1)}, 0.0", ind)
            self.emit(f"for {i} in range({self.r.randint(2, 4)}):", ind)
            self.emit(f"{om} = {om} + 0.1 * {h}({th}, {self.leaf(S)})", ind + 1)
            self.emit(f"{th} = {th} + 0.1 * {om}", ind + 1)
            self.emit(f"{s} = {th}", ind)
        self.bind(s, S)

    def c_table(self, ind=0):
        """A module-level table of rows of numbers read row by row: unpacked, by position,
        zipped with a list of labels, or through its index; at times a row written or
        handed to a helper (then it is no table: passes/rows.py)."""
        self.use("table")
        G, L, s, r, i = f"TAB{self.n}", f"LAB{self.n}", self.new("s"), self.new("row"), self.new("i")
        self.n += 1
        width = self.r.randint(2, 3)
        rows = ", ".join((("[{}]" if self.r.random() < 0.5 else "({},)") if width == 1 else
                          ("[{}]" if self.r.random() < 0.5 else "({})")).format(", ".join(self.const() for _ in range(width)))
                         for _ in range(self.r.randint(1, 4)))
        self.defs.append(f"{G} = [{rows}]\n{L} = [{', '.join(self.const() for _ in range(4))}]\n")
        names = [self.new("c") for _ in range(width)]
        self.emit(f"{s} = {self.expr(S, 1)}", ind)
        k = self.r.randint(0, 5)
        if k == 5:  # records: dicts of numbers by string keys, read by key (or their keys iterated)
            self.defs.append(f"REC{self.n} = [{', '.join(f'{{{chr(39)}a{chr(39)}: {self.const()}, {chr(39)}b{chr(39)}: {self.const()}}}' for _ in range(self.r.randint(1, 3)))}]\n")
            self.emit(f"for {r} in REC{self.n}:", ind)
            self.emit(self.pick([f"{s} = {s} * {self.const(0.3, 0.9)} + {r}['a'] * math.sin({r}['b'] * {self.leaf(S)})",
                                 f"{s} = {s} + sum({r}[q] for q in {r}) * {self.leaf(S)}"]), ind + 1)
            self.n += 1
        elif k == 0:
            self.emit(f"for {', '.join(names)} in {G}:", ind)
            self.emit(f"{s} = {s} * {self.const(0.3, 0.9)} + {names[0]} * math.sin({names[-1]} * {self.leaf(S)})", ind + 1)
        elif k == 1:
            self.emit(f"for {r} in {G}:", ind)
            self.emit(f"{s} = {s} + {r}[0] * {self.leaf(S)} - {r}[-1] ** 2", ind + 1)
        elif k == 2:
            self.emit(f"for ({', '.join(names)}), {i} in zip({G}, {L}):", ind)
            self.emit(f"{s} = {s} + ({names[0]} * {self.leaf(S)} - {i}) ** 2 * {names[1]}", ind + 1)
        elif k == 3:
            self.emit(f"for {i} in range(len({G})):", ind)
            self.emit(f"{', '.join(names)} = {G}[{i}]", ind + 1)
            self.emit(f"{s} = {s} * 0.5 + {names[1]} * {self.leaf(S)}", ind + 1)
        else:
            h = self.new("h")
            self.defs.append(f"def {h}(row):\n    return row[0] * 2.0\n")
            self.emit(f"for {r} in {G}:", ind)
            self.emit(self.pick([f"{s} = {s} + {h}({r}) * {self.leaf(S)}",
                                 f"{s} = {s} + {r}[0] * {self.leaf(S)}\n{'    ' * (ind + 1)}{r} = list({r})"]), ind + 1)
        self.bind(s, S)

    def c_captured_list(self, ind=0):
        """A local function made over a list or tuple of numbers of f's (data it closes
        over: kinds.REAL_SEQ when it is called through the run time), looped over or read
        by position, called straight or handed to a helper that calls it."""
        self.use("captured_list")
        d, g, s = self.new("d"), self.new("g"), self.new("s")
        items = [self.expr(S, 1), self.const(), self.expr(S, 1)][: self.r.randint(2, 3)]
        opener, closer = ("[", "]") if self.r.random() < 0.5 else ("(", ")")
        self.emit(f"{d} = {opener}{', '.join(items)}{closer}", ind)
        self.emit(f"def {g}(z):", ind)
        if self.r.random() < 0.5:
            self.emit("t = 0.0", ind + 1)
            self.emit(f"for c in {d}:", ind + 1)
            self.emit("t = t + math.sin(c * z) * c", ind + 2)
            self.emit("return t", ind + 1)
        else:
            self.emit(f"return {d}[0] * z + {d}[-1] * z * z", ind + 1)
        if self.r.random() < 0.5:
            h = f"apply{self.n}"
            self.n += 1
            self.defs.append(f"def {h}(fn, z):\n    return fn(z)\n")
            self.emit(f"{s} = {h}({g}, {self.expr(S, 1)})", ind)
        else:
            self.emit(f"{s} = {g}({self.expr(S, 1)})", ind)
        self.bind(s, S)

    def c_global_recursion(self, ind=0):
        """A module function that calls itself (its call assumed to return a number where
        its returns then join to one: activity.own_result), at times returning an array
        or a pair, or calling itself with an array (other kinds: not assumed)."""
        self.use("global_recursion")
        r, s = f"rec{self.n}", self.new("s")
        self.n += 1
        form = self.r.randint(0, 3)
        base = {0: "z", 1: "z * z + 0.5", 2: "np.array([z, 0.5 * z])", 3: "z"}[form]
        step = (f"{r}(np.array([z, z]) if k == 2 else z * 0.7 + 0.1, k - 1) * 0.9 + z * 0.05" if form == 3
                else f"{r}(math.sin(z) * 0.7 + 0.1, k - 1) * 0.9 + {r}(z * 0.5, k - 2) * 0.1")
        self.defs.append(f"def {r}(z, k):\n    if k <= 0:\n        return {base}\n    return {step}\n")
        call = f"{r}({self.expr(S, 1)}, {self.r.randint(1, 4)})"
        self.emit(f"{s} = {'float(np.sum(' + call + '))' if form >= 2 else call}", ind)
        self.bind(s, S)

    def c_reduce(self, ind=0):
        """functools.reduce of a lambda (capturing a value at times) or operator.mul over a
        few numbers, with or without an initial value (rules/folds.py)."""
        self.use("reduce")
        s = self.new("s")
        if "import functools\nimport operator\n" not in self.defs:
            self.defs.append("import functools\nimport operator\n")
        items = ", ".join([self.expr(S, 1), self.const(), self.expr(S, 1)][: self.r.randint(2, 3)])
        fn = self.pick(["lambda a, b: a * 0.5 + math.sin(b)", f"lambda a, b: a * b + {self.leaf(S)}", "operator.mul"])
        init = self.pick(["", f", {self.const()}", f", {self.expr(S, 1)}"])
        seq = f"[{items}]" if self.r.random() < 0.5 else f"({items},)"
        self.emit(f"{s} = functools.reduce({fn}, {seq}{init})", ind)
        self.bind(s, S)

    def c_rebound_global(self, ind=0):
        """A module number read before and after a non-differentiable call that rebinds
        it, as a logging or scheduling callback does: a scale set for a while and set
        back, or a counter stepped in a loop and reset (passes/rebound_globals.py)."""
        self.use("rebound_global")
        K, setter, a, b = f"K{self.n}", f"set_k{self.n}", self.new("a"), self.new("b")
        self.n += 1
        k0 = self.const(0.5, 1.5)
        self.defs.append(f"import adjoint_s2s as ad\n\n{K} = {k0}\n\n\n@ad.non_differentiable\n"
                         f"def {setter}(v):\n    global {K}\n    {K} = v\n")
        self.emit(f"{a} = {self.expr(S, 1)} * {K}", ind)
        if self.r.random() < 0.5:
            self.emit(f"{setter}({self.const(0.5, 2.0)})", ind)
            self.emit(f"{b} = {a} * {K} + {self.expr(S, 1)} * {K}", ind)
        else:
            self.emit(f"{b} = {a}", ind)
            self.emit(f"for _ in range({self.r.randint(1, 3)}):", ind)
            self.emit(f"{b} = {b} * {K} + {self.leaf(S)} * {self.const(0.1, 0.5)}", ind + 1)
            self.emit(f"{setter}({K} * {self.const(0.5, 0.9)})", ind + 1)
        self.emit(f"{setter}({k0})", ind)
        self.bind(b, S)

    def c_lazy_loop(self, ind=0):
        """A loop over a generator expression, map, filter or enumerate of one, whose
        body rebinds a name the items read, at times leaving early: Python computes each
        item as the loop takes it (passes/lazy_loops.py)."""
        self.use("lazy_loop")
        s, a, t, i = self.new("s"), self.new("a"), self.new("t"), self.new("i")
        self.emit(f"{s} = {self.expr(S, 1)}", ind)
        vals = ", ".join(self.const(0.2, 1.5) for _ in range(self.r.randint(2, 4)))
        k = self.r.randint(0, 4)
        if k == 0:
            head = f"for {a} in ({s} * {t} for {t} in [{vals}]):"
        elif k == 1:
            head = f"for {a} in ({s} * {t} for {t} in [{vals}] if {t} > 0.5):"
        elif k == 2:
            head = f"for {a} in map(lambda {t}: {t} * {self.leaf(S)}, [{vals}]):"
        elif k == 3:
            head = f"for {a} in filter(lambda {t}: {t} < 1.2, [{vals}]):"
        else:
            head = f"for {i}, {a} in enumerate({s} + {t} for {t} in [{vals}]):"
        self.emit(head, ind)
        self.emit(f"{s} = {s} * {self.const(0.5, 0.9)} + math.sin({a})", ind + 1)
        if self.r.random() < 0.4:
            self.emit(f"if {s} > {self.const(0.5, 2.0)}:", ind + 1)
            self.emit("break", ind + 2)
        self.bind(s, S)

    def c_seq_arg(self, ind=0):
        """A list, a tuple or a dict of numbers passed as an argument (its items' kind is in
        the key: param_fields.known_items): read by position in a loop, from the end, with
        a computed position, by key, unpacked, iterated, zipped, summed, or in a helper."""
        self.use("seq_arg")
        P = next((p for p in self.params if p in ("xs", "ts", "ds", "rs")), None)
        if P is None:
            P = self.pick(["xs", "ts", "ds", "rs"])
            plain = tuple(p for p in self.params if "=" not in p)  # (before a defaulted one)
            self.params = plain + (P,) + tuple(p for p in self.params if "=" in p)
        s, i, t = self.new("s"), self.new("i"), self.new("t")
        self.emit(f"{s} = {self.expr(S, 1)}", ind)
        if P == "ds":
            return self._dict_arg(P, s, i, t, ind)
        if P == "rs":
            return self._table_arg(P, s, i, t, ind)
        k = self.r.randint(0, 7)
        if k == 0:
            self.emit(f"for {i} in range(len({P})):", ind)
            self.emit(f"{s} = {s} * {self.const(0.3, 0.9)} + {P}[{i}] * {self.leaf(S)}", ind + 1)
        elif k == 1:
            a, b, c = self.new("a"), self.new("b"), self.new("c")
            self.emit(f"{a}, {b}, {c} = {P}", ind)
            self.emit(f"{s} = {s} + {a} * {self.expr(S, 1)} + math.sin({b} * {c})", ind)
        elif k == 2:
            self.emit(f"for {t} in {P}:", ind)
            self.emit(f"{s} = {s} * {self.const(0.3, 0.9)} + math.sin({t} * {self.leaf(S)})", ind + 1)
        elif k == 3:
            self.emit(f"{s} = {s} + {P}[-1] * {P}[{self.r.randint(-3, 2)}] + {self.expr(S, 1)}", ind)
        elif k == 4:
            self.emit(f"for {i} in range(1, len({P})):", ind)
            self.emit(f"{s} = {s} + ({P}[{i}] - {P}[{i} - 1]) ** 2 * {self.leaf(S)}", ind + 1)
        elif k == 5:
            self.emit(f"{s} = {s} + sum({P}) * {self.leaf(S)} + max({P})", ind)
        elif k == 6:
            other = self.pick(['v', 'w', P])  # (a zip of the argument with itself: read by position)
            self.emit(f"for {t}, {i} in zip({P}, {other}):", ind)
            self.emit(f"{s} = {s} + {t} * {i} * {self.leaf(S)}", ind + 1)
        else:
            h = self.new("h")
            self.defs.append(f"def {h}(p, z):\n    return p[0] * z + p[2] * p[1]\n")
            self.emit(f"{s} = {s} + {h}({P}, {self.leaf(S)})", ind)
        self.bind(s, S)

    def _table_arg(self, P, s, i, t, ind):
        """seq_arg's forms for a table argument, a list of pairs of numbers (its gradient the
        same shape: passes/rows.py)."""
        a, b = self.new("a"), self.new("b")
        k = self.r.randint(0, 4)
        if k == 0:
            self.emit(f"for {a}, {b} in {P}:", ind)
            self.emit(f"{s} = {s} + ({a} * {self.leaf(S)} - {b}) ** 2", ind + 1)
        elif k == 1:
            self.emit(f"for {t} in {P}:", ind)
            self.emit(f"{s} = {s} * {self.const(0.3, 0.9)} + {t}[0] * math.sin({t}[1] * {self.leaf(S)})", ind + 1)
        elif k == 2:
            self.emit(f"for {i} in range(len({P})):", ind)
            self.emit(f"{s} = {s} + {P}[{i}][0] * {P}[{i}][-1] * {self.leaf(S)}", ind + 1)
        elif k == 3:
            self.emit(f"for ({a}, {b}), {t} in zip({P}, {self.pick(['v', 'w'])}):", ind)
            self.emit(f"{s} = {s} + {a} * {t} + {b} * {self.leaf(S)}", ind + 1)
        else:
            self.emit(f"{s} = {s} + sum({a} * {b} for {a}, {b} in {P}) * {self.leaf(S)}", ind)
        self.bind(s, S)

    def _dict_arg(self, P, s, i, t, ind):
        """seq_arg's forms for a dict of numbers with keys 'a', 'b', 'c'."""
        k = self.r.randint(0, 5)
        if k == 0:
            self.emit(f"for {i} in range(3):", ind)
            self.emit(f"{s} = {s} * {self.const(0.3, 0.9)} + {P}['a'] * {self.leaf(S)} + {P}['b'] * {i}", ind + 1)
        elif k == 1:
            self.emit(f"{s} = {s} + {P}['c'] * math.sin({P}['a'] * {self.leaf(S)})", ind)
        elif k == 2:
            self.emit(f"for {t} in {P}:", ind)
            self.emit(f"{s} = {s} + {P}[{t}] * {self.leaf(S)}", ind + 1)
        elif k == 3:
            self.emit(f"for {t}, {i} in {P}.items():", ind)
            self.emit(f"{s} = {s} + {i} * {self.leaf(S)}", ind + 1)
        elif k == 4:
            self.emit(f"{s} = {s} + {P}.get('b', 0.0) * {self.leaf(S)} + len({P})", ind)
        else:
            h = self.new("h")
            self.defs.append(f"def {h}(d, z):\n    return d['a'] * z + d['c']\n")
            self.emit(f"{s} = {s} + {h}({P}, {self.leaf(S)})", ind)
        self.bind(s, S)

    def c_params(self, ind=0):
        """A dict of parameters read by key, as users keep them (passes/scalarize.py):
        values that are names, expressions or constants, read in a loop or once; at
        times a value's name bound again after the display (the dict keeps the old)."""
        self.use("params")
        P, q, s = self.new("p"), self.new("q"), self.new("s")
        self.emit(f"{q} = {self.expr(S, 1)}", ind)
        self.emit(f"{P} = {{'k': {q}, 'r': {self.expr(S, 1)}, 'c': {self.const(0.5, 1.5)}, "
                  f"'u': {self.pick(['v', 'w'])}}}", ind)
        if self.r.random() < 0.3:
            self.emit(f"{q} = {q} * {self.const(1.5, 2.0)}", ind)
        if self.r.random() < 0.5:
            i = self.new("i")
            self.emit(f"{s} = {q}", ind)
            self.emit(f"for {i} in range(3):", ind)
            self.emit(f"{s} = {P}['k'] * math.tanh({s}) + {P}['r'] * {P}['u'][{i}] - {P}['c'] * 0.1", ind + 1)
        else:
            self.emit(f"{s} = {P}['k'] * {P}['c'] + np.sum({P}['u']) * {P}['r'] + {q}", ind)
        self.bind(s, S)

    def c_held(self, ind=0):
        """An array or list put in a container, then changed through the container (an
        element write, op=, append), then read through its own name or the container:
        Python shows the change through both; refused where the generated code would not."""
        self.use("held")
        inner, C, s = self.new("inner"), self.new("C"), self.new("s")
        arr = self.r.random() < 0.6
        if arr:
            self.emit(f"{inner} = np.zeros({N}) + {self.expr(V, 1)}", ind)
        else:
            self.emit(f"{inner} = [{self.expr(S, 1)}, {self.expr(S, 1)}]", ind)
        k = self.r.random()
        key = "0" if k < 0.5 else "'a'"
        self.emit(f"{C} = [{inner}, 1.0]" if k < 0.5 else f"{C} = {{'a': {inner}, 'b': 1.0}}", ind)
        r = self.new("r")
        if self.r.random() < 0.3:  # through a loop over the container, or a name read out first
            self.emit(f"for {r} in list({C}.values())[:1]:" if k >= 0.5 else f"for {r} in {C}[:1]:", ind)
            self.emit(f"{r}[1] = {r}[1] * {self.expr(S, 1)}", ind + 1)
        else:
            if self.r.random() < 0.3:
                self.emit(f"{r} = {C}[{key}]", ind)
                self.emit(f"{s} = {r}[1] * 1.0", ind)
                self.bind(s, S)
                s = self.new("s")
            k2 = self.r.random()
            if k2 < 0.25:  # the change made through the object's own name
                self.emit(self.pick([f"{inner}[1] = {self.expr(S, 1)}"]
                                    + ([f"{inner} += {self.expr(V, 1)}"] if arr else [f"{inner}.append({self.expr(S, 1)})"])), ind)
            elif k2 < 0.5:  # the change made by a helper the container is given
                g = self.new("change")
                body = self.pick(["c[k][1] = v"] + (["c[k] += v"] if arr else ["c[k].append(v)"]))
                self.defs.append(f"def {g}(c, k, v):\n    {body}\n")
                self.emit(f"{g}({C}, {key}, {self.expr(S if 'append' in body or '[1]' in body else V, 1)})", ind)
            else:
                change = self.pick([f"{C}[{key}][1] = {self.expr(S, 1)}"]
                                   + ([f"{C}[{key}] += {self.expr(V, 1)}"] if arr else [f"{C}[{key}].append({self.expr(S, 1)})"]))
                self.emit(change, ind)
        if arr and self.r.random() < 0.3:  # the rows of a matrix changed in a loop
            M2 = self.new("M")
            self.emit(f"{M2} = np.outer({inner}, {inner}) + 0.0", ind)
            self.emit(f"for {r} in {M2}:", ind)
            self.emit(f"{r} *= {self.expr(S, 1)}", ind + 1)
            self.emit(f"{s} = np.sum({M2}) * 0.1", ind)
            self.bind(s, S)
            s = self.new("s")
        self.emit(self.pick([f"{s} = {inner}[1] * {self.expr(S, 1)}", f"{s} = {C}[{key}][1] * {self.expr(S, 1)}",
                             f"{s} = sum({inner}) + {C}[{key}][0]"]), ind)
        self.bind(s, S)

    def c_other_name(self, ind=0):
        """One object under two names that the code does not spell as `b = a`: handed back
        by a helper or a getter, chained assignment, unpacking, extend, setdefault, two
        objects holding it; then changed in place through one name (op=, an element
        write, append) and read through the other or the first."""
        self.use("other_name")
        y, a, s = self.new("y"), self.new("a"), self.new("s")
        arr = self.r.random() < 0.7
        self.emit(f"{y} = np.zeros({N}) + {self.expr(V, 1)}" if arr
                  else f"{y} = [{self.expr(S, 1)}, {self.expr(S, 1)}]", ind)
        k = self.r.randrange(7)
        if k == 0:
            g = self.new("ident")
            self.defs.append(f"def {g}(v):\n    return v\n")
            self.emit(f"{a} = {g}({y})", ind)
        elif k == 1:
            g = self.new("first")
            self.defs.append(f"def {g}(items):\n    for v in items:\n        return v\n")
            self.emit(f"{a} = {g}([{y}])", ind)
        elif k == 2:
            b = self.new("b")
            self.emit(f"{a} = {b} = {y}", ind)
            y = b
        elif k == 3:
            rest = self.new("rest")
            self.emit(f"{a}, *{rest} = [{y}, {y}]", ind)
            y = f"{rest}[0]"
        elif k == 4:
            L = self.new("L")
            self.emit(f"{L} = []", ind)
            self.emit(f"{L}.extend([{y}])", ind)
            self.emit(f"{a} = {L}[0]", ind)
        elif k == 5:
            D = self.new("D")
            self.emit(f"{D} = {{}}", ind)
            self.emit(f"{a} = {D}.setdefault('k', {y})", ind)
            y = f"{D}['k']"
        else:
            cls, o1, o2 = self.new("Holder"), self.new("o"), self.new("o")
            self.defs.append(f"class {cls}:\n    def __init__(self, w):\n        self.w = w\n\n"
                             f"    def get(self):\n        return self.w\n")
            self.emit(f"{o1} = {cls}({y})", ind)
            self.emit(f"{o2} = {cls}({y})", ind)
            self.emit(f"{a} = {o1}.get()", ind)
            y = f"{o2}.w"
        if arr:
            self.emit(self.pick([f"{a} += {self.expr(V, 1)}", f"{a}[1] = {self.expr(S, 1)}",
                                 f"{a} *= {self.expr(S, 1)}"]), ind)
            self.emit(self.pick([f"{s} = np.sum({y}) * {self.expr(S, 1)}", f"{s} = {y}[1] + {a}[0]"]), ind)
        else:
            self.emit(self.pick([f"{a}.append({self.expr(S, 1)})", f"{a}[1] = {self.expr(S, 1)}"]), ind)
            self.emit(self.pick([f"{s} = sum({y}) * {self.expr(S, 1)}", f"{s} = {y}[1] + {a}[0]"]), ind)
        self.bind(s, S)

    FAMILIES = [
        ("assign", 6), ("inplace", 2), ("alias", 1), ("list", 2), ("unpack", 1), ("if", 2),
        ("for", 2), ("while", 1), ("early_return", 1), ("closure", 1), ("lambda", 1),
        ("dataclass", 1), ("class", 1), ("accumulator", 1), ("recursion", 1), ("varargs", 1),
        ("helper", 1), ("mutating_helper", 1), ("const_inplace", 1), ("softmax", 1),
        ("params", 1), ("held", 1), ("other_name", 1), ("record", 1), ("maybe_bound", 1),
        ("recurrence", 1), ("walrus", 1), ("nonlocal", 1), ("swap", 1), ("rows", 1), ("dict_acc", 1),
        ("while_maybe", 1), ("mask", 1), ("slice_update", 1), ("nested_comp", 1), ("global_list", 1),
        ("rebound_global", 1), ("lazy_loop", 1), ("seq_arg", 1), ("extremum", 1), ("none_default", 1), ("state_items", 1),
        ("decorated", 1), ("table", 1), ("captured_list", 1), ("global_recursion", 1), ("reduce", 1),
        ("scalar_math", 2),
    ]

    def statement(self):
        names = [n for n, _ in self.FAMILIES]
        weights = [w for _, w in self.FAMILIES]
        fam = self.r.choices(names, weights)[0]
        self.use(fam)
        getattr(self, "c_" + fam)(0)

    def program(self):
        for _ in range(self.r.randint(2, 7)):
            self.statement()
        scal = [k for k, s in self.env.items() if s == S and k != "x"]
        arrs = [k for k, s in self.env.items() if s != S and k not in self.params]
        terms = scal[-4:] + [f"np.sum({a}) * {self.const(0.1, 0.5)}" for a in arrs[-2:]]
        if not terms:
            terms = [self.expr(S)]
        self.emit("return " + " + ".join(terms))
        body = "\n".join("    " * (i + 1) + t for i, t in self.lines)
        defs = "\n\n".join(self.defs)
        text = HEADER + "\n\n" + (defs + "\n\n" if defs else "") + f"def f({', '.join(self.params)}):\n" + body + "\n"
        return Program(self.seed, text, sorted(self.used | {"matrix_arg"} if self.matrix else self.used), self.params)


def generate(seed):
    return Gen(seed).program()


if __name__ == "__main__":
    import sys

    for a in sys.argv[1:] or ["0"]:
        p = generate(int(a))
        print(f"# seed {a}: {', '.join(p.constructs)}")
        print(p.source)
