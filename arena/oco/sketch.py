"""Second-order players' own measures: their sketch's accuracy, their regret on the invariant set.

``sketch_error`` — ``max_{i≤k} |λ̂_i − λ_i| / λ_i``, where ``λ_i`` is the i-th largest eigenvalue
of ``G_tᵀG_t = Σ_{s≤t} ĝ_sĝ_sᵀ`` (the to-sketch vectors ``ĝ_s = √(σ + η_s) g_s`` of Sketched
Online Newton, accumulated by the metric from the arena's gradients) and ``λ̂_i`` the player's
estimate (:meth:`arena.players.son.SON.sketch_eigenvalues`). This is the quantity of Luo 2016,
Figure 4.1 (top-10 eigenvalues ``tΛ_{t,i}`` of Oja's sketch).

``invariant_regret`` — ``R_t = Σ_{s≤t} f_s(w_s) − min_{w∈K} F_t(w)`` over the invariant set
``K = {w : |⟨w, x_s⟩| ≤ C, s ≤ t}`` of Luo 2016, §4.1 (Eq. 4.1), with the player's C: the
regret Theorems 16 and 18 bound; beside it ``bound:invariant_regret``, the player's bound at the
best comparator's norm.

References
----------
Luo 2016, §4.1, §4.4.3 and §4.6.1, Figure 4.1, Theorems 16 and 18; Luo, Agarwal, Cesa-Bianchi &
Langford (2016).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from arena.errors import ArenaError
from arena.oco.components import feature_dim
from arena.oco.losses import dense_features
from arena.oco.metrics import (
    MAX_STORED_FLOATS,
    OCOBlock,
    OCOCore,
    OCOMetric,
    OCORecord,
    learner_loss_bruteforce,
)
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
    ``w_s = √(σ + η_s)`` (:meth:`arena.players.son.SON.sketch_weight`) and ``g_s`` the arena's
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


SLAB_GAP = 1e-9
"""Relative suboptimality at which :func:`best_in_slab` stops: its barrier method ends within
``2t·τ + λ²/2`` of the minimum (Boyd & Vandenberghe 2004, §11.2.2 and §9.5.1; λ the last Newton
decrement), stopped once that is at most ``SLAB_GAP·max(1, ½‖y‖²)``: far below the regrets it
is subtracted from (tens to thousands)."""


def best_in_slab(x: np.ndarray, y: np.ndarray, c: float) -> tuple[np.ndarray, float]:
    """Return the minimum-norm minimizer of ``½‖Xw − y‖²`` over ``{w : |⟨w, x_s⟩| ≤ c ∀s}`` and
    the minimum.

    ``x`` (t, d), ``y`` (t,), ``c > 0``. With ``X = U S Vᵀ`` (thin SVD, singular values below
    ``max(t, d)·ε·s_1`` dropped) and ``v = S Vᵀw``, the problem is the projection of ``Uᵀy``
    onto the polytope ``{v : |Uv|_∞ ≤ c}``, solved by the log-barrier method with Newton steps
    (Boyd & Vandenberghe 2004, §11.3) from the strictly feasible ``v = 0``, barrier weight τ
    divided by 20 per stage until ``2t·τ`` and the last stage's ``λ²/2`` are each at most half of
    :data:`SLAB_GAP` ``·max(1, ½‖y‖²)``; every iterate
    is strictly feasible, so the returned ``w = V S^{-1} v`` lies in the set (up to the rounding
    of ``Xw``) whatever the stopping point, and its value is at most :data:`SLAB_GAP` (relative)
    above the minimum. A last stage that stops before its decrement reaches the target (200
    Newton steps, or a line search below 1e-12) raises :class:`~arena.errors.ArenaError`: the
    value would then carry no certificate.

    Examples
    --------
    >>> w, best = best_in_slab(np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([3.0, 0.5]), 1.0)
    >>> np.round(w, 4).tolist(), round(best, 6)  # x₁: 3 clipped to 1; x₂: 0.5 reachable
    ([1.0, 0.25], 2.0)
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    t, d = x.shape
    if t == 0:
        return np.zeros(d), 0.0
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    keep = s > max(t, d) * np.finfo(np.float64).eps * s[0] if s[0] > 0 else s > 0
    u, s, vt = u[:, keep], s[keep], vt[keep]
    b = u.T @ y
    v = np.zeros(len(s))
    rest = 0.5 * float(y @ y - b @ b)  # the part of ½‖y‖² outside range(X)

    def barrier_value(v: np.ndarray, tau: float) -> float:
        a = u @ v
        lo, hi = c + a, c - a
        if np.any(lo <= 0.0) or np.any(hi <= 0.0):
            return math.inf
        return 0.5 * float((v - b) @ (v - b)) - tau * float(np.log(lo).sum() + np.log(hi).sum())

    target = SLAB_GAP * max(1.0, 0.5 * float(y @ y))
    tau = 1.0
    while True:
        decrement = math.inf
        for _ in range(200):  # Newton's method on the barrier problem of weight tau
            a = u @ v
            lo, hi = c + a, c - a
            grad = v - b + tau * (u.T @ (1.0 / hi - 1.0 / lo))
            hess = np.eye(len(v)) + tau * (u.T * (1.0 / hi**2 + 1.0 / lo**2)) @ u
            step = -np.linalg.solve(hess, grad)
            decrement = -float(grad @ step)  # λ², the Newton decrement squared
            if decrement <= target:  # λ²/2 ≤ target/2 above this stage's minimum
                break
            da = u @ step
            room = np.concatenate([hi[da > 0] / da[da > 0], lo[da < 0] / -da[da < 0]])
            size = min(1.0, 0.99 * float(room.min())) if room.size else 1.0
            now = barrier_value(v, tau)
            while barrier_value(v + size * step, tau) > now - 0.25 * size * decrement:
                size *= 0.5
                if size < 1e-12:
                    break
            if size < 1e-12:
                break
            v = v + size * step
        if 2.0 * t * tau <= 0.5 * target:
            break
        tau *= 0.05
    if not decrement <= target:  # the last stage stopped short: the gap above is not certified
        raise ArenaError(
            f"best_in_slab: the barrier method stopped short of its accuracy (Newton decrement² "
            f"{decrement:.3g} > {target:.3g} after 200 steps or a vanishing line search; t = {t}, "
            f"d = {d}, c = {c})"
        )
    w = vt.T @ (v / s)
    return w, 0.5 * float((v - b) @ (v - b)) + rest


