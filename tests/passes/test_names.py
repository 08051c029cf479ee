"""naming.names_in: the names of a tree (of a context), as filtering gast.walk gives them;
the shortcut for `a op b` of atoms gives the same sets."""
import gast

from adjoint_s2s.naming import names_in


def _walked(node, ctx=None):
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and (ctx is None or isinstance(n.ctx, ctx))}


def _expr(text):
    return gast.parse(text).body[0].value


def test_names_in_agrees_with_a_walk():
    for text in ("a * b", "a * 2.0", "1.5 - b", "a + a", "2 ** 3", "math.sin(x) + y",
                 "-a", "f(a, b=c)[d]", "(a, b)", "lambda q: q * r"):
        node = _expr(text)
        for ctx in (None, gast.Load, gast.Store):
            assert names_in(node, ctx) == _walked(node, ctx), (text, ctx)


def test_names_in_of_an_operator_on_names_of_another_context():
    node = _expr("a * b")
    node.left.ctx = gast.Store()  # (not made by the parser: the shortcut still asks)
    assert names_in(node, gast.Load) == {"b"}
    assert names_in(node) == {"a", "b"}
