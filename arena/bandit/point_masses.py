"""Point-mass players in the bandit protocol: a chunk played as arms, ``p_t`` built when read.

A player whose ``p_t`` is always a point mass ``e_{I_t}`` (UCB1, MOSS and KL-UCB, deterministic
index policies; Thompson sampling, which samples its arm from its own stream) fixes its arm
before the arena draws: the inverse-CDF draw from ``e_a`` is ``a`` whatever the action uniform.
Such a player may declare :attr:`~arena.bandit.components.BanditPlayer.plays_arms` and play an
oblivious chunk as its arms (:meth:`~arena.bandit.components.BanditPlayer.play_arms`). The
bandit stepper then

* draws no action uniforms (they could not change a draw; the action stream is read by nothing
  else in the game, so every row, trace and total is the same to the bit);
* checks each arm and advances the shared totals in one pass (:func:`point_mass_advance`),
  with the sums of the ``p_t`` path: ``p_t·l_t = Σ_i p_i l_i`` of a point mass is
  ``0 + l_{t,a}``, the zeros' sum and the one nonzero product, bit for bit;
* builds ``p_t`` only for a reader: the block is a :class:`PointMassBlock`, whose ``probs``
  are made from the arms the first time a metric or the trace writer reads them.

A kernel's ``p_t`` writes, the uniforms and the probability check were a third of a batched
``ucb1`` step (``benchmarks/bench_bandit_floor.py``).
"""

from __future__ import annotations

from itertools import islice
from typing import Any

import numpy as np
from numba import njit

from arena.metrics.base import Block, close_round, keep_replicate_totals
from arena.validation import first_offender


@njit(cache=True, nogil=True)
def fill_point_masses(arms, out):
    """Fill ``out`` (R, n, K) with the point masses on ``arms`` (R, n): 1 at ``I_t``, else 0.

    The values a point-mass kernel writes, so a ``p_t`` made here equals the one it wrote.

    Examples
    --------
    >>> out = np.empty((1, 2, 3))
    >>> fill_point_masses(np.array([[2, 0]]), out)
    >>> out.tolist()
    [[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]]
    """
    n_rep, n, n_act = out.shape
    for r in range(n_rep):
        for j in range(n):
            for i in range(n_act):
                out[r, j, i] = 0.0
            out[r, j, arms[r, j]] = 1.0


def point_mass_rows(arms: np.ndarray, n_act: int) -> np.ndarray:
    """Return the read-only ``p_t`` (R, n, K) of point masses on ``arms`` (R, n).

    Examples
    --------
    >>> point_mass_rows(np.array([[1]]), 2).tolist()
    [[[0.0, 1.0]]]
    """
    arms = np.ascontiguousarray(arms, dtype=np.int64)
    out = np.empty((*arms.shape, n_act))
    fill_point_masses(arms, out)
    out.flags.writeable = False
    return out


@njit(cache=True, nogil=True, inline="always")
def _arm_rounds(arms, losses, cum_losses, expected_out, realized_out, actions, r, j0, j1, totals):
    """Rounds ``j0 .. j1-1`` of replicate r: check each arm, set ``I_t`` to it, advance the
    totals ``(Σ p_t·l_t, Σ l_{t,I_t}, Σ min_i l_{t,i})`` (in registers, returned); return the
    first round whose arm is outside ``0 … K−1`` (its totals not added), else ``j1``, and the
    totals.

    The rounds are counted unsigned: indices that are provably not negative are not checked
    for wraparound, which costs a round-by-round loop from an offset about 1 ns a round. With
    eight arms or more, :func:`_arm_rounds_eight` keeps the first eight cumulative losses in
    registers.
    """
    if losses.shape[2] >= 8:
        return _arm_rounds_eight(
            arms, losses, cum_losses, expected_out, realized_out, actions, r, j0, j1, totals
        )
    n_act = losses.shape[2]
    for j in range(np.uint64(j0), np.uint64(j1)):
        a = arms[r, j]
        if not ((a >= 0) & (a < n_act)):
            return np.int64(j), totals
        m = np.inf
        for i in range(n_act):
            li = losses[r, j, i]
            m = li if li < m else m
            cum_losses[r, i] += li
        s = 0.0 + losses[r, j, a]
        totals = close_round(losses, expected_out, realized_out, actions, r, j, a, s, m, totals)
    return np.int64(j1), totals


