"""A complex scalar built from two reals (`complex(x, y)`) and given to a NumPy function:
the gradients of both parts, against the closed forms."""
import numpy as np
import pytest

import adjoint_s2s as ad


@pytest.mark.parametrize("f, want", [
    (lambda x, y: np.abs(complex(x, y)), (0.7 / np.hypot(0.7, 1.2), 1.2 / np.hypot(0.7, 1.2))),
    (lambda x, y: np.angle(complex(x, y)), (-1.2 / (0.7 ** 2 + 1.2 ** 2), 0.7 / (0.7 ** 2 + 1.2 ** 2))),
], ids=["abs", "angle"])
def test_a_numpy_function_of_a_complex_built_from_two_reals(f, want):
    # NumPy's rule gives a complex scalar's adjoint as a 0-d array; complex()'s pullback
    # took it for a real number and gave the imaginary part's argument 0.0, silently
    assert ad.gradient(f, 0.7, 1.2) == pytest.approx(want, rel=1e-12)
