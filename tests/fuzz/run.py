"""The fuzz driver: ``python -m tests.fuzz`` (``make fuzz``).

    python -m tests.fuzz [--seconds 600] [--seed 0] [--workers 2] [--count N]
    python -m tests.fuzz --repro SEED [--no-shrink]     # one program: source, verdict, shrunk

Runs programs seed, seed+1, ... on `workers` processes until the time budget or the count
is spent, prints the verdict counts, the refusals grouped by message kind (with the
constructs their programs use most), and for each wrong/crash group the seeds, a shrunk
program and the command that reproduces it. Exits 1 if anything was wrong or crashed.
"""

import argparse
import collections
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import time

from .gen import generate
from .oracle import check
from .shrink import shrink

CHUNK = 25


def run_chunk(seeds, deadline, only=()):
    out = []
    for seed in seeds:
        if time.time() > deadline:
            break
        prog = generate(seed)
        if only and not set(only) & set(prog.constructs):
            continue
        t = time.perf_counter()
        v = check(prog.source, seed)
        out.append((seed, v, prog.constructs, time.perf_counter() - t))
    return out


def shrink_task(seed, budget):
    prog = generate(seed)
    v = check(prog.source, seed)
    small = shrink(prog.source, seed, v, budget=budget) if v.verdict in ("wrong", "crash") else prog.source
    return seed, v, small, check(small, seed)


def repro_command(seed):
    return f"python -m tests.fuzz --repro {seed}"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("FUZZ_SECONDS", 600)))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("FUZZ_SEED", 0)))
    ap.add_argument("--workers", type=int, default=int(os.environ.get("FUZZ_WORKERS", 2)))
    ap.add_argument("--count", type=int, default=None, help="stop after this many programs (0: no limit)")
    ap.add_argument("--shrink", type=int, default=int(os.environ.get("FUZZ_SHRINK", 10)),
                    help="shrink at most this many wrong/crash programs (spread over the groups)")
    ap.add_argument("--shrink-seconds", type=float, default=20.0, help="budget per shrink")
    ap.add_argument("--repro", type=int, default=None, help="show, check and shrink one seed")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated construct families: run only the "
                    "seeds whose program uses one of them (e.g. --only dataclass,class)")
    ap.add_argument("--list", action="store_true", help="print one line per program")
    ap.add_argument("--out", default=os.environ.get("FUZZ_OUT"),
                    help="write one tab-separated line per program (seed, verdict, order, kind, constructs)")
    args = ap.parse_args(argv)

    if args.repro is not None:
        return repro(args.repro, not args.no_shrink, args.shrink_seconds)

    base = tempfile.mkdtemp(prefix="adjoint_fuzz_")
    os.environ["ADJOINT_FUZZ_TMP"] = base  # the workers write their programs here
    try:
        return fuzz(args)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def fuzz(args):
    only = tuple(c for c in args.only.split(",") if c)
    start = time.time()
    deadline = start + args.seconds
    results = []
    ctx = mp.get_context("fork")
    with ctx.Pool(args.workers, maxtasksperchild=20) as pool:
        pending = collections.deque()
        nxt = args.seed
        last = args.seed + args.count if args.count else None  # 0 or none: the time decides
        while True:
            while len(pending) < 2 * args.workers and time.time() < deadline and (last is None or nxt < last):
                hi = nxt + CHUNK if last is None else min(nxt + CHUNK, last)
                pending.append(pool.apply_async(run_chunk, (list(range(nxt, hi)), deadline, only)))
                nxt = hi
            if not pending:
                break
            chunk = pending.popleft().get()
            results.extend(chunk)
            if args.list:
                for seed, v, cons, dt in chunk:
                    print(f"{seed}: {v} ({dt * 1000:.0f} ms)", flush=True)
        elapsed = time.time() - start
        results.sort(key=lambda r: r[0])
        report(results, elapsed, args)
        if args.out:
            with open(args.out, "w") as fh:
                for seed, v, cons, dt in results:
                    fh.write(f"{seed}\t{v.verdict}\t{v.order}\t{v.kind}\t{','.join(cons)}\t{dt * 1000:.0f} ms\n")
        bad = [r for r in results if r[1].verdict in ("wrong", "crash")]
        if bad and not args.no_shrink and args.shrink:
            groups = collections.OrderedDict()
            for seed, v, cons, dt in bad:
                groups.setdefault(v.key(), []).append((seed, set(cons)))
            reps = pick_representatives(groups, args.shrink)
            print(f"\n=== shrinking {len(reps)} programs from {len(groups)} wrong/crash groups "
                  f"({args.shrink_seconds:.0f} s each) ===")
            jobs = [(key, pool.apply_async(shrink_task, (seed, args.shrink_seconds))) for key, seed in reps]
            for key, job in jobs:
                seed, v, small, sv = job.get()
                print(f"\n--- {v}\n    shrunk: {sv}\n    seeds: {' '.join(str(sd) for sd, _ in groups[key][:30])}"
                      f"{' ...' if len(groups[key]) > 30 else ''}\n    reproduce: {repro_command(seed)}")
                print(indent(small))
    return 1 if any(r[1].verdict in ("wrong", "crash") for r in results) else 0


