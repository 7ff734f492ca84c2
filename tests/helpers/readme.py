"""The README's result tables as the report tests read them: rows, and the numbers in a cell."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_table(header: str) -> dict[str, list[str]]:
    """The rows of the README table whose header line starts with ``header``: first cell → the
    other cells (stripped). Rows are read while they start with ``| `` and a backtick."""
    text = README.read_text(encoding="utf-8")
    start = text.index(header)
    rows = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("| `"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def numbers(cell: str) -> list[float]:
    """The numbers written in a table cell, the typographic minus read as a sign."""
    found = re.findall(r"[−-]?\d+(?:\.\d+)?(?:e-?\d+)?", cell)
    return [float(v.replace("−", "-")) for v in found]
