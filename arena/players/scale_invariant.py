"""Scale-invariant unconstrained online learning (Kotłowski 2017): SI-COORD, SI-FULL."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.errors import ConfigError
from arena.oco.components import OCOPlayer
from arena.oco.losses import Feedback
from arena.params import POSITIVE, OneOf
from arena.spec import GameSpec, PlayerTags

VARIANTS = ("coordinate", "full")

RANK_TOL = 1e-10
"""``x_t`` adds a new direction to ``range(A_{t−1})`` when ``‖x⊥‖² > RANK_TOL·‖x‖²``, with
``x⊥ = (I − P_{t−1}) x``: a relative threshold (our choice). Rounding leaves
``‖x⊥‖²/‖x‖²`` near 1e-30 for a vector in the range and it is O(1) for a new direction of data
whose conditioning is moderate; in between, the branch is scale dependent (so is the invariance)."""


def pinv_rank1_update(a_pinv, proj, x, tol: float = RANK_TOL):
    """Return ``((A + x xᵀ)^†, P_new, new, q)`` from ``A^†``, the projector ``P = A A^†`` and ``x``.

    Batched over a leading replicate axis: ``a_pinv``, ``proj`` (R, d, d), ``x`` (R, d). With
    ``k = A^† x``, ``x⊥ = x − P x`` and ``β = 1 + xᵀk`` (Kotłowski 2017, Appendix E, after
    Campbell & Meyer 2009 and Chen & Ji 2011):

    * new direction (``‖x⊥‖² > tol·‖x‖²``): ``A^† − (k x⊥ᵀ + x⊥ kᵀ)/‖x⊥‖² + β x⊥x⊥ᵀ/‖x⊥‖⁴``,
      ``P + x⊥x⊥ᵀ/‖x⊥‖²``;
    * otherwise (Sherman–Morrison on the range): ``A^† − k kᵀ/β``, ``P`` unchanged.

    ``new`` (R,) flags the first branch and ``q = xᵀ(A + x xᵀ)^† x`` is returned in closed form:
    exactly 1 for a new direction and ``xᵀk/β ∈ [0, 1)`` otherwise (the quadratic form evaluated
    with the updated matrix equals these up to cancellation of ``β − xᵀk``, which loses digits
    when ``xᵀk`` is large).

    Examples
    --------
    >>> a, p, new, q = pinv_rank1_update(np.zeros((1, 2, 2)), np.zeros((1, 2, 2)),
    ...                                  np.array([[2.0, 0.0]]))
    >>> a[0].tolist(), p[0].tolist(), new.tolist(), q.tolist()
    ([[0.25, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 0.0]], [True], [1.0])
    """
    k = np.einsum("rij,rj->ri", a_pinv, x)
    x_perp = x - np.einsum("rij,rj->ri", proj, x)
    nx2 = np.einsum("ri,ri->r", x, x)
    np2 = np.einsum("ri,ri->r", x_perp, x_perp)
    beta = 1.0 + np.einsum("ri,ri->r", x, k)
    new = np2 > tol * nx2
    s = np.where(new, np2, 1.0)[:, None, None]
    outer_perp = x_perp[:, :, None] * x_perp[:, None, :]
    cross = k[:, :, None] * x_perp[:, None, :]
    a_new = (
        a_pinv - (cross + cross.transpose(0, 2, 1)) / s + beta[:, None, None] * outer_perp / s**2
    )
    p_new = proj + outer_perp / s
    a_old = a_pinv - k[:, :, None] * k[:, None, :] / beta[:, None, None]
    sel = new[:, None, None]
    q = np.where(new, 1.0, (beta - 1.0) / beta)
    return np.where(sel, a_new, a_old), np.where(sel, p_new, proj), new, q


def coordinate_weights(cum, s2, v, x, alpha):
    """Return SI-COORD's ``w_t`` (R, d) from ``G_{t−1}``, ``S²_{t−1}``, ``v_{t−1}`` and ``x_t``.

    ``S̃² = S² + x²``; ``w_i = exp((G_i²/S̃²_i − v_i)/(2α)) · G_i/(α S̃²_i)``, and ``w_i = 0`` where
    ``S̃²_i = 0`` (a never-seen feature).
    """
    s2t = s2 + x * x
    seen = s2t > 0
    safe = np.where(seen, s2t, 1.0)
    expo = (cum * cum / safe - v) / (2.0 * alpha)
    return np.where(seen, np.exp(expo) * cum / (alpha * safe), 0.0)


def coordinate_potential(cum, s2, v, alpha):
    """Return ``ψ_i = exp((G_i²/S²_i − v_i)/(2α))`` (1 while ``S²_i = 0``), elementwise."""
    seen = s2 > 0
    safe = np.where(seen, s2, 1.0)
    return np.where(seen, np.exp((cum * cum / safe - v) / (2.0 * alpha)), 1.0)


def penalty_bound(u_scale, v, alpha):
    """Return ``1 − e^{−v/(2α)} + U √(α ln(1 + α U² e^{v/α}))`` elementwise (``U ≥ 0``).

    With ``U = |u_i| S_{T,i}`` and ``v = v_{T,i}`` it is one coordinate's term of the SI-COORD
    bound; with ``U = ‖u‖_{A_T}`` and ``v = v_T`` it is the SI-FULL bound (Kotłowski 2017, Theorems
    3.4 and 4.5, in our reconstruction). The logarithm is evaluated as ``logaddexp(0, ln α + 2 ln U
    + v/α)`` (no overflow; U = 0 gives 0).
    """
    u_scale = np.abs(np.asarray(u_scale, dtype=np.float64))
    v = np.asarray(v, dtype=np.float64)
    with np.errstate(divide="ignore"):
        log_arg = math.log(alpha) + 2.0 * np.log(u_scale) + v / alpha
    log_term = np.logaddexp(0.0, log_arg)
    return 1.0 - np.exp(-v / (2.0 * alpha)) + u_scale * np.sqrt(alpha * log_term)


class ScaleInvariant(OCOPlayer):
    """Kotłowski's scale-invariant learners for linear predictors ``ŷ_t = ⟨w_t, x_t⟩``.

    The player sees ``x_t`` before predicting and learns from ``g_t = ℓ'(ŷ_t, y_t)`` (the
    feedback's ``dloss``), i.e. the linearized loss ``g_t x_tᵀ w``. The guarantee needs
    ``|g_t| ≤ 1``: always so for the absolute loss, and for hinge and logistic when
    ``|y_t| ≤ 1`` (every classification game; a regression game with larger targets voids it).
    All state starts at 0.

    ``variant="coordinate"`` (SI-COORD, our reference version of Kotłowski 2017, Algorithm 1 —
    the 1-d instance of SI-FULL on each coordinate): with ``G_{t,i} = −Σ_{s≤t} g_s x_{s,i}``,
    ``S²_{t,i} = Σ_{s≤t} x²_{s,i}`` and ``v_{t,i} = Σ_{s≤t} x²_{s,i}/S²_{s,i}``,

    ``w_{t,i} = exp((G²_{t−1,i}/S²_{t,i} − v_{t−1,i})/(2α)) · G_{t−1,i}/(α S²_{t,i})``

    (``S²_{t,i}`` already contains ``x²_{t,i}``; ``w_{t,i} = 0`` while ``S²_{t,i} = 0``). O(d) per
    round.

    ``variant="full"`` (SI-FULL, Kotłowski 2017, Algorithm 2, eq. (7) as we reconstruct it): with
    ``θ_t = −Σ_{s≤t} g_s x_s``, ``A_t = Σ_{s≤t} x_s x_sᵀ`` and ``v_t = Σ_{s≤t} x_sᵀA_s^†x_s``,

    ``w_t = (1/α) exp((θ_{t−1}ᵀA_t^†θ_{t−1} − v_{t−1})/(2α)) · A_t^† θ_{t−1}``,

    keeping ``A_t^†`` and the range projector ``P_t = A_tA_t^†`` by the exact rank-one
    pseudo-inverse update (:func:`pinv_rank1_update`, threshold :data:`RANK_TOL`). O(d²) per round.

    Parameters
    ----------
    variant : {"coordinate", "full"}
        Coordinate-wise invariance (diagonal rescalings) or full invariance (invertible maps).
    alpha : float
        The constant α of the potential; the guarantee needs ``e^y − y ≤ e^{αy²/2}`` for all
        real y, i.e. ``α ≳ 1.1148``; default 9/8 (Kotłowski 2017's choice, Appendix F).

    Notes
    -----
    Invariance: SI-COORD's predictions are unchanged when every ``x_{t,i}`` is multiplied by a
    fixed ``c_i ≠ 0`` (weights become ``w_i/c_i``); SI-FULL's are unchanged under ``x_t ↦ M x_t``
    for any invertible M (up to the rank threshold's rounding; Kotłowski 2017, §4.2 and
    Appendix D).

    Potential (Kotłowski 2017, Lemmas 3.3 and 4.3): ``ψ_t = exp((θ_tᵀA_t^†θ_t − v_t)/(2α))``
    (per coordinate ``exp((G²_{t,i}/S²_{t,i} − v_{t,i})/(2α))``), ``ψ_0 = 1``, and every round
    ``g_t ŷ_t ≤ ψ_{t−1} − ψ_t`` for ``|g_t| ≤ 1`` (per coordinate ``g_t x_{t,i} w_{t,i}``).
    Summing and taking Fenchel conjugates gives, for every ``u ∈ ℝ^d`` and every sequence with
    ``|g_t| ≤ 1``, the bound on the linearized (hence the true) regret
    ``R̃_T(u) = Σ_t g_t (ŷ_t − x_tᵀu)``:

    * SI-COORD: ``Σ_i [1 − e^{−v_{T,i}/(2α)} + |u_i|S_{T,i} √(α ln(1 + α u_i² S²_{T,i}
      e^{v_{T,i}/α}))]``, with ``v_{T,i} ≤ 1 + ln(S²_{T,i}/x²_{t_i,i})``;
    * SI-FULL: ``1 − e^{−v_T/(2α)} + ‖u‖_{A_T} √(α ln(1 + α ‖u‖²_{A_T} e^{v_T/α}))``, with
      ``0 ≤ x_tᵀA_t^†x_t ≤ 1`` so ``v_T ≤ T``.

    :meth:`regret_bound` evaluates them. They depend on u, which the player never sees, so
    :meth:`bounds` declares nothing. The formulas above are our reconstruction of the paper's
    (the text we worked from had lost its mathematics), checked numerically; in particular
    SI-COORD is our reference version, not necessarily the paper's eq. (5), whose overhead term
    we could not recover.

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("classification", 2, 2, dim=2, domain=Domain("unconstrained"),
    ...                 loss="hinge")
    >>> p = ScaleInvariant()
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> x = np.array([[1.0, -2.0]])
    >>> p.update(feedback("hinge", 0.0, p.predict(x), RoundData(x=x, y=np.array([1.0]))))
    >>> p.predict(x).round(4).tolist()  # G = (1, −2), S̃² = (2, 8), v = (1, 1)
    [[0.3559, -0.1779]]

    References
    ----------
    Kotłowski (2017), "Scale-Invariant Unconstrained Online Learning", ALT: §3.2 (Algorithm 1),
    §4.2 (Algorithm 2 and its O(d²) implementation), Appendices D and E.
    """

    tags = PlayerTags(
        protocols=frozenset({"classification", "regression"}),
        randomized=False,
        domains=frozenset({"unconstrained"}),
        losses=frozenset({"absolute", "hinge", "logistic"}),
    )
    parameter_constraints: ClassVar = {"variant": [OneOf(*VARIANTS)], "alpha": [POSITIVE]}

    def __init__(self, variant: str = "coordinate", alpha: float = 9.0 / 8.0):
        self.variant = variant
        self.alpha = alpha

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        alpha = float(self.alpha)
        if spec.protocol not in self.tags.protocols:
            raise ConfigError(
                who,
                "protocol",
                f"needs the features x_t (classification or regression), got {spec.protocol!r}",
            )
        if spec.loss not in self.tags.losses:
            raise ConfigError(
                who,
                "loss",
                f"must be 1-Lipschitz in ŷ, one of {sorted(self.tags.losses)}, got {spec.loss!r}",
            )
        if spec.sigma:
            raise ConfigError(
                who, "sigma", f"the losses must be functions of ŷ (σ = 0), got {spec.sigma!r}"
            )
        if spec.domain is not None and spec.domain.kind != "unconstrained":
            raise ConfigError(who, "domain", f"unconstrained only, got {spec.domain.kind!r}")
        n_rep, dim = spec.n_replicates, int(spec.dim)
        self._alpha = alpha
        self._v_shape = (n_rep, dim) if self.variant == "coordinate" else (n_rep,)
        self._v = np.zeros(self._v_shape)
        if self.variant == "coordinate":
            self._cum = np.zeros((n_rep, dim))  # G_{t,i}
            self._s2 = np.zeros((n_rep, dim))  # S²_{t,i}
        else:
            self._theta = np.zeros((n_rep, dim))
            self._a_pinv = np.zeros((n_rep, dim, dim))
            self._proj = np.zeros((n_rep, dim, dim))
            self._a = np.zeros((n_rep, dim, dim))  # A_t, only for regret_bound
        self._rounds = 0

    def _features(self, x) -> np.ndarray:
        if x is None:
            raise ConfigError(self.label(), "protocol", "predict needs the round's features x_t")
        return np.asarray(x, dtype=np.float64)

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        x = self._features(x)
        a = self._alpha
        if self.variant == "coordinate":
            return coordinate_weights(self._cum, self._s2, self._v, x, a)
        a_pinv, _, _, _ = pinv_rank1_update(self._a_pinv, self._proj, x)
        direction = np.einsum("rij,rj->ri", a_pinv, self._theta)
        quad = np.einsum("ri,ri->r", self._theta, direction)
        return (np.exp((quad - self._v) / (2.0 * a)) / a)[:, None] * direction

    def update(self, fb: Feedback) -> None:
        x = np.asarray(fb.data.x, dtype=np.float64)
        g = np.asarray(fb.dloss, dtype=np.float64)
        if self.variant == "coordinate":
            s2t = self._s2 + x * x
            seen = x * x > 0
            self._v += np.where(seen, x * x / np.where(seen, s2t, 1.0), 0.0)
            self._s2 = s2t
            self._cum -= g[:, None] * x
        else:
            self._a_pinv, self._proj, _, q = pinv_rank1_update(self._a_pinv, self._proj, x)
            self._v += q  # x_tᵀA_t^†x_t in closed form (see pinv_rank1_update)
            self._theta -= g[:, None] * x
            self._a += x[:, :, None] * x[:, None, :]
        self._rounds += 1

    def potential(self) -> np.ndarray:
        """Return ψ_t: (R, d) per coordinate for ``"coordinate"``, (R,) for ``"full"``."""
        a = self._alpha
        if self.variant == "coordinate":
            return coordinate_potential(self._cum, self._s2, self._v, a)
        quad = np.einsum("ri,rij,rj->r", self._theta, self._a_pinv, self._theta)
        return np.exp((quad - self._v) / (2.0 * a))

    def state(self) -> dict[str, np.ndarray]:
        """Return copies of the state: ``v`` and ``G``, ``S2`` or ``theta``, ``A_pinv``, ``P``."""
        out = {"v": self._v.copy()}
        if self.variant == "coordinate":
            out.update(G=self._cum.copy(), S2=self._s2.copy())
        else:
            out.update(
                theta=self._theta.copy(),
                A_pinv=self._a_pinv.copy(),
                P=self._proj.copy(),
                A=self._a.copy(),
            )
        return out

    def regret_bound(self, u: np.ndarray) -> np.ndarray:
        """Return the Notes' bound on ``R̃_t(u)`` after the rounds played, shape (R,).

        ``u`` is (d,) or (R, d).
        """
        u = np.broadcast_to(np.asarray(u, dtype=np.float64), (*self._v_shape[:1], self._dim()))
        a = self._alpha
        if self.variant == "coordinate":
            return penalty_bound(np.abs(u) * np.sqrt(self._s2), self._v, a).sum(axis=1)
        norm_a = np.sqrt(np.maximum(np.einsum("ri,rij,rj->r", u, self._a, u), 0.0))
        return penalty_bound(norm_a, self._v, a)

    def _dim(self) -> int:
        return (self._cum if self.variant == "coordinate" else self._theta).shape[1]

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"variant": "full"}
        yield {"alpha": 1.5}
