"""Tests of the bandit lower-bound constructions (arena/adversaries/bandit_lower_bound.py).

Expectation statements use the one-sided CLT band of the project (``clt_band``: mean ± 4·sd/√M):
a player passes a declared lower bound when ``mean + 4·sd/√M ≥ bound``.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow.parquet as pq
import pytest

from arena import GameSpec, play
from arena.adversaries.bandit_lower_bound import (
    DistributionReader,
    Needle,
    PriceOfAdaptivity,
    TwoInstance,
    needle_gap,
    needle_lower_bound,
    pilot_pulls,
    two_instance_gap,
    two_instance_lower_bound,
)
from arena.adversaries.stochastic import Bernoulli
from arena.bandit.testing import UniformBandit
from arena.errors import ConfigError
from arena.game import prepare_game, run_game
from arena.players.exp3 import Exp3
from arena.players.tsallis_inf import TsallisInf
from arena.players.ucb1 import UCB1
from arena.seeding import replicate_streams
from arena.testing import parametrize_with_checks
from tests.helpers import clt_band, last_values, rngs
from tests.helpers.cli import arena_in_process

COMPONENTS = [
    Needle(),
    Needle(gap=0.2),
    TwoInstance(pilot_replicates=2, player="exp3"),
    TwoInstance(instance="second", player="ucb1", gap=0.1, pilot_replicates=1),
    PriceOfAdaptivity(pilot_replicates=2, player="ucb1"),
    DistributionReader(),
    DistributionReader(rule="heaviest"),
]


@parametrize_with_checks(COMPONENTS)
def test_conformance(component, check):
    check(component)


def _losses(adv, spec, gens):
    adv.reset(spec, gens)
    return adv.losses_block(1, spec.horizon)


# ----------------------------------------------------------------------------------------------
# closed forms


def _kl_half(q: float) -> float:
    """kl(½ ‖ q) computed from the definition."""
    return 0.5 * math.log(0.5 / q) + 0.5 * math.log(0.5 / (1 - q))


@pytest.mark.parametrize("k", [2, 3, 5, 10, 50])
@pytest.mark.parametrize("horizon", [1, 2, 7, 10, 100, 1000, 10**4, 10**6])
def test_needle_bound_is_at_least_the_theorem(k, horizon):
    """Auer et al. 2002, Thm 5.1: (1/20) min(√(KT), T) with the default ε."""
    eps = needle_gap(horizon, k)
    value = needle_lower_bound(horizon, k, eps)
    assert value >= min(math.sqrt(k * horizon), horizon) / 20


def test_needle_bound_closed_form():
    t, k, eps = 500, 4, 0.05
    kl = _kl_half(0.5 - eps)  # kl(½‖½−ε) = −½ ln(1 − 4ε²)
    want = eps * t * (1 - 1 / k - math.sqrt(t * kl / (2 * k)))
    assert needle_lower_bound(t, k, eps) == pytest.approx(want, rel=1e-12)
    assert needle_lower_bound(0, k, eps) == 0.0
    adv = Needle(gap=eps)
    adv.reset(GameSpec("experts", k, t, n_replicates=2), rngs(0, 2))
    declared = adv.lower_bounds(t)
    assert {m for m, _ in declared} == {"pseudo_regret", "regret"}
    assert all(v == pytest.approx(want, rel=1e-12) for v in declared.values())


@pytest.mark.parametrize("k", [2, 3, 5, 10, 50])
@pytest.mark.parametrize("extra", [0, 1, 10, 1000, 10**5])
def test_two_instance_bound_closed_form(k, extra):
    n = k - 1 + extra  # the theorem's condition n ≥ K − 1
    gap = two_instance_gap(n, k)
    b = two_instance_lower_bound(n, n, k, gap)
    # (nΔ/4) exp(−(n/(K−1)) kl(½‖½−2Δ)), the divergence from its definition
    want = n * gap / 4 * math.exp(-n / (k - 1) * _kl_half(0.5 - 2 * gap))
    assert b == pytest.approx(want, rel=1e-10)
    # with the default Δ: B/2 ≥ e^{−1/2}/(32√2) √((K−1)n) > √((K−1)n)/75
    assert b / 2 >= math.exp(-0.5) / (32 * math.sqrt(2)) * math.sqrt((k - 1) * n) * (1 - 1e-12)
    # and the default Δ maximizes the bound
    for g in (0.9 * gap, 1.1 * gap):
        assert two_instance_lower_bound(n, n, k, g) <= b


def test_two_instance_declares_half_the_pair_bound_for_the_target_only():
    spec = GameSpec("experts", 3, 400, n_replicates=2)
    adv = TwoInstance(pilot_replicates=2, player="exp3")
    adv.reset(spec, rngs(1, 2))
    gap = two_instance_gap(400, 3)
    want = 0.5 * two_instance_lower_bound(200, 400, 3, gap)
    got = adv.lower_bounds(200, Exp3())
    assert got[("pseudo_regret", math.nan)] == pytest.approx(want, rel=1e-14)
    assert got[("regret", math.nan)] == pytest.approx(want, rel=1e-14)
    assert adv.lower_bounds(200, UCB1()) == {}  # another policy
    assert adv.lower_bounds(200, Exp3(eta=0.1)) == {}  # other parameters
    assert adv.lower_bounds(200, None) == {}
    for instance in ("first", "second"):
        other = TwoInstance(instance=instance, pilot_replicates=2, player="exp3")
        other.reset(spec, rngs(1, 2))
        assert other.lower_bounds(200, Exp3()) == {}  # the theorem bounds the sum only


def test_price_of_adaptivity_declares_nothing_and_reports_the_theorem_value():
    n, k = 200_000, 3
    adv = PriceOfAdaptivity(pilot_replicates=0)
    adv.reset(GameSpec("experts", k, n, n_replicates=1), rngs(0, 1))
    v = math.sqrt(n * (k - 1)) * math.exp(-2) / 8  # the largest V the theorem admits
    assert v >= 4 * (k - 1)  # so the default is not raised to keep Δ ≤ ¼
    assert adv.theorem_value() == pytest.approx(n * (k - 1) * math.exp(-2) / (8 * v))
    assert adv.lower_bounds(n, UCB1()) == {}
    mu = adv.oracle("means", 1, 1)[0, 0]
    gap = (k - 1) / v
    np.testing.assert_allclose(mu, [0.5 - gap, 0.5 - 2 * gap, 0.5])


# ----------------------------------------------------------------------------------------------
# seeding and streams


def test_needle_draws_one_good_arm_per_replicate_and_is_seed_deterministic():
    spec = GameSpec("experts", 5, 50, n_replicates=64)
    a, b = Needle(), Needle()
    la, lb = _losses(a, spec, rngs(3, 64)), _losses(b, spec, rngs(3, 64))
    np.testing.assert_array_equal(la, lb)
    good = a.good_arms()
    assert len(set(good.tolist())) == 5  # uniform over the arms (64 draws hit all five)
    mu = a.oracle("means", 1, 1)[:, 0]
    np.testing.assert_allclose(mu[np.arange(64), good], 0.5 - needle_gap(50, 5))


def test_pilot_does_not_touch_the_game_streams():
    """With instance="first" the losses equal the fixed instance ν's, pilot or none."""
    spec = GameSpec("experts", 3, 300, n_replicates=4)
    gap = two_instance_gap(300, 3)
    first = {"instance": "first", "player": "exp3"}
    with_pilot = _losses(TwoInstance(**first, pilot_replicates=8), spec, rngs(5, 4))
    without = _losses(TwoInstance(**first, pilot_replicates=0), spec, rngs(5, 4))
    plain = _losses(Bernoulli(means=[0.5 - gap, 0.5, 0.5]), spec, rngs(5, 4))
    np.testing.assert_array_equal(with_pilot, without)
    np.testing.assert_array_equal(with_pilot, plain)


