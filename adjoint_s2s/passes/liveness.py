"""Liveness: for each statement of a normalised body, the names read after it before
being bound again (the activity analysis hands it to the reverse pass, which saves only
what is read again)."""
import gast

from ..naming import names_in



def stmt_targets(s):
    """Names a normalised statement binds."""
    if isinstance(s, gast.Assign):
        return [t.id for t in s.targets if isinstance(t, gast.Name)]
    if isinstance(s, gast.FunctionDef):
        return [s.name]
    if isinstance(s, gast.For):
        return [s.target.id]
    if isinstance(s, (gast.Import, gast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in s.names]
    return []


def live_after(body, memo=None):
    """For each statement of a normalised body (by id), the names read after it before
    being bound again: a backward dataflow over blocks, branches and loops. Conservative
    where it is cheap to be (break and continue fall through; a nested def reads every
    name it mentions). memo: id(node) -> the names it reads (names_in(node, gast.Load)),
    shared with the caller's questions of the same tree; its sets are never changed."""
    out_of = {}
    if memo is None:
        memo = {}  # a loop's body is visited once per round

    def _loads(node):
        key = id(node)
        got = memo.get(key)
        if got is None:
            got = memo[key] = names_in(node, gast.Load)
        return got

    def block(stmts, live):
        live = set(live)  # (a set of its own: changed in place below, never shared)
        for s in reversed(stmts):
            out_of[id(s)] = frozenset(live)
            if s.__class__ is gast.Assign and s.targets[0].__class__ is gast.Name:  # (most)
                live.discard(s.targets[0].id)
                live |= _loads(s.value)
            else:
                live = stmt(s, live)
        return live

    def stmt(s, live):
        if s.__class__ is gast.Assign and s.targets[0].__class__ is gast.Name:  # (most of them)
            return (live - {s.targets[0].id}) | _loads(s.value)
        if isinstance(s, gast.If):
            return _loads(s.test) | block(s.body, live) | block(s.orelse, live)
        if isinstance(s, (gast.For, gast.While)):
            after_else = block(s.orelse, live)
            head = set(after_else)
            while True:  # the back edge: iterate to the fixed point (sets only grow)
                body_in = block(s.body, head | live)
                if isinstance(s, gast.For):
                    new = (body_in - set(stmt_targets(s))) | after_else
                else:
                    new = _loads(s.test) | body_in | after_else
                if new <= head:
                    break
                head |= new
            return head | (_loads(s.iter) if isinstance(s, gast.For) else set())
        if isinstance(s, gast.Return):
            return set(_loads(s.value)) if s.value is not None else set()  # never the memo's
        if isinstance(s, gast.Assign):
            tgt = s.targets[0]
            if isinstance(tgt, gast.Name):
                return (live - {tgt.id}) | _loads(s.value)
            return live | _loads(s)
        if isinstance(s, gast.FunctionDef):
            return (live - {s.name}) | _loads(s)
        return live | _loads(s)

    block(body, set())
    return out_of
