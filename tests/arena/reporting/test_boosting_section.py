"""The report's "Boosting" section: the online-boosting table against the rows it summarizes, and
the batch-boosting (Table 2.2) table on a small boosting_oracle game."""

from __future__ import annotations

import numpy as np
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
    oracle = run_game(
        "normal_hedge_dt",
        "boosting_oracle",
        horizon=8,
        replicates=2,
        metrics=[
            "vote_train_error",
            "vote_test_error",
            "zero_weight_frac",
            "margin_frac",
            "mean_edge",
        ],
    )
    write_run(oracle, root / "runs" / "oracle")
    build_report(root / "runs", root / "r", name="b", metrics=["mistakes"])
    return (root / "r" / "report.md").read_text(), runs, oracle


def test_online_table_matches_the_rows(report):
    text, runs, _ = report
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
    text, _, oracle = report
    rows = oracle.rows[oracle.rows.t == 8]
    zeros = rows[rows.metric == "zero_weight_frac"].value.mean()
    assert "zero-weight %" in text and f"{100 * zeros:.2f}" in text
    assert "margin ≤ 0.1 (%)" in text
