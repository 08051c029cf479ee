"""A helper that writes into an array, list or dict it was given, while the caller reads
that object again after the call. Differentiated code writes a copy (copy on write), so
every way an argument reaches the callee must either hand the written value back to the
caller (``runtime.keeping`` / ``kept``: the caller sees the change, as in Python, with
its gradient) or refuse the program with a MutationError. Passed positionally this
worked; each shape below was silently wrong (or crashed) before: an argument passed by
keyword (also keyword-only, ``**{...}``, lists, dicts, a method), through ``*[...]``,
the same object twice, a view of another argument, an item or field of a container the
caller reads again, and a ``*args`` parameter written into."""
import copy

import numpy as np
import pytest

import adjoint_s2s as ad


def zero0(u):
    u[0] = 0.0


def zero_kwonly(*, u):
    u[0] = 0.0


def zero_dst(dst):
    dst[0] = 0.0


def set_first(lst):
    lst[0] = 0.0


def put_a(d):
    d["a"] = 0.0


class K:
    def imul(self, a, s):
        a *= s


def fill_sq(v, out=None):
    out[:] = v * v


def add_twice(acc, v):
    acc += v
    acc += v


def copy_into(dst, src):
    for i in range(len(src)):
        dst[i] = src[i]


def zero1(v):
    v[1] = 0.0


def via_dict(d):
    zero1(d["a"])


def via_dict_name(d):
    v = d["a"]
    v[1] = 0.0


def via_list(rows):
    zero1(rows[0])


class M:
    def __init__(self, w):
        self.w = w

    def clear(self):
        zero1(self.w)


class O:
    def __init__(self, m):
        self.m = m


def keyword_argument(x):
    b = x * 1.0
    zero0(u=b)
    return float(np.sum(b))


def keyword_only_parameter(x):
    b = x * 1.0
    zero_kwonly(u=b)
    return float(np.sum(b))


def double_star_argument(x):
    b = x * 1.0
    zero_dst(**{"dst": b})
    return float(np.sum(b))


def list_by_keyword(x):
    lst = [x[0] * 1.0, x[1] * 2.0]
    set_first(lst=lst)
    return lst[0] + lst[1]


def dict_by_keyword(x):
    d = {"a": x[0] * 1.0, "b": x[1] * 2.0}
    put_a(d=d)
    return d["a"] + d["b"]


def method_keyword_argument(x):
    b = x * 1.0
    K().imul(a=b, s=3.0)
    return float(np.sum(b))


def out_keyword(x):
    buf = np.zeros(x.shape)
    fill_sq(x, out=buf)
    return float(np.sum(buf))


def starred_argument(x):
    b = x * 1.0
    zero0(*[b])
    return float(np.sum(b))


def same_object_twice(x):
    a = x * 1.0
    add_twice(a, a)
    return float(np.sum(a))


def view_of_another_argument(x):
    y = x * 1.0
    copy_into(y, y[::-1])
    return float(np.sum(y * x))


def item_of_a_dict_two_levels(x):
    d = {"a": x * 1.0}
    via_dict(d)
    return float(np.sum(d["a"]))


def item_of_a_dict_named_in_the_callee(x):
    d = {"a": x * 1.0}
    via_dict_name(d)
    return float(np.sum(d["a"]))


def item_of_a_list_two_levels(x):
    rows = [x * 1.0]
    via_list(rows)
    return float(np.sum(rows[0]))


def field_passed(x):
    m = M(x * 1.0)
    zero1(m.w)
    return float(np.sum(m.w))


def item_passed(x):
    d = {"a": x * 1.0}
    zero1(d["a"])
    return float(np.sum(d["a"]))


def star_parameter_written(x):
    def f(*us):
        us[0][0] = 0.0
    b = x * 1.0
    f(b)
    return float(np.sum(b))


def inactive_keyword_argument(x):
    buf = np.ones(x.shape)
    zero0(u=buf)
    return float(np.sum(buf * x))


class Filler:
    def fill(self, v, out):
        out[:] = v * v


def method_out_keyword(x):
    buf = np.zeros(x.shape)
    Filler().fill(x, out=buf)
    return float(np.sum(buf))


def add_twice_sum(acc, v):
    acc += v
    acc += v
    return float(np.sum(acc))


def same_object_twice_not_read_again(x):
    a = x * 1.0
    return add_twice_sum(a, a)


def copy_then_sum(dst, src):
    for i in range(len(src)):
        dst[i] = src[i]
    return float(np.sum(dst * src))


def view_of_another_argument_not_read_again(x):
    y = x * 1.0
    return copy_then_sum(y, y[::-1])


def held_by_a_keyword_argument(x):
    inner = x * 1.0
    via_list(rows=[inner])
    return float(np.sum(inner))


