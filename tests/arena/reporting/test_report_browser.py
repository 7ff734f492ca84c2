"""The report's ``index.html`` in a real browser (headless Chromium): every image loads from the
single file, the leaderboards are there, and flagged rows are rendered red.

Chromium is Debian's ``chromium`` (``.ci/run`` installs it). Without it the test is skipped, unless
the ``CI`` environment variable is set: there it must run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from arena.reporting import build_report
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


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("browser-tournament")
    make_tournament(root, horizon=120, replicates=4)
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
    assert len(tables) == 4
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