def test_pilot_is_common_to_replicates_whatever_the_batch():
    """The pilot seed drops the replicate index: replicate 3 alone picks the same j."""
    spec4 = GameSpec("experts", 4, 200, n_replicates=4)
    spec1 = GameSpec("experts", 4, 200, n_replicates=1)
    streams = [replicate_streams(7, "game", "cell", r)[0] for r in range(4)]
    alone = [replicate_streams(7, "game", "cell", 3)[0]]
    batch = TwoInstance(pilot_replicates=6, player="exp3")
    single = TwoInstance(pilot_replicates=6, player="exp3")
    lb = _losses(batch, spec4, streams)
    ls = _losses(single, spec1, alone)
    assert batch.challenger() == single.challenger()
    np.testing.assert_array_equal(lb[3], ls[0])


def test_the_default_pilot_simulates_the_game_s_own_player():
    """player="game": the arena binds a clone of the player under test before reset, so the pair
    is built against it, the game's own player is left untouched, and the bound is declared
    whatever the player; outside a game the adversary refuses to guess."""
    game = {"n_actions": 4, "horizon": 300, "replicates": 3, "seed": 9}
    for player in (UCB1(), TsallisInf(estimator="iw")):
        prepared = prepare_game(player, TwoInstance(pilot_replicates=4), **game)
        target = prepared.adversary._target
        assert type(target) is type(player) and target.get_params() == player.get_params()
        assert target is not prepared.player
        assert prepared.adversary.pilot()["pulls"].sum() == pytest.approx(300)  # mean pulls
        assert prepared.adversary.lower_bounds(300, prepared.player)
    rows = run_game("ucb1", TwoInstance(pilot_replicates=4), metrics=["lower_bound"], **game).rows
    assert (rows.metric == "lower_bound:pseudo_regret").any()
    with pytest.raises(ConfigError, match="binds before reset"):
        TwoInstance().reset(GameSpec("experts", 3, 100, n_replicates=1), rngs(0, 1))
    with pytest.raises(ConfigError, match="is not a bandit player"):
        run_game("hedge", TwoInstance(pilot_replicates=1), **game)


