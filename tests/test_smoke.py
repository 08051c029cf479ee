import math

import adjoint_s2s as ad


def test_sin_times_y():
    assert ad.gradient(lambda x, y: math.sin(x) * y, 0.5, 2.0) == (
        2.0 * math.cos(0.5),
        math.sin(0.5),
    )
