"""Tags follow the base class unless overridden on purpose; ``History`` refuses undeclared reads.

The issue this guards against: ``tags = AdversaryTags(sees_distribution=True)`` on an
``AdaptiveAdversary`` subclass used to replace the base's tags wholesale, so the dataclass
default ``oblivious=True`` came back and the adversary was checked as oblivious.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena import AdaptiveAdversary, ObliviousAdversary
from arena.bandit.testing import SimpleExp3
from arena.errors import GameError, UndeclaredDistributionError
from arena.experts.testing import UniformPlayer
from arena.game import run_game
from arena.oco.components import AdaptiveOCOAdversary, OCOPlayer
from arena.spec import AdversaryTags, History, PlayerTags


class Seer(AdaptiveAdversary):
    """The natural way to write an adaptive adversary's tags."""

    tags = AdversaryTags(sees_distribution=True)

    def __init__(self):
        pass

    def reset(self, spec, rngs):
        self._shape = (spec.n_replicates, spec.n_actions)

    def losses(self, t, history):
        p = history.probs
        return (p >= p.max(axis=1, keepdims=True)).astype(float)


class BlindSeer(AdaptiveAdversary):
    """Reads ``history.probs`` but forgot the tag."""

    def __init__(self):
        pass

    def reset(self, spec, rngs):
        self._shape = (spec.n_replicates, spec.n_actions)

    def losses(self, t, history):
        p = history.probs
        return (p >= p.max(axis=1, keepdims=True)).astype(float)


def test_an_adaptive_subclass_stays_adaptive_when_its_tags_name_another_field():
    assert Seer.tags.oblivious is False
    assert Seer.tags.sees_distribution is True
    assert Seer.tags.protocol == "experts"


def test_an_oblivious_subclass_stays_oblivious():
    class Timed(ObliviousAdversary):
        tags = AdversaryTags(needs_horizon=True)

    assert Timed.tags.oblivious is True and Timed.tags.needs_horizon is True


def test_a_field_given_on_purpose_overrides_the_base():
    class Declared(AdaptiveAdversary):
        tags = AdversaryTags(oblivious=True)

    assert Declared.tags.oblivious is True  # kept, and check_tags_match_class fails it


def test_inheritance_goes_through_every_level():
    class Deeper(Seer):
        tags = AdversaryTags(needs_horizon=True)

    assert (Deeper.tags.oblivious, Deeper.tags.sees_distribution) == (False, True)
    assert Deeper.tags.needs_horizon is True


def test_oco_subclasses_keep_their_protocol_and_obliviousness():
    class Timed(AdaptiveOCOAdversary):
        tags = AdversaryTags(needs_horizon=True)

    class Deterministic(OCOPlayer):
        tags = PlayerTags(needs_horizon=True)

    assert (Timed.tags.protocol, Timed.tags.oblivious) == ("oco", False)
    assert Deterministic.tags.protocols == OCOPlayer.tags.protocols
    assert Deterministic.tags.randomized is False


def test_inheritance_leaves_equality_and_the_given_fields_alone():
    assert AdversaryTags(oblivious=True) == AdversaryTags()
    assert hash(AdversaryTags(oblivious=True)) == hash(AdversaryTags())
    assert AdversaryTags("oco", False).given == {"protocol", "oblivious"}
    assert Seer.tags.given == {"oblivious", "sees_distribution"}


def test_the_natural_adaptive_adversary_is_played_adaptively():
    rows = run_game(UniformPlayer(), Seer(), n_actions=4, horizon=10, metrics={"loss": {}}).rows
    # the uniform distribution ties every expert, so every expert is hit every round
    assert rows.value.iloc[-1] == pytest.approx(10.0)


@pytest.mark.parametrize("player", [UniformPlayer(), SimpleExp3()], ids=["experts", "bandit"])
def test_reading_probs_without_the_tag_names_the_adversary_the_round_and_the_fix(player):
    with pytest.raises(UndeclaredDistributionError) as info:
        run_game(player, BlindSeer(), n_actions=3, horizon=5)
    assert isinstance(info.value, GameError)
    assert str(info.value) == (
        "adversary BlindSeer BlindSeer(): reads history.probs but does not declare "
        "sees_distribution=True (tags = AdversaryTags(sees_distribution=True)) "
        "(round 1, all replicates)"
    )


def test_history_shows_probs_read_only_to_an_adversary_that_declared_it():
    history = History(2, 3, sees_distribution=True)
    assert history.probs is None  # p_t not committed yet (a sleeping adversary's confidences)
    history._show(np.full((2, 3), 1 / 3))
    with pytest.raises(ValueError, match="read-only"):
        history.probs[0, 0] = 1.0


def test_an_undeclared_read_names_the_round_being_chosen():
    history = History(2, 3, sees_distribution=False, owner="adversary x")
    history._record(np.full((2, 3), 1 / 3), np.ones((2, 3)), np.zeros(2, dtype=np.int64))
    history._show(np.full((2, 3), 1 / 3))
    with pytest.raises(UndeclaredDistributionError, match=r"^adversary x: reads .* \(round 2,"):
        _ = history.probs
