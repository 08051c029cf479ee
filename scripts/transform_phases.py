"""CPU time of each phase of the transform (``transform.pair_source``, then compiling the
text), for the straight-line functions of bench/workloads.py and ``transform_target``.

    .venv/bin/python scripts/transform_phases.py                 # 40 and 640 lines
    .venv/bin/python scripts/transform_phases.py 10 40 160 640
    .venv/bin/python scripts/transform_phases.py --against /tmp/old 40 640

Each row is the minimum over fresh transforms (``time.process_time``, the cyclic garbage
collector paused as ``emit.generate`` pauses it, the passes' memo tables emptied as
``refresh()`` empties them) of: source (the file read and parsed again, the function's
tree made for the passes to rewrite, as for a freshly imported file), inline + check,
anf (and scalarize), activity,
reverse, tape, cleanup, text (codegen + sparse), compile. ``--against DIR`` also measures
the ``adjoint_s2s`` package of another checkout (DIR holds its ``adjoint_s2s`` folder,
e.g. from ``git archive <rev> adjoint_s2s | tar -x -C DIR``), the two alternately, so
that a loaded machine slows both alike; it says whether the generated texts are equal.
"""
import argparse
import gc
import importlib
import importlib.util
import math
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))

import workloads as W  # noqa: E402

PASSES = ("activity", "anf", "check", "cleanup", "codegen", "inline", "reverse", "sparse", "tape")


def load(pkg):
    """The modules of the package named pkg that the pipeline uses."""
    mods = {m: importlib.import_module(f"{pkg}.{m}") for m in ("emit", "runtime", "transform", "source", "naming")}
    mods.update({m: importlib.import_module(f"{pkg}.passes.{m}") for m in PASSES})
    mods["api"] = importlib.import_module(pkg)
    for name in ("projected", "scalarize", "text_numbers", "whole"):  # (older checkouts lack some)
        try:
            mods[name] = importlib.import_module(f"{pkg}.passes.{name}")
        except ImportError:
            pass
    return mods


def phases(M, fn, key):
    """({phase: seconds}, the pair's text) of one transform of fn for argument kinds key,
    the pipeline of transform.pair_source step by step."""
    emit, runtime, T, source, naming = M["emit"], M["runtime"], M["transform"], M["source"], M["naming"]
    code = fn.__code__
    globals_ = emit._RecordingGlobals(fn.__globals__)
    reserved = set(emit._helper_values())
    out, clock = {}, time.process_time
    source.forget_sources()  # as for a freshly imported file: read and parsed again
    t = clock()

    def lap(name):
        nonlocal t
        now = clock()
        out[name] = now - t
        t = now

    noted = None
    if hasattr(source, "function_copy_noting"):
        node, filename, lines, *noted = source.function_copy_noting(fn, M["check"].REJECTED)
    else:  # (a checkout that converted the function to gast, then copied it)
        node, filename, lines = source.function_node(fn)
        node = source.fresh_copy_noting(node, M["check"].REJECTED)[0]
    node = emit._as_def(node, code)
    lap("source")
    M["inline"].inline_calls(
        fn, node, filename, globals_, source.function_node, source.fresh_copy,
        lambda c: runtime._not_users(c.co_filename), lambda tree: M["check"].check(tree, filename),
        *([lines] if "lines" in M["inline"].inline_calls.__code__.co_varnames else []),
        *([noted[0]] if "names" in M["inline"].inline_calls.__code__.co_varnames else []))
    M["check"].check(node, filename)
    lap("inline+check")
    user_names = naming.names_in(node)
    namer = naming.Namer(user_names | set(code.co_freevars) | reserved)
    arg_kinds = T._split_key(fn, key)[0]
    if hasattr(T, "static_values"):  # (with whole expressions of numbers: passes/whole.py)
        statics = T.static_values(fn, user_names)
        math_call = M["whole"].math_calls({n for n, v in statics.items() if v is math})
        M["anf"].normalize(node, namer, filename, lines, static_names=statics,
                           numbers=T._numbers(fn, node, arg_kinds, T._split_key(fn, key)[1], True, math_call),
                           math_call=math_call)
    else:
        M["anf"].normalize(node, namer, filename, lines, static_names=T.static_names(fn, user_names))
    if "scalarize" in M:  # (a checkout from before passes/scalarize.py has none)
        M["scalarize"].scalarize_items(node, user_names)
    lap("anf")
    info = T.function_info(fn, node, filename, globals_)
    facts = M["activity"].analyse(node, info, *T._split_key(fn, key)[:2], user_names | set(code.co_varnames))
    if "whole" in M:
        M["whole"].verify(facts, node.wholes)
    if "text_numbers" in M:  # (older checkouts have none)
        M["text_numbers"].check_text_numbers(node, facts, filename)
    lap("activity")
    rev = M["reverse"].Generator(node, info, facts, taken=namer.taken)
    draft = rev.generate()
    lap("reverse")
    plan = M["tape"].plan(draft, rev.namer)
    rendered = M["tape"].render(draft, plan)
    lap("tape")
    fwd, pb, passed = M["cleanup"].clean(draft, plan, *rendered)
    if "projected" in M:
        pb = M["projected"].reuse_projections(
            pb, plan.shape_only, draft.locals - set(draft.params_names) - set(draft.freevars))
    lap("cleanup")
    text = M["sparse"].sparse_scatters(M["codegen"].pair_text(draft, fwd, pb, passed))
    lap("text")
    compile(text, "<pair>", "exec")
    lap("compile")
    return out, text


