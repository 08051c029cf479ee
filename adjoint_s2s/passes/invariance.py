"""Shift-free maxima: the max that a softmax or log-softmax subtracts has no gradient.

A log-softmax is written ``z = a - np.max(a, axis=1, keepdims=True)`` followed by
``z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))``; a softmax divides ``np.exp(z)``
by its sum; a logsumexp adds the max back: ``m + np.log(np.sum(np.exp(a - m), ...))``.
The max is there for the floating point only: whatever value c the name m held, the
result would be the same (``exp(z - c) / sum(exp(z - c)) == exp(z) / sum(exp(z))``), so
the derivative of the result with respect to m is zero, and m's adjoint (a sum over
every row, then the tie test of the max's own adjoint) is work that adds up to zero.
JAX's ``log_softmax`` stops the gradient of its max for the same reason.

``shift_free(facts)`` proves it on the normalised function and gives the names m that
activity analysis then leaves inactive (no adjoint, nothing saved for it). The proof
follows each value computed from m as a function of c, per slice along the reduced axis:

- *additive*, ``v0 + alpha * c``: m itself (alpha 1), ``a - m`` (alpha -1), the log of a
  multiplicative value, sums and differences of additive values and numbers, ``-v``;
- *multiplicative*, ``v0 * exp(beta * c)``: the exp of an additive value, products and
  quotients of multiplicative values and numbers, ``np.sum`` / ``np.mean`` of one over
  the max's own axis with ``keepdims=True`` (over any axes when the max reduced them all);
- alpha or beta 0: the value does not depend on c, and goes on as any other value.

Every read of a name that depends on c must be one of those statements, each name bound
once, by ``name = expression``, in the block of the max after the statements it reads;
anything else (a return, an index, a call, a store into it, a use in a loop after it,
a closure) leaves m active, its gradient computed as before. The arrays are NumPy arrays
(kind ARRAY): the operators are NumPy's.

Before (the bench's softmax head, normalised)::

    max_logits = np.max(logits, axis=1, keepdims=True)
    z = logits - max_logits                      # additive, alpha -1
    exp_z = np.exp(z)                            # multiplicative, beta -1
    sum_exp_z = np.sum(exp_z, axis=1, keepdims=True)   # multiplicative, beta -1
    log_sum_exp_z = np.log(sum_exp_z)            # additive, alpha -1
    logp = z - log_sum_exp_z                     # alpha 0: free of c

After: max_logits is inactive; the pullback gives ``b_logits = b_z`` and nothing more.
"""
import gast
import numpy as np

from ..kinds import ARRAY, REAL
from ..naming import names_in
from .liveness import stmt_targets
from .queries import reads

_EXTREMA = frozenset((np.max, np.min, np.amax, np.amin))
_EXTREMUM_METHODS = frozenset(("max", "min"))
_SUMS = frozenset((np.sum, np.mean))
_SUM_METHODS = frozenset(("sum", "mean"))
_NO_AXIS = ()  # the axis of a reduction over every axis


def shift_free(facts):
    """The active names m whose value no result depends on (see the module docstring)."""
    found = set()
    where = None
    if not any(s.__class__ is gast.Assign and _named_extremum(s.value) for s in facts._stmts):
        return found  # (most functions: no max or min call at all)
    for s, block, i in _statements(facts.fn.body):
        if s.__class__ is not gast.Assign or len(s.targets) != 1 or s.targets[0].__class__ is not gast.Name:
            continue
        m = s.targets[0].id
        if m not in facts.active or m not in facts._once or facts.kinds.get(m) != ARRAY:
            continue
        got = _extremum_axis(facts, s.value)
        if got is None:
            continue
        a, axis = got
        if where is None:
            where = list(_statements(facts.fn.body))
        if _proved(facts, m, a, axis, block, i, where):
            found.add(m)
    return found


def _named_extremum(value):
    """Whether value is a call of something named max, min, amax or amin."""
    if value.__class__ is not gast.Call:
        return False
    f = value.func
    name = f.attr if f.__class__ is gast.Attribute else f.id if f.__class__ is gast.Name else None
    return name in _EXTREMUM_NAMES


_EXTREMUM_NAMES = frozenset(("max", "min", "amax", "amin"))


def _statements(block):
    """(statement, its block, its index there) of every statement, in program order."""
    for i, s in enumerate(block):
        yield s, block, i
        if s.__class__ is gast.If:
            yield from _statements(s.body)
            yield from _statements(s.orelse)
        elif s.__class__ in (gast.For, gast.While):
            yield from _statements(s.body)
            yield from _statements(s.orelse)


def _own_reads(s):
    """The names statement s reads itself (a compound statement: its header only)."""
    cls = s.__class__
    if cls is gast.Assign:
        out = set(reads(s.value))
        for t in s.targets:
            out |= reads(t)
        return out
    if cls in (gast.If, gast.While):
        return set(reads(s.test))
    if cls is gast.For:
        return set(reads(s.iter)) | set(reads(s.target))
    if cls in (gast.Pass, gast.Break, gast.Continue):
        return set()
    return set(names_in(s))  # anything else: every name in it counts as a read


