"""``shifting_regret``: the regret to expert paths with at most k switches (Herbster & Warmuth
1998; Luo 2016, §2.3.3), its O(kN)-per-round dynamic program, the segment DP of its definition and
the path enumeration that checks it; the best single expert's loss on every interval, which the
adaptive regrets' definitions share. Notation as in :mod:`arena.metrics`."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
from numba import njit

from arena.base import Footprint, shape_text
from arena.metrics.base import Block, Core, ExpertsMetric, ExpertsRecord
from arena.metrics.literal import check_history, check_losses, learner_losses
from arena.spec import GameSpec


@njit(cache=True, nogil=True)
def _shifting_advance(losses, table, best, carry):
    """Advance the k-switch DP over a chunk.

    ``table[r, i, j]`` is the least loss of a path ending at expert i with at most j switches and
    ``best[r, j]`` its minimum over i. Staying keeps the budget; switching in from the best end
    state of budget j−1 spends one (Herbster & Warmuth 1998). The budgets are the contiguous inner
    axis, so each expert's update is one vectorizable pass (``carry`` is scratch of length k+1);
    experts go two at a time so that each pass over the running minima serves two rows. Starting
    from zeros makes round 1 correct without a special case.
    """
    n_rep, n, n_act = losses.shape
    n_budget = table.shape[2]
    for r in range(n_rep):
        minima = best[r]
        for j in range(n):
            carry[0] = np.inf
            for b in range(1, n_budget):
                carry[b] = minima[b - 1]
            for b in range(n_budget):
                minima[b] = np.inf
            i = 0
            while i + 1 < n_act:
                loss_a = losses[r, j, i]
                loss_b = losses[r, j, i + 1]
                row_a = table[r, i]
                row_b = table[r, i + 1]
                for b in range(n_budget):
                    # selects rather than branches: branch-free, vectorizable
                    c = carry[b]
                    x = row_a[b]
                    y = row_b[b]
                    v = (x if x < c else c) + loss_a
                    w = (y if y < c else c) + loss_b
                    row_a[b] = v
                    row_b[b] = w
                    m = minima[b]
                    m = v if v < m else m
                    minima[b] = w if w < m else m
                i += 2
            if i < n_act:
                loss_a = losses[r, j, i]
                row_a = table[r, i]
                for b in range(n_budget):
                    c = carry[b]
                    x = row_a[b]
                    v = (x if x < c else c) + loss_a
                    row_a[b] = v
                    m = minima[b]
                    minima[b] = v if v < m else m


def _best_fixed_interval_loss(losses: np.ndarray) -> np.ndarray:
    """Return ``G[a−1, b] = min_i Σ_{t=a}^{b} l_{t,i}``, the best single expert's loss on [a, b].

    Entries with ``b < a`` (no such interval) are ``+inf``. Computed from the prefix sums
    ``S_b = Σ_{t≤b} l_t`` (``S_0 = 0``) as ``min_i (S_{b,i} − S_{a−1,i})``, for all O(T²) intervals
    at once (prefix arrays with a leading zero row). The table is
    shared by the shifting, adaptive and strongly adaptive regrets, so the last few are cached
    (read-only) by the content of ``losses``.
    """
    losses = np.ascontiguousarray(losses, dtype=np.float64)
    return _best_fixed_interval_loss_cached(losses.shape, losses.tobytes())


@functools.lru_cache(maxsize=8)
def _best_fixed_interval_loss_cached(shape: tuple[int, int], data: bytes) -> np.ndarray:
    losses = np.frombuffer(data, dtype=np.float64).reshape(shape)
    n_act = losses.shape[1]
    prefix = np.vstack([np.zeros((1, n_act)), np.cumsum(losses, axis=0)])  # S_0 .. S_T
    table = (prefix[None, :, :] - prefix[:, None, :]).min(axis=2)  # [a−1, b]
    n = prefix.shape[0]
    start, end = np.indices((n, n))
    table[end <= start] = np.inf
    table.flags.writeable = False
    return table


def shifting_opt(losses: np.ndarray, k: int) -> float:
    """Least loss ``L*_k`` of an expert path with at most k switches, by a segment DP.

    Herbster & Warmuth 1998 (definition) and Luo 2016, §2.3.3 (K-shifting regret: k switches =
    K = k + 1 segments,
    repeats allowed). The recursion is over segments rather than rounds, independent of the
    per-round kernel: ``best[0][b] = min_i L_{b,i}`` and

    ``best[j][b] = min over 1 ≤ a ≤ b and i of best[j−1][a−1] + Σ_{t=a}^{b} l_{t,i}``,

    with ``best[j][0] = 0``: the last segment ``[a, b]`` is played by one expert, and the rounds
    before it by a path with at most j − 1 switches. Choosing ``a = 1`` gives ``best[j] ≤
    best[j−1]``, so "at most" is automatic. O(T²N + kT²) time, O(T²) memory.

    Parameters
    ----------
    losses : ndarray, shape (T, N)
    k : int
        Switch budget, ≥ 0.

    Returns
    -------
    float
    """
    losses = check_losses(losses)
    if k < 0 or int(k) != k:
        raise ValueError(f"k must be an integer ≥ 0, got {k!r}")
    segment = _best_fixed_interval_loss(losses)  # [a−1, b]
    best = segment[0].copy()  # best[0][b]
    best[0] = 0.0
    # more than T − 1 switches cannot help: T rounds have at most T segments
    for _ in range(min(int(k), losses.shape[0] - 1)):
        best = (best[:, None] + segment).min(axis=0)
        best[0] = 0.0
    return float(best[-1])


def shifting_regret(probs: np.ndarray, losses: np.ndarray, k: int) -> float:
    """Shifting (tracking) regret ``Ĥ_T − L*_k`` against paths with at most k switches.

    Herbster & Warmuth 1998; Luo 2016, §2.3.3, with K = k + 1 segments. ``L*_k`` comes from
    :func:`shifting_opt`.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)
    k : int
        Switch budget, ≥ 0 (``k = 0`` is the external regret).

    Returns
    -------
    float
    """
    probs, losses = check_history(probs, losses)
    return float(learner_losses(probs, losses).sum() - shifting_opt(losses, k))


def exhaustive_shifting_opt(losses: np.ndarray, k: int) -> float:
    """``L*_k`` by enumerating all ``N^T`` expert paths and keeping those with at most k switches.

    The literal definition (``#{t : i_t ≠ i_{t−1}} ≤ k``, Herbster & Warmuth 1998), the oracle
    against which the dynamic program is tested. Exponential: only for T ≤ ~8.

    Parameters
    ----------
    losses : ndarray, shape (T, N)
    k : int
        Switch budget, ≥ 0.

    Returns
    -------
    float
    """
    losses = check_losses(losses)
    n_rounds, n_act = losses.shape
    if n_act**n_rounds > 10**6:
        raise ValueError(f"N^T = {n_act}^{n_rounds} paths is too many to enumerate")
    rounds = np.arange(n_rounds)
    best = math.inf
    for path in itertools.product(range(n_act), repeat=n_rounds):
        switches = sum(1 for t in range(1, n_rounds) if path[t] != path[t - 1])
        if switches <= k:
            best = min(best, float(losses[rounds, list(path)].sum()))
    return best


class ShiftingRegret(ExpertsMetric):
    """Shifting regret ``Ĥ_t − L*_k``: the comparator may switch experts at most k times.

    ``L*_k`` is the least loss of an expert sequence with at most k switches (k+1 segments,
    repeats allowed), computed exactly by an O(kN)-per-round dynamic program (Herbster & Warmuth
    1998; Luo 2016, §2.3.3, with K = k+1 segments). ``k = 0`` is the
    ordinary regret.

    Parameters
    ----------
    k : list of int
        Switch budgets, each ≥ 0.
    """

    name = "shifting_regret"
    param_name = "k"

    def __init__(self, k=(1, 2, 4, 8, 16)):
        self.k = k

    def param_values(self, spec: GameSpec) -> list[float]:
        return self._param_list(self.k, int, lambda v: None if v >= 0 else "k must be ≥ 0")

    def _budgets(self, spec: GameSpec) -> int:
        """The DP's budget columns: ``min(max k, T − 1) + 1``.

        T rounds allow at most T − 1 switches, and after round t every column ``j ≥ t − 1``
        holds the same values (by induction over the DP's update), so a budget k ≥ T − 1 reads
        column T − 1 and gets exactly the values its own column would hold, bit for bit; the
        table of ``k=[10**7]`` in a game of 1000 rounds is then 1000 columns wide, not 10⁷.
        """
        most = max(self.param_values(spec))
        if spec.horizon is not None:
            most = min(most, max(int(spec.horizon) - 1, 0))
        return int(most) + 1

    def footprint(self, spec: GameSpec) -> Footprint:
        """The (R, N, budgets) table and its O(N·budgets) update per round and replicate."""
        n_rep, n_act, budgets = spec.n_replicates, spec.n_actions, self._budgets(spec)
        return Footprint(
            memory=8 * budgets * (n_rep * n_act + n_rep + 1),
            work=4 * n_rep * n_act * budgets,
            parameter="k",
            what=f"k up to {max(self.param_values(spec))}: a {shape_text(n_rep, n_act, budgets)} "
            "float64 table",
            advice="lower k (a game of T rounds has at most T − 1 switches), n_actions or "
            "replicates",
        )

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        budgets = self._budgets(spec)
        # a k beyond T − 1 reads the last column, which holds its values exactly
        self._ks = [min(int(k), budgets - 1) for k in self.param_values(spec)]
        self._table = np.zeros((spec.n_replicates, spec.n_actions, budgets))
        self._best = np.zeros((spec.n_replicates, budgets))
        self._carry = np.empty(budgets)

    def advance(self, block: Block, core: Core) -> None:
        _shifting_advance(block.losses, self._table, self._best, self._carry)

    def values(self, core: Core) -> np.ndarray:
        return np.stack([core.learner - self._best[:, k] for k in self._ks], axis=1)

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`shifting_regret`."""
        return shifting_regret(record.probs, record.losses, int(param))
