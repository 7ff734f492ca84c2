"""Online gradient boosting that competes with CH(F) (Beygelzimer et al. 2015, Algorithm 2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from arena.boosting.components import WeakLearner
from arena.players._ogb import GradientBooster, squared_loss_parameters
from arena.spec import GameSpec


def hull_weights(n_learners: int) -> np.ndarray:
    """Return the weights ``2i/(N(N+1))``, i = 1 … N, with which ``ŷ_t = Σ_i w_i A^i(x_t)``.

    Unrolling ``y^i = (1 − η_i)y^{i−1} + η_i A^i`` with ``η_i = 2/(i+1)``:
    ``Π_{j>i}(1 − η_j) = Π_{j>i}(j−1)/(j+1) = i(i+1)/(N(N+1))``, times ``η_i``.

    Examples
    --------
    >>> hull_weights(3) * 6
    array([1., 2., 3.])
    """
    i = np.arange(1, n_learners + 1, dtype=np.float64)
    return 2.0 * i / (n_learners * (n_learners + 1.0))


class OGBHull(GradientBooster):
    """Online gradient boosting by Frank–Wolfe steps, competing with the convex hull ``CH(F)``.

    Each round, with ``y^0 = 0``, ``η_i = 2/(i+1)`` and weak outputs ``A^i(x_t) ∈ [−D, D]``
    (D = 1),

    ``y^i = (1 − η_i)·y^{i−1} + η_i A^i(x_t)``, i = 1 … N, predict ``ŷ_t = y^N``

    (so ``y^1 = A^1(x_t)`` and ``ŷ_t = Σ_i 2i/(N(N+1))·A^i(x_t)``, :func:`hull_weights`). After
    the label, weak learner i is fed the linear loss ``(1/L_D)·ℓ′_t(y^{i−1})·v`` with
    ``ℓ′_t(y) = y − y*_t`` (the arena's loss ``½(y − y*)²``) and ``L_D = D + Y``; every partial sum
    is a convex combination of weak outputs, so ``|y^{i−1}| ≤ D`` and the coefficient is at most 1
    in size. No projection and no shrinkage.

    **Guarantee** (Beygelzimer et al. 2015, Theorem 2; Luo 2016, Theorem 14): if every weak
    learner has regret R(T) on 1-Lipschitz linear losses against a D-bounded class F,

    ``Σ_t ℓ_t(ŷ_t) − min_{f∈CH(F)} Σ_t ℓ_t(f(x_t)) ≤ 8β_D D² T/N + L_D R(T)``

    (β_D = 1, L_D = 1 + Y here); the 1/N rate is optimal (Theorem 3,
    :class:`arena.adversaries.hull_lower_bound.HullLowerBound`). No ``bounds`` are declared: R(T) is
    a property of the weak learner that the run does not know (the tests check the inequality with
    Hedge weak learners of known regret and the comparator found by a quadratic program).

    Parameters
    ----------
    n_learners : int
        N, the weak learners (stages).
    weak_learner : str or WeakLearner
        A regression weak learner (registry name or instance), bound D = 1.
    weak_learner_params : dict or None
        Its parameters.
    label_bound : float
        Y: the labels satisfy ``|y*_t| ≤ Y``; a larger label stops the game (L_D depends on Y).

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.boosting.testing import LaneSGD, LinearTargetStream
    >>> run = run_game(OGBHull(n_learners=5, weak_learner=LaneSGD()), LinearTargetStream(),
    ...                n_actions=2, horizon=200, metrics=["loss", "base_loss"])
    >>> sorted(run.rows["metric"].unique())
    ['base_loss', 'loss']

    References
    ----------
    Beygelzimer, Hazan, Kale & Luo 2015, Algorithm 2 and Theorem 2; Luo 2016, §3.2.2,
    Algorithm 10 and Theorem 14.
    """

    name = "ogb_hull"

    def __init__(
        self,
        n_learners: int = 20,
        weak_learner: str | WeakLearner = "hedge_features",
        weak_learner_params: Mapping[str, Any] | None = None,
        label_bound: float = 1.0,
    ):
        self.n_learners = n_learners
        self.weak_learner = weak_learner
        self.weak_learner_params = weak_learner_params
        self.label_bound = label_bound

    def _prepare(self, spec: GameSpec) -> None:
        self._lipschitz, _, _ = squared_loss_parameters(1.0, self.label_bound)

    def _partials(self, outputs: np.ndarray) -> np.ndarray:
        partial = np.zeros((outputs.shape[0], self.n_learners + 1))
        for i in range(1, self.n_learners + 1):
            step = 2.0 / (i + 1.0)
            partial[:, i] = (1.0 - step) * partial[:, i - 1] + step * outputs[:, i - 1]
        return partial
