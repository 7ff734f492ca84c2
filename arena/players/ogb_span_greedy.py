"""OGB-Span with greedy-fitting weak learners (Beygelzimer et al. 2015, appendix variant (a))."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from arena.boosting.components import WeakLearner
from arena.players._ogb import GREEDY_CONSTRAINTS, GreedyFitting
from arena.players.ogb_span import OGBSpan


class OGBSpanGreedy(GreedyFitting, OGBSpan):
    """Online gradient boosting (Algorithm 1) whose weak learners fit the residual greedily.

    The stages, the projection and the shrinkage are :class:`~arena.players.ogb_span.OGBSpan`'s;
    only what weak learner i is fed changes (Beygelzimer et al. 2015, the greedy-fitting variant:
    "change line 13 of Algorithm 1"): instead of the linear loss ``(1/L_B)·ℓ′_t(y^{i−1})·v`` it
    receives the offset ``y′ = y^{i−1}`` and pays the loss itself at a fixed step α,

    ``v ↦ ℓ_t(y^{i−1} + α v) = ½(y^{i−1} + α v − y*_t)² = α²·½(v − (y*_t − y^{i−1})/α)²``,

    which the protocol's regression convention passes as the target ``(y*_t − y^{i−1})/α`` with
    the weight ``α²`` (a learner linearizing at its answer ``A`` sees the coefficient
    ``α·ℓ′_t(y^{i−1} + αA)``).

    **Guarantee** (the variant's analysis, with Theorem 1): if weak learner i has regret R(T) on
    the losses ``ℓ_t(y′_t + α v)`` against F (D-bounded), convexity and β-smoothness give
    ``Σ_t ℓ′_t(y′_t)·A(x_t) ≤ Σ_t ℓ′_t(y′_t)·f(x_t) + (β_{B′}/2)αD²T + R(T)/α`` for every f ∈ F,
    ``B′ = B + αD``; Theorem 1 then holds with ``L_B R(T)`` replaced by that linear regret:
    ``Σ_t ℓ_t(ŷ_t) − Σ_t ℓ_t(f(x_t)) ≤ (1 − η/‖f‖₁)^N Δ₀ + 3ηβ_B B²‖f‖₁T
    + ‖f‖₁(β_{B′}αD²T/2 + R(T)/α) + 2L_B B‖f‖₁√T``, with ``β = 1`` for the arena's loss
    ``½(y − y*)²``. ``α = √(2R(T)/(β_{B′}D²T))`` balances the two terms (eq. 8). No ``bound`` is
    declared (it needs R(T) and a comparator); the tests check it with a Hedge weak learner.

    Parameters
    ----------
    n_learners, weak_learner, weak_learner_params, eta, scale, label_bound
        As :class:`~arena.players.ogb_span.OGBSpan`.
    alpha : float
        The greedy step α > 0 of every weak learner's loss ``ℓ_t(y′ + αv)``.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.boosting.testing import LaneSGD, LinearTargetStream
    >>> run = run_game(OGBSpanGreedy(n_learners=5, alpha=0.5, weak_learner=LaneSGD()),
    ...                LinearTargetStream(), n_actions=2, horizon=200, metrics=["loss"])
    >>> int(run.rows["t"].max())
    200

    References
    ----------
    Beygelzimer, Hazan, Kale & Luo 2015, Algorithm 1, Theorem 1 and the appendix's variants
    (greedy-fitting base learners, eqs. 8–9); Luo 2016, §3.2.2.
    """

    name = "ogb_span_greedy"
    parameter_constraints: ClassVar = {
        **OGBSpan.parameter_constraints,
        **GREEDY_CONSTRAINTS,
    }

    def __init__(
        self,
        n_learners: int = 20,
        weak_learner: str | WeakLearner = "hedge_features",
        weak_learner_params: Mapping[str, Any] | None = None,
        eta: float | None = None,
        scale: float = 1.0,
        label_bound: float = 1.0,
        alpha: float = 1.0,
    ):
        super().__init__(n_learners, weak_learner, weak_learner_params, eta, scale, label_bound)
        self.alpha = alpha

    @classmethod
    def _unit_test_params(cls) -> Any:
        yield {"n_learners": 3, "weak_learner": "hedge_features", "alpha": 0.5}
        yield {"n_learners": 2, "weak_learner": "linear", "alpha": 2.0, "eta": 0.5}
