"""The benchmark runner in quick mode on a few workloads: every hand-written gradient it
compares with agrees with adjoint_s2s's, a gradient that disagrees is refused rather than
timed, and the runner writes its tables. No timing is asserted."""
import importlib
import os
import sys

import numpy as np
import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")


def _bench_module(name):
    """bench/<name>.py, imported with bench/ first on sys.path for the import only."""
    saved = list(sys.path)
    sys.path.insert(0, BENCH)
    try:
        return importlib.import_module(name)  # (run.py puts bench/ and the checkout first itself)
    finally:
        sys.path[:] = saved


@pytest.fixture(scope="module")
def run():
    return _bench_module("run")


FEW = ["pendulum", "pendulum_unpack", "seq_stacked", "ode_ifexp", "loop_helper", "loop_dict",
       "mlp_xent_32"]


@pytest.mark.parametrize("name", FEW)
def test_hand_gradient_agrees(run, name):
    import adjoint_s2s as ad

    w = run.W.BY_NAME[name]
    value, hand = w.grad(*w.args)
    assert np.allclose(value, w.fn(*w.args), rtol=1e-9, atol=0.0)
    assert run.agrees(ad.gradient(w.fn, *w.args), hand)


def test_quick_run_writes_its_table(run, tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_QUICK", "1")
    md = tmp_path / "results.md"
    only = ["loop_inlined", "loop_helper", "loop_params", "loop_dict", "mlp_xent_32"]
    status = run.main(["--only", ",".join(only), "--peers", "none", "--rounds", "2",
                       "--md", str(md)])
    assert status == 0
    text = md.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == only
    assert not any("WRONG" in r or "unsupported" in r for r in rows)
    # the second form of a group is compared with the first
    assert "of `loop_inlined`" in text and "of `loop_params`" in text
    assert "(quick)" in text


def test_a_disagreeing_gradient_is_not_timed(run, monkeypatch):
    w = run.W.BY_NAME["loop_params"]

    def off_by_a_bit(a, b):
        value, (ga, gb) = w.grad(a, b)
        return value, (ga * (1 + 1e-4), gb)

    bad = run.W.Workload("off", w.fn, off_by_a_bit, w.args, "a wrong hand gradient")
    res = run.bench_workload(bad, [], 1, 0.001, run.Report())
    assert "adjoint_s2s" not in res["stats"]
    assert res["status"]["adjoint_s2s"].startswith("DISAGREES")
    assert run.wrong({"off": res}) == ["off"]


def test_chart(run, tmp_path):
    pytest.importorskip("matplotlib")
    w = run.W.BY_NAME["loop_params"]
    res = {"loop_params": run.bench_workload(w, [], 1, 0.001, run.Report())}
    run.link_groups(res)
    path = tmp_path / "ratios.png"
    run.chart(res, [], str(path), "smoke")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("index", range(len(_bench_module("cliffs").PROBES)))
def test_cliff_probes_give_the_plain_value_and_gradient(index):
    """scripts/cliff_probes.py times these; here each is checked, as it is timed."""
    from .gradcheck import close_to_differences

    what, fn, args = _bench_module("cliffs").PROBES[index]
    close_to_differences(fn, *args, rtol=1e-5, atol=1e-7)
