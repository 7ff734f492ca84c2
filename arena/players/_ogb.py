"""Shared pieces of online gradient boosting (Beygelzimer, Hazan, Kale & Luo 2015; Luo 2016, §3.2).

The loss-parameter table of the sources (Lipschitz constant ``L_b``, smoothness ``β_b`` and
projection excess ``ε_b`` of a loss on the ball ``𝔹(b) = [−b, b]``), the arena's squared loss
``½(y − y*)²`` in those terms, the radius B of Algorithm 1, and the base of the two boosters:
they differ only in how stage i mixes ``y^{i−1}`` with ``A^i(x)`` and in the radius L is taken at.

**The arena's squared loss.** The regression protocol charges ``ℓ(y) = ½(y − y*)²``
(:func:`arena.oco.losses.prediction_loss`), half the table's p-norm row with p = 2. With labels
``|y*| ≤ Y`` (the boosters' ``label_bound``, 1 in the sources' table) and ``|y| ≤ b``:

* ``L_b = b + Y``: ``|ℓ′(y)| = |y − y*| ≤ b + Y``;
* ``β_b = 1``: ``ℓ″ = 1``;
* ``ε_b = max{Y − b, 0}``: for ``y > b`` (the case ``y < −b`` is symmetric) and
  ``a = y* − b > 0``, ``u = y − b``, the excess ratio is
  ``(½a² − ½(a − u)²)/u = a − u/2 < a ≤ Y − b``, with supremum ``Y − b`` as ``u → 0``,
  ``y* → Y``; when ``y* ≤ b`` projecting does not raise the loss (ratio ≤ 0).

With Y = D = 1 these are the table's p = 2 row halved (``2(b+1)``, 2, ``2 max{1−b, 0}``), and
Algorithm 1's radius is ``B = min{ηN, 1}``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from arena.boosting.components import WEAK_LEARNER_CONSTRAINTS, Booster, check_task
from arena.errors import ConfigError
from arena.params import POSITIVE, Interval
from arena.spec import GameSpec


def squared_loss_parameters(b: float, label_bound: float = 1.0) -> tuple[float, float, float]:
    """Return ``(L_b, β_b, ε_b)`` of ``½(y − y*)²`` on ``[−b, b]`` for labels ``|y*| ≤ Y``.

    ``L_b = b + Y``, ``β_b = 1``, ``ε_b = max{Y − b, 0}`` (derived in the module docstring).

    Examples
    --------
    >>> squared_loss_parameters(1.0)
    (2.0, 1.0, 0.0)
    >>> squared_loss_parameters(0.5, 2.0)
    (2.5, 1.0, 1.5)
    """
    return b + label_bound, 1.0, max(label_bound - b, 0.0)


def table_parameters(loss: str, b: float) -> tuple[float, float, float]:
    """Return ``(L_b, β_b, ε_b)`` of a row of the sources' loss table (labels in [−1, 1], D = 1).

    Rows (Beygelzimer et al. 2015, §3, the table after Corollary 1; Luo 2016, §3.2.3):
    ``linear`` ``−y*y``; ``squared_p2`` ``|y* − y|²`` (the p-norm row, p = 2);
    ``modified_ls`` ``½ max{1 − y*y, 0}²``; ``logistic`` ``ln(1 + e^{−y*y})``; and ``half_squared``
    ``½(y − y*)²``, the arena's squared loss (:func:`squared_loss_parameters` with Y = 1).

    Examples
    --------
    >>> table_parameters("modified_ls", 0.5)
    (1.5, 1.0, 0.5)
    """
    if loss == "linear":
        return 1.0, 0.0, 1.0
    if loss == "squared_p2":
        return 2.0 * (b + 1.0), 2.0, max(2.0 * (1.0 - b), 0.0)
    if loss == "modified_ls":
        return b + 1.0, 1.0, max(1.0 - b, 0.0)
    if loss == "logistic":
        s = math.exp(b) / (1.0 + math.exp(b))
        return s, 0.25, 1.0 - s
    if loss == "half_squared":
        return squared_loss_parameters(b, 1.0)
    raise ValueError(f"unknown loss {loss!r}")


def span_radius(eta: float, n_learners: int, bound: float, label_bound: float = 1.0) -> float:
    """Return Algorithm 1's radius ``B = min{ηND, inf{b ≥ D : η β_b b² ≥ ε_b D}}`` (squared loss).

    With ``β_b = 1`` and ``ε_b = max{Y − b, 0}`` the condition ``η b² + D b − Y D ≥ 0`` holds
    from the positive root ``(−D + √(D² + 4ηYD))/(2η)`` on, so the infimum is the larger of D
    and that root (D itself when ``Y ≤ D``: then ``ε_D = 0``). ``D`` is the bound of the
    (scaled) weak learners' outputs, ``λD`` in the scaling variant.

    Examples
    --------
    >>> span_radius(math.log(20) / 20, 20, 1.0)  # min{ln 20, 1}
    1.0
    >>> round(span_radius(0.5, 1, 1.0), 6)  # ηN = 0.5 < 1
    0.5
    """
    root = (-bound + math.sqrt(bound * bound + 4.0 * eta * label_bound * bound)) / (2.0 * eta)
    return min(eta * n_learners * bound, max(bound, root))


class GradientBooster(Booster):
    """Base of Algorithms 1 and 2: N stages ``y^i`` built from the weak outputs, linear losses fed.

    Subclasses set :meth:`_prepare` (the constants of the game) and :meth:`_partials` (the stage
    recursion); both feed weak learner i the linear loss ``(1/L)·ℓ′_t(y^{i−1})·v`` through the
    protocol's regression convention (target ``A^i(x) − c``, weight 1).
    """

    tasks: ClassVar[frozenset[str]] = frozenset({"regression"})
    parameter_constraints: ClassVar = {**WEAK_LEARNER_CONSTRAINTS, "label_bound": [POSITIVE]}

    label_bound: float

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        check_task(self, spec)
        if spec.loss != "squared":
            raise ConfigError(
                self.label(),
                "loss",
                f"boosts the squared loss ½(y − y*)² (the sources' smooth regression losses), "
                f"not {spec.loss}",
            )
        self._learners = self.make_learners(spec, rngs)
        self._n_rep = spec.n_replicates
        self._t = 0
        self.last_coefficients = np.zeros((spec.n_replicates, self.n_learners))
        self._prepare(spec)

    def _prepare(self, spec: GameSpec) -> None:
        raise NotImplementedError

    def _partials(self, outputs: np.ndarray) -> np.ndarray:
        """Return the partial sums ``y^0 … y^N`` (R, N+1) from the weak outputs (R, N)."""
        raise NotImplementedError

    def _weak_outputs(self, x: np.ndarray) -> np.ndarray:
        return self._learners.predict(np.asarray(x, dtype=np.float64))

    def partial_sums(self, x: np.ndarray) -> np.ndarray:
        """Return ``y^0 … y^N`` (R, N+1) of this round for features ``x`` (R, d). Pure."""
        return self._partials(self._weak_outputs(x))

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.partial_sums(x)[:, -1]

    def update(self, x: np.ndarray, y: np.ndarray) -> None:
        outputs = self._weak_outputs(x)
        self._learn(x, outputs, self._partials(outputs), np.asarray(y, dtype=np.float64))

    def play_block(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        n_rep, n = y.shape
        out = np.empty((n_rep, n))
        for j in range(n):
            outputs = self._weak_outputs(x[:, j])
            partial = self._partials(outputs)
            out[:, j] = partial[:, -1]
            self._learn(x[:, j], outputs, partial, y[:, j])
        return out

    def _learn(self, x: np.ndarray, outputs: np.ndarray, partial: np.ndarray, y: np.ndarray):
        too_big = np.abs(y) > self.label_bound
        if too_big.any():
            raise ValueError(
                f"{self.label()}: label {float(y[too_big][0])!r} exceeds label_bound = "
                f"{self.label_bound} (L and the radius B assume |y*| ≤ label_bound; raise it)"
            )
        self._t += 1
        gradient = partial[:, :-1] - y[:, None]  # ℓ′_t(y^{i−1}) = y^{i−1} − y*_t, (R, N)
        self._feed_learners(x, outputs, partial, y, gradient)
        self._after_learning(gradient, partial)

    def _feed_learners(
        self, x: np.ndarray, outputs: np.ndarray, partial: np.ndarray, y: np.ndarray, gradient
    ) -> None:
        """Feed weak learner i the linear loss ``(1/L)·ℓ′_t(y^{i−1})·v`` (Algorithms 1–2)."""
        coef = gradient / self._lipschitz  # the linear loss v ↦ coef·v, |coef| ≤ 1
        self.last_coefficients = coef  # read by the tests (|coef| ≤ 1)
        self._learners.update(x, outputs - coef, np.ones_like(coef))

    def learner_totals(self) -> dict[str, np.ndarray]:
        """Every weak learner is fed every round with weight 1: ``weight = calls = t``; the edge
        is a classification notion (zero here)."""
        rounds = np.full((self._n_rep, self.n_learners), float(self._t))
        return {"weight": rounds, "edge": np.zeros_like(rounds), "calls": rounds.copy()}

    def _after_learning(self, gradient: np.ndarray, partial: np.ndarray) -> None:
        """Update the booster's own state after the weak learners (Algorithm 1: σ)."""

    @classmethod
    def _unit_test_params(cls) -> Any:
        # a registry name, not a LaneSGD instance: the conformance suite evaluates repr(booster)
        # with only the booster's class in scope
        yield {"n_learners": 3, "weak_learner": "hedge_features"}
        yield {
            "n_learners": 1,
            "weak_learner": "hedge_features",
            "weak_learner_params": {"rate": 0.5, "symmetric": True},
            "label_bound": 2.0,
        }


