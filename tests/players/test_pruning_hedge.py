"""Tests of exponential weights over prunings (arena/players/pruning_hedge.py, Helmbold & Schapire
1997).

Oracles: a literal transcription of the algorithm — every pruning P of the template enumerated,
weight ``2^{−c(P)} e^{−η L(P)}`` (Helmbold & Schapire's prior, the root's coin removed), ``p_e``
the normalized weight of the prunings whose leaf on ``x_t``'s path is edge e — reproduced to
1e-12 by the predict/update loop and the block kernel; the partition function
``Σ_P π(P) e^{−η L(P)}``; and the declared bound (Cesa-Bianchi & Lugosi 2006, Theorem 2.2 with a
prior), on tree games and against an adaptive adversary that reads ``p_t``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import GameSpec, run_game
from arena.adversaries.tree_experts import TreeExperts
from arena.errors import ConfigError
from arena.metrics.tree import best_pruning, heap_parents, pruning_coins, tree_prunings
from arena.players.pruning_hedge import PruningHedge, route
from tests.helpers import assert_below, check_declared, rngs

ATOL = 1e-12
"""The literal mixture (a log-sum-exp over ≤ 25 prunings) and the DP (products of ≤ 3 ratios of
log-domain sums) compute the same probabilities in other orders: a few ulps."""


def literal_probs(parents, losses, reached, eta):
    """Exponential weights over the enumerated prunings, round by round: the (T, N) ``p_t``."""
    prunings = [sorted(p) for p in tree_prunings(parents)]
    log_prior = np.array([-pruning_coins(parents, frozenset(p)) * math.log(2.0) for p in prunings])
    cum = np.zeros(len(prunings))
    out = np.zeros(losses.shape)
    for t in range(losses.shape[0]):
        leaf = [next(e for e in p if reached[t, e] > 0) for p in prunings]  # P(x_t)'s edge
        log_w = log_prior - eta * cum
        w = np.exp(log_w - log_w.max())
        w /= w.sum()
        for k, e in enumerate(leaf):
            out[t, e] += w[k]
        cum += losses[t, leaf]
    return out


def random_paths(rng, n: int, horizon: int) -> np.ndarray:
    """0/1 indicators of random root-to-leaf paths of the heap tree with n edges, (T, n)."""
    reached = np.zeros((horizon, n))
    for t in range(horizon):
        node = 0
        while 2 * node + 1 <= n:
            kids = [c for c in (2 * node + 1, 2 * node + 2) if c <= n]
            node = kids[int(rng.integers(len(kids)))]
            reached[t, node - 1] = 1.0
    return reached


@pytest.mark.parametrize(("n", "eta"), [(2, 0.7), (6, 0.3), (14, 0.5), (14, 6.0), (5, 1.0)])
def test_equals_literal_enumeration(n, eta):
    """Loop and kernel agree with the enumerated mixture (depth ≤ 3; n = 5: incomplete tree)."""
    rng = np.random.default_rng(n)
    horizon, n_rep = 40, 2
    losses = rng.random((n_rep, horizon, n))
    losses[..., 0] = np.round(losses[..., 0])
    reached = np.stack([random_paths(rng, n, horizon) for _ in range(n_rep)])
    spec = GameSpec("experts", n, horizon, n_replicates=n_rep)
    loop, block = PruningHedge(eta=eta), PruningHedge(eta=eta)
    loop.reset(spec, rngs(0, n_rep))
    block.reset(spec, rngs(0, n_rep))
    got = np.stack([loop_round(loop, losses[:, t], reached[:, t]) for t in range(horizon)], 1)
    parts, t0 = [], 0
    for size in (1, 17, 22):
        part = slice(t0, t0 + size)
        parts.append(block.play_block(losses[:, part], confidences=reached[:, part]))
        t0 += size
    parents = heap_parents(n)
    for r in range(n_rep):
        want = literal_probs(parents, losses[r], reached[r], eta)
        assert np.abs(got[r] - want).max() <= ATOL
        assert np.abs(np.concatenate(parts, axis=1)[r] - want).max() <= ATOL
        # the partition function: ln Σ_P π(P) e^{−η L(P)} over every pruning
        totals = [
            sum(losses[r, t, e] for t in range(horizon) for e in p if reached[r, t, e] > 0)
            for p in tree_prunings(parents)
        ]
        terms = np.array(
            [
                -pruning_coins(parents, p) * math.log(2.0) - eta * x
                for p, x in zip(tree_prunings(parents), totals, strict=True)
            ]
        )
        log_z = terms.max() + math.log(np.exp(terms - terms.max()).sum())
        assert abs(loop.log_partition()[r] - log_z) <= 1e-12 * max(1.0, abs(log_z))


def loop_round(player, losses, conf):
    p = player.predict(confidences=conf)
    player.update(losses, confidences=conf)
    return p


def test_prior_is_normalized_and_tuned_rate():
    spec = GameSpec("experts", 30, 1000, n_replicates=1)
    player = PruningHedge()
    player.reset(spec, rngs(0, 1))
    assert player.log_partition()[0] == 0.0  # Σ_P 2^{−c(P)} = 1 before any loss
    # depth 4: 14 edges into inner nodes; with m = 3 leaves, c ≤ 2m − 1 = 5
    assert math.isclose(player.learning_rate, math.sqrt(8 * 14 * math.log(2) / 1000))
    player = PruningHedge(leaves=3)
    player.reset(spec, rngs(0, 1))
    assert math.isclose(player.learning_rate, math.sqrt(8 * 5 * math.log(2) / 1000))
    player.reset(GameSpec("experts", 2, 1000), rngs(0, 1))  # one pruning: c = 0, floored at 1
    assert math.isclose(player.learning_rate, math.sqrt(8 * math.log(2) / 1000))
    with pytest.raises(ConfigError, match="horizon"):
        PruningHedge().reset(GameSpec("experts", 6, None), rngs(0, 1))


@pytest.mark.parametrize(
    "params",
    [{}, {"depth": 3, "loss": "squared", "n_leaves": 7, "bias": 0.2}, {"depth": 5, "noise": 0.6}],
)
def test_declared_bound_holds_on_tree_games(params):
    rows = run_game(
        "pruning_hedge",
        TreeExperts(**params),
        horizon=3000,
        replicates=3,
        metrics={"tree_regret": {}, "bound": {}},
    ).rows
    assert check_declared(rows, f"pruning_hedge vs tree_experts {params}") > 0


def test_declared_bound_against_an_adaptive_adversary():
    """Each round a random path, and loss 1 on the path's edge of largest p (0 elsewhere):
    the declared bound, and its sharper form ``Ĥ_t ≤ −(1/η) ln Z_t + ηt/8``, hold every round."""
    rng = np.random.default_rng(8)
    n, horizon = 14, 400
    parents = heap_parents(n)
    for eta in (0.05, 0.5, "tuned"):
        player = PruningHedge(eta=eta)
        player.reset(GameSpec("experts", n, horizon), rngs(1, 1))
        learner, node = 0.0, np.zeros(n)
        for t in range(1, horizon + 1):
            conf = random_paths(rng, n, 1)
            p = player.predict(confidences=conf)
            losses = np.zeros((1, n))
            losses[0, p[0].argmax()] = 1.0
            player.update(losses, confidences=conf)
            learner += float(p[0] @ losses[0])
            node += conf[0] * losses[0]
            regret = learner - best_pruning(parents, node)[0]
            bound = player.bounds(t)[("tree_regret", math.nan)]
            assert_below(regret, bound, f"eta={eta} t={t}")
            rate = player.learning_rate
            assert_below(learner, -player.log_partition() / rate + rate * t / 8, "soft form")
        assert regret > 0.1 * bound  # the adversary makes the bound bite


def test_tuned_bound_is_at_most_the_worst_case_form():
    """With the tuned rate and c(P*) ≤ c, the declared bound is ≤ sqrt((c/2) T ln 2)."""
    rows = run_game(
        "pruning_hedge",
        TreeExperts(depth=3),
        horizon=2000,
        replicates=2,
        metrics={"bound": {}},
    ).rows
    final = rows[rows.t == 2000].value.to_numpy()
    assert_below(final, math.sqrt(6 / 2 * 2000 * math.log(2)), "sqrt((c/2) T ln 2), c = 6")


def test_outside_tree_games():
    """No confidences: the leftmost path, no declared bound; a non-path awake set is refused."""
    player = PruningHedge(eta=0.5)
    player.reset(GameSpec("experts", 6, 10, n_replicates=1), rngs(0, 1))
    p = player.predict()
    assert np.flatnonzero(p[0]).tolist() == [0, 2]
    player.update(np.ones((1, 6)))
    assert player.bounds(1) == {}
    with pytest.raises(ValueError, match="root-to-leaf path"):
        route(np.array([1, 0, 0, 0, 1, 1.0]), 6)
    metrics = {"loss": {}, "bound": {}}
    run = run_game("pruning_hedge", "bernoulli", n_actions=5, horizon=20, metrics=metrics)
    assert len(run.rows) > 0 and "tree games only" in run.skipped_metrics["bound"]
