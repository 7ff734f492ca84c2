"""The report's "Bandit feedback" section: growth shapes, the price of bandit feedback and the
estimator-bias table, each against an independent computation from the tidy rows."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from arena.apps.tournament import Tournament, TournamentConfig
from arena.reporting import build_report, load_source
from arena.reporting import stats as rs
from arena.reporting.sections.bandit import estimate_bias_table

HORIZON, REPLICATES = 400, 12
CONFIG = {
    "name": "bandit-section",
    "players": ["hedge", "exp3", "ucb1"],
    "adversaries": [{"name": "bernoulli", "params": {"gap": 0.2}}, "fair_coin"],
    "n_actions": [3],
    "horizon": HORIZON,
    "replicates": REPLICATES,
    "seed": 11,
    "metrics": {"regret": {}, "pseudo_regret": {}, "estimate_bias": {}, "bound": {}},
}


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    root = tmp_path_factory.mktemp("bandit-section")
    Tournament(TournamentConfig.from_mapping(CONFIG), root / "t", executor="serial").run()
    out = root / "report"
    build_report(root / "t", out, name="bandit")
    return load_source(root / "t"), out


def test_growth_models_recover_each_shape_and_name_the_closest():
    ts = np.unique(np.round(np.logspace(0, 5, 51)))
    for shape, g in (("log t", np.log(ts)), ("√t", np.sqrt(ts)), ("t", ts)):
        r = rs.growth_models(4.0 + 0.5 * g, ts)
        assert r["best"] == shape
        assert r[f"b_{shape}"] == pytest.approx(0.5, rel=1e-9)
        assert r[f"misfit_{shape}"] < 1e-12
    # a curve with too few checkpoints in the window has no shape
    assert rs.growth_models(np.array([1.0, 2.0]), np.array([1.0, 10.0]))["best"] == "n/a"


def test_price_is_the_paired_difference_of_final_regret_on_shared_losses(played):
    src, out = played
    price = pd.read_csv(out / "tables" / "bandit_price.csv")
    final = src.rows[(src.rows.metric == "regret") & (src.rows.t == HORIZON)]
    for r in price.itertuples(index=False):
        game = final[final.game_label == r.game]
        a = game[game.player_label == r.bandit_player].set_index(["seed", "replicate"]).value
        b = game[game.player_label == r.experts_player].set_index(["seed", "replicate"]).value
        diffs = (a - b.loc[a.index]).to_numpy()
        assert r.price == pytest.approx(diffs.mean(), rel=1e-9, abs=1e-12)
        assert r.n == REPLICATES
        half = (r.ci_high - r.ci_low) / 2
        expected_half = sps.t.ppf(0.975, REPLICATES - 1) * diffs.std(ddof=1) / math.sqrt(REPLICATES)
        assert half == pytest.approx(expected_half, rel=1e-9)
    # hedge is the only experts player, so it is every bandit player's counterpart
    assert set(price.experts_player) == {"hedge"}
    assert set(price.bandit_player) == {"exp3", "ucb1"}


def test_the_same_losses_reach_both_protocols(played):
    src, _ = played
    # fair coins: hedge and exp3 see the same loss sequence, so their best arm in hindsight (and
    # thus regret minus loss) agrees replicate by replicate; the pseudo-regret there is 0 for all
    rows = src.rows[(src.rows.game_label == "fair_coin") & (src.rows.metric == "pseudo_regret")]
    assert (rows.value.abs() < 1e-12).all()


def test_growth_table_reads_pseudo_regret_where_the_means_differ(played):
    _, out = played
    fits = pd.read_csv(out / "tables" / "bandit_growth_models.csv")
    metric = {g.split("(")[0]: m for g, m in zip(fits.game, fits.metric, strict=True)}
    assert metric == {"bernoulli": "pseudo_regret", "fair_coin": "regret"}  # fair coins: equal
    # means make the pseudo-regret identically 0
    assert set(fits.player) == {"exp3", "ucb1"}  # bandit players only
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Bandit feedback" in report and "Price of bandit feedback" in report


def test_no_bandit_section_without_bandit_players(tmp_path):
    cfg = {**CONFIG, "players": ["hedge"], "horizon": 50, "replicates": 2}
    Tournament(TournamentConfig.from_mapping(cfg), tmp_path / "t", executor="serial").run()
    build_report(tmp_path / "t", tmp_path / "r", name="experts")
    assert "Bandit feedback" not in (tmp_path / "r" / "report.md").read_text(encoding="utf-8")


def _bias_rows(values: np.ndarray, horizon: int) -> pd.DataFrame:
    """Tidy ``estimate_bias`` rows (units × arms at t = horizon) of one game and one player."""
    n_units, n_arms = values.shape
    return pd.DataFrame(
        {
            "seed": 1,
            "replicate": np.repeat(np.arange(n_units), n_arms),
            "param": np.tile(np.arange(n_arms, dtype=float), n_units),
            "value": values.ravel(),
            "metric": "estimate_bias",
            "t": horizon,
            "horizon": horizon,
            "game_label": "g",
            "player_label": "p",
        }
    )


def test_estimate_bias_table_against_a_direct_computation():
    rng = np.random.default_rng(3)
    horizon = 100
    values = rng.normal(-5.0, 2.0, (30, 4))
    (r,) = estimate_bias_table(_bias_rows(values, horizon)).itertuples(index=False)
    per_unit = values.mean(axis=1) / horizon
    assert r.bias == pytest.approx(per_unit.mean(), rel=1e-12)
    half = sps.t.ppf(0.975, 29) * per_unit.std(ddof=1) / math.sqrt(30)
    assert r.ci_high - r.bias == pytest.approx(half, rel=1e-9)
    scaled = values / horizon
    z = scaled.mean(axis=0) / (scaled.std(axis=0, ddof=1) / math.sqrt(30))
    assert r.max_abs_z == pytest.approx(np.abs(z).max(), rel=1e-9)
    assert r.median == pytest.approx(np.median(per_unit), rel=1e-12)
    assert r.under == pytest.approx((values < 0).mean(), rel=1e-12)
    assert r.n == 30


def test_the_bias_table_shows_the_players_that_keep_estimates(played):
    _, out = played
    bias = pd.read_csv(out / "tables" / "estimator_bias.csv")
    assert set(bias.player) == {"exp3"}  # ucb1 keeps no estimates; hedge plays experts
    # Exp3's importance weights are unbiased: no arm's z statistic is extreme
    assert (bias.max_abs_z < 4.5).all()


def _bounded_rows(values: np.ndarray, bound: float, protocol: str) -> pd.DataFrame:
    """Tidy regret and bound:regret rows of one cell at t = 100, one value per replicate."""
    n = len(values)
    base = {
        "run_id": "r",
        "cell": "c",
        "seed": 1,
        "replicate": np.arange(n),
        "t": 100,
        "param": np.nan,
        "protocol": protocol,
        "game_label": "g",
        "player_label": "p",
    }
    return pd.concat(
        [
            pd.DataFrame({**base, "metric": "regret", "value": values}),
            pd.DataFrame({**base, "metric": "bound:regret", "value": np.full(n, bound)}),
        ],
        ignore_index=True,
    )


def test_bandit_bounds_are_checked_on_the_mean_not_row_by_row():
    rng = np.random.default_rng(0)
    spread = rng.normal(0.0, 10.0, 64)
    spread -= spread.mean()
    below_on_average = _bounded_rows(9.0 + spread, 10.0, "bandit")  # rows above, mean below
    assert (below_on_average.query("metric == 'regret'").value > 10.0).any()
    assert rs.bound_violations(below_on_average).empty
    assert rs.expected_bound_violations(below_on_average).empty
    above = rs.expected_bound_violations(_bounded_rows(20.0 + spread, 10.0, "bandit"))
    (r,) = above.itertuples(index=False)
    q = sps.t.ppf(1 - 0.001, 63)  # one checkpoint: no Bonferroni split
    assert r.mean == pytest.approx(20.0) and r.bound == 10.0
    assert r.margin == pytest.approx(q * spread.std(ddof=1) / 8.0, rel=1e-9)
    # within the margin of the bound: not flagged
    assert rs.expected_bound_violations(_bounded_rows(10.0 + spread, 10.0, "bandit")).empty
    # the experts protocol's bounds hold for every row: checked row by row, never on the mean
    experts = _bounded_rows(9.0 + spread, 10.0, "experts")
    assert rs.expected_bound_violations(experts).empty
    assert len(rs.bound_violations(experts)) == int((9.0 + spread > 10.0).sum())


def test_summary_counts_the_bounds_that_hold_in_expectation(played):
    src, out = played
    rows = src.rows[src.rows["protocol"].astype(str) == "bandit"]
    metric = rows["metric"].astype(str)
    declared = {
        (g, p, m.removeprefix("bound:"))
        for g, p, m in zip(rows.game_label, rows.player_label, metric, strict=True)
        if m.startswith("bound:")
    }
    measured = set(zip(rows.game_label, rows.player_label, metric, strict=True))
    total = len(declared & measured)
    above = pd.read_csv(out / "tables" / "above_expected_bound.csv")
    k = len(above.drop_duplicates(["game", "player", "metric", "param"]))
    assert total >= 2  # exp3's regret on both games, at least
    report = (out / "report.md").read_text(encoding="utf-8")
    line = re.search(
        r"\[Bounds in expectation \(bandit players\)[^\]]*\]\(#([^)]+)\): ([^\n<]*)", report
    )
    assert line[1] == "above-a-bound-in-expectation"
    assert line[2].startswith(f"{total - k} of {total} hold")
    assert report.index("## Summary") < report.index("## Overview")
