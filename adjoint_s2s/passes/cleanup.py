"""The clean-up pass: rewrites of the rendered pair that make it read as a person would
write it, each one exact (the same values bit for bit, the same effects in the same order).

It runs on text, after the tape planning has resolved the saves and restores, and before
the sparse pass. It may read and rewrite the rendered lines of the forward pass and of the
pullback; it reads the names the reverse pass reports (the seed, the primal names, the
real adjoints, the temporaries) and decides nothing else. Its patterns are built from the
naming convention of ``naming.py``.

The rewrites of the pullback (``clean_pullback``):

* round trips: ``b_b = b_a`` after ``b_a = b_b`` in the same block, neither bound again
  in between, does nothing and is dropped;
* copy propagation: ``b_a = b_b`` at the top level, when neither is assigned again, is
  dropped and ``b_b`` read in place of ``b_a``;
* single-use folding: ``b_t = E`` read by exactly one later top-level line is folded into
  it, when nothing E reads changes in between;
* ``b_x = b_x + (-b_y) * r`` becomes ``b_x = b_x - b_y * r`` for real adjoints;
* ``(b_x * y) * z`` loses its parentheses;
* a heading comment (the primal line an adjoint comes from) with no code under it goes;
* inside blocks (a reversed loop's body), the same copies and single uses, and a real
  adjoint bound twice in a row: ``blockclean.clean_blocks``.

Of the forward pass (``fold_pure_temps``, in ``blockclean.py``): a temporary of pure scalar
arithmetic that the pullback does not read is folded back into the one line of its block
that reads it.

Before (``def f(x, y): a = x * y; return a - x``, as the reverse pass renders it)::

    def f_pullback(b_result, x=x, y=y):
        if type(b_result) is not float:
            b_result = _rt.real(b_result)
        b_a = b_result
        b_x = -b_result
        # a = x * y
        b_x = b_x + b_a * y
        b_y = b_a * x
        return (None, b_x, b_y)

After::

    def f_pullback(b_result, x=x, y=y):
        if type(b_result) is not float:
            b_result = _rt.real(b_result)
        b_x = -b_result
        # a = x * y
        b_x = b_x + b_result * y
        b_y = b_result * x
        return (None, b_x, b_y)

``names_read``, ``tokens`` (from ``linetokens.py``) and ``fix_empty_blocks`` are the
text utilities the tape planning and the final assembly share with it.
"""
import bisect
import itertools
import math
import re

from ..naming import ADJOINT_PREFIX
from . import blockclean
from .linetokens import (  # noqa: F401 (tokens, token_counts, names_read: part of its interface)
    _TOKENS, _plain_text, _touches_store, known_tokens, names_read, token_counts, tokens,
)
from .blockclean import fold_pure_temps  # noqa: F401 (part of this pass's interface)

_B = re.escape(ADJOINT_PREFIX)


def clean(draft, plan, fwd_lines, pb_lines):
    """The clean-up pass: (forward lines, pullback lines, the names the pullback reads
    and receives as default arguments). A name bound on some paths only is given None
    first, so that it has a value to pass."""
    slot_names = set(plan.slots.values())
    # names of primal values (a user's `b_q`, and every name of generated code when it
    # is differentiated again): restored, not copied, so never propagated or folded
    primal_names = draft.locals | set(draft.params_names) | set(draft.freevars) | slot_names
    pb_lines = clean_pullback(pb_lines, draft.seed, primal_names, draft.real_adjoints)
    # the pullback receives the values it reads as default arguments: the forward
    # pass keeps fast locals (no cells), and the values are snapshots, so a captured
    # variable rebound later (a loop variable) cannot change the gradient. Helper
    # modules stay closure variables (they resolve statically when differentiated again)
    data = data_globals(draft.globals_read) - draft.locals
    primal = draft.locals | set(draft.params_names) | set(draft.freevars) | data
    primal -= set(draft.static_free) | draft.helpers | {"_rt"}
    primal |= slot_names | ({draft.tape} if plan.tape_used else set())
    passed = sorted((names_read(pb_lines) & primal) - {draft.seed})
    always = set(draft.params_names) | set(draft.freevars) | {draft.tape} | data
    unbound = sorted(
        n for n in passed if n not in always and n not in plan.defined_at_end
    )
    if unbound:  # bound on some paths only: still needs a value to pass
        fwd_lines[:0] = [f"{n} = None" for n in unbound]
    temps = (draft.scalars - draft.user_names - set(passed) - set(tokens(draft.result))
             - slot_names - {draft.tape, draft.pos})
    pure = draft.scalars | ({"math", "cmath"} & draft.helpers)
    return blockclean.fold_pure_temps(fwd_lines, temps, pure, draft.tape), pb_lines, passed


