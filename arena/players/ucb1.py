"""UCB1: the optimistic index policy for stochastic bandits (Auer, Cesa-Bianchi & Fischer 2002)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit

from arena.players._empirical_means import INTERLEAVE, EmpiricalMeansPlayer
from arena.spec import GameSpec, PlayerTags


def ucb1_arm(sums: np.ndarray, counts: np.ndarray, plays: int) -> np.ndarray:
    """Return UCB1's arm per row: an unplayed arm first, else ``argmin_i ℓ̄_i − sqrt(2 ln n / n_i)``.

    ``sums`` and ``counts`` (R, K) are the arms' total [0, 1] losses and pulls, ``plays`` the
    number n of rounds played so far; ties go to the lowest index. The width is computed as
    ``sqrt(2 ln n) · (1/sqrt(n_i))``, the kernel's grouping (it keeps ``1/sqrt(n_i)`` per arm
    and takes one square root per round), so the two agree to the last bit.

    Examples
    --------
    >>> ucb1_arm(np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]]), 1).tolist()  # arm 1 unplayed
    [1]
    >>> ucb1_arm(np.array([[3.0, 1.0]]), np.array([[4.0, 4.0]]), 8).tolist()  # lower mean loss
    [1]
    """
    unplayed = counts == 0.0
    safe = np.where(unplayed, 1.0, counts)
    index = sums / safe - math.sqrt(2.0 * math.log(max(plays, 1))) * (1.0 / np.sqrt(safe))
    index = np.where(unplayed, -np.inf, index)
    return index.argmin(axis=-1)


WIDTH_TABLE_MAX = 1 << 16
"""Most pull counts whose width ``1/sqrt(n_i)`` a game tabulates (512 KiB); larger counts compute
it."""


@njit(cache=True, nogil=True)
def ucb1_width_table(size):
    """``table[k] = 1/sqrt(k)`` for ``0 < k < size`` (``table[0]`` unused, 0): the kernel's width of
    an arm pulled k times, by the kernel's own expression, so a lookup equals it to the bit. A game
    tabulates the counts its horizon can reach once, at reset (at most :data:`WIDTH_TABLE_MAX`).

    Examples
    --------
    >>> t = ucb1_width_table(5)
    >>> t.size, float(t[4]), bool(t[3] == 1.0 / math.sqrt(3.0))
    (5, 0.5, True)
    """
    table = np.zeros(size)
    for k in range(1, size):
        table[k] = 1.0 / math.sqrt(float(k))
    return table


_SHARED_WIDTHS: list[np.ndarray] = []  # [this process's table, read-only]


def shared_width_table(size: int) -> np.ndarray:
    """:func:`ucb1_width_table` of ``size``, a read-only view of one table per process, made
    again only when a game asks for more counts than it holds: a game of T = 10⁴ spent 38 µs
    tabulating its widths, 3 % of a one-replicate game.

    Examples
    --------
    >>> bool((shared_width_table(5) == ucb1_width_table(5)).all())
    True
    >>> shared_width_table(3).flags.writeable
    False
    """
    table = _SHARED_WIDTHS[0] if _SHARED_WIDTHS else None
    if table is None or table.size < size:
        table = ucb1_width_table(size)
        table.flags.writeable = False
        _SHARED_WIDTHS[:] = [table]  # (threads that grow it at once each keep a whole table)
    return table[:size]


@njit(cache=True, nogil=True)
def _ucb1_play_arms(losses, sums, counts, rounds_done, lo, scale, widths, arms):
    """Play a chunk of UCB1: fill ``arms`` (R, n) with the pulled arms; reads only their losses.

    Each replicate caches its arms' means ``S_i/n_i`` and ``1/sqrt(n_i)`` (recomputed for the
    pulled arm only; the width read from ``widths``, :func:`ucb1_width_table`, while the count is
    tabulated), so a round costs one division and K multiply-adds; the exploration factor
    ``sqrt(2 ln n)`` is the same in every replicate, so it is computed once per round of the
    chunk. Losses in [0, 1] (``lo = 0``, ``scale = 1``) are added as they are: ``(ℓ − 0)/1`` is
    ``ℓ`` to the bit, and the division it skips was a third of a round's divisions. A round of one
    replicate waits on the previous round's update (a dependent load and a division), so
    :data:`~arena.players._empirical_means.INTERLEAVE` replicates advance round by round together
    and the processor overlaps their independent chains; each replicate's arithmetic is
    unchanged. The arena's draw from a point mass is its arm, so the pulled arm is the index's
    argmin (:mod:`arena.bandit.point_masses`). A replicate with no others beside it (a group of
    one) plays its rounds in :func:`_ucb1_play_alone`.
    """
    n_rep, n, n_act = losses.shape
    mean = np.empty((n_rep, n_act))
    width = np.empty((n_rep, n_act))
    factor = np.empty(n)
    n_table = widths.size
    unit = (lo == 0.0) & (scale == 1.0)
    for j in range(n if n_rep > 1 else 0):
        factor[j] = math.sqrt(2.0 * math.log(max(rounds_done + j, 1)))
    for r in range(n_rep):
        for i in range(n_act):
            c = counts[r, i]
            # an arm not yet pulled has the index −inf − s·0 = −inf: no branch in the loop below
            mean[r, i] = sums[r, i] / c if c > 0.0 else -np.inf
            k = int(c)
            if c <= 0.0:
                width[r, i] = 0.0
            else:  # the table's entry is the same expression's value (ucb1_width_table)
                width[r, i] = widths[k] if k < n_table else 1.0 / math.sqrt(c)
    for r0 in range(0, n_rep, INTERLEAVE):
        r1 = min(n_rep, r0 + INTERLEAVE)
        if r1 - r0 == 1:
            _ucb1_play_alone(
                losses, sums, counts, rounds_done, mean, width, unit, lo, scale, widths, arms, r0
            )
            continue
        for j in range(n):
            s = factor[j]
            for r in range(r0, r1):
                best = 0
                best_index = np.inf
                for i in range(n_act):
                    index = mean[r, i] - s * width[r, i]
                    if index < best_index:
                        best, best_index = i, index
                arms[r, j] = best
                x = losses[r, j, best]
                total = sums[r, best] + (x if unit else (x - lo) / scale)
                c = counts[r, best] + 1.0
                sums[r, best] = total
                counts[r, best] = c
                mean[r, best] = total / c
                k = int(c)
                width[r, best] = widths[k] if k < n_table else 1.0 / math.sqrt(c)


@njit(cache=True, nogil=True)
def _ucb1_play_alone(
    losses, sums, counts, rounds_done, mean, width, unit, lo, scale, widths, arms, r
):
    """Play a chunk of UCB1 for replicate ``r`` alone (:func:`_ucb1_play_arms`' arithmetic).

    One replicate's rounds form one chain (round j+1's index waits on round j's division), and
    nothing interleaved beside it hides that wait. Three changes shorten it, each leaving every
    arm the same:

    * the argmin is a chain of selects (the first least index, as the branches' strict ``<``
      from +inf): the branches are mispredicted wherever UCB1 switches arms;
    * ``sqrt(2 ln n)`` is computed in the loop, off the chain, instead of in a pass of its own;
    * the replicate's state is read through 1-D views.

    At K = 9 and a chunk of 29,127 rounds (one replicate's, at the default chunk size): 27.7 ns
    a round before, 21.2 after.
    """
    n, n_act = losses.shape[1], losses.shape[2]
    n_table = widths.size
    own_losses, own_sums, own_counts, own_arms = losses[r], sums[r], counts[r], arms[r]
    own_mean, own_width = mean[r], width[r]
    for j in range(n):
        s = math.sqrt(2.0 * math.log(max(rounds_done + j, 1)))
        best = 0
        best_index = own_mean[0] - s * own_width[0]
        for i in range(1, n_act):
            index = own_mean[i] - s * own_width[i]
            lower = index < best_index
            best = i if lower else best
            best_index = index if lower else best_index
        own_arms[j] = best
        x = own_losses[j, best]
        total = own_sums[best] + (x if unit else (x - lo) / scale)
        c = own_counts[best] + 1.0
        own_sums[best] = total
        own_counts[best] = c
        own_mean[best] = total / c
        k = int(c)
        own_width[best] = widths[k] if k < n_table else 1.0 / math.sqrt(c)


class UCB1(EmpiricalMeansPlayer):
    """UCB1: pull each arm once, then the arm with the least optimistic mean loss.

    At round t, after ``n = t − 1`` rounds, arm i has been pulled ``n_i`` times with mean loss
    ``ℓ̄_i`` (losses mapped to [0, 1] with the declared range); UCB1 commits the point mass on an
    arm not yet pulled (the lowest index), else on ``argmin_i ℓ̄_i − sqrt(2 ln n / n_i)`` (the
    lowest index on ties). In rewards ``1 − ℓ`` this is the index ``x̄_i + sqrt(2 ln n / n_i)`` of
    Auer, Cesa-Bianchi & Fischer 2002, Figure 1. Deterministic: the arena's draw from a point
    mass is its arm.

    Notes
    -----
    For i.i.d. losses in [0, 1] with stationary means and gaps ``Δ_i`` to the best mean, the
    pseudo-regret after n rounds is at most ``8 Σ_{i: Δ_i > 0} ln n / Δ_i + (1 + π²/3) Σ_i Δ_i``
    (Auer et al. 2002, Theorem 1; :meth:`pseudo_regret_bound`). The bound depends on the
    instance's gaps, which the player never sees, and holds for stochastic arms only (UCB1 has no
    guarantee against an adversary), so UCB1 declares no ``bound`` rows; its tests check the
    theorem on Bernoulli and Beta arms with known gaps.

    Examples
    --------
    >>> from arena import play
    >>> df = play(UCB1(), "bernoulli", n_actions=3, horizon=500, replicates=2,
    ...           adversary_params={"gap": 0.3}, metrics={"arm_pulls": {}})
    >>> pulls = df[(df.t == 500) & (df.replicate == 0)].value.tolist()
    >>> pulls[0] > pulls[1] and pulls[0] > pulls[2]  # the best arm (0) is pulled most
    True

    References
    ----------
    Auer, Cesa-Bianchi & Fischer (2002), "Finite-time analysis of the multiarmed bandit problem",
    Machine Learning 47, Figure 1 (UCB1) and Theorem 1.
    """

    tags = PlayerTags(protocols=frozenset({"bandit"}), block_kernel=True, randomized=False)
    plays_arms = True

    def start(self, spec: GameSpec) -> None:
        # the counts the game can reach, tabulated once: a table grown with the rounds would be
        # state growing with T (the kernel computes the width of a count past the table)
        horizon = WIDTH_TABLE_MAX if spec.horizon is None else int(spec.horizon)
        self._widths = shared_width_table(min(horizon + 1, WIDTH_TABLE_MAX))

    def arms(self) -> np.ndarray:
        return ucb1_arm(self._sums, self._counts, self._rounds)

    def _arms_kernel(self, losses: np.ndarray, arms: np.ndarray) -> None:
        _ucb1_play_arms(
            losses,
            self._sums,
            self._counts,
            self._rounds,
            self._lo,
            self._scale,
            self._widths,
            arms,
        )

    @staticmethod
    def pseudo_regret_bound(n: int, gaps: Sequence[float]) -> float:
        """Auer et al. 2002, Theorem 1: ``8 Σ_{Δ_i>0} ln n / Δ_i + (1 + π²/3) Σ_i Δ_i``.

        ``gaps`` are the ``Δ_i`` of [0, 1] losses (0 for the best arms); ``n`` the rounds.

        Examples
        --------
        >>> round(UCB1.pseudo_regret_bound(1000, [0.0, 0.5]), 3)
        112.669
        """
        gaps = [float(g) for g in gaps]
        log_n = math.log(max(int(n), 1))
        return 8.0 * sum(log_n / g for g in gaps if g > 0) + (1 + math.pi**2 / 3) * sum(gaps)
