"""Programs written the way users write them, each a form that once fell off a cliff: a
value of unknown kind made every operation after it go through run-time dispatch (100
to 300 times the plain call). ``scripts/cliff_probes.py`` times each gradient against
its plain call; nothing here asserts a timing. Each entry of ``PROBES``: (what it is,
the function, its arguments).
"""
import functools
import math

import numpy as np

T = 200

# ----- helpers under a decorator --------------------------------------------------------------


def forwards(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)

    return wrapper


@forwards
def accel(th, k):
    return -k * math.sin(th)


def decorated(k):
    th, om = 1.0, 0.0
    for _ in range(T):
        om = om + 0.01 * accel(th, k)
        th = th + 0.01 * om
    return th


# ----- data held in module globals ------------------------------------------------------------

DATA = [[0.1 * i, 0.2 * i - 1.0] for i in range(30)]
LABELS = [1.0 if i % 2 else 0.0 for i in range(30)]
PAIRS = [(0.1 * i, 1.0 if i % 2 else 0.0) for i in range(30)]
XS = [0.1 * i for i in range(30)]
COEF = [1.0, -2.0, 0.5, 0.1]
SAMPLES = np.linspace(-1.0, 1.0, 40)
RECORDS = [{"w": 0.1 * i, "b": 1.0} for i in range(20)]


def logistic(w):
    loss = 0.0
    for (x1, x2), y in zip(DATA, LABELS):
        z = w * x1 - 0.5 * x2
        p = 1.0 / (1.0 + math.exp(-z))
        loss = loss - (y * math.log(p) + (1 - y) * math.log(1 - p))
    return loss


def pairs(w):
    loss = 0.0
    for x, y in PAIRS:
        loss = loss + (w * x - y) ** 2
    return loss


def fit_global(w, b):
    return sum((w * x + b - y) ** 2 for x, y in zip(XS, LABELS))


def poly(x):
    return sum(c * x ** i for i, c in enumerate(COEF))


def monte_carlo(theta):
    tot = 0.0
    for s in SAMPLES:
        tot += math.exp(-theta * s * s)
    return tot / len(SAMPLES)


def records(x):
    s = 0.0
    for r in RECORDS:
        s = s + r["w"] * math.sin(x) + r["b"] * x
    return s


# ----- data as arguments, or captured --------------------------------------------------------


def zip_arguments(w, xs, ys):
    loss = 0.0
    for x, y in zip(xs, ys):
        loss = loss + (w * x - y) ** 2
    return loss


def make_loss(data):
    def loss(w):
        s = 0.0
        for x in data:
            s = s + (w * x - 1.0) ** 2
        return s

    return loss


closure_loss = make_loss([0.1 * i for i in range(30)])


def table_argument(w, data):
    loss = 0.0
    for x, y in data:
        loss = loss + (w * x - y) ** 2
    return loss


PARAMS = {"decay": 0.9, "gain": 0.5, "bias": -0.1}


def dict_items(x, params):
    s = 0.0
    for name, value in params.items():
        s = s * 0.5 + value * math.sin(x * len(name))
    return s


def product(x):
    return functools.reduce(lambda a, b: a * b + 0.1, [x, 0.5 * x, 1.5, x * x, 0.7])


# ----- sums, NumPy on numbers, recursion ------------------------------------------------------


def sum_in_a_loop(k):
    s = 0.0
    for _ in range(T):
        s = s + sum(k * j for j in (1.0, 2.0, 3.0))
    return s


def numpy_on_numbers(x):
    s = 0.0
    for i in range(20):
        s = s + np.exp(-x * i * 0.1) * np.cos(x)
    return s


def fib(x, n=12):
    if n <= 1:
        return x
    return fib(x, n - 1) * 0.5 + fib(x, n - 2) * 0.25 + math.sin(x) * 0.01


W1 = [[0.1 * (i - j) for j in range(3)] for i in range(4)]


def mlp_lists(s):
    x = [0.5 * s, -0.2, 0.3]
    h = []
    for row in W1:
        acc = 0.0
        for w, xi in zip(row, x):
            acc += w * xi
        h.append(math.tanh(acc))
    return sum(h)


PROBES = [
    ("a helper under functools.wraps, in a loop", decorated, (0.9,)),
    ("logistic regression over zip(DATA, LABELS), rows of DATA unpacked", logistic, (0.9,)),
    ("for x, y in PAIRS (a global list of tuples)", pairs, (0.9,)),
    ("sum(... for x, y in zip(XS, LABELS)) of globals", fit_global, (0.9, 0.1)),
    ("sum(c * x ** i for i, c in enumerate(COEF))", poly, (0.7,)),
    ("for s in SAMPLES (a global 1-D float64 array)", monte_carlo, (0.8,)),
    ("for r in RECORDS: r['w'] (global dicts of numbers)", records, (0.7,)),
    ("for x, y in zip(xs, ys) of list arguments", zip_arguments, (0.9, XS, LABELS)),
    ("a closure made over a list of data", closure_loss, (0.7,)),
    ("for name, value in params.items() of a dict argument", dict_items, (0.7, PARAMS)),
    ("functools.reduce of a lambda (it had no rule)", product, (0.7,)),
    ("sum(k * j for j in (1.0, 2.0, 3.0)) in a loop", sum_in_a_loop, (0.9,)),
    ("np.exp(-x * t) * np.cos(x) of numbers, summed in a loop", numpy_on_numbers, (0.7,)),
    ("a recursive fib(x, 12)", fib, (0.7,)),
    ("a table of rows passed as an argument (its gradient too)", table_argument, (0.9, PAIRS)),
    ("an MLP over nested lists (still dispatched)", mlp_lists, (0.7,)),
]