def data_globals(read):
    """The globals the code read that hold data (numbers, arrays, containers: the facts
    emit's data guard checks by type; a callee, a module or a class is a reference). The
    pullback takes those it reads as default arguments, like the locals: the values the
    forward pass computed with, though the module rebinds the name before the pullback
    is called (`DT = 0.02` between the two)."""
    return {n for n, fact in read.items() if type(fact) is type or type(fact) is tuple} - {"__builtins__"}


def clean_pullback(lines, seed, primal, real_adjoints):
    """The pullback's body lines, rewritten: copies propagated, single uses folded, sums
    of negated terms written as differences. primal: names of primal values (never
    propagated or folded: a user's ``b_q`` is restored, not copied)."""
    lines = blockclean.drop_dead_adjoints(_drop_round_trips(lines, primal), seed, primal)
    lines = _substitute_single_uses(_propagate_copies(lines, seed, primal), seed, primal)
    lines = blockclean.clean_blocks(lines, seed, primal, real_adjoints)
    lines = list(lines)
    for i in lines_with(lines, "(-"):  # (what _ADD_NEGATED needs)
        lines[i] = _subtract_negated(lines[i], real_adjoints)
    return _drop_empty_headings(lines)


def lines_with(lines, text):
    """The indexes of the lines that hold text (most lines of a long function hold none of
    what a rewrite looks for: its function is not called for them)."""
    return [i for i, line in enumerate(lines) if text in line]


def unparen_all(lines):
    """[_unparen_simple(line) for line in lines], called only for the lines it may change."""
    return [_unparen_simple(line) if ") * " in line else line for line in lines]


_ANY_COPY = re.compile(rf"^(\s*)({_B}\w+) = ({_B}\w+)$")


def _indent(line):
    return len(line) - len(line.lstrip())


def _drop_round_trips(lines, primal):
    """Drop ``b_b = b_a`` when ``b_a = b_b`` came before it in the same block and neither
    name was bound again in between: both names already hold the same object, so the
    second copy does nothing. (The first copy then often goes too: see
    ``_propagate_copies``.) Never for primal names that look like adjoints.

    Linear in the number of lines: one pass finds where each line's block ends (the next
    line at another indentation, or a block header) and the lines that bind each name;
    the first line after a copy that binds either of its names decides."""
    # (a copy mentions two names: the pattern is tried on those lines only; the tokens are
    # asked again by the passes after this one)
    starts = [(i, m) for i, toks in enumerate(map(tokens, lines))
              if len(toks) == 2 and (m := _ANY_COPY.match(lines[i]))]
    if starts:  # only a copy whose way back stands somewhere as a line can go
        present = set(lines)
        starts = [(i, m) for i, m in starts if f"{m.group(1)}{m.group(3)} = {m.group(2)}" in present]
    if not starts:
        return lines
    n = len(lines)
    block_end = [n] * n
    below = None  # the next non-blank line: (index, indentation, is a block header)
    for i in range(n - 1, -1, -1):
        line = lines[i]
        body = line.lstrip()
        if not body:
            continue
        ind = len(line) - len(body)
        if below is not None:
            j, j_ind, j_header = below
            block_end[i] = j if j_ind != ind or j_header else block_end[j]
        below = (i, ind, body[0] != "#" and line.rstrip().endswith(":"))
    bound_at = _bound_at(lines)
    drop = set()
    for i, m in starts:
        if i in drop or m.group(2) in primal or m.group(3) in primal:
            continue
        ind, a, b = m.group(1), m.group(2), m.group(3)
        j = min(_first_after(bound_at.get(a, ()), i), _first_after(bound_at.get(b, ()), i))
        if j < block_end[i] and lines[j] == f"{ind}{b} = {a}":
            drop.add(j)
    return [line for i, line in enumerate(lines) if i not in drop] if drop else lines


