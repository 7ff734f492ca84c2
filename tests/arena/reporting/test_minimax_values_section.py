"""The report's "Minimax values" section on tiny synthetic rows: the table against an independent
computation, which games count as exact, the coverage count, and the files it writes."""

from __future__ import annotations

import math
import time
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from arena import GameSpec, registry
from arena.adversaries.lower_bound import Comb
from arena.adversaries.stochastic import FairCoin, fair_coin_lower_bound
from arena.reporting.load import Source
from arena.reporting.render import Para, Table, render_markdown
from arena.reporting.sections.context import ReportContext
from arena.reporting.sections.minimax_values import (
    COLUMNS,
    coverage,
    exact_games,
    minimax_values,
    value_table,
)

TS = [1, 2, 4, 8]
HORIZON = 8
FAIR, OTHER = "fair_coin", "bernoulli"


def synthetic_rows() -> pd.DataFrame:
    """Three players on fair coins (N = 2, T = 8) and one on Bernoulli losses, 3 replicates.

    ``centred`` scatters ±1 around LB(t, 2) (mean = LB: covered); ``above`` sits 5 above it with
    little scatter (never covered); ``exact`` is LB(t, 2) on every replicate (a zero-width
    interval, covered, and never above the value) and declares a bound. The Bernoulli game also
    has ``lower_bound:regret`` rows, but its adversary claims no exact value.
    """
    records = []
    for t in TS:
        lb = fair_coin_lower_bound(t, 2)
        for rep, offset in enumerate((-1.0, 0.0, 1.0)):
            per_player = {"centred": lb + offset, "above": lb + 5 + 0.1 * offset, "exact": lb}
            for player, value in per_player.items():
                records.append((FAIR, player, rep, t, "regret", value))
                records.append((FAIR, player, rep, t, "lower_bound:regret", lb))
            records.append((FAIR, "exact", rep, t, "bound:regret", 2 * lb))
            records.append((OTHER, "centred", rep, t, "regret", 3.0 + offset))
            records.append((OTHER, "centred", rep, t, "lower_bound:regret", 3.0))
    rows = pd.DataFrame(
        records, columns=["game_label", "player_label", "replicate", "t", "metric", "value"]
    )
    rows["adversary"] = rows["game_label"]
    rows["n_actions"], rows["horizon"], rows["seed"], rows["param"] = 2, HORIZON, 0, np.nan
    for col in ("game_label", "player_label"):
        rows[col] = rows[col].astype("category")
    return rows


def synthetic_source(rows: pd.DataFrame) -> Source:
    games = pd.DataFrame(
        {
            "adversary": [OTHER, FAIR],
            "adversary_params": ["{}", "{}"],
            "n_actions": [2, 2],
            "horizon": [HORIZON, HORIZON],
            "game_label": [OTHER, FAIR],
            "adversary_label": [OTHER, FAIR],
        }
    )
    cells = rows.groupby(["game_label", "player_label"], observed=True)["replicate"].nunique()
    cells = cells.rename("replicates").reset_index()
    return Source(None, rows, cells, games, None, None, pd.DataFrame())


def test_exact_games_ask_each_adversary_for_its_game():
    games = pd.DataFrame(
        {
            "game_label": ["coins", "comb3", "comb5", "bern", "gone", "bad"],
            "adversary": ["fair_coin", "comb", "comb", "bernoulli", "no_such_adversary", "comb"],
            "adversary_params": ["{}", "{}", "{}", "{}", "{}", '{"nope": 1}'],
            "n_actions": [100, 3, 5, 2, 2, 2],
            "horizon": [10_000, 400, 400, 50, 50, 50],
        }
    )
    # COMB's program stops at t = 109 for K = 5, so only its K = 3 game is exact at T = 400; an
    # adversary that is not installed or not buildable from its parameters claims nothing
    assert exact_games(games) == {"coins": {"regret"}, "comb3": {"regret"}}
    assert Comb().exact_values(2, 10**6) == {"regret"}  # Cover's closed form at any T