class InvariantRegret(OCOMetric):
    """Regret to the best comparator of the invariant set, the regret Luo 2016's Thms 16 and 18
    bound: ``R_t = Σ_{s≤t} f_s(w_s) − min_{w∈K_t} F_t(w)``, ``K_t = {w : |⟨w, x_s⟩| ≤ C, s ≤ t}``.

    Luo 2016, §4.1 (Eq. 4.1) measures Sketched Online Newton against the comparators whose
    predictions on the examples seen are bounded by C (``R_T = sup_{w∈K} R_T(w)``), not against
    a norm ball: K is invariant under ``x ↦ Mx``. C is the player's own (its attribute ``C``,
    the bound its projection enforces); the best comparator is found by :func:`best_in_slab`
    over the stored examples (O(R·t·d) state; squared loss ``½(p − y)²`` only, whose minimum
    over K is that projection problem).

    Where the player declares ``invariant_regret_bound(norms, spectrum)``
    (:class:`arena.players.son.SON`: ``full``, ``fd`` and ``fd_epoch`` with a known L), the metric
    also logs ``bound:invariant_regret``, that bound at the best comparator's norm: Luo 2016,
    Theorem 16 (full) or Theorem 18 (Frequent Directions) holds for every ``w ∈ K``, so
    ``R_t ≤ bound`` on every sequence meeting the theorems' assumptions, and the report's
    measured / bound table shows how close it comes. For a player with ``sketch_weight`` the
    metric also keeps ``Σ_s ĝ_sĝ_sᵀ`` (``ĝ_s = √(σ + η_s) g_s``, O(R·d²)) and passes its
    spectrum, with which Thm 18's sketching term ``mΩ_k/(m − k)`` is taken at its best k.

    Examples
    --------
    >>> from arena import play
    >>> df = play("son", "ill_conditioned", n_actions=5, horizon=60, replicates=1,
    ...           player_params={"sketch": "full", "C": 1.0, "sigma": 0.125, "eta": 0.0},
    ...           adversary_params={"n_large": 2}, metrics={"invariant_regret": {}})
    >>> last = df[df.t == 60].set_index("metric").value
    >>> bool(0.0 < last["invariant_regret"] <= last["bound:invariant_regret"])
    True

    References
    ----------
    Luo 2016, §4.1 (Eq. 4.1), §4.3 (Theorem 16) and §4.4.2 (Theorem 18).
    """

    reads_points: ClassVar[bool] = False

    name = "invariant_regret"
    protocols: ClassVar[frozenset[str]] = frozenset({"classification", "regression"})

    def applicable(self, player: Any, adversary: Any) -> str | None:
        c = getattr(player, "C", None)
        if not isinstance(c, int | float) or isinstance(c, bool) or not c > 0:
            return "player bounds no predictions (no C > 0): its invariant set K is undefined"
        return super().applicable(player, adversary)

    def game_reason(self, spec: GameSpec) -> str | None:
        if spec.loss != "squared" or spec.sigma:
            return "the best comparator of K is solved for the squared loss (no σ-term) only"
        need = spec.n_replicates * spec.horizon * (feature_dim(spec) + 1)
        if need > MAX_STORED_FLOATS:
            return f"the history needs R·T·(d+1) = {need} floats"
        return None

    def attach(self, player: Any, adversary: Any) -> None:
        self._c = float(player.C)
        declares = getattr(player, "invariant_regret_bound", None)
        self._player = player if callable(declares) and declares(0.0) is not None else None
        weight = getattr(player, "sketch_weight", None)
        self._weight = weight if self._player is not None and callable(weight) else None

    def row_keys(self, spec: GameSpec) -> list[tuple[str, float]]:
        keys = [(self.name, math.nan)]
        if getattr(self, "_player", None) is not None:
            keys.append((f"bound:{self.name}", math.nan))
        return keys

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._x = np.empty((spec.n_replicates, spec.horizon, feature_dim(spec)))
        self._y = np.empty((spec.n_replicates, spec.horizon))
        self._t = 0
        d = feature_dim(spec)
        self._gram = np.zeros((spec.n_replicates, d, d)) if self._weight is not None else None

    def advance(self, block: OCOBlock, core: OCOCore) -> None:
        n = block.data.y.shape[1]
        self._x[:, self._t : self._t + n] = dense_features(block.data.x)
        self._y[:, self._t : self._t + n] = block.data.y
        self._t += n
        if self._gram is not None:  # Σ_s ĝ_sĝ_sᵀ, ĝ_s = √(σ + η_s) g_s, as sketch_error keeps it
            grads = np.asarray(block.dense_grads(self._spec.sigma), dtype=np.float64)
            weights = np.array([self._weight(block.t0 + i) for i in range(n)])
            scaled = grads * weights[None, :, None]
            self._gram += np.einsum("rnd,rne->rde", scaled, scaled)

    def values(self, core: OCOCore) -> np.ndarray:
        n_rep, t = self._spec.n_replicates, self._t
        best, norms = np.empty(n_rep), np.empty(n_rep)
        for r in range(n_rep):
            w, best[r] = best_in_slab(self._x[r, :t], self._y[r, :t], self._c)
            norms[r] = np.linalg.norm(w)
        cols = [core.learner - best]
        if self._player is not None:
            spectrum = None if self._gram is None else np.linalg.eigvalsh(self._gram)
            bound = self._player.invariant_regret_bound(norms, spectrum)
            cols.append(np.asarray(bound, dtype=np.float64))
        return np.stack(cols, axis=1)

    def reference(self, record: OCORecord, param: float) -> float:
        """From the definition: the learner's losses added round by round, less the least
        ``Σ_s ½(⟨w, x_s⟩ − y_s)²`` over ``|⟨w, x_s⟩| ≤ C`` for the record's examples
        (:func:`best_in_slab`, the one solver of this problem, on the record's rows)."""
        x = np.asarray(dense_features(record.data.x), dtype=np.float64).reshape(record.t, -1)
        _, best = best_in_slab(x, np.asarray(record.data.y, dtype=np.float64), self._c_of(record))
        return learner_loss_bruteforce(record) - best

    @staticmethod
    def _c_of(record: OCORecord) -> float:
        return float(record.player.C)

    def reference_rows(self, records) -> list[tuple[str, float, list[float]]]:
        """The regret, and where the player declares it the bound at each replicate's best
        comparator norm (the player's ``invariant_regret_bound``, read after round t)."""
        rows = [(self.name, math.nan, [self.reference(rec, math.nan) for rec in records])]
        player = records[0].player
        declares = getattr(player, "invariant_regret_bound", None)
        if callable(declares) and declares(0.0) is not None:
            weight = getattr(player, "sketch_weight", None)
            norms = np.zeros(len(records))
            spectra = None
            for rec in records:
                x = np.asarray(dense_features(rec.data.x), dtype=np.float64).reshape(rec.t, -1)
                w, _ = best_in_slab(x, np.asarray(rec.data.y, dtype=np.float64), self._c_of(rec))
                norms[rec.replicate] = np.linalg.norm(w)
                if callable(weight):  # Σ_s ĝ_sĝ_sᵀ round by round from the record's gradients
                    gram = np.zeros((rec.grads.shape[1],) * 2)
                    for s, g in enumerate(rec.grads, start=1):
                        v = weight(s) * np.asarray(g, dtype=np.float64)
                        gram += np.outer(v, v)
                    if spectra is None:
                        spectra = np.zeros((len(records), gram.shape[0]))
                    spectra[rec.replicate] = np.linalg.eigvalsh(gram)
            bound = np.asarray(declares(norms, spectra), dtype=np.float64)
            rows.append(
                (f"bound:{self.name}", math.nan, [float(bound[r.replicate]) for r in records])
            )
        return rows
