"""Item writes whose source or target Python handles by making a copy, made explicit
before normalisation.

* ``a[::-1] = a``, ``a[:] = a``, ``a[[3, 2, 1, 0]] = a``, ``L[::-1] = L``: a container
  written with itself. NumPy copies an overlapping source before it writes, and a list
  assigned a slice of itself copies it first; the reverse pass took the source and the
  target for two arrays, and the gradient came out wrong (the value was right). The
  source becomes ``a[:]``: the same values, read before the write, as Python reads
  them (a view of an array, which NumPy's overlap handling copies; a copy of a list).
* ``a[[0, 1]][0] = v``, ``a[a > 1.5][0] = v``: fancy and boolean indexing make a copy,
  so the write goes into a temporary and ``a`` does not change. The normaliser's copy on
  write (``t = a[[0, 1]]; t[0] = v; a[[0, 1]] = t``, right for a list's item or an
  array's view) would change ``a``: refused, with the way out.
"""
import gast

from ..errors import UnsupportedSyntaxError

_SLICES = (gast.Slice,)
_COPYING_INDEXES = (gast.List, gast.ListComp, gast.Compare)


def rewrite_self_writes(fn_node, filename):
    """Rewrite `c[index] = c` in place (see the module docstring); raise for a write into
    a copy made by fancy or boolean indexing."""
    for node in _statements(fn_node.body):
        cls = node.__class__
        if cls is gast.Assign:
            targets = node.targets
        elif cls is gast.AugAssign:
            targets = [node.target]
        else:
            continue
        for t in targets:
            if t.__class__ is not gast.Subscript:
                continue
            _refuse_write_into_copy(t, filename)
            base = t.value
            if (cls is gast.Assign and base.__class__ is gast.Name and node.value.__class__ is gast.Name
                    and node.value.id == base.id and _copies_source(t.slice)):
                node.value = gast.Subscript(
                    value=node.value, slice=gast.Slice(lower=None, upper=None, step=None), ctx=gast.Load())
                gast.copy_location(node.value, t)


def _statements(block):
    """The statements of block and of the blocks they hold (a local def's too: its body
    is differentiated where it is inlined)."""
    for s in block:
        yield s
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(s, field, None)
            if type(inner) is list:
                yield from _statements(inner)
        for h in getattr(s, "handlers", None) or ():
            yield from _statements(h.body)


def _copies_source(index):
    """Whether an index is one a list or an array takes a sequence for (a slice, a list of
    positions, a tuple holding a slice): not a dict's key, whose value may be the dict."""
    if index.__class__ in _SLICES or index.__class__ is gast.List:
        return True
    return index.__class__ is gast.Tuple and any(e.__class__ in _SLICES for e in index.elts)


def _refuse_write_into_copy(target, filename):
    inner = target.value
    while inner.__class__ in (gast.Subscript, gast.Attribute):
        if inner.__class__ is gast.Subscript and inner.slice.__class__ in _COPYING_INDEXES:
            raise UnsupportedSyntaxError(
                "a write into the result of fancy or boolean indexing (`a[[0, 1]][0] = v`, "
                "`a[a > 0][0] = v`): NumPy makes a copy there, so the write does not reach `a`",
                filename, getattr(target, "lineno", 0), None,
                "index once (`a[[0, 1][0]] = v`, `a[np.flatnonzero(a > 0)[0]] = v`), or keep the "
                "copy in a name and write into that")
        inner = inner.value
