"""UCB1: literal transcription, golden values, robustness and Auer et al.'s Theorem 1."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.game import run_game
from arena.players.ucb1 import UCB1
from arena.spec import GameSpec
from tests.helpers.bandit import expected_bound_holds, run_block


def literal_ucb1(losses):
    """UCB1 (Auer, Cesa-Bianchi & Fischer 2002, Figure 1) on rewards 1 − ℓ, one replicate:
    play each machine once, then the j maximizing x̄_j + √(2 ln n / n_j), n = plays so far."""
    horizon, k = len(losses), len(losses[0])
    rewards, counts, arms = [0.0] * k, [0] * k, []
    for t in range(horizon):
        if 0 in counts:
            j = counts.index(0)
        else:
            index = [rewards[i] / counts[i] + math.sqrt(2 * math.log(t) / counts[i])
                     for i in range(k)]  # fmt: skip
            j = max(range(k), key=lambda i: (index[i], -i))
        arms.append(j)
        rewards[j] += 1 - losses[t][j]
        counts[j] += 1
    return arms


@pytest.mark.parametrize("n_rep", [1, 3, 5])  # 5: four replicates interleaved, then one alone
def test_fast_path_equals_literal_transcription(n_rep):
    rng = np.random.default_rng(3)
    means = rng.random(5)
    losses = (rng.random((n_rep, 400, 5)) < means).astype(float)
    _, probs = run_block(UCB1(), losses, rng.random((n_rep, 400)))
    assert set(np.unique(probs)) <= {0.0, 1.0}
    for r in range(n_rep):
        assert probs[r].argmax(axis=1).tolist() == literal_ucb1(losses[r].tolist())


def test_a_replicate_alone_plays_as_beside_others():
    """One replicate (a chain of its own, :func:`_ucb1_play_alone`) pulls the same arms as beside
    three others (interleaved), over chunks of uneven lengths (its exploration factor by the
    rounds played before each), with ties (losses on a grid of quarters) and losses outside
    [0, 1] (mapped by the range)."""
    rng = np.random.default_rng(5)
    n_rep, n_act, lengths = 4, 6, (1, 7, 300, 92)
    losses = rng.integers(0, 5, (n_rep, sum(lengths), n_act)) * 0.75 - 1.0
    losses[..., 3] -= 0.25

    def chunked(lo: int, hi: int) -> np.ndarray:
        spec = GameSpec("bandit", n_act, sum(lengths), (-1.0, 2.0), n_replicates=hi - lo)
        player = UCB1()
        player.reset(spec, [np.random.default_rng(r) for r in range(lo, hi)])
        out, t0 = [], 0
        for n in lengths:
            out.append(player.play_arms(losses[lo:hi, t0 : t0 + n].copy()))
            t0 += n
        return np.concatenate(out, axis=1)

    together = chunked(0, n_rep)
    assert len({tuple(row) for row in together.tolist()}) == n_rep  # the replicates differ
    for r in range(n_rep):
        assert np.array_equal(chunked(r, r + 1)[0], together[r])


def test_golden_values():
    """Arm 0 always loses 0, arm 1 always 1: rounds 1, 2 pull arms 0, 1; after n plays arm 1 (one
    pull) has index 1 − √(2 ln n) and arm 0 (n − 1 pulls) −√(2 ln n / (n − 1)); arm 1 wins first at
    n = 6 (1 − 1.893 < −1.893/√5, while at n = 5: 1 − 1.794 > −1.794/2), i.e. round 7; at round
    8 (n = 7) arm 0's −√(2 ln 7 / 5) = −0.882 beats arm 1's 1 − √(ln 7) = −0.395 again."""
    losses = np.array([[[0.0, 1.0]] * 8])
    _, probs = run_block(UCB1(), losses, np.zeros((1, 8)))
    assert probs[0].argmax(axis=1).tolist() == [0, 1, 0, 0, 0, 0, 1, 0]


def test_a_million_rounds_stay_finite():
    run = run_game("ucb1", "bernoulli", n_actions=9, horizon=10**6, replicates=2,
                   metrics=["regret", "arm_pulls"], per_decade=1)  # fmt: skip
    assert np.isfinite(run.rows.value).all()
    last = run.rows[(run.rows.t == 10**6) & (run.rows.metric == "arm_pulls")]
    assert last.groupby("replicate").value.sum().tolist() == [10**6, 10**6]


@pytest.mark.parametrize(
    ("adversary", "params", "gaps"),
    [("bernoulli", {"gap": 0.1}, [0.0] + [0.1] * 3),
     ("bernoulli", {"means": [0.2, 0.5, 0.6, 0.9]}, [0.0, 0.3, 0.4, 0.7]),
     ("beta", {"gap": 0.2}, [0.0] + [0.2] * 3)],
)  # fmt: skip
def test_theorem_1_on_stochastic_arms(adversary, params, gaps):
    """Auer et al. 2002, Theorem 1: mean pseudo-regret within 8 Σ ln n/Δ_i + (1 + π²/3) Σ Δ_i."""
    worst = expected_bound_holds(
        UCB1(), adversary, metric="pseudo_regret", adversary_params=params, n_actions=4,
        horizon=3000, replicates=32, seed=7, bound=lambda t: UCB1.pseudo_regret_bound(t, gaps),
    )  # fmt: skip
    assert worst <= 1.0


def test_ucb1_declares_no_bound():
    run = run_game("ucb1", "bernoulli", n_actions=3, horizon=10, metrics=["regret", "bound"])
    assert run.skipped_metrics["bound"] == "the player declares no bound"
