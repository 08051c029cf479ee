"""Clean-ups of the rendered pair that work inside blocks (loop and branch bodies), where
the top-level rewrites of ``cleanup.py`` stop. Each one is exact: the same values bit for
bit, the same effects in the same order.

Of the forward pass (``fold_pure_temps``): a temporary of pure scalar arithmetic that the
pullback does not read is folded back into the one line of its block that reads it, also
past a tape push (``_tape.append(x)`` neither binds a name nor changes a number).

Before (a loop body, as the tape planning renders it)::

    for _ in range_1:
        mul = 0.99 * x
        sin_x = math.sin(x)
        mul_1 = 0.01 * sin_x
        _tape.append(x)
        x = mul + mul_1

After::

    for _ in range_1:
        _tape.append(x)
        x = 0.99 * x + 0.01 * math.sin(x)
"""
import ast
import re

from ..naming import ADJOINT_PREFIX
from . import cleanup
from .reprint import reprint

_ASSIGN = re.compile(r"^(\s*)([A-Za-z_]\w*) = (?!=)(.+)$")


def _indent(line):
    return len(line) - len(line.lstrip())


def fold_pure_temps(lines, temps, pure, tape=None):
    """Fold a temporary `t = E` of the forward pass into the one line of its block that
    reads it, as the user wrote the expression: `a = sin_x * y + mul_1 * x`.

    Only where nothing can tell the difference: t is a temporary of the transformer that
    the pullback does not read, and E, every line between and the line that reads t are
    assignments of pure arithmetic on real or complex numbers (names in `pure`, math/cmath
    functions) in the same block, or pushes on the tape (`tape.append(...)`, which bind
    nothing and change no number). The value is the same bit for bit (the expression tree
    is unchanged).
    """
    lines = list(lines)
    counts = cleanup.token_counts(lines)
    push = f"{tape}.append(" if tape else None
    changed = set()
    tokens = cleanup.tokens
    for i in range(len(lines)):  # (a folded temporary's line becomes None: no list shifts)
        line = lines[i]
        if line is None:
            continue
        toks = tokens(line)  # (a temporary's assignment names it first: what _ASSIGN binds)
        if not toks or toks[0] not in temps or counts.get(toks[0]) != 2:
            continue
        m = _ASSIGN.match(line)
        if m and m.group(2) in temps and counts.get(m.group(2)) == 2 and _fold_one(lines, i, m, pure, push, changed):
            counts[m.group(2)] = 0
    # a folded line is printed again from its tree: the same expression, minimal parentheses
    return [reprint(line) if line in changed else line for line in lines if line is not None]


def _fold_one(lines, i, m, pure, push, changed):
    """Fold line i (`t = E`, matched by m) into the line of its block that reads t, in
    place; False when it cannot be."""
    pad, name, expr = m.group(1), m.group(2), m.group(3)
    reads = cleanup.tokens(lines[i])[1:]  # (the target, then what `= E` reads: cached)
    if name in reads or not pure.issuperset(reads):
        return False
    depth = len(pad)
    for j in range(i + 1, len(lines)):
        later = lines[j]
        if later is None:
            continue  # (folded away)
        body = later.lstrip()
        if body.startswith("#"):
            continue
        if len(later) - len(body) != depth:
            return False  # the block ends, or another one opens
        if push and body.startswith(push) and name not in cleanup.tokens(later):
            continue
        m2 = _ASSIGN.match(later)
        if not m2 or "#" in later:
            return False
        target, rhs = m2.group(2), m2.group(3)
        used = cleanup.tokens(later)[1:]
        if target == name or not pure.issuperset(used):
            return False
        if name in used:  # (the right side is evaluated before its target is bound)
            new = cleanup.replace_name(rhs, name, f"({expr})", count=1)
            folded = f"{pad}{target} = {new}"
            k = used.index(name)  # (its first mention, the one replaced, as E's names)
            cleanup.known_tokens(folded, (target,) + used[:k] + reads + used[k + 1:])
            lines[i], lines[j] = None, folded  # (in place: the lines between stay)
            changed.add(folded)
            return True
        if target in reads:
            return False
    return False


# ----- the pullback, inside blocks ---------------------------------------------------------
_B = re.escape(ADJOINT_PREFIX)
_COPY = re.compile(rf"^(\s+)({_B}\w+) = ({_B}\w+)$")
_DEF = re.compile(rf"^(\s+)({_B}\w+) = (.+)$")
_TARGETS = re.compile(r"^\s*([\w, ]+?) = (?!=)")
_FOR = re.compile(r"^\s*for (\w+) in ")


def clean_blocks(lines, seed, primal, real=frozenset()):
    """The pullback's lines with the copies and single uses of adjoints inside blocks (a
    reversed loop's body) rewritten as ``cleanup.clean_pullback`` does at the top level,
    and a real adjoint's value bound and at once bound again (``b_x = E`` then
    ``b_x = b_x + F``) computed in one line. Each rewrite can make another possible: a
    few rounds. Without a line any of them could rewrite, only the parentheses go."""
    if not _block_work(lines, seed, primal, real):
        for _ in range(3):
            before = lines
            lines = cleanup.unparen_all(lines)
            if lines == before:
                break
        return lines
    for _ in range(3):
        before = lines
        lines = _fold_block_uses(_propagate_block_copies(lines, seed, primal), seed, primal)
        lines = _fold_rebindings(lines, primal, real)
        if lines == before:
            break
    return lines


