"""Tests of the lower-bound constructions added to arena/adversaries/lower_bound.py.

Reference values are computed by us (exact dynamic programs or simulations) for the COMB adversary
(Gravin, Peres & Sivan 2016), Cover's V_T (Cover 1965), the two-phase adversary against fixed-η
Hedge, the k-shift lower bound (Herbster & Warmuth 1998) and planted windows (Daniely et al.
2015).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from arena import GameSpec, play
from arena.adversaries.lower_bound import (
    AntiHedge,
    Comb,
    PlantedBlocks,
    PlantedWindows,
    comb_values,
    cover_values,
)
from arena.adversaries.stochastic import fair_coin_lower_bound
from arena.errors import ConfigError
from arena.params import validate_params
from arena.players.hedge import Hedge
from tests.helpers import clt_band, last_values, read_trace, rngs
from tests.helpers.experts import assert_split_invariant

COMB_TABLE = {  # COMB values (Gravin, Peres & Sivan 2016), exact DP computed by us
    2: {10: 1.2305, 50: 2.8069, 100: 3.9795, 400: 7.9739},
    3: {10: 1.6729, 50: 3.7553, 100: 5.3149, 400: 10.6363},
    4: {10: 1.9492, 50: 4.4232, 100: 6.2615, 400: 12.5305},
}

# ----------------------------------------------------------------------------------------------
# COMB


@pytest.mark.parametrize("k", [2, 3, 4])
def test_comb_dp_matches_table(k):
    values, t_max = comb_values(k, 400)
    assert t_max == 400
    for t, want in COMB_TABLE[k].items():
        assert values[t] == pytest.approx(want, abs=5e-5), (k, t)


def test_cover_values_exact():
    """V_T of Cover 1965: 1/2, 1/2, 3/4, 3/4, 15/16, …, 315/256; V_100, V_1000."""
    v = cover_values(1000)
    want = [0.5, 0.5, 0.75, 0.75, 15 / 16, 15 / 16, 35 / 32, 35 / 32, 315 / 256, 315 / 256]
    np.testing.assert_allclose(v[1:11], want, rtol=1e-15)
    assert v[100] == pytest.approx(3.979462, abs=5e-7)
    assert v[1000] == pytest.approx(12.612509, abs=5e-7)


def comb_brute_force(k: int, horizon: int) -> float:
    """E[R_T] by enumerating all 2^T coin sequences of the comb (ties by index)."""
    total = 0.0
    for coins in itertools.product((0, 1), repeat=horizon):
        cum = np.zeros(k)
        for c in coins:
            order = np.argsort(cum, kind="stable")
            loss = np.zeros(k)
            loss[order[c::2]] = 1.0
            cum += loss
        total += horizon / 2 - cum.min()
    return total / 2**horizon


@pytest.mark.parametrize(("k", "horizon"), [(3, 10), (4, 9), (5, 8)])
def test_comb_dp_equals_enumeration(k, horizon):
    values, _ = comb_values(k, horizon)
    assert values[horizon] == pytest.approx(comb_brute_force(k, horizon), abs=1e-12)


def test_comb_dp_budget_gives_monotone_fallback():
    values, t_max = comb_values(8, 2000)
    assert t_max < 2000
    assert np.all(np.diff(values) >= -1e-12)  # the COMB value is nondecreasing in t
    adv = Comb()
    adv.reset(GameSpec("experts", 8, 2000), rngs(0, 1))
    late = adv.lower_bounds(2000)[("regret", math.nan)]
    assert late == pytest.approx(values[t_max])


def test_comb_losses_structure_and_split_invariance():
    spec = GameSpec("experts", 5, 60, n_replicates=4)
    losses = assert_split_invariant(Comb(), spec, seed=2)
    assert set(np.unique(losses)) <= {0.0, 1.0}
    hits = losses.sum(axis=2)
    assert set(np.unique(hits)) <= {2.0, 3.0}  # ranks 1, 3, 5 or ranks 2, 4
    # the leader (least cumulative loss, lowest index among ties) is hit iff three are hit
    cum = np.concatenate([np.zeros((4, 1, 5)), np.cumsum(losses, axis=1)[:, :-1]], axis=1)
    leader = np.argmin(cum, axis=2)
    leader_hit = np.take_along_axis(losses, leader[..., None], axis=2)[..., 0]
    np.testing.assert_array_equal(leader_hit == 1, hits == 3)


def test_comb_is_oblivious(tmp_path):
    seen = []
    for player in ("hedge", "ftl"):
        path = tmp_path / f"{player}.parquet"
        play(
            player,
            Comb(),
            n_actions=3,
            horizon=40,
            replicates=3,
            seed=1,
            trace_path=path,
            metrics={"loss": {}},
        )
        seen.append(read_trace(path)["losses"])
    np.testing.assert_array_equal(seen[0], seen[1])


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("player", ["hedge", "ftl"])
def test_comb_mean_regret_matches_exact_value(k, player):
    """Any non-anticipating player's mean regret is the COMB value (non-anticipation: every player's
    expected loss is ½ per round)."""
    rows = play(
        player,
        Comb(),
        n_actions=k,
        horizon=100,
        replicates=4000,
        seed=11,
        checkpoints=[10, 50, 100],
        metrics={"regret": {}, "lower_bound": {}},
    )
    for t, want in COMB_TABLE[k].items():
        if t > 100:
            continue
        mean, half = clt_band(last_values(rows, "regret", t=t))
        assert abs(mean - want) <= half, (k, player, t, mean, half)
        declared = last_values(rows, "lower_bound:regret", t=t)
        np.testing.assert_allclose(declared, want, atol=5e-5)


# ----------------------------------------------------------------------------------------------
# anti-Hedge


SPEC_C4 = [  # two-phase adversary: (T, N, η, forced regret, prediction)
    (10000, 10, 0.05, 94.4, 94.7),
    (10000, 100, 0.1, 163.0, 164.1),
    (20000, 50, math.sqrt(8 * math.log(50) / 20000), 179.5, 180.3),
]


@pytest.mark.parametrize(("horizon", "n", "eta", "forced", "prediction"), SPEC_C4)
def test_anti_hedge_forces_the_tabulated_regret(horizon, n, eta, forced, prediction):
    rows = play(
        Hedge(eta=eta),
        AntiHedge(eta=eta),
        n_actions=n,
        horizon=horizon,
        per_decade=5,
        metrics={"regret": {}, "lower_bound": {}, "bound": {}},
    )
    regret = rows[rows.metric == "regret"].set_index("t").value
    declared = rows[rows.metric == "lower_bound:regret"].set_index("t").value
    upper = math.log(n) / eta + eta * horizon / 8
    assert regret[horizon] == pytest.approx(forced, abs=0.1)
    assert regret[horizon] >= 0.85 * upper
    assert regret[horizon] <= upper
    # the declared bound holds at every checkpoint and is within 0.1 of the truth at T
    assert (declared <= regret + 1e-9).all()
    assert regret[horizon] - declared[horizon] <= 0.1
    adv = AntiHedge(eta=eta)
    adv.reset(GameSpec("experts", n, horizon), rngs(0, 1))
    assert adv.prediction(horizon) == pytest.approx(prediction, abs=0.05)


def test_anti_hedge_brief_target():
    """T = 10⁴, N = 10, η = 0.05: ≥ 85% of ln N/η + ηT/8 (94.4 vs 108.6, two-phase adversary)."""
    rows = play(
        Hedge(eta=0.05),
        AntiHedge(eta=0.05),
        n_actions=10,
        horizon=10000,
        checkpoints=[10000],
        metrics={"regret": {}},
    )
    assert rows.value.iloc[-1] >= 0.85 * (math.log(10) / 0.05 + 0.05 * 10000 / 8)


def test_anti_hedge_losses():
    adv = AntiHedge(eta=0.5, phase1=3)
    adv.reset(GameSpec("experts", 4, 8, n_replicates=2), rngs(0, 2))
    assert adv.phase1_length() == 3
    got = adv.losses_block(1, 8)[0]
    want = [[0, 0, 1, 1]] * 3 + [
        [0.5, 0, 1, 1],
        [0, 1, 1, 1],
        [1, 0, 1, 1],
        [0, 1, 1, 1],
        [1, 0, 1, 1],
    ]
    np.testing.assert_array_equal(got, want)
    assert_split_invariant(AntiHedge(eta=0.2), GameSpec("experts", 5, 80, n_replicates=2))
    a = AntiHedge(eta=0.1)
    a.reset(GameSpec("experts", 10, 10), rngs(0, 1))
    assert a.phase1_length() == math.ceil(30 * math.log(10))


@pytest.mark.parametrize(
    ("params", "bad"),
    [({"eta": 0.0}, "eta"), ({"eta": math.nan}, "eta"), ({"phase1": -1}, "phase1")],
)
def test_anti_hedge_bad_params(params, bad):
    with pytest.raises(ConfigError) as err:
        validate_params(AntiHedge(**params))
    assert err.value.parameter == bad and err.value.component == "adversary anti_hedge"


# ----------------------------------------------------------------------------------------------
# planted blocks


@pytest.mark.parametrize(
    ("n", "m", "want"), [(10, 0, 24.33), (10, 4, 54.35), (10, 9, 76.78), (100, 9, 124.76)]
)
def test_planted_blocks_declared_values(n, m, want):
    """k-shift lower bound (m+1)·LB(T/(m+1), N) (computed by us) at T = 1000 (2 decimals; 24.33 is
    24.3248 rounded twice)."""
    adv = PlantedBlocks(n_switches=m)
    adv.reset(GameSpec("experts", n, 1000, n_replicates=2), rngs(0, 2))
    got = adv.lower_bounds(1000)[("shifting_regret", float(m))]
    np.testing.assert_allclose(got, want, atol=6e-3)
    assert got[0] == pytest.approx((m + 1) * fair_coin_lower_bound(1000 // (m + 1), n))


def test_planted_blocks_partial_and_random_boundaries():
    adv = PlantedBlocks(n_switches=3, boundaries="random")
    spec = GameSpec("experts", 5, 200, n_replicates=3)
    adv.reset(spec, rngs(1, 3))
    for r, edges in enumerate(adv._edges):
        t = 150
        lengths = np.clip(np.minimum(edges[1:], t + 1) - edges[:-1], 0, None)
        assert lengths.sum() == t
        want = sum(fair_coin_lower_bound(int(v), 5) for v in lengths)
        assert adv.lower_bounds(t)[("shifting_regret", 3.0)][r] == pytest.approx(want)
    planted = PlantedBlocks(n_switches=3, gap=0.2)
    planted.reset(spec, rngs(1, 3))
    assert planted.lower_bounds(200) == {}
    mu = planted.oracle("means", 1, 200)
    assert ((mu == 0.3).sum(axis=2) == 1).all()  # one planted expert per round
    assert_split_invariant(planted, spec, seed=4)


@pytest.mark.slow
@pytest.mark.parametrize("boundaries", ["even", "random"])
def test_planted_blocks_force_the_shifting_bound_on_hedge(boundaries):
    rows = play(
        "hedge",
        PlantedBlocks(n_switches=4, boundaries=boundaries),
        n_actions=10,
        horizon=1000,
        replicates=200,
        seed=5,
        checkpoints=[300, 1000],
        metrics={"shifting_regret": {"k": [4]}, "lower_bound": {}},
    )
    for t in (300, 1000):
        mean, half = clt_band(last_values(rows, "shifting_regret", t=t, param=4))
        bound = last_values(rows, "lower_bound:shifting_regret", t=t, param=4).mean()
        assert mean + half >= bound, (t, mean, half, bound)


# ----------------------------------------------------------------------------------------------
# planted windows


def test_planted_windows_structure():
    adv = PlantedWindows(tau=10, n_windows=3, mode="switch", placement="random")
    spec = GameSpec("experts", 4, 90, n_replicates=3)
    adv.reset(spec, rngs(2, 3))
    mu = adv.oracle("means", 1, 90)
    starts = adv.window_starts()
    for r in range(3):
        a = adv._a[r]
        inside = np.zeros(90, dtype=bool)
        for w, s in enumerate(starts[r]):
            assert 1 + 30 * w < s <= 30 * (w + 1) - 10 + 1
            inside[s - 1 : s - 1 + 10] = True
            b = adv._b[r][w]
            assert b != a
            assert (mu[r, s - 1 : s + 9, b] == 0).all() and (mu[r, s - 1 : s + 9, a] == 1).all()
        assert (mu[r, ~inside, a] == 0).all()
        assert (mu[r, ~inside].sum(axis=1) == 3).all()
    losses = assert_split_invariant(adv, spec, seed=2)
    assert set(np.unique(losses)) <= {0.0, 1.0}
    assert adv.lower_bounds(90) == {}


def test_planted_windows_declared_value():
    adv = PlantedWindows(tau=100)
    adv.reset(GameSpec("experts", 10, 1000, n_replicates=2), rngs(0, 2))
    assert adv.lower_bounds(1000)[("sa_regret", 100.0)][0] == pytest.approx(7.678, abs=5e-4)
    assert adv.lower_bounds(900)[("sa_regret", 100.0)][0] == 0.0  # window starts at 901
    assert adv.lower_bounds(950)[("sa_regret", 100.0)][0] == pytest.approx(
        fair_coin_lower_bound(50, 10)
    )


@pytest.mark.slow
def test_planted_windows_force_lb_on_hedge():
    """Coins mode: mean SA(τ) regret ≥ LB(τ, N) for every player (Daniely et al. 2015)."""
    rows = play(
        "hedge",
        PlantedWindows(tau=50, n_windows=2, placement="random"),
        n_actions=10,
        horizon=600,
        replicates=300,
        seed=6,
        checkpoints=[600],
        metrics={"sa_regret": {"tau": [50]}, "lower_bound": {}},
    )
    mean, half = clt_band(last_values(rows, "sa_regret", param=50))
    bound = last_values(rows, "lower_bound:sa_regret", param=50)
    np.testing.assert_allclose(bound, fair_coin_lower_bound(50, 10))
    assert mean + half >= bound[0], (mean, half, bound[0])


def test_planted_windows_switch_defeats_fixed_small_eta():
    """Switch mode: Hedge with a small fixed η stays on A through the window: SA(τ) ≈ τ."""
    rows = play(
        Hedge(eta=0.05),
        PlantedWindows(tau=50, mode="switch"),
        n_actions=5,
        horizon=1000,
        checkpoints=[1000],
        metrics={"sa_regret": {"tau": [50]}},
    )
    assert rows.value.iloc[-1] >= 0.8 * 50


@pytest.mark.parametrize(
    ("params", "bad"),
    [
        ({"tau": 0}, "tau"),
        ({"tau": 100}, "tau"),  # T = 50 < τ + 1
        ({"n_windows": 0}, "n_windows"),
        ({"mode": "mixed"}, "mode"),
        ({"placement": "middle"}, "placement"),
    ],
)
def test_planted_windows_bad_params(params, bad):
    adv = PlantedWindows(**{"tau": 5, **params})
    with pytest.raises(ConfigError) as err:
        validate_params(adv)  # the declared constraints first, as the driver checks them
        adv.reset(GameSpec("experts", 3, 50), rngs(0, 1))  # then what depends on the game
    assert err.value.parameter == bad and err.value.component == "adversary planted_windows"


@pytest.mark.parametrize(
    ("params", "bad"),
    [
        ({"n_switches": 50}, "n_switches"),
        ({"gap": 0.6}, "gap"),
        ({"boundaries": "x"}, "boundaries"),
    ],
)
def test_planted_blocks_bad_params(params, bad):
    adv = PlantedBlocks(**params)
    with pytest.raises(ConfigError) as err:
        validate_params(adv)  # the declared constraints first, as the driver checks them
        adv.reset(GameSpec("experts", 3, 50), rngs(0, 1))  # then what depends on the game
    assert err.value.parameter == bad and err.value.component == "adversary planted_blocks"


def test_anti_hedge_declares_its_bound_against_fixed_eta_hedge_only():
    from arena.adversaries.lower_bound import AntiHedge
    from arena.players.fixed_share import FixedShare
    from arena.players.hedge import Hedge
    from arena.spec import GameSpec

    class TunedHedge(Hedge):
        """A subclass: another algorithm as far as the bound is concerned."""

    adv = AntiHedge(eta=0.1)
    adv.reset(GameSpec("experts", 6, 500, n_replicates=1), [np.random.default_rng(0)])
    assert ("regret", math.nan) in adv.lower_bounds(400, Hedge(eta=0.1))
    for other in (Hedge(eta=0.2), Hedge(eta="anytime"), TunedHedge(eta=0.1), FixedShare(), None):
        assert adv.lower_bounds(400, other) == {}
