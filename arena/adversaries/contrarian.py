"""The contrarian 0-1 adversary: one fixed question, and always the opposite answer.

The coin-bias argument of Shalev-Shwartz 2007, §2.3, that no online learner has sub-linear 0-1
regret, played in the ``classification`` protocol with a convex surrogate loss.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.errors import ConfigError
from arena.oco.components import AdaptiveOCOAdversary
from arena.oco.domains import Domain
from arena.oco.losses import EXAMPLE_LOSSES, RoundData, prediction_loss
from arena.params import OneOf
from arena.spec import AdversaryTags, GameSpec

MIN_LOSS_AT_MISTAKE = {
    "hinge": 1.0,
    "logistic": math.log(2.0),
    "absolute": 1.0,
    "squared": 0.5,
}
"""``min ℓ(ŷ, y)`` over predictions with ``y·ŷ ≤ 0`` and ``y = ±1`` (attained at ``ŷ = 0``)."""


class Contrarian(AdaptiveOCOAdversary):
    """Show ``x_t = e_1`` every round and reveal the label opposite to the learner's prediction.

    Parameters
    ----------
    loss : {"hinge", "logistic", "absolute", "squared"}
        The convex loss ``ℓ(ŷ, y)`` the arena charges (and differentiates) each round.

    Notes
    -----
    The instance space is ``X = {1}`` (``d = 1``; in ``d`` dimensions ``x_t = e_1``), so the
    problem is learning the bias of a coin. After the learner commits ``w_t`` the adversary reads
    its prediction ``ŷ_t = ⟨w_t, x_t⟩`` and reveals

    ``y_t = −1 if ŷ_t ≥ 0,  y_t = +1 if ŷ_t < 0``.

    A zero margin is a mistake whatever the label (``y·0 ≤ 0``; the mistake bounds of
    Shalev-Shwartz 2007, §5.1, count ``y⟨w, x⟩ ≤ 0`` as a mistake); ``ŷ_t = 0`` reveals ``−1``, as
    if the learner had said ``sign(0) = +1`` (the tie rule of the orthogonal-basis adversary of
    Shalev-Shwartz 2007, Theorem 4).

    Forced quantities, for every deterministic player and every ``t`` (declared by
    :meth:`lower_bounds`, per replicate):

    * ``mistakes``: exactly ``t`` (``y_t ŷ_t = −|ŷ_t| ≤ 0`` every round);
    * ``loss``: ``≥ t·ℓ_min`` with ``ℓ_min`` = 1 (hinge, absolute), ``log 2`` (logistic),
      ½ (squared), the surrogate's least value at a non-positive margin;
    * ``comparator_regret`` (param 1): the comparator is the best constant label
      ``u* = σ e_1``, ``σ = +1`` if ``Σ_s y_s ≥ 0`` else ``−1``; it errs on ``min(k, m) ≤ ⌊t/2⌋``
      rounds (``k``, ``m``: numbers of +1 and −1 labels), so the 0-1 regret is ``≥ t − ⌊t/2⌋``.
      The surrogate regret against it is ``≥ t·ℓ_min − k ℓ(σ, +1) − m ℓ(σ, −1)``;
    * ``regret`` (hinge, absolute and squared only): the best fixed ``u`` in ``ℝ^d`` has loss
      ``2 min(k, m)`` (hinge, absolute; at ``u_1 = σ``) or ``2km/t`` (squared; at
      ``u_1 = (k − m)/t``), so the regret is ``≥ |k − m|`` (hinge, absolute) and
      ``≥ (k − m)²/(2t)`` (squared). For logistic the infimum is not attained when all labels
      agree, so no regret bound is declared.

    :meth:`comparator` returns ``σ e_1`` for the labels so far (it changes as labels arrive). The
    declared ``comparator_regret`` bound after round ``t`` is against the comparator returned after
    round ``t`` (the final one at ``t = T``), not against the one returned at the start.

    Examples
    --------
    >>> from arena.oco.losses import feedback
    >>> adv = Contrarian()
    >>> spec = GameSpec("classification", 1, 3, dim=1, loss="hinge")
    >>> adv.reset(spec, [None])
    >>> w = np.array([[0.5]])
    >>> for t in (1, 2, 3):
    ...     x = adv.features(t)
    ...     rd = adv.reveal(t, w)
    ...     w = w - feedback("hinge", 0.0, w, rd).grad  # a tiny OGD with step 1
    ...     print(t, float(rd.y[0]), w.tolist())
    1 -1.0 [[-0.5]]
    2 1.0 [[0.5]]
    3 -1.0 [[-0.5]]
    >>> adv.lower_bounds(3)[("mistakes", math.nan)].tolist()
    [3.0]

    References
    ----------
    Shalev-Shwartz 2007, §1.1 (the adversary that waits for the answer and gives the opposite one)
    and §2.3 (X = {1}: T mistakes against at most T/2 for the best constant).
    """

    parameter_constraints: ClassVar = {"loss": [OneOf(*EXAMPLE_LOSSES)]}
    comparator_moves = True  # the comparator is built from the player's answers
    tags = AdversaryTags(
        protocol="classification", oblivious=False, oracle=frozenset({"comparator"})
    )

    def __init__(self, loss: str = "hinge"):
        self.loss = loss

    def resolve_dim(self, requested: int | None) -> int:
        return 1 if requested is None else int(requested)

    def declared_domain(self) -> Domain:
        return Domain("unconstrained")

    def declared_loss(self) -> str:
        return self.loss

    def gradient_bound(self) -> float | None:
        # |ℓ'| ≤ 1 for hinge, logistic and absolute, and ‖x_t‖ = 1; squared: |ŷ − y| is unbounded
        return None if self.loss == "squared" else 1.0

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        dim = spec.dim if spec.dim is not None else spec.n_actions
        if dim < 1:
            raise ConfigError(self.label(), "n_actions", "needs d ≥ 1")
        self._n_rep, self._dim = spec.n_replicates, int(dim)
        self._x = np.zeros((self._n_rep, self._dim))
        self._x[:, 0] = 1.0
        self._k = np.zeros(self._n_rep)  # number of +1 labels so far
        self._m = np.zeros(self._n_rep)  # number of −1 labels so far

    def features(self, t: int) -> np.ndarray:
        return self._x.copy()

    def reveal(self, t: int, w: np.ndarray) -> RoundData:
        x = self._x.copy()
        yhat = np.einsum("...i,...i->...", x, np.asarray(w, dtype=np.float64))
        y = np.where(yhat >= 0.0, -1.0, 1.0)
        self._k += y > 0
        self._m += y < 0
        return RoundData(x=x, y=y)

    def comparator(self) -> np.ndarray:
        u = np.zeros((self._n_rep, self._dim))
        u[:, 0] = np.where(self._k >= self._m, 1.0, -1.0)
        return u

    def lower_bounds(self, t: int, player=None) -> dict[tuple[str, float], np.ndarray | float]:
        k, m = self._k, self._m
        n = k + m
        forced = n * MIN_LOSS_AT_MISTAKE[self.loss]
        sigma = np.where(k >= m, 1.0, -1.0)
        comp_loss = (
            k * prediction_loss(self.loss, sigma, 1.0)[0]
            + m * prediction_loss(self.loss, sigma, -1.0)[0]
        )
        out: dict[tuple[str, float], np.ndarray | float] = {
            ("mistakes", math.nan): n.copy(),
            ("loss", math.nan): forced,
            ("comparator_regret", 1.0): forced - comp_loss,
        }
        if self.loss in ("hinge", "absolute"):
            out[("regret", math.nan)] = np.abs(k - m)
        elif self.loss == "squared":
            out[("regret", math.nan)] = (k - m) ** 2 / (2.0 * np.maximum(n, 1.0))
        return out

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"loss": "logistic"}
        yield {"loss": "squared"}
