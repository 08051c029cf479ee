"""The oracle: one verdict per program.

``check(source, seed, second=None)`` writes the program to a file (adjoint_s2s reads the
source), imports it, and returns a ``Verdict``:

- ``pass``: every check below holds;
- ``refused``: adjoint_s2s raised one of its own errors (an ``AdjointError``) whose message
  names a line (``line N``);
- ``crash``: any other exception out of ``pullback``/``back``/``gradient`` (including an error
  raised inside generated code), a refusal that names no line, or a time-out;
- ``wrong``: silently wrong: the value under ``pullback`` differs from the plain call (also
  with the arrays made float32: the same type and bits, or both raise), an input was
  changed, or a gradient (first order) or Hessian-vector product (second order)
  disagrees with central differences;
- ``invalid``: the program itself fails or is not finite at its inputs (a generator bug),
  or the differences at both steps reach past a kink that steps ``NEAR`` times smaller
  do not (they agree with the adjoint there).

First order: every coordinate of every input is compared with central differences at two
step sizes; where the two differences disagree the coordinate is unstable and dropped. A
program whose derivatives exceed ``STEEP`` is ``invalid``: differences cannot check it.
A ``None`` gradient counts as 0, which passes only where the differences say 0.
Second order (``second``; default: one program in three): the gradient of the directional
derivative ``u . grad f`` against ``(grad f(p + h u) - grad f(p - h u)) / 2h`` at two steps.
"""

import atexit
import importlib.util
import math
import os
import re
import shutil
import signal
import sys
import tempfile
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np

import adjoint_s2s as ad
from adjoint_s2s.errors import AdjointError
from adjoint_s2s.misuse import _is_scalar

from .gen import N, R

H1, H2 = 1e-5, 1e-4  # the two central-difference steps
# where both disagree with the adjoint, the differences are taken again at steps this many
# times smaller: agreeing there, both steps reached past a kink (``invalid``); a wrong
# adjoint disagrees at every step
NEAR = 100
STABLE = 1e-5  # relative agreement of the two differences for a coordinate to count
RTOL, ATOL = 1e-4, 1e-6  # gradient vs differences (ATOL scaled by the largest gradient)
# Above this derivative the program is not checked (``invalid``): with p moving by a step of
# 1e-5, such a term moves by more than 1e3, so a bounded term of it (cos of a 1e12
# argument, seed 484) turns many times between the two points and its derivative is
# invisible to both differences, which then agree with each other and disagree with the
# exact gradient.
STEEP = 1e8
TIMEOUT = 20  # seconds per program
LINE = re.compile(r"line \d+")

_DIR = None
_PID = None
_COUNT = [0]


@dataclass
class Verdict:
    verdict: str  # pass / refused / crash / wrong / invalid
    order: int = 0  # 1 or 2 for refused/crash/wrong; 0 otherwise
    kind: str = ""  # short class of the failure (for grouping and shrinking)
    message: str = ""
    details: list = field(default_factory=list)

    def key(self):
        """What a shrunk program must keep."""
        return (self.verdict, self.order, self.kind)

    def __str__(self):
        head = self.verdict + (f" (order {self.order})" if self.order else "")
        if self.kind:
            head += f" [{self.kind}]"
        return head + (f": {self.message}" if self.message else "")


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout(f"program took more than {TIMEOUT} s")


def inputs(seed, params):
    """The arguments of f for this seed (depends only on the seed and the parameter names)."""
    rng = np.random.default_rng(10_000 + seed)
    out = []
    for p in params:
        if p == "x":
            out.append(float(rng.uniform(-1.5, 1.5)))
        elif p in ("xs", "ts"):  # a list, a tuple of numbers (gen.py's seq_arg)
            out.append((list if p == "xs" else tuple)(float(v) for v in rng.uniform(-1.5, 1.5, 3)))
        elif p == "rs":  # a table: a list of pairs of numbers (gen.py's seq_arg)
            out.append([tuple(float(v) for v in rng.uniform(-1.5, 1.5, 2)) for _ in range(3)])
        elif p == "ds":  # a dict of numbers (gen.py's seq_arg)
            out.append({k: float(v) for k, v in zip("abc", rng.uniform(-1.5, 1.5, 3))})
        elif p == "A":
            out.append(rng.standard_normal((R, N)))
        else:
            out.append(rng.standard_normal(N))
    return out


