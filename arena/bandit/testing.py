"""Minimal bandit players for the conformance suite, doctests and driver tests.

The suite plays every bandit player against the experts protocol's own partner streams
(:mod:`arena.experts.testing`), never against the registered built-ins, and uses these two
players as partners and negative controls' baselines: the uniform player and a readable,
kernel-free loss-based Exp3 with a fixed rate.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arena.bandit.components import BanditPlayer
from arena.spec import GameSpec


class UniformBandit(BanditPlayer):
    """Pulls every arm with probability 1/K, whatever it observes.

    Examples
    --------
    >>> from arena import play
    >>> from arena.experts.testing import BernoulliStream
    >>> df = play(UniformBandit(), BernoulliStream(gap=0.0), n_actions=4, horizon=10,
    ...           metrics={"arm_pulls": {}})
    >>> int(df[df.t == 10].value.sum())
    10
    """

    name = "uniform_bandit"

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._shape = (spec.n_replicates, spec.n_actions)

    def predict(self) -> np.ndarray:
        return np.full(self._shape, 1.0 / self._shape[1])

    def update(self, actions: np.ndarray, losses: np.ndarray, probs: np.ndarray) -> None:
        pass


class SimpleExp3(BanditPlayer):
    """Loss-based Exp3 with a fixed rate, written plainly: ``p_{t,i} ∝ exp(−η L̂_{t−1,i})`` and
    ``L̂_{t,I_t} += ℓ_{t,I_t} / p_{t,I_t}`` (Bubeck & Cesa-Bianchi 2012, §3.1).

    Parameters
    ----------
    eta : float
        Learning rate η > 0.
    """

    name = "simple_exp3"

    def __init__(self, eta: float = 0.1):
        self.eta = eta

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._est = np.zeros((spec.n_replicates, spec.n_actions))

    def predict(self) -> np.ndarray:
        log_w = -self.eta * (self._est - self._est.min(axis=1, keepdims=True))
        w = np.exp(log_w)
        return w / w.sum(axis=1, keepdims=True)

    def update(self, actions: np.ndarray, losses: np.ndarray, probs: np.ndarray) -> None:
        rows = np.arange(actions.shape[0])
        unit = (np.asarray(losses) - self._lo) / self._scale
        self._est[rows, actions] += unit / probs[rows, actions]

    def estimates(self) -> np.ndarray:
        return self._est.copy()
