"""Example plugin: an oblivious adversary whose best expert rotates every ``period`` rounds."""

import numpy as np

from arena import GameSpec, ObliviousAdversary


class RotatingBest(ObliviousAdversary):
    """Loss 0 for expert ``(t − 1) // period mod N``, loss ``level`` for every other expert."""

    def __init__(self, period: int = 10, level: float = 1.0):
        self.period = period
        self.level = level

    def reset(self, spec: GameSpec, rngs) -> None:
        self._shape = (spec.n_replicates, spec.n_actions)

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        out = np.full((self._shape[0], n, self._shape[1]), float(self.level))
        best = ((np.arange(t0, t0 + n) - 1) // self.period) % self._shape[1]
        out[:, np.arange(n), best] = 0.0
        return out
