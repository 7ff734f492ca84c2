"""The code blocks of docs/architecture.md's sections, and a distribution built from them.

The "Adding a metric" and "Adding a protocol" sections are tested as written: their python blocks
become a module and their toml block its entry points, installed the way ``pip install`` leaves a
plugin (the module and a ``.dist-info`` folder with ``entry_points.txt``), so the documented
example cannot drift from what works.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def section(title: str) -> str:
    """Return the text of the section ``## title`` of the architecture page."""
    text = DOC.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end == -1 else text[start:end]


def blocks(text: str, language: str) -> list[str]:
    """Return the fenced code blocks of ``language`` in ``text``, in order."""
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


def entry_points(toml: str) -> dict[str, dict[str, str]]:
    """Return ``{group: {name: "module:attribute"}}`` of a ``pyproject.toml`` excerpt."""
    return tomllib.loads(toml)["project"]["entry-points"]


def install(folder: Path, module: str, source: str, points: dict[str, dict[str, str]]) -> None:
    """Write ``module``'s source and a distribution declaring ``points`` into ``folder``."""
    (folder / f"{module}.py").write_text(source)
    info = folder / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    lines = []
    for group, names in points.items():
        lines.append(f"[{group}]")
        lines.extend(f"{name} = {target}" for name, target in names.items())
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
