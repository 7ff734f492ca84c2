"""The ``mistake_bound`` metric: a player's relative mistake bound at the adversary's comparator.

The mistake bounds of the quasi-additive classifiers (Shalev-Shwartz 2007, Corollaries 5-7) hold
for every comparator u, with the hinge loss of u on the mistake rounds, so a player cannot declare
them through ``bounds(t)`` (which must hold whatever u). An adversary that plants a target knows a
good u: this metric evaluates the player's bound at the adversary's declared comparator, on the
run's own mistakes, and logs it as ``bound:mistakes`` beside the ``mistakes`` metric, so that the
reports' Flags and "Measured / bound" sections check and compare it like any declared bound.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from arena.oco.losses import dense_features, is_sparse
from arena.oco.metrics import OCOBlock, OCOCore, OCOMetric, OCORecord
from arena.spec import GameSpec

LABEL = "bound:mistakes"
"""The metric's rows: a bound on the ``mistakes`` metric, as the ``bound`` metric would name it."""


class MistakeBound(OCOMetric):
    """A player's bound on its mistakes, at the adversary's comparator ``u``: ``bound:mistakes``.

    Per replicate it streams ``H_t = Σ_{s≤t, s∈M} [1 − y_s⟨u, x_s⟩]₊``, the comparator's hinge
    loss over the player's mistake rounds ``M`` (``y_s⟨w_s, x_s⟩ ≤ 0``, the ``mistakes`` metric's
    rule), and at each checkpoint logs ``player.comparator_mistake_bound(u, H_t)``: Corollary 5
    (``perceptron``), Corollary 7 (``pnorm_perceptron``), Corollary 6 or Eq. (5.7) (``winnow``)
    of Shalev-Shwartz 2007, evaluated with the player's own running quantities (``X`` over the
    mistake rounds). The comparator is the adversary's ``comparator()`` read once after reset,
    scaled as the classification streams declare it (margin 1 on clean examples).

    Notes
    -----
    Applies to classification games whose adversary declares a fixed comparator (oracle
    ``comparator``, not ``comparator_moves``) and whose player defines
    ``comparator_mistake_bound``. The bound holds for every u, so every logged value is at least
    the ``mistakes`` value of the same replicate and round. O(R·d) per round; a value is ``inf``
    where the comparator lies outside the set the player's bound ranges over (Winnow's simplex).
    """

    reads_points: ClassVar[bool] = False
    infinite_values: ClassVar[bool] = True

    name = "mistake_bound"
    protocols = frozenset({"classification"})
    requires = frozenset({"comparator"})

    def applicable(self, player: Any, adversary: Any) -> str | None:
        missing = super().applicable(player, adversary)
        if missing:
            return missing
        if not callable(getattr(player, "comparator_mistake_bound", None)):
            return "the player has no comparator_mistake_bound"
        if getattr(adversary, "comparator_moves", False):
            return "the adversary's comparator is built from the play"
        return None

    def attach(self, player: Any, adversary: Any) -> None:
        self._player = player
        self._adversary = adversary

    def row_keys(self, spec: GameSpec) -> list[tuple[str, float]]:
        return [(LABEL, math.nan)]

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        u = np.asarray(self._adversary.comparator(), dtype=np.float64)
        if u.shape != (spec.n_replicates, spec.dim) or not np.isfinite(u).all():
            raise ValueError(
                f"comparator() must return finite values of shape {(spec.n_replicates, spec.dim)}"
            )
        self._u = u
        self._hinge = np.zeros(spec.n_replicates)

    def advance(self, block: OCOBlock, core: OCOCore) -> None:
        x, y = block.data.x, np.asarray(block.data.y, dtype=np.float64)
        if is_sparse(x):
            margins = y * x.dot(self._u)
        else:
            margins = y * np.einsum("rnd,rd->rn", np.asarray(x, dtype=np.float64), self._u)
        mistake = y * np.asarray(block.predictions, dtype=np.float64) <= 0.0
        self._hinge += np.where(mistake, np.maximum(1.0 - margins, 0.0), 0.0).sum(axis=1)

    def values(self, core: OCOCore) -> np.ndarray:
        bound = self._player.comparator_mistake_bound(self._u, self._hinge)
        return np.asarray(bound, dtype=np.float64).reshape(-1, 1).copy()

    def reference(self, record: OCORecord, param: float) -> float:
        """The comparator's hinge added round by round over the mistake rounds, then the
        player's bound (its state after round t) for this replicate."""
        u_all = np.asarray(record.adversary.comparator(), dtype=np.float64)
        u = u_all[record.replicate]
        x = np.asarray(dense_features(record.data.x), dtype=np.float64)
        hinge = 0.0
        for s in range(record.t):
            xs, ys = x[s], float(record.data.y[s])
            if ys * float(record.predictions[s]) <= 0.0:
                hinge += max(1.0 - ys * float(np.dot(u, xs)), 0.0)
        hinges = np.full(u_all.shape[0], hinge)
        return float(record.player.comparator_mistake_bound(u_all, hinges)[record.replicate])