def workdir():
    """This process's directory for program files (under $ADJOINT_FUZZ_TMP when the driver
    set it; removed at exit otherwise)."""
    global _DIR, _PID
    if _DIR is None or _PID != os.getpid():
        base = os.environ.get("ADJOINT_FUZZ_TMP") or None
        _DIR = tempfile.mkdtemp(prefix=f"adjoint_fuzz_{os.getpid()}_", dir=base)
        _PID = os.getpid()
        if base is None:
            atexit.register(shutil.rmtree, _DIR, True)
    return _DIR


def load(source, seed, path=None):
    """Write the source to a file and import it as a fresh module."""
    _COUNT[0] += 1
    name = f"fz_{seed}_{_COUNT[0]}"
    path = path or os.path.join(workdir(), name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        pass
    return module, path, name


def flat(args):
    return np.concatenate([np.ravel(np.asarray(list(a.values()) if isinstance(a, dict) else a, dtype=float))
                           for a in args])


def unflat(vec, like):
    out, k = [], 0
    for a in like:
        if isinstance(a, float):
            out.append(float(vec[k]))
            k += 1
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], (list, tuple)):  # a table: its rows
            rows = []
            for r in a:
                rows.append(type(r)(float(v) for v in vec[k:k + len(r)]))
                k += len(r)
            out.append(type(a)(rows))
        elif isinstance(a, (list, tuple)):
            out.append(type(a)(float(v) for v in vec[k:k + len(a)]))
            k += len(a)
        elif isinstance(a, dict):
            out.append({key: float(v) for key, v in zip(a, vec[k:k + len(a)])})
            k += len(a)
        else:
            n = a.size
            out.append(vec[k:k + n].reshape(a.shape).copy())
            k += n
    return out


def grad_flat(grads, like):
    if not isinstance(grads, tuple):
        grads = (grads,)
    parts = []
    for g, a in zip(grads, like):
        if g is None:
            g = type(a)([None] * len(a)) if isinstance(a, (list, tuple)) else (
                {k: None for k in a} if isinstance(a, dict) else np.zeros(np.shape(a)))
        if isinstance(a, dict):  # a dict's gradient a dict of its keys
            if type(g) is not dict or set(g) != set(a):
                raise TypeError(f"gradient {g!r} for a dict of keys {sorted(a)}")
            g = [0.0 if g[k] is None else g[k] for k in a]
            a = list(a.values())
        if isinstance(a, (list, tuple)):  # a list's gradient a list, a tuple's a tuple
            if type(g) is not type(a) or len(g) != len(a):
                raise TypeError(f"gradient {g!r} for a {type(a).__name__} of {len(a)} numbers")
            if a and isinstance(a[0], (list, tuple)):  # a table: row by row
                if any(v is not None and (type(v) is not type(r) or len(v) != len(r)) for v, r in zip(g, a)):
                    raise TypeError(f"gradient {g!r} for the rows {a!r}")
                g = [[0.0] * len(r) if v is None else [0.0 if x is None else x for x in v] for v, r in zip(g, a)]
            g = [0.0 if v is None else v for v in g]
        g = np.asarray(g)
        if np.iscomplexobj(g):
            raise TypeError(f"complex gradient {g!r} for a real input")
        if g.shape != np.shape(a):
            raise TypeError(f"gradient of shape {g.shape} for an input of shape {np.shape(a)}")
        parts.append(np.ravel(g.astype(float)))
    return np.concatenate(parts)


def central(fn, p, like, h, direction=None):
    """Central differences of fn (flat vector -> scalar or flat vector) at p."""
    if direction is not None:
        return (fn(unflat(p + h * direction, like)) - fn(unflat(p - h * direction, like))) / (2 * h)
    out = []
    for i in range(p.size):
        e = np.zeros(p.size)
        e[i] = h
        out.append((fn(unflat(p + e, like)) - fn(unflat(p - e, like))) / (2 * h))
    return np.array(out)


