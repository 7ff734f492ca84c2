"""k Gaussian instances a round, scored by a hidden unit vector with noise, optionally graded
(the instance ranking problem of Shalev-Shwartz 2007, §5.3.4)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.adversaries._oco_stream import StreamAdversary
from arena.oco.domains import Domain
from arena.oco.losses import INSTANCE_RANKING_LOSSES, RoundData
from arena.params import Interval, OneOf
from arena.spec import AdversaryTags, GameSpec


class InstanceRankingStream(StreamAdversary):
    """Queries of k instances ``x_i ~ N(0, I_d)``, target scores ``⟨u, x_i⟩ + noise·ε_i``, graded.

    Per replicate a unit vector u is drawn at reset. Each round the question is ``X_t ∈ ℝ^{k×d}``
    (its rows Gaussian) and the answer ``y_t ∈ ℝ^k``: the scores ``s_i = ⟨u, x_i⟩ + noise·ε_i``
    themselves (``levels=0``) or their relevance grades ``#{j < levels : s_i/√(1 + noise²) >
    Φ⁻¹(j/levels)}`` (``levels ≥ 2``: equally likely grades 0 .. levels−1, so ties occur and
    ``E_t`` holds only the pairs of different grades).

    Parameters
    ----------
    n_items : int
        k ≥ 2 instances a round. ``n_actions`` is the dimension d of ``w`` (default 5).
    levels : int
        0 (real scores) or the number of grades ≥ 2.
    noise : float
        Standard deviation of the score noise ε (≥ 0).
    loss : {"ranking_avg", "ranking_max"}
        ℓ^avg (5.25) or ℓ^max (5.26).

    Notes
    -----
    Each round costs ``k·d + k`` normals of the replicate's stream, drawn as one row, so any split
    of the rounds into blocks gives the same stream. The losses are Lipschitz with constant
    ``max_{(i,j)∈E_t} ‖x_i − x_j‖₂`` (the norm: Shalev-Shwartz 2007, §5.3.4 prints its square);
    Gaussian rows have no finite bound, so none is declared.

    Examples
    --------
    >>> adv = InstanceRankingStream(n_items=3, levels=2)
    >>> spec = GameSpec("instance_ranking", 4, 6, dim=4, n_classes=3)
    >>> adv.reset(spec, [np.random.default_rng(0)])
    >>> rd = adv.data_block(1, 6)
    >>> rd.x.shape, rd.y.shape, sorted(set(rd.y.ravel().tolist())) <= [0.0, 1.0]
    ((1, 6, 12), (1, 6, 3), True)

    References
    ----------
    Shalev-Shwartz 2007, §5.3.4 (instance ranking; Eqs. (5.25)–(5.26)).
    """

    parameter_constraints: ClassVar = {
        "n_items": [Interval(2, None, integer=True)],
        "levels": [Interval(0, 0, integer=True), Interval(2, None, integer=True)],
        "noise": [Interval(0, None)],
        "loss": [OneOf(*INSTANCE_RANKING_LOSSES)],
    }
    tags = AdversaryTags(protocol="instance_ranking", oblivious=True)

    def __init__(
        self, n_items: int = 5, levels: int = 3, noise: float = 0.1, loss: str = "ranking_avg"
    ):
        self.n_items = n_items
        self.levels = levels
        self.noise = noise
        self.loss = loss

    def declared_classes(self) -> int:
        return int(self.n_items)

    def declared_loss(self) -> str:
        return self.loss

    def declared_domain(self) -> Domain:
        return Domain("unconstrained")

    def resolve_dim(self, requested: int | None, horizon: int | None = None) -> int:
        return 5 if requested is None else int(requested)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._k, self._d = int(spec.n_classes), int(spec.dim)
        self._rngs = list(rngs)
        u = np.stack([rng.standard_normal(self._d) for rng in self._rngs])
        self._u = u / np.linalg.norm(u, axis=1, keepdims=True)
        levels = int(self.levels)
        from scipy.stats import norm  # scipy.stats costs ~1 s to import: only where used

        self._cuts = norm.ppf(np.arange(1, levels) / levels) if levels else None
        self._start_stream()

    def target(self) -> np.ndarray:
        """The hidden unit vector u of every replicate (R, d)."""
        return self._u.copy()

    def _generate(self, n: int) -> RoundData:
        k, d = self._k, self._d
        n_rep = len(self._rngs)
        x = np.empty((n_rep, n, k * d))
        y = np.empty((n_rep, n, k))
        for i, rng in enumerate(self._rngs):
            z = rng.standard_normal((n, k * d + k))
            x[i] = z[:, : k * d]
            s = x[i].reshape(n, k, d) @ self._u[i] + float(self.noise) * z[:, k * d :]
            if self._cuts is None:
                y[i] = s
            else:  # s/√(1 + noise²) is N(0, 1): the cuts make the grades equally likely
                scaled = s / math.sqrt(1.0 + float(self.noise) ** 2)
                y[i] = (scaled[..., None] > self._cuts).sum(axis=-1)
        return RoundData(x=x, y=y)

    @classmethod
    def _unit_test_params(cls):
        yield {}
