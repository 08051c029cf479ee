"""Functions that mutate arrays, lists and dicts, for ``test_mutation.py``.

They live in a file (not built with exec) because the transformer reads their source.
Arguments are chosen by the test table, away from kinks; every function returns a real
scalar so that it can be compared with finite differences.
"""
import numpy as np

# =====================================================================================
# Array writes into a copy of an argument
# =====================================================================================


def write_int_index(x, v):
    y = x * 1.0
    y[2] = v * v
    return np.sum(y * y)


def write_negative_index(x, v):
    y = np.sin(x)
    y[-1] = v
    return np.sum(y ** 3)


def write_slice(x, v):
    y = x * 2.0
    y[1:3] = v
    return np.sum(np.sin(y))


def write_slice_from_array(x, w):
    y = x * 1.0
    y[1:4] = w * x[0:3]
    return np.sum(y ** 2)


def write_step_slice(x, v):
    y = np.cos(x)
    y[0:4:2] = v * y[1::2]
    return np.sum(y * x)


def write_bool_mask(x, v):
    y = x * 1.0
    mask = x > 0.0
    y[mask] = v * x[mask]
    return np.sum(y * y)


def write_bool_mask_scalar(x, v):
    y = np.exp(x)
    y[x < 0.0] = v
    return np.sum(y * x)


def write_index_array(x, v):
    y = x * 1.0
    idx = np.array([0, 3, 4])
    y[idx] = v
    return np.sum(np.sin(y) * x)


def write_index_list(x, v):
    y = x ** 2
    y[[1, 2]] = np.array([v, v * v])
    return np.sum(y * x)


def write_broadcast_row(A, r):
    # r has the shape of one row: it is broadcast into two rows
    B = A * 1.0
    B[0:2] = r
    return np.sum(B * B)


def write_broadcast_matmul(A, W, r):
    # the value written is broadcast into two rows, and its gradient then goes through @
    B = A * 1.0
    v = W @ r
    B[0:2] = v
    return np.sum(B * B)


def write_scalar_from_dot(x, r):
    # a scalar made inside the function, broadcast into a slice
    y = x * 1.0
    v = np.dot(r, r)
    y[0:2] = v
    return np.sum(y * x)


def write_2d_element(A, v):
    B = A * 1.0
    B[1, 2] = v * A[0, 0]
    return np.sum(B * B)


def write_2d_row(A, v):
    B = np.tanh(A)
    B[1] = v
    return np.sum(B @ A.T)


def write_2d_column(A, v):
    B = A * 1.0
    B[:, 0] = v
    return np.sum(B ** 3)


def write_2d_block(A, w):
    B = A * 1.0
    B[0:2, 1:3] = w * B[1:3, 0:2]
    return np.sum(np.sin(B))


def write_ellipsis(A, v):
    B = A * 1.0
    B[..., 1] = v
    return np.sum(B * A)


# =====================================================================================
# Augmented array writes
# =====================================================================================


def aug_add_index(x, v):
    y = x * 1.0
    y[1] += v * v
    return np.sum(y ** 3)


def aug_sub_slice(x, v):
    y = x * 1.0
    y[1:3] -= v * x[0:2]
    return np.sum(y ** 3)


def aug_mul_index(x, v):
    y = np.sin(x)
    y[2] *= v
    return np.sum(y * x)


def aug_div_mask(x, v):
    y = x * 1.0
    y[x > 0.0] /= v
    return np.sum(y ** 3)


def aug_mul_2d(A, v):
    B = A * 1.0
    B[0, 1] *= v
    B[1, :] += B[0, :]
    return np.sum(B ** 2)


def aug_all_forms(x, a, b):
    y = x * 1.0
    y[0] += a
    y[1] -= b
    y[2] *= a
    y[3] /= b
    return np.sum(y ** 3)


def aug_whole_array(x, a):
    y = x * 1.0
    y += a
    y *= x
    y -= a * a
    y /= a
    return np.sum(y)


# =====================================================================================
# Arrays made inside the function
# =====================================================================================


