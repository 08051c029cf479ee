"""The fused function of a function whose result is of an array's kind (a NumPy scalar,
``np.mean(...)``), and the NumPy reductions its forward lines call (fastprimal.py).

A cached ``gradient`` call runs the fused function: the pair's forward lines, the test
``_rt.real_scalar(result)`` (gradient's own check, before any pullback line runs), then
the pullback's lines seeded with 1.0. These tests check it against the pair and its
pullback (``api._gradient``) bit for bit across dtypes, shapes, layouts and subclasses,
that a value gradient refuses is refused the same way, and that second order still goes
through the pair.
"""
import warnings

import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import api, fastprimal, runtime
from adjoint_s2s.rules.numpy import reductions as red

_rng = np.random.default_rng(7)
X = _rng.standard_normal((6, 4))
LABELS = _rng.integers(0, 3, size=6)


# ----- functions (in this file: the transformer reads their source) ---------------------------


def mse(W, b):
    out = np.tanh(X @ W) + b
    return np.mean((out - 1.0) ** 2)


def xent(logits):
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(logits.shape[0]), LABELS])


def reductions(x):
    return np.sum(np.max(x, 0)) + np.min(x, axis=-1).sum() + np.sum(x * x, axis=None) + np.mean(x)


def whole(x):
    return np.sum(x * x)


def rnn_like(W, b):
    # a loop: the tape, and H read for its shape only (setitem_grad's old container)
    H = np.zeros((4, 3))
    h = np.zeros(3)
    for t in range(4):
        h = np.tanh(X[t, :3] @ W + h + b)
        H[t] = h
    return np.mean((H - 0.5) ** 2)


def not_scalar(x):
    return np.sin(x)


def complex_value(x):
    return np.sum(x * 1j)


def zero_d(x):
    return np.reshape(np.sum(x * x), ())


class Sub(np.ndarray):
    pass


def same(got, want):
    """Equal bit for bit, with the same types, dtypes and shapes, all the way down."""
    assert type(got) is type(want)
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    else:
        assert repr(got) == repr(want)


def both(f, *args):
    """(the pair-based gradient, a cached call's, after the one that derives the fused)."""
    want = api._gradient(f, *args)
    ad.gradient(f, *args)
    return want, ad.gradient(f, *args)


def fused_of(f, args):
    hit = f.__adjoint_pairs__[tuple(map(type, args))]
    return hit[4] if len(hit) > 6 else None


CASES = [
    (mse, (_rng.standard_normal((4, 3)), _rng.standard_normal(3))),
    (mse, (_rng.standard_normal((4, 3)).astype(np.float32), np.float32(0.5) * np.ones(3, np.float32))),
    (mse, (np.asfortranarray(_rng.standard_normal((4, 3))), 0.25)),  # a float bias: broadcast
    (xent, (_rng.standard_normal((6, 3)),)),
    (xent, (_rng.standard_normal((6, 6))[:, ::2],)),  # strided
    (xent, (_rng.standard_normal((3, 6)).T,)),  # transposed
    (reductions, (_rng.standard_normal((5, 4)),)),
    (reductions, (_rng.standard_normal((5, 4)).astype(np.float32),)),
    (reductions, (np.arange(12.0).reshape(3, 4)[::-1],)),
    (reductions, (_rng.standard_normal((3, 1)),)),  # broadcasting shapes of one
    (rnn_like, (_rng.standard_normal((3, 3)), _rng.standard_normal(3))),
    (rnn_like, (_rng.standard_normal((3, 3)).astype(np.float32), np.float32(0.1))),
    (whole, (np.array(1.5),)),  # 0-d
    (whole, (np.zeros((0, 3)),)),  # empty
    (whole, (np.arange(6).reshape(2, 3),)),  # int
    (whole, (np.array([1 + 2j, 3 - 1j]),)),  # complex: a complex value, refused
    (whole, (_rng.standard_normal(5).view(Sub),)),  # an ndarray subclass
    (zero_d, (_rng.standard_normal(4),)),  # np.reshape's result: of the kind "other"
]