def _kink_between(order, bad, got, d, like, params):
    """The verdict where the differences at both steps disagree with the adjoint but agree
    with it at steps NEAR times smaller: both steps reach past a kink of f (two entries of
    a max closer than a step, seed 2509314): the derivative at the point is the adjoint's,
    so the program is not a check of it."""
    i = bad[0]
    return Verdict("invalid", order, "kink within the steps",
                   f"at {coord_name(i, like, params)}: adjoint {got[i]:.9g}, differences "
                   f"{d[i]:.9g} at steps {H1:g} and {H2:g}, the adjoint's at steps "
                   f"{NEAR} times smaller")


def compare(got, d1, d2, scale):
    """Indices where got disagrees with stable differences."""
    bad = []
    for i in range(got.size):
        a, b = d1[i], d2[i]
        if not (np.isfinite(a) and np.isfinite(b)):
            continue
        if abs(a - b) > STABLE * max(1.0, abs(a), scale):  # unstable: a kink or branch nearby
            continue
        if not np.isfinite(got[i]) or abs(got[i] - a) > RTOL * abs(a) + ATOL * max(1.0, scale):
            bad.append(i)
    return bad


def coord_name(i, like, params):
    k = 0
    for a, p in zip(like, params):
        table = isinstance(a, (list, tuple)) and a and isinstance(a[0], (list, tuple))
        n = (1 if isinstance(a, float) else np.size(a) if table
             else len(a) if isinstance(a, (list, tuple, dict)) else a.size)
        if i < k + n:
            if isinstance(a, float):
                return p
            if table:
                return f"{p}[{(i - k) // len(a[0])}][{(i - k) % len(a[0])}]"
            if isinstance(a, (list, tuple)):
                return f"{p}[{i - k}]"
            if isinstance(a, dict):
                return f"{p}[{list(a)[i - k]!r}]"
            return f"{p}[{', '.join(str(int(j)) for j in np.unravel_index(i - k, a.shape))}]"
        k += n
    return str(i)


def classify_error(exc, order):
    msg = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, AdjointError):
        if LINE.search(str(exc)):
            return Verdict("refused", order, refusal_kind(exc), msg)
        return Verdict("crash", order, "refusal without line: " + refusal_kind(exc), msg)
    if isinstance(exc, Timeout):
        return Verdict("crash", order, "timeout", msg)
    return Verdict("crash", order, type(exc).__name__, msg, [tb_tail(exc)])


def tb_tail(exc):
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-4:])


def refusal_kind(exc):
    """A message kind for grouping: the class and the message's head with the names,
    numbers, paths and quoted code replaced."""
    text = str(exc).split(" at /")[0].split(" in /")[0].split("; ")[0]
    text = re.sub(r"`[^`]*`", "`_`", text)
    text = re.sub(r"'[^']*'", "'_'", text)
    text = re.sub(r"\(/[^)]*\)", "(...)", text)
    text = re.sub(r"\b\d+\b", "N", text)
    text = re.sub(r"\b(fz_\w+|Pt\d+|Lin\d+|Acc\d+|rec\d+|comb\d+|h\d+|mut\d+|g\d+)\b", "_", text)
    return f"{type(exc).__name__}: {text[:110]}"


def _fast_path(f, args, like, g, params):
    """A Verdict when a cached ``gradient`` call (its second call runs the fused function
    of adjoint_s2s/fuse.py where there is one) differs from the pullback's gradient g."""
    try:
        y = f(*[_copy(b) for b in args])
        if not _is_scalar(y):
            return None  # gradient refuses it: nothing to compare
        ad.gradient(f, *args)
        fast = grad_flat(ad.gradient(f, *args), like)
    except Timeout:
        raise
    except Exception as exc:
        return classify_error(exc, 1)
    if not _same_inputs(args, like):
        return Verdict("wrong", 1, "input changed by gradient", _changed(args, like, params))
    if not np.allclose(fast, g, rtol=1e-12, atol=0.0, equal_nan=True):
        i = int(np.argmax(np.abs(np.asarray(fast) - np.asarray(g))))
        return Verdict("wrong", 1, "gradient", f"gradient() {fast[i]!r} != pullback {g[i]!r} at {i}")
    return None


