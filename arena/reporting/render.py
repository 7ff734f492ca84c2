"""A tiny document model rendered twice: a self-contained HTML page and its Markdown twin.

The report is built as a list of blocks (headings, paragraphs, tables, figures, details); HTML and
Markdown are two renderings of the same list, so they always say the same thing. Rows or cells
marked ``bad`` (bound violations, failures) are red in both: inline ``color`` in HTML, a red
``<span>`` plus a ``⚠`` marker in Markdown (renderers that strip styles keep the marker).
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass, field

RED = "#c00000"

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
table.leaderboard {{ display: inline-table; margin-right: 1.2em; vertical-align: top; }}
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


Block = Heading | Para | Table | Figure | Details | Links


# ----------------------------------------------------------------------------------------------
# HTML


def _inline_html(text: str) -> str:
    """Escape, then turn `code` spans into <code>."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def _table_html(t: Table) -> str:
    cls = f' class="{t.css_class}"' if t.css_class else ""
    ident = f' id="{html.escape(t.anchor)}"' if t.anchor else ""
    out = [f"<table{cls}{ident}>"]
    if t.caption:
        out.append(f"<caption>{_inline_html(t.caption)}</caption>")
    head = "".join(
        f'<th class="text">{html.escape(c)}</th>'
        if i in t.text_columns
        else f"<th>{html.escape(c)}</th>"
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
            cells.append(f"<td{cl}{style}>{html.escape(value)}</td>")
        out.append(tr + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def render_html(title: str, blocks: Sequence[Block], nav: Sequence[tuple[str, str]] = ()) -> str:
    """The self-contained page: CSS inline, figures as base64 PNG (linked to their files)."""
    body = [f"<h1>{html.escape(title)}</h1>"]
    if nav:
        items = "".join(
            f'<li><a href="#{html.escape(a)}">{html.escape(t)}</a></li>' for t, a in nav
        )
        body.append(f"<nav><ul>{items}</ul></nav>")
    for b in blocks:
        if isinstance(b, Heading):
            ident = f' id="{html.escape(b.anchor)}"' if b.anchor else ""
            body.append(f"<h{b.level}{ident}>{html.escape(b.text)}</h{b.level}>")
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
            alt = html.escape(b.caption, quote=True)
            body.append(
                f'<figure id="fig-{html.escape(b.name)}">'
                f'<a href="{html.escape(b.svg_path)}">'
                f'<img src="data:image/png;base64,{data}" alt="{alt}"></a>'
                f"<figcaption>{_inline_html(b.caption)} "
                f'(<a href="{html.escape(b.png_path)}">PNG</a>, '
                f'<a href="{html.escape(b.svg_path)}">SVG</a>)</figcaption></figure>'
            )
        elif isinstance(b, Details):
            cls = f' class="bad" style="color:{RED}"' if b.bad else ""
            body.append(
                f"<details><summary{cls}>{_inline_html(b.summary)}</summary>"
                f"<pre>{html.escape(b.body)}</pre></details>"
            )
        elif isinstance(b, Links):
            links = ", ".join(
                f'<a href="{html.escape(p)}">{html.escape(t)}</a>' for t, p in b.items
            )
            body.append(f'<p class="note">{_inline_html(b.prefix)}{links}</p>')
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n"
        f"<script>{IMAGES_SCRIPT}</script>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


# ----------------------------------------------------------------------------------------------
# Markdown


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_red(text: str) -> str:
    return f'<span style="color:{RED}">⚠ {html.escape(text)}</span>'


def _table_md(t: Table) -> str:
    out = []
    if t.caption:
        out.append(f"**{t.caption}**\n")
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


def render_markdown(title: str, blocks: Sequence[Block]) -> str:
    """The same content as :func:`render_html`, linking the PNG files instead of embedding them."""
    out = [f"# {title}", ""]
    for b in blocks:
        if isinstance(b, Heading):
            out += ["#" * b.level + " " + b.text, ""]
        elif isinstance(b, Para):
            out += [_md_red(b.text) if b.bad else (f"*{b.text}*" if b.note else b.text), ""]
        elif isinstance(b, Table):
            out += [_table_md(b), ""]
        elif isinstance(b, Figure):
            out += [
                f"![{b.caption}]({b.png_path})",
                "",
                f"*{b.caption}* ([PNG]({b.png_path}), [SVG]({b.svg_path}))",
                "",
            ]
        elif isinstance(b, Details):
            summary = _md_red(b.summary) if b.bad else html.escape(b.summary)
            out += [
                "<details>",
                f"<summary>{summary}</summary>",
                "",
                "```",
                b.body.replace("```", "ʼʼʼ"),
                "```",
                "",
                "</details>",
                "",
            ]
        elif isinstance(b, Links):
            out += [b.prefix + ", ".join(f"[{t}]({p})" for t, p in b.items), ""]
    return "\n".join(out).rstrip() + "\n"