def fill_zeros(x, v):
    y = np.zeros(4)
    y[0] = v
    y[1] = v * x[0]
    y[2:4] = x[1:3] * v
    return np.sum(y * y)


def _fill_middle_from(out, a, s):
    out[1:3] = a[1:3] * s
    return out


def callee_write_then_dead_writes(s, x):
    """Writes nothing reads afterwards give zero adjoints (None) that reach acc: under a
    nested gradient their cotangent was summed to a number (found by `make stress`)."""
    a = x.copy()
    a = _fill_middle_from(a, x, s)
    b = np.tanh(a * np.sum(a * x))
    a[3] -= a[2] * 0.5
    a[0] += s
    return np.sum(b)


def element_write_then_add_argument(v, w):
    """b_a and b_v are one array after `a += v`'s adjoint; the element write's adjoint
    zeroed b_a[4] in place, and so b_v[4] too (found by `make stress`)."""
    a = w * v
    a[4] -= a[4] * 0.5
    a += v
    return np.sum(a * np.linspace(-1.0, 1.0, 5))


def fill_zeros_2d(x):
    M = np.zeros((3, 3))
    M[0, 0] = x[0]
    M[1, 1] = x[1] * x[2]
    M[2] = x
    return np.sum(M @ M)


def fill_zeros_loop(x):
    n = x.shape[0]
    y = np.zeros(n)
    for i in range(n):
        y[i] = np.sin(x[i]) * (i + 1)
    return np.sum(y * y)


def fill_ones_like(x, v):
    y = np.ones_like(x)
    y[1:] = x[:-1] * v
    return np.sum(y * x)


def cumulative_loop(x):
    # y[i] reads y[i - 1]: each write depends on the previous one
    n = x.shape[0]
    y = np.zeros(n)
    y[0] = x[0]
    for i in range(1, n):
        y[i] = y[i - 1] * np.cos(x[i]) + x[i]
    return np.sum(y ** 2)


def recurrence_rows(x, W):
    # H[t] = tanh(W @ H[t - 1] + x[t]): a row written per step, read by the next
    T = x.shape[0]
    H = np.zeros((T + 1, W.shape[0]))
    for t in range(T):
        H[t + 1] = np.tanh(W @ H[t] + x[t])
    return np.sum(H ** 2)


def loop_aug_scatter(x, w):
    acc = np.zeros(3)
    for i in range(x.shape[0]):
        acc[i % 3] += w * x[i]
    return np.sum(acc ** 2)


def while_writes(x):
    y = np.zeros(x.shape[0])
    i = 0
    while i < x.shape[0]:
        y[i] = x[i] * x[(i + 1) % x.shape[0]]
        i += 1
    return np.sum(np.sin(y))


# =====================================================================================
# Overwriting a value that was read before
# =====================================================================================


def overwrite_after_read(x, v):
    y = x * 1.0
    a = y[1] * y[1]
    y[1] = v
    return a + np.sum(y * x)


def overwrite_slice_after_read(x, v):
    y = np.sin(x)
    s = np.sum(y ** 2)
    y[0:2] = v
    return s * np.sum(y)


def overwrite_whole_read(x, v):
    y = x * 1.0
    t = np.exp(y)
    y[:] = v * y
    return np.sum(t * y)


def overwrite_twice(x, a, b):
    y = x * 1.0
    p = y[0] * x[1]
    y[0] = a
    q = y[0] * y[1]
    y[0] = b * q
    return p + q + np.sum(y ** 2)


def overwrite_in_place_update(x):
    y = x * 1.0
    for i in range(1, x.shape[0]):
        y[i] = y[i] * y[i - 1]
    return np.sum(y)


def overwrite_through_alias(x, v):
    # z and y are the same array: in Python, z sees the write
    y = x * 1.0
    z = y
    y[0] = v
    return np.sum(z * z) + np.sum(y * x)


def overwrite_through_view(x, v):
    # z is a view of y: in Python, z sees the write
    y = x * 1.0
    z = y[1:]
    y[1] = v
    return np.sum(z * z) + np.sum(y * x)


