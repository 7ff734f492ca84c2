"""ogb_hull (Beygelzimer et al. 2015, Algorithm 2): transcription, mixing weights, Theorem 2.

Tolerances: as in test_ogb_span (sums of ≤ 5 terms of size ≤ 2, different order; 1e-10). The
closed form of the mixing weights is a different sum of the same N terms: 1e-14.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from arena.boosting.testing import LaneSGD, LinearTargetStream
from arena.errors import ConfigError
from arena.game import run_game
from arena.players.ogb_hull import OGBHull, hull_weights
from arena.spec import GameSpec
from arena.weak_learners.hedge_features import HedgeFeatures, hedge_regret_bound
from tests.helpers.boosting_regression import HedgeLane, SGDLane, hull_reference, lane_seeds
from tests.players.test_ogb_span import SEEDS, T, _reset, _stream

D_FEAT = 3


@pytest.mark.parametrize("n_learners, label_bound", [(5, 1.0), (1, 2.0)])
def test_equals_literal_transcription(n_learners, label_bound):
    x, y = _stream()
    booster = _reset(OGBHull(n_learners, LaneSGD(rate=0.3), label_bound=label_bound))
    preds = booster.play_block(x, y)
    for r, s in enumerate(lane_seeds(SEEDS)):
        lanes = [SGDLane(s, i, D_FEAT, 0.3) for i in range(n_learners)]
        ref = hull_reference(x[r], y[r], lanes, 1.0 + label_bound)
        np.testing.assert_allclose(preds[r], ref, rtol=0, atol=1e-10)
    hedge = _reset(OGBHull(3, HedgeFeatures(rate=0.7)))
    preds = hedge.play_block(x, y)
    for r in range(len(SEEDS)):
        ref = hull_reference(x[r], y[r], [HedgeLane(D_FEAT, 0.7) for _ in range(3)], 2.0)
        np.testing.assert_allclose(preds[r], ref, rtol=0, atol=1e-10)


def test_mixing_weights_and_stage_one():
    """ŷ_t = Σ_i 2i/(N(N+1)) A^i(x_t) and y^1 = A^1(x_t); |coef| ≤ 1 (partial sums in [−1, 1])."""
    x, y = _stream()
    booster = _reset(OGBHull(6, LaneSGD(rate=0.5)))
    weights = hull_weights(6)
    assert weights.sum() == pytest.approx(1.0, abs=1e-15)
    for j in range(T):
        outputs = booster._weak_outputs(x[:, j])
        partial = booster.partial_sums(x[:, j])
        np.testing.assert_allclose(partial[:, -1], outputs @ weights, rtol=0, atol=1e-14)
        np.testing.assert_array_equal(partial[:, 1], outputs[:, 0])
        booster.update(x[:, j], y[:, j])
        assert np.abs(booster.last_coefficients).max() <= 1.0


def _hull_comparator_loss(x: np.ndarray, y: np.ndarray) -> float:
    """min over the simplex of Σ_t ½(p·x_t − y_t)²: a small QP (SLSQP)."""
    d = x.shape[1]
    res = minimize(
        lambda p: 0.5 * np.sum((x @ p - y) ** 2),
        np.full(d, 1.0 / d),
        jac=lambda p: x.T @ (x @ p - y),
        bounds=[(0.0, 1.0)] * d,
        constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1.0, "jac": lambda p: np.ones(d)}],
        method="SLSQP",
        options={"ftol": 1e-12, "maxiter": 200},
    )
    assert res.success
    return float(res.fun)


def test_theorem_2_with_hedge_base_learner():
    """Σ ℓ(ŷ) − min_{CH(F)} Σ ℓ ≤ 8β_D D² T/N + L_D R(T) with β_D = D = 1, L_D = 2 and
    Hedge's R(T) = 2√(T ln K / 2), and with the realized weak-learner regrets in place of R(T)
    (Luo 2016, O-OGB-2). Deterministic: the Hedge learner outputs its weighted average."""
    n, d, steps = 300, 4, 6
    x, y = _stream(n=n, d=d)
    booster = _reset(OGBHull(steps, HedgeFeatures()), n=n, d=d)
    loss = np.zeros(len(SEEDS))
    fed = np.zeros((len(SEEDS), steps))
    per_feature = np.zeros((len(SEEDS), steps, d))
    for j in range(n):
        outputs = booster._weak_outputs(x[:, j])
        loss += 0.5 * (booster.predict(x[:, j]) - y[:, j]) ** 2
        booster.update(x[:, j], y[:, j])
        coef = booster.last_coefficients
        fed += coef * outputs
        per_feature += coef[:, :, None] * x[:, j][:, None, :]
    realized = (fed - per_feature.min(axis=2)).max(axis=1)
    known = hedge_regret_bound(n, d)
    assert (realized <= known).all()  # Hedge's bound holds lane by lane
    for r in range(len(SEEDS)):
        regret = loss[r] - _hull_comparator_loss(x[r], y[r])
        assert regret <= 8.0 * n / steps + 2.0 * realized[r]
        assert regret <= 8.0 * n / steps + 2.0 * known


def test_refuses_the_absolute_loss():
    spec = GameSpec("boosting", 2, 5, n_replicates=1, dim=2, loss="absolute", task="regression")
    with pytest.raises(ConfigError, match="loss"):
        OGBHull(2, LaneSGD()).reset(spec, [np.random.default_rng(0)])


def test_other_protocols_metrics_are_skipped_not_computed():
    """The CLI passes its whole default metric set; a metric of the experts protocol (no
    ``protocols`` attribute) is skipped in a boosting game instead of reading a missing block."""
    run = run_game(
        OGBHull(2, LaneSGD()),
        LinearTargetStream(),
        n_actions=2,
        horizon=20,
        metrics={"loss": {}, "shifting_regret": {"k": [1]}},
    )
    assert run.skipped_metrics["shifting_regret"] == (
        "defined for the bandit/experts protocols only, not boosting"
    )
    assert set(run.rows["metric"]) == {"loss"}


def test_every_learner_is_fed_every_round():
    run = run_game(
        OGBHull(3, LaneSGD()),
        LinearTargetStream(),
        n_actions=2,
        horizon=20,
        metrics=["learners_used"],
    )
    assert (run.rows[run.rows.t == 20].value == 3.0).all()
