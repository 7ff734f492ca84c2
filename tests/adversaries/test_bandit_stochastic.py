"""Tests of arena/adversaries/bandit_stochastic.py: Gaussian arms, stochastically constrained,
corrupted, rotting and the UCB trap.

Oracles: the closed-form mean of a clipped normal against numerical integration; the means
oracle against empirical means (5 standard errors); the corruption budget against the clean
Bernoulli losses of the same seed (exact); the gaps of the stochastically constrained regime
(Zimmert & Seldin 2021, §2) from the means (exact up to float rounding); the UCB trap's regret
``T − min_i L_i`` (exact, deterministic) and Exp3's declared bound.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import integrate
from scipy.stats import norm

from arena import GameSpec, play
from arena.adversaries.bandit_stochastic import (
    Corrupted,
    GaussianArms,
    Rotting,
    StochasticallyConstrained,
    UCBTrap,
    clipped_normal_mean,
    phase_starts,
)
from arena.adversaries.stochastic import Bernoulli
from arena.errors import ConfigError
from tests.helpers import rngs
from tests.helpers.cli import arena_in_process
from tests.helpers.experts import assert_split_invariant

NAMES = ("gaussian_arms", "stochastically_constrained", "corrupted", "rotting", "ucb_trap")


def fresh(adversary, spec, seed=0):
    a = adversary.clone()
    a.reset(spec, rngs(seed, spec.n_replicates))
    return a


def assert_means_match(adversary, spec, seed=0, sigmas=5.0):
    """Average losses over rounds and replicates equal the average means within 5 SE."""
    losses = assert_split_invariant(adversary, spec, seed)
    a = fresh(adversary, spec, seed)
    a.losses_block(1, spec.horizon)
    b = fresh(adversary, spec, seed)
    means = np.broadcast_to(b.oracle("means", 1, spec.horizon), losses.shape)
    count = losses.shape[0] * losses.shape[1]
    emp = losses.mean(axis=(0, 1))
    target = means.mean(axis=(0, 1))
    # per-round variance ≤ μ(1 − μ) for [0, 1] losses with mean μ; averaged over rounds
    se = np.sqrt(np.maximum((means * (1 - means)).mean(axis=(0, 1)), 1e-4) / count)
    assert np.all(np.abs(emp - target) <= sigmas * se), (emp, target, se)
    return losses, means


# ----------------------------------------------------------------------------------------------
# Gaussian arms


@pytest.mark.parametrize(("loc", "scale"), [(0.5, 0.2), (0.1, 0.3), (0.95, 0.05), (-0.2, 1.0)])
def test_clipped_normal_mean_matches_integral(loc, scale):
    inside, _ = integrate.quad(lambda x: x * norm.pdf(x, loc, scale), 0.0, 1.0, epsabs=1e-13)
    expected = inside + norm.sf(1.0, loc, scale)
    assert clipped_normal_mean(np.array([loc]), scale)[0] == pytest.approx(expected, abs=1e-12)


def test_gaussian_arms_means_and_range():
    adv = GaussianArms(locations=[0.0, 0.4, 0.9], scale=0.3)
    spec = GameSpec("experts", 3, 4000, n_replicates=4)
    losses, means = assert_means_match(adv, spec)
    assert losses.min() >= 0 and losses.max() <= 1
    np.testing.assert_allclose(means[0, 0], clipped_normal_mean(np.array([0.0, 0.4, 0.9]), 0.3))
    assert means[0, 0, 0] > 0.1  # the clipped mean, not the location, is reported


def test_gaussian_arms_default_gap():
    a = fresh(GaussianArms(gap=0.2, best=1, scale=0.05), GameSpec("experts", 3, 10, n_replicates=2))
    mu = a.oracle("means", 1, 1)[0, 0]
    assert mu[1] == pytest.approx(0.3, abs=1e-9) and mu[0] == pytest.approx(0.5, abs=1e-12)


def test_bernoulli_and_beta_support_per_arm_gaps():
    """The existing stochastic adversaries already take per-arm means (so per-arm gaps)."""
    from arena.adversaries.stochastic import Beta

    for adv in (Bernoulli(means=[0.2, 0.5, 0.7]), Beta(means=[0.2, 0.5, 0.7])):
        a = fresh(adv, GameSpec("experts", 3, 5, n_replicates=1))
        np.testing.assert_allclose(a.oracle("means", 1, 1)[0, 0], [0.2, 0.5, 0.7])


# ----------------------------------------------------------------------------------------------
# stochastically constrained


def test_phase_starts_geometric():
    assert phase_starts(1.6, 60).tolist() == [1, 2, 4, 8, 15, 27, 47]
    assert phase_starts(2.0, 20).tolist() == [1, 2, 4, 8, 16]


def test_stochastically_constrained_gap_is_fixed_and_level_alternates():
    adv = StochasticallyConstrained(gap=0.15, best=2)
    spec = GameSpec("experts", 4, 3000, n_replicates=3)
    a = fresh(adv, spec)
    mu = a.oracle("means", 1, 3000)
    diff = mu - mu[:, :, [2]]
    expected = np.where(np.arange(4) == 2, 0.0, 0.15)
    np.testing.assert_allclose(diff, np.broadcast_to(expected, diff.shape), rtol=0, atol=1e-12)
    level = mu[0, :, 2]
    assert set(np.round(level, 12)) == {0.0, 0.85}
    starts = phase_starts(1.6, 3000)
    for k, s in enumerate(starts):
        assert level[s - 1] == (0.0 if k % 2 == 0 else 0.85)
    # asked in later blocks, the levels are the same
    b = fresh(adv, spec)
    np.testing.assert_array_equal(b.oracle("means", 2001, 1000), mu[:, 2000:])


def test_stochastically_constrained_means_match_losses():
    adv = StochasticallyConstrained(gap=0.2, low=0.2, high=0.6, growth=2.0)
    assert_means_match(adv, GameSpec("experts", 3, 3000, n_replicates=4))


def test_stochastically_constrained_rejects_levels_above_one():
    with pytest.raises(ConfigError, match="high"):
        fresh(StochasticallyConstrained(gap=0.3, high=0.8), GameSpec("experts", 2, 10))


@pytest.mark.slow
def test_stochastically_constrained_separates_ucb():
    """The docstring's numbers: K = 2, T = 10⁴, 20 replicates, seed 0 (about 4 s)."""
    got = {}
    for player in ("ucb1", "thompson", "tsallis_inf"):
        rows = play(
            player,
            StochasticallyConstrained(),
            n_actions=2,
            horizon=10_000,
            replicates=20,
            seed=0,
            checkpoints=[10_000],
            metrics={"pseudo_regret": {}},
        )
        got[player] = rows.value.mean()
    assert got["tsallis_inf"] < 40
    assert got["ucb1"] > 2 * got["tsallis_inf"] and got["thompson"] > 2 * got["tsallis_inf"]