def overwrite_through_transpose(x, v):
    y = x * 1.0
    z = y.T
    y[0, 1] = v
    return np.sum(z * x) + np.sum(y * x)


def list_write_through_alias(x, v):
    # b and a are the same list: in Python, b sees the write
    a = [x, x * x]
    b = a
    a[0] = v
    return b[0] * b[1]


# =====================================================================================
# Lists and dicts
# =====================================================================================


def list_setitem(x, v):
    lst = [x, x * x, 2.0 * x]
    lst[1] = v * x
    return lst[0] * lst[1] + lst[2] ** 2


def list_setitem_negative(x, v):
    lst = [x, x * x, 2.0 * x]
    lst[-1] = v
    return lst[0] * lst[1] * lst[2]


def list_setitem_after_read(x, v):
    lst = [x, x * x]
    a = lst[1] * 3.0
    lst[1] = v
    return a * lst[1] + lst[0]


def list_slice_assign(x, v):
    lst = [x, x, x, x]
    lst[1:3] = [v, v * x]
    return lst[0] * lst[1] + lst[2] * lst[3]


def list_aug_setitem(x, v):
    lst = [x, 2.0 * x]
    lst[0] += v
    lst[1] *= v
    lst[0] -= x * v
    lst[1] /= x
    return lst[0] * lst[1]


def list_of_arrays_setitem(x, v):
    lst = [x, x * 2.0]
    lst[0] = np.sin(x) * v
    return np.sum(lst[0] * lst[1])


def list_append(x, v):
    lst = []
    lst.append(x * v)
    lst.append(np.sin(x))
    lst.append(v)
    return lst[0] * lst[1] + lst[2]


def list_append_loop(x):
    lst = [x]
    for i in range(4):
        lst.append(lst[-1] * x + 0.5)
    return sum(lst)


def list_append_negative_reads(x, v):
    lst = [1.0]
    lst.append(x)
    lst.append(x * v)
    lst.append(v * v)
    return lst[-1] * lst[-2] - lst[-3] ** 2 + lst[-4]


def list_append_arrays(x):
    out = []
    for i in range(3):
        out.append(np.sin(x * (i + 1)))
    return np.sum(out[0] * out[-1]) + np.sum(out[1])


def list_append_then_setitem(x, v):
    lst = [x]
    lst.append(x * x)
    lst[0] = v
    lst.append(lst[0] * lst[1])
    return lst[-1] + lst[0]


def dict_setitem(x, v):
    d = {"a": x, "b": 2.0 * x}
    d["a"] = v * x
    d["c"] = v * v
    return d["a"] * d["b"] + d["c"]


def dict_setitem_after_read(x, v):
    d = {"a": x}
    t = d["a"] ** 2
    d["a"] = v
    return t * d["a"]


def dict_aug_setitem(x, v):
    d = {"a": x, "b": v}
    d["a"] += v
    d["b"] *= x
    return d["a"] * d["b"]


def dict_fill_loop(x):
    d = {}
    for i in range(3):
        d[i] = x ** (i + 1)
    return d[0] + d[1] * d[2]


def dict_of_arrays(x, v):
    d = {"h": x}
    d["h"] = np.tanh(d["h"] * v)
    d["out"] = np.sum(d["h"] ** 2)
    return d["out"]


# =====================================================================================
# Mutation of arguments
# =====================================================================================


def mutate_arg_array(x, v):
    x[0] = v * x[1]
    return np.sum(x * x)


def mutate_arg_array_aug(x, v):
    x[1:3] += v
    x[0] *= v
    return np.sum(x ** 3)


def mutate_arg_array_read_before(x, v):
    a = np.sum(x ** 2)
    x[0] = v
    return a * np.sum(x)


def mutate_arg_array_2d(A, v):
    A[0] = v * A[1]
    A[:, 1] = A[:, 0] * v
    return np.sum(A ** 2)


