"""Gradient time over plain-call time for the user-style programs of bench/cliffs.py (each
a form that once fell to run-time dispatch), the median of 7 rounds of ~20 ms batches.
Measurements only: nothing asserts a timing.

    .venv/bin/python scripts/cliff_probes.py
    .venv/bin/python scripts/cliff_probes.py --against /tmp/old   # another checkout's adjoint_s2s, side by side

``--against DIR`` runs the same probes in a second process with DIR (holding an
``adjoint_s2s`` folder, e.g. ``git archive <rev> adjoint_s2s | tar -x -C DIR``) first on
the path, and prints both columns.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def per_call(fn, args, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn(*args)
    return (time.perf_counter() - t0) / n


def ratios():
    """[(what, ratio or the error's name)] of bench/cliffs.py's probes, in this process."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import cliffs

    import adjoint_s2s as ad

    out = []
    for what, fn, args in cliffs.PROBES:
        def grad(*a, fn=fn):
            return ad.gradient(fn, *a)

        try:
            grad(*args)
        except Exception as exc:  # (measured, not judged: an error is reported as such)
            out.append((what, type(exc).__name__))
            continue
        n = max(3, int(0.02 / max(per_call(fn, args, 3), 1e-7)))
        m = max(1, int(0.02 / max(per_call(grad, args, 2), 1e-7)))
        out.append((what, statistics.median(per_call(grad, args, m) / per_call(fn, args, n) for _ in range(7))))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", help="a folder holding another checkout's adjoint_s2s package")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        for what, r in ratios():
            print(f"{what}\t{r}")
        return
    columns = []
    for path in ([a.against] if a.against else []) + [ROOT]:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(path))
        got = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker"], env=env,
                             capture_output=True, text=True, check=True).stdout
        columns.append([line.split("\t") for line in got.splitlines()])
    names = ["against", "this"] if a.against else ["this"]
    print(f"{'program':64s}" + "".join(f"{n:>10s}" for n in names))
    for rows in zip(*columns):
        cells = "".join(f"{r[1] if not r[1][0].isdigit() else format(float(r[1]), '.1f') + 'x':>10s}"
                        for r in rows)
        print(f"{rows[0][0]:64s}{cells}")


if __name__ == "__main__":
    main()
