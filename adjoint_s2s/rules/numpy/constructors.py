"""Rules of NumPy's constructors and conversions (array, linspace, ``.item()``,
``.tolist()``), of ndarray methods, and the NumPy functions that carry no gradient."""
import numpy as np

from .. import array_method, nondifferentiable_builtin
from .base import _CURRENT, _np, np_fit, rule
from .elementwise import _has_zero
from .shape import _fill_from_lists, _integer_dtype, _item_index, _list_dtypes, _logspace_base, _space_weights, np_linspace_adjoint

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_arange_adjoint",
    "np_array_adjoint",
    "np_full_like_adjoint",
    "np_geomspace_adjoint",
    "np_item_adjoint",
    "np_logspace_adjoint",
    "np_logspace_base_adjoint",
    "np_tolist_adjoint",
]


# =====================================================================================
# Constructors and conversions
# =====================================================================================
_CURRENT[0] = "Constructors and conversions"


def np_array_adjoint(g, obj):
    """np.array / np.asarray: the adjoint goes back to the (nested) list structure."""
    return np_fit(g, obj)


rule(np.array, "object, dtype=None", adjoints={"object": "_rt.np_array_adjoint(g, object)"},
     note="back to the (nested) list structure")


rule(np.asarray, "a, dtype=None", adjoints={"a": "_rt.np_array_adjoint(g, a)"})


rule(np.asanyarray, "a, dtype=None", adjoints={"a": "_rt.np_array_adjoint(g, a)"})


rule(np.copy, "a", "1")


rule(_np("astype"), "x, dtype", "1", None,
     note="the gradient keeps the input's dtype; none to an integer or bool dtype (a cast)")


rule(np.full, "shape, fill_value, dtype=None", None, "1", None)


_SPACE = "num=50, endpoint=True, retstep=False, dtype=None, axis=0"


_SPACE_ARGS = "num, endpoint, retstep, dtype, axis"


rule(np.linspace, "start, stop, " + _SPACE, kind="other", adjoints={
    "start": f"_rt.np_linspace_adjoint(g, start, stop, {_SPACE_ARGS}, 0)",
    "stop": f"_rt.np_linspace_adjoint(g, start, stop, {_SPACE_ARGS}, 1)",
}, note="to start and stop (arrays too, any axis; retstep's step too); none with an integer dtype")


def np_arange_adjoint(g, start, stop=None, step=None, dtype=None, which=0):
    """arange(start, stop, step) = start + i·step (its length is piecewise constant):
    start gets Σ g, step Σ i·g, stop nothing. arange(n) counts: no gradient."""
    if g is None or stop is None or _integer_dtype(dtype):
        return None
    g = np.asarray(g)
    if which == 0:
        return np_fit(np.sum(g), start)
    if step is None:
        return None
    return np_fit(np.sum(g * np.arange(g.shape[0])), step)


_arange = rule(np.arange, "start, stop=None, step=None, dtype=None", adjoints={
    "start": "_rt.np_arange_adjoint(g, start, stop, step, dtype, 0)",
    "step": "_rt.np_arange_adjoint(g, start, stop, step, dtype, 2)",
}, note="start + i·step: to start and step (arange(n) counts: none)")
_arange.kwonly = frozenset()  # its text signature says dtype is keyword-only; NumPy takes
# it in position too (np.arange(0, 3, 0.5, int))


_LOG = "num, endpoint, base, dtype, axis"


def np_logspace_adjoint(g, start, stop, ans, num=50, endpoint=True, base=10.0, dtype=None,
                        axis=0, which=0):
    """logspace = base**linspace(start, stop): linspace's adjoint of g·ans·log(base)."""
    if g is None or _integer_dtype(dtype):
        return None
    gl = np.asarray(g) * np.conj(np.asarray(ans) * np.log(_logspace_base(base, ans, axis)))
    return np_linspace_adjoint(gl, start, stop, num, endpoint, False, None, axis, which)


def np_logspace_base_adjoint(g, start, stop, ans, num=50, endpoint=True, base=10.0,
                             dtype=None, axis=0):
    """∂(base**u)/∂base = u·base**u/base, u the linspace exponents."""
    if g is None or _integer_dtype(dtype):
        return None
    u = np.linspace(start, stop, int(num), endpoint=endpoint, axis=axis)
    b = _logspace_base(base, ans, axis)
    return np_fit(np.asarray(g) * np.conj(u * np.asarray(ans) / b), base)


