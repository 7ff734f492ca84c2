"""The regret of the checkpoint round and its average over the rounds since the previous
checkpoint: ``instant_regret``, ``window_regret`` (against the round's best expert), their
pseudo-regret twins from the adversary's means, and ``instant_leader_regret``,
``window_leader_regret`` (against the best expert so far), with the kernels that keep their
window sums chunk-invariant. Notation as in :mod:`arena.metrics`."""

from __future__ import annotations

import numpy as np
from numba import njit

from arena.metrics.base import Block, Core, ExpertsMetric, ExpertsRecord
from arena.metrics.literal import check_history, required
from arena.spec import GameSpec


def instant_regret(probs: np.ndarray, losses: np.ndarray) -> float:
    """Regret of the last round alone, ``p_T·l_T − min_i l_{T,i}``.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)

    Returns
    -------
    float
    """
    probs, losses = check_history(probs, losses)
    p, l_last = probs[-1], losses[-1]
    return float(sum(float(p[i]) * float(l_last[i]) for i in range(len(p))) - l_last.min())


class InstantRegret(ExpertsMetric):
    """Regret of the checkpoint round alone, ``p_t·l_t − min_i l_{t,i}``: the instantaneous regret
    against the round's best expert (the increment of ``dynamic_regret`` at round t).

    Logged at every checkpoint as that round's value; with ``checkpoints`` listing every round
    (:func:`arena.game.run_game`), the tidy table holds the whole per-round sequence.

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", "fair_coin", n_actions=2, horizon=5, checkpoints=[1, 2, 3, 4, 5],
    ...           metrics={"instant_regret": {}})
    >>> bool((df.value >= 0).all()) and len(df) == 5
    True
    """

    name = "instant_regret"

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._last = np.zeros(spec.n_replicates)

    def advance(self, block: Block, core: Core) -> None:
        self._last = block.expected[:, -1] - block.losses[:, -1].min(axis=1)

    def values(self, core: Core) -> np.ndarray:
        return self._last[:, None].copy()

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`instant_regret`."""
        return instant_regret(record.probs, record.losses)


def instant_pseudo_regret(probs: np.ndarray, means: np.ndarray) -> float:
    """Pseudo-regret of the last round alone, ``p_T·μ_T − min_i μ_{T,i}``.

    Parameters
    ----------
    probs, means : ndarray, shape (T, N)

    Returns
    -------
    float
    """
    return instant_regret(probs, means)


class InstantPseudoRegret(InstantRegret):
    """Pseudo-regret of the checkpoint round alone, ``p_t·μ_t − min_i μ_{t,i}``, from the
    adversary's mean losses (the per-round gap the learner pays in expectation).

    Logged only when the adversary exposes the oracle ``means``; the sum over rounds of a
    stationary game is ``Σ_i Δ_i E[T_i(t)]``'s expectation given the history
    (Lattimore & Szepesvári 2020, Lemma 4.5).

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", "bernoulli", n_actions=2, horizon=4, checkpoints=[1, 2, 3, 4],
    ...           metrics={"instant_pseudo_regret": {}})
    >>> round(float(df.value.iloc[0]), 6)  # round 1: uniform play, gap 0.1
    0.05
    """

    name = "instant_pseudo_regret"
    requires = frozenset({"means"})

    def advance(self, block: Block, core: Core) -> None:
        p, mu = block.probs[:, -1], block.means[:, -1]
        self._last = (p * mu).sum(axis=1) - mu.min(axis=1)

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`instant_pseudo_regret`."""
        return instant_pseudo_regret(record.probs, required(record, "means", self.name))


@njit(cache=True, nogil=True)
def _add_in_round_order(per_round, sums):
    """Add ``per_round[r, j]`` to ``sums[r]`` one round after the other, so that the sum is the
    same to the last bit however the rounds were split into chunks."""
    n_rep, n = per_round.shape
    for r in range(n_rep):
        for j in range(n):
            sums[r] += per_round[r, j]


