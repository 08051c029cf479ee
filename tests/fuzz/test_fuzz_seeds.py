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
NOLINE_APPEND_METHOD = "crash 1: method appending to self.items refused without file:line"
NOLINE_BOOL_LOOP = "crash 1: loop over a boolean array refused (list.append) without file:line"
NOLINE_TOLIST = "crash 1: ndarray.tolist refused without file:line"
HESS_DATACLASS = "wrong 2: Hessian through a dataclass"
HESS_LIST_APPEND = "wrong 2: Hessian through a list a helper appends to"
NP_R = "wrong 1: np.r_ drops the gradient"

KNOWN = {
    3: NOLINE_BOOL_LOOP,
    8: FANCY,
    12: NOLINE_APPEND_METHOD,
    18: HESS_DATACLASS,
    20: FANCY,
    21: NOLINE_APPEND_METHOD,
    26: NOLINE_APPEND_METHOD,
    27: NOLINE_APPEND_METHOD,
    28: FANCY,
    30: HESS_LIST_APPEND,
    36: NOLINE_APPEND_METHOD,
    38: NOLINE_APPEND_METHOD,
    42: HESS_DATACLASS,
    44: NOLINE_APPEND_METHOD,
    45: RECEIVER,
    46: RECURSIVE_CLOSURE,
    49: ALIAS_VALUE,
    52: NOLINE_APPEND_METHOD,
    53: NOLINE_APPEND_METHOD,
    55: RECEIVER,
    57: FANCY,
    60: ALIAS_VALUE,
    63: FANCY,
    64: ATTR_CALL,
    70: NOLINE_BOOL_LOOP,
    73: NOLINE_APPEND_METHOD,
    85: NOLINE_APPEND_METHOD,
    87: ATTR_CALL,
    89: RECEIVER,
    90: RECEIVER,
    92: RECURSIVE_CLOSURE,
    93: NOLINE_APPEND_METHOD,
    94: NOLINE_APPEND_METHOD,
    95: ALIAS_VALUE,
    100: NOLINE_APPEND_METHOD,
    105: NOLINE_APPEND_METHOD,
    107: RECEIVER,
    109: ALIAS_VALUE,
    110: NOLINE_APPEND_METHOD,
    115: NOLINE_APPEND_METHOD,
    121: RECURSIVE_CLOSURE,
    123: HESS_DATACLASS,
    125: NOLINE_BOOL_LOOP,
    126: NOLINE_APPEND_METHOD,
    127: NP_R,
    130: ATTR_CALL,
    132: HESS_DATACLASS,
    134: ALIAS_VALUE,
    135: RECURSIVE_CLOSURE,
    136: NOLINE_TOLIST,
    139: NOLINE_APPEND_METHOD,
    142: NOLINE_APPEND_METHOD,
    144: HESS_DATACLASS,
    148: ATTR_CALL,
    151: NOLINE_APPEND_METHOD,
    154: NOLINE_APPEND_METHOD,
    159: NOLINE_TOLIST,
    165: NOLINE_BOOL_LOOP,
    166: ATTR_CALL,
    168: NOLINE_APPEND_METHOD,
    169: NP_R,
    173: NOLINE_APPEND_METHOD,
    174: FANCY,
    182: FANCY,
    183: HESS_DATACLASS,
    187: RECURSIVE_CLOSURE,
    188: FANCY,
    189: NOLINE_APPEND_METHOD,
    191: FANCY,
    192: FANCY,
    193: NOLINE_APPEND_METHOD,
    196: NOLINE_APPEND_METHOD,
    198: NOLINE_APPEND_METHOD,
    199: NOLINE_APPEND_METHOD,
    205: ATTR_CALL,
    213: FANCY,
    215: RECEIVER,
    216: NOLINE_APPEND_METHOD,
    220: ALIAS_VALUE,
    222: FANCY,
    223: NOLINE_TOLIST,
    224: RECURSIVE_CLOSURE,
    226: FANCY,
    230: NOLINE_APPEND_METHOD,
    231: NOLINE_APPEND_METHOD,
    235: RECURSIVE_CLOSURE,
    237: ALIAS_VALUE,
    241: NOLINE_TOLIST,
    244: FANCY,
    247: RECURSIVE_CLOSURE,
    256: NOLINE_APPEND_METHOD,
    257: ALIAS_VALUE,
    262: FANCY,
    270: HESS_DATACLASS,
    271: NOLINE_APPEND_METHOD,
    278: FANCY,
    281: RECEIVER,
    283: NOLINE_APPEND_METHOD,
    287: FANCY,
    289: NOLINE_APPEND_METHOD,
    290: NOLINE_APPEND_METHOD,
    292: FANCY,
    295: ALIAS_VALUE,
    297: HESS_DATACLASS,
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