# ----------------------------------------------------------------------------------------------
# corrupted


@pytest.mark.parametrize(
    "params",
    [
        {"budget": 37.0},
        {"budget": 12.5, "strategy": "periodic", "period": 7},
        {"budget": 20.0, "strategy": "random", "rate": 0.2, "best": 2, "decoy": 0},
        {"budget": 0.0},
    ],
)
def test_corruption_budget_never_exceeded(params):
    adv = Corrupted(means=[0.3, 0.5, 0.6], **params)
    spec = GameSpec("experts", 3, 2000, n_replicates=5)
    losses = assert_split_invariant(adv, spec, seed=4)
    clean = fresh(Bernoulli(means=[0.3, 0.5, 0.6]), spec, seed=4).losses_block(1, 2000)
    cost = np.abs(losses - clean).max(axis=2)  # (R, T)
    total = cost.sum(axis=1)
    assert np.all(total <= params["budget"])
    a = fresh(adv, spec, seed=4)
    a.losses_block(1, 2000)
    np.testing.assert_array_equal(a.spent, total)
    best = params.get("best", 0)
    decoy = params.get("decoy", (best + 1) % 3)
    hit = cost > 0
    assert np.all(losses[hit][:, best] == 1.0) and np.all(losses[hit][:, decoy] == 0.0)
    if params["budget"] >= 1:
        assert np.all(total > params["budget"] - 1)  # spent to the last unit that fits
    if params.get("strategy", "early") == "early" and params["budget"] > 0:
        # the first rounds are corrupted until the budget runs out: no clean cost-1 round before
        for r in range(5):
            last = np.flatnonzero(hit[r]).max()
            assert np.all(np.abs(losses[r, :last] - clean[r, :last]).max(axis=1) <= 1)
            assert np.all(losses[r, :last, best] == 1.0)
    if params.get("strategy") == "periodic":
        assert not hit[:, np.arange(1, 2001) % 7 != 0].any()


