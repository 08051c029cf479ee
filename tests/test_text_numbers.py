"""A number parsed back from text made from a differentiated value is refused: text
carries no gradient, so `float(str(x)) * x` gave 0.7 where 1.4 is right, silently. Text
that is printed, compared or measured stays allowed."""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.errors import UnsupportedSyntaxError


def via_str(x):
    return float(str(x)) * x


def via_fstring(x):
    return float(f"{x:.17g}") * x


def via_percent(x):
    s = "%r" % x
    return float(s) * x


def via_format_and_strip(x):
    s = "{}".format(x)
    return float(s.strip()) * x


def via_slice(x):
    s = repr(x)
    return float(s[:6]) * x


def _parse(s):
    return float(s)


def via_helper(x):
    return _parse(str(x)) * x


def via_numpy_number(x):
    return np.float64(str(x)) * x


def via_numpy_array(x):
    return np.array([str(x)], dtype=float)[0] * x


def in_a_loop(x):
    y = x
    for _ in range(2):
        y = float(repr(y)) * x
    return y


def printed(x):
    print(f"x is {x:.3f}")
    return x * x


def compared(x):
    label = f"{x:.3f}"
    if label == "0.700":
        return x * 2.0
    return x


def measured(x):
    return x * len(str(x))


def constant_text(x):
    return float("2.5") * x + float(str(3)) * x


REFUSED = [via_str, via_fstring, via_percent, via_format_and_strip, via_slice, via_helper,
           via_numpy_number, via_numpy_array, in_a_loop]


@pytest.mark.parametrize("f", REFUSED, ids=[f.__name__ for f in REFUSED])
def test_number_parsed_from_text_is_refused(f):
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.gradient(f, 0.7)
    msg = str(info.value)
    assert "of text made from a differentiated value" in msg
    assert "test_text_numbers.py" in msg
    assert "round(x, n)" in msg


@pytest.mark.parametrize("f, want", [(printed, 1.4), (compared, 2.0), (measured, 3.0), (constant_text, 5.5)],
                         ids=["printed", "compared", "measured", "constant_text"])
def test_text_that_is_not_parsed_back_is_allowed(f, want, capsys):
    assert ad.gradient(f, 0.7) == pytest.approx((want,))
