"""The parse of a user's file outlives refresh() while its text is unchanged, and an
edited file is read again (even one whose stamp did not change)."""
import os
import sys

import gast

import adjoint_s2s as ad
from adjoint_s2s import source


def _module(tmp_path, name, text):
    import importlib

    path = tmp_path / f"{name}.py"
    path.write_text(text)
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name), path
    finally:
        sys.path.remove(str(tmp_path))


def test_refresh_keeps_the_parse_of_an_unchanged_file(tmp_path):
    m, _ = _module(tmp_path, "srccache_same", "def f(x):\n    return x * 2.0\n")
    try:
        assert ad.gradient(m.f, 1.0) == (2.0,)
        node = source.function_node(m.f)[0]
        ad.refresh()
        again = source.function_node(m.f)[0]
        assert again is node  # neither parsed nor converted again
        assert isinstance(again, gast.FunctionDef)
        assert ad.gradient(m.f, 1.0) == (2.0,)
    finally:
        sys.modules.pop("srccache_same", None)


def test_refresh_reads_an_edited_file_again_even_with_the_same_stamp(tmp_path):
    m, path = _module(tmp_path, "srccache_edit", "def f(x):\n    return x * 2.0\n")
    try:
        assert ad.gradient(m.f, 1.0) == (2.0,)
        st = os.stat(path)
        path.write_text("def f(x):\n    return x * 5.0\n")  # same size
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the same mtime
        ad.refresh()
        node = source.function_node(m.f)[0]
        assert "5.0" in _text(node)
        assert ad.gradient(m.f, 1.0) == (5.0,)  # transformed from the text on disk
    finally:
        sys.modules.pop("srccache_edit", None)


def test_only_the_function_asked_for_is_parsed_and_converted(tmp_path):
    body = "".join(f"def g{i}(x):\n    return x * {i}.0\n\n" for i in range(20))
    m, _ = _module(tmp_path, "srccache_many", body)
    try:
        source.forget_sources()
        node = source.function_node(m.g3)[0]
        assert node.name == "g3" and node.lineno == m.g3.__code__.co_firstlineno
        assert m.__file__ not in source._TREES  # the file was not parsed whole
        segments = [p for key, p in source._PARSED.items() if type(key) is tuple]
        assert len(segments) == 1 and len(segments[0].gast) == 1
        assert [d.name for d in segments[0].tree.body] == ["g3"]
        assert ad.gradient(m.g7, 1.0) == (7.0,)
    finally:
        sys.modules.pop("srccache_many", None)


SEGMENT_CASES = r'''
import functools


class Box:
    scale = 2.0

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def dec(x):
        return x * 3.0

    def method(self, x):
        s = """a string that
runs past a dedented line"""
        return x * self.scale + len(s) * 0.0

def cut_inside_brackets(x):
    y = (x *
2.0)
    return y

def continued(x):
    y = x * \
3.0
    return y
'''


def test_a_def_cut_where_a_string_or_bracket_runs_on_is_read_from_the_whole_file(tmp_path):
    m, _ = _module(tmp_path, "srccache_segments", SEGMENT_CASES)
    try:
        source.forget_sources()
        assert ad.gradient(m.Box().method, 1.5) == (2.0,)
        assert ad.gradient(m.cut_inside_brackets, 1.5) == (2.0,)
        assert ad.gradient(m.continued, 1.5) == (3.0,)
        assert ad.gradient(m.Box.dec.__wrapped__, 1.5) == (3.0,)
        node = source.function_node(m.Box.method)[0]
        assert node.name == "method" and node.lineno == m.Box.method.__code__.co_firstlineno
    finally:
        sys.modules.pop("srccache_segments", None)


def _text(node):
    import ast

    return ast.unparse(gast.gast_to_ast(node))


def test_lambdas_on_one_line_are_told_apart_by_their_argument_names(tmp_path):
    m, _ = _module(tmp_path, "srccache_lambdas", "f, g = (lambda x: x * 2.0), (lambda y: y * 3.0)\n")
    try:
        assert ad.gradient(m.f, 1.0) == (2.0,)
        assert ad.gradient(m.g, 1.0) == (3.0,)
    finally:
        sys.modules.pop("srccache_lambdas", None)
