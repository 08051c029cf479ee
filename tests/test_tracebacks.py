"""An uncaught adjoint_s2s error prints the user's frames only (ADJOINT_S2S_TRACEBACK=full:
all of them); a caught one keeps its whole traceback."""
import os
import subprocess
import sys
import textwrap

import pytest

import adjoint_s2s as ad
from adjoint_s2s import tracebacks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = textwrap.dedent('''
    import adjoint_s2s as ad

    def f(x):
        try:
            y = x * 2
        except ValueError:
            y = x
        return y

    ad.gradient(f, 1.0)
''')


def _run(tmp_path, **env):
    path = tmp_path / "uses_try.py"
    path.write_text(SCRIPT)
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=ROOT, **env))


def test_an_uncaught_error_shows_only_the_users_frames(tmp_path):
    out = _run(tmp_path)
    assert out.returncode == 1
    frames = [line for line in out.stderr.splitlines() if line.lstrip().startswith("File ")]
    assert frames and all("uses_try.py" in line for line in frames)
    assert "UnsupportedSyntaxError: a try statement is not supported" in out.stderr
    assert "inside adjoint_s2s hidden; ADJOINT_S2S_TRACEBACK=full shows them" in out.stderr


def test_the_full_traceback_on_request(tmp_path):
    out = _run(tmp_path, ADJOINT_S2S_TRACEBACK="full")
    assert os.path.join("adjoint_s2s", "api.py") in out.stderr and "hidden" not in out.stderr


def test_a_caught_error_keeps_its_traceback():
    def f(x):
        try:
            return x
        finally:
            pass

    with pytest.raises(ad.UnsupportedSyntaxError) as info:
        ad.gradient(f, 1.0)
    files = [f.tb_frame.f_code.co_filename for f in _walk(info.value.__traceback__)]
    assert any(tracebacks._internal(p) for p in files)  # nothing was cut from the object
    # (its message names the place: no note of the user's line, as a user's error gets)
    assert not any(str(n).startswith("adjoint_s2s:") for n in getattr(info.value, "__notes__", ()))
    short, hidden = tracebacks.user_frames(info.value.__traceback__)
    assert hidden > 0 and short is not None
    assert not any(tracebacks._internal(f.tb_frame.f_code.co_filename) for f in _walk(short))


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next
