"""Component bases of the ``structured`` protocol: string answers with a cost.

One round t of the protocol (Shalev-Shwartz 2007, §5.3.3), for R replicates at once:

1. the adversary shows the input ``x_t`` (R, *input_shape): (R, m, d) for label strings;
2. the player predicts a string ``ŷ_t ∈ Σ^m`` per replicate (``predict(x_t)`` → (R, m) ints);
3. the adversary reveals the correct string ``y_t`` (R, m), and the round costs ``ρ(y_t, ŷ_t)``;
4. the player sees ``x_t``, ``y_t`` and its own ``ŷ_t`` (``update``).

The stream declares the structure (:meth:`StructuredAdversary.structure`: φ, ρ and the argmax),
which the protocol puts in ``GameSpec.structure`` for the player to read at ``reset``; the same
object gives the metrics their costs and the comparator's loss.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from arena.components import Adversary, Player
from arena.spec import AdversaryTags, PlayerTags

STRUCTURED = "structured"
"""The protocol's name."""


class StructuredPlayer(Player):
    """Structured-output player: predicts a label string per replicate, then sees the answer.

    ``reset(spec, rngs)`` reads ``spec.structure`` (φ, ρ, inference) and ``spec.n_replicates``.
    """

    tags: ClassVar[PlayerTags] = PlayerTags(protocols=frozenset({STRUCTURED}), randomized=False)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Return ``ŷ_t`` of every replicate, shape (R, m), labels ``0 … k−1``. Pure."""
        raise NotImplementedError

    def update(self, x: np.ndarray, y: np.ndarray, y_hat: np.ndarray) -> None:
        """See round t: the input ``x`` (R, m, d), the answer ``y`` and the prediction ``y_hat``
        (R, m)."""
        raise NotImplementedError


class StructuredAdversary(Adversary):
    """Oblivious structured stream: fixes every ``(x_t, y_t)`` from its own streams.

    ``examples(t0, n)`` returns the rounds ``t0 … t0+n−1`` as ``x`` (R, n, *input_shape) and ``y``
    (R, n, m), drawn in round order so that any split into chunks gives the same examples.
    """

    tags: ClassVar[AdversaryTags] = AdversaryTags(protocol=STRUCTURED, oblivious=True)

    def structure(self):
        """The label structure of the stream (:class:`~arena.structured.chain.ChainStructure`),
        known before ``reset``."""
        raise NotImplementedError

    def examples(self, t0: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Rounds ``t0 … t0+n−1``: ``x`` (R, n, *input_shape) float and ``y`` (R, n, m) int."""
        raise NotImplementedError
