"""Shared bookkeeping of the bandit players built on empirical means (UCB1, KL-UCB, MOSS, ε-greedy).

Each keeps, per replicate and arm, the pull count ``n_i`` and the total loss ``S_i`` of its pulls,
with losses mapped to [0, 1] by the declared range (``(ℓ − lo)/(hi − lo)``), and the number of
rounds played; it differs only in the rule that turns ``S_i / n_i`` and ``n_i`` into ``p_t``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arena.bandit.components import BanditPlayer
from arena.bandit.point_masses import fill_point_masses
from arena.spec import GameSpec
from arena.validation import kernel_views

INTERLEAVE = 4
"""Replicates a kernel advances round by round together: one replicate's rounds form a chain
of dependent loads and divisions, and four independent chains fill the processor's pipeline
(measured on ucb1: 2 and 8 were slower, one at a time about 1.3x slower)."""


class EmpiricalMeansPlayer(BanditPlayer):
    """Base of the bandit players whose state is the pulled arms' counts and loss totals.

    Subclasses implement :meth:`arms` (the arm each replicate pulls next; the default
    :meth:`predict` commits its point mass) or override :meth:`predict`, and the compiled chunk
    that advances ``_sums`` and ``_counts`` in place from ``_rounds`` rounds played: a point-mass
    rule (``plays_arms = True``) its arms, :meth:`_arms_kernel`, which serves both
    :meth:`play_arms` and :meth:`play_block`; another rule its ``p_t``, :meth:`_play_kernel`.
    :meth:`start` is the hook for the rule's own state.

    Attributes
    ----------
    _sums, _counts : ndarray, shape (R, K)
        ``S_i``, the total [0, 1] loss of arm i's pulls, and ``n_i``, its pull count.
    _rounds : int
        Rounds played.
    """

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self.start(spec)
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._sums = np.zeros((spec.n_replicates, spec.n_actions))
        self._counts = np.zeros((spec.n_replicates, spec.n_actions))
        self._rounds = 0

    def start(self, spec: GameSpec) -> None:
        """Check the game and set the rule's own state (called first by :meth:`reset`)."""

    def arms(self) -> np.ndarray:
        """Return the arm each replicate pulls next, shape (R,)."""
        raise NotImplementedError

    def predict(self) -> np.ndarray:
        p = np.zeros_like(self._sums)
        p[np.arange(p.shape[0]), self.arms()] = 1.0
        return p

    def update(self, actions: np.ndarray, losses: np.ndarray, probs: np.ndarray) -> None:
        rows = np.arange(actions.shape[0])
        self._sums[rows, actions] += (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale
        self._counts[rows, actions] += 1.0
        self._rounds += 1

    play_block_out = True

    def play_block(
        self, losses: np.ndarray, uniforms: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        losses, uniforms = kernel_views(losses, uniforms)
        probs = np.empty_like(losses) if out is None else out
        self._play_kernel(losses, uniforms, probs)
        self._rounds += losses.shape[1]
        return probs

    def play_arms(self, losses: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        (losses,) = kernel_views(losses)
        arms = np.empty(losses.shape[:2], dtype=np.int64) if out is None else out
        self._arms_kernel(losses, arms)
        self._rounds += losses.shape[1]
        return arms

    def _play_kernel(self, losses: np.ndarray, uniforms: np.ndarray, probs: np.ndarray) -> None:
        """Run the compiled chunk: fill ``probs`` (R, n, K), advance ``_sums`` and ``_counts``.

        The default, for a rule that plays arms, is :meth:`_arms_kernel` and its point masses.
        """
        if not self.plays_arms:
            raise NotImplementedError(f"{type(self).__name__} implements no chunk kernel")
        arms = np.empty(losses.shape[:2], dtype=np.int64)
        self._arms_kernel(losses, arms)
        fill_point_masses(arms, probs)

    def _arms_kernel(self, losses: np.ndarray, arms: np.ndarray) -> None:
        """Run the compiled chunk of a point-mass rule: fill ``arms`` (R, n), advance ``_sums``
        and ``_counts``."""
        raise NotImplementedError(f"{type(self).__name__} implements no arms kernel")
