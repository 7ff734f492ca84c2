"""Oracle tests of NormalHedge (``arena.players.normal_hedge``), Luo 2016, Algorithm 5;
implementation note; Luo 2016

Every constant is copied from its source with a citation (no external file is read here).
NormalHedge declares no bound (the sources give only an O-form), so there is no bound test.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq

from arena import GameSpec, run_game
from arena.adversaries.replay import Replay
from arena.experts.components import ExpertsPlayer
from arena.experts.reference import reference_play
from arena.players.normal_hedge import NormalHedge, normal_hedge_probs, normal_hedge_scale
from tests.helpers import save_matrix, traced
from tests.helpers.experts import loss_matrices, play_blocks, play_loop, regrets_from_trace

P_ATOL = 1e-12
"""Kernel and predict/update share the compiled weights; only the learner-loss sums differ in
order (~1e-16), so 1e-12 catches any formula error."""

LITERAL_ATOL = 1e-10
"""The transcription finds c with scipy's brentq (relative precision ~1e-15) instead of the
player's log-bisection; p moves by at most (1 + ln N)·δc/c ≈ 1e-14, far inside 1e-10."""

SNAP = 1e-12
"""Luo 2016, Algorithm 5: regrets with |R| < 1e-12·t count as 0 (the rounding hazard)."""


# ----------------------------------------------------------------------------------------------
# helpers


def literal_scale(x: list[float]) -> float:
    """c > 0 with ``Σ_i exp(x_i/c) = N e`` by Brent's method on ``[M/(1 + ln N), M]`` (§1.6)."""
    n_act, m = len(x), max(x)

    def f(c):
        return sum(math.exp(v / c) for v in x) - n_act * math.e

    lo, hi = m / (1.0 + math.log(n_act)), m
    if f(hi) >= 0.0:  # root at the right end (every x_i equal to M)
        return hi
    return brentq(f, lo, hi, xtol=1e-300, rtol=8.9e-16, maxiter=500)


def literal_normal_hedge(losses: np.ndarray) -> np.ndarray:
    """NormalHedge as in the thesis's Algorithm 5 (Luo 2016, §2.2) for one game.

    ``s_0 = 0``; uniform p when every ``R = −s ≤ 0`` after snapping |R| < 1e-12·t to 0 (t = 1
    always; later the §1.6 fallback); else c with ``Σ_i exp([s_i]_-²/c) = N e`` and
    ``p_i ∝ −[s_i]_- exp([s_i]_-²/c)``; then ``s_i += ℓ_i − p·ℓ``.
    """
    horizon, n_act = losses.shape
    s = [0.0] * n_act
    out = np.empty((horizon, n_act))
    for t in range(1, horizon + 1):
        neg = [min(0.0, v) if -v >= SNAP * t else 0.0 for v in s]  # [s]_- with the snap
        x = [v * v for v in neg]
        if max(x) == 0.0:
            p = [1.0 / n_act] * n_act
        else:
            c = literal_scale(x)
            w = [-neg[i] * math.exp(x[i] / c) for i in range(n_act)]
            p = [v / sum(w) for v in w]
        row = losses[t - 1]
        h = sum(p[i] * row[i] for i in range(n_act))
        for i in range(n_act):
            s[i] += row[i] - h
        out[t - 1] = p
    return out


# ----------------------------------------------------------------------------------------------
# 1. literal transcription: predict/update, kernel blocks, engine


@pytest.mark.parametrize("kind", ["uniform", "binary", "ties"])
@pytest.mark.parametrize("n_act", [2, 7])
def test_matches_literal_transcription(kind, n_act, tmp_path):
    horizon, n_rep = 200, 3
    mats = np.stack([loss_matrices(10 * r + n_act, horizon, n_act)[kind] for r in range(n_rep)])
    want = np.stack([literal_normal_hedge(m) for m in mats])
    spec = GameSpec("experts", n_act, horizon, n_replicates=n_rep)
    got = play_loop(NormalHedge(), mats, spec)
    np.testing.assert_allclose(got, want, rtol=0, atol=LITERAL_ATOL)
    for splits in ([horizon], [1, horizon - 1], [7, 50, horizon - 57], [1] * 10 + [horizon - 10]):
        got = play_blocks(NormalHedge(), mats, spec, splits)
        np.testing.assert_allclose(got, want, rtol=0, atol=LITERAL_ATOL, err_msg=str(splits))
    _, tr = traced(
        NormalHedge(),
        Replay(path=save_matrix(tmp_path, mats)),
        tmp_path,
        horizon=horizon,
        replicates=n_rep,
        metrics={"regret": {}},
        chunk_elements=37 * n_rep * n_act,
    )
    np.testing.assert_array_equal(tr["losses"], mats)
    np.testing.assert_allclose(tr["probs"], want, rtol=0, atol=LITERAL_ATOL)