def _bound_at(lines):
    """name -> the ascending indexes of the lines (comments aside) that assign it."""
    out = {}
    for i, line in enumerate(lines):
        if line.lstrip().startswith("#"):
            continue
        m = _TARGETS.match(line)
        if m:
            for name in m.group(1).split(","):
                out.setdefault(name.strip(), []).append(i)
    return out


def _first_after(positions, i):
    """The first of the ascending positions greater than i (infinity when none)."""
    k = bisect.bisect_right(positions, i)
    return positions[k] if k < len(positions) else math.inf


def _drop_empty_headings(lines):
    """Drop a heading comment (``# y = x``, the primal line an adjoint comes from) that
    no code follows: the next line is another heading at its level or above, the end of
    its block, or the return."""
    out = []
    nxt_indent, nxt_closes = -1, True  # the line after: its indentation, and whether it
    for line in reversed(lines):  # is a heading or the return (-1: the end)
        body = line.lstrip()
        if not body:
            out.append(line)
            continue
        indent = len(line) - len(body)
        heading = body[0] == "#"
        if heading and (nxt_indent < indent or nxt_indent == indent and nxt_closes):
            continue
        out.append(line)
        nxt_indent, nxt_closes = indent, heading or body.startswith("return ")
    out.reverse()
    return out




_COPY = re.compile(rf"^({_B}\w+) = ({_B}\w+)$")
_WORD = re.compile(r"(?<![\w.])\w+")
_TARGETS = re.compile(r"^\s*([\w, ]+?) = (?!=)")


def _propagate_copies(lines, seed, primal=frozenset()):
    """Drop `b_a = b_b` adjoint copies of the pullback's top level, using b_b directly.

    Only when b_a is assigned nowhere else and b_b is not assigned after the copy (in any
    block): then b_a and b_b hold the same value wherever b_a is read. Never for primal
    names that merely look like adjoints (`b_q = b_q_saved` restores a user's `b_q`, whose
    earlier value came in as a default argument).
    """
    # top level only (a copy mentions two names: the pattern is tried on those lines only)
    found = {i: m for i, toks in enumerate(map(tokens, lines)) if len(toks) == 2 and (m := _COPY.match(lines[i]))}
    if not found:
        return lines
    copies = list(found)
    # name -> how many lines assign it, the last of them: asked of the copies' names only,
    # which a line that binds one of them mentions
    copied = set()
    for m in found.values():
        copied.update(m.groups())
    times, last = {}, {}
    for i, line in enumerate(lines):
        toks = tokens(line)
        if not toks or toks[0] not in copied and ("," not in line or copied.isdisjoint(toks)):
            continue  # (a line _TARGETS matches with no comma binds its first name)
        first = toks[0]
        if line.startswith(first) and line.startswith(" = ", len(first)) and not line.startswith("=", len(first) + 3):
            times[first] = times.get(first, 0) + 1  # (what _TARGETS finds: its first name alone)
            last[first] = i
            continue
        m = _TARGETS.match(line)
        if m:
            names = m.group(1)
            for name in names.split(",") if "," in names else (names,):
                name = name.strip()
                times[name] = times.get(name, 0) + 1
                last[name] = i
    out = list(lines)
    renames = {}
    for i in copies:
        m = found[i]
        a, b = m.group(1), renames.get(m.group(2), m.group(2))
        if a == seed or a in primal or m.group(2) in primal or times.get(a, 0) != 1:
            continue
        if last.get(m.group(2), -1) > i or last.get(b, -1) > i:
            continue
        renames[a] = b
        out[i] = None
    if not renames:
        return lines
    return _renamed(out, renames)


