"""The names a generated line mentions: the text utility the clean-up, the tape planning
and the final assembly share (``cleanup.py`` re-exports it).

``tokens(line)`` gives the names of a line in order, outside strings, comments and
attributes, memoised per line: the clean-ups ask about the same lines many times within
a transform. A rewrite that makes a line from lines whose tokens are known (a name
renamed, a temporary folded in, parentheses dropped) records the new line's tokens with
``known_tokens`` instead of having it tokenised again.
"""
import collections
import itertools
import re

_TOKEN = re.compile(r"""#.*|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|(?<![\w.])([A-Za-z_]\w*)""")
# (?<![\w.])[A-Za-z_]\w* with the look behind after the first letter: the same names,
# and re finds where a name may start by its first character (about a fifth faster)
_NAME = re.compile(r"[A-Za-z_](?<![\w.][A-Za-z_])\w*")


class _TokenTable(dict):
    """line -> tokens(line): a bounded memo (emptied when full, by refresh(), and by emit
    when a transform leaves it larger than emit._TOKENS_KEPT). A line met again is a
    dict lookup in C; a new one is tokenised by __missing__."""

    def __missing__(self, line):
        if "#" in line or "'" in line or '"' in line:
            if line.lstrip().startswith("#"):
                got = ()  # a comment line
            else:
                got = tuple(filter(None, _TOKEN.findall(line)))  # a comment or string: no name
        else:
            got = tuple(_NAME.findall(line))  # (what _TOKEN finds where only names can match)
        if len(self) >= _TOKENS_MAX:
            self.clear()
        self[line] = got
        return got

    def cache_clear(self):
        self.clear()


_TOKENS = _TokenTable()
_TOKENS_MAX = 32768  # (a 640-line function's transform meets about 8,300 lines)

# tokens(line): the names a generated line mentions, in order (memoised: the folding
# below asks about the same lines many times)
tokens = _TOKENS.__getitem__


def known_tokens(line, toks):
    """Record toks as tokens(line) for a line a rewrite made from lines whose tokens it
    knows (a name replaced by a name or by a parenthesised expression, parentheses
    dropped): what tokenising it would give, without tokenising it. Only for a line
    with no comment and no string (there tokens() is one pattern's names), and only
    where the rewrite keeps every other name whole: its replacements stand where a
    whole name stood, and a parenthesis is no part of a name."""
    if "#" in line or "'" in line or '"' in line or len(_TOKENS) >= _TOKENS_MAX:
        return
    _TOKENS[line] = toks


def token_counts(lines):
    """name -> how many times the lines (comments aside: tokens() gives a comment line
    no name) mention it (counted in C)."""
    return collections.Counter(itertools.chain.from_iterable(map(tokens, lines)))


def _plain_text(line):
    return "#" not in line and "'" not in line and '"' not in line


def names_read(lines):
    """The names generated lines mention (outside strings, comments and attributes).

    A superset of the names they read (assignment targets count too), which is all the
    callers need; a tokenising regex is much cheaper than parsing. (The ``pass`` that
    fix_empty_blocks puts in an empty block reads no name: the lines are taken as they are.)
    """
    return set(itertools.chain.from_iterable(map(tokens, lines)))


# the run-time helpers of generated pullbacks that read or change the gradients kept by
# object (runtime/fields.py), and calls of a name (a pullback closure, which may too)
_STORE_CALL = re.compile(
    r"_rt\.(?:take_items|put_items|setattr_grad|hand_over|forget_fields|take_field_grad"
    r"|field_grad_if|take_fields|add_field_grad|move_grad|with_fields|seed_result"
    r"|drop_callee_fields|output_tangent)\(|(?<![\w.])([A-Za-z_]\w*)\(")
_PLAIN_BUILTINS = frozenset({"len", "tuple", "float", "int", "complex", "type", "isinstance",
                             "range", "list", "abs", "min", "max", "sum", "bool", "dict", "zip",
                             "enumerate", "reversed", "iter", "next"})


def _touches_store(line):
    """Whether a pullback line may read or change the gradients kept by object."""
    if "(" not in line or line.lstrip().startswith("#"):
        return False
    for m in _STORE_CALL.finditer(line):
        if m.group(1) is None or m.group(1) not in _PLAIN_BUILTINS:
            return True
    return False
