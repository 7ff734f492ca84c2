"""The report's "Boosting" section: the online-boosting table against the rows it summarizes, and
the batch-boosting tables and figures (Table 2.2, Figures 2.2 and 2.3) on a small boosting_oracle
game."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.boosting.testing import LinearTargetStream, MajorityVote, ThresholdStream
from arena.game import run_game
from arena.reporting import build_report
from arena.results import write_run


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("boosting")
    runs = []
    for k, stream in enumerate((ThresholdStream(), LinearTargetStream())):
        for n in (1, 4):
            run = run_game(
                MajorityVote(n_learners=n), stream, n_actions=3, horizon=200, replicates=3
            )
            write_run(run, root / "runs" / f"{k}{n}")
            runs.append(run)
    for player in ("normal_hedge_dt", "normal_hedge"):
        oracle = run_game(
            player,
            "boosting_oracle",
            horizon=12,
            replicates=2,
            checkpoints="all",
            metrics=[
                "vote_train_error",
                "vote_test_error",
                "zero_weight_frac",
                "margin_frac",
                "mean_edge",
            ],
        )
        write_run(oracle, root / "runs" / f"oracle_{player}")
    build_report(root / "runs", root / "r", name="b", metrics=["mistakes"])
    return (root / "r" / "report.md").read_text(), runs, oracle, root / "r"


def test_online_table_matches_the_rows(report):
    text, runs, _, _ = report
    assert "## Boosting" in text
    rows = runs[1].rows  # threshold stream, N = 4
    last = rows[rows.t == 200]
    improvement = last[last.metric == "improvement"].value.mean()
    error = last[last.metric == "mistakes"].value.mean() / 200
    assert f"{100 * error:.2f} %" in text
    assert f"{improvement:.4g}" in text
    # the summary: mean over the two streams of each booster's improvement
    both = [
        r.rows[(r.rows.t == 200) & (r.rows.metric == "improvement")].value.mean()
        for r in (runs[1], runs[3])
    ]
    assert f"{np.mean(both):.4g}" in text


def test_batch_boosting_table(report):
    text, _, oracle, _ = report
    rows = oracle.rows[oracle.rows.t == 12]
    zeros = rows[rows.metric == "zero_weight_frac"].value.mean()
    assert "zero-weight %" in text and f"{100 * zeros:.2f}" in text
    assert "margin ≤ 0.1 (%)" in text


def test_figures_2_2_and_2_3_from_the_rows(report):
    """NH-Boost.DT (``normal_hedge_dt``) against NH-Boost, 12 rounds, every round logged: the
    zero-weight curves are the rows' means per round, the summary compares t = 10..12, the margin
    distribution is the rows' at T on the default θ, and both figures are drawn."""
    text, _, oracle, folder = report
    tables = folder / "tables"
    curves = pd.read_csv(tables / "zero_weight_curves.csv")
    assert list(curves.columns) == ["game", "player", "t", "mean", "ci_low", "ci_high"]
    assert sorted(curves.player.unique()) == ["normal_hedge", "normal_hedge_dt"]
    dt = curves[curves.player == "normal_hedge_dt"].set_index("t")["mean"]
    rows = oracle.rows  # the last run: normal_hedge
    nh = rows[rows.metric == "zero_weight_frac"].groupby("t").value.mean()
    assert list(dt.index) == list(range(1, 13))
    assert curves[curves.player == "normal_hedge"].set_index("t")["mean"].to_dict() == (
        pytest.approx(nh.to_dict())
    )
    summary = pd.read_csv(tables / "zero_weight_summary.csv").set_index("player")
    assert summary.loc["normal_hedge_dt", "checkpoints_compared"] == 3  # t = 10, 11, 12
    assert np.isnan(summary.loc["normal_hedge", "above_reference"])
    assert "Figure 2.2's claims, measured: on boosting\\_oracle" in text
    dist = pd.read_csv(tables / "margin_distribution.csv")
    assert sorted(dist.theta.unique()) == [0.0, 0.1, 0.2, 0.3]  # margin_frac's default
    last = rows[(rows.metric == "margin_frac") & (rows.t == 12)].groupby("param").value.mean()
    mine = dist[dist.player == "normal_hedge"].set_index("theta")["mean"]
    assert mine.to_dict() == pytest.approx(last.to_dict())
    margins = pd.read_csv(tables / "margin_summary.csv")
    assert (margins.theta_points == 4).all() and len(margins) == 2
    assert "Figure 2.3's claim, measured:" in text
    for name in ("zero_weight_curves", "margin_distribution"):
        assert (folder / "figures" / f"{name}.png").stat().st_size > 0
        assert f"figures/{name}.svg" in text


def test_without_regret_the_first_metric_heads_the_report(report):
    text = report[0]
    assert "regret" not in text.split("Metrics logged: ")[1].split("\n")[0]
    head = text[text.index("## Headline") : text.index("## Summary")]
    assert "![`mistakes` vs round t" in head
    board = text[text.index("## Main leaderboard") : text.index("## Overview")]
    assert "### Leaderboard: mistakes" in board
    assert text.index("## Summary") < text.index("## Overview")
