"""The side-by-side page of ``show-adjoint --html``, opened in headless Chromium.

Two screenshots of the same page are compared: as it loads, and with the address naming a
user line (what following one of its links does). The second must differ from the first
exactly by the highlight, and the highlight must fall on the user's line in the left column
and on the generated lines it became (forward and pullback) in the right one.

Chromium is not part of the project's dependencies: the test runs where a ``chromium``
(Debian's package ``chromium``) or Chrome binary is on the PATH and is skipped elsewhere,
saying so. The structural test of the same page, which needs no browser, is in
``tests/test_where_code_runs.py``.
"""
import shutil
import struct
import subprocess
import zlib

import pytest

from adjoint_s2s import sidebyside
from adjoint_s2s.cli import argument_kinds
from tests.test_where_code_runs import model_loss

_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")
_HIGHLIGHT = (0xFF, 0xE9, 0xA8)  # `.on` in sidebyside's style sheet
_WIDTH, _HEIGHT = 1400, 900


def _browser():
    for name in _BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def _screenshot(browser, url, out, profile):
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}",
           f"--window-size={_WIDTH},{_HEIGHT}", "--virtual-time-budget=3000",
           f"--screenshot={out}", url]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.exists(), f"Chromium wrote no screenshot:\n{done.stderr[-2000:]}"
    return _read_png(out.read_bytes())


def _read_png(data):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB/RGBA non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 0xFF
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, channels)])
        previous = line
    return width, height, rows


def _bands(rows, x0, x1):
    """Runs of consecutive screen rows with highlight pixels between columns x0 and x1."""
    lit = [y for y, row in enumerate(rows) if _HIGHLIGHT in row[x0:x1]]
    bands = []
    for y in lit:
        if bands and y == bands[-1][1] + 1:
            bands[-1][1] = y
        else:
            bands.append([y, y])
    return bands


@pytest.mark.skipif(_browser() is None, reason="no Chromium on the PATH (apt-get install chromium)")
def test_following_a_user_line_lights_it_and_the_generated_lines_it_became(tmp_path):
    page = tmp_path / "side.html"
    kinds, _ = argument_kinds(model_loss, "float,array")
    sidebyside.write_html(model_loss, kinds, page)
    linked = sidebyside.links(model_loss, sidebyside.emit.source_of(model_loss, kinds).source)
    line = min(linked)  # `y = w * x`: its forward line and where the pullback reverses it
    assert len(linked[line]) >= 2

    browser = _browser()
    _, _, plain = _screenshot(browser, page.as_uri(), tmp_path / "plain.png", tmp_path / "p1")
    width, height, lit = _screenshot(browser, page.as_uri() + f"#u{line}",
                                     tmp_path / "lit.png", tmp_path / "p2")
    assert (width, height) == (_WIDTH, _HEIGHT)

    # the page as it loads shows no highlight; the lit page differs from it only on lit rows
    assert not any(_HIGHLIGHT in row for row in plain)
    changed = [y for y in range(height) if plain[y] != lit[y]]
    assert changed and all(_HIGHLIGHT in lit[y] for y in changed)

    # one band on the left (the user's line), one per group of generated lines on the right
    half = width // 2
    left, right = _bands(lit, 0, half // 2), _bands(lit, half, width)
    assert len(left) == 1, left
    assert len(right) >= 2, right  # forward and pullback are apart in the generated code
    line_height = left[0][1] - left[0][0] + 1  # one user line
    assert 10 <= line_height <= 40
    # the generated groups are a few lines each (comment and statements), not whole blocks
    assert all(band[1] - band[0] + 1 <= 5 * line_height for band in right)
