"""The reproduction gallery (configs/gallery.yaml, reports/README.md): every number and verdict
is pinned.

Fast: the rows are well formed and name cells that exist, the committed reports hold every pinned
number within its tolerance and give every pinned verdict, the committed tables are what the rows
render to, and the rule tests decide each verdict on small hand-made cells. Slow
(`make test-slow`): each report's rows are measured again by playing their cells alone
(:func:`arena.apps.gallery.rerun`), so that a change of the code that moves a result or flips a
verdict fails here and names the row.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arena.apps.gallery import (
    END,
    START,
    VERDICTS,
    GalleryRow,
    Measurement,
    Quantity,
    RuleTest,
    check_pins,
    check_verdicts,
    counts,
    default_rows,
    load_rows,
    measure,
    render_table,
    rerun,
    rerun_config,
    run_test,
    summary,
    tolerance,
    verdict,
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


@pytest.mark.parametrize("report", sorted(GALLERY))
def test_a_committed_report_records_no_revision_or_wall_time(report):
    """What a rerun changes (git revisions, wall times, the build time) is kept out of the
    committed files (in the git-ignored ``run/``), so that `arena reproduce` on an unchanged clean
    tree leaves the clone clean, and no committed report can claim a dirty or stale revision."""
    import re

    folder = REPORTS / report
    listed = json.loads((folder / "report-files.json").read_text(encoding="utf-8"))["files"]
    committed = [f for f in listed if not f.startswith("run/")]
    assert "report.md" in committed and "tables/cells.csv" in committed
    revision = re.compile(r"\b[0-9a-f]{40}\b|-dirty\b")
    for rel in committed:
        if rel.endswith((".md", ".html", ".csv", ".json")):
            text = (folder / rel).read_text(encoding="utf-8")
            assert not revision.search(text), f"{report}/{rel} records a git revision"
            for needle in ("wall_time_s", "us_per_round", "wall time (s)", "Report built in"):
                assert needle not in text, f"{report}/{rel} records a wall time ({needle})"
    assert "reports/*/run/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_the_committed_reports_give_every_pinned_verdict():
    flipped = check_verdicts(ROWS, REPORTS)
    assert not flipped, "\n".join(f.line() for f in flipped)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def test_the_committed_table_is_the_rows_rendered(tmp_path):
    text = (REPORTS / "README.md").read_text(encoding="utf-8")
    assert START in text and END in text
    copy = _copy_reports(tmp_path)
    assert render_table(ROWS, copy / "README.md") is False, "run `arena reproduce --table`"
    assert summary(ROWS)[:-1] in text  # the summary line counts each verdict
    sources = [r for r in ROWS if r.table == "sources"]
    classical = [r for r in ROWS if r.table == "classical"]
    assert summary(sources) in text and summary(classical) in text
    table = text.split(START, 1)[1].split(END, 1)[0]
    first, second = table.split("### Classical results the lab checks")
    for row in ROWS:  # each row in its own table, with its computed verdict
        assert row.link() in text
        line = next(
            li
            for li in (first if row.table == "sources" else second).splitlines()
            # a cell's own "|" is escaped in the markdown table
            if li.startswith(f"| {_cell(row.source)} | {_cell(row.shows)} |")
        )
        assert f"| **{row.verdict}**" in line
    # the results outside the sources are in the second table only
    assert {r.id for r in classical} == {
        "optimistic-dynamics",
        "bandit-bobw",
        "fair-coin-lb",
        "cover-vt",
        "comb-values",
        "worst-cases-n2",
    }


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


def test_a_failing_test_turns_the_verdict_to_differs_and_reproduce_names_it(tmp_path, capsys):
    from arena.apps.reproduce import main

    copy = _copy_reports(tmp_path)
    # Tsallis-INF's stochastic pseudo-regret above the stated rate (460.5): qualitative -> differs
    path = copy / "bandits" / "tables" / "leaderboards.csv"
    board = pd.read_csv(path)
    at = (board.game == "bernoulli") & (board.metric == "pseudo_regret")
    at &= board.player == "tsallis_inf"
    board.loc[at, ["mean", "ci_low", "ci_high"]] = [500.0, 480.0, 520.0]
    board.to_csv(path, index=False)
    row = next(r for r in ROWS if r.id == "bandit-bobw")
    assert verdict(row, copy)[0] == "differs" and row.verdict == "qualitative"
    assert main(["--table", "--reports", str(copy)]) == 1
    err = capsys.readouterr().err
    assert "gallery row 'bandit-bobw'" in err and "verdict 'differs', pinned 'qualitative'" in err
    text = (copy / "README.md").read_text(encoding="utf-8")
    assert "**differs** (claimed: qualitative). Test: ✗ stoch 500 > 460.5" in text


def test_the_readme_opens_with_the_gallery_and_its_counts():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    head = " ".join(readme[: readme.index("## Quickstart")].split())
    c = counts(ROWS)
    sources = sum(r.table == "sources" for r in ROWS)
    assert "(reports/README.md)" in head
    assert f"{sources} published results of the sources and {len(ROWS) - sources} classical" in head
    assert summary(ROWS).split(": ", 1)[1][:-1] in head, summary(ROWS)
    assert c["differs"] > 0  # the counts are computed, and some results differ
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
        ({"rule": "differs"}, "rule must be one of"),
        ({"verdict": "qualitative"}, "neither its rule 'reproduced' nor 'differs'"),
        ({"table": "other"}, "table must be one of"),
        ({"report": "nowhere"}, "unknown report 'nowhere'"),
        ({"ours": "{missing:.1f}"}, "ours names {missing}"),
        ({"extra": 1}, "unknown key 'extra'"),
        ({"quantities": {"q": {"table": "t.csv", "column": "mean", "pin": 1}}}, "stated tol"),
        ({"tests": []}, "tests must be a non-empty list"),
        ({"tests": [{"ordered": {"quantities": ["q", "q"]}}]}, "decided by ('contains',)"),
        ({"tests": [{"contains": {"quantity": "p", "value": 1}}]}, "names 'p'"),
        ({"tests": [{"contains": {"quantity": "q"}}]}, "missing key 'value'"),
        ({"tests": [{"contains": {"quantity": "q", "value": 1, "low": 0}}]}, "unknown key 'low'"),
        ({"tests": [{"maybe": {"quantity": "q"}}]}, "test must be one of"),
        ({"rule": "sanity", "verdict": "sanity"}, "a 'sanity' row states its reason"),
        (
            {
                "rule": "bound holds",
                "verdict": "bound holds",
                "tests": [{"at_most": {"quantity": "q", "value": 2}}],
            },
            "tests a ratio at most 1",
        ),
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
        "rule": "reproduced",
        "tests": [{"contains": {"quantity": "q", "value": 1.0}}],
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
# the rules, on small hand-made cells

M = {
    "a": Measurement(1.0, 0.5, 1.5),
    "b": Measurement(3.0, 2.0, 4.0),
    "c": Measurement(3.0, 2.9, 3.1),
    "r": Measurement(0.8, 0.8, 0.8),
}


@pytest.mark.parametrize(
    ("test", "passed"),
    [
        # the source's number in our interval, ends included
        (RuleTest("contains", ("a",), value=0.5), True),
        (RuleTest("contains", ("a",), value=1.5), True),
        (RuleTest("contains", ("a",), value=1.5000001), False),
        # or our interval within a relative tolerance of it: [0.5, 1.5] is 1.1 from 1.6 at most
        (RuleTest("contains", ("a",), value=1.6, rel_tol=0.7), True),
        (RuleTest("contains", ("a",), value=1.6, rel_tol=0.6), False),
        # at most: the value (a largest ratio over replicates), the bound itself included
        (RuleTest("at_most", ("r",), value=1.0), True),
        (RuleTest("at_most", ("r",), value=0.8), True),
        (RuleTest("at_most", ("r", "b"), value=1.0), False),
        (RuleTest("within", ("b", "c"), low=3.0, high=3.0), True),
        (RuleTest("within", ("a",), low=1.01, high=2.0), False),
        # above: the whole interval, strictly
        (RuleTest("above", ("b",), value=1.99), True),
        (RuleTest("above", ("b",), value=2.0), False),
        # ordered: intervals apart, strictly; touching is overlap
        (RuleTest("ordered", ("b", "a")), True),
        (RuleTest("ordered", ("b", "a"), factor=1.3), True),  # 2 > 1.3 × 1.5
        (RuleTest("ordered", ("b", "a"), factor=2.0), False),
        (RuleTest("ordered", ("a", "b")), False),
        (RuleTest("ordered", ("b", "c")), False),  # overlapping: not established
        (RuleTest("ordered", ("c", "a")), True),
        (RuleTest("equal", ("b", "c")), True),
        (RuleTest("equal", ("a", "b")), False),
    ],
)
def test_each_rule_test_on_hand_made_cells(test, passed):
    outcome = run_test(test, M)
    assert outcome.passed is passed, outcome.text
    assert all(name in outcome.text for name in test.quantities)


def _row(rule: str, *tests: RuleTest, reason: str = "") -> GalleryRow:
    q = {n: _q(name=n, where={"game": g}) for n, g in (("x", "g1"), ("y", "g2"), ("z", "g[3]"))}
    return GalleryRow(
        id="r",
        report="rep",
        source="s",
        shows="w",
        setup="u",
        theirs="t",
        ours="{x}",
        rule=rule,
        tests=tests,
        verdict=rule,
        why="y",
        quantities=q,
        reason=reason,
    )


def test_every_verdict_is_reachable_and_a_failed_test_gives_differs(tables):
    (tables / "rep" / "tables").mkdir(parents=True)
    (tables / "t.csv").rename(tables / "rep" / "tables" / "t.csv")
    # measured: x = 1 [0, 2], y = 3 [2, 4], z = 5 [4.5, 5.5]
    T = RuleTest
    cases = {
        "reproduced": (T("contains", ("x",), value=1.9), T("contains", ("x",), value=2.1)),
        "bound holds": (T("at_most", ("x",), value=1.0), T("at_most", ("y",), value=1.0)),
        "by construction": (T("equal", ("y", "y")), T("equal", ("x", "y"))),
        "sanity": (T("within", ("z",), low=5, high=6), T("within", ("z",), low=6, high=7)),
        "qualitative": (T("ordered", ("z", "x")), T("ordered", ("z", "y", "x"))),
    }
    seen = set()
    for rule, (good, bad) in cases.items():
        assert verdict(_row(rule, good, reason="r"), tables)[0] == rule
        got, outcomes = verdict(_row(rule, good, bad, reason="r"), tables)
        assert got == "differs" and [o.passed for o in outcomes] == [True, False]
        seen |= {rule, got}
    assert seen == set(VERDICTS)


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
        computed, outcomes = verdict(row, tables)
        if computed != row.verdict:
            failed = "; ".join(o.text for o in outcomes if not o.passed)
            lines.append(
                f"gallery row {row.id!r}: verdict {computed!r}, pinned {row.verdict!r} "
                f"({failed or 'every test passes'})"
            )
    assert not lines, "\n".join(lines)
