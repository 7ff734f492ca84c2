"""Losses that are 0 or 1 by construction skip the driver's range scan, and nothing else does."""

from __future__ import annotations

import numpy as np
import pytest

import arena.experts.game as experts_game
from arena import registry
from arena.adversaries.stochastic import Bernoulli
from arena.errors import GameError
from arena.experts.components import _ZERO_ONE_LOSSES, draws_zero_one_losses
from arena.game import run_game
from arena.spec import GameSpec


@pytest.fixture
def scans(monkeypatch):
    """Count the driver's scans of an adversary's losses (:func:`_first_bad_losses` calls)."""
    calls = []
    scan = experts_game._first_bad_losses

    def counted(losses, lo, hi):
        calls.append(losses.shape)
        return scan(losses, lo, hi)

    monkeypatch.setattr(experts_game, "_first_bad_losses", counted)
    return calls


@pytest.mark.parametrize(
    ("player", "adversary", "scanned"),
    [("hedge", "bernoulli", False), ("ucb1", "bernoulli", False), ("hedge", "fair_coin", False),
     ("exp3", "drifting_means", False), ("hedge", "beta", True), ("exp3", "beta", True)],
)  # fmt: skip
def test_only_zero_one_adversaries_skip_the_scan(scans, player, adversary, scanned):
    run_game(player, adversary, n_actions=3, horizon=200, replicates=2, metrics=["regret"])
    assert bool(scans) == scanned


class Doubled(Bernoulli):
    """A Bernoulli whose ``losses_block`` is its own: 0 or 2."""

    def losses_block(self, t0, n):
        return 2.0 * super().losses_block(t0, n)


class Narrow(Bernoulli):
    """A Bernoulli that declares losses in [0, ½]: its 1s are out of range."""

    def declared_range(self):
        return (0.0, 0.5)


@pytest.mark.parametrize("replicates", [1, 3])  # one replicate plays spans
@pytest.mark.parametrize("player", ["hedge", "ucb1"])
def test_an_overridden_losses_block_is_scanned(player, replicates):
    assert not draws_zero_one_losses(Doubled())
    message = r"adversary .*Doubled.*loss of expert \d = 2\.0 lies outside the declared range"
    with pytest.raises(GameError, match=message):
        run_game(player, Doubled(), n_actions=3, horizon=50, replicates=replicates)


@pytest.mark.parametrize("replicates", [1, 3])
def test_a_range_that_does_not_hold_zero_and_one_is_scanned(replicates):
    assert draws_zero_one_losses(Narrow())  # trusted to be 0 or 1, not to be in [0, ½]
    with pytest.raises(GameError, match=r"= 1\.0 lies outside the declared range \[0, 0\.5\]"):
        run_game("hedge", Narrow(), n_actions=3, horizon=50, replicates=replicates)


MARKED = sorted(
    name
    for name in registry.available("adversary")
    if getattr(registry.load("adversary", name), "losses_block", None) in _ZERO_ONE_LOSSES
)
"""The registered adversaries whose ``losses_block`` is a marked one (inherited unchanged)."""


def test_the_marked_adversaries_are_the_bernoulli_families():
    assert {"bernoulli", "fair_coin", "drifting_means", "piecewise_stochastic"} <= set(MARKED)
    assert "beta" not in MARKED and "replay" not in MARKED


@pytest.mark.parametrize("name", MARKED)
def test_the_skipped_scan_would_find_nothing(name):
    """What the trust rests on: every loss of every registered adversary that inherits a marked
    ``losses_block`` is exactly 0.0 or 1.0, over splits into blocks, with its defaults."""
    # two_instance simulates a named policy outside a game (it binds the game's own in one)
    adversary = registry.make(
        "adversary", name, **({"player": "exp3"} if name == "two_instance" else {})
    )
    assert draws_zero_one_losses(adversary)
    n_act = adversary.resolve_n_actions(None)
    adversary.reset(GameSpec("experts", n_act, 300), [np.random.default_rng(r) for r in range(5)])
    losses = np.concatenate([adversary.losses_block(1, 7), adversary.losses_block(8, 293)], axis=1)
    assert losses.shape == (5, 300, n_act)
    assert set(np.unique(losses).tolist()) <= {0.0, 1.0}


def test_extreme_means_give_zero_one_losses():
    adversary = Bernoulli(means=[0.0, 1.0, 0.3, 0.999])
    adversary.reset(GameSpec("experts", 4, 300), [np.random.default_rng(r) for r in range(5)])
    losses = adversary.losses_block(1, 300)
    assert set(np.unique(losses).tolist()) <= {0.0, 1.0}
    assert (losses[:, :, 0] == 0.0).all() and (losses[:, :, 1] == 1.0).all()
