"""MOSS: the minimax optimal strategy in the stochastic case (Audibert & Bubeck 2009)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit

from arena.errors import ConfigError
from arena.players._empirical_means import INTERLEAVE, EmpiricalMeansPlayer
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


BONUS_TABLE_MAX = 1 << 16
"""Most pull counts whose MOSS bonus a game tabulates (512 KiB); larger counts compute it."""


@njit(cache=True, nogil=True)
def _moss_bonus(count, horizon, n_act):
    """The bonus ``sqrt(max(ln(T / (K n_i)), 0) / n_i)`` of an arm pulled ``n_i`` times."""
    return math.sqrt(max(math.log(horizon / (n_act * count)), 0.0) / count)


@njit(cache=True, nogil=True)
def _moss_index(sum_, count, horizon, n_act):
    """Arm index ``S_i/n_i − sqrt(max(ln(T / (K n_i)), 0) / n_i)`` of a pulled arm."""
    return sum_ / count - _moss_bonus(count, horizon, n_act)


@njit(cache=True, nogil=True)
def _moss_bonus_table(horizon, n_act, size):
    """``table[k]`` = :func:`_moss_bonus` of k pulls, for k < size (``table[0]`` unused, 0)."""
    table = np.zeros(size)
    for k in range(1, size):
        table[k] = _moss_bonus(float(k), horizon, n_act)
    return table


def moss_bonus_table(horizon: float, n_act: int) -> np.ndarray:
    """The MOSS bonus of every pull count up to ``T/K`` (above it the bonus is 0), at most
    :data:`BONUS_TABLE_MAX` entries: the kernel's lookup, computed by the kernel's expression.

    Examples
    --------
    >>> t = moss_bonus_table(100.0, 4)
    >>> t.size, float(t[1]) == math.sqrt(math.log(25.0)), float(t[25]), float(t[26])
    (27, True, 0.0, 0.0)
    """
    size = int(min(horizon // n_act + 2, BONUS_TABLE_MAX))
    return _moss_bonus_table(float(horizon), int(n_act), size)


@njit(cache=True, nogil=True)
def _moss_play_arms(losses, sums, counts, horizon, bonus, lo, scale, arms):
    """Play a chunk of MOSS: fill ``arms`` (R, n) with the pulled arms; reads only their losses.

    An arm's index depends on its own pulls only, so each replicate caches the K indices and
    recomputes the pulled arm's (the same expression as :func:`moss_arm`). Its bonus, a function
    of the pull count alone, is read from ``bonus`` (:func:`moss_bonus_table`) when tabulated, so
    a round costs one division instead of a logarithm, a square root and three divisions;
    :data:`~arena.players._empirical_means.INTERLEAVE` replicates advance round by round together so
    that their chains of dependent updates overlap (each replicate's arithmetic is unchanged).
    The arena's draw from a point mass is its arm.
    """
    n_rep, n, n_act = losses.shape
    index = np.empty((n_rep, n_act))
    n_table = bonus.size
    for r in range(n_rep):
        for i in range(n_act):
            c = counts[r, i]
            index[r, i] = _moss_index(sums[r, i], c, horizon, n_act) if c > 0.0 else -np.inf
    for r0 in range(0, n_rep, INTERLEAVE):
        r1 = min(n_rep, r0 + INTERLEAVE)
        for j in range(n):
            for r in range(r0, r1):
                best = 0
                for i in range(1, n_act):
                    if index[r, i] < index[r, best]:
                        best = i
                arms[r, j] = best
                total = sums[r, best] + (losses[r, j, best] - lo) / scale
                c = counts[r, best] + 1.0
                sums[r, best] = total
                counts[r, best] = c
                k = int(c)
                if k < n_table:
                    index[r, best] = total / c - bonus[k]
                else:
                    index[r, best] = _moss_index(total, c, horizon, n_act)


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
    plays_arms = True

    def start(self, spec: GameSpec) -> None:
        if spec.horizon is None:
            raise ConfigError(self.label(), "horizon", "MOSS needs the horizon T")
        self._horizon = float(spec.horizon)
        self._bonus = moss_bonus_table(self._horizon, spec.n_actions)

    def arms(self) -> np.ndarray:
        return moss_arm(self._sums, self._counts, self._horizon)

    def _arms_kernel(self, losses: np.ndarray, arms: np.ndarray) -> None:
        _moss_play_arms(
            losses,
            self._sums,
            self._counts,
            self._horizon,
            self._bonus,
            self._lo,
            self._scale,
            arms,
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
