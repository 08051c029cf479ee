"""Projections already done: an ``unbroadcast`` onto the value its adjoint was projected onto.

``_rt.unbroadcast(g, like)`` projects an adjoint onto the space of a primal value; a value
saved for its shape alone is a stand-in (``_rt.shape_like``), one object for every array
of the same shape and dtype. Through a chain of additions each adjoint is projected again
onto the operand's stand-in, which is most often the very stand-in it was projected onto
the line before (``b_add = _rt.unbroadcast(b_add_1, add)`` with ``add`` and ``add_1``
both of one shape). Projecting twice onto one object gives what projecting once gave
(``unbroadcast(unbroadcast(g, y), y)`` is ``unbroadcast(g, y)`` for every g and y), so
this pass turns the call into an identity test where it can prove what the adjoint was
last projected onto::

    b_add = _rt.unbroadcast(b_add_1, add)
    ->  b_add = b_add_1 if add is add_1 else _rt.unbroadcast(b_add_1, add)

when ``b_add_1`` is, on every path reaching the line, either None (``unbroadcast(None,
y)`` is None) or the result of ``b_add_1 = _rt.unbroadcast(..., add_1)`` with neither
name bound again since. The test decides per call: stand-ins of different shapes or
dtypes, or values that are no stand-ins, take the call as before.

It runs on the pullback's finished lines (after the clean-up pass, before the pair is
assembled) and follows them as text: statements one a line, blocks by indentation.
Only ``if``/``elif``/``else`` join what their branches know; a loop's body starts from
nothing and nothing is known after it; any other compound statement, a line that goes
on to the next one, ``:=`` or a nested ``def`` leaves the lines as they are. Only names
the pullback reads for their shape alone (the stand-ins) are tested, so the same names
stay stand-ins (``cleanup.blank_likes`` blanks the test too).
"""
import re

from .cleanup import blank_likes, call_args, names_read, tokens

_CALL = "_rt.unbroadcast("
_PROJECTION = re.compile(r"^(\w+) = _rt\.unbroadcast\(")
_ASSIGN = re.compile(r" (?:\+|-|\*|/|//|%|@|&|\||\^|>>|<<|\*\*)?= ")  # (and augmented)
_TRIPLE, _TRIPLE_1, _BACKSLASH = chr(34) * 3, chr(39) * 3, chr(92)  # (lines this pass declines)
_NONE = object()  # what a name assigned None was projected onto: anything
_LOOPS = ("for ", "while ", "async for ")
_COMPOUND = ("if ", "elif ", "else", "try", "except", "finally", "with ", "def ", "class ",
             "async ", "match ", "case ", "import ", "from ", "global ", "nonlocal ", "@")


class _Decline(Exception):
    pass


def reuse_projections(lines, shape_only, primal):
    """lines (the pullback's body) with the identity tests above. The stand-ins: the
    names the tape keeps for their shape alone (shape_only), and the primal values the
    pullback reads for their shape alone (passed to it as ``_rt.shape_like``)."""
    if "\n".join(lines).count(_CALL) < 2 or sum(_CALL in line for line in lines) < 2:
        return lines  # (most pullbacks: nothing to chain; most have no call at all, counted in C)
    likes = set(shape_only) | (primal - names_read([blank_likes(line) for line in lines]))
    if not likes:
        return lines
    code = []
    try:
        for i, line in enumerate(lines):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            if ":=" in text or _TRIPLE in text or _TRIPLE_1 in text or text.endswith(_BACKSLASH):
                return lines
            end, assigns = _scan(text)
            code.append((len(line) - len(line.lstrip()), text[:end].rstrip(), i, assigns, end == len(text)))
        walk = _Walk(code, likes)
        end, _ = walk.block(0, 0, {})
    except _Decline:
        return lines
    if end != len(code) or not walk.rewrites:
        return lines
    out = list(lines)
    for i, new in walk.rewrites.items():
        line = out[i]
        out[i] = line[: len(line) - len(line.lstrip())] + new
    return out


