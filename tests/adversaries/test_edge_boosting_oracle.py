"""edge_boosting_oracle: a weak learner with edge γ on every round, boosting as an experts game."""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena import play
from arena.adversaries.edge_boosting_oracle import EdgeBoostingOracle, random_correct_set
from arena.game import reference_play
from arena.metrics.boosting import MarginFraction, MeanEdge, VoteTrainError
from arena.testing import parametrize_with_checks


@parametrize_with_checks([EdgeBoostingOracle(), EdgeBoostingOracle(edge=0.5)])
def test_conformance(component, check):
    check(component)


def test_the_correct_set_reaches_the_edge_and_no_more_than_one_example_past_it():
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = rng.dirichlet(np.full(30, 0.3))
        order = rng.permutation(30)
        edge = float(rng.uniform(0.01, 0.5))
        c = random_correct_set(p, order, edge)
        gamma = 0.5 * float(p @ c)
        assert gamma >= edge - 1e-12
        # dropping the last example taken (the one that crossed ½ + γ) falls below the edge
        k = int((c[order] > 0).sum())
        assert (c[order[:k]] > 0).all() and (c[order[k:]] < 0).all()
        assert 0.5 * float(p @ c) - p[order[k - 1]] < edge


def test_uniform_weights_give_random_sets_of_the_edge_size():
    c = random_correct_set(np.full(10, 0.1), np.arange(10)[::-1], 0.2)
    assert c.tolist() == [-1.0] * 3 + [1.0] * 7  # ⌈0.7·10⌉ = 7, the last 7 of the order


def test_edges_votes_and_metrics_agree_with_the_record():
    """Every edge is at least γ, the vote sums are the losses' 2ℓ − 1 summed, and the metrics'
    literal loop gives the same rows."""
    kw = dict(
        n_actions=50,
        horizon=60,
        replicates=3,
        metrics=[VoteTrainError(), MeanEdge(), MarginFraction(theta=[0.0, 0.2])],
    )
    df = play("normal_hedge_dt", EdgeBoostingOracle(edge=0.15), **kw)
    ref = reference_play("normal_hedge_dt", EdgeBoostingOracle(edge=0.15), **kw)
    pd.testing.assert_frame_equal(ref, df, atol=1e-12)
    final = df[df.t == 60]
    edge = final[final.metric == "mean_edge"].value
    assert (edge >= 0.15).all() and (edge < 0.3).all()
    # an example right w.p. about ½ + γ each round is misclassified after 60 rounds w.p.
    # P[Bin(60, 0.65) ≤ 30] ≈ 0.011: 1.6 of the 150 expected; 0.05 would need 7.5
    assert final[final.metric == "vote_train_error"].value.mean() <= 0.05


def test_the_default_metrics_play_and_skip_the_test_error():
    """The game asks for the split before it resets the oracle: every default metric plays, and
    ``vote_test_error`` is skipped (no held-out examples), rather than an AttributeError."""
    df = play("hedge", "edge_boosting_oracle", n_actions=20, horizon=30, replicates=2)
    metrics = set(df.metric)
    assert {"vote_train_error", "mean_edge", "regret"} <= metrics
    assert "vote_test_error" not in metrics