def mutate_arg_list_setitem(xs, v):
    xs[0] = v * xs[1]
    return xs[0] * xs[1] + xs[2]


def mutate_arg_list_append(xs, v):
    xs.append(v * v)
    return xs[0] * xs[-1] + xs[1]


def mutate_arg_dict_setitem(d, v):
    d["a"] = v * d["b"]
    return d["a"] * d["b"]


def mutate_arg_array_in_loop(x):
    for i in range(1, x.shape[0]):
        x[i] = x[i] + x[i - 1] * 0.5
    return np.sum(x ** 2)


# =====================================================================================
# Other list methods
# =====================================================================================


def list_extend(x, v):
    lst = [x]
    lst.extend([v, x * v])
    return lst[0] * lst[1] + lst[2]


def list_pop(x, v):
    lst = [x, v, x * v]
    last = lst.pop()
    return last * lst[0] + lst[1]


def list_pop_index(x, v):
    lst = [x, v, x * v]
    first = lst.pop(0)
    return first * lst[0] + lst[1]


def list_insert(x, v):
    lst = [x, v]
    lst.insert(1, x * v)
    return lst[0] * lst[1] + lst[2] ** 2


def list_extend_arg(xs, v):
    xs.extend([v])
    return xs[0] * xs[-1]


def list_pop_arg(xs):
    last = xs.pop()
    return last * xs[0]


# ----- writes in place: arrays only the generated code can see -----------------------------


def inplace_hidden_states(x, w):
    """The RNN pattern: a preallocated H written row by row, read whole at the end."""
    H = np.zeros((4, x.size))
    h = x
    for t in range(4):
        h = np.tanh(w * h + 0.1 * t)
        H[t] = h
    return np.sum((H - 0.3) ** 2)


def inplace_view_saved_then_written(x):
    """A view of the row is saved for sin's pullback before the row is overwritten."""
    H = np.zeros((2, x.size))
    H[0] = x
    row = H[0]
    y = np.sin(row)
    H[0] = 2.0 * x
    return np.sum(y) + np.sum(H * H)


def inplace_value_read_then_written(x):
    """The pullback of sin(H) needs H as it was before the later writes."""
    H = np.zeros(x.size)
    H[1] = x[0]
    s = np.sum(np.sin(H))
    H[1] = x[1]
    H[3] = x[2] * x[0]
    return s + np.sum(H * H)


def inplace_transposed_view(x):
    """H.T is a view that survives the write; sin's pullback reads its old values."""
    H = np.zeros((x.size, 2))
    H[:, 0] = x
    Ht = H.T
    y = np.sin(Ht)
    H[:, 0] = x * x
    return np.sum(y) + np.sum(np.cos(H))


def inplace_write_into_argument_copy(x, v):
    """The argument is copied at the first write; later writes go to that copy."""
    for i in range(x.size):
        x[i] = x[i] * v + 1.0
    return np.sum(x ** 2)


def list_pop_assign_in_loop(x):
    """x = lst.pop() in a loop: one tape entry per pop, restored once."""
    lst = [x, x * x, x * 3.0, 2.0]
    s = 0.0
    for _ in range(3):
        y = lst.pop()
        s = s + y * y
    return s


# =====================================================================================
# A callee writing into a container it was given (see runtime.call_keeping)
# =====================================================================================


def _fill_first(a, v):
    a[0] = v
    return 0.0


def _fill_through(a, v):  # the write happens one call further down
    return _fill_first(a, v)


def _set_row(H, t, h):
    H[t] = h
    return H


def _weighted(a, w):  # reads its argument only
    return np.sum(a * w)


def callee_writes_array_caller_reads(x, v):
    y = x * 1.0
    _fill_first(y, v)
    return np.sum(y * y)


def callee_writes_list_caller_reads(x, v):
    y = [x, x * x]
    _fill_first(y, v)
    return y[0] * y[1]


def callee_writes_deeper_caller_reads(x, v):
    y = x * 1.0
    _fill_through(y, v)
    return np.sum(y)


