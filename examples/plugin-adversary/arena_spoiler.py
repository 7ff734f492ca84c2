"""Example plugin adversary: adaptive, it reads the player's distribution and the losses so far."""

from typing import ClassVar

import numpy as np

from arena import AdaptiveAdversary, GameSpec
from arena.params import Interval
from arena.spec import AdversaryTags, History


class Spoiler(AdaptiveAdversary):
    """Loss 1 on the ``k`` experts the player weights most in ``p_t``, 0 on the others.

    Ties in ``p_t`` go to the expert with the smaller cumulative loss (then the lower index), so
    a player that follows the leader loses every round.
    """

    # the one tag an adaptive adversary adds: it reads p_t (oblivious=False comes from the base)
    tags = AdversaryTags(sees_distribution=True)
    parameter_constraints: ClassVar = {"k": [Interval(1, None, integer=True)]}

    def __init__(self, k: int = 1):
        self.k = k  # hyperparameters only: no work in __init__

    def reset(self, spec: GameSpec, rngs) -> None:
        self._k = min(self.k, spec.n_actions)  # game state: k cannot exceed N

    def losses(self, t: int, history: History) -> np.ndarray:  # l_t, shape (R, N)
        p = history.probs  # p_t, (R, N), read-only; only because of sees_distribution=True
        # lexsort sorts by its last key first: heaviest weight, then smallest cumulative loss
        order = np.lexsort((history.cum_losses, -p), axis=-1)
        out = np.zeros(p.shape)
        np.put_along_axis(out, order[:, : self._k], 1.0, axis=-1)
        return out
