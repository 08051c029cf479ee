"""max/min by position (rules/numpy/extremum.py): the primal ``np_max``/``np_min`` of a
fused function reads each row's extremum where argmax/argmin finds it, and records the
positions as a hint that the adjoint checks before it uses them.

Each is checked bit for bit against what it replaces: the primal against ``np.max`` and
``np.min`` (value, type, dtype, shape), the adjoints against the same call with no hint
(the comparison ``a == ans``, as before) and against the general tie-splitting formula,
over dtypes, ties (-0.0 and 0.0 among them), NaN, infinities, axes, keepdims, layouts,
subclasses and empty arrays; and the gradients of softmax cross-entropy against finite
differences.
"""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s import api
from adjoint_s2s.rules.numpy import extremum as ext
from adjoint_s2s.runtime.accumulate import acc as rt_acc

_rng = np.random.default_rng(2100000)


@pytest.fixture(params=[True, False], ids=["every-size", "default-size"])
def position_min(request, monkeypatch):
    """Both the default thresholds and ones that take every array by position."""
    if request.param:
        monkeypatch.setattr(ext, "_POSITION_MIN", 1)
        monkeypatch.setattr(ext, "_POSITION_ROWS", 1)
        monkeypatch.setattr(ext, "_POSITION_ROW", 1 << 30)
    monkeypatch.setattr(ext, "_HINT", [None])
    return request.param


def _tied(shape, dtype=np.float64):
    """Rows with ties at their max and at their min, and rows without."""
    a = _rng.standard_normal(shape).astype(dtype)
    flat = a.reshape(-1, shape[-1])
    for r in range(0, flat.shape[0], 3):
        flat[r, -1] = flat[r].max()  # a tie at the max (first and last)
        flat[r, 0] = flat[r].min()
    return a


def _zeros(shape):
    a = -np.abs(_rng.standard_normal(shape))
    flat = a.reshape(-1, shape[-1])
    flat[0, 1] = 0.0  # a unique 0.0 maximum
    flat[1, 0], flat[1, 2] = -0.0, 0.0  # -0.0 and 0.0 tie
    flat[2, 3] = -0.0  # a unique -0.0 maximum
    return a


def _special(shape):
    a = _rng.standard_normal(shape)
    flat = a.reshape(-1, shape[-1])
    flat[0, 2] = np.nan
    flat[1, :] = -np.inf
    flat[2, 1] = np.inf
    flat[3, :] = np.inf
    flat[4, 0] = -np.inf
    return a


def _arrays():
    out = []
    for shape in [(40, 64), (7, 5), (3, 4, 200), (4096,), (1, 3000), (3000, 1)]:
        out.append(_rng.standard_normal(shape))
        out.append(_rng.standard_normal(shape).astype(np.float32))
    out += [
        _tied((50, 60)), _tied((50, 60), np.float32), _tied((6, 7)),
        _zeros((40, 70)), _zeros((5, 8)), _special((40, 60)), _special((6, 5)),
        np.full((30, 80), 1.5),  # every row one value
        _rng.standard_normal((50, 130))[:, ::2],  # strided
        _rng.standard_normal((70, 50)).T,  # transposed
        np.asfortranarray(_rng.standard_normal((60, 40))),
        _rng.standard_normal((50, 60)).astype(np.float16),
        (_rng.standard_normal((40, 60)) + 1j * _rng.standard_normal((40, 60))),
        _rng.integers(0, 5, (40, 60)).astype(np.int64),
        _rng.standard_normal((40, 60)).astype(">f8"),
        np.zeros((0, 5)), np.zeros((5, 0)), np.zeros((0,)),
    ]
    return out


ARRAYS = _arrays()
CALLS = [(None, False), (None, True), (0, False), (0, True), (1, True), (1, False),
         (-1, True), (-1, False), (2, True), (-2, False)]


class Sub(np.ndarray):
    pass


def _same(got, want):
    assert type(got) is type(want)
    if isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    else:
        assert repr(got) == repr(want)


