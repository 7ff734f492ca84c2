"""The regrets on intervals: ``adaptive_regret`` (the largest over all intervals, Hazan &
Seshadhri 2009; Kadane's recursion per expert) and ``sa_regret`` (over intervals of length ≤ τ,
Daniely, Gonen & Shalev-Shwartz 2015; a sliding-window minimum of the prefix regret), with their
numba kernels and the interval-regret table of their definitions. Notation as in
:mod:`arena.metrics`."""

from __future__ import annotations

import numpy as np
from numba import njit

from arena.base import Footprint, shape_text
from arena.metrics.base import Block, Core, ExpertsMetric, ExpertsRecord, regret_increments
from arena.metrics.literal import check_history, learner_losses
from arena.metrics.shifting import _best_fixed_interval_loss
from arena.spec import GameSpec

# ----------------------------------------------------------------------------------------------
# adaptive regret: Kadane per expert


@njit(cache=True, nogil=True)
def _kadane_advance(increments, current, best):
    """Kadane over ``r_{t,i}``: ``current`` = best interval ending now, ``best`` = max so far.

    One lane per (replicate, expert): ``increments`` is (n, R·N) (see
    :func:`~arena.metrics.base.regret_increments`), ``current`` and ``best`` are (R·N,), so each
    round is one elementwise, vectorized pass; the max over experts is taken at the checkpoints.
    """
    n, n_lanes = increments.shape
    for j in range(n):
        for k in range(n_lanes):
            c = current[k]
            c = (c if c > 0.0 else 0.0) + increments[j, k]
            current[k] = c
            b = best[k]
            best[k] = c if c > b else b


def interval_regret_table(probs: np.ndarray, losses: np.ndarray) -> np.ndarray:
    """Return ``A[a−1, b] = Σ_{t=a}^{b} h_t − min_i Σ_{t=a}^{b} l_{t,i}`` for every interval.

    The regret on ``[a, b]`` to the best expert of that interval (Hazan & Seshadhri 2009; Luo
    2016, §2.3.3), from prefix sums of ``h`` and of ``l``. Shape (T+1, T+1); ``-inf`` where
    ``b < a``.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)

    Returns
    -------
    ndarray, shape (T+1, T+1)
    """
    probs, losses = check_history(probs, losses)
    learner = np.concatenate([[0.0], np.cumsum(learner_losses(probs, losses))])  # Ĥ_0 .. Ĥ_T
    table = (learner[None, :] - learner[:, None]) - _best_fixed_interval_loss(losses)
    return table


def adaptive_regret(probs: np.ndarray, losses: np.ndarray) -> float:
    """Adaptive regret: the largest interval regret over all intervals ``[a, b] ⊆ [1, T]``.

    ``AR_T = max_{1≤a≤b≤T} [Σ_{t=a}^{b} h_t − min_i Σ_{t=a}^{b} l_{t,i}]`` (Hazan & Seshadhri
    2009), by enumerating all O(T²) intervals.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)

    Returns
    -------
    float
    """
    return float(interval_regret_table(probs, losses).max())


