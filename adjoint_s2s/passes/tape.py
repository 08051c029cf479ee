"""Save and restore planning: the pass after the reverse pass.

The reverse pass puts a ``Save`` marker before every assignment that may overwrite a
value, and a ``Restore`` marker after that assignment's adjoint code. This pass decides
which of them become code: a value is saved only if it is overwritten (assigned twice,
or once in a loop) and the pullback reads it. Outside loops a saved value gets a fresh
name (``x_saved``); inside loops it is pushed on the tape and popped in reverse order.

It reads the ``Draft`` of the reverse pass (the forward blocks, the pullback blocks, the
saves, the locals) and writes nothing back: ``plan`` returns a ``Plan`` whose
``forward`` and ``backward`` methods say what each marker renders as, and ``render``
writes the lines. Fresh names for the saved copies come from the pass's ``Namer``.

Before (``def f(x): y = x * 2.0; y = y * x; return y``: ``y`` is overwritten, and the
adjoint of the second assignment reads its old value)::

    y = x * 2.0                      # forward
    mul = y * x
    <Save y>
    y = mul
    ...
    b_mul = b_y                      # pullback
    <Restore y>
    b_y = b_mul * x
    b_x = b_mul * y

After::

    y = x * 2.0
    mul = y * x
    y_saved_1 = y
    y = mul
    ...
    b_mul = b_y
    y = y_saved_1
    b_y = b_mul * x
    b_x = b_mul * y

Inside a loop the same Save is ``_tape.append(y)`` and the Restore
``_pos -= 1; y = _tape[_pos]``. A value overwritten but never read by the pullback
(``y = x + 1.0; y = x * 3.0``) is not saved at all.
"""
from . import codegen as C
from .cleanup import blank_likes, blank_shape_reads, names_read
from .codegen import If, Loop, Release, Restore, Save


class Plan:
    """What the save and restore markers of one draft render as."""

    def __init__(self, draft, restorable, slots, tape_used, shape_only=frozenset(), index=None):
        self.draft = draft
        self.index = index  # the index of a reversed loop that reads its pops by trip
        self.restorable = frozenset(restorable)  # names whose old values are kept
        self.shape_only = frozenset(shape_only)  # ... of which only shape and dtype
        self.slots = slots  # id(Save) -> the fresh name holding its value (outside loops)
        self.tape_used = tape_used
        self.assigned_first, self.defined_at_end, self.entry = _first_assignments(draft, self.restorable, slots)

    def defined(self, m):
        """The names that surely have a value where marker m stands."""
        return self.assigned_first.get(id(m), set())

    def forward(self, m):
        """The forward lines of marker m."""
        restorable, draft = self.restorable, self.draft
        if type(m) is Save and m.name not in restorable:
            return []  # (most markers: a value never restored)
        if isinstance(m, C.ForHeader):
            name = m.alias if m.target in restorable else m.target
            return [f"for {name} in {m.it}"]
        if isinstance(m, C.Copy):
            h = m.header
            return [f"{h.target} = {h.alias}"] if h.target in restorable else []
        if isinstance(m, Save):
            if m.name not in restorable:
                return []
            if m.name in self.shape_only:
                kept = f"_rt.shape_like({m.name})"
            elif m.copies:
                kept = f"_rt.snapshot({m.name})"
            else:
                kept = m.name
            if m.in_loop:
                return [f"{draft.tape}.append({kept})"]
            if m.name in self.defined(m):
                return [f"{self.slots[id(m)]} = {kept}"]
            return []
        if isinstance(m, C.LoopInit):
            inside = {sv.name for sv in C.saves_in(m.loop.body)}
            names = sorted((inside & restorable) - self.defined(m))
            return [f"{n} = None" for n in names]
        return []

    def backward(self, m):
        """The pullback lines of marker m."""
        if type(m) is Restore and m.save.name not in self.restorable:
            return []  # (most markers: a value never restored)
        if isinstance(m, Release):
            return [f"{m.name} = None"] if m.targets & self.draft.added_to else []
        if isinstance(m, Restore):
            sv = m.save
            if sv.name not in self.restorable:
                return []
            if sv.in_loop:
                tape, pos = self.draft.tape, self.draft.pos
                return [f"{pos} -= 1", f"{sv.name} = {tape}[{pos}]"]
            if id(sv) in self.slots and sv.name in self.defined(sv):
                return [f"{sv.name} = {self.slots[id(sv)]}"]
        return []