def test_every_adversary_declares_the_values_it_calls_exact():
    """Whatever an adversary names in ``exact_values`` it declares in ``lower_bounds``."""
    named = 0
    for name in registry.available("adversary"):
        try:
            adversary = registry.make("adversary", name)
            n = adversary.resolve_n_actions(3)
            metrics = adversary.exact_values(n, 50)
        except Exception:  # needs parameters (a data file...): not a default-built construction
            continue
        if not metrics:
            continue
        named += 1
        adversary.reset(GameSpec("experts", n, 50), [np.random.default_rng(0)])
        declared = {metric for metric, _ in adversary.lower_bounds(50)}
        assert metrics <= declared, name
    assert named >= 2  # fair_coin and comb
    assert FairCoin().exact_values(2, 5) == {"regret"}


def test_value_table_against_an_independent_computation():
    rows = synthetic_rows()
    table = value_table(rows, {FAIR: frozenset({"regret"})})
    assert list(table.columns) == COLUMNS
    assert set(table["game"]) == {FAIR}  # the Bernoulli game is not exact
    assert len(table) == 3 * len(TS)
    q = sps.t.ppf(0.975, 2)
    for r in table.itertuples(index=False):
        lb = fair_coin_lower_bound(int(r.t), 2)
        values = {
            "centred": lb + np.array([-1.0, 0.0, 1.0]),
            "above": lb + 5 + np.array([-0.1, 0.0, 0.1]),
            "exact": np.full(3, lb),
        }[r.player]
        half = q * values.std(ddof=1) / math.sqrt(3)
        assert r.exact == pytest.approx(lb, rel=1e-15)
        assert r.mean == pytest.approx(values.mean(), rel=1e-12)
        assert r.ci_high - r.mean == pytest.approx(half, abs=1e-12)
        assert r.ratio == pytest.approx(values.mean() / lb, rel=1e-12)
        assert r.ratio_low == pytest.approx((values.mean() - half) / lb, rel=1e-9, abs=1e-12)
        assert r.worst == values.max()
        assert bool(r.covered) == (r.player != "above")
        assert (r.bound == pytest.approx(2 * lb)) if r.player == "exact" else math.isnan(r.bound)
        assert (r.adversary, r.n_actions, r.horizon, r.metric) == (FAIR, 2, HORIZON, "regret")
    assert coverage(table) == (2 * len(TS), 3 * len(TS))
    # one replicate: no interval, so the checkpoint is not counted either way
    one = value_table(rows[rows.replicate == 0], {FAIR: frozenset({"regret"})})
    assert one["covered"].isna().all() and coverage(one) == (0, 0)


def test_no_section_without_an_exact_value():
    assert minimax_values(SimpleNamespace(logged={"regret", "bound:regret"})) is None
    rows = synthetic_rows()
    src = synthetic_source(rows[rows.game_label == OTHER])
    src.games = src.games[src.games.game_label == OTHER]
    assert minimax_values(_context(src, None)) is None


def test_section_writes_its_table_figure_and_coverage(tmp_path):
    rows = synthetic_rows()
    ctx = _context(synthetic_source(rows), tmp_path)
    section = minimax_values(ctx)
    assert section.title == "Minimax values"
    written = pd.read_csv(tmp_path / "tables" / "minimax_values.csv")
    expected = value_table(rows, {FAIR: frozenset({"regret"})})
    assert len(written) == len(expected)
    assert np.allclose(written["mean"], expected["mean"], rtol=1e-9)
    for suffix in ("png", "svg"):
        assert (tmp_path / "figures" / f"minimax_ratio.{suffix}").stat().st_size > 0
    tables = [b for b in section.blocks if isinstance(b, Table)]
    assert len(tables) == 1 and FAIR in tables[0].caption
    by_player = {row[0]: row for row in tables[0].rows}
    assert by_player["above"][3] == "no" and by_player["centred"][3] == "yes"
    assert by_player["exact"][4] == f"{len(TS)}/{len(TS)}"
    assert tables[0].bad_rows == {0}  # "above" is first in player order
    text = " ".join(b.text for b in section.blocks if isinstance(b, Para))
    assert f"{2 * len(TS)} of {3 * len(TS)} intervals (66.7%)" in text
    # only the player whose every replicate sits at the value is said to attain it
    assert "exact on fair_coin" in text and "centred on" not in text
    assert "(66.7%)" in render_markdown("report", section.blocks)


def _context(src: Source, root) -> ReportContext:
    fig_dir = tab_dir = None
    if root is not None:
        fig_dir, tab_dir = root / "figures", root / "tables"
        fig_dir.mkdir()
        tab_dir.mkdir()
    return ReportContext(src, ["regret"], 0.95, fig_dir, tab_dir, time.perf_counter())