def check(source, seed, second=None, params=None):
    """The verdict for one program (see the module docstring)."""
    if second is None:
        second = seed % 3 == 0
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT)
    name = None
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                module, path, name = load(source, seed)
                f = module.f
            except Exception as exc:
                return Verdict("invalid", 0, "load", f"{type(exc).__name__}: {exc}")
            return _check(f, seed, second)
    except Timeout as exc:
        return Verdict("crash", 0, "timeout", str(exc))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        if name is not None:
            sys.modules.pop(name, None)


def _check(f, seed, second):
    import inspect

    # (a parameter with a default is left to it: gen.py's none_default)
    params = [n for n, p in inspect.signature(f).parameters.items() if p.default is inspect.Parameter.empty]
    args = inputs(seed, params)
    like = [_copy(a) for a in args]

    def plain(a):
        return f(*[_copy(b) for b in a])

    try:
        want = plain(args)
        want = float(want)
    except Exception as exc:
        return Verdict("invalid", 0, "plain call", f"{type(exc).__name__}: {exc}")
    if not math.isfinite(want):
        return Verdict("invalid", 0, "not finite", f"f = {want}")

    # No cache clearing between programs: the cache keys on the identity of a code object
    # (tests/test_cache.py), so programs with equal code objects (same text at the same
    # line) never share an entry, and a program's entries go when its module does.

    # ----- first order -----
    try:
        y, back = ad.pullback(f, *args)
    except Timeout:
        raise
    except Exception as exc:
        return classify_error(exc, 1)
    if not _same_inputs(args, like):
        return Verdict("wrong", 1, "input changed by pullback", _changed(args, like, params))
    try:
        yv = float(y)
    except Exception as exc:
        return Verdict("crash", 1, "value not a float", f"{type(y).__name__}: {exc}")
    if not (yv == want or abs(yv - want) <= 1e-12 * max(1.0, abs(want))):
        return Verdict("wrong", 1, "value", f"pullback value {yv!r} != plain call {want!r}")
    try:
        grads = back(1.0)
        if isinstance(grads, tuple) and len(grads) != len(args):
            raise TypeError(f"back returned {len(grads)} gradients for {len(args)} arguments")
        g = grad_flat(grads, like)
    except Timeout:
        raise
    except Exception as exc:
        return classify_error(exc, 1)
    if not _same_inputs(args, like):
        return Verdict("wrong", 1, "input changed by back", _changed(args, like, params))

    p = flat(like)
    fn = lambda a: float(plain(a))  # noqa: E731
    d1 = central(fn, p, like, H1)
    d2 = central(fn, p, like, H2)
    scale = max(1.0, float(np.max(np.abs(d1))) if np.all(np.isfinite(d1)) else 1.0)
    if scale > STEEP:
        return Verdict("invalid", 0, "too steep for differences",
                       f"derivatives up to {scale:.3g}: a bounded term of f may turn faster than the steps resolve")
    bad = compare(g, d1, d2, scale)
    if bad and not compare(g, central(fn, p, like, H1 / NEAR), central(fn, p, like, H2 / NEAR), scale):
        return _kink_between(1, bad, g, d1, like, params)
    if bad:
        details = [f"d/d{coord_name(i, like, params)}: adjoint {g[i]:.9g}, differences {d1[i]:.9g}" for i in bad]
        kind = "None gradient" if all(grads[_arg_of(i, like)] is None for i in bad if isinstance(grads, tuple)) else "gradient"
        return Verdict("wrong", 1, kind, details[0], details)
    verdict = _fast_path(f, args, like, g, params)  # gradient's cached calls: the fused function
    if verdict is not None:
        return verdict
    verdict = _float32_value(f, args)
    if verdict is not None:
        return verdict

    if not second:
        return Verdict("pass")

    # ----- second order: Hessian-vector product -----
    rng = np.random.default_rng(seed + 7)
    u = rng.standard_normal(p.size)
    ulike = unflat(u, like)

    def G(a):
        return grad_flat(ad.gradient(f, *a), like)

    def directional(*a):
        gs = ad.gradient(f, *a)
        total = 0.0
        for gi, ui in zip(gs, ulike):
            if gi is None:
                continue
            if isinstance(ui, dict):
                for key in ui:
                    if gi.get(key) is not None:
                        total = total + gi[key] * ui[key]
            elif isinstance(ui, (list, tuple)):
                for gj, uj in zip(gi, ui):
                    if gj is not None:  # (a table's row: a tuple of numbers, its gradient too)
                        total = total + (np.sum([0.0 if x is None else x for x in gj] * np.asarray(uj))
                                         if isinstance(uj, (list, tuple)) else gj * uj)
            else:
                total = total + np.sum(gi * ui)
        return total

    try:
        hv = grad_flat(ad.gradient(directional, *args), like)
        if not _same_inputs(args, like):
            return Verdict("wrong", 2, "input changed", _changed(args, like, params))
        e1 = central(G, p, like, H1, u)
        e2 = central(G, p, like, H2, u)
    except Timeout:
        raise
    except Exception as exc:
        return classify_error(exc, 2)
    scale = max(1.0, float(np.max(np.abs(e1))) if np.all(np.isfinite(e1)) else 1.0)
    bad = compare(hv, e1, e2, scale)
    if bad and not compare(hv, central(G, p, like, H1 / NEAR, u), central(G, p, like, H2 / NEAR, u), scale):
        return _kink_between(2, bad, hv, e1, like, params)
    if bad:
        details = [f"(H u) at {coord_name(i, like, params)}: adjoint {hv[i]:.9g}, differences {e1[i]:.9g}" for i in bad]
        return Verdict("wrong", 2, "hessian-vector", details[0], details)
    return Verdict("pass")