def _renamed(lines, renames):
    """The lines (None: a line dropped) with every whole name (not an attribute) looked
    up in renames."""
    # one pattern for any number of names, where an alternation of the names costs their
    # number per position
    def rename(mm):
        word = mm.group()
        return renames.get(word, word)

    result = []
    for line in lines:
        if line is None:
            continue
        if line.lstrip().startswith("#"):
            result.append(line)
            continue
        if "'" in line or '"' in line or "#" in line:
            line = _WORD.sub(rename, line)
        else:
            # a line without strings or comments mentions exactly the names tokens()
            # gives (cached, and asked again later): most lines have none of the renamed
            # ones, the others one or two. No name renamed to is renamed itself (a copy
            # whose source is bound later stays), so one name at a time is the same.
            toks = tokens(line)
            if renames.keys().isdisjoint(toks):
                result.append(line)
                continue
            for name in toks:
                new = renames.get(name)
                if new is not None:
                    line = replace_name(line, name, new)
            # every mention of a renamed name replaced: the names in the same places
            known_tokens(line, tuple([renames.get(t, t) for t in toks]))
        result.append(line)
    return result


def replace_name(text, name, new, count=0):
    """text with the name `name` (not part of a longer name, not an attribute) replaced by
    new, at most count times (0: all), as re.sub with ``(?<![\\w.])name(?!\\w)`` would, but
    without compiling a pattern per name (thousands of names overflowed re's cache)."""
    i = text.find(name)
    if i < 0:
        return text  # (most calls from a fold: found at once)
    parts = []
    last = done = 0
    n, size = len(name), len(text)
    while i >= 0:
        end = i + n
        if (i and (text[i - 1].isalnum() or text[i - 1] in "_.")) or (
                end < size and (text[end].isalnum() or text[end] == "_")):
            i = text.find(name, i + 1)  # part of a longer name, or an attribute
            continue
        parts.append(text[last:i])
        parts.append(new)
        last = end
        done += 1
        if done == count:
            break
        i = text.find(name, end)
    if not done:
        return text
    parts.append(text[last:])
    return "".join(parts)


_DEF = re.compile(rf"^({_B}\w+) = (.+)$")
_FOR = re.compile(r"^\s*for (\w+) in ")


def _substitute_single_uses(lines, seed, primal=frozenset()):
    """Fold `b_t = E` into the one top-level line that reads b_t, when b_t is assigned
    nowhere else, read nowhere else, and nothing E reads changes in between.

    A fold can make another possible only for a definition above it whose search for its
    use passed the lines the fold changes (the removed definition, the line it went
    into, below it): a definition's own line, its count and what its search sees up to
    where it stopped are otherwise what they were (a fold moves E's names, every other
    count stays). Another pass runs only after such a fold."""
    lines = list(lines)
    again = True
    while again:
        again = False
        counts = token_counts(lines)
        reach = -1  # the last line a search that left its definition in place looked at
        i = -1
        while i + 1 < len(lines):
            i += 1
            line = lines[i]
            if not line.startswith(ADJOINT_PREFIX):
                continue  # (what _DEF needs first)
            if counts.get(tokens(line)[0], 0) != 2:
                continue  # (its first name is what _DEF binds) not one definition and one use
            m = _DEF.match(line)  # top level: no indentation
            if not m or m.group(1) == seed or m.group(1) in primal:
                continue
            name, expr = m.group(1), m.group(2)
            reads = set(tokens(line)[1:])  # (the target, then what E reads: cached)
            if name in reads:
                continue
            j, folds = _use_of(lines, i, name, reads)
            if not folds:
                reach = max(reach, j)
                continue
            use = lines[j]
            lhs, rhs = use.split(" = ", 1)
            value = expr if expr.isidentifier() else f"({expr})"  # never `(b_y)`
            folded = lhs + " = " + replace_name(rhs, name, value)
            if _plain_text(line) and _plain_text(use):  # the one mention of name, as E's names
                toks = tokens(use)
                k = toks.index(name)
                known_tokens(folded, toks[:k] + tokens(line)[1:] + toks[k + 1:])
            # in place: a new list per fold made the pass quadratic
            lines[i : j + 1] = lines[i + 1 : j] + [folded]
            # every other name keeps its count; go on from the line after the removed one
            counts[name] = 0
            again = again or i <= reach
            i -= 1
    return unparen_all(lines)