def plan(draft, namer):
    """Which saved values the pullback reads, and where each is kept."""
    overwritten, shape_kept = _overwritten(draft)
    restorable = _restorable(draft, overwritten, shape_kept)
    probe = _probe(draft) if restorable else None
    shape_only = _shape_only(probe, restorable)
    shape_only |= _taped_for_shape(draft, probe, restorable, shape_only)
    tape_used = False
    slots = {}
    for sv in draft.saves:
        if sv.name in restorable:
            if sv.in_loop:
                tape_used = True
            else:
                slots[id(sv)] = namer.fresh(f"{sv.name}_saved")
    index = namer.fresh("_i") if tape_used else None
    return Plan(draft, restorable, slots, tape_used, shape_only, index)


def _probe(draft):
    """The pullback's lines, each restore of a saved value a comment `#restore name`."""
    probe = []
    C.render(draft.pre, 0, lambda m: [], probe)
    C.render(draft.body, 0, lambda m: [f"#restore {m.save.name}"] if type(m) is Restore else [], probe)
    probe.append(draft.ret_line)
    return probe


def _shape_only(probe, restorable):
    """The restorable names the pullback (probe: its lines) reads only for their shape
    and dtype (see cleanup.blank_likes): the tape keeps ``_rt.shape_like(x)`` (a few
    bytes) instead of x's data."""
    if not restorable:
        return set()
    read = names_read([blank_likes(line) for line in probe])
    return {n for n in restorable if n not in read}


def _taped_for_shape(draft, probe, restorable, shape_only):
    """The names saved in a loop whose values the pullback reads for their data only
    before that loop (the value at the end: its closure default, kept whole) and for their
    shape and dtype from it on (``traj[i] = x`` in a loop: ``setitem_grad(b_traj, traj,
    ...)`` reads each old traj for its shape). The tape keeps ``_rt.shape_like``, so the
    write goes into the array in place (nothing else holds it), O(1) a trip, not a copy."""
    names = {sv.name for sv in draft.saves if sv.in_loop and sv.name in restorable} - shape_only
    if not names or not any("_rt." in line and blank_likes(line) != line for line in probe):
        return set()  # (no value read for its shape alone)
    first = {}  # name -> the line of its first restore
    for i, line in enumerate(probe):
        if line.endswith(tuple(names)) and line.lstrip().startswith("#restore "):
            first.setdefault(line.lstrip()[9:], i)
    starts = {}  # the line of the outermost loop holding a restore -> the names restored in it
    for n, at in first.items():
        while at is not None and (probe[at][:1] == " " or not probe[at].startswith(("for ", "while "))):
            at = at - 1 if at > 0 else None
        if at is not None:
            starts.setdefault(at, []).append(n)
    out = set()
    for at, restored in starts.items():
        tail = probe[at:]
        # (read there for its shape: a value never read there keeps the tape as it was)
        kept = set(restored) & names_read(tail)
        out |= kept - names_read([blank_likes(line) for line in tail])
    return out


def render(draft, plan):
    """The forward and pullback lines of the draft, markers resolved by the plan."""
    fwd_lines = [f"{draft.tape} = []"] if plan.tape_used else []
    fwd_lines += [f"{n} = None" for n in plan.entry]  # (bound on some paths only: saved on all)
    C.render(draft.fwd, 0, plan.forward, fwd_lines)
    pb_lines = [f"{draft.pos} = len({draft.tape})"] if plan.tape_used else []
    C.render(draft.pre, 0, plan.backward, pb_lines)
    C.render(by_trip(draft.body, plan) if plan.tape_used else draft.body, 0, plan.backward, pb_lines)
    pb_lines.append(draft.ret_line)
    return fwd_lines, pb_lines