def straight(n, folder, tag):
    """A freshly imported straight-line function of n lines."""
    name = f"transform_phases_{n}_{tag}"
    path = os.path.join(folder, name + ".py")
    with open(path, "w") as fh:
        fh.write("import math\n\n\n" + W.straight_line_source(n))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.straight


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lengths", nargs="*", type=int, default=[40, 640])
    ap.add_argument("--against", help="a folder holding another checkout's adjoint_s2s package")
    ap.add_argument("--reps", type=int, default=0, help="transforms per function (default: by length)")
    a = ap.parse_args()
    libs = {"this": load("adjoint_s2s")}
    tmp = tempfile.mkdtemp(prefix="transform_phases_")
    if a.against:
        shutil.copytree(os.path.join(a.against, "adjoint_s2s"), os.path.join(tmp, "adjoint_against"))
        sys.path.insert(0, tmp)
        libs = {"against": load("adjoint_against"), **libs}
    cases = [("transform_target", None)] + [(f"{n} lines", n) for n in a.lengths]
    for label, n in cases:
        fns, keys = {}, {}
        for which, M in libs.items():
            if n is None:
                fns[which], args = W.transform_target, W.TRANSFORM_ARGS
            else:
                fns[which], args = straight(n, tmp, which), (0.7, 1.3)
            M["api"].gradient(fns[which], *args)  # imports and caches warm
            keys[which] = M["runtime"].kinds_of(args)
        reps = a.reps or (20 if (n or 40) <= 40 else 8 if n <= 160 else 4)
        best = {w: {} for w in libs}
        totals = {w: [] for w in libs}
        texts = {}
        for _ in range(reps):
            for which, M in libs.items():
                for memo in getattr(M["emit"], "_MEMOS", ()):  # as refresh() leaves them
                    memo.cache_clear()
                gc.collect()
                gc.disable()
                try:
                    got, texts[which] = phases(M, fns[which], keys[which])
                finally:
                    gc.enable()
                totals[which].append(sum(got.values()))
                for k, v in got.items():
                    best[which][k] = min(best[which].get(k, v), v)
        for which in libs:
            parts = " ".join(f"{k} {v * 1e3:.2f}" for k, v in best[which].items())
            print(f"{label:>16} {which:>7}: total {min(totals[which]) * 1e3:7.2f} ms (min of {reps}) | {parts}")
        if len(texts) == 2:
            print(f"{'':>16} generated texts equal: {len(set(texts.values())) == 1}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
