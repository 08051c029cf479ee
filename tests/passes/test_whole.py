"""Arithmetic on numbers kept whole (passes/whole.py, passes/reverse/whole.py): the code
it generates, its gradients against central differences (first and second order), the
value equal to the plain call's, its printer against Python's parser, and the way back
when a name it took for a number is not one."""
import ast
import math

import gast
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import adjoint_s2s as ad
from adjoint_s2s import emit, rules
from adjoint_s2s.kinds import kinds_of
from adjoint_s2s.passes import whole
from adjoint_s2s.testing import check_grads

from ..gradcheck import close_to_differences, code_lines


def source_of(f, *args):
    return emit.entry_for(f, emit.cache_key(f, kinds_of(args))).source


def logistic_step(a, b):
    return 0.5 * a * b + math.sin(a)


def precedence(a, b, c):
    u = a - (b - c)
    v = a / (b * c) - -a ** 2
    w = (a - b) ** 3 + (-(a + c)) ** 2
    z = a / b / c + math.sqrt(a * a + b * b) * math.exp(-a * c) / (1 + a)
    return u * v + w - z + c ** -2


def in_a_loop(k):
    th, om = 1.0, 0.0
    for _ in range(50):
        om = om - 0.01 * k * math.sin(th) * (1.0 + 0.1 * om)
        th = th + 0.01 * om
    return th * th + 0.5 * om


def rebinds_itself(x, y):
    x = 2.0 * x * y + 1.0
    x = x * x - y / x
    return math.tanh(0.3 * x) * y


def test_the_forward_keeps_the_expression_and_names_what_the_pullback_reads():
    code = code_lines(source_of(logistic_step, 0.3, 0.7))
    assert "mul = 0.5 * a" in code
    assert "= mul * b + math.sin(a)" in code
    assert "mul_1" not in code  # (no temporary for the product or the sine)
    assert "b_b = " in code and "* mul" in code


@pytest.mark.parametrize("f, args", [
    (logistic_step, (0.3, 0.7)),
    (precedence, (0.8, 1.7, 0.6)),
    (in_a_loop, (0.9,)),
    (rebinds_itself, (0.4, 1.1)),
])
def test_gradients_against_differences(f, args):
    close_to_differences(f, *args, rtol=1e-5)
    check_grads(f, *args, order=2, rtol=1e-5, atol=1e-7)


def test_the_value_is_the_plain_calls_bit_for_bit():
    for f, args in [(precedence, (0.8, 1.7, 0.6)), (in_a_loop, (0.9,)), (rebinds_itself, (0.4, 1.1))]:
        assert ad.pullback(f, *args)[0] == f(*args)


def changes_kind(x):
    y = x * 2.0 + 1.0
    x = np.ones(3) * y
    return float(np.sum(x * x + y))


def test_a_name_taken_for_a_number_that_is_not_one_is_transformed_again_without_it():
    assert "x * 2.0 + 1.0" not in code_lines(source_of(changes_kind, 0.5))  # (one operation a line)
    close_to_differences(changes_kind, 0.5)


def doubled_exp(x):
    return math.exp(x) * 2.0 + x


def test_a_user_rule_for_a_math_function_takes_its_place_and_invalidates():
    assert ad.gradient(doubled_exp, 0.0) == (3.0,)
    ad.adjoint(math.exp)(lambda x: (math.exp(x), lambda d: (100.0 * d,)))
    try:
        assert ad.gradient(doubled_exp, 0.0) == (201.0,)  # no refresh() needed
    finally:
        rules.USER_RULES.pop(math.exp)
        rules.bump(math.exp)
    assert ad.gradient(doubled_exp, 0.0) == (3.0,)


def integer_power(x, n):
    return x ** 3 - 2 * x ** 2 + n * x


def test_integers_and_powers():
    close_to_differences(integer_power, 1.5, 3)
    assert ad.gradient(integer_power, 2, 3) == (3 * 4 - 8 + 3, 2)


# ----- the printer: what it prints parses back to the same tree ------------------------------