def _block_work(lines, seed, primal, real):
    """Is there a line inside a block that the rewrites of clean_blocks may start from:
    ``b_t = E`` (not the seed, not a primal name), or a real adjoint bound and bound again
    on the next line of code at the same depth? (Parentheses aside, they leave every other
    list of lines as it is.)"""
    for i, line in enumerate(lines):
        if not line[:1].isspace():
            continue
        m = _DEF.match(line)
        if not m or m.group(2) in primal:
            continue
        name = m.group(2)
        if name != seed:
            return True
        if name in real:
            j = _next_code(lines, i)
            m2 = _DEF.match(lines[j]) if j is not None else None
            if m2 and m2.group(1) == m.group(1) and m2.group(2) == name:
                return True
    return False


def _targets(line):
    """The names a generated line binds (an assignment's targets, a loop's variable)."""
    if " = " not in line and "for " not in line:
        return []  # (what both patterns need)
    if line.lstrip().startswith("#"):
        return ()
    m = _TARGETS.match(line)
    out = [t.strip() for t in m.group(1).split(",")] if m else []
    loop = _FOR.match(line)
    if loop:
        out.append(loop.group(1))
    return out


def _propagate_block_copies(lines, seed, primal):
    """Drop ``b_a = b_b`` inside a block, reading b_b in place of b_a, when b_a is bound
    nowhere else, every line that reads it stands later in the same block at the same
    depth, and b_b is bound again nowhere between the copy and the last of them (a line
    reads its right side before it binds its target)."""
    copies = [m for m in map(_COPY.match, lines) if m]
    if not any(m.group(2) not in (seed, m.group(3)) and m.group(2) not in primal
               and m.group(3) not in primal for m in copies):
        return lines  # no copy that may go: no index of the names
    # where each name of a copy is mentioned and bound (a line binding a name mentions
    # it; a comment mentions none): the names of the other lines are never asked about
    asked = {m.group(k) for m in copies for k in (2, 3)}
    where, bound = {}, {}
    for i, line in enumerate(lines):
        toks = cleanup.tokens(line)
        if asked.isdisjoint(toks):
            continue
        for tok in set(toks) & asked:
            where.setdefault(tok, []).append(i)
        for t in _targets(line):
            if t in asked:
                bound.setdefault(t, []).append(i)
    lines = list(lines)
    drop = set()
    for i, line in enumerate(lines):
        m = _COPY.match(line)
        if not m:
            continue
        pad, a, b = m.groups()
        if a == seed or a in primal or b in primal or a == b or bound.get(a) != [i]:
            continue
        uses = [j for j in where.get(a, ()) if j != i]
        if not uses or uses[0] < i or any(_indent(lines[j]) != len(pad) for j in uses):
            continue
        last = uses[-1]
        if _block_ends(lines, i, last, len(pad)) or any(i < j < last for j in bound.get(b, ())):
            continue
        for j in uses:
            lines[j] = _rename(lines[j], a, b)
        where[b] = sorted(set(where.get(b, [])) | set(uses))
        drop.add(i)
    return [line for i, line in enumerate(lines) if i not in drop] if drop else lines


def _block_ends(lines, i, j, depth):
    """Does the block of line i (at this indentation) end before line j?"""
    return any(_indent(lines[k]) < depth for k in range(i + 1, j)
               if lines[k].strip() and not lines[k].lstrip().startswith("#"))


def _rename(line, a, b):
    """line with the name a read as b (the assignment's target kept)."""
    m = _TARGETS.match(line)
    if m and not line.lstrip().startswith("for "):
        head = line[: m.end()]
        return head + cleanup.replace_name(line[m.end():], a, b)
    return cleanup.replace_name(line, a, b)


def _fold_block_uses(lines, seed, primal):
    """Fold ``b_t = E`` inside a block into the one line that reads b_t, when b_t is bound
    nowhere else and read nowhere else, that line stands later in the same block at the
    same depth, and nothing E reads is bound again in between."""
    if not any(m and m.group(2) != seed and m.group(2) not in primal for m in map(_DEF.match, lines)):
        return cleanup.unparen_all(lines)  # nothing to fold
    counts = cleanup.token_counts(lines)
    lines = list(lines)
    i = 0
    while i < len(lines):
        m = _DEF.match(lines[i])
        if m and m.group(2) != seed and m.group(2) not in primal and counts.get(m.group(2)) == 2:
            j = _single_use(lines, i, m)
            if j is not None:
                pad, name, expr = m.groups()
                lhs, rhs = lines[j].split(" = ", 1)
                value = expr if _atomic(expr) else f"({expr})"
                lines[i : j + 1] = lines[i + 1 : j] + [lhs + " = " + cleanup.replace_name(rhs, name, value)]
                counts[name] = 0
                continue
        i += 1
    return cleanup.unparen_all(lines)


