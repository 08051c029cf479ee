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
import re

from . import cleanup

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
    counts = {}
    for line in lines:
        if not line.lstrip().startswith("#"):
            for tok in cleanup.tokens(line):
                counts[tok] = counts.get(tok, 0) + 1
    push = f"{tape}.append(" if tape else None
    changed = set()
    i = 0
    while i < len(lines):
        m = _ASSIGN.match(lines[i])
        if m and m.group(2) in temps and counts.get(m.group(2)) == 2 and _fold_one(lines, i, m, pure, push, changed):
            counts[m.group(2)] = 0
        else:
            i += 1
    # a folded line is printed again from its tree: the same expression, minimal parentheses
    return [cleanup._reprint(line) if line in changed else line for line in lines]


def _fold_one(lines, i, m, pure, push, changed):
    """Fold line i (`t = E`, matched by m) into the line of its block that reads t, in
    place; False when it cannot be."""
    pad, name, expr = m.group(1), m.group(2), m.group(3)
    reads = cleanup.tokens(expr)
    if name in reads or not all(t in pure for t in reads):
        return False
    for j in range(i + 1, len(lines)):
        later = lines[j]
        body = later.lstrip()
        if body.startswith("#"):
            continue
        if _indent(later) != len(pad):
            return False  # the block ends, or another one opens
        if push and body.startswith(push) and name not in cleanup.tokens(later):
            continue
        m2 = _ASSIGN.match(later)
        if not m2 or "#" in later:
            return False
        target, rhs = m2.group(2), m2.group(3)
        used = cleanup.tokens(rhs)
        if not all(t in pure for t in used) or target == name:
            return False
        if name in used:  # (the right side is evaluated before its target is bound)
            new = cleanup.replace_name(rhs, name, f"({expr})", count=1)
            lines[i : j + 1] = lines[i + 1 : j] + [f"{pad}{target} = {new}"]  # in place
            changed.add(lines[j - 1])
            return True
        if target in reads:
            return False
    return False