def by_trip(block, plan):
    """block with every reversed loop whose pops from the tape all stand in its body's top
    level (none under a branch or a nested loop: the same number each trip, K) reading
    them by trip: the loop runs over the positions of its trips' values, and moves the
    cursor once, after it. With one pop, first in the body, the loop runs over the values
    themselves::

        for _ in range(n):              for x in reversed(_tape[_pos - n:_pos]):
            _pos -= 1                       b_x = b_x * math.cos(x)
            x = _tape[_pos]     ->      _pos -= n
            b_x = b_x * math.cos(x)

    The pullback reads the tape without changing it: it can be called again."""
    out = C.Block()
    for item in block:
        if isinstance(item, If):
            out.append(If(item.test, by_trip(item.body, plan), by_trip(item.orelse, plan)))
        elif isinstance(item, Loop):
            body = by_trip(item.body, plan)
            if isinstance(item, C.RevLoop) and not any(_pops(i, plan, True) for i in item.body):
                out.extend(_loop_by_trip(item, body, plan))
            else:
                out.append(Loop(item.header, body))
        else:
            out.append(item)
    return out


def _pops(item, plan, nested_only=False):
    """Does item (a marker, or a block's item) take values from the tape? nested_only:
    only under a branch or a loop."""
    if isinstance(item, Restore):
        return not nested_only and item.save.in_loop and item.save.name in plan.restorable
    if isinstance(item, If):
        return any(_pops(i, plan) for i in item.body) or any(_pops(i, plan) for i in item.orelse)
    if isinstance(item, Loop):
        return any(_pops(i, plan) for i in item.body)
    return False


def _loop_by_trip(loop, body, plan):
    """The items replacing a reversed loop whose pops all stand in its body's top level."""
    tape, pos, n = plan.draft.tape, plan.draft.pos, loop.counter
    top = [i for i, item in enumerate(body) if _pops(item, plan)]
    if not top:
        return [Loop(loop.header, body)]
    k = len(top)
    span = n if k == 1 else f"{k} * {n}"
    first = body[top[0]].save.name
    if k == 1 and first not in names_read(C.render(body[: top[0]], 0, plan.backward, [])):
        rest = C.Block(item for i, item in enumerate(body) if i != top[0])
        header = f"for {first} in reversed({tape}[{pos} - {n}:{pos}])"
        return [Loop(header, rest), f"{pos} -= {n}"]
    new = C.Block(body)
    for r, i in enumerate(top):
        at = plan.index if r == 0 else f"{plan.index} - {r}"
        new[i] = f"{body[i].save.name} = {tape}[{at}]"
    header = f"for {plan.index} in range({pos} - 1, {pos} - 1 - {span}, -{k})"
    return [Loop(header, new), f"{pos} -= {span}"]


def _overwritten(draft):
    """(names assigned more than once, those of them only written into in place)."""
    params = set(draft.params_names)
    counts = {}
    for sv in draft.saves:
        counts[sv.name] = counts.get(sv.name, 0) + (2 if sv.in_loop and not sv.invariant else 1)
    overwritten = {n for n, c in counts.items() if c + (1 if n in params else 0) >= 2}
    # containers changed only by `name[i] = v` after their first binding: a pullback
    # that reads them only for their shape (unbroadcast's `like`, setitem_grad's old
    # container) does not need the old values, so they are not saved, and the
    # forward pass can write in place (runtime.setitem)
    rebinds = {}
    for sv in draft.saves:
        if not sv.keeps_shape:
            rebinds[sv.name] = rebinds.get(sv.name, 0) + (2 if sv.in_loop else 1)
    shape_kept = {n for n in overwritten if rebinds.get(n, 0) + (1 if n in params else 0) <= 1}
    return overwritten, shape_kept


def _restorable(draft, overwritten, shape_kept):
    """The overwritten names the pullback reads. A branch that only restores values
    still reads its test, so restores count as code: iterate to a fixpoint."""
    restorable = set()
    if not overwritten:
        return restorable  # (only overwritten names are restorable)
    for _ in range(4):
        def probe_marker(m, keep=frozenset(restorable)):
            return ["pass"] if isinstance(m, Restore) and m.save.name in keep else []

        probe = []
        C.render(draft.body, 0, probe_marker, probe)
        probe = [blank_shape_reads(line, shape_kept) for line in probe] if shape_kept else probe
        read = names_read(probe)
        needed = read & (draft.locals | set(draft.params_names))
        new = {n for n in needed if n in overwritten}
        if new == restorable:
            break
        restorable = new
    return restorable


