"""Metrics of the ``structured`` protocol: the cumulative cost and Theorem 7's bound.

``structured_cost`` is ``Σ_{s≤t} ρ(y_s, ŷ_s)`` (Shalev-Shwartz 2007, §5.3.3, the quantity of
Theorem 7). ``structured_cost_bound`` logs, beside it, the comparator's maximal loss
``Loss(u) = Σ_s max_{y′≠y_s} [ρ(y_s, y′) − ⟨u, φ(x_s, y_s) − φ(x_s, y′)⟩]₊`` (5.22) at the
stream's declared comparator u, and the player's declared bound on the cost at that u
(``bound:structured_cost``; for Fig 5.4 Theorem 7's ``Loss(u) + X√(8U·Loss(u)) + 8X²U``).
The streamed values use loss-augmented Viterbi; the references enumerate every string.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from arena.metric import Metric, Record
from arena.spec import GameSpec
from arena.structured.chain import MAX_ENUMERATED
from arena.structured.components import STRUCTURED

LOSS_LABEL = "structured_comparator_loss"
"""The row of ``Loss(u)``, the comparator's maximal loss (5.22) summed over the rounds."""
BOUND_LABEL = "bound:structured_cost"
"""The row of the player's bound on ``structured_cost`` at the comparator."""


@dataclass(frozen=True, kw_only=True)
class StructuredRecord(Record):
    """One replicate's rounds 1..t: ``x`` (t, m, d), ``y`` and ``predictions`` (t, m),
    ``costs`` (t,)."""

    x: np.ndarray | None = None
    y: np.ndarray | None = None
    predictions: np.ndarray | None = None
    costs: np.ndarray | None = None


class StructuredMetric(Metric):
    """Base of the structured protocol's metrics."""

    protocols: ClassVar[frozenset[str]] = frozenset({STRUCTURED})


class StructuredCost(StructuredMetric):
    """The cumulative cost ``Σ_{s≤t} ρ(y_s, ŷ_s)`` of the player's strings.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.structured.testing import RandomStrings, StringPerceptron
    >>> rows = run_game(StringPerceptron(), RandomStrings(), horizon=5, replicates=1).rows
    >>> float(rows.value.iloc[-1]) <= 5 * 3  # at most m = 3 a round
    True
    """

    name = "structured_cost"

    def values(self, core: Any) -> np.ndarray:
        # the stepper adds the costs round by round into the core: chunk-free sums
        return core.cost[:, None].copy()

    def reference(self, record: StructuredRecord, param: float) -> float:
        """ρ(y_s, ŷ_s) by the structure's definition, added round by round."""
        rho = record.spec.structure.cost
        total = 0.0
        for y, y_hat in zip(record.y, record.predictions, strict=True):
            total += rho(y, y_hat)
        return total


def _brute_max_loss(structure: Any, u: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """(5.22) by enumeration: every string ``y′ ≠ y`` scored, the largest clipped at 0."""
    strings, phis = structure.all_strings(), structure.all_features(x)
    gaps = phis @ u  # ⟨u, φ(x, y′)⟩ of every y′
    own = float(u @ structure.features(x, y))
    best = 0.0
    for other, score in zip(strings, gaps, strict=True):
        if np.any(other != y):
            best = max(best, structure.cost(y, other) - (own - float(score)))
    return best


class StructuredCostBound(StructuredMetric):
    """``Loss(u)`` at the stream's comparator and the player's bound on its cost there.

    Per replicate it streams ``Loss_t(u)`` (5.22) by loss-augmented Viterbi and
    ``X_t = max_{s≤t} max_{y′≠y_s} ‖φ(x_s, y′) − φ(x_s, y_s)‖`` (Theorem 7's X, by
    enumeration of Σ^m), and logs ``player.comparator_cost_bound(u, Loss_t(u), X_t)``.

    Notes
    -----
    Applies where the stream declares a comparator (oracle ``comparator``), the player defines
    ``comparator_cost_bound`` and ``k^m ≤ 4096`` (X is a maximum of a norm, which does not
    decompose over positions, so it is enumerated). The bound holds for every u, so each logged
    bound is at least the ``structured_cost`` of the same replicate and round; ``inf`` where u
    lies outside the set the bound ranges over (``‖u‖ > √(2U)`` for Fig 5.4).
    """

    name = "structured_cost_bound"
    requires = frozenset({"comparator"})
    infinite_values: ClassVar[bool] = True

    def applicable(self, player: Any, adversary: Any) -> str | None:
        missing = super().applicable(player, adversary)
        if missing:
            return missing
        if not callable(getattr(player, "comparator_cost_bound", None)):
            return "the player has no comparator_cost_bound"
        return None

    def game_reason(self, spec: GameSpec) -> str | None:
        s = spec.structure
        if s is None or not s.enumerable():
            return f"Theorem 7's X is enumerated over at most {MAX_ENUMERATED} strings"
        return None

    def attach(self, player: Any, adversary: Any) -> None:
        self._player, self._adversary = player, adversary

    def row_keys(self, spec: GameSpec) -> list[tuple[str, float]]:
        return [(LOSS_LABEL, math.nan), (BOUND_LABEL, math.nan)]

    def start(self, spec: GameSpec) -> None:
        s = spec.structure
        u = np.asarray(self._adversary.comparator(), dtype=np.float64)
        if u.shape != (spec.n_replicates, s.dim) or not np.isfinite(u).all():
            raise ValueError(
                f"comparator() must return finite values of shape {(spec.n_replicates, s.dim)}"
            )
        self._structure, self._u = s, u
        self._loss = np.zeros(spec.n_replicates)
        self._xmax = np.zeros(spec.n_replicates)

    def advance(self, block: Any, core: Any) -> None:
        s = self._structure
        n_rep, n = block.costs.shape
        for r in range(n_rep):
            for j in range(n):
                x, y = block.x[r, j], block.y[r, j]
                self._loss[r] += s.max_loss(self._u[r], x, y)
                self._xmax[r] = max(self._xmax[r], s.max_difference_norm(x, y))

    def values(self, core: Any) -> np.ndarray:
        bound = np.asarray(
            self._player.comparator_cost_bound(self._u, self._loss.copy(), self._xmax.copy()),
            dtype=np.float64,
        ).reshape(-1)
        return np.stack([self._loss.copy(), bound], axis=1)

    def reference_rows(self, records: Any) -> list[tuple[str, float, list[float]]]:
        """Loss(u) and X by enumerating every string, round by round; the player's bound."""
        rec0 = records[0]
        s = rec0.spec.structure
        u_all = np.asarray(rec0.adversary.comparator(), dtype=np.float64)
        losses, xs = np.zeros(len(records)), np.zeros(len(records))
        for r, rec in enumerate(records):
            for j in range(rec.t):
                x, y = rec.x[j], rec.y[j]
                losses[r] += _brute_max_loss(s, u_all[r], x, y)
                xs[r] = max(xs[r], s.max_difference_norm(x, y))
        bound = np.asarray(rec0.player.comparator_cost_bound(u_all, losses, xs), dtype=np.float64)
        return [(LOSS_LABEL, math.nan, losses.tolist()), (BOUND_LABEL, math.nan, bound.tolist())]
