"""The reproduction gallery (configs/gallery.yaml, reports/README.md): every number is pinned.

Fast: the rows are well formed and name cells that exist, the committed reports hold every pinned
number within its tolerance, and the committed table is what the rows render to. Slow (run in
CI): each report's rows are measured again by playing their cells alone (:func:`arena.apps.gallery.
rerun`), so that a change of the code that moves a reproduced result fails here and names the row.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arena.apps.gallery import (
    END,
    START,
    Measurement,
    Quantity,
    check_pins,
    counts,
    default_rows,
    load_rows,
    measure,
    render_table,
    rerun,
    rerun_config,
    tolerance,
)
from arena.apps.reproduce import default_list, load_gallery
from arena.errors import ArenaError

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "reports"
GALLERY = {report.name: report for report in load_gallery(default_list())}
ROWS = load_rows(default_rows(), list(GALLERY))


def test_every_row_names_a_gallery_report_and_cells_of_its_tournaments():
    assert len(ROWS) >= 15
    for row in ROWS:
        report = GALLERY[row.report]
        assert row.rerun, f"row {row.id} names no cells to play again"
        by_name = {t.source.stem: t for t in report.tournaments}
        for name, selection in row.rerun.items():
            assert name in by_name, (row.id, name)
            full = by_name[name].config()
            small = rerun_config(full, selection)
            cells = {c.id for c in small.cells()}
            assert cells and cells <= {c.id for c in full.cells()}, row.id


def test_the_committed_reports_hold_every_pinned_number():
    moved = check_pins(ROWS, REPORTS)
    assert not moved, "\n".join(m.line() for m in moved)


def test_the_committed_table_is_the_rows_rendered(tmp_path):
    text = (REPORTS / "README.md").read_text(encoding="utf-8")
    assert START in text and END in text
    copy = _copy_reports(tmp_path)
    assert render_table(ROWS, copy / "README.md") is False, "run `arena reproduce --table`"
    c = counts(ROWS)
    assert f"{len(ROWS)} rows: {c['reproduced']} reproduced" in text
    for row in ROWS:
        assert row.link() in text


def _copy_reports(tmp_path: Path) -> Path:
    """The committed README and the tables the rows read, in a folder of their own."""
    copy = tmp_path / "reports"
    for row in ROWS:
        if not (copy / row.report).exists():
            shutil.copytree(REPORTS / row.report / "tables", copy / row.report / "tables")
    shutil.copy(REPORTS / "README.md", copy / "README.md")
    return copy


def test_arena_reproduce_table_names_the_row_that_moved(tmp_path, capsys):
    from arena.apps.reproduce import main

    copy = _copy_reports(tmp_path)
    assert main(["--table", "--reports", str(copy)]) == 0
    assert f"gallery table: {len(ROWS)} rows" in capsys.readouterr().out
    # move Tsallis-INF's stochastic pseudo-regret, with its interval, by twice its half-width
    path = copy / "bandits" / "tables" / "leaderboards.csv"
    board = pd.read_csv(path)
    at = (board.game == "bernoulli") & (board.metric == "pseudo_regret")
    at &= board.player == "tsallis_inf"
    shift = 2 * (board.loc[at, "ci_high"] - board.loc[at, "mean"])
    for column in ("mean", "ci_low", "ci_high"):
        board.loc[at, column] += shift
    board.to_csv(path, index=False)
    assert main(["--table", "--reports", str(copy)]) == 1
    err = capsys.readouterr().err
    assert "gallery row 'bandit-bobw'" in err and "moved: stoch = " in err
    assert "(unchanged)" not in err
    assert "192.4" not in (copy / "README.md").read_text(encoding="utf-8")  # the table moved too


def test_the_readme_opens_with_the_gallery_and_its_counts():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    head = " ".join(readme[: readme.index("## Quickstart")].split())
    c = counts(ROWS)
    assert "(reports/README.md)" in head
    assert f"{len(ROWS)} published results" in head
    assert (
        f"{c['reproduced']} reproduced, {c['qualitative']} reproduced qualitatively, "
        f"{c['differs']} differ" in head
    )
    figure = head.split("](", 2)[1].split(")")[0]  # the headline figure's path
    assert (ROOT / figure).is_file(), figure


# ----------------------------------------------------------------------------------------------
# measuring, on tiny tables


@pytest.fixture
def tables(tmp_path: Path) -> Path:
    pd.DataFrame(
        {
            "game": ["g1", "g2", "g[3]"],
            "player": ["hedge(eta=1)", "hedge(eta=1)", "ftl"],
            "param": [np.nan, 0.1, np.nan],
            "mean": [1.0, 3.0, 5.0],
            "ci_low": [0.0, 2.0, 4.5],
            "ci_high": [2.0, 4.0, 5.5],
        }
    ).to_csv(tmp_path / "t.csv", index=False)
    return tmp_path


def _q(**kw) -> Quantity:
    base = {"name": "q", "table": "t.csv", "where": {}, "column": "mean", "pin": 0.0}
    base["ci"] = ("ci_low", "ci_high")
    return Quantity(**{**base, **kw})


def test_measure_one_row_an_aggregate_and_a_literal_bracket(tables):
    assert measure(_q(where={"game": "g1"}), tables) == Measurement(1.0, 0.0, 2.0)
    # the mean of independent rows: half-widths 1 and 1 combine to sqrt(2)/2
    m = measure(_q(where={"player": "hedge*"}, agg="mean"), tables)
    assert m.value == 2.0 and m.half_width == pytest.approx(np.sqrt(2) / 2, rel=1e-12)
    assert measure(_q(where={"player": "hedge*"}, agg="max"), tables).value == 3.0
    assert measure(_q(where={"game": "g[3]"}), tables).value == 5.0  # brackets are literal
    assert measure(_q(where={"param": None, "player": "hedge*"}), tables).value == 1.0
    assert measure(_q(where={"param": 0.1}), tables).value == 3.0


def test_measure_refuses_an_ambiguous_or_empty_selection(tables):
    with pytest.raises(ArenaError, match="select 2 rows"):
        measure(_q(where={"player": "hedge*"}), tables)
    with pytest.raises(ArenaError, match="select 0 rows"):
        measure(_q(where={"game": "g9"}), tables)
    with pytest.raises(ArenaError, match="no column 'nope'"):
        measure(_q(where={"nope": 1}), tables)
    with pytest.raises(ArenaError, match="no column 'median'"):
        measure(_q(where={"game": "g1"}, column="median"), tables)


def test_the_tolerance_is_the_half_width_unless_stated():
    m = Measurement(1.0, 0.5, 1.2)
    assert tolerance(_q(), m) == 0.5
    assert tolerance(_q(ci=None, tol=0.1, tol_why="x"), m) == 0.1


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        ({"verdict": "maybe"}, "verdict must be one of"),
        ({"report": "nowhere"}, "unknown report 'nowhere'"),
        ({"ours": "{missing:.1f}"}, "ours names {missing}"),
        ({"extra": 1}, "unknown key 'extra'"),
        ({"quantities": {"q": {"table": "t.csv", "column": "mean", "pin": 1}}}, "stated tol"),
    ],
)
def test_a_bad_row_is_refused_naming_it(tmp_path, edit, needle):
    import yaml

    row = {
        "id": "r",
        "report": "demo",
        "source": "s",
        "shows": "w",
        "setup": "u",
        "theirs": "t",
        "ours": "{q:.1f}",
        "verdict": "reproduced",
        "why": "y",
        "quantities": {"q": {"table": "t.csv", "column": "mean", "pin": 1, "ci": ["a", "b"]}},
    }
    path = tmp_path / "rows.yaml"
    path.write_text(yaml.safe_dump({"rows": [{**row, **edit}]}), encoding="utf-8")
    with pytest.raises(ArenaError, match="row 'r'") as err:
        load_rows(path, ["demo"])
    assert needle in str(err.value)


# ----------------------------------------------------------------------------------------------
# the rows measured again from their cells


@pytest.mark.slow
@pytest.mark.parametrize("report", sorted({row.report for row in ROWS}))
def test_playing_the_cells_again_gives_every_pinned_number(report, tmp_path):
    rows = [row for row in ROWS if row.report == report]
    tables = rerun(rows, GALLERY[report], tmp_path)
    lines = []
    for row in rows:
        for quantity in row.quantities.values():
            m = measure(quantity, tables)
            # the committed report's interval, so that a change widening it cannot widen its pin
            tol = tolerance(quantity, measure(quantity, REPORTS / report / "tables"))
            if not abs(m.value - quantity.pin) <= tol * (1 + 1e-12):
                lines.append(
                    f"gallery row {row.id!r} ({row.source}) moved: {quantity.name} = "
                    f"{m.value:.6g}, pinned {quantity.pin:.6g} ± {tol:.3g}"
                )
    assert not lines, "\n".join(lines)