class AdaptiveRegret(ExpertsMetric):
    """Adaptive regret: the max over intervals ``[s, e] ⊆ [1, t]`` of the regret to the best expert.

    Because the max over intervals and over experts commute, it is the largest maximum-subarray
    sum of ``r_{·,i}`` over experts, kept by Kadane's recursion in O(N) per round (Hazan &
    Seshadhri 2009).
    """

    name = "adaptive_regret"
    reads_increments = True

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._current = np.zeros((spec.n_replicates, spec.n_actions))
        self._best = np.full((spec.n_replicates, spec.n_actions), -np.inf)

    def advance(self, block: Block, core: Core) -> None:
        _kadane_advance(regret_increments(block), self._current.reshape(-1), self._best.reshape(-1))

    def values(self, core: Core) -> np.ndarray:
        return self._best.max(axis=1)[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`adaptive_regret`."""
        return adaptive_regret(record.probs, record.losses)


# ----------------------------------------------------------------------------------------------
# strongly adaptive regret: sliding-window minimum of the prefix regret with a monotone deque


@njit(cache=True, nogil=True)
def _windows_advance(increments, t0, taus, offsets, prefix, starts, prefix_min, best):
    """Advance the max interval regret over windows of length ≤ τ, for every τ in one pass.

    With ``C_a`` the prefix regret of expert i (``C_0 = 0``), the best window ending at round b is
    ``C_b − min_{max(0, b−τ) ≤ a ≤ b−1} C_a``. The starts a are cut into blocks of τ consecutive
    values (van Herk / Gil-Werman): the window's starts span the current block, whose running
    minimum is ``prefix_min[q]``, and the tail of the previous block. One array per τ,
    ``starts[offsets[q] : offsets[q] + τ]``, serves both: when a block of starts completes it is
    turned in place into its suffix minima, and the next block's values overwrite it one
    position per round, just after the suffix minimum at the following position was read.

    Every (replicate, expert) pair is an independent lane: ``increments`` is (n, L) with
    L = R·N (see :func:`~arena.metrics.base.regret_increments`), ``prefix`` (L,) holds
    ``C_{t0−1}`` and is advanced, ``starts`` is (Σ τ, L), ``prefix_min`` and ``best`` (Q, L).
    Each round is a few long elementwise passes: no branch depends on the data and nothing is
    reduced across lanes, so they vectorize whatever N is.
    """
    n, n_lanes = increments.shape
    for j in range(n):
        hi = t0 + j - 1  # the newest start, a = b − 1
        for q in range(taus.shape[0]):
            tau = taus[q]
            off = offsets[q]
            p = hi % tau
            if p == 0:
                if hi > 0:
                    # a block of starts is complete: its suffix minima, in place, serve the next
                    # τ rounds
                    for a in range(off + tau - 2, off - 1, -1):
                        for k in range(n_lanes):
                            v = starts[a, k]
                            w = starts[a + 1, k]
                            starts[a, k] = v if v < w else w
                for k in range(n_lanes):
                    prefix_min[q, k] = np.inf
            row = off + p
            # Two copies of the lane loop, with and without the previous block's tail, so that
            # the choice is made once per round and τ, not per lane (keeps the loops vectorized).
            if hi >= tau and p < tau - 1:
                for k in range(n_lanes):
                    c_prev = prefix[k]
                    m = prefix_min[q, k]
                    m = c_prev if c_prev < m else m
                    prefix_min[q, k] = m
                    starts[row, k] = c_prev
                    tail = starts[row + 1, k]
                    m = tail if tail < m else m
                    v = c_prev + increments[j, k] - m
                    b = best[q, k]
                    best[q, k] = v if v > b else b
            else:
                for k in range(n_lanes):
                    c_prev = prefix[k]
                    m = prefix_min[q, k]
                    m = c_prev if c_prev < m else m
                    prefix_min[q, k] = m
                    starts[row, k] = c_prev
                    v = c_prev + increments[j, k] - m
                    b = best[q, k]
                    best[q, k] = v if v > b else b
        for k in range(n_lanes):
            prefix[k] += increments[j, k]


def sa_regret(probs: np.ndarray, losses: np.ndarray, tau: int) -> float:
    """Strongly adaptive regret ``SA_≤(τ)``: the largest regret over intervals of length ≤ τ.

    Daniely, Gonen & Shalev-Shwartz 2015 (the "|I| ≤ τ" variant) by
    enumerating all intervals ``[a, b] ⊆ [1, T]`` with ``b − a + 1 ≤ τ``. For ``τ ≥ T`` it is
    :func:`adaptive_regret`.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)
    tau : int
        Largest interval length, ≥ 1.

    Returns
    -------
    float
    """
    if tau < 1 or int(tau) != tau:
        raise ValueError(f"tau must be an integer ≥ 1, got {tau!r}")
    table = interval_regret_table(probs, losses)
    start, end = np.indices(table.shape)  # start = a − 1
    return float(table[(end > start) & (end - start <= tau)].max())


class StronglyAdaptiveRegret(ExpertsMetric):
    """Strongly adaptive regret: the max regret over intervals of length at most τ ending by t.

    ``SA_≤(τ) = max over [s, e] ⊆ [1, t] with e − s + 1 ≤ τ of Σ_{u=s}^{e} h_u − min_i
    Σ_{u=s}^{e} l_{u,i}`` (Daniely, Gonen & Shalev-Shwartz 2015). Exact: a
    sliding-window minimum of the prefix regret per expert (block decomposition instead of a
    monotone deque: same result, no data-dependent branches), O(N) amortized time per round
    and O(τN) memory per replicate, independent of T. For τ ≥ T it equals ``adaptive_regret``,
    computed by Kadane instead.

    Parameters
    ----------
    tau : list of int
        Window lengths, each ≥ 1.
    """

    name = "sa_regret"
    reads_increments = True
    param_name = "tau"

    def __init__(self, tau=(100, 1000)):
        self.tau = tau

    def param_values(self, spec: GameSpec) -> list[float]:
        return self._param_list(self.tau, int, lambda v: None if v >= 1 else "τ must be ≥ 1")

    def footprint(self, spec: GameSpec) -> Footprint:
        """The (Στ, R·N) suffix minima of the windows shorter than T, and their O(N) update."""
        horizon = spec.horizon if spec.horizon is not None else np.iinfo(np.int64).max
        windowed = sorted({int(t) for t in self.param_values(spec) if t < horizon})
        lanes, rows = spec.n_replicates * spec.n_actions, sum(windowed)
        return Footprint(
            memory=8 * lanes * (rows + 3 * len(windowed) + 3),
            work=6 * lanes * (len(windowed) + 1),
            parameter="tau",
            what=f"tau={windowed}: a {shape_text(rows, lanes)} float64 array of suffix minima",
            advice="lower tau (a τ ≥ T costs nothing: it is adaptive_regret), n_actions or "
            "replicates",
        )

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        n_rep, n_act = spec.n_replicates, spec.n_actions
        horizon = spec.horizon if spec.horizon is not None else np.iinfo(np.int64).max
        self._taus = self.param_values(spec)
        self._windowed = sorted({t for t in self._taus if t < horizon})
        n_lanes, n_win = n_rep * n_act, len(self._windowed)
        self._tau_array = np.array(self._windowed, dtype=np.int64)
        self._offsets = np.concatenate([[0], np.cumsum(self._tau_array)[:-1]]).astype(np.int64)
        # one lane per (replicate, expert); per τ, C_a of the current block of starts, which
        # overwrite the previous block's suffix minima
        self._prefix = np.zeros(n_lanes)
        self._starts = np.zeros((int(self._tau_array.sum()), n_lanes))
        self._prefix_min = np.full((n_win, n_lanes), np.inf)
        self._best = np.full((n_win, n_lanes), -np.inf)
        self._kadane = None
        if len(self._windowed) < len(set(self._taus)):  # some τ ≥ T: that is adaptive regret
            self._kadane = AdaptiveRegret()
            self._kadane.start(spec)

    def advance(self, block: Block, core: Core) -> None:
        if self._kadane is not None:
            self._kadane.advance(block, core)
        if self._windowed:
            _windows_advance(
                regret_increments(block),
                block.t0,
                self._tau_array,
                self._offsets,
                self._prefix,
                self._starts,
                self._prefix_min,
                self._best,
            )

    def values(self, core: Core) -> np.ndarray:
        n_rep = self._spec.n_replicates
        by_tau = {
            tau: self._best[q].reshape(n_rep, -1).max(axis=1)
            for q, tau in enumerate(self._windowed)
        }
        cols = [by_tau[t] if t in by_tau else self._kadane.values(core)[:, 0] for t in self._taus]
        return np.stack(cols, axis=1)

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`sa_regret`."""
        return sa_regret(record.probs, record.losses, int(param))
