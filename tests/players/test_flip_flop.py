"""Oracle tests of FlipFlop (``arena.players.flip_flop``): de Rooij et al. 2014; the FTL killer; van
Erven et al. 2011.

FlipFlop's regret constants are unconfirmed (unconfirmed), so it declares no bound; these
tests pin the algorithm (literal transcription, golden values) and the behaviour the paper
promises: AdaHedge-like O(√T) regret on the FTL killer, FTL-like bounded regret with a gap.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import GameSpec, play, run_game
from arena.errors import ConfigError
from arena.players.ada_hedge import AdaHedge
from arena.players.flip_flop import FlipFlop
from arena.players.ftl import FollowTheLeader
from tests.helpers import assert_below, metric_table
from tests.helpers.experts import (
    ENGINE_ATOL,
    ftl_killer_matrix,
    literal_mix,
    log_log_slope,
    loss_matrices,
    run_predict_update,
    three_ways,
    two_phase_matrix,
)

LITERAL_ATOL = 1e-10
"""As for AdaHedge: the literal code forms ``M − M_prev`` from O(t) numbers, the player the same
difference term by term; gaps differ by ~1e-16·t per round, far below 1e-10 in p. (A regime
switch decided differently by rounding would show up as an O(1) difference, not a small one.)"""

INVARIANCE_ATOL = 1e-10
"""Transformed losses change cumulative sums by rounding only (~1e-16·t); see test_ada_hedge."""


# ----------------------------------------------------------------------------------------------
# literal transcription (de Rooij et al. 2014 §3; structure and defaults as in the poold port,
# with the paper's multiplicative thresholds)


def literal_flipflop(losses: np.ndarray, phi: float = 2.37, alpha: float = 1.243):
    """Return p_t (T×K), the regime of each round (0 = FTL, 1 = AdaHedge) and the final gaps."""
    horizon, k = losses.shape
    cum = [0.0] * k
    gaps = [0.0, 0.0]
    scale = [phi / alpha, alpha]
    regime = 0
    probs, regimes = [], []
    for t in range(horizon):
        if regime == 0 or gaps[1] == 0:
            eta = math.inf
        else:
            eta = math.log(k) / gaps[1]
        w, m_prev = literal_mix(eta, cum)
        h = sum(w[i] * losses[t, i] for i in range(k))
        cum = [cum[i] + losses[t, i] for i in range(k)]
        _, m = literal_mix(eta, cum)
        gaps[regime] += max(0.0, h - (m - m_prev))
        probs.append(w)
        regimes.append(regime)
        if gaps[regime] > scale[regime] * gaps[1 - regime]:
            regime = 1 - regime
    return np.array(probs), regimes, gaps


@pytest.mark.parametrize("params", [{}, {"phi": 3.0, "alpha": 0.5}])
@pytest.mark.parametrize("n_act", [2, 5])
@pytest.mark.parametrize("kind", ["uniform", "binary", "ties", "killer", "two_phase"])
def test_matches_literal_transcription(kind, n_act, params, tmp_path):
    horizon = 200
    if kind == "killer":
        mats = ftl_killer_matrix(horizon, n_act)[None]
    elif kind == "two_phase":
        mats = two_phase_matrix(horizon, n_act)[None]
    else:
        mats = np.stack([loss_matrices(seed, horizon, n_act)[kind] for seed in (1, 2)])
    lit = [literal_flipflop(m, **params) for m in mats]
    want = np.stack([x[0] for x in lit])
    ways = three_ways(FlipFlop(**params), mats, tmp_path)
    for got in ways.values():
        np.testing.assert_allclose(got, want[:, : got.shape[1]], rtol=0, atol=LITERAL_ATOL)
        np.testing.assert_allclose(
            got, ways["predict_update"][:, : got.shape[1]], rtol=0, atol=ENGINE_ATOL
        )
    # the final gaps and the regime of the next round agree too
    p = FlipFlop(**params)
    p.reset(GameSpec("experts", n_act, horizon), [None])
    for t in range(horizon):
        p.update(mats[0, t][None])
    np.testing.assert_allclose(p.mixability_gaps()[0], lit[0][2], rtol=0, atol=1e-10)


def test_one_expert():
    p = run_predict_update(FlipFlop(), np.random.default_rng(0).random((2, 40, 1)))
    assert (p == 1.0).all()


def test_golden_ftl_killer_start():
    # Hand computation with φ/α = 1.9067 and α = 1.243 (FTL = regime 0):
    # t=1 FTL, p=(½,½), ℓ=(½,0): h=¼, min L 0→0, δ=¼ → Δftl=¼ > 1.9067·0: switch to AdaHedge.
    # t=2 AH with Δah=0 → η=∞, leader of L=(½,0) is expert 2: p=(0,1); ℓ=(0,1): h=1, min L 0→½,
    #     δ=½ → Δah=½ > 1.243·¼: switch to FTL.
    # t=3 FTL, L=(½,1): p=(1,0); ℓ=(1,0): h=1, min L ½→1, δ=½ → Δftl=¾ ≤ 1.9067·½: stay.
    # t=4 FTL, L=(3/2,1): p=(0,1); ℓ=(0,1): h=1, min L 1→3/2, δ=½ → Δftl=5/4 > 0.953: switch.
    # t=5 AH, η = ln 2/½, L=(3/2,2): p ∝ (1, e^{−2 ln 2·½}) = (1, ½) → (2/3, 1/3).
    want_p = [[0.5, 0.5], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [2 / 3, 1 / 3]]
    want_regime = [0, 1, 0, 0, 1]
    want_gaps = [[0, 0], [0.25, 0], [0.25, 0.5], [0.75, 0.5], [1.25, 0.5]]
    losses = ftl_killer_matrix(5)
    p = FlipFlop()
    p.reset(GameSpec("experts", 2, 5), [None])
    for t in range(5):
        np.testing.assert_allclose(p.predict()[0], want_p[t], rtol=0, atol=1e-15)
        assert p.regime()[0] == want_regime[t]
        np.testing.assert_allclose(p.mixability_gaps()[0], want_gaps[t], rtol=0, atol=1e-15)
        p.update(losses[None, t])


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"phi": 1.0}, "phi"),
        ({"phi": math.inf}, "phi"),
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": "1"}, "alpha"),
        ({"phi": True}, "phi"),
    ],
)
def test_invalid_parameters(params, name):
    with pytest.raises(ConfigError, match=name):
        play(FlipFlop(**params), "fair_coin", n_actions=2, horizon=5, metrics={"regret": {}})


# ----------------------------------------------------------------------------------------------
# gaps and regimes


@pytest.mark.parametrize("seed", range(4))
def test_gaps_grow_by_at_most_the_range_and_regimes_follow_the_rule(seed):
    # each round adds δ_t ∈ [0, max ℓ_t − min ℓ_t] to exactly one gap (de Rooij et al. 2014 applies
    # to each regime's Hedge step), and after the round the regime obeys the switching rule
    horizon, n_act = 300, 2 + 2 * seed
    sets = [*loss_matrices(50 + seed, horizon, n_act).values(), ftl_killer_matrix(300, n_act)]
    for losses in sets:
        p = FlipFlop()
        p.reset(GameSpec("experts", n_act, horizon), [None])
        prev = p.mixability_gaps()[0]
        for t in range(horizon):
            regime = p.regime()[0]
            p.update(losses[None, t])
            gaps = p.mixability_gaps()[0]
            step = gaps - prev
            assert step[1 - regime] == 0.0 and step[regime] >= 0.0
            assert_below(step[regime], np.ptp(losses[t]), "δ_t ≤ range")
            ftl_now = p.regime()[0] == 0
            if regime == 0:  # was FTL: switched iff Δftl > (φ/α)Δah
                assert ftl_now == (not gaps[0] > 2.37 / 1.243 * gaps[1])
            else:
                assert ftl_now == (gaps[1] > 1.243 * gaps[0])
            prev = gaps


# ----------------------------------------------------------------------------------------------
# behaviour (de Rooij et al. 2014 tests)


def test_order_sqrt_t_on_ftl_killer_like_adahedge():
    # de Rooij et al. 2014: on the FTL killer FlipFlop ≈ AdaHedge, O(√T): log-log slope over T =
    # 2^8..2^14 is
    # ≤ 0.55 (our scaling test for O-form bounds), and FlipFlop stays within a
    # constant factor of AdaHedge (the
    # paper's factor is ≈ 5.6 by the recollection; we ask ≤ 3, observed ≈ 2.4)
    checkpoints = [2**k for k in range(8, 15)]
    for n_act in (2, 5):
        kw = {"n_actions": n_act, "horizon": 2**14, "checkpoints": checkpoints}
        ts, ff = metric_table(
            play(FlipFlop(), "ftl_killer", **kw, metrics={"regret": {}}), "regret"
        )
        _, ah = metric_table(play(AdaHedge(), "ftl_killer", **kw, metrics={"regret": {}}), "regret")
        assert log_log_slope(ts, ff[0]) <= 0.55
        assert (ff[0] <= 3.0 * ah[0]).all()
        assert ff[0, -1] < 0.02 * 2**14 / 2  # FTL itself pays T/2


def test_bounded_regret_with_a_gap_like_ftl():
    # de Rooij et al. 2014: with a unique best mean FlipFlop ≈ FTL: its regret plateaus
    # (R(2^14) − R(2^10) within 4 sd/√20 + 1 over 20 runs) and stays within a constant factor of
    # FTL's on the same losses (the adversary's stream is common to players)
    kw = {
        "n_actions": 5,
        "horizon": 2**14,
        "replicates": 20,
        "checkpoints": [2**10],
        "metrics": {"regret": {}},
    }
    _, ff = metric_table(run_game(FlipFlop(), "bernoulli", **kw).rows, "regret")
    _, ftl = metric_table(run_game(FollowTheLeader(), "bernoulli", **kw).rows, "regret")
    diff = ff[:, -1] - ff[:, 0]
    assert abs(diff.mean()) <= 4 * diff.std(ddof=1) / math.sqrt(20) + 1.0
    assert ff[:, -1].mean() <= 3.0 * ftl[:, -1].mean() + 3.0


# ----------------------------------------------------------------------------------------------
# invariances (metamorphic tests: shift and scale for FlipFlop)


def test_per_round_shift_and_scale_invariance():
    rng = np.random.default_rng(21)
    for base in [rng.random((2, 300, 5)) / 2, rng.integers(0, 2, (2, 300, 5)) / 2]:
        p0 = run_predict_update(FlipFlop(), base)
        shifted = base + rng.random((2, 300, 1)) / 2
        np.testing.assert_allclose(
            run_predict_update(FlipFlop(), shifted), p0, rtol=0, atol=INVARIANCE_ATOL
        )
        np.testing.assert_allclose(
            run_predict_update(FlipFlop(), 0.3 * base), p0, rtol=0, atol=INVARIANCE_ATOL
        )


def test_permutation_equivariance():
    rng = np.random.default_rng(22)
    base = rng.integers(0, 3, (2, 300, 6)) / 2
    perm = rng.permutation(6)
    p0 = run_predict_update(FlipFlop(), base)
    p1 = run_predict_update(FlipFlop(), base[:, :, perm])
    np.testing.assert_allclose(p1, p0[:, :, perm], rtol=0, atol=INVARIANCE_ATOL)
