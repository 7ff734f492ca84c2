"""Per-round regret metrics: logged at every round, they add up to the cumulative notions."""

from __future__ import annotations

import numpy as np
import pytest

from arena.game import run_game
from arena.metrics.regret import regret
from tests.helpers.experts import reference_value


@pytest.mark.parametrize("player", ["hedge", "exp3", "ucb1"])
def test_instant_values_sum_to_the_cumulative_ones(player):
    """Σ_t (p_t·l_t − min_i l_{t,i}) is dynamic_regret and Σ_t (p_t·μ_t − min_i μ_{t,i}) is the
    pseudo-regret of a game whose best mean arm never changes (1e-12: float sums of 60 terms)."""
    horizon = 60
    run = run_game(player, "bernoulli", n_actions=4, horizon=horizon, replicates=5, seed=2,
                   checkpoints=list(range(1, horizon + 1)),
                   metrics=["instant_regret", "instant_pseudo_regret", "dynamic_regret",
                            "pseudo_regret"])  # fmt: skip
    rows = run.rows
    wide = rows.pivot_table(index=["replicate", "t"], columns="metric", values="value")
    sums = wide.groupby("replicate")[["instant_regret", "instant_pseudo_regret"]].sum()
    final = wide.xs(horizon, level="t")
    np.testing.assert_allclose(sums.instant_regret, final.dynamic_regret, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sums.instant_pseudo_regret, final.pseudo_regret, rtol=0, atol=1e-12)
    assert (wide.instant_regret >= -1e-15).all() and (wide.instant_pseudo_regret >= -1e-15).all()


def test_brute_force_definitions_on_a_hand_example():
    probs = np.array([[0.5, 0.5], [0.25, 0.75]])
    losses = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert reference_value("instant_regret", np.nan, probs, losses, np.zeros(2)) == 0.75
    means = np.array([[0.2, 0.6], [0.2, 0.6]])
    value = reference_value("instant_pseudo_regret", np.nan, probs, losses, np.zeros(2), means)
    assert value == pytest.approx(0.25 * 0.2 + 0.75 * 0.6 - 0.2, abs=1e-15)


@pytest.mark.parametrize(("player", "reference"), [("hedge", "experts"), ("exp3", "bandit")])
def test_window_averages_match_the_literal_loop_and_add_up(player, reference):
    """The window metrics average the per-round values since the previous checkpoint: the
    engine equals the literal loop (1e-12) on an irregular grid, and the windows weighted by
    their lengths add up to dynamic_regret and the pseudo-regret."""
    from arena.bandit.reference import reference_play as bandit_loop
    from arena.experts.reference import reference_play as experts_loop

    loop = experts_loop if reference == "experts" else bandit_loop
    grid = [1, 2, 7, 30, 31, 80]
    kw = {"n_actions": 3, "horizon": 80, "replicates": 3, "seed": 6, "checkpoints": grid,
          "metrics": ["window_regret", "window_pseudo_regret", "dynamic_regret",
                      "pseudo_regret", "window_leader_regret",
                      "instant_leader_regret"]}  # fmt: skip
    fast = run_game(player, "bernoulli", **kw).rows
    slow = loop(player, "bernoulli", **kw)
    key = ["metric", "t", "replicate"]
    np.testing.assert_allclose(
        fast.sort_values(key).value.to_numpy(), slow.sort_values(key).value.to_numpy(),
        rtol=0, atol=1e-12,
    )  # fmt: skip
    wide = fast.pivot_table(index=["replicate", "t"], columns="metric", values="value")
    lengths = np.diff([0, *grid])
    for window, total in (("window_regret", "dynamic_regret"),
                          ("window_pseudo_regret", "pseudo_regret")):  # fmt: skip
        per_rep = wide[window].unstack("t")[grid].to_numpy() @ lengths
        np.testing.assert_allclose(per_rep, wide[total].xs(80, level="t"), rtol=0, atol=1e-12)


def test_leader_metrics_on_a_hand_example_and_their_relations():
    """Against the best expert so far: round 2's leader is expert 0 (L = (1, 1.5), so l_2 = 1
    for it); a single window over the whole game is regret/T, by brute force and in the engine
    (1e-12: float sums of 40 terms)."""
    probs = np.array([[0.5, 0.5], [0.25, 0.75]])
    losses = np.array([[0.0, 1.0], [1.0, 0.5]])
    value = reference_value("instant_leader_regret", np.nan, probs, losses, np.zeros(2))
    assert value == pytest.approx(0.25 * 1.0 + 0.75 * 0.5 - 1.0, abs=1e-15)
    window = reference_value("window_leader_regret", np.nan, probs, losses, np.zeros(2))
    assert window == pytest.approx(regret(probs, losses) / 2, abs=1e-15)
    grid = [3, 10, 40]
    run = run_game("hedge", "bernoulli", n_actions=3, horizon=40, replicates=4, seed=1,
                   checkpoints=grid, metrics=["regret"])  # fmt: skip
    wide = run.rows.pivot_table(index=["replicate", "t"], columns="metric", values="value")
    single = run_game("hedge", "bernoulli", n_actions=3, horizon=40, replicates=4, seed=1,
                      checkpoints=[40], metrics=["window_leader_regret"]).rows  # fmt: skip
    np.testing.assert_allclose(40 * single.value.to_numpy(), wide.regret.xs(40, level="t"),
                               rtol=0, atol=1e-12)  # fmt: skip


@pytest.mark.parametrize("n_act", [1, 2, 7, 8, 9, 10, 16, 17, 100, 128, 129, 300, 1000])
def test_window_kernels_equal_the_numpy_expressions_they_replace_bitwise(n_act):
    """The window metrics' one-pass kernels give the sums of the numpy expressions they replaced
    to the last bit (the minimum is exact; the dot products follow numpy's pairwise summation),
    on wide-range values, constant means broadcast over rounds, signed zeros and NaN; a numpy
    that changed its summation order would show here first."""
    from arena.metrics.instant import (
        _add_gaps_in_round_order,
        _add_in_round_order,
        _add_pseudo_gaps_in_round_order,
    )

    rng = np.random.default_rng(n_act)
    shape = (3, 5, n_act)
    wide = rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 8, shape)
    probs = rng.random(shape)
    expected = rng.random(shape[:2])
    zeros = -np.zeros(shape)
    nan = wide.copy()
    nan[1, 2, n_act // 2] = np.nan
    for losses in (wide, zeros, nan, (wide > 0).astype(float)):
        want, got = np.zeros(3), np.zeros(3)
        _add_in_round_order(expected - losses.min(axis=2), want)
        _add_gaps_in_round_order(expected, losses, got)
        np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))
    for means in (wide, zeros, np.broadcast_to(rng.random(n_act), shape)):
        lowest = means.min(axis=2)
        want, got = np.zeros(3), np.zeros(3)
        _add_in_round_order((probs * means).sum(axis=2) - lowest, want)
        _add_pseudo_gaps_in_round_order(probs, means, np.broadcast_to(lowest, shape[:2]), got)
        np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))
