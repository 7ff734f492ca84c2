"""Oracle tests of NormalHedge.DT (``arena.players.normal_hedge_dt``), Luo 2016, §2.1.4; Luo 2016,
§2.1.5; Luo 2016

Every constant is copied from its source with a citation (no external file is read here).
Deterministic inequalities are asserted as ``lhs <= rhs + 1e-9·max(1, |rhs|)`` (§5 conventions).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena import GameSpec, run_game
from arena.adversaries.replay import Replay
from arena.experts.reference import reference_play
from arena.metrics.base import exact_quantile_rank
from arena.players.normal_hedge_dt import NormalHedgeDT, harmonic_exp_sum, nhdt_log_weights
from arena.sampling import sample_action
from tests.helpers import assert_below, check_declared, save_matrix, traced
from tests.helpers.experts import (
    loss_matrices,
    play_blocks,
    play_loop,
    regrets_from_trace,
    two_phase_matrix,
)

P_ATOL = 1e-12
"""Kernel, predict/update and engine evaluate the same log-domain weights with sums in different
orders: float64 differences are ~1e-15, so 1e-12 catches any formula error."""

LITERAL_ATOL = 1e-10
"""The literal transcription takes ``exp(a) − exp(b)`` naively: for exponents ≲ 70 (T = 200) and
differences ≳ 1e-3 its relative error is ≲ 1e-13, far inside 1e-10."""


# ----------------------------------------------------------------------------------------------
# helpers


def literal_nhdt(losses: np.ndarray, actions: np.ndarray | None = None) -> np.ndarray:
    """Algorithm 3 with Lemma 2's potential (d = 3), transcribed literally, one game.

    ``s_0 = 0``; ``p_{t,i} ∝ exp([s_{t−1,i} − 1]_-²/(3t)) − exp([s_{t−1,i} + 1]_-²/(3t))``
    (Luo 2016, §2.1.4, with the negative part ``[·]_-`` of Algorithm 4 where the text prints
    ``[·]_+``); ``s_{t,i} = s_{t−1,i} + ℓ_{t,i} −
    p_t·ℓ_t`` (Luo 2016, §2.1.3), or ``− ℓ_{t,I_t}`` for the realized-state variant (Luo 2016,
    §2.1.5).
    """
    horizon, n_act = losses.shape
    s = [0.0] * n_act
    out = np.empty((horizon, n_act))
    for t in range(1, horizon + 1):
        w = [
            math.exp(min(0.0, s[i] - 1.0) ** 2 / (3 * t))
            - math.exp(min(0.0, s[i] + 1.0) ** 2 / (3 * t))
            for i in range(n_act)
        ]
        total = sum(w)
        p = [w[i] / total for i in range(n_act)]
        row = losses[t - 1]
        h = sum(p[i] * row[i] for i in range(n_act)) if actions is None else row[actions[t - 1]]
        for i in range(n_act):
            s[i] += row[i] - h
        out[t - 1] = p
    return out


# ----------------------------------------------------------------------------------------------
# 1. literal transcription: predict/update, kernel blocks, engine (both states)


@pytest.mark.parametrize("kind", ["uniform", "binary", "ties"])
@pytest.mark.parametrize("n_act", [2, 7])
def test_matches_literal_transcription(kind, n_act, tmp_path):
    horizon, n_rep = 200, 3
    mats = np.stack([loss_matrices(10 * r + n_act, horizon, n_act)[kind] for r in range(n_rep)])
    want = np.stack([literal_nhdt(m) for m in mats])
    spec = GameSpec("experts", n_act, horizon, n_replicates=n_rep)
    got = play_loop(NormalHedgeDT(), mats, spec)
    np.testing.assert_allclose(got, want, rtol=0, atol=LITERAL_ATOL)
    for splits in ([horizon], [1, horizon - 1], [7, 50, horizon - 57], [1] * 10 + [horizon - 10]):
        got = play_blocks(NormalHedgeDT(), mats, spec, splits)
        np.testing.assert_allclose(got, want, rtol=0, atol=LITERAL_ATOL, err_msg=str(splits))
    path = save_matrix(tmp_path, mats)
    for chunk in (37, 10**6):
        _, tr = traced(
            NormalHedgeDT(),
            Replay(path=path),
            tmp_path,
            horizon=horizon,
            replicates=n_rep,
            metrics={"regret": {}},
            chunk_elements=chunk * n_rep * n_act,
        )
        np.testing.assert_array_equal(tr["losses"], mats)
        np.testing.assert_allclose(tr["probs"], want, rtol=0, atol=LITERAL_ATOL)


@pytest.mark.parametrize("kind", ["uniform", "binary", "ties"])
def test_realized_state_matches_literal_transcription(kind, tmp_path):
    # §1.7 / Luo 2016, §2.1.5: the realized variant moves chips by z = ℓ − ℓ_{I_t}, with the arena's
    # draws
    horizon, n_act, n_rep = 200, 5, 3
    mats = np.stack([loss_matrices(77 + r, horizon, n_act)[kind] for r in range(n_rep)])
    path = save_matrix(tmp_path, mats)
    for chunk in (29, 10**6):
        _, tr = traced(
            NormalHedgeDT(state="realized"),
            Replay(path=path),
            tmp_path,
            horizon=horizon,
            replicates=n_rep,
            seed=3,
            metrics={"regret": {}},
            chunk_elements=chunk * n_rep * n_act,
        )
        for r in range(n_rep):
            want = literal_nhdt(mats[r], tr["actions"][r])
            np.testing.assert_allclose(tr["probs"][r], want, rtol=0, atol=LITERAL_ATOL)


def test_realized_kernel_equals_predict_update_with_the_same_uniforms():
    # play_block draws I_t with arena.sampling.sample_action from the given uniforms, exactly
    # as the engine does before calling update(losses, actions)
    rng = np.random.default_rng(21)
    horizon, n_act, n_rep = 300, 6, 4
    losses = rng.random((n_rep, horizon, n_act))
    uniforms = rng.random((n_rep, horizon))
    spec = GameSpec("experts", n_act, horizon, n_replicates=n_rep)
    player = NormalHedgeDT(state="realized")
    player.reset(spec, [None] * n_rep)
    loop = np.empty_like(losses)
    for j in range(horizon):
        p = player.predict()
        loop[:, j] = p
        acts = np.array([sample_action(p[r], uniforms[r, j]) for r in range(n_rep)])
        player.update(losses[:, j], actions=acts)
    for splits in ([horizon], [3, 100, horizon - 103]):
        player = NormalHedgeDT(state="realized")
        player.reset(spec, [None] * n_rep)
        out, t0 = [], 0
        for n in splits:
            out.append(player.play_block(losses[:, t0 : t0 + n], uniforms=uniforms[:, t0 : t0 + n]))
            t0 += n
        np.testing.assert_allclose(np.concatenate(out, axis=1), loop, rtol=0, atol=P_ATOL)


@pytest.mark.parametrize("state", ["expected", "realized"])
@pytest.mark.parametrize("adversary", ["replay", "greedy"])
def test_engine_equals_reference_loop(state, adversary, tmp_path):
    # the arena's literal per-round loop (predict/update, its own inverse-CDF draws) against the
    # engine (kernel for the replay, batched loop for greedy), all metric rows to 1e-12
    rng = np.random.default_rng(22)
    kw = {"horizon": 150, "replicates": 3, "seed": 4}
    kw["metrics"] = {"loss": {}, "realized_loss": {}, "regret": {}, "bound": {}}
    if adversary == "replay":
        adversary = Replay(path=save_matrix(tmp_path, rng.random((150, 5))))
    else:
        kw["n_actions"] = 5
    fast = run_game(NormalHedgeDT(state=state), adversary, **kw).rows
    ref = reference_play(NormalHedgeDT(state=state), adversary, **kw)
    pd.testing.assert_frame_equal(fast, ref, atol=1e-12)


def test_expected_state_never_needs_actions():
    rng = np.random.default_rng(23)
    losses = rng.random((2, 50, 4))
    spec = GameSpec("experts", 4, 50, n_replicates=2)
    a = play_loop(NormalHedgeDT(), losses, spec)  # update(losses) without actions
    b = play_blocks(NormalHedgeDT(), losses, spec, [50])  # play_block without uniforms
    np.testing.assert_allclose(a, b, rtol=0, atol=P_ATOL)
    player = NormalHedgeDT(state="realized")
    player.reset(spec, [None] * 2)
    with pytest.raises(ValueError, match="actions"):
        player.update(losses[:, 0])
    with pytest.raises(ValueError, match="uniforms"):
        player.play_block(losses)
    assert NormalHedgeDT.tags.observes_action


# ----------------------------------------------------------------------------------------------
# 2. golden values (hand-computed values)


def test_golden_two_experts(tmp_path):
    # §5.7: two experts, losses (0, 1) every round. p_1 = (½, ½), R_1 = (0.5, −0.5); denominator
    # 3·2 = 6: p_{2,1} = (e^{2.25/6} − 1)/((e^{2.25/6} − 1) + (e^{0.25/6} − 1)) = 0.9144851693;
    # then R_2 = (0.585515, −1.414485) and p_t = (1, 0) for t ≥ 3; the regret to expert 1 stays
    # 0.585515.
    horizon = 8
    losses = np.tile([0.0, 1.0], (horizon, 1))
    exact = math.expm1(2.25 / 6) / (math.expm1(2.25 / 6) + math.expm1(0.25 / 6))
    assert exact == pytest.approx(0.9144851693, abs=1e-10)  # the reference value has 10 digits
    want = np.array([[0.5, 0.5], [exact, 1 - exact]] + [[1.0, 0.0]] * (horizon - 2))
    spec = GameSpec("experts", 2, horizon)
    np.testing.assert_allclose(play_loop(NormalHedgeDT(), losses[None], spec)[0], want, atol=1e-12)
    np.testing.assert_allclose(
        play_blocks(NormalHedgeDT(), losses[None], spec, [1, 2, 5])[0], want, atol=1e-12
    )
    rows, tr = traced(
        NormalHedgeDT(),
        Replay(path=save_matrix(tmp_path, losses)),
        tmp_path,
        horizon=horizon,
        metrics={"regret": {}},
        checkpoints=range(1, horizon + 1),
    )
    np.testing.assert_allclose(tr["probs"][0], want, rtol=0, atol=1e-12)
    big_r = regrets_from_trace(tr)[0]
    # the reference value has R_2 to 6 decimals
    np.testing.assert_allclose(big_r[2], [0.585515, -1.414485], rtol=0, atol=5e-7)
    regret = rows[rows.metric == "regret"].sort_values("t").value.to_numpy()
    np.testing.assert_allclose(regret[1:], 0.585515, rtol=0, atol=5e-7)
    np.testing.assert_allclose(big_r[2:, 1], -1.414485 - np.arange(horizon - 1), atol=5e-7)


def test_golden_constants():
    # §5.7: w(0, 0) = ½(e^{1/3} − 1) = 0.1978062125; (e^{4/3} − 1)/2 = 1.3968339473
    w00 = float(np.exp(nhdt_log_weights(np.array([0.0]), 1))[0])
    assert w00 == pytest.approx(0.1978062125, abs=1e-10)
    assert harmonic_exp_sum(1) / 2 == pytest.approx(1.3968339473, abs=1e-10)


def test_n_equals_one_and_identical_experts(tmp_path):
    # §5.7: N = 1 gives p ≡ 1 and R ≡ 0; identical experts keep p uniform (NH.DT included)
    rng = np.random.default_rng(24)
    one = rng.random((1, 100, 1))
    assert (play_blocks(NormalHedgeDT(), one, GameSpec("experts", 1, 100), [100]) == 1.0).all()
    same = np.repeat(rng.random((1, 100, 1)), 4, axis=2)
    p = play_blocks(NormalHedgeDT(), same, GameSpec("experts", 4, 100), [100])
    np.testing.assert_allclose(p, 0.25, rtol=0, atol=1e-15)


# ----------------------------------------------------------------------------------------------
# 3. bounds, potential invariant, scalar lemmas


def b3(t, n_act: int, k) -> np.ndarray:
    """regret bound / §1.5 intermediate form: sqrt(3t ln((N/(2k)) Σ_{τ≤t}(e^{4/(3τ)} −
    1) + 1)), evaluated independently (cumulative sum over τ)."""
    t = np.asarray(t, dtype=np.int64)
    csum = np.concatenate([[0.0], np.cumsum(np.expm1(4.0 / (3.0 * np.arange(1, t.max() + 1))))])
    return np.sqrt(3.0 * t * np.log(n_act / (2.0 * np.asarray(k)) * csum[t] + 1.0))


@pytest.mark.parametrize(
    ("n_act", "horizon"), [(2, 200), (10, 200), (50, 200), (2, 2000), (10, 2000), (50, 2000)]
)
def test_declared_bounds_hold_on_every_adversary(n_act, horizon, tmp_path):
    metrics = {"regret": {}, "quantile_regret": {"eps": [0.1, 0.25]}, "bound": {}}
    rng = np.random.default_rng(n_act * 7919 + horizon)
    uniform = save_matrix(tmp_path, rng.random((3, horizon, n_act)))
    phase = save_matrix(tmp_path, two_phase_matrix(horizon, n_act))
    games = [
        ("bernoulli", {}, n_act, 3),
        ("fair_coin", {}, n_act, 3),
        ("ftl_killer", {}, n_act, 1),
        ("ftl_killer", {}, 5, 1),
        ("shifting_experts", {}, n_act, 3),
        ("greedy", {"ties": "random"}, n_act, 2),
        ("greedy", {"ties": "all"}, n_act, 1),
        ("replay", {"path": uniform}, None, 3),
        ("replay", {"path": phase}, None, 1),
    ]
    for adversary, params, n, reps in games:
        rows = run_game(
            NormalHedgeDT(),
            adversary,
            adversary_params=params,
            n_actions=n,
            horizon=horizon,
            replicates=reps,
            seed=6,
            metrics=metrics,
        ).rows
        assert check_declared(rows, f"{adversary} {params} N={n} T={horizon}") > 0
        n_used = int(rows.n_actions.iloc[0])
        b = rows[rows.metric.str.startswith("bound:")]
        assert set(b.metric) == {"bound:regret", "bound:quantile_regret"}
        k = [1 if e != e else exact_quantile_rank(e, n_used) for e in b.param]
        np.testing.assert_allclose(b.value, b3(b.t.to_numpy(), n_used, k), rtol=1e-12)


def test_realized_state_declares_no_bound():
    # §1.7: only a high-probability guarantee, so nothing deterministic to declare
    player = NormalHedgeDT(state="realized")
    player.reset(GameSpec("experts", 3, 10), [None])
    assert player.bounds(5) == {}
    player = NormalHedgeDT()
    player.reset(GameSpec("experts", 3, 10), [None])
    keys = list(player.bounds(5))
    assert [m for m, _ in keys] == ["regret", "quantile_regret", "quantile_regret"]
    assert math.isnan(keys[0][1]) and [e for _, e in keys[1:]] == [0.1, 0.25]


@pytest.mark.parametrize("adversary", ["replay", "greedy", "ftl_killer"])
def test_potential_invariant_p3_round_by_round(adversary, tmp_path):
    # potential invariant (Lemma 2, Luo 2016, §2.1.4, and its proof in Appendix A.1), every round:
    #   t = 1:  Σ_i e^{[R_1]_+²/3} − N ≤ (N/2)(e^{4/3} − 1)
    #   t ≥ 2:  Σ_i e^{[R_t]_+²/(3t)} − Σ_i e^{[R_{t−1}]_+²/(3(t−1))} ≤ (N/2)(e^{4/(3t)} − 1)
    #   cumulative: Σ_i (e^{[R_t]_+²/(3t)} − 1) ≤ (N/2) Σ_{τ≤t} (e^{4/(3τ)} − 1)
    #                                            ≤ (N/2)(e^{4/3} − 1)(ln t + 1)
    horizon, n_act = 1000, 6
    extra = {"n_actions": n_act}
    if adversary == "replay":
        rng = np.random.default_rng(25)
        mats = rng.random((3, horizon, n_act))
        mats[1] = rng.integers(0, 2, (horizon, n_act))
        adversary, extra = Replay(path=save_matrix(tmp_path, mats)), {}
    _, tr = traced(NormalHedgeDT(), adversary, tmp_path, horizon=horizon, replicates=3, **extra)
    big_r = regrets_from_trace(tr)[:, 1:]  # R_1 .. R_T
    n = big_r.shape[2]
    t = np.arange(1, horizon + 1.0)
    pot = np.exp(np.maximum(big_r, 0.0) ** 2 / (3.0 * t[None, :, None])).sum(axis=2)  # (R, T)
    prev = np.concatenate([np.full((pot.shape[0], 1), float(n)), pot[:, :-1]], axis=1)
    assert_below(pot - prev, n / 2 * np.expm1(4.0 / (3.0 * t)), "P3 per step")
    csum = np.cumsum(np.expm1(4.0 / (3.0 * t)))
    assert_below(pot - n, n / 2 * csum, "P3 cumulative")
    assert_below(csum, math.expm1(4 / 3) * (np.log(t) + 1), "S13 harmonic sum")
    assert (big_r.max(axis=2) > -1.0).all()  # U11


def test_lemma_2_scalar_s4_and_negative_control():
    # scalar inequality (d = 3), integer t ≥ 2, all real s:
    #   e^{[s−1]_-²/(3t)} + e^{[s+1]_-²/(3t)} − 2e^{[s]_-²/(3(t−1))} ≤ e^{4/(3t)} − 1
    # [V: max slack −0.0022 over t ≤ 300]. Exponents are capped at 20 so that float64 resolves
    # the difference: the tolerance is 1e-13·e^{largest exponent} (three terms of relative error
    # ≤ 20·1.1e-16 each), at most 5e-5, far below the slack.
    neg = lambda x: np.minimum(x, 0.0)  # noqa: E731

    def excess(t, s, d):
        a, b, c = neg(s - 1) ** 2 / (d * t), neg(s + 1) ** 2 / (d * t), neg(s) ** 2 / (d * (t - 1))
        f = np.exp(a) + np.exp(b) - 2 * np.exp(c)
        return f - np.expm1(4.0 / (d * t)), 1e-13 * np.exp(np.maximum(np.maximum(a, b), c))

    worst = -np.inf
    for t in range(2, 301):
        s = np.linspace(-math.sqrt(20 * 3 * (t - 1)), 3.0, 4001)
        ex, tol = excess(t, s, 3.0)
        assert (ex <= tol).all(), (t, s[np.argmax(ex - tol)], ex.max())
        worst = max(worst, ex.max())
    assert worst < -0.002  # the reference's slack −0.0022 (attained near t = 300, s ≈ −1)
    # t = 1 case (A.1): only Φ_1(−1) + Φ_1(1) ≤ 2Φ_0(0) is needed: e^{1/3} − 1 ≤ e^{4/3} − 1
    assert math.expm1(1 / 3) <= math.expm1(4 / 3)
    # negative control: d = 2 violates it, e.g. t = 299, s ≈ −107, excess ≈ 6·10⁴
    s = np.linspace(-115.0, -100.0, 1501)
    ex, _ = excess(299, s, 2.0)
    assert ex.max() > 5e4 and abs(s[np.argmax(ex)] + 107) < 1.0


def test_log_domain_weights_never_overflow():
    # §1.5 numerics: exponents [R−1]²/(3t) far beyond 709 stay finite in the log domain;
    # the p ratio of two experts is exp(Δ log w) computed from the closed form
    r = np.array([[5000.0, 4990.0, 0.0, -3.0]])
    player = NormalHedgeDT()
    player.reset(GameSpec("experts", 4, None), [None])
    player._regret[:] = r  # test-only: put the state far out
    player._rounds = 9  # predicting round t = 10: exponents ≈ 8e5
    p = player.predict()[0]
    assert np.isfinite(p).all() and p[3] == 0.0
    d = 30.0
    lw = [(x - 1) ** 2 / d + math.log(math.expm1(4 * x / d)) for x in r[0, :2]]
    assert p[1] / p[0] == pytest.approx(math.exp(lw[1] - lw[0]), rel=1e-9)
    block = player.play_block(np.zeros((1, 1, 4)))  # the kernel on the same state
    np.testing.assert_allclose(block[0, 0], p, rtol=1e-12, atol=0)
    # small t and regret near −1: the expm1 branch is exact where exp(a) − 1 would cancel
    w = np.exp(nhdt_log_weights(np.array([-1 + 1e-9]), 10**6))
    assert w[0] == pytest.approx(0.5 * (1e-18 / 3e6), rel=1e-6)


# ----------------------------------------------------------------------------------------------
# 4. reductions (§5.5) and invariances (§5.6)


def ada_nh_weight(big_r: float, big_c: float) -> float:
    """AdaNormalHedge's weight (Luo 2016, §2.3): ``w(R, C) = ½(Φ(R+1, C+1) − Φ(R−1, C+1))`` with
    ``Φ(R, C) = exp([R]_+²/(3C))`` and ``Φ(0, 0) := 1``; written here independently."""

    def phi(x, c):
        if c == 0:
            return 1.0
        return math.exp(max(x, 0.0) ** 2 / (3.0 * c))

    return 0.5 * (phi(big_r + 1.0, big_c + 1.0) - phi(big_r - 1.0, big_c + 1.0))


def test_c4_nhdt_is_adanh_with_c_equal_t(tmp_path):
    # C4: the AdaNH update with C_{t,i} := t (C += |r|⁰ = 1 per round) reproduces NH.DT
    rng = np.random.default_rng(26)
    horizon, n_act = 300, 6
    losses = rng.random((horizon, n_act))
    losses[:, 3] = rng.integers(0, 2, horizon)
    _, tr = traced(
        NormalHedgeDT(), Replay(path=save_matrix(tmp_path, losses)), tmp_path, horizon=300
    )
    big_r, big_c = np.zeros(n_act), np.zeros(n_act)
    for t in range(horizon):
        w = np.array([ada_nh_weight(big_r[i], big_c[i]) for i in range(n_act)])
        p = w / w.sum()
        np.testing.assert_allclose(tr["probs"][0, t], p, rtol=0, atol=LITERAL_ATOL)
        big_r += p @ losses[t] - losses[t]
        big_c += 1.0  # |r|^0


def test_c10_realized_state_differs_from_expected(tmp_path):
    # C10: NH.DT's p-sequence depends on whether the state uses p·ℓ or ℓ_{I_t}
    rng = np.random.default_rng(27)
    path = save_matrix(tmp_path, rng.random((300, 5)))
    kw = {"horizon": 300, "replicates": 2, "seed": 9, "metrics": {"regret": {}}}
    _, exp_tr = traced(NormalHedgeDT(), Replay(path=path), tmp_path, **kw)
    _, real_tr = traced(NormalHedgeDT(state="realized"), Replay(path=path), tmp_path, **kw)
    np.testing.assert_array_equal(exp_tr["probs"][:, 0], real_tr["probs"][:, 0])  # both uniform
    assert np.abs(exp_tr["probs"] - real_tr["probs"]).max() > 1e-2


def test_shift_invariance_i1():
    # I1: ℓ_t → ℓ_t + c_t·1 leaves p unchanged (rounding aside: 1e-11)
    rng = np.random.default_rng(28)
    horizon, n_act = 500, 6
    base = 0.5 * rng.random((horizon, n_act))
    shifted = base + 0.5 * rng.random((horizon, 1))
    spec = GameSpec("experts", n_act, horizon)
    p0 = play_blocks(NormalHedgeDT(), base[None], spec, [horizon])
    p1 = play_blocks(NormalHedgeDT(), shifted[None], spec, [horizon])
    np.testing.assert_allclose(p1, p0, rtol=0, atol=1e-11)


def test_permutation_equivariance_i2():
    rng = np.random.default_rng(29)
    losses = rng.random((1, 300, 7))
    perm = rng.permutation(7)
    spec = GameSpec("experts", 7, 300)
    p0 = play_blocks(NormalHedgeDT(), losses, spec, [300])
    p1 = play_blocks(NormalHedgeDT(), losses[:, :, perm], spec, [300])
    np.testing.assert_allclose(p1, p0[:, :, perm], rtol=0, atol=P_ATOL)


def test_not_scale_invariant_i3():
    # I3 [V for NH.DT]: ℓ → λℓ changes p (the ±1 offsets and the 3t scale are absolute)
    rng = np.random.default_rng(30)
    losses = rng.random((1, 300, 5))
    spec = GameSpec("experts", 5, 300)
    p0 = play_blocks(NormalHedgeDT(), losses, spec, [300])
    for lam in (0.5, 0.1):
        p1 = play_blocks(NormalHedgeDT(), lam * losses, spec, [300])
        assert np.abs(p1 - p0).max() > 1e-3, lam


def test_structure_u9_u10_u13_u14(tmp_path):
    rng = np.random.default_rng(31)
    horizon, n_act = 400, 6
    losses = rng.integers(0, 3, (horizon, n_act)) / 2.0
    losses[:, 5] = losses[:, 4]  # duplicate experts (U13)
    losses[10::9] = 0.3  # constant rounds: NOT no-ops for NH.DT (U14 exception, §1.16.9)
    _, tr = traced(
        NormalHedgeDT(), Replay(path=save_matrix(tmp_path, losses)), tmp_path, horizon=400
    )
    p, big_r = tr["probs"][0], regrets_from_trace(tr)[0]
    np.testing.assert_array_equal(p[0], np.full(n_act, 1.0 / n_act))  # U9
    clear = np.abs(big_r[:-1] + 1.0) > 1e-9
    np.testing.assert_array_equal((p == 0.0)[clear], (big_r[:-1] <= -1.0)[clear])  # U10
    np.testing.assert_array_equal(p[:, 4], p[:, 5])  # U13
    # the regrets do not move in a constant round, yet p does (the denominator 3t advances)
    changed = [np.abs(p[t + 1] - p[t]).max() for t in range(10, horizon - 1, 9)]
    assert max(changed) > 1e-4
    np.testing.assert_allclose(big_r[11::9], big_r[10:-1:9], rtol=0, atol=1e-13)


@pytest.mark.parametrize("state", ["expected", "realized"])
def test_simplex_and_pure_predict(state):
    rng = np.random.default_rng(32)
    losses = rng.random((4, 300, 9))
    player = NormalHedgeDT(state=state)
    spec = GameSpec("experts", 9, 300, n_replicates=4)
    player.reset(spec, [None] * 4)
    for j in range(300):
        p = player.predict()
        np.testing.assert_array_equal(p, player.predict())  # pure
        assert (p >= 0).all() and np.abs(p.sum(axis=1) - 1).max() <= 1e-12
        player.update(losses[:, j], actions=rng.integers(0, 9, 4))
