"""A tiny document model rendered twice: a self-contained HTML page and its Markdown twin.

The report is built as a list of blocks (headings, paragraphs, tables, figures, details); HTML and
Markdown are two renderings of the same list, so they always say the same thing. Rows or cells
marked ``bad`` (bound violations, failures) are red in both: inline ``color`` in HTML, a red
``<span>`` plus a ``⚠`` marker in Markdown (renderers that strip styles keep the marker).

Every string of a block is plain text: names, parameters, paths and error messages come from
files anyone may write, so nothing in them is markup. The renderers escape all of it, in one
place per format (:func:`_inline_html`, :func:`md_text`); the only markup a section can use is a
code span made with :func:`code`, whose delimiters are characters no name can forge into markup.
Links go through :func:`_href`, so a path can never become a ``javascript:`` (or other) URL.

The page is read on a screen: a table longer than :data:`LONG_TABLE_ROWS` rows is collapsed into
a ``<details>`` (open when it has flagged rows) and sortable by clicking a header (an inline
script, :data:`SORT_SCRIPT`); every table scrolls inside its own container and long unbreakable
strings wrap, so that nothing is wider than the page. ``report.md`` keeps every table as it is.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

RED = "#c00000"

LONG_TABLE_ROWS = 25
"""Past this many rows a table of the HTML page is collapsed and sortable: longer than a screen."""

# Private-use characters delimit code spans: a backtick in a name is just a backtick, so a player
# called ``a`b`` is shown as such and cannot open or close a span.
CODE_OPEN, CODE_CLOSE = "\ue000", "\ue001"
_SPAN = re.compile(f"{CODE_OPEN}([^{CODE_OPEN}{CODE_CLOSE}]*){CODE_CLOSE}")


def code(value: object) -> str:
    r"""Mark ``str(value)`` as a code span of a block's text (shown verbatim, monospaced).

    Examples
    --------
    >>> md_text("run " + code("a`b") + " of *x*")
    'run ``a`b`` of \\*x\\*'
    """
    text = str(value).replace(CODE_OPEN, "").replace(CODE_CLOSE, "")
    return f"{CODE_OPEN}{text}{CODE_CLOSE}"


def _spans(text: str) -> list[tuple[str, bool]]:
    """Split ``text`` into (piece, is_code) pairs; stray delimiters are dropped."""
    out: list[tuple[str, bool]] = []
    pos = 0
    for m in _SPAN.finditer(text):
        out.append((text[pos : m.start()], False))
        out.append((m.group(1), True))
        pos = m.end()
    out.append((text[pos:], False))
    return [(p.replace(CODE_OPEN, "").replace(CODE_CLOSE, ""), c) for p, c in out if p or c]


def _plain(text: str) -> str:
    """``text`` without its code-span delimiters (for attributes and titles)."""
    return "".join(p for p, _ in _spans(text))


def _href(path: str) -> str:
    """A link target that is always a relative path: percent-encode everything but ``/._-~``.

    A ``:`` is encoded, so no value can become a scheme (``javascript:``, ``data:``...).

    Examples
    --------
    >>> _href("figures/regret_curves.png"), _href("javascript:alert(1)")
    ('figures/regret_curves.png', 'javascript%3Aalert%281%29')
    """
    return quote(path, safe="/._-~")


CSS = f"""
body {{ font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto;
       max-width: 1100px; padding: 0 1em; color: #111; line-height: 1.45; }}
h1 {{ font-size: 1.6em; }} h2 {{ margin-top: 2em; border-bottom: 1px solid #ccc; }}
h3 {{ margin-top: 1.4em; }}
table {{ border-collapse: collapse; margin: 0.6em 0 1.2em; font-size: 0.9em; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; vertical-align: top; }}
th {{ background: #f3f3f3; }}
td.text, th.text {{ text-align: left; }}
caption {{ caption-side: top; text-align: left; font-weight: 600; padding-bottom: 0.3em; }}
.table-wrap {{ max-width: 100%; overflow-x: auto; }}
.table-wrap.inline {{ display: inline-block; margin-right: 1.2em; vertical-align: top; }}
table.sortable th {{ cursor: pointer; }}
table.sortable th[aria-sort="ascending"]::after {{ content: " ▲"; }}
table.sortable th[aria-sort="descending"]::after {{ content: " ▼"; }}
details.long-table > summary {{ cursor: pointer; font-weight: 600; }}
p, li, summary, figcaption, caption, h1, h2, h3, pre {{ overflow-wrap: anywhere; }}
td, th {{ overflow-wrap: break-word; }}
tr.bad td, .bad {{ color: {RED}; }}
tr.bad td {{ font-weight: 600; }}
.ok {{ color: #006400; }}
figure {{ margin: 1em 0 2em; }}
figure img {{ max-width: 100%; height: auto; border: 1px solid #eee; }}
figcaption {{ font-size: 0.9em; color: #333; }}
pre {{ background: #f7f7f7; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }}
details {{ margin: 0.4em 0; }}
nav ul {{ columns: 2; }}
.note {{ font-size: 0.9em; color: #333; }}
ul.verdicts li {{ margin: 0.2em 0; }}
"""

IMAGES_SCRIPT = """
window.addEventListener("load", function () {
  var imgs = document.images, ok = 0;
  for (var i = 0; i < imgs.length; i++) {
    if (imgs[i].complete && imgs[i].naturalWidth > 0) { ok++; }
  }
  document.body.dataset.imagesLoaded = String(ok);
  document.body.dataset.imagesTotal = String(imgs.length);
  var bad = document.querySelectorAll("tr.bad td"), red = 0;
  for (var j = 0; j < bad.length; j++) {
    if (getComputedStyle(bad[j]).color === "rgb(192, 0, 0)") { red++; }
  }
  document.body.dataset.redCells = String(red);
  document.body.dataset.badCells = String(bad.length);
});
"""


# Sorts a table.sortable by the clicked header's column, ascending then descending: numbers (the
# first one of a cell, so "[1.2, 3.4]" sorts by 1.2; "−" and "∞" read as such) before text.
SORT_SCRIPT = """
function arenaSortKey(cell) {
  var t = cell ? cell.textContent.trim() : "";
  var s = t.replace(/^[\\[(<≤≈~]+/, "").replace(/^−/, "-");
  if (/^-?∞/.test(s)) { return s.charAt(0) === "-" ? -Infinity : Infinity; }
  var m = /^-?(\\d+\\.?\\d*|\\.\\d+)(e[-+]?\\d+)?/i.exec(s.replace(/,(?=\\d{3})/g, ""));
  return m ? parseFloat(m[0]) : t.toLowerCase();
}
document.addEventListener("click", function (e) {
  var th = e.target.closest ? e.target.closest("table.sortable thead th") : null;
  if (!th) { return; }
  var table = th.closest("table"), body = table.tBodies[0], heads = th.parentNode.children;
  var col = Array.prototype.indexOf.call(heads, th);
  var asc = th.getAttribute("aria-sort") !== "ascending";
  for (var i = 0; i < heads.length; i++) { heads[i].removeAttribute("aria-sort"); }
  th.setAttribute("aria-sort", asc ? "ascending" : "descending");
  var rows = Array.prototype.slice.call(body.rows);
  rows.sort(function (a, b) {
    var x = arenaSortKey(a.cells[col]), y = arenaSortKey(b.cells[col]), c;
    if (typeof x !== typeof y) { c = typeof x === "number" ? -1 : 1; }
    else { c = x < y ? -1 : (x > y ? 1 : 0); }
    return asc ? c : -c;
  });
  for (var j = 0; j < rows.length; j++) { body.appendChild(rows[j]); }
});
"""


@dataclass
class Heading:
    text: str
    level: int = 2
    anchor: str | None = None


@dataclass
class Para:
    """A paragraph; ``text`` is plain text (escaped), ``code`` spans in backticks are kept."""

    text: str
    bad: bool = False
    ok: bool = False
    note: bool = False


@dataclass
class Table:
    columns: list[str]
    rows: list[list[str]]
    caption: str = ""
    bad_rows: set[int] = field(default_factory=set)
    bad_cells: set[tuple[int, int]] = field(default_factory=set)
    text_columns: set[int] = field(default_factory=lambda: {0})
    anchor: str | None = None
    css_class: str = ""


@dataclass
class Figure:
    name: str
    caption: str
    png: bytes
    png_path: str
    svg_path: str


@dataclass
class Details:
    summary: str
    body: str  # preformatted text
    bad: bool = False


@dataclass
class Links:
    items: list[tuple[str, str]]  # (text, relative path)
    prefix: str = ""


@dataclass
class Summary:
    """The report's verdict lines: each a label linking to a heading of the report, then text.

    ``items`` holds ``(label, text, anchor, bad)``; ``anchor`` is a :class:`Heading`'s anchor (the
    Markdown link goes to that heading's GitHub slug), ``bad`` marks the line red.
    """

    items: list[tuple[str, str, str, bool]]


Block = Heading | Para | Table | Figure | Details | Links | Summary


# ----------------------------------------------------------------------------------------------
# HTML


def _inline_html(text: str) -> str:
    """Escape ``text`` for HTML; its :func:`code` spans become ``<code>``.

    Examples
    --------
    >>> _inline_html("a `b` <i> " + code("x<y"))
    'a `b` &lt;i&gt; <code>x&lt;y</code>'
    """
    return "".join(
        f"<code>{html.escape(p)}</code>" if is_code else html.escape(p)
        for p, is_code in _spans(text)
    )


def _table_html(t: Table) -> str:
    """A table in its scrolling container; a long one collapsed, sortable, open when flagged."""
    long = len(t.rows) > LONG_TABLE_ROWS
    classes = " ".join(c for c in (t.css_class, "sortable" if long else "") if c)
    wrap = "table-wrap inline" if t.css_class == "leaderboard" else "table-wrap"
    table = f'<div class="{wrap}">{_table_element(t, classes)}</div>'
    if not long:
        return table
    flagged = len(t.bad_rows | {r for r, _ in t.bad_cells})
    what = _inline_html(t.caption) if t.caption else "Table"
    count = f"{len(t.rows)} rows" + (f", {flagged} flagged" if flagged else "")
    opened = " open" if flagged else ""
    return (
        f'<details class="long-table"{opened}><summary>{what} ({count}; click a header to '
        f"sort)</summary>\n{table}\n</details>"
    )


def _table_element(t: Table, classes: str) -> str:
    cls = f' class="{classes}"' if classes else ""
    ident = f' id="{html.escape(t.anchor)}"' if t.anchor else ""
    out = [f"<table{cls}{ident}>"]
    if t.caption:
        out.append(f"<caption>{_inline_html(t.caption)}</caption>")
    head = "".join(
        f'<th class="text">{_inline_html(c)}</th>'
        if i in t.text_columns
        else f"<th>{_inline_html(c)}</th>"
        for i, c in enumerate(t.columns)
    )
    out.append(f"<thead><tr>{head}</tr></thead><tbody>")
    for r, row in enumerate(t.rows):
        bad_row = r in t.bad_rows
        tr = f'<tr class="bad" style="color:{RED}">' if bad_row else "<tr>"
        cells = []
        for c, value in enumerate(row):
            classes = []
            if c in t.text_columns:
                classes.append("text")
            style = ""
            if (r, c) in t.bad_cells or bad_row:
                classes.append("bad")
                style = f' style="color:{RED}"'
            cl = f' class="{" ".join(classes)}"' if classes else ""
            cells.append(f"<td{cl}{style}>{_inline_html(value)}</td>")
        out.append(tr + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def render_html(title: str, blocks: Sequence[Block], nav: Sequence[tuple[str, str]] = ()) -> str:
    """The self-contained page: CSS inline, figures as base64 PNG (linked to their files)."""
    body = [f"<h1>{_inline_html(title)}</h1>"]
    if nav:
        items = "".join(
            f'<li><a href="#{html.escape(a)}">{_inline_html(t)}</a></li>' for t, a in nav
        )
        body.append(f"<nav><ul>{items}</ul></nav>")
    for b in blocks:
        if isinstance(b, Heading):
            ident = f' id="{html.escape(b.anchor)}"' if b.anchor else ""
            body.append(f"<h{b.level}{ident}>{_inline_html(b.text)}</h{b.level}>")
        elif isinstance(b, Para):
            if b.bad:
                body.append(f'<p class="bad" style="color:{RED}">{_inline_html(b.text)}</p>')
            elif b.ok:
                body.append(f'<p class="ok">{_inline_html(b.text)}</p>')
            elif b.note:
                body.append(f'<p class="note">{_inline_html(b.text)}</p>')
            else:
                body.append(f"<p>{_inline_html(b.text)}</p>")
        elif isinstance(b, Table):
            body.append(_table_html(b))
        elif isinstance(b, Figure):
            data = base64.b64encode(b.png).decode("ascii")
            alt = html.escape(_plain(b.caption), quote=True)
            png, svg = html.escape(_href(b.png_path)), html.escape(_href(b.svg_path))
            body.append(
                f'<figure id="fig-{html.escape(b.name)}">'
                f'<a href="{svg}">'
                f'<img src="data:image/png;base64,{data}" alt="{alt}"></a>'
                f"<figcaption>{_inline_html(b.caption)} "
                f'(<a href="{png}">PNG</a>, '
                f'<a href="{svg}">SVG</a>)</figcaption></figure>'
            )
        elif isinstance(b, Details):
            cls = f' class="bad" style="color:{RED}"' if b.bad else ""
            body.append(
                f"<details><summary{cls}>{_inline_html(b.summary)}</summary>"
                f"<pre>{html.escape(b.body)}</pre></details>"
            )
        elif isinstance(b, Links):
            links = ", ".join(
                f'<a href="{html.escape(_href(p))}">{_inline_html(t)}</a>' for t, p in b.items
            )
            body.append(f'<p class="note">{_inline_html(b.prefix)}{links}</p>')
        elif isinstance(b, Summary):
            body.append('<ul class="verdicts">')
            for label, text, anchor, bad in b.items:
                cls = f'class="bad" style="color:{RED}"' if bad else 'class="ok"'
                body.append(
                    f'<li {cls}><a href="#{html.escape(anchor, quote=True)}">'
                    f"{_inline_html(label)}</a>: {_inline_html(text)}</li>"
                )
            body.append("</ul>")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(_plain(title))}</title>\n<style>{CSS}</style>\n"
        f"<script>{IMAGES_SCRIPT}{SORT_SCRIPT}</script>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


# ----------------------------------------------------------------------------------------------
# Markdown


# Backslash-escape the ASCII punctuation that is markup anywhere in a line: emphasis, code,
# links/images, tables, strikethrough. ``<``, ``>`` and ``&`` become entities (html.escape) so
# that no tag, autolink or entity survives.
_MD_PUNCT = re.compile(r"([\\`*_\[\]|~])")
# GFM turns bare ``http://``, ``www.`` (and e-mail-like schemes) into links: break the scheme's
# separator. Every ":" is not escaped, to keep the Markdown source readable ("Source: ...").
_MD_SCHEME = re.compile(r"(?i)\b(https?|ftp|file|javascript|vbscript|data|mailto|xmpp|www)([:.])")
_MD_AS_ENTITY = re.compile(r"[\\`*_\[\]|~]")
# Markup only at the start of a line (headings, lists, setext underlines, ordered lists).
_MD_LINE_START = re.compile(r"^([#+=-])|^(\d+)([.)])")


def _md_escape(text: str, line_start: bool = True) -> str:
    r"""Plain ``text`` as Markdown that renders exactly ``text``: the one escape of report.md.

    Line breaks become spaces, since a new line could start a heading, a list or an HTML block.
    ``line_start``: whether ``text`` starts a line, where ``#``, ``-``, ``1.``... are markup too
    (not in a table cell or after other text, where escaping them would only clutter the source).

    Examples
    --------
    >>> _md_escape("<img src=x onerror=alert(1)> [a](javascript:b) *c* `d`")
    '&lt;img src=x onerror=alert(1)&gt; \\[a\\](javascript\\:b) \\*c\\* \\`d\\`'
    >>> _md_escape("# 1. x\n- y")
    '\\# 1. x - y'
    """
    text = html.escape(re.sub(r"[\r\n]+", " ", text), quote=False)
    text = _MD_SCHEME.sub(r"\1\\\2", _MD_PUNCT.sub(r"\\\1", text))
    if not line_start:
        return text
    return _MD_LINE_START.sub(lambda m: f"\\{m[1]}" if m[1] else f"{m[2]}\\{m[3]}", text)


def _md_code(text: str) -> str:
    """``text`` as a Markdown code span, verbatim: its fence is longer than any backtick run."""
    text = re.sub(r"[\r\n]+", " ", text)
    fence = "`" * (max((len(r) for r in re.findall("`+", text)), default=0) + 1)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md_html(text: str) -> str:
    r"""``text`` inside raw HTML of report.md (``<summary>``): there a backslash would show, so
    markup characters become numeric entities, which any renderer shows as the characters.

    Examples
    --------
    >>> _md_html("[a](javascript:b) <i>" + code("`x`"))
    '&#91;a&#93;(javascript:b) &lt;i&gt;<code>&#96;x&#96;</code>'
    """
    text = re.sub(r"[\r\n]+", " ", text)  # a blank line would end the HTML block
    return _MD_AS_ENTITY.sub(lambda m: f"&#{ord(m[0])};", _inline_html(text))


def md_text(text: str, line_start: bool = False) -> str:
    """A block's text in Markdown: plain pieces escaped, :func:`code` spans verbatim.

    Examples
    --------
    >>> md_text("player " + code("a`b") + " <b>")
    'player ``a`b`` &lt;b&gt;'
    """
    return "".join(
        _md_code(p) if is_code else _md_escape(p, line_start and i == 0)
        for i, (p, is_code) in enumerate(_spans(text))
    )


def _md_cell(text: str) -> str:
    """:func:`md_text` for a table cell: GFM splits cells at ``|`` even inside code spans."""
    return "".join(
        _md_code(p).replace("|", "\\|") if is_code else _md_escape(p, line_start=False)
        for p, is_code in _spans(text)
    )


def _md_red(rendered: str) -> str:
    """Already rendered Markdown (or HTML) in red, with a marker that survives stripped styles."""
    return f'<span style="color:{RED}">⚠ {rendered}</span>'


def _table_md(t: Table) -> str:
    out = []
    if t.caption:
        out.append(f"**{md_text(t.caption)}**\n")
    out.append("| " + " | ".join(_md_cell(c) for c in t.columns) + " |")
    aligns = [":---" if i in t.text_columns else "---:" for i in range(len(t.columns))]
    out.append("| " + " | ".join(aligns) + " |")
    for r, row in enumerate(t.rows):
        cells = []
        for c, value in enumerate(row):
            bad = r in t.bad_rows or (r, c) in t.bad_cells
            cells.append(
                _md_red(_md_cell(value))
                if bad and (c == 0 or (r, c) in t.bad_cells)
                else _md_cell(value)
            )
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def _fence(body: str) -> str:
    """A code fence longer than any backtick run of ``body``, so the body cannot close it."""
    return "`" * max(3, max((len(r) for r in re.findall("`+", body)), default=0) + 1)


def gfm_slug(text: str) -> str:
    """The anchor GitHub gives a heading of ``text``: lower case, punctuation dropped, spaces
    as ``-`` (a repeated slug gets ``-1``, ``-2``... in :func:`render_markdown`).

    Examples
    --------
    >>> gfm_slug("Flags: bound violations"), gfm_slug("Measured / bound")
    ('flags-bound-violations', 'measured--bound')
    """
    return re.sub(r"[^\w\- ]", "", _plain(text).lower()).replace(" ", "-")


def _md_anchors(title: str, blocks: Sequence[Block]) -> dict[str, str]:
    """Each heading's anchor → the slug GitHub gives it in report.md, repeats numbered."""
    seen: dict[str, int] = {gfm_slug(title): 1}
    out: dict[str, str] = {}
    for b in blocks:
        if isinstance(b, Heading):
            slug = gfm_slug(b.text)
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            if b.anchor and b.anchor not in out:
                out[b.anchor] = f"{slug}-{n}" if n else slug
    return out


def render_markdown(title: str, blocks: Sequence[Block]) -> str:
    """The same content as :func:`render_html`, linking the PNG files instead of embedding them."""
    out = [f"# {md_text(title)}", ""]
    anchors = _md_anchors(title, blocks)
    for b in blocks:
        if isinstance(b, Heading):
            out += ["#" * b.level + " " + md_text(b.text), ""]
        elif isinstance(b, Para):
            text = md_text(b.text, line_start=not (b.bad or b.note))
            out += [_md_red(text) if b.bad else (f"*{text}*" if b.note else text), ""]
        elif isinstance(b, Table):
            out += [_table_md(b), ""]
        elif isinstance(b, Figure):
            caption = md_text(b.caption)
            png, svg = _href(b.png_path), _href(b.svg_path)
            out += [
                f"![{caption}]({png})",
                "",
                f"*{caption}* ([PNG]({png}), [SVG]({svg}))",
                "",
            ]
        elif isinstance(b, Details):
            summary = _md_html(b.summary)
            fence = _fence(b.body)
            out += [
                "<details>",
                f"<summary>{_md_red(summary) if b.bad else summary}</summary>",
                "",
                fence,
                b.body,
                fence,
                "",
                "</details>",
                "",
            ]
        elif isinstance(b, Links):
            links = ", ".join(f"[{md_text(t)}]({_href(p)})" for t, p in b.items)
            out += [md_text(b.prefix, line_start=True) + links, ""]
        elif isinstance(b, Summary):
            for label, text, anchor, bad in b.items:
                slug = quote(anchors.get(anchor, anchor), safe="-_")
                line = f"[{md_text(label)}](#{slug}): {md_text(text)}"
                out.append(f"- {_md_red(line) if bad else line}")
            out.append("")
    return "\n".join(out).rstrip() + "\n"