@pytest.mark.parametrize("f, args", CASES, ids=lambda v: getattr(v, "__name__", "args"))
def test_fused_matches_the_pair_bit_for_bit(f, args):
    try:
        want = api._gradient(f, *args)
    except Exception as exc:  # the same error both ways, before and after the fused is made
        for _ in range(3):
            with pytest.raises(type(exc), match=str(exc)[:40].replace("(", ".").replace(")", ".")):
                ad.gradient(f, *args)
        return
    got = both(f, *args)[1]
    same(got, want)
    if f is not zero_d and not any(isinstance(a, Sub) for a in args):  # (both: kind "other")
        assert fused_of(f, args) is not None
    # value_and_grad takes the fused function too
    value, g = ad.value_and_grad(f, argnums=tuple(range(len(args))))(*args)
    same(value, f(*args))


def test_the_fused_source_tests_the_value_and_calls_the_reductions_directly():
    args = CASES[3][1]
    both(xent, *args)
    text = ad.show_adjoint(xent, *args, fused=True)
    assert "if not _rt.real_scalar(result):" in text
    assert "_rt.np_max(logits, axis=1, keepdims=True)" in text
    assert "_rt.np_sum(exp_z, axis=1, keepdims=True)" in text
    assert "_rt.seed(" not in text and "is None" not in text
    # values the pullback reads for their shape only are let go of (memory), as in the pair
    assert "logp_i = _rt.shape_like(logp_i)" in text
    # the pair keeps NumPy's own calls (what nested gradients differentiate)
    assert "np.max(logits, axis=1, keepdims=True)" in ad.show_adjoint(xent, *args)


def test_a_value_gradient_refuses_is_refused_before_the_pullback():
    x = _rng.standard_normal(3)
    for f in (not_scalar, complex_value):
        for _ in range(3):
            with pytest.raises(TypeError, match="gradient needs a real scalar output"):
                ad.gradient(f, x)
    ad.gradient(whole, x)
    ad.gradient(whole, x)
    fused = fused_of(whole, (x,))
    value, grads = fused(x)
    assert grads is not None and value == whole(x)
    value, grads = fused_of(not_scalar, (x,))(x)
    assert grads is None and np.array_equal(value, np.sin(x))
    for make in (ad.grad, ad.value_and_grad):  # their fast paths take the fused function too
        for _ in range(3):
            with pytest.raises(TypeError, match="gradient needs a real scalar output"):
                make(not_scalar)(x)


def test_no_rewrite_where_np_is_not_numpy():
    from adjoint_s2s import fuse

    text = ad.show_adjoint(xent, *CASES[3][1]).split("\n", 1)[1]
    plain = fuse.fuse(text, "xent_pair", "array").source
    fast = fuse.fuse(text, "xent_pair", "array", numpy=True).source
    assert "_rt.np_max(" in fast and "_rt.np_max(" not in plain
    changed = [(a, b) for a, b in zip(plain.split("\n"), fast.split("\n")) if a != b]
    assert len(changed) == 3 and all(a.replace("np.", "_rt.np_", 1) == b for a, b in changed)
    shadowed = text.replace("        # z = logits", "        np = np\n        # z = logits", 1)
    assert "_rt.np_max(" not in fuse.fuse(shadowed, "xent_pair", "array", numpy=True).source


def test_second_order_goes_through_the_pair():
    x = _rng.standard_normal(3)
    both(whole, x)
    h = ad.hessian(whole, x)
    assert np.allclose(h, 2.0 * np.eye(3))
    y = _rng.standard_normal((6, 3))
    both(xent, y)
    hv = ad.hvp(xent, y, np.ones_like(y))
    eps = 1e-6
    fd = (ad.gradient(xent, y + eps)[0] - ad.gradient(xent, y - eps)[0]) / (2 * eps)
    assert np.allclose(hv, fd, atol=1e-6)


# ----- the reductions themselves ---------------------------------------------------------------