def _outcome(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # the same exception as NumPy's
        return ("raised", type(exc), str(exc))


def _calls(a):
    for axis, keepdims in CALLS:
        if axis is not None and (a.ndim == 0 or not -a.ndim <= axis < a.ndim):
            continue
        yield axis, keepdims


# ----- the primal -------------------------------------------------------------------------------


@pytest.mark.parametrize("i", range(len(ARRAYS)))
def test_the_primal_is_numpys_bit_for_bit(i, position_min):
    a = ARRAYS[i]
    for a in (a, a.view(Sub)):
        for axis, keepdims in _calls(a):
            for ours, theirs in ((ext.np_max, np.max), (ext.np_min, np.min)):
                got = _outcome(ours, a, axis, keepdims=keepdims)
                want = _outcome(theirs, a, axis, keepdims=keepdims)
                if type(want) is tuple:
                    assert got == want
                else:
                    _same(got, want)


def test_the_primal_is_found_by_position_only_for_many_short_rows(monkeypatch):
    monkeypatch.setattr(ext, "_HINT", [None])
    for shape in [(32, 64), (1, 5000), (3000, 1), (10, 2000), (64, 10)]:
        ext.np_max(_rng.standard_normal(shape), -1)
        assert ext._HINT[0] is None, shape
    for shape in [(64, 32), (1000, 100), (5000, 2), (3, 40, 1024)]:
        m = ext.np_min(_rng.standard_normal(shape), -1)
        assert ext._HINT[0][0]() is m, shape


def test_the_primal_is_found_by_position_only_where_it_is_exact(monkeypatch):
    monkeypatch.setattr(ext, "_HINT", [None])
    a = _rng.standard_normal((100, 50))
    m = ext.np_max(a, 1, keepdims=True)
    assert ext._HINT[0][0]() is m and ext._HINT[0][2] == a.shape
    for b in (_zeros((100, 50)), _special((100, 50)), a.astype(np.float16), a[:, ::2].copy().T):
        ext._HINT[0] = None
        ext.np_max(b, -1)
        assert ext._HINT[0] is None
    ext.np_min(a, 0)  # not the last axis
    ext.np_max(a, None)
    ext.np_max(a, 1, keepdims=1)  # (only True and False themselves)
    assert ext._HINT[0] is None


# ----- the adjoints -----------------------------------------------------------------------------


def _general(acc, g, a, ans, axis, keepdims):
    """acc + the tie-splitting formula, computed the long way."""
    a_ = np.asarray(a)
    full = ext._keep(ans, a_.shape, axis, keepdims)
    mask = a_ == full
    if np.isnan(np.asarray(ans)).any():
        mask = mask | (np.isnan(a_) & np.isnan(full))
    count = np.sum(mask, axis=ext._axes(axis, a_.ndim), keepdims=True)
    part = ext.np_fit((ext._keep(g, a_.shape, axis, keepdims) / count) * mask, a)
    return part if acc is None else rt_acc(np.array(acc), part)


def _adjoints(acc, g, a, ans, axis, keepdims, hint):
    """(acc_extremum_adjoint, np_extremum_adjoint) with the hint as given."""
    ext._HINT[0] = hint
    one = ext.acc_extremum_adjoint(None if acc is None else acc.copy(), g, a, ans, axis, keepdims)
    ext._HINT[0] = hint
    two = ext.np_extremum_adjoint(g, a, ans, axis, keepdims)
    return one, two


@pytest.mark.parametrize("i", range(len(ARRAYS)))
def test_the_adjoints_with_a_hint_are_those_without_bit_for_bit(i, position_min):
    a0 = ARRAYS[i]
    if a0.size == 0:
        return
    for a in (a0, a0.view(Sub)):
        for axis, keepdims in _calls(a):
            for reduce in (ext.np_max, ext.np_min):
                ext._HINT[0] = None
                ans = reduce(a, axis, keepdims=keepdims)
                hint = ext._HINT[0]
                g = _rng.standard_normal(np.shape(ans))
                if np.iscomplexobj(a):
                    g = g + 1j * _rng.standard_normal(np.shape(ans))
                g = g if np.ndim(ans) else complex(g) if np.iscomplexobj(g) else float(g)
                acc = _rng.standard_normal(a.shape).astype(a.dtype) if a.dtype.kind == "f" else None
                if a.dtype.kind == "f" and np.ndim(ans):
                    g = g.astype(a.dtype)
                with_hint = _adjoints(acc, g, a, ans, axis, keepdims, hint)
                without = _adjoints(acc, g, a, ans, axis, keepdims, None)
                general = _general(acc, g, a, ans, axis, keepdims)
                for got in with_hint + without:
                    _same(got, with_hint[0] if got is with_hint[1] and acc is None else got)
                _same(with_hint[0], without[0])
                _same(with_hint[1], without[1])
                np.testing.assert_array_equal(with_hint[0], general)
                if not np.isnan(np.asarray(ans)).any() and np.asarray(a).dtype.kind == "f":
                    # unique extrema: bit for bit the general formula
                    uniq = np.all(np.sum(a == ext._keep(ans, a.shape, axis, keepdims),
                                         axis=ext._axes(axis, a.ndim)) == 1)
                    if uniq and acc is not None:
                        assert with_hint[0].tobytes() == np.asarray(general).tobytes()


def test_the_hint_gives_the_positions_of_unique_extrema_only(monkeypatch):
    monkeypatch.setattr(ext, "_HINT", [None])
    for a in (_rng.standard_normal((64, 40)), _rng.standard_normal((5, 16, 70)).astype(np.float32)):
        for reduce, arg in ((ext.np_max, np.argmax), (ext.np_min, np.argmin)):
            for keepdims in (True, False):
                ans = reduce(a, -1, keepdims=keepdims)
                pos = ext._unique_positions(a, ans, -1, keepdims)
                want = np.ravel_multi_index(
                    np.indices(a.shape[:-1]).reshape(a.ndim - 1, -1).tolist()
                    + [arg(a, -1).reshape(-1).tolist()], a.shape)
                assert np.array_equal(pos, want)
                assert ext._unique_positions(a, ans, -2, keepdims) is None  # another axis
    a = _tied((80, 60))
    ans = ext.np_max(a, 1, keepdims=True)
    assert ext._HINT[0][0]() is ans and ext._unique_positions(a, ans, 1, True) is None
    a = _zeros((80, 70))
    a[:, -1] = 1.0
    a[1, 0], a[1, 2] = 1.0, 1.0  # a tie besides the zeros
    ans = ext.np_max(a, 1, keepdims=True)
    assert ext._unique_positions(a, ans, 1, True) is None


def test_a_hint_for_other_arrays_is_checked_not_trusted(monkeypatch):
    monkeypatch.setattr(ext, "_HINT", [None])
    a = _rng.standard_normal((64, 40))
    ans = ext.np_max(a, 1, keepdims=True)
    hint = ext._HINT[0]
    g = _rng.standard_normal(ans.shape)
    acc = _rng.standard_normal(a.shape)
    cases = []
    b = a.copy()
    b[3, 7] = ans[3, 0]  # a tie the forward did not see
    cases.append(b)
    b = a.copy()
    b[5] = b[5, ::-1]  # the extremum moved
    cases.append(b)
    b = a.copy()
    b[2, 0] = np.nan
    cases.append(b)
    b = a.copy()
    b[9, int(np.argmax(a[9]))] = -0.0  # ans no longer in the row
    cases.append(b)
    cases.append(-a)  # max positions, a min-like array
    cases.append(np.concatenate([a, a], axis=1))  # another shape: positions would misplace
    for b in cases:
        ans_b = ans if b.shape[:-1] == a.shape[:-1] else np.max(b, 1, keepdims=True)
        with_hint = _adjoints(acc if b.shape == a.shape else np.zeros(b.shape), g, b, ans_b, 1, True, hint)
        without = _adjoints(acc if b.shape == a.shape else np.zeros(b.shape), g, b, ans_b, 1, True, None)
        _same(with_hint[0], without[0])
        _same(with_hint[1], without[1])
    # a hint of keepdims=True for a call without keepdims, and the reverse
    ans_flat = ans.reshape(-1)
    ext._HINT[0] = hint
    got = ext.acc_extremum_adjoint(acc.copy(), g.reshape(-1), a, ans_flat, 1, False)
    want = _adjoints(acc, g.reshape(-1), a, ans_flat, 1, False, None)[0]
    _same(got, want)
    # a hint goes with its extremum
    ext._HINT[0] = None
    ext.np_max(a * 2.0, 1, keepdims=True)
    assert ext._HINT[0] is None  # (the temporary's extremum is gone, and its hint with it)
    m = ext.np_max(a, 1, keepdims=True)
    hint = ext._HINT[0]
    assert hint[0]() is m
    m2 = ext.np_max(a + 1.0, 1, keepdims=True)  # a later one replaces it
    assert ext._HINT[0][0]() is m2
    del m  # and the earlier one's end leaves it be
    assert ext._HINT[0][0]() is m2


def test_an_accumulator_others_hold_is_copied(monkeypatch):
    monkeypatch.setattr(ext, "_HINT", [None])
    a = _rng.standard_normal((64, 40))
    ans = ext.np_max(a, -1)
    acc = _rng.standard_normal(a.shape)
    before = acc.copy()
    held = [acc]
    out = ext.acc_extremum_adjoint(acc, np.ones(64), a, ans, -1, False)
    assert out is not acc and np.array_equal(acc, before) and held[0] is acc
    want = before.copy()
    want[np.arange(64), np.argmax(a, 1)] += 1.0
    assert out.tobytes() == want.tobytes()


# ----- through gradient ---------------------------------------------------------------------------

LABELS = _rng.integers(0, 30, size=200)


def xent(logits):
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(logits.shape[0]), LABELS[: logits.shape[0]]])


