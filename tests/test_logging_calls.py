"""Logging inside differentiated code runs as written and carries no gradient: a log call
in a simulation's loop was refused (the logging module tests levels inside a try)."""
import logging
import math

import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads

log = logging.getLogger("adjoint_s2s_test_sim")
adapter = logging.LoggerAdapter(log, {"run": 1})


def simulate(x):
    s = 0.0
    for i in range(3):
        s = s + math.sin(x * i)
        log.debug("step %d s=%.6f", i, s)
        adapter.info("step %d", i)
    logging.getLogger("adjoint_s2s_test_sim").warning("done s=%.6f", s)
    if log.isEnabledFor(logging.DEBUG):
        s = s + 0.0
    return s


def test_log_calls_run_with_the_values_of_the_plain_call(caplog):
    with caplog.at_level(logging.DEBUG, logger="adjoint_s2s_test_sim"):
        simulate(0.5)
        plain = [r.getMessage() for r in caplog.records]
        caplog.clear()
        y, back = ad.pullback(simulate, 0.5)
        assert [r.getMessage() for r in caplog.records] == plain
    assert y == pytest.approx(simulate(0.5))
    assert back(1.0)[0] == pytest.approx(sum(i * math.cos(0.5 * i) for i in range(3)))
    check_grads(simulate, 0.5, order=2)
