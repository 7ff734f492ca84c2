"""The bases every protocol's components share: :class:`Player` and :class:`Adversary`.

Every state array carries a leading replicate axis ``(R, ...)`` so that one Python call advances R
independent games (architecture: seeding). Each protocol derives its own bases from these, in its
folder: :mod:`arena.experts.components` (``ExpertsPlayer``, ``ObliviousAdversary``,
``AdaptiveAdversary``), :mod:`arena.oco.components` (``OCOPlayer``, ``OCOAdversary``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from arena.base import Component
from arena.spec import AdversaryTags, GameSpec, History, PlayerTags


def declares_nothing(method: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a base class's default declaration (a ``bounds`` that returns ``{}``).

    A metric that logs a component's declaration (``bound``) skips the components whose method
    is still such a default, with a reason, instead of logging no rows; the mark says so without
    the metric importing every protocol's base classes.
    """
    method.declares_nothing = True  # type: ignore[attr-defined]
    return method


class Player(Component):
    """Base of all players: ``reset(spec, rngs)`` builds the batched game state."""

    kind: ClassVar[str] = "player"

    tags: ClassVar[PlayerTags] = PlayerTags()

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        """Build the state for ``spec.n_replicates`` games; ``rngs[r]`` is replicate r's stream."""
        raise NotImplementedError


class Adversary(Component):
    """Base of all adversaries: it fixes N and the loss range, and emits losses each round."""

    kind: ClassVar[str] = "adversary"

    tags: ClassVar[AdversaryTags] = AdversaryTags()

    def declared_range(self) -> tuple[float, float]:
        """The declared range ``(lo, hi)`` of every loss; the arena enforces it."""
        return (0.0, 1.0)

    def resolve_n_actions(self, requested: int | None) -> int:
        """Return N for this game; ``requested`` is the user's ``n_actions`` (None: default 10)."""
        return 10 if requested is None else int(requested)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        """Build the state of R games; ``rngs[r]`` is replicate r's stream (common to players)."""
        raise NotImplementedError

    def losses(self, t: int, history: History) -> np.ndarray:
        """Return the loss vectors of round ``t`` (1-based) for every replicate, shape (R, N)."""
        raise NotImplementedError

    def oracle(self, key: str, t0: int, n: int) -> np.ndarray:
        """Return a declared oracle quantity for rounds ``t0 .. t0+n-1``, shape (R, n, N).

        The driver asks for rounds it has drawn: an oblivious adversary's last chunk, whole or
        segment by segment in order (a chunk played across checkpoints shows its metrics one
        segment at a time), so an oracle keeps what it computed for that chunk until the next
        chunk is drawn (the conformance check ``check_oracle_declared`` asks both ways).
        """
        raise KeyError(f"{self!r} declares no oracle {key!r}")

    def confidences(self, t: int, history: History) -> np.ndarray:
        """Return the confidences ``I_t ∈ [0, 1]^N`` announced before round ``t``, shape (R, N).

        Only for adversaries tagged ``emits_confidences``.
        """
        raise NotImplementedError

    def data_identity(self) -> dict[str, str]:
        """Return digests of the data this adversary reads beyond its parameters (files,
        dataset versions), keyed by what they identify; ``{}`` when there is none (the default).

        The driver adds them to the game key, so they enter the seeds, the cell and the run id,
        and to the manifest: the same parameters over an edited file are another experiment.
        """
        return {}

    def data_provenance(self) -> dict[str, str]:
        """Return where the data came from (the files read: path, size, digest), for the
        manifest only (``config.data_files``); ``{}`` by default.

        Unlike :meth:`data_identity` it stays out of the game key and the seeds, so that the
        same examples in another folder (or another file format) play the same game, while the
        manifest still says which file a run read.
        """
        return {}

    def cell_params(self) -> dict[str, Any]:
        """Return the parameters that enter the cell key, and so the cell id and the player's
        streams: all of them (``get_params``) by default (the manifest and the run id keep every
        parameter).

        An adversary leaves out the parameters that cannot change the game it plays (the
        generation parameters of a generated dataset, when it serves a bundled one), so that a
        component gaining a parameter does not reseed every player of the games it already played.
        """
        return self.get_params()

    def bind_player(self, player: Any) -> None:
        """Receive, before :meth:`reset`, a clone of the game's player (not yet reset).

        A construction that depends on the algorithm under test (a policy-dependent lower bound
        whose instance is chosen by simulating the player, as in Lattimore & Szepesvári 2020,
        Theorem 15.2) keeps it; the clone is the adversary's own, so simulating it never touches
        the game's player or its streams. The sequence stays oblivious: it is fixed before round 1.
        The default ignores it.
        """

    def lower_bounds(
        self, t: int, player: Any = None
    ) -> dict[tuple[str, float], np.ndarray | float]:
        """Return reference lower bounds on metrics after round ``t`` that this construction forces.

        Keys are ``(metric, param)``; the engine logs them as metric ``lower_bound:<metric>``.
        ``player`` (the game's player) lets a construction aimed at one algorithm (e.g. the
        two-phase adversary against fixed-η Hedge) declare its bound only against it. The default
        declares none.
        """
        return {}

    def exact_values(self, n_actions: int, horizon: int) -> frozenset[str]:
        """Return the metrics whose declared lower bound is their exact expected value.

        A metric ``m`` named here promises that, in the game of ``n_actions`` experts and
        ``horizon`` rounds, the ``lower_bound:m`` value :meth:`lower_bounds` declares at every
        round t ≤ T is **equal** to the expectation of ``m`` after t rounds for every
        non-anticipating player, not merely below it (fair coins and COMB: every player's
        expected loss is ½ per round whatever it does, so its expected regret is a number fixed
        by the adversary alone). The report's "Minimax values" section then tests the mean over
        replicates against it, player by player. Claim only what is exact in this game: an
        adversary whose value is computed exactly up to some round and bounded beyond names
        nothing for longer horizons. The default names none.
        """
        return frozenset()
