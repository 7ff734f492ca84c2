"""``sleeping_regret``: the sleeping / confidence-rated regret (Luo 2016, §2.3.2), with its numba
kernel. Notation as in :mod:`arena.metrics`."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numba import njit

from arena.metrics.base import Block, Core, ExpertsMetric, ExpertsRecord
from arena.metrics.literal import required
from arena.spec import GameSpec


@njit(cache=True, nogil=True)
def _sleeping_advance(losses, expected, confidences, cum):
    n_rep, n, n_act = losses.shape
    for r in range(n_rep):
        for j in range(n):
            h = expected[r, j]
            for i in range(n_act):
                cum[r, i] += confidences[r, j, i] * (h - losses[r, j, i])


def sleeping_regret(probs: np.ndarray, losses: np.ndarray, confidences: np.ndarray) -> float:
    """Sleeping / confidence-rated regret ``max_i Σ_t I_{t,i}(p_t·l_t − l_{t,i})``.

    Straight from the definition of Luo 2016, §2.3.2: each expert's regret counts
    the rounds it is awake, weighted by its confidence.

    Examples
    --------
    >>> p = np.array([[0.5, 0.5], [1.0, 0.0]]); l = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> sleeping_regret(p, l, np.array([[1.0, 1.0], [1.0, 0.0]]))
    0.5
    """
    learner = np.einsum("tn,tn->t", probs, losses)
    return float((confidences * (learner[:, None] - losses)).sum(axis=0).max())


class SleepingRegret(ExpertsMetric):
    """Sleeping / confidence-rated regret ``max_i Σ_{s≤t} I_{s,i} (p_s·l_s − l_{s,i})``.

    Each expert's regret counts only the rounds it is awake, weighted by its confidence (Luo
    2016, §2.3.2). Logged only when the adversary announces confidences.
    """

    name = "sleeping_regret"
    requires = frozenset({"confidences"})
    protocols: ClassVar[frozenset[str] | None] = frozenset({"experts"})  # bandit: no sleeping

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._cum = np.zeros((spec.n_replicates, spec.n_actions))

    def advance(self, block: Block, core: Core) -> None:
        _sleeping_advance(block.losses, block.expected, block.confidences, self._cum)

    def values(self, core: Core) -> np.ndarray:
        return self._cum.max(axis=1)[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`sleeping_regret`."""
        return sleeping_regret(
            record.probs, record.losses, required(record, "confidences", self.name)
        )