def _single_use(lines, i, m):
    """The line of line i's block that reads its target once, if E (what line i binds)
    can move there; None otherwise."""
    pad, name, expr = m.groups()
    reads = set(cleanup.tokens(lines[i])[1:])  # (the target, then what E reads: cached)
    if name in reads:
        return None
    moves = _only_computes(expr)  # (E with effects folds only into the next line)
    for j in range(i + 1, len(lines)):
        later = lines[j]
        body = later.lstrip()
        if not body or body.startswith("#"):
            continue
        depth = _indent(later)
        if depth < len(pad):
            return None  # the block ends first
        toks = cleanup.tokens(later)
        targets = set(_targets(later))
        if name in toks and depth == len(pad) and not later.rstrip().endswith(":"):
            if body.startswith("return") or " = " not in later:
                return None
            lhs, rhs = later.split(" = ", 1)
            if name in cleanup.tokens(lhs) or cleanup.tokens(rhs).count(name) != 1:
                return None
            return j
        if not moves or name in toks or targets & (reads | {name}):
            return None
        if not targets and not later.rstrip().endswith(":"):
            return None  # a line run for its effect: E stays before it
    return None


_CALLEE = re.compile(r"^[A-Za-z_][\w.]*\(")


def _atomic(expr):
    """Does expr read as one operand where it stands (a name, or one call)?"""
    if expr.isidentifier():
        return True
    m = _CALLEE.match(expr)
    if not m:
        return False
    spans = cleanup.call_args(expr, m.end())
    return spans is not None and spans[-1][1] == len(expr) - 1


def _fold_rebindings(lines, primal, real):
    """``b_x = E`` followed (comments aside) by ``b_x = F`` in the same block, F reading
    b_x once: one line ``b_x = F`` with E in its place. The same operations in the same
    order; only for real adjoints (floats: no array that an addition may write into)."""
    out = list(lines)
    i = 0
    while i < len(out):
        m = _DEF.match(out[i])
        j = _next_code(out, i) if m and m.group(2) in real and m.group(2) not in primal else None
        if j is not None:
            pad, name, expr = m.groups()
            m2 = _DEF.match(out[j])
            if m2 and m2.group(1) == pad and m2.group(2) == name and cleanup.tokens(out[j])[1:].count(name) == 1:
                value = expr if _atomic(expr) else f"({expr})"
                folded = reprint(f"{pad}{name} = {cleanup.replace_name(m2.group(3), name, value)}")
                out[i : j + 1] = out[i + 1 : j] + [folded]
                continue
        i += 1
    return out


def _next_code(lines, i):
    """The index of the first line after i that is not a comment (None at the end)."""
    for j in range(i + 1, len(lines)):
        body = lines[j].lstrip()
        if body and not body.startswith("#"):
            return j
    return None


# ----- dead adjoints -----------------------------------------------------------------------
# run-time helpers that only compute a value (no write into an argument, no effect): a line
# that calls nothing else and binds an adjoint nobody reads can go
_PURE_CALLS = frozenset({"_rt.unbroadcast", "_rt.conj", "_rt.real"})
_PURE_NODES = (ast.Name, ast.Constant, ast.UnaryOp, ast.BinOp, ast.Tuple, ast.Load,
               ast.unaryop, ast.operator, ast.Attribute, ast.Call)


def drop_dead_adjoints(lines, seed, primal):
    """Drop ``b_t = E`` when no other line mentions b_t (an adjoint computed for a value
    whose gradient goes nowhere: a slice of a global) and E only computes: names,
    constants, operators and the helpers of _PURE_CALLS. What E read may then be read
    once, and fold (``cleanup``): the pullback no longer holds an array nobody uses."""
    counts = cleanup.token_counts(lines)
    if not any(c == 1 and n.startswith(ADJOINT_PREFIX) for n, c in counts.items()):
        return lines  # no adjoint mentioned once: none bound and never read (none dies first)
    dead = set()
    for i in range(len(lines) - 1, -1, -1):  # from the end: a dropped line's reads may die
        line = lines[i]
        m = _DEF_ANY.match(line)
        if not m or m.group(2) == seed or m.group(2) in primal or counts.get(m.group(2)) != 1:
            continue
        if not _only_computes(m.group(3)):
            continue
        for tok in cleanup.tokens(line):
            counts[tok] -= 1
        dead.add(i)
    return [line for i, line in enumerate(lines) if i not in dead] if dead else lines


_DEF_ANY = re.compile(rf"^(\s*)({_B}\w+) = (.+)$")


def _only_computes(expr):
    try:
        tree = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, _PURE_NODES):
            return False
        if isinstance(node, ast.Call):
            if node.keywords or ast.unparse(node.func) not in _PURE_CALLS:
                return False
        elif isinstance(node, ast.Attribute) and ast.unparse(node) not in _PURE_CALLS:
            return False
    return True