ARRAYS = [
    _rng.standard_normal((5, 4)),
    _rng.standard_normal((5, 4)).astype(np.float32),
    _rng.standard_normal((5, 4)).astype(np.float16),
    _rng.standard_normal((4, 6))[:, ::2],
    _rng.standard_normal((4, 6)).T,
    np.arange(20).reshape(4, 5),
    np.arange(20, dtype=np.uint8).reshape(4, 5),
    np.array([[1 + 2j, 3 - 1j], [0.5j, 2.0]]),
    np.array(2.5),
    np.array([[np.nan, 1.0], [-0.0, 0.0]]),
    np.zeros((0, 3)),
    _rng.standard_normal(7).view(Sub),
    np.ma.masked_array([[1.0, 2.0], [3.0, 4.0]], mask=[[0, 1], [0, 0]]),
    np.matrix([[1.0, 2.0], [3.0, 4.0]]),
    [[1.0, 2.0], [3.0, 4.0]],
    3.0,
]
CALLS = [((), {}), ((0,), {}), ((1,), {}), ((-1,), {}), ((), {"axis": 1}),
         ((), {"axis": 0, "keepdims": True}), ((), {"keepdims": True}), ((), {"keepdims": False}),
         ((None,), {"keepdims": 1}), ((), {"axis": (0, 1)}), ((5,), {})]


def outcome(fn, a, args, kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn(a, *args, **kwargs)
        except Exception as exc:
            return ("raised", type(exc), str(exc)), [str(w.message) for w in caught]
    return value, [str(w.message) for w in caught]


@pytest.mark.parametrize("name", sorted(fastprimal.FAST))
def test_each_reduction_is_numpys_bit_for_bit(name):
    ours, theirs = getattr(red, fastprimal.FAST[name]), getattr(np, name)
    for a in ARRAYS:
        for args, kwargs in CALLS:
            got, got_w = outcome(ours, a, args, kwargs)
            want, want_w = outcome(theirs, a, args, kwargs)
            assert got_w == want_w, (name, a, args, kwargs)
            if type(want) is tuple:
                assert got == want, (name, a, args, kwargs)
                continue
            assert type(got) is type(want), (name, a, args, kwargs)
            if isinstance(want, np.ma.MaskedArray):
                assert np.ma.allequal(got, want)
            elif isinstance(want, (np.ndarray, np.generic)):
                assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
                assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (name, a, args)
            else:
                assert repr(got) == repr(want)


def test_the_mean_of_a_large_float64_array_is_numpys():
    for n in (1, 7, 100, 1001, 12345):
        a = _rng.standard_normal(n) * 10.0 ** _rng.integers(-5, 5, size=n)
        assert red.np_mean(a).tobytes() == np.mean(a).tobytes()
        assert type(red.np_mean(a)) is np.float64


def test_which_calls_are_rewritten():
    import ast

    def fits(src):
        return fastprimal.fits(ast.parse(src, mode="eval").body)

    assert fits("np.sum(x)") and fits("np.max(x, 1)") and fits("np.mean(x, axis=0, keepdims=True)")
    assert fits("np.min(x, keepdims=True)")
    for src in ("np.sum(x, dtype=float)", "np.sum(x, 1, axis=0)", "np.sum(*xs)", "np.sum(x, **kw)",
                "np.sum(x, 1, None)", "np.prod(x)", "numpy.sum(x)", "np.sum()", "sum(x)",
                "np.sum(x, out=o)", "np.max(x, initial=0.0)", "np.mean(x, where=m)"):
        assert not fits(src), src
    lines = ["y = np.sum(x, axis=1) + np.max(f(lambda v: np.sum(v)), 0)"]
    fastprimal.rewrite(lines, ast.parse(lines[0]).body, lambda line, col: col)
    assert lines == ["y = _rt.np_sum(x, axis=1) + _rt.np_max(f(lambda v: np.sum(v)), 0)"]
    assert runtime.np_sum is red.np_sum and runtime.real_scalar(np.float64(1.0))


def test_fusing_reads_the_pair_code_emit_compiled():
    # fuse takes the pair's code object from the entry (the text emit compiled) instead
    # of compiling the same text again: the same codes as compiling it, names and scopes
    from adjoint_s2s import emit, fuse

    entry = emit.entry_for(rnn_like, runtime.kinds_of((np.ones((3, 3)), np.ones(3))))
    pair, pb = fuse._codes(entry.source, entry.pair_name, entry.pair_name.replace("_pair", "_pullback"), entry.code)
    again, pb_again = fuse._codes(entry.source, entry.pair_name, pb.co_name)
    assert pair is entry.code and pb.co_name.endswith("_pullback")
    for got, want in ((pair, again), (pb, pb_again)):
        assert got == want and got.co_filename != want.co_filename  # (equal but for the file)
        for attr in ("co_varnames", "co_cellvars", "co_freevars", "co_names"):
            assert getattr(got, attr) == getattr(want, attr)
