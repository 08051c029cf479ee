"""The show-adjoint command line: valid, readable Python out; one-line errors."""
import ast
import os
import subprocess
import sys
import textwrap

import pytest

MODEL = textwrap.dedent(
    """
    import math

    def helper(x):
        return math.exp(-x * x)

    def f(x, y):
        z = math.sin(x) * y
        return z + helper(x)

    class Model:
        def loss(self, x):
            return x * x

    NOT_A_FUNCTION = 3
    """
)


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def run(*args, cwd):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.getcwd() + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "adjoint_s2s", *args], cwd=cwd, capture_output=True, text=True, env=env
    )


def test_module_and_path_targets_print_the_same_valid_python(workdir):
    a = run("show-adjoint", "model:f", cwd=workdir)
    b = run("show-adjoint", str(workdir / "model.py") + ":f", cwd=workdir)
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    tree = ast.parse(a.stdout)
    names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert {"f_pair", "f_pullback"} <= names
    assert "# z = math.sin(x) * y" in a.stdout  # a comment names each primal statement
    assert "b_x" in a.stdout and "b_y" in a.stdout
    body = lambda s: s.split("\n", 1)[1]  # noqa: E731 - the first line names the file
    assert body(a.stdout) == body(b.stdout)


def test_all_prints_the_callees_too(workdir):
    out = run("show-adjoint", "model:f", "--all", cwd=workdir)
    assert out.returncode == 0, out.stderr
    assert "def helper_pair" in out.stdout and "def f_pair" in out.stdout
    ast.parse(out.stdout)


def test_types_option_changes_the_specialisation(workdir):
    real = run("show-adjoint", "model:helper", cwd=workdir).stdout
    cplx = run("show-adjoint", "model:helper", "--types", "complex", cwd=workdir)
    assert cplx.returncode == 0, cplx.stderr
    assert real != cplx.stdout


def test_dotted_method_target(workdir):
    out = run("show-adjoint", "model:Model.loss", "--types", "any,float", cwd=workdir)
    assert out.returncode == 0, out.stderr
    assert "def loss_pair(self, x)" in out.stdout


@pytest.mark.parametrize(
    "target, words",
    [
        ("model:nope", ["nope"]),
        ("nomodule:f", ["nomodule"]),
        ("model:NOT_A_FUNCTION", ["NOT_A_FUNCTION", "not a Python function"]),
        ("model", ["module:function"]),
        ("missing/file.py:f", ["missing/file.py"]),
    ],
)
def test_bad_targets_fail_with_one_line_and_no_traceback(workdir, target, words):
    out = run("show-adjoint", target, cwd=workdir)
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    for w in words:
        assert w in out.stderr


def test_bad_type_name(workdir):
    out = run("show-adjoint", "model:f", "--types", "quaternion", cwd=workdir)
    assert out.returncode != 0 and "quaternion" in out.stderr and "Traceback" not in out.stderr


def test_console_script_is_installed():
    exe = os.path.join(os.path.dirname(sys.executable), "adjoint-s2s")
    if not os.path.exists(exe):
        pytest.skip("the package is not installed in this interpreter's environment")
    out = subprocess.run([exe, "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "show-adjoint" in out.stdout
