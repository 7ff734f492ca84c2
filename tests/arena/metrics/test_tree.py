"""Tests of the tree-expert metric ``tree_regret`` and of the best-pruning dynamic program.

Oracles (Luo 2016, §2.3.4): the bottom-up DP ``best(e) = min(A_e, Σ_children best)`` equals
the minimum over every pruning enumerated explicitly on trees of depth ≤ 3 (E7 below); with a
depth-1 template there is one pruning and one awake edge per round, so the tree regret of every
player is 0 (C8); the streaming metric equals the brute-force definition
(:func:`arena.metrics.tree.tree_regret_bruteforce`) on small random instances.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena import play
from arena.adversaries.tree_experts import TreeExperts
from arena.errors import ConfigError
from arena.experts.components import ObliviousAdversary
from arena.game import reference_play, run_game
from arena.metrics import tree
from arena.metrics.base import Block, Core
from arena.metrics.tree import (
    TreeRegret,
    best_pruning,
    check_parents,
    heap_parents,
    pruning_values,
)
from arena.spec import AdversaryTags, GameSpec

ATOL = 1e-12
"""DP and enumeration add the same ≤ 16 nonnegative terms of size ≤ 50 in other orders: a few
ulps of 50 (≈ 7e-15 each)."""


def random_trees(rng):
    """Complete heap trees of depth 1..3 and incomplete heap trees (N = 1..14)."""
    yield from (heap_parents(2 ** (d + 1) - 2) for d in (1, 2, 3))
    yield from (heap_parents(int(n)) for n in rng.integers(1, 15, 4))


def test_dp_equals_enumeration_of_prunings():
    """E7: the DP's loss (and its pruning) and the penalized DP equal brute-force enumeration."""
    rng = np.random.default_rng(0)
    for parents in random_trees(rng):
        prunings = tree.tree_prunings(parents)
        for _ in range(5):
            a = rng.random(parents.size) * 50.0
            a[rng.random(parents.size) < 0.2] = 0.0  # ties between a pruning and its refinement
            losses = [sum(a[e] for e in p) for p in prunings]
            loss, leaves = best_pruning(parents, a)
            assert abs(loss - min(losses)) <= ATOL
            assert frozenset(np.flatnonzero(leaves).tolist()) in prunings
            assert abs(sum(a[leaves]) - loss) <= ATOL
            assert abs(pruning_values(parents, a)[0] - min(losses)) <= ATOL
            lam = float(rng.random() * 5.0)
            penalized = min(
                x + lam * tree.pruning_coins(parents, p)
                for x, p in zip(losses, prunings, strict=True)
            )
            assert abs(pruning_values(parents, a, lam)[0] - penalized) <= ATOL


def test_pruning_counts():
    # f(0) = 1, f(d) = 1 + f(d − 1)²; the root always splits: f(D − 1)² prunings at depth D
    assert [len(tree.tree_prunings(heap_parents(2 ** (d + 1) - 2))) for d in (1, 2, 3)] == [
        1,
        4,
        25,
    ]


def random_path_game(rng, depth: int, horizon: int):
    """Random probabilities on random root-to-leaf paths (heap layout) and random losses."""
    n = 2 ** (depth + 1) - 2
    reached = np.zeros((horizon, n))
    probs = np.zeros((horizon, n))
    for t in range(horizon):
        node = 0
        for _ in range(depth):
            node = 2 * node + 1 + int(rng.integers(2))
            reached[t, node - 1] = 1.0
        probs[t] = reached[t] * rng.random(n)
        probs[t] /= probs[t].sum()
    losses = rng.random((horizon, n))
    losses[:, 0] = np.round(losses[:, 0])
    return probs, losses, reached


class _FixedTree(ObliviousAdversary):
    """A stand-in adversary serving a fixed template and fixed ``reached`` indicators."""

    tags = AdversaryTags(oblivious=True, oracle=frozenset({"reached"}))

    def __init__(self, parents=None, reached=None):
        self.parents = parents
        self.reached = reached

    def tree_parents(self):
        return self.parents

    def oracle(self, key, t0, n):
        return self.reached[:, t0 - 1 : t0 - 1 + n]


