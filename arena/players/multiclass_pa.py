"""Multiclass Passive-Aggressive PA, PA-I and PA-II (Crammer et al. 2006, §7 and §8)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.oco.components import MULTICLASS, OCOPlayer, feature_dim
from arena.oco.losses import MULTICLASS_LOSSES, Feedback, multiclass_margin
from arena.params import POSITIVE, OneOf
from arena.players.passive_aggressive import pa1_mistake_bound, pa2_squared_loss_bound, pa_step
from arena.spec import GameSpec, PlayerTags

VARIANTS = ("pa", "pa1", "pa2")
RULES = ("max_loss", "prediction")


class MulticlassPA(OCOPlayer):
    """Multiclass PA: ``w_{y} += τ_t x_t``, ``w_{s} −= τ_t x_t`` for the top wrong label s.

    With the margin ``m_t = ⟨w_y − w_s, x_t⟩`` against the highest-scoring wrong label s (the
    first on ties), the loss is ``ℓ_t = [1 − m_t]₊`` (the multiclass hinge) and the update moves
    along ``z_t = φ(x_t, y_t) − φ(x_t, s) = (e_y − e_s) ⊗ x_t``, ``‖z_t‖² = 2‖x_t‖²`` (the
    multi-prototype form of Crammer et al. 2006, §7), with the step
    ``τ_t = ℓ_t/‖z_t‖²`` (PA), ``min{C, ℓ_t/‖z_t‖²}`` (PA-I) or ``ℓ_t/(‖z_t‖² + 1/(2C))`` (PA-II);
    ``τ_t = 0`` when ``x_t = 0``. ``w_{t+1}`` is the closest point to ``w_t`` on which the
    constraint of label s holds with margin 1 (PA), or the prox step with a linear (PA-I) or
    quadratic (PA-II) slack penalty.

    ``rule`` picks the rounds that update (Crammer et al. 2006, §8, with the 0-1 cost):

    * ``"max_loss"``: every round with ``ℓ_t > 0`` (the single-label multiclass PA of §7; §8's
      max-loss update for the cost ``ρ(y, r) = [r ≠ y]``);
    * ``"prediction"``: only the mistake rounds (``m_t ≤ 0``, so s is the prediction ŷ_t), with
      ``ℓ_t = 1 − m_t = ⟨w_ŷ − w_y, x_t⟩ + √ρ(y, ŷ)``: §8's prediction-based update.

    Parameters
    ----------
    variant : {"pa", "pa1", "pa2"}
        PA (hard margin), PA-I or PA-II.
    C : float
        Aggressiveness C > 0 of PA-I / PA-II (ignored by PA).
    rule : {"max_loss", "prediction"}
        Update on every round with positive loss, or on the mistake rounds only.

    Notes
    -----
    Guarantees, derived from Crammer et al. 2006, Lemma 1 with ``x_t`` replaced by the update
    direction ``z_t`` (as §7 does): ``Σ_t τ_t(2ℓ_t − τ_t‖z_t‖² − 2ℓ*_t) ≤ ‖U‖²`` over the update
    rounds, for every ``U ∈ ℝ^{k×d}``, where ``ℓ*_t = [1 − ⟨U, z_t⟩]₊`` is at most U's multiclass
    hinge ``max_{r≠y_t}[1 − ⟨u_{y_t} − u_r, x_t⟩]₊``. With ``X = √2·max_t ‖x_t‖ ≥ ‖z_t‖`` and the
    sums of U's multiclass hinge (squared) over all rounds:

    * PA (Thm 2): if U's hinge is 0 on every round, ``Σ ℓ_t² ≤ X²‖U‖²``;
    * PA-I (Thm 4): ``|M| ≤ max{X², 1/C}(‖U‖² + 2C Σ ℓ*_t)``;
    * PA-II (Thm 5): ``Σ ℓ_t² ≤ (X² + 1/(2C))(‖U‖² + 2C Σ ℓ*_t²)``.

    A mistake has ``ℓ_t ≥ 1``, so ``|M| ≤ Σ ℓ_t²`` turns the PA / PA-II bounds into mistake bounds
    (:meth:`mistake_bound`, :meth:`squared_loss_bound`); on data that a unit ``U`` separates with
    margin γ and ``‖x_t‖ ≤ R`` the PA bound is ``|M| ≤ 2R²/γ²``. They depend on U: nothing is
    declared by :meth:`bounds`.

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("multiclass", 6, 1, dim=6, domain=Domain(), loss="multiclass_hinge",
    ...                 n_classes=3)
    >>> p = MulticlassPA("pa")
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> rd = RoundData(x=np.array([[1.0, 1.0]]), y=np.array([2.0]))  # ℓ = 1, ‖z‖² = 4: τ = 1/4
    >>> p.update(feedback("multiclass_hinge", 0.0, p.predict(rd.x), rd))
    >>> p.predict().tolist()                                          # rows w_0, w_1, w_2
    [[-0.25, -0.25, 0.0, 0.0, 0.25, 0.25]]

    References
    ----------
    Crammer, Dekel, Keshet, Shalev-Shwartz & Singer (2006), "Online Passive-Aggressive
    Algorithms", JMLR 7: §7 (multiclass, multi-prototype), §8 (prediction-based and max-loss
    updates), Lemma 1, Thms 2, 4 and 5. Shalev-Shwartz 2007, §5.3.2 (the multiclass hinge).
    """

    tags = PlayerTags(
        protocols=frozenset({MULTICLASS}),
        randomized=False,
        domains=frozenset({"unconstrained"}),
        losses=frozenset(MULTICLASS_LOSSES),
    )
    parameter_constraints: ClassVar = {
        "variant": [OneOf(*VARIANTS)],
        "C": [POSITIVE],
        "rule": [OneOf(*RULES)],
    }

    def __init__(self, variant: str = "pa1", C: float = 1.0, rule: str = "max_loss"):
        self.variant = variant
        self.C = C
        self.rule = rule

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._C = float(self.C)
        self._k = int(spec.n_classes)
        self._d = feature_dim(spec)
        n_rep = spec.n_replicates
        self._w = np.zeros((n_rep, self._k, self._d))
        self._mistakes = np.zeros(n_rep, dtype=np.int64)
        self._sq_loss = np.zeros(n_rep)
        self._x_max = np.zeros(n_rep)

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._w.reshape(self._w.shape[0], -1).copy()

    def step(self, loss: np.ndarray, sq_norm: np.ndarray) -> np.ndarray:
        """Return ``τ`` for losses ``ℓ`` and squared norms ``‖z‖²`` (elementwise; 0 at z = 0)."""
        return pa_step(self.variant, self._C, loss, sq_norm)

    def update(self, fb: Feedback) -> None:
        x = np.asarray(fb.data.x, dtype=np.float64)
        margin, runner, labels = multiclass_margin(fb.w, x, fb.data.y)
        mistake = margin <= 0.0
        loss = np.maximum(1.0 - margin, 0.0)
        if self.rule == "prediction":
            loss = np.where(mistake, loss, 0.0)
        sq = 2.0 * np.einsum("rd,rd->r", x, x)
        tau = self.step(loss, sq)
        rows = (np.arange(self._k) == labels[:, None]) * 1.0
        rows -= np.arange(self._k) == runner[:, None]
        self._w += (tau[:, None] * rows)[:, :, None] * x[:, None, :]
        self._mistakes += mistake
        self._sq_loss += loss * loss
        self._x_max = np.maximum(self._x_max, np.sqrt(0.5 * sq))

    @property
    def mistakes(self) -> np.ndarray:
        """Number of mistakes so far (R,) (a tie for the top score counts)."""
        return self._mistakes.copy()

    @property
    def squared_loss(self) -> np.ndarray:
        """``Σ_t ℓ_t²`` of the losses the updates used so far (R,)."""
        return self._sq_loss.copy()

    @property
    def radius(self) -> np.ndarray:
        """``X = √2 · max_t ‖x_t‖₂`` over the rounds so far (R,), a bound on every ``‖z_t‖``."""
        return np.sqrt(2.0) * self._x_max

    def squared_loss_bound(self, u_norm, hinge_sq) -> np.ndarray:
        """Return the bound on ``Σ ℓ_t²`` of PA (Thm 2) or PA-II (Thm 5), (R,).

        ``u_norm`` is ``‖U‖_F``, ``hinge_sq`` the sum over all rounds of U's squared multiclass
        hinge. PA: ``X²‖U‖²`` where ``hinge_sq == 0``, else ``inf``; PA-I has none (``inf``).
        """
        u = np.asarray(u_norm, dtype=np.float64)
        h2 = np.asarray(hinge_sq, dtype=np.float64)
        x2 = self.radius**2
        if self.variant == "pa2":
            return pa2_squared_loss_bound(x2, self._C, u, h2)
        if self.variant == "pa1":
            return np.full(np.broadcast(u, x2).shape, np.inf)
        return np.where(h2 == 0.0, u * u * x2, np.inf)

    def mistake_bound(self, u_norm, hinge, hinge_sq) -> np.ndarray:
        """Return a bound on ``|M|`` (R,): PA-I's Thm 4, else :meth:`squared_loss_bound`.

        ``hinge`` and ``hinge_sq`` are the sums over all rounds of U's multiclass hinge and of
        its square.
        """
        if self.variant == "pa1":
            return pa1_mistake_bound(self.radius**2, self._C, u_norm, hinge)
        return self.squared_loss_bound(u_norm, hinge_sq)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"variant": "pa"}
        yield {"variant": "pa2", "C": 0.5, "rule": "prediction"}
