"""passes/anf.py: one operation per statement, temporaries named for what they hold."""
import math

from .pipeline import body_source


def nested(x, y):
    return math.sin(x) * y + 1.0


def while_loop(x):
    while x < 10.0:
        x = x * 2.0
    return x


def conditional_expression(x):
    return x if x > 0 else -x


def unpacking(p):
    a, b = p
    return a * b


def test_nested_expression_becomes_one_operation_per_line():
    assert body_source(nested) == [
        "sin_x = math.sin(x)",
        "mul = sin_x * y",
        "result = mul + 1.0",
        "return result",
    ]


def test_while_becomes_while_true_with_the_test_inside():
    assert body_source(while_loop) == [
        "while True:\n"
        "    cond = x < 10.0\n"
        "    if cond:\n"
        "        mul = x * 2.0\n"
        "        x = mul\n"
        "    else:\n"
        "        break",
        "return x",
    ]


def test_conditional_expression_becomes_an_if_statement():
    assert body_source(conditional_expression) == [
        "cond = x > 0",
        "if cond:\n    ifexp = x\nelse:\n    ifexp = -x",
        "return ifexp",
    ]


def test_tuple_target_is_unpacked_item_by_item():
    assert body_source(unpacking) == ["a = p[0]", "b = p[1]", "result = a * b", "return result"]