@pytest.mark.parametrize("adversary", ["replay", "greedy"])
def test_engine_equals_reference_loop(adversary, tmp_path):
    rng = np.random.default_rng(40)
    kw = {"horizon": 150, "replicates": 3, "seed": 4}
    kw["metrics"] = {"loss": {}, "realized_loss": {}, "regret": {}, "quantile_regret": {}}
    if adversary == "replay":
        adversary = Replay(path=save_matrix(tmp_path, rng.random((150, 5))))
    else:
        kw["n_actions"] = 5
    fast = run_game(NormalHedge(), adversary, **kw).rows
    pd.testing.assert_frame_equal(fast, reference_play(NormalHedge(), adversary, **kw), atol=1e-12)


def test_declares_no_bound():
    # the sources give only R^ε = O(sqrt(T ln(1/ε) + ln² N)) (Table 2.1, Luo 2016, §2.1.3): nothing
    # to declare
    assert NormalHedge.bounds is ExpertsPlayer.bounds
    rows = run_game(NormalHedge(), "fair_coin", horizon=20, metrics={"regret": {}, "bound": {}})
    assert "bound" in rows.skipped_metrics


# ----------------------------------------------------------------------------------------------
# 2. golden values (hand-computed values) and the scale search


def test_golden_two_experts(tmp_path):
    # §5.7, thesis convention: after losses (0, 1), c = 0.25/ln(2e − 1) = 0.1677987347 and
    # p_2 = (1, 0); continuing with (0, 1) expert 2 never regains positive regret: p_t = (1, 0)
    c = normal_hedge_scale(np.array([0.5, -0.5]), 1e-12, np.empty(2))
    assert c == pytest.approx(0.25 / math.log(2 * math.e - 1), rel=1e-14)
    assert c == pytest.approx(0.1677987347, abs=1e-10)
    horizon = 6
    losses = np.tile([0.0, 1.0], (horizon, 1))
    want = np.array([[0.5, 0.5]] + [[1.0, 0.0]] * (horizon - 1))
    spec = GameSpec("experts", 2, horizon)
    np.testing.assert_array_equal(play_loop(NormalHedge(), losses[None], spec)[0], want)
    np.testing.assert_array_equal(play_blocks(NormalHedge(), losses[None], spec, [2, 4])[0], want)
    _, tr = traced(NormalHedge(), Replay(path=save_matrix(tmp_path, losses)), tmp_path, horizon=6)
    np.testing.assert_array_equal(tr["probs"][0], want)


def test_scale_search_against_brent():
    # §1.6: the root lies in [M/(1 + ln N), M]; Σ exp(x/c) = N e; no overflow for huge regrets
    rng = np.random.default_rng(41)
    for trial in range(300):
        n_act = int(rng.integers(1, 400))
        mag = 10.0 ** rng.uniform(-5, 6)
        r = mag * rng.normal(size=n_act)
        if trial % 3 == 0:
            r[rng.random(n_act) < 0.5] = 0.0  # many experts exactly at zero regret
        c = normal_hedge_scale(r, 0.0, np.empty(n_act))
        x = np.maximum(r, 0.0) ** 2
        if not (x > 0).any():
            assert math.isnan(c)
            continue
        big_m = x.max()
        assert big_m / (1 + math.log(n_act)) * (1 - 1e-15) <= c <= big_m * (1 + 1e-15)
        total = np.exp(x / c).sum()
        assert total == pytest.approx(n_act * math.e, rel=1e-13)
        assert c == pytest.approx(literal_scale(x.tolist()), rel=1e-12)


def test_n_equals_one_identical_experts_and_fallback():
    # §5.7: N = 1 gives p ≡ 1; identical experts keep p uniform. §1.6 / §1.16.3: the uniform
    # fallback "is needed at every round when all losses are equal"; in the kernel constant
    # losses 0.3 with N = 10 leave rounding regrets (2.8e-15 after 50 rounds), snapped to 0.
    rng = np.random.default_rng(42)
    one = rng.random((1, 60, 1))
    assert (play_blocks(NormalHedge(), one, GameSpec("experts", 1, 60), [60]) == 1.0).all()
    same = np.repeat(rng.random((1, 60, 1)), 4, axis=2)
    p = play_blocks(NormalHedge(), same, GameSpec("experts", 4, 60), [60])
    np.testing.assert_array_equal(p, 0.25)
    player = NormalHedge()
    player.reset(GameSpec("experts", 10, 50), [None])
    p = player.play_block(np.full((1, 50, 10), 0.3))
    np.testing.assert_array_equal(p, 0.1)
    assert np.abs(player.regret).max() < SNAP * 50  # tiny, maybe nonzero, regrets


def test_snap_prevents_all_mass_on_a_rounding_regret():
    # §1.6 rounding hazard: scale invariance makes a regret of 4e-17 as good as a regret of 1;
    # snapped it counts as 0 and p falls back to uniform, unsnapped it would take all the mass
    r = np.array([[4e-17, 0.0, -0.5, -0.2]])
    out = np.empty_like(r)
    normal_hedge_probs(r, SNAP * 5, out)
    np.testing.assert_array_equal(out, 0.25)
    normal_hedge_probs(r, 0.0, out)
    np.testing.assert_array_equal(out, [[1.0, 0.0, 0.0, 0.0]])


