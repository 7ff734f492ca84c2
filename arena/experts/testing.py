"""Minimal experts components for the conformance suite, doctests and driver tests.

The suite plays every player and adversary against these partners, never against the registered
built-ins, so that the library does not depend on its own plugins: a uniform player and
exponential weights (both aware of sleeping experts), and three streams of losses in [0, 1] — a
stochastic one with a gap, the deterministic sequence on which Follow the Leader suffers linear
regret (Cesa-Bianchi & Lugosi 2006, §4.3) and an adaptive one that puts loss 1 on the most likely
expert.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.experts.components import AdaptiveAdversary, ExpertsPlayer, ObliviousAdversary
from arena.spec import AdversaryTags, GameSpec, History, PlayerTags


def _awake(shape: tuple[int, int], confidences: np.ndarray | None) -> np.ndarray:
    return np.ones(shape) if confidences is None else (np.asarray(confidences) > 0.0) * 1.0


class UniformPlayer(ExpertsPlayer):
    """Plays the uniform distribution over the awake experts (all of them when none sleep).

    Examples
    --------
    >>> from arena import play
    >>> df = play(UniformPlayer(), BernoulliStream(gap=0.0), n_actions=4, horizon=10,
    ...           metrics={"loss": {}})
    >>> 0.0 <= float(df.value.iloc[-1]) <= 10.0
    True
    """

    name = "uniform"
    tags: ClassVar[PlayerTags] = PlayerTags(supports_confidences=True)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._shape = (spec.n_replicates, spec.n_actions)

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        awake = _awake(self._shape, confidences)
        return awake / awake.sum(axis=1, keepdims=True)

    def update(self, losses, actions=None, confidences=None) -> None:
        pass


class ExponentialWeights(ExpertsPlayer):
    """Exponential weights with a fixed rate over the awake experts: ``p_{t,i} ∝ e^{−η L_{t−1,i}}``.

    Parameters
    ----------
    eta : float
        Learning rate η > 0.
    """

    name = "exponential_weights"
    tags: ClassVar[PlayerTags] = PlayerTags(supports_confidences=True)

    def __init__(self, eta: float = 0.5):
        self.eta = eta

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._cum = np.zeros((spec.n_replicates, spec.n_actions))

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        awake = _awake(self._cum.shape, confidences)
        log_w = np.where(awake > 0, -self.eta * self._cum, -np.inf)
        w = np.exp(log_w - log_w.max(axis=1, keepdims=True))  # stable softmax
        return w / w.sum(axis=1, keepdims=True)

    def update(self, losses, actions=None, confidences=None) -> None:
        self._cum = self._cum + np.asarray(losses)


class BernoulliStream(ObliviousAdversary):
    """Independent {0, 1} losses: expert 0 has mean ``0.5 − gap``, the others 0.5.

    Parameters
    ----------
    gap : float
        How much better expert 0 is in expectation (0 ≤ gap ≤ 0.5; 0 is a fair coin).
    """

    name = "bernoulli_stream"

    def __init__(self, gap: float = 0.2):
        self.gap = gap

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._rngs = list(rngs)
        self._means = np.full(spec.n_actions, 0.5)
        self._means[0] = 0.5 - self.gap

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        draws = np.stack([rng.random((n, self._means.size)) for rng in self._rngs])
        return (draws < self._means).astype(np.float64)


class UniformStream(ObliviousAdversary):
    """Independent uniform losses in [0, 1]: sums of them are exact in no order, so a player or
    metric that adds a chunk's rounds at once shows it in the last bits (unlike {0, 1} losses)."""

    name = "uniform_stream"

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._rngs = list(rngs)
        self._n_act = spec.n_actions

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        return np.stack([rng.random((n, self._n_act)) for rng in self._rngs])


class AlternatingStream(ObliviousAdversary):
    """The sequence on which Follow the Leader errs every round: losses (½, 0), then (0, 1) and
    (1, 0) alternately on experts 0 and 1; every other expert loses 1."""

    name = "alternating_stream"

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._shape = (spec.n_replicates, spec.n_actions)

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        t = np.arange(t0, t0 + n)
        out = np.ones((n, self._shape[1]))
        even = t % 2 == 0
        out[:, 0] = np.where(even, 0.0, 1.0)
        out[:, 1] = np.where(even, 1.0, 0.0)
        out[t == 1, 0], out[t == 1, 1] = 0.5, 0.0
        return np.broadcast_to(out, (self._shape[0], n, self._shape[1])).copy()

    def resolve_n_actions(self, requested: int | None) -> int:
        return max(2, 10 if requested is None else int(requested))


class MostLikelyLoses(AdaptiveAdversary):
    """Adaptive: after seeing ``p_t``, loss 1 on its most likely expert (the first on ties), 0 on
    every other."""

    name = "most_likely_loses"
    tags: ClassVar[AdversaryTags] = AdversaryTags(oblivious=False, sees_distribution=True)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._n_act = spec.n_actions

    def losses(self, t: int, history: History) -> np.ndarray:
        p = history.probs
        out = np.zeros((p.shape[0], self._n_act))
        out[np.arange(p.shape[0]), np.argmax(p, axis=1)] = 1.0
        return out