@njit(cache=True, nogil=True)
def _add_gaps_in_round_order(expected, losses, sums):
    """Add ``expected[r, j] − min_i losses[r, j, i]`` to ``sums[r]`` one round after the other.

    The same values as ``_add_in_round_order(expected − losses.min(axis=2), sums)`` to the last
    bit (the minimum is exact and propagates a NaN as numpy's does), in one pass and without
    the (R, n) temporary: numpy's reduction over a last axis of N = 10 costs several times the
    loop.
    """
    n_rep, n, n_act = losses.shape
    for r in range(n_rep):
        for j in range(n):
            m = losses[r, j, 0]
            for i in range(1, n_act):
                x = losses[r, j, i]
                if x < m or x != x:
                    m = x
            sums[r] += expected[r, j] - m


def window_regret(probs: np.ndarray, losses: np.ndarray, previous: int) -> float:
    """Average of ``p_s·l_s − min_i l_{s,i}`` over the rounds ``previous < s ≤ T``.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)
    previous : int
        The previous checkpoint (0 for the first).

    Returns
    -------
    float
    """
    probs, losses = check_history(probs, losses)
    rounds = range(previous, probs.shape[0])
    per_round = [float(probs[s] @ losses[s]) - float(losses[s].min()) for s in rounds]
    return sum(per_round) / len(per_round)


class WindowRegret(ExpertsMetric):
    """Average per-round regret since the previous checkpoint,
    ``(1/(t − t')) Σ_{t' < s ≤ t} (p_s·l_s − min_i l_{s,i})`` (t' the previous checkpoint, 0 at
    first): :class:`InstantRegret` averaged over the rounds the tidy table does not show.

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", "fair_coin", n_actions=2, horizon=100, checkpoints=[10, 100],
    ...           metrics={"window_regret": {}, "dynamic_regret": {}})
    >>> v = df.pivot_table(index="t", columns="metric", values="value")
    >>> bool(np.isclose(10 * v.window_regret[10] + 90 * v.window_regret[100],
    ...                 v.dynamic_regret[100]))
    True
    """

    name = "window_regret"

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._sum = np.zeros(spec.n_replicates)
        self._rounds = 0

    def advance(self, block: Block, core: Core) -> None:
        _add_gaps_in_round_order(block.expected, block.losses, self._sum)
        self._rounds += block.expected.shape[1]

    def values(self, core: Core) -> np.ndarray:
        out = (self._sum / self._rounds)[:, None]
        self._sum = np.zeros_like(self._sum)
        self._rounds = 0
        return out

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`window_regret`."""
        return window_regret(record.probs, record.losses, record.previous)


@njit(cache=True, nogil=True)
def _pairwise_block(a, lo, n):
    """numpy's pairwise summation of ``a[lo:lo+n]`` for ``n ≤ 128``: a plain loop below 8
    terms, else eight partial sums over the multiples of 8, combined as a tree, then the rest."""
    if n < 8:
        res = -0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - n % 8:
        k = lo + i
        r0 += a[k]
        r1 += a[k + 1]
        r2 += a[k + 2]
        r3 += a[k + 3]
        r4 += a[k + 4]
        r5 += a[k + 5]
        r6 += a[k + 6]
        r7 += a[k + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True, nogil=True)
def _pairwise_sum(a, n):
    """``a[:n].sum()`` added exactly as numpy adds a contiguous run (``pairwise_sum`` in numpy's
    ``loops_utils.h``): blocks of at most 128 terms (:func:`_pairwise_block`), and above that
    the sum of the two halves, the first rounded down to a multiple of 8, recursively. So a
    kernel reproduces ``x.sum(axis=-1)`` to the last bit (``0.0 + _pairwise_sum(...)``: numpy's
    reduction starts from its identity, +0).

    Small enough to be inlined into a caller's loop: the long runs' recursion is a function of
    its own (with it in this body, a per-round call of 10 terms took 27 ns, against 17)."""
    if n <= 128:
        return _pairwise_block(a, 0, n)
    return _pairwise_halves(a, n)


@njit(cache=True, nogil=True)
def _pairwise_halves(a, n):
    """:func:`_pairwise_sum` of more than 128 terms: the sum of the two halves, the first
    rounded down to a multiple of 8, recursively. The recursion runs on an explicit stack:
    numba's on-disk cache cannot load a self-recursive function."""
    f_lo = np.empty(64, np.int64)
    f_n = np.empty(64, np.int64)
    f_stage = np.zeros(64, np.int64)  # 1: waiting for the left half, 2: for the right half
    f_left = np.empty(64)
    depth = 0
    f_lo[0], f_n[0], f_stage[0] = 0, n, 0
    while True:
        lo, size = f_lo[depth], f_n[depth]
        half = size // 2
        half -= half % 8
        if f_stage[depth] == 0:  # the left half
            f_stage[depth] = 1
            if half > 128:
                depth += 1
                f_lo[depth], f_n[depth], f_stage[depth] = lo, half, 0
                continue
            f_left[depth] = _pairwise_block(a, lo, half)
        # the right half
        if size - half > 128:
            f_stage[depth] = 2
            depth += 1
            f_lo[depth], f_n[depth], f_stage[depth] = lo + half, size - half, 0
            continue
        value = f_left[depth] + _pairwise_block(a, lo + half, size - half)
        # hand the value up until a frame still needs its right half
        while True:
            if depth == 0:
                return value
            depth -= 1
            if f_stage[depth] == 1:
                f_left[depth] = value
                break
            value = f_left[depth] + value


