"""Private names in methods (`self.__k`): Python stores them mangled (`_Model__k`), and
the generated code, which runs outside the class, must read them so. Before, the method's
gradient raised a bare AttributeError, or read an unrelated instance entry literally
named `__k`."""
import pytest

import adjoint_s2s as ad


class Model:
    def __init__(self, k):
        self.__k = k

    def loss(self, x):
        return self.__k * x * x

    def scaled(self, x):
        def inner(z):  # a nested function of a method: mangled too
            return self.__k * z
        return inner(x) * x


def test_a_private_field_is_read_as_python_reads_it():
    m = Model(1.5)
    assert ad.gradient(m.loss, 0.3) == (pytest.approx(2 * 1.5 * 0.3),)
    g = ad.gradient(Model.loss, m, 0.3)
    assert g[1] == pytest.approx(0.9) and g[0]._Model__k == pytest.approx(0.09)


def test_an_entry_literally_named_like_the_private_name_is_not_read():
    m = Model(1.5)
    setattr(m, "__k", 100.0)
    y, back = ad.pullback(m.loss, 0.3)
    assert y == pytest.approx(m.loss(0.3)) and back(1.0)[0] == pytest.approx(0.9)


def test_a_nested_function_of_a_method():
    m = Model(2.0)
    assert ad.gradient(m.scaled, 0.5) == (pytest.approx(2 * 2.0 * 0.5),)


class _Under:
    def __init__(self):
        self.__w = 3.0

    def f(self, x):
        return self.__w * x


def test_a_class_name_with_leading_underscores():
    assert ad.gradient(_Under().f, 1.0) == (pytest.approx(3.0),)
