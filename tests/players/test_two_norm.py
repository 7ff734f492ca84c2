"""Oracle tests of the 2-norm algorithm (``arena.players.two_norm``), Luo 2016, §2.1.4; Luo 2016

Every constant is copied from its source with a citation (no external file is read here).
Deterministic inequalities are asserted as ``lhs <= rhs + 1e-9·max(1, |rhs|)`` (§5 conventions).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arena import GameSpec, run_game
from arena.adversaries.replay import Replay
from arena.experts.reference import reference_play
from arena.metrics.base import exact_quantile_rank
from arena.players.two_norm import TwoNorm, two_norm_weights
from tests.helpers import assert_below, check_declared, save_matrix, traced
from tests.helpers.experts import (
    loss_matrices,
    play_blocks,
    play_loop,
    regrets_from_trace,
    two_phase_matrix,
)

P_ATOL = 1e-12
"""Kernel, predict/update and engine compute the same rational weights of O(T) regrets with
sums in different orders: float64 differences are ~1e-15, so 1e-12 catches any formula error."""

LITERAL_ATOL = 1e-10
"""The literal transcription uses the s-form ``[s−1]_-² − [s+1]_-²`` (a difference of squares,
relative error ~1e-16·|s|) with plain Python sums; 1e-10 leaves a wide margin over 200 rounds."""


# ----------------------------------------------------------------------------------------------
# helpers


def literal_two_norm(losses: np.ndarray) -> np.ndarray:
    """Algorithm 3 with Lemma 1's potential, transcribed literally (Luo 2016, §2.1.3, §2.1.4).

    ``s_0 = 0``; ``p_{t,i} ∝ [s_{t−1,i} − 1]_-² − [s_{t−1,i} + 1]_-²``;
    ``s_{t,i} = s_{t−1,i} + ℓ_{t,i} − p_t·ℓ_t``. One game, plain Python loops.
    """
    horizon, n_act = losses.shape
    s = [0.0] * n_act
    out = np.empty((horizon, n_act))
    for t in range(horizon):
        w = [min(0.0, s[i] - 1.0) ** 2 - min(0.0, s[i] + 1.0) ** 2 for i in range(n_act)]
        total = sum(w)
        p = [w[i] / total for i in range(n_act)]
        h = sum(p[i] * losses[t, i] for i in range(n_act))
        for i in range(n_act):
            s[i] += losses[t, i] - h
        out[t] = p
    return out


# ----------------------------------------------------------------------------------------------
# 1. literal transcription: predict/update, kernel blocks, engine


@pytest.mark.parametrize("kind", ["uniform", "binary", "ties"])
@pytest.mark.parametrize("n_act", [2, 7])
def test_matches_literal_transcription(kind, n_act, tmp_path):
    horizon, n_rep = 200, 3
    mats = np.stack([loss_matrices(10 * r + n_act, horizon, n_act)[kind] for r in range(n_rep)])
    want = np.stack([literal_two_norm(m) for m in mats])
    spec = GameSpec("experts", n_act, horizon, n_replicates=n_rep)
    np.testing.assert_allclose(play_loop(TwoNorm(), mats, spec), want, rtol=0, atol=LITERAL_ATOL)
    for splits in ([horizon], [1, horizon - 1], [7, 50, horizon - 57], [1] * 10 + [horizon - 10]):
        got = play_blocks(TwoNorm(), mats, spec, splits)
        np.testing.assert_allclose(got, want, rtol=0, atol=LITERAL_ATOL, err_msg=str(splits))
    # through the engine (small chunks force several play_block calls) with the replay adversary
    path = save_matrix(tmp_path, mats)
    _, tr = traced(
        TwoNorm(),
        Replay(path=path),
        tmp_path,
        horizon=horizon,
        replicates=n_rep,
        metrics={"regret": {}},
        chunk_elements=37 * n_rep * n_act,
    )
    np.testing.assert_array_equal(tr["losses"], mats)
    np.testing.assert_allclose(tr["probs"], want, rtol=0, atol=LITERAL_ATOL)


def test_kernel_equals_predict_update_and_reference_loop(tmp_path):
    horizon, n_act, n_rep = 150, 5, 3
    rng = np.random.default_rng(4)
    mats = rng.random((n_rep, horizon, n_act))
    spec = GameSpec("experts", n_act, horizon, n_replicates=n_rep)
    loop = play_loop(TwoNorm(), mats, spec)
    block = play_blocks(TwoNorm(), mats, spec, [horizon])
    np.testing.assert_allclose(block, loop, rtol=0, atol=P_ATOL)
    # engine (kernel) against the arena's literal reference loop (predict/update), all metrics
    kw = {"horizon": horizon, "replicates": n_rep, "metrics": {"regret": {}, "bound": {}}}
    adv = Replay(path=save_matrix(tmp_path, mats))
    pd.testing.assert_frame_equal(
        run_game(TwoNorm(), adv, **kw).rows, reference_play(TwoNorm(), adv, **kw), atol=1e-12
    )


def test_affine_loss_range(tmp_path):
    # losses lo + (hi − lo)·u on the declared range [lo, hi] are mapped back to u: same p, and the
    # declared bound scales by hi − lo (guide: bounds in raw units)
    rng = np.random.default_rng(8)
    horizon, n_act = 300, 4
    unit = rng.random((horizon, n_act))
    lo, hi = -1.0, 2.0
    _, base = traced(TwoNorm(), Replay(path=save_matrix(tmp_path, unit)), tmp_path, horizon=300)
    rows, wide = traced(
        TwoNorm(),
        Replay(path=save_matrix(tmp_path, lo + (hi - lo) * unit), loss_range=[lo, hi]),
        tmp_path,
        horizon=horizon,
        metrics={"regret": {}, "bound": {}},
    )
    np.testing.assert_allclose(wide["probs"], base["probs"], rtol=0, atol=P_ATOL)
    b = rows[(rows.metric == "bound:regret") & (rows.t == horizon)].value.iloc[0]
    assert b == pytest.approx((hi - lo) * math.sqrt(horizon * n_act), rel=1e-12)


# ----------------------------------------------------------------------------------------------
# 2. golden values (hand-computed values)


def test_golden_two_experts(tmp_path):
    # §5.7: two experts, round-1 losses (0, 1): p_1 = (½, ½), R_1 = (0.5, −0.5); 2-norm weights
    # (1.5², 0.5²), so p_2 = (0.9, 0.1). [derived] Continuing with (0, 1): ℓ̂_2 = 0.1, so
    # R_2 = (0.6, −1.4); expert 2 then has zero weight (R ≤ −1) and p_t = (1, 0) for t ≥ 3.
    horizon = 6
    losses = np.tile([0.0, 1.0], (horizon, 1))
    want = np.array([[0.5, 0.5], [0.9, 0.1]] + [[1.0, 0.0]] * (horizon - 2))
    spec = GameSpec("experts", 2, horizon)
    np.testing.assert_allclose(play_loop(TwoNorm(), losses[None], spec)[0], want, atol=P_ATOL)
    np.testing.assert_allclose(
        play_blocks(TwoNorm(), losses[None], spec, [1, 1, 4])[0], want, atol=P_ATOL
    )
    _, tr = traced(TwoNorm(), Replay(path=save_matrix(tmp_path, losses)), tmp_path, horizon=6)
    np.testing.assert_allclose(tr["probs"][0], want, rtol=0, atol=P_ATOL)
    np.testing.assert_allclose(regrets_from_trace(tr)[0, 2], [0.6, -1.4], rtol=0, atol=1e-15)
    assert two_norm_weights(np.array([0.5, -0.5])).tolist() == [2.25, 0.25]


def test_piecewise_weight_matches_s_form():
    # §1.4 [derived]: 4R (R ≥ 1), (1+R)² (−1 < R < 1), 0 (R ≤ −1), continuous at ±1
    r = np.linspace(-5, 5, 10001)
    s = -r
    s_form = np.minimum(s - 1, 0) ** 2 - np.minimum(s + 1, 0) ** 2
    np.testing.assert_allclose(two_norm_weights(r), s_form, rtol=1e-12, atol=1e-12)
    assert (
        two_norm_weights(np.array([1.0]))[0] == 4.0 and two_norm_weights(np.array([-1.0]))[0] == 0
    )


# ----------------------------------------------------------------------------------------------
# 3. bounds and the potential invariant


def bound_games(tmp_path: Path, n_act: int, horizon: int):
    rng = np.random.default_rng(n_act * 7919 + horizon)
    uniform = save_matrix(tmp_path, rng.random((3, horizon, n_act)))
    phase = save_matrix(tmp_path, two_phase_matrix(horizon, n_act))
    yield "bernoulli", {}, n_act
    yield "fair_coin", {}, n_act
    yield "ftl_killer", {}, n_act
    yield "ftl_killer", {}, 5
    yield "shifting_experts", {}, n_act
    yield "greedy", {"ties": "random"}, n_act
    yield "greedy", {"ties": "all"}, n_act
    yield "replay", {"path": uniform}, None
    yield "replay", {"path": phase}, None


@pytest.mark.parametrize(
    ("n_act", "horizon"), [(2, 200), (10, 200), (50, 200), (2, 2000), (10, 2000), (50, 2000)]
)
def test_declared_bounds_hold_on_every_adversary(n_act, horizon, tmp_path):
    metrics = {"regret": {}, "quantile_regret": {"eps": [0.1, 0.25]}, "bound": {}}
    for adversary, params, n in bound_games(tmp_path, n_act, horizon):
        one_matrix = adversary == "replay" and np.load(params["path"]).ndim == 2
        replicates = 1 if one_matrix else 3  # the two-phase T×N matrix: one replicate
        rows = run_game(
            TwoNorm(),
            adversary,
            adversary_params=params,
            n_actions=n,
            horizon=horizon,
            replicates=replicates,
            seed=5,
            metrics=metrics,
        ).rows
        label = f"{adversary} {params} N={n} T={horizon}"
        assert check_declared(rows, label) > 0
        # the declared values are B2 (Cor. 1): sqrt(t N / k), k = ⌈εN⌉ (ε = 1/N for the regret)
        n_used = int(rows.n_actions.iloc[0])
        b = rows[rows.metric.str.startswith("bound:")]
        k = np.where(
            b.metric == "bound:regret",
            1,
            [exact_quantile_rank(e, n_used) if e == e else 1 for e in b.param],
        )
        np.testing.assert_allclose(b.value, np.sqrt(b.t * n_used / k), rtol=1e-12)
        assert set(b.metric) == {"bound:regret", "bound:quantile_regret"}


@pytest.mark.parametrize("adversary", ["replay", "greedy", "ftl_killer"])
def test_potential_invariant_p2_round_by_round(adversary, tmp_path):
    # potential invariant (Lemma 1, Luo 2016, §2.1.4): per step Σ[R_t]_+² − Σ[R_{t−1}]_+² ≤ N, and
    # cumulatively Σ[R_t]_+² ≤ N t, every round, every sequence (adaptive included).
    horizon, n_act = 1000, 6
    extra = {"n_actions": n_act}
    if adversary == "replay":
        rng = np.random.default_rng(9)
        mats = rng.random((3, horizon, n_act))
        mats[1] = rng.integers(0, 2, (horizon, n_act))
        adversary, extra = Replay(path=save_matrix(tmp_path, mats)), {}
    _, tr = traced(
        TwoNorm(),
        adversary,
        tmp_path,
        horizon=horizon,
        replicates=3,
        metrics={"regret": {}},
        **extra,
    )
    big_r = regrets_from_trace(tr)
    pot = (np.maximum(big_r, 0.0) ** 2).sum(axis=2)  # (R, T + 1)
    n = big_r.shape[2]
    assert_below(np.diff(pot, axis=1), float(n), "P2 per step")
    assert_below(pot, n * np.arange(horizon + 1.0), "P2 cumulative")
    # U11: some weight always survives, max_i R_{t,i} > −1
    assert (big_r.max(axis=2) > -1.0).all()


def test_lemma_1_scalar_s3():
    # scalar inequality: [s−1]_-² + [s+1]_-² ≤ 2[s]_-² + 2 for every real s
    rng = np.random.default_rng(0)
    s = np.concatenate([np.linspace(-1e3, 1e3, 200001), rng.normal(0, 50, 10000), [-1, 0, 1]])
    neg = lambda x: np.minimum(x, 0.0)  # noqa: E731
    lhs = neg(s - 1) ** 2 + neg(s + 1) ** 2
    assert_below(lhs, 2 * neg(s) ** 2 + 2, "Lemma 1")


# ----------------------------------------------------------------------------------------------
# 4. invariances (invariance) and structure (§5.1)


def test_shift_invariance_i1(tmp_path):
    # I1: ℓ_t → ℓ_t + c_t·1 (staying in [0, 1]) leaves p unchanged; only rounding differs
    # (the regrets are sums of differences that no longer cancel bit for bit): 1e-11
    rng = np.random.default_rng(12)
    horizon, n_act = 500, 6
    base = 0.5 * rng.random((horizon, n_act))
    shifted = base + 0.5 * rng.random((horizon, 1))
    spec = GameSpec("experts", n_act, horizon)
    p0 = play_blocks(TwoNorm(), base[None], spec, [horizon])
    p1 = play_blocks(TwoNorm(), shifted[None], spec, [horizon])
    np.testing.assert_allclose(p1, p0, rtol=0, atol=1e-11)


def test_permutation_equivariance_i2():
    rng = np.random.default_rng(13)
    horizon, n_act = 300, 7
    losses = rng.random((1, horizon, n_act))
    perm = rng.permutation(n_act)
    spec = GameSpec("experts", n_act, horizon)
    p0 = play_blocks(TwoNorm(), losses, spec, [horizon])
    p1 = play_blocks(TwoNorm(), losses[:, :, perm], spec, [horizon])
    np.testing.assert_allclose(p1, p0[:, :, perm], rtol=0, atol=P_ATOL)


def test_not_scale_invariant_i3():
    # I3: the ±1 offsets make the 2-norm algorithm depend on the loss scale
    rng = np.random.default_rng(14)
    losses = rng.random((1, 200, 5))
    spec = GameSpec("experts", 5, 200)
    p0 = play_blocks(TwoNorm(), losses, spec, [200])
    p1 = play_blocks(TwoNorm(), 0.5 * losses, spec, [200])
    assert np.abs(p1 - p0).max() > 1e-3


def test_structure_u9_u10_u13_u14(tmp_path):
    rng = np.random.default_rng(15)
    horizon, n_act = 400, 6
    losses = rng.integers(0, 3, (horizon, n_act)) / 2.0
    losses[:, 5] = losses[:, 4]  # duplicate experts (U13)
    losses[10::9] = 0.3  # constant rounds (U14)
    _, tr = traced(TwoNorm(), Replay(path=save_matrix(tmp_path, losses)), tmp_path, horizon=400)
    p, big_r = tr["probs"][0], regrets_from_trace(tr)[0]
    np.testing.assert_array_equal(p[0], np.full(n_act, 1.0 / n_act))  # U9
    clear = np.abs(big_r[:-1] + 1.0) > 1e-9  # away from the boundary R = −1
    np.testing.assert_array_equal((p == 0.0)[clear], (big_r[:-1] <= -1.0)[clear])  # U10
    np.testing.assert_array_equal(p[:, 4], p[:, 5])  # U13
    for t in range(10, horizon - 1, 9):  # U14: a constant round leaves the next p unchanged
        np.testing.assert_allclose(p[t + 1], p[t], rtol=0, atol=1e-13)


def test_simplex_and_pure_predict():
    rng = np.random.default_rng(16)
    losses = rng.random((4, 300, 9))
    player = TwoNorm()
    spec = GameSpec("experts", 9, 300, n_replicates=4)
    player.reset(spec, [None] * 4)
    for j in range(300):
        p = player.predict()
        again = player.predict()
        np.testing.assert_array_equal(p, again)  # pure: no state change
        assert (p >= 0).all() and np.abs(p.sum(axis=1) - 1).max() <= 1e-12
        player.update(losses[:, j])
    # predicting many times in between does not change the trajectory
    p_ref = play_blocks(TwoNorm(), losses, spec, [300])
    np.testing.assert_allclose(play_loop(TwoNorm(), losses, spec), p_ref, rtol=0, atol=P_ATOL)
