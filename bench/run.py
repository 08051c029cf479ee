"""Benchmarks of adjoint_s2s: it measures and reports, it never asserts a timing.

    .venv/bin/python bench/run.py [--quick] [--only NAME,NAME] [--peers LIST] [--threads N]
                                  [--out FILE]

For each workload of bench/workloads.py, ``adjoint_s2s.gradient`` is timed against the
hand-written gradient in the same process, with interleaved rounds: each round times a
batch of calls of every contender in turn (the order rotating from round to round), and
the report gives the median time per call over the rounds, and each ratio to the hand-written
gradient as the median over the rounds of the ratio within a round. autograd, JAX (``jax.grad``,
eager and under ``jax.jit``) and PyTorch (``torch.autograd.grad``) are timed the same way
when they import. Then two costs of adjoint_s2s itself: the first-call transform of a
~40-line function, and the overhead of a cached ``gradient`` call over calling the
generated pair directly. See bench/README.md.
"""
import os
import sys


def _early_option(argv, name, default=None):
    """The value of an option, read before NumPy, PyTorch or JAX load (thread pools and
    the allocator are set up then)."""
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return default


# glibc hands blocks over ~128 KB back to the kernel as they are freed, and then the next
# call page-faults its arrays in again: with 800 KB arrays (xent) that costs more than the
# arithmetic and changes 4x between runs, depending on which frees happen to trim the
# heap. --malloc steady (the default) fixes glibc's thresholds for every contender, by
# re-running this script with them set, so that the report measures computation;
# --malloc default measures with the allocator as it comes.
STEADY_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(64 << 20), "MALLOC_TRIM_THRESHOLD_": str(256 << 20)}


if (
    _early_option(sys.argv[1:], "--malloc", "steady") == "steady"
    and sys.platform.startswith("linux")
    and any(os.environ.get(k) != v for k, v in STEADY_MALLOC.items())
):
    os.environ.update(STEADY_MALLOC)
    os.execv(sys.executable, [sys.executable] + sys.argv)

# OpenBLAS reads this when NumPy loads it: set it before anything imports NumPy.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
THREADS = _early_option(sys.argv[1:], "--threads")
if THREADS is not None and THREADS.isdigit() and int(THREADS) > 0:
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = THREADS
    if THREADS == "1":  # XLA on CPU: one thread, or its own default
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
        ).strip()

import argparse  # noqa: E402
import functools  # noqa: E402
import gc  # noqa: E402
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import adjoint_s2s as ad  # noqa: E402
from adjoint_s2s import emit, runtime  # noqa: E402

import peers as P  # noqa: E402
import workloads as W  # noqa: E402

SECTIONS = ("transform", "dispatch")
RTOL = 1e-6  # a gradient further than this from the hand-written one is flagged

perf_counter = time.perf_counter


# ----- timing ---------------------------------------------------------------------------------


def per_call(fn, n):
    """Seconds per call of fn over a batch of n calls."""
    t0 = perf_counter()
    for _ in range(n):
        fn()
    return (perf_counter() - t0) / n


def batch_size(fn, target):
    """How many calls of fn make a batch of about target seconds (fn is already warm)."""
    n = 1
    while True:
        t = per_call(fn, n)
        if t * n >= 0.2 * target or n >= 1 << 20:
            return max(1, int(round(target / max(t, 1e-9))))
        n *= 4


class Stats:
    def __init__(self, samples, n):
        self.by_round = list(samples)  # in round order, to pair with another's rounds
        self.samples = sorted(samples)
        self.n = n  # calls per batch
        self.median = statistics.median(self.samples)
        q = statistics.quantiles(self.samples, n=4) if len(self.samples) > 1 else [self.median] * 3
        self.q1, self.q3 = q[0], q[2]
        self.min = self.samples[0]

    def ratio_to(self, other):
        """The median over the rounds of this time over other's in the same round: the
        two ran back to back, so a host that slows down for a while slows both."""
        return statistics.median(a / b for a, b in zip(self.by_round, other.by_round))

    @property
    def spread(self):
        """The interquartile range relative to the median: how noisy the rounds were."""
        return (self.q3 - self.q1) / self.median if self.median else 0.0


