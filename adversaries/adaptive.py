"""Adaptive adversaries that read the player's distribution."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arena.errors import ConfigError
from arena.protocols import AdaptiveAdversary
from arena.spec import AdversaryTags, GameSpec, History

TIE_ATOL = 1e-12
"""Weights within this of the largest count as tied for the heaviest expert."""


class Greedy(AdaptiveAdversary):
    """Loss 1 on the expert holding the most weight in ``p_t``, 0 elsewhere.

    Parameters
    ----------
    ties : {"random", "all"}
        Among experts tied for the largest weight, hit one chosen uniformly with the replicate's
        stream (default), or hit all of them.

    Notes
    -----
    A deterministic pure player (FTL with lowest-index ties) loses every round, so its regret is
    at least ``T(1 − 1/N)``; a mixed player pays ``Σ_t max_i p_{t,i} ≥ T/N`` (theory-oracles
    §C.5). It reads ``p_t`` only, never the draw ``I_t``.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ftl", "greedy", n_actions=2, horizon=100, metrics={"loss": {}})
    >>> float(df.value.iloc[-1])
    100.0

    References
    ----------
    Cesa-Bianchi & Lugosi (2006), §2.10; theory-oracles §C.5.
    """

    name = "greedy"
    tags = AdversaryTags(oblivious=False, sees_distribution=True)

    def __init__(self, ties: str = "random"):
        self.ties = ties

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        if self.ties not in ("random", "all"):
            raise ConfigError("adversary greedy", "ties", "must be 'random' or 'all'")
        self._rngs = list(rngs)

    def losses(self, t: int, history: History) -> np.ndarray:
        p = history.probs
        heaviest = p >= p.max(axis=1, keepdims=True) - TIE_ATOL
        if self.ties == "all":
            return heaviest.astype(np.float64)
        out = np.zeros(p.shape)
        for r, rng in enumerate(self._rngs):
            idx = np.flatnonzero(heaviest[r])
            # one uniform per round keeps the stream aligned whatever the number of ties
            out[r, idx[int(rng.random() * idx.size)]] = 1.0
        return out

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"ties": "all"}
