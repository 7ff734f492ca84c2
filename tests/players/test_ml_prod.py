"""Oracle tests of ML-Prod (``arena.players.ml_prod``): Gaillard, Stoltz & van Erven 2014 (the
paper's update, not opera's).

The player follows the paper's update (not opera's, Gaillard et al. 2014; Wintenberger 2017); the
literal transcription below is
the paper's algorithm with plain weights. The declared per-expert bound is derived in the
player's docstring; its ingredients (the weight-sum potential ``W_t ≤ B_t``) are checked round by
round, and the bound itself on the adversary catalog.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import GameSpec
from arena.players.ml_prod import MLProd
from tests.helpers import assert_below, metric_table
from tests.helpers.experts import (
    ENGINE_ATOL,
    ftl_killer_matrix,
    gap_growth,
    loss_matrices,
    play_games,
    run_predict_update,
    three_ways,
    two_phase_matrix,
    worst_regret_slope,
)

LITERAL_ATOL = 1e-10
"""The transcription multiplies plain weights (w·(1 + ηr))^{η'/η}, the player adds logarithms;
both are exact to ~1e-15 relative per round, so p agrees to ~1e-13 after 200 rounds."""

INVARIANCE_ATOL = 1e-10
"""Shifted or permuted losses change r = ℓ̂ − ℓ by rounding only (~1e-16 per round)."""


# ----------------------------------------------------------------------------------------------
# literal transcription (Gaillard, Stoltz & van Erven 2014, ML-Prod; Gaillard et al. 2014;
# Wintenberger 2017)


def literal_ml_prod(losses: np.ndarray, adaptive: bool = False):
    """ML-Prod with plain weights. Returns p_t (T×K), the losses played (T×K), and per round the
    weight sum W_t and B_t = 1 + (1/e) Σ_k Σ_{s≤t} (η_{k,s−1}/η_{k,s} − 1).

    ``adaptive``: ignore ``losses`` and let a greedy adversary put loss 1 on the heaviest experts
    of p_t (greedy adversary, ties all hit).
    """
    horizon, k = losses.shape
    w = [1.0 / k] * k
    eta = [min(0.5, math.sqrt(math.log(k)))] * k
    sq = [0.0] * k
    excess = 0.0
    probs, played, sums, bees = [], [], [], []
    for t in range(horizon):
        z = [eta[i] * w[i] for i in range(k)]
        p = [v / sum(z) for v in z]
        if adaptive:
            top = max(p)
            row = [1.0 if v >= top - 1e-12 else 0.0 for v in p]
        else:
            row = list(losses[t])
        h = sum(p[i] * row[i] for i in range(k))
        for i in range(k):
            r = h - row[i]
            sq[i] += r * r
            new = min(0.5, math.sqrt(math.log(k) / (1.0 + sq[i])))
            w[i] = (w[i] * (1.0 + eta[i] * r)) ** (new / eta[i])
            excess += eta[i] / new - 1.0
            eta[i] = new
        probs.append(p)
        played.append(row)
        sums.append(sum(w))
        bees.append(1.0 + excess / math.e)
    return np.array(probs), np.array(played), np.array(sums), np.array(bees)


@pytest.mark.parametrize("n_act", [2, 5, 12])
@pytest.mark.parametrize("kind", ["uniform", "binary", "ties"])
def test_matches_literal_transcription(kind, n_act, tmp_path):
    horizon = 200
    mats = np.stack([loss_matrices(seed, horizon, n_act)[kind] for seed in (1, 2)])
    want = np.stack([literal_ml_prod(m)[0] for m in mats])
    ways = three_ways(MLProd(), mats, tmp_path)
    for got in ways.values():
        np.testing.assert_allclose(got, want[:, : got.shape[1]], rtol=0, atol=LITERAL_ATOL)
        np.testing.assert_allclose(
            got, ways["predict_update"][:, : got.shape[1]], rtol=0, atol=ENGINE_ATOL
        )


def test_one_expert():
    p = run_predict_update(MLProd(), np.random.default_rng(0).random((2, 40, 1)))
    assert (p == 1.0).all()


def test_golden_first_rounds():
    # N = 2, ℓ = (0, 1) twice. η_{k,0} = min(½, √ln 2) = ½ and stays ½ while ln 2/(1 + Σr²) ≥ ¼.
    # t=1: p = (½, ½), r = (½, −½), w = ½(1 ± ¼) = (0.625, 0.375) (exponent η'/η = 1): p_2 = w.
    # t=2: h = 0.375, r = (0.375, −0.625), w = (0.625·1.1875, 0.375·0.6875) = (0.7421875,
    # 0.2578125), still summing to 1 (with equal rates Σ_k w_k r_k ∝ Σ_k p_k r_k = 0).
    p = MLProd()
    p.reset(GameSpec("experts", 2, 3), [None])
    want = [[0.5, 0.5], [0.625, 0.375], [0.7421875, 0.2578125]]
    for t in range(3):
        np.testing.assert_allclose(p.predict()[0], want[t], rtol=0, atol=1e-15)
        np.testing.assert_array_equal(p.learning_rates(), [[0.5, 0.5]])
        p.update(np.array([[0.0, 1.0]]))


# ----------------------------------------------------------------------------------------------
# the weight-sum potential and the declared bound


@pytest.mark.parametrize("n_act", [2, 5, 20])
def test_weight_sum_potential(n_act):
    # Proof step (ii) of the player's bound: W_t ≤ W_{t−1} + (1/e) Σ_k (η_{k,t−1}/η_{k,t} − 1),
    # hence W_t ≤ B_t, round by round, on random, killer, two-phase and greedy-adaptive losses
    horizon = 400
    cases = [*loss_matrices(9, horizon, n_act).values()]
    cases += [ftl_killer_matrix(horizon, n_act), two_phase_matrix(horizon, n_act)]
    runs = [literal_ml_prod(m) for m in cases]
    runs.append(literal_ml_prod(np.zeros((horizon, n_act)), adaptive=True))
    for _, _, sums, bees in runs:
        assert_below(sums, bees, "W_t ≤ B_t")
        steps = np.diff(np.concatenate([[1.0], sums]))
        assert_below(steps, np.diff(np.concatenate([[1.0], bees])), "per-round step")


def test_declared_bounds_on_every_adversary(tmp_path):
    # bound:regret and bound:quantile_regret (ε = 0.1, 0.25) dominate the engine's metrics at
    # every checkpoint, on the adversary families of this suite at N ∈ {2, 10, 50}, T ∈ {200, 2000}
    metrics = {"regret": {}, "quantile_regret": {"eps": [0.1, 0.25]}, "bound": {}}
    sizes = [(2, 200), (10, 200), (50, 200), (2, 2000), (10, 2000), (50, 2000)]
    for label, rows in play_games(MLProd, tmp_path, sizes, metrics):
        _, regret = metric_table(rows, "regret")
        _, bound = metric_table(rows, "bound:regret")
        assert_below(regret, bound, f"{label}: regret")
        for eps in (0.1, 0.25):
            _, q = metric_table(rows, "quantile_regret", eps)
            _, qb = metric_table(rows, "bound:quantile_regret", eps)
            assert_below(q, qb, f"{label}: quantile ε={eps}")


def test_per_expert_bound_dominates_each_expert():
    # the per-expert form: R_{t,k} ≤ bound_k for every k (not only the maximum), every round
    rng = np.random.default_rng(41)
    losses = rng.random((300, 6))
    p = MLProd()
    p.reset(GameSpec("experts", 6, 300), [None])
    regret = np.zeros(6)
    for t in range(300):
        q = p.predict()[0]
        p.update(losses[None, t])
        regret += q @ losses[t] - losses[t]
        assert_below(regret, p.expert_bounds()[0], f"round {t + 1}")


# ----------------------------------------------------------------------------------------------
# invariances and behaviour


def test_per_round_shift_invariance():
    rng = np.random.default_rng(42)
    base = rng.random((2, 300, 5)) / 2
    p0 = run_predict_update(MLProd(), base)
    p1 = run_predict_update(MLProd(), base + rng.random((2, 300, 1)) / 2)
    np.testing.assert_allclose(p1, p0, rtol=0, atol=INVARIANCE_ATOL)


def test_permutation_equivariance():
    rng = np.random.default_rng(43)
    base = rng.integers(0, 3, (2, 300, 6)) / 2
    perm = rng.permutation(6)
    p0 = run_predict_update(MLProd(), base)
    p1 = run_predict_update(MLProd(), base[:, :, perm])
    np.testing.assert_allclose(p1, p0[:, :, perm], rtol=0, atol=INVARIANCE_ATOL)


def test_worst_regret_grows_like_sqrt_t(tmp_path):
    # the paper's bound is an O-form, so we test the scaling: slope of ln(worst R_T) on ln T ≤ 0.55
    slope, worst = worst_regret_slope(MLProd(), tmp_path)
    assert slope <= 0.55, (slope, worst)


def test_stochastic_gap_regret_plateaus():
    # Gaillard et al. 2014 (second-order bound): pseudo-regret growth 2^10 → 2^14 within 4 sd/√20 +
    # 0.5
    growth = gap_growth(MLProd())
    assert abs(growth.mean()) <= 4 * growth.std(ddof=1) / math.sqrt(growth.size) + 0.5
