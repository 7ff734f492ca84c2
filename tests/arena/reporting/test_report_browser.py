"""The report's ``index.html`` in a real browser (headless Chromium): every image loads from the
single file, the leaderboards are there, flagged rows are rendered red, and the page reads as a
researcher reads: headline figure and summary first, long tables collapsed and sortable, nothing
wider than a 1280 px window. A fast test checks the same structure without a browser.

Chromium is Debian's ``chromium`` (``.ci/run`` installs it). Without it the test is skipped, unless
the ``CI`` environment variable is set: there it must run.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import arena
from arena.reporting import build_report
from arena.reporting.render import LONG_TABLE_ROWS
from arena.reporting.stats import IN_EXPECTATION
from arena.results import manifest, write_json_atomic, write_parquet_atomic
from tests.arena.reporting.test_reporting import make_tournament

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def chromium() -> str:
    for candidate in (
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    if os.environ.get("CI"):
        pytest.fail("CI is set but Chromium is missing: .ci/run installs it with apt-get")
    pytest.skip("Chromium not installed (apt-get install chromium); this test must run in CI")


def run_chromium(exe: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [exe, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


# Games whose labels are long and unbreakable, as real tournaments' are (``corrupted(budget=1000)``
# over eight games made the bandits report 1820 px wide): they widen every table with a column per
# game. Hedge alone plays them, against a reference lower bound nobody meets after round 1, so
# that the table of flagged checkpoints is longer than a screen.
WIDE_GAMES = [
    ("bernoulli", {"means": [0.111111, 0.222222, 0.333333, 0.444444]}),
    ("bernoulli", {"means": [0.444444, 0.333333, 0.222222, 0.111111]}),
]


def add_wide_games(root: Path, horizon: int, replicates: int) -> None:
    """A second tournament in ``root``: hedge on :data:`WIDE_GAMES`, with unmet lower bounds."""
    for aname, aparams in WIDE_GAMES:
        run = arena.run_game(
            "hedge",
            aname,
            adversary_params=aparams,
            n_actions=4,
            horizon=horizon,
            replicates=replicates,
            seed=7,
            metrics={"regret": {}, "bound": {}},  # enough for wide tables, and fast
        )
        lb = run.rows[run.rows.metric == "regret"].copy()
        lb["metric"] = "lower_bound:regret"
        lb["value"] = np.where(lb["t"] > 1, 1e4, 0.0)
        rows = pd.concat([run.rows, lb], ignore_index=True)
        cell = run.config["cell"]
        write_parquet_atomic(rows, root / "parts" / f"results-{cell}.parquet")
        write_json_atomic(
            manifest(run, {"tournament_cell": cell}), root / "parts" / f"manifest-{cell}.json"
        )
    write_json_atomic(
        {"name": "wide", "config": {"players": ["hedge"]}, "config_digest": "fedcba9876543210"},
        root / "manifest.json",
    )


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("browser-tournament")
    make_tournament(root / "tiny", horizon=120, replicates=4)
    add_wide_games(root / "wide", horizon=120, replicates=4)
    out = tmp_path_factory.mktemp("browser-report") / "tiny"
    return build_report(root, out, name="browser", metrics=("regret",))


def test_every_image_loads_and_leaderboards_render(page, tmp_path):
    exe = chromium()
    # the page must work on its own: copy index.html alone, without its figures/ folder
    alone = tmp_path / "alone" / "index.html"
    alone.parent.mkdir()
    shutil.copy(page, alone)
    res = run_chromium(
        exe, tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom", alone.as_uri()
    )
    dom = res.stdout
    assert res.returncode == 0 and "<body" in dom, res.stderr[-2000:]
    body = re.search(r"<body([^>]*)>", dom).group(1)
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body))
    n_img = len(re.findall(r"<img ", page.read_text()))
    assert n_img == 6  # five figures of regret notions, and fair_coin's minimax values
    assert attrs.get("images-total") == str(n_img), body
    assert attrs.get("images-loaded") == str(n_img), body
    # leaderboards: one table per game, with its caption and ranked players
    tables = re.findall(r'<table class="leaderboard">(.*?)</table>', dom, flags=re.S)
    assert len(tables) == 4 + len(WIDE_GAMES)
    assert all("<caption>regret — " in t for t in tables)
    assert "Leaderboard: regret" in dom and "hedge(eta=anytime)" in tables[0]
    # flagged rows (violation, below lower bound, failure) are rendered red by the browser
    assert int(attrs["bad-cells"]) > 0 and attrs["red-cells"] == attrs["bad-cells"], body


def test_screenshot_renders(page, tmp_path):
    exe = chromium()
    shot = tmp_path / "shot.png"
    res = run_chromium(
        exe,
        tmp_path / "profile",
        "--virtual-time-budget=5000",
        "--window-size=1200,2000",
        f"--screenshot={shot}",
        page.as_uri(),
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


# Measures the laid-out page (added to a copy of it, so the report ships no test code) and clicks
# a header of the first long table twice; the results go into <body data-*> for --dump-dom.
MEASURE = """<script>
window.addEventListener("load", function () {
  var d = document.body.dataset, root = document.documentElement, vw = root.clientWidth;
  d.innerWidth = String(window.innerWidth);
  d.scrollWidth = String(root.scrollWidth);
  d.clientWidth = String(vw);
  var wide = [], all = document.body.querySelectorAll("*");
  for (var i = 0; i < all.length; i++) {
    var el = all[i], box = el.getBoundingClientRect();
    var clipped = el.parentElement && el.parentElement.closest(".table-wrap, pre");
    if (box.right > vw + 0.5 && !clipped) { wide.push(el.tagName + "." + el.className); }
  }
  d.wide = wide.slice(0, 8).join(" ");
  var table = document.querySelector("table.sortable");
  if (!table) { return; }
  var head = table.tHead.rows[0].cells, col = -1;
  for (var c = 0; c < head.length; c++) { if (head[c].textContent === "t") { col = c; } }
  function column() {
    var out = [], rows = table.tBodies[0].rows;
    for (var r = 0; r < rows.length; r++) { out.push(rows[r].cells[col].textContent); }
    return out.join(",");
  }
  d.before = column();
  head[col].click();
  d.ascending = column();
  head[col].click();
  d.descending = column();
});
</script>"""


def _attrs(dom: str) -> dict[str, str]:
    body = re.search(r"<body([^>]*)>", dom).group(1)
    return {k: html.unescape(v) for k, v in re.findall(r'data-([a-z-]+)="([^"]*)"', body)}


def test_page_fits_1280_and_long_tables_sort(page, tmp_path):
    exe = chromium()
    probe = tmp_path / "index.html"
    probe.write_text(page.read_text().replace("</body>", MEASURE + "</body>"))
    res = run_chromium(
        exe,
        tmp_path / "profile",
        "--window-size=1280,900",
        "--virtual-time-budget=5000",
        "--dump-dom",
        probe.as_uri(),
    )
    assert res.returncode == 0 and "<body" in res.stdout, res.stderr[-2000:]
    attrs = _attrs(res.stdout)
    assert attrs["inner-width"] == "1280", attrs
    # nothing wider than the window: wide tables scroll in their own box, long strings wrap
    assert int(attrs["scroll-width"]) <= 1280, attrs
    assert int(attrs["scroll-width"]) <= int(attrs["client-width"]), attrs
    assert attrs["wide"] == "", attrs["wide"]
    # a click on the "t" header of the flagged checkpoints sorts them by t, a second reverses
    before = [int(v) for v in attrs["before"].split(",")]
    assert len(before) > LONG_TABLE_ROWS and before != sorted(before)
    assert [int(v) for v in attrs["ascending"].split(",")] == sorted(before)
    assert [int(v) for v in attrs["descending"].split(",")] == sorted(before, reverse=True)


def _tables(html_text: str) -> list[tuple[int, str, int]]:
    """(position, opening tags before it, rows) of every table of the page."""
    out = []
    for m in re.finditer(r"<table[^>]*>.*?</table>", html_text, flags=re.S):
        out.append((m.start(), html_text[max(0, m.start() - 600) : m.start()], m[0].count("<tr")))
    return out


def test_page_and_markdown_read_headline_summary_then_details(page):
    text = page.read_text()
    md = (page.parent / "report.md").read_text()
    tables = (page.parent / "tables").resolve()
    # the order: headline (its figure first), summary, then the detailed sections
    h2 = re.findall(r'<h2 id="([^"]+)"', text)
    assert h2[:2] == ["headline", "summary"], h2
    assert h2.index("main-leaderboard") == 2 and h2.index("overview") == 3, h2
    first_figure = text.index("<figure")
    assert text.index('<h2 id="headline"') < first_figure < text.index('<h2 id="summary"')
    long_tables = [t for t in _tables(text) if t[2] - 1 > LONG_TABLE_ROWS]
    assert long_tables, "the fixture must have a table longer than a screen"
    assert first_figure < long_tables[0][0]
    for pos, before, rows in _tables(text):
        # every table scrolls in its own box; a long one is collapsed and sortable
        assert re.search(r'<div class="table-wrap[^"]*">$', before), before[-200:]
        if rows - 1 > LONG_TABLE_ROWS:
            opening = re.search(r"<details[^>]*>[^<]*<summary>[^\n]*\n[^\n]*$", before)
            assert opening and "long-table" in opening[0], before[-300:]
            assert f"({rows - 1} rows" in opening[0]
            assert re.match(r'<table class="[^"]*sortable', text[pos:])
    # the flagged long table (checkpoints below the unmet lower bound) is open
    assert '<details class="long-table" open><summary>Below reference lower bound (' in text
    # markdown: the same order; long tables only after the first figure and the summary
    md_h2 = re.findall(r"(?m)^## (.+)$", md)
    assert md_h2[:4] == ["Headline", "Summary", "Main leaderboard", "Overview"], md_h2
    md_long = [m.start() for m in re.finditer(rf"(?m)(^\|.*\n){{{LONG_TABLE_ROWS + 3},}}", md)]
    assert md_long and md.index("![") < md.index("## Summary") < md_long[0]

    # the summary's counts are the sections' data (the CSV tables), not their rendering
    items = dict(
        re.findall(r'<li class="[^"]*"[^>]*><a href="#[^"]+">([^<]+)</a>: ([^<]*)</li>', text)
    )
    ratios = pd.read_csv(tables / "bound_ratios.csv")
    over = np.where(
        ratios["basis"] == IN_EXPECTATION, ratios["ratio_ci_low"] > 1, ratios["ratio_max"] > 1
    )
    k, n = int(over.sum()), len(ratios)
    assert k >= 1  # the planted violation
    assert items["Measured / declared bound at T"].startswith(f"{n - k} of {n} hold; {k} flagged (")
    viol = pd.read_csv(tables / "bound_violations_summary.csv")
    k = len(viol.drop_duplicates(["game", "player", "metric", "param"]))
    assert k >= 1 and f"; {k} flagged (" in items["Declared bounds, every round and replicate"]
    below = pd.read_csv(tables / "below_lower_bound.csv")
    groups = below.drop_duplicates(["game", "player", "metric", "param"])
    assert len(groups) == len(WIDE_GAMES) + 3  # ours, and make_tournament's ftl_killer's
    line = items["Reference lower bounds, mean at every checkpoint"]
    assert f"; {len(groups)} flagged (" in line
    fails = pd.read_csv(tables / "failures.csv")
    assert items["Failed cells"].startswith(f"{len(fails)} (") and len(fails) == 1
    # each summary line links to a heading of the page, and in report.md to its GitHub slug
    for anchor in re.findall(r'<ul class="verdicts">(.*?)</ul>', text, flags=re.S)[0].split(
        'href="#'
    )[1:]:
        assert f'id="{anchor.split(chr(34))[0]}"' in text
    assert "⚠ [Measured / declared bound at T](#measured--bound): " in md
    assert "[Reference lower bounds, mean at every checkpoint](#below-reference-lower-bound)" in md
    # no network and no second file: the script is inline, nothing is fetched
    assert not re.search(r'<(script|link|img)[^>]+(src|href)="(https?:)?//', text)