rule(np.logspace, "start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0", adjoints={
    "start": f"_rt.np_logspace_adjoint(g, start, stop, ans, {_LOG}, 0)",
    "stop": f"_rt.np_logspace_adjoint(g, start, stop, ans, {_LOG}, 1)",
    "base": f"_rt.np_logspace_base_adjoint(g, start, stop, ans, {_LOG})",
}, note="to start, stop and base")


nondifferentiable_builtin(_integer_dtype, reason="it tests a dtype")


nondifferentiable_builtin(_has_zero, reason="it tests for zeros")


_GEO = "num, endpoint, dtype, axis"


def np_geomspace_adjoint(g, start, stop, ans, num=50, endpoint=True, dtype=None, axis=0,
                         which=0):
    """geomspace = start·(stop/start)**t: ∂/∂start = ans·(1 - t)/start, ∂/∂stop = ans·t/stop."""
    if g is None or _integer_dtype(dtype):
        return None
    x = stop if which else start
    g, ax, w = _space_weights(g, num, endpoint, axis, which)
    xe = np.expand_dims(np.asarray(x), ax) if np.ndim(x) else np.asarray(x)
    return np_fit(np.sum(g * np.conj(np.asarray(ans) * w / xe), axis=ax), x)


rule(np.geomspace, "start, stop, num=50, endpoint=True, dtype=None, axis=0", adjoints={
    "start": f"_rt.np_geomspace_adjoint(g, start, stop, ans, {_GEO}, 0)",
    "stop": f"_rt.np_geomspace_adjoint(g, start, stop, ans, {_GEO}, 1)",
})


def np_full_like_adjoint(g, fill_value, ans):
    """np.full_like(a, v): v gets Σ g, none when the result holds integers or bools (a's
    dtype, or dtype=): v was cast, as by int(). (A zero, not None: inlined templates
    of array rules add to what they give.)"""
    if np.asarray(ans).dtype.kind in "biu":
        return np_fit(np.zeros(np.shape(fill_value)), fill_value)
    return np_fit(g, fill_value)


rule(np.full_like, "a, fill_value, dtype=None",
     adjoints={"fill_value": "_rt.np_full_like_adjoint(g, fill_value, ans)"},
     note="to fill_value (none into integers or bools: a cast)")


# ----- array methods ------------------------------------------------------------------------
def _ndarray_reshape(a, *shape, order="C"):
    """``a.reshape(*shape)``: the key of the rule for the method."""
    return a.reshape(*shape, order=order)


def _ndarray_transpose(a, *axes):
    """``a.transpose(*axes)``: the key of the rule for the method."""
    return a.transpose(*axes)


def _ndarray_item(a, *args):
    """``a.item(*args)``: the key of the rule for the method."""
    return a.item(*args)


def _ndarray_tolist(a):
    """``a.tolist()``: the key of the rule for the method."""
    return a.tolist()


_CURRENT[0] = "Constructors and conversions"


def np_tolist_adjoint(g, a):
    """a.tolist() is a (nested) list of a's elements: the list's adjoint as an array
    (None entries are zeros)."""
    if g is None:
        return None
    a = np.asarray(a)
    out = np.zeros(a.shape, np.result_type(a.dtype, float, *_list_dtypes(g)))
    _fill_from_lists(out, g)
    return np_fit(out, a)


rule(_ndarray_tolist, "a", path="ndarray.tolist", kind="other",
     adjoints={"a": "_rt.np_tolist_adjoint(g, a)"}, note="the list's adjoint as an array")


def np_item_adjoint(g, a, idx):
    """a.item(*idx) reads one element: g at that position, zeros elsewhere."""
    if g is None:
        return None
    a = np.asarray(a)
    out = np.zeros(a.size, np.result_type(a.dtype, np.asarray(g).dtype, float))
    out[_item_index(a, idx)] = g
    return np_fit(out.reshape(a.shape), a)


rule(_ndarray_item, "a", path="ndarray.item", kind="other",
     adjoints={"a": "_rt.np_item_adjoint(g, a, ())"}, note="x.item(), x.item(i), x.item(i, j, ...)")


