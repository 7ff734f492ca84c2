"""Component bases of the experts protocol: players that output ``p_t``, adversaries of ``l_t``.

A plugin author who prefers to write a single game subclasses :class:`SingleGameExpertsPlayer`;
the base lifts it to the batched API. Adversaries are oblivious (:class:`ObliviousAdversary`, losses
in blocks) or adaptive (:class:`AdaptiveAdversary`, one round at a time after reading the history).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from arena.components import Adversary, Player, declares_nothing
from arena.errors import mark_failure
from arena.sampling import sample_actions
from arena.spec import AdversaryTags, GameSpec, History, PlayerTags

PROB_SUM_TOL = 1e-9
"""A player's ``p_t`` must sum to 1 within this tolerance (float64 softmax errors are ~1e-15)."""

PROB_NEG_TOL = 1e-12
"""Entries of ``p_t`` may be negative by at most this much (rounding in subtractive updates)."""


class ExpertsPlayer(Player):
    """Full-information experts player: outputs ``p_t ∈ Δ_N`` and then sees the whole ``l_t``.

    Subclasses implement :meth:`reset`, :meth:`predict` and :meth:`update`; they may override
    :meth:`play_block` with a compiled kernel (tag ``block_kernel``), which must reproduce the
    predict/update loop to 1e-12.
    """

    tags: ClassVar[PlayerTags] = PlayerTags(protocols=frozenset({"experts"}))

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        """Return ``p_t`` of every replicate, shape (R, N). Pure: it never changes state.

        ``confidences`` (shape (R, N), values in [0, 1]) are announced before predicting in the
        sleeping / confidence-rated protocol; players without ``supports_confidences`` get None.
        """
        raise NotImplementedError

    def update(
        self,
        losses: np.ndarray,
        actions: np.ndarray | None = None,
        confidences: np.ndarray | None = None,
    ) -> None:
        """Observe the loss vectors ``l_t`` of every replicate, shape (R, N).

        ``actions`` (R,) are the realized draws ``I_t ~ p_t``, passed only to players tagged
        ``observes_action``; ``confidences`` (R, N), the same ``I_t`` that ``predict`` saw, only
        to players tagged ``supports_confidences`` in a sleeping game (``predict`` stays pure).
        """
        raise NotImplementedError

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        """Play n rounds against known losses (R, n, N); return the (R, n, N) distributions ``p_t``.

        Only called when the adversary is oblivious, so predicting before seeing ``l_t`` is kept.
        ``confidences`` (R, n, N) are given only to players with ``supports_confidences``;
        ``uniforms`` (R, n), the arena's action uniforms, only to players with ``observes_action``
        (draw ``I_t`` with :func:`arena.sampling.sample_action` to match the arena exactly). The
        default is the readable per-round loop; fast players override it with a kernel.
        """
        n_rep, n, n_act = losses.shape
        probs = np.empty((n_rep, n, n_act))
        actions = np.empty(n_rep, dtype=np.int64)
        for j in range(n):
            try:
                conf = None if confidences is None else confidences[:, j]
                p = np.asarray(self.predict() if conf is None else self.predict(confidences=conf))
                if p.shape != (n_rep, n_act):
                    raise ValueError(
                        f"predict returned shape {p.shape}, expected {(n_rep, n_act)} "
                        f"(round {j + 1} of the block)"
                    )
                probs[:, j] = p
                extra: dict[str, np.ndarray] = {}
                if uniforms is not None:
                    sample_actions(
                        np.ascontiguousarray(p, dtype=np.float64), uniforms[:, j].copy(), actions
                    )
                    extra["actions"] = actions.copy()
                if conf is not None:
                    extra["confidences"] = conf
                self.update(losses[:, j], **extra)
            except Exception as exc:  # the game's error names this round, not the block's first
                mark_failure(exc, offset=j)
                raise
        return probs

    @declares_nothing
    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Return the proven upper bounds on metrics after round ``t`` (the rounds played so far).

        Keys are ``(metric, param)`` (param NaN for a metric without one), values arrays of shape
        (R,) or scalars, computed from the run's own quantities (N, t, η, C_t, prior, ...). The
        engine logs them as metric ``bound:<metric>``. The default declares none.
        """
        return {}


class SingleGameExpertsPlayer(ExpertsPlayer):
    """An experts player written for one game, lifted to R replicates by keeping R clones.

    Implement ``reset_one(spec, rng)``, ``predict_one() -> (N,)`` and ``update_one(losses)``. The
    batched methods call them on one clone per replicate, so the plugin author never sees the
    replicate axis. This costs a Python call per replicate per round; write the batched API (and a
    kernel) when speed matters.
    """

    def reset_one(self, spec: GameSpec, rng: np.random.Generator) -> None:
        raise NotImplementedError

    def predict_one(self) -> np.ndarray:
        raise NotImplementedError

    def update_one(self, losses: np.ndarray) -> None:
        raise NotImplementedError

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._replicas = [self.clone() for _ in rngs]
        for replica, rng in zip(self._replicas, rngs, strict=True):
            replica.reset_one(spec, rng)

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        out = []
        for r, replica in enumerate(self._replicas):
            try:
                out.append(replica.predict_one())
            except Exception as exc:  # the game's error names this replicate
                mark_failure(exc, replicate=r)
                raise
        return np.stack(out)

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        for r, (replica, row) in enumerate(zip(self._replicas, losses, strict=True)):
            try:
                replica.update_one(row)
            except Exception as exc:
                mark_failure(exc, replicate=r)
                raise


_ZERO_ONE_LOSSES: set[Any] = set()


def zero_one_losses(losses_block: Any) -> Any:
    """Mark a ``losses_block`` implementation whose every loss is exactly 0.0 or 1.0 by
    construction (a threshold of uniforms written as ``1.0`` or ``0.0``, whatever the means).

    The driver skips its range check of those losses where the game's declared range holds
    ``[0, 1]``: a pass over every chunk's (R, n, N) losses that can find nothing, 1.5 ns a
    round of a 9-arm game at R = 100 (4 % of a ``ucb1`` game). Only that function is trusted: a
    subclass that overrides ``losses_block`` (or a patched class) is checked as any adversary.
    """
    _ZERO_ONE_LOSSES.add(losses_block)
    return losses_block


def draws_zero_one_losses(adversary: Any) -> bool:
    """Whether the adversary's ``losses_block`` is one that :func:`zero_one_losses` marked."""
    return getattr(type(adversary), "losses_block", None) in _ZERO_ONE_LOSSES


class ObliviousAdversary(Adversary):
    """An adversary whose losses do not depend on the player: it can emit them in blocks.

    ``losses_block(t0, n)`` for consecutive ranges must give the same sequence however the rounds
    are split into blocks (draw from the stream in round order, e.g. ``rng.random((n, N))``).
    """

    tags: ClassVar[AdversaryTags] = AdversaryTags(oblivious=True)

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        """Return the losses of rounds ``t0 .. t0+n-1``, shape (R, n, N)."""
        raise NotImplementedError

    def losses(self, t: int, history: History) -> np.ndarray:
        return self.losses_block(t, 1)[:, 0]

    def confidences_block(self, t0: int, n: int) -> np.ndarray:
        """Return the confidences of rounds ``t0 .. t0+n-1``, shape (R, n, N) (if emitted)."""
        raise NotImplementedError

    def confidences(self, t: int, history: History) -> np.ndarray:
        return self.confidences_block(t, 1)[:, 0]


class AdaptiveAdversary(Adversary):
    """An adversary that picks ``l_t`` after reading the history (and ``p_t`` if it declares so)."""

    tags: ClassVar[AdversaryTags] = AdversaryTags(oblivious=False)
