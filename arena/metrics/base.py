"""The experts block: the per-chunk data the experts and bandit protocols hand to their metrics,
the shared running totals, and the base of the metrics that read them.

:class:`~arena.metric.Metric` itself, which every protocol shares, is in :mod:`arena.metric`
(re-exported here for plugins written against the earlier layout).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar, NamedTuple

import numpy as np
from numba import njit

from arena.metric import Metric, Record


class Block(NamedTuple):
    """One chunk of consecutive rounds of R replicates, as seen by the metrics.

    Attributes
    ----------
    probs, losses : ndarray, shape (R, n, N)
        ``p_t`` and ``l_t`` of rounds ``t0 .. t0+n-1``.
    expected : ndarray, shape (R, n)
        Expected learner loss ``p_t·l_t``.
    realized : ndarray, shape (R, n)
        Realized learner loss ``l_{t, I_t}``.
    actions : ndarray, shape (R, n)
        The drawn actions ``I_t`` (0-based expert index).
    means : ndarray, shape (R, n, N) or None
        Mean losses, when the adversary exposes them.
    t0 : int
        First round of the chunk (1-based).
    confidences : ndarray, shape (R, n, N) or None
        Confidences ``I_t`` of a sleeping / confidence-rated game.
    increments : ndarray, shape (n, R, N) or None
        The instantaneous regrets ``r_{t,i} = p_t·l_t − l_{t,i}`` in round-major order, filled by
        the engine once per chunk when an active metric sets :attr:`Metric.reads_increments`;
        read them through :func:`regret_increments`, which computes them when they are absent
        (a hand-built block, or a metric that did not declare it reads them).
    """

    probs: np.ndarray
    losses: np.ndarray
    expected: np.ndarray
    realized: np.ndarray
    actions: np.ndarray
    means: np.ndarray | None
    t0: int
    confidences: np.ndarray | None = None
    increments: np.ndarray | None = None


def regret_increments(block: Block) -> np.ndarray:
    """Return ``r_{t,i} = p_t·l_t − l_{t,i}`` of a block as a C-contiguous (n, R·N) array.

    Round-major with the replicates and experts of a round side by side, so that a per-round
    update of per-(replicate, expert) state is one long vectorized loop even when N is small.

    Examples
    --------
    >>> import numpy as np
    >>> losses = np.array([[[0.0, 1.0], [1.0, 1.0]]])  # R = 1, n = 2 rounds, N = 2
    >>> probs = np.full_like(losses, 0.5)
    >>> expected = (probs * losses).sum(axis=2)
    >>> block = Block(probs, losses, expected, expected, np.zeros((1, 2), int), None, 1)
    >>> regret_increments(block).tolist()
    [[0.5, -0.5], [0.0, 0.0]]
    """
    inc = block.increments
    if inc is None:
        inc = np.ascontiguousarray((block.expected[:, :, None] - block.losses).transpose(1, 0, 2))
    n_rep, n, n_act = block.losses.shape
    return inc.reshape(n, n_rep * n_act)


class Core:
    """Running totals every metric may read, maintained by the engine's core kernel.

    Attributes
    ----------
    t : int
        Rounds completed.
    cum_losses : ndarray (R, N)
        ``L_{t,i}``.
    learner : ndarray (R,)
        Cumulative expected loss ``Ĥ_t = Σ p_s·l_s``.
    realized : ndarray (R,)
        Cumulative realized loss ``Σ l_{s,I_s}``.
    sum_min : ndarray (R,)
        ``Σ_s min_i l_{s,i}`` (the per-round best comparator of dynamic regret).
    last_probs : ndarray (R, N)
        ``p_t`` of the last completed round.
    """

    def __init__(self, n_replicates: int, n_actions: int):
        self.t = 0
        self.cum_losses = np.zeros((n_replicates, n_actions))
        self.learner = np.zeros(n_replicates)
        self.realized = np.zeros(n_replicates)
        self.sum_min = np.zeros(n_replicates)
        self.last_probs = np.full((n_replicates, n_actions), 1.0 / n_actions)


@njit(cache=True, nogil=True)
def keep_replicate_totals(s, r, cum_losses, learner, realized, sum_min, snap_cum, snap_totals):
    """Write replicate r's totals into snapshot ``s``: ``snap_cum[s, r]`` its cumulative losses,
    ``snap_totals[s, :, r]`` its expected and realized learner losses and ``Σ min_i l_{t,i}``
    (the span kernels of :meth:`arena.experts.game.ExpertsStepper.core_snapshots`)."""
    snap_cum[s, r] = cum_losses[r]
    snap_totals[s, 0, r] = learner[r]
    snap_totals[s, 1, r] = realized[r]
    snap_totals[s, 2, r] = sum_min[r]


@njit(cache=True, nogil=True, inline="always")
def close_round(losses, expected_out, realized_out, actions, r, j, a, s, m, totals):
    """End round j of replicate r in a core kernel: record its action ``a``, ``p_t·l_t = s`` and
    ``l_{t,a}``, and return the totals ``(Σ p_t·l_t, Σ l_{t,I_t}, Σ min_i l_{t,i})`` with them and
    ``min_i l_{t,i} = m`` added (every kernel that advances the shared totals ends its rounds
    so)."""
    lr = losses[r, j, a]
    actions[r, j] = a
    expected_out[r, j] = s
    realized_out[r, j] = lr
    total, total_realized, total_min = totals
    return total + s, total_realized + lr, total_min + m


def exact_quantile_rank(eps: float, n_actions: int) -> int:
    """Return ``k = ⌈εN⌉`` computed in exact rational arithmetic from ε's shortest decimal form.

    ``math.ceil(N * eps)`` in floats is wrong for hundreds of (N, k) pairs, e.g. ``0.07 * 100``
    is ``7.000000000000001``; ``ceil(N·(j/N)) ≠ j`` for 590 pairs with N < 200 (N = 25, j = 7
    gives 8).

    Examples
    --------
    >>> exact_quantile_rank(0.07, 100), math.ceil(0.07 * 100)
    (7, 8)

    Cached per (ε, N) as a float and an int (any number type, a 0-d array included): a player's
    declared quantile bounds ask it at every checkpoint, and the exact rational costs 10 µs.
    """
    return _exact_quantile_rank(float(eps), int(n_actions))


@functools.lru_cache(maxsize=4096)
def _exact_quantile_rank(eps: float, n_actions: int) -> int:
    return math.ceil(Fraction(repr(eps)) * n_actions)


@dataclass(frozen=True, kw_only=True)
class ExpertsRecord(Record):
    """The literal record of one replicate of an experts-block game (experts, bandit) after
    round ``t``: every round played, as the reference loops store it.

    Attributes
    ----------
    probs, losses : ndarray, shape (t, N)
        ``p_s`` and ``l_s`` of rounds ``1..t`` (rows ``0..t-1``).
    actions : ndarray of int, shape (t,)
        The drawn actions ``I_s`` (0-based).
    means : ndarray, shape (t, N), optional
        The adversary's mean losses ``μ_s`` (oracle ``means``).
    confidences : ndarray, shape (t, N), optional
        The confidences of a sleeping / confidence-rated game.
    competitor : ndarray, shape (t, N), optional
        The time-varying competitor ``u_s`` an adversary declares (oracle ``competitor``).
    parents : ndarray of int, optional
        A tree-experts template (``tree_parents()``); ``reached`` (t, N) marks the edges each
        ``x_s`` traverses (oracle ``reached``).
    previous : int
        The previous checkpoint (0 for the first): the window of the window metrics.

    Examples
    --------
    >>> from arena.metrics.regret import Regret
    >>> record = ExpertsRecord(t=2, probs=np.full((2, 2), 0.5), losses=np.eye(2),
    ...                        actions=np.zeros(2, dtype=int))
    >>> Regret().reference(record, math.nan)  # ½ + ½ − 1
    0.0
    """

    probs: np.ndarray
    losses: np.ndarray
    actions: np.ndarray
    means: np.ndarray | None = None
    confidences: np.ndarray | None = None
    competitor: np.ndarray | None = None
    parents: np.ndarray | None = None
    reached: np.ndarray | None = None
    previous: int = 0


EXPERTS_BLOCK: frozenset[str] = frozenset({"experts", "bandit"})
"""The protocols that play the experts block (:class:`Block`, :class:`Core`): the bandit protocol
plays the experts game's rounds under partial information, and the arena still knows ``l_t``."""


class ExpertsMetric(Metric):
    """Base of the metrics that read the experts block: ``advance(block: Block, core: Core)``.

    Computed in the experts and the bandit protocols (:data:`EXPERTS_BLOCK`); a metric of one of
    them only narrows :attr:`~arena.metric.Metric.protocols` (``tree_regret``: experts;
    ``arm_pulls``: bandit).
    """

    protocols: ClassVar[frozenset[str] | None] = EXPERTS_BLOCK