def interleaved(fns, rounds, target):
    """{name: Stats}: every round times one batch of each fn, in a rotating order."""
    names = list(fns)
    sizes = {k: batch_size(fns[k], target) for k in names}
    samples = {k: [] for k in names}
    for r in range(rounds):
        gc.collect()
        s = r % len(names)
        for k in names[s:] + names[:s]:
            samples[k].append(per_call(fns[k], sizes[k]))
    return {k: Stats(samples[k], sizes[k]) for k in names}


# ----- formatting -------------------------------------------------------------------------------


def fmt_time(t):
    if t is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if t >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"


def fmt_ratio(r):
    return f"{r:.3g}x" if r < 1000 else f"{r:.0f}x"


def one_line(exc, limit=400):
    text = " ".join(str(exc).split())
    text = f"{type(exc).__name__}: {text}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def table(header, rows):
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    line = lambda cells: "  ".join(  # noqa: E731
        str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
    )
    out = [line(header), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    return "\n".join(out)


class Report:
    """Prints as it goes and keeps the text for --out."""

    def __init__(self):
        self.lines = []

    def __call__(self, text=""):
        print(text, flush=True)
        self.lines.append(text)

    def progress(self, text):
        print(f"  .. {text}", file=sys.stderr, flush=True)


# ----- checking -----------------------------------------------------------------------------------


def max_rel_error(got, want):
    """The largest error of any gradient component, relative to that component's scale."""
    if len(got) != len(want):
        return float("inf")
    worst = 0.0
    for g, w in zip(got, want):
        if g is None:
            return float("inf")
        g, w = np.asarray(g, dtype=float), np.asarray(w, dtype=float)
        if g.shape != w.shape:
            return float("inf")
        scale = max(float(np.max(np.abs(w))), 1e-300)
        worst = max(worst, float(np.max(np.abs(g - w))) / scale)
    return worst


# ----- the workloads --------------------------------------------------------------------------------


def bench_workload(w, peers, rounds, target, rep):
    """{"stats": {contender: Stats}, "status": {contender: text}, "first": {...}, "err": {...}}"""
    hand = functools.partial(w.grad, *w.args)
    _, ref = hand()
    fns = {"hand": hand}
    status, first, err = {}, {}, {}

    t0 = perf_counter()
    try:
        got = ad.gradient(w.fn, *w.args)
    except Exception as exc:
        status["adjoint_s2s"] = "unsupported: " + one_line(exc)
    else:
        first["adjoint_s2s"] = perf_counter() - t0
        err["adjoint_s2s"] = max_rel_error(got, ref)
        fns["adjoint_s2s"] = functools.partial(ad.gradient, w.fn, *w.args)

    for peer in peers:
        try:
            run, to_numpy = P.build(peer, w.name, w.args)
            t0 = perf_counter()
            out = run()
            first[peer] = perf_counter() - t0
            err[peer] = max_rel_error(to_numpy(out), ref)
            fns[peer] = run
        except Exception as exc:
            status[peer] = "error: " + one_line(exc)

    rep.progress(f"{w.name}: timing {', '.join(fns)} ({rounds} rounds)")
    stats = interleaved(fns, rounds, target)
    return {"stats": stats, "status": status, "first": first, "err": err}


def report_workloads(results, peers, rep):
    contenders = ["adjoint_s2s"] + list(peers)
    rep("Time per gradient call relative to the hand-written gradient (median over the rounds of")
    rep("the ratio within a round; lower is better)")
    rep()
    rows = []
    for name, res in results.items():
        st = res["stats"]
        hand = st["hand"]
        row = [name, fmt_time(hand.median)]
        for c in contenders:
            if c in st:
                mark = "!" if res["err"].get(c, 0.0) > RTOL else ""
                row.append(fmt_ratio(st[c].ratio_to(hand)) + mark)
            else:
                row.append("unsupported" if c == "adjoint_s2s" else "error")
        rows.append(row)
    rep(table(["workload", "T_hand"] + [f"{c}/hand" for c in contenders], rows))
    rep()
    rep("Absolute median time per call [interquartile range / median over the rounds]")
    rep()
    rows = []
    for name, res in results.items():
        st = res["stats"]
        row = [name]
        for c in ["hand"] + contenders:
            s = st.get(c)
            row.append(f"{fmt_time(s.median)} [{100 * s.spread:.0f}%]" if s else "-")
        rows.append(row)
    rep(table(["workload", "hand"] + contenders, rows))
    rep()
    rep("First call (adjoint_s2s: includes the transform; jax.jit: includes tracing and compiling)")
    rep()
    rows = []
    for name, res in results.items():
        rows.append([name] + [fmt_time(res["first"].get(c)) for c in contenders])
    rep(table(["workload"] + contenders, rows))
    notes = []
    for name, res in results.items():
        for c in contenders:
            if c in res["status"]:
                notes.append(f"  {name} / {c}: {res['status'][c]}")
            elif res["err"].get(c, 0.0) > RTOL:
                notes.append(
                    f"  {name} / {c}: gradient differs from the hand-written one "
                    f"(max relative error {res['err'][c]:.2e}); marked '!'"
                )
    if notes:
        rep()
        rep("Notes:")
        for n in notes:
            rep(n)
    rep()


# ----- transform time -----------------------------------------------------------------------------


def _fresh_module(source, tmpdir, i):
    """Import source as a brand-new module file: nothing about it is cached anywhere."""
    name = f"adjoint_s2s_bench_fresh_{os.getpid()}_{i}"
    path = os.path.join(tmpdir, name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def bench_transform(reps, rep):
    f, args = W.transform_target, W.TRANSFORM_ARGS
    src_lines, _ = inspect.getsourcelines(f)
    key = runtime.kinds_of(args)
    rep(f"First-call transform of a {len(src_lines)}-line function (workloads.transform_target), "
        f"median of {reps} fresh transforms")
    rep()
    try:
        ad.gradient(f, *args)
    except Exception as exc:
        rep("  unsupported: " + one_line(exc))
        rep()
        return

    def median_of(setup, timed):
        ts = []
        for i in range(reps):
            x = setup(i)
            gc.collect()
            t0 = perf_counter()
            timed(x)
            ts.append(perf_counter() - t0)
        return statistics.median(ts), min(ts)

    rows = []
    # the transform alone; the file's syntax tree stays cached between runs
    med, lo = median_of(lambda i: ad.refresh(), lambda _: emit.entry_for(f, key))
    rows.append(["emit.entry_for after adjoint_s2s.refresh()", fmt_time(med), fmt_time(lo)])
    # what a user sees: dispatch + transform + compile + the first run
    med, lo = median_of(lambda i: ad.refresh(), lambda _: ad.gradient(f, *args))
    rows.append(["first gradient() after adjoint_s2s.refresh()", fmt_time(med), fmt_time(lo)])
    # a function never seen before, in a new file: parsing the file is included
    source = "import math\n\n\n" + "".join(src_lines)
    with tempfile.TemporaryDirectory(prefix="adjoint_s2s_bench_") as tmpdir:
        def setup(i):
            mod = _fresh_module(source, tmpdir, i)
            sys.modules.pop(mod.__name__, None)
            return mod.transform_target

        med, lo = median_of(setup, lambda g: ad.gradient(g, *args))
        rows.append(["first gradient() of a freshly imported copy", fmt_time(med), fmt_time(lo)])
    warm = functools.partial(ad.gradient, f, *args)
    warm()
    st = interleaved({"cached": warm}, max(5, reps), 0.02)["cached"]
    rows.append(["cached gradient() call, for comparison", fmt_time(st.median), fmt_time(st.min)])
    rep(table(["what", "median", "min"], rows))
    rep()


# ----- dispatch overhead -----------------------------------------------------------------------------


def bench_dispatch(rounds, target, rep):
    rep("Overhead of a cached adjoint_s2s.gradient call over calling the generated pair directly")
    rep("(pair = adjoint_s2s.emit.raw_pair_for(f, adjoint_s2s.runtime.kinds_of(args)); "
        "direct = pair(*args), then pullback(1.0))")
    rep()
    cases = [
        ("scalar_poly", W.scalar_poly, W.BY_NAME["scalar_poly"].args),
        ("scalar_loop", W.scalar_loop, W.BY_NAME["scalar_loop"].args),
        ("transform_target", W.transform_target, W.TRANSFORM_ARGS),
    ]
    rows = []
    for name, f, args in cases:
        try:
            want = ad.gradient(f, *args)
            key = runtime.kinds_of(args)
            if f.__closure__:
                key += tuple(runtime._cell_kind(c) for c in f.__closure__)
            pair = emit.raw_pair_for(f, key)
        except Exception as exc:
            rows.append([name, "unsupported: " + one_line(exc, 120), "", "", "", "", ""])
            continue

        def direct(pair=pair, args=args):
            y, back = pair(*args)
            return back(1.0)

        def via_call(f=f, args=args):  # the cached dispatch alone, without the API layers
            y, back = runtime.call(f, *args)
            return back(1.0)

        got = direct()[1:]
        if max_rel_error(got, want) > RTOL:
            rows.append([name, f"pair and gradient() disagree: {got} vs {want}", "", "", "", "", ""])
            continue
        rep.progress(f"dispatch: {name}")
        st = interleaved(
            {
                "f": functools.partial(f, *args),
                "direct": direct,
                "call": via_call,
                "gradient": functools.partial(ad.gradient, f, *args),
            },
            rounds,
            target,
        )
        over = st["gradient"].median - st["direct"].median
        rows.append([
            name,
            fmt_time(st["f"].median),
            fmt_time(st["direct"].median),
            fmt_time(st["call"].median),
            fmt_time(st["gradient"].median),
            ("+" if over >= 0 else "-") + fmt_time(abs(over)),
            f"{100 * over / st['direct'].median:+.0f}%",
        ])
    rep(table(["function", "plain f(*args)", "pair direct", "runtime.call", "gradient()",
               "overhead", "overhead %"], rows))
    rep("  pair direct: pair(*args) then pullback(1.0); runtime.call: the same through the cached")
    rep("  dispatch adjoint_s2s.runtime.call(f, *args); gradient(): adjoint_s2s.gradient(f, *args).")
    rep("  overhead = gradient() - pair direct, in time and relative to pair direct.")
    rep()


# ----- main ----------------------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="5 rounds of ~10 ms batches instead of 15 of ~40 ms")
    ap.add_argument("--rounds", type=int, help="rounds per measurement (default 15, or 5 with --quick)")
    ap.add_argument(
        "--only",
        help="comma-separated workloads and/or sections to run: "
        + ", ".join([w.name for w in W.WORKLOADS] + list(SECTIONS)),
    )
    ap.add_argument(
        "--peers",
        help="comma-separated peers to time (default: every importable one of "
        + ", ".join(P.PEERS) + "); 'none' for none",
    )
    ap.add_argument(
        "--threads",
        type=int,
        help="limit every contender to N threads (OpenBLAS, OpenMP/MKL, torch.set_num_threads; "
        "XLA only for N = 1); default: each library's own default",
    )
    ap.add_argument(
        "--malloc",
        choices=("steady", "default"),
        default="steady",
        help="steady (default): fix glibc's mmap/trim thresholds so that large arrays are "
        "not page-faulted in again at every call; default: the allocator as it comes",
    )
    ap.add_argument("--out", help="also write the report to this file")
    opts = ap.parse_args(argv)

    rounds = opts.rounds or (5 if opts.quick else 15)
    target = 0.01 if opts.quick else 0.04
    transform_reps = 5 if opts.quick else 11
    known = [w.name for w in W.WORKLOADS] + list(SECTIONS)
    if opts.only:
        chosen = [s.strip() for s in opts.only.split(",") if s.strip()]
        bad = [s for s in chosen if s not in known]
        if bad:
            ap.error(f"unknown name(s) {', '.join(bad)}; choose from {', '.join(known)}")
    else:
        chosen = known

    avail = P.available()
    if opts.peers is None:
        peers = [p for p in P.PEERS if avail[p] is None]
    elif opts.peers.strip() == "none":
        peers = []
    else:
        peers = [p.strip() for p in opts.peers.split(",") if p.strip()]
        bad = [p for p in peers if p not in P.PEERS]
        if bad:
            ap.error(f"unknown peer(s) {', '.join(bad)}; choose from {', '.join(P.PEERS)}")
        missing = [p for p in peers if avail[p] is not None]
        if missing:
            ap.error(f"not importable: {', '.join(f'{p} ({avail[p]})' for p in missing)}")

    rep = Report()
    rep("adjoint_s2s benchmarks  (measurements only; nothing here asserts a timing)")
    rep()
    versions = [f"python {platform.python_version()}", f"numpy {np.__version__}",
                f"adjoint_s2s {ad.__version__}"]
    versions += [f"{p} {P.version(p)}" for p in peers if p != "jax.jit"]
    rep("versions: " + ", ".join(versions))
    skipped = [f"{p} ({avail[p]})" for p in P.PEERS if avail[p] is not None and p != "jax.jit"]
    if skipped:
        rep("peers not importable, their columns left out: " + "; ".join(skipped))
    if opts.threads is not None and opts.threads < 1:
        ap.error("--threads must be at least 1")
    if "torch" in peers:
        import torch

        if opts.threads:
            torch.set_num_threads(opts.threads)
        threads = f", torch threads {torch.get_num_threads()}"
    else:
        threads = ""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    rep(f"machine: {platform.machine()}, {os.cpu_count()} CPUs{threads}, load average at start "
        f"{', '.join(f'{x:.2f}' for x in load) if load else '?'}; "
        f"OPENBLAS_THREAD_TIMEOUT={os.environ.get('OPENBLAS_THREAD_TIMEOUT')}")
    rep("threads: " + (f"limited to {opts.threads} (--threads)" if opts.threads else
                       "each library's default (--threads N to limit)"))
    steady = all(os.environ.get(k) == v for k, v in STEADY_MALLOC.items())
    rep("malloc: " + ("steady, " + " ".join(f"{k}={v}" for k, v in STEADY_MALLOC.items())
                      if steady else "the allocator's defaults (--malloc steady to fix them)"))
    rep(f"method: {rounds} interleaved rounds, batches of ~{target * 1e3:.0f} ms per contender, "
        f"median per call")
    rep()

    results = {}
    for w in W.WORKLOADS:
        if w.name in chosen:
            rep.progress(f"{w.name}: {w.what}")
            results[w.name] = bench_workload(w, peers, rounds, target, rep)
    if results:
        report_workloads(results, peers, rep)
    if "transform" in chosen:
        rep.progress("transform time")
        bench_transform(transform_reps, rep)
    if "dispatch" in chosen:
        bench_dispatch(rounds, target, rep)
    if load is not None:
        rep("load average at end: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    if opts.out:
        with open(opts.out, "w") as fh:
            fh.write("\n".join(rep.lines) + "\n")


if __name__ == "__main__":
    main()
