"""MOSS: literal transcription, golden values, robustness and its minimax bound on stochastic
arms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.game import run_game
from arena.players.moss import MOSS
from arena.spec import GameSpec
from tests.helpers.bandit import expected_bound_holds, run_block


def literal_moss(losses, horizon):
    """Audibert & Bubeck 2009 (MOSS) on rewards 1 − ℓ, one replicate: each arm once, then
    argmax_i X̄_i + √(max(ln(n/(K s_i)), 0)/s_i), n the horizon, s_i the pulls of arm i."""
    k = len(losses[0])
    rewards, counts, arms = [0.0] * k, [0] * k, []
    for t in range(len(losses)):
        if 0 in counts:
            j = counts.index(0)
        else:
            index = [rewards[i] / counts[i]
                     + math.sqrt(max(math.log(horizon / (k * counts[i])), 0) / counts[i])
                     for i in range(k)]  # fmt: skip
            j = max(range(k), key=lambda i: (index[i], -i))
        arms.append(j)
        rewards[j] += 1 - losses[t][j]
        counts[j] += 1
    return arms


def test_fast_path_equals_literal_transcription():
    rng = np.random.default_rng(6)
    means = rng.random(5)
    losses = (rng.random((3, 400, 5)) < means).astype(float)
    losses[2] = rng.random((400, 5)) * means
    _, probs = run_block(MOSS(), losses, rng.random((3, 400)), horizon=1000)
    assert set(np.unique(probs)) <= {0.0, 1.0}
    for r in range(3):
        assert probs[r].argmax(axis=1).tolist() == literal_moss(losses[r].tolist(), 1000)


def test_golden_values():
    """T = 100, K = 2, arm 0 always loses 0, arm 1 always 1: after one pull each, arm 1 has index
    1 − √(ln 50) = −0.978 and arm 0 with m pulls −√(ln(50/m)/m): −1.978, −1.269 (m = 1, 2) then
    −0.968 > −0.978 at m = 3, so round 5 pulls arm 1; now arm 1 has 1 − √(ln 25 / 2) = −0.2686,
    and arm 0 wins until m = 16, where −√(ln 3.125/16) = −0.2669 > −0.2686: round 19 pulls arm 1."""
    losses = np.array([[[0.0, 1.0]] * 19])
    _, probs = run_block(MOSS(), losses, np.zeros((1, 19)), horizon=100)
    assert probs[0].argmax(axis=1).tolist() == [0, 1, 0, 0, 1] + [0] * 13 + [1]


def test_needs_the_horizon():
    with pytest.raises(ConfigError, match="horizon"):
        MOSS().reset(GameSpec("bandit", 3, None, (0.0, 1.0), n_replicates=1), [])


def test_a_million_rounds_stay_finite():
    run = run_game("moss", "bernoulli", n_actions=9, horizon=10**6, replicates=2,
                   metrics=["regret", "arm_pulls"], per_decade=1)  # fmt: skip
    assert np.isfinite(run.rows.value).all()
    last = run.rows[(run.rows.t == 10**6) & (run.rows.metric == "arm_pulls")]
    assert last.groupby("replicate").value.sum().tolist() == [10**6, 10**6]


@pytest.mark.parametrize(
    ("adversary", "params", "gaps"),
    [("bernoulli", {"gap": 0.1}, [0.0] + [0.1] * 3),
     ("bernoulli", {"gap": 0.0}, [0.0] * 4),
     ("bernoulli", {"means": [0.2, 0.5, 0.6, 0.9]}, [0.0, 0.3, 0.4, 0.7]),
     ("beta", {"gap": 0.2}, [0.0] + [0.2] * 3)],
)  # fmt: skip
def test_minimax_bound_on_stochastic_arms(adversary, params, gaps):
    """Lattimore & Szepesvári 2020, Theorem 9.1 (rescaled to [0, 1] losses): the mean
    pseudo-regret stays within 19.5√(KT) + ΣΔ_i at every t ≤ T (it only grows with t)."""
    horizon = 3000
    worst = expected_bound_holds(
        MOSS(), adversary, metric="pseudo_regret", adversary_params=params, n_actions=4,
        horizon=horizon, replicates=32, seed=7,
        bound=lambda t: MOSS.minimax_bound(horizon, gaps),
    )  # fmt: skip
    assert worst <= 1.0