@njit(cache=True, nogil=True)
def _add_pseudo_gaps_in_round_order(probs, means, lowest, sums):
    """Add ``p_{r,j}·μ_{r,j} − lowest[r, j]`` to ``sums[r]`` one round after the other: the
    values of ``_add_in_round_order((probs * means).sum(axis=2) − lowest, sums)`` to the last
    bit (the products, then numpy's own summation order), without the (R, n, N) temporary."""
    n_rep, n, n_act = probs.shape
    row = np.empty(n_act)
    for r in range(n_rep):
        for j in range(n):
            for i in range(n_act):
                row[i] = probs[r, j, i] * means[r, j, i]
            sums[r] += (0.0 + _pairwise_sum(row, n_act)) - lowest[r, j]


def window_pseudo_regret(probs: np.ndarray, means: np.ndarray, previous: int) -> float:
    """Average of ``p_s·μ_s − min_i μ_{s,i}`` over the rounds ``previous < s ≤ T``.

    Parameters
    ----------
    probs, means : ndarray, shape (T, N)
    previous : int
        The previous checkpoint (0 for the first).

    Returns
    -------
    float
    """
    return window_regret(probs, means, previous)


class WindowPseudoRegret(WindowRegret):
    """Average per-round pseudo-regret since the previous checkpoint,
    ``(1/(t − t')) Σ_{t' < s ≤ t} (p_s·μ_s − min_i μ_{s,i})``, from the adversary's means
    (:class:`InstantPseudoRegret` averaged over the rounds between checkpoints)."""

    name = "window_pseudo_regret"
    requires = frozenset({"means"})

    def advance(self, block: Block, core: Core) -> None:
        mu = block.means
        # constant means come broadcast with stride 0 over rounds: one round's minimum is them all
        lowest = mu[:, :1].min(axis=2) if mu.strides[1] == 0 else mu.min(axis=2)
        lowest = np.broadcast_to(lowest, mu.shape[:2])
        _add_pseudo_gaps_in_round_order(block.probs, mu, lowest, self._sum)
        self._rounds += mu.shape[1]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`window_pseudo_regret`."""
        return window_pseudo_regret(
            record.probs, required(record, "means", self.name), record.previous
        )


@njit(cache=True, nogil=True)
def _add_rows_in_round_order(per_round, sums):
    """Add ``per_round[r, j, i]`` to ``sums[r, i]`` one round after the other (chunk-invariant
    sums, as :func:`_add_in_round_order`)."""
    n_rep, n, n_act = per_round.shape
    for r in range(n_rep):
        for j in range(n):
            for i in range(n_act):
                sums[r, i] += per_round[r, j, i]


def _leader(cum_losses: np.ndarray) -> np.ndarray:
    """Per replicate, the expert with the smallest cumulative loss (the first one on ties)."""
    return cum_losses.argmin(axis=1)


def _leader_index(losses: np.ndarray) -> int:
    """The expert with the smallest total loss, the first one on ties (a plain loop)."""
    totals = [sum(float(x) for x in losses[:, i]) for i in range(losses.shape[1])]
    best = min(totals)
    return next(i for i, total in enumerate(totals) if total == best)


def instant_leader_regret(probs: np.ndarray, losses: np.ndarray) -> float:
    """Regret of the last round alone against the best expert so far, ``p_T·l_T − l_{T,i*}``
    with ``i* = argmin_i L_{T,i}`` (the first one on ties).

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)

    Returns
    -------
    float
    """
    probs, losses = check_history(probs, losses)
    leader = _leader_index(losses)
    p, l_last = probs[-1], losses[-1]
    learner = sum(float(p[i]) * float(l_last[i]) for i in range(len(p)))
    return learner - float(l_last[leader])


class InstantLeaderRegret(ExpertsMetric):
    """Regret of the checkpoint round alone against the best expert so far,
    ``p_t·l_t − l_{t,i*_t}`` with ``i*_t = argmin_i L_{t,i}`` (the first one on ties).

    The per-round regret against a fixed expert, the increments whose sum is ``regret``; the
    expert is the best in hindsight at the checkpoint, which at the last checkpoint T is the
    final best expert. (A metric cannot use the final best expert at earlier rounds without
    seeing the future; with ``checkpoints=all`` the tidy table's ``loss`` rows and an
    adversary's replay give it afterwards.) Unlike :class:`InstantRegret` (against the round's
    best expert) it can be negative.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ftl", "ftl_killer", n_actions=2, horizon=4, checkpoints=[1, 2, 3, 4],
    ...           metrics={"instant_leader_regret": {}})
    >>> df.value.tolist()  # FTL pays 1 a round after the first; each new leader paid 0
    [0.25, 1.0, 1.0, 1.0]
    """

    name = "instant_leader_regret"

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._last_h = np.zeros(spec.n_replicates)
        self._last_losses = np.zeros((spec.n_replicates, spec.n_actions))

    def advance(self, block: Block, core: Core) -> None:
        self._last_h = block.expected[:, -1].copy()
        self._last_losses = block.losses[:, -1].copy()

    def values(self, core: Core) -> np.ndarray:
        leader = _leader(core.cum_losses)
        own = self._last_losses[np.arange(leader.size), leader]
        return (self._last_h - own)[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`instant_leader_regret`."""
        return instant_leader_regret(record.probs, record.losses)


