"""The oracle weak learner: lane i reads feature i mod d; it never learns."""

from __future__ import annotations

import numpy as np
import pytest

from arena.adversaries.edge_oracle import EdgeOracle
from arena.boosting.components import BASE_LANE_KEY, WeakSpec
from arena.boosting.testing import LinearTargetStream, MajorityVote
from arena.errors import ConfigError
from arena.game import run_game
from arena.players.online_bbm import OnlineBBM
from arena.spec import GameSpec
from arena.testing.common import rngs
from arena.weak_learners.oracle import OracleWeakLearner


def lanes(seed: int, n_rep: int, keys) -> list:
    return [[np.random.default_rng([seed + r, k]) for k in keys] for r in range(n_rep)]


def test_lane_i_reads_feature_i_mod_d_and_ignores_updates():
    learner = OracleWeakLearner()
    learner.reset(WeakSpec("classification", 4, 7, 2), lanes(5, 2, range(7)))
    x = np.random.default_rng(0).standard_normal((2, 4))
    x[1, 2] = 0.0  # sign(0) is +1
    expected = np.where(x[:, [0, 1, 2, 3, 0, 1, 2]] >= 0, 1.0, -1.0)
    assert np.array_equal(learner.predict(x), expected)
    learner.update(x, -expected, np.ones((2, 7)))
    assert np.array_equal(learner.predict(x), expected)
    base = OracleWeakLearner()
    base.reset(
        WeakSpec("classification", 4, 1, 1, lane_ids=(BASE_LANE_KEY,)), lanes(5, 1, [BASE_LANE_KEY])
    )
    assert base.predict(x[:1])[0, 0] == (1.0 if x[0, BASE_LANE_KEY % 4] >= 0 else -1.0)


def test_the_lane_index_comes_from_the_spec():
    learner = OracleWeakLearner()
    learner.reset(WeakSpec("classification", 3, 2, 1, lane_ids=(2, 4)), lanes(0, 1, [2, 4]))
    x = np.array([[1.0, -1.0, -1.0]])
    assert learner.predict(x).tolist() == [[-1.0, -1.0]]  # features 2 and 4 mod 3 = 1


def test_each_lane_has_the_streams_edge():
    """Through Online BBM on ``edge_oracle``: lane i is right on a fraction ½ + edge of the
    examples (4σ binomial tolerance), and the metric ``weighted_edge`` (w·z / 2‖w‖₁) sees it."""
    edge, n, horizon = 0.2, 5, 400
    adversary = EdgeOracle(edge=edge)
    spec = GameSpec("classification", n, horizon, dim=n)
    adversary.reset(spec, rngs(1, 2))
    data = adversary.data_block(1, horizon)
    learner = OracleWeakLearner()
    learner.reset(WeakSpec("classification", n, n, 2), lanes(7, 2, range(n)))
    correct = np.stack(
        [learner.predict(data.x[:, j]) == data.y[:, j, None] for j in range(horizon)]
    )
    sigma = np.sqrt(0.7 * 0.3 / horizon)
    assert (np.abs(correct.mean(axis=0) - 0.7) < 4 * sigma).all()
    rows = run_game(
        OnlineBBM(n_learners=n, gamma=2 * edge),
        adversary,
        n_actions=n,
        horizon=horizon,
        replicates=2,
        metrics=["weighted_edge"],
    ).rows
    last = rows[rows.t == horizon].value.to_numpy()
    assert (np.abs(last - edge) < 0.15).all()  # weighted, so noisier than the plain rate


def test_refuses_regression():
    with pytest.raises(ConfigError, match="weak_learner"):
        run_game(MajorityVote(weak_learner="oracle"), LinearTargetStream(), n_actions=2, horizon=5)