def pick_representatives(groups, count):
    """Up to `count` (key, seed) pairs, round-robin over the groups (largest first); inside
    a group the next pick is the program whose constructs overlap least with the picks
    made there so far (ties: the shortest source), so different causes get shrunk."""
    order = sorted(groups, key=lambda k: -len(groups[k]))
    picked = {k: [] for k in order}
    out = []
    while len(out) < count:
        progress = False
        for key in order:
            if len(out) >= count:
                break
            left = [(sd, cons) for sd, cons in groups[key] if sd not in {p for p, _ in picked[key]}]
            if not left:
                continue

            def overlap(item):
                sd, cons = item
                worst = max((len(cons & c) / max(1, len(cons | c)) for _, c in picked[key]), default=0.0)
                return (worst, len(generate(sd).source))

            best = min(left[:200], key=overlap)
            picked[key].append(best)
            out.append((key, best[0]))
            progress = True
        if not progress:
            break
    return out


def indent(text):
    return "\n".join("    " + line for line in text.rstrip().splitlines())


def report(results, elapsed, args):
    n = len(results)
    counts = collections.Counter(r[1].verdict for r in results)
    orders = collections.Counter((r[1].verdict, r[1].order) for r in results if r[1].order)
    span = f"seeds {results[0][0]}..{results[-1][0]}" if results else "no seeds"
    print(f"=== {n} programs ({span}{', only ' + args.only if args.only else ''}) in {elapsed:.0f} s on "
          f"{args.workers} workers: {n / max(elapsed, 1e-9):.1f} programs/s ===")
    for verdict in ("pass", "refused", "crash", "wrong", "invalid"):
        by = ", ".join(f"order {o}: {c}" for (vv, o), c in sorted(orders.items()) if vv == verdict)
        print(f"  {verdict:8s} {counts.get(verdict, 0):6d}" + (f"   ({by})" if by else ""))
    first = [r[3] for r in results if r[0] % 3]
    second = [r[3] for r in results if r[0] % 3 == 0]
    if first and second:
        print(f"  time per program in a worker: {1000 * sum(first) / len(first):.0f} ms (first order), "
              f"{1000 * sum(second) / len(second):.0f} ms (with second order, seed % 3 == 0)")
    total_cons = collections.Counter(c for r in results for c in r[2])

    def typical(rs):
        """The constructs over-represented in these programs compared with all programs."""
        cons = collections.Counter(c for r in rs for c in r[2])
        lift = sorted(cons, key=lambda c: -(cons[c] / len(rs)) / (total_cons[c] / n))
        return ", ".join(lift[:3])

    for verdict in ("refused", "crash", "wrong", "invalid"):
        rs = [r for r in results if r[1].verdict == verdict]
        if not rs:
            continue
        print(f"\n--- {verdict} by kind (count, order, typical constructs, example seeds)")
        kinds = collections.defaultdict(list)
        for r in rs:
            kinds[(r[1].order, r[1].kind)].append(r)
        for (order, kind), group in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            seeds = " ".join(str(r[0]) for r in group[:8])
            print(f"  {len(group):5d}  order {order}  {kind}\n         [{typical(group)}] seeds: {seeds}")
    print()


def repro(seed, do_shrink, budget):
    prog = generate(seed)
    print(f"# seed {seed}; constructs: {', '.join(prog.constructs)}")
    print(prog.source)
    v = check(prog.source, seed)
    print(f"# verdict: {v}")
    for d in v.details[:10]:
        print("#   " + d.replace("\n", "\n#   "))
    if do_shrink and v.verdict in ("wrong", "crash"):
        small = shrink(prog.source, seed, v, budget=budget)
        sv = check(small, seed)
        print(f"\n# shrunk: {sv}")
        for d in sv.details[:5]:
            print("#   " + d.replace("\n", "\n#   "))
        print(small)
    return 1 if v.verdict in ("wrong", "crash") else 0


if __name__ == "__main__":
    sys.exit(main())
