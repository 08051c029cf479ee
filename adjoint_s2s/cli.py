"""The command line: ``adjoint-s2s show-adjoint module:function``.

Prints the generated primal-plus-pullback pair as Python source. TARGET is
``module:function`` (imported with the current directory on the path) or
``path/to/file.py:function``; ``function`` may be dotted (``Class.method``).
``--types`` says what the arguments are (default: float for each); ``--all`` also prints
the pairs of the Python functions it calls.
"""
import argparse
import importlib
import importlib.util
import os
import sys
import types

from .errors import AdjointError

_TYPE_KINDS = {"float": "real", "int": "real", "complex": "complex", "array": "array", "any": "other"}


class TargetError(Exception):
    pass


def load_target(target):
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
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise TargetError(f"{mod_part} has no function {attr!r}")
        obj = getattr(obj, part)
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    if not isinstance(obj, types.FunctionType):
        raise TargetError(f"{attr!r} in {mod_part} is a {type(obj).__name__}, not a Python function")
    return obj


def show(fn, kinds, all_=False, out=sys.stdout, seen=None):
    from . import emit

    seen = set() if seen is None else seen
    if fn.__code__ in seen:
        return
    seen.add(fn.__code__)
    entry = emit.source_of(fn, kinds)
    out.write(entry.source)
    if all_:
        for callee in entry.callees:
            out.write("\n\n")
            n = callee.__code__.co_argcount
            show(callee, ("other",) * n, True, out, seen)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="adjoint-s2s", description="Reverse-mode AD by source-to-source transformation."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("show-adjoint", help="print the generated pair of a function")
    p.add_argument("target", help="module:function or path/to/file.py:function")
    p.add_argument("--all", action="store_true", help="also print the pairs of its callees")
    p.add_argument(
        "--types",
        default=None,
        help="comma-separated argument types: float, int, complex, array, any (default float)",
    )
    args = parser.parse_args(argv)
    try:
        fn = load_target(args.target)
        n = fn.__code__.co_argcount
        if args.types:
            names = [t.strip() for t in args.types.split(",")]
            bad = [t for t in names if t not in _TYPE_KINDS]
            if bad:
                raise TargetError(f"unknown type {bad[0]!r}; use one of {', '.join(_TYPE_KINDS)}")
            kinds = tuple(_TYPE_KINDS[t] for t in names)
        else:
            kinds = ("real",) * n
        show(fn, kinds, args.all)
    except (TargetError, AdjointError) as exc:
        sys.stderr.write(f"adjoint-s2s: {exc}\n")
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