@njit(cache=True, nogil=True, inline="always")
def _arm_rounds_eight(
    arms, losses, cum_losses, expected_out, realized_out, actions, r, j0, j1, totals
):
    """:func:`_arm_rounds` for K ≥ 8 arms, the first eight arms' cumulative losses held in
    registers across the rounds (stored back at the end, or at a bad arm).

    A cumulative loss kept in memory is loaded, added to and stored every round, and each load
    waits on the last round's store: one chain per arm, about ten cycles a round. In registers
    the chain is the addition alone; every arm's sum is the same additions in the same order,
    and ``min_i l_{t,i}`` compares the arms in the same order, so every total is the same to the
    bit. The core alone at R = 100, K = 9 (a span of 291 rounds): 4.0 ns a replicate-round,
    3.3 so.
    """
    n_act = losses.shape[2]
    c0, c1, c2, c3 = cum_losses[r, 0], cum_losses[r, 1], cum_losses[r, 2], cum_losses[r, 3]
    c4, c5, c6, c7 = cum_losses[r, 4], cum_losses[r, 5], cum_losses[r, 6], cum_losses[r, 7]
    stop = np.int64(j1)
    for j in range(np.uint64(j0), np.uint64(j1)):
        a = arms[r, j]
        if not ((a >= 0) & (a < n_act)):
            stop = np.int64(j)
            break
        row = losses[r, j]
        l0, l1, l2, l3 = row[0], row[1], row[2], row[3]
        l4, l5, l6, l7 = row[4], row[5], row[6], row[7]
        c0 += l0
        c1 += l1
        c2 += l2
        c3 += l3
        c4 += l4
        c5 += l5
        c6 += l6
        c7 += l7
        m = np.inf
        m = l0 if l0 < m else m
        m = l1 if l1 < m else m
        m = l2 if l2 < m else m
        m = l3 if l3 < m else m
        m = l4 if l4 < m else m
        m = l5 if l5 < m else m
        m = l6 if l6 < m else m
        m = l7 if l7 < m else m
        for i in range(8, n_act):
            li = row[i]
            m = li if li < m else m
            cum_losses[r, i] += li
        s = 0.0 + row[a]
        totals = close_round(losses, expected_out, realized_out, actions, r, j, a, s, m, totals)
    cum_losses[r, 0], cum_losses[r, 1], cum_losses[r, 2], cum_losses[r, 3] = c0, c1, c2, c3
    cum_losses[r, 4], cum_losses[r, 5], cum_losses[r, 6], cum_losses[r, 7] = c4, c5, c6, c7
    return stop, totals


@njit(cache=True, nogil=True)
def point_mass_advance(
    arms, losses, cum_losses, learner, realized, sum_min, expected_out, realized_out, actions
):
    """Check each round's arm, set ``I_t`` to it and advance the shared totals over a chunk;
    return False at the first arm outside ``0 … K−1`` (before its round's totals are added).

    The totals of :func:`arena.experts.game._checked_advance` for ``p_t = e_a``, to the bit:
    ``p_t·l_t`` sums ``0·l_i`` (each ±0, and ``0 + (−0) = 0``) and ``1·l_a`` in arm order, which
    is ``0 + l_a`` (``+0`` where ``l_a`` is ``−0``) followed by zeros that change nothing; the
    draw is ``a``; the cumulative losses and ``min_i l_{t,i}`` are the same loop over every arm.
    """
    n_rep, n, _ = losses.shape
    for r in range(n_rep):
        stop, totals = _arm_rounds(
            arms, losses, cum_losses, expected_out, realized_out, actions, r, 0, n,
            (learner[r], realized[r], sum_min[r]),
        )  # fmt: skip
        learner[r], realized[r], sum_min[r] = totals
        if stop < n:
            return False
    return True


