"""adjoint_s2s's ast -> gast converter (togast.py) against gast's own, node for node,
locations included, over real sources: the project's modules and tests, and modules of
the standard library that use most of the syntax."""
import ast
import glob
import inspect
import os

import gast
import pytest

from adjoint_s2s import togast

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PROJECT = sorted(glob.glob(os.path.join(ROOT, "adjoint_s2s", "**", "*.py"), recursive=True)
                  + glob.glob(os.path.join(ROOT, "tests", "*.py"))
                  + glob.glob(os.path.join(ROOT, "bench", "*.py")))
_STDLIB = ["argparse", "ast", "asyncio.tasks", "dataclasses", "enum", "functools", "inspect",
           "json.decoder", "pathlib", "re._parser", "statistics", "typing", "unittest.mock",
           "contextlib", "string"]


def _same(tree):
    want = gast.dump(gast.ast_to_gast(tree), include_attributes=True)
    got = gast.dump(togast.ast_to_gast(tree), include_attributes=True)
    assert got == want


@pytest.mark.parametrize("path", _PROJECT, ids=lambda p: os.path.relpath(p, ROOT))
def test_project_sources_convert_as_gast_does(path):
    with open(path, encoding="utf-8") as f:
        _same(ast.parse(f.read()))


@pytest.mark.parametrize("name", _STDLIB)
def test_standard_library_converts_as_gast_does(name):
    module = pytest.importorskip(name)
    _same(ast.parse(inspect.getsource(module)))


def test_function_nodes_and_odd_syntax():
    src = (
        "async def f(x, /, y=1, *a, k: int = 2, **kw) -> float:\n"
        "    global g\n"
        "    y: float = x[1:2, ::3] + g(*a, k=k, **kw).t @ x\n"
        "    del y\n"
        "    async with x as (p, q), x:\n"
        "        await p\n"
        "    async for i, (j, *_) in x:\n"
        "        yield lambda q=1, *r: q\n"
        "    try:\n"
        "        pass\n"
        "    except* ValueError as e:\n"
        "        raise e from None\n"
        "    match x:\n"
        "        case [1, *rest] | {'k': _, **kw2} if rest:\n"
        "            pass\n"
        "        case Point(x=0) as pt:\n"
        "            pass\n"
        "    return [z for z in {x: 1} if z], {w: w for w in ()}, (x := 2), f'{x!r:>{y}}'\n"
        "class C(B, metaclass=M):\n"
        "    @property\n"
        "    def v(self): return ...\n"
    )
    tree = ast.parse(src)
    _same(tree)
    for node in ast.walk(tree):  # and node by node, as source.py converts one function
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            _same(node)


def test_each_conversion_makes_new_nodes():
    tree = ast.parse("def f(x):\n    return x + x\n").body[0]
    a, b = togast.ast_to_gast(tree), togast.ast_to_gast(tree)
    assert a is not b and a.body[0] is not b.body[0]
    left, right = a.body[0].value.left, a.body[0].value.right
    assert left is not right and left.ctx is not right.ctx  # as gast: a Load per name


def _index_by_walking(tree):
    """The (name, line) -> function nodes table by a walk of every node (the reference)."""
    table = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda):
            table.setdefault(("<lambda>", node.lineno), []).append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            table.setdefault((node.name, start), []).append(node)
            if start != node.lineno:
                table.setdefault((node.name, node.lineno), []).append(node)
    return table


def test_function_index_finds_every_def_and_lambda():
    # source.py finds defs through the statement lists alone and lambdas by a full walk
    # made only when one is asked for: together, the table a walk of every node makes
    from adjoint_s2s import source

    texts = [open(p, encoding="utf-8").read() for p in _PROJECT]
    texts += [inspect.getsource(pytest.importorskip(n)) for n in _STDLIB]
    texts.append(
        "@d(lambda: 0)\n"
        "class A:\n"
        "    def f(self, g=lambda y: y):\n"
        "        try:\n"
        "            def h(): pass\n"
        "        except E:\n"
        "            async def k(): pass\n"
        "        else:\n"
        "            match v:\n"
        "                case 1:\n"
        "                    @w\n"
        "                    def m(): return [lambda: 1 for _ in ()]\n"
        "        finally:\n"
        "            with c:\n"
        "                def n(): pass\n"
    )
    for text in texts:
        tree = ast.parse(text)
        both = dict(source._build_index(tree))
        lambdas = source._build_index(tree, lambdas=True)
        assert not set(both) & set(lambdas)
        both.update(lambdas)
        assert both == _index_by_walking(tree)


