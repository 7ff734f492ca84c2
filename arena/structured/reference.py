"""The reference loop of the ``structured`` protocol: one round at a time, costs by the
definition, metrics from the stored history (the specification ``run_game`` equals to 1e-12)."""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.reference import ReferenceLoop
from arena.structured.metrics import StructuredRecord


class StructuredLoop(ReferenceLoop):
    """The structured rounds, literally: ``x_t``, ``ŷ_t = predict(x_t)``, ``y_t``, the cost
    ``ρ(y_t, ŷ_t)`` replicate by replicate, ``update(x_t, y_t, ŷ_t)``.

    Examples
    --------
    >>> import pandas as pd
    >>> from arena.game import run_game
    >>> from arena.structured.testing import RandomStrings, StringPerceptron
    >>> kw = dict(horizon=6, replicates=2)
    >>> ref = StructuredLoop.reference_play(StringPerceptron(), RandomStrings(), **kw)
    >>> pd.testing.assert_frame_equal(
    ...     ref, run_game(StringPerceptron(), RandomStrings(), **kw).rows, atol=1e-12)
    """

    record_type = StructuredRecord

    def round_context(self, t: int) -> np.ndarray:
        """``x_t`` (R, m, d), from the stream's ``examples(t, 1)``."""
        x, y = self.adversary.examples(t, 1)
        self._x = np.array(x, dtype=np.float64)[:, 0]
        self._y = np.array(y, dtype=np.int64)[:, 0]
        return self._x.copy()

    def round_predict(self, t: int, context: Any) -> np.ndarray:
        """``ŷ_t`` (R, m): ``player.predict(x_t)``."""
        return np.array(self.player.predict(context), dtype=np.int64)

    def round_respond(self, t: int, output: np.ndarray, context: Any) -> tuple:
        """Reveal ``y_t``; the cost ``ρ(y_t, ŷ_t)`` by the structure's definition, pair by pair."""
        m, rho = self.spec.n_actions, self.spec.structure.cost
        if output.shape != (self.n_rep, m):
            raise ValueError(f"player.predict returned shape {output.shape} at round {t}")
        costs = np.array([rho(self._y[r], output[r]) for r in range(self.n_rep)])
        self.store(x=self._x.copy(), y=self._y.copy(), predictions=output.copy(), costs=costs)
        return self._x.copy(), self._y.copy(), output.copy()

    def round_update(self, outcome: tuple) -> None:
        """``player.update(x_t, y_t, ŷ_t)``."""
        self.player.update(*outcome)


reference_play_structured = StructuredLoop.reference_play
"""The protocol's ``reference_loop``."""
