"""A multiclass linear target concept with margin γ and radius R, optional label noise."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.adversaries._oco_stream import (
    StreamAdversary,
    ball_points,
    haar_orthogonal,
    uniforms_from_normals,
)
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import POSITIVE, Interval
from arena.spec import AdversaryTags, GameSpec

CANDIDATES = 256
"""Candidate examples drawn per replicate at a time (a fixed number: see the class Notes)."""

MIN_ACCEPTANCE = 1e-3
"""Smallest fraction of candidates with margin ≥ γ tolerated after 50 draws of candidates."""


class MulticlassSeparableStream(StreamAdversary):
    """Examples uniform in the ball of radius R, labelled ``argmax_r ⟨u_r, x⟩`` with margin ≥ γ.

    The multiclass linear target concept ``y = argmax_r ⟨u, φ(x, r)⟩`` (Shalev-Shwartz 2007,
    §5.3.2, with ``φ(x, r) = e_r ⊗ x``), with margin, radius and label noise: the multiclass
    counterpart of ``separable_stream``.

    Parameters
    ----------
    n_classes : int
        The number of labels k ≥ 2. ``n_actions`` is the dimension ``k·d`` of ``w_t`` (default
        ``10k``: d = 10 features), and d ≥ k.
    margin : float
        γ > 0: every example has ``⟨u_y − u_r, x_t⟩ ≥ γ`` for r ≠ y under the planted unit
        ``U = (u_0, …, u_{k−1})`` (``‖U‖_F = 1``); it must be below the largest margin of the
        ball, ``R√k/(k−1)``.
    feature_radius : float
        R: every ``‖x_t‖₂ ≤ R``.
    noise : float
        Probability in [0, 1] that a label is replaced by one of the k − 1 others, uniformly.

    Notes
    -----
    Per replicate a random orthonormal frame ``V ∈ ℝ^{d×k}`` (k columns of a Haar-random
    orthogonal matrix) is drawn at reset and ``u_r = V(e_r − 1/k)/√(k−1)``: the k rows form a
    regular simplex of unit Frobenius norm, so every label is equally likely and
    ``⟨u_y − u_r, x⟩ = (a_y − a_r)/√(k−1)`` with ``a = Vᵀx``. Examples are drawn uniformly in
    the ball and kept when their margin is ≥ γ (rejection: exactly the uniform law on the ball
    conditioned on the margin); the clean label is ``argmax_r a_r``. The candidates come
    :data:`CANDIDATES` at a time per replicate, each costing d + 3 normals (direction, norm,
    noise, replacement label), and the accepted ones are served in order, so any split of the
    rounds into blocks gives the same stream. If fewer than :data:`MIN_ACCEPTANCE` of 50·256
    candidates are accepted the margin is refused (:class:`~arena.errors.ConfigError`).

    Comparator (oracle ``comparator``): ``U/γ`` (flattened), whose multiclass hinge is 0 on every
    clean example, with ``‖U/γ‖_F = 1/γ``. On clean data the multiclass Perceptron makes at most
    ``2R²/γ²`` mistakes (Crammer & Singer 2003; Shalev-Shwartz 2007, Corollary 5 on Kesler's
    examples ``z_t``, ``‖z_t‖ ≤ √2R``). The subgradient of the multiclass hinge is ``±x`` in two
    rows: ``‖∇f_t‖ ≤ √2R`` (the declared gradient bound).

    Examples
    --------
    >>> adv = MulticlassSeparableStream(n_classes=3, margin=0.1)
    >>> spec = GameSpec("multiclass", 12, 10, dim=12, n_classes=3)
    >>> adv.reset(spec, [np.random.default_rng(0)])
    >>> rd = adv.data_block(1, 10)
    >>> U = adv.comparator()[0].reshape(3, 4) * 0.1                  # the unit planted U
    >>> scores = rd.x[0] @ U.T
    >>> own = scores[np.arange(10), rd.y[0].astype(int)]
    >>> bool((own[:, None] - scores >= 0.1 - 1e-12).sum(axis=1).min() == 2)  # margin ≥ γ
    True

    References
    ----------
    Shalev-Shwartz 2007, §5.3.2 (multiclass categorization; the target concepts of its mistake
    bounds); Crammer & Singer (2003) (the multiclass margin and the 2R²/γ² mistake bound).
    """

    parameter_constraints: ClassVar = {
        "n_classes": [Interval(2, None, integer=True)],
        "margin": [POSITIVE],
        "feature_radius": [POSITIVE],
        "noise": [Interval(0, 1)],
    }
    tags = AdversaryTags(protocol="multiclass", oblivious=True, oracle=frozenset({"comparator"}))

    def __init__(
        self,
        n_classes: int = 4,
        margin: float = 0.05,
        feature_radius: float = 1.0,
        noise: float = 0.0,
    ):
        self.n_classes = n_classes
        self.margin = margin
        self.feature_radius = feature_radius
        self.noise = noise

    def declared_classes(self) -> int:
        return int(self.n_classes)

    def declared_loss(self) -> str:
        return "multiclass_hinge"

    def declared_domain(self) -> Domain:
        return Domain("unconstrained")

    def resolve_dim(self, requested: int | None, horizon: int | None = None) -> int:
        k = int(self.n_classes)
        dim = 10 * k if requested is None else int(requested)
        if dim % k or dim // k < k:
            raise ConfigError(
                self.label(),
                "n_actions",
                f"the dimension k·d of w_t must be a multiple of k = {k} with d ≥ k features "
                f"(at least {k * k}), got {dim}",
            )
        return dim

    def feature_bound(self) -> float:
        return float(self.feature_radius)

    def gradient_bound(self) -> float:
        return math.sqrt(2.0) * float(self.feature_radius)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        k = int(spec.n_classes)
        d = int(spec.dim) // k
        gamma, big_r = float(self.margin), float(self.feature_radius)
        largest = big_r * math.sqrt(k) / (k - 1)
        if gamma >= largest:  # depends on k and R as well
            raise ConfigError(
                self.label(),
                "margin",
                f"must be below R√k/(k−1) = {largest:.6g}, the largest margin in the ball",
            )
        self._k, self._d, self._gamma, self._big_r = k, d, gamma, big_r
        self._rngs = list(rngs)
        frames = [haar_orthogonal(rng, d)[:, :k] for rng in self._rngs]
        self._frames = np.stack(frames)  # (R, d, k), orthonormal columns
        centred = np.eye(k) - 1.0 / k
        self._u = np.einsum("rdk,kj->rjd", self._frames, centred) / math.sqrt(k - 1)
        n_rep = len(self._rngs)
        # accepted examples not served yet (fewer than CANDIDATES): a fixed-size state
        self._buf_x = np.empty((n_rep, CANDIDATES, d))
        self._buf_y = np.empty((n_rep, CANDIDATES))
        self._buf_n = np.zeros(n_rep, dtype=np.int64)
        self._drawn = np.zeros(n_rep, dtype=np.int64)
        self._kept = np.zeros(n_rep, dtype=np.int64)
        self._start_stream()

    def comparator(self) -> np.ndarray:
        return self._u.reshape(len(self._rngs), -1) / self._gamma

    def _candidates(self, r: int) -> tuple[np.ndarray, np.ndarray]:
        """Draw :data:`CANDIDATES` examples for replicate r; return those with margin ≥ γ."""
        k, d = self._k, self._d
        z = self._rngs[r].standard_normal((CANDIDATES, d + 3))
        u = uniforms_from_normals(z[:, d:])
        x = ball_points(z[:, :d], u[:, 0], self._big_r)
        a = x @ self._frames[r]
        top2 = np.sort(a, axis=1)[:, -2:]
        keep = (top2[:, 1] - top2[:, 0]) / math.sqrt(k - 1) >= self._gamma
        clean = np.argmax(a, axis=1)
        shift = 1 + np.minimum((u[:, 2] * (k - 1)).astype(np.int64), k - 2)
        label = np.where(u[:, 1] < float(self.noise), (clean + shift) % k, clean)
        self._drawn[r] += CANDIDATES
        self._kept[r] += int(keep.sum())
        if self._drawn[r] >= 50 * CANDIDATES and self._kept[r] < MIN_ACCEPTANCE * self._drawn[r]:
            raise ConfigError(
                self.label(),
                "margin",
                f"only {self._kept[r]} of {self._drawn[r]} examples drawn in the ball have margin "
                f"≥ {self._gamma} (k = {k}, d = {d}); choose a smaller margin",
            )
        return x[keep], label[keep].astype(np.float64)

    def _generate(self, n: int) -> RoundData:
        n_rep = len(self._rngs)
        x = np.empty((n_rep, n, self._d))
        y = np.empty((n_rep, n))
        for r in range(n_rep):
            have = int(self._buf_n[r])
            take = min(have, n)  # first the examples kept from the last draw, in order
            x[r, :take], y[r, :take] = self._buf_x[r, :take], self._buf_y[r, :take]
            rest = have - take
            self._buf_x[r, :rest] = self._buf_x[r, take:have]
            self._buf_y[r, :rest] = self._buf_y[r, take:have]
            self._buf_n[r] = rest
            while take < n:
                cx, cy = self._candidates(r)
                m = min(cx.shape[0], n - take)
                x[r, take : take + m], y[r, take : take + m] = cx[:m], cy[:m]
                take += m
                left = cx.shape[0] - m
                self._buf_x[r, :left], self._buf_y[r, :left] = cx[m:], cy[m:]
                self._buf_n[r] = left
        return RoundData(x=x, y=y)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"n_classes": 3, "margin": 0.1, "feature_radius": 2.0, "noise": 0.1}
