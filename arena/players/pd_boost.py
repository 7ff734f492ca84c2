"""AdaBoost, capped AdaBoost and Gentle-Boost as primal–dual players over the training examples.

Shalev-Shwartz 2007, Chapter 6, casts boosting as a primal–dual game: the booster keeps a
distribution ``w_t`` over the m training examples — the link of the relative entropy,
``w_{t,i} ∝ exp(−Σ_{s<t} α_s v_{s,i})`` — the weak learner answers a hypothesis ``h_t`` with
``v_{t,i} = y_i h_t(x_i)``, and the booster's dual-ascent step picks the hypothesis weight
``α_t ∈ [0, 1/c]``. In the arena the examples are the experts of the ``boosting_oracle`` game,
whose loss ``ℓ_{t,i} = 1{h_t(x_i) = y_i}`` gives ``v_{t,i} = 2ℓ_{t,i} − 1`` (in general
``v = 2(ℓ − lo)/(hi − lo) − 1 ∈ [−1, 1]`` on the game's loss range), and the edge
``γ_t = ½⟨w_t, v_t⟩``. The three steps:

* :class:`AdaBoost` — the optimal (aggressive) dual step (3.12), Eq. (6.5)–(6.6):
  ``α_t = min{1/c, ½ ln(w⁺_t/w⁻_t)}``, ``w^± = (1 ± ⟨w_t, v_t⟩)/2``; c → 0 is AdaBoost;
* :class:`CappedAdaBoost` — the same with ``c = 1/(2γ)``: ``α_t ≤ 2γ`` (Ch. 6, footnote 1);
* :class:`GentleBoost` — ``α_t = ⟨w_t, v_t⟩`` (§6.2, after Eq. 6.11; Friedman, Hastie &
  Tibshirani 2000).

Each keeps the margins ``F_i = Σ_s α_s v_{s,i}`` of the weighted vote ``sign(Σ_s α_s h_s)``,
whose training error the ``weighted_vote_train_error`` metric reads and on which each declares
the bound of :meth:`_PrimalDualBooster.exp_loss_bound`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.experts.components import ExpertsPlayer
from arena.params import POSITIVE, Interval, IsNone
from arena.spec import GameSpec, PlayerTags

MAX_EDGE = 1.0 - 2.0**-52
"""The largest edge ``⟨w_t, v_t⟩`` AdaBoost's step reads: at 1 (the hypothesis right on every
example of positive weight) ``½ ln(w⁺/w⁻)`` is infinite; at ``1 − 2⁻⁵²`` it is ≈ 18.4."""


def round_factor(alpha: np.ndarray, edge: np.ndarray) -> np.ndarray:
    """Return ``b(α, e) = ((1 + e)/2) e^{−α} + ((1 − e)/2) e^{α}``, the per-round bound.

    For ``v ∈ [−1, 1]^m`` and ``e = ⟨w, v⟩``, convexity of ``e^{−αv}`` in v gives
    ``Z = Σ_i w_i e^{−α v_i} ≤ b(α, e)`` (equality when ``v ∈ {±1}^m``), and
    ``(1/m) Σ_i e^{−F_{t,i}} = Π_{s≤t} Z_s``.

    Examples
    --------
    >>> float(round_factor(np.array(0.5 * math.log(3.0)), np.array(0.5)))  # √(1 − e²) at α*
    0.8660254037844386
    """
    return 0.5 * (1.0 + edge) * np.exp(-alpha) + 0.5 * (1.0 - edge) * np.exp(alpha)


class _PrimalDualBooster(ExpertsPlayer):
    """Hedge over the examples with a per-round hypothesis weight ``α_t`` (subclasses: the step).

    ``p_t = w_t``, ``w_{t,i} ∝ exp(−F_{t−1,i})`` (shifted by the minimum), ``F_t = F_{t−1} +
    α_t v_t``.
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), randomized=False)

    def alpha(self, edge: np.ndarray) -> np.ndarray:
        """Return the step ``α_t`` of each replicate from its edge ``⟨w_t, v_t⟩`` (R,)."""
        raise NotImplementedError

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._margins = np.zeros((spec.n_replicates, spec.n_actions))
        self._log_bound = np.zeros(spec.n_replicates)
        self._sq_edges = np.zeros(spec.n_replicates)

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        z = np.exp(-(self._margins - self._margins.min(axis=1, keepdims=True)))
        return z / z.sum(axis=1, keepdims=True)

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        v = 2.0 * (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale - 1.0
        w = self.predict()
        # ⟨w, v⟩ ∈ [−1, 1]; rounding may step past ±1, where b(α, e) could turn negative
        edge = np.clip(np.einsum("rn,rn->r", w, v), -1.0, 1.0)
        alpha = self.alpha(edge)
        self._log_bound += np.log(round_factor(alpha, edge))
        self._sq_edges += edge * edge
        self._margins += alpha[:, None] * v

    def vote_margins(self) -> np.ndarray:
        """Return ``F_{t,i} = Σ_{s≤t} α_s v_{s,i}``, the weighted vote's margins, shape (R, m)."""
        return self._margins.copy()

    def exp_loss(self) -> np.ndarray:
        """Return the average exponential loss ``(1/m) Σ_i e^{−F_{t,i}}`` of the vote, (R,)."""
        return np.exp(-self._margins).mean(axis=1)

    def exp_loss_bound(self) -> np.ndarray:
        """Return ``Π_{s≤t} b(α_s, e_s)`` (:func:`round_factor`), shape (R,).

        It bounds :meth:`exp_loss`, hence the weighted vote's training error (an example with
        ``F_i ≤ 0`` has ``e^{−F_i} ≥ 1``). For AdaBoost ``b = √(1 − e²)``, for Gentle-Boost
        ``b ≤ e^{−e²/2}`` (Hoeffding's lemma at ``α = e``), so both are at most
        ``exp(−2 Σ_s γ_s²) ≤ e^{−2γ²t}`` when every edge ``γ_s ≥ γ``; the capped step is at
        most ``e^{−2γ²}`` a round when ``γ_s ≥ γ``.
        """
        return np.exp(self._log_bound)

    def edge_bound(self) -> np.ndarray:
        """Return ``exp(−2 Σ_{s≤t} γ_s²)`` with the run's edges ``γ_s = ½⟨w_s, v_s⟩``, (R,)."""
        return np.exp(-0.5 * self._sq_edges)

    def bounds_reason(self, adversary) -> str | None:
        """Why no bound is declared against ``adversary``: the bounded metric, the weighted vote's
        training error, exists only against a boosting oracle (``train_votes``/``edges``)."""
        if all(callable(getattr(adversary, m, None)) for m in ("train_votes", "edges")):
            return None
        return "the boosters declare their bound against a boosting oracle only"

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare :meth:`exp_loss_bound` on ``weighted_vote_train_error``."""
        return {("weighted_vote_train_error", math.nan): self.exp_loss_bound()}


def _adaboost_alpha(edge: np.ndarray, cap: float) -> np.ndarray:
    """``clip(½ ln((1 + e)/(1 − e)), 0, cap)``, e read in ``[0, MAX_EDGE]`` (a negative edge takes
    no step, and an edge rounded below −1 would make the logarithm NaN)."""
    e = np.clip(edge, 0.0, MAX_EDGE)
    return np.minimum(0.5 * (np.log1p(e) - np.log1p(-e)), cap)


class AdaBoost(_PrimalDualBooster):
    """AdaBoost as the optimal dual-ascent step of the primal–dual booster.

    ``α_t = min{1/c, ½ ln(w⁺_t/w⁻_t)}`` (Eq. 6.5; ``w⁺ = 1 − ε_t``, ``w⁻ = ε_t`` the weighted
    error), floored at 0 (the dual constraint ``α ∈ [0, 1/c]``: a negative edge takes no step).
    With c = None it is AdaBoost's ``½ ln((1 − ε_t)/ε_t)`` (Eq. 6.6).

    Parameters
    ----------
    c : float or None
        The trade-off ``c > 0`` (``α_t ≤ 1/c``); None (the default) is c → 0, no cap.

    Notes
    -----
    With ``e_t = ⟨w_t, v_t⟩ = 2γ_t`` and ``v ∈ [−1, 1]``, this α minimizes the per-round factor
    :func:`round_factor` over ``[0, 1/c]``, which at the uncapped step is ``√(1 − 4γ_t²) ≤
    e^{−2γ_t²}``; so (Eq. 6.12) ``(1/m) Σ_i e^{−y_i Σ_t α_t h_t(x_i)} ≤ e^{−2γ²T}`` when every
    edge is at least γ, and the weighted vote's training error is at most that. A cap 1/c ≥ e_t
    keeps it: b is convex and decreasing on ``[0, α*]`` and ``e_t ≤ α* = artanh(e_t)``, so
    ``b(1/c) ≤ b(e_t) ≤ e^{−2γ_t²}`` (Gentle-Boost's step). :meth:`bounds` declares the
    run's product ``Π_t b(α_t, e_t)``.

    Examples
    --------
    >>> from arena import play
    >>> df = play("adaboost", "boosting_oracle", horizon=20,
    ...           metrics=["weighted_vote_train_error", "bound"])
    >>> last = df[df.t == 20].set_index("metric").value
    >>> bool(last["weighted_vote_train_error"] <= last["bound:weighted_vote_train_error"] < 0.2)
    True

    References
    ----------
    Shalev-Shwartz 2007, §6.1–6.2, Eqs. (6.5)–(6.12); Freund & Schapire (1997), §4.
    """

    parameter_constraints: ClassVar = {"c": [POSITIVE, IsNone()]}

    def __init__(self, c: float | None = None):
        self.c = c

    def alpha(self, edge: np.ndarray) -> np.ndarray:
        return _adaboost_alpha(edge, math.inf if self.c is None else 1.0 / float(self.c))

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"c": 2.0}


class CappedAdaBoost(_PrimalDualBooster):
    """AdaBoost capped at ``2γ``: the primal–dual booster with ``c = 1/(2γ)``.

    ``α_t = min{2γ, ½ ln(w⁺_t/w⁻_t)}``, floored at 0 (Shalev-Shwartz 2007, Ch. 6, footnote 1:
    "a variant of AdaBoost in which the weights α_t are capped above by 2γ").

    Parameters
    ----------
    gamma : float
        The assumed lower bound γ ∈ (0, ½] on the edges.

    Notes
    -----
    When every edge ``γ_t ≥ γ`` the per-round factor is at most
    ``exp(−2γ e_t + 2γ²) = exp(−4γγ_t + 2γ²) ≤ e^{−2γ²}`` at the capped step and
    ``√(1 − 4γ_t²) ≤ e^{−2γ²}`` below the cap, so ``(1/m) Σ_i e^{−F_{T,i}} ≤ e^{−2γ²T}``: the
    same bound as AdaBoost, but it needs γ. :meth:`bounds` declares the run's
    ``Π_t b(α_t, e_t)``, valid whatever the edges.

    References
    ----------
    Shalev-Shwartz 2007, §6.2 and its footnote 1.
    """

    parameter_constraints: ClassVar = {"gamma": [Interval(0, 0.5, closed="right")]}

    def __init__(self, gamma: float = 0.1):
        self.gamma = gamma

    def alpha(self, edge: np.ndarray) -> np.ndarray:
        return _adaboost_alpha(edge, 2.0 * float(self.gamma))

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"gamma": 0.3}


class GentleBoost(_PrimalDualBooster):
    """Gentle-Boost: the primal–dual booster with the step ``α_t = ⟨w_t, v_t⟩ = 2γ_t``.

    Floored at 0 (a negative edge takes no step). It maximizes the dual gain's lower bound
    ``α e − α²/2`` (Eq. 6.9) instead of the gain itself, and gets the same guarantee:
    ``b(e, e) ≤ e^{−e²/2} = e^{−2γ_t²}``, so ``(1/m) Σ_i e^{−F_{T,i}} ≤ e^{−2γ²T}`` when every
    edge is at least γ. :meth:`bounds` declares the run's ``Π_t b(α_t, e_t)``.

    References
    ----------
    Shalev-Shwartz 2007, §6.2 (after Eq. 6.11); Friedman, Hastie & Tibshirani (2000),
    "Additive logistic regression: a statistical view of boosting", Annals of Statistics 28(2).
    """

    def alpha(self, edge: np.ndarray) -> np.ndarray:
        return np.maximum(edge, 0.0)

    @classmethod
    def _unit_test_params(cls):
        yield {}