class _Walk:
    """What each adjoint is known to be projected onto, statement by statement: a dict
    adjoint -> the name of the value (or _NONE: the adjoint is None)."""

    def __init__(self, code, likes):
        self.code, self.likes = code, likes
        self.rewrites = {}  # line number -> the line's new text (indentation aside)

    def block(self, k, indent, known):
        """Walk the statements at this indentation from code[k]: (the first one after the
        block, what is known at its end)."""
        code = self.code
        while k < len(code) and code[k][0] == indent:
            text = code[k][1]
            if text.endswith(":"):
                k, known = self.compound(k, indent, known)
            elif text.startswith(_COMPOUND) or text.startswith(_LOOPS):
                raise _Decline  # a compound statement on one line
            else:
                known = self.simple(k, known)
                k += 1
        if k < len(code) and code[k][0] > indent:
            raise _Decline  # an indentation the walk does not follow
        return k, known

    def body(self, k, indent, known):
        """The block under the header code[k]."""
        if k + 1 >= len(self.code) or self.code[k + 1][0] <= indent:
            raise _Decline  # no body: not code this pass reads
        return self.block(k + 1, self.code[k + 1][0], known)

    def compound(self, k, indent, known):
        text = self.code[k][1]
        if text.startswith("if "):
            ends = []
            k, out = self.body(k, indent, dict(known))
            ends.append(out)
            while k < len(self.code) and self.code[k][0] == indent:
                text = self.code[k][1]
                if text.startswith("elif ") and text.endswith(":"):
                    k, out = self.body(k, indent, dict(known))
                    ends.append(out)
                elif text == "else:":
                    k, out = self.body(k, indent, dict(known))
                    ends.append(out)
                    return k, _meet(ends)
                else:
                    break
            ends.append(known)  # no else: the test may have been false
            return k, _meet(ends)
        if text.startswith(_LOOPS):
            k, _ = self.body(k, indent, {})
            if k < len(self.code) and self.code[k][0] == indent and self.code[k][1] == "else:":
                k, _ = self.body(k, indent, {})
            return k, {}
        raise _Decline

    def simple(self, k, known):
        _, text, i, assigns, whole = self.code[k]
        m = _PROJECTION.match(text) if whole else None
        if m:
            spans = call_args(text, m.end())
            if spans is not None and len(spans) == 2 and spans[1][1] == len(text) - 1:
                target = m.group(1)
                g = text[spans[0][0]:spans[0][1]].strip()
                like = text[spans[1][0]:spans[1][1]].strip()
                if like.isidentifier() and like != target:
                    test = self.test(g, like, known)
                    if test is not None:
                        self.rewrites[i] = f"{target} = {test}"
                    known = _without(known, {target})
                    known[target] = like
                    return known
        if whole and _CALL in text and "lambda" not in text and " for " not in text:
            self.inner(text, i, known)  # (not where a call may run later, its names rebound)
        if text.startswith(("del ", "global ", "nonlocal ", "import ", "from ")):
            return {}
        if not assigns:
            return known  # an expression, a return, pass, break or continue: binds nothing
        bound = set(tokens(text[:assigns[-1]]))
        known = _without(known, bound)
        if len(assigns) == 1 and text[assigns[0]:] == " = None":
            (name,) = bound if len(bound) == 1 else (None,)
            if name is not None and text[:assigns[0]] == name:
                known[name] = _NONE
        return known

    def test(self, g, like, known):
        """What ``_rt.unbroadcast(g, like)`` can be written as, or None."""
        was = known.get(g) if g.isidentifier() else None
        if was is None or was is _NONE or like not in self.likes or was not in self.likes:
            return None
        return g if was == like else f"{g} if {like} is {was} else {_CALL}{g}, {like})"

    def inner(self, text, i, known):
        """The unbroadcasts an expression reads (``_rt.acc(b_w, _rt.matmul_adjoint_b(
        _rt.unbroadcast(b_add, matmul), x, w))``), each in parentheses."""
        edits, start = [], text.find(_CALL)
        while start >= 0:
            before = text[start - 1:start]  # (`my_rt.unbroadcast(` is not the helper)
            ours = not before or not (before.isalnum() or before in "_.")
            spans = call_args(text, start + len(_CALL)) if ours else None
            if spans is not None and len(spans) == 2:
                like = text[spans[1][0]:spans[1][1]].strip()
                test = self.test(text[spans[0][0]:spans[0][1]].strip(), like, known)
                end = spans[1][1] + 1
                if test is not None:
                    bare = test.isidentifier() or text[start - 1:start] == "(" and text[end:end + 1] == ")"
                    edits.append((start, end, test if bare else f"({test})"))  # (one pair of parentheses)
            start = text.find(_CALL, start + 1)
        for a, b, new in reversed(edits):  # (no edited call holds another: the arguments are names)
            text = text[:a] + new + text[b:]
        if edits:
            self.rewrites[i] = text


def _scan(text):
    """(where the code of a line ends: its length or a comment's start, the positions of
    its top-level ' = ' and augmented assignments); declines a line that goes on to the
    next one."""
    if "'" not in text and '"' not in text and "#" not in text:  # most lines: counted
        assigns = [m.start() for m in _ASSIGN.finditer(text) if not _depth(text, m.start())]
        if _depth(text, len(text)):
            raise _Decline
        return len(text), assigns
    depth, quote, assigns, i, n = 0, None, [], 0, len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#":
            n = i
            break
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and c == " " and _ASSIGN.match(text, i):
            assigns.append(i)
        i += 1
    if depth or quote:
        raise _Decline
    return n, assigns


def _depth(text, i):
    """The brackets open at text[i] (a line without strings)."""
    return (text.count("(", 0, i) - text.count(")", 0, i) + text.count("[", 0, i)
            - text.count("]", 0, i) + text.count("{", 0, i) - text.count("}", 0, i))


def _without(known, names):
    """known less what mentions a name bound again."""
    return {a: v for a, v in known.items() if a not in names and v not in names}


def _meet(ends):
    """What every one of the paths knows."""
    first, rest = ends[0], ends[1:]
    out = {}
    for a, v in first.items():
        for other in rest:
            w = other.get(a)
            if w is None:
                break
            if v is _NONE:
                v = w
            elif w is not _NONE and w != v:
                break
        else:
            out[a] = v
    return out
