"""A protocol registered by a plugin is played by the one driver, with nothing copied.

The toy protocol here ("guessing": the player guesses ``ŷ_t ∈ [0, 1]``, the adversary reveals
``y_t ∈ [0, 1]``, the loss is ``(ŷ_t − y_t)²``) is registered through a fake entry point of the
``arena.protocols`` group, and its metric through one of the ``arena.metrics`` group, exactly as a
plugin's ``pyproject.toml`` would; the driver then resolves, seeds, chunks, checkpoints and
assembles its rows like those of the built-in protocols, and picks the metric by the one rule
every protocol follows (its ``protocols`` contain ``guessing``).
"""

from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pytest

from arena import registry
from arena.components import Adversary, Player
from arena.errors import ConfigError
from arena.game import run_game
from arena.metric import Metric
from arena.protocol import GameProtocol, Stepper, protocol_for
from arena.results import SCHEMA
from arena.spec import AdversaryTags, GameSpec, PlayerTags


class GuessBlock(NamedTuple):
    guesses: np.ndarray  # (R, n)
    targets: np.ndarray  # (R, n)


class GuessCore:
    def __init__(self, n_rep: int):
        self.squared = np.zeros(n_rep)


class SquaredLoss(Metric):
    name = "squared_loss"
    protocols: ClassVar[frozenset[str]] = frozenset({"guessing"})

    def start(self, spec: GameSpec) -> None:
        pass

    def advance(self, block: GuessBlock, core: GuessCore) -> None:
        pass

    def values(self, core: GuessCore) -> np.ndarray:
        return core.squared[:, None].copy()


class GuessingStepper(Stepper):
    def __init__(self, game):
        self.player, self.adversary = game.player, game.adversary
        self.core = GuessCore(game.spec.n_replicates)

    def step(self, t0: int, n: int) -> GuessBlock:
        guesses, targets = [], []
        for t in range(t0, t0 + n):
            guess = self.player.guess()
            target = self.adversary.target(t)
            self.player.observe(target)
            # round by round, so that the totals do not depend on how rounds are chunked
            self.core.squared += (guess - target) ** 2
            guesses.append(guess)
            targets.append(target)
        return GuessBlock(np.stack(guesses, axis=1), np.stack(targets, axis=1))


class GuessingProtocol(GameProtocol):
    default_metrics: ClassVar[dict[str, Any]] = {"squared_loss": {}}

    def check_pair(self, player, adversary):
        if not isinstance(player, MeanGuesser):
            raise ConfigError(player.label(), "protocol", "does not play the guessing protocol")

    def make_spec(self, player, adversary, *, horizon, n_actions, ids):
        spec = GameSpec(self.name, 1, horizon, n_replicates=int(ids.size))
        return spec, {}

    def identity(self, player, adversary, spec):
        return {"adversary": adversary.registry_name(), "params": adversary.get_params()}, {}

    def start(self, game):
        return GuessingStepper(game)


class MeanGuesser(Player):
    """Guesses the running mean of the targets seen so far (½ before any)."""

    tags: ClassVar[PlayerTags] = PlayerTags(protocols=frozenset({"guessing"}))

    def reset(self, spec, rngs):
        self._sum, self._n = np.zeros(spec.n_replicates), 0

    def guess(self) -> np.ndarray:
        return self._sum / self._n if self._n else np.full_like(self._sum, 0.5)

    def observe(self, target: np.ndarray) -> None:
        self._sum, self._n = self._sum + target, self._n + 1


class UniformTargets(Adversary):
    """Targets drawn uniformly in [0, 1] from the replicate's own stream."""

    tags: ClassVar[AdversaryTags] = AdversaryTags(protocol="guessing")

    def reset(self, spec, rngs):
        self._rngs = list(rngs)

    def target(self, t: int) -> np.ndarray:
        return np.array([rng.random() for rng in self._rngs])


@pytest.fixture
def guessing_registered(monkeypatch):
    """Register GuessingProtocol as the plugin entry point ``guessing``, and its metric
    ``squared_loss``, for one test."""
    real = registry.entry_points

    def entry_points(group):
        found = list(real(group=group))
        if group == "arena.protocols":
            found.append(EntryPoint("guessing", f"{__name__}:GuessingProtocol", "arena.protocols"))
        if group == "arena.metrics":
            found.append(EntryPoint("squared_loss", f"{__name__}:SquaredLoss", "arena.metrics"))
        return found

    monkeypatch.setattr(registry, "entry_points", entry_points)
    registry._claims.cache_clear()
    yield
    registry._claims.cache_clear()


def test_a_plugin_protocol_is_found_by_its_entry_point(guessing_registered):
    assert "guessing" in registry.available("protocol")
    assert isinstance(protocol_for("guessing"), GuessingProtocol)


def test_the_driver_plays_a_plugin_protocol(guessing_registered):
    kw = dict(horizon=300, replicates=3, seed=4, checkpoints=[10, 100])
    run = run_game(MeanGuesser(), UniformTargets(), **kw)
    rows = run.rows
    assert list(rows.columns) == SCHEMA
    assert set(rows.protocol) == {"guessing"} and set(rows.metric) == {"squared_loss"}
    assert sorted(rows.t.unique()) == [10, 100, 300]
    # guessing the running mean of U[0, 1] targets: about 1/12 per round
    final = rows[rows.t == 300].value.to_numpy()
    assert np.all(np.abs(final / 300 - 1 / 12) < 0.03)
    # the driver's contracts hold for the new protocol too: same seed, same rows; any chunking
    assert rows.equals(run_game(MeanGuesser(), UniformTargets(), **kw).rows)
    chunked = run_game(MeanGuesser(), UniformTargets(), chunk_elements=7, **kw).rows
    assert np.array_equal(chunked.value.to_numpy(), rows.value.to_numpy())
    alone = run_game(MeanGuesser(), UniformTargets(), **{**kw, "replicates": [2]}).rows
    assert np.array_equal(alone.value.to_numpy(), rows[rows.replicate == 2].value.to_numpy())


def test_an_unknown_protocol_is_named(guessing_registered):
    class Elsewhere(UniformTargets):
        tags: ClassVar[AdversaryTags] = AdversaryTags(protocol="guesing")

    with pytest.raises(Exception, match="did you mean 'guessing'"):
        run_game(MeanGuesser(), Elsewhere(), horizon=5)


def test_a_plugin_protocol_gets_metrics_by_the_one_rule(guessing_registered):
    """Its own metric by its ``protocols``; another protocol's metric is skipped, saying whose it
    is; a protocol-generic one (``bound``) is computed in every protocol, here skipped only because
    the player declares no bound."""
    run = run_game(
        MeanGuesser(),
        UniformTargets(),
        horizon=5,
        metrics=["squared_loss", "regret", "bound"],
    )
    assert set(run.rows.metric) == {"squared_loss"}
    assert run.skipped_metrics == {
        "regret": "defined for the bandit/classification/experts/multiclass/oco/regression "
        "protocols only, not guessing",
        "bound": "the player declares no bound",
    }
