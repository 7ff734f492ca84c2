"""Tests of CBCE (arena/players/cbce.py): a literal transcription of the sleeping KT coin-betting
meta-learner of Jun et al. (2017) over one copy per covering interval, golden values, the KT
potential facts the declared bound uses, the bound on several adversaries, the gain over plain
Hedge on shifting experts, memory and errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from arena import play
from arena.errors import ConfigError
from arena.players.ada_normal_hedge_tv import geometric_levels
from arena.players.cbce import CBCE, kt_log_potential, log_prior, multiplicity
from tests.helpers import check_declared
from tests.helpers.experts import spec, step_player

TOL = 1e-12


def hedge_fixed(cum, eta):
    w = [math.exp(-eta * (c - min(cum))) for c in cum]
    return [x / sum(w) for x in w]


def transcription(losses, base_eta):
    """CBCE from its definition, plain Python: one sleeping expert per covering interval
    J = [a, a + 2^k − 1] (its own Hedge(base_eta) copy and KT bettor), prior 1/(a²(1+⌊log₂ a⌋)),
    p ∝ π_J [w_J]_+ over the awake J (the prior if all are 0)."""
    n_rounds, n = losses.shape
    experts = {}  # (a, k) -> dict(cum, sum_g, wealth, n)
    out = []
    for t in range(1, n_rounds + 1):
        for k in range(t.bit_length()):
            if t % (1 << k) == 0:
                experts[(t, k)] = {"cum": [0.0] * n, "sum_g": 0.0, "wealth": 1.0, "n": 0}
        awake = [j for j in experts if j[0] <= t <= j[0] + (1 << j[1]) - 1]
        prior = {j: 1.0 / (j[0] ** 2 * (1 + math.floor(math.log2(j[0])))) for j in awake}
        bet = {j: experts[j]["sum_g"] / (experts[j]["n"] + 1) * experts[j]["wealth"] for j in awake}
        hat = {j: prior[j] * max(bet[j], 0.0) for j in awake}
        total = sum(hat.values())
        v = {j: hat[j] / total for j in awake} if total > 0 else {
            j: prior[j] / sum(prior.values()) for j in awake}  # fmt: skip
        q = {j: hedge_fixed(experts[j]["cum"], base_eta) for j in awake}
        p = [sum(v[j] * q[j][i] for j in awake) for i in range(n)]
        out.append(p)
        ell = losses[t - 1]
        h = {j: sum(q[j][i] * ell[i] for i in range(n)) for j in awake}
        for j in awake:
            e = experts[j]
            r = sum(v[b] * (h[b] - h[j]) for b in awake)  # ĥ_t − h_{t,j}
            g = r if bet[j] > 0 else max(r, 0.0)
            e["wealth"] += g * bet[j]
            e["sum_g"] += g
            e["n"] += 1
            e["cum"] = [c + x for c, x in zip(e["cum"], ell, strict=True)]
    return np.array(out)


@pytest.mark.parametrize("n_act", [1, 2, 4])
def test_matches_transcription(n_act):
    rng = np.random.default_rng(10 + n_act)
    losses = rng.random((70, n_act))
    losses[:, 0] = np.round(losses[:, 0])
    want = transcription(losses, 0.5)
    player = CBCE("hedge", {"eta": 0.5})
    player.reset(spec(n_act, 70), [np.random.default_rng(0)])
    np.testing.assert_allclose(step_player(player, losses[None])[0], want, rtol=0, atol=TOL)


def test_golden_first_rounds():
    # round 1: the newborn bets 0, so p_1 is the prior's copy: uniform. Round 2 after (0, 1):
    # copy 1 is dead (level 0); copy 2 is the newborn: p_2 uniform again. Round 3 after (0, 1):
    # copy 2 (Hedge η = ln 3) played (½, ½), so r = 0 for it, w stays 0; copy 3 is newborn:
    # prior fallback over the awake intervals [2,3] (π ∝ 1/(4·2)) and [3,3] (π ∝ 1/(9·2)),
    # q = (3/4, 1/4) and (½, ½).
    player = CBCE("hedge", {"eta": math.log(3.0)})
    player.reset(spec(2, 8), [None])
    np.testing.assert_allclose(player.predict(), [[0.5, 0.5]], rtol=0, atol=TOL)
    player.update(np.array([[0.0, 1.0]]))
    np.testing.assert_allclose(player.predict(), [[0.5, 0.5]], rtol=0, atol=TOL)
    player.update(np.array([[0.0, 1.0]]))
    a, b = 1 / 8, 1 / 18
    want = (a * np.array([0.75, 0.25]) + b * np.array([0.5, 0.5])) / (a + b)
    np.testing.assert_allclose(player.predict()[0], want, rtol=0, atol=TOL)


def test_prior_and_multiplicity():
    assert math.exp(-log_prior(1)) == 1.0 and math.exp(-log_prior(8)) == pytest.approx(256.0)
    for t in range(1, 300):
        counts = {}
        for _, a in geometric_levels(t):
            counts[a] = counts.get(a, 0) + 1
        for a, c in counts.items():
            assert multiplicity(a, t) == c


def test_kt_potential_facts_used_by_the_bound():
    # KT wealth ≥ F_n(Σ g) for coins in [−1, 1] (equality for ±1); F_n(x) ≥ F_n(0) e^{x²/(2(n+1))};
    # F_n(0) nonincreasing in n
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(1, 80))
        coins = rng.choice([-1.0, 1.0], n) if rng.random() < 0.5 else rng.uniform(-1, 1, n)
        wealth, total = 1.0, 0.0
        for k, c in enumerate(coins, start=1):
            wealth += c * total / k * wealth
            total += c
        pot = kt_log_potential(n, total)
        assert math.log(wealth) >= pot - 1e-9
        x = rng.uniform(-n, n)
        assert kt_log_potential(n, x) >= kt_log_potential(n, 0.0) + x * x / (2 * (n + 1)) - 1e-9
    vals = [kt_log_potential(n, 0.0) for n in range(0, 500)]
    assert all(b <= a + 1e-12 for a, b in itertools.pairwise(vals))


def test_wealth_potential_invariant():
    # Σ_J π_J Wealth_J ≤ Σ_J π_J: the meta part of the bound rests on it (checked with the
    # transcription's experts through the player's own wealth of the live copies)
    rng = np.random.default_rng(9)
    player = CBCE("hedge", {"eta": 0.3})
    player.reset(spec(3, 400), [None])
    for _ in range(400):
        player.update(rng.random((1, 3)))
        inv_prior = np.exp(-np.array([log_prior(a) for a in player.live_copies()]))
        assert (player.wealth() <= inv_prior[None] * math.pi**2 / 6 + 1e-9).all()


ADVERSARIES = [
    ("shifting_experts", {"n_switches": 4, "gap": 0.4}),
    ("planted_windows", {}),
    ("greedy", {}),
    ("bernoulli", {"gap": 0.2}),
]
METRICS = {"regret": {}, "adaptive_regret": {}, "bound": {}}


@pytest.mark.parametrize(("name", "params"), ADVERSARIES)
def test_declared_bound_holds(name, params):
    for player in (CBCE(), CBCE("hedge", {"eta": "anytime"}), CBCE("ada_hedge")):
        rows = play(player, name, n_actions=3, horizon=300, replicates=2, seed=4,
                    adversary_params=params, metrics=METRICS)  # fmt: skip
        assert rows.metric.eq("bound:adaptive_regret").any()
        assert check_declared(rows, f"{player!r} {name}") > 0


def test_meta_bound_holds_on_every_interval():
    # the meta part alone, interval by interval: regret of CBCE to each copy's interval J on every
    # prefix [a, e] ≤ sqrt(2(n+1)(ln(1/π_J) − ln F_n(0))), π_J normalized by π²/6
    rng = np.random.default_rng(12)
    horizon, n_act = 256, 3
    losses = rng.random((horizon, n_act))
    player = CBCE("hedge", {"eta": 0.5})
    player.reset(spec(n_act, horizon), [None])
    hist = {}  # start -> list of (h_copy, mix)
    for t in range(horizon):
        q = player.copy_distributions()[0]
        p = player.predict()[0]
        for a, qa in zip(player.live_copies(), q, strict=True):
            hist.setdefault(a, []).append((qa @ losses[t], p @ losses[t]))
        player.update(losses[t][None])
    for a, seq in hist.items():
        r = np.cumsum([m - h for h, m in seq])
        n = np.arange(1, len(seq) + 1)
        c = math.log(math.pi**2 / 6) - log_prior(a)
        pot0 = np.array([kt_log_potential(k, 0.0) for k in n])
        assert (r <= np.sqrt(2 * (n + 1) * (c - pot0)) + 1e-9).all()


def test_beats_hedge_on_shifting_experts():
    kw = {"n_actions": 5, "horizon": 2000, "replicates": 4, "seed": 1,
          "adversary_params": {"n_switches": 8, "gap": 0.4},
          "metrics": {"adaptive_regret": {}, "sa_regret": {"tau": [250]}}}  # fmt: skip
    hedge = play("hedge", "shifting_experts", **kw)
    cbce = play(CBCE(), "shifting_experts", **kw)
    h = hedge[hedge.t == 2000].groupby("metric").value.mean()
    c = cbce[cbce.t == 2000].groupby("metric").value.mean()
    # measured: hedge 105.85 / 96.25, cbce 28.36 / 28.36 (adaptive / sa τ=250)
    assert c["adaptive_regret"] < 0.5 * h["adaptive_regret"]
    assert c["sa_regret"] < 0.5 * h["sa_regret"]


def test_live_copies_logarithmic():
    player = CBCE("hedge", {"eta": 0.2})
    player.reset(spec(2, None), [None])
    rng = np.random.default_rng(1)
    for t in range(1, 1500):
        assert len(player.live_copies()) <= t.bit_length()
        player.update(rng.random((1, 2)))


def test_errors_name_the_component():
    with pytest.raises(ConfigError, match=r"cbce.*base.*exp3.*not an experts player"):
        play(CBCE("exp3"), "bernoulli", n_actions=2, horizon=5)
    with pytest.raises(ConfigError, match=r"cbce.*base_params"):
        play(CBCE("hedge", {"eta": -1.0}), "bernoulli", n_actions=2, horizon=5)
