"""Issue 14: what a component returns must be real numbers, or the game stops naming it.

A plugin that returns strings, ``None``, objects, ragged lists or complex values used to reach
numpy's conversion and end with a bare ``ValueError`` traceback (or, for complex values, play on
with the imaginary part dropped). The driver's :func:`arena.validation.real_array` stops the game
with a :class:`~arena.errors.GameError` naming the component, what it returned, the round and
replicate.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena.errors import GameError
from arena.experts.testing import BernoulliStream, UniformPlayer
from arena.game import run_game

BAD_OUTPUTS = {
    "strings": ("str", lambda shape: np.full(shape, "a").tolist()),
    "complex": ("complex", lambda shape: np.full(shape, 0.5 + 0.1j)),
    "objects": ("object", lambda shape: np.full(shape, {"a": 1}, dtype=object)),
    "none": ("object", lambda shape: None),
    "ragged": ("no array of numbers", lambda shape: [[0.5], [0.5, 0.5]]),
}


class StringAdversary(BernoulliStream):
    """Returns the bad output of :data:`BAD_OUTPUTS` ``[kind]`` from round 1 on."""

    name = "string_adversary"

    def __init__(self, kind: str = "strings"):
        self.kind = kind

    def reset(self, spec, rngs):
        self._rngs, self._n = list(rngs), spec.n_actions

    def losses_block(self, t0, n):
        return BAD_OUTPUTS[self.kind][1]((len(self._rngs), n, self._n))


class StringPlayer(UniformPlayer):
    """Predicts the bad output of :data:`BAD_OUTPUTS` ``[kind]`` (through ``play_block``)."""

    name = "string_player"

    def __init__(self, kind: str = "strings"):
        self.kind = kind

    def play_block(self, losses, **_):
        return BAD_OUTPUTS[self.kind][1](losses.shape)


@pytest.mark.parametrize("kind", sorted(BAD_OUTPUTS))
def test_an_adversary_returning_no_numbers_stops_the_game_naming_it(kind):
    expected, _ = BAD_OUTPUTS[kind]
    with pytest.raises(GameError) as info:
        run_game(UniformPlayer(), StringAdversary(kind), n_actions=3, horizon=5, replicates=2)
    message = str(info.value)
    assert message.startswith("adversary string_adversary")
    assert "losses_block returned" in message and expected in message
    assert "(round 1, replicate 0)" in message


@pytest.mark.parametrize("kind", sorted(BAD_OUTPUTS))
def test_a_player_returning_no_numbers_stops_the_game_naming_it(kind):
    expected, _ = BAD_OUTPUTS[kind]
    with pytest.raises(GameError) as info:
        run_game(StringPlayer(kind), BernoulliStream(), n_actions=3, horizon=5, replicates=2)
    message = str(info.value)
    assert message.startswith("player string_player")
    assert "play_block returned" in message and expected in message


def test_complex_losses_are_refused_not_truncated():
    """The imaginary part would be dropped silently by a float conversion."""
    with pytest.raises(GameError, match="complex values"):
        run_game(UniformPlayer(), StringAdversary("complex"), n_actions=2, horizon=3)


class BrokenReset(BernoulliStream):
    """A plugin whose ``reset`` has a bug (an attribute it never set)."""

    name = "broken_reset"

    def __init__(self):
        pass


def test_a_bug_in_reset_is_named_with_the_component():
    from arena.errors import ArenaError

    with pytest.raises(ArenaError, match=r"^adversary broken_reset .*reset failed: AttributeError"):
        run_game(UniformPlayer(), BrokenReset(), n_actions=2, horizon=3)
