"""Passive-Aggressive online learners PA, PA-I and PA-II (Crammer et al. 2006): classification and
ε-insensitive regression."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.oco.components import OCOPlayer, game_dim
from arena.oco.losses import EXAMPLE_LOSSES, Feedback, RoundData, is_sparse
from arena.params import NON_NEGATIVE, POSITIVE, OneOf
from arena.players._quasi_additive import read_example, sparse_axpy
from arena.spec import GameSpec, PlayerTags
from arena.validation import readonly_contiguous

VARIANTS = ("pa", "pa1", "pa2")
PA, PA1, PA2 = 0, 1, 2
"""Kernel codes of the variants."""


@njit(cache=True, nogil=True)
def _pa_sparse_block(
    indptr, indices, values, y, variant, C, eps, regression, w, mistakes, sq_loss, x_max, x_min, out
):
    """Play a block of sparse rows (CSR, row ``r·n + j``): O(nnz) arithmetic a round.

    The update of :meth:`PassiveAggressive.update` on the row's coordinates (``τ`` as
    :func:`pa_step`); ``out[r, j] = w`` is the one O(d) pass, the point the protocol records.
    """
    n_rep, d = w.shape
    n = out.shape[1]
    for r in range(n_rep):
        for j in range(n):
            for i in range(d):
                out[r, j, i] = w[r, i]
            k = r * n + j
            p = 0.0
            sq = 0.0
            for q in range(indptr[k], indptr[k + 1]):
                p += values[q] * w[r, indices[q]]
                sq += values[q] * values[q]
            label = y[r, j]
            if regression:
                loss = max(abs(p - label) - eps, 0.0)
                diff = label - p
                direction = 1.0 if diff > 0 else (-1.0 if diff < 0 else 0.0)
            else:
                margin = label * p
                loss = max(1.0 - margin, 0.0)
                direction = label
                if margin <= 0.0:
                    mistakes[r] += 1
            tau = 0.0
            if sq > 0.0:
                if variant == PA2:
                    tau = loss / (sq + 0.5 / C)
                else:
                    tau = loss / sq
                    if variant == PA1:
                        tau = min(C, tau)
            coef = tau * direction
            for q in range(indptr[k], indptr[k + 1]):
                w[r, indices[q]] += coef * values[q]
            sq_loss[r] += loss * loss
            nrm = math.sqrt(sq)
            x_max[r] = max(x_max[r], nrm)
            x_min[r] = min(x_min[r], nrm)


def pa_step(
    variant: str, aggressiveness: float, loss: np.ndarray, sq_norm: np.ndarray
) -> np.ndarray:
    """Return the passive-aggressive step size ``τ`` elementwise (0 where ``‖z‖² = 0``).

    ``pa``: ``ℓ/‖z‖²``; ``pa1``: ``min(C, ℓ/‖z‖²)``; ``pa2``: ``ℓ/(‖z‖² + 1/(2C))`` (Crammer et
    al. 2006, §3), with ``z`` the update direction (``x`` in binary PA, Kesler's ``φ(x, y) −
    φ(x, r)`` in multiclass PA) and C the aggressiveness.

    Examples
    --------
    >>> pa_step("pa1", 0.5, np.array([2.0, 2.0]), np.array([1.0, 0.0])).tolist()
    [0.5, 0.0]
    """
    safe = np.where(sq_norm > 0.0, sq_norm, 1.0)
    if variant == "pa2":
        tau = loss / (sq_norm + 0.5 / aggressiveness)
    else:
        tau = loss / safe
        if variant == "pa1":
            tau = np.minimum(aggressiveness, tau)
    return np.where(sq_norm > 0.0, tau, 0.0)


def pa1_mistake_bound(radius_sq, aggressiveness: float, u_norm, hinge) -> np.ndarray:
    """PA-I's mistake bound (Crammer et al. 2006, Thm 4): ``max(R², 1/C)(‖u‖² + 2C Σ ℓ*_t)``,
    with R the largest norm of the update directions and ``Σ ℓ*_t`` the comparator's hinge.

    Examples
    --------
    >>> float(pa1_mistake_bound(1.0, 0.5, 2.0, 3.0))
    14.0
    """
    u = np.asarray(u_norm, dtype=np.float64)
    h = np.asarray(hinge, dtype=np.float64)
    return np.maximum(radius_sq, 1.0 / aggressiveness) * (u * u + 2.0 * aggressiveness * h)


def pa2_squared_loss_bound(radius_sq, aggressiveness: float, u_norm, hinge_sq) -> np.ndarray:
    """PA-II's bound on ``Σ ℓ_t²`` (Crammer et al. 2006, Thm 5):
    ``(R² + 1/(2C))(‖u‖² + 2C Σ ℓ*_t²)``.

    Examples
    --------
    >>> float(pa2_squared_loss_bound(1.0, 0.5, 2.0, 3.0))
    14.0
    """
    u = np.asarray(u_norm, dtype=np.float64)
    h2 = np.asarray(hinge_sq, dtype=np.float64)
    return (radius_sq + 0.5 / aggressiveness) * (u * u + 2.0 * aggressiveness * h2)


class PassiveAggressive(OCOPlayer):
    """Passive-Aggressive: ``w_{t+1} = w_t + τ_t s_t x_t`` with the step of the chosen variant.

    Classification (``y ∈ {±1}``): loss ``ℓ_t = [1 − y_t⟨w_t, x_t⟩]₊`` and direction
    ``s_t = y_t``. Regression: ``ℓ_t = [|⟨w_t, x_t⟩ − y_t| − ε]₊`` and
    ``s_t = sign(y_t − ⟨w_t, x_t⟩)``.
    The step is ``τ_t = ℓ_t/‖x_t‖²`` (PA), ``min{C, ℓ_t/‖x_t‖²}`` (PA-I) or
    ``ℓ_t/(‖x_t‖² + 1/(2C))`` (PA-II); ``τ_t = 0`` when ``x_t = 0`` (nothing to move along).
    ``w_{t+1}`` is the closest point to ``w_t`` with zero loss (PA), or the prox step with a linear
    (PA-I) or quadratic (PA-II) slack penalty. Sparse rows (tag ``sparse_input``) cost O(nnz) a
    round besides the recorded ``w_t``.

    PA-I is the aggressive Euclidean dual-ascent update of Shalev-Shwartz 2007 (§5.2.1; closed
    form (7.11) of §7.2, γ = 1)
    with ``c = 1/C``: ``α_t = min{1, c ℓ_t/‖x_t‖²}``, step ``α_t/c = τ_t``.

    Parameters
    ----------
    variant : {"pa", "pa1", "pa2"}
        PA (hard margin), PA-I or PA-II.
    C : float
        Aggressiveness C > 0 of PA-I / PA-II (ignored by PA).
    epsilon : float
        Insensitivity ε ≥ 0 of the regression loss (ignored in classification).

    Notes
    -----
    Guarantees in classification (Crammer et al. 2006), for every ``u ∈ ℝ^d`` with
    ``ℓ*_t = [1 − y_t⟨u, x_t⟩]₊`` and ``R = max_t ‖x_t‖``:

    * PA, Thm 2 (separable: all ``ℓ*_t = 0``): ``Σ ℓ_t² ≤ ‖u‖² R²``; Thm 3 (all ``‖x_t‖ = 1``):
      ``Σ ℓ_t² ≤ (‖u‖ + 2√(Σ ℓ*_t²))²``;
    * PA-I, Thm 4: ``|M| ≤ max{R², 1/C}(‖u‖² + 2C Σ ℓ*_t)``;
    * PA-II, Thm 5: ``Σ ℓ_t² ≤ (R² + 1/(2C))(‖u‖² + 2C Σ ℓ*_t²)``.

    A mistake has ``ℓ_t ≥ 1``, so ``|M| ≤ Σ ℓ_t²`` turns the PA / PA-II loss bounds into mistake
    bounds (:meth:`mistake_bound`, :meth:`squared_loss_bound`). They depend on u: nothing is
    declared by :meth:`bounds`.

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("classification", 2, 1, dim=2, domain=Domain(), loss="hinge")
    >>> p = PassiveAggressive("pa1", C=0.1)
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> rd = RoundData(x=np.array([[1.0, 1.0]]), y=np.array([1.0]))  # ℓ = 1, ℓ/‖x‖² = 0.5 > C
    >>> p.update(feedback("hinge", 0.0, p.predict(rd.x), rd))
    >>> p.predict().tolist()
    [[0.1, 0.1]]

    References
    ----------
    Crammer, Dekel, Keshet, Shalev-Shwartz & Singer (2006), "Online Passive-Aggressive
    Algorithms", JMLR 7: Fig 1 (classification), §5 (regression), Thms 2–5. Shalev-Shwartz 2007,
    §5.2.1 and Eq. (7.11) (PA cited in §5.4).
    """

    tags = PlayerTags(
        protocols=frozenset({"classification", "regression"}),
        randomized=False,
        domains=frozenset({"unconstrained"}),
        losses=frozenset(EXAMPLE_LOSSES),
        sparse_input=True,
    )
    parameter_constraints: ClassVar = {
        "variant": [OneOf(*VARIANTS)],
        "C": [POSITIVE],
        "epsilon": [NON_NEGATIVE],
    }

    def __init__(self, variant: str = "pa1", C: float = 1.0, epsilon: float = 0.0):
        self.variant = variant
        self.C = C
        self.epsilon = epsilon

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._C = float(self.C)
        self._eps = float(self.epsilon)
        self._regression = spec.protocol == "regression"
        d = game_dim(spec)
        n_rep = spec.n_replicates
        self._w = np.zeros((n_rep, d))
        self._mistakes = np.zeros(n_rep, dtype=np.int64)
        self._sq_loss = np.zeros(n_rep)
        self._x_max = np.zeros(n_rep)
        self._x_min = np.full(n_rep, np.inf)

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._w.copy()

    def step(self, loss: np.ndarray, sq_norm: np.ndarray) -> np.ndarray:
        """Return ``τ`` for losses ``ℓ`` and squared norms ``‖x‖²`` (elementwise)."""
        return pa_step(self.variant, self._C, loss, sq_norm)

    def update(self, fb: Feedback) -> None:
        x, y, pred = read_example(fb)
        if self._regression:
            loss = np.maximum(np.abs(pred - y) - self._eps, 0.0)
            direction = np.sign(y - pred)
        else:
            margin = y * pred
            loss = np.maximum(1.0 - margin, 0.0)
            direction = y
            self._mistakes += margin <= 0.0
        if is_sparse(x):  # O(nnz): the row's coordinates only
            sq = x.row_norms_sq()
            sparse_axpy(self._w, self.step(loss, sq) * direction, x)
        else:
            sq = np.einsum("rd,rd->r", x, x)
            self._w += (self.step(loss, sq) * direction)[:, None] * x
        self._sq_loss += loss * loss
        norm = np.sqrt(sq)
        self._x_max = np.maximum(self._x_max, norm)
        self._x_min = np.minimum(self._x_min, norm)

    def play_block(self, data: RoundData, spec: GameSpec) -> np.ndarray:
        """The per-round loop; sparse rows by a compiled O(nnz) kernel."""
        if not is_sparse(data.x):
            return super().play_block(data, spec)
        x = data.x
        out = np.empty(x.shape)
        _pa_sparse_block(
            x.indptr,
            x.indices,
            x.values,
            readonly_contiguous(data.y, np.float64),
            VARIANTS.index(self.variant),
            self._C,
            self._eps,
            self._regression,
            self._w,
            self._mistakes,
            self._sq_loss,
            self._x_max,
            self._x_min,
            out,
        )
        return out

    @property
    def mistakes(self) -> np.ndarray:
        """Number of classification mistakes so far (R,)."""
        return self._mistakes.copy()

    @property
    def squared_loss(self) -> np.ndarray:
        """``Σ_t ℓ_t²`` of the player so far (R,)."""
        return self._sq_loss.copy()

    def squared_loss_bound(self, u_norm, hinge_sq) -> np.ndarray:
        """Return the bound on ``Σ ℓ_t²`` of PA (Thms 2/3) or PA-II (Thm 5), (R,).

        ``u_norm`` is ``‖u‖₂``, ``hinge_sq`` is ``Σ_t ℓ*_t²`` (comparator's squared hinge, all
        rounds). PA: Thm 2 when ``hinge_sq == 0``, Thm 3 when every ``‖x_t‖ = 1`` (1e-12), the
        smaller if both apply, ``inf`` if neither. PA-I has none (``inf``).
        """
        u = np.asarray(u_norm, dtype=np.float64)
        h2 = np.asarray(hinge_sq, dtype=np.float64)
        r2 = self._x_max**2
        if self.variant == "pa2":
            return pa2_squared_loss_bound(r2, self._C, u, h2)
        if self.variant == "pa1":
            return np.full(np.broadcast(u, r2).shape, np.inf)
        thm2 = np.where(h2 == 0.0, u * u * r2, np.inf)
        unit = (np.abs(self._x_max - 1.0) <= 1e-12) & (np.abs(self._x_min - 1.0) <= 1e-12)
        thm3 = np.where(unit, (u + 2.0 * np.sqrt(h2)) ** 2, np.inf)
        return np.minimum(thm2, thm3)

    def mistake_bound(self, u_norm, hinge, hinge_sq) -> np.ndarray:
        """Return a bound on ``|M|`` (R,): PA-I's Thm 4, else :meth:`squared_loss_bound`.

        ``hinge`` is ``Σ_t ℓ*_t`` and ``hinge_sq`` is ``Σ_t ℓ*_t²`` (comparator u, all rounds).
        """
        if self.variant == "pa1":
            return pa1_mistake_bound(self._x_max**2, self._C, u_norm, hinge)
        return self.squared_loss_bound(u_norm, hinge_sq)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"variant": "pa"}
        yield {"variant": "pa2", "C": 0.5}
        yield {"variant": "pa1", "C": 2.0, "epsilon": 0.1}
