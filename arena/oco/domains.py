"""Feasible sets of the OCO protocol: unconstrained, L2 ball, box and probability simplex.

A :class:`Domain` is where the player's point ``w_t`` must lie (the engine checks it every round)
and where the comparator of the ``regret`` metric lives. Projections are batched over a leading
replicate axis and numba-friendly kernels sit beside them for players' block kernels.

References
----------
Shalev-Shwartz 2007, §4.2, Example 1 (Euclidean projection onto a convex set); §7.1.1, Figure 7.1
(projection onto the simplex by sorting).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numba import njit

DomainKind = Literal["unconstrained", "ball", "box", "simplex"]

DOMAIN_KINDS: tuple[str, ...] = ("unconstrained", "ball", "box", "simplex")

MEMBERSHIP_TOL = 1e-9
"""Relative slack (× max(1, radius)) allowed when the engine checks ``w_t`` against the domain;
projections computed in float64 land within ~1e-15 relative, so 1e-9 only catches real escapes."""


@dataclass(frozen=True)
class Domain:
    """A convex feasible set ``K ⊆ ℝ^d`` of the OCO protocol.

    Parameters
    ----------
    kind : {"unconstrained", "ball", "box", "simplex"}
        ``ball``: ``{‖w‖₂ ≤ radius}``; ``box``: ``{‖w‖_∞ ≤ radius}``; ``simplex``: the probability
        simplex ``{w ≥ 0, Σ w = 1}`` (``radius`` is ignored); ``unconstrained``: ``ℝ^d``.
    radius : float
        Radius of the ball or half-width of the box.

    Examples
    --------
    >>> Domain("ball", 2.0).project(np.array([[3.0, 4.0]]))
    array([[1.2, 1.6]])
    >>> Domain("box", 1.0).diameter(4), Domain("simplex").diameter(3)
    (4.0, 1.4142135623730951)
    """

    kind: DomainKind = "unconstrained"
    radius: float = 1.0

    def validate(self, component: str) -> None:
        """Raise :class:`~arena.errors.ConfigError` (naming ``component``) for an invalid domain."""
        from arena.errors import ConfigError

        if self.kind not in DOMAIN_KINDS:
            raise ConfigError(
                component, "domain", f"must be one of {DOMAIN_KINDS}, got {self.kind!r}"
            )
        if self.kind in ("ball", "box") and not (math.isfinite(self.radius) and self.radius > 0):
            raise ConfigError(component, "radius", f"must be finite and > 0, got {self.radius!r}")

    @property
    def bounded(self) -> bool:
        """Whether the set is bounded (every kind except ``unconstrained``)."""
        return self.kind != "unconstrained"

    def diameter(self, dim: int) -> float:
        """Return the Euclidean diameter ``max_{u,v∈K} ‖u − v‖₂`` (``inf`` if unbounded)."""
        if self.kind == "ball":
            return 2.0 * self.radius
        if self.kind == "box":
            return 2.0 * self.radius * math.sqrt(dim)
        if self.kind == "simplex":
            return math.sqrt(2.0) if dim > 1 else 0.0
        return math.inf

    def max_norm(self, dim: int) -> float:
        """Return ``max_{u∈K} ‖u‖₂`` (``inf`` if unbounded)."""
        if self.kind == "ball":
            return self.radius
        if self.kind == "box":
            return self.radius * math.sqrt(dim)
        if self.kind == "simplex":
            return 1.0
        return math.inf

    def project(self, w: np.ndarray) -> np.ndarray:
        """Return the Euclidean projection of each row (last axis) of ``w`` onto the domain."""
        w = np.asarray(w, dtype=np.float64)
        if self.kind == "ball":
            norms = np.linalg.norm(w, axis=-1, keepdims=True)
            scale = np.minimum(1.0, self.radius / np.maximum(norms, 1e-300))
            return w * scale
        if self.kind == "box":
            return np.clip(w, -self.radius, self.radius)
        if self.kind == "simplex":
            return project_simplex(w)
        return w.copy()

    def violation(self, w: np.ndarray) -> np.ndarray:
        """Return how far each row of ``w`` lies outside the domain (0 inside)."""
        w = np.asarray(w, dtype=np.float64)
        if self.kind == "ball":
            return np.maximum(np.linalg.norm(w, axis=-1) - self.radius, 0.0)
        if self.kind == "box":
            return np.maximum(np.abs(w).max(axis=-1) - self.radius, 0.0)
        if self.kind == "simplex":
            neg = np.maximum(-w.min(axis=-1), 0.0)
            return np.maximum(neg, np.abs(w.sum(axis=-1) - 1.0))
        return np.zeros(w.shape[:-1])

    def contains(self, w: np.ndarray, tol: float = MEMBERSHIP_TOL) -> np.ndarray:
        """Return which rows of ``w`` lie in the domain up to ``tol·max(1, radius)``."""
        return self.violation(w) <= tol * max(1.0, self.radius if self.kind != "simplex" else 1.0)

    def min_linear(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(min_{u∈K} ⟨g, u⟩, argmin)`` for each row of ``g`` (closed forms).

        Ball: ``−radius·‖g‖₂`` at ``−radius·g/‖g‖``; box: ``−radius·‖g‖₁`` at ``−radius·sign(g)``;
        simplex: ``min_i g_i`` at the first minimizing vertex; unconstrained: ``−inf`` unless
        ``g = 0`` (then 0 at 0). At ``g = 0`` every point is a minimizer; 0 (or the first vertex)
        is returned.
        """
        g = np.asarray(g, dtype=np.float64)
        if self.kind == "ball":
            norms = np.linalg.norm(g, axis=-1)
            safe = np.where(norms > 0, norms, 1.0)
            return -self.radius * norms, -self.radius * g / safe[..., None]
        if self.kind == "box":
            return -self.radius * np.abs(g).sum(axis=-1), -self.radius * np.sign(g)
        if self.kind == "simplex":
            idx = np.argmin(g, axis=-1)
            u = np.zeros_like(g)
            np.put_along_axis(u, idx[..., None], 1.0, axis=-1)
            return np.take_along_axis(g, idx[..., None], axis=-1)[..., 0], u
        zero = np.all(g == 0.0, axis=-1)
        return np.where(zero, 0.0, -np.inf), np.zeros_like(g)

    def prediction_range(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(min, max)`` of ``⟨u, x⟩`` over ``u ∈ K`` for each row of ``x``."""
        x = np.asarray(x, dtype=np.float64)
        if self.kind == "ball":
            s = self.radius * np.linalg.norm(x, axis=-1)
            return -s, s
        if self.kind == "box":
            s = self.radius * np.abs(x).sum(axis=-1)
            return -s, s
        if self.kind == "simplex":
            return x.min(axis=-1), x.max(axis=-1)
        inf = np.full(x.shape[:-1], np.inf)
        return -inf, inf

    def as_dict(self) -> dict:
        """Return ``{"kind": ..., "radius": ...}`` (for manifests)."""
        return {"kind": self.kind, "radius": float(self.radius)}


def project_simplex(v: np.ndarray, z: float = 1.0) -> np.ndarray:
    """Return the Euclidean projection of each row of ``v`` onto ``{w ≥ 0, Σ w = z}``.

    Sort-based algorithm of Shalev-Shwartz 2007, Figure 7.1: with ``μ`` sorted descending,
    ``ρ = max{j : μ_j − (Σ_{r≤j} μ_r − z)/j > 0}``, ``θ = (Σ_{r≤ρ} μ_r − z)/ρ``,
    ``w = max(v − θ, 0)``.

    Examples
    --------
    >>> project_simplex(np.array([0.5, 1.5, -1.0]))
    array([0., 1., 0.])
    """
    v = np.asarray(v, dtype=np.float64)
    mu = -np.sort(-v, axis=-1)
    css = np.cumsum(mu, axis=-1) - z
    j = np.arange(1, v.shape[-1] + 1)
    cond = mu - css / j > 0
    rho = v.shape[-1] - np.argmax(cond[..., ::-1], axis=-1)
    theta = np.take_along_axis(css, (rho - 1)[..., None], axis=-1) / rho[..., None]
    return np.maximum(v - theta, 0.0)


@njit(cache=True, nogil=True)
def project_simplex_row(v, out):
    """Project one vector ``v`` onto the probability simplex into ``out`` (numba; Fig 7.1)."""
    d = v.shape[0]
    mu = np.sort(v)[::-1]
    css = 0.0
    theta = 0.0
    for j in range(d):
        css += mu[j]
        t = (css - 1.0) / (j + 1)
        if mu[j] - t > 0:
            theta = t
    for i in range(d):
        x = v[i] - theta
        out[i] = x if x > 0.0 else 0.0


@njit(cache=True, nogil=True)
def project_row(kind_code, radius, v, out):
    """Project one vector onto the domain ``kind_code`` (0 free, 1 ball, 2 box, 3 simplex)."""
    d = v.shape[0]
    if kind_code == 1:
        s = 0.0
        for i in range(d):
            s += v[i] * v[i]
        nrm = math.sqrt(s)
        scale = 1.0 if nrm <= radius else radius / nrm
        for i in range(d):
            out[i] = v[i] * scale
    elif kind_code == 2:
        for i in range(d):
            out[i] = min(max(v[i], -radius), radius)
    elif kind_code == 3:
        project_simplex_row(v, out)
    else:
        for i in range(d):
            out[i] = v[i]


KIND_CODES = {"unconstrained": 0, "ball": 1, "box": 2, "simplex": 3}
"""Integer codes of the domain kinds, for kernels (:func:`project_row`)."""
