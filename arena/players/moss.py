"""MOSS: the minimax optimal strategy in the stochastic case (Audibert & Bubeck 2009)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit

from arena.errors import ConfigError
from arena.players._empirical_means import EmpiricalMeansPlayer
from arena.spec import GameSpec, PlayerTags


def moss_arm(sums: np.ndarray, counts: np.ndarray, horizon: int) -> np.ndarray:
    """Return MOSS's arm per row: an unplayed arm first, else
    ``argmin_i ℓ̄_i − sqrt(max(ln(T / (K n_i)), 0) / n_i)`` (the lowest index on ties).

    Examples
    --------
    >>> moss_arm(np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]]), 100).tolist()  # arm 1 unplayed
    [1]
    >>> moss_arm(np.array([[1.0, 2.0]]), np.array([[2.0, 50.0]]), 100).tolist()  # bonus ln 25 / 2
    [0]
    """
    n_act = sums.shape[-1]
    unplayed = counts == 0.0
    safe = np.where(unplayed, 1.0, counts)
    bonus = np.sqrt(np.maximum(np.log(horizon / (n_act * safe)), 0.0) / safe)
    index = np.where(unplayed, -np.inf, sums / safe - bonus)
    return index.argmin(axis=-1)


@njit(cache=True, nogil=True)
def _moss_index(sum_, count, horizon, n_act):
    """Arm index ``S_i/n_i − sqrt(max(ln(T / (K n_i)), 0) / n_i)`` of a pulled arm."""
    return sum_ / count - math.sqrt(max(math.log(horizon / (n_act * count)), 0.0) / count)


@njit(cache=True, nogil=True)
def _moss_play_block(losses, uniforms, sums, counts, horizon, lo, scale, probs):
    """Play a chunk of MOSS (point masses); reads only the pulled arm's loss.

    An arm's index depends on its own pulls only, so each replicate caches the K indices and
    recomputes the pulled arm's (the same expression as :func:`moss_arm`). The arena's draw from
    a point mass is its arm.
    """
    n_rep, n, n_act = losses.shape
    index = np.empty(n_act)
    for r in range(n_rep):
        for i in range(n_act):
            c = counts[r, i]
            index[i] = _moss_index(sums[r, i], c, horizon, n_act) if c > 0.0 else -np.inf
        for j in range(n):
            best = 0
            for i in range(1, n_act):
                if index[i] < index[best]:
                    best = i
            for i in range(n_act):
                probs[r, j, i] = 0.0
            probs[r, j, best] = 1.0
            sums[r, best] += (losses[r, j, best] - lo) / scale
            counts[r, best] += 1.0
            index[best] = _moss_index(sums[r, best], counts[r, best], horizon, n_act)


class MOSS(EmpiricalMeansPlayer):
    """MOSS: UCB with the horizon-aware bonus ``sqrt(ln⁺(T / (K n_i)) / n_i)``.

    Arm i, pulled ``n_i`` times with mean loss ``ℓ̄_i`` (losses mapped to [0, 1] with the declared
    range), has the index ``ℓ̄_i − sqrt(max(ln(T / (K n_i)), 0) / n_i)``; MOSS commits the point
    mass on an arm not yet pulled (the lowest index), else on the least index (the lowest index on
    ties). In rewards ``1 − ℓ`` this is Audibert & Bubeck's index
    ``X̄_i + sqrt(max(ln(n / (K s)), 0) / s)``. Deterministic; it needs the horizon T.

    Notes
    -----
    For stochastic arms with losses in [0, 1] (½-subgaussian), the pseudo-regret after the
    horizon ``T`` is at most ``49 √(T K)`` (Audibert & Bubeck 2009, the minimax bound of MOSS),
    and at most ``19.5 √(K T) + Σ_i Δ_i`` by Lattimore & Szepesvári 2020, Theorem 9.1 (proven for
    1-subgaussian arms with the bonus ``sqrt(4 ln⁺(T/(K n_i)) / n_i)``; rescaling the losses by 2
    gives this index and half the bound's √ term): :meth:`minimax_bound`. It holds at the horizon
    for stochastic arms only, so MOSS declares no ``bound`` rows; its tests check it on
    Bernoulli and Beta arms.

    Examples
    --------
    >>> from arena import play
    >>> df = play(MOSS(), "bernoulli", n_actions=3, horizon=500, replicates=2,
    ...           adversary_params={"gap": 0.3}, metrics={"arm_pulls": {}})
    >>> pulls = df[(df.t == 500) & (df.replicate == 0)].value.tolist()
    >>> pulls[0] > pulls[1] and pulls[0] > pulls[2]  # the best arm (0) is pulled most
    True

    References
    ----------
    Audibert & Bubeck (2009), "Minimax policies for adversarial and stochastic bandits", COLT
    (MOSS).
    Lattimore & Szepesvári (2020), *Bandit Algorithms*, Cambridge University Press, §9.1,
    Algorithm 7 and Theorem 9.1.
    """

    tags = PlayerTags(
        protocols=frozenset({"bandit"}), block_kernel=True, randomized=False, needs_horizon=True
    )

    def start(self, spec: GameSpec) -> None:
        if spec.horizon is None:
            raise ConfigError(self.label(), "horizon", "MOSS needs the horizon T")
        self._horizon = float(spec.horizon)

    def arms(self) -> np.ndarray:
        return moss_arm(self._sums, self._counts, self._horizon)

    def _play_kernel(self, losses: np.ndarray, uniforms: np.ndarray, probs: np.ndarray) -> None:
        _moss_play_block(
            losses, uniforms, self._sums, self._counts, self._horizon, self._lo, self._scale, probs
        )

    @staticmethod
    def minimax_bound(horizon: int, gaps: Sequence[float]) -> float:
        """Lattimore & Szepesvári 2020, Theorem 9.1 for [0, 1] losses: ``19.5 √(K T) + Σ_i Δ_i``.

        Examples
        --------
        >>> MOSS.minimax_bound(100, [0.0, 0.5, 0.5, 0.5])
        391.5
        """
        gaps = [float(g) for g in gaps]
        return 19.5 * math.sqrt(len(gaps) * horizon) + sum(gaps)