def _same_copy(tree):
    """convert_noting against converting with gast, then source.fresh_copy_noting: the same
    tree (locations and each node's field order included), names and flag, for every
    function, lambda and class node of tree; the plain tree left as it was."""
    from adjoint_s2s import source
    from adjoint_s2s.passes import check

    before = ast.dump(tree, include_attributes=True)
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        got = togast.convert_noting(node, check.REJECTED)
        assert got is not None  # (the installed gast converts as togast's copy does)
        want = source.fresh_copy_noting(gast.ast_to_gast(node), check.REJECTED)
        assert gast.dump(got[0], include_attributes=True) == gast.dump(want[0], include_attributes=True)
        assert got[1:] == want[1:]
        for a, b in zip(gast.walk(got[0]), gast.walk(want[0])):
            assert type(a) is type(b) and list(a.__dict__) == list(b.__dict__)
    assert ast.dump(tree, include_attributes=True) == before


@pytest.mark.parametrize("path", _PROJECT[::4], ids=lambda p: os.path.relpath(p, ROOT))
def test_copies_convert_as_gast_and_fresh_copy_do(path):
    with open(path, encoding="utf-8") as f:
        _same_copy(ast.parse(f.read()))


def test_copies_of_odd_syntax_and_the_standard_library():
    for name in _STDLIB:
        _same_copy(ast.parse(inspect.getsource(pytest.importorskip(name))))
    _same_copy(ast.parse(
        "async def f(x, /, y=1, *a, k: int = 2, **kw) -> float:\n"
        "    global g\n    del y\n"
        "    try:\n        pass\n    except* ValueError as e:\n        raise e from None\n"
        "    try:\n        pass\n    except (A, B):\n        pass\n"
        "    match x:\n        case [1, *rest] | {'k': _, **kw2} if rest:\n            pass\n"
        "    return [z for z in {x: 1} if z], (x := 2), f'{x!r:>{y}}', lambda q=1, *r: q\n"
        "class C(B, metaclass=M):\n    def v(self): return ...\n"))


def test_copies_are_private():
    # each conversion makes new nodes, lists and contexts: a pass rewriting one copy
    # touches neither the plain tree nor another copy
    tree = ast.parse("def f(x):\n    global g\n    return x + x\n").body[0]
    a, b = togast.convert_noting(tree, frozenset())[0], togast.convert_noting(tree, frozenset())[0]
    assert a is not b and a.body[1] is not b.body[1] and a.body[0].names is not tree.body[0].names
    left, right = a.body[1].value.left, a.body[1].value.right
    assert left is not right and left.ctx is not right.ctx and left.ctx is not b.body[1].value.left.ctx


def test_gast_way_for_a_special_case_not_copied():
    # a class gast converts by a special case togast does not write out goes gast's way,
    # noting the same names and flags (here forced for a whole function)
    from adjoint_s2s.passes import check

    tree = ast.parse("def f(x, *a):\n    try:\n        del x\n    except E as e:\n        y = e\n").body[0]
    table = togast._Table(check.REJECTED)
    names, seen = set(), []
    got = togast._other(tree, table, names, seen)
    want = togast.convert_noting(tree, check.REJECTED)
    assert gast.dump(got, include_attributes=True) == gast.dump(want[0], include_attributes=True)
    assert names == want[1] == {"x", "a", "e", "E", "y"} and frozenset(seen) == want[2] == {gast.Try, gast.Delete}


def test_the_classes_noted_are_those_in_the_tree():
    # (check.NOTED: what check rejects, and the generator expressions lazy.py looks for:
    # a function with none of them skips both walks)
    from adjoint_s2s.passes import check

    tree = ast.parse("def f(x):\n    return sum(v * x for v in (1.0, 2.0))\n").body[0]
    assert togast.convert_noting(tree, check.NOTED)[2] == {gast.GeneratorExp}
    assert togast.convert_noting(tree, check.REJECTED)[2] == frozenset()
    tree = ast.parse("def f(x):\n    return x * x\n").body[0]
    assert togast.convert_noting(tree, check.NOTED)[2] == frozenset()
