"""OGB-Hull with greedy-fitting weak learners (Beygelzimer et al. 2015, appendix variant (a))."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from arena.boosting.components import WeakLearner
from arena.players._ogb import GREEDY_CONSTRAINTS, GreedyFitting
from arena.players.ogb_hull import OGBHull


class OGBHullGreedy(GreedyFitting, OGBHull):
    """Online gradient boosting by Frank–Wolfe steps whose weak learners fit the residual greedily.

    The stages are :class:`~arena.players.ogb_hull.OGBHull`'s, ``y^i = (1 − η_i)y^{i−1} +
    η_i A^i(x_t)`` with ``η_i = 2/(i+1)``; weak learner i is fed, instead of the linear loss
    ``(1/L_D)·ℓ′_t(y^{i−1})·v`` (line 11 of Algorithm 2), the offset ``y′ = y^{i−1}`` and the loss
    ``v ↦ ℓ_t(y^{i−1} + αv) = ½(y^{i−1} + αv − y*_t)²``, passed as the target
    ``(y*_t − y^{i−1})/α`` with the weight ``α²`` (:class:`arena.players._ogb.GreedyFitting`).

    **Guarantee** (the variant's analysis, with Theorem 2): if weak learner i has regret R(T) on
    the losses ``ℓ_t(y′_t + αv)`` against F (D-bounded), convexity and β-smoothness give the
    linear regret ``Σ_t ℓ′_t(y′_t)·(A − f)(x_t) ≤ (β_{D′}/2)αD²T + R(T)/α``, ``D′ = D + αD``, for
    every f ∈ F, and Theorem 2 holds with ``L_D R(T)`` replaced by it:
    ``Σ_t ℓ_t(ŷ_t) − min_{f∈CH(F)} Σ_t ℓ_t(f(x_t)) ≤ 8β_D D²T/N + β αD²T/2 + R(T)/α``
    (β = 1 for ``½(y − y*)²``). No ``bound`` is declared; the tests check it with a Hedge weak
    learner against the best single function of F.

    Parameters
    ----------
    n_learners, weak_learner, weak_learner_params, label_bound
        As :class:`~arena.players.ogb_hull.OGBHull`.
    alpha : float
        The greedy step α > 0 of every weak learner's loss ``ℓ_t(y′ + αv)``.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.boosting.testing import LaneSGD, LinearTargetStream
    >>> run = run_game(OGBHullGreedy(n_learners=5, alpha=0.5, weak_learner=LaneSGD()),
    ...                LinearTargetStream(), n_actions=2, horizon=200, metrics=["loss"])
    >>> int(run.rows["t"].max())
    200

    References
    ----------
    Beygelzimer, Hazan, Kale & Luo 2015, Algorithm 2, Theorem 2 and the appendix's variants
    (greedy-fitting base learners); Luo 2016, §3.2.2.
    """

    name = "ogb_hull_greedy"
    parameter_constraints: ClassVar = {**OGBHull.parameter_constraints, **GREEDY_CONSTRAINTS}

    def __init__(
        self,
        n_learners: int = 20,
        weak_learner: str | WeakLearner = "hedge_features",
        weak_learner_params: Mapping[str, Any] | None = None,
        label_bound: float = 1.0,
        alpha: float = 1.0,
    ):
        super().__init__(n_learners, weak_learner, weak_learner_params, label_bound)
        self.alpha = alpha

    @classmethod
    def _unit_test_params(cls) -> Any:
        yield {"n_learners": 3, "weak_learner": "hedge_features", "alpha": 0.5}
        yield {"n_learners": 2, "weak_learner": "linear", "alpha": 2.0}
