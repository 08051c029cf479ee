"""Write the generated pair source of every corpus, mutation and golden function to a folder.

Used to show that a change to the transformer leaves generated code byte-identical
(or to review exactly where it changes):

    .venv/bin/python scripts/dump_generated.py /tmp/before
    ... change the transformer ...
    .venv/bin/python scripts/dump_generated.py /tmp/after
    diff -r /tmp/before /tmp/after

One file per function and argument kinds, named after the test row. The first line of each
generated module names the checkout's file path, so it is dropped. A function the
transformer refuses is written as the error's class and message.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from adjoint_s2s import emit, runtime  # noqa: E402
from tests import test_corpus, test_mutation  # noqa: E402
from tests.golden.functions import CASES  # noqa: E402


def rows():
    for p in test_corpus.ROWS:
        yield "corpus", p.id, p.values[1], runtime.kinds_of(p.values[2])
    for p in test_mutation.ROWS:
        yield "mutation", p.id, p.values[0], runtime.kinds_of(p.values[1])
    for fn, kinds in CASES:
        yield "golden", fn.__name__, fn, kinds


def text_of(fn, kinds):
    try:
        text = emit.source_of(fn, kinds).source
    except Exception as exc:  # a refusal is part of the behaviour being compared
        return f"{type(exc).__name__}: {exc}\n"
    return text.split("\n", 1)[1]


def main(out):
    os.makedirs(out, exist_ok=True)
    n = 0
    for group, name, fn, kinds in rows():
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
        with open(os.path.join(out, f"{group}__{safe}.py.txt"), "w") as fh:
            fh.write(text_of(fn, kinds))
        n += 1
    print(f"{n} generated sources written to {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "generated_dump")
