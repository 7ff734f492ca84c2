"""The report's layout without a browser: long tables collapsed and sortable, every table in its
scrolling box, the summary's lines and their links (the browser test checks them laid out)."""

from __future__ import annotations

import re

from arena.reporting.build import head_sections
from arena.reporting.render import (
    LONG_TABLE_ROWS,
    Heading,
    Para,
    Table,
    render_html,
    render_markdown,
)
from arena.reporting.sections.context import MAX_NAMED, Section, Verdict


def _table(n: int, bad: set[int] = frozenset()) -> Table:
    return Table(["name", "x"], [[f"r{i}", str(i)] for i in range(n)], "Things", set(bad))


def test_long_tables_are_collapsed_sortable_and_open_when_flagged():
    short, long, flagged = _table(LONG_TABLE_ROWS), _table(LONG_TABLE_ROWS + 1), _table(40, {3})
    page = render_html("t", [short, long, flagged])
    wraps = re.findall(
        r'(<details[^>]*>)?(?:<summary>([^<]*)</summary>\n)?<div class="table-wrap">'
        r'<table( class="sortable")?>',
        page,
    )
    assert wraps == [
        ("", "", ""),  # 25 rows: shown, in its scrolling box
        (
            '<details class="long-table">',
            "Things (26 rows; click a header to sort)",
            ' class="sortable"',
        ),
        (
            '<details class="long-table" open>',
            "Things (40 rows, 1 flagged; click a header to sort)",
            ' class="sortable"',
        ),
    ]
    assert "table.sortable thead th" in page  # the inline sorting script
    # the Markdown keeps every table whole
    assert render_markdown("t", [long]).count("\n| r") == LONG_TABLE_ROWS + 1


def test_summary_counts_links_and_names_at_most_a_few():
    names = [f"game{i} · p · regret" for i in range(MAX_NAMED + 2)]
    sections = [
        Section("Bounds", "bounds", [Para("x")], verdicts=[Verdict("Bounds", "bounds", names, 50)]),
        Section(
            "Fails",
            "fails",
            [Heading("Sub part", 3, "sub")],
            verdicts=[Verdict("Cells", "sub", [])],
        ),
    ]
    head = head_sections(sections)
    assert [s.anchor for s in head] == ["summary"]  # no section gave a headline block
    blocks = [b for s in [*head, *sections] for b in [Heading(s.title, 2, s.anchor), *s.blocks]]
    page, md = render_html("t", blocks), render_markdown("t", blocks)
    line = f"40 of 50 hold; 10 flagged ({'; '.join(names[:MAX_NAMED])}; and 2 more)"
    assert f'<a href="#bounds">Bounds</a>: {line}</li>' in page
    assert '<li class="ok"><a href="#sub">Cells</a>: none</li>' in page
    assert f"[Bounds](#bounds): {line}" in md and "- [Cells](#sub-part): none" in md
    assert '<li class="bad" style="color:#c00000">' in page and "⚠ [Bounds]" in md
