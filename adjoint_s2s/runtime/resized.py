"""Loops over a dict or a set whose body writes into it: Python's RuntimeError kept.

``for k in d: d[key] = v`` (or ``d.update(...)``, ``s.add(v)`` in a loop over a set) raises "dictionary changed size during iteration" in Python
when a write adds a key and the loop then asks for its next key (the loop leaving by
``break`` or ``return`` right after the write does not). The generated code writes into a
copy (copy on write, or a private copy for a value without a gradient), so the loop's own
iterator would never see the change: the loop goes over ``loop_writing(...)`` instead,
whose iterator checks, at each next key as Python's does, the size of the dict the loop's
name holds by then.
"""
import sys

from .user_classes import loop_writes_list


def loop_writing(items, obj, name):
    """What a loop over the variable `name` (holding obj; items: obj itself, _rt.seq(obj)
    or the items of a view of it) whose body writes into it goes over: a list's loop is
    refused (loop_writes_list), a dict's or a set's items are checked as they are handed
    out (SizedLoop)."""
    loop_writes_list(obj, name)
    if isinstance(obj, (dict, set)):
        return SizedLoop(items, len(obj), name)
    return items


class SizedLoop(list):
    """The items of a dict or a set a loop goes over, checked as they are handed out: when
    the variable `name` of the frame that loops holds one of another size by then, Python's
    RuntimeError (the backward pass indexes the list as it is)."""

    __slots__ = ("size", "name")

    def __init__(self, items, size, name):
        list.__init__(self, items)
        self.size = size
        self.name = name

    def __iter__(self):
        return _checked(self, sys._getframe(1))


def _checked(keys, frame):
    first = True
    for k in list.__iter__(keys):
        if not first:
            _same_size(keys, frame)
        first = False
        yield k
    _same_size(keys, frame)  # (the call of next() that ends the loop checks it too)


def _same_size(keys, frame):
    now = frame.f_locals.get(keys.name)
    if isinstance(now, (dict, set)) and len(now) != keys.size:
        raise RuntimeError(f"{'dictionary' if isinstance(now, dict) else 'Set'} changed size during iteration")
