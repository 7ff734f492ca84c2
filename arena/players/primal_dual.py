"""The generic primal-dual (dual-ascent) player of Shalev-Shwartz 2007 as a factory.

A player is a regularizer × a dual-ascent rule × a trade-off schedule; it plays the OCO, regression
and classification protocols.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import ClassVar

import numpy as np
from numba import njit

from arena.errors import ConfigError
from arena.oco.components import OCO_PROTOCOLS, OCOPlayer, game_dim, game_domain
from arena.oco.domains import Domain
from arena.oco.losses import Feedback
from arena.params import POSITIVE, Boolean, Interval, IsNone, OneOf
from arena.players._quasi_additive import (
    P_CONSTRAINTS,
    check_domain_contains_l1_ball,
    lemma19,
    read_example,
    resolve_p,
    softmax,
)
from arena.players.regularizers import make_regularizer
from arena.spec import GameSpec, PlayerTags

REGULARIZERS = ("l2", "entropic", "pnorm")
RULES = ("conservative", "aggressive")
SCHEDULES = ("fixed", "sqrt", "lipschitz", "mistakes", "small_loss")
CLASSIFICATION_SCHEDULES = ("lipschitz", "mistakes")
"""Schedules that read ``x_t`` before predicting (classification only)."""

SELF_BOUNDED = {"squared": 1.0, "logistic": 0.5}
"""κ of the example losses that are ``κ‖x‖_*²``-self-bounded (Shalev-Shwartz 2007, Definition 2:
some subgradient λ has ``½‖λ‖_*² ≤ L g(w)``). With ``λ = ℓ'(⟨w, x⟩, y)·x``: squared,
``½ℓ'² = ℓ`` (κ = 1; the thesis states the looser 2‖x‖², §5.3.1); logistic, ``ℓ' = −yσ(−m)`` and
``σ(−m)² ≤ σ(−m) = z/(1+z) ≤ ln(1+z) = ℓ`` with ``z = e^{−m}`` (κ = ½). Hinge, absolute and
linear losses are not self-bounded (a subgradient of norm ‖x‖ where the loss is near 0)."""

COR4_BETA2 = 8.0**0.25
"""Corollary 4's ``β₂ = 8^{1/4}√(L/U)``: ``c = "tuned"`` with ``schedule="small_loss"``."""

LINE_SEARCH_STEPS = 200
"""Cap on the slope evaluations of the aggressive rule's 1-D line search (typically ~10 needed)."""

DUAL_UPDATES = ("single", "window", "ftrl", "row_action")
"""How many dual variables a round re-optimizes (Shalev-Shwartz 2007, (5.15) and §5.2.2, (5.18))."""

DUAL_TOL = 1e-8
"""``window`` / ``ftrl``: the coordinate sweeps stop once no ``α_i`` moved by more than this."""

MAX_SWEEPS = 1000
"""``window`` / ``ftrl``: cap on the coordinate sweeps of one round (the dual still never
decreases, and the round's first mini-step is (5.15)'s, so the bounds hold when it is reached)."""


class PNormOnQBall:
    """The p-norm regularizer ``f = ‖w‖_q²/(2(q−1))`` restricted to ``S = {‖w‖_q ≤ ρ}``.

    f depends on w only through ``‖w‖_q``, and ``max_{‖w‖_q = r} ⟨w, θ⟩ = r‖θ‖_p`` in the
    direction of the unconstrained link, so ``∇f*_S(θ) = ∇f*(θ)·min(1, ρ/‖∇f*(θ)‖_q)`` (the
    unconstrained link has ``‖∇f*(θ)‖_q = (q−1)‖θ‖_p``) and
    ``f*_S(θ) = r‖θ‖_p − r²/(2(q−1))`` with ``r = min((q−1)‖θ‖_p, ρ)``. [derived]

    Examples
    --------
    >>> from arena.players.regularizers import PNorm
    >>> reg = PNormOnQBall(PNorm(p=2.0), 1.0)  # p = q = 2: the Euclidean ball
    >>> reg.link(np.array([[3.0, 4.0]])).tolist(), float(reg.conjugate(np.array([[3.0, 4.0]]))[0])
    ([[0.6000000000000001, 0.8]], 4.5)
    """

    name = "pnorm"

    def __init__(self, base, rho: float):
        self.base = base
        self.rho = float(rho)
        self.q = base.q
        self.domain = Domain("unconstrained")  # S is a q-ball, not one of the arena's kinds

    def _radius(self, theta):
        return np.minimum((self.q - 1.0) * self.base.dual_norm(theta), self.rho)

    def link(self, theta):
        w = self.base.link(theta)
        norm = self.base.norm(w)
        return w * np.minimum(1.0, self.rho / np.where(norm > 0.0, norm, 1.0))[..., None]

    def conjugate(self, theta):
        r = self._radius(theta)
        return r * self.base.dual_norm(theta) - r * r / (2.0 * (self.q - 1.0))

    def value(self, w):
        return self.base.value(w)

    def dual_norm(self, v):
        return self.base.dual_norm(v)

    def max_value(self, domain, d):
        return self.rho**2 / (2.0 * (self.q - 1.0))


class _TagsByDualUpdate:
    """Class attribute ``tags``: an instance with ``dual_update="ftrl"`` keeps every fed example
    (I_t = [t]), so it declares that its state grows (``check_oco_bounded_memory``)."""

    base = PlayerTags(protocols=OCO_PROTOCOLS, randomized=False)

    def __get__(self, obj, owner=None) -> PlayerTags:
        if obj is not None and getattr(obj, "dual_update", None) == "ftrl":
            why = (
                "dual_update='ftrl' re-optimizes the dual variable of every fed example "
                "(I_t = [t], Shalev-Shwartz 2007, (5.18)): it keeps them all, O(t·d) memory"
            )
            return replace(self.base, expected_failed_checks=(("check_oco_bounded_memory", why),))
        return self.base


