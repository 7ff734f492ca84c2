"""The parameter-free "2-norm" potential algorithm of Luo's drifting-games recipe (Algorithm 3)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit

from arena.experts.components import ExpertsPlayer
from arena.metrics.base import exact_quantile_rank
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

BOUND_EPS = (0.1, 0.25)
"""Quantiles ε for which ``bounds`` declares the ε-quantile regret bound (besides ε = 1/N)."""


def two_norm_weights(regret: np.ndarray) -> np.ndarray:
    """Return the 2-norm weights ``[s−1]_-² − [s+1]_-²`` at ``s = −R``, elementwise.

    In R-form the weight is ``4R`` for ``R ≥ 1``, ``(1 + R)²`` for ``−1 < R < 1`` and ``0`` for
    ``R ≤ −1`` (continuous at ``R = ±1``; Luo 2016, §2.1.4 and Table 2.1).

    Examples
    --------
    >>> two_norm_weights(np.array([0.5, -0.5, 2.0, -1.0])).tolist()
    [2.25, 0.25, 8.0, 0.0]
    """
    r = np.asarray(regret, dtype=np.float64)
    return np.where(r >= 1.0, 4.0 * r, np.where(r > -1.0, (1.0 + r) ** 2, 0.0))


def normalize_rows(w: np.ndarray) -> np.ndarray:
    """Normalize nonnegative weights row-wise; a row of zeros becomes uniform."""
    s = w.sum(axis=-1, keepdims=True)
    uniform = np.full_like(w, 1.0 / w.shape[-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s > 0.0, w / np.where(s > 0.0, s, 1.0), uniform)


@njit(cache=True, nogil=True)
def _two_norm_play_block(losses, regret, lo, scale, probs):
    """Play a chunk: ``probs[r, j]`` is p of the j-th round of the chunk; ``regret`` advances."""
    n_rep, n, n_act = losses.shape
    for r in range(n_rep):
        for j in range(n):
            total = 0.0
            for i in range(n_act):
                x = regret[r, i]
                if x >= 1.0:
                    w = 4.0 * x
                elif x > -1.0:
                    w = (1.0 + x) * (1.0 + x)
                else:
                    w = 0.0
                probs[r, j, i] = w
                total += w
            for i in range(n_act):
                probs[r, j, i] = probs[r, j, i] / total if total > 0.0 else 1.0 / n_act
            h = 0.0
            for i in range(n_act):
                h += probs[r, j, i] * ((losses[r, j, i] - lo) / scale)
            for i in range(n_act):
                regret[r, i] += h - (losses[r, j, i] - lo) / scale


class TwoNorm(ExpertsPlayer):
    """The 2-norm algorithm: ``p_{t,i} ∝ [s_{t−1,i} − 1]_-² − [s_{t−1,i} + 1]_-²``.

    Algorithm 3 of Luo's thesis with the potential of Lemma 1, ``Φ_t(s) = a([s]_-² + T − t)``
    (``[x]_- = min(0, x)``). The scale ``a`` and the horizon cancel on normalization, so the
    algorithm is parameter-free and anytime.

    It has no hyperparameter.

    Notes
    -----
    With losses mapped to [0, 1] by the declared range, the learner keeps the cumulative regrets
    ``R_{t,i} = Σ_{τ≤t} (p_τ·ℓ_τ − ℓ_{τ,i})`` (the chip positions are ``s = −R``) and plays::

        w_i = 4R_i        if R_i ≥ 1
            = (1 + R_i)²  if −1 < R_i < 1
            = 0           if R_i ≤ −1,        p_t = w / Σ_i w_i,  R evaluated at t − 1.

    ``p_1`` is uniform. In exact arithmetic some weight always survives (``Σ_i p_{t,i} r_{t,i} = 0``
    keeps ``max_i R_{t,i} > −1``); a row of zero weights, which only rounding could produce, falls
    back to uniform.

    Guarantee (Luo 2016, Corollary 1; the potential invariant of Lemma 1 gives
    ``Σ_i [R_{t,i}]_+² ≤ N t`` for every loss sequence in [0, 1], adaptive adversaries included):
    for every t and every k, the k-th largest regret satisfies ``R_(k)(t) ≤ sqrt(t N / k)``, i.e.
    ``R_t^ε ≤ sqrt(t/ε)`` at ``ε = k/N``. ``bounds`` declares it for the regret (k = 1) and for the
    ε-quantile regret at ε ∈ {0.1, 0.25} (``k = ⌈εN⌉``), multiplied by the loss range width.

    No exponentials appear, so nothing can overflow.

    Examples
    --------
    >>> from arena import play
    >>> df = play(TwoNorm(), "fair_coin", n_actions=10, horizon=1000, metrics={"regret": {}})
    >>> bool(df.value.iloc[-1] <= math.sqrt(1000 * 10))
    True

    References
    ----------
    Luo 2016: Algorithm 3 (§2.1.3), Lemma 1, the update and Corollary 1 (§2.1.4); Table 2.1.
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), block_kernel=True)

    def __init__(self):
        pass

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._n = spec.n_actions
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._regret = np.zeros((spec.n_replicates, spec.n_actions))
        self._rounds = 0

    @property
    def regret(self) -> np.ndarray:
        """Cumulative regrets ``R_{t,i}`` in unit-range losses, shape (R, N) (a copy)."""
        return self._regret.copy()

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        return normalize_rows(two_norm_weights(self._regret))

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        unit = (losses - self._lo) / self._scale
        h = np.einsum("rn,rn->r", self.predict(), unit)
        self._regret += h[:, None] - unit
        self._rounds += 1

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        probs = np.empty_like(losses)
        _two_norm_play_block(losses, self._regret, self._lo, self._scale, probs)
        self._rounds += losses.shape[1]
        return probs

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare Corollary 1 (see Notes) for the regret and the ε-quantile regrets."""
        out = {("regret", math.nan): self.quantile_bound(t, 1)}
        for eps in BOUND_EPS:
            out["quantile_regret", eps] = self.quantile_bound(t, exact_quantile_rank(eps, self._n))
        return out

    def quantile_bound(self, t: int, k: int) -> float:
        """Return ``scale · sqrt(t N / k)``, the bound on the k-th largest regret after t rounds."""
        return self._scale * math.sqrt(t * self._n / k)
