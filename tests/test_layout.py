"""The package's layout rule (issue 13, "One pass per file"), checked on the source:

* no module over 600 lines, except ``passes/anf.py`` and ``testing.py``;
* no function (a method, a nested function) over 60 lines in ``passes/`` and
  ``runtime/``, counted from its ``def`` line to its last line;
* at most 3 imports inside functions in the whole package, each with a ``#`` comment
  on its line saying why it is not at the top of the module (an import statement in a
  function body hides a dependency from the module-level import order; a module named
  at run time, ``importlib.import_module(name)``, is not such an import);
* ``rules/`` imports nothing from ``passes/`` or ``emit`` (the rules are data the
  transformer reads, not the other way round; the run time's own rules, which need
  ``emit``, live in ``runtime/rules_*.py``).

One test per module for the sizes, so a failure names the file; the messages name the
file, the function and its line, and the limit.
"""
import ast
import io
import os
import tokenize

import pytest

import adjoint_s2s

PACKAGE = os.path.dirname(os.path.abspath(adjoint_s2s.__file__))

MAX_MODULE_LINES = 600
LONG_MODULES = {"passes/anf.py", "testing.py"}  # the two allowed over MAX_MODULE_LINES
MAX_FUNCTION_LINES = 60
FUNCTION_DIRS = ("passes/", "runtime/")  # where MAX_FUNCTION_LINES holds
MAX_LOCAL_IMPORTS = 3


def _modules():
    out = []
    for root, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                out.append(os.path.relpath(path, PACKAGE).replace(os.sep, "/"))
    return out


MODULES = _modules()


def _source(rel):
    with open(os.path.join(PACKAGE, rel), encoding="utf-8") as fh:
        return fh.read()


def _tree(rel):
    return ast.parse(_source(rel), filename=rel)


def _functions(tree):
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _qualified_names(tree):
    """id(function node) -> Class.method / outer.<locals>.inner, for the messages."""
    names = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names[id(child)] = prefix + child.name
                visit(child, prefix + child.name + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return names


def _local_imports_in(rel, src):
    """[(module, line, qualified function, the import's text, has a comment)] for every
    import statement inside a function body of one module."""
    tree = ast.parse(src, filename=rel)
    names = _qualified_names(tree)
    comments = {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(src).readline)
                if tok.type == tokenize.COMMENT}
    lines = src.splitlines()
    parent = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        fn = parent.get(id(node))
        while fn is not None and not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fn = parent.get(id(fn))
        if fn is None:
            continue  # a module-level import (in a class body or an `if` too)
        commented = any(ln in comments for ln in range(node.lineno, node.end_lineno + 1))
        found.append((rel, node.lineno, names[id(fn)], lines[node.lineno - 1].strip(), commented))
    return sorted(found, key=lambda hit: hit[1])


def _local_imports():
    return [hit for rel in MODULES for hit in _local_imports_in(rel, _source(rel))]


def _imported_modules(rel, tree):
    """The absolute names of the modules a module imports (anywhere in it), with
    ``from X import Y`` giving both X and X.Y (Y may be a submodule)."""
    package = ["adjoint_s2s"] + rel.split("/")[:-1]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            out.add(mod)
            out |= {f"{mod}.{a.name}" for a in node.names}
    return out


@pytest.mark.parametrize("rel", MODULES)
def test_module_size(rel):
    n = len(_source(rel).splitlines())
    if rel in LONG_MODULES:
        return
    assert n <= MAX_MODULE_LINES, (
        f"adjoint_s2s/{rel} has {n} lines, over the limit of {MAX_MODULE_LINES} (issue 13's "
        f"layout rule; only {', '.join(sorted(LONG_MODULES))} may be longer): split it along "
        f"a real seam, one concern per module"
    )


@pytest.mark.parametrize("rel", [m for m in MODULES if m.startswith(FUNCTION_DIRS)])
def test_function_length(rel):
    tree = _tree(rel)
    names = _qualified_names(tree)
    long = [
        f"adjoint_s2s/{rel}:{fn.lineno} {names[id(fn)]} has {fn.end_lineno - fn.lineno + 1} lines"
        for fn in _functions(tree)
        if fn.end_lineno - fn.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, (
        f"functions over the limit of {MAX_FUNCTION_LINES} lines in passes/ and runtime/ "
        f"(issue 13's layout rule): " + "; ".join(long)
    )


def test_function_local_imports_are_few():
    found = _local_imports()
    listing = "; ".join(f"adjoint_s2s/{rel}:{line} in {fn}: {text}" for rel, line, fn, text, _ in found)
    assert len(found) <= MAX_LOCAL_IMPORTS, (
        f"{len(found)} imports inside functions, over the limit of {MAX_LOCAL_IMPORTS} "
        f"(issue 13's layout rule; import at the top of the module): {listing}"
    )


def test_function_local_imports_say_why():
    bare = [f"adjoint_s2s/{rel}:{line} in {fn}: {text}"
            for rel, line, fn, text, commented in _local_imports() if not commented]
    assert not bare, (
        "imports inside functions without a `#` comment on their line saying why they are "
        "not at the top of the module (issue 13's layout rule): " + "; ".join(bare)
    )


@pytest.mark.parametrize("rel", [m for m in MODULES if m.startswith("rules/")])
def test_rules_import_neither_passes_nor_emit(rel):
    bad = sorted(
        m for m in _imported_modules(rel, _tree(rel))
        if m in ("adjoint_s2s.passes", "adjoint_s2s.emit")
        or m.startswith(("adjoint_s2s.passes.", "adjoint_s2s.emit."))
    )
    assert not bad, (
        f"adjoint_s2s/{rel} imports {', '.join(bad)}: rules/ may import nothing from passes/ "
        f"or emit (issue 13's layout rule; a rule that needs emit belongs in runtime/rules_*.py)"
    )


# ----- the checks themselves -------------------------------------------------------------


def test_the_checks_see_what_they_should():
    """The walkers find a long function, a nested import with and without a comment, and
    a relative import of passes/ from a rules module (so the tests above can fail)."""
    src = (
        "def outer():\n"
        "    import os  # why\n"
        "    def inner():\n"
        "        from . import x\n"
        + "".join(f"        y{i} = {i}\n" for i in range(60))
        + "    return inner\n"
    )
    tree = ast.parse(src)
    names = _qualified_names(tree)
    lengths = {names[id(f)]: f.end_lineno - f.lineno + 1 for f in _functions(tree)}
    assert lengths == {"outer": 65, "outer.<locals>.inner": 62}
    found = [(fn, commented) for _, _, fn, _, commented in _local_imports_in("m.py", src)]
    assert found == [("outer", True), ("outer.<locals>.inner", False)]
    imports = _imported_modules(
        "rules/numpy/x.py", ast.parse("from ...passes import anf\nfrom ... import emit\n"))
    assert {"adjoint_s2s.passes", "adjoint_s2s.passes.anf", "adjoint_s2s.emit"} <= imports
    imports = _imported_modules("rules/__init__.py", ast.parse("from ..passes import anf\n"))
    assert "adjoint_s2s.passes.anf" in imports
