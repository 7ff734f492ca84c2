"""Accuracy of a second-order player's sketch: relative error of its top-k eigenvalues.

``sketch_error`` — ``max_{i≤k} |λ̂_i − λ_i| / λ_i``, where ``λ_i`` is the i-th largest eigenvalue
of ``G_tᵀG_t = Σ_{s≤t} ĝ_sĝ_sᵀ`` (the to-sketch vectors ``ĝ_s = √(σ + η_s) g_s`` of Sketched
Online Newton, accumulated by the metric from the arena's gradients) and ``λ̂_i`` the player's
estimate (:meth:`players.son.SON.sketch_eigenvalues`). This is the quantity of Luo 2016,
Figure 4.1 (top-10 eigenvalues ``tΛ_{t,i}`` of Oja's sketch).

References
----------
Luo 2016, §4.4.3 and §4.6.1, Figure 4.1; Luo, Agarwal, Cesa-Bianchi & Langford (2016).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from arena.oco.components import feature_dim
from arena.oco.metrics import MAX_STORED_FLOATS, OCOBlock, OCOCore, OCOMetric, OCORecord
from arena.spec import GameSpec


def relative_eigen_errors(estimate: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """Return ``|λ̂ − λ|/λ`` elementwise; 0 where both are 0, ``inf`` where only ``λ = 0``.

    Examples
    --------
    >>> relative_eigen_errors(np.array([9.0, 1.0, 0.0]), np.array([10.0, 0.0, 0.0])).tolist()
    [0.1, inf, 0.0]
    """
    diff = np.abs(estimate - exact)
    safe = np.where(exact > 0.0, exact, 1.0)
    return np.where(exact > 0.0, diff / safe, np.where(diff > 0.0, np.inf, 0.0))


class SketchError(OCOMetric):
    """Largest relative error among the sketch's top-k eigenvalues of ``Σ_{s≤t} ĝ_sĝ_sᵀ``.

    At each checkpoint t, with ``λ_1 ≥ … ≥ λ_d`` the exact spectrum of ``G_tᵀG_t =
    Σ_{s≤t} ĝ_sĝ_sᵀ`` and ``λ̂_1 ≥ … ≥ λ̂_k`` the player's estimate (zero beyond the sketch's
    rank), the value is ``max_{i≤k} |λ̂_i − λ_i|/λ_i`` (a term with ``λ_i = 0`` counts 0 when
    ``λ̂_i = 0`` and ``inf`` otherwise; values below ``d·ε·λ_1``, the round-off of ``eigvalsh``,
    count as 0 in both). ``ĝ_s = w_s g_s`` with the player's weight
    ``w_s = √(σ + η_s)`` (:meth:`players.son.SON.sketch_weight`) and ``g_s`` the arena's
    gradient, so the metric keeps ``G_tᵀG_t`` itself (O(R·d²) state, O(d²) per round, one
    ``eigvalsh`` per replicate and checkpoint).

    Luo 2016, Figure 4.1 plots this for Oja's sketch (``λ̂_i = tΛ_{t,i}``, k = 10) on the
    synthetic data of §4.6.1: it "drops quickly after seeing just 500 examples". Frequent
    Directions' ``S_tᵀS_t`` underestimates every eigenvalue by at most ``Σ_s ρ_s`` (Luo 2016,
    Thm 18's proof); the full version's estimate is exact.

    Computed only for players with a sketch (``sketch_eigenvalues``: ``son``) without diagonal
    adaptation (whose sketch sees ``D_t^{-1/2}g_t``, not the arena's gradients); skipped with the
    reason otherwise.

    Parameters
    ----------
    k : list of int
        How many top eigenvalues enter the maximum (default 10, as in Figure 4.1).

    Examples
    --------
    >>> from arena import play
    >>> df = play("son", "ill_conditioned", n_actions=20, horizon=50, replicates=1,
    ...           player_params={"sketch": "full", "C": 1.0, "eta": 1.0},
    ...           metrics={"sketch_error": {"k": [3]}})
    >>> bool((df[df.metric == "sketch_error"].value < 1e-8).all())
    True

    References
    ----------
    Luo 2016, §4.4 (Algorithms 12–14) and Figure 4.1; Luo, Agarwal, Cesa-Bianchi & Langford
    (2016), "Efficient second order online learning by sketching", NIPS 29.
    """

    reads_points: ClassVar[bool] = False

    name = "sketch_error"
    param_name = "k"
    infinite_values = True  # a relative error where the exact eigenvalue is 0 (early rounds)
    protocols: ClassVar[frozenset[str]] = frozenset({"classification", "regression"})

    def __init__(self, k=(10,)):
        self.k = k

    def param_values(self, spec: GameSpec) -> list[int]:
        return self._param_list(self.k, int, lambda v: None if v >= 1 else "must be >= 1")

    def applicable(self, player: Any, adversary: Any) -> str | None:
        if not callable(getattr(player, "sketch_eigenvalues", None)):
            return "player exposes no sketch (sketch_eigenvalues)"
        if getattr(player, "diagonal", False):
            return "diagonal adaptation: the sketch sees D^{-1/2} g, not the arena's gradients"
        return super().applicable(player, adversary)

    def game_reason(self, spec: GameSpec) -> str | None:
        d = feature_dim(spec)
        if spec.n_replicates * d * d > MAX_STORED_FLOATS:
            return f"R·d² = {spec.n_replicates * d * d} floats exceed {MAX_STORED_FLOATS}"
        return None

    def attach(self, player: Any, adversary: Any) -> None:
        self._player = player

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        d = feature_dim(spec)
        self._ks = self.param_values(spec)
        self._gram = np.zeros((spec.n_replicates, d, d))

    def advance(self, block: OCOBlock, core: OCOCore) -> None:
        grads = np.asarray(block.dense_grads(self._spec.sigma), dtype=np.float64)
        n = grads.shape[1]
        weights = np.array([self._player.sketch_weight(block.t0 + i) for i in range(n)])
        scaled = grads * weights[None, :, None]
        self._gram += np.einsum("rnd,rne->rde", scaled, scaled)

    def values(self, core: OCOCore) -> np.ndarray:
        kmax = max(self._ks)
        exact = np.linalg.eigvalsh(self._gram)[:, ::-1]
        # eigenvalues below eigvalsh's round-off (d·ε·λ_1) are zero in both spectra: the
        # numerical rank, without which a rank-deficient G_tᵀG_t gives 1e-16/1e-16 ratios
        floor = exact.shape[1] * np.finfo(np.float64).eps * exact[:, :1]
        exact = np.where(exact > floor, exact, 0.0)
        width = min(kmax, exact.shape[1])
        padded = np.zeros((exact.shape[0], kmax))
        padded[:, :width] = exact[:, :width]
        estimate = np.asarray(self._player.sketch_eigenvalues(kmax), dtype=np.float64)
        estimate = np.where(estimate > floor, estimate, 0.0)
        errors = relative_eigen_errors(estimate, padded)
        return np.stack([errors[:, :k].max(axis=1) for k in self._ks], axis=1)

    def reference(self, record: OCORecord, param: float) -> float:
        """From the definition: ``Σ_s w_s² g_s g_sᵀ`` summed round by round from the record's
        gradients (``w_s``: the player's ``sketch_weight(s)``), its exact top eigenvalues against
        the player's estimate, with the metric's round-off floor."""
        player, ks = record.player, self.param_values(record.spec)
        kmax, dim = int(max(ks)), record.grads.shape[1]
        estimate = np.asarray(player.sketch_eigenvalues(kmax), dtype=np.float64)[record.replicate]
        gram = np.zeros((dim, dim))
        for s, g in enumerate(record.grads, start=1):
            v = player.sketch_weight(s) * g
            gram += np.outer(v, v)
        exact = np.linalg.eigvalsh(gram)[::-1]
        floor = dim * np.finfo(np.float64).eps * exact[0]
        exact = np.where(exact > floor, exact, 0.0)
        padded = np.zeros(kmax)
        padded[: min(kmax, dim)] = exact[: min(kmax, dim)]
        errors = relative_eigen_errors(np.where(estimate > floor, estimate, 0.0), padded)
        return float(errors[: int(param)].max())
