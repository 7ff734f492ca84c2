"""The report's "Measured / bound" section on tiny hand-made rows: every ratio, interval and
maximum is computed here by hand, the bandit rows by the in-expectation rule, and the players
measured without a bound are named."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from arena.reporting import build, stats
from arena.reporting.load import Source
from arena.reporting.render import Para, Table, render_markdown
from arena.reporting.sections.bound_ratios import bound_ratios, unbounded_metrics
from arena.reporting.sections.context import ReportContext

HORIZON = 10


def _rows(game, player, metric, values, *, param=math.nan, protocol="experts", t=HORIZON):
    """One row per replicate (seed 1) of ``metric`` at round ``t`` of the cell (game, player)."""
    n = len(values)
    return pd.DataFrame(
        {
            "run_id": f"{game}/{player}",
            "seed": 1,
            "replicate": np.arange(n),
            "t": t,
            "horizon": HORIZON,
            "metric": metric,
            "param": float(param),
            "value": np.asarray(values, dtype=float),
            "protocol": protocol,
            "game_label": game,
            "player_label": player,
        }
    )


def synthetic_rows() -> pd.DataFrame:
    parts = [
        # player a, game g: regret and its bound per replicate, the ratios 0.25, 0.5, 0.75
        _rows("g", "a", "regret", [1.0, 3.0, 6.0]),
        _rows("g", "a", "bound:regret", [4.0, 6.0, 8.0]),
        # ... an earlier checkpoint, far above its bound: not at T, so not counted
        _rows("g", "a", "regret", [9.0, 9.0, 9.0], t=5),
        _rows("g", "a", "bound:regret", [1.0, 1.0, 1.0], t=5),
        # quantile regret at ε = 0.25: one replicate's bound is 0, so it has no ratio
        _rows("g", "a", "quantile_regret", [0.0, 2.0, -1.0], param=0.25),
        _rows("g", "a", "bound:quantile_regret", [0.0, 4.0, 2.0], param=0.25),
        # player b measures regret but declares no bound
        _rows("g", "b", "regret", [2.0, 2.0, 2.0]),
        # a bandit player: its bound holds in expectation
        _rows("h", "c", "regret", [2.0, 4.0, 9.0], protocol="bandit"),
        _rows("h", "c", "bound:regret", [5.0, 5.0, 5.0], protocol="bandit"),
    ]
    rows = pd.concat(parts, ignore_index=True)
    rows = rows.sample(frac=1.0, random_state=0).reset_index(drop=True)  # pairing is by key
    for col in ("run_id", "metric", "protocol", "game_label", "player_label"):
        rows[col] = rows[col].astype("category")
    return rows


def t_interval(x, level=0.95):
    x = np.asarray(x, dtype=float)
    half = sps.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
    return x.mean() - half, x.mean() + half


def test_ratios_by_hand():
    table = stats.bound_ratios(synthetic_rows())
    assert list(table.columns) == stats.RATIO_COLUMNS
    assert len(table) == 3  # b has no bound: no row
    by = table.set_index(["game", "player", "metric"])

    r = by.loc[("g", "a", "regret")]
    ratios = [1 / 4, 3 / 6, 6 / 8]
    assert r.basis == "per replicate" and r.n == 3 and r.t == HORIZON and math.isnan(r.param)
    assert r.ratio_mean == pytest.approx(0.5, rel=1e-12)
    assert (r.ratio_ci_low, r.ratio_ci_high) == pytest.approx(t_interval(ratios), rel=1e-12)
    assert r.ratio_max == pytest.approx(0.75, rel=1e-12)
    assert r.bound == pytest.approx(6.0) and r.value == pytest.approx(10 / 3)

    q = by.loc[("g", "a", "quantile_regret")]
    assert q.param == 0.25 and q.n == 2  # the replicate with bound 0 has no ratio
    assert q.ratio_mean == pytest.approx((0.5 - 0.5) / 2, abs=1e-15)
    assert (q.ratio_ci_low, q.ratio_ci_high) == pytest.approx(t_interval([0.5, -0.5]), rel=1e-12)
    assert q.ratio_max == pytest.approx(0.5) and q.bound == pytest.approx(2.0)

    c = by.loc[("h", "c", "regret")]
    assert c.basis == "in expectation" and c.n == 3
    assert c.ratio_mean == pytest.approx(5.0 / 5.0, rel=1e-12)  # mean value / mean bound
    low, high = t_interval([2.0, 4.0, 9.0])
    assert (c.ratio_ci_low, c.ratio_ci_high) == pytest.approx((low / 5, high / 5), rel=1e-12)
    assert math.isnan(c.ratio_max)


def test_no_bound_rows_no_ratios():
    rows = synthetic_rows()
    rows = rows[~rows.metric.astype(str).str.startswith("bound:")]
    assert stats.bound_ratios(rows).empty
    assert list(stats.bound_ratios(rows).columns) == stats.RATIO_COLUMNS


def test_unbounded_metrics_names_the_players_without_a_bound():
    assert unbounded_metrics(synthetic_rows()) == {"b": ["regret"]}


def _context(rows: pd.DataFrame, tmp_path) -> ReportContext:
    games = pd.DataFrame({"game_label": ["h", "g"]})  # the report's game order: h first
    src = Source(tmp_path, rows, pd.DataFrame(), games, None, None, pd.DataFrame())
    return ReportContext(src, ["regret"], 0.95, tmp_path, tmp_path, 0.0)


def test_section_writes_the_csv_and_the_table(tmp_path):
    ctx = _context(synthetic_rows(), tmp_path)
    section = bound_ratios(ctx)
    assert section.title == "Measured / bound" and section.anchor == "bound-ratios"
    written = pd.read_csv(tmp_path / "bound_ratios.csv")
    assert list(written.columns) == stats.RATIO_COLUMNS and len(written) == 3
    assert ctx.tables["measured / declared bound at T"] == "tables/bound_ratios.csv"
    table = next(b for b in section.blocks if isinstance(b, Table))
    assert [row[:3] for row in table.rows] == [
        ["h", "c", "regret (in expectation)"],
        ["g", "a", "regret"],
        ["g", "a", "quantile_regret (ε = 0.25)"],
    ]
    assert table.rows[0][-1] == "—"  # no maximum for a bound in expectation
    # ratio mean, interval 0.5 ∓ t_2·0.25/√3 = 0.5 ∓ 0.621, largest ratio
    assert table.rows[1][6:] == ["0.5", "[-0.121, 1.121]", "0.75"]
    assert table.bad_rows == set()  # no ratio above 1
    notes = [b for b in section.blocks if isinstance(b, Para) and b.note]
    assert len(notes) == 1 and "`b`: regret." in render_markdown("r", notes)
    assert "| g | a | regret | 3 |" in render_markdown("r", section.blocks)


def test_a_ratio_above_one_is_marked(tmp_path):
    rows = synthetic_rows()
    above = (rows.metric == "regret") & (rows.player_label == "a") & (rows.t == HORIZON)
    rows.loc[above & (rows.replicate == 0), "value"] = 5.0  # 5 > its bound 4
    table = next(b for b in bound_ratios(_context(rows, tmp_path)).blocks if isinstance(b, Table))
    assert table.bad_rows == {1}


def test_section_is_absent_without_bounds(tmp_path):
    rows = synthetic_rows()
    rows = rows[~rows.metric.astype(str).str.startswith("bound:")].copy()
    rows["metric"] = rows["metric"].cat.remove_unused_categories()
    assert bound_ratios(_context(rows, tmp_path)) is None
    assert not (tmp_path / "bound_ratios.csv").exists()


def test_the_section_is_built_into_every_report():
    assert "bound_ratios(ctx)" in inspect.getsource(build._write)
