"""The boosting section's theorems part (arena/reporting/sections/boosting/theorems.py): Luo 2016,
Theorems 3, 10 (sample complexity), 14 and 15 measured beside their bounds.

The committed numbers are pinned in configs/gallery.yaml (rows thm3-bound, thm3-rates,
thm10-samples, thm14-bound, thm15-slope); here the section's formulas are checked against the
players' own bounds and brute force, and the section is built on tiny runs.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena.game import run_game
from arena.players.normal_hedge_dt import NormalHedgeDT
from arena.players.ogb_hull import hull_weights
from arena.reporting import build_report
from arena.reporting.sections.boosting.theorems import (
    decay_rate,
    expected_hull_regret,
    first_crossing,
    hull_weights_square_sum,
    nhdt_log_factor,
    theorem3_bound,
    theorem10_bound,
    theorem14_bound,
)
from arena.results import write_run
from arena.spec import GameSpec


@pytest.mark.parametrize(
    ("t", "gamma", "theta"), [(300, 0.1, 0.0), (1000, 0.1, 0.0), (1000, 0.1, 0.1)]
)
def test_theorem3_bound_is_the_players_quantile_bound_in_eq_2_4(t, gamma, theta):
    """The bound counts the examples whose regret can reach t(γ − θ/2): with N = 2000 examples,
    the k-th largest regret's bound (NormalHedgeDT.quantile_bound, Corollary 2's form) is below
    that level exactly from k = ⌊N·bound⌋ + 1 on, so at most ⌊N·bound⌋ examples have margin ≤ θ."""
    n = 2000
    player = NormalHedgeDT()
    player.reset(GameSpec("experts", n, t, n_replicates=1), [np.random.default_rng(0)])
    level = t * (gamma - theta / 2)
    bound = theorem3_bound(t, gamma, theta)
    k = math.floor(n * bound) + 1
    if k <= n:
        assert player.quantile_bound(t, k) < level
    if k > 1:
        assert player.quantile_bound(t, k - 1) >= level * (1 - 1e-12)
    assert nhdt_log_factor(t) == pytest.approx(0.5 * player._exp_sum(t), rel=1e-12)
    assert theorem3_bound(t, gamma, 2 * gamma) == math.inf


def test_first_crossing_brackets_the_true_first_round():
    """On random nondecreasing mistake counts read at a sparse grid, the true first round t > T_0
    with mistakes_t ≤ εt (from every round) lies in the bracket."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        horizon, t0, eps = 600, int(rng.integers(5, 50)), float(rng.choice([0.1, 0.2]))
        steps = np.where(np.arange(1, horizon + 1) <= t0, rng.random(horizon) < 0.5, 0)
        steps = steps | (rng.random(horizon) < 0.02)
        mistakes = np.cumsum(steps)
        ts = np.arange(1, horizon + 1)
        ok = np.flatnonzero((ts > t0) & (mistakes <= eps * ts))
        grid = np.unique(np.round(np.geomspace(1, horizon, 40)).astype(int))
        low, high = first_crossing(grid, mistakes[grid - 1], eps, t0)
        if high < 0:  # no checkpoint reaches ε
            assert not ((grid > t0) & (mistakes[grid - 1] <= eps * grid)).any()
            continue
        assert low <= ts[ok[0]] <= high


def test_theorem10_and_14_bounds_and_the_hull_expectation():
    assert theorem10_bound(250, 0.05) == pytest.approx(
        (125 - math.sqrt(250 * math.log(100) / 2)) / 0.05
    )
    assert theorem14_bound(1000, 4, 100, 2.0) == pytest.approx(
        2000 + 4 * math.sqrt(500 * math.log(100))
    )
    for n in (1, 2, 5, 16):
        assert hull_weights_square_sum(n) == pytest.approx(float((hull_weights(n) ** 2).sum()))
    # N = 1: one sampled bit, variance y*(1 − y*)
    assert expected_hull_regret(10, 1, 10**9, 0.0) == pytest.approx(10 * 0.25 / 2, rel=1e-8)
    ts = np.arange(1, 30.0)
    assert decay_rate(ts, np.exp(-0.05 * ts) * 3, ts > 5) == pytest.approx(0.05)


def test_the_section_on_tiny_runs(tmp_path):
    """Each part's table from tiny runs: the bounds hold, the warm-up games stay out of Table
    3.1's analogue and the edge games out of Table 2.2's."""
    runs = tmp_path / "runs"
    games = [
        (
            "normal_hedge_dt",
            {},
            "edge_boosting_oracle",
            {"edge": 0.2},
            200,
            150,
            ["vote_train_error", "margin_frac"],
        ),
        (
            "online_bbm",
            {"n_learners": 31, "weak_learner": "oracle"},
            "edge_oracle",
            {"edge": 0.2, "warmup": 20},  # error P[Bin(31, 0.7) ≤ 15] = 0.01 after the warm-up:
            31,  # ε = 0.1 and 0.05 are reached near T_0·½/(ε − 0.01) ≤ 250 < 600
            600,
            ["mistakes"],
        ),
        (
            "online_bbm",
            {"n_learners": 11, "weak_learner": "oracle"},
            "edge_oracle",
            {"edge": 0.2},
            11,
            200,
            ["mistakes"],
        ),
    ]
    for n in (2, 4):
        games.append(
            (
                "ogb_hull",
                {
                    "n_learners": n,
                    "weak_learner": "hedge_features",
                    "weak_learner_params": {"sample": True},
                },
                "hull_lower_bound",
                {"n_boost": 2, "m_functions": 20},
                None,
                200,
                ["loss"],
            )
        )
    for k, (player, pp, adversary, ap, n_actions, horizon, metrics) in enumerate(games):
        run = run_game(
            player,
            adversary,
            player_params=pp,
            adversary_params=ap,
            n_actions=n_actions,
            horizon=horizon,
            replicates=3,
            metrics=metrics,
        )
        write_run(run, runs / f"g{k}")
    build_report(runs, tmp_path / "r", name="b", metrics=["mistakes", "loss"])
    tables = tmp_path / "r" / "tables"
    thm3 = pd.read_csv(tables / "boosting_theorem3.csv")
    assert thm3.theta.tolist() == [0.0, 0.1, 0.2, 0.3]  # margin_frac's default θ < 2γ = 0.4
    assert (thm3.ratio_max <= 1).all()
    assert not (tables / "boosting_game.csv").exists()  # no stump game: no Table 2.2 analogue
    thm10 = pd.read_csv(tables / "boosting_theorem10.csv")
    assert (thm10.warmup == 20).all() and (thm10.reached == 3).all()
    assert (thm10.t_eps_low >= thm10.bound).all()
    rates = pd.read_csv(tables / "boosting_scaling_rates.csv")
    assert rates.n_learners.tolist() == [11] and len(rates) == 1  # the warm-up game left out
    thm14 = pd.read_csv(tables / "boosting_theorem14.csv")
    assert thm14.n_learners.tolist() == [2, 4] and (thm14.ratio_max <= 1).all()
    thm15 = pd.read_csv(tables / "boosting_theorem15.csv")
    assert len(thm15) == 1 and thm15.slope.iloc[0] > 0
    text = (tmp_path / "r" / "report.md").read_text()
    assert "Theorem 3" in text and "Theorem 10's sample-complexity half" in text