def _use_of(lines, i, name, reads):
    """(j, whether line i, ``name = E`` with E reading reads, folds into line j): the line
    its search for the one use of name stopped at. E that may read or change the
    gradients kept by object (a pullback closure's call, `_rt.setattr_grad`...) does not
    move past another line that may: the order of the two is the order of the effects."""
    stop = reads | {name}  # names whose binding ends the search
    effects = _touches_store(lines[i])
    j = i
    for j in range(i + 1, len(lines)):
        later = lines[j]
        if effects and name not in tokens(later) and _touches_store(later):
            return j, False
        if stop.isdisjoint(tokens(later)):
            continue  # (a comment, or a line that neither reads name nor binds a stop name)
        if later.lstrip().startswith("#"):
            continue
        assigned = _TARGETS.match(later)
        binds = False
        if assigned:
            targets = assigned.group(1)
            if "," in targets:
                binds = any(t.strip() in stop for t in targets.split(","))
            else:
                binds = targets.strip() in stop
        loop = _FOR.match(later) if "for " in later else None
        if loop and loop.group(1) in stop:
            binds = True
        if later.startswith(" ") or loop or later.rstrip().endswith(":"):
            # inside (or opening) a block: a use there is left alone, and an
            # assignment there to what E reads ends the search
            if binds or name in tokens(later):
                return j, False
            continue
        if name in tokens(later):
            if later.startswith("return") or not assigned:
                return j, False
            lhs, rhs = later.split(" = ", 1)
            return j, name not in lhs and rhs.count(name) == 1
        if binds:
            return j, False  # something E reads is reassigned before the use
    return j, False


_ADD_NEGATED = re.compile(rf"^(\s*)({_B}\w+) = \2 \+ \(-({_B}\w+)\) \* (.+)$")


def _subtract_negated(line, real_adjoints):
    """b_x = b_x + (-b_y) * r reads (and runs) as b_x = b_x - b_y * r: for real scalars
    the two are equal bit for bit. Left alone when r has an operator of the same
    precedence as * that does not distribute a sign (%, //) or a conditional."""
    if "(-" not in line:
        return line  # (most lines: what the pattern needs is not there)
    m = _ADD_NEGATED.match(line)
    if not m or m.group(2) not in real_adjoints or m.group(3) not in real_adjoints:
        return line
    rest = m.group(4)
    if "%" in rest or "//" in rest or " if " in rest or "#" in rest:
        return line
    new = f"{m.group(1)}{m.group(2)} = {m.group(2)} - {m.group(3)} * {rest}"
    got = _TOKENS.get(line)
    if got is not None:  # (a sign and parentheses moved: the same names)
        known_tokens(new, got)
    return new


_PAREN_PRODUCT = re.compile(r"(?<![\w.)\]])\(([\w.]+(?: \* [\w.]+)*)\) \* ")


def _unparen_product(m):
    return m[1] + " * "  # (what the template r"\1 * " gives: re expands a template in Python, slower)


def _unparen_simple(line):
    """(b_x * y) * z reads as b_x * y * z when the parenthesised part is a plain product
    (never a call's parentheses, never a comment)."""
    if ") * " not in line or line.lstrip().startswith("#"):
        return line  # (most lines: no regex run)
    new = _PAREN_PRODUCT.sub(_unparen_product, line)
    if new is not line:
        got = _TOKENS.get(line)
        if got is not None:  # (parentheses only: the same names)
            known_tokens(new, got)
    return new


