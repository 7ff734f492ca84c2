"""Instance ranking by the primal–dual player P0 / P0′ with the Euclidean regularizer
(Shalev-Shwartz 2007, §5.3.4 with Fig 3.1 and Fig 3.2)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.oco.components import INSTANCE_RANKING, OCOPlayer
from arena.oco.losses import INSTANCE_RANKING_LOSSES, Feedback
from arena.params import POSITIVE, OneOf
from arena.spec import GameSpec, PlayerTags

SCHEDULES = ("fixed", "sqrt_t")


def pair_lipschitz(x: np.ndarray, k: int) -> np.ndarray:
    """Return ``max_{i,j} ‖x_i − x_j‖₂`` of the k rows of each ``x`` (..., k·d).

    An upper bound, known before the answer, on the Lipschitz constant
    ``max_{(i,j)∈E_t} ‖x_i − x_j‖`` of ℓ^avg and ℓ^max (Shalev-Shwartz 2007, §5.3.4, with the
    norm, not its square).

    Examples
    --------
    >>> float(pair_lipschitz(np.array([0.0, 0.0, 3.0, 4.0, 1.0, 0.0]), 3)[()])
    5.0
    """
    x = np.asarray(x, dtype=np.float64)
    rows = x.reshape(*x.shape[:-1], k, x.shape[-1] // k)
    diff = rows[..., :, None, :] - rows[..., None, :, :]
    return np.sqrt((diff * diff).sum(axis=-1).max(axis=(-2, -1)))


class InstanceRanking(OCOPlayer):
    """P0 (fixed c) or P0′ (``c_t = √(t·max_{i≤t} L_i / U)``) on the instance-ranking losses.

    The Euclidean primal–dual player with the conservative (CONS) rule, ``f(w) = ½‖w‖²`` on ℝ^d:
    ``θ_1 = 0``, ``w_t = θ_t / c_t``, ``θ_{t+1} = θ_t − λ_t`` with ``λ_t`` the arena's subgradient
    of ``ℓ^avg`` or ``ℓ^max`` at ``w_t`` (:func:`arena.oco.losses.instance_ranking`). With
    ``schedule="fixed"`` ``c_t = c`` (Fig 3.1); with ``"sqrt_t"`` ``c_t = √(t·max_{i≤t} L_i / U)``,
    ``L_i = G_i²/2`` and ``G_i`` :func:`pair_lipschitz` of ``X_i``, which the player sees before
    answering (Fig 3.2, Corollary 3; ``U`` is ``c``).

    Parameters
    ----------
    schedule : {"fixed", "sqrt_t"}
        Fixed trade-off or Corollary 3's self-tuned one.
    c : float
        The fixed c, or U (the comparator's ``½‖u‖² ≤ U``) of ``"sqrt_t"``.

    Notes
    -----
    Guarantees (Lemma 1 / Lemma 2 with ``‖λ_t‖ ≤ G_t``): ``R(u, T) ≤ c·½‖u‖² + Σ_t G_t²/(2c)``
    (fixed c, Corollary 1) and ``R(u, T) ≤ 2(½‖u‖²/√U + √U)√(LT)`` with ``L = max_t G_t²/2``
    (``"sqrt_t"``, Corollary 3). They hold for every u; the ``instance_ranking`` protocol
    computes no comparator, so nothing is declared by :meth:`bounds`.

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("instance_ranking", 2, 1, dim=2, domain=Domain(), loss="ranking_max",
    ...                 n_classes=2)
    >>> p = InstanceRanking(c=2.0)
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> rd = RoundData(x=np.array([[1.0, 0.0, 0.0, 1.0]]), y=np.array([[1.0, 0.0]]))
    >>> p.update(feedback("ranking_max", 0.0, p.predict(rd.x), rd))
    >>> p.predict().tolist()                      # θ = x_1 − x_2, w = θ/2
    [[0.5, -0.5]]

    References
    ----------
    Shalev-Shwartz 2007, §5.3.4 (instance ranking), Fig 3.1 and Corollary 1 (P0), Fig 3.2 and
    Corollary 3 (P0′).
    """

    tags = PlayerTags(
        protocols=frozenset({INSTANCE_RANKING}),
        randomized=False,
        domains=frozenset({"unconstrained"}),
        losses=frozenset(INSTANCE_RANKING_LOSSES),
    )
    parameter_constraints: ClassVar = {"schedule": [OneOf(*SCHEDULES)], "c": [POSITIVE]}

    def __init__(self, schedule: str = "fixed", c: float = 1.0):
        self.schedule = schedule
        self.c = c

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._k = int(spec.n_classes)
        self._theta = np.zeros((spec.n_replicates, int(spec.dim)))
        self._t = 1
        self._lip_sq = np.zeros(spec.n_replicates)  # max_{i<t} G_i²

    def trade_off(self, x: np.ndarray | None) -> np.ndarray:
        """Return ``c_t`` (R,), reading ``G_t`` from this round's ``X_t`` under ``"sqrt_t"``."""
        if self.schedule == "fixed":
            return np.full(self._theta.shape[0], float(self.c))
        g_sq = self._lip_sq
        if x is not None:
            g_sq = np.maximum(g_sq, pair_lipschitz(x, self._k) ** 2)
        c_t = np.sqrt(self._t * 0.5 * g_sq / float(self.c))
        return np.where(c_t > 0.0, c_t, math.inf)  # X_t with equal rows: w_t = 0

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._theta / self.trade_off(x)[:, None]

    def update(self, fb: Feedback) -> None:
        x = np.asarray(fb.data.x, dtype=np.float64)
        self._lip_sq = np.maximum(self._lip_sq, pair_lipschitz(x, self._k) ** 2)
        self._theta -= fb.grad
        self._t += 1

    @classmethod
    def _unit_test_params(cls):
        yield {}
