"""Random programs for the stress run: small functions of a float and two arrays, built
from the constructs adjoint_s2s promises to differentiate (arithmetic, math and NumPy
calls, indexing, writes into arrays and lists, branches, loops, calls of helpers that
mutate what they are given), each returning a float.

``program(seed)`` gives the source of a module defining ``f(x, v, w)``. The programs
stay smooth where they are evaluated (every nonlinearity is squashed, divisions are
by 1 + something², the branch tests and the kinks of maximum/where are far from the
random inputs with overwhelming probability), so central differences are a fair
reference.
"""

import random

N = 5  # the length of every array

HEADER = f'''import math

import numpy as np

MAT = np.random.default_rng(7).standard_normal(({N}, {N})) / {N}
WEIGHTS = np.linspace(-1.0, 1.0, {N})


def mix(a, b):
    return a * math.sin(b) + 0.5 * b


def squash(A, s):
    return np.tanh(A * s)


def bump_first(A):
    B = A.copy()
    B[0] = B[1] * 2.0 + B[0]
    return B


def fill_from(out, A, s):
    out[1:3] = A[1:3] * s
    return out


def add_item(lst, s):
    lst.append(math.tanh(s))


class Acc:
    def __init__(self, total):
        self.total = total

    def add(self, value):
        self.total = self.total + value
'''


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.scalars = ["x"]
        self.arrays = ["v", "w"]
        self.fresh = set()  # arrays made here by an operation that copies: writable
        self.lists = []
        self.objects = []
        self.n = 0
        self.lines = []

    # ----- names ---------------------------------------------------------------------------
    def new(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def s(self):
        return self.r.choice(self.scalars)

    def a(self):
        return self.r.choice(self.arrays)

    def i(self):
        return self.r.randrange(N)

    def emit(self, depth, text):
        self.lines.append("    " * (depth + 1) + text)

    # ----- expressions ---------------------------------------------------------------------
    def scalar_expr(self):
        s, t = self.s(), self.s()
        return self.r.choice([
            f"{s} + {t}",
            f"{s} * {t}",
            f"{s} - 0.5 * {t}",
            f"{s} / (1.0 + {t} * {t})",
            f"math.sin({s})",
            f"math.tanh({s}) * {t}",
            f"math.exp(0.5 * math.tanh({s}))",
            f"{s} ** 2 * 0.3",
            f"math.sqrt(1.0 + {s} * {s})",
            f"math.atan({s}) + {t}",
            f"mix({s}, {t})",
            f"float(np.tanh({s}))",
        ])

    def reduce_expr(self):
        A, B = self.a(), self.a()
        return self.r.choice([
            f"np.sum({A} * {B})",
            f"np.mean(np.sin({A}))",
            f"{A}[{self.i()}]",
            f"np.dot({A}, {B}) * 0.2",
            f"np.max({A})",
            f"np.min({A} * {B})",
            f"np.linalg.norm({A})",
            f"np.prod(np.tanh({A}) + 1.5)",
            f"{A}.sum() * 0.1",
            f"float({A} @ WEIGHTS)",
            f"np.var({A})",
        ])

    def array_expr(self):
        A, B, s = self.a(), self.a(), self.s()
        fresh = [
            f"np.sin({A})",
            f"np.tanh({A}) * {s}",
            f"{A} * {B}",
            f"{A} + {s}",
            f"{A} - {B}",
            f"np.exp(0.3 * np.tanh({A}))",
            f"{A} / (1.0 + {B} ** 2)",
            f"np.sqrt({A} ** 2 + 1.0)",
            f"np.maximum({A}, {B})",
            f"np.where({A} > {B}, {A}, 2.0 * {B})",
            f"np.roll({A}, 2)",
            f"np.cumsum({A}) * 0.3",
            f"np.concatenate([{A}[:2], {B}[2:]])",
            f"MAT @ {A}",
            f"squash({A}, {s})",
            f"bump_first({A})",
            f"{A}.copy()",
            f"np.outer({A}, {B}).sum(axis=0) * 0.2",
            f"np.array([{s}, {self.s()}, 1.0, {s} * {s}, 0.5])",
        ]
        views = [f"{A}[::-1]", f"np.flip({A})"]
        if self.r.random() < 0.15:
            return self.r.choice(views), False
        return self.r.choice(fresh), True

    # ----- statements ----------------------------------------------------------------------
    def stmt(self, depth, top):
        kinds = ["scalar", "scalar", "reduce", "array", "array", "write", "augwrite"]
        if top:
            kinds += ["if", "for", "while", "list", "object", "helper_write"]
        kind = self.r.choice(kinds)
        getattr(self, "st_" + kind)(depth, top)

    def assign_scalar(self, depth, top, expr):
        if top or not self.scalars[1:]:
            name = self.new("s") if top else self.s()
            if top:
                self.emit(depth, f"{name} = {expr}")
                self.scalars.append(name)
                return
        else:
            name = self.r.choice(self.scalars[1:])
        self.emit(depth, f"{name} = {expr}")

    def st_scalar(self, depth, top):
        self.assign_scalar(depth, top, self.scalar_expr())

    def st_reduce(self, depth, top):
        self.assign_scalar(depth, top, self.reduce_expr())

    def st_array(self, depth, top):
        expr, fresh = self.array_expr()
        if top:
            name = self.new("a")
            self.emit(depth, f"{name} = {expr}")
            self.arrays.append(name)
            if fresh:
                self.fresh.add(name)
        else:  # rebinding an existing array inside a block keeps it fresh only if both are
            candidates = [a for a in self.arrays if a not in ("v", "w")]
            if not candidates:
                return
            name = self.r.choice(candidates)
            self.emit(depth, f"{name} = {expr}")
            if not fresh:
                self.fresh.discard(name)

    def writable(self):
        names = sorted(self.fresh)
        return self.r.choice(names) if names else None

    def st_write(self, depth, top):
        A = self.writable()
        if A is None:
            return self.st_array(depth, top)
        i, j = sorted(self.r.sample(range(N + 1), 2))
        self.emit(depth, self.r.choice([
            f"{A}[{self.i()}] = {self.s()}",
            f"{A}[{i}:{j}] = {self.a()}[{i}:{j}] * 0.5",
            f"{A}[{A} > 0.3] = 0.3",
        ]))

    def st_augwrite(self, depth, top):
        A = self.writable()
        if A is None:
            return self.st_scalar(depth, top)
        i, j = sorted(self.r.sample(range(N + 1), 2))
        self.emit(depth, self.r.choice([
            f"{A}[{self.i()}] += {self.s()}",
            f"{A}[{i}:{j}] *= {self.a()}[{i}:{j}]",
            f"{A}[{self.i()}] -= {A}[{self.i()}] * 0.5",
            f"{A} += {self.a()}",
        ]))

    def block(self, depth, count):
        for _ in range(count):
            self.stmt(depth, top=False)

    def st_if(self, depth, top):
        self.emit(depth, f"if {self.s()} > {self.r.choice(['0.0', '0.4', '-0.3'])}:")
        start = len(self.lines)
        self.block(depth + 1, self.r.randint(1, 3))
        if len(self.lines) == start:
            self.emit(depth + 1, "pass")
        if self.r.random() < 0.7:
            self.emit(depth, "else:")
            start = len(self.lines)
            self.block(depth + 1, self.r.randint(1, 2))
            if len(self.lines) == start:
                self.emit(depth + 1, "pass")

    def st_for(self, depth, top):
        acc = self.new("s")
        self.emit(depth, f"{acc} = {self.s()} * 0.5")
        k = self.new("k")
        self.emit(depth, f"for {k} in range({self.r.randint(1, N)}):")
        A, s = self.a(), self.s()
        self.emit(depth + 1, self.r.choice([
            f"{acc} = {acc} * 0.8 + math.sin({A}[{k}] * {s})",
            f"{acc} = {acc} + {A}[{k}] * {A}[{k}]",
            f"{acc} = math.tanh({acc}) + {A}[{k}] * 0.5",
        ]))
        if self.r.random() < 0.5:
            self.block(depth + 1, 1)
        self.scalars.append(acc)

    def st_while(self, depth, top):
        acc, k = self.new("s"), self.new("k")
        self.emit(depth, f"{acc} = {self.s()}")
        self.emit(depth, f"{k} = 0")
        self.emit(depth, f"while {k} < {self.r.randint(1, 4)}:")
        self.emit(depth + 1, f"{acc} = 0.7 * {acc} + 0.2 * math.cos({acc}) * {self.s()}")
        self.emit(depth + 1, f"{k} += 1")
        self.scalars.append(acc)

    def st_list(self, depth, top):
        L = self.new("lst")
        self.emit(depth, f"{L} = [{self.s()}]")
        for _ in range(self.r.randint(1, 3)):
            self.emit(depth, self.r.choice([
                f"{L}.append({self.s()} * 0.5)",
                f"add_item({L}, {self.s()})",
                f"{L}.extend([{self.s()}, 0.25])",
                f"{L}[0] = {L}[0] * {self.s()}",
            ]))
        if self.r.random() < 0.3:
            self.emit(depth, f"{L}.pop()")
        out = self.new("s")
        self.emit(depth, f"{out} = {self.r.choice(['sum', 'max', 'min'])}({L}) + len({L}) * 0.1"
                  if self.r.random() < 0.5 else f"{out} = {L}[0] + {L}[-1]")
        self.scalars.append(out)

    def st_object(self, depth, top):
        o = self.new("acc")
        self.emit(depth, f"{o} = Acc({self.s()})")
        for _ in range(self.r.randint(1, 3)):
            self.emit(depth, self.r.choice([
                f"{o}.add({self.s()})",
                f"{o}.total = {o}.total * {self.s()}",
            ]))
        out = self.new("s")
        self.emit(depth, f"{out} = {o}.total")
        self.scalars.append(out)

    def st_helper_write(self, depth, top):
        A = self.writable()
        if A is None:
            return self.st_array(depth, top)
        self.emit(depth, f"{A} = fill_from({A}, {self.a()}, {self.s()})")

    # ----- the program ---------------------------------------------------------------------
    def program(self):
        for _ in range(self.r.randint(4, 12)):
            self.stmt(0, top=True)
        terms = [f"{s}" for s in self.scalars[-3:]]
        terms += [f"np.sum({a} * WEIGHTS)" for a in self.arrays[-2:]]
        self.emit(0, "return " + " + ".join(terms))
        return HEADER + "\n\ndef f(x, v, w):\n" + "\n".join(self.lines) + "\n"


def program(seed):
    return Gen(seed).program()
