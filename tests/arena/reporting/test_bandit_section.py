"""The report's "Bandit feedback" section: growth shapes, the price of bandit feedback and the
estimator-bias table, each against an independent computation from the tidy rows."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena.reporting import build_report, load_source
from arena.reporting import stats as rs
from arena.reporting.sections.bandit import estimate_bias_table
from arena.tournament import Tournament, TournamentConfig

HORIZON, REPLICATES = 400, 12
CONFIG = {
    "name": "bandit-section",
    "players": ["hedge", "exp3", "ucb1"],
    "adversaries": [{"name": "bernoulli", "params": {"gap": 0.2}}, "fair_coin"],
    "n_actions": [3],
    "horizon": HORIZON,
    "replicates": REPLICATES,
    "seed": 11,
    "metrics": {"regret": {}, "pseudo_regret": {}},
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
        from scipy import stats as sps

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


def _bias_rows(values: np.ndarray, expected: np.ndarray | None, horizon: int) -> pd.DataFrame:
    """Tidy rows of ``estimate_bias`` (units × arms at t = horizon) and, optionally, its
    expectation, for one game and one player."""
    frames = []
    for metric, v in (("estimate_bias", values), ("estimate_bias_expected", expected)):
        if v is None:
            continue
        n_units, n_arms = v.shape
        frames.append(
            pd.DataFrame(
                {
                    "seed": 1,
                    "replicate": np.repeat(np.arange(n_units), n_arms),
                    "param": np.tile(np.arange(n_arms, dtype=float), n_units),
                    "value": v.ravel(),
                    "metric": metric,
                    "t": horizon,
                    "horizon": horizon,
                    "game_label": "g",
                    "player_label": "p",
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def test_estimate_bias_table_against_a_direct_computation():
    rng = np.random.default_rng(3)
    horizon = 100
    values = rng.normal(-5.0, 2.0, (30, 4))
    expected = np.full((30, 4), -5.0)
    table = estimate_bias_table(_bias_rows(values, expected, horizon))
    (r,) = table.itertuples(index=False)
    per_unit = values.mean(axis=1) / horizon
    assert r.bias == pytest.approx(per_unit.mean(), rel=1e-12)
    assert r.expected == pytest.approx(-5.0 / horizon, rel=1e-12)
    diff = values / horizon - expected / horizon
    z = diff.mean(axis=0) / (diff.std(axis=0, ddof=1) / math.sqrt(30))
    assert r.max_abs_z == pytest.approx(np.abs(z).max(), rel=1e-9)
    assert r.n == 30
    # without the expectation, z is measured against 0 and 'expected' is missing
    alone = estimate_bias_table(_bias_rows(values, None, horizon)).iloc[0]
    assert math.isnan(alone.expected)
    z0 = (values / horizon).mean(axis=0) / ((values / horizon).std(axis=0, ddof=1) / math.sqrt(30))
    assert alone.max_abs_z == pytest.approx(np.abs(z0).max(), rel=1e-9)
