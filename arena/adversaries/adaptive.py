"""Adaptive adversaries that read the player's distribution."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.experts.components import AdaptiveAdversary
from arena.params import OneOf
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
    at least ``T(1 − 1/N)`` (the best expert has loss ≤ T/N by pigeonhole); a mixed player pays
    ``Σ_t max_i p_{t,i} ≥ T/N``. It reads ``p_t`` only, never the draw ``I_t``.

    Examples
    --------
    >>> from arena import play
    >>> from arena.players.ftl import FollowTheLeader
    >>> df = play(FollowTheLeader(tie_break="lowest"), "greedy", n_actions=2, horizon=100,
    ...           metrics={"loss": {}})
    >>> float(df.value.iloc[-1])  # a deterministic pure player loses every round
    100.0

    References
    ----------
    Cesa-Bianchi & Lugosi (2006), §2.10.
    """

    parameter_constraints: ClassVar = {"ties": [OneOf("random", "all")]}
    tags = AdversaryTags(oblivious=False, sees_distribution=True)

    def __init__(self, ties: str = "random"):
        self.ties = ties

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
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


HALF_TOL = 1e-12
"""A prefix whose mass is within this of ½ counts as reaching ½ (float sums of p)."""


class HeavierHalf(AdaptiveAdversary):
    """Loss 1 on the experts holding the heavier half of ``p_t``, 0 elsewhere.

    The experts are sorted by weight, heaviest first, and the smallest prefix whose mass is at
    least ½ (within 1e-12) gets loss 1.

    Parameters
    ----------
    ties : {"index", "random"}
        Order among equal weights: lowest index first (default), or a fresh uniform random order
        per round from the replicate's stream (N uniforms per round, whatever the ties).

    Notes
    -----
    The "heavier half" adaptive adversary, the mixed-player analogue of :class:`Greedy` (the
    mass form: the hit set is the fewest experts carrying half the weight). The learner pays
    ``p_t·l_t ≥ ½`` every round, so ``Ĥ_T ≥ T/2`` and the regret is at least
    ``T/2 − min_i L_{T,i}``; against a pure (deterministic point-mass) player it hits the played
    expert every round, like ``greedy``. It is useful to exercise upper bounds with an adversary
    that reacts to the
    whole distribution, not only its maximum. It reads ``p_t`` only, never the draw ``I_t``.

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", HeavierHalf(), n_actions=4, horizon=100, metrics={"loss": {}})
    >>> bool(df.value.iloc[-1] >= 50 - 1e-9)
    True

    References
    ----------
    Cesa-Bianchi & Lugosi (2006), §2.10.
    """

    parameter_constraints: ClassVar = {"ties": [OneOf("index", "random")]}
    tags = AdversaryTags(oblivious=False, sees_distribution=True)

    def __init__(self, ties: str = "index"):
        self.ties = ties

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._rngs = list(rngs)

    def losses(self, t: int, history: History) -> np.ndarray:
        p = np.asarray(history.probs, dtype=np.float64)
        n_rep, n = p.shape
        if self.ties == "random":
            keys = np.stack([rng.random(n) for rng in self._rngs])
        else:
            keys = np.broadcast_to(np.arange(n, dtype=np.float64), (n_rep, n))
        order = np.lexsort((keys, -p), axis=-1)  # by weight descending, then by key
        p_sorted = np.take_along_axis(p, order, axis=1)
        half = 0.5 * p.sum(axis=1, keepdims=True)
        before = np.cumsum(p_sorted, axis=1) - p_sorted  # mass of the heavier experts
        hit_sorted = before < half - HALF_TOL
        out = np.zeros((n_rep, n))
        np.put_along_axis(out, order, hit_sorted.astype(np.float64), axis=1)
        return out

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"ties": "random"}
