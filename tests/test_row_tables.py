"""Data held as a global list of rows of numbers (and as a global 1-D float64 array, whose
items are NumPy float64 numbers: looped over or read at an int position, they are numbers
to the transformer, the array's dtype and shape checked at each call) (``PAIRS = [(x, y), ...]``), read row by
row with unpacking, by position or through ``zip`` (issue 15: every row's items were of
unknown kind, so the whole loop body was dispatched at run time, 150 to 300 times the
plain call). A name bound only to rows of such a table and only read gets items of kind
REAL (passes/rows.py); the table is checked at every call (it still holds rows of
numbers), and a function that writes a row or hands one on keeps the general code."""
import numpy as np
import pytest

import adjoint_s2s as ad

from adjoint_s2s.testing import numerical_gradient

from .gradcheck import close_to_differences
from .source_modules import registered_module

SOURCE = '''
import math

import numpy as np

SAMPLES = np.linspace(-1.0, 1.0, 9)

PAIRS = [(0.1 * i, 1.0 if i % 2 else 0.0) for i in range(12)]
ROWS = [[0.1 * i, 0.2 * i - 1.0, 1.0 if i % 2 else 0.0] for i in range(12)]
DATA = [[0.1 * i, 0.2 * i - 1.0] for i in range(12)]
LABELS = [1.0 if i % 2 else 0.0 for i in range(12)]
XS = [0.1 * i for i in range(12)]


def pairs(w):
    loss = 0.0
    for x, y in PAIRS:
        loss = loss + (w * x - y) ** 2
    return loss


def by_position(w):
    loss = 0.0
    for row in ROWS:
        loss = loss + (w * row[0] + 0.3 * row[1] - row[2]) ** 2
    return loss


def indexed(w):
    loss = 0.0
    for i in range(len(ROWS)):
        a, b, c = ROWS[i]
        loss = loss + (w * a + 0.3 * b - c) ** 2
    return loss


def logistic(w):
    loss = 0.0
    for (x1, x2), y in zip(DATA, LABELS):
        z = w * x1 - 0.5 * x2
        p = 1.0 / (1.0 + math.exp(-z))
        loss = loss - (y * math.log(p) + (1 - y) * math.log(1 - p))
    return loss


def zipped_numbers(w):
    loss = 0.0
    for x, y in zip(XS, LABELS):
        loss = loss + (w * x - y) ** 2
    return loss


def inner_loop(w):
    total = 0.0
    for row in ROWS:
        for v in row:
            total = total + math.sin(w * v)
    return total


def over_samples(theta):
    tot = 0.0
    for s in SAMPLES:
        tot += math.exp(-theta * s * s)
    return tot / len(SAMPLES)


def samples_by_index(theta):
    tot = 0.0
    for i in range(len(SAMPLES)):
        tot = tot + math.sin(theta * SAMPLES[i]) * SAMPLES[-1]
    return tot


RECORDS = [{"w": 0.1 * i, "b": 1.0} for i in range(8)]


def records(x):
    s = 0.0
    for r in RECORDS:
        s = s + r["w"] * math.sin(x) + r["b"] * x
    return s


def record_keys(x):
    s = 0.0
    for r in RECORDS:
        for k in r:  # (the keys: strings)
            s = s + len(k) * x + r[k]
    return s


def missing_key(x):
    s = 0.0
    for r in RECORDS:
        s = s + r["c"] * x
    return s


def table_argument(w, data):
    loss = 0.0
    for x, y in data:
        loss = loss + (w * x - y) ** 2
    for i in range(len(data)):
        loss = loss + data[i][0] * data[i][1] * w
    return loss


def table_argument_written(w, data):
    loss = 0.0
    for row in data:
        row[1] = row[1] * 1.0
        loss = loss + (w * row[0] - row[1]) ** 2
    return loss


def writes_a_row(w):
    loss = 0.0
    for row in ROWS:
        row[2] = row[2] * 1.0
        loss = loss + (w * row[0] - row[2]) ** 2
    return loss


def keep(row):
    return row


def hands_a_row_on(w):
    loss = 0.0
    for row in DATA:
        kept = keep(row)
        loss = loss + (w * kept[0] - row[1]) ** 2
    return loss
'''


@pytest.fixture
def mod(tmp_path):
    with registered_module(tmp_path, "row_tables_mod", SOURCE) as m:
        yield m


@pytest.mark.parametrize("name", ["pairs", "by_position", "indexed", "logistic", "zipped_numbers", "inner_loop",
                                  "over_samples", "samples_by_index", "records"])
def test_rows_of_a_global_table_are_numbers(mod, name):
    f = getattr(mod, name)
    close_to_differences(f, 0.7)
    text = ad.show_adjoint(f, 0.7)
    assert "_rt.binop" not in text and "dispatched at run time" not in text
    assert "_rt.call(" not in text