def field_by_keyword(x):
    m = M(x * 1.0)
    zero1(v=m.w)
    return float(np.sum(m.w))


def field_of_a_field(x):
    o = O(M(x * 1.0))
    zero1(o.m.w)
    return float(np.sum(o.m.w))


def item_of_a_field(x):
    m = M([x * 1.0])
    zero1(m.w[0])
    return float(np.sum(m.w[0]))


def field_of_self_in_a_method(x):
    m = M(x * 1.0)
    m.clear()
    return float(np.sum(m.w))


# none of the arguments active: the call runs without its pullback (call_primal)
def starred_inactive(x):
    buf = np.ones(x.shape)
    zero0(*[buf])
    return float(np.sum(buf * x))


def field_inactive(x):
    m = M(np.ones(x.shape))
    zero1(m.w)
    return float(np.sum(m.w * x))


def item_inactive(x):
    d = {"a": np.ones(x.shape)}
    zero1(d["a"])
    return float(np.sum(d["a"] * x))


def method_inactive(x):
    buf = np.ones(x.shape)
    f = Filler()
    f.fill(2.0, buf)
    return float(np.sum(buf * x))


SHAPES = [
    keyword_argument, keyword_only_parameter, double_star_argument, list_by_keyword,
    dict_by_keyword, method_keyword_argument, out_keyword, starred_argument,
    same_object_twice, view_of_another_argument, item_of_a_dict_two_levels,
    item_of_a_dict_named_in_the_callee, item_of_a_list_two_levels, field_passed,
    item_passed, star_parameter_written, inactive_keyword_argument, method_out_keyword,
    same_object_twice_not_read_again, view_of_another_argument_not_read_again,
    held_by_a_keyword_argument, field_by_keyword, field_of_a_field, item_of_a_field,
    field_of_self_in_a_method, starred_inactive, field_inactive, item_inactive,
    method_inactive,
]


# the shapes whose write the caller takes back (kept), as Python shows it; the others
# are refused (a copy on write nobody hands back, or arguments sharing memory)
KEPT = {keyword_argument, keyword_only_parameter, list_by_keyword, dict_by_keyword, out_keyword,
        inactive_keyword_argument}


def _numeric_gradient(f, x, h=1e-6):
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        g.flat[k] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("f", SHAPES, ids=lambda f: f.__name__)
def test_a_written_argument_is_kept_or_refused(f):
    x = np.array([0.5, -1.0, 2.0])
    want = f(x.copy())
    arg = x.copy()
    try:
        y, pb = ad.pullback(f, arg)
        g = pb(1.0)[0]
    except ad.MutationError as exc:  # refused: the message names the call and the way out
        assert f not in KEPT, str(exc)
        assert "called (at " in str(exc) and ", line " in str(exc)  # the call's site
        assert "writes into" in str(exc) or "changes in place" in str(exc)
        return
    assert np.array_equal(arg, x), "the caller's argument was changed"
    assert np.isclose(y, want), f"value {y} where Python gives {want}"
    g = np.zeros_like(x) if g is None else np.asarray(g, dtype=float)
    assert np.allclose(g, _numeric_gradient(f, x), rtol=1e-6, atol=1e-6)


def zero0_not_read_again(x):
    b = x * 1.0
    zero0(u=b)
    return float(np.sum(x * 2.0))


def keyword_copy(x):
    b = x * 1.0
    zero0(u=b.copy())
    return float(np.sum(b))


@pytest.mark.parametrize("f", [zero0_not_read_again, keyword_copy], ids=lambda f: f.__name__)
def test_a_write_nobody_reads_again_is_not_refused(f):
    x = np.array([0.5, -1.0, 2.0])
    y, pb = ad.pullback(f, copy.deepcopy(x))
    assert np.isclose(y, f(x.copy()))
    assert np.allclose(pb(1.0)[0], _numeric_gradient(f, x), atol=1e-6)


def _zero_through_a_slice(a):
    r = a[:2]
    r[0] = 0.0


def _zero_through_ravel(a):
    r = a.ravel()
    r[1] = 0.0


def written_through_a_view_in_the_callee(x):
    b = x * 1.0
    _zero_through_a_slice(b)
    return float(np.sum(b * x))


def written_through_ravel_in_the_callee(x):
    b = x * 1.0
    _zero_through_ravel(b)
    return float(np.sum(b * x))


@pytest.mark.parametrize("f", [written_through_a_view_in_the_callee, written_through_ravel_in_the_callee],
                         ids=lambda f: f.__name__)
def test_a_callee_writing_through_a_view_of_its_argument_is_refused(f):
    """The callee writes a copy of its view (copy on write); the caller's array kept the
    old values (14.0 where the plain call gives 13.0)."""
    with pytest.raises(ad.MutationError, match="writes into its argument"):
        ad.pullback(f, np.array([1.0, 2.0, 3.0]))
