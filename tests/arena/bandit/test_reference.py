"""The bandit engine equals its literal reference loop to 1e-12, whatever the chunking."""

from __future__ import annotations

import numpy as np
import pytest

from arena.bandit.reference import reference_play
from arena.bandit.testing import SimpleExp3, UniformBandit
from arena.game import run_game

ATOL = 1e-12
METRICS = {
    "loss": {},
    "realized_loss": {},
    "regret": {},
    "realized_regret": {},
    "shifting_regret": {"k": [0, 2]},
    "adaptive_regret": {},
    "sa_regret": {"tau": [5, 50]},
    "dynamic_regret": {},
    "pseudo_regret": {},
    "entropy": {},
    "arm_pulls": {},
    "arm_pseudo_regret": {},
    "bound": {},
}


def assert_same(a, b):
    assert a.drop(columns="value").equals(b.drop(columns="value"))
    assert float(np.abs(a.value.to_numpy() - b.value.to_numpy()).max()) <= ATOL


@pytest.mark.parametrize("player", ["exp3", "exp3_ix", "ucb1", SimpleExp3(0.3), UniformBandit()])
@pytest.mark.parametrize(
    "adversary", ["bernoulli", "piecewise_stochastic", "greedy", "heavier_half"]
)
def test_engine_equals_reference(player, adversary):
    kw = dict(n_actions=4, horizon=80, replicates=3, seed=2, metrics=METRICS)
    ref = reference_play(player, adversary, **kw)
    for chunk in (1 << 18, 7 * 4 * 3):  # one chunk per checkpoint span, and 7-round chunks
        assert_same(run_game(player, adversary, chunk_elements=chunk, **kw).rows, ref)


def test_reference_refuses_a_game_of_another_protocol():
    with pytest.raises(ValueError, match="not a bandit game"):
        reference_play("hedge", "bernoulli", n_actions=2, horizon=5)


def test_the_bandit_loop_is_the_experts_loop_with_its_feedback_overridden():
    """Like BanditStepper: the rounds, draws, history and records are the experts loop's; only
    what the player is handed differs (and the refusal of a game of another protocol)."""
    from arena.bandit.reference import BanditLoop
    from arena.experts.reference import ExpertsLoop

    assert issubclass(BanditLoop, ExpertsLoop)
    own = {k for k, v in vars(BanditLoop).items() if callable(v) and not k.startswith("__")}
    # the feedback: what the player is owed (outcome) and how it is handed over (round_update)
    assert own == {"start", "outcome", "round_update"}