def _first_assignments(draft, restorable, slots):
    """For each Save marker: its name if it surely has a value at that point; for each
    LoopInit: which of its loop's saved names surely have one; the names surely bound at
    the end of the forward pass; and the restorable names bound on some paths only where
    a marker saves them (`if c: a = x * x` then `a = 3.0 * x`), which the forward pass
    binds to None at its entry so that their old values are saved and restored on every
    path (skipped, the pullback would read the later value: a wrong gradient).

    A branch or loop body adds to a layer of its own over the enclosing names (what both
    branches add goes to the enclosing layer), and a marker keeps only the names it is
    asked about: linear in the length of the function, where a copy of every name
    defined so far per marker was quadratic."""
    known = set(draft.params_names) | set(draft.freevars)
    invariant = {sv.name for sv in draft.saves if sv.invariant}
    walk = _Bindings(restorable, slots, invariant - {sv.name for sv in draft.saves if not sv.invariant})
    top = _Scope(None, set(known))
    walk.block(draft.fwd, top)
    if walk.entry:  # again, with those bound from the entry on
        walk.out = {}
        top = _Scope(None, known | walk.entry)
        walk.block(draft.fwd, top)
    return walk.out, top.added, sorted(walk.entry)


class _Bindings:
    """The walk of _first_assignments over the forward draft's blocks."""

    def __init__(self, restorable, slots, invariant):
        self.restorable, self.slots, self.invariant = restorable, slots, invariant
        self.out, self.entry = {}, set()
        self.first = set()  # Saves of a name bound on no path before: nothing to save

    def block(self, block, scope):
        for item in block:
            if type(item) is str:  # most items: a line
                if " = " in item and not item.startswith("#"):
                    head = item[:item.find(" = ")]
                    if "," not in head:
                        head = head.strip()
                        if head.isidentifier():
                            scope.added.add(head)
                        continue
                    for head in head.split(","):
                        if head.strip().isidentifier():
                            scope.added.add(head.strip())
            elif isinstance(item, C.LoopInit):
                inside = {sv.name for sv in C.saves_in(item.loop.body)} if item.loop is not None else set()
                self.out[id(item)] = got = {n for n in inside if scope.has(n)}
                self.entry.update(n for n in inside - got if n in self.restorable and scope.may(n))
                # it gives the loop's saved names a value (but a number the same every
                # trip, never taped: bound by the loop only if it runs)
                scope.added.update(inside - self.invariant)
            elif isinstance(item, Save):
                self.save(item, scope)
            elif isinstance(item, If):
                s1, s2 = _Scope(scope), _Scope(scope)
                self.block(item.body, s1)
                self.block(item.orelse, s2)
                scope.added.update(s1.added & s2.added)
                scope.maybe.update(s1.added ^ s2.added, s1.maybe, s2.maybe)
            elif isinstance(item, Loop):
                inner = _Scope(scope)
                self.block(item.body, inner)
                scope.maybe.update(inner.added, inner.maybe)

    def save(self, item, scope):
        name, key = item.name, id(item)
        self.out[key] = got = {name} if scope.has(name) and key not in self.first else set()
        if not got and name in self.restorable:
            if scope.may(name):
                self.entry.add(name)
            else:
                self.first.add(key)  # (None, from the entry)
        elif got and key in self.slots and not item.in_loop:
            scope.added.add(self.slots[key])  # (`a_saved = a`: the slot is bound)
        scope.added.add(name)


class _Scope:
    """The names bound in one block, over those of the blocks around it."""

    def __init__(self, parent, added=None):
        self.parent = parent
        self.added = set() if added is None else added
        self.maybe = set()  # the names bound on some paths through the block only

    def has(self, name):
        scope = self
        while scope is not None:
            if name in scope.added:
                return True
            scope = scope.parent
        return False

    def may(self, name):
        scope = self
        while scope is not None:
            if name in scope.added or name in scope.maybe:
                return True
            scope = scope.parent
        return False
