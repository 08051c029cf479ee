"""Every code block in README.md and docs/*.md runs and prints what the page shows.

The convention, for whoever writes a page (docs/index.md repeats it):

* A ```` ```python ```` block is a complete script. It is saved as ``example.py`` in a
  fresh directory (one per page, shared by the page's blocks) and run there as
  ``__main__``, with numpy, scipy and adjoint_s2s already imported in the parent process
  so that each block costs a fork, not an interpreter start.
* The untagged ```` ``` ```` block that follows it (with only prose in between) is what it
  prints, stdout and stderr together: it must equal the real output line by line, after
  trailing spaces are stripped. A line of the expected output may contain ``...``, which
  stands for any text within that line (for timings; use it rarely). A python block with
  no output block must run and print nothing.
* The path of the page's directory is not known in advance: a path ``/tmp/NAME/`` in an
  expected output stands for it.
* ``<!-- test: file NAME -->`` before a python block also saves it as ``NAME`` in the
  page's directory, for the command-line blocks below it (it is still run).
* A ```` ```console ```` block holds ``$ adjoint-s2s ...`` (or ``$ python -m adjoint_s2s
  ...``) commands, each followed by its expected output, compared as above. A
  ```` ```sh ```` block holds such commands without their output: each must succeed.
  ``<!-- test: output-of COMMAND -->`` before a block of any language says the block is
  the output of ``COMMAND`` (so generated code can be shown as highlighted Python).
* ``<!-- test: excerpt-of PATH -->`` before a block: an excerpt of a file of the
  repository (an example script); each of its lines must be found in that file, in
  order (a line ``...`` stands for lines left out).
* ``<!-- test: skip REASON -->`` before a block: it is not run. The reason is required,
  and a block of any other language (a ``make`` or ``pip`` line) needs it.

Indented blocks (diagrams, directory trees) are not code and are not checked.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
MARKER = re.compile(r"^<!--\s*test:\s*(skip|file|output-of|excerpt-of)\b\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^```\s*([\w+-]*)\s*$")
CLI_PREFIXES = (("adjoint-s2s",), ("python", "-m", "adjoint_s2s"))


class Block:
    def __init__(self, page, line, lang, text, marker):
        self.page, self.line, self.lang, self.text, self.marker = page, line, lang, text, marker

    @property
    def where(self):
        return f"{self.page.name}:{self.line}"


def parse(page):
    """The fenced blocks of a page, with the marker comment right before each."""
    lines = page.read_text().splitlines()
    blocks, marker, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        m = MARKER.match(line)
        if m:
            marker = (m.group(1), m.group(2))
            i += 1
            continue
        f = FENCE.match(line)
        if f:
            start, body = i + 1, []
            i += 1
            while i < len(lines) and lines[i].rstrip() != "```":
                body.append(lines[i])
                i += 1
            if i == len(lines):
                raise AssertionError(f"{page.name}:{start}: unclosed code block")
            blocks.append(Block(page, start, f.group(1), "\n".join(body) + "\n", marker))
            marker = None
        elif line.strip():
            if marker is not None and not line.startswith("<!--"):
                raise AssertionError(f"{page.name}:{i + 1}: a test marker must come right before a block")
        i += 1
    return blocks


class Check:
    """One thing to verify: a python block with its expected output, or a command."""

    def __init__(self, kind, block, payload, expected):
        self.kind, self.block, self.payload, self.expected = kind, block, payload, expected


def cli_argv(command, where):
    words = command.split()
    for prefix in CLI_PREFIXES:
        if tuple(words[: len(prefix)]) == prefix:
            return words[len(prefix):]
    raise AssertionError(f"{where}: only adjoint-s2s commands can be run, not {command!r} (mark the block skip)")


def strip_comment(line):
    return line.split(" #", 1)[0].strip() if not line.lstrip().startswith("#") else ""


SKIPPED = object()


def plan(page):
    """Pair each block with what checks it; a block nobody checks is an error."""
    checks, skipped = [], []
    blocks = parse(page)
    pending = None  # the last python block, waiting for its output block
    for block in blocks:
        kind, arg = block.marker or (None, None)
        if kind == "skip":
            assert arg, f"{block.where}: a skipped block needs a reason"
            if pending is not None and pending is not SKIPPED:
                checks.append(pending)
            skipped.append(block)
            # the output block of a skipped python block is not checked either
            pending = SKIPPED if block.lang == "python" else None
            continue
        if kind == "output-of":
            checks.append(Check("cli", block, cli_argv(arg, block.where), block.text))
            continue
        if kind == "excerpt-of":
            if pending is not None and pending is not SKIPPED:
                checks.append(pending)
            pending = None
            checks.append(Check("excerpt", block, arg, None))
            continue
        if block.lang == "python":
            if pending is not None and pending is not SKIPPED:
                checks.append(pending)
            pending = Check("python", block, block.text, "")
            if kind == "file":
                pending.save_as = arg
            continue
        if pending is SKIPPED:
            pending = None
            if block.lang in ("", "text"):
                continue
        if block.lang in ("", "text"):
            assert pending is not None, f"{block.where}: an output block with no python block above it"
            pending.expected = block.text
            checks.append(pending)
            pending = None
            continue
        if pending is not None and pending is not SKIPPED:
            checks.append(pending)
            pending = None
        if block.lang == "console":
            cmd, out = None, []
            for line in block.text.splitlines():
                if line.startswith("$ "):
                    if cmd is not None:
                        checks.append(Check("cli", block, cli_argv(cmd, block.where), "\n".join(out) + "\n"))
                    cmd, out = line[2:], []
                else:
                    assert cmd is not None, f"{block.where}: output before the first `$ ` command"
                    out.append(line)
            if cmd is not None:
                checks.append(Check("cli", block, cli_argv(cmd, block.where), "\n".join(out) + "\n"))
            continue
        if block.lang in ("sh", "bash"):
            for line in block.text.splitlines():
                cmd = strip_comment(line)
                if cmd:
                    checks.append(Check("cli-ok", block, cli_argv(cmd, block.where), None))
            continue
        raise AssertionError(f"{block.where}: a ```{block.lang} block must be marked <!-- test: skip REASON -->")
    if pending is not None and pending is not SKIPPED:
        checks.append(pending)
    return checks, skipped


def normalise(text):
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def matches(expected_line, actual_line):
    if "..." not in expected_line:
        return expected_line == actual_line
    pattern = ".*?".join(re.escape(part) for part in expected_line.split("..."))
    return re.fullmatch(pattern, actual_line) is not None


def compare(expected, actual, workdir):
    exp = normalise(re.sub(r"/tmp/[\w.-]+/", "<DIR>/", expected))
    act = normalise(actual.replace(str(workdir) + os.sep, "<DIR>/"))
    return len(exp) == len(act) and all(matches(e, a) for e, a in zip(exp, act))


def excerpt_missing(excerpt, source):
    """The first line of excerpt not found in source after the previous one (None: all
    found); a line `...` stands for lines left out."""
    lines = [line.strip() for line in source.splitlines()]
    pos = 0
    for line in excerpt.splitlines():
        want = line.strip()
        if not want or want == "...":
            continue
        try:
            pos = lines.index(want, pos) + 1
        except ValueError:
            return want
    return None


# ---------------------------------------------------------------------------------------
# The runner: one interpreter with the imports done, forking once per block.

def serve():  # pragma: no cover - runs in the child interpreter
    import runpy
    import signal
    import traceback

    import numpy  # noqa: F401
    try:
        import scipy.special  # noqa: F401
    except ImportError:
        pass
    import adjoint_s2s  # noqa: F401
    from adjoint_s2s import cli

    for request in sys.stdin:
        job = json.loads(request)
        out_path = job["out"]
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                sys.stdout = sys.stderr = open(1, "w", closefd=False)
                signal.alarm(job.get("timeout", 60))
                os.chdir(job["dir"])
                sys.path.insert(0, job["dir"])
                if job["kind"] == "python":
                    sys.argv = [job["path"]]
                    runpy.run_path(job["path"], run_name="__main__")
                    code = 0
                else:
                    code = cli.main(job["argv"])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                sys.stdout.flush()
                os._exit(code or 0)
        _, status = os.waitpid(pid, 0)
        sys.__stdout__.write(json.dumps({"code": os.waitstatus_to_exitcode(status)}) + "\n")
        sys.__stdout__.flush()


class Server:
    """One runner interpreter; its jobs run one at a time."""

    def __init__(self, tmp, index):
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, env=env, cwd=ROOT,
        )
        self.out = Path(tmp) / f"out{index}.txt"

    def run(self, job):
        job["out"] = str(self.out)
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            return 1, "the runner interpreter died"
        return json.loads(line)["code"], self.out.read_text()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def execute(check, server, workdir):
    if check.kind == "python":
        path = workdir / "example.py"
        path.write_text(check.payload)
        if getattr(check, "save_as", None):
            (workdir / check.save_as).write_text(check.payload)
        return server.run({"kind": "python", "dir": str(workdir), "path": str(path)})
    return server.run({"kind": "cli", "dir": str(workdir), "argv": check.payload})


@pytest.fixture(scope="module")
def results():
    """Runs every check once, the pages spread over two runner interpreters (a page's
    blocks in order on one of them: they share its directory)."""
    import threading

    runnable = [c for c in ALL if c.kind != "excerpt"]
    pages = {}
    for c in runnable:
        pages.setdefault(c.block.page, []).append(c)
    n = max(1, min(2, os.cpu_count() or 1))
    groups = [[] for _ in range(n)]
    for page, checks in sorted(pages.items(), key=lambda kv: -len(kv[1])):
        min(groups, key=lambda g: sum(len(pages[p]) for p in g)).append(page)
    out = {}
    with tempfile.TemporaryDirectory(prefix="adjoint_s2s_docs_") as tmp:
        servers = [Server(tmp, i) for i in range(n)]

        def work(server, group):
            for page in group:
                workdir = Path(tmp) / page.stem
                workdir.mkdir()
                for c in pages[page]:
                    out[id(c)] = execute(c, server, workdir) + (workdir,)

        threads = [threading.Thread(target=work, args=(s, g)) for s, g in zip(servers, groups)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for server in servers:
            server.close()
        yield out


ALL = []
for _page in PAGES:
    _checks, _ = plan(_page)
    ALL.extend(_checks)


def test_every_page_has_blocks_and_markers_are_explained():
    total = sum(len(parse(p)) for p in PAGES)
    skipped = [b for p in PAGES for b in plan(p)[1]]
    assert total > 50
    # skipping is rare and each skip says why
    assert len(skipped) <= 12, [b.where for b in skipped]
    assert all(b.marker[1] for b in skipped)


def test_api_reference_lists_every_public_name():
    import adjoint_s2s

    api = (ROOT / "docs" / "api.md").read_text()
    missing = [n for n in adjoint_s2s.__all__ if f"::: adjoint_s2s.{n}\n" not in api]
    assert not missing, f"docs/api.md has no entry for {missing}"


@pytest.mark.parametrize("check", ALL, ids=[f"{c.block.where}-{c.kind}" for c in ALL])
def test_block(check, results):
    block = check.block
    if check.kind == "excerpt":
        missing = excerpt_missing(block.text, (ROOT / check.payload).read_text())
        assert missing is None, f"{block.where}: not in {check.payload} (in this order): {missing!r}"
        return
    code, output, workdir = results[id(check)]
    if check.kind == "python":
        assert code == 0, f"{block.where}: the block failed:\n{output}"
    else:
        assert code == 0, f"{block.where}: adjoint-s2s {' '.join(check.payload)} failed:\n{output}"
        if check.kind == "cli-ok":
            return
    if not compare(check.expected, output, workdir):
        shown = output.replace(str(workdir) + os.sep, "/tmp/docs-example/")
        pytest.fail(
            f"{block.where}: the page shows\n{check.expected}\nbut the block prints\n{shown}",
            pytrace=False,
        )


if __name__ == "__main__" and sys.argv[1:] == ["--serve"]:
    serve()
