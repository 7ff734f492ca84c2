"""Linearly separable classification data with margin γ and radius R, optional label noise."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from scipy.special import betaincc, betainccinv

from arena.adversaries._oco_stream import (
    DOMAIN,
    EXAMPLE_LOSS,
    InstanceTags,
    StreamAdversary,
    example_gradient_bound,
    make_domain,
    row_dot,
    row_norm,
    uniforms_from_normals,
    unit_vector,
)
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import POSITIVE, Interval, IsNone
from arena.spec import AdversaryTags, GameSpec


class SeparableStream(StreamAdversary):
    """Linearly separable examples: ``x`` uniform in the ball of radius R with ``|⟨u*, x⟩| ≥ γ``.

    Parameters
    ----------
    margin : float
        The margin γ, ``0 < γ < feature_radius``.
    feature_radius : float
        R: every ``‖x_t‖₂ ≤ R``.
    noise : float
        Probability in [0, 1] that a label is flipped (independently each round).
    loss : {"hinge", "logistic", "absolute", "squared"}
        The convex loss charged each round.
    domain : {"unconstrained", "ball", "box", "simplex"}
        The feasible set of ``w_t``.
    radius : float or None
        Radius of a ball or box domain; None (default) takes ``1/γ``, so that the declared
        comparator ``u*/γ`` lies in it.
    test_size : int
        Number m ≥ 0 of i.i.d. examples of the same law held out per replicate as a test split
        (oracle ``test_split``, read by the ``online_to_batch`` metric); the stream never shows
        them.

    Notes
    -----
    Per replicate a planted unit vector ``u*`` is drawn at reset (uniform on the sphere). Each
    round draws, exactly and without rejection, ``x_t`` uniform in ``{‖x‖ ≤ R}`` conditioned on
    ``|⟨u*, x⟩| ≥ γ``:

    * ``s = ⟨u*, x⟩ = ±R·τ`` with a fair sign, where ``τ²`` follows the law of ``⟨u*, x⟩²/R²``
      for ``x`` uniform in the ball, ``Beta(½, (d+1)/2)``, truncated to ``τ² ≥ (γ/R)²`` (inverse
      regularized incomplete beta function of a uniform: ``τ² = I⁻¹_{upper}(U·I_{upper}((γ/R)²))``);
    * the orthogonal part is uniform in the (d−1)-ball of radius ``R√(1 − τ²)`` (a normal
      vector projected off ``u*`` and normalized, times ``R√(1−τ²)·U'^{1/(d−1)}``),

    so ``‖x_t‖ ≤ R`` and ``|⟨u*, x_t⟩| ≥ γ`` hold for every round. The clean label is
    ``sign⟨u*, x_t⟩``; with probability ``noise`` it is flipped. Every round consumes ``d + 4``
    standard normals from the replicate's stream (uniforms are ``Φ(z)``), whatever ``noise`` is,
    so the features do not depend on the noise level and any split into blocks gives the same
    data. The test split is drawn at reset, after ``u*`` and before round 1, by the same sampler
    (m rounds' worth of draws), so it is independent of the streamed examples and equal in law.

    Comparator (oracle ``comparator``): ``u*/γ``, scaled so that ``y_t⟨u*/γ, x_t⟩ ≥ 1`` on every
    clean example: its hinge loss is 0, and ``‖u*/γ‖ = 1/γ``. ``comparator_regret`` with param c
    evaluates ``c·u*/γ``. On clean data the Perceptron makes at most ``(R/γ)²`` mistakes
    (Novikoff 1962; Shalev-Shwartz 2007, Corollary 5).

    Examples
    --------
    >>> adv = SeparableStream(margin=0.2)
    >>> adv.reset(GameSpec("classification", 3, 10, dim=3), [np.random.default_rng(0)])
    >>> rd = adv.data_block(1, 10)
    >>> bool((np.abs(rd.x[0] @ adv.comparator()[0]) >= 1.0 - 1e-12).all())  # margins ≥ γ
    True
    >>> bool((np.linalg.norm(rd.x, axis=-1) <= 1.0 + 1e-12).all())
    True

    References
    ----------
    Shalev-Shwartz 2007, §5.1.1, Corollary 5 (the Perceptron's mistake bound; separable:
    ``(R/γ)²``); Novikoff 1962.
    """

    parameter_constraints: ClassVar = {
        "margin": [POSITIVE],
        "feature_radius": [POSITIVE],
        "noise": [Interval(0, 1)],
        "loss": EXAMPLE_LOSS,
        "domain": DOMAIN,
        "radius": [POSITIVE, IsNone()],
        "test_size": [Interval(0, None, integer=True)],
    }
    tags = InstanceTags(
        AdversaryTags(protocol="classification", oblivious=True, oracle=frozenset({"comparator"}))
    )

    def __init__(
        self,
        margin: float = 0.1,
        feature_radius: float = 1.0,
        noise: float = 0.0,
        loss: str = "hinge",
        domain: str = "unconstrained",
        radius: float | None = None,
        test_size: int = 0,
    ):
        self.margin = margin
        self.feature_radius = feature_radius
        self.noise = noise
        self.loss = loss
        self.domain = domain
        self.radius = radius
        self.test_size = test_size

    def _instance_tags(self) -> AdversaryTags:
        oracle = {"comparator", "test_split"} if self.test_size else {"comparator"}
        return AdversaryTags(protocol="classification", oblivious=True, oracle=frozenset(oracle))

    def _gamma_r(self) -> tuple[float, float]:
        big_r, gamma = float(self.feature_radius), float(self.margin)
        if gamma >= big_r:  # two parameters: no declaration says it
            raise ConfigError(
                self.label(), "margin", f"must be < feature_radius = {big_r}, got {gamma}"
            )
        return gamma, big_r

    def declared_domain(self) -> Domain:
        gamma, _ = self._gamma_r()
        radius = 1.0 / gamma if self.radius is None else self.radius
        return make_domain(self.domain, radius)

    def declared_loss(self) -> str:
        return self.loss

    def feature_bound(self) -> float:
        return self._gamma_r()[1]

    def gradient_bound(self) -> float | None:
        return example_gradient_bound(
            self.declared_loss(), self.declared_domain(), self.feature_bound(), 1.0
        )

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        gamma, big_r = self._gamma_r()
        noise = float(self.noise)
        d = int(spec.dim)
        self._dim, self._gamma, self._big_r, self._noise = d, gamma, big_r, noise
        self._rngs = list(rngs)
        self._u = np.stack([unit_vector(rng, d) for rng in self._rngs])
        self._a, self._b = 0.5, (d + 1) / 2.0
        self._tail = float(betaincc(self._a, self._b, (gamma / big_r) ** 2))
        self._test = self._generate(int(self.test_size)) if self.test_size else None
        self._start_stream()

    def comparator(self) -> np.ndarray:
        return self._u / self._gamma

    def _generate(self, n: int) -> RoundData:
        d, n_rep = self._dim, len(self._rngs)
        c2 = (self._gamma / self._big_r) ** 2
        x = np.empty((n_rep, n, d))
        y = np.empty((n_rep, n))
        for r, rng in enumerate(self._rngs):
            z = rng.standard_normal((n, d + 4))
            u = uniforms_from_normals(z[:, d:])
            tau2 = np.clip(betainccinv(self._a, self._b, u[:, 0] * self._tail), c2, 1.0)
            sign = np.where(z[:, d + 1] >= 0.0, 1.0, -1.0)
            s = sign * self._big_r * np.sqrt(tau2)
            ustar = self._u[r]
            x[r] = s[:, None] * ustar
            if d > 1:
                v = z[:, :d] - row_dot(z[:, :d], ustar)[:, None] * ustar
                norms = row_norm(v)[:, None]
                v /= np.where(norms > 0, norms, 1.0)
                rho = self._big_r * np.sqrt(1.0 - tau2) * u[:, 2] ** (1.0 / (d - 1))
                x[r] += rho[:, None] * v
            flip = u[:, 3] < self._noise
            y[r] = np.where(flip, -sign, sign)
        return RoundData(x=x, y=y)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"margin": 0.3, "feature_radius": 2.0, "noise": 0.1, "loss": "logistic"}
        yield {"domain": "ball", "loss": "squared"}
        yield {"noise": 0.1, "test_size": 50}