def test_corrupted_means_are_the_clean_means():
    adv = Corrupted(gap=0.2, budget=1000.0)
    spec = GameSpec("experts", 2, 300, n_replicates=2)
    a = fresh(adv, spec)
    np.testing.assert_array_equal(a.oracle("means", 1, 3)[0], [[0.3, 0.5]] * 3)
    assert_means_match(Corrupted(gap=0.2, budget=0.0), GameSpec("experts", 2, 3000))


def test_corrupted_bad_indices():
    with pytest.raises(ConfigError, match="decoy"):
        fresh(Corrupted(decoy=0), GameSpec("experts", 2, 10))
    with pytest.raises(ConfigError, match="best"):
        fresh(Corrupted(best=5), GameSpec("experts", 2, 10))


# ----------------------------------------------------------------------------------------------
# rotting


def test_rotting_means_decay_and_match_losses():
    adv = Rotting(initial=[0.9, 0.6, 0.4], decay=[0.5, 0.1, 0.0])
    spec = GameSpec("experts", 3, 3000, n_replicates=4)
    _, means = assert_means_match(adv, spec)
    rewards = 1 - means[0]
    assert np.all(np.diff(rewards, axis=0) <= 0)  # rewards never increase
    np.testing.assert_allclose(rewards[99], [0.9 * 100**-0.5, 0.6 * 100**-0.1, 0.4])
    assert rewards[0].argmax() == 0 and rewards[-1].argmax() == 2  # the best arm changes


def test_rotting_default_arms():
    a = fresh(Rotting(), GameSpec("experts", 5, 10, n_replicates=1))
    np.testing.assert_allclose(1 - a.oracle("means", 1, 1)[0, 0], [0.9, 0.8, 0.7, 0.6, 0.5])
    assert Rotting(decay=[0.1, 0.2]).resolve_n_actions(None) == 2


def test_piecewise_stochastic_plays_bandit():
    """The piecewise-stochastic family is covered by piecewise_stochastic; it plays bandits."""
    rows = play(
        "exp3",
        "piecewise_stochastic",
        n_actions=3,
        horizon=400,
        replicates=2,
        metrics={"pseudo_regret": {}, "arm_pulls": {}},
    )
    assert rows.protocol.iloc[0] == "bandit" and "arm_pulls" in set(rows.metric)


# ----------------------------------------------------------------------------------------------
# UCB trap


def test_ucb_trap_ucb1_loses_every_round():
    rows = play(
        "ucb1",
        UCBTrap(),
        n_actions=3,
        horizon=600,
        replicates=2,
        metrics={"loss": {}, "regret": {}},
        checkpoints=[600],
    )
    last = rows.groupby("metric").value
    assert np.all(last.min()["loss"] == 600.0)
    assert last.min()["regret"] >= 600 * (1 - 1 / 3) - 1e-9


def test_ucb_trap_is_split_invariant_and_deterministic():
    spec = GameSpec("experts", 2, 60, n_replicates=3)
    losses = assert_split_invariant(UCBTrap(), spec)
    np.testing.assert_array_equal(losses[0], losses[2])
    np.testing.assert_array_equal(losses.sum(axis=2), 1.0)
    with pytest.raises(ConfigError, match="deterministic"):
        fresh(UCBTrap(target="exp3"), spec)


def test_ucb_trap_separates():
    """The docstring's numbers: K = 2, T = 10⁴, 4 replicates, seed 0 (about 2 s)."""
    kw = {"n_actions": 2, "horizon": 10_000, "replicates": 4, "seed": 0, "checkpoints": [10_000]}
    ucb = play("ucb1", UCBTrap(), metrics={"regret": {}}, **kw)
    assert np.all(ucb.value == 5000.0)  # ≥ 0.1 T by far: every round lost
    exp3 = play("exp3", UCBTrap(), metrics={"regret": {}, "bound": {}}, **kw)
    mean = exp3[exp3.metric == "regret"].value.mean()
    bound = exp3[exp3.metric == "bound:regret"].value.iloc[0]
    assert mean < bound and mean < 0.01 * 10_000


# ----------------------------------------------------------------------------------------------
# the command line, bandit protocol


@pytest.mark.parametrize("name", NAMES)
def test_arena_run_bandit(name, tmp_path):
    out = tmp_path / "out"
    res = arena_in_process(
        "run",
        "player=exp3",
        f"adversary={name}",
        "n_actions=3",
        "horizon=1000",
        "replicates=4",
        f"hydra.run.dir={out}",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    rows = pd.read_parquet(next(out.rglob("results.parquet")))
    assert set(rows.protocol) == {"bandit"} and rows.t.max() == 1000
    assert "pseudo_regret" in set(rows.metric)
