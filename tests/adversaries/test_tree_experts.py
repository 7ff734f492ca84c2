"""Tests of the tree-experts adversary (arena/adversaries/tree_experts.py) and of AdaNormalHedge on
it.

Oracles: the construction's own definition (a hidden pruning with m leaves, node predictions
that copy its leaf values, targets on its leaves, the D edges of ``x_t``'s path awake); block
split invariance of every stream; and Luo 2016, §2.3.4: with u uniform on the m terminal edges
of a best pruning P*, ``tree_regret = Σ_{e∈S*} R_{T,e}`` and AdaNormalHedge's sleeping bound
(Theorem 6 via Lemma 4) gives ``tree_regret ≤ Σ_{e∈S*} sqrt(3 C_e ln(N B)) ≤
sqrt(3 m ln(N B) Σ_t |ℓ̂_t − f_t(P*(x_t))|)``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from arena import GameSpec, run_game
from arena.adversaries.tree_experts import TreeExperts, draw_structure
from arena.errors import ConfigError
from arena.game import prepare_game
from arena.metrics.tree import best_pruning, heap_parents, tree_prunings
from tests.helpers import assert_below, rngs
from tests.helpers.contract import run_in_process


def reset(adversary: TreeExperts, n_rep: int = 3, seed: int = 0, horizon: int = 100):
    n = adversary.resolve_n_actions(None)
    adversary.reset(GameSpec("experts", n, horizon, n_replicates=n_rep), rngs(seed, n_rep))
    return adversary


def test_structure_is_a_pruning_with_copies_below_its_leaves():
    rng = np.random.default_rng(3)
    for depth in (1, 2, 3):
        n = 2 ** (depth + 1) - 2
        parents = heap_parents(n)
        prunings = tree_prunings(parents)
        for m in (None, 2, 2**depth):
            hidden, pred, target = draw_structure(rng, depth, m, node_noise=0.2)
            leaves = frozenset(np.flatnonzero(hidden).tolist())
            assert leaves in prunings and (m is None or len(leaves) == m)
            assert ((pred >= 0) & (pred <= 1)).all()
            # every template leaf's target is the value of the hidden leaf above it, and the
            # nodes between them predict noisy copies of it (within the node noise)
            for leaf in range(2**depth):
                e = 2**depth - 2 + leaf  # the edge into the template leaf
                chain = []
                while e >= 0:
                    chain.append(e)
                    e = int(parents[e])
                (u,) = [e for e in chain if e in leaves]
                assert target[leaf] == pred[u]
                below = chain[: chain.index(u)]
                assert all(abs(pred[e] - pred[u]) <= 0.2 + 1e-15 for e in below)


def test_paths_losses_and_confidences():
    adv = reset(TreeExperts(depth=3, noise=0.0, bias=0.25), n_rep=2, horizon=4000)
    losses = adv.losses_block(1, 4000)
    conf = adv.confidences_block(1, 4000)
    reached = adv.oracle("reached", 1, 4000)
    parents = adv.tree_parents()
    assert np.array_equal(conf, reached) and set(np.unique(conf)) == {0.0, 1.0}
    assert (conf.sum(axis=2) == 3).all()
    # each awake edge's parent edge is awake: the awake edges are one root-to-leaf path
    inner = conf[..., parents >= 0]
    assert (conf[..., parents[parents >= 0]] >= inner).all()
    # P(x_k = 1) = bias: the right edge below the root is awake a quarter of the rounds
    # (8000 draws: 5 sd ≈ 0.024)
    assert abs(conf[..., 1].mean() - 0.25) < 0.025
    # noise 0: the hidden leaf on the path predicts y* exactly, and every loss is |c − y*|
    hidden, pred = adv.hidden_leaves(), adv.node_predictions()
    for r in range(2):
        on_leaf = conf[r] * hidden[r]
        assert (on_leaf.sum(axis=1) == 1).all()
        target = pred[r][on_leaf.argmax(axis=1)]
        assert np.array_equal(losses[r], np.abs(pred[r][None, :] - target[:, None]))
    assert ((losses >= 0) & (losses <= 1)).all()


def test_squared_loss_and_noise():
    absolute = reset(TreeExperts(depth=2, noise=0.3), seed=4).losses_block(1, 50)
    squared = reset(TreeExperts(depth=2, noise=0.3, loss="squared"), seed=4).losses_block(1, 50)
    assert np.allclose(squared, absolute**2, atol=1e-15, rtol=0)


@pytest.mark.parametrize("params", [{}, {"awake": "all", "depth": 2}])
def test_block_split_invariance(params):
    whole = reset(TreeExperts(**params), seed=7)
    want = [whole.losses_block(1, 40), whole.oracle("reached", 1, 40)]
    for split in ((1, 9, 30), (17, 1, 1, 21)):
        adv, got, t0 = reset(TreeExperts(**params), seed=7), [[], []], 1
        for n in split:
            # the reference loop asks the confidences first, the engine the losses first
            got[1].append(adv.oracle("reached", t0, n))
            got[0].append(adv.losses_block(t0, n))
            t0 += n
        for part, whole_stream in zip(got, want, strict=True):
            assert np.array_equal(np.concatenate(part, axis=1), whole_stream)
    with pytest.raises(ValueError, match="in order"):
        adv.losses_block(5, 3)


def test_tree_seed_shares_the_structure():
    shared = reset(TreeExperts(depth=3, tree_seed=11))
    assert (shared.node_predictions() == shared.node_predictions()[0]).all()
    own = reset(TreeExperts(depth=3))
    assert not (own.node_predictions() == own.node_predictions()[0]).all()
    # the rounds still differ across replicates
    reached = shared.oracle("reached", 1, 30)
    assert not np.array_equal(reached[0], reached[1])


def test_bad_input_is_refused():
    with pytest.raises(ConfigError, match="n_actions=14"):
        run_game("ada_normal_hedge", TreeExperts(depth=3), n_actions=10, horizon=5)
    with pytest.raises(ConfigError, match="n_leaves"):
        run_game("ada_normal_hedge", TreeExperts(depth=2, n_leaves=5), horizon=5)
    with pytest.raises(ConfigError, match="supports_confidences"):
        run_game("hedge", TreeExperts(), horizon=5)
    assert TreeExperts(awake="all").tags.emits_confidences is False
    assert TreeExperts.tags.emits_confidences is True


@pytest.mark.parametrize(
    "params",
    [
        {"depth": 4, "noise": 0.2},
        {"depth": 3, "loss": "squared", "n_leaves": 6, "bias": 0.3, "noise": 0.5},
    ],
)
def test_ada_normal_hedge_keeps_the_tree_bound(params):
    """Luo 2016, §2.3.4: the tree regret is m·R(u), bounded through Theorem 6 per edge."""
    horizon = 3000
    game = prepare_game(
        "ada_normal_hedge",
        TreeExperts(**params),
        horizon=horizon,
        replicates=2,
        seed=1,
        metrics={"loss": {}},
    )
    player, adv = game.player, game.adversary
    losses, conf = adv.losses_block(1, horizon), adv.confidences_block(1, horizon)
    probs = player.play_block(losses, confidences=conf)
    assert (probs[conf == 0] == 0).all()  # zero mass on the edges x_t does not traverse
    learner = (probs * losses).sum(axis=2)  # ℓ̂_t
    # Luo's prediction y_t = Σ p_e c_e suffers f_t(y_t) ≤ ℓ̂_t (convexity): check on y*
    n = losses.shape[2]
    big_r, big_c = player.cumulative_regrets, player.cumulative_magnitudes
    log_nb = np.log(n * player.potential_budget())
    for r in range(2):
        value, leaves = best_pruning(adv.tree_parents(), (conf[r] * losses[r]).sum(axis=0))
        regret = learner[r].sum() - value
        assert abs(regret - big_r[r, leaves].sum()) <= 1e-9 * horizon  # = m·R(u)
        per_edge = np.sqrt(3.0 * big_c[r, leaves] * log_nb[r]).sum()
        best_path = (conf[r] * leaves).argmax(axis=1)  # the awake terminal edge of P*
        gaps = np.abs(learner[r] - losses[r, np.arange(horizon), best_path]).sum()
        m = int(leaves.sum())
        assert_below(regret, per_edge, f"per-edge bound {params}")
        assert_below(per_edge, np.sqrt(3.0 * m * log_nb[r] * gaps), "Cauchy–Schwarz")
        assert regret > 0  # the bound is not vacuous here: the learner pays for learning


def test_mixture_prediction_loss_is_below_the_arena_loss():
    game = prepare_game("ada_normal_hedge", TreeExperts(depth=3, noise=0.0), horizon=200)
    adv, player = game.adversary, game.player
    losses, conf = adv.losses_block(1, 200), adv.confidences_block(1, 200)
    probs = player.play_block(losses, confidences=conf)
    pred, hidden = adv.node_predictions(), adv.hidden_leaves()
    for r in range(probs.shape[0]):
        target = pred[r][(conf[r] * hidden[r]).argmax(axis=1)]  # y* (noise 0)
        mixed = np.abs(probs[r] @ pred[r] - target)  # f_t(Σ_e p_e c_e)
        assert_below(mixed, (probs[r] * losses[r]).sum(axis=1), "f(y_t) ≤ ℓ̂_t")


TOURNAMENT = {
    "name": "tree_small",
    "players": ["ada_normal_hedge", "pruning_hedge"],
    "adversaries": [{"name": "tree_experts", "params": {"depth": 2}}],
    "n_actions": [None],
    "horizon": 60,
    "replicates": 2,
    "seed": 4,
    "metrics": {"tree_regret": {}, "loss": {}, "bound": {}},
}
"""A tiny tournament of a tree game (``n_actions: null``: the depth fixes N = 6)."""


def test_cli_run_and_tournament(tmp_path):
    argv = ["run", "player=ada_normal_hedge", "adversary=tree_experts", "adversary.depth=2"]
    done = run_in_process([*argv, "horizon=50", "replicates=2", "hydra.run.dir=out"], tmp_path)
    assert done.returncode == 0, done.stderr
    rows = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert {"tree_regret", "sleeping_regret", "bound:sleeping_regret"} <= set(rows.metric)
    assert (rows.n_actions == 6).all()
    (tmp_path / "tree.yaml").write_text(yaml.safe_dump(TOURNAMENT))
    argv = ["tournament", "--config", "tree.yaml", "executor=serial", "out=results"]
    done = run_in_process([*argv, "progress=false"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "2 cell(s) run, 0 already done, 0 failed" in done.stdout
    parts = (tmp_path / "results" / "parts").glob("results-*.parquet")
    rows = pd.concat(pd.read_parquet(p) for p in parts)
    assert (rows.metric == "tree_regret").any()
    assert set(rows[rows.metric == "bound:tree_regret"].player) == {"pruning_hedge"}
