"""The tutorials of ``docs/tutorials/`` run: each file's code cells, in order, in a fresh process.

The documentation build executes them too (MyST-NB: a failing cell fails the build); this test
catches a broken tutorial in ``make test`` without Sphinx or a Jupyter kernel. Each file's
``{code-cell}`` blocks are executed in one namespace, in a subprocess (matplotlib's Agg backend,
a temporary working folder, a timeout), and a failure names the file, the cell and its line.

The one IPython syntax the tutorials use is the cell magic ``%%writefile [-a] PATH`` (a plugin
module written to a file), with IPython's ``{expression}`` expansion in ``PATH``; any other magic
or shell escape fails here, so that what this test runs is what the kernel runs.

Run one tutorial by hand with ``python tests/docs/test_tutorials_run.py docs/tutorials/FILE.md``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import traceback
from pathlib import Path

import pytest
import yaml

TUTORIALS = sorted((Path(__file__).resolve().parents[2] / "docs" / "tutorials").glob("*.md"))

TIMEOUT_S = 240
"""Wall-clock limit of one tutorial's run: each is meant to take under ~15 s of CPU, and the
limit leaves room for a loaded CI machine (two pytest workers and their subprocesses)."""

FRONT_MATTER = "---\njupytext:\n  text_representation: {extension: .md, format_name: myst}\n"
"""How every tutorial starts: the MyST text-notebook header that jupytext and MyST-NB read."""

CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
"""A MyST-NB code cell: the directive line, the body, the closing fence on a line of its own."""

MAGIC = re.compile(r"^%%writefile(?P<append>\s+-a)?\s+(?P<path>\S.*?)\s*$")


def code_cells(text: str) -> list[tuple[int, str, frozenset[str]]]:
    """Return ``(line, source, tags)`` of every code cell of a MyST notebook, in order.

    ``line`` is the 1-based line of the cell's directive in the file; options given as a leading
    ``---`` YAML block or as ``:key: value`` lines are removed from the source, and the values of
    ``:tags:`` are returned.
    """
    out = []
    for match in CELL.finditer(text):
        body = match.group(1)
        tags: set[str] = set()
        if body.startswith("---\n"):
            options, _, body = body[4:].partition("---\n")
        else:
            lines = body.splitlines(keepends=True)
            n = 0
            while n < len(lines) and re.match(r"^:[\w-]+:", lines[n]):
                n += 1
            options, body = "".join(lines[:n]), "".join(lines[n:])
        for listed in re.findall(r"tags:\s*\[([^\]]*)\]", options):
            tags.update(t.strip().strip("'\"") for t in listed.split(",") if t.strip())
        line = text.count("\n", 0, match.start()) + 1
        out.append((line, body, frozenset(tags)))
    return out


def run_cell(source: str, namespace: dict, name: str) -> None:
    """Execute one cell's source in ``namespace`` (a ``%%writefile`` cell writes its file)."""
    first, _, rest = source.partition("\n")
    magic = MAGIC.match(first)
    if magic:
        # IPython expands {expression} in a magic's arguments in the user namespace
        path = Path(eval(f"f{magic.group('path')!r}", namespace))
        with path.open("a" if magic.group("append") else "w") as handle:
            handle.write(rest)
        return
    for line in source.splitlines():
        if line.lstrip().startswith(("%", "!")):
            raise SyntaxError(f"{name}: IPython syntax this runner does not support: {line!r}")
    exec(compile(source, f"<{name}>", "exec"), namespace)


def run_notebook(path: Path) -> int:
    """Run every code cell of ``path`` in one namespace; print and return 1 at the first failure."""
    namespace: dict = {"__name__": "__main__"}
    for number, (line, source, tags) in enumerate(code_cells(path.read_text()), start=1):
        if "skip-execution" in tags:
            continue
        name = f"{path.name}, cell {number} (line {line})"
        try:
            run_cell(source, namespace, name)
        except BaseException:
            if "raises-exception" in tags:
                traceback.print_exc()
                continue
            print(f"FAILED: {name}", file=sys.stderr)
            traceback.print_exc()
            return 1
    return 0


def run_in_subprocess(path: Path, cwd: Path) -> subprocess.CompletedProcess:
    """Run :func:`run_notebook` on ``path`` in a fresh Python process, in ``cwd``."""
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, __file__, str(path)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def test_the_tutorials_are_myst_notebooks_with_code():
    assert TUTORIALS, "docs/tutorials/ holds no tutorial"
    for path in TUTORIALS:
        text = path.read_text()
        assert text.startswith("---\n"), f"{path.name}: no MyST-NB front matter"
        front = yaml.safe_load(text.split("---\n", 2)[1])
        assert front["jupytext"]["text_representation"]["format_name"] == "myst", path.name
        assert front["kernelspec"]["name"] == "python3", f"{path.name}: no python3 kernelspec"
        assert code_cells(text), f"{path.name}: no code cell"


def test_a_failing_cell_is_named_and_stops_the_run(tmp_path):
    doc = tmp_path / "broken.md"
    doc.write_text(
        FRONT_MATTER
        + "---\n\n# Broken\n\n"
        + "```{code-cell} ipython3\nfolder = 'here'\n```\n\n"
        + "```{code-cell} ipython3\n%%writefile {folder}.txt\nwritten\n```\n\n"
        + "```{code-cell} ipython3\n:tags: [raises-exception]\n1 / 0\n```\n\n"
        + "```{code-cell} ipython3\nraise ValueError('cell four')\n```\n\n"
        + "```{code-cell} ipython3\nopen('never.txt', 'w').close()\n```\n"
    )
    done = run_in_subprocess(doc, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED: broken.md, cell 4 (line 22)" in done.stderr, done.stderr
    assert "ValueError: cell four" in done.stderr
    assert (tmp_path / "here.txt").read_text() == "written\n"  # the magic's {folder}, expanded
    assert not (tmp_path / "never.txt").exists()  # nothing runs after the failure


# slow: `make test` builds the documentation site, which executes every tutorial with the same
# failing-cell rule (myst-nb, nb_execution_raise_on_error); this runner is for working on one
# tutorial without a Sphinx build (pytest -m slow tests/docs)
@pytest.mark.slow
@pytest.mark.parametrize("tutorial", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_the_tutorial_runs(tutorial, tmp_path):
    done = run_in_subprocess(tutorial, tmp_path)
    assert done.returncode == 0, f"{tutorial.name} failed:\n{done.stdout}\n{done.stderr}"


if __name__ == "__main__":
    sys.exit(run_notebook(Path(sys.argv[1])))
