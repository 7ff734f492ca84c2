"""σ-strongly convex environments on a ball: ``(σ/2)‖w − z_t‖²`` or hinge + ``(σ/2)‖w‖²``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.adversaries._oco_stream import (
    StreamAdversary,
    ball_points,
    row_dot,
    uniforms_from_normals,
    unit_vector,
)
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import NON_NEGATIVE, POSITIVE, Interval, IsNone, OneOf
from arena.spec import AdversaryTags, GameSpec

KINDS = ("quadratic", "hinge")


class StronglyConvex(StreamAdversary):
    """Random σ-strongly convex losses on the ball of radius ρ (Shalev-Shwartz 2007, Chapter 4).

    Parameters
    ----------
    kind : {"quadratic", "hinge"}
        ``quadratic``: ``f_t(w) = (σ/2)‖w − z_t‖²`` (loss ``linear`` with ``g_t = 0`` and the
        arena's σ-term centred at ``z_t``); ``hinge``: ``f_t(w) = [1 − y_t⟨w, x_t⟩]₊ + (σ/2)‖w‖²``.
    sigma : float
        The strong-convexity modulus σ > 0.
    radius : float
        Radius ρ of the ball domain ``{‖w‖₂ ≤ ρ}``.
    center_radius : float or None
        ``quadratic``: the centres ``z_t`` are uniform in the ball of this radius (None: ρ).
    feature_radius : float
        ``hinge``: the features ``x_t`` are uniform in the ball of this radius X.
    noise : float
        ``hinge``: probability in [0, 1] of flipping the label ``sign⟨u*, x_t⟩`` of a planted unit
        vector ``u*`` (drawn at reset).

    Notes
    -----
    The strongly convex losses of Shalev-Shwartz 2007, §4.1, Lemma 4 (``σf + h`` with h convex)
    and §4.3, Theorem 5: every ``f_t`` is σ-strongly convex w.r.t. ``½‖·‖²``, so OGD with
    ``η_t = 1/(σt)`` has logarithmic regret ``(G²/(2σ))(1 + ln T)`` (Hazan, Agarwal & Kale 2007).
    Declared gradient bound over the domain:

    * ``quadratic``: ``‖σ(w − z_t)‖ ≤ σ(ρ + ρ_z)`` — ``σ`` times the diameter ``2ρ`` with the
      default ``ρ_z = ρ``;
    * ``hinge``: ``‖−y x 1{y⟨w,x⟩<1} + σw‖ ≤ X + σρ``.

    The protocol is ``oco`` for both kinds (the hinge kind shows ``x_t`` before the player
    predicts, as in every example-based loss). Every round consumes d + 1 (``quadratic``) or
    d + 2 (``hinge``) standard normals from the replicate's stream, in round order (uniforms are
    ``Φ(z)``; uniform points in a ball are normal directions with radius ``ρ·U^{1/d}``).

    Examples
    --------
    >>> adv = StronglyConvex(sigma=2.0)
    >>> adv.reset(GameSpec("oco", 3, 5, dim=3), [np.random.default_rng(0)])
    >>> rd = adv.data_block(1, 5)
    >>> adv.declared_loss(), adv.declared_sigma(), adv.gradient_bound(), float(np.abs(rd.g).max())
    ('linear', 2.0, 4.0, 0.0)

    References
    ----------
    Shalev-Shwartz 2007, Chapter 4 (Lemma 4 in §4.1, Theorem 5 in §4.3); Hazan, Agarwal & Kale
    (2007) (OGD, strongly convex).
    """

    tags = AdversaryTags(protocol="oco", oblivious=True)
    parameter_constraints: ClassVar = {
        "kind": [OneOf(*KINDS)],
        "sigma": [POSITIVE],
        "radius": [POSITIVE],
        "center_radius": [NON_NEGATIVE, IsNone()],
        "feature_radius": [POSITIVE],
        "noise": [Interval(0, 1)],
    }

    def __init__(
        self,
        kind: str = "quadratic",
        sigma: float = 1.0,
        radius: float = 1.0,
        center_radius: float | None = None,
        feature_radius: float = 1.0,
        noise: float = 0.1,
    ):
        self.kind = kind
        self.sigma = sigma
        self.radius = radius
        self.center_radius = center_radius
        self.feature_radius = feature_radius
        self.noise = noise

    def _center_radius(self) -> float:
        return float(self.radius if self.center_radius is None else self.center_radius)

    def declared_domain(self) -> Domain:
        return Domain("ball", float(self.radius))

    def declared_loss(self) -> str:
        return "linear" if self.kind == "quadratic" else "hinge"

    def declared_sigma(self) -> float:
        return float(self.sigma)

    def feature_bound(self) -> float | None:
        if self.kind == "quadratic":
            return None
        return float(self.feature_radius)

    def gradient_bound(self) -> float:
        sigma, rho = self.declared_sigma(), self.declared_domain().radius
        if self.kind == "quadratic":
            return sigma * (rho + self._center_radius())
        return self.feature_bound() + sigma * rho

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._noise = float(self.noise)
        self._rngs = list(rngs)
        self._dim = d = int(spec.dim)
        if self.kind == "hinge":
            self._u = np.stack([unit_vector(rng, d) for rng in self._rngs])
        self._start_stream()

    def _generate(self, n: int) -> RoundData:
        d, n_rep = self._dim, len(self._rngs)
        pts = np.empty((n_rep, n, d))
        if self.kind == "quadratic":
            rad = self._center_radius()
            for r, rng in enumerate(self._rngs):
                z = rng.standard_normal((n, d + 1))
                pts[r] = ball_points(z[:, :d], uniforms_from_normals(z[:, d]), rad)
            return RoundData(g=np.zeros((n_rep, n, d)), z=pts)
        y = np.empty((n_rep, n))
        for r, rng in enumerate(self._rngs):
            z = rng.standard_normal((n, d + 2))
            pts[r] = ball_points(z[:, :d], uniforms_from_normals(z[:, d]), self.feature_bound())
            clean = np.where(row_dot(pts[r], self._u[r]) >= 0.0, 1.0, -1.0)
            y[r] = np.where(uniforms_from_normals(z[:, d + 1]) < self._noise, -clean, clean)
        return RoundData(x=pts, y=y)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"kind": "hinge", "sigma": 0.5, "radius": 2.0}
        yield {"sigma": 3.0, "center_radius": 0.5}
