"""Tests of the boosting metrics (vote_train_error, vote_test_error, margin_frac, mean_edge).

Oracle: brute force — the vote of the recorded stumps re-evaluated example by example on the raw
data, margins compared in exact rational arithmetic, edges recomputed from ``p_t`` and ``h_t``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import yaml

from arena import play
from arena.adversaries.boosting_oracle import BoostingOracle
from arena.apps.hydra_support import config_dir
from arena.apps.tournament import Tournament, TournamentConfig
from arena.errors import ConfigError
from arena.game import prepare_game
from arena.metrics.boosting import (
    MarginFraction,
    MeanEdge,
    VoteTestError,
    VoteTrainError,
    margin_fractions,
    vote_error,
)
from arena.spec import History
from tests.helpers import last_values
from tests.helpers.contract import run_in_process

THETAS = [-0.5, 0.0, 0.1, 0.3, 1.0]


def brute_vote_error(votes) -> float:
    return sum(1 for v in votes if v <= 0) / len(votes)


def brute_margin_fraction(votes, t: int, theta: float) -> float:
    return sum(1 for v in votes if Fraction(int(v), t) <= Fraction(repr(theta))) / len(votes)


def test_vote_error_and_margins_against_brute_force():
    gen = np.random.default_rng(3)
    for t in (1, 3, 10, 30):
        votes = gen.integers(-t, t + 1, size=(4, 9)).astype(np.float64)
        got_err = vote_error(votes)
        got_margin = margin_fractions(votes, t, THETAS)
        for r in range(4):
            assert got_err[r] == brute_vote_error(votes[r])
            for k, theta in enumerate(THETAS):
                assert got_margin[r, k] == brute_margin_fraction(votes[r], t, theta)


def stump_value(x_row, stumps, r: int, s: int) -> float:
    """``h_s(x)`` of replicate r's stump of round s + 1, from the recorded stumps."""
    feature, threshold, sign = (stumps[k][r, s] for k in ("feature", "threshold", "sign"))
    return sign if x_row[int(feature)] > threshold else -sign


def test_metrics_of_a_game_against_brute_force():
    horizon, checkpoints = 12, [5, 12]
    adversary = BoostingOracle(dataset="digits", test_fraction=0.4)
    metrics = [VoteTrainError(), VoteTestError(), MarginFraction(theta=THETAS), MeanEdge()]
    rows = play(
        "normal_hedge_dt", adversary, horizon=horizon, replicates=2, seed=4,
        checkpoints=checkpoints, metrics=metrics,
    )  # fmt: skip
    game = prepare_game("normal_hedge_dt", adversary, horizon=horizon, replicates=2, seed=4)
    pl, adv, spec = game.player, game.adversary, game.spec
    X, y = adv._data()
    history = History(spec.n_replicates, spec.n_actions, sees_distribution=True)
    probs = []
    for t in range(1, horizon + 1):
        p = pl.predict()
        probs.append(p)
        history._show(p)
        loss = adv.losses(t, history)
        pl.update(loss)
        history._record(p, loss, np.zeros(spec.n_replicates, dtype=np.int64))
        if t not in checkpoints:
            continue
        stumps, split = adv.stumps(), adv.split()
        for r in range(spec.n_replicates):
            train_votes = [
                sum(y[i] * stump_value(X[i], stumps, r, s) for s in range(t))
                for i in split["train"][r]
            ]
            test_votes = [
                sum(y[i] * stump_value(X[i], stumps, r, s) for s in range(t))
                for i in split["test"][r]
            ]
            edges = [
                0.5 * sum(
                    probs[s][r, n] * y[i] * stump_value(X[i], stumps, r, s)
                    for n, i in enumerate(split["train"][r])
                )
                for s in range(t)
            ]  # fmt: skip
            assert last_values(rows, "vote_train_error", t=t)[r] == brute_vote_error(train_votes)
            assert last_values(rows, "vote_test_error", t=t)[r] == brute_vote_error(test_votes)
            for theta in THETAS:
                got = last_values(rows, "margin_frac", t=t, param=theta)[r]
                assert got == brute_margin_fraction(train_votes, t, theta)
            # a mean of t edges, each a 217-term sum in another order: rounding below 1e-14
            assert abs(last_values(rows, "mean_edge", t=t)[r] - np.mean(edges)) < 1e-14


def test_applicability_and_parameters():
    game = prepare_game(
        "hedge", "fair_coin", horizon=3, metrics=["loss", VoteTrainError(), MeanEdge()]
    )
    assert set(game.skipped) == {"vote_train_error", "mean_edge"}
    game = prepare_game(
        "hedge", BoostingOracle(test_fraction=0.0), horizon=3, metrics=["loss", VoteTestError()]
    )
    assert "test split" in game.skipped["vote_test_error"]
    with pytest.raises(ConfigError, match="theta"):
        play("hedge", BoostingOracle(), horizon=2, metrics=[MarginFraction(theta=[2.0])])


def test_the_boosting_tournament(tmp_path):
    """configs/tournament/boosting.yaml runs (shortened), with every metric in every cell."""
    config = yaml.safe_load((config_dir() / "tournament" / "boosting.yaml").read_text())
    config.update(horizon=8, replicates=1)
    Tournament(TournamentConfig.from_mapping(config), tmp_path, executor="serial").run()
    parts = sorted((tmp_path / "parts").glob("results-*.parquet"))
    rows = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    assert rows.cell.nunique() == 6
    per_cell = rows.groupby("cell").metric.unique().map(set)
    expected = {"vote_train_error", "vote_test_error", "margin_frac", "mean_edge"}
    assert all(expected | {"zero_weight_frac"} == m for m in per_cell)
    assert rows[rows.metric == "vote_train_error"].value.between(0, 1).all()


def test_cli_run_with_the_boosting_metric_set(tmp_path):
    out = tmp_path / "run"
    argv = ["run", "player=normal_hedge_dt", "adversary=boosting_oracle", "horizon=20"]
    argv += ["metrics=[regret,boosting]", "replicates=2", f"hydra.run.dir={out}"]
    res = run_in_process(argv, tmp_path)
    assert res.returncode == 0, res.stderr
    rows = pd.read_parquet(out / "results.parquet")
    expected = {"regret", "vote_train_error", "vote_test_error", "margin_frac", "mean_edge"}
    assert set(rows.metric) == expected | {"zero_weight_frac"}
