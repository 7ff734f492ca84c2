"""r-of-k Boolean target concepts: label +1 iff at least r of k relevant bits are on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.adversaries._oco_stream import (
    DOMAIN,
    EXAMPLE_LOSS,
    StreamAdversary,
    make_domain,
)
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import POSITIVE, Interval
from arena.spec import AdversaryTags, GameSpec


class ROfK(StreamAdversary):
    """r-of-k targets on ``{0, 1}^n`` with a constant −1 coordinate: ``y = +1`` iff ``≥ r`` of k.

    The target-concept generator of Shalev-Shwartz 2007, §5.1.2, for Winnow's mistake bound:
    ``x_t = (b_t, −1)`` with ``n = d − 1`` i.i.d. bits ``b_{t,i} ~ Bernoulli(density)``; the
    clean label is +1 iff at least ``r`` of the ``k`` relevant bits are on, flipped with
    probability ``noise``.

    Parameters
    ----------
    r : int
        The threshold, ``1 ≤ r ≤ k``.
    k : int
        Number of relevant bits, ``k ≤ d − 1``.
    density : float
        Probability in (0, 1) that a bit is on.
    noise : float
        Probability in [0, 1] that a label is flipped (independently each round).
    loss : {"hinge", "logistic", "absolute", "squared"}
        The convex loss charged each round.
    domain : {"unconstrained", "ball", "box", "simplex"}
        The feasible set of ``w_t``.
    radius : float
        Radius of a ball or half-width of a box domain.

    Notes
    -----
    Per replicate the k relevant bits are drawn at reset (uniformly without replacement among
    the ``d − 1`` Boolean coordinates). Each round draws ``d − 1`` uniforms for the bits and one
    for the label's flip from the replicate's stream, whatever ``noise`` is, so the features do
    not depend on the noise level and any split into blocks gives the same data.

    Comparator (oracle ``comparator``): Shalev-Shwartz 2007, §5.1.2, puts
    ``u_p = 1/(r + k − ½)`` on the relevant bits and ``u_n = (r − ½)/(r + k − ½)`` on the
    constant coordinate (``u`` lies in the simplex), with margin ``γ = ½/(r + k − ½)``: with
    ``s`` relevant bits on, ``⟨u, x⟩ = (s − r + ½)/(r + k − ½)``, at least γ when ``s ≥ r`` and at
    most −γ otherwise. The declared comparator is ``u/γ`` (2 on the relevant bits, ``2r − 1`` on
    the constant coordinate, ``‖u/γ‖₁ = 1/γ = 2(r + k) − 1``), scaled like every comparator of a
    classification stream so that its hinge loss ``[1 − y⟨u/γ, x⟩]₊`` is 0 on every clean
    example; a player whose bound needs the simplex reads ``u = (u/γ)/‖u/γ‖₁`` and ``γ``. The
    noise-free bound of the self-tuned Winnow is then ``16(r + k − ½)² ln d`` (Corollary 6), that
    of balanced Winnow with the oracle c ``8(r + k − ½)² ln d`` (Eq. 5.8), the Perceptron's
    ``X²‖u/γ‖₂² ≤ d(4k + (2r − 1)²)`` (Corollary 5): linear in d.

    Examples
    --------
    >>> adv = ROfK(r=2, k=3)
    >>> adv.reset(GameSpec("classification", 6, 20, dim=6), [np.random.default_rng(0)])
    >>> rd = adv.data_block(1, 20)
    >>> u = adv.comparator()[0]
    >>> sorted(u.tolist())  # 2 on the 3 relevant bits, 2r − 1 = 3 on the constant coordinate
    [0.0, 0.0, 2.0, 2.0, 2.0, 3.0]
    >>> bool(np.all(rd.y[0] * (rd.x[0] @ u) >= 1.0))  # margin 1 on every clean example
    True

    References
    ----------
    Shalev-Shwartz 2007, §5.1.2 (r-of-k Boolean functions, the comparator and margin above, and
    the bound ``8(r + k − ½)² ln n``) and §5.1.3, Corollary 6 (the self-tuned Winnow).
    """

    parameter_constraints: ClassVar = {
        "r": [Interval(1, None, integer=True)],
        "k": [Interval(1, None, integer=True)],
        "density": [Interval(0, 1, closed="neither")],
        "noise": [Interval(0, 1)],
        "loss": EXAMPLE_LOSS,
        "domain": DOMAIN,
        "radius": [POSITIVE],
    }
    tags = AdversaryTags(
        protocol="classification", oblivious=True, oracle=frozenset({"comparator"})
    )

    def __init__(
        self,
        r: int = 2,
        k: int = 4,
        density: float = 0.5,
        noise: float = 0.0,
        loss: str = "hinge",
        domain: str = "unconstrained",
        radius: float = 1.0,
    ):
        self.r = r
        self.k = k
        self.density = density
        self.noise = noise
        self.loss = loss
        self.domain = domain
        self.radius = radius

    def resolve_dim(self, requested: int | None) -> int:
        """Return ``d``: the requested one, else ``k + 1`` (no irrelevant bit)."""
        return int(self.k) + 1 if requested is None else int(requested)

    def declared_domain(self) -> Domain:
        return make_domain(self.domain, self.radius)

    def declared_loss(self) -> str:
        return self.loss

    def feature_bound(self) -> float | None:
        return None  # ‖x‖₂ ≤ √d depends on the game's d

    def gradient_bound(self) -> float | None:
        return None

    def margin(self) -> float:
        """Return Shalev-Shwartz 2007's margin ``γ = ½/(r + k − ½)`` of the simplex comparator."""
        return 0.5 / (int(self.r) + int(self.k) - 0.5)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        r, k = int(self.r), int(self.k)
        d = int(spec.dim)
        if r > k:
            raise ConfigError(self.label(), "r", f"must be ≤ k = {k}, got {r}")
        if k > d - 1:
            raise ConfigError(self.label(), "k", f"needs d ≥ k + 1 = {k + 1}; got d = {d}")
        self._dim, self._rngs = d, list(rngs)
        self._relevant = np.zeros((len(self._rngs), d), dtype=bool)
        for i, rng in enumerate(self._rngs):
            self._relevant[i, rng.choice(d - 1, size=k, replace=False)] = True
        self._u = np.where(self._relevant, 2.0, 0.0)
        self._u[:, -1] = 2.0 * r - 1.0
        self._start_stream()

    def comparator(self) -> np.ndarray:
        return self._u.copy()

    def _generate(self, n: int) -> RoundData:
        d, n_rep = self._dim, len(self._rngs)
        x = np.empty((n_rep, n, d))
        y = np.empty((n_rep, n))
        for i, rng in enumerate(self._rngs):
            u = rng.random((n, d))
            x[i, :, : d - 1] = u[:, : d - 1] < self.density
            x[i, :, d - 1] = -1.0
            on = x[i][:, self._relevant[i]].sum(axis=1)
            clean = np.where(on >= int(self.r), 1.0, -1.0)
            y[i] = np.where(u[:, d - 1] < self.noise, -clean, clean)
        return RoundData(x=x, y=y)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"r": 1, "k": 2, "density": 0.3, "noise": 0.1, "loss": "logistic"}
        yield {"domain": "ball", "radius": 2.0, "loss": "squared"}
