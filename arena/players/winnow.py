"""Winnow: the entropic quasi-additive classifiers of Shalev-Shwartz 2007 (fixed c, self-tuned)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.errors import ConfigError
from arena.oco.components import OCOPlayer, game_dim
from arena.oco.losses import EXAMPLE_LOSSES, Feedback
from arena.params import POSITIVE, Boolean, OneOf
from arena.players._quasi_additive import (
    check_domain_contains_l1_ball,
    lemma19,
    read_example,
    softmax,
)
from arena.spec import GameSpec, PlayerTags

VARIANTS = ("balanced", "self_tuned")


class Winnow(OCOPlayer):
    """Winnow: multiplicative weights on the mistake rounds, ``w_t ∝ exp(θ_t / c_t)``.

    * ``variant="balanced"`` ("Balanced-Winnow" of Shalev-Shwartz 2007, §5.1.2): Figure 5.1
      with the link
      ``exp``: ``θ_1 = 0``; on a mistake ``θ += (1/c) y_t x_t``, i.e.
      ``w_{t+1,i} = w_{t,i} β^{y_t x_{t,i}}`` with ``β = e^{1/c}`` (5.5). Predictions depend on c.
    * ``variant="self_tuned"`` (§5.1.3, Figure 5.2): ``θ += y_t x_t`` on a mistake and
      ``c_t = X_t √((M_t + 1)/ln n)`` with ``X_t = max_{i≤t} ‖x_i‖_∞`` (over every round seen, the
      current one included: ``x_t`` is shown before predicting) and ``M_t`` the mistakes before t.

    The played point is the normalized ``w_t = softmax(θ_t/c_t)`` on the simplex, the link
    ``∇f*`` of the relative entropy (5.6): it has the signs of ``⟨exp(θ/c), x⟩`` (§5.1.2), so it
    makes the same predictions as the exp link, without overflow.

    Parameters
    ----------
    variant : {"balanced", "self_tuned"}
        Fixed trade-off ``c`` or the self-tuned schedule of Fig 5.2.
    c : float
        The fixed trade-off (> 0) of ``"balanced"``; ignored by ``"self_tuned"``.
    signed : bool
        False (default, what Shalev-Shwartz 2007, §5.1.2, analyzes): n = d positive weights on
        the simplex; comparators ``u`` in the simplex (thresholds via a constant −1 feature, as
        the r-of-k construction of §5.1.2 does). True: the classical "balanced" duplication — run on
        ``x' = (x, −x)`` with n = 2d weights ``(w⁺, w⁻)`` and play ``w = w⁺ − w⁻`` (a d-vector in
        the ℓ1 unit ball); comparators: ``‖u‖₁ ≤ 1``.

    Notes
    -----
    Guarantees, for every ``γ > 0`` and every comparator ``u`` (simplex, or ``‖u‖₁ ≤ 1`` when
    signed), with ``H = Σ_{t∈M}[γ − y_t⟨u, x_t⟩]₊`` and n the number of weights:

    * balanced, Eq. (5.7): ``γ|M| ≤ c ln n + X²|M|/(2c) + H`` with ``X = max_{t∈M}‖x_t‖_∞``,
      i.e. ``|M| ≤ (c ln n + H)/(γ − X²/(2c))`` when ``γ > X²/(2c)``;
    * self-tuned, Corollary 6: ``|M| ≤ H/γ + (2X/γ^{3/2})√(H ln n) + 4X² ln n/γ²``. We take
      ``X = max_t ‖x_t‖_∞`` over all rounds up to the last mistake: ``c_t`` grows with every round's
      ``X_t`` (Fig 5.2), and Lemma 2's proof (``c_T f(u) ≤ X_T √(|M| ln n)``) needs that X; the
      printed ``max_{t∈M}`` is only valid when the largest ``‖x_t‖_∞`` falls on a mistake round.

    On noise-free r-of-k targets (``γ = ½/(r + k − ½)``, §5.1.2) the self-tuned bound is
    ``16 (r + k − ½)² ln n``. These depend on u and γ: exposed as :meth:`mistake_bound`, not
    declared by :meth:`bounds`.

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("classification", 2, 1, dim=2, domain=Domain("simplex"), loss="hinge")
    >>> p = Winnow(c=1.0)
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> rd = RoundData(x=np.array([[1.0, -1.0]]), y=np.array([-1.0]))  # ⟨(½, ½), x⟩ = 0: mistake
    >>> p.update(feedback("hinge", 0.0, p.predict(rd.x), rd))
    >>> p.predict().round(4).tolist()  # ∝ (e^{−1}, e^{1})
    [[0.1192, 0.8808]]

    References
    ----------
    Littlestone (1988); Grove, Littlestone & Schuurmans (2001). Shalev-Shwartz 2007, Figure 5.1
    (§5.1), §5.1.2, Figure 5.2 and Corollary 6 (§5.1.3).
    """

    tags = PlayerTags(
        protocols=frozenset({"classification"}),
        randomized=False,
        domains=frozenset({"unconstrained", "simplex", "ball", "box"}),
        losses=frozenset(EXAMPLE_LOSSES),
    )
    parameter_constraints: ClassVar = {
        "variant": [OneOf(*VARIANTS)],
        "c": [POSITIVE],
        "signed": [Boolean()],
    }

    def __init__(self, variant: str = "balanced", c: float = 1.0, signed: bool = False):
        self.variant = variant
        self.c = c
        self.signed = signed

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._c = float(self.c)
        d = game_dim(spec)
        check_domain_contains_l1_ball(spec, self.label(), simplex_ok=not self.signed)
        n = 2 * d if self.signed else d
        if self.variant == "self_tuned" and n < 2:
            raise ConfigError(
                self.label(), "dim", "self_tuned needs n >= 2 weights (c_t divides by ln n)"
            )
        self._d, self._n = d, n
        self._log_n = math.log(n)
        self._theta = np.zeros((spec.n_replicates, n))  # Σ_{i∈M} y_i x_i (unscaled)
        self._mistakes = np.zeros(spec.n_replicates, dtype=np.int64)
        self._x_all = np.zeros(spec.n_replicates)  # X_t = max ‖x_i‖_∞ over every round seen
        self._x_mist = np.zeros(spec.n_replicates)  # max ‖x_t‖_∞ over the mistake rounds

    def _expand(self, x: np.ndarray) -> np.ndarray:
        return np.concatenate([x, -x], axis=1) if self.signed else x

    def trade_off(self, x: np.ndarray | None = None) -> np.ndarray:
        """Return ``c_t`` (R,) for the round whose features are ``x`` (None: ``X_{t−1}`` only)."""
        if self.variant == "balanced":
            return np.full(self._theta.shape[0], self._c)
        big_x = self._x_all
        if x is not None:
            big_x = np.maximum(big_x, np.abs(np.asarray(x, dtype=np.float64)).max(axis=1))
        return big_x * np.sqrt((self._mistakes + 1.0) / self._log_n)

    def weights(self, x: np.ndarray | None = None) -> np.ndarray:
        """Return the n normalized weights ``softmax(θ_t/c_t)`` (R, n) (``(w⁺, w⁻)`` if signed)."""
        c = self.trade_off(x)
        # c_t = 0 only while every x seen is 0, and then θ = 0: the uniform point.
        return softmax(self._theta / np.where(c > 0.0, c, 1.0)[:, None])

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        w = self.weights(x)
        return w[:, : self._d] - w[:, self._d :] if self.signed else w

    def update(self, fb: Feedback) -> None:
        x, y, pred = read_example(fb)
        err = y * pred <= 0.0
        x_inf = np.abs(x).max(axis=1)
        self._theta += np.where(err, y, 0.0)[:, None] * self._expand(x)
        self._mistakes += err
        self._x_all = np.maximum(self._x_all, x_inf)
        self._x_mist = np.maximum(self._x_mist, np.where(err, x_inf, 0.0))

    @property
    def mistakes(self) -> np.ndarray:
        """Number of mistakes ``|M|`` so far (R,)."""
        return self._mistakes.copy()

    def mistake_bound(self, hinge, gamma) -> np.ndarray:
        """Return the bound on ``|M|`` of the Notes ((5.7) or Cor 6) for one comparator, (R,).

        Parameters
        ----------
        hinge : float or ndarray (R,)
            ``H = Σ_{t∈M}[γ − y_t⟨u, x_t⟩]₊`` of a comparator u in the simplex (``‖u‖₁ ≤ 1`` if
            signed) over the mistake rounds.
        gamma : float or ndarray (R,)
            The margin γ > 0 of the hinge.
        """
        h = np.asarray(hinge, dtype=np.float64)
        gamma = np.asarray(gamma, dtype=np.float64)
        if self.variant == "balanced":
            denom = gamma - self._x_mist**2 / (2.0 * self._c)
            with np.errstate(divide="ignore"):
                return np.where(denom > 0.0, (self._c * self._log_n + h) / denom, np.inf)
        b = 2.0 * self._x_all * math.sqrt(self._log_n) / gamma
        return lemma19(b, h / gamma)

    def comparator_mistake_bound(self, u, hinge) -> np.ndarray:
        """Return the Notes' bound on ``|M|`` at the comparator ``u`` (R, d), per replicate (R,).

        ``u`` has margin 1 where the data is clean (the convention of the classification
        streams' comparators) and ``hinge`` is ``Σ_{t∈M}[1 − y_t⟨u, x_t⟩]₊`` (R,). Winnow's bounds
        need a comparator in the simplex (``‖·‖₁ ≤ 1`` if signed): ``u/‖u‖₁`` with margin
        ``γ = 1/‖u‖₁`` and hinge ``Σ_{t∈M}[γ − y_t⟨u/‖u‖₁, x_t⟩]₊ = γ·hinge``. ``inf`` (no bound
        from this comparator) where ``u`` has a negative entry and the player is not signed.
        """
        u = np.asarray(u, dtype=np.float64)
        l1 = np.abs(u).sum(axis=-1)
        gamma = 1.0 / np.where(l1 > 0.0, l1, 1.0)
        bound = self.mistake_bound(gamma * np.asarray(hinge, dtype=np.float64), gamma)
        outside = (l1 <= 0.0) | ((u < 0.0).any(axis=-1) & (not self.signed))
        return np.where(outside, np.inf, bound)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"variant": "self_tuned"}
        yield {"variant": "balanced", "c": 0.5, "signed": True}
