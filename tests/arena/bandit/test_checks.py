"""The bandit conformance checks pass correct players and catch deliberately broken ones."""

from __future__ import annotations

import numpy as np
import pytest

from arena.bandit import checks
from arena.bandit.testing import SimpleExp3, UniformBandit
from arena.players.thompson import Thompson
from arena.players.ucb1 import UCB1
from arena.testing import check_component


class PeekingExp3(SimpleExp3):
    """Plays exactly like SimpleExp3, but its block path touches every arm's loss (a bandit
    kernel must read only l_{t,I_t}): invisible on finite losses, caught by the NaN poison."""

    def play_block(self, losses, uniforms):
        probs = super().play_block(losses, uniforms)
        self._est += 0.0 * losses.sum(axis=1)  # reads the unobserved losses
        return probs


class PostUpdateExp3(SimpleExp3):
    """Divides the importance weight by the distribution after the update (the bug the issue
    cites), not by the probability the arm was drawn with."""

    def update(self, actions, losses, probs):
        rows = np.arange(actions.shape[0])
        self._est[rows, actions] += losses / probs[rows, actions]
        after = self.predict()
        self._est[rows, actions] -= losses / probs[rows, actions]
        self._est[rows, actions] += losses / after[rows, actions]


class UndeclaredIX(SimpleExp3):
    """Implicit exploration (a biased estimate) without declaring its expectation."""

    def update(self, actions, losses, probs):
        rows = np.arange(actions.shape[0])
        self._est[rows, actions] += losses / (probs[rows, actions] + 0.2)


class OwnDrawKernel(SimpleExp3):
    """A block path that draws I_t by its own rule instead of the arena's inverse CDF."""

    def play_block(self, losses, uniforms):
        return super().play_block(losses, 1.0 - uniforms)


class TooGoodBound(SimpleExp3):
    """Declares a bound on the expected regret that its play cannot meet."""

    def bounds(self, t):
        return {("regret", float("nan")): 0.01 * t}


class ShiftedArmsUCB1(UCB1):
    """Plays its chunks as arms, but pulls the next arm over from the one play_block commits."""

    def play_arms(self, losses, out=None):
        arms = super().play_arms(losses, out=out)
        arms[:] = (arms + 1) % losses.shape[2]
        return arms


class MixedArmsExp3(SimpleExp3):
    """Declares plays_arms, though its p_t are mixed: its arms are the modes of its p_t."""

    plays_arms = True

    def play_arms(self, losses, out=None):
        return self.play_block(losses, np.zeros(losses.shape[:2])).argmax(axis=2)


class UnscaledArmsUCB1(UCB1):
    """Plays its arms on the raw losses, not mapped to [0, 1] by the declared range: the same
    arms as play_block in [0, 1] only."""

    def play_arms(self, losses, out=None):
        lo, scale = self._lo, self._scale
        self._lo, self._scale = 0.0, 1.0
        try:
            return super().play_arms(losses, out=out)
        finally:
            self._lo, self._scale = lo, scale


class FloatArmsUCB1(UCB1):
    """Returns the right arms as floats, which the driver refuses."""

    def play_arms(self, losses, out=None):
        return super().play_arms(losses).astype(float)


@pytest.mark.parametrize("player", [SimpleExp3(), SimpleExp3(eta=2.0), UniformBandit()])
def test_correct_players_pass(player):
    assert check_component(player) == {}


@pytest.mark.parametrize(
    ("player", "check", "message"),
    [
        (PeekingExp3(), checks.check_reads_only_observed_losses, "did not draw"),
        (PostUpdateExp3(eta=1.0), checks.check_estimate_unbiased, "away from its declared"),
        (UndeclaredIX(), checks.check_estimate_unbiased, "away from its declared"),
        (OwnDrawKernel(), checks.check_block_matches_loop, "differs from the predict/update"),
        (TooGoodBound(), checks.check_declared_bounds_hold, "exceeds its declared bound"),
        (ShiftedArmsUCB1(), checks.check_arms_match_block, "where play_block committed"),
        (MixedArmsExp3(), checks.check_arms_match_block, "not all point masses"),
        (UnscaledArmsUCB1(), checks.check_arms_match_block, r"losses in \[-1, 2\]"),
        (FloatArmsUCB1(), checks.check_arms_match_block, "float64 arms, not an integer array"),
    ],
)
def test_broken_players_are_caught(player, check, message):
    with pytest.raises(AssertionError, match=message):
        check(player)


def test_the_poison_check_passes_when_only_the_loop_would_notice_nothing():
    """A peeking kernel plays like the loop on finite losses: the block check alone passes it,
    so the poison check is what proves the bandit restriction."""
    checks.check_block_matches_loop(PeekingExp3())


def test_the_arms_check_passes_the_point_mass_players():
    for player in (UCB1(), Thompson()):
        checks.check_arms_match_block(player)