@njit(cache=True, nogil=True)
def point_mass_advance_segments(
    arms,
    losses,
    cum_losses,
    learner,
    realized,
    sum_min,
    expected_out,
    realized_out,
    actions,
    bounds,
    snap_cum,
    snap_totals,
):
    """:func:`point_mass_advance` over the segments ``bounds[s] .. bounds[s+1]-1`` of a span,
    keeping the totals at each segment's end (``snap_cum[s]``, ``snap_totals[s]``: expected and
    realized loss, ``Σ min_i l_{t,i}``), as
    :func:`arena.experts.game._checked_advance_segments` does for ``p_t``; returns the number of
    segments advanced (the index of the first with a bad arm in any replicate, or all; the
    snapshots before it are whole). Replicate by replicate, the totals in registers across the
    segments."""
    n_rep = losses.shape[0]
    done = bounds.size - 1
    for r in range(n_rep):
        totals = (learner[r], realized[r], sum_min[r])
        for s in range(done):
            stop, totals = _arm_rounds(
                arms, losses, cum_losses, expected_out, realized_out, actions, r,
                bounds[s], bounds[s + 1], totals,
            )  # fmt: skip
            learner[r], realized[r], sum_min[r] = totals
            if stop < bounds[s + 1]:
                done = s
                break
            keep_replicate_totals(
                s, r, cum_losses, learner, realized, sum_min, snap_cum, snap_totals
            )
    return done


def first_bad_arm(arms: np.ndarray, n_act: int) -> tuple[int, int] | None:
    """Return ``(r, j)`` of the earliest arm outside ``0 … K−1`` (least round j, then replicate
    r), or None.

    Examples
    --------
    >>> first_bad_arm(np.array([[0, 1, 5], [1, -1, 0]]), 3)
    (1, 1)
    """
    bad = (arms < 0) | (arms >= n_act)
    return first_offender(bad) if bad.any() else None


class PointMassBlock(Block):
    """A :class:`~arena.metrics.base.Block` of a point-mass chunk: ``probs`` made when read.

    Constructed with ``probs=None``; reading ``probs`` builds the point masses on ``actions``
    (:func:`point_mass_rows`, read-only) once. As a tuple it is the plain block it stands for:
    iterating, indexing and ``_asdict`` give those ``probs``, and ``_replace`` returns a plain
    :class:`~arena.metrics.base.Block`.

    Examples
    --------
    >>> z = np.zeros((1, 2))
    >>> block = PointMassBlock(None, np.zeros((1, 2, 3)), z, z, np.array([[2, 1]]), None, 1)
    >>> block.probs[0, 1].tolist()
    [0.0, 1.0, 0.0]
    >>> probs, *rest = block
    >>> probs is block.probs, type(block._replace(t0=5)).__name__
    (True, 'Block')
    """

    @property
    def probs(self) -> np.ndarray:  # type: ignore[override]
        made: Any = self.__dict__.get("_probs")
        if made is None:
            made = self.__dict__["_probs"] = point_mass_rows(self.actions, self.losses.shape[2])
        return made

    def __iter__(self):
        yield self.probs
        yield from islice(tuple.__iter__(self), 1, None)

    def __getitem__(self, index):
        return tuple(self)[index]

    def _asdict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self, strict=True))

    def _replace(self, **changes: Any) -> Block:
        return Block(*self)._replace(**changes)


P_T_HOOKS = ("play_block", "_play_kernel")
"""The methods through which a class plays its ``p_t`` path: ``play_block``, and the chunk kernel
of the players built on empirical means (:mod:`arena.players._empirical_means`)."""


def plays_arms(player_class: type) -> bool:
    """Whether the driver may play a chunk of this player class as arms.

    The class declares :attr:`~arena.bandit.components.BanditPlayer.plays_arms`, and no class
    below the one that declared it replaced a method of its ``p_t`` path (:data:`P_T_HOOKS`):
    a subclass of ``UCB1`` with its own ``play_block`` or chunk kernel is played through them
    until it declares ``plays_arms`` itself (and the conformance suite then holds its
    ``play_arms`` to them).
    """
    if not getattr(player_class, "plays_arms", False):
        return False
    declared = _owner(player_class, "plays_arms")
    owners = (_owner(player_class, hook) for hook in P_T_HOOKS)
    return all(owner is None or issubclass(declared, owner) for owner in owners)


def _owner(cls: type, name: str) -> type | None:
    """The class of ``cls``'s MRO that defines ``name`` (None: none does)."""
    return next((c for c in cls.__mro__ if name in vars(c)), None)
