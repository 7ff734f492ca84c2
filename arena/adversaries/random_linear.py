"""Random linear losses ``⟨g_t, w⟩`` with ``‖g_t‖₂ = G``: the probabilistic Ω(DG√T) lower bound."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import ClassVar

import numpy as np
from scipy.special import gammaln

from arena.adversaries._oco_stream import DOMAIN, StreamAdversary, make_domain, row_norm
from arena.adversaries.stochastic import fair_coin_lower_bound
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import POSITIVE, OneOf
from arena.spec import AdversaryTags, GameSpec

DISTRIBUTIONS = ("rademacher", "sphere")


@lru_cache(maxsize=65536)
def expected_abs_walk(t: int) -> float:
    """Return ``E|σ_1 + … + σ_t|`` for i.i.d. fair signs: ``t·C(2n, n)/4ⁿ`` with ``n = ⌊t/2⌋``.

    Evaluated as ``t·exp(lnΓ(2n+1) − 2 lnΓ(n+1) − 2n ln 2)`` (relative error below 1e-12 up to
    t = 10⁷; the tests compare it with exact integer arithmetic). It tends to ``√(2t/π)``.

    Examples
    --------
    >>> [expected_abs_walk(t) for t in (1, 2, 3)]
    [1.0, 1.0, 1.5]
    >>> round(expected_abs_walk(400), 3)  # T·C(2n, n)/4ⁿ with n = 200; √(2T/π) ≈ 15.958
    15.948
    """
    t = int(t)
    if t <= 0:
        return 0.0
    n = t // 2
    return t * math.exp(gammaln(2 * n + 1) - 2 * gammaln(n + 1) - 2 * n * math.log(2.0))


class RandomLinear(StreamAdversary):
    """Random linear losses ``f_t(w) = ⟨g_t, w⟩`` with ``‖g_t‖₂ = G``, i.i.d., chosen in advance.

    Parameters
    ----------
    domain : {"ball", "box", "simplex", "unconstrained"}
        The feasible set K (``ball`` of radius ``radius`` is the segment ``[−radius, radius]``
        when d = 1).
    radius : float
        Radius of the ball, half-width of the box (ignored for the simplex).
    G : float
        The norm of every ``g_t`` (> 0), declared as the gradient bound.
    distribution : {"rademacher", "sphere"}
        ``rademacher``: ``g_t = G·s_t/√d`` with i.i.d. fair signs ``s_{t,i} ∈ {±1}`` (``±G`` when
        d = 1); ``sphere``: ``g_t`` uniform on the sphere of radius G.

    Notes
    -----
    Shalev-Shwartz 2007, Theorem 3 and its proof: with ``S = [−1, 1]`` and ``g_t(w) = σ_t w``
    for fair signs chosen in advance, ``w_t`` depends only on ``σ_1..σ_{t−1}``, so
    ``E[⟨g_t, w_t⟩] = 0`` for **every** non-anticipating player, while ``min_{u∈S} Σ_t g_t(u) =
    −|Σ_t σ_t|``. Hence the expected regret of every player equals ``E|Σ_t σ_t| = T·C(2n,n)/4ⁿ``
    (n = ⌊T/2⌋, ≈ √(2T/π)): some sequence forces regret Ω(√T), and Ω(DG√T) after scaling.

    In general ``E[Regret_T] = E[max_{u∈K} ⟨−Σ_t g_t, u⟩]`` for every player, because every
    ``g_t`` has mean zero and is independent of ``w_t``. :meth:`lower_bounds` declares this exact
    **expected value** (a statement about the mean regret over replicates, not a bound on each
    replicate) where it has a closed form:

    * d = 1, ball or box: ``radius·G·E|S_t|`` with ``E|S_t| = t·C(2n,n)/4ⁿ``
      (:func:`expected_abs_walk`);
    * ``rademacher`` on a box: ``min_u ⟨Σg, u⟩ = −radius‖Σg‖₁`` gives ``radius·G·√d·E|S_t|``;
    * ``rademacher`` on the simplex: ``E[max_i (−Σg)_i] = (G/√d)·E[max_i S_{t,i}] =
      (G/√d)·2·LB(t, d)`` with ``LB`` the fair-coin value
      (:func:`arena.adversaries.stochastic.fair_coin_lower_bound`; ``E max_i S_i = t − 2E min_i
      B_i`` for ``S = 2B − t``, ``B ~ Bin(t, ½)``);
    * d = 1 on the simplex (K = {1}): 0.

    Other cases (a ball with d > 1, the sphere distribution with d > 1, ℝ^d) declare none.
    Every round draws d uniforms (``rademacher``: ``s = +1`` iff ``U < ½``) or d normals
    (``sphere``) from the replicate's stream, in round order.

    Examples
    --------
    >>> from arena.oco.testing import ZeroPlayer
    >>> from arena import play
    >>> df = play(ZeroPlayer(), RandomLinear(), n_actions=1, horizon=400, replicates=2,
    ...           metrics=["loss", "lower_bound"])
    >>> round(float(df[df.metric == "lower_bound:regret"].value.iloc[-1]), 3)
    15.948

    References
    ----------
    Shalev-Shwartz 2007, §3.6, Theorem 3.
    """

    parameter_constraints: ClassVar = {
        "domain": DOMAIN,
        "radius": [POSITIVE],
        "G": [POSITIVE],
        "distribution": [OneOf(*DISTRIBUTIONS)],
    }
    tags = AdversaryTags(protocol="oco", oblivious=True)

    def __init__(
        self,
        domain: str = "ball",
        radius: float = 1.0,
        G: float = 1.0,
        distribution: str = "rademacher",
    ):
        self.domain = domain
        self.radius = radius
        self.G = G
        self.distribution = distribution

    def resolve_dim(self, requested: int | None) -> int:
        return 1 if requested is None else int(requested)

    def declared_domain(self) -> Domain:
        return make_domain(self.domain, self.radius)

    def declared_loss(self) -> str:
        return "linear"

    def gradient_bound(self) -> float:
        return float(self.G)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._domain = self.declared_domain()
        self._G = self.gradient_bound()
        self._rngs = list(rngs)
        self._dim = int(spec.dim)
        self._start_stream()

    def _generate(self, n: int) -> RoundData:
        n_rep, d, G = len(self._rngs), self._dim, self._G
        g = np.empty((n_rep, n, d))
        for r, rng in enumerate(self._rngs):
            if self.distribution == "rademacher":
                rng.random(out=g[r])
                g[r] = np.where(g[r] < 0.5, G / math.sqrt(d), -G / math.sqrt(d))
            else:
                z = rng.standard_normal((n, d))
                # a zero normal vector has probability 0; it would give g = G·e_1
                z[row_norm(z) == 0, 0] = 1.0
                g[r] = G * z / row_norm(z)[:, None]
        return RoundData(g=g)

    def lower_bounds(self, t: int, player=None) -> dict[tuple[str, float], float]:
        """Declare the exact expected regret ``E[max_{u∈K} ⟨−Σ_{s≤t} g_s, u⟩]`` where it is known.

        An expectation over the signs, the same for every non-anticipating player: compare it
        with the **mean** regret over replicates (Notes list the closed forms).
        """
        value = expected_regret(int(t), self._dim, self._domain, self._G, self.distribution)
        return {} if value is None else {("regret", math.nan): value}

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"domain": "box", "radius": 2.0, "G": 0.5}
        yield {"domain": "simplex", "distribution": "rademacher"}
        yield {"distribution": "sphere", "G": 3.0}


def expected_regret(t: int, dim: int, domain: Domain, G: float, distribution: str):
    """Return ``E[max_{u∈K} ⟨−Σ_{s≤t} g_s, u⟩]`` (the expected regret of every player), or None.

    Closed forms of :class:`RandomLinear`'s Notes; None where there is none here.

    Examples
    --------
    >>> expected_regret(3, 1, Domain("ball", 2.0), 1.0, "sphere")
    3.0
    >>> expected_regret(2, 4, Domain("box", 1.0), 1.0, "rademacher")  # 1·1·√4·E|S_2| = 2
    2.0
    """
    if t <= 0:
        return 0.0
    kind = domain.kind
    if dim == 1:
        if kind in ("ball", "box"):
            return domain.radius * G * expected_abs_walk(t)
        if kind == "simplex":
            return 0.0
        return None
    if distribution != "rademacher":
        return None
    if kind == "box":
        return domain.radius * G * math.sqrt(dim) * expected_abs_walk(t)
    if kind == "simplex":
        return G / math.sqrt(dim) * 2.0 * fair_coin_lower_bound(t, dim)
    return None
