"""Deterministic worst-case constructions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arena.errors import ConfigError
from arena.protocols import ObliviousAdversary
from arena.spec import AdversaryTags, GameSpec


class FTLKiller(ObliviousAdversary):
    """The FTL killer: ``l_1 = (½, 0)``, then ``(0, 1)`` on even rounds and ``(1, 0)`` on odd ones.

    Experts beyond the first two (if N > 2) get loss 1 every round.

    Notes
    -----
    Forces Follow the Leader to regret exactly ``T/2 − 1/4`` with uniform tie-break (``T/2`` with
    the lowest-index rule): after round 1 the leader is always the expert about to lose. Against
    fixed-η Hedge it forces ``T(σ(η/2) − ½) ≈ ηT/8`` (theory-oracles §C.3).

    Examples
    --------
    >>> adv = FTLKiller(); adv.reset(GameSpec("experts", 2, 5), [None])
    >>> adv.losses_block(1, 4)[0].tolist()
    [[0.5, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]

    References
    ----------
    de Rooij, van Erven, Grünwald & Koolen (2014), JMLR, §2; Cesa-Bianchi & Lugosi (2006).
    """

    name = "ftl_killer"
    tags = AdversaryTags(oblivious=True)

    def __init__(self):
        pass

    def resolve_n_actions(self, requested: int | None) -> int:
        return 2 if requested is None else int(requested)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        if spec.n_actions < 2:
            raise ConfigError("adversary ftl_killer", "n_actions", "needs at least 2 experts")
        self._n_rep, self._n_act = spec.n_replicates, spec.n_actions

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        t = np.arange(t0, t0 + n)
        one = np.ones((n, self._n_act))
        even = t % 2 == 0
        one[:, 0] = np.where(even, 0.0, 1.0)
        one[:, 1] = np.where(even, 1.0, 0.0)
        first = t == 1
        one[first, 0], one[first, 1] = 0.5, 0.0
        return np.broadcast_to(one, (self._n_rep, n, self._n_act)).copy()
