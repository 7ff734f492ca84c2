"""Kotłowski 2017's lower bound for scale-invariant learning: every learner pays ``≈ ‖u‖_{A_T}·√T``.

Our reconstruction of the construction in the proof of Kotłowski 2017, Theorem 4.2 (Appendix C;
the extracted text lost its formulas): losses linear in the prediction, instances chosen in
directions the comparator's predictions do not see yet.
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
from arena.params import POSITIVE, Interval
from arena.spec import AdversaryTags, GameSpec


def invariant_value(t: int, dim: int, K: float) -> float:
    """Return ``v_t = θ_tᵀA_t^†θ_t`` of the construction: ``t`` for ``t ≤ d``, then
    ``d + (t − d)·K/(1 + K)``.

    Examples
    --------
    >>> invariant_value(40, 5, 30.0)
    38.87096774193548
    """
    if t <= dim:
        return float(t)
    return dim + (t - dim) * K / (1.0 + K)


def condition_estimate(horizon: int, dim: int, K: float) -> float:
    """Return ``log10`` of the estimate ``cond(A_T) ≈ (1 + K)^{(T − d)/(d − 1)}``."""
    if horizon <= dim:
        return 0.0
    return (horizon - dim) / (dim - 1) * math.log10(1.0 + K)


TIE_RTOL = 1e-9
"""Singular values within this relative distance of the smallest count as tied (the directions
then span the minimizing subspace; rounding of the rank-one factors is ~1e-15 relative)."""


class ScaleLowerBound(AdaptiveOCOAdversary):
    """Show ``x_t`` with ``x_tᵀA_{t−1}^{-1}θ_{t−1} = 0``, then a label that charges ``M + |ŷ_t|``.

    Parameters
    ----------
    K : float
        The size ``q_t = x_tᵀA_{t−1}^{-1}x_t = K > 0`` of each instance after the first ``d``
        rounds, measured in the data's own metric. The bound tends to ``‖u‖_{A_T}√T`` as
        ``K → ∞``; larger ``K`` makes ``A_t`` ill-conditioned faster.
    label_scale : float
        ``M > 0``: the labels are ``y_t = −s_t·M``. The absolute loss is linear in the prediction
        for every ``ŷ`` with ``s_tŷ ≥ −M``: always for the learner, and for the comparators
        ``c·u*`` with ``|c| ≤ M`` (see Notes).
    max_condition : float
        Refuse games whose estimated ``cond(A_T) ≈ (1 + K)^{(T − d)/(d − 1)}`` exceeds this
        (keep it ``≲ 10^12`` for float64). Raise it at your own risk.

    Notes
    -----
    Protocol ``regression`` with the absolute loss ``|ŷ − y|`` and huge labels ``|y|``, which is
    linear on the relevant range; it is a protocol with features shown before predicting and a
    1-Lipschitz loss in ``ŷ``, which ``scale_invariant`` plays. The adversary shows ``x_t``
    (:meth:`features`), the player commits ``w_t``, and the adversary reads ``ŷ_t = ⟨w_t, x_t⟩``,
    sets ``s_t = sign(ŷ_t)`` (+1 at 0) and reveals ``y_t = −s_t M``. Then ``ŷ_t − y_t = s_t(|ŷ_t| +
    M)``, so the player pays ``|ŷ_t − y_t| = M + |ŷ_t|`` (the linear loss ``s_tŷ_t = |ŷ_t| ≥ 0`` of
    the proof plus the constant M) and its derivative is exactly ``ℓ'_t = s_t``. With ``θ_t =
    −Σ_{s≤t} s_s x_s`` and ``A_t = Σ_{s≤t} x_s x_sᵀ``:
    * rounds ``t ≤ d``: ``x_t = e_t`` (so ``A_d = I``);
    * rounds ``t > d``: ``z = A_{t−1}^{-1}θ_{t−1}``; ``x_t = r·√(K/(rᵀA_{t−1}^{-1}r))`` for a
      direction ``r ⊥ z`` (``d ≥ 2`` makes one exist). The adversary picks the ``r`` of largest
      ``rᵀA_{t−1}^{-1}r/‖r‖²`` among them, the direction the data covers least (in the tested
      games ``cond(A_T)`` stays below the estimate; any ``r ⊥ z`` gives the theorem),
      breaking ties towards a fixed reference vector so that the sequence does not depend on
      the basis LAPACK returns.

    Then (Sherman–Morrison with ``x_tᵀz = 0``) ``θ_tᵀA_t^{-1}θ_t = θ_{t−1}ᵀA_{t−1}^{-1}θ_{t−1} +
    K/(1 + K)``, so ``v_T := θ_TᵀA_T^{-1}θ_T = d + (T − d)K/(1 + K)`` whatever the player does
    (:func:`invariant_value`). Let ``u* = A_T^{-1}θ_T/√v_T`` (``‖u*‖_{A_T} = 1``). Every
    ``|x_tᵀu*| ≤ √(x_tᵀA_T^{-1}x_t) ≤ 1``, so for ``|c| ≤ M`` the comparator ``c·u*`` pays
    ``M + s_t x_tᵀ(c·u*)`` every round and

    ``R_T(c·u*) = Σ_t |ŷ_t| + c·θ_Tᵀu* = Σ_t |ŷ_t| + c·√v_T ≥ ‖c·u*‖_{A_T}·√v_T
    → ‖c·u*‖_{A_T}√T  (K → ∞)``,

    with equality for the zero learner and for every learner whose prediction is a multiple of
    ``x_tᵀA_{t−1}^{-1}θ_{t−1}`` (SI-FULL, and the learner that tries to foil the sign by
    predicting with the sign of ``x_tᵀz``). The adversary keeps ``A_t = L_t L_tᵀ`` and
    ``L_t^{-1}`` as products of rank-one factors ``I + (√(1+K) − 1)ξ̂ξ̂ᵀ`` in whitened
    coordinates (``x_t = √K·L_{t−1}ξ̂``, ``ξ̂ ⊥ L_{t−1}^{-1}θ_{t−1}``), O(d²) per round plus one
    (d × (d−1)) SVD for the direction.

    :meth:`comparator` returns ``u*_t = A_t^†θ_t/√(θ_tᵀA_t^†θ_t)`` for the rounds so far
    (``‖u*_t‖_{A_t} = 1``; 0 before round 1; the theorem's comparator is the final one,
    ``t = T``). The declared ``comparator_regret`` bound after round ``t`` is against the
    comparator returned after round ``t``: with param ``|c| ≤ M`` that regret is
    ``Σ_{s≤t}|ŷ_s| + c·√v_t``; :meth:`lower_bounds` declares ``√v_t`` for ``c = 1`` (when
    ``M ≥ 1``) and ``loss ≥ t·M``.

    Numerical caveat: along the construction the eigenvalues of ``A`` grow by
    about ``(1 + K)`` per round in a ``(d − 1)``-dimensional subspace, so ``cond(A_T) ≈ (1 +
    K)^{(T − d)/(d − 1)}``; ``reset`` refuses ``(d, T, K)`` with that estimate above
    ``max_condition``. Non-invariant learners (OGD) blow up on this sequence.

    Examples
    --------
    >>> from arena.oco.losses import feedback
    >>> adv = ScaleLowerBound(K=3.0, label_scale=10.0)
    >>> spec = GameSpec("regression", 2, 6, dim=2, loss="absolute")
    >>> adv.reset(spec, [None])
    >>> total = 0.0
    >>> for t in range(1, 7):  # the zero learner
    ...     x = adv.features(t)
    ...     rd = adv.reveal(t, np.zeros((1, 2)))
    ...     total += float(feedback("absolute", 0.0, np.zeros((1, 2)), rd).value[0])
    >>> total, round(float(adv.lower_bounds(6)[("comparator_regret", 1.0)]), 6)
    (60.0, 2.236068)

    References
    ----------
    Kotłowski 2017, §4.1, Theorem 4.2, and its proof in Appendix C (non-negative losses,
    comparator a multiple of ``A_T^†θ_T``, basis vectors first, then Sherman–Morrison); the
    bound holds already for ``d = 2`` (§1). The choice of each new direction orthogonal to
    ``A_{t−1}^{−1}θ_{t−1}`` (so the learner cannot foil the sign) is our reconstruction.
    """

    parameter_constraints: ClassVar = {
        "K": [POSITIVE],
        "label_scale": [POSITIVE],
        "max_condition": [Interval(1, None, closed="neither")],
    }
    comparator_moves = True  # the comparator is built from the player's answers
    tags = AdversaryTags(
        protocol="regression",
        oblivious=False,
        oracle=frozenset({"comparator"}),
        needs_horizon=True,
    )

    def __init__(self, K: float = 3.0, label_scale: float = 10.0, max_condition: float = 1e12):
        self.K = K
        self.label_scale = label_scale
        self.max_condition = max_condition

    def resolve_dim(self, requested: int | None, horizon: int | None = None) -> int:
        """Return ``d``: the requested one, else the smallest ``d ≥ 2`` whose conditioning
        estimate ``(1 + K)^((T − d)/(d − 1))`` stays within ``max_condition`` (2 without T)."""
        if requested is not None:
            return int(requested)
        if horizon is None:
            return 2
        budget = math.log(float(self.max_condition)) / math.log1p(float(self.K))
        d = 2
        while d < horizon and (horizon - d) / (d - 1) > budget:
            d += 1
        return d

    def declared_domain(self) -> Domain:
        return Domain("unconstrained")

    def declared_loss(self) -> str:
        return "absolute"

    def gradient_bound(self) -> float | None:
        return None  # ‖∇f_t‖ = ‖x_t‖ grows with the data's scale

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        comp = self.label()
        if spec.horizon is None:
            raise ConfigError(comp, "horizon", "the construction needs the horizon T")
        dim = int(spec.dim if spec.dim is not None else spec.n_actions)
        if dim < 2:
            raise ConfigError(comp, "n_actions", f"needs d ≥ 2 (a direction r ⊥ z), got {dim}")
        est = condition_estimate(int(spec.horizon), dim, float(self.K))
        if est > math.log10(self.max_condition):
            t_max = dim + int(math.log10(self.max_condition) * (dim - 1) / math.log10(1 + self.K))
            raise ConfigError(
                comp,
                "K",
                f"(1 + K)^((T − d)/(d − 1)) = 1e{est:.1f} exceeds max_condition = "
                f"{self.max_condition:g} for d = {dim}, T = {spec.horizon}, K = {self.K}: "
                f"A_T would be too ill-conditioned for float64 (with this K and d keep "
                f"T ≤ {t_max}; or lower K, raise n_actions, or raise max_condition)",
            )
        n_rep = spec.n_replicates
        self._dim, self._n_rep = dim, n_rep
        self._beta = math.sqrt(1.0 + self.K) - 1.0
        self._theta = np.zeros((n_rep, dim))
        self._root = np.broadcast_to(
            np.eye(dim), (n_rep, dim, dim)
        ).copy()  # L_t with A_t = L_t L_tᵀ
        self._root_inv = self._root.copy()  # L_t^{-1}
        self._t = 0
        self._pending: tuple[int, np.ndarray, np.ndarray | None] | None = None

    def _direction(self) -> np.ndarray:
        """Unit ``ξ̂ ⊥ φ = L^{-1}θ`` minimizing ``‖Lξ̂‖`` (the least-covered ``r = Lξ̂ ⊥ z``).

        Ties (e.g. ``L = I`` at round ``d + 1``) are broken towards the fixed reference
        ``ρ = (1, 2, …, d)``: ``ξ̂`` is the unit projection of ``ρ`` onto the minimizing subspace,
        which does not depend on the basis LAPACK returns for it; the sign makes ``⟨ξ̂, ρ⟩ > 0``.
        """
        d = self._dim
        phi = np.einsum("rij,rj->ri", self._root_inv, self._theta)
        phi /= np.linalg.norm(phi, axis=1, keepdims=True)
        # Householder reflector H with H e_1 ∝ φ: its other columns span φ^⊥
        a = phi.copy()
        a[:, 0] += np.where(phi[:, 0] >= 0, 1.0, -1.0)
        a /= np.linalg.norm(a, axis=1, keepdims=True)
        basis = np.eye(d)[None, :, 1:] - 2.0 * a[:, :, None] * a[:, None, 1:]  # (R, d, d−1)
        _, sv, vt = np.linalg.svd(np.einsum("rij,rjk->rik", self._root, basis))
        cand = np.einsum("rik,rjk->rij", basis, vt)  # (R, d, d−1): columns b_k = basis·v_k
        tied = sv <= sv[:, -1:] * (1.0 + TIE_RTOL)  # the minimizing subspace
        rho = np.arange(1.0, d + 1.0)
        coef = np.einsum("rik,i->rk", cand, rho) * tied
        xi = np.einsum("rik,rk->ri", cand, coef)
        norm = np.linalg.norm(xi, axis=1, keepdims=True)
        # ρ ⊥ the subspace (measure zero): fall back to the last singular vector, sign by ρ
        xi = np.where(norm > 1e-12 * np.linalg.norm(rho), xi, cand[:, :, -1])
        xi /= np.linalg.norm(xi, axis=1, keepdims=True)
        return xi * np.where(xi @ rho >= 0, 1.0, -1.0)[:, None]

    def features(self, t: int) -> np.ndarray:
        d = self._dim
        if self._t + 1 <= d:
            x = np.zeros((self._n_rep, d))
            x[:, self._t] = 1.0
            xi = None
        else:
            xi = self._direction()
            x = math.sqrt(self.K) * np.einsum("rij,rj->ri", self._root, xi)
        self._pending = (t, x, xi)
        return x.copy()

    def reveal(self, t: int, w: np.ndarray) -> RoundData:
        if self._pending is None or self._pending[0] != t:
            self.features(t)
        _, x, xi = self._pending
        self._pending = None
        yhat = np.einsum("...i,...i->...", x, np.asarray(w, dtype=np.float64))
        s = np.where(yhat >= 0.0, 1.0, -1.0)
        self._theta -= s[:, None] * x
        if xi is not None:
            lxi = np.einsum("rij,rj->ri", self._root, xi)
            self._root += self._beta * lxi[:, :, None] * xi[:, None, :]
            xil = np.einsum("ri,rij->rj", xi, self._root_inv)
            self._root_inv -= (self._beta / (1.0 + self._beta)) * xi[:, :, None] * xil[:, None, :]
        self._t += 1
        return RoundData(x=x.copy(), y=-float(self.label_scale) * s)

    def invariant(self) -> np.ndarray:
        """Return ``θ_tᵀA_t^†θ_t`` from the adversary's factors, shape (R,) (``= v_t``)."""
        if self._t < self._dim:
            return np.einsum("ri,ri->r", self._theta, self._theta)
        phi = np.einsum("rij,rj->ri", self._root_inv, self._theta)
        return np.einsum("ri,ri->r", phi, phi)

    def comparator(self) -> np.ndarray:
        if self._t == 0:
            return np.zeros((self._n_rep, self._dim))
        if self._t < self._dim:  # A_t = diag(1, …, 1, 0, …): A_t^†θ_t = θ_t
            u = self._theta.copy()
        else:
            phi = np.einsum("rij,rj->ri", self._root_inv, self._theta)
            u = np.einsum("rji,rj->ri", self._root_inv, phi)  # L^{-T}L^{-1}θ = A^{-1}θ
        return u / np.sqrt(self.invariant())[:, None]

    def lower_bounds(self, t: int, player=None) -> dict[tuple[str, float], float]:
        out: dict[tuple[str, float], float] = {
            ("loss", math.nan): self._t * float(self.label_scale)
        }
        if self.label_scale >= 1.0:
            v = invariant_value(self._t, self._dim, float(self.K))
            out[("comparator_regret", 1.0)] = math.sqrt(v)
        return out

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"K": 1.0, "label_scale": 1.0, "max_condition": 1e13}