def window_leader_regret(probs: np.ndarray, losses: np.ndarray, previous: int) -> float:
    """Average of ``p_s·l_s − l_{s,i*}`` over the rounds ``previous < s ≤ T``, with ``i*`` the
    best expert over rounds 1..T (the first one on ties).

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)
    previous : int
        The previous checkpoint (0 for the first).

    Returns
    -------
    float
    """
    probs, losses = check_history(probs, losses)
    leader = _leader_index(losses)
    rounds = range(previous, probs.shape[0])
    per_round = [float(probs[s] @ losses[s]) - float(losses[s, leader]) for s in rounds]
    return sum(per_round) / len(per_round)


class WindowLeaderRegret(ExpertsMetric):
    """Average per-round regret since the previous checkpoint against the best expert so far,
    ``(1/(t − t')) Σ_{t' < s ≤ t} (p_s·l_s − l_{s,i*_t})`` with ``i*_t = argmin_i L_{t,i}``
    (t' the previous checkpoint, 0 at first; the first expert on ties).

    :class:`InstantLeaderRegret` averaged over the rounds the tidy table does not show; with a
    single checkpoint at T it is ``regret/T``.

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", "fair_coin", n_actions=3, horizon=50, checkpoints=[50],
    ...           metrics={"window_leader_regret": {}, "regret": {}})
    >>> v = df.set_index("metric").value
    >>> bool(np.isclose(50 * v.window_leader_regret, v.regret))
    True
    """

    name = "window_leader_regret"

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._reset_window(spec.n_replicates, spec.n_actions)

    def _reset_window(self, n_rep: int, n_act: int) -> None:
        self._sum_h = np.zeros(n_rep)
        self._sum_losses = np.zeros((n_rep, n_act))
        self._rounds = 0

    def advance(self, block: Block, core: Core) -> None:
        _add_in_round_order(block.expected, self._sum_h)
        _add_rows_in_round_order(block.losses, self._sum_losses)
        self._rounds += block.expected.shape[1]

    def values(self, core: Core) -> np.ndarray:
        leader = _leader(core.cum_losses)
        own = self._sum_losses[np.arange(leader.size), leader]
        out = ((self._sum_h - own) / self._rounds)[:, None]
        self._reset_window(*self._sum_losses.shape)
        return out

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`window_leader_regret`."""
        return window_leader_regret(record.probs, record.losses, record.previous)
