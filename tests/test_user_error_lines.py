"""A user's exception (or a math error of their arithmetic) raised by the code adjoint_s2s
generated from their function carries a note naming their file, line and statement: the
traceback's last frame is generated code, whose name and line are not the user's."""
import math
import os
import subprocess
import sys
import textwrap

import pytest

import adjoint_s2s as ad

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))


class TooBig(Exception):
    pass


def _check(v):
    if v > 0.5:
        raise TooBig(f"too big {v}")
    return v * v


def checked(x):
    y = x * 2.0
    return _check(y) + x


def logs(x):
    y = x * 2.0
    z = math.log(y - 10.0)
    return z * x


def _line_of(fn, text):
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _notes(exc):
    return [n for n in getattr(exc, "__notes__", ()) if n.startswith("adjoint_s2s:")]


@pytest.mark.parametrize("call", [
    lambda: ad.gradient(checked, 0.4),
    lambda: ad.grad(checked)(0.4),
    lambda: ad.value_and_grad(checked)(0.4),
])
def test_a_users_exception_names_the_raise_statement(call):
    assert ad.gradient(checked, 0.2) == pytest.approx((2.6,))  # (cached: the fast paths)
    for _ in range(2):  # the first call transforms; the second runs the cached forms
        with pytest.raises(TooBig) as info:
            call()
        (note,) = _notes(info.value)
        assert f"{HERE}, line {_line_of(_check, 'raise TooBig')}" in note
        assert "`raise TooBig(f'too big {v}')` in _check" in note


def test_a_math_error_names_the_users_statement():
    with pytest.raises(ValueError, match="math domain error") as info:
        ad.gradient(logs, 0.3)
    (note,) = _notes(info.value)
    assert f"`z = math.log(y - 10.0)` in logs ({HERE}, line {_line_of(logs, 'math.log')})" in note


@ad.non_differentiable
def _plain_check(v):
    if v > 0.5:
        raise TooBig("raised by the user's own frame")
    return 0.0


def runs_plain_code(x):
    return _plain_check(x) + x


def test_no_note_when_the_users_own_frame_raised():
    # the traceback already ends in the user's file, at the raise
    with pytest.raises(TooBig) as info:
        ad.gradient(runs_plain_code, 0.7)
    assert _notes(info.value) == []


def test_an_uncaught_exception_of_a_script_prints_the_note(tmp_path):
    path = tmp_path / "raises.py"
    path.write_text(textwrap.dedent('''
        import adjoint_s2s as ad

        def f(x):
            y = x * 3.0
            if y > 1.0:
                raise ValueError("y is too large")
            return y

        y, back = ad.pullback(f, 0.5)
    '''))
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 1 and "ValueError: y is too large" in out.stderr
    assert f"adjoint_s2s: raised by `raise ValueError('y is too large')` in f ({path}, line 7)" in out.stderr