class GreedyFitting:
    """Mixin of the greedy-fitting variant: weak learner i pays ``ℓ_t(y^{i−1} + αv)`` itself.

    Beygelzimer et al. 2015, the appendix's variant (a): "pass the offset ``y′ = y^{i−1}`` to
    ``A^i``" (line 13 of Algorithm 1, line 11 of Algorithm 2). For the arena's loss
    ``½(y − y*)²``, ``ℓ_t(y′ + αv) = α²·½(v − (y* − y′)/α)²``: the protocol's regression
    convention passes it as the target ``(y* − y′)/α`` with the weight ``α²``, and a learner
    linearizing at its answer A sees the coefficient ``α·ℓ′_t(y′ + αA)`` (``last_coefficients``).
    The booster's own recursion (and Algorithm 1's shrinkage) is unchanged.
    """

    alpha: float

    def _feed_learners(self, x, outputs, partial, y, gradient) -> None:
        alpha = float(self.alpha)
        offset = partial[:, :-1]  # y′ = y^{i−1}
        self.last_coefficients = alpha * (offset + alpha * outputs - y[:, None])
        target = (y[:, None] - offset) / alpha
        self._learners.update(x, target, np.full_like(target, alpha * alpha))


GREEDY_CONSTRAINTS: dict[str, list] = {"alpha": [Interval(0, None, closed="neither")]}
"""The greedy step α > 0 of the greedy-fitting variants."""
