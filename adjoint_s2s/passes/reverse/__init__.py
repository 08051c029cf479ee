"""The reverse pass: a normalised function becomes a primal-plus-pullback pair.

Before (normalised, x and y floats)::

    def f(x, y):
        sin_x = math.sin(x)
        z = sin_x * y
        return z

After::

    def f_pair(x, y):
        # z = math.sin(x) * y
        sin_x = math.sin(x)
        z = sin_x * y
        def f_pullback(b_z, sin_x=sin_x, x=x, y=y):
            if type(b_z) is not float:
                b_z = _rt.real(b_z)
            # z = math.sin(x) * y
            b_sin_x = b_z * y
            b_y = b_z * sin_x
            b_x = b_sin_x * math.cos(x)
            return (None, b_x, b_y)
        return z, f_pullback

How it works:

* Each primal statement yields forward code and a *recipe*; only the statement-list
  walk reverses order. Recipes run in pullback order and track, per adjoint, whether it
  is unset (a structural zero: no code at all), surely a number, or maybe ``None``; so
  zeros are never materialised and scalar code needs no ``None`` checks.
* Primitives on numbers and arrays are inlined from the templates of ``rules``; what
  cannot be known statically (user functions, methods, operators on objects) goes through
  ``_rt`` dispatch, which returns a pullback to call.
* Values the backward pass reads are passed to the pullback as default arguments. A
  value that a later assignment overwrites (a reassigned name, anything assigned in a
  loop) is *saved* before the overwrite (a fresh name, or a tape push inside loops) and
  *restored* in the pullback after the adjoint of that assignment, so every template
  sees the value it had. Which names need this is decided after the pullback is
  generated, from the names it reads.
* Loops record their trip count; the pullback runs the reversed body that many times.

The package: ``generator.py`` drives; ``assign``, ``operators``, ``calls``, ``data``,
``mutation`` (with ``in_place``, the base of its mixin) and ``control`` hold one statement
family each (mixins of ``Generator``);
``common.py`` the adjoint bookkeeping (``Status``) and shared helpers. The pass reads the
normalised tree and the ``Activity`` of ``passes/activity.py``; it writes no tree, only
a ``Draft`` (``passes/codegen.py``) for the tape planning.
"""
from .common import Status
from .generator import Generator

__all__ = ["Generator", "Status"]
