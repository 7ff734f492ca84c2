"""OGB-Span on the logistic loss (Beygelzimer et al. 2015, Algorithm 1 with the table's logistic
row): the booster against a literal transcription, and Theorem 1 with a Hedge weak learner of
known regret on the catalog's classification streams."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import pytest

from arena.adversaries.edge_oracle import EdgeOracle
from arena.adversaries.separable_stream import SeparableStream
from arena.boosting.components import WeakLearner, WeakSpec
from arena.boosting.testing import LinearTargetStream
from arena.errors import ConfigError
from arena.game import run_game
from arena.players._ogb import table_parameters
from arena.players.ogb_logistic import OGBLogistic, logistic_radius
from arena.spec import GameSpec
from arena.testing.common import rngs

RATE = 0.2


class HedgeSigns(WeakLearner):
    """Hedge over ``F = {±clip(x_j, −1, 1)}`` for classification: answers the weighted average
    ``Σ_k p_k f_k(x)`` (deterministic, exact for linear losses) and reads the importance-weighted
    example ``(x, target, weight)`` as the linear loss ``c·v`` with ``c = −target·weight``."""

    name = "hedge_signs"
    tasks: ClassVar[frozenset[str]] = frozenset({"classification"})

    def __init__(self, rate: float = RATE):
        self.rate = rate

    def reset(self, spec: WeakSpec, rngs: Sequence[Sequence[np.random.Generator]]) -> None:
        self._log_w = np.zeros((spec.n_replicates, spec.n_lanes, 2 * spec.n_features))

    @staticmethod
    def values(x: np.ndarray) -> np.ndarray:
        f = np.clip(np.asarray(x, dtype=np.float64), -1.0, 1.0)
        return np.concatenate([f, -f], axis=-1)

    def predict(self, x: np.ndarray) -> np.ndarray:
        z = self._log_w - self._log_w.max(axis=2, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(axis=2, keepdims=True)
        return np.clip(np.einsum("rlk,rk->rl", p, self.values(x)), -1.0, 1.0)

    def update(self, x: np.ndarray, target: np.ndarray, weight: np.ndarray) -> None:
        coef = -target * weight
        self._log_w = self._log_w - self.rate * coef[:, :, None] * self.values(x)[:, None, :]


def literal_ogb_logistic(x, y, n, eta):
    """Algorithm 1 line by line for one replicate at a time, each stage's learner a one-lane
    :class:`HedgeSigns`; returns the predictions, σ and the real votes ``y^N``."""
    n_rep, horizon, d = x.shape
    radius = min(eta * n, math.log(4 / eta))
    lip = math.exp(radius) / (1 + math.exp(radius))
    preds, votes = np.empty((n_rep, horizon)), np.empty((n_rep, horizon))
    sigmas = np.empty((n_rep, n))
    for r in range(n_rep):
        learners = []
        for _ in range(n):
            lane = HedgeSigns()
            lane.reset(WeakSpec("classification", d, 1, 1, horizon), [[None]])
            learners.append(lane)
        sigma = [0.0] * n
        for t in range(1, horizon + 1):
            xt, label = x[r, t - 1][None, :], float(y[r, t - 1])
            a = [float(learners[i].predict(xt)[0, 0]) for i in range(n)]
            partial = [0.0]
            for i in range(n):
                raw = (1 - sigma[i] * eta) * partial[i] + eta * a[i]
                partial.append(min(max(raw, -radius), radius))
            votes[r, t - 1] = partial[n]
            preds[r, t - 1] = 1.0 if partial[n] > 0 else (-1.0 if partial[n] < 0 else 0.0)
            for i in range(n):
                grad = -label / (1 + math.exp(label * partial[i]))
                coef = grad / lip
                target = -1.0 if coef > 0 else 1.0
                learners[i].update(xt, np.array([[target]]), np.array([[abs(coef)]]))
                step = grad * partial[i] / (lip * radius * math.sqrt(t))
                sigma[i] = min(max(sigma[i] + step, 0.0), 1.0)
        sigmas[r] = sigma
    return preds, sigmas, votes


def _reset(booster, adversary, d, horizon, n_rep, seed=1):
    spec = GameSpec(
        "boosting", d, horizon, n_replicates=n_rep, dim=d, loss="logistic", task="classification"
    )
    adversary.reset(spec, rngs(seed, n_rep))
    booster.reset(spec, rngs(seed + 1, n_rep))
    return adversary.data_block(1, horizon)


def test_equals_literal_transcription():
    """Predictions, the real vote and σ equal the transcription to 1e-10 on a noisy separable
    stream (N = 4, η = 0.5: B = min{2, ln 8} = 2, so the projection and σ both act)."""
    n, eta, d, horizon, n_rep = 4, 0.5, 3, 80, 2
    booster = OGBLogistic(n_learners=n, eta=eta, weak_learner=HedgeSigns())
    data = _reset(booster, SeparableStream(margin=0.1, noise=0.2), d, horizon, n_rep)
    votes = np.empty((n_rep, horizon))
    got = np.empty((n_rep, horizon))
    for j in range(horizon):
        votes[:, j] = booster.partial_sums(data.x[:, j])[:, -1]
        got[:, j] = booster.play_block(data.x[:, j : j + 1], data.y[:, j : j + 1])[:, 0]
    expected, sigmas, literal_votes = literal_ogb_logistic(data.x, data.y, n, eta)
    np.testing.assert_allclose(got, expected, atol=1e-10, rtol=0)
    np.testing.assert_allclose(votes, literal_votes, atol=1e-10, rtol=0)
    np.testing.assert_allclose(booster.sigma, sigmas, atol=1e-10, rtol=0)
    assert (sigmas > 0).any() and booster.radius == 2.0
    assert (np.abs(booster.last_coefficients) <= 1.0).all()


@pytest.mark.parametrize(
    "adversary, d",
    [(EdgeOracle(edge=0.1), 4), (SeparableStream(margin=0.1, noise=0.1), 4)],
    ids=["edge_oracle", "separable_stream"],
)
def test_theorem_1_with_hedge_learner(adversary, d):
    """Theorem 1 with the logistic row (β_B = ¼): ``Σ ℓ(y^N) − Σ ℓ(f) ≤ (1 − η/W)^N Δ₀ +
    ¾ηB²WT + L_B W R + 2L_B B W √T`` for f = the signed feature with the least logistic loss
    (W = 1) and for a least-squares direction f = w·x (W = max{1, ‖w‖₁}), with R the realized
    regret of the weak learners on the linear losses they were fed (Hedge over ±features:
    F symmetric); and mistakes ≤ Σ ℓ(y^N)/ln 2."""
    n, horizon, n_rep = 6, 300, 2
    booster = OGBLogistic(n_learners=n, weak_learner=HedgeSigns())
    data = _reset(booster, adversary, d, horizon, n_rep, seed=7)
    loss, mistakes = np.zeros(n_rep), np.zeros(n_rep)
    fed = np.zeros((n_rep, n))
    per_function = np.zeros((n_rep, n, 2 * d))
    for j in range(horizon):
        x, y = data.x[:, j], data.y[:, j]
        outputs = booster._weak_outputs(x)
        loss += booster.logistic_losses(x, y)
        mistakes += y * booster.predict(x) <= 0
        booster.update(x, y)
        coef = booster.last_coefficients
        fed += coef * outputs
        per_function += coef[:, :, None] * HedgeSigns.values(x)[:, None, :]
    regret = (fed - per_function.min(axis=2)).max(axis=1)
    eta, radius = booster.step(), booster.radius
    lip, beta, _ = table_parameters("logistic", radius)
    assert beta == 0.25 and radius == logistic_radius(eta, n)
    assert (mistakes <= loss / math.log(2) + 1e-9).all()
    for r in range(n_rep):
        x, y = data.x[r], data.y[r]
        signed = HedgeSigns.values(x)  # (T, 2d)
        feature_losses = np.logaddexp(0.0, -y[:, None] * signed).sum(axis=0)
        w = np.linalg.lstsq(x, y, rcond=None)[0]
        for f_values, weight in (
            (signed[:, int(feature_losses.argmin())], 1.0),
            (x @ w, max(1.0, float(np.abs(w).sum()))),
        ):
            comp = np.logaddexp(0.0, -y * f_values)
            delta0 = (math.log(2) - comp).sum()
            bound = (
                (1 - eta / weight) ** n * delta0
                + 3 * eta * beta * radius**2 * weight * horizon
                + lip * weight * regret[r]
                + 2 * lip * radius * weight * math.sqrt(horizon)
            )
            assert loss[r] - comp.sum() <= bound
    assert (loss > 0).all() and (regret > 0).all()


def test_plays_a_game_and_refuses_regression_and_bad_steps():
    rows = run_game(
        OGBLogistic(n_learners=3, weak_learner="stump"),
        SeparableStream(),
        n_actions=4,
        horizon=30,
        metrics=["mistakes"],
    ).rows
    assert set(rows.metric) == {"mistakes"}
    with pytest.raises(ConfigError, match="eta"):
        run_game(OGBLogistic(n_learners=4, eta=0.1), SeparableStream(), n_actions=4, horizon=5)
    with pytest.raises(ConfigError, match="eta"):
        run_game(OGBLogistic(eta=1.5), SeparableStream(), n_actions=4, horizon=5)
    with pytest.raises(ConfigError, match="not regression"):
        run_game(OGBLogistic(n_learners=3), LinearTargetStream(), n_actions=2, horizon=5)