class PrimalDual(OCOPlayer):
    """Generic primal–dual player: ``w_t = ∇f*(θ_t/c_t)``, ``θ_t = −Σ_{i<t} λ_i`` (Fig 3.1/3.2).

    Shalev-Shwartz 2007, Figures 3.1 (fixed ``c``) and 3.2 (schedule ``c_t``). A player is
    (regularizer f, dual-ascent rule, trade-off schedule ``c_t``).
    After round t the dual vector ``λ_t`` of the round is chosen by

    * ``rule="conservative"`` (3.11): ``λ_t = λ'_t``, a subgradient of ``g_t`` at ``w_t``
      (lazy mirror descent / linearized FTRL / the quasi-additive family of Fig 5.1);
    * ``rule="aggressive"`` (3.12)/(5.14)/(5.15): ``λ_t = argmax_λ −c_t f*((θ − λ)/c_t) − g_t*(λ)``,
      the best single-dual-variable ascent (classification only: for the hinge
      ``λ = −α y_t x_t``, ``α ∈ [0, 1]``).

    With the aggressive rule in classification, ``dual_update`` lets a round re-optimize past dual
    variables too (§5.2.2): ``"single"`` is (5.15) (only ``α_t``); ``"window"`` maximizes ``D_t``
    over ``α_i``, i in the last ``window`` fed rounds (5.18); ``"ftrl"`` over every fed round,
    ``I_t = [t]`` (regularized follow-the-leader: with a fixed c, ``w_{t+1} = argmin_{w∈S}
    c f(w) + Σ_{i≤t} g_i(w)`` by strong duality); ``"row_action"`` makes ``passes`` sweeps of
    single-variable maximizations over the last ``window`` fed rounds, newest first
    (``i_1 = t``). Each mini-step is the aggressive step of variable i with the others fixed; for
    ``½‖w‖²`` on ℝ^d it is ``α_i ← clip(α_i + (c_t γ − y_i⟨θ, x_i⟩)/‖x_i‖², 0, 1)``. ``window`` and
    ``ftrl`` repeat the sweeps until no ``α_i`` moves by more than :data:`DUAL_TOL` (at most
    :data:`MAX_SWEEPS`; dual coordinate ascent). Every round starts with the (5.15) step of
    ``α_t``, and no mini-step lowers the dual, so the round's dual gain is at least (5.15)'s and
    the certificates, mistake bounds and declared bound below hold unchanged ((5.18) and the
    row-action paragraph of §5.2.2). Cost per fed round: ``O(sweeps · |I_t| · d)`` (a compiled
    kernel for ``½‖w‖²`` on ℝ^d; elsewhere each mini-step is the aggressive rule's closed form or
    line search, vectorized over replicates); memory ``O(window · d)``, and ``O(t · d)`` for
    ``ftrl``, whose ``|I_t| = t`` also makes a round cost ``O(t d)`` per sweep.

    Protocols. In ``oco`` and ``regression`` the loss is the arena's: ``λ'_t`` is the feedback's
    subgradient (any convex loss, the strongly convex term included); only the conservative rule
    and the ``fixed`` / ``sqrt`` schedules apply. In ``classification`` the player runs on its own
    hinge ``g_t(w) = [γ − y_t⟨w, x_t⟩]₊`` (margin ``gamma``; it ignores the arena's surrogate):
    the conservative rule sets ``α_t = 1`` when ``y_t⟨w_t, x_t⟩ ≤ γ`` (at the kink it takes the
    subgradient ``−y x``, like the aggressive Perceptron), else 0; the aggressive rule maximizes
    the dual over ``α_t`` by the closed forms (7.11) (Euclidean, ℝ^d), the corrected entropic form
    of (7.12)-(7.16) (``x ∈ {−1, 0, 1}^d``, ``0 < γ < 1``; see :func:`entropic_hinge_step`), or
    else a line search on the derivative ``γ − y⟨∇f*((θ + a y x)/c_t), x⟩`` of the concave 1-D
    dual (the numerical fallback the thesis suggests in §7.2; a safeguarded regula
    falsi). With ``mistake_driven=True`` only mistake rounds (``y_t⟨w_t, x_t⟩ ≤ 0``) are fed to
    the dual (Fig 5.1; ``g_t(w_t) ≥ γ`` there); other rounds change nothing but ``X_t``.

    Parameters
    ----------
    regularizer : {"l2", "entropic", "pnorm"}
        ``½‖w‖₂²`` on the game's domain K (link = Euclidean projection), the relative entropy to
        uniform on the simplex (link = softmax; it plays inside any K that contains the simplex),
        or ``‖w‖_q²/(2(q−1))`` (link = (5.9)/(p−1)) on ℝ^d, or on the ℓ_q ball of K's radius
        when K is a ball or a box (:class:`PNormOnQBall`; that ball lies in K). When f's set S is
        not K, no regret bound is declared (the arena's comparator ranges over K).
    p : float or "auto"
        Exponent of the p-norm link, ``p ≥ 2`` (``"auto"`` = ``max(2, 2 ln d)``).
    rule : {"conservative", "aggressive"}
        Dual-ascent rule (aggressive: classification only).
    schedule : {"fixed", "sqrt", "lipschitz", "mistakes", "small_loss"}
        ``c_t = c₀`` (Fig 3.1); ``c₀√t`` (Cor 2; t counts the rounds fed to the dual);
        ``c₀ X_t √(t/U)`` ((5.15)/(5.16), Cor 3); ``c₀ X_t √((M_t + 1)/U)`` ((5.17), Fig 5.2/5.3),
        where ``X_t = max_{i≤t} ‖x_i‖_*`` over every round seen (the current one included) and
        ``M_t`` counts the mistakes before round t. The last two need features: classification.
        ``small_loss``: ``c_t = β₂ √(β₁ + Σ_{i<t} g_i(w_i))`` (Theorem 2, the self-confident
        rate), ``β₂ = c₀``, ``β₁ = beta1``, the losses ``g_i`` being the arena's (squared or
        logistic: self-bounded, :data:`SELF_BOUNDED`); it needs features shown before
        predicting (classification, where it feeds the arena's loss instead of its own hinge,
        or regression), the conservative rule, every round fed and σ = 0.
    c : float or "tuned"
        ``c₀ > 0``. ``"tuned"``: ``fixed`` → ``√(T L/U)`` (Cor 1), ``sqrt`` → ``√(L/U)`` (Cor 2),
        with ``L = G²/2`` from the adversary's gradient bound G (a bound on ``‖λ'‖₂``, hence on
        every dual norm used here, p ≥ 2) and the horizon T; ``lipschitz`` / ``mistakes`` → 1;
        ``small_loss`` → Corollary 4's ``β₂ = 8^{1/4}√(L_t/U)`` with ``L_t = κ X_t²`` (κ of
        :data:`SELF_BOUNDED`, ``X_t`` as above), non-decreasing in t since L is learned from
        the features seen (the same device as Cor 3 for Cor 2).
    U : float or None
        Bound U on ``f(u)`` of the comparators (schedules and tuning). None: ``max_S f`` (``ln d``
        for the entropy; ``½ max_K ‖u‖²`` for L2 on a bounded K; ``ρ²/(2(q−1))`` on a q-ball).
    gamma : float
        Margin γ > 0 of the classification hinge.
    mistake_driven : bool
        Feed only the mistake rounds to the dual (classification).
    beta1 : float
        ``β₁ ≥ 1`` of the ``small_loss`` schedule (Theorem 2); Corollary 4 wants
        ``β₁ ≥ max_t g_t(w_t)`` (the thesis: ``≥ max_t max_{w∈S} g_t(w)``).
    dual_update : {"single", "window", "ftrl", "row_action"}
        The dual variables a round re-optimizes (above; all but ``"single"`` need the aggressive
        rule and the classification hinge).
    window : int
        ``|I_t|`` of ``"window"`` (the last ``window`` fed rounds, the current one included), and
        the span of ``"row_action"``'s sweeps; ``window=1`` is ``"single"``.
    passes : int
        Sweeps of ``"row_action"`` per round (``k_t = passes · min(window, t)`` mini-steps).

    Notes
    -----
    Guarantees (all on the run's own quantities; f ≥ 0 on S for every regularizer here):

    * Regret certificate (Lemma 1 / Lemma 2, Eq. (3.17)): for every ``u ∈ S``, over the
      fed rounds, ``Σ g_t(w_t) − Σ g_t(u) ≤ c_T f(u) + ½ Σ_t ‖λ'_t‖_*²/c_t`` with ``c_t``
      non-decreasing (:meth:`regret_certificate`). When every round is fed, the arena's loss is
      ``g_t`` (``oco``/``regression``, or classification with the hinge and ``γ = 1``), S is the
      game's domain K and ``max_K f < ∞`` (L2 on a bounded K, the entropy on the simplex),
      :meth:`bounds` declares ``("regret", nan)`` = this certificate at ``f(u) = max_K f``. The
      closed forms Cor 1 (``2√(LUT)``) and Cor 2 (``4√(LUT)``) follow with ``‖λ'‖_* ≤ G``.
    * Mistake bounds (:meth:`mistake_bound`, for one comparator u; they depend on u, so none is
      declared): Cor 5 / Cor 7 (conservative, mistake-driven, homogeneous f), (5.2)/(5.7) (fixed c),
      Cor 6 / Thm 6 (``mistakes`` schedule), else ``|M| ≤ (H + certificate)/γ``.
    * Small-loss bounds (:meth:`small_loss_bound`, ``small_loss`` schedule): Theorem 2, for every
      u of S, ``R(u, T) ≤ K (Σ_t g_t(u) + β₁)^{1/2} + K²`` with ``K = β₂ f(u) + L G/β₂``,
      ``G = 2√(1 + max_t g_t(w_t)/β₁)``, ``L = κ X_T²``; with ``c = "tuned"``, ``f(u) ≤ U``
      and ``max_t g_t(w_t) ≤ β₁`` (so ``G ≤ 2√2``), Corollary 4:
      ``R(u, T) ≤ 3.4√(LU) (Σ_t g_t(u) + β₁)^{1/2} + 11.4 LU``. They grow with the comparator's
      loss, not with T: on separable data the regret stays bounded.
    * Duality (§6 oracles 1–3, :meth:`dual_value`): the dual
      ``D_t = −c_t f*(θ/c_t) − Σ_i g_i*(λ_i)`` (classification: ``−Σ g* = γ Σ α``; OCO:
      ``−g_t*(λ_t) = g_t(w_t) − ⟨λ_t, w_t⟩`` by Fenchel–Young) satisfies weak duality
      ``D_t ≤ c_t f(u) + Σ g_i(u)``, gains ``D_t − D_{t−1} ≥ g_t(w_t) − ‖λ'_t‖_*²/(2c_t)`` on fed
      rounds, and never decreases under the aggressive rule.

    Instances (tested equal to the direct players or transcriptions): Perceptron = (l2,
    conservative, fixed, mistake-driven); p-norm Perceptron(c) = (pnorm, same, ``c/(p−1)``);
    Balanced Winnow = (entropic, conservative, fixed, mistake-driven); self-tuned Winnow =
    (entropic, conservative, mistakes, mistake-driven); PA-I(C) = (l2, aggressive, fixed,
    ``c = 1/C``); aggressive Perceptron(η) = (l2, conservative, fixed, ``c = 1/η``); Fig 5.3 = (any,
    aggressive, mistakes); in ``oco``: dual averaging (c) = (l2, conservative, fixed or sqrt, c) and
    EG(η) = (entropic, conservative, fixed or sqrt, ``c = 1/η``); ``dual_update="window"`` with
    ``window=1`` = ``"single"`` (bit for bit; to round-off for ``½‖w‖²`` on ℝ^d, whose kernel
    sums ``⟨θ, v⟩`` in another order).

    Examples
    --------
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("oco", 2, 2, dim=2, domain=Domain("ball", 1.0), loss="linear",
    ...                 gradient_bound=1.0)
    >>> p = PrimalDual(regularizer="l2", c=2.0)
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> rd = RoundData(g=np.array([[1.0, 0.0]]))
    >>> p.update(feedback("linear", 0.0, p.predict(), rd))
    >>> p.predict().tolist()  # Proj(−g/c)
    [[-0.5, 0.0]]

    Regularized follow-the-leader (``I_t = [t]``) reaches the optimum of the dual, here the
    primal value 3 of ``w = 0`` (three hinge losses of 1); the single-variable update does not:

    >>> spec = GameSpec("classification", 2, 3, dim=2, loss="hinge")
    >>> for mode in ("single", "ftrl"):
    ...     p = PrimalDual(rule="aggressive", c=0.5, dual_update=mode)
    ...     p.reset(spec, [np.random.default_rng(0)])
    ...     for x, y in (([1.0, 0.0], 1.0), ([1.0, 1.0], -1.0), ([0.0, 1.0], 1.0)):
    ...         rd = RoundData(x=np.array([x]), y=np.array([y]))
    ...         p.update(feedback("hinge", 0.0, p.predict(rd.x), rd))
    ...     print(mode, p.dual_value().round(4).tolist(), p.predict().round(4).tolist())
    single [1.75] [[0.0, 1.0]]
    ftrl [3.0] [[0.0, 0.0]]

    References
    ----------
    The regularizers (link, conjugate, dual norm, ``max f``) are :mod:`arena.players.regularizers`.
    Shalev-Shwartz 2007: Figure 3.1, Lemma 1 and Corollary 1 (§3.3-3.4); Figure 3.2, Lemma 2 and
    Corollary 2, Lemma 3, Theorem 2 and Corollary 4 (§3.5; Definition 2 and Theorem 1 of §3.4 for
    self-bounded losses); Figure 5.1 and Eq. (5.2) (§5.1); Figure 5.2 (§5.1.3); Eqs. (5.14)-(5.17),
    Figure 5.3 and Theorem 6 (§5.2.1; Figure 5.3 is followed with the dual norm ``‖·‖_⋆`` of
    (5.17) for ``X_t``, where the figure prints ``‖·‖_∞``, and without the minus sign it prints in
    ``w_t = ∇f*(−(1/c_t) Σ α y x)``); Eqs. (7.11)-(7.16) (§7.2; (7.12)-(7.16) corrected, see
    :func:`entropic_hinge_step`); Eq. (5.18), regularized follow-the-leader (after Hannan 1957),
    the windowed and the row-action updates (§5.2.2).
    """

    tags = _TagsByDualUpdate()
    parameter_constraints: ClassVar = {
        "regularizer": [OneOf(*REGULARIZERS)],
        "p": P_CONSTRAINTS,
        "rule": [OneOf(*RULES)],
        "schedule": [OneOf(*SCHEDULES)],
        "c": [POSITIVE, OneOf("tuned")],
        "U": [POSITIVE, IsNone()],
        "gamma": [POSITIVE],
        "mistake_driven": [Boolean()],
        "beta1": [Interval(1, None)],
        "dual_update": [OneOf(*DUAL_UPDATES)],
        "window": [Interval(1, None, integer=True)],
        "passes": [Interval(1, None, integer=True)],
    }

    def __init__(
        self,
        regularizer: str = "l2",
        p: float | str = "auto",
        rule: str = "conservative",
        schedule: str = "fixed",
        c: float | str = 1.0,
        U: float | None = None,
        gamma: float = 1.0,
        mistake_driven: bool = False,
        beta1: float = 1.0,
        dual_update: str = "single",
        window: int = 2,
        passes: int = 1,
    ):
        self.regularizer = regularizer
        self.p = p
        self.rule = rule
        self.schedule = schedule
        self.c = c
        self.U = U
        self.gamma = gamma
        self.mistake_driven = mistake_driven
        self.beta1 = beta1
        self.dual_update = dual_update
        self.window = window
        self.passes = passes

    # -- set-up --------------------------------------------------------------------------------

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        comp = self.label()
        self._gamma = float(self.gamma)
        d = game_dim(spec)
        domain = game_domain(spec)
        self._classification = spec.protocol == "classification"
        self._small_loss = self.schedule == "small_loss"
        # the player's own hinge, except under small_loss (which feeds the arena's loss)
        self._own_hinge = self._classification and not self._small_loss
        if self.dual_update != "single":
            why = "re-optimizes past hinge dual variables (Shalev-Shwartz 2007, (5.18))"
            if not self._own_hinge:
                raise ConfigError(
                    comp, "dual_update", f"{why}: classification with the player's hinge only"
                )
            if self.rule != "aggressive":
                raise ConfigError(comp, "dual_update", f"{why}: it needs rule='aggressive'")
        if self._small_loss:
            self._check_small_loss(spec, comp)
        elif not self._classification:
            for param, bad, why in (
                ("rule", self.rule == "aggressive", "the aggressive rule needs the hinge"),
                ("schedule", self.schedule in CLASSIFICATION_SCHEDULES, "needs features x_t"),
                ("mistake_driven", bool(self.mistake_driven), "there are no mistakes"),
            ):
                if bad:
                    raise ConfigError(comp, param, f"classification only in {spec.protocol}: {why}")
        # S, the set f lives on: the game's domain, except for the entropy (the simplex, inside
        # any domain that contains it) and the p-norm on a bounded domain (the ℓ_q ball of the
        # same radius, inside the ℓ2 ball or the box since ‖w‖_∞ ≤ ‖w‖₂ ≤ ‖w‖_q for q ≤ 2)
        if self.regularizer == "l2":
            reg = make_regularizer("l2", domain)
        elif self.regularizer == "entropic":
            if d < 2:
                raise ConfigError(comp, "dim", "the entropic regularizer needs d >= 2")
            check_domain_contains_l1_ball(spec, comp, simplex_ok=True)
            reg = make_regularizer("entropic", Domain("simplex"))
        else:
            p = resolve_p(self.p, d)
            if domain.kind == "simplex":
                raise ConfigError(
                    comp, "domain", "the p-norm regularizer has no set in the simplex"
                )
            reg = make_regularizer("pnorm", Domain("unconstrained"), p)
            if domain.bounded:
                reg = PNormOnQBall(reg, domain.radius)
        self._reg = reg
        # the link is 1-homogeneous (predictions free of c) for ½‖w‖² and the p-norm on ℝ^d
        self._homogeneous = reg.name in ("l2", "pnorm") and not domain.bounded
        comparator_set_is_domain = (
            reg.name == "l2"
            or (reg.name == "entropic" and domain.kind == "simplex")
            or (reg.name == "pnorm" and not domain.bounded)
        )
        max_f = reg.max_value(reg.domain, d)
        u_bound = max_f if self.U is None else float(self.U)
        needs_u = self.schedule in CLASSIFICATION_SCHEDULES or self.c == "tuned"
        if needs_u and not math.isfinite(u_bound):
            raise ConfigError(comp, "U", "needed by this schedule / tuning; give U (f(u) ≤ U)")
        self._U = u_bound
        self._c0 = self._resolve_c(spec, comp)
        n_rep = spec.n_replicates
        self._theta = np.zeros((n_rep, d))
        self._fed = np.zeros(n_rep, dtype=np.int64)
        self._mistakes = np.zeros(n_rep, dtype=np.int64)
        self._x_all = np.zeros(n_rep)
        self._x_mist = np.zeros(n_rep)
        self._x_fed = np.zeros(n_rep)
        self._neg_conj = np.zeros(n_rep)  # −Σ g_i*(λ_i) (classification: γ Σ α)
        self._cum_loss = np.zeros(n_rep)  # Σ g_i(w_i) over the fed rounds (small_loss)
        self._max_loss = np.zeros(n_rep)  # max_i g_i(w_i) (Theorem 2's G)
        self._cert = np.zeros(n_rep)  # ½ Σ ‖λ'_t‖²_* / c_t
        self._c_last = np.zeros(n_rep)
        self._dual = np.zeros(n_rep)
        hinge_is_loss = spec.loss == "hinge" and self._gamma == 1.0
        self._declares = (
            comparator_set_is_domain
            and math.isfinite(max_f)
            and not self.mistake_driven
            and (not self._own_hinge or hinge_is_loss)
        )
        self._max_f = max_f
        # the fed examples whose α_i may still move: v_i = y_i x_i, ‖x_i‖₂², α_i (a ring of
        # `window` slots, or every fed round for ftrl, grown by doubling)
        multi = self.dual_update != "single"
        cap = (16 if self.dual_update == "ftrl" else int(self.window)) if multi else 0
        self._span = cap if self.dual_update != "ftrl" else None
        self._hist_v = np.zeros((n_rep, cap, d))
        self._hist_sq = np.zeros((n_rep, cap))
        self._hist_a = np.zeros((n_rep, cap))
        self._euclid = reg.name == "l2" and not domain.bounded

    def _check_small_loss(self, spec: GameSpec, comp: str) -> None:
        """Refuse the games where Theorem 2's schedule does not apply, naming the reason."""
        why = "schedule 'small_loss' (Shalev-Shwartz 2007, Theorem 2)"
        if spec.protocol not in ("classification", "regression"):
            raise ConfigError(comp, "schedule", f"{why} needs features x_t: not in {spec.protocol}")
        if spec.loss not in SELF_BOUNDED:
            raise ConfigError(
                comp,
                "schedule",
                f"{why} needs a self-bounded loss ({', '.join(SELF_BOUNDED)}); the game's "
                f"{spec.loss} loss is not (Definition 2)",
            )
        if spec.sigma:
            raise ConfigError(comp, "schedule", f"{why}: no self-bound is declared for σ > 0")
        for param, bad, what in (
            ("rule", self.rule != "conservative", "the conservative rule"),
            ("mistake_driven", bool(self.mistake_driven), "every round fed"),
        ):
            if bad:
                raise ConfigError(comp, param, f"{why} runs with {what}")
        self._loss, self._kappa = spec.loss, SELF_BOUNDED[spec.loss]

    def _resolve_c(self, spec: GameSpec, comp: str) -> float:
        if self.c != "tuned":
            return float(self.c)
        if self.schedule in CLASSIFICATION_SCHEDULES:
            return 1.0
        if self._small_loss:
            return COR4_BETA2
        if spec.gradient_bound is None:
            raise ConfigError(comp, "c", "'tuned' needs the adversary's gradient bound G")
        lip = 0.5 * float(spec.gradient_bound) ** 2
        if self.schedule == "fixed":
            if spec.horizon is None:
                raise ConfigError(comp, "c", "'tuned' with a fixed c needs the horizon")
            return math.sqrt(spec.horizon * lip / self._U)
        return math.sqrt(lip / self._U)

    # -- the trade-off schedule ----------------------------------------------------------------

    def _x_seen(self, x: np.ndarray | None) -> np.ndarray:
        if x is None or not (self._classification or self._small_loss):
            return self._x_all
        return np.maximum(self._x_all, self._reg.dual_norm(np.asarray(x, dtype=np.float64)))

    def trade_off(self, x: np.ndarray | None = None) -> np.ndarray:
        """Return ``c_t`` (R,) of the coming round (``x``: its features, shown before predicting).

        The round is the ``(fed + 1)``-th for ``sqrt`` / ``lipschitz``; ``c_t = 0`` only while
        every feature vector seen is 0 (then ``θ = 0`` and the point is ``∇f*(0)``).
        """
        s = self.schedule
        if s == "fixed":
            return np.full(self._theta.shape[0], self._c0)
        if s == "sqrt":
            return self._c0 * np.sqrt(self._fed + 1.0)
        big_x = self._x_seen(x)
        if s == "lipschitz":
            return self._c0 * big_x * np.sqrt((self._fed + 1.0) / self._U)
        if s == "small_loss":
            return self._beta2(big_x) * np.sqrt(float(self.beta1) + self._cum_loss)
        return self._c0 * big_x * np.sqrt((self._mistakes + 1.0) / self._U)

    def _beta2(self, big_x: np.ndarray) -> np.ndarray:
        """``β₂`` of the small-loss schedule: ``c₀``, or ``8^{1/4}√(κ X²/U)`` when tuned."""
        if self.c != "tuned":
            return np.full(big_x.shape, self._c0)
        return self._c0 * np.sqrt(self._kappa / self._U) * big_x

    @staticmethod
    def _safe(c: np.ndarray) -> np.ndarray:
        return np.where(c > 0.0, c, 1.0)

    # -- play ----------------------------------------------------------------------------------

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        c = self._safe(self.trade_off(x))
        return self._reg.link(self._theta / c[:, None])

    def update(self, fb: Feedback) -> None:
        if self._own_hinge:
            self._update_classification(fb)
        else:
            self._update_oco(fb)

    def _update_oco(self, fb: Feedback) -> None:
        x = fb.data.x if self._small_loss else None
        c = self.trade_off(x)
        csafe = self._safe(c)  # c = 0 only under small_loss while every x seen is 0 (then λ = 0)
        grad = np.asarray(fb.grad, dtype=np.float64)
        w = np.asarray(fb.w, dtype=np.float64)
        value = np.asarray(fb.value, dtype=np.float64)
        self._theta -= grad
        self._neg_conj += value - np.einsum("rd,rd->r", grad, w)
        self._cert += np.where(c > 0.0, 0.5 * self._reg.dual_norm(grad) ** 2 / csafe, 0.0)
        self._fed += 1
        self._c_last = c
        if self._small_loss:
            self._x_all = self._x_seen(x)
            self._cum_loss += value
            self._max_loss = np.maximum(self._max_loss, value)
            if self._classification:
                self._mistakes += fb.data.y * np.asarray(fb.prediction) <= 0.0
        conj = np.where(c > 0.0, csafe * self._reg.conjugate(self._theta / csafe[:, None]), 0.0)
        self._dual = self._neg_conj - conj

    def _update_classification(self, fb: Feedback) -> None:
        x, y, pred = read_example(fb)
        c = self.trade_off(x)
        csafe = self._safe(c)
        v = y[:, None] * x  # the label folded into x
        margin = y * pred  # y_t⟨w_t, x_t⟩ with the committed w_t = ∇f*(θ/c_t)
        mistake = margin <= 0.0
        fed = mistake if self.mistake_driven else np.ones_like(mistake)
        if self.dual_update != "single":
            self._neg_conj += self._gamma * self._multi_update(v, csafe, fed)
        else:
            if self.rule == "conservative":
                alpha = np.where(fed & (margin <= self._gamma), 1.0, 0.0)
            else:
                alpha = np.where(fed, self._aggressive_alpha(v, csafe), 0.0)
            self._theta += alpha[:, None] * v
            self._neg_conj += self._gamma * alpha
        xn = self._reg.dual_norm(x)
        # the certificate's λ'_t = −y x on fed rounds with y⟨w_t, x_t⟩ ≤ γ (a subgradient there)
        used = fed & (margin <= self._gamma)
        self._cert += np.where(used & (c > 0.0), 0.5 * xn**2 / csafe, 0.0)
        self._c_last = np.where(fed, c, self._c_last)
        self._fed += fed
        self._mistakes += mistake
        self._x_all = np.maximum(self._x_all, xn)
        self._x_mist = np.maximum(self._x_mist, np.where(mistake, xn, 0.0))
        self._x_fed = np.maximum(self._x_fed, np.where(fed, xn, 0.0))
        cl = self._safe(self._c_last)
        conj = np.where(
            self._c_last > 0.0, cl * self._reg.conjugate(self._theta / cl[:, None]), 0.0
        )
        self._dual = self._neg_conj - conj

    def _multi_update(self, v: np.ndarray, c: np.ndarray, fed: np.ndarray) -> np.ndarray:
        """Add the fed examples to the dual variables that may move and ascend the dual over them
        (§5.2.2); update θ and return each replicate's ``Σ_i Δα_i`` (R,)."""
        gain = np.zeros(fed.shape[0])
        rows = np.flatnonzero(fed)
        if rows.size == 0:
            return gain
        counts = self._fed[rows] + 1  # this example is the counts-th fed one
        cap = self._hist_a.shape[1]
        if self._span is None and counts.max() > cap:  # ftrl: I_t = [t] grows
            n_rep, d = self._theta.shape
            grow = max(cap, int(counts.max()) - cap)  # doubling: O(1) amortized per round
            self._hist_v = np.concatenate([self._hist_v, np.zeros((n_rep, grow, d))], 1)
            self._hist_sq = np.concatenate([self._hist_sq, np.zeros((n_rep, grow))], 1)
            self._hist_a = np.concatenate([self._hist_a, np.zeros((n_rep, grow))], 1)
            cap += grow
        slot = (counts - 1) % cap
        self._hist_v[rows, slot] = v[rows]
        self._hist_sq[rows, slot] = np.einsum("rd,rd->r", v[rows], v[rows])
        self._hist_a[rows, slot] = 0.0
        exact = self.dual_update != "row_action"
        sweeps = MAX_SWEEPS if exact else int(self.passes)
        tol = DUAL_TOL if exact else -1.0  # row_action: exactly `passes` sweeps
        if self._euclid:
            gain[rows] = _euclid_sweeps(
                self._theta, self._hist_v, self._hist_sq, self._hist_a, rows, counts,
                c * self._gamma, sweeps, tol,
            )  # fmt: skip
        else:
            gain[rows] = self._generic_sweeps(rows, counts, c, sweeps, tol)
        return gain

    def _generic_sweeps(
        self, rows: np.ndarray, counts: np.ndarray, c: np.ndarray, sweeps: int, tol: float
    ) -> np.ndarray:
        """The sweeps of :meth:`_multi_update` for any regularizer: each mini-step maximizes the
        dual over one ``α_i`` (the aggressive rule's step from ``θ − α_i v_i``), newest first,
        with the stopping rule and shrinking of :func:`_euclid_sweeps`."""
        cap = self._hist_a.shape[1]
        m = np.minimum(counts, cap)
        gain = np.zeros(rows.size)
        active = np.ones(rows.size, dtype=bool)
        full = np.ones(rows.size, dtype=bool)
        for _ in range(sweeps):
            moved = np.zeros(rows.size)
            offsets = np.arange(int(m[active].max()))
            slots = (counts[:, None] - 1 - offsets) % cap
            at = self._hist_a[rows[:, None], slots]
            free = (at > 0.0) & (at < 1.0)  # the free α when the sweep starts
            visit = active[:, None] & (offsets < m[:, None]) & (full[:, None] | free)
            for o in np.flatnonzero(visit.any(axis=0)):
                sel = np.flatnonzero(visit[:, o])
                r, s = rows[sel], slots[sel, o]
                v, old = self._hist_v[r, s], self._hist_a[r, s]
                new = self._aggressive_alpha(v, c[r], self._theta[r] - old[:, None] * v)
                step = new - old
                self._theta[r] += step[:, None] * v
                self._hist_a[r, s] = new
                gain[sel] += step
                moved[sel] = np.maximum(moved[sel], np.abs(step))
            # one variable: its exact step is the maximum; shrinking as in `_euclid_sweeps`
            active &= (m > 1) & ~(full & (moved <= tol))
            if not active.any():
                break
            if tol >= 0.0:
                full = ~full & (moved <= tol)
        return gain

    def _aggressive_alpha(
        self, v: np.ndarray, c: np.ndarray, theta: np.ndarray | None = None
    ) -> np.ndarray:
        """Return ``argmax_{a∈[0,1]} γa − c f*((θ + a v)/c)`` row-wise (``v = y x``; θ defaults to
        the player's)."""
        gamma = self._gamma
        theta = self._theta if theta is None else theta
        if self._reg.name == "l2" and not self._reg.domain.bounded:
            sq = np.einsum("rd,rd->r", v, v)
            num = np.maximum(c * gamma - np.einsum("rd,rd->r", theta, v), 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(sq > 0.0, np.minimum(1.0, num / np.where(sq > 0, sq, 1.0)), 1.0)
        alpha = np.full(theta.shape[0], np.nan)
        if self._reg.name == "entropic" and 0.0 < gamma < 1.0:
            ternary = np.all((v == 1.0) | (v == -1.0) | (v == 0.0), axis=1)
            if ternary.any():
                alpha[ternary] = entropic_hinge_step(
                    softmax(theta[ternary] / c[ternary, None]), v[ternary], gamma, c[ternary]
                )
        rest = np.isnan(alpha)
        if rest.any():
            alpha[rest] = self._bisect(theta[rest], v[rest], c[rest])
        return alpha

    def _bisect(self, theta: np.ndarray, v: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Maximize the concave ``Q(a) = γa − c f*((θ + a v)/c)`` on [0, 1] (row-wise).

        ``Q'(a) = γ − ⟨∇f*((θ + a v)/c), v⟩`` is continuous and non-increasing: α = 0 if
        ``Q'(0) ≤ 0``, α = 1 if ``Q'(1) ≥ 0``, else its root, bracketed and found by the Illinois
        variant of regula falsi (superlinear) until the bracket is below 1e-15 or the slope is
        exactly 0 (at most :data:`LINE_SEARCH_STEPS` evaluations, then the bracket's midpoint).
        """

        def slope(a, rows):
            th, vv, cc = theta[rows], v[rows], c[rows]
            return self._gamma - np.einsum(
                "rd,rd->r", self._reg.link((th + a[:, None] * vv) / cc[:, None]), vv
            )

        n = theta.shape[0]
        every = np.arange(n)
        at0, at1 = slope(np.zeros(n), every), slope(np.ones(n), every)
        out = np.where(at0 <= 0.0, 0.0, 1.0)
        rows = np.flatnonzero((at0 > 0.0) & (at1 < 0.0))
        lo, hi = np.zeros(rows.size), np.ones(rows.size)
        flo, fhi = at0[rows], at1[rows]
        side = np.zeros(rows.size)
        for _ in range(LINE_SEARCH_STEPS):
            if rows.size == 0:
                break
            a = (lo * fhi - hi * flo) / (fhi - flo)
            a = np.where((a > lo) & (a < hi), a, 0.5 * (lo + hi))
            fa = slope(a, rows)
            up = fa > 0.0  # the root lies above a
            fhi = np.where(up & (side > 0), 0.5 * fhi, fhi)
            flo = np.where(~up & (side < 0), 0.5 * flo, flo)
            lo, flo = np.where(up, a, lo), np.where(up, fa, flo)
            hi, fhi = np.where(up, hi, a), np.where(up, fhi, fa)
            side = np.where(up, 1.0, -1.0)
            done = (fa == 0.0) | (hi - lo <= 1e-15)
            out[rows[done]] = np.where(fa[done] == 0.0, a[done], 0.5 * (lo[done] + hi[done]))
            keep = ~done
            rows, lo, hi, flo, fhi, side = (z[keep] for z in (rows, lo, hi, flo, fhi, side))
        out[rows] = 0.5 * (lo + hi)
        return out

    # -- certificates and bounds ---------------------------------------------------------------

    @property
    def mistakes(self) -> np.ndarray:
        """Number of classification mistakes so far (R,)."""
        return self._mistakes.copy()

    @property
    def fed_rounds(self) -> np.ndarray:
        """Number of rounds fed to the dual so far (R,)."""
        return self._fed.copy()

    @property
    def theta(self) -> np.ndarray:
        """The unscaled dual sum ``θ = −Σ λ_i`` (R, d) (classification: ``Σ α_i y_i x_i``)."""
        return self._theta.copy()

    def dual_value(self) -> np.ndarray:
        """Return the dual ``D_t`` after the last update, with the last fed round's ``c`` (R,)."""
        return self._dual.copy()

    def regret_certificate(self, fu) -> np.ndarray:
        """Return ``c_T f(u) + ½ Σ_t ‖λ'_t‖_*²/c_t`` (Lemma 2), the bound on the regret to any u
        with ``f(u) ≤ fu`` over the fed rounds (R,)."""
        return self._c_last * np.asarray(fu, dtype=np.float64) + self._cert

    def regularizer_value(self, u: np.ndarray) -> np.ndarray:
        """Return ``f(u)`` for comparators u (..., d) (``inf`` outside S is not checked)."""
        return self._reg.value(u)

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare the regret certificate at ``f(u) = max_K f`` when it bounds the arena regret."""
        if not self._declares:
            return {}
        return {("regret", math.nan): self.regret_certificate(self._max_f)}

    def small_loss_bound(self, fu, comparator_loss) -> np.ndarray:
        """Return Theorem 2's bound on the regret ``R(u, T)`` to one comparator u (R,).

        ``R(u, T) ≤ K (H + β₁)^{1/2} + K²``, ``K = β₂ f(u) + L G/β₂``, ``G = 2√(1 + max_t
        g_t(w_t)/β₁)``, ``H = Σ_t g_t(u)``, ``L = κ X_T²`` (every ``g_t`` is L-self-bounded,
        :data:`SELF_BOUNDED`) and ``β₂ = c₀``, or ``8^{1/4}√(L/U)`` when tuned (then ``β₂``
        grew with ``X_t``: Lemma 2 and Lemma 3 give the same bound with the final ``β₂``, since
        ``c_t`` is non-decreasing and ``L_t/β₂,t = √(L_t U)/8^{1/4}`` is too) [derived for
        the tuned case].

        Parameters
        ----------
        fu : float or ndarray (R,)
            ``f(u)`` of the comparator (u in the regularizer's set S).
        comparator_loss : float or ndarray (R,)
            ``H = Σ_t g_t(u)`` over the rounds played (the arena's loss of u).
        """
        big_l, beta2, big_g = self._small_loss_constants()
        k = beta2 * np.asarray(fu, dtype=np.float64) + big_l * big_g / beta2
        h = np.asarray(comparator_loss, dtype=np.float64)
        return k * np.sqrt(h + float(self.beta1)) + k * k

    def corollary4_bound(self, fu, comparator_loss) -> np.ndarray:
        """Return Corollary 4's ``3.4√(LU)(H + β₁)^{1/2} + 11.4 LU`` where it applies, else inf.

        It applies with ``c = "tuned"`` (``β₂ = 8^{1/4}√(L/U)``), ``f(u) ≤ U`` and
        ``max_t g_t(w_t) ≤ β₁`` (``G ≤ 2√2``; the thesis asks ``β₁ ≥ max_{w∈S} g_t(w)`` to
        guarantee it in advance). The printed 3.4 and 11.4 round up ``2^{1.75} ≈ 3.364`` and
        ``2^{3.5} ≈ 11.31``.
        """
        big_l, _, _ = self._small_loss_constants()
        h = np.asarray(comparator_loss, dtype=np.float64)
        if self.c != "tuned":
            return np.full(np.broadcast(big_l, h).shape, np.inf)
        lu = big_l * self._U
        value = 3.4 * np.sqrt(lu) * np.sqrt(h + float(self.beta1)) + 11.4 * lu
        applies = (np.asarray(fu, dtype=np.float64) <= self._U * (1 + 1e-12)) & (
            self._max_loss <= float(self.beta1)
        )
        return np.where(applies, value, np.inf)

    def _small_loss_constants(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(L, β₂, G)`` of Theorem 2 after the rounds played (R,) each."""
        if not self._small_loss:
            raise ValueError(f"{self.label()}: small-loss bounds need schedule='small_loss'")
        big_l = self._kappa * self._x_all**2
        beta2 = self._beta2(self._x_all)
        big_g = 2.0 * np.sqrt(1.0 + self._max_loss / float(self.beta1))
        return big_l, self._safe(beta2), big_g

    def mistake_bound(self, fu, hinge) -> np.ndarray:
        """Return a bound on ``|M|`` for one comparator u (R,) (classification).

        Parameters
        ----------
        fu : float or ndarray (R,)
            ``f(u)`` of the comparator (``u`` in the regularizer's set S).
        hinge : float or ndarray (R,)
            ``H = Σ_t [γ − y_t⟨u, x_t⟩]₊`` over the fed rounds (the mistake rounds when
            ``mistake_driven``, else every round).

        Notes
        -----
        * ``mistakes`` schedule, aggressive rule or mistake-driven (Cor 6 / Thm 6, generalized
          to ``c₀``): ``|M| ≤ H/γ + b² + b√(H/γ)``, ``b = (c₀ + 1/c₀) X √U / γ``, X over every round
          seen; ``inf`` if ``f(u) > U``.
        * conservative, mistake-driven, ``fixed``, homogeneous f (L2 on ℝ^d, p-norm): c does not
          change predictions, so (5.2) holds for every c and its minimum gives Cor 5 / Cor 7:
          ``b = X √(2 f(u)) / γ`` with X over the mistake rounds.
        * conservative, mistake-driven, ``fixed``, otherwise ((5.2), (5.7)):
          ``|M| ≤ (c f(u) + H)/(γ − X²/(2c))`` when ``γ > X²/(2c)``.
        * otherwise ``|M| ≤ (H + c_T f(u) + ½Σ‖λ'‖²/c_t)/γ`` (``g_t(w_t) ≥ γ`` on mistakes).
        * ``small_loss`` (the arena's loss; ``hinge`` is then ``H = Σ_t g_t(u)`` in that loss):
          ``|M| ≤ (H + Theorem 2)/ℓ_min``, ``ℓ_min`` the loss at a zero margin, its least value
          on a mistake (``ln 2`` logistic, ``½`` squared): the device of Eq. (2.1), §2.3.
        """
        if self._small_loss:
            floor = math.log(2.0) if self._loss == "logistic" else 0.5
            h = np.asarray(hinge, dtype=np.float64)
            return (h + self.small_loss_bound(fu, h)) / floor
        fu = np.asarray(fu, dtype=np.float64)
        h = np.asarray(hinge, dtype=np.float64)
        g = self._gamma
        conservative_md = self.rule == "conservative" and self.mistake_driven
        if self.schedule == "mistakes" and (self.rule == "aggressive" or self.mistake_driven):
            b = (self._c0 + 1.0 / self._c0) * self._x_all * math.sqrt(self._U) / g
            return np.where(fu <= self._U * (1 + 1e-12), lemma19(b, h / g), np.inf)
        if conservative_md and self.schedule == "fixed":
            if self._homogeneous:
                return lemma19(self._x_mist * np.sqrt(2.0 * fu) / g, h / g)
            denom = g - self._x_mist**2 / (2.0 * self._c0)
            with np.errstate(divide="ignore"):
                return np.where(denom > 0.0, (self._c0 * fu + h) / denom, np.inf)
        return (h + self.regret_certificate(fu)) / g

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"regularizer": "l2", "schedule": "sqrt", "c": 0.5}
        yield {"regularizer": "entropic", "rule": "conservative", "schedule": "fixed", "c": 2.0}
        yield {"regularizer": "pnorm", "p": 3.0, "c": 1.5}
        yield {"schedule": "small_loss", "c": "tuned", "U": 2.0, "beta1": 2.0}
        yield {"rule": "aggressive", "dual_update": "row_action"}


@njit(cache=True, nogil=True)
def _euclid_sweeps(theta, hist_v, hist_sq, hist_a, rows, counts, c_gamma, sweeps, tol):
    """The sweeps of ``PrimalDual._multi_update`` for ``½‖w‖²`` on ℝ^d (in place on θ and α).

    Row r's mini-step on slot s is ``α ← clip(α + (c_r γ − ⟨θ_r, v_s⟩)/‖v_s‖², 0, 1)`` (1 when
    ``v_s = 0``), over the last ``min(counts, cap)`` slots newest first. ``tol < 0``: ``sweeps``
    full sweeps (row action). Else sweeps until a full sweep moves no α by more than ``tol`` (at
    most ``sweeps``), with shrinking: after a full sweep that moved some α, the next sweeps visit
    only the free ones (``0 < α < 1``) until they move by at most ``tol``. Returns ``Σ Δα`` per row
    of ``rows``.
    """
    cap = hist_a.shape[1]
    d = theta.shape[1]
    gain = np.zeros(rows.size)
    for k in range(rows.size):
        r = rows[k]
        n = counts[k]
        m = min(n, cap)
        full = True
        for _ in range(sweeps):
            moved = 0.0
            for o in range(m):
                s = (n - 1 - o) % cap
                if not full and (hist_a[r, s] == 0.0 or hist_a[r, s] == 1.0):
                    continue
                dot = 0.0
                for j in range(d):
                    dot += theta[r, j] * hist_v[r, s, j]
                old = hist_a[r, s]
                sq = hist_sq[r, s]
                new = min(1.0, max(old + (c_gamma[r] - dot) / sq, 0.0)) if sq > 0.0 else 1.0
                step = new - old
                if step != 0.0:
                    for j in range(d):
                        theta[r, j] += step * hist_v[r, s, j]
                    hist_a[r, s] = new
                    gain[k] += step
                    moved = max(moved, abs(step))
            if m == 1 or (full and moved <= tol):
                break
            if tol >= 0.0:
                # shrinking: sweep the free α (0 < α < 1) until they settle, then all again
                full = (not full) and moved <= tol
    return gain


def entropic_hinge_step(w: np.ndarray, v: np.ndarray, gamma: float, c: np.ndarray) -> np.ndarray:
    """Return the aggressive entropic step ``α ∈ [0, 1]`` for ``v = y x ∈ {−1, 0, 1}^n`` (row-wise).

    Maximizer of ``γa − c log Σ_j w_j e^{a v_j/c}`` with ``w`` on the simplex, ``0 < γ < 1``
    (Shalev-Shwartz 2007, Eqs. (7.12)–(7.16), **corrected**): with ``W⁺, W⁻, W⁰`` the weight on
    ``v_j = +1, −1, 0``, ``β = [γW⁰ + √(γ²W⁰² + 4(1−γ²)W⁺W⁻)]/(2(1−γ)W⁺)`` and
    ``α = clip(c ln β, 0, 1)`` (``α = 1`` if ``W⁺ = 0``). The printed form has a sign slip in
    the exponent (which swaps ``W⁺`` and ``W⁻``: ``W⁻`` lands in the denominator) and clips only
    at 1; it errs by up to 8 in α.

    Examples
    --------
    >>> w = np.array([[0.25, 0.25, 0.5]]); v = np.array([[1.0, -1.0, 0.0]])
    >>> a = entropic_hinge_step(w, v, 0.5, np.array([0.5]))  # β = 3: α = 0.5 ln 3
    >>> b = np.exp(a[0] / 0.5)
    >>> round(float(a[0]), 6), round(float((0.25 * b - 0.25 / b) / (0.25 * b + 0.25 / b + 0.5)), 12)
    (0.549306, 0.5)
    """
    wp = np.where(v == 1.0, w, 0.0).sum(axis=1)
    wm = np.where(v == -1.0, w, 0.0).sum(axis=1)
    w0 = np.where(v == 0.0, w, 0.0).sum(axis=1)
    root = gamma * w0 + np.sqrt((gamma * w0) ** 2 + 4.0 * (1.0 - gamma**2) * wp * wm)
    with np.errstate(divide="ignore"):
        log_beta = np.log(root) - np.log(2.0 * (1.0 - gamma) * np.where(wp > 0.0, wp, 1.0))
    return np.where(wp > 0.0, np.clip(c * log_beta, 0.0, 1.0), 1.0)
