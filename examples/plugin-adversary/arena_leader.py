"""Example plugin player: Follow the Leader, all weight on the experts with the least loss."""

from typing import ClassVar

import numpy as np

from arena import ExpertsPlayer, GameSpec
from arena.params import OneOf


class Leader(ExpertsPlayer):
    """Follow the Leader: ``p_t`` uniform on ``argmin_i L_{t−1,i}`` (or on its first expert)."""

    # what each parameter may be; the arena checks it before any round and names what is wrong
    parameter_constraints: ClassVar = {"ties": [OneOf("uniform", "first")]}

    def __init__(self, ties: str = "uniform"):
        self.ties = ties  # hyperparameters only: no work, no checks in __init__

    def reset(self, spec: GameSpec, rngs) -> None:
        self._cum = np.zeros((spec.n_replicates, spec.n_actions))  # R games at once

    def predict(self, confidences=None) -> np.ndarray:  # p_t, shape (R, N); pure
        lead = self._cum == self._cum.min(axis=1, keepdims=True)
        if self.ties == "first":
            lead &= np.cumsum(lead, axis=1) == 1
        return lead / lead.sum(axis=1, keepdims=True)

    def update(self, losses, actions=None) -> None:  # l_t, shape (R, N)
        self._cum += losses
