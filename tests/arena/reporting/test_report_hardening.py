"""Hardening of ``arena report`` (issue 14): the report writes and deletes files in its own folder
only, and nothing a results file says can become markup, HTML or a link in ``report.md``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from arena.errors import ReportPathError
from arena.reporting import build_report, check_report_name
from arena.reporting.build import MANIFEST
from arena.reporting.render import Details, Links, Para, Table, code, render_markdown
from arena.results import write_parquet_atomic
from tests.arena.reporting.test_reporting import make_tournament
from tests.helpers.cli import arena_in_process

# A player name and parameters, an error message and a traceback that try every way into the
# Markdown: raw HTML, an autolink and a link with a javascript: target, emphasis, backticks
# (which must stay backticks, not open a code span), a table pipe and a heading on a new line.
EVIL_PLAYER = "h`e<b>x</b>"
EVIL_PARAMS = json.dumps(
    {"eta": "<img src=x onerror=alert(1)>", "note": "[c](javascript:alert(2)) *em* `t` a|b"}
)
EVIL_ERROR = (
    "ValueError: <script>alert(3)</script> <javascript:alert(4)> [d](javascript:alert(5)) "
    "``x`` _u_\n# heading"
)
EVIL_TRACEBACK = "Traceback:\n```\n<img src=y onerror=alert(6)>\n```\nEVIL-TRACEBACK-END"
# What must not survive in report.md: a tag, an (auto)link or an image with a javascript: target.
RAW_HTML = re.compile(r"<\s*/?\s*(img|script|b)\b", re.I)
LIVE_LINK = re.compile(r"(?<!\\)\]\(\s*javascript:|<javascript:", re.I)


@pytest.fixture(scope="module")
def tournament(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tournament")
    make_tournament(root, horizon=60, replicates=2)
    return root


@pytest.fixture(scope="module")
def regret_tournament(tmp_path_factory) -> Path:
    """The tournament with its regret and loss only: what the report writes and deletes does not
    depend on how many metrics it draws, and without the other notions' figures each of the six
    builds below takes half the time (2.5 s less)."""
    root = tmp_path_factory.mktemp("regret_tournament")
    make_tournament(root, horizon=60, replicates=2, metrics={"regret": {}, "loss": {}})
    return root


def _victim(parent: Path) -> Path:
    """A folder that is not a report, with the files the old clean-up deleted."""
    victim = parent / "victim"
    (victim / "tables").mkdir(parents=True)
    (victim / "figures").mkdir()
    (victim / "tables" / "precious.csv").write_text("a,b\n1,2\n")
    (victim / "figures" / "precious.png").write_bytes(b"\x89PNG precious")
    (victim / "notes.txt").write_text("mine")
    return victim


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# ----------------------------------------------------------------------------------------------
# files outside the report folder


@pytest.mark.parametrize(
    "name", ["../victim", "a/../../victim", "a/b", "a\\b", "..", ".", ".hidden", "", "  "]
)
def test_report_name_that_is_not_a_plain_name_is_refused(name):
    with pytest.raises(ReportPathError, match="invalid report name"):
        check_report_name(name)


def test_cli_refuses_traversal_names_and_touches_nothing(regret_tournament, tmp_path):
    tournament = regret_tournament
    victim = _victim(tmp_path)
    before = _snapshot(victim)
    reports = tmp_path / "reports"
    reports.mkdir()
    for name in ("../victim", str(victim), "sub/../../victim", "..", ".x", ""):
        res = arena_in_process(
            "report", str(tournament), "--name", name, "--reports", str(reports), cwd=tmp_path
        )
        assert res.returncode != 0, name
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and "invalid report name" in lines[0], res.stderr
        assert "Traceback" not in res.stderr
    assert _snapshot(victim) == before
    assert list(reports.iterdir()) == []  # nothing written


def test_build_refuses_a_foreign_folder_and_names_it(regret_tournament, tmp_path):
    tournament = regret_tournament
    victim = _victim(tmp_path)
    before = _snapshot(victim)
    with pytest.raises(ReportPathError, match=re.escape(str(victim))):
        build_report(tournament, victim, name="x")
    assert _snapshot(victim) == before
    res = arena_in_process(
        "report", str(tournament), "--name", "victim", "--reports", str(tmp_path), cwd=tmp_path
    )
    assert res.returncode != 0 and "not a regret-arena report" in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert _snapshot(victim) == before


def test_rebuild_removes_only_its_own_old_files(regret_tournament, tmp_path):
    tournament = regret_tournament
    out = tmp_path / "r"
    build_report(tournament, out, name="r")
    record = json.loads((out / MANIFEST).read_text())
    assert {"report.md", "index.html", "tables/leaderboards.csv"} <= set(record["files"])
    assert "figures/regret_curves.png" in record["files"]
    # a stale file of ours (listed), and the user's own files next to the report's
    (out / "tables" / "stale.csv").write_text("old")
    record["files"].append("tables/stale.csv")
    # a tampered manifest must not reach outside the folder either
    victim = _victim(tmp_path)
    before = _snapshot(victim)
    record["files"] += ["../victim/notes.txt", str(victim / "tables" / "precious.csv")]
    (out / MANIFEST).write_text(json.dumps(record))
    (out / "tables" / "mine.csv").write_text("user")
    (out / "figures" / "mine.png").write_bytes(b"user")
    build_report(tournament, out, name="r")
    assert not (out / "tables" / "stale.csv").exists()
    assert (out / "tables" / "mine.csv").read_text() == "user"
    assert (out / "figures" / "mine.png").read_bytes() == b"user"
    assert (out / "tables" / "leaderboards.csv").is_file() and (out / "report.md").is_file()
    assert "tables/stale.csv" not in json.loads((out / MANIFEST).read_text())["files"]
    assert _snapshot(victim) == before


def test_cli_rebuild_of_its_own_report_works(regret_tournament, tmp_path):
    tournament = regret_tournament
    for _ in range(2):
        res = arena_in_process(
            "report", str(tournament), "--name", "again", "--reports", str(tmp_path), cwd=tmp_path
        )
        assert res.returncode == 0, res.stderr
    assert (tmp_path / "again" / "index.html").is_file()


def test_report_from_before_manifests_is_rebuilt_without_deleting(regret_tournament, tmp_path):
    tournament = regret_tournament
    out = tmp_path / "old"
    build_report(tournament, out, name="old")
    (out / MANIFEST).unlink()  # as written by a version without manifests
    (out / "tables" / "extra.csv").write_text("kept")
    build_report(tournament, out, name="old")
    assert (out / "tables" / "extra.csv").read_text() == "kept"
    assert (out / MANIFEST).is_file()


# ----------------------------------------------------------------------------------------------
# report.md escaping


@pytest.fixture(scope="module")
def evil_report(tournament, tmp_path_factory) -> Path:
    """The tournament with two cells' players renamed or parametrised hostilely, and a failure
    whose player, params, error and traceback are hostile too; its report folder."""
    root = tmp_path_factory.mktemp("evil")
    for p in tournament.rglob("*"):
        if p.is_file():
            (root / p.relative_to(tournament)).parent.mkdir(parents=True, exist_ok=True)
            (root / p.relative_to(tournament)).write_bytes(p.read_bytes())
    parts = sorted((root / "parts").glob("results-*.parquet"))
    # one cell's player gets the hostile name, another's a known name with hostile parameters
    # (the label shows parameters that differ from the registered class's defaults)
    for part, player, params in ((parts[0], EVIL_PLAYER, "{}"), (parts[1], "hedge", EVIL_PARAMS)):
        rows = pd.read_parquet(part)
        rows["player"] = player
        rows["player_params"] = params
        # and a metric with a hostile name, which gets a leaderboard below
        rows["metric"] = rows["metric"].replace("loss", "<b>m</b>")
        write_parquet_atomic(rows, part)
    fail = pd.read_parquet(root / "failures.parquet")
    fail["player"] = EVIL_PLAYER
    fail["player_params"] = EVIL_PARAMS
    fail["error"] = EVIL_ERROR
    fail["traceback"] = EVIL_TRACEBACK
    fail.to_parquet(root / "failures.parquet", index=False)
    out = tmp_path_factory.mktemp("reports") / "evil"
    build_report(root, out, name="<i>evil</i> `name`", metrics=("regret", "<b>m</b>"))
    return out


def test_report_md_has_no_raw_tag_or_live_link(evil_report):
    import markdown_it

    md = (evil_report / "report.md").read_text()
    # rendered as a Markdown viewer would (raw HTML allowed), no hostile tag comes alive
    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(md)
    live = re.compile(r'<\s*(script|b)\b|<img(?! src="figures/[\w.-]+" )', re.IGNORECASE)
    assert not live.search(rendered), live.search(rendered)
    assert "&lt;b&gt;m&lt;/b&gt;" in rendered  # the hostile metric name, shown as text
    # outside the fenced traceback and the code spans (metric names), which are verbatim text
    outside = re.sub(r"(?ms)^(`{3,})\n.*?^\1$", "", md)
    outside = re.sub(r"(?<!\\)(`+)(?!`).+?(?<!`)\1(?!`)", "", outside)
    assert not RAW_HTML.search(outside), RAW_HTML.search(outside)
    assert not LIVE_LINK.search(outside), LIVE_LINK.search(outside)
    assert "](javascript" not in outside.replace("\\]", "")
    # the hostile label is there, escaped, wherever the player appears
    assert "&lt;img src=x onerror=alert(1)&gt;" in md
    assert "\\[c\\](javascript\\:alert(2)) \\*em\\* \\`t\\` a\\|b" in md
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in md
    assert "# heading" not in outside  # no heading injected through a line break
    # numbers in table cells are not escaped needlessly (no "1\.5": they cannot start a list)
    assert re.search(r"\| \d+\.\d+ \|", md) and not re.search(r"\| \\?\d+\\\.", md)
    # backticks of a name are shown as backticks, not turned into code spans
    assert "h\\`e&lt;b&gt;x&lt;/b&gt;" in md
    # the traceback is verbatim inside a fence that its own ``` cannot close
    fence = re.search(r"(?m)^(`{4,})\nValueError: <script>", md)
    assert fence and "Traceback:\n```\n<img src=y" in md
    assert "EVIL-TRACEBACK-END\n" + fence.group(1) + "\n" in md
    # the report's title is escaped too
    assert md.splitlines()[0] == "# regret-arena report: &lt;i&gt;evil&lt;/i&gt; \\`name\\`"


def test_index_html_shows_names_verbatim(evil_report):
    page = (evil_report / "index.html").read_text()
    assert "<img src=x" not in page and "<script>alert" not in page
    assert "h`e&lt;b&gt;x&lt;/b&gt;" in page  # the backtick is a backtick, not <code>
    assert 'href="javascript' not in page


HOSTILE = "<img src=x onerror=alert(1)> [a](javascript:b) *c* `d` a|b &amp; \\ ~~s~~ _u_"


def _hostile_markdown() -> str:
    """Every kind of block, each carrying the hostile text."""
    return render_markdown(
        "t",
        [
            Para(HOSTILE),
            Para("in code: " + code("a ``b`` <c>|")),
            Table(["col|<x>"], [[HOSTILE]]),
            Details(HOSTILE, "```\nbody"),
            Links([(HOSTILE, "javascript:alert(1)")]),
        ],
    )


def test_every_block_escapes_its_text_in_markdown():
    md = _hostile_markdown()
    assert "<img" not in md and "](javascript:" not in md
    assert "\\[a\\](javascript\\:b) \\*c\\* \\`d\\` a\\|b &amp;amp; \\\\ \\~\\~s" in md
    assert "```a ``b`` <c>|```" in md  # the code span's fence outgrows its backticks
    assert "| col\\|&lt;x&gt; |" in md
    assert "](javascript%3Aalert%281%29)" in md  # a link target is always a relative path
    assert "````\n```\nbody\n````" in md  # a body's own fence cannot close the block's


def test_markdown_renders_back_to_the_text():
    """Parsed by a CommonMark renderer, report.md shows the text (and no live tag or link)."""
    import markdown_it

    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(_hostile_markdown())
    assert "<img" not in rendered
    # a link target is percent-encoded: "javascript%3A…" is a relative path, never a scheme
    assert 'href="javascript:' not in rendered.lower()
    assert 'href="javascript%3aalert%281%29"' in rendered.lower()
    assert "&lt;img src=x onerror=alert(1)&gt; [a](javascript:b) *c* `d`" in rendered
