"""The orthogonal-basis hinge adversary: a fresh coordinate per round, labelled to foil the learner.

The construction in the proof of Shalev-Shwartz 2007, Theorem 4: regret must grow with the
comparator's complexity ``f(u) = ½‖u‖²``, and the Perceptron's mistake bound ``X²‖u‖²`` is tight.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.errors import ConfigError
from arena.oco.components import AdaptiveOCOAdversary
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import POSITIVE
from arena.spec import AdversaryTags, GameSpec


class OrthogonalHinge(AdaptiveOCOAdversary):
    """Show ``x_t = s·e_t`` and reveal the label the learner's prediction gets wrong (hinge loss).

    Parameters
    ----------
    scale : float
        Norm ``s = X`` of every instance (``‖x_t‖ = s``, so the hinge loss is ``s``-Lipschitz).

    Notes
    -----
    Needs ``d ≥ T``: round ``t`` uses the ``t``-th standard basis vector, orthogonal to every
    earlier instance (the game's ``n_actions`` is ``d``; coordinates beyond ``T`` stay unused).
    After the learner commits ``w_t`` the adversary reads ``ŷ_t = ⟨w_t, x_t⟩ = s·w_{t,t}`` and
    reveals

    ``y_t = −1 if ŷ_t ≥ 0,  y_t = +1 if ŷ_t < 0``,

    the rule "``y_t = −1`` if ``w_{t,t} ≥ 0``" of Shalev-Shwartz 2007 (the learner commits
    ``w_t`` after seeing ``x_t``, so the rule reads the committed ``w_t``). The loss is the hinge
    ``g_t(w) = [1 − y_t⟨w, x_t⟩]₊``.

    Forced quantities, for every deterministic player and every ``t`` (declared by
    :meth:`lower_bounds`):

    * ``mistakes = t`` and ``loss ≥ t``: ``y_t ŷ_t = −|ŷ_t| ≤ 0``, so ``g_t(w_t) ≥ 1``;
    * the comparator ``u = (y_1, …, y_T)/s`` has margin exactly 1 on every round
      (``g_t(u) = 0``), so ``comparator_regret`` (param ``c = 1``) and ``regret`` (the best
      ``u ∈ ℝ^d`` has loss 0) are ``≥ t``. With ``f(u) = ½‖u‖² = T/(2s²)`` this is
      ``R(u, T) ≥ T = 2s²f(u)`` (Shalev-Shwartz 2007, Theorem 4 with ``s = 1``);
    * for ``c ≥ 0`` the comparator ``c·u`` has hinge loss ``[1 − c]₊`` per round, so
      ``comparator_regret(c) ≥ t·min(1, c)`` (only ``c = 1`` is declared);
    * the Perceptron (``w_1 = 0``, ``w`` in the span of past instances) predicts ``ŷ_t = 0`` and
      errs every round: ``#M = T = X²‖u‖²``, its mistake bound with equality
      (Shalev-Shwartz 2007, §3.7).

    :meth:`comparator` returns ``u`` restricted to the rounds so far (zeros on later
    coordinates; 0 before round 1); since round ``s`` only involves coordinate ``s``, its regret
    at any checkpoint equals that of the final ``u``. The declared ``comparator_regret`` bound
    after round ``t`` is against the comparator returned after round ``t``.

    Examples
    --------
    >>> from arena.oco.losses import feedback
    >>> adv = OrthogonalHinge()
    >>> spec = GameSpec("classification", 3, 3, dim=3, loss="hinge")
    >>> adv.reset(spec, [None])
    >>> w = np.zeros((1, 3))
    >>> for t in (1, 2, 3):  # the Perceptron: w += y x on a mistake
    ...     x = adv.features(t)
    ...     rd = adv.reveal(t, w)
    ...     fb = feedback("hinge", 0.0, w, rd)
    ...     w = w + rd.y[:, None] * x * (rd.y * fb.prediction <= 0)[:, None]
    >>> w.tolist(), adv.comparator().tolist()
    ([[-1.0, -1.0, -1.0]], [[-1.0, -1.0, -1.0]])

    References
    ----------
    Shalev-Shwartz 2007, §3.6, Theorem 4 and its proof (``x_t = e_t``, ``y_t = −1`` if
    ``w_{t,t} ≥ 0``, ``u = (y_1, …, y_T)``, ``R(u, T) ≥ T``), and §3.7 (the construction shows
    the Perceptron's bound is tight).
    """

    parameter_constraints: ClassVar = {"scale": [POSITIVE]}
    comparator_moves = True  # the comparator is built from the player's answers
    tags = AdversaryTags(
        protocol="classification",
        oblivious=False,
        oracle=frozenset({"comparator"}),
        needs_horizon=True,
    )

    def __init__(self, scale: float = 1.0):
        self.scale = scale

    def resolve_dim(self, requested: int | None, horizon: int | None = None) -> int:
        """Return ``d``: the requested one, else the horizon if given (the construction needs
        ``d ≥ T``), else 10."""
        if requested is not None:
            return int(requested)
        return 10 if horizon is None else int(horizon)

    def declared_domain(self) -> Domain:
        return Domain("unconstrained")

    def declared_loss(self) -> str:
        return "hinge"

    def gradient_bound(self) -> float | None:
        return float(self.scale)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        comp = self.label()
        if spec.horizon is None:
            raise ConfigError(comp, "horizon", "the construction needs the horizon T (d ≥ T)")
        dim = spec.dim if spec.dim is not None else spec.n_actions
        if dim < spec.horizon:
            raise ConfigError(
                comp,
                "n_actions",
                f"needs d ≥ T (one fresh basis vector per round); got d = {dim}, "
                f"T = {spec.horizon}",
            )
        self._n_rep, self._dim = spec.n_replicates, int(dim)
        self._labels = np.zeros((self._n_rep, self._dim))  # y_s at coordinate s, 0 after t
        self._t = 0

    def _x(self, t: int) -> np.ndarray:
        if not 1 <= t <= self._dim:
            raise ValueError(f"round {t} is beyond d = {self._dim} fresh directions")
        x = np.zeros((self._n_rep, self._dim))
        x[:, t - 1] = float(self.scale)
        return x

    def features(self, t: int) -> np.ndarray:
        return self._x(t)

    def reveal(self, t: int, w: np.ndarray) -> RoundData:
        x = self._x(t)
        yhat = np.einsum("...i,...i->...", x, np.asarray(w, dtype=np.float64))
        y = np.where(yhat >= 0.0, -1.0, 1.0)
        self._labels[:, t - 1] = y
        self._t = t
        return RoundData(x=x, y=y)

    def comparator(self) -> np.ndarray:
        return self._labels / float(self.scale)

    def lower_bounds(self, t: int, player=None) -> dict[tuple[str, float], float]:
        n = float(self._t)
        return {
            ("mistakes", math.nan): n,
            ("loss", math.nan): n,
            ("regret", math.nan): n,
            ("comparator_regret", 1.0): n,
        }

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"scale": 2.5}
