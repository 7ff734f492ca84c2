"""Oracle tests of BOA (``arena.players.boa``): Gaillard et al. 2014; Wintenberger 2017 (opera's
``R/BOA.R`` form).

BOA declares no numeric bound (its guarantees are O-forms), so the tests pin the update against a
literal transcription of opera's loop, golden first rounds (including opera's rule for experts
with ``E_k = 0``), the invariances it has, and the scaling of its regret.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import GameSpec, play
from arena.errors import ConfigError
from arena.players.boa import BOA
from tests.helpers.experts import (
    ENGINE_ATOL,
    gap_growth,
    loss_matrices,
    run_predict_update,
    three_ways,
    worst_regret_slope,
)

LITERAL_ATOL = 1e-10
"""Same formulas, plain Python against compiled rows with a different summation order: ~1e-15
per round, amplified at most by the scale-free rates 1/√E_k; 1e-10 leaves a wide margin."""

INVARIANCE_ATOL = 1e-10
"""Transformed losses change r = ℓ̂ − ℓ by rounding only (~1e-16 relative per round)."""


# ----------------------------------------------------------------------------------------------
# literal transcription of opera's BOA loop (awake ≡ 1, loss.gradient = FALSE, w0 = π)


def literal_boa(losses: np.ndarray, pi=None) -> np.ndarray:
    """``Dralliag/opera:R/BOA.R`` in plain Python, with the player's documented convention
    ℓ̂ = min ℓ + p·(ℓ − min ℓ) (exactly ``p·ℓ`` in real arithmetic; a round where all experts lose
    the same then gives r = 0 exactly, so opera's rule for E_k = 0 keeps applying). On these
    matrices opera's plain ``p·ℓ`` gives the same p to 5e-16."""
    horizon, k = losses.shape
    w0 = [1.0 / k] * k if pi is None else [v / sum(pi) for v in pi]
    var = [0.0] * k  # opera's eta_inv2
    reg = [0.0] * k  # opera's R.reg
    out = []
    for t in range(horizon):
        nonzero = [i for i in range(k) if var[i] > 0]
        w = list(w0)
        if nonzero:
            aux = {
                i: -math.log(var[i]) / 2 + math.log(w0[i]) + reg[i] / math.sqrt(var[i])
                for i in nonzero
            }
            top = max(aux.values())
            z = sum(math.exp(v - top) for v in aux.values())
            mass = sum(w0[i] for i in nonzero)
            for i in nonzero:
                w[i] = mass * math.exp(aux[i] - top) / z
        p = [v / sum(w) for v in w]
        row = losses[t]
        low = min(row)
        h = low + sum(p[i] * (row[i] - low) for i in range(k))
        for i in range(k):
            r = h - row[i]
            var[i] += 2.2 * r * r
            if var[i] > 0:
                reg[i] += r - r * r / math.sqrt(var[i])
        out.append(p)
    return np.array(out)


@pytest.mark.parametrize("n_act", [2, 5, 12])
@pytest.mark.parametrize("kind", ["uniform", "binary", "ties"])
def test_matches_literal_transcription(kind, n_act, tmp_path):
    horizon = 200
    mats = np.stack([loss_matrices(seed, horizon, n_act)[kind] for seed in (1, 2)])
    pi = [1.0 + (i % 3) for i in range(n_act)] if kind == "ties" else None
    want = np.stack([literal_boa(m, pi) for m in mats])
    ways = three_ways(BOA(pi=pi), mats, tmp_path)
    for got in ways.values():
        np.testing.assert_allclose(got, want[:, : got.shape[1]], rtol=0, atol=LITERAL_ATOL)
        np.testing.assert_allclose(
            got, ways["predict_update"][:, : got.shape[1]], rtol=0, atol=ENGINE_ATOL
        )


def test_one_expert():
    p = run_predict_update(BOA(), np.random.default_rng(0).random((2, 40, 1)))
    assert (p == 1.0).all()


def test_golden_first_rounds():
    # p_1 = π (every E_k = 0). N = 2, uniform π, ℓ_1 = (0, 1): r = (½, −½), E = (0.55, 0.55),
    # R̃ = r − r²/√0.55, so the weights' log ratio is (R̃_1 − R̃_2)/√0.55 = 1/√0.55 and
    # p_2 = (σ(1/√0.55), 1 − σ(1/√0.55)) = (0.79386788, 0.20613212).
    sig = 1.0 / (1.0 + math.exp(-1.0 / math.sqrt(0.55)))
    p = BOA()
    p.reset(GameSpec("experts", 2, 3), [None])
    np.testing.assert_array_equal(p.predict(), [[0.5, 0.5]])
    p.update(np.array([[0.0, 1.0]]))
    np.testing.assert_allclose(p.predict()[0], [sig, 1 - sig], rtol=0, atol=1e-15)
    # opera's rule for E_k = 0: π = (¼, ¼, ½), ℓ_1 = (0, 1, ½) gives ℓ̂ = ½ exactly, so
    # r = (½, −½, 0): expert 3 keeps π_3 = ½ and experts 1, 2 share their mass ½ as above
    p = BOA(pi=[1.0, 1.0, 2.0])
    p.reset(GameSpec("experts", 3, 3), [None])
    np.testing.assert_array_equal(p.predict(), [[0.25, 0.25, 0.5]])
    p.update(np.array([[0.0, 1.0, 0.5]]))
    np.testing.assert_allclose(p.predict()[0], [sig / 2, (1 - sig) / 2, 0.5], rtol=0, atol=1e-15)


@pytest.mark.parametrize("pi", [[1.0, 2.0], [1.0, -1.0, 2.0], [1.0, math.inf, 1.0]])
def test_invalid_prior(pi):
    with pytest.raises(ConfigError, match="pi"):
        play(BOA(pi=pi), "fair_coin", n_actions=3, horizon=5, metrics={"regret": {}})


# ----------------------------------------------------------------------------------------------
# invariances (metamorphic tests) and reductions


def test_per_round_shift_invariance():
    rng = np.random.default_rng(51)
    base = rng.random((2, 300, 5)) / 2
    p0 = run_predict_update(BOA(), base)
    p1 = run_predict_update(BOA(), base + rng.random((2, 300, 1)) / 2)
    np.testing.assert_allclose(p1, p0, rtol=0, atol=INVARIANCE_ATOL)


def test_scale_invariance_once_every_rate_is_set():
    # η_k R̃_k is scale-free and E_k^{−1/2} scales every expert alike, so with every E_k > 0
    # (continuous losses: from round 2 on) rescaling the losses leaves p unchanged
    rng = np.random.default_rng(52)
    base = rng.random((2, 300, 5))
    p0 = run_predict_update(BOA(), base)
    np.testing.assert_allclose(
        run_predict_update(BOA(), 0.25 * base), p0, rtol=0, atol=INVARIANCE_ATOL
    )


def test_permutation_equivariance_with_the_prior():
    rng = np.random.default_rng(53)
    base = rng.integers(0, 3, (2, 300, 6)) / 2
    pi = rng.random(6) + 0.1
    perm = rng.permutation(6)
    p0 = run_predict_update(BOA(pi=pi.tolist()), base)
    p1 = run_predict_update(BOA(pi=pi[perm].tolist()), base[:, :, perm])
    np.testing.assert_allclose(p1, p0[:, :, perm], rtol=0, atol=INVARIANCE_ATOL)


def test_copies_of_an_expert_act_as_one_with_the_summed_prior():
    # An expert's weight depends on its own (E, R̃) and prior only, and the
    # E = 0 rule splits masses additively, so three copies with π/3 each act as one with π
    rng = np.random.default_rng(54)
    base = rng.random((2, 300, 4))
    copies = np.concatenate([base, base[:, :, :1], base[:, :, :1]], axis=2)
    pi = np.array([0.3, 0.2, 0.1, 0.4])
    split = np.concatenate([[0.1], pi[1:], [0.1, 0.1]])
    p0 = run_predict_update(BOA(pi=pi.tolist()), base)
    p1 = run_predict_update(BOA(pi=split.tolist()), copies)
    merged = np.concatenate([p1[:, :, [0, 4, 5]].sum(axis=2, keepdims=True), p1[:, :, 1:4]], 2)
    np.testing.assert_allclose(merged, p0, rtol=0, atol=INVARIANCE_ATOL)


# ----------------------------------------------------------------------------------------------
# behaviour


def test_worst_regret_grows_like_sqrt_t(tmp_path):
    # our recipe for O-form bounds: slope of ln(worst R_T) on
    # ln T ≤ 0.55
    slope, worst = worst_regret_slope(BOA(), tmp_path)
    assert slope <= 0.55, (slope, worst)


def test_stochastic_gap_regret_plateaus():
    # Wintenberger 2017 (second-order bounds give O(1) regret with a gap): pseudo-regret
    # growth 2^10 → 2^14 within 4 sd/√20 + 0.5
    growth = gap_growth(BOA())
    assert abs(growth.mean()) <= 4 * growth.std(ddof=1) / math.sqrt(growth.size) + 0.5