@pytest.mark.parametrize("name", ["writes_a_row", "hands_a_row_on"])
def test_a_row_written_or_handed_on_keeps_the_general_code(mod, name):
    f = getattr(mod, name)
    close_to_differences(f, 0.7)
    assert "dispatched at run time" in ad.show_adjoint(f, 0.7)


def test_the_table_is_checked_at_each_call(mod):
    first = close_to_differences(mod.pairs, 0.7)
    close_to_differences(mod.pairs, 0.7)
    mod.PAIRS[3] = (np.float64(0.25), 2)  # still numbers: the same code
    changed = close_to_differences(mod.pairs, 0.7)
    assert changed != first
    mod.PAIRS[3] = (0.25 + 0.5j, 2.0)  # a complex number: code for what it holds now
    y, back = ad.pullback(mod.pairs, 0.7)
    assert y == mod.pairs(0.7)
    mod.PAIRS[3] = (np.array([0.25, 0.5]), 2.0)  # an array: a loss of arrays, as Python has it
    assert np.allclose(ad.pullback(mod.pairs, 0.7)[0], mod.pairs(0.7))


def test_a_row_of_another_length_fails_as_python_does(mod):
    close_to_differences(mod.pairs, 0.7)
    mod.PAIRS.append((1.0, 2.0, 3.0))
    with pytest.raises(ValueError) as plain:
        mod.pairs(0.7)
    with pytest.raises(ValueError) as ours:
        ad.gradient(mod.pairs, 0.7)
    assert "unpack" in str(plain.value) and "unpack" in str(ours.value)


def test_rows_changed_to_lists_of_strings_get_code_again(mod):
    close_to_differences(mod.by_position, 0.7)
    mod.ROWS[0] = ["a", "b", "c"]
    with pytest.raises(TypeError):
        mod.by_position(0.7)
    with pytest.raises(TypeError):
        ad.gradient(mod.by_position, 0.7)


def test_a_global_vector_is_checked_at_each_call(mod):
    first = close_to_differences(mod.over_samples, 0.8)
    close_to_differences(mod.over_samples, 0.8)
    mod.SAMPLES = np.linspace(-1.0, 1.0, 9).astype(np.float32)  # NumPy float32 items: code made again
    assert "dispatched at run time" in ad.show_adjoint(mod.over_samples, 0.8)
    y, back = ad.pullback(mod.over_samples, 0.8)
    assert y == mod.over_samples(0.8)  # (computed in float32, as the plain call: differences are too coarse)
    assert np.allclose(back(1.0), first, rtol=1e-5)
    mod.SAMPLES = np.ones((2, 3))  # rows: Python's TypeError, as the plain call has it
    with pytest.raises(TypeError):
        mod.over_samples(0.8)
    with pytest.raises(TypeError):
        ad.gradient(mod.over_samples, 0.8)
    mod.SAMPLES = np.linspace(0.0, 1.0, 4)
    close_to_differences(mod.over_samples, 0.8)


def test_records_iterated_give_their_keys_and_a_missing_key_raises(mod):
    close_to_differences(mod.record_keys, 0.7)
    with pytest.raises(KeyError):
        mod.missing_key(0.7)
    with pytest.raises(KeyError):
        ad.gradient(mod.missing_key, 0.7)


def test_records_are_checked_at_each_call(mod):
    first = close_to_differences(mod.records, 0.7)
    mod.RECORDS.append({"w": 1.0, "b": 2})
    assert close_to_differences(mod.records, 0.7) != first
    mod.RECORDS.append({"w": "heavy", "b": 2.0})
    with pytest.raises(TypeError):
        mod.records(0.7)
    with pytest.raises(TypeError):
        ad.gradient(mod.records, 0.7)


@pytest.mark.parametrize("make", [list, tuple])
@pytest.mark.parametrize("row", [list, tuple])
def test_a_table_passed_as_an_argument_gets_its_gradient_row_by_row(mod, make, row):
    data = make(row((0.1 * i, 1.0 if i % 2 else 0.0)) for i in range(6))
    got = close_to_differences(mod.table_argument, 0.7, data)
    assert type(got[1]) is make and all(type(r) is row for r in got[1])
    text = ad.show_adjoint(mod.table_argument, 0.7, data)
    assert "_rt.binop" not in text and "dispatched at run time" not in text and "getitem_pair" not in text


def test_a_table_argument_whose_rows_are_written_keeps_the_general_code(mod):
    data = [[0.1 * i, 1.0] for i in range(4)]
    got = ad.gradient(mod.table_argument_written, 0.7, [list(r) for r in data])
    want = numerical_gradient(mod.table_argument_written, 0.7, [list(r) for r in data])
    assert np.allclose(got[0], want[0]) and np.allclose(np.asarray(got[1]), np.asarray(want[1]))