# ----------------------------------------------------------------------------------------------
# 3. invariances (§5.6) and structure (§5.1)


def test_shift_invariance_i1():
    # I1: ℓ_t → ℓ_t + c_t·1 leaves p unchanged (rounding aside: 1e-11)
    rng = np.random.default_rng(43)
    horizon, n_act = 500, 6
    base = 0.5 * rng.random((horizon, n_act))
    shifted = base + 0.5 * rng.random((horizon, 1))
    spec = GameSpec("experts", n_act, horizon)
    p0 = play_blocks(NormalHedge(), base[None], spec, [horizon])
    p1 = play_blocks(NormalHedge(), shifted[None], spec, [horizon])
    np.testing.assert_allclose(p1, p0, rtol=0, atol=1e-11)


def test_permutation_equivariance_i2():
    rng = np.random.default_rng(44)
    losses = rng.random((1, 300, 7))
    perm = rng.permutation(7)
    spec = GameSpec("experts", 7, 300)
    p0 = play_blocks(NormalHedge(), losses, spec, [300])
    p1 = play_blocks(NormalHedge(), losses[:, :, perm], spec, [300])
    np.testing.assert_allclose(p1, p0[:, :, perm], rtol=0, atol=P_ATOL)


@pytest.mark.parametrize("lam", [0.5, 0.01])
@pytest.mark.parametrize("kind", ["uniform", "binary"])
def test_scale_invariance_i3(lam, kind):
    # I3 [V]: ℓ → λℓ (λ > 0) leaves p unchanged (c scales by λ²). The bisection resolves log c
    # to ~4e-16 and the regrets carry ~1e-15 relative rounding, so p agrees to ≲ 1e-13; 1e-10.
    horizon, n_act = 400, 6
    losses = np.stack([loss_matrices(45 + r, horizon, n_act)[kind] for r in range(3)])
    spec = GameSpec("experts", n_act, horizon, n_replicates=3)
    p0 = play_blocks(NormalHedge(), losses, spec, [horizon])
    p1 = play_blocks(NormalHedge(), lam * losses, spec, [horizon])
    np.testing.assert_allclose(p1, p0, rtol=0, atol=1e-10)
    # at the function level, with a regret vector scaled by 10^±3
    rng = np.random.default_rng(46)
    r = rng.normal(size=(5, 20))
    out0, out1, out2 = (np.empty_like(r) for _ in range(3))
    normal_hedge_probs(r, 0.0, out0)
    normal_hedge_probs(1e3 * r, 0.0, out1)
    normal_hedge_probs(1e-3 * r, 0.0, out2)
    np.testing.assert_allclose(out1, out0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out2, out0, rtol=0, atol=1e-12)


def test_structure_u9_u10_u12_u13_u14(tmp_path):
    rng = np.random.default_rng(47)
    horizon, n_act = 400, 6
    losses = rng.integers(0, 3, (horizon, n_act)) / 2.0
    losses[:, 5] = losses[:, 4]  # duplicate experts (U13)
    losses[10::9] = 0.3  # constant rounds (U14: no-ops for NormalHedge)
    _, tr = traced(NormalHedge(), Replay(path=save_matrix(tmp_path, losses)), tmp_path, horizon=400)
    p, big_r = tr["probs"][0], regrets_from_trace(tr)[0]
    np.testing.assert_array_equal(p[0], np.full(n_act, 1.0 / n_act))  # U9
    prev = big_r[:-1]
    active = (prev > 1e-9).any(axis=1)  # rounds not in the fallback
    clear = np.abs(prev) > 1e-9
    sel = clear & active[:, None]
    np.testing.assert_array_equal((p == 0.0)[sel], (prev <= 0.0)[sel])  # U10 (t ≥ 2)
    for t in range(horizon):  # U12: the order of p follows the order of R
        order = np.argsort(prev[t], kind="stable")
        assert (np.diff(p[t][order]) >= -1e-15).all()
    np.testing.assert_array_equal(p[:, 4], p[:, 5])  # U13
    for t in range(10, horizon - 1, 9):  # U14
        np.testing.assert_allclose(p[t + 1], p[t], rtol=0, atol=1e-12)


def test_simplex_and_pure_predict():
    rng = np.random.default_rng(48)
    losses = rng.random((4, 300, 9))
    player = NormalHedge()
    spec = GameSpec("experts", 9, 300, n_replicates=4)
    player.reset(spec, [None] * 4)
    for j in range(300):
        p = player.predict()
        np.testing.assert_array_equal(p, player.predict())  # pure
        assert (p >= 0).all() and np.abs(p.sum(axis=1) - 1).max() <= 1e-12
        player.update(losses[:, j])
    np.testing.assert_allclose(
        play_loop(NormalHedge(), losses, spec),
        play_blocks(NormalHedge(), losses, spec, [300]),
        rtol=0,
        atol=P_ATOL,
    )
