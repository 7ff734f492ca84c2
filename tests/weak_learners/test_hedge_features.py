"""hedge_features: literal transcription, exact skipping of weight-0 lanes, Hedge's regret bound.

Tolerance 1e-12: per round both sides compute a weighted mean of ≤ 8 values in [−1, 1] and
subtract products of size ≤ 2 from the log-weights, in different orders.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena.boosting.components import WeakSpec
from arena.errors import ConfigError
from arena.weak_learners.hedge_features import HedgeFeatures, hedge_regret_bound, tuned_rate
from tests.helpers.boosting_regression import HedgeLane


def _reset(learner, d=4, lanes=3, reps=2, horizon=100):
    rngs = [[np.random.default_rng([r, i]) for i in range(lanes)] for r in range(reps)]
    learner.reset(WeakSpec("regression", d, lanes, reps, horizon), rngs)
    return learner


def test_equals_literal_transcription_and_skips_weight_zero():
    rng = np.random.default_rng(3)
    learner = _reset(HedgeFeatures(rate=0.4))
    ref = [[HedgeLane(4, 0.4) for _ in range(3)] for _ in range(2)]
    for _ in range(80):
        x = rng.uniform(-1.5, 1.5, (2, 4))  # some values clipped to D = 1
        target = rng.uniform(-1, 1, (2, 3))
        weight = np.where(rng.random((2, 3)) < 0.3, 0.0, rng.uniform(0, 2, (2, 3)))
        pred = learner.predict(x)
        before = learner._log_w.copy()
        learner.update(x, target, weight)
        for r in range(2):
            for i in range(3):
                lane = ref[r][i]
                assert pred[r, i] == pytest.approx(lane.predict(list(x[r])), abs=1e-12)
                lane.learn(list(x[r]), weight[r, i] * (pred[r, i] - target[r, i]))
                if weight[r, i] == 0.0:
                    assert np.array_equal(learner._log_w[r, i], before[r, i])
    for r in range(2):
        for i in range(3):
            np.testing.assert_allclose(learner._log_w[r, i], ref[r][i].log_w, atol=1e-12)


@pytest.mark.parametrize("symmetric", [False, True])
def test_regret_within_hedge_bound_against_an_adaptive_sequence(symmetric):
    """Linear losses c_t·A with c_t = sign(A(x_t)) (the loss always goes against the learner)
    and |c_t| ≤ 1: realized regret ≤ 2√(T ln K / 2) with the tuned rate."""
    horizon, d = 400, 5
    k = 2 * d if symmetric else d
    learner = _reset(HedgeFeatures(symmetric=symmetric), d=d, lanes=1, reps=1, horizon=horizon)
    rng = np.random.default_rng(0)
    paid, per_expert = 0.0, np.zeros(k)
    for _ in range(horizon):
        x = rng.uniform(-1, 1, (1, d))
        a = learner.predict(x)
        c = np.where(a >= 0, 1.0, -1.0) * rng.uniform(0.5, 1.0)
        paid += float(c[0, 0] * a[0, 0])
        f = np.concatenate([x[0], -x[0]]) if symmetric else x[0]
        per_expert += c[0, 0] * f
        learner.update(x, a - c, np.ones((1, 1)))
    regret = paid - per_expert.min()
    assert regret <= hedge_regret_bound(horizon, k)
    assert regret > 0.0  # the sequence is adversarial: the check is not vacuous
    assert learner._eta == tuned_rate(horizon, k)


def test_needs_a_rate_or_a_horizon():
    with pytest.raises(ConfigError, match="rate"):
        _reset(HedgeFeatures(), horizon=None)
    assert HedgeFeatures(symmetric=True).n_experts(3) == 6


def test_sampling_outputs_one_function_and_skips_weight_zero():
    learner = _reset(HedgeFeatures(rate=2.0, sample=True), d=3, lanes=4, reps=2)
    rng = np.random.default_rng(5)
    picks = set()
    for _ in range(60):
        x = rng.uniform(-1, 1, (2, 3))
        out = learner.predict(x)
        assert all(out[r, i] in x[r] for r in range(2) for i in range(4))
        weight = np.where(rng.random((2, 4)) < 0.5, 0.0, 1.0)
        chosen, log_w = learner._chosen.copy(), learner._log_w.copy()
        learner.update(x, out - 1.0, weight)  # linear loss 1·A: small features win
        skipped = weight == 0.0
        assert np.array_equal(learner._chosen[skipped], chosen[skipped])
        assert np.array_equal(learner._log_w[skipped], log_w[skipped])
        picks.update(learner._chosen.ravel().tolist())
    assert len(picks) > 1