def callee_writes_inside_loop_caller_reads(x, v):
    H = np.zeros((3, x.size))
    for t in range(3):
        _fill_first(H, v * t)
        H = H + x
    return np.sum(H * H)


class _Filler:
    def fill_first(self, a, v):
        a[0] = v


def method_writes_array_caller_reads(x, v):
    y = x * 1.0
    _Filler().fill_first(y, v)
    return np.sum(y * y)


def callee_writes_array_caller_reads_through_alias(x, v):
    y = x * 1.0
    z = y
    _fill_first(y, v)
    return np.sum(z * z)


def callee_writes_and_caller_rebinds(x):
    H = np.zeros((3, x.size))
    h = x
    for t in range(3):
        h = np.tanh(1.5 * h)
        H = _set_row(H, t, h)
    return np.sum(H * H)


def callee_writes_what_caller_drops(x, v):
    y = x * 2.0
    z = _set_row(y, 0, v)
    return np.sum(z * z)


def callee_reads_what_caller_reads(x, w):
    y = np.sin(x)
    s = _weighted(y, w)
    return s * np.sum(y)


# =====================================================================================
# Writes that another name, an attribute or an outer container has to show
# =====================================================================================


def alias_rebound_before_write(x, v):
    prev = x * 1.0
    y = prev
    y = y * 2.0  # y is a new array: prev no longer names what is written
    y[0] = v
    return np.sum(prev * y)


_BUFFER = np.zeros(5)


def write_into_global(x, v):
    _BUFFER[0] = v
    return np.sum(_BUFFER * x)


def write_into_captured(x, v):
    y = x * 1.0

    def put(w):
        y[0] = w * w
        return 0.0

    put(v)
    return np.sum(y * y)


class _Holder:
    def __init__(self, data):
        self.data = data


def write_through_attribute(x, v):
    b = _Holder(np.zeros(x.size))
    b.data[0] = v
    b.data[1:] = x[1:] * v
    return np.sum(b.data * x)


def augmented_write_through_attribute(x, v):
    b = _Holder(x * 1.0)
    b.data[0] += v * v
    b.data[2] *= v
    return np.sum(b.data ** 2)


def write_into_nested_list(x, v):
    m = [[x, x * x], [v, 1.0]]
    m[0][1] = v * x
    m[1][0] += x
    return m[0][0] * m[0][1] + m[1][0] * m[1][1]


def write_into_row_of_dict(x, v):
    d = {"w": x * 1.0, "c": v}
    d["w"][0] = v * d["c"]
    return np.sum(d["w"] ** 2)


class Filler:
    def fill(self, arr, v):
        arr[0] = v
        return 0.0


def method_writes_caller_reads(x, v):
    y = x * 1.0
    Filler().fill(y, v)
    return np.sum(y * y)


def written_on_one_branch_rebound_on_the_other(x, v, w):
    a = np.tanh(v * x)
    a[1] = x
    if x > 0.0:
        a[1:3] = w[1:3] * 0.5
    else:
        a = np.array([x, x, 1.0, x * x, 0.5])
    return np.sum(a * a)


def _fill_middle(out, s):
    out[1:3] = s
    return out


def helper_writes_while_a_view_is_read(v):
    a = np.sin(v)
    view = np.flip(a)
    a = _fill_middle(a, 2.0)
    return np.sum(view * v) + np.sum(a)


def helper_writes_after_the_view_is_read(v):
    a = np.sin(v)
    view = np.flip(a)
    t = np.sum(view * v)
    a = _fill_middle(a, 2.0)
    return t + np.sum(a)


def view_rebound_on_one_branch(v, s):
    """z is a view of a on one path only: whether the write must be refused, the run tells
    (found by `make stress`: the rebinding ended the alias on both paths)."""
    a = v * 2.0
    z = a[::-1]
    if s > 0.0:
        z = z - a
    a[3] += s
    return np.sum(z * v) + np.sum(a * a)


def written_through_a_view_name(v):
    a = v * 2.0
    z = a[1:]
    a[1] = 5.0
    return np.sum(z * z)