def _axis_of(facts, call, first_arg_is_operand):
    """The axis a reduction call reduces (an int, or _NO_AXIS for all) and its keepdims
    (True, or False for anything but a literal True); None when it is not a literal."""
    args = call.args[1:] if first_arg_is_operand else call.args
    if len(args) > 1 or any(a.__class__ is gast.Starred for a in args):
        return None
    axis_node = args[0] if args else None
    keepdims = False
    for k in call.keywords:
        if k.arg == "axis" and axis_node is None:
            axis_node = k.value
        elif k.arg == "keepdims" and k.value.__class__ is gast.Constant and k.value.value is True:
            keepdims = True
        else:
            return None
    if axis_node is None or (axis_node.__class__ is gast.Constant and axis_node.value is None):
        return _NO_AXIS, keepdims
    if (axis_node.__class__ is gast.Constant and type(axis_node.value) is int):
        return axis_node.value, keepdims
    return None


def _reduction(facts, call, functions, methods):
    """(operand name, axis, keepdims) of ``f(x, axis=.., keepdims=..)`` for f in
    functions, or of ``x.method(...)`` for a method named in methods; else None."""
    if call.__class__ is not gast.Call:
        return None
    f = call.func
    if (f.__class__ is gast.Attribute and f.attr in methods and f.value.__class__ is gast.Name
            and facts.kinds.get(f.value.id) == ARRAY):
        got = _axis_of(facts, call, False)
        return None if got is None else (f.value.id,) + got
    if call.args and call.args[0].__class__ is gast.Name and facts.resolve(f) in functions:
        got = _axis_of(facts, call, True)
        return None if got is None else (call.args[0].id,) + got
    return None


def _extremum_axis(facts, value):
    """(a, the axis) of ``np.max(a, axis=k, keepdims=True)`` (or min, or a.max(...)), a
    an active array bound once (_NO_AXIS: a max over every axis); None for anything else."""
    got = _reduction(facts, value, _EXTREMA, _EXTREMUM_METHODS)
    if got is None:
        return None
    a, axis, keepdims = got
    if a not in facts.active or facts.kinds.get(a) != ARRAY:
        return None
    if axis is not _NO_AXIS and not keepdims:
        return None  # the max lacks the axis: z = a - m would not broadcast per slice
    if a not in facts._once and (a not in facts._params or _stored(facts, a)):
        return None
    return a, axis


def _stored(facts, name):
    """Whether the function binds name anywhere (a parameter bound anew)."""
    return any(name in stmt_targets(s) for s in facts._stmts)


def _number(node):
    return node.__class__ is gast.Constant and type(node.value) in (int, float)


def _scalar(facts, node):
    """A number: it broadcasts over no axis, so a value's slices stay where they were."""
    return _number(node) or (node.__class__ is gast.Name and facts.kinds.get(node.id) == REAL)


def _proved(facts, m, a, axis, block, at, statements):
    """Whether every value computed from m is free of it by the end (module docstring)."""
    tracked = {m: ("add", 1)}  # name -> (how it depends on c, the coefficient)
    home = {m: at}  # tracked name -> its index in block
    for s, b, i in statements:
        got = _own_reads(s) & tracked.keys()
        if not got:
            continue
        if (b is not block or s.__class__ is not gast.Assign or len(s.targets) != 1
                or s.targets[0].__class__ is not gast.Name or any(i <= home[n] for n in got)):
            return False
        t = s.targets[0].id
        if t not in facts._once or t in tracked or facts.kinds.get(t) != ARRAY:
            return False
        dep = _dependence(facts, s.value, tracked, a, axis)
        if dep is None:
            return False
        if dep[1] != 0:
            tracked[t] = dep
            home[t] = i
    return True


_FREE = ("free", 0)


def _made(how, coefficient):
    return (how, coefficient) if coefficient else _FREE


def _dependence(facts, e, tracked, a, axis):
    """How expression e depends on c, given the tracked names: ("add", alpha),
    ("mul", beta) or _FREE; None when the proof does not cover it. Of the arrays free of
    c, only a (the max's operand, of the max's own axes) and numbers take part."""
    cls = e.__class__
    if cls is gast.Name:
        return tracked.get(e.id, _FREE)
    if _number(e):
        return _FREE
    if cls is gast.UnaryOp and e.op.__class__ is gast.USub:
        d = _dependence(facts, e.operand, tracked, a, axis)
        return d if d is None or d[0] != "add" else ("add", -d[1])
    if cls is gast.BinOp:
        left = _dependence(facts, e.left, tracked, a, axis)
        right = _dependence(facts, e.right, tracked, a, axis)
        if left is None or right is None:
            return None
        if left is _FREE and right is _FREE:
            return _FREE
        for side, d in ((e.left, left), (e.right, right)):
            if d is _FREE and not _scalar(facts, side) and not (side.__class__ is gast.Name and side.id == a):
                return None  # an array free of c may add axes: the slices would move
        op = e.op.__class__
        if op in (gast.Add, gast.Sub) and "mul" not in (left[0], right[0]):
            return _made("add", left[1] + right[1] if op is gast.Add else left[1] - right[1])
        if op in (gast.Mult, gast.Div) and "add" not in (left[0], right[0]):
            return _made("mul", left[1] + right[1] if op is gast.Mult else left[1] - right[1])
        return None
    if cls is gast.Call:
        f = facts.resolve(e.func)
        if (f is np.exp or f is np.log) and len(e.args) == 1 and not e.keywords:
            d = _dependence(facts, e.args[0], tracked, a, axis)
            if d is None or d is _FREE:
                return d
            want, give = ("add", "mul") if f is np.exp else ("mul", "add")
            return (give, d[1]) if d[0] == want else None
        got = _reduction(facts, e, _SUMS, _SUM_METHODS)
        if got is not None:
            x, over, keepdims = got
            d = tracked.get(x, _FREE)
            if d is _FREE or (d[0] == "mul" and (axis is _NO_AXIS or (over == axis and keepdims))):
                return d
    return None