def _float32_value(f, args):
    """The program again on float32 copies of its arrays: the value under ``pullback`` is
    the plain call's, of the same type and bits, or both raise (NumPy keeps float32
    through operations with Python floats, and ``a op= v`` writes into a, keeping its
    dtype). Values only: float32 differences are too coarse to check gradients with. A
    refusal here is not a failure (the float64 run passed); None when all is well."""
    if not any(isinstance(a, np.ndarray) for a in args):
        return None
    f32 = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args]

    def copies():
        return [_copy(a) for a in f32]

    try:
        want, plain_error = f(*copies()), None
    except Timeout:
        raise
    except Exception as exc:
        want, plain_error = None, exc
    try:
        y, _ = ad.pullback(f, *copies())
    except Timeout:
        raise
    except Exception as exc:
        if plain_error is not None:
            return None  # both raise
        verdict = classify_error(exc, 1)
        return None if verdict.verdict == "refused" else verdict
    if plain_error is not None:
        return Verdict("wrong", 1, "float32 value", f"pullback gives {y!r} where the plain call "
                       f"raises {type(plain_error).__name__}: {plain_error}")
    if type(y) is not type(want) or not np.array_equal(np.asarray(y), np.asarray(want), equal_nan=True):
        return Verdict("wrong", 1, "float32 value", f"pullback value {y!r} != plain call {want!r} "
                       "(float32 arrays)")
    return None


def _copy(a):
    return a.copy() if isinstance(a, (np.ndarray, list, dict)) else a


def _arg_of(i, like):
    k = 0
    for j, a in enumerate(like):
        table = isinstance(a, (list, tuple)) and a and isinstance(a[0], (list, tuple))
        k += (1 if isinstance(a, float) else np.size(a) if table
              else len(a) if isinstance(a, (list, tuple, dict)) else a.size)
        if i < k:
            return j
    return len(like) - 1


def _same_inputs(args, like):
    for a, b in zip(args, like):
        if isinstance(b, np.ndarray):
            if not isinstance(a, np.ndarray) or a.shape != b.shape or not np.array_equal(a, b):
                return False
        elif a != b:
            return False
    return True


def _changed(args, like, params):
    return ", ".join(p for a, b, p in zip(args, like, params)
                     if not (isinstance(b, np.ndarray) and np.array_equal(a, b)) and not (not isinstance(b, np.ndarray) and a == b))
