"""Drifting games with a continuum of chips (DGv3): the OCO metrics ``dg_volume`` and
``volume_quantile_regret``.

Luo 2016 (Appendix A.3) models OCO as a drifting game: every point ``w`` of the domain K is a chip
at ``s_t(w) = Σ_{τ≤t} (f_τ(w) − f_τ(w_τ)) = −R_t(w)``, and the player's DGv3 loss is the volume
``∫_K 1{s_t(w) ≤ −R} dw``. :class:`DGVolume` logs it as a fraction of vol(K), computed by the
midpoint rule on a fixed grid, and :class:`VolumeQuantileRegret` the OCO ε-regret it induces
(the regret to the best point of K once the best ε fraction of its volume is removed). The
bandit game's random chips (DGv2) are in :mod:`arena.bandit.drifting`; the experts' chips
(DGv1) in :mod:`arena.metrics.drifting`.

References
----------
Luo 2016, *Optimal and Adaptive Online Learning*, PhD thesis, Princeton University, §2.1.5 and
Appendix A.3 (DGv3, the OCO ε-regret, Algorithm 25, Theorem 22).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from arena.metrics.base import exact_quantile_rank
from arena.metrics.drifting import TIE_TOL, _fractions, _reach
from arena.oco.domains import Domain
from arena.oco.losses import RoundData, dense_features, prediction_loss
from arena.oco.metrics import OCOBlock, OCOCore, OCOMetric, OCORecord
from arena.spec import GameSpec

# ---------------------------------------------------------------------------------------------
# DGv3: a continuum of chips, one per point of the OCO domain

GRID_DOMAINS = ("box", "ball")
"""Domain kinds the grid metrics cover (for d ≤ 2)."""

DEFAULT_GRID = {1: 1024, 2: 128}
"""Default grid cells per axis by dimension (1024 cells on a segment, 128² on a square)."""

ROUND_BATCH_FLOATS = 2_000_000
"""Most values ``f_τ(w)`` evaluated at once (rounds × grid points × replicates): 16 MB."""


def domain_grid(domain: Domain, dim: int, cells: int) -> np.ndarray:
    """Return the midpoints of the grid cells that represent the domain, shape (G, d).

    The bounding cube ``[−r, r]^d`` is cut into ``cells^d`` equal cells; a box keeps them all, a
    ball keeps those whose centre lies in it (for d = 1 the ball is the box). Each kept cell has
    the same volume, so the volume fraction of a set is the fraction of kept centres in it.

    Examples
    --------
    >>> domain_grid(Domain("box", 1.0), 1, 4).ravel().tolist()
    [-0.75, -0.25, 0.25, 0.75]
    >>> len(domain_grid(Domain("ball", 1.0), 2, 4))  # the 4 corner cells lie outside the disc
    12
    """
    r = float(domain.radius)
    axis = -r + (np.arange(cells) + 0.5) * (2.0 * r / cells)
    points = np.stack(np.meshgrid(*([axis] * dim), indexing="ij"), axis=-1).reshape(-1, dim)
    if domain.kind == "ball" and dim > 1:
        points = points[np.einsum("gd,gd->g", points, points) <= r * r]
    return np.ascontiguousarray(points)


def grid_reason(spec: GameSpec) -> str | None:
    """Return why the grid metrics cannot cover this game's domain, or None."""
    if spec.domain.kind not in GRID_DOMAINS:
        return f"needs a box or ball domain (a volume to measure), not {spec.domain.kind}"
    if spec.dim > 2:
        return (
            f"integrates over the domain on a grid, only for d ≤ 2 (here d = {spec.dim}); the "
            "grid would need cells^d points"
        )
    return None