def blank_shape_reads(line, names):
    """line with the given names blanked where they are read only for their shape and
    type: the ``like`` of ``_rt.unbroadcast(g, like)`` and the old container of
    ``_rt.setitem_grad(b, old, idx, v)`` and ``_rt.setitem_grad_acc(b, old, idx, v, acc)``
    (not for a slice: a list can change length)."""
    if "_rt." not in line:
        return line
    for fn, pos in (("_rt.unbroadcast(", -1), ("_rt.setitem_grad(", 1), ("_rt.setitem_grad_acc(", 1)):
        start = line.find(fn)
        while start >= 0:
            spans = call_args(line, start + len(fn))
            if spans is not None and len(spans) >= 2:
                a, b = spans[pos]
                arg = line[a:b].strip()
                idx = line[spans[2][0]:spans[2][1]] if fn != "_rt.unbroadcast(" and len(spans) > 2 else ""
                if arg in names and "slice(" not in idx:
                    line = line[:a] + " " * (b - a) + line[b:]
            start = line.find(fn, start + 1)
    return line


# helpers that read an argument (a plain name) only for its shape and dtype, as
# (helper, its position, the number of arguments): the ``like`` of unbroadcast, the
# input of a sum's or a mean's adjoint, the old container of setitem_grad (an array's;
# a list, which shape_like keeps whole, is read for its length)
_LIKES = (
    ("_rt.unbroadcast(", 1, 2),
    ("_rt.np_sum_adjoint(", 1, 4),
    ("_rt.np_mean_adjoint(", 1, 4),
    ("_rt.setitem_grad(", 1, 4),
    ("_rt.setitem_grad_acc(", 1, 5),
)


# the identity test of passes/projected.py, which compares two values' objects only
_SAME_LIKE = re.compile(r"(?<= if )(\w+ is \w+)(?= else _rt\.unbroadcast\()")


def blank_likes(line):
    """line with every argument that a helper of _LIKES reads only for its shape and
    dtype blanked, when it is a plain name: the pullback needs no more of that value than
    ``_rt.shape_like`` keeps."""
    if "_rt." not in line:
        return line  # (most lines: no helper of _LIKES)
    if " is " in line:
        line = _SAME_LIKE.sub(lambda m: " " * len(m.group(1)), line)
    for fn, pos, nargs in _LIKES:
        start = line.find(fn)
        while start >= 0:
            spans = call_args(line, start + len(fn))
            if spans is not None and len(spans) == nargs:
                a, b = spans[pos]
                if line[a:b].strip().isidentifier():
                    line = line[:a] + " " * (b - a) + line[b:]
            start = line.find(fn, start + 1)
    return line


def call_args(line, i):
    """The (start, end) spans of the top-level arguments of the call whose '(' ends at
    line[i - 1], or None when the line ends first."""
    spans, depth, begin, quote = [], 0, i, None
    while i < len(line):
        c = line[i]
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                spans.append((begin, i))
                return spans
            depth -= 1
        elif c == "," and depth == 0:
            spans.append((begin, i))
            begin = i + 1
        i += 1
    return None


def fix_empty_blocks(lines):
    """Insert `pass` where a block header is followed by no code (only comments)."""
    out = []
    n = len(lines)
    last = 0  # the lines before it are in out
    # (only the lines that end with a colon are looked at: found in C)
    for i in itertools.compress(itertools.count(), map(str.endswith, map(str.rstrip, lines), itertools.repeat(":"))):
        line = lines[i]
        if line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        j = i + 1
        has_code = False
        while j < n:
            nxt = lines[j]
            ind = len(nxt) - len(nxt.lstrip())
            if nxt.strip() == "":
                j += 1
                continue
            if ind <= indent:
                break
            if not nxt.lstrip().startswith("#"):
                has_code = True
                break
            j += 1
        if not has_code:
            out.extend(lines[last:i + 1])
            out.append(" " * (indent + 4) + "pass")
            last = i + 1
    out.extend(lines[last:])
    return out
