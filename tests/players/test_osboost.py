"""OSBoost and OSBoost.OCP (Chen, Lin & Lu 2012): the boosters against a literal per-replicate,
per-learner transcription of the pseudocode, the smoothness of the weights, and OSBoost.OCP's
online-convex-programming guarantee on the catalog's classification streams."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.adversaries.edge_oracle import EdgeOracle
from arena.adversaries.separable_stream import SeparableStream
from arena.boosting.components import WeakSpec
from arena.boosting.testing import LaneSGD, ThresholdStream
from arena.errors import ConfigError
from arena.game import run_game
from arena.players.osboost import OSBoost, OSBoostOCP, ocp_regret_bound, smooth_weights
from arena.spec import GameSpec
from arena.testing.common import rngs

RATE = 0.3  # the perceptron lanes' step in the transcription test


def literal_simplex_projection(v: list[float]) -> list[float]:
    """Duchi, Shalev-Shwartz, Singer & Chandra 2008, Figure 1: sort descending, the largest ρ
    with ``μ_ρ − (Σ_{j≤ρ} μ_j − 1)/ρ > 0``, shift by ``θ = (Σ_{j≤ρ} μ_j − 1)/ρ`` and clip at 0."""
    mu = sorted(v, reverse=True)
    rho, cum, cum_rho = 0, 0.0, 0.0
    for j, m in enumerate(mu, start=1):
        cum += m
        if m - (cum - 1.0) / j > 0:
            rho, cum_rho = j, cum
    shift = (cum_rho - 1.0) / rho
    return [max(vi - shift, 0.0) for vi in v]


def literal_osboost(booster_rngs, x, y, n, gamma, ocp):
    """Chen, Lin & Lu's algorithm line by line, one replicate and one learner at a time, each
    learner a one-lane :class:`LaneSGD` seeded as the protocol seeds lane i."""
    n_rep, horizon, d = x.shape
    theta = gamma / (2 + gamma)
    preds = np.empty((n_rep, horizon))
    totals = {key: np.zeros((n_rep, n)) for key in ("weight", "edge", "calls")}
    hinge, uniform_hinge = np.zeros(n_rep), np.zeros(n_rep)
    alphas = np.empty((n_rep, n))
    for r in range(n_rep):
        seed = int(booster_rngs[r].integers(2**63))
        learners = []
        for i in range(n):
            lane = LaneSGD(rate=RATE)
            lane.reset(
                WeakSpec("classification", d, 1, 1, horizon), [[np.random.default_rng([seed, i])]]
            )
            learners.append(lane)
        alpha = [1.0 / n] * n
        for t in range(1, horizon + 1):
            xt = x[r, t - 1][None, :]
            label = float(y[r, t - 1])
            h = [float(learners[i].predict(xt)[0, 0]) for i in range(n)]
            vote = sum(alpha[i] * h[i] for i in range(n)) if ocp else sum(h)
            preds[r, t - 1] = 1.0 if vote > 0 else (-1.0 if vote < 0 else 0.0)
            if ocp:
                margin = label * vote
                hinge[r] += max(0.0, theta - margin)
                uniform_hinge[r] += max(0.0, theta - label * sum(h) / n)
                if margin < theta:
                    eta = 1.0 / math.sqrt(n * t)
                    alpha = literal_simplex_projection(
                        [alpha[i] + eta * label * h[i] for i in range(n)]
                    )
            z = 0.0
            for i in range(n):
                w = min(1.0, (1.0 - gamma) ** (z / 2.0))
                totals["weight"][r, i] += w
                totals["edge"][r, i] += w * label * h[i]
                totals["calls"][r, i] += 1.0 if w > 0 else 0.0
                learners[i].update(xt, np.array([[label]]), np.array([[w]]))
                z = z + label * h[i] - theta
        alphas[r] = alpha
    return preds, totals, alphas, hinge, uniform_hinge


@pytest.mark.parametrize("booster_class", [OSBoost, OSBoostOCP])
def test_equals_literal_transcription(booster_class):
    """Predictions, learner totals and (OCP) the vote weights and hinge sums equal the
    transcription to 1e-10 (powers of 1 − γ by ``np.power`` versus ``**``, projections by a
    numba kernel versus Figure 1: a few ulps), with an even N on a noisy threshold stream
    with learning perceptron lanes, where ties happen (predicted 0)."""
    n_rep, horizon, d, n, gamma = 2, 60, 3, 6, 0.15
    ocp = booster_class is OSBoostOCP
    stream = ThresholdStream(noise=0.2)
    stream.reset(GameSpec("classification", d, horizon, dim=d), rngs(1, n_rep))
    data = stream.data_block(1, horizon)
    booster = booster_class(n_learners=n, gamma=gamma, weak_learner=LaneSGD(rate=RATE))
    spec = GameSpec(
        "boosting", d, horizon, n_replicates=n_rep, dim=d, loss="hinge", task="classification"
    )
    booster.reset(spec, rngs(2, n_rep))
    got = booster.play_block(data.x, data.y)
    expected, totals, alphas, hinge, uniform_hinge = literal_osboost(
        rngs(2, n_rep), data.x, data.y, n, gamma, ocp
    )
    np.testing.assert_allclose(got, expected, atol=1e-10, rtol=0)
    assert (got != 0).any()
    for key, value in booster.learner_totals().items():
        np.testing.assert_allclose(value, totals[key], atol=1e-10, rtol=0, err_msg=key)
    # the weights were smooth and not all 1: some examples were down-weighted
    assert (totals["weight"] < horizon).any() and (totals["weight"] > 0).all()
    if ocp:
        np.testing.assert_allclose(booster.vote_weights(), alphas, atol=1e-10, rtol=0)
        assert not np.allclose(alphas, 1.0 / n)  # the OCP layer moved α
        got_totals = booster.ocp_totals()
        np.testing.assert_allclose(got_totals["hinge"], hinge, atol=1e-10, rtol=0)
        np.testing.assert_allclose(got_totals["uniform_hinge"], uniform_hinge, atol=1e-10, rtol=0)


def test_smooth_weights_are_smooth():
    """Every weight is in (0, 1], 1 exactly while the running margin ``z^{i−1} ≤ 0``, and
    ``(1 − γ)^{z/2}`` above it (random real margins, γ across its range)."""
    rng = np.random.default_rng(0)
    for gamma in (0.01, 0.2, 0.49):
        theta = gamma / (2 + gamma)
        z = rng.uniform(-1.0, 1.0, size=(50, 12)) - theta
        w = smooth_weights(z, gamma)
        running = np.cumsum(z, axis=1) - z
        assert ((w > 0) & (w <= 1)).all()
        assert np.array_equal(w == 1.0, running <= 0)
        pos = running > 0
        np.testing.assert_allclose(w[pos], (1 - gamma) ** (running[pos] / 2), rtol=1e-14)


@pytest.mark.parametrize(
    "adversary, d, weak",
    [
        (EdgeOracle(edge=0.1), 8, "oracle"),
        (SeparableStream(margin=0.1, noise=0.1), 5, "linear"),
    ],
    ids=["edge_oracle", "separable_stream"],
)
def test_ocp_guarantee_on_catalog_streams(adversary, d, weak):
    """Zinkevich's bound on the OCP layer: ``Σ f_t(α_t) − Σ f_t(1/N) ≤ √(NT) + √N(√T − ½)``,
    and the mistakes it implies, ``mistakes ≤ (Σ f_t(1/N) + R(T))/θ``, on an edge oracle (fixed
    learners) and a noisy separable stream (learning AdaGrad lanes), at every checkpoint of a
    run cut into chunks."""
    n, gamma, n_rep = 8, 0.2, 3
    booster = OSBoostOCP(n_learners=n, gamma=gamma, weak_learner=weak)
    theta = gamma / (2 + gamma)
    spec = GameSpec(
        "boosting", d, 300, n_replicates=n_rep, dim=d, loss="hinge", task="classification"
    )
    adversary.reset(spec, rngs(5, n_rep))
    booster.reset(spec, rngs(6, n_rep))
    mistakes = np.zeros(n_rep)
    t0 = 1
    for chunk in (50, 100, 150):
        data = adversary.data_block(t0, chunk)
        pred = booster.play_block(data.x, data.y)
        mistakes += (data.y * pred <= 0).sum(axis=1)
        t0 += chunk
        tot = booster.ocp_totals()
        regret_bound = ocp_regret_bound(n, t0 - 1)
        assert (tot["hinge"] - tot["uniform_hinge"] <= regret_bound).all()
        assert (mistakes <= (tot["uniform_hinge"] + regret_bound) / theta).all()
        assert (mistakes * theta <= tot["hinge"] + 1e-12).all()  # a mistake costs ≥ θ
    assert (mistakes > 0).all() and (tot["hinge"] > 0).all()


def test_bad_parameters_are_named():
    for cls in (OSBoost, OSBoostOCP):
        for params, name in (({"gamma": 0.5}, "gamma"), ({"n_learners": 0}, "n_learners")):
            with pytest.raises(ConfigError, match=name):
                run_game(cls(**params), ThresholdStream(), n_actions=2, horizon=5)