def test_pilot_estimates_the_pulls():
    """Uniform play: E[T_i(n)] = n/K exactly, the pilot's Σ p_{t,i} has no noise."""
    means = np.array([0.4, 0.5, 0.5])
    pulls, regret = pilot_pulls(UniformBandit(), means, 90, 3, np.random.SeedSequence(1))
    np.testing.assert_allclose(pulls, 30.0)
    np.testing.assert_allclose(regret, 90 * (0.5 * 2 / 3 + 0.4 / 3 - 0.4))


def test_two_instance_mixture_plays_both_instances():
    spec = GameSpec("experts", 3, 10, n_replicates=200)
    adv = TwoInstance(pilot_replicates=2, player="exp3")
    adv.reset(spec, rngs(2, 200))
    mu = adv.oracle("means", 1, 1)[:, 0]
    second = mu.min(axis=1) < mu[:, 0] - 1e-12
    assert 60 < second.sum() < 140
    j = adv.challenger()
    assert j in (1, 2)
    np.testing.assert_allclose(mu[second, j], 0.5 - 2 * two_instance_gap(10, 3))


# ----------------------------------------------------------------------------------------------
# players above the lower bounds


def _above(df, metric):
    vals = last_values(df, metric)
    bound = float(last_values(df, f"lower_bound:{metric}").mean())
    mean, half = clt_band(vals)
    return mean, half, bound


@pytest.mark.parametrize("player", ["exp3", "tsallis_inf", "ucb1", UniformBandit()])
def test_players_pay_at_least_the_needle_bound(player):
    df = play(
        player, Needle(), n_actions=3, horizon=1000, replicates=32, seed=11,
        checkpoints=[100, 1000],
        metrics={"pseudo_regret": {}, "regret": {}, "lower_bound": {}},
    )  # fmt: skip
    for metric in ("pseudo_regret", "regret"):
        mean, half, bound = _above(df, metric)
        assert mean + half >= bound, (player, metric, mean, half, bound)


@pytest.mark.parametrize("player", ["exp3", "tsallis_inf", "ucb1"])
def test_players_pay_at_least_the_two_instance_bound(player):
    adv = TwoInstance(player=player, pilot_replicates=8)
    df = play(
        player, adv, n_actions=3, horizon=1000, replicates=32, seed=12, checkpoints=[1000],
        metrics={"pseudo_regret": {}, "regret": {}, "lower_bound": {}},
    )  # fmt: skip
    for metric in ("pseudo_regret", "regret"):
        mean, half, bound = _above(df, metric)
        assert bound > 0
        assert mean + half >= bound, (player, metric, mean, half, bound)


# ----------------------------------------------------------------------------------------------
# the distribution reader


def test_distribution_reader_makes_ucb1_linear():
    df = play(
        "ucb1", DistributionReader(), n_actions=3, horizon=10**4, replicates=2,
        checkpoints=[10**4], metrics={"regret": {}, "loss": {}},
    )  # fmt: skip
    regret = last_values(df, "regret")
    np.testing.assert_array_equal(last_values(df, "loss"), 10**4)  # loses every round
    assert (regret >= 10**4 * (1 - 1 / 3) - 1e-9).all()  # measured: 6667 = T − ⌊T/K⌋


@pytest.mark.parametrize("rule", ["above_uniform", "heaviest"])
def test_distribution_reader_against_exp3_stays_within_its_bound(rule):
    """Exp3's declared bound (oblivious losses) also holds here on the mean, measured: 0 with
    "above_uniform" (Exp3 stays uniform, every loss is 0), 96 ± 62 with "heaviest" (bound 257)."""
    df = play(
        "exp3", DistributionReader(rule=rule), n_actions=3, horizon=10**4, replicates=8,
        seed=3, checkpoints=[10**4], metrics={"regret": {}, "bound": {}},
    )  # fmt: skip
    mean, half = clt_band(last_values(df, "regret"))
    bound = float(last_values(df, "bound:regret").mean())
    assert mean - half <= bound, (mean, half, bound)


def test_distribution_reader_never_reads_the_draw():
    adv = DistributionReader()
    assert adv.tags.sees_distribution and not adv.tags.oblivious


# ----------------------------------------------------------------------------------------------
# the command line


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["needle", "two_instance", "price_of_adaptivity", "distribution_reader"]
)
def test_cli_runs(tmp_path, name):
    out = tmp_path / "run"
    res = arena_in_process(
        "run", "player=exp3", f"adversary={name}", "n_actions=3", "horizon=1000", "replicates=4",
        f"hydra.run.dir={out}", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    df = pq.read_table(out / "results.parquet").to_pandas()
    assert df.replicate.nunique() == 4 and int(df.t.max()) == 1000
    if name in ("needle", "two_instance"):
        assert "lower_bound:regret" in set(df.metric)
