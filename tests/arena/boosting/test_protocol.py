"""The boosting protocol: driver equals the literal loop, metrics, refusals, conformance.

Values are sums of at most 120 logistic / squared losses of size ≤ 2: exact to a few ulps of
240 (5e-14); the driver and the reference add them in different orders, so 1e-12 is the
protocol's tolerance (architecture: fast path and reference).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.boosting.checks import CHECKS
from arena.boosting.components import BASE_LANE_KEY, WeakSpec
from arena.boosting.reference import reference_play_boosting
from arena.boosting.testing import LaneSGD, LinearTargetStream, MajorityVote, ThresholdStream
from arena.errors import ConfigError, GameError
from arena.experts.testing import BernoulliStream
from arena.game import prepare_game, run_game
from arena.oco.losses import RoundData
from arena.oco.testing import ZeroPlayer
from arena.testing import check_component

KW = dict(n_actions=3, horizon=120, replicates=3)


@pytest.mark.parametrize("stream", [ThresholdStream(), LinearTargetStream()], ids=repr)
def test_driver_equals_reference_loop(stream):
    booster = MajorityVote(n_learners=4)
    rows = run_game(booster, stream, **KW).rows
    ref = reference_play_boosting(booster, stream, **KW)
    pd.testing.assert_frame_equal(ref, rows, atol=1e-12)
    chunked = run_game(booster, stream, chunk_elements=7, **KW).rows
    pd.testing.assert_frame_equal(chunked, rows, check_exact=True)


def test_metrics_mean_what_they_say():
    rows = run_game(MajorityVote(n_learners=4), ThresholdStream(noise=0.0), **KW).rows
    last = rows[rows.t == 120]
    by = last[last.replicate == 0].groupby("metric").value
    assert by.count()["weighted_edge"] == 4
    assert (by.max()["weighted_edge"] <= 0.5) and (by.min()["weighted_edge"] > 0.0)
    mistakes, base = by.first()["mistakes"], by.first()["base_mistakes"]
    assert by.first()["improvement"] == pytest.approx(100 * (base - mistakes) / base, abs=1e-12)
    assert by.first()["learners_used"] == 4.0


def test_base_learner_is_the_weak_learner_alone():
    """One lane fed every example with weight 1, on its own stream: reading it never changes
    the booster's play."""
    booster, stream = MajorityVote(n_learners=3), ThresholdStream()
    with_base = run_game(booster, stream, **KW, metrics=["mistakes", "base_mistakes"]).rows
    alone = run_game(booster, stream, **KW, metrics=["mistakes"]).rows
    ours = with_base[with_base.metric == "mistakes"].value.to_numpy()
    assert np.array_equal(ours, alone.value.to_numpy())
    game = prepare_game(booster, stream, **KW)
    base = LaneSGD()
    base.reset(
        WeakSpec("classification", 3, 1, 3, 120),
        [[np.random.default_rng([s, BASE_LANE_KEY])] for s in game.player._lane_seeds],
    )
    data = game.adversary.data_block(1, 120)
    errors = np.zeros(3)
    for j in range(120):
        errors += base.predict(data.x[:, j])[:, 0] != data.y[:, j]
        base.update(data.x[:, j], data.y[:, j, None], np.ones((3, 1)))
    last = with_base[(with_base.metric == "base_mistakes") & (with_base.t == 120)]
    assert np.array_equal(last.value.to_numpy(), errors)


def test_refusals_name_the_component():
    from arena.boosting.game import BoostingProtocol

    with pytest.raises(ConfigError, match="boosting protocol needs a booster"):
        BoostingProtocol("boosting").check_pair(ZeroPlayer(), ThresholdStream())
    with pytest.raises(ConfigError, match="experts"):
        run_game(MajorityVote(), BernoulliStream(), **KW)


def test_bad_label_stops_the_game_with_round_and_replicate():
    class Bad(ThresholdStream):
        name = "bad_labels"

        def data_block(self, t0, n):
            data = super().data_block(t0, n)
            y = data.y.copy()
            if t0 <= 50 < t0 + n:
                y[1, 50 - t0] = 0.5
            return RoundData(x=data.x, y=y)

    with pytest.raises(GameError, match=r"label 0.5 is not ±1.*round 50.*replicate 1"):
        run_game(MajorityVote(), Bad(), **KW)


def test_non_finite_prediction_stops_the_game():
    class Broken(MajorityVote):
        name = "broken_vote"

        def predict(self, x):
            out = super().predict(x)
            return out * np.nan if self._calls[0, 0] == 30 else out

    with pytest.raises(GameError, match=r"non-finite.*round 31"):
        run_game(Broken(), ThresholdStream(), **KW)


@pytest.mark.parametrize("component", [LaneSGD(), MajorityVote(n_learners=3)], ids=repr)
def test_partners_pass_the_suite(component):
    assert check_component(component) == {}


def test_suite_catches_a_learner_whose_lanes_share_state():
    class Shared(LaneSGD):
        name = "shared_lanes"

        def update(self, x, target, weight):
            super().update(x, target, weight)
            self._theta[:] = self._theta.mean(axis=1, keepdims=True)  # lanes leak into each other

    check = dict((c.__name__, c) for c in CHECKS.owned_checks)["check_weak_lanes_independent"]
    with pytest.raises(AssertionError, match="lane"):
        check(Shared())


def test_suite_catches_a_booster_that_peeks_at_the_label():
    class Peeking(MajorityVote):
        name = "peeking_vote"

        def play_block(self, x, y):
            return np.asarray(y, dtype=float) * 0.5

    check = dict((c.__name__, c) for c in CHECKS.player_checks)[
        "check_booster_reads_label_after_predicting"
    ]
    with pytest.raises(AssertionError, match="last label"):
        check(Peeking())


def test_the_weak_learner_of_the_plugin_guide_passes_the_suite_and_boosts():
    """docs/plugins.md, section 7, as written: its weak learner passes the conformance suite and
    plays under a registered booster."""
    import re
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[3] / "docs" / "plugins.md").read_text()
    part = guide.split("## 7. A weak learner")[1]
    namespace: dict = {}
    exec(re.search(r"```python\n(.*?)```", part, re.S).group(1), namespace)
    learner = namespace["SignVote"]()
    assert check_component(learner) == {}
    rows = run_game(
        "online_bbm",
        "dataset_stream",
        player_params={"n_learners": 5, "weak_learner": learner},
        horizon=100,
        replicates=2,
        metrics=["mistakes"],
    ).rows
    assert rows[rows.t == 100].value.mean() < 50  # far better than chance on breast cancer
