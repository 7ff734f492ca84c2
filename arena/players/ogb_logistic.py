"""Online gradient boosting of classifiers under the logistic loss (Beygelzimer et al. 2015).

Algorithm 1 (OGB-Span) with the logistic row of the sources' loss table: the loss
``ℓ(y) = ln(1 + e^{−y* y})`` with ``L_b = e^b/(1 + e^b)``, ``β_b = ¼``,
``ε_b = e^{−b}/(1 + e^{−b})`` and the radius ``B = min{ηN, ln(4/η)}``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from scipy.special import expit

from arena.boosting.components import WEAK_LEARNER_CONSTRAINTS, WeakLearner, check_task
from arena.oco.losses import is_sparse
from arena.params import Interval, IsNone
from arena.players._ogb import table_parameters
from arena.players.ogb_span import OGBSpan
from arena.spec import GameSpec


def logistic_radius(eta: float, n_learners: int) -> float:
    """Return the table's radius ``B = min{ηN, ln(4/η)}`` for the logistic loss (D = 1).

    ``b = ln(4/η)`` satisfies Theorem 1's condition ``η β_b b² ≥ ε_b D`` (``b ≥ ln 4 > 1`` and
    ``ε_b = 1/(1 + e^b) ≤ η/4``), so it bounds the infimum from above, as the sources' footnote
    allows (Beygelzimer et al. 2015, the table of §3).

    Examples
    --------
    >>> logistic_radius(0.5, 2), round(logistic_radius(0.1, 100), 6)
    (1.0, 3.688879)
    """
    return min(eta * n_learners, math.log(4.0 / eta))


class OGBLogistic(OGBSpan):
    """Online gradient boosting with shrinkage for classification, on the logistic loss.

    Algorithm 1 of Beygelzimer et al. (2015) with ``ℓ_t(y) = ln(1 + e^{−y_t y})``, labels
    ``y_t = ±1`` and weak learners answering ``A^i(x_t) ∈ [−1, 1]`` (D = 1): with ``y^0 = 0``,

    ``y^i = Π_B((1 − σ^i η)·y^{i−1} + η A^i(x_t))``, i = 1 … N, predict ``ŷ_t = sign(y^N)``

    (the arena counts a mistake when ``y_t ŷ_t ≤ 0``), ``B = min{ηN, ln(4/η)}``
    (:func:`logistic_radius`). After ``y_t``, stage i's gradient is
    ``c^i = ℓ′_t(y^{i−1}) = −y_t/(1 + e^{y_t y^{i−1}})`` and weak learner i is fed the linear loss
    ``(c^i/L_B)·v``, ``L_B = e^B/(1 + e^B)``: a classification learner minimizes it as the
    importance-weighted example ``(x_t, −sign c^i)`` with weight ``|c^i|/L_B`` (``c·v =
    |c|(2·1{v ≠ −sign c} − 1)`` for ``v = ±1``); the shrinkage steps
    ``σ^i ← clip(σ^i + c^i y^{i−1}/(L_B B √t), 0, 1)``, as in
    :class:`~arena.players.ogb_span.OGBSpan`.

    **Guarantee** (Theorem 1 with the logistic row, ``β_B = ¼``): if every weak learner has
    regret R(T) on 1-Lipschitz linear losses against a symmetric class F of functions into
    [−1, 1], then for every f ∈ span(F) with ``W = max{1, ‖f‖₁}``,
    ``Σ_t ℓ_t(y_t^N) − Σ_t ℓ_t(f(x_t)) ≤ (1 − η/W)^N Δ₀ + ¾ η B² W T + L_B W R(T) + 2 L_B B W √T``,
    ``Δ₀ = Σ_t [ℓ_t(0) − ℓ_t(f(x_t))]``, and mistakes ``≤ Σ_t ℓ_t(y_t^N)/ln 2``. No ``bound`` is
    declared (it needs R(T) and a comparator); the tests check it with a Hedge weak learner.

    Parameters
    ----------
    n_learners : int
        N, the weak learners (stages).
    weak_learner : str or WeakLearner
        A classification weak learner (registry name or instance); default ``linear``.
    weak_learner_params : dict or None
        Its parameters.
    eta : float or None
        The step η ∈ [1/N, 1]; None: ``max{(ln N)/N, 1/N}``.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.adversaries.separable_stream import SeparableStream
    >>> run = run_game(OGBLogistic(n_learners=5), SeparableStream(), n_actions=4, horizon=200,
    ...                metrics=["mistakes"])
    >>> int(run.rows["t"].max())
    200
    >>> round(OGBLogistic(n_learners=20).step(), 6)  # η = ln 20/20, B = min{ln 20, ln(4/η)}
    0.149787

    References
    ----------
    Beygelzimer, Hazan, Kale & Luo 2015, Algorithm 1, Theorem 1 and the loss table of §3 (the
    logistic row); Luo 2016, §3.2.2–3.2.3.
    """

    name = "ogb_logistic"
    tasks: ClassVar[frozenset[str]] = frozenset({"classification"})
    parameter_constraints: ClassVar = {
        **WEAK_LEARNER_CONSTRAINTS,
        "eta": [Interval(0, 1, closed="right"), IsNone()],
    }

    def __init__(
        self,
        n_learners: int = 20,
        weak_learner: str | WeakLearner = "linear",
        weak_learner_params: Mapping[str, Any] | None = None,
        eta: float | None = None,
    ):
        self.n_learners = n_learners
        self.weak_learner = weak_learner
        self.weak_learner_params = weak_learner_params
        self.eta = eta

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        check_task(self, spec)
        self._learners = self.make_learners(spec, rngs)
        self._n_rep = spec.n_replicates
        self._t = 0
        self.last_coefficients = np.zeros((spec.n_replicates, self.n_learners))
        self._prepare(spec)

    def _prepare(self, spec: GameSpec) -> None:
        self._eta = self.step()
        self._radius = logistic_radius(self._eta, int(self.n_learners))
        self._lipschitz, _, _ = table_parameters("logistic", self._radius)
        self._sigma = np.zeros((spec.n_replicates, self.n_learners))

    def _partials(self, outputs: np.ndarray) -> np.ndarray:
        eta, b = self._eta, self._radius
        partial = np.zeros((outputs.shape[0], self.n_learners + 1))
        for i in range(self.n_learners):
            raw = (1.0 - self._sigma[:, i] * eta) * partial[:, i] + eta * outputs[:, i]
            partial[:, i + 1] = np.clip(raw, -b, b)
        return partial

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.sign(self.partial_sums(x)[:, -1])

    def play_block(self, x: Any, y: np.ndarray) -> np.ndarray:
        n_rep, n = y.shape
        out = np.empty((n_rep, n))
        for j in range(n):
            xj = x.round(j).densify() if is_sparse(x) else x[:, j]
            outputs = self._weak_outputs(xj)
            partial = self._partials(outputs)
            out[:, j] = np.sign(partial[:, -1])
            self._learn(xj, outputs, partial, y[:, j])
        return out

    def _learn(self, x: np.ndarray, outputs: np.ndarray, partial: np.ndarray, y: np.ndarray):
        self._t += 1
        y = np.asarray(y, dtype=np.float64)
        # ℓ′_t(v) = −y/(1 + e^{y v}) = −y·expit(−y v): no overflow for large margins
        gradient = -y[:, None] * expit(-y[:, None] * partial[:, :-1])
        coef = gradient / self._lipschitz  # the linear loss v ↦ coef·v, |coef| ≤ 1
        self.last_coefficients = coef
        target = np.where(coef > 0.0, -1.0, 1.0)
        self._learners.update(x, target, np.abs(coef))
        self._after_learning(gradient, partial)

    def logistic_losses(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Return ``ℓ_t(y^N) = ln(1 + e^{−y y^N})`` (R,) of this round's real vote. Pure."""
        return np.logaddexp(0.0, -np.asarray(y, dtype=np.float64) * self.partial_sums(x)[:, -1])

    def learner_totals(self) -> None:
        """None: the regression booster's totals (every learner fed every round, edge 0) do not
        describe the importance weights ``|c^i|/L_B`` this booster feeds."""
        return None

    @classmethod
    def _unit_test_params(cls) -> Any:
        yield {"n_learners": 3}
        yield {"n_learners": 4, "weak_learner": "stump", "eta": 0.5}
