"""Tracebacks of adjoint_s2s's errors show the user's frames, not the package's.

An error of adjoint_s2s (``AdjointError`` and its kinds) already names the user's file and
line in its message; the frames of the transformer, the run time and the generated code
between the user's call and the raise are noise to the user (as JAX filters its internal
frames). When such an error is not caught, the traceback printed leaves those frames out
and says how many were hidden. ``ADJOINT_S2S_TRACEBACK=full`` prints everything (for
reports of bugs in adjoint_s2s). The exception object itself is not changed: code that
catches it, and pytest, see the whole traceback.
"""
import os
import sys
import types

from .errors import AdjointError

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _internal(filename):
    return filename.startswith("<adjoint_s2s") or os.path.abspath(filename).startswith(_PACKAGE)


def user_frames(tb):
    """A traceback of tb's user frames only (None if it has none), and how many it hid."""
    kept = []
    hidden = 0
    while tb is not None:
        if _internal(tb.tb_frame.f_code.co_filename):
            hidden += 1
        else:
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(kept):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out, hidden


def _ours(exc):
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, AdjointError):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _hook(previous):
    def adjoint_s2s_excepthook(kind, exc, tb):
        if os.environ.get("ADJOINT_S2S_TRACEBACK", "").lower() != "full" and _ours(exc):
            short, hidden = user_frames(tb)
            if short is not None and hidden:
                previous(kind, exc.with_traceback(short), short)
                sys.stderr.write(
                    f"({hidden} frame{'s' if hidden != 1 else ''} inside adjoint_s2s hidden; "
                    "ADJOINT_S2S_TRACEBACK=full shows them)\n"
                )
                return
        previous(kind, exc, tb)

    adjoint_s2s_excepthook.previous = previous
    return adjoint_s2s_excepthook


def _ipython_handler(shell, kind, exc, tb, tb_offset=None):
    if os.environ.get("ADJOINT_S2S_TRACEBACK", "").lower() != "full":
        short, hidden = user_frames(tb)
        if short is not None and hidden:
            tb = short
    shell.showtraceback((kind, exc, tb), tb_offset=tb_offset)


def install():
    """Filter the tracebacks of uncaught adjoint_s2s errors (done on import): at the
    plain prompt and in scripts through sys.excepthook, in IPython and Jupyter through
    the shell's handler for custom exceptions."""
    if getattr(sys.excepthook, "__name__", "") != "adjoint_s2s_excepthook":
        sys.excepthook = _hook(sys.excepthook)
    get_ipython = getattr(sys.modules.get("builtins"), "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    if shell is not None and hasattr(shell, "set_custom_exc"):
        shell.set_custom_exc((AdjointError,), _ipython_handler)
