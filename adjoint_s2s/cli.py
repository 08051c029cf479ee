"""The command line: ``adjoint-s2s show-adjoint module:function``.

Prints the generated primal-plus-pullback pair as Python source. TARGET is
``module:function`` (imported with the current directory on the path) or
``path/to/file.py:function``; ``function`` may be dotted (``Class.method``).
``--types`` says what the arguments are (default: float for each; one per argument, a
method's ``self`` left out: it is an instance of its class); ``--all`` also prints the
pairs of the Python functions it calls; ``--html out.html`` also writes a side-by-side
page, the user's lines beside the generated lines they became; ``--fused`` prints what a
cached ``gradient`` call runs: the pair and its pullback fused into one function
(``fuse.py``), or the pair under a first comment saying why it has no fused form.
"""
import argparse
import importlib
import importlib.util
import os
import sys
import types

from . import fuse
from ._version import __version__
from .errors import AdjointError
from .sidebyside import show, write_html

_TYPE_KINDS = {"float": "real", "int": "real", "complex": "complex", "array": "array", "any": "other"}


class TargetError(Exception):
    pass


def load_target(target):
    """The function named by target, and the class it was found in (for a method)."""
    return _load(target)[0]


def _load(target):
    if ":" not in target:
        raise TargetError(f"target {target!r} must look like module:function or path/file.py:function")
    mod_part, _, attr = target.rpartition(":")
    local = os.path.join(os.getcwd(), mod_part.replace(".", os.sep) + ".py")
    if not (mod_part.endswith(".py") or os.sep in mod_part) and os.path.exists(local):
        mod_part = local  # a file here wins over an installed module of the same name
    if mod_part.endswith(".py") or os.sep in mod_part:
        path = os.path.abspath(mod_part)
        if not os.path.exists(path):
            raise TargetError(f"no file {mod_part}")
        name = os.path.splitext(os.path.basename(path))[0]
        sys.path.insert(0, os.path.dirname(path))
        if name in sys.modules and getattr(sys.modules[name], "__file__", None) != path:
            name = f"adjoint_s2s_target_{name}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise TargetError(f"importing {mod_part} failed: {type(exc).__name__}: {exc}") from None
    else:
        sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(mod_part)
        except ImportError as exc:
            raise TargetError(f"cannot import module {mod_part!r}: {exc}") from None
        except Exception as exc:
            raise TargetError(f"importing {mod_part} failed: {type(exc).__name__}: {exc}") from None
    obj = owner = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise TargetError(f"{mod_part} has no function {attr!r}")
        owner, obj = obj, getattr(obj, part)
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if not isinstance(obj, types.FunctionType):
        raise TargetError(f"{attr!r} in {mod_part} is a {type(obj).__name__}, not a Python function")
    is_method = isinstance(owner, type) and not isinstance(owner.__dict__.get(obj.__name__), staticmethod)
    return obj, owner if is_method else None


def argument_kinds(fn, types_text, owner=None):
    """The kinds of fn's positional arguments from --types (a method's self: an object of
    its class), and a comment line naming them."""
    code = fn.__code__
    params = list(code.co_varnames[: code.co_argcount])
    given = params[1:] if owner is not None else params
    if types_text:
        names = [t.strip() for t in types_text.split(",")]
        bad = [t for t in names if t not in _TYPE_KINDS]
        if bad:
            raise TargetError(f"unknown type {bad[0]!r}; use one of {', '.join(_TYPE_KINDS)}")
        if owner is not None and len(names) == len(params):
            names = names[1:]  # self's type given too (`--types any,float`): it is its class
        if len(names) != len(given):
            what = f"{fn.__qualname__}({', '.join(given)})"
            raise TargetError(
                f"--types lists {len(names)} type{'s' if len(names) != 1 else ''} for {what}, "
                f"which takes {len(given)}{' besides self' if owner is not None else ''}"
            )
    else:
        names = ["float"] * len(given)
    kinds = tuple(_TYPE_KINDS[t] for t in names)
    shown = [f"{p}: {t}" for p, t in zip(given, names)]
    if owner is not None:
        kinds = ("other",) + kinds
        shown = [f"{params[0]}: {owner.__name__}"] + shown
    return kinds, f"# {fn.__qualname__}({', '.join(shown)})\n"


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="adjoint-s2s", description="Reverse-mode AD by source-to-source transformation."
    )
    parser.add_argument("--version", action="version", version=f"adjoint-s2s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("show-adjoint", help="print the generated pair of a function")
    p.add_argument("target", help="module:function or path/to/file.py:function")
    p.add_argument("--all", action="store_true", help="also print the pairs of its callees")
    p.add_argument(
        "--types",
        default=None,
        help="comma-separated argument types, one per argument (a method's self left out): "
        "float, int, complex, array, any (default float)",
    )
    p.add_argument("--fused", action="store_true",
                   help="print what a cached gradient() call runs: the pair and its pullback "
                   "fused into one function, or why there is none")
    p.add_argument("--html", metavar="OUT", default=None,
                   help="also write a side-by-side page: your lines beside the generated ones")
    args = parser.parse_args(argv)
    try:
        fn, owner = _load(args.target)
        kinds, heading = argument_kinds(fn, args.types, owner)
        if owner is not None:
            sys.stdout.write(heading)
        if args.fused:
            floats = owner is None and all(t.strip() == "float" for t in (args.types or "float").split(","))
            sys.stdout.write(fuse.fused_text(fn, kinds, floats))
        else:
            show(fn, kinds, args.all)
        if args.html:
            write_html(fn, kinds, args.html)
    except (TargetError, AdjointError) as exc:
        sys.stderr.write(f"adjoint-s2s: {exc}\n")
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
