"""ogb_span (Beygelzimer et al. 2015, Algorithm 1): literal transcription, invariants, Theorem 1.

Tolerances: predictions are sums of at most N = 5 terms of size ≤ 2 per round, and both sides
run the same arithmetic in a different order (numpy's einsum vs Python sums for the weak
learners), so agreement is to a few ulps per round, compounded over 60 rounds of learning:
1e-10 leaves ample room.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.boosting.testing import LaneSGD, LinearTargetStream, ThresholdStream
from arena.errors import ConfigError, GameError
from arena.game import run_game
from arena.players._ogb import span_radius, squared_loss_parameters, table_parameters
from arena.players.ogb_span import OGBSpan, default_step
from arena.spec import GameSpec
from arena.weak_learners.hedge_features import HedgeFeatures
from tests.helpers.boosting_regression import HedgeLane, SGDLane, lane_seeds, span_reference

T, D_FEAT, SEEDS = 60, 3, [11, 12]


def _stream(n=T, d=D_FEAT, seeds=SEEDS, noise=0.1):
    stream = LinearTargetStream(noise=noise)
    stream.reset(GameSpec("regression", d, n, dim=d), [np.random.default_rng(s) for s in seeds])
    data = stream.data_block(1, n)
    return data.x, data.y


def _reset(booster, n=T, d=D_FEAT, seeds=SEEDS):
    spec = GameSpec(
        "boosting", d, n, n_replicates=len(seeds), dim=d, loss="squared", task="regression"
    )
    booster.reset(spec, [np.random.default_rng(s) for s in seeds])
    return booster


@pytest.mark.parametrize(
    "params, radius, lipschitz",
    [
        ({"n_learners": 5}, 1.0, 2.0),  # η = ln 5/5, ηN = ln 5 > 1: B = 1, L = B + 1
        ({"n_learners": 4, "eta": 0.25}, 1.0, 2.0),  # ηN = 1
        # λ = 2: B = min{ηNλ, max{λ, root}} = min{4, 2}; L_B = B + Y = 3
        ({"n_learners": 4, "eta": 0.5, "scale": 2.0}, 2.0, 3.0),
        # Y = 2, η = 1/2, N = 4: ε_b = 2 − b, the root of b²/2 = 2 − b is √5 − 1 < ηN = 2
        ({"n_learners": 4, "eta": 0.5, "label_bound": 2.0}, 5**0.5 - 1, 5**0.5 + 1),
        ({"n_learners": 1, "eta": 1.0}, 1.0, 2.0),
    ],
)
def test_equals_literal_transcription(params, radius, lipschitz):
    x, y = _stream()
    booster = _reset(OGBSpan(weak_learner=LaneSGD(rate=0.3), **params))
    assert booster.radius == pytest.approx(radius, abs=1e-15)
    preds = booster.play_block(x, y)
    eta = booster.step()
    for r, s in enumerate(lane_seeds(SEEDS)):
        lanes = [SGDLane(s, i, D_FEAT, 0.3) for i in range(params["n_learners"])]
        ref, sigmas = span_reference(
            x[r], y[r], lanes, eta, radius, lipschitz, params.get("scale", 1.0)
        )
        np.testing.assert_allclose(preds[r], ref, rtol=0, atol=1e-10)
        np.testing.assert_allclose(booster.sigma[r], sigmas[-1], rtol=0, atol=1e-10)
    # the per-round path (predict, then update) is the same game
    again = _reset(OGBSpan(weak_learner=LaneSGD(rate=0.3), **params))
    for j in range(T):
        np.testing.assert_array_equal(again.predict(x[:, j]), preds[:, j])
        again.update(x[:, j], y[:, j])


def test_equals_literal_transcription_with_hedge_learner():
    x, y = _stream()
    booster = _reset(OGBSpan(n_learners=3, weak_learner=HedgeFeatures(rate=0.7)))
    preds = booster.play_block(x, y)
    for r in range(len(SEEDS)):
        lanes = [HedgeLane(D_FEAT, 0.7) for _ in range(3)]
        ref, _ = span_reference(x[r], y[r], lanes, default_step(3), 1.0, 2.0)
        np.testing.assert_allclose(preds[r], ref, rtol=0, atol=1e-10)


def test_invariants_stage_one_and_coefficients():
    """σ^1 ≡ 0, σ ∈ [0, 1], |y^i| ≤ B, |coef| ≤ 1, and the shrinkage does move."""
    x, y = _stream(n=200, noise=0.5)
    booster = _reset(OGBSpan(n_learners=6, eta=0.4, weak_learner=LaneSGD(rate=0.5)), n=200)
    moved = 0.0
    for j in range(200):
        partial = booster.partial_sums(x[:, j])
        assert np.abs(partial).max() <= booster.radius
        booster.update(x[:, j], y[:, j])
        sigma = booster.sigma
        assert (sigma >= 0).all() and (sigma <= 1).all() and (sigma[:, 0] == 0).all()
        assert np.abs(booster.last_coefficients).max() <= 1.0
        moved = max(moved, sigma[:, 1:].max())
    assert moved > 0.0


def test_one_stage_with_unit_step_predicts_the_weak_learner():
    """N = 1, η = 1: σ ≡ 0 and B = 1, so ŷ_t = A^1(x_t) (§1.7 item 8 of the sources' oracles)."""
    x, y = _stream()
    booster = _reset(OGBSpan(n_learners=1, eta=1.0, weak_learner=LaneSGD()))
    for j in range(T):
        out = booster._learners.predict(x[:, j])[:, 0]
        np.testing.assert_array_equal(booster.predict(x[:, j]), out)
        booster.update(x[:, j], y[:, j])


def test_loss_parameter_table():
    """§3 table (and the arena's ½-scaled squared loss): on grids over y* ∈ [−1, 1], |y| ≤ b,
    |ℓ′| ≤ L_b, the smoothness inequality with β_b, the projection-excess ratio ≤ ε_b, and
    η β_B B² ≥ ε_B D at the tabulated B."""
    losses = {
        "linear": (lambda s, v: -s * v, lambda s, v: -s + 0 * v),
        "squared_p2": (lambda s, v: (s - v) ** 2, lambda s, v: 2 * (v - s)),
        "modified_ls": (
            lambda s, v: 0.5 * np.maximum(1 - s * v, 0) ** 2,
            lambda s, v: -s * np.maximum(1 - s * v, 0),
        ),
        "logistic": (
            lambda s, v: np.log1p(np.exp(-s * v)),
            lambda s, v: -s / (1 + np.exp(s * v)),
        ),
        "half_squared": (lambda s, v: 0.5 * (v - s) ** 2, lambda s, v: v - s),
    }
    for name, (loss, grad) in losses.items():
        # the margin losses' ε_b hold for labels ±1 only (with y* = ½ the modified least squares
        # has ε_1 = ¼, not 0): the table's rows are classification losses there
        margin = name in ("modified_ls", "logistic")
        labels = np.array([-1.0, 1.0]) if margin else np.linspace(-1, 1, 41)
        for b in (0.3, 1.0, 2.5):
            lip, beta, eps = table_parameters(name, b)
            s, v = np.meshgrid(labels, np.linspace(-b, b, 81))
            assert np.abs(grad(s, v)).max() <= lip + 1e-12, name
            s3, v1, v2 = np.meshgrid(labels, np.linspace(-b, b, 21), np.linspace(-b, b, 21))
            gap = loss(s3, v2) - loss(s3, v1) - grad(s3, v1) * (v2 - v1)
            assert (gap <= beta / 2 * (v2 - v1) ** 2 + 1e-12).all(), name
            out = np.linspace(b + 1e-6, b + 5, 200)
            out = np.concatenate([out, -out])
            s2, u = np.meshgrid(labels, out)
            proj = np.clip(u, -b, b)
            ratio = (loss(s2, proj) - loss(s2, u)) / np.abs(proj - u)
            assert ratio.max() <= eps + 1e-9, name
            if eps > 0:  # the excess is attained near the ball: the table is tight
                assert ratio.max() >= eps - 1e-3, name
    for n in (5, 20, 100):
        eta = default_step(n)
        for name, table_b in (
            ("squared_p2", 1.0),
            ("modified_ls", 1.0),
            ("half_squared", 1.0),
            ("logistic", min(eta * n, math.log(4 / eta))),
        ):
            _, beta, eps = table_parameters(name, table_b)
            if table_b < eta * n:
                assert eta * beta * table_b**2 >= eps, name
        assert span_radius(eta, n, 1.0) == min(eta * n, 1.0)
    assert squared_loss_parameters(1.0) == (2.0, 1.0, 0.0)


def _simplex_regret_parts(booster, x, y):
    """Play round by round; return the booster's loss and the realized regret of each weak
    learner on the linear losses it was fed against its best feature (Luo 2016, O-OGB-4)."""
    n_rep, n, d = x.shape
    loss = np.zeros(n_rep)
    fed = np.zeros((n_rep, booster.n_learners))
    per_feature = np.zeros((n_rep, booster.n_learners, 2 * d))
    for j in range(n):
        outputs = booster._weak_outputs(x[:, j])
        loss += 0.5 * (booster.predict(x[:, j]) - y[:, j]) ** 2
        booster.update(x[:, j], y[:, j])
        coef = booster.last_coefficients
        fed += coef * outputs
        values = np.clip(np.concatenate([x[:, j], -x[:, j]], axis=1), -1, 1)
        per_feature += coef[:, :, None] * values[:, None, :]
    return loss, (fed - per_feature.min(axis=2)).max(axis=1)


def test_theorem_1_with_hedge_learner_and_explicit_comparator():
    """R_f(T) ≤ (1−η/W)^N Δ₀ + 3ηβ_B B²WT + L_B W R + 2L_B B W √T for f = Σ w_g g, with the
    realized weak-learner regret R (Hedge over ±features: F symmetric)."""
    n, d, steps = 400, 3, 8
    x, y = _stream(n=n, d=d)
    booster = _reset(
        OGBSpan(n_learners=steps, weak_learner=HedgeFeatures(rate=0.2, symmetric=True)), n=n, d=d
    )
    loss, regret = _simplex_regret_parts(booster, x, y)
    eta, radius = booster.step(), booster.radius
    lip = radius + 1.0
    for r in range(len(SEEDS)):
        w = np.linalg.lstsq(x[r], y[r], rcond=None)[0]
        weight = max(1.0, np.abs(w).sum())
        comp = 0.5 * (x[r] @ w - y[r]) ** 2
        delta0 = (0.5 * y[r] ** 2 - comp).sum()
        bound = (
            (1 - eta / weight) ** steps * delta0
            + 3 * eta * radius**2 * weight * n
            + lip * weight * regret[r]
            + 2 * lip * radius * weight * math.sqrt(n)
        )
        assert loss[r] - comp.sum() <= bound


def test_bad_input_is_named():
    with pytest.raises(ConfigError, match="eta"):
        _reset(OGBSpan(n_learners=4, eta=0.1, weak_learner=LaneSGD()))
    with pytest.raises(ConfigError, match="scale"):
        run_game(
            OGBSpan(scale=0.5, weak_learner=LaneSGD()), LinearTargetStream(), n_actions=2, horizon=5
        )
    with pytest.raises(ConfigError, match="regression"):
        run_game(OGBSpan(weak_learner=LaneSGD()), ThresholdStream(), n_actions=2, horizon=5)
    with pytest.raises(GameError, match="label_bound"):
        run_game(
            OGBSpan(weak_learner=LaneSGD(), label_bound=0.1),
            LinearTargetStream(),
            n_actions=2,
            horizon=20,
        )


def test_projection_never_binds_when_the_radius_is_eta_n_d():
    """B = ηND (here η = 1/4, N = 4): by induction |y^i| ≤ iηD before projecting
    (Beygelzimer et al. 2015, proof of Theorem 1), so the projection is the identity."""
    x, y = _stream(noise=0.5)
    booster = _reset(OGBSpan(n_learners=4, eta=0.25, weak_learner=LaneSGD(rate=0.5)))
    assert booster.radius == 1.0
    for j in range(T):
        outputs, partial, sigma = (
            booster._weak_outputs(x[:, j]),
            booster.partial_sums(x[:, j]),
            booster.sigma,
        )
        raw = (1.0 - sigma * 0.25) * partial[:, :-1] + 0.25 * outputs
        np.testing.assert_array_equal(raw, partial[:, 1:])
        assert (np.abs(raw) <= 0.25 * np.arange(1, 5) + 1e-15).all()
        booster.update(x[:, j], y[:, j])
