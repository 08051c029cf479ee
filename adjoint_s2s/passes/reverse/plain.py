"""The reverse pass, plain statements: those the per-statement checks of ``Generator.block``
and ``Generator.stmt`` have nothing to say of, so that the generator goes straight to the
assignment (most statements of arithmetic code are plain).

The checks are refuse_unsupported (eval/exec, sets of differentiated values),
check_operands (an operand that is not a name), _written_through and snapshot_writes
(a change in place), check_element_write (a write into a container another name holds),
check_dict_keys (a dict key made from a differentiated value), and the `x = lst.pop()`
of an object's list field. A plain statement is

* ``x = a op b`` or ``x = op a``: an operator on names and constants, no augmented
  assignment (reads atoms, calls nothing, binds one plain name); or arithmetic on
  numbers the normaliser kept whole (passes/whole.py);
* ``x = f(a, ...)``: f a primitive of the rules named by a name or ``module.name``, its
  arguments names and constants, no keyword: f changes no argument in place and keeps
  none (see Queries.may_mutate), it is no eval, exec, set or in-place function, and no
  method that writes into its object.
"""
import builtins

import gast

from ..activity import hashable, runtime_dispatch
from ... import rules as R
from .common import _MUTATING_METHODS
from .in_place import _IN_PLACE_FUNCS, _IN_PLACE_METHODS

_ATOMS = frozenset((gast.Name, gast.Constant))
# methods a call may write into its object through (the checks look for them), and
# callees refuse_unsupported refuses or looks at
_WRITING_METHODS = _MUTATING_METHODS | _IN_PLACE_METHODS | {"add", "update", "union", "setdefault", "pop"}
_NOT_PLAIN = _IN_PLACE_FUNCS + (builtins.eval, builtins.exec, set, frozenset)
_NOT_PLAIN_IDS = frozenset(map(id, _NOT_PLAIN))  # (the objects live as long as _NOT_PLAIN)


def plain_statement(s, resolve):
    """Is s a plain statement (see the module docstring)? resolve: Queries.resolve."""
    if s.__class__ is not gast.Assign or getattr(s, "augmented", False):
        return False
    targets, e = s.targets, s.value
    if len(targets) != 1 or targets[0].__class__ is not gast.Name:
        return False
    cls = e.__class__
    if cls is gast.BinOp:
        if e.left.__class__ in _ATOMS and e.right.__class__ in _ATOMS:
            return not getattr(e, "augmented", False) and not getattr(e, "element_augmented", False)
        return getattr(e, "whole", False)  # (arithmetic on numbers kept whole: passes/whole.py)
    if cls is gast.UnaryOp:
        return e.operand.__class__ in _ATOMS or getattr(e, "whole", False)
    if cls is not gast.Call or e.keywords:
        return False
    if getattr(e, "whole", False):
        return True
    f = e.func
    if f.__class__ is gast.Attribute:
        if f.value.__class__ is not gast.Name or f.attr in _WRITING_METHODS:
            return False
    elif f.__class__ is not gast.Name:
        return False
    for a in e.args:
        if a.__class__ not in _ATOMS:
            return False
    obj = resolve(f)
    if obj is None or not hashable(obj) or obj not in R.PRIMITIVES or obj in runtime_dispatch():
        return False
    return id(obj) not in _NOT_PLAIN_IDS
