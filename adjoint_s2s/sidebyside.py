"""What ``adjoint-s2s show-adjoint`` and ``show_adjoint`` print: the generated pair
(``show``), and with ``--html out.html`` the user's function on the left, the generated
pair on the right, each user line linked to the generated lines it became.

The generated code names each primal statement in a comment (``# y = x * w``), in the
forward part and again where the pullback reverses it; a user line is linked to every
generated line under such a comment that repeats it.
"""
import html
import inspect
import sys

from . import emit, runtime
from .tracebacks import statements_of

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>adjoint_s2s: {title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }}
h1 {{ font-size: 1.2em; }}
.columns {{ display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.4fr); gap: 1.5em; }}
h2 {{ font-size: 1em; margin: 0 0 .4em 0; }}
pre {{ background: #f6f8fa; padding: .6em; overflow-x: auto; line-height: 1.35; margin: 0; }}
.line {{ display: block; white-space: pre; }}
.line .no {{ display: inline-block; width: 3em; color: #999; user-select: none; }}
a.line {{ color: inherit; text-decoration: none; }}
a.line:focus {{ outline: none; }}
.linked {{ background: #eef4ff; }}
.on {{ background: #ffe9a8; }}
.comment {{ color: #6a737d; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p>Your lines on the left; the generated primal-plus-pullback pair on the right. Point at a
line to see where it went: forward, where it runs, and in the pullback, where it is reversed.
Click it to keep it lit (the address then names it).</p>
<div class="columns">
<section><h2>{filename}</h2><pre id="user">{user}</pre></section>
<section><h2>generated</h2><pre id="generated">{generated}</pre></section>
</div>
<script>
function light(ids, on) {{
  for (const id of ids) {{
    const el = document.getElementById(id);
    if (el) el.classList.toggle("on", on);
  }}
}}
function group(el) {{
  return [el.id].concat(el.dataset.links.split(" "));
}}
for (const el of document.querySelectorAll("[data-links]")) {{
  el.addEventListener("mouseenter", () => light(group(el), true));
  el.addEventListener("mouseleave", () => fromHash());
}}
// A followed link (or an address ending in #u12) keeps its group lit, so a view can be shared.
function fromHash() {{
  for (const el of document.querySelectorAll(".on")) el.classList.remove("on");
  const el = document.getElementById(location.hash.slice(1));
  if (el && el.dataset.links) light(group(el), true);
}}
window.addEventListener("hashchange", fromHash);
fromHash();
</script>
</body>
</html>
"""


def show(fn, kinds, all_=False, out=None, seen=None, fields=()):
    """Write the generated pair of fn for kinds (and fields: kinds.field_kinds; with all_,
    its callees') to out."""
    out = sys.stdout if out is None else out
    seen = set() if seen is None else seen
    if fn.__code__ in seen:
        return
    seen.add(fn.__code__)
    entry = emit.source_of(fn, kinds, fields)
    out.write(entry.source)
    if all_:
        for callee in entry.callees:
            if runtime._not_users(callee.__code__.co_filename) or callee.__code__.co_filename.startswith("<"):
                continue  # NumPy's or adjoint_s2s's own code (a rule's helpers): not the user's;
                # or code with no file (a dataclass's generated __init__, inlined)
            out.write("\n\n")
            n = callee.__code__.co_argcount
            show(callee, ("other",) * n, True, out, seen)


def statement_lines(fn):
    """(source lines of fn, first line number, {statement text: [user line numbers]})."""
    lines, first = inspect.getsourcelines(fn)
    return lines, first, statements_of(lines, first)


def links(fn, generated):
    """{user line number: [generated line indices]}: each generated line goes with the
    primal statement named by the comment above it."""
    _, _, where = statement_lines(fn)
    out = {}
    current = None
    for i, line in enumerate(generated.splitlines()):
        text = line.strip()
        if text.startswith("# "):
            current = where.get(text[2:].rstrip(":"))
        elif text.startswith(("def ", "return ")):
            current = None  # the pullback's header, the pair's return: no user line's
            continue
        if current:
            for n in current:
                out.setdefault(n, []).append(i)
    return out


def render(fn, kinds):
    """The side-by-side page for fn specialised on kinds, as text."""
    generated = emit.source_of(fn, kinds).source
    lines, first, _ = statement_lines(fn)
    linked = links(fn, generated)
    back = {}
    for n, gen in linked.items():
        for i in gen:
            back.setdefault(i, []).append(n)
    user = []
    for k, line in enumerate(lines):
        n = first + k
        body = f'<span class="no">{n}</span>{html.escape(line.rstrip())}'
        if n in linked:
            ids = " ".join(f"g{i}" for i in linked[n])
            user.append(f'<a class="line linked" id="u{n}" href="#g{linked[n][0]}" '
                        f'data-links="{ids}">{body}</a>')
        else:
            user.append(f'<span class="line" id="u{n}">{body}</span>')
    gen = []
    for i, line in enumerate(generated.splitlines()):
        body = html.escape(line)
        if line.strip().startswith("#"):
            body = f'<span class="comment">{body}</span>'
        body = f'<span class="no">{i + 1}</span>{body}'
        if i in back:
            ids = " ".join(f"u{n}" for n in back[i])
            gen.append(f'<a class="line linked" id="g{i}" href="#u{back[i][0]}" '
                       f'data-links="{ids}">{body}</a>')
        else:
            gen.append(f'<span class="line" id="g{i}">{body}</span>')
    return _PAGE.format(
        title=html.escape(f"{fn.__qualname__}: primal and pullback"),
        filename=html.escape(fn.__code__.co_filename),
        user="".join(user),
        generated="".join(gen),
    )


def write_html(fn, kinds, path):
    with open(path, "w", encoding="utf-8") as f:
        f.write(render(fn, kinds))