_LEAVES = st.sampled_from(["a", "b", "c", "2", "0.5", "-1.5", "3"])


def _tree(children):
    binary = st.tuples(st.sampled_from(["+", "-", "*", "/"]), children, children).map(
        lambda t: f"({t[1]}) {t[0]} ({t[2]})")
    power = st.tuples(children, st.sampled_from(["2", "3", "-1", "-2"])).map(lambda t: f"({t[0]}) ** {t[1]}")
    sign = children.map(lambda e: f"-({e})")
    call = children.map(lambda e: f"math.sin({e})")
    return st.one_of(binary, power, sign, call)


@settings(max_examples=300, deadline=None)
@given(st.recursive(_LEAVES, _tree, max_leaves=8))
def test_the_printer_gives_back_the_tree(expression):
    node = whole.fold_signs(gast.parse(expression).body[0].value, set(), [])
    printed = whole.text(node, {})[0]
    again = whole.fold_signs(gast.parse(printed).body[0].value, set(), [])  # (-1.5: a constant either way)
    assert ast.dump(gast.gast_to_ast(again)) == ast.dump(gast.gast_to_ast(node)), printed


# ----- which names are taken for numbers --------------------------------------------------------


def _names_of(src, numbers):
    fn = gast.parse(src).body[0]
    return whole.number_names(fn, set(numbers), whole.math_calls({"math"}))


def test_names_bound_only_to_arithmetic_on_numbers_are_numbers():
    got = _names_of(
        "def f(x, y, v):\n"
        "    a = x * y + 1.0\n"          # arithmetic on numbers
        "    b, c = a, 2.0 * x\n"        # a display of them, unpacked
        "    for i in range(3):\n"       # a range's counter
        "        a = a * 0.5 + math.sin(i * b)\n"
        "    d = v[0] * a\n"             # an item: not known
        "    e = a + d\n"                # reads d
        "    g = 1.0\n"
        "    g += v.sum()\n"             # bound again to something else
        "    h = math.hypot(a, b)\n"     # no one-argument rule of numbers
        "    return a + e\n",
        {"x", "y"})
    assert got == {"x", "y", "a", "b", "c", "i"}


def test_a_parameter_of_another_kind_or_bound_elsewhere_is_not_a_number():
    src = ("def f(x, w):\n"
           "    t = x * 2.0\n"
           "    with open('p') as x:\n"
           "        pass\n"
           "    def inner():\n"
           "        nonlocal t\n"
           "        t = 3.0\n"
           "    return t * w\n")
    assert _names_of(src, {"x", "w"}) == {"w"}
    assert _names_of("def f(x, w):\n    s = w * x\n    return s\n", {"x"}) == {"x"}


def test_what_the_normaliser_notes_is_what_a_walk_finds():
    from adjoint_s2s import source
    from adjoint_s2s.naming import Namer, names_in
    from adjoint_s2s.passes import anf

    node, filename, lines = source.function_node(precedence)
    node = source.fresh_copy(node)
    numbers = whole.number_names(node, {"a", "b", "c"}, whole.math_calls({"math"}))
    anf.normalize(node, Namer(names_in(node) | set(emit._helper_values())), filename, lines,
                  static_names={"math": math}, numbers=numbers, math_call=whole.math_calls({"math"}))
    noted = whole.whole_reads(node)
    assert len(node.wholes) >= 4
    for s in node.wholes:
        assert noted[id(s.value)] == names_in(s.value, gast.Load)


def make_step(k, c):
    def step(x):
        y = k * x * x + math.sin(c * x)
        return y * k - c / (1.0 + x * x)

    return step


def test_captured_numbers_are_numbers_too():
    step = make_step(0.7, 1.3)
    code = code_lines(source_of(step, 0.4))
    assert "= k * x * x + math.sin(c * x)" in code or "= mul * x + math.sin(mul_1)" in code
    close_to_differences(step, 0.4)
    check_grads(step, 0.4, order=2)
    assert _names_of("def f(x):\n    nonlocal k\n    k = x\n    return k * x\n", {"x", "k"}) == {"x"}