def grid_total_losses(spec: GameSpec, points: np.ndarray, data: RoundData) -> np.ndarray:
    """Return ``Σ_τ f_τ(w)`` over the rounds of a block for every grid point, shape (R, G).

    Linear losses and the σ-term through their round sums (``⟨Σ g_τ, w⟩``,
    ``σ/2 (n‖w‖² − 2⟨Σ z_τ, w⟩ + Σ‖z_τ‖²)``), example losses by evaluating every round at every
    point, a few rounds at a time (:data:`ROUND_BATCH_FLOATS`).
    """
    if spec.loss == "linear":
        total = np.asarray(data.g, dtype=np.float64).sum(axis=1) @ points.T
        n = data.g.shape[1]
    else:
        x = np.asarray(dense_features(data.x), dtype=np.float64)
        y = np.asarray(data.y, dtype=np.float64)
        n_rep, n, _ = x.shape
        total = np.zeros((n_rep, points.shape[0]))
        step = max(1, ROUND_BATCH_FLOATS // max(1, n_rep * points.shape[0]))
        for j in range(0, n, step):
            pred = np.einsum("rnd,gd->rng", x[:, j : j + step], points)
            total += prediction_loss(spec.loss, pred, y[:, j : j + step, None])[0].sum(axis=1)
    if spec.sigma:
        sq = np.einsum("gd,gd->g", points, points)
        total = total + 0.5 * spec.sigma * n * sq
        if data.z is not None:
            z = np.asarray(data.z, dtype=np.float64)
            total = total + 0.5 * spec.sigma * (
                -2.0 * (z.sum(axis=1) @ points.T) + np.einsum("rnd,rnd->r", z, z)[:, None]
            )
    return total


def grid_regrets_bruteforce(spec: GameSpec, points, w, data: RoundData):
    """Return ``(Σ_τ f_τ(w_τ), [R_T(u) for u in points])`` of one replicate by a plain loop over
    rounds and points (tests), ``R_T(u) = Σ_τ (f_τ(w_τ) − f_τ(u))``. ``w`` (T, d) are the points
    played and ``data`` the rounds with the round axis first (``g`` or ``x, y``, and ``z``).

    Examples
    --------
    >>> spec = GameSpec("oco", 1, 2, (0.0, 1.0), dim=1, domain=Domain("box"), loss="linear")
    >>> grid_regrets_bruteforce(spec, [[-1.0], [1.0]], [[0.0], [0.5]], RoundData(g=[[1.0]] * 2))
    (0.5, [2.5, -1.5])
    """

    def f(t: int, u) -> float:
        if spec.loss == "linear":
            value = sum(float(a) * float(b) for a, b in zip(data.g[t], u, strict=True))
        else:
            pred = sum(float(a) * float(b) for a, b in zip(data.x[t], u, strict=True))
            value = float(prediction_loss(spec.loss, np.array(pred), np.array(data.y[t]))[0])
        if spec.sigma:
            z = [0.0] * len(u) if data.z is None else data.z[t]
            pairs = zip(u, z, strict=True)
            value += 0.5 * spec.sigma * sum((float(a) - float(b)) ** 2 for a, b in pairs)
        return value

    learner = sum(f(t, w[t]) for t in range(len(w)))
    return learner, [learner - sum(f(t, u) for t in range(len(w))) for u in points]


class _GridMetric(OCOMetric):
    """Running ``F_t(w) = Σ_{τ≤t} f_τ(w)`` at the points of a fixed grid of the domain."""

    reads_points: ClassVar[bool] = False

    def grid_cells(self, spec: GameSpec) -> int:
        """Return the cells per axis in use (the ``grid`` parameter or :data:`DEFAULT_GRID`)."""
        from arena.errors import ConfigError

        if self.grid is None:
            return DEFAULT_GRID.get(spec.dim, 1)
        cells = self.grid
        if isinstance(cells, bool) or not isinstance(cells, int | np.integer) or cells < 1:
            raise ConfigError(
                f"metric {self.name}", "grid", f"must be an integer ≥ 1, got {cells!r}"
            )
        return int(cells)

    def game_reason(self, spec: GameSpec) -> str | None:
        reason = grid_reason(spec)
        if reason is None:
            cells = self.grid_cells(spec)
            if spec.n_replicates * cells**spec.dim > 50_000_000:
                return f"the grid needs R·cells^d = {spec.n_replicates * cells**spec.dim} floats"
        return reason

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._points = domain_grid(spec.domain, spec.dim, self.grid_cells(spec))
        self._totals = np.zeros((spec.n_replicates, self._points.shape[0]))

    def advance(self, block: OCOBlock, core: OCOCore) -> None:
        self._totals += grid_total_losses(self._spec, self._points, block.data)

    def regrets_bruteforce(self, record: OCORecord) -> list[float]:
        """``R_t(u)`` at every grid point of one replicate (:func:`grid_regrets_bruteforce`),
        kept for the record's other params (the plain loop over rounds and points is slow)."""
        cached = getattr(self, "_reference_regrets", None)
        if cached is not None and cached[0] is record:
            return cached[1]
        points = domain_grid(record.spec.domain, record.spec.dim, self.grid_cells(record.spec))
        regrets = grid_regrets_bruteforce(record.spec, points, record.w, record.data)[1]
        self._reference_regrets = (record, regrets)
        return regrets

    def grid_regrets(self, core: OCOCore) -> np.ndarray:
        """Return ``R_t(w) = Σ_τ f_τ(w_τ) − F_t(w)`` at every grid point, shape (R, G)."""
        return core.learner[:, None] - self._totals


class DGVolume(_GridMetric):
    """Fraction of the OCO domain's volume whose regret ``R_t(w)`` is at least R (DGv3).

    Every point w of the domain K is a chip at ``s_t(w) = Σ_{τ≤t} (f_τ(w) − f_τ(w_τ)) =
    −R_t(w)``, and the player's DGv3 loss is ``∫_K 1{s_t(w) ≤ −R} dw`` (Luo 2016, Figure A.2;
    Algorithm 25, lines 8-9); the value is that volume divided by vol(K), the continuous
    counterpart of ``dg_score``. By Theorem 22, a player with ``dg_volume_T(R) < ε`` has
    ε-regret below R (:class:`VolumeQuantileRegret`) and regret below ``R + Tε^{1/d}``.

    Computed for box and ball domains in dimension d ≤ 2 by the midpoint rule on a fixed grid
    (:func:`domain_grid`): ``F_t(w) = Σ_τ f_τ(w)`` is kept at every grid point, streamed chunk
    by chunk (O(G) per chunk for linear losses, O(n·G) for example losses), and the fraction of
    grid points with ``R_t(w) ≥ R`` is logged (ties within
    :data:`~arena.metrics.drifting.TIE_TOL` count). Other domains and d > 2 are skipped with a
    reason. Quadrature error: ``R_t`` is concave (each ``f_τ`` is convex), so
    ``{w : R_t(w) ≥ R}`` is convex, and only cells its boundary crosses (and, for the disc, the
    disc's own boundary) can be miscounted: O(cells^{d−1}) of the O(cells^d) cells, an error
    O(1/cells). On a segment (d = 1) the set is an interval, whose two ends each misplace at
    most half a cell: the error is at most ``1/cells`` exactly.

    Parameters
    ----------
    R : list of float
        Thresholds, in loss units.
    grid : int or None
        Cells per axis of the bounding cube (default: 1024 for d = 1, 128 for d = 2).

    Examples
    --------
    >>> from arena import play
    >>> df = play("ogd", "random_linear", n_actions=1, horizon=100,
    ...           metrics={"dg_volume": {"R": [10.0]}})
    >>> 0.0 < float(df.value.iloc[-1]) < 1.0  # part of [−1, 1] beats the learner by 10
    True

    References
    ----------
    Luo 2016, PhD thesis, Appendix A.3: Figure A.2 (DGv3), Algorithm 25, Theorem 22.
    """

    name = "dg_volume"
    param_name = "R"

    def __init__(self, R=(1.0, 5.0, 10.0, 20.0), grid: int | None = None):
        self.R = R
        self.grid = grid

    def param_values(self, spec: GameSpec) -> list[float]:
        self.grid_cells(spec)  # validated with the thresholds, before any round
        return self._param_list(
            self.R, float, lambda v: None if math.isfinite(v) else "R must be finite"
        )

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._reach = _reach(self.param_values(spec))

    def values(self, core: OCOCore) -> np.ndarray:
        return _fractions(self.grid_regrets(core), self._reach)

    def reference(self, record: OCORecord, param: float) -> float:
        """The fraction of grid points whose brute-force regret reaches R (ties within
        :data:`~arena.metrics.drifting.TIE_TOL`)."""
        regrets = self.regrets_bruteforce(record)
        cut = param - TIE_TOL * max(1.0, abs(param))
        return sum(1 for v in regrets if v >= cut) / len(regrets)


class VolumeQuantileRegret(_GridMetric):
    """The OCO ε-regret of Luo 2016: the regret to K once its best ε fraction of volume is removed.

    Appendix A.3 defines ``R_T^ε = Σ_t f_t(w_t) − inf_{w ∈ K∖K_ε} Σ_t f_t(w)`` with ``K_ε`` the
    ε fraction of K's volume of least cumulative loss; it is the upper ε-quantile of ``R_t(w)``
    for w uniform on K, the continuous ``quantile_regret``. On the grid of :class:`DGVolume`
    with G points it is the ``k``-th largest grid regret, ``k = ⌈εG⌉`` (exact rational
    arithmetic, :func:`~arena.metrics.base.exact_quantile_rank`), so that, as for the experts,
    ``volume_quantile_regret(ε) < R ⟺ dg_volume(R) < k/G``. Theorem 22: a potential with
    ``Φ_T ≥ 1{s ≤ −R}`` and ``Φ_0(0) < ε`` gives Algorithm 25 ``R_T^ε < R``.

    Parameters
    ----------
    eps : list of float
        Volume fractions in (0, 1].
    grid : int or None
        Cells per axis (as :class:`DGVolume`).

    Examples
    --------
    >>> from arena import play
    >>> df = play("ogd", "random_linear", n_actions=2, horizon=50,
    ...           metrics={"volume_quantile_regret": {"eps": [0.01, 0.5], "grid": 32}})
    >>> last = df[df.t == 50].set_index("param").value
    >>> bool(last[0.01] >= last[0.5])
    True
    """

    name = "volume_quantile_regret"
    param_name = "eps"

    def __init__(self, eps=(0.01, 0.1), grid: int | None = None):
        self.eps = eps
        self.grid = grid

    def param_values(self, spec: GameSpec) -> list[float]:
        self.grid_cells(spec)
        return self._param_list(
            self.eps, float, lambda v: None if 0.0 < v <= 1.0 else "eps must be in (0, 1]"
        )

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        size = self._points.shape[0]
        self._ranks = [exact_quantile_rank(e, size) for e in self.param_values(spec)]

    def values(self, core: OCOCore) -> np.ndarray:
        ordered = -np.sort(-self.grid_regrets(core), axis=1)  # descending
        return np.stack([ordered[:, k - 1] for k in self._ranks], axis=1)

    def reference(self, record: OCORecord, param: float) -> float:
        """The ``⌈εG⌉``-th largest of the brute-force grid regrets (a full sort)."""
        regrets = self.regrets_bruteforce(record)
        return float(sorted(regrets, reverse=True)[exact_quantile_rank(param, len(regrets)) - 1])
