"""``arena reproduce``: the gallery list names what exists, a tiny gallery builds and resumes, and
bad input is refused in one line with exit 2 (docs/architecture.md: bad input)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.apps.cli import main
from arena.apps.hydra_support import config_dir
from arena.apps.reproduce import default_list, load_gallery

REPO = Path(__file__).resolve().parents[2]

TINY_TOURNAMENT = """\
name: tiny
players: [hedge, ftl]
adversaries: [fair_coin]
n_actions: [3]
horizon: 50
replicates: 2
seed: 1
metrics: {regret: {}}
"""


def test_gallery_lists_the_committed_reports_and_existing_tournaments():
    gallery = load_gallery(default_list())
    names = [report.name for report in gallery]
    committed = sorted(p.name for p in (REPO / "reports").iterdir() if p.is_dir())
    # every committed report is rebuilt by the gallery, and the gallery writes nothing else
    assert sorted(names) == committed
    for report in gallery:
        assert (REPO / "reports" / report.name / "report.md").is_file()
        for tournament in report.tournaments:
            assert tournament.source.parent == config_dir() / "tournament"
            assert tournament.source.is_file()
            # the report reads the folder its tournaments write into
            assert Path(tournament.out).is_relative_to(Path(report.results))
    # the metrics the Makefile passed to `arena report` before the list existed
    metrics = {report.name: report.metrics for report in gallery}
    assert metrics["bandits"] == ("pseudo_regret",)
    assert metrics["luo-tables"] == (
        "adaptive_regret",
        "tv_regret",
        "tree_regret",
        "quantile_regret",
    )
    assert metrics["demo"] == ("regret",)


def _tiny_gallery(tmp_path: Path) -> Path:
    (tmp_path / "tiny.yaml").write_text(TINY_TOURNAMENT)
    listing = tmp_path / "gallery.yaml"
    listing.write_text(
        "reports:\n"
        "  - {name: tiny-report, tournaments: [{file: tiny.yaml}], metrics: [regret]}\n"
        "  - {name: other, tournaments: [{config: demo}]}\n"
    )
    return listing


def test_only_builds_one_report_and_a_rerun_resumes(tmp_path, capsys):
    listing = _tiny_gallery(tmp_path)
    common = [
        "reproduce",
        "--list",
        str(listing),
        "--only",
        "tiny-report",
        "--reports",
        str(tmp_path / "reports"),
        "--outputs",
        str(tmp_path / "out"),
        "executor=serial",
        "--progress",
        "false",
    ]
    assert main(common) == 0
    first = capsys.readouterr().out
    assert "tiny-report: 2 cells (2 run, 0 already done)" in first
    assert "gallery: 1 report(s), 2 cells (2 run)" in first
    assert (tmp_path / "reports" / "tiny-report" / "report.md").is_file()
    assert not (tmp_path / "reports" / "other").exists()  # --only: the demo is not run
    assert len(list((tmp_path / "out" / "tiny" / "parts").glob("results-*.parquet"))) == 2

    assert "(unchanged)" not in first and "file(s) changed: figures/" in first
    report = tmp_path / "reports" / "tiny-report"
    assert (report / "run" / "report.md").is_file()  # the build's record, beside the report
    assert main(common) == 0
    again = capsys.readouterr().out
    assert "tiny-report: 2 cells (0 run, 2 already done)" in again and "(unchanged)" in again
    # the cells played again from scratch: new wall times, the same report byte for byte
    record = (report / "run" / "cells.csv").read_bytes()
    files = {p: p.read_bytes() for p in report.rglob("*") if p.is_file() and "run" not in p.parts}
    assert main([*common, "--fresh"]) == 0
    fresh = capsys.readouterr().out
    assert "tiny-report: 2 cells (2 run, 0 already done)" in fresh and "(unchanged)" in fresh
    assert {p: p.read_bytes() for p in files} == files
    assert (report / "run" / "cells.csv").read_bytes() != record  # only the record moved

    # a changed configuration is refused before anything runs, until --fresh starts over
    (tmp_path / "tiny.yaml").write_text(TINY_TOURNAMENT.replace("horizon: 50", "horizon: 40"))
    assert main(common) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena: error: ") and "already holds a different tournament" in err
    assert main([*common, "--fresh"]) == 0
    assert "tiny-report: 2 cells (2 run, 0 already done)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "listing", "needle"),
    [
        (["--only", "nope"], None, "unknown report 'nope'"),
        (["--executor", "threads"], None, "invalid choice: 'threads'"),
        (["--n-jobs", "0"], None, "--n-jobs"),
        ([], "reports: []\n", "lists no report"),
        ([], "reports: [{name: a, tournaments: [{config: demoo}]}]\n", "did you mean 'demo'?"),
        ([], "reports: [{name: a, tournaments: [{file: missing.yaml}]}]\n", "no such tournament"),
        ([], "reports: [{name: ../a, tournaments: [{config: demo}]}]\n", "report '../a'"),
        ([], "reports: [{name: a, tournaments: [demo]}]\n", "must be a mapping"),
        ([], "reports: [{name: a, metric: [x], tournaments: [{config: demo}]}]\n", "'metric'"),
        ([], "reports: [{name: a, tournaments: [{config: demo, out: ../x}]}]\n", "relative"),
        (
            [],
            "reports: [{name: a, tournaments: [{config: demo, out: x}, {config: bandits}]}]\n",
            "need `results`",
        ),
        ([], "reports: [{name: a\n", "not a readable YAML file"),
        (
            [],
            "reports: [{name: a, tournaments: [{config: demo}], attacks: [{player: ftl}]}]\n",
            "with a player and horizons",
        ),
        (
            [],
            "reports: [{name: a, tournaments: [{config: demo}], "
            "attacks: [{player: ftl, horizons: [0]}]}]\n",
            "positive integers",
        ),
        (
            [],
            "reports: [{name: a, tournaments: [{config: demo}], "
            "attacks: [{player: ftl, horizons: [4], method: guess}]}]\n",
            "exact or search",
        ),
    ],
)
def test_bad_input_one_line_exit_2_nothing_written(tmp_path, capsys, args, listing, needle):
    path = _tiny_gallery(tmp_path)
    if listing is not None:
        path.write_text(listing)
    out = tmp_path / "out"
    reports = tmp_path / "reports"
    code = main(
        ["reproduce", "--list", str(path), "--outputs", str(out), "--reports", str(reports), *args]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("arena: error: ") and err.count("\n") == 1, err
    assert needle in err
    assert not out.exists() and not reports.exists()
