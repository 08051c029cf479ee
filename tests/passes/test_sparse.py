"""passes/sparse.py: a scatter adjoint stays sparse while only accumulation reads it."""
from adjoint_s2s.passes.sparse import sparse_scatters


def test_scatter_read_by_an_accumulation_becomes_sparse():
    src = ("def pullback(g, a, idx, h):\n"
           "    b_x = _rt.getitem_grad(a, idx, g)\n"
           "    b_z = _rt.acc(b_x, h)\n"
           "    return (b_z,)\n")
    out = sparse_scatters(src)
    assert "b_x = _rt.getitem_grad_sparse(a, idx, g)" in out
    assert "b_z = _rt.acc(b_x, h)" in out


def test_scatter_returned_as_it_is_is_written_out():
    src = ("def pullback(g, a, idx, h):\n"
           "    b_x = _rt.getitem_grad(a, idx, g)\n"
           "    b_z = _rt.acc(b_x, h)\n"
           "    return (b_z, b_x)\n")
    out = sparse_scatters(src)
    assert "return (b_z, _rt.dense(b_x))" in out


def test_source_without_a_scatter_is_unchanged():
    src = "def pullback(g, a):\n    b_a = g * 2.0\n    return (b_a,)\n"
    assert sparse_scatters(src) is src


def test_scatter_through_an_identity_test_of_projected_stays_sparse():
    # passes/projected.py writes `b if y is z else _rt.unbroadcast(b, y)`: either branch
    # may hold the Scattered, which only accumulation then reads
    src = ("def pullback(g, a, idx, h, y, z):\n"
           "    b_x = _rt.getitem_grad(a, idx, g)\n"
           "    b_y = b_x if y is z else _rt.unbroadcast(b_x, y)\n"
           "    b_z = _rt.acc(b_y, h)\n"
           "    return (b_z,)\n")
    out = sparse_scatters(src)
    assert "b_x = _rt.getitem_grad_sparse(a, idx, g)" in out
    assert "_rt.dense(" not in out
    out = sparse_scatters(src.replace("return (b_z,)", "return (b_z, b_y)"))
    assert "return (b_z, _rt.dense(b_y))" in out