def test_metric_equals_brute_force_on_random_instances():
    rng = np.random.default_rng(1)
    for depth, horizon, splits in ((1, 7, (7,)), (2, 30, (1, 12, 17)), (3, 25, (25,))):
        probs, losses, reached = random_path_game(rng, depth, horizon)
        n = losses.shape[1]
        metric = TreeRegret()
        metric.attach(None, _FixedTree(heap_parents(n), reached[None]))
        metric.start(GameSpec("experts", n, horizon, n_replicates=1))
        core = Core(1, n)
        t0 = 1
        for size in splits:
            p, ll = probs[None, t0 - 1 : t0 - 1 + size], losses[None, t0 - 1 : t0 - 1 + size]
            expected = (p * ll).sum(axis=2)
            core.learner += expected.sum(axis=1)
            actions = np.zeros((1, size), dtype=np.int64)
            metric.advance(Block(p, ll, expected, expected, actions, None, t0), core)
            t0 += size
            want = tree.tree_regret_bruteforce(
                probs[: t0 - 1], losses[: t0 - 1], reached[: t0 - 1], heap_parents(n)
            )
            assert abs(metric.values(core)[0, 0] - want) <= 1e-12


@pytest.mark.parametrize(
    "params",
    [{"depth": 2}, {"depth": 3, "loss": "squared", "n_leaves": 3}, {"depth": 2, "awake": "all"}],
)
def test_engine_equals_reference_loop(params):
    """The streaming metric in the engine equals the reference loop's enumeration, per row."""
    player = "hedge" if params.get("awake") == "all" else "ada_normal_hedge"
    kw = dict(
        horizon=40,
        replicates=2,
        seed=5,
        adversary_params=params,
        metrics={"tree_regret": {}, "loss": {}},
    )
    fast = run_game(player, "tree_experts", **kw).rows
    slow = reference_play(player, "tree_experts", **kw)
    pd.testing.assert_frame_equal(fast.drop(columns="value"), slow.drop(columns="value"))
    assert np.abs(fast.value.to_numpy() - slow.value.to_numpy()).max() <= 1e-12


@pytest.mark.parametrize("player", ["ada_normal_hedge", "pruning_hedge"])
def test_depth_one_tree_has_zero_regret(player):
    """C8: one pruning, one awake edge per round, so the learner predicts P(x_t) exactly."""
    df = play(
        player,
        TreeExperts(depth=1, noise=0.5),
        horizon=300,
        replicates=3,
        metrics={"tree_regret": {}},
    )
    assert len(df) > 0 and np.abs(df.value.to_numpy()).max() <= 1e-12


def test_not_applicable_without_a_tree():
    metrics = {"tree_regret": {}, "loss": {}}
    run = run_game("hedge", "bernoulli", n_actions=3, horizon=10, metrics=metrics)
    assert "no template tree" in run.skipped_metrics["tree_regret"]
    # the bandit protocol plays the experts block but this metric is for the experts protocol
    bandit = run_game(
        "exp3",
        "tree_experts",
        horizon=10,
        adversary_params={"awake": "all", "depth": 1},
        metrics=metrics,
    )
    assert "experts protocol" in bandit.skipped_metrics["tree_regret"]


def test_bad_templates_are_refused():
    with pytest.raises(ConfigError, match="shape"):
        check_parents(np.array([-1, 0]), 3, "adversary x")
    with pytest.raises(ConfigError, match="earlier expert"):
        check_parents(np.array([-1, 2, 0]), 3, "adversary x")
    assert check_parents(heap_parents(6), 6, "adversary x").dtype == np.int64
    assert math.isclose(pruning_values(heap_parents(2), [[0.25, 0.5]])[0], 0.75)
