"""Online BBM (Luo 2016, Algorithm 7): potentials and weights, the per-round identity, and the
booster against a literal per-replicate, per-learner transcription of the pseudocode."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.stats import binom

from arena.adversaries.edge_oracle import EdgeOracle
from arena.boosting.components import WeakSpec
from arena.boosting.testing import LaneSGD, ThresholdStream
from arena.errors import ConfigError
from arena.game import run_game
from arena.players.online_bbm import OnlineBBM, bbm_potential, bbm_weight, bbm_weight_bound
from arena.spec import GameSpec
from arena.testing.common import rngs

GAMMAS = (0.01, 0.1, 0.3, 0.49)
CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "tournament"
RATE = 0.3  # the perceptron lanes' step in the transcription test


def exact_potential(i: int, s: int, n: int, gamma: float) -> Fraction:
    """``Φ_i(s) = Σ_{k ≤ (N−i−s)/2} C(m, k) p^k q^{m−k}`` in exact rational arithmetic."""
    m, p = n - i, (1 + Fraction(gamma)) / 2
    return sum(
        (math.comb(m, k) * p**k * (1 - p) ** (m - k) for k in range(m + 1) if 2 * k <= m - s),
        Fraction(0),
    )


def test_potentials_and_weights():
    """Luo 2016, eqs. (3.4)–(3.5): Φ_N = 1{s ≤ 0}; the recursion (1e-14: a few ulps of values
    ≤ 1); the closed form against exact rationals (1e-14); the weight is half the potential's
    difference, in [0, ½], zero exactly where the vote is decided."""
    for n in (1, 2, 7, 12):
        for gamma in GAMMAS:
            s = np.arange(-n - 3, n + 4)
            assert np.array_equal(bbm_potential(n, s, n, gamma), (s <= 0).astype(float))
            for i in range(1, n + 1):
                lhs = bbm_potential(i - 1, s, n, gamma)
                rhs = (1 - gamma) / 2 * bbm_potential(i, s - 1, n, gamma) + (
                    1 + gamma
                ) / 2 * bbm_potential(i, s + 1, n, gamma)
                np.testing.assert_allclose(lhs, rhs, atol=1e-14, rtol=0)
                w = bbm_weight(i, s, n, gamma)
                half_diff = 0.5 * (
                    bbm_potential(i, s - 1, n, gamma) - bbm_potential(i, s + 1, n, gamma)
                )
                np.testing.assert_allclose(w, half_diff, atol=1e-14, rtol=0)
                assert ((w >= 0) & (w <= 0.5)).all()
                decided = (s >= n - i + 2) | (s <= -(n - i + 1))
                assert np.array_equal(w == 0.0, decided)
            if n == 7 and gamma == 0.1:
                for i in range(n + 1):
                    for sv in range(-n - 1, n + 2):
                        exact = float(exact_potential(i, sv, n, gamma))
                        assert bbm_potential(i, sv, n, gamma) == pytest.approx(exact, abs=1e-14)


def test_per_round_identity():
    """Proof of Lemma 8 with equality: ``1{s^N ≤ 0} + Σ_i w^i (z^i − γ) = Φ_0(0)`` for any ±1
    pattern z (1e-12: N ≤ 30 terms of size ≤ ½)."""
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 8, 21, 30):
        gamma = float(rng.uniform(0.01, 0.49))
        z = rng.choice([-1.0, 1.0], size=(200, n))
        s_prev = np.cumsum(z, axis=1) - z
        w = bbm_weight(np.arange(1, n + 1), s_prev, n, gamma)
        lhs = (z.sum(axis=1) <= 0) + (w * (z - gamma)).sum(axis=1)
        np.testing.assert_allclose(lhs, bbm_potential(0, 0, n, gamma), atol=1e-12, rtol=0)


def test_hoeffding_and_weight_size():
    """Theorem 9: Φ_0(0) ≤ exp(−Nγ²/2), and ``N = ⌈(2/γ²) ln(1/ε)⌉`` reaches ε. Lemma 9: every
    weight is ≤ W_i = O(1/√(N−i)); numerically W_i ≤ 0.461/√(N−i) for N − i ≤ 2000 (our constant;
    no overflow at N = 2001: scipy's pmf agrees)."""
    for gamma in GAMMAS:
        for n in (1, 10, 101):
            assert bbm_potential(0, 0, n, gamma) <= math.exp(-n * gamma**2 / 2)
        for eps in (0.1, 0.01):
            n = math.ceil(2 / gamma**2 * math.log(1 / eps))
            assert bbm_potential(0, 0, n, gamma) <= eps
    for gamma in (0.01, 0.2, 0.49):
        n = 2001
        bound = bbm_weight_bound(n, gamma)
        m = n - np.arange(1, n + 1)
        assert (bound[:-1] <= 0.461 / np.sqrt(m[:-1])).all() and bound[-1] == 0.5
        ks = np.arange(0, n)
        pmf = 0.5 * binom.pmf(ks[None, :], m[::50, None], (1 + gamma) / 2)
        np.testing.assert_allclose(bound[::50], pmf.max(axis=1), rtol=1e-10)
        for i in (1, 500, 1999):
            s = np.arange(-i + 1, i, 2)  # s^{i−1} has the parity of i − 1
            assert (bbm_weight(i, s, n, gamma) <= bound[i - 1] * (1 + 1e-12)).all()


def literal_bbm(booster_rngs, x, y, n, gamma, mode):
    """Algorithm 7 line by line, one replicate and one learner at a time (exact binomials from
    ``math.comb``), each learner a one-lane :class:`LaneSGD` seeded as the protocol seeds lane i;
    sampling draws N uniforms per replicate and round from the booster's stream."""
    n_rep, horizon, d = x.shape
    p, q = (1 + gamma) / 2, (1 - gamma) / 2
    pmf = [[math.comb(m, k) * p**k * q ** (m - k) for k in range(m + 1)] for m in range(n)]
    w_max = [0.5 * max(pmf[n - i]) for i in range(1, n + 1)]
    preds = np.empty((n_rep, horizon))
    totals = {key: np.zeros((n_rep, n)) for key in ("weight", "edge", "calls")}
    for r in range(n_rep):
        rng = booster_rngs[r]
        seed = int(rng.integers(2**63))
        learners = []
        for i in range(n):
            lane = LaneSGD(rate=RATE)
            lane.reset(
                WeakSpec("classification", d, 1, 1, horizon), [[np.random.default_rng([seed, i])]]
            )
            learners.append(lane)
        for t in range(horizon):
            xt = x[r, t][None, :]
            h = [float(learners[i].predict(xt)[0, 0]) for i in range(n)]
            total = sum(h)
            preds[r, t] = 1.0 if total > 0 else (-1.0 if total < 0 else 0.0)
            u = rng.random(n) if mode == "sampling" else None
            s = 0
            for i in range(1, n + 1):
                k = (n - i - s + 1) // 2
                w = 0.5 * pmf[n - i][k] if 0 <= k <= n - i else 0.0
                share = w / w_max[i - 1]
                if mode == "sampling":
                    share = 1.0 if u[i - 1] < share else 0.0
                z = y[r, t] * h[i - 1]
                totals["weight"][r, i - 1] += w
                totals["edge"][r, i - 1] += w * z
                if share > 0:
                    totals["calls"][r, i - 1] += 1
                    learners[i - 1].update(xt, np.array([[y[r, t]]]), np.array([[share]]))
                s += int(z)
    return preds, totals


@pytest.mark.parametrize("mode", ["importance", "sampling"])
def test_equals_literal_transcription(mode):
    """Predictions and learner totals equal the transcription to 1e-10 (sums of ≤ 80 weights
    ≤ ½ computed by ``math.comb`` products versus log-space gammaln: ~1e-13 apart), with an even
    N (ties predict 0) on a noisy threshold stream with learning perceptron lanes."""
    n_rep, horizon, d, n, gamma = 2, 80, 3, 6, 0.15
    stream = ThresholdStream(noise=0.2)
    stream.reset(GameSpec("classification", d, horizon, dim=d), rngs(1, n_rep))
    data = stream.data_block(1, horizon)
    booster = OnlineBBM(n_learners=n, gamma=gamma, mode=mode, weak_learner=LaneSGD(rate=RATE))
    spec = GameSpec(
        "boosting", d, horizon, n_replicates=n_rep, dim=d, loss="hinge", task="classification"
    )
    booster.reset(spec, rngs(2, n_rep))
    got = booster.play_block(data.x, data.y)
    expected, totals = literal_bbm(rngs(2, n_rep), data.x, data.y, n, gamma, mode)
    np.testing.assert_allclose(got, expected, atol=1e-10, rtol=0)
    assert (got == 0).any() and (got != 0).any()  # ties happened and were predicted 0
    for key, value in booster.learner_totals().items():
        np.testing.assert_allclose(value, totals[key], atol=1e-10, rtol=0, err_msg=key)
    if mode == "sampling":
        assert (totals["calls"] < horizon).any()


@pytest.mark.parametrize("n", [8, 9])
def test_identity_round_by_round_on_random_weak_outputs(n):
    """The identity on a run, round by round: ``1{y_t·ŷ_t ≤ 0} + Σ_i Δ(w z − γ w)_t = Φ_0(0)``
    from the increments of :meth:`learner_totals`, and summed, ``mistakes = T·Φ_0(0) − Σ_i (w^i·z^i
    − γ‖w^i‖₁)``, on an edge-0 stream (each oracle lane a fair ±1 coin; even N = 8 has ties,
    predicted 0 and counted as mistakes). Tolerance 1e-12 per round (N terms ≤ ½), 1e-9 summed
    (200 rounds × 9 weights ≤ ½ summed in two orders)."""
    gamma, horizon, n_rep = 0.2, 200, 3
    booster = OnlineBBM(n_learners=n, gamma=gamma, mode="sampling")
    adversary = EdgeOracle(edge=0.0)
    spec = GameSpec(
        "boosting", n, horizon, n_replicates=n_rep, dim=n, loss="hinge", task="classification"
    )
    adversary.reset(spec, rngs(3, n_rep))
    booster.reset(spec, rngs(4, n_rep))
    data = adversary.data_block(1, horizon)
    phi0 = float(bbm_potential(0, 0, n, gamma))
    before = np.zeros(n_rep)
    pred = np.empty((n_rep, horizon))
    for t in range(horizon):
        pred[:, t] = booster.play_block(data.x[:, t : t + 1], data.y[:, t : t + 1])[:, 0]
        totals = booster.learner_totals()
        slack = (totals["edge"] - gamma * totals["weight"]).sum(axis=1)
        mistake = (data.y[:, t] * pred[:, t] <= 0).astype(float)
        np.testing.assert_allclose(mistake + (slack - before), phi0, atol=1e-12)
        before = slack
    if n % 2 == 0:
        assert (pred == 0).any()
    mistakes = (data.y * pred <= 0).sum(axis=1)
    np.testing.assert_allclose(mistakes, horizon * phi0 - before, atol=1e-9)


def test_bad_parameters_are_named():
    for params, name in (
        ({"gamma": 0.5}, "gamma"),
        ({"mode": "boost"}, "mode"),
        ({"n_learners": 0}, "n_learners"),
    ):
        with pytest.raises(ConfigError, match=name):
            run_game(OnlineBBM(**params), ThresholdStream(), n_actions=2, horizon=5)
    with pytest.raises(ConfigError, match="weak_learner"):
        run_game(
            OnlineBBM(weak_learner="no_such_learner"), ThresholdStream(), n_actions=2, horizon=5
        )


def test_scaling_tournament_config_plays():
    """``configs/tournament/boosting_scaling.yaml`` (Table 3.1's number of learners): odd N only
    (no ties), every N ≤ d so that the lanes read distinct bits, and a cell plays (shortened)."""
    config = yaml.safe_load((CONFIGS / "boosting_scaling.yaml").read_text(encoding="utf-8"))
    (d,) = config["n_actions"]
    sizes = [p["params"]["n_learners"] for p in config["players"]]
    assert all(n % 2 == 1 and n <= d for n in sizes) and len(set(sizes)) == len(sizes)
    player, adversary = config["players"][-1], config["adversaries"][-1]
    rows = run_game(
        player["name"],
        adversary["name"],
        player_params=player["params"],
        adversary_params=adversary["params"],
        n_actions=d,
        horizon=50,
        metrics=list(config["metrics"]),
    ).rows
    assert {"mistakes", "weighted_edge"} <= set(rows.metric)


def test_potential_mode_feeds_vowpal_wabbits_weights():
    """``mode="potential"`` feeds ``2w^i = C(N−i, k)(½ + g)^k(½ − g)^{N−i−k}`` with VW's
    ``--gamma g = γ/2`` and ``k = ⌊(N − i − s + 1)/2⌋`` (VW 9.11.9, ``boosting.cc``,
    ``predict_or_learn``: ``k = floorf((N − i₀ − s)/2)`` with 0-based ``i₀ = i − 1``), for real
    margins s too (VW's learners answer reals). Exact up to 1e-15 (float64 products)."""
    from arena.players.online_bbm import bbm_share_table

    n, gamma = 7, 0.2
    _, fed = bbm_share_table(n, gamma, "potential")
    g = gamma / 2
    for i0 in range(n):
        for s in (-2.5, -1.0, 0.0, 0.3, 1.7, 3.0):
            k = math.floor((n - i0 - s) / 2)
            m = n - (i0 + 1)
            vw = math.comb(m, k) * (0.5 + g) ** k * (0.5 - g) ** (m - k) if 0 <= k <= m else 0.0
            ours = fed[i0, k] if 0 <= k <= m else 0.0
            assert abs(ours - vw) <= 1e-15


def test_potential_mode_equals_importance_mode_for_adagrad_lanes():
    """AdaGrad's steps do not change when all of a lane's weights are scaled by one constant,
    so feeding ``2w`` instead of ``w/W_i`` (a factor ``2W_i`` per learner) leaves the predictions
    of ``linear`` lanes as they were (rounding aside: 300 rounds, no tie flips)."""
    rows = [
        run_game(
            OnlineBBM(n_learners=7, gamma=0.2, mode=mode, weak_learner="linear"),
            ThresholdStream(),
            n_actions=3,
            horizon=300,
            replicates=2,
            metrics=["mistakes"],
        ).rows.value.tolist()
        for mode in ("importance", "potential")
    ]
    assert rows[0] == rows[1]
    assert max(rows[0]) > 0
