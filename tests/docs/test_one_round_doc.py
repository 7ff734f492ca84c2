"""docs/one-round.md runs as written: its python blocks, in order, in one namespace.

Each block asserts what it shows (the hand loop's rows equal ``arena.play``'s), so a block that
stops being true fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "one-round.md"


def python_blocks() -> list[str]:
    """Every ```python block of the page, in order."""
    return re.findall(r"^```python\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.S | re.M)


def test_the_page_shows_every_protocol():
    source = "\n".join(python_blocks())
    for name in ('"hedge"', '"exp3"', '"ogd"', '"online_bbm"', '"sleeping"'):
        assert name in source, name


def test_the_pages_python_blocks_run():
    blocks = python_blocks()
    assert len(blocks) == 7, "the page's examples moved: update this test"
    namespace: dict = {}
    for i, block in enumerate(blocks):
        try:
            exec(compile(ast.parse(block), f"{PAGE}:block {i}", "exec"), namespace)
        except Exception as exc:  # name the block that broke
            pytest.fail(f"block {i} of docs/one-round.md: {type(exc).__name__}: {exc}")