def xent_min(logits):
    z = logits - np.min(logits, axis=-1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(-z), axis=-1))) + np.sum(np.min(logits, -1) ** 2)


def peak(x):
    return np.sum(np.max(x, axis=1) ** 2) + np.sum(np.min(x, 1) * 3.0)


def _fd(f, x, eps=1e-6):
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        out[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return out


@pytest.mark.parametrize("f", [xent, xent_min, peak])
@pytest.mark.parametrize("shape", [(8, 30), (100, 30)])
def test_gradients_match_finite_differences_and_the_pair(f, shape, position_min):
    x = _rng.standard_normal(shape)
    want = api._gradient(f, x)[0]
    ad.gradient(f, x)
    got = ad.gradient(f, x)[0]  # the fused function
    assert got.tobytes() == want.tobytes()
    if shape[0] <= 8:
        np.testing.assert_allclose(got, _fd(f, x), rtol=1e-5, atol=1e-7)


def test_gradients_with_ties_split_evenly(position_min):
    x = _rng.standard_normal((60, 30))
    x[::4, 5] = x[::4].max(axis=1) + 1.0
    x[::4, 9] = x[::4, 5]  # ties at the max
    x[1::4, 2] = -0.0
    x[1::4, 3] = 0.0
    x[1::4, 4:] = -1.0
    x[1::4, :2] = -1.0
    want = api._gradient(peak, x)[0]
    ad.gradient(peak, x)
    got = ad.gradient(peak, x)[0]
    assert got.tobytes() == want.tobytes()
    assert got[0, 5] == got[0, 9] == 2 * x[0, 5] / 2


# ----- the helpers of the softmax's adjoint -------------------------------------------------------


def test_the_sum_adjoints_view_is_broadcast_tos():
    from adjoint_s2s.rules.numpy.reductions import _broadcast_view

    r = _rng.standard_normal
    for v, shape in [(r((1000, 1)), (1000, 100)), (r((1, 100)), (1000, 100)), (np.array(2.5), (30, 40)),
                     (r((3, 1, 5)), (3, 4, 5)), (r((5, 2))[:, :1], (5, 7)), (r((1, 1)), (1, 1)),
                     (r((4, 1)).astype(np.float32), (4, 9)), (r(3), (3,)), (r((2, 1))[::-1], (2, 3))]:
        got, want = _broadcast_view(v, shape), np.broadcast_to(v, shape)
        assert got.shape == want.shape and got.dtype == want.dtype and not got.flags.writeable
        assert got.tobytes() == want.tobytes()
    for v, shape in [(r((10, 20)), (10, 5)), (r((5, 3)), (5, 100)), (r((2, 3)), (3,))]:
        with pytest.raises(ValueError):
            _broadcast_view(v, shape)


def test_scattered_flat_positions_are_ravel_multi_index():
    from adjoint_s2s.runtime.project import Scattered

    shape = (50, 7)
    for rows, cols in [
        (np.arange(50), _rng.integers(0, 7, 50)),
        (_rng.integers(-50, 50, 300), _rng.integers(-7, 7, 300)),  # negative: wrapped
        (_rng.integers(0, 50, 300), _rng.integers(-7, 0, 300)),
        (_rng.integers(0, 50, (3, 4)), _rng.integers(0, 7, (1, 4))),  # broadcast
        (_rng.integers(0, 50, 20).astype(np.int32), _rng.integers(0, 7, 20).astype(np.uint8)),
        (np.zeros(0, np.intp), np.zeros(0, np.intp)),
    ]:
        s = Scattered(shape, np.dtype(np.float64), (rows, cols), 1.0)
        want = np.ravel_multi_index((rows, cols), shape, mode="wrap")
        got = s.flat(shape)
        assert got.dtype == want.dtype and np.array_equal(got, want) and got.shape == want.shape
        g = _rng.standard_normal(np.broadcast_shapes(rows.shape, cols.shape))
        out = Scattered(shape, np.dtype(np.float64), (rows, cols), g).add_into(None)
        ref = np.zeros(shape)
        np.add.at(ref, (rows, cols), g)
        assert out.tobytes() == ref.tobytes()


def _spread(x):
    s = np.sum(x * x, axis=1, keepdims=True)
    return np.sum(np.tanh(s) * x) + np.mean(x ** 3) + np.sum(np.max(x, axis=1) ** 2)


def test_second_order_through_the_views_of_large_arrays():
    x = _rng.standard_normal((100, 50))  # above the size of a view and of a position
    v = _rng.standard_normal(x.shape)
    hv = ad.hvp(_spread, x, v)
    eps = 1e-6
    fd = (ad.gradient(_spread, x + eps * v)[0] - ad.gradient(_spread, x - eps * v)[0]) / (2 * eps)
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-6)