_ITEM = ["i0", "i1", "i2", "i3", "i4", "i5"]


for _n in range(1, len(_ITEM) + 1):
    _i = ", ".join(_ITEM[:_n])
    rule(_ndarray_item, "a, " + _i, path="ndarray.item", kind="other",
         adjoints={"a": f"_rt.np_item_adjoint(g, a, ({_i},))"})


_CURRENT[0] = "Shape and indexing"


_DIMS = ["d0", "d1", "d2", "d3", "d4", "d5", "d6"]


rule(_ndarray_reshape, "a, shape", path="ndarray.reshape",
     adjoints={"a": "_rt.np_reshape_like(g, a)"},
     note="x.reshape(shape) and x.reshape(d0, d1, ...)")


rule(_ndarray_transpose, "a", path="ndarray.transpose",
     adjoints={"a": "_rt.np_fit(np.transpose(g), a)"},
     note="x.transpose(), (axes) and (i, j, ...)")


rule(_ndarray_transpose, "a, axes", path="ndarray.transpose",
     adjoints={"a": "_rt.np_fit(_rt.np_untranspose(g, axes), a)"})


for _n in range(2, len(_DIMS) + 1):
    _d = ", ".join(_DIMS[:_n])
    rule(_ndarray_reshape, "a, " + _d, path="ndarray.reshape",
         adjoints={"a": "_rt.np_reshape_like(g, a)"})
    rule(_ndarray_transpose, "a, " + _d, path="ndarray.transpose",
         adjoints={"a": f"_rt.np_fit(_rt.np_untranspose(g, ({_d})), a)"})


for _name, _fn in [
    ("sum", np.sum),
    ("mean", np.mean),
    ("prod", np.prod),
    ("max", np.max),
    ("min", np.min),
    ("std", np.std),
    ("var", np.var),
    ("cumsum", np.cumsum),
    ("cumprod", np.cumprod),
    ("dot", np.dot),
    ("reshape", _ndarray_reshape),
    ("transpose", _ndarray_transpose),
    ("ravel", np.ravel),
    ("flatten", np.ravel),
    ("squeeze", np.squeeze),
    ("swapaxes", np.swapaxes),
    ("clip", np.clip),
    ("conj", np.conjugate),
    ("conjugate", np.conjugate),
    ("astype", _np("astype")),
    ("copy", np.copy),
    ("trace", np.trace),
    ("diagonal", np.diagonal),
    ("repeat", np.repeat),
    ("take", np.take),
    ("item", _ndarray_item),
    ("tolist", _ndarray_tolist),
]:
    if _fn is not None:
        array_method(_name, _fn)


# =====================================================================================
# No gradient
# =====================================================================================
nondifferentiable_builtin(
    np.shape, np.ndim, np.size, np.result_type, np.iscomplexobj, np.isrealobj,
    np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like,
    np.eye, np.identity, np.tri,
    np.indices, np.diag_indices, np.tril_indices, np.triu_indices,
    np.argmax, np.argmin, np.argsort, np.argwhere, np.nonzero, np.flatnonzero,
    np.nanargmax, np.nanargmin, np.searchsorted, np.digitize, np.count_nonzero,
    np.signbit, np.floor, np.ceil, np.round, np.around, np.rint,
    np.trunc, np.fix, np.floor_divide,
    np.isnan, np.isinf, np.isfinite, np.isneginf, np.isposinf, np.isclose, np.allclose, np.array_equal,
    np.iscomplex, np.isreal,
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
    np.any, np.all,
    reason="its result is constant, integer-valued or boolean",
)
# shapes only: the adjoint helpers of average and logsumexp call it, and are
# differentiated again at second order (np.broadcast hands out the elements: iteration.py)
nondifferentiable_builtin(np.broadcast_shapes, reason="it computes a shape")


# ----- numpy scalar types used as conversions ----------------------------------------------
nondifferentiable_builtin(  # np.int64(v), np.uint8(v), np.bool_(v): as int(v) and bool(v)
    *sorted({t for t in np.sctypeDict.values() if np.dtype(t).kind in "biu"}, key=str),
    reason="it converts to an integer or a bool",
)
for _scalar in (np.float64, np.float32, np.complex128):
    rule(_scalar, "x", "1", kind="same", path=f"np.{_scalar.__name__}",
         section="Constructors and conversions")
