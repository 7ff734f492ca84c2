"""regret-arena: online learning players against adversaries, every regret notion, tidy tables.

The public API: :func:`play` / :func:`run_game` to run a game of R batched replicates and get the
tidy results, the component bases (shared: :mod:`arena.components`; per protocol:
:mod:`arena.experts.components`, :mod:`arena.oco.components`), the metric base and its dispatch rule
(:mod:`arena.metric`), the registry in :mod:`arena.registry`,
and the result writers in :mod:`arena.results`.
"""

from arena.base import Component, canonical_json
from arena.components import Adversary, Player
from arena.errors import ArenaError, ConfigError, GameError, UnknownComponentError
from arena.experts.components import (
    AdaptiveAdversary,
    ExpertsPlayer,
    ObliviousAdversary,
    SingleGameExpertsPlayer,
)
from arena.game import play, run_game
from arena.metric import EVERY_PROTOCOL, Metric, metric_for
from arena.results import SCHEMA, GameRun
from arena.spec import AdversaryTags, GameSpec, History, PlayerTags

__version__ = "0.1.0"

__all__ = [
    "EVERY_PROTOCOL",
    "SCHEMA",
    "AdaptiveAdversary",
    "Adversary",
    "AdversaryTags",
    "ArenaError",
    "Component",
    "ConfigError",
    "ExpertsPlayer",
    "GameError",
    "GameRun",
    "GameSpec",
    "History",
    "Metric",
    "ObliviousAdversary",
    "Player",
    "PlayerTags",
    "SingleGameExpertsPlayer",
    "UnknownComponentError",
    "canonical_json",
    "metric_for",
    "play",
    "run_game",
]
