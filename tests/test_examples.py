"""The scripts in examples/ run, and do what they say: a fit converges to the parameters
the data was made with, a training run drives its loss down, a gradient through the
example's model matches finite differences. Each runs a shortened version (fewer steps)
where the full run takes longer than a few seconds."""
import importlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import adjoint_s2s as ad

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

pytest.importorskip("scipy")
pytest.importorskip("tqdm")


@pytest.fixture(scope="module", autouse=True)
def examples_on_path():
    sys.path.insert(0, str(EXAMPLES))
    yield
    sys.path.remove(str(EXAMPLES))


def load(name):
    return importlib.import_module(name)


def run(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_quickstart_runs():
    proc = run("examples/quickstart.py")
    assert proc.returncode == 0, proc.stderr
    assert "gradient(f, 0.5, 2.0)" in proc.stdout
    assert "def make_f_pair" in proc.stdout


def test_fit_scipy_recovers_the_parameters():
    ex = load("fit_scipy")
    t, y = ex.make_data()
    theta0 = np.array([1.0, 0.1, 2.8, 0.0])
    ad.check_grads(ex.loss, theta0, t, y)
    result = ex.fit(t, y, theta0)
    assert result.success, result.message
    assert np.allclose(result.x, ex.TRUE, atol=0.05, rtol=0.03), result.x
    # the optimum of the noisy data: the loss is at the noise level (0.05² = 0.0025)
    assert result.fun < 0.003


def test_mlp_dict_learns_the_spirals():
    ex = load("mlp_dict")
    x, y = ex.spirals(n=20)
    params = ex.init()
    (g, _, _) = ad.gradient(ex.loss, params, x, y)
    assert set(g) == set(params)
    numerical = ad.numerical_gradient(ex.loss, params, x, y)[0]
    for k in params:
        assert np.allclose(g[k], numerical[k], rtol=1e-6, atol=1e-8), k
    params, history, accuracy = ex.train(steps=300, log_every=0)
    assert history[-1] < 0.5 * history[0]
    assert accuracy >= 0.9


def test_drag_fit_recovers_the_drag_coefficient():
    ex = load("drag_fit")
    xs_obs, ys_obs = ex.measurements()

    def misfit(drag, speed):
        return np.sum(ex.residuals(np.array([drag, speed]), xs_obs, ys_obs) ** 2)

    ad.check_grads(misfit, 0.01, 20.0)
    result = ex.fit()
    drag, speed = result.x
    assert result.success, result.message
    assert abs(drag - ex.TRUE_DRAG) < 0.05 * ex.TRUE_DRAG
    assert abs(speed - ex.TRUE_SPEED) < 0.01 * ex.TRUE_SPEED


def test_custom_rule_pytest_file_passes():
    proc = run("-m", "pytest", "-q", "-p", "no:cacheprovider", "examples/test_custom_rule.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6 passed" in proc.stdout


def test_progress_tqdm_drives_the_loss_down(capsys):
    ex = load("progress_tqdm")
    x, y, _ = ex.make_data(n=200)
    ad.check_grads(ex.loss, np.full(x.shape[1], 0.1), 0.2, x, y, 1e-4)
    w, b, w_true, losses = ex.fit(steps=150)
    assert "fitting" in capsys.readouterr().err          # the bar was drawn
    assert losses[-1] < 0.6 * losses[0]
    assert losses[-1] < losses[75]                        # still improving late in the run
    cosine = w @ w_true / (np.linalg.norm(w) * np.linalg.norm(w_true))
    assert cosine > 0.6
