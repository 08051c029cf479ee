"""A fixed set of fuzz programs (tests/fuzz/gen.py) under `make test`: every one must pass
the oracle (tests/fuzz/oracle.py) or be refused with a clear error that names a line.

KNOWN lists the seeds that fail today, by failure family (see /work/findings/fuzz.md and
tests/fuzz/README.md); they are strict xfails, so a fix makes them fail here until the seed
is removed from KNOWN. Reproduce and shrink one with ``python -m tests.fuzz --repro SEED``.
"""

import pytest

from .gen import generate
from .oracle import check

SEEDS = range(0, 300)

FANCY = "wrong 1: write with repeated fancy indices (b[[3, 3, 1]] *= c, += x, = b[2])"
ALIAS_VALUE = "wrong 1 (value): helper does `a /= ...` on an argument the caller reads again"
RECURSIVE_CLOSURE = "wrong 1: recursive nested function capturing a differentiated variable"
RECEIVER = "wrong 1: method on an expression receiver (A.T.sum(), A.T.dot(A).sum())"
ATTR_CALL = "wrong 1: attribute written (m.w = ..., m.shift(d)) then __call__"
NP_R = "wrong 1: np.r_ drops the gradient"
LINSPACE = "wrong 1: np.linspace passes no gradient to its ends"
ITEM = "wrong 1: ndarray.item gives a None gradient"
NOLINE_APPEND_METHOD = "crash 1: method appending to self.items refused without file:line"
NOLINE_TOLIST = "crash 1: ndarray.tolist refused without file:line"
NOLINE_ITEM = "crash 1: ndarray.item (in a branch) refused without file:line"
NOLINE_UFUNC_AT = "crash 2: np.take at second order, ufunc.at refused without file:line"
HESS_DATACLASS = "wrong 2: Hessian through a dataclass"

KNOWN = {
    3: FANCY,
    5: ATTR_CALL,
    8: FANCY,
    20: LINSPACE,
    22: RECURSIVE_CLOSURE,
    23: ATTR_CALL,
    24: NOLINE_APPEND_METHOD,
    25: ALIAS_VALUE,
    28: RECEIVER,
    30: ITEM,
    33: HESS_DATACLASS,
    36: NOLINE_APPEND_METHOD,
    38: ALIAS_VALUE,
    42: HESS_DATACLASS,
    44: NOLINE_APPEND_METHOD,
    46: ITEM,
    47: NOLINE_APPEND_METHOD,
    50: NOLINE_APPEND_METHOD,
    51: NOLINE_APPEND_METHOD,
    55: NOLINE_APPEND_METHOD,
    57: NP_R,
    59: ITEM,
    63: NP_R,
    64: NOLINE_APPEND_METHOD,
    68: LINSPACE,
    73: NOLINE_APPEND_METHOD,
    75: NOLINE_APPEND_METHOD,
    80: NOLINE_APPEND_METHOD,
    85: NOLINE_APPEND_METHOD,
    92: ITEM,
    94: NOLINE_APPEND_METHOD,
    95: ALIAS_VALUE,
    102: NOLINE_APPEND_METHOD,
    103: LINSPACE,
    105: NOLINE_APPEND_METHOD,
    107: ITEM,
    110: FANCY,
    115: NP_R,
    116: NOLINE_ITEM,
    117: ITEM,
    122: NOLINE_APPEND_METHOD,
    125: NOLINE_APPEND_METHOD,
    130: ATTR_CALL,
    134: ATTR_CALL,
    141: LINSPACE,
    142: NOLINE_TOLIST,
    143: ITEM,
    145: NOLINE_APPEND_METHOD,
    148: NOLINE_APPEND_METHOD,
    154: NOLINE_APPEND_METHOD,
    156: ALIAS_VALUE,
    157: ITEM,
    162: NP_R,
    173: NOLINE_APPEND_METHOD,
    174: FANCY,
    178: RECURSIVE_CLOSURE,
    182: LINSPACE,
    183: NOLINE_APPEND_METHOD,
    184: NOLINE_APPEND_METHOD,
    185: LINSPACE,
    187: RECURSIVE_CLOSURE,
    192: NOLINE_APPEND_METHOD,
    193: NOLINE_APPEND_METHOD,
    194: ITEM,
    196: FANCY,
    198: NOLINE_APPEND_METHOD,
    199: NOLINE_APPEND_METHOD,
    205: FANCY,
    207: ALIAS_VALUE,
    210: ALIAS_VALUE,
    211: ALIAS_VALUE,
    221: FANCY,
    222: FANCY,
    223: NOLINE_TOLIST,
    233: NP_R,
    234: NOLINE_UFUNC_AT,
    237: NOLINE_APPEND_METHOD,
    239: RECURSIVE_CLOSURE,
    244: ITEM,
    246: LINSPACE,
    249: NOLINE_UFUNC_AT,
    253: FANCY,
    255: FANCY,
    256: NOLINE_APPEND_METHOD,
    257: FANCY,
    262: FANCY,
    263: NOLINE_APPEND_METHOD,
    264: FANCY,
    266: NP_R,
    268: NOLINE_APPEND_METHOD,
    272: NP_R,
    273: NOLINE_APPEND_METHOD,
    274: RECEIVER,
    275: ITEM,
    276: ALIAS_VALUE,
    278: FANCY,
    284: FANCY,
    285: ITEM,
    291: LINSPACE,
    292: NOLINE_ITEM,
    293: FANCY,
    294: NOLINE_APPEND_METHOD,
    295: ATTR_CALL,
    298: NOLINE_APPEND_METHOD,
}


def _param(seed):
    if seed in KNOWN:
        return pytest.param(seed, marks=pytest.mark.xfail(strict=True, reason=KNOWN[seed]))
    return seed


@pytest.mark.parametrize("seed", [_param(s) for s in SEEDS])
def test_fuzz_seed(seed):
    prog = generate(seed)
    v = check(prog.source, seed)
    assert v.verdict in ("pass", "refused"), (
        f"{v}\n" + "\n".join(v.details[:5]) + f"\n{prog.source}\n"
        f"reproduce and shrink: python -m tests.fuzz --repro {seed}"
    )
