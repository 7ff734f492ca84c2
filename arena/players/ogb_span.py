"""Online gradient boosting that competes with span(F) (Beygelzimer et al. 2015, Algorithm 1)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from arena.boosting.components import WeakLearner
from arena.errors import ConfigError
from arena.params import Interval, IsNone
from arena.players._ogb import GradientBooster, span_radius, squared_loss_parameters
from arena.spec import GameSpec


def default_step(n_learners: int) -> float:
    """Return the step ``η = (ln N)/N`` the sources suggest, raised to ``1/N`` (η ∈ [1/N, 1]).

    ``ln N / N < 1/N`` for N ≤ 2 (η would be 0 at N = 1), where Algorithm 1 requires η ≥ 1/N.

    Examples
    --------
    >>> default_step(1), default_step(2), round(default_step(20), 6)
    (1.0, 0.5, 0.149787)
    """
    return max(math.log(n_learners) / n_learners, 1.0 / n_learners)


class OGBSpan(GradientBooster):
    """Online gradient boosting with shrinkage, competing with ``span(F)``.

    Each round, with ``y^0 = 0`` and weak outputs ``A^i(x_t) ∈ [−D, D]`` (D = 1, the weak
    learners' bound; the scaling variant multiplies them by λ),

    ``y^i = Π_B((1 − σ^i η)·y^{i−1} + η λ A^i(x_t))``, i = 1 … N, predict ``ŷ_t = y^N``,

    where ``Π_B`` clips to ``[−B, B]`` and the radius is
    ``B = min{ηNλD, inf{b ≥ λD : η β_b b² ≥ ε_b λD}}`` (:func:`arena.players._ogb.span_radius`; B =
    ``min{ηN, 1}`` for labels in [−1, 1] and λ = 1). After the label ``y*_t``, stage i's gradient
    is ``c^i = ℓ′_t(y^{i−1}) = y^{i−1} − y*_t`` (the arena's loss ``½(y − y*)²``); weak learner i
    is fed the linear loss ``(c^i/L_B)·v`` (target ``A^i(x_t) − c^i/L_B``, weight 1; ``L_B = B + Y``
    so the coefficient is at most 1 in size), and the shrinkage takes a projected online
    gradient step on [0, 1]:

    ``σ^i ← clip(σ^i + c^i·y^{i−1} / (L_B B √t), 0, 1)``

    (σ^i starts at 0; ``σ^1`` stays 0 because ``y^0 = 0``).

    **Guarantee** (Beygelzimer et al. 2015, Theorem 1; Luo 2016, Theorem 13): if every weak
    learner has regret R(T) on 1-Lipschitz linear losses against a D-bounded class F (symmetric,
    containing 0), then for every f ∈ span(F) with 1-norm ``‖f‖₁``,

    ``Σ_t ℓ_t(ŷ_t) − Σ_t ℓ_t(f(x_t)) ≤ (1 − η/‖f‖₁)^N Δ₀ + 3ηβ_B B²‖f‖₁T + L_B‖f‖₁R(T)
    + 2L_B B‖f‖₁√T``, ``Δ₀ = Σ_t [ℓ_t(0) − ℓ_t(f(x_t))]``;

    with ``scale`` λ (Corollary 2 of the appendix; Luo 2016, Corollary 4), ``‖f‖₁`` becomes
    ``max{1, ‖f‖₁/λ}``, R(T) becomes λR(T) and B is computed at λD. No ``bounds`` are declared:
    the right-hand side needs the weak learners' regret R(T) and a comparator's 1-norm, which the
    run does not know (the tests check it with a Hedge weak learner of known regret).

    Parameters
    ----------
    n_learners : int
        N, the weak learners (stages).
    weak_learner : str or WeakLearner
        A regression weak learner (registry name or instance), bound D = 1.
    weak_learner_params : dict or None
        Its parameters.
    eta : float or None
        The step η ∈ [1/N, 1]; None: ``max{(ln N)/N, 1/N}`` (:func:`default_step`).
    scale : float
        λ ≥ 1: the weak outputs are multiplied by λ (the scaling variant; 1 is Algorithm 1).
    label_bound : float
        Y: the labels satisfy ``|y*_t| ≤ Y`` (the sources' table takes Y = 1); a larger label
        stops the game, since ``L_B`` and B are computed from Y.

    Notes
    -----
    The greedy-fitting variant (the weak learner sees the offset ``y^{i−1}`` and pays
    ``ℓ_t(y^{i−1} + αA(x))``) is :class:`~arena.players.ogb_span_greedy.OGBSpanGreedy`
    (``ogb_span_greedy``): the protocol passes that loss as the target ``(y* − y^{i−1})/α`` with
    weight ``α²``.
    The batch variant is an offline algorithm (a functional minimized by an exact oracle
    ``argmin_g ℓ(f + ηg)``), not an online booster. Classification with the logistic loss (a
    row of the table) is :class:`~arena.players.ogb_logistic.OGBLogistic` (``ogb_logistic``),
    which feeds the linear loss as a ±1 target with weight ``|c|``.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.boosting.testing import LaneSGD, LinearTargetStream
    >>> run = run_game(OGBSpan(n_learners=5, weak_learner=LaneSGD()), LinearTargetStream(),
    ...                n_actions=2, horizon=200, metrics=["loss", "base_loss"])
    >>> sorted(run.rows["metric"].unique()), int(run.rows["t"].max())
    (['base_loss', 'loss'], 200)
    >>> round(OGBSpan(n_learners=5).step(), 6)  # η = ln 5 / 5, so B = min{ln 5, 1} = 1
    0.321888

    References
    ----------
    Beygelzimer, Hazan, Kale & Luo 2015, Algorithm 1, Theorem 1 and Corollary 2 (appendix);
    Luo 2016, §3.2.2, Algorithm 9, Theorem 13 and Corollary 4.
    """

    name = "ogb_span"
    parameter_constraints: ClassVar = {
        **GradientBooster.parameter_constraints,
        "eta": [Interval(0, 1, closed="right"), IsNone()],
        "scale": [Interval(1, None)],
    }

    def __init__(
        self,
        n_learners: int = 20,
        weak_learner: str | WeakLearner = "hedge_features",
        weak_learner_params: Mapping[str, Any] | None = None,
        eta: float | None = None,
        scale: float = 1.0,
        label_bound: float = 1.0,
    ):
        self.n_learners = n_learners
        self.weak_learner = weak_learner
        self.weak_learner_params = weak_learner_params
        self.eta = eta
        self.scale = scale
        self.label_bound = label_bound

    def step(self) -> float:
        """The step η of this booster (``eta`` or :func:`default_step`), checked ≥ 1/N."""
        n = int(self.n_learners)
        if self.eta is None:
            return default_step(n)
        if self.eta < 1.0 / n:
            raise ConfigError(self.label(), "eta", f"must be in [1/N, 1] = [{1 / n:g}, 1]")
        return float(self.eta)

    def _prepare(self, spec: GameSpec) -> None:
        self._eta = self.step()
        self._radius = span_radius(self._eta, self.n_learners, self.scale, self.label_bound)
        self._lipschitz, _, _ = squared_loss_parameters(self._radius, self.label_bound)
        self._sigma = np.zeros((spec.n_replicates, self.n_learners))

    @property
    def radius(self) -> float:
        """B, the radius the partial sums are projected into."""
        return self._radius

    @property
    def sigma(self) -> np.ndarray:
        """The shrinkage parameters ``σ^i`` of every replicate, (R, N), a copy."""
        return self._sigma.copy()

    def _partials(self, outputs: np.ndarray) -> np.ndarray:
        eta, b = self._eta, self._radius
        scaled = self.scale * outputs
        partial = np.zeros((outputs.shape[0], self.n_learners + 1))
        for i in range(self.n_learners):
            raw = (1.0 - self._sigma[:, i] * eta) * partial[:, i] + eta * scaled[:, i]
            partial[:, i + 1] = np.clip(raw, -b, b)
        return partial

    def _after_learning(self, gradient: np.ndarray, partial: np.ndarray) -> None:
        alpha = 1.0 / (self._lipschitz * self._radius * math.sqrt(self._t))
        self._sigma = np.clip(self._sigma + alpha * gradient * partial[:, :-1], 0.0, 1.0)

    @classmethod
    def _unit_test_params(cls):
        yield from super()._unit_test_params()
        yield {"n_learners": 4, "weak_learner": "hedge_features", "eta": 0.5, "scale": 2.0}
