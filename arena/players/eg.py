"""Exponentiated gradient on the simplex (EG) and with positive and negative weights (EG±)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.errors import ConfigError
from arena.oco.components import OCO_PROTOCOLS, OCOPlayer, game_dim, game_domain
from arena.oco.domains import Domain
from arena.oco.losses import Feedback
from arena.params import POSITIVE, Interval, IsNone, OneOf
from arena.players._projections import project_entropic_floor
from arena.spec import GameSpec, PlayerTags

SCHEDULES = ("fixed", "sqrt")


def softmin_weights(cum: np.ndarray, eta: float) -> np.ndarray:
    """Return ``w_i ∝ exp(−η S_i)`` row-wise, computed as ``exp(−η (S_i − min S))``.

    Examples
    --------
    >>> softmin_weights(np.array([[1.0, 0.0]]), math.log(3.0)).round(3).tolist()
    [[0.25, 0.75]]
    """
    z = -eta * (cum - cum.min(axis=-1, keepdims=True))
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


class _ExponentialWeights(OCOPlayer):
    """Exponential weights over N coordinates on the linearized losses (shared by EG and EG±).

    Subclasses define ``_setup(spec, domain, dim) -> (N, B)`` (B: a bound on every round's
    coordinate range of the expert losses, or None), ``_expert_losses(g)`` and ``_play(p)``.
    """

    parameter_constraints: ClassVar = {"schedule": [OneOf(*SCHEDULES)], "eta": [POSITIVE, IsNone()]}

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        dim = game_dim(spec)
        domain = game_domain(spec)
        eta = None if self.eta is None else float(self.eta)
        n_experts, range_bound = self._setup(spec, domain, dim)
        log_n = math.log(n_experts)
        if eta is None:
            if range_bound is None or not range_bound > 0:
                raise ConfigError(who, "eta", "null (tuned) needs spec.gradient_bound > 0")
            base = math.sqrt(8.0 * log_n) / range_bound
            if self.schedule == "fixed":
                if spec.horizon is None:
                    raise ConfigError(who, "eta", "null with schedule 'fixed' needs the horizon")
                eta = base / math.sqrt(spec.horizon)
            else:
                eta = base
            eta = eta if eta > 0 else 1.0  # one expert: any rate
        self._eta = eta
        self._sqrt = self.schedule == "sqrt"
        self._log_n = log_n
        n_rep = spec.n_replicates
        self._cum = np.zeros((n_rep, n_experts))
        self._acc = np.zeros(n_rep)
        self._rounds = 0

    def learning_rate(self, t: int) -> float:
        """Return ``η_t``, the rate that plays round ``t``."""
        return self._eta / math.sqrt(t) if self._sqrt else self._eta

    def weights(self) -> np.ndarray:
        """Return the expert weights ``p_t ∝ exp(−η_t Σ_{s<t} ℓ_s)``, shape (R, N)."""
        return softmin_weights(self._cum, self.learning_rate(self._rounds + 1))

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._play(self.weights())

    def update(self, fb: Feedback) -> None:
        t = self._rounds + 1
        losses = self._expert_losses(np.asarray(fb.grad, dtype=np.float64))
        spread = losses.max(axis=1) - losses.min(axis=1)
        self._acc += self.learning_rate(t) * spread * spread
        self._cum += losses
        self._rounds = t

    def expert_regret_bound(self, t: int) -> np.ndarray:
        """Return ``ln N/η_t + ⅛ Σ_{s≤t} η_s B_s²`` (B_s: round s's expert-loss range), (R,)."""
        if t == 0:
            return 0.125 * self._acc
        return self._log_n / self.learning_rate(t) + 0.125 * self._acc


class EG(_ExponentialWeights):
    """Exponentiated gradient on the simplex: ``w_{t+1,i} ∝ w_{t,i} e^{−η g_{t,i}}``.

    The weights are computed in the log domain as ``w_t ∝ exp(−η_t Σ_{s<t} g_s)`` (shifted by the
    minimum), which for a fixed η is exactly the multiplicative recursion from ``w_1`` uniform,
    and for ``η_t = η/√t`` is the lazy (entropic FTRL) form; ``g_t`` is the arena's subgradient.

    Parameters
    ----------
    schedule : {"sqrt", "fixed"}
        ``η_t = η/√t`` (anytime) or a fixed η.
    eta : float or None
        η. None tunes it from ``B = √2·G`` (``G = spec.gradient_bound``; every coordinate range
        ``max_i g_i − min_i g_i ≤ √2‖g‖₂``): ``η = √(8 ln d/(T B²))`` (fixed, needs the horizon)
        or ``η_t = √(8 ln d/(t B²))`` (sqrt).
    floor : float
        ε in ``[0, 1/d)``: play the entropic projection of the exponential weights onto the
        floored simplex ``S_ε = {w ≥ ε, Σw = 1}`` (Shalev-Shwartz 2007, §7.1.3, Figure 7.3,
        :func:`~arena.players._projections.project_entropic_floor`); 0 (the default) is plain
        EG. It keeps every weight ≥ ε, so a coordinate can recover from a long bad run.

    Notes
    -----
    With ``B_t = max_i g_{t,i} − min_i g_{t,i}``, for every sequence of convex losses on the
    simplex (adaptive adversaries included) and every comparator u in the simplex:

    * fixed η (Hedge analysis, Hoeffding's lemma per round on gradients in ``[a_t, a_t + B_t]``;
      Cesa-Bianchi & Lugosi 2006, Thm 2.2): ``R_T ≤ ln d/η + (η/8) Σ_t B_t²``;
    * ``η_t`` non-increasing: ``R_T ≤ ln d/η_T + ⅛ Σ_t η_t B_t²``. Proof (the mix-loss argument
      of de Rooij et al. 2014 §2, with varying rates): with
      ``Φ_t(η) = −(1/η) ln((1/d) Σ_i e^{−η L_{t,i}})`` the mix loss of round t is
      ``m_t = Φ_t(η_t) − Φ_{t−1}(η_t)``; ``Φ_t`` is non-increasing in η (a power mean), so
      ``Σ_t m_t ≤ Φ_T(η_T) ≤ min_i L_{T,i} + ln d/η_T``, and Hoeffding's lemma bounds the
      mixability gap ``⟨w_t, g_t⟩ − m_t ≤ η_t B_t²/8``.

    With a floor ε > 0 the player is the lazy primal–dual player of the relative entropy to
    uniform restricted to ``S_ε``, ``w_t = ∇f*_{S_ε}(−η_t Σ_{s<t} g_s)`` (the link of the
    restricted entropy is the entropic projection of the softmax). On the simplex ``g_t`` may be
    shifted by a constant without changing ``w_t`` or the regret, so the subgradient fed to the
    framework has ``‖λ_t‖_∞ = B_t/2``, and Shalev-Shwartz 2007, Lemma 2 (``c_t = 1/η_t``
    non-decreasing, ``0 ≤ f ≤ ln d``) gives ``ln d/η_T + ⅛ Σ_t η_t B_t²`` against every
    ``u' ∈ S_ε``. A comparator u of the simplex is compared through
    ``u' = (1 − dε)u + ε1 ∈ S_ε``: ``⟨g_t, u' − u⟩ = ε(Σ_i g_{t,i} − d⟨g_t, u⟩) ≤ ε(d − 1)B_t``,
    so the declared bound adds ``ε(d − 1) Σ_t B_t`` [derived].

    ``bounds`` declares these on the run's ranges. With ``‖g_t‖₂ ≤ G`` (so ``B_t ≤ B = √2 G``),
    the tuned rates give ``≤ B√(T ln d/2) = G√(T ln d)`` (fixed) and ``≤ (3/√8)B√(T ln d) =
    (3/2)G√(T ln d)`` (sqrt). This is the Hedge analysis with gradients in ``[a, a + 2G∞]``
    with the range used directly: ``B_t ≤ min(2‖g_t‖_∞, √2‖g_t‖₂)``, so with ``‖g‖_∞ ≤ G∞``
    the fixed-η bound reads ``ln d/η + ηG∞²T/2``. Srebro, Lecture 16 (slide "Normalized
    Exponentiated Gradient (EG)") states only the order ``O(√(‖∇ℓ‖_∞² log d / m))`` for the
    average regret; the entropic instance of the framework bound of Shalev-Shwartz 2007
    (Corollary 1, ``ln d/η + (η/2)Σ‖g_t‖_∞²``) is implied by the one declared here.

    Examples
    --------
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("oco", 2, 10, dim=2, domain=Domain("simplex"), loss="linear")
    >>> p = EG(schedule="fixed", eta=math.log(3.0))
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> p.update(feedback("linear", 0.0, p.predict(), RoundData(g=np.array([[1.0, 0.0]]))))
    >>> p.predict().round(3).tolist()
    [[0.25, 0.75]]

    References
    ----------
    Kivinen & Warmuth (1997), "Exponentiated gradient versus gradient descent for linear
    predictors". Srebro, Lecture 16, slide "Normalized Exponentiated Gradient (EG)" (EG as
    entropic linearized FTRL, and its multiplicative form); Shalev-Shwartz 2007, Example 2
    (§4.2) and the entropic link (§5.1.2).
    """

    tags = PlayerTags(protocols=OCO_PROTOCOLS, randomized=False, domains=frozenset({"simplex"}))
    parameter_constraints: ClassVar = {
        **_ExponentialWeights.parameter_constraints,
        "floor": [Interval(0, 1, closed="left")],
    }

    def __init__(self, schedule: str = "sqrt", eta: float | None = None, floor: float = 0.0):
        self.schedule = schedule
        self.eta = eta
        self.floor = floor

    def _setup(self, spec, domain, dim):
        if domain.kind != "simplex":
            raise ConfigError(self.label(), "domain", "EG plays on the simplex only")
        self._floor = float(self.floor)
        if self._floor * dim >= 1.0:
            raise ConfigError(
                self.label(), "floor", f"must be < 1/d = {1.0 / dim:.6g}, got {self.floor!r}"
            )
        self._spread_sum = np.zeros(spec.n_replicates)
        self._dim = dim
        G = spec.gradient_bound
        return dim, (None if G is None else math.sqrt(2.0) * G)

    def _expert_losses(self, g):
        return g

    def _play(self, p):
        if self._floor > 0.0:
            return project_entropic_floor(p, self._floor)
        return p

    def update(self, fb: Feedback) -> None:
        g = np.asarray(fb.grad, dtype=np.float64)
        self._spread_sum += g.max(axis=1) - g.min(axis=1)
        super().update(fb)

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare the regret bound of the Notes after ``t`` rounds."""
        return {("regret", math.nan): self.regret_bound(t)}

    def regret_bound(self, t: int) -> np.ndarray:
        """Return ``ln d/η_t + ⅛ Σ_{s≤t} η_s B_s² + ε(d − 1) Σ_{s≤t} B_s``, shape (R,)."""
        bound = self.expert_regret_bound(t)
        if self._floor > 0.0:
            bound = bound + self._floor * (self._dim - 1) * self._spread_sum
        return bound

    @classmethod
    def _unit_test_params(cls):
        yield {"eta": 1.0}
        yield {"schedule": "fixed", "eta": 0.5}
        yield {"eta": 1.0, "floor": 0.02}


class EGPlusMinus(_ExponentialWeights):
    """EG± (Kivinen–Warmuth): exponentiated gradient with positive and negative weights.

    Plays ``w_t = U (w_t⁺ − w_t⁻)`` in the ℓ1 ball of radius U, where ``(w⁺, w⁻)`` are 2d weights
    on the simplex updated by EG on the expert losses ``U·(g_t, −g_t)``:
    ``w⁺_{t+1,i} ∝ w⁺_{t,i} e^{−ηU g_{t,i}}``, ``w⁻_{t+1,i} ∝ w⁻_{t,i} e^{+ηU g_{t,i}}``
    (one normalizer over all 2d weights), since ``⟨g, U(w⁺ − w⁻)⟩ = ⟨U(g, −g), (w⁺, w⁻)⟩``.
    Rates and the log-domain computation are those of :class:`EG` on the 2d experts.

    Parameters
    ----------
    schedule : {"sqrt", "fixed"}
        ``η_t = η/√t`` or a fixed η.
    eta : float or None
        η of the 2d-expert EG. None tunes it from ``B = 2UG`` (the expert range
        ``2U‖g‖_∞ ≤ 2U‖g‖₂``): ``η = √(8 ln(2d)/(T B²))`` (fixed) or ``√(8 ln(2d)/(t B²))``.
    radius : float or None
        U, the ℓ1 radius. None uses the domain's radius on a ball or box and 1 on ℝ^d.

    Notes
    -----
    Domains: unconstrained (improper: the ℓ1 ball of radius U lies inside ℝ^d), and ball or box
    of radius ≥ U (the ℓ1 ball of radius U lies inside both); our domains have no ℓ1 ball.

    Guarantee: every u with ``‖u‖₁ ≤ U`` is ``U(u⁺ − u⁻)`` for a point ``(u⁺, u⁻)`` of the
    2d-simplex (split ``u`` into its positive and negative parts and put the slack
    ``(1 − ‖u‖₁/U)/2`` on ``u⁺_1`` and ``u⁻_1``), so :class:`EG`'s bound on the 2d experts is a
    bound against the ℓ1 ball: ``R_T(u) ≤ ln(2d)/η_T + ⅛ Σ_t η_t B_t²`` with
    ``B_t = 2U‖g_t‖_∞`` (:meth:`l1_regret_bound`). The ``regret`` metric's comparator set is the
    game's domain, which is larger than the ℓ1 ball unless ``d = 1`` and U equals the radius of
    a ball or box; ``bounds`` declares the bound only then (and ``{}`` otherwise).

    Examples
    --------
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("oco", 2, 10, dim=2, domain=Domain("unconstrained"), loss="linear")
    >>> p = EGPlusMinus(schedule="fixed", eta=math.log(3.0), radius=2.0)
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> p.predict().tolist()
    [[0.0, 0.0]]
    >>> p.update(feedback("linear", 0.0, p.predict(), RoundData(g=np.array([[0.5, 0.0]]))))
    >>> p.predict().round(6).tolist()
    [[-1.0, 0.0]]

    References
    ----------
    Kivinen & Warmuth (1997), "Exponentiated gradient versus gradient descent for linear
    predictors", Information and Computation 132(1), the EG± algorithm. Srebro, Lecture 16,
    slide "Normalized Exponentiated Gradient (EG)" (EG as entropic linearized FTRL).
    """

    tags = PlayerTags(
        protocols=OCO_PROTOCOLS,
        randomized=False,
        domains=frozenset({"unconstrained", "ball", "box"}),
    )
    parameter_constraints: ClassVar = {
        **_ExponentialWeights.parameter_constraints,
        "radius": [POSITIVE, IsNone()],
    }

    def __init__(
        self, schedule: str = "sqrt", eta: float | None = None, radius: float | None = None
    ):
        self.schedule = schedule
        self.eta = eta
        self.radius = radius

    def _setup(self, spec, domain: Domain, dim):
        who = self.label()
        if domain.kind not in self.tags.domains:
            raise ConfigError(who, "domain", f"EG± plays on {sorted(self.tags.domains)}")
        if self.radius is not None:
            U = float(self.radius)
        else:
            U = float(domain.radius) if domain.kind != "unconstrained" else 1.0
        if domain.kind != "unconstrained" and U > domain.radius:
            raise ConfigError(who, "radius", f"U = {U} exceeds the domain's radius {domain.radius}")
        self._U = U
        self._dim = dim
        self._declares = dim == 1 and domain.kind != "unconstrained" and U == domain.radius
        G = spec.gradient_bound
        return 2 * dim, (None if G is None else 2.0 * U * G)

    def _expert_losses(self, g):
        return self._U * np.concatenate([g, -g], axis=1)

    def _play(self, p):
        d = self._dim
        return self._U * (p[:, :d] - p[:, d:])

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare :meth:`l1_regret_bound` when the ℓ1 ball is the game's domain (d = 1)."""
        if not self._declares:
            return {}
        return {("regret", math.nan): self.l1_regret_bound(t)}

    def l1_regret_bound(self, t: int) -> np.ndarray:
        """Return the bound on the regret against ``{‖u‖₁ ≤ U}`` after ``t`` rounds, (R,)."""
        return self.expert_regret_bound(t)

    @classmethod
    def _unit_test_params(cls):
        yield {"eta": 1.0}
        yield {"schedule": "fixed", "eta": 0.5, "radius": 0.5}
