"""Oracle tests of KT coin-betting experts (``arena.players.kt_experts``): Orabona & Pál (2016),
Algorithm 2 (KT-LEA), and Orabona & Pál 2016; Orabona & Pál 2016, Algorithm 2.

Constants are copied from the sources with citations (no external file is read at test time).
Deterministic inequalities use ``lhs <= rhs + 1e-9·max(1, |rhs|)`` (our tolerance convention).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammaln

from arena import GameSpec
from arena.adversaries.replay import Replay
from arena.apps.hydra_support import generated_node
from arena.errors import ConfigError
from arena.metrics.base import exact_quantile_rank
from arena.params import validate_params
from arena.players.kt_experts import KTExperts, kt_coin_betting, kt_log_potential
from tests.helpers import assert_below, check_declared, metric_table, save_matrix, traced
from tests.helpers.experts import (
    assert_simplex,
    loss_matrices,
    play_blocks,
    play_catalog,
    play_loop,
    spec_for,
)

P_ATOL = 1e-10
"""The transcription forms the paper's coin ``g_i − ⟨g, p⟩`` from rewards ``g = 1 − l``; the player
forms ``p·l − l_i``; these differ by rounding (~1e-16 per round) that the wealth recursion carries
multiplicatively over 200 rounds (factors ≤ 2): far below 1e-10, which still catches any error
in the bet, the clipping or the fallback to π."""

POTENTIAL_RTOL = 1e-9
"""Orabona & Pál 2016: log-wealth against the lgamma form of log F_T, tolerance 1e-9."""


def literal_kt_lea(losses, prior, delta):
    """Orabona & Pál (2016) Algorithm 2, literally, for one game of (T, N) losses in [0, 1]:
    w_{t,i} = (Σ_{j<t} g̃_{j,i})/(t + δ) · (1 + Σ_{j<t} g̃_{j,i} w_{j,i}); p̂ = π [w]_+;
    p = p̂/|p̂| or π; rewards g = 1 − l; g̃_i = g_i − ⟨g, p⟩, or [g_i − ⟨g, p⟩]_+ when w_i ≤ 0.
    Plus the player's documented tie rule: a coin sum within 1e-12·t of 0 counts as exactly 0
    (with {0, 1} losses exact-arithmetic zeros are common, and the sign of a bet decides p)."""
    horizon, n = losses.shape
    coin_sums, gains = [0.0] * n, [0.0] * n
    out = np.empty((horizon, n))
    for t in range(1, horizon + 1):
        w = [coin_sums[i] / (t + delta) * (1.0 + gains[i]) for i in range(n)]
        p_hat = [prior[i] * max(w[i], 0.0) for i in range(n)]
        total = sum(p_hat)
        p = [x / total for x in p_hat] if total > 0 else list(prior)
        out[t - 1] = p
        g = [1.0 - losses[t - 1][i] for i in range(n)]
        gp = sum(g[i] * p[i] for i in range(n))
        for i in range(n):
            c = g[i] - gp
            if w[i] <= 0:
                c = max(c, 0.0)
            gains[i] += c * w[i]
            coin_sums[i] += c
            if abs(coin_sums[i]) <= 1e-12 * t:
                coin_sums[i] = 0.0
    return out


CASES = [
    ({}, None),
    ({"delta": 0.0}, None),
    ({"delta": 7.5}, None),
    ({"prior": [0.4, 0.3, 0.2, 0.1]}, [0.4, 0.3, 0.2, 0.1]),
]


# ----------------------------------------------------------------------------------------------
# 1. literal transcription


@pytest.mark.parametrize(("params", "prior"), CASES, ids=["half", "anytime", "delta7.5", "prior"])
def test_matches_literal_transcription(params, prior, tmp_path):
    horizon, n_act = 200, 4
    mats = loss_matrices(np.random.default_rng(6), horizon, n_act)
    losses = np.stack(list(mats.values()))
    prior = prior or [1.0 / n_act] * n_act
    delta = params.get("delta", horizon / 2)
    want = np.stack([literal_kt_lea(m, prior, delta) for m in mats.values()])
    player = KTExperts(**params)
    spec = spec_for(losses)
    np.testing.assert_allclose(play_loop(player, losses, spec), want, rtol=0, atol=P_ATOL)
    for cuts in ([1], [2, 3, 90], list(range(0, horizon, 11))):
        np.testing.assert_allclose(
            play_blocks(player, losses, spec, cuts=cuts), want, rtol=0, atol=P_ATOL
        )
    _, tr = traced(
        player,
        Replay(path=save_matrix(tmp_path, losses)),
        tmp_path,
        horizon=horizon,
        replicates=3,
        metrics={"regret": {}},
    )
    np.testing.assert_allclose(tr["probs"], want, rtol=0, atol=P_ATOL)
    assert_simplex(tr["probs"], "engine trace")


def test_first_rounds_by_hand():
    # Algorithm 2: all bets are 0 at t = 1, so p_1 = π (the fallback); after l_1 = (0, 1) the
    # coins are ([g_1 − ⟨g,p⟩]_+, [·]_+) = (½, 0) (bets ≤ 0 clip at 0), so at t = 2 copy 0 bets
    # ½/(2 + δ) · 1 > 0 and copy 1 bets 0: p_2 = (1, 0)
    p = KTExperts(delta=0.0)
    p.reset(GameSpec("experts", 2, 5), [None])
    assert p.predict()[0].tolist() == [0.5, 0.5]
    p.update(np.array([[0.0, 1.0]]))
    assert p.coin_sums()[0].tolist() == [0.5, 0.0]
    assert p.wealth()[0].tolist() == [1.0, 1.0]
    assert p.predict()[0].tolist() == [1.0, 0.0]


# ----------------------------------------------------------------------------------------------
# 2. KT wealth = KT potential (Orabona & Pál 2016)


def test_golden_kt_bettor():
    # three +1 coins from wealth 1: bets 0, ½, ⅔ of the wealth → 1, 3/2, 5/2; and
    # F_3(3) = 2³ Γ(7/2) Γ(1/2) / (π 3!) = 8 (15√π/8) √π / (6π) = 5/2 (Orabona & Pál 2016)
    assert kt_coin_betting([1.0, 1.0, 1.0]).tolist() == [1.0, 1.0, 1.5, 2.5]
    assert math.exp(kt_log_potential(3, 3.0)) == pytest.approx(2.5, rel=1e-14)


@pytest.mark.parametrize("delta", [0.0, 2.5, 50.0])
@pytest.mark.parametrize("eps", [1.0, 0.3])
def test_wealth_equals_potential_on_pm1_coins(delta, eps):
    # Orabona & Pál 2016 / Orabona & Pál Thm "KT potential": on ±1 coins Wealth_T = F_T(Σ c) exactly
    # (with the δ-shifted potential and β_t = Σc/(t + δ)); for c ∈ [−1, 1], Wealth_T ≥ F_T(Σ c).
    # 100 sequences per (δ, ε) here, 300 in total per δ pair; lengths up to 200.
    rng = np.random.default_rng(int(delta * 10 + eps * 100))
    for _ in range(50):
        horizon = int(rng.integers(1, 201))
        coins = rng.choice([-1.0, 1.0], size=horizon, p=[0.3, 0.7] if rng.random() < 0.5 else None)
        wealth = kt_coin_betting(coins, delta, eps)
        sums = np.concatenate([[0.0], np.cumsum(coins)])
        log_f = np.array([kt_log_potential(t, sums[t], delta, eps) for t in range(horizon + 1)])
        err = np.abs(np.log(wealth) - log_f) / np.maximum(1.0, np.abs(log_f))
        assert err.max() <= POTENTIAL_RTOL, err.max()
        real = rng.uniform(-1.0, 1.0, size=horizon)
        wealth = kt_coin_betting(real, delta, eps)
        sums = np.concatenate([[0.0], np.cumsum(real)])
        log_f = np.array([kt_log_potential(t, sums[t], delta, eps) for t in range(horizon + 1)])
        assert_below(log_f, np.log(wealth), f"wealth ≥ F, δ={delta}")


def test_kt_betting_fraction_identity():
    # Orabona & Pál 2016: (F_t(x+1) − F_t(x−1))/(F_t(x+1) + F_t(x−1)) = x/(t + δ) for |x| < t + δ −
    # 1 (+ 1)
    rng = np.random.default_rng(7)
    for _ in range(300):
        t, delta = int(rng.integers(1, 500)), float(rng.choice([0.0, 1.0, 40.5]))
        x = rng.uniform(-(t - 1), t - 1) if t > 1 else 0.0
        hi, lo = kt_log_potential(t, x + 1, delta), kt_log_potential(t, x - 1, delta)
        ratio = math.tanh((hi - lo) / 2)  # (e^a − e^b)/(e^a + e^b)
        assert ratio == pytest.approx(x / (t + delta), rel=1e-9, abs=1e-12)


def potential_invariants(losses, player, adaptive=False):
    """Play round by round and check, after every round (Orabona & Pál, proof of Thm "Regret
    Bound for Experts"): Σ_i π_i g̃_{t,i} w_{t,i} = Σ_i π_i ΔW_i ≤ 0; each W_i ≥ F_t(G̃_i)
    (δ-shifted, ε = 1); Σ_i π_i F_t(G̃_{t,i}) ≤ 1; W_i ≤ 1/π_i."""
    n_rep, horizon, n = losses.shape
    p = player.clone()
    p.reset(spec_for(losses), [None] * n_rep)
    prior = np.full(n, 1.0 / n) if player.prior is None else np.asarray(player.prior)
    delta = p.shift()
    for t in range(1, horizon + 1):
        before = p.wealth()
        probs = p.predict()
        lt = losses[:, t - 1]
        if adaptive:  # the greedy adversary: loss 1 on the heaviest expert
            lt = (probs >= probs.max(axis=1, keepdims=True) - 1e-12).astype(float)
        p.update(lt)
        after, sums = p.wealth(), p.coin_sums()
        assert_below((after - before) @ prior, 0.0, f"Σ π g̃ w ≤ 0 at t={t}")
        log_f = kt_log_potential(t, sums, delta)
        assert_below(log_f, np.log(after), f"W ≥ F_t(G̃) at t={t}")
        assert_below(np.exp(log_f) @ prior, 1.0, f"Σ π F_t ≤ 1 at t={t}")
        assert_below(after, 1.0 / prior, f"W ≤ 1/π at t={t}")


@pytest.mark.parametrize(("params", "prior"), CASES, ids=["half", "anytime", "delta7.5", "prior"])
def test_potential_invariants_round_by_round(params, prior):
    rng = np.random.default_rng(8)
    mats = loss_matrices(rng, 300, 4)
    losses = np.stack(list(mats.values()))
    player = KTExperts(**params)
    potential_invariants(losses, player)
    potential_invariants(losses, player, adaptive=True)


# ----------------------------------------------------------------------------------------------
# 3. declared bounds (Orabona & Pál 2016, Algorithm 2) on the catalog


def own_bound(kl, t, horizon, delta):
    """Row 15 at δ = T/2 (constant in t); for a numeric δ the corollary's proof gives
    h_t^{−1}(KL) = sqrt(2(t+δ)(KL + ln(e√π) + ½ ln((t+δ)/(1+δ)))) (Orabona & Pál 2016)."""
    if delta == "half_horizon":
        return math.sqrt(3 * horizon * (3 + kl))
    s = t + delta
    return math.sqrt(2 * s * (kl + 1 + 0.5 * math.log(math.pi) + 0.5 * math.log(s / (1 + delta))))


@pytest.mark.parametrize(
    ("params", "n_act", "horizon"),
    [
        ({}, 2, 2000),
        ({}, 10, 200),
        ({}, 50, 2000),
        ({"delta": 0.0}, 10, 2000),
        ({"prior": [0.5, 0.3, 0.1, 0.05, 0.05], "delta": 100.0}, 5, 500),
    ],
)
def test_declared_bounds_hold_on_the_catalog(params, n_act, horizon, tmp_path):
    player = KTExperts(**params)
    metrics = {"regret": {}, "quantile_regret": {"eps": [0.01, 0.1, 0.25]}, "bound": {}}
    prior = np.asarray(params.get("prior", np.full(n_act, 1.0 / n_act)))
    neg = np.sort(-np.log(prior))[::-1]
    delta = params.get("delta", "half_horizon")
    checked = 0
    for label, rows in play_catalog(player, tmp_path, n_act, horizon, metrics):
        checked += check_declared(rows, f"{params} {label} N={n_act} T={horizon}")
        ts = np.unique(rows.t.to_numpy())
        declared = metric_table(rows, "bound:regret")[1]
        own = [own_bound(neg[0], t, horizon, delta) for t in ts]
        np.testing.assert_allclose(declared, np.broadcast_to(own, declared.shape), rtol=1e-12)
        # √(3T(3 + ln N)) (Orabona & Pál 2016)
        if delta == "half_horizon" and "prior" not in params:
            assert declared[0, 0] == pytest.approx(math.sqrt(3 * horizon * (3 + math.log(n_act))))
        for eps in (0.01, 0.1, 0.25):
            k = exact_quantile_rank(eps, n_act)
            kl = neg[:k].mean() - math.log(k)  # u uniform on the k largest-regret experts
            declared = metric_table(rows, "bound:quantile_regret", eps)[1]
            own = [own_bound(kl, t, horizon, delta) for t in ts]
            np.testing.assert_allclose(declared, np.broadcast_to(own, declared.shape), rtol=1e-12)
    assert checked > 0


# ----------------------------------------------------------------------------------------------
# 4. invariances (metamorphic tests)


def test_shift_permutation_duplicates_and_range(tmp_path):
    rng = np.random.default_rng(12)
    base = rng.random((300, 4)) / 2
    shift = rng.random((300, 1)) / 2
    perm = rng.permutation(4)
    player = KTExperts()
    spec = spec_for(base[None])
    a = play_loop(player, base[None], spec)
    # per-round shift: the coins p·l − l_i do not move (up to rounding of p·(l + c))
    np.testing.assert_allclose(play_loop(player, (base + shift)[None], spec), a, atol=1e-12)
    np.testing.assert_allclose(
        play_loop(player, base[None, :, perm], spec), a[:, :, perm], atol=1e-12
    )
    # duplicates: copies of expert 0 with the prior split behave like one expert with the sum
    dup = np.concatenate([base, base[:, :1], base[:, :1]], axis=1)
    prior = [0.25 / 3, 0.25, 0.25, 0.25, 0.25 / 3, 0.25 / 3]
    b = play_loop(KTExperts(prior=prior), dup[None], spec_for(dup[None]))
    merged = np.concatenate([b[..., [0, 4, 5]].sum(axis=-1, keepdims=True), b[..., 1:4]], axis=-1)
    np.testing.assert_allclose(merged, a, rtol=0, atol=1e-12)
    # declared range: l' = (l − lo)/(hi − lo) gives the same p; regret and bounds scale
    lo, hi = -2.0, 2.0
    kw = {"horizon": 300, "metrics": {"regret": {}, "bound": {}}}
    rows_a, ta = traced(player, Replay(path=save_matrix(tmp_path, base)), tmp_path, **kw)
    wide = Replay(path=save_matrix(tmp_path, lo + (hi - lo) * base), loss_range=[lo, hi])
    rows_b, tb = traced(player, wide, tmp_path, **kw)
    np.testing.assert_allclose(tb["probs"], ta["probs"], rtol=0, atol=1e-12)
    for metric in ("regret", "bound:regret"):
        np.testing.assert_allclose(
            metric_table(rows_b, metric)[1], 4.0 * metric_table(rows_a, metric)[1], rtol=1e-9
        )


def test_simplex_purity_and_errors():
    losses = np.random.default_rng(13).integers(0, 2, (4, 400, 7)).astype(float)
    assert_simplex(play_loop(KTExperts(), losses, spec_for(losses)), "kt")
    spec = GameSpec("experts", 3, 10)
    for params, name, allowed in [  # refused by the declaration, before any reset
        ({"prior": [0.5, 0.5, 0.0]}, "prior", "each item a real number in (0, inf)"),
        ({"delta": -1.0}, "delta", "a real number in [0, inf) or one of 'half_horizon'"),
        ({"delta": "quarter"}, "delta", "one of 'half_horizon'"),
    ]:
        with pytest.raises(ConfigError, match=name) as err:
            validate_params(KTExperts(**params))
        assert err.value.component == "player kt_experts" and allowed in str(err.value)
    for params, what in [  # the prior's length is the game's N; its sum is not per item
        ({"prior": [0.5, 0.5]}, "one value per expert .n_actions = 3., got 2"),
        ({"prior": [0.5, 0.5, 0.5]}, "must sum to 1"),
    ]:
        player = KTExperts(**params)
        validate_params(player)
        with pytest.raises(ConfigError, match=what) as err:
            player.reset(spec, [None])
        assert err.value.component == "player kt_experts" and err.value.parameter == "prior"
    with pytest.raises(ConfigError, match="horizon"):
        KTExperts().reset(GameSpec("experts", 3, None), [None])
    KTExperts(delta=0.0).reset(GameSpec("experts", 3, None), [None])  # anytime: fine


def test_potential_helper_matches_gamma_form():
    # kt_log_potential is the δ-shifted form of the paper; δ = 0 reduces to 2^t Γ Γ/(π t!)
    t, x = 9, 2.5
    plain = t * math.log(2) + gammaln((t + 1 + x) / 2) + gammaln((t + 1 - x) / 2)
    plain -= math.log(math.pi) + gammaln(t + 1)
    assert kt_log_potential(t, x) == pytest.approx(plain, rel=1e-13)


def test_hydra_config_lists_every_parameter():
    # no YAML file: `arena run player=kt_experts` composes the node generated from the signature
    node = generated_node("player", "kt_experts")
    assert node.pop("_target_") == "arena.players.kt_experts.KTExperts"
    assert node == KTExperts.param_defaults()
