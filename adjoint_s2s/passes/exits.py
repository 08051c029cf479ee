"""Exits to tail position: the control-flow half of normalisation (``passes/anf.py``).

After the normaliser has flattened expressions, ``ControlFlow.function`` rewrites the
body so that every ``return``, ``break`` and ``continue`` stands in tail position: the
code after an ``if`` with one exiting branch moves into its other branch, a ``return``
inside a loop sets the result and a flag and leaves the loop (the code after the loop
runs only when the flag is down), a ``break`` or ``continue`` not in tail position sets
a flag the rest of the iteration tests. Afterwards the function ends in exactly one
``return atom``.

Before::

    for v in xs:
        if v > 0:
            return v
    return 0.0

After (the ``if`` and its test flattened first by the normaliser)::

    returned = False
    for v in xs:
        cond = v > 0
        if cond:
            result = v
            returned = True
            break
    if returned:
        (nothing: the loop has returned)
    else:
        result = 0.0
    return result
"""
import gast

from .. import templates as T


def _ends(block):
    """True if the block never falls through (ends in return/break/continue/raise)."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, (gast.Return, gast.Break, gast.Continue, gast.Raise)):
        return True
    if isinstance(last, gast.If):
        return _ends(last.body) and _ends(last.orelse)
    return False


def _lift(block):
    """Move what follows an if with one exiting branch into its other branch."""
    out = []
    for i, s in enumerate(block):
        if isinstance(s, (gast.Return, gast.Break, gast.Continue, gast.Raise)):
            out.append(s)
            return out
        if isinstance(s, gast.If):
            s.body, s.orelse = _lift(s.body), _lift(s.orelse)
            rest = block[i + 1 :]
            b_end, o_end = _ends(s.body), _ends(s.orelse)
            if b_end and o_end:
                out.append(s)
                return out
            if rest and (b_end or o_end):
                if b_end:
                    s.orelse = _lift(s.orelse + rest)
                else:
                    s.body = _lift(s.body + rest)
                out.append(s)
                return out
        elif isinstance(s, (gast.For, gast.While)):
            s.body = _lift(s.body)
        out.append(s)
    return out


def _contains(block, kinds, into_loops):
    for s in block:
        for n in _walk_stmts(s, into_loops):
            if isinstance(n, kinds):
                return True
    return False


def _walk_stmts(s, into_loops):
    """[s and the statements inside it, depth first]: an if's branches, a loop's body and
    else when into_loops (a list, not a generator: most statements are simple)."""
    cls = s.__class__
    if cls is gast.If or into_loops and (cls is gast.For or cls is gast.While):
        out = [s]
        for c in s.body + s.orelse:
            out += _walk_stmts(c, into_loops)
        return out
    return [s]


def _tail_only(block, kinds):
    """True if every statement of the given kinds stands in tail position."""
    for i, s in enumerate(block):
        last = i == len(block) - 1
        if isinstance(s, kinds) and not last:
            return False
        if isinstance(s, gast.If):
            if not last and (_contains(s.body, kinds, False) or _contains(s.orelse, kinds, False)):
                return False
            if not (_tail_only(s.body, kinds) and _tail_only(s.orelse, kinds)):
                return False
    return True


# statements with no exit in them and no block of their own (a def's returns are its own)
_PLAIN = frozenset((gast.Assign, gast.Expr, gast.Import, gast.ImportFrom, gast.Assert, gast.FunctionDef))


class ControlFlow:
    """Lower returns, break and continue so that each stands in tail position."""

    def __init__(self, namer):
        self.namer = namer
        self.retval = None
        self.returned = None

    def function(self, body):
        if body and body[-1].__class__ is gast.Return and all(s.__class__ in _PLAIN for s in body[:-1]):
            # straight-line code ending in its one return: nothing to lower (the walks
            # below would give the same statements back)
            return list(body)
        if not _ends(body):
            body = body + [gast.Return(value=T.const(None))]
        if _contains_return_in_loop(body):
            self.retval = self.namer.fresh("result")
            self.returned = self.namer.fresh("returned")
            body = [T.assign(self.returned, T.const(False))] + self.loops_return(body)
        body = _lift(body)
        body = self.loops(body)
        if not _tail_only(body, gast.Return):
            self.returned = self.returned or self.namer.fresh("returned")
            body = [T.assign(self.returned, T.const(False))] + self.flag_exits(
                body, (gast.Return,), self.returned, None
            )
        return self.single_return(body)

    def loops_return(self, block):
        """return v inside a loop -> result = v; returned = True; break (+ check after)."""
        out = []
        for s in block:
            if isinstance(s, (gast.For, gast.While)) and _contains(s.body, gast.Return, True):
                s.body = self._loop_body_returns(s.body)
                out.append(s)
                out.append(
                    gast.If(
                        test=T.name(self.returned),
                        body=[gast.Return(value=T.name(self.retval))],
                        orelse=[],
                    )
                )
                continue
            if isinstance(s, gast.If):
                s.body, s.orelse = self.loops_return(s.body), self.loops_return(s.orelse)
            out.append(s)
        return out

    def _loop_body_returns(self, block):
        out = []
        for s in block:
            if isinstance(s, gast.Return):
                if not (isinstance(s.value, gast.Name) and s.value.id == self.retval):
                    out.append(T.assign(self.retval, s.value))
                out.append(T.assign(self.returned, T.const(True)))
                out[-1].leaves_function = True  # nothing after it runs but the return
                out.append(gast.Break())
                continue
            if isinstance(s, gast.If):
                s.body = self._loop_body_returns(s.body)
                s.orelse = self._loop_body_returns(s.orelse)
            elif isinstance(s, (gast.For, gast.While)) and _contains(s.body, gast.Return, True):
                s.body = self._loop_body_returns(s.body)
                out.append(s)
                out.append(
                    gast.If(
                        test=T.name(self.returned),
                        body=[gast.Break()],
                        orelse=[],
                    )
                )
                continue
            out.append(s)
        return out

    def loops(self, block):
        out = []
        for s in block:
            if isinstance(s, gast.If):
                s.body, s.orelse = self.loops(s.body), self.loops(s.orelse)
            elif isinstance(s, (gast.For, gast.While)):
                out.extend(self.loop(s))
                continue
            out.append(s)
        return out

    def loop(self, s):
        s.body = _lift(self.loops(s.body))
        pre, post = [], []
        kinds = (gast.Break, gast.Continue)
        brk = None
        if s.orelse:
            brk = self.namer.fresh("broke")
            pre.append(T.assign(brk, T.const(False)))
        if not _tail_only(s.body, kinds) or brk:
            skip = self.namer.fresh("skip")
            brk = brk or self.namer.fresh("broke")
            body = self.flag_exits(s.body, kinds, skip, brk)
            s.body = _lift([T.assign(skip, T.const(False))] + body + [
                gast.If(test=T.name(brk), body=[gast.Break()], orelse=[])
            ])
            if not pre:
                pre.append(T.assign(brk, T.const(False)))
        # drop tail `continue`: it is the end of the iteration anyway
        s.body = _drop_tail_continue(s.body)
        if s.orelse:
            orelse = self.loops(s.orelse)
            s.orelse = []
            post.append(gast.If(test=T.name(brk), body=[], orelse=orelse))
        return pre + [s] + post

    def flag_exits(self, block, kinds, skip, brk):
        """Replace exits by flag writes; guard what follows a statement that may exit."""
        out = []
        for i, s in enumerate(block):
            if isinstance(s, kinds):
                if isinstance(s, gast.Return):
                    out.append(T.assign(self.retval_name(), s.value))
                elif isinstance(s, gast.Break):
                    out.append(T.assign(brk, T.const(True)))
                out.append(T.assign(skip, T.const(True)))
                out[-1].leaves_function = isinstance(s, gast.Return)  # (late binding's walk)
                return out
            if isinstance(s, gast.If) and (
                _contains(s.body, kinds, False) or _contains(s.orelse, kinds, False)
            ):
                s.body = self.flag_exits(s.body, kinds, skip, brk)
                s.orelse = self.flag_exits(s.orelse, kinds, skip, brk)
                out.append(s)
                rest = block[i + 1 :]
                if rest:
                    out.append(
                        gast.If(
                            test=T.name(skip),
                            body=[],
                            orelse=self.flag_exits(rest, kinds, skip, brk),
                        )
                    )
                return out
            out.append(s)
        return out

    def retval_name(self):
        if self.retval is None:
            self.retval = self.namer.fresh("result")
        return self.retval

    def single_return(self, body):
        """Turn every return into `result = v` and end with one `return result`."""
        returns = [n for s in body for n in _walk_stmts(s, True) if isinstance(n, gast.Return)]
        if len(returns) == 1 and isinstance(body[-1], gast.Return):
            return body
        name = self.retval_name()

        def rewrite(block):
            out = []
            for s in block:
                if isinstance(s, gast.Return):
                    v = s.value
                    prev = out[-1] if out else None
                    if (
                        isinstance(v, gast.Name)
                        and v.id.startswith("result")
                        and isinstance(prev, gast.Assign)
                        and isinstance(prev.targets[0], gast.Name)
                        and prev.targets[0].id == v.id
                    ):
                        prev.targets[0].id = name  # the temporary becomes the result
                        continue
                    if not (isinstance(s.value, gast.Name) and s.value.id == name):
                        a = T.assign(name, s.value)
                        if hasattr(s, "origin"):
                            a.origin = s.origin
                        out.append(a)
                    continue
                if isinstance(s, gast.If):
                    s.body, s.orelse = rewrite(s.body), rewrite(s.orelse)
                out.append(s)
            return out

        # statements flagged by `returned` keep their assignments to `result`
        body = rewrite(body)
        body.append(gast.Return(value=T.name(name)))
        return body


def _contains_return_in_loop(block):
    for s in block:
        for n in _walk_stmts(s, True):
            if isinstance(n, (gast.For, gast.While)) and _contains(n.body, gast.Return, True):
                return True
    return False


def _drop_tail_continue(block):
    if not block:
        return block
    last = block[-1]
    if isinstance(last, gast.Continue):
        return block[:-1]
    if isinstance(last, gast.If):
        last.body = _drop_tail_continue(last.body)
        last.orelse = _drop_tail_continue(last.orelse)
    return block
