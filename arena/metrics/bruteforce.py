"""Brute-force definitions of every built-in metric, computed from one replicate's full history.

These are the test oracles of the streaming kernels in :mod:`arena.metrics.builtin` and the metric
side of the reference loop :func:`arena.experts.reference.reference_play`. Each function takes the
stored history of one replicate up to round ``t`` and returns the metric's value at round ``t``,
written as literally as the definition allows: every interval, every comparator and every sort is
explicit, and none of the streaming tricks of the kernels (Kadane, monotone deques, the per-round
k-switch recursion, ``np.partition``) is reused. Costs are polynomial but large (up to O(T²N)
memory), so keep T to a few hundred rounds.

Inputs (one replicate, rounds ``1..T`` as rows ``0..T-1``):

* ``probs`` (T, N): the player's distributions ``p_t``;
* ``losses`` (T, N): the loss vectors ``l_t``;
* ``actions`` (T,): the drawn actions ``I_t`` (0-based);
* ``means`` (T, N): the adversary's mean losses ``μ_t`` (pseudo-regret only);
* ``competitor`` (T, N): a time-varying competitor ``u_t ≥ 0`` (``tv_regret`` and its rows).

Notation (as in Luo 2016, §2.3): ``h_t = p_t·l_t``, ``Ĥ_T = Σ_t h_t``, ``L_{T,i} = Σ_t l_{t,i}``,
``R_{T,i} = Ĥ_T − L_{T,i}``.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from arena.metrics.base import exact_quantile_rank

__all__ = [
    "BRUTE_FORCE_METRICS",
    "adaptive_regret",
    "best_variation_regret_lp",
    "dynamic_regret",
    "entropy",
    "evaluate",
    "exhaustive_shifting_opt",
    "instant_leader_regret",
    "interval_regret_table",
    "loss",
    "pruning_coins",
    "pseudo_regret",
    "quantile_regret",
    "realized_loss",
    "realized_regret",
    "regret",
    "sa_regret",
    "shifting_opt",
    "shifting_regret",
    "subset_quantile_regret",
    "tree_prunings",
    "tree_regret",
    "tv_loss",
    "tv_regret",
    "tv_rows",
    "tv_variation",
    "window_leader_regret",
    "zero_weight_frac",
]


# ----------------------------------------------------------------------------------------------
# input checks and shared pieces


def _history(probs: np.ndarray, losses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    probs = np.asarray(probs, dtype=np.float64)
    losses = np.asarray(losses, dtype=np.float64)
    if losses.ndim != 2 or losses.shape[0] < 1 or losses.shape[1] < 1:
        raise ValueError(f"losses must have shape (T, N) with T, N ≥ 1, got {losses.shape}")
    if probs.shape != losses.shape:
        raise ValueError(f"probs has shape {probs.shape}, losses {losses.shape}")
    return probs, losses


def _losses(losses: np.ndarray) -> np.ndarray:
    losses = np.asarray(losses, dtype=np.float64)
    if losses.ndim != 2 or losses.shape[0] < 1 or losses.shape[1] < 1:
        raise ValueError(f"losses must have shape (T, N) with T, N ≥ 1, got {losses.shape}")
    return losses


def _learner_losses(probs: np.ndarray, losses: np.ndarray) -> np.ndarray:
    """Return ``h_t = p_t·l_t`` for every round, shape (T,)."""
    return (probs * losses).sum(axis=1)


def _realized_losses(losses: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Return ``l_{t, I_t}`` for every round, shape (T,)."""
    actions = np.asarray(actions, dtype=np.int64)
    if actions.shape != (losses.shape[0],):
        raise ValueError(f"actions must have shape ({losses.shape[0]},), got {actions.shape}")
    if actions.min() < 0 or actions.max() >= losses.shape[1]:
        raise ValueError("actions must be expert indices in [0, N)")
    return losses[np.arange(losses.shape[0]), actions]


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


# ----------------------------------------------------------------------------------------------
# losses and external regret


def loss(probs: np.ndarray, losses: np.ndarray) -> float:
    """Cumulative expected loss ``Ĥ_T = Σ_t p_t·l_t`` (the learner's loss ``p_t·ℓ_t`` of Luo 2016).

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)

    Returns
    -------
    float

    Examples
    --------
    >>> loss(np.array([[0.5, 0.5], [1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]))
    0.5
    """
    probs, losses = _history(probs, losses)
    return float(_learner_losses(probs, losses).sum())


def realized_loss(losses: np.ndarray, actions: np.ndarray) -> float:
    """Cumulative realized loss ``Σ_t l_{t, I_t}`` of the drawn actions (Luo 2016, §2.1.5).

    Parameters
    ----------
    losses : ndarray, shape (T, N)
    actions : ndarray of int, shape (T,)

    Returns
    -------
    float
    """
    losses = _losses(losses)
    return float(_realized_losses(losses, actions).sum())


def regret(probs: np.ndarray, losses: np.ndarray) -> float:
    """External regret ``Ĥ_T − min_i L_{T,i}`` to the best fixed expert.

    Luo 2016, Chapter 1 and §2.3 (``max_i R_{T,i}``). Computed as the largest of the per-expert
    regrets ``R_{T,i}``.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)

    Returns
    -------
    float
    """
    probs, losses = _history(probs, losses)
    learner = _learner_losses(probs, losses).sum()
    per_expert = learner - losses.sum(axis=0)  # R_{T,i}
    return float(per_expert.max())


def realized_regret(losses: np.ndarray, actions: np.ndarray) -> float:
    """Realized regret ``Σ_t l_{t,I_t} − min_i L_{T,i}`` (Luo 2016, §2.1.5).

    Parameters
    ----------
    losses : ndarray, shape (T, N)
    actions : ndarray of int, shape (T,)

    Returns
    -------
    float
    """
    losses = _losses(losses)
    return float(_realized_losses(losses, actions).sum() - losses.sum(axis=0).min())


def dynamic_regret(probs: np.ndarray, losses: np.ndarray) -> float:
    """Worst-case dynamic regret ``Ĥ_T − Σ_t min_i l_{t,i}`` (Zinkevich 2003).

    The comparator picks the best expert of every round; equals the shifting regret with
    ``k ≥ T − 1`` switches.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)

    Returns
    -------
    float
    """
    probs, losses = _history(probs, losses)
    return float(_learner_losses(probs, losses).sum() - losses.min(axis=1).sum())


def pseudo_regret(probs: np.ndarray, means: np.ndarray) -> float:
    """Pseudo-regret ``Σ_t p_t·μ_t − min_i Σ_t μ_{t,i}`` against the mean losses.

    The pseudo-regret ``max_i E[Σ_t(l_{t,I_t} − l_{t,i})]`` (Luo 2016, Appendix A.2, Theorem 21;
    Bubeck & Cesa-Bianchi 2012), with the expectation of the oblivious stochastic losses taken in
    closed form.

    Parameters
    ----------
    probs, means : ndarray, shape (T, N)
        The distributions ``p_t`` and the adversary's mean losses ``μ_t``.

    Returns
    -------
    float
    """
    probs, means = _history(probs, means)
    return float(_learner_losses(probs, means).sum() - means.sum(axis=0).min())


def instant_regret(probs: np.ndarray, losses: np.ndarray) -> float:
    """Regret of the last round alone, ``p_T·l_T − min_i l_{T,i}``.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)

    Returns
    -------
    float
    """
    probs, losses = _history(probs, losses)
    p, l_last = probs[-1], losses[-1]
    return float(sum(float(p[i]) * float(l_last[i]) for i in range(len(p))) - l_last.min())


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
    probs, losses = _history(probs, losses)
    rounds = range(previous, probs.shape[0])
    per_round = [float(probs[s] @ losses[s]) - float(losses[s].min()) for s in rounds]
    return sum(per_round) / len(per_round)


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
    probs, losses = _history(probs, losses)
    leader = _leader_index(losses)
    p, l_last = probs[-1], losses[-1]
    learner = sum(float(p[i]) * float(l_last[i]) for i in range(len(p)))
    return learner - float(l_last[leader])


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
    probs, losses = _history(probs, losses)
    leader = _leader_index(losses)
    rounds = range(previous, probs.shape[0])
    per_round = [float(probs[s] @ losses[s]) - float(losses[s, leader]) for s in rounds]
    return sum(per_round) / len(per_round)


def zero_weight_frac(probs: np.ndarray) -> float:
    """Fraction of experts with weight exactly 0 in the last distribution ``p_T``.

    Luo 2016, §2.2.1 and Figure 2.2 (the per-round fraction of zero weights).

    Parameters
    ----------
    probs : ndarray, shape (T, N)

    Returns
    -------
    float
    """
    last = np.asarray(probs, dtype=np.float64)[-1]
    return float(np.count_nonzero(last == 0.0) / last.size)


def entropy(probs: np.ndarray) -> float:
    """Shannon entropy ``−Σ_i p_{T,i} ln p_{T,i}`` (nats) of the last distribution, ``0 ln 0 = 0``.

    Parameters
    ----------
    probs : ndarray, shape (T, N)

    Returns
    -------
    float

    Examples
    --------
    >>> abs(entropy(np.array([[0.5, 0.5, 0.0]])) - math.log(2)) < 1e-15
    True
    """
    last = np.asarray(probs, dtype=np.float64)[-1]
    return float(-sum(p * math.log(p) for p in last.tolist() if p > 0.0))


# ----------------------------------------------------------------------------------------------
# quantile regret


def quantile_regret(probs: np.ndarray, losses: np.ndarray, eps: float) -> float:
    """ε-quantile regret: the k-th largest ``R_{T,i}`` with ``k = ⌈εN⌉`` (Chaudhuri et al. 2009).

    Luo 2016, §2.1.2: equivalently ``Ĥ_T − L_{T,(k)}`` with ``L_{(k)}`` the k-th
    smallest cumulative loss. ``k`` is computed exactly by
    :func:`arena.metrics.base.exact_quantile_rank` (floats get ``⌈εN⌉`` wrong), and the k-th
    largest is read
    off a full sort.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)
    eps : float
        Quantile ε in (0, 1].

    Returns
    -------
    float
    """
    if not 0 < eps <= 1:
        raise ValueError(f"eps must be in (0, 1], got {eps!r}")
    probs, losses = _history(probs, losses)
    k = exact_quantile_rank(eps, losses.shape[1])
    per_expert = _learner_losses(probs, losses).sum() - losses.sum(axis=0)  # R_{T,i}
    descending = np.sort(per_expert)[::-1]
    return float(descending[k - 1])


def subset_quantile_regret(probs: np.ndarray, losses: np.ndarray, eps: float) -> float:
    """Subset-uniform ε-quantile regret ``R(u_S)``: u uniform on the ``k = ⌈εN⌉`` experts with
    the smallest cumulative losses (Luo 2016, §2.3), from its definition ``Σ_t u·r_t``.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)
    eps : float
        Quantile ε in (0, 1].

    Returns
    -------
    float
    """
    if not 0 < eps <= 1:
        raise ValueError(f"eps must be in (0, 1], got {eps!r}")
    probs, losses = _history(probs, losses)
    k = exact_quantile_rank(eps, losses.shape[1])
    subset = np.argsort(losses.sum(axis=0), kind="stable")[:k]
    total = 0.0
    for t in range(losses.shape[0]):
        learner = float(probs[t] @ losses[t])
        total += sum(learner - float(losses[t, i]) for i in subset) / k
    return total


# ----------------------------------------------------------------------------------------------
# shifting regret


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
    losses = _losses(losses)
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
    probs, losses = _history(probs, losses)
    return float(_learner_losses(probs, losses).sum() - shifting_opt(losses, k))


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
    losses = _losses(losses)
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


# ----------------------------------------------------------------------------------------------
# adaptive and strongly adaptive regret


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
    probs, losses = _history(probs, losses)
    learner = np.concatenate([[0.0], np.cumsum(_learner_losses(probs, losses))])  # Ĥ_0 .. Ĥ_T
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


# ----------------------------------------------------------------------------------------------
# time-varying competitors


def _competitor(competitor: np.ndarray, losses: np.ndarray) -> np.ndarray:
    u = np.asarray(competitor, dtype=np.float64)
    if u.shape != losses.shape:
        raise ValueError(f"competitor has shape {u.shape}, losses {losses.shape}")
    if not (np.isfinite(u) & (u >= 0.0)).all():
        raise ValueError("a competitor must be finite and nonnegative")
    return u


def tv_regret(probs: np.ndarray, losses: np.ndarray, competitor: np.ndarray) -> float:
    """Regret to a time-varying competitor, ``R(u_{1:T}) = Σ_t Σ_i u_{t,i} (p_t·l_t − l_{t,i})``.

    Luo 2016, §2.3.3 ("General time-varying competitors"), summed over the whole (T, N) table of
    ``u_{t,i} r_{t,i}``.

    Parameters
    ----------
    probs, losses, competitor : ndarray, shape (T, N)
        ``competitor[t−1]`` is ``u_t`` (nonnegative).

    Returns
    -------
    float

    Examples
    --------
    >>> p = np.array([[0.5, 0.5], [0.5, 0.5]]); l = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> tv_regret(p, l, np.array([[0.0, 1.0], [1.0, 0.0]]))  # the per-round best: ½ + ½
    1.0
    """
    probs, losses = _history(probs, losses)
    u = _competitor(competitor, losses)
    hat = _learner_losses(probs, losses)
    return float((u * (hat[:, None] - losses)).sum())


def tv_variation(competitor: np.ndarray) -> float:
    """Variation ``V(u_{1:T}) = Σ_t Σ_i [u_{t,i} − u_{t−1,i}]_+`` with ``u_0 = 0``.

    Cesa-Bianchi, Gaillard, Lugosi & Stoltz 2012; Luo 2016, §2.3.3. The rows ``u_0 = 0, u_1, …,
    u_T`` are stacked and the positive parts of their differences summed.

    Parameters
    ----------
    competitor : ndarray, shape (T, N)

    Returns
    -------
    float

    Examples
    --------
    >>> tv_variation(np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]))  # 1 + 1 + ½
    2.5
    """
    u = np.asarray(competitor, dtype=np.float64)
    rows = np.vstack([np.zeros((1, u.shape[1])), u])  # u_0 = 0, u_1, …, u_T
    return float(np.maximum(rows[1:] - rows[:-1], 0.0).sum())


def tv_loss(probs: np.ndarray, losses: np.ndarray, competitor: np.ndarray) -> float:
    """The competitor's excess loss ``L̃(u_{1:T}) = Σ_t Σ_i u_{t,i} [l_{t,i} − p_t·l_t]_+``.

    Luo 2016, §2.3.3, after Theorem 7.

    Parameters
    ----------
    probs, losses, competitor : ndarray, shape (T, N)

    Returns
    -------
    float
    """
    probs, losses = _history(probs, losses)
    u = _competitor(competitor, losses)
    hat = _learner_losses(probs, losses)
    return float((u * np.maximum(losses - hat[:, None], 0.0)).sum())


def best_variation_regret_lp(probs: np.ndarray, losses: np.ndarray, budget: float) -> float:
    """``max R(u_{1:T})`` over sequences of distributions ``u_t ∈ Δ_N`` with ``V(u_{1:T}) ≤
    budget``, by a linear program (the literal definition; Luo 2016, §2.3.3).

    Variables ``u_{t,i} ≥ 0`` and ``d_{t,i} ≥ u_{t,i} − u_{t−1,i}``, ``d ≥ 0`` (``u_0 = 0``), with
    ``Σ_i u_{t,i} = 1`` and ``Σ d ≤ budget``; maximize ``Σ u_{t,i} r_{t,i}``. Solved by HiGHS
    (``scipy.optimize.linprog``) to its default tolerances, ~1e-9 on instances of a few rounds.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)
    budget : float
        The variation budget V ≥ 1.

    Returns
    -------
    float
    """
    from scipy.optimize import linprog

    probs, losses = _history(probs, losses)
    n_rounds, n_act = losses.shape
    regret = _learner_losses(probs, losses)[:, None] - losses
    n_u = n_rounds * n_act
    cost = np.concatenate([-regret.reshape(-1), np.zeros(n_u)])  # minimize −R
    a_ub, b_ub = [], []
    for t in range(n_rounds):
        for i in range(n_act):
            row = np.zeros(2 * n_u)
            row[t * n_act + i] = 1.0  # u_{t,i} − u_{t−1,i} − d_{t,i} ≤ 0
            if t > 0:
                row[(t - 1) * n_act + i] = -1.0
            row[n_u + t * n_act + i] = -1.0
            a_ub.append(row)
            b_ub.append(0.0)
    a_ub.append(np.concatenate([np.zeros(n_u), np.ones(n_u)]))  # Σ d ≤ budget
    b_ub.append(float(budget))
    a_eq = np.zeros((n_rounds, 2 * n_u))
    for t in range(n_rounds):
        a_eq[t, t * n_act : (t + 1) * n_act] = 1.0
    result = linprog(cost, A_ub=np.array(a_ub), b_ub=b_ub, A_eq=a_eq, b_eq=np.ones(n_rounds))
    if result.status != 0:
        raise ValueError(f"the variation LP failed: {result.message}")
    return float(-result.fun)


def tv_rows(
    name: str,
    probs: np.ndarray,
    losses: np.ndarray,
    competitor: np.ndarray,
    constant: np.ndarray | None = None,
) -> list[tuple[str, float, list[float]]]:
    """The rows of the metric ``name`` (``tv_regret``, ``tv_variation`` or ``tv_loss``) for R
    replicates, from their whole histories (the reference loops' side of those metrics).

    One row of :func:`tv_regret`, :func:`tv_variation` or :func:`tv_loss` per replicate; for
    ``tv_regret`` and a player declaring Theorem 7's interval constant ``A`` (one per replicate),
    also ``bound:tv_regret = A V/2 + sqrt((A V/2)² + 2 A V L̃)`` (Luo 2016, §2.3.3, Theorem 7
    and Lemma 5; derivation in :mod:`arena.metrics.time_varying`).

    Parameters
    ----------
    name : str
    probs, losses, competitor : ndarray, shape (R, T, N)
    constant : ndarray of shape (R,), or None
        The player's ``interval_regret_constant(T)``; None: no bound row.

    Returns
    -------
    list of (metric, param, values by replicate)
    """
    reps = range(losses.shape[0])
    if name == "tv_variation":
        return [(name, math.nan, [tv_variation(competitor[r]) for r in reps])]
    if name == "tv_loss":
        return [(name, math.nan, [tv_loss(probs[r], losses[r], competitor[r]) for r in reps])]
    if name != "tv_regret":
        raise NotImplementedError(f"no time-varying-competitor metric {name!r}")
    rows = [(name, math.nan, [tv_regret(probs[r], losses[r], competitor[r]) for r in reps])]
    if constant is not None:
        bound = []
        for r in reps:
            half = 0.5 * float(constant[r]) * tv_variation(competitor[r])
            excess = tv_loss(probs[r], losses[r], competitor[r])
            bound.append(half + math.sqrt(half * half + 4.0 * half * excess))  # Theorem 7
        rows.append(("bound:tv_regret", math.nan, bound))
    return rows


# ----------------------------------------------------------------------------------------------
# dispatch by metric name


BRUTE_FORCE_METRICS = (
    "loss",
    "realized_loss",
    "regret",
    "realized_regret",
    "quantile_regret",
    "subset_quantile_regret",
    "shifting_regret",
    "adaptive_regret",
    "sa_regret",
    "dynamic_regret",
    "pseudo_regret",
    "instant_regret",
    "instant_pseudo_regret",
    "window_regret",
    "window_pseudo_regret",
    "instant_leader_regret",
    "window_leader_regret",
    "zero_weight_frac",
    "entropy",
    "sleeping_regret",
    "tv_regret",
    "tv_variation",
    "tv_loss",
    "dg_score",
    "arm_pulls",
    "arm_pseudo_regret",
    "tree_regret",
)
"""Registry names of the metrics :func:`evaluate` knows (every built-in metric)."""


def sleeping_regret(probs: np.ndarray, losses: np.ndarray, confidences: np.ndarray) -> float:
    """Sleeping / confidence-rated regret ``max_i Σ_t I_{t,i}(p_t·l_t − l_{t,i})``.

    Straight from the definition of Luo 2016, §2.3.2: each expert's regret counts
    the rounds it is awake, weighted by its confidence.

    Examples
    --------
    >>> p = np.array([[0.5, 0.5], [1.0, 0.0]]); l = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> sleeping_regret(p, l, np.array([[1.0, 1.0], [1.0, 0.0]]))
    0.5
    """
    learner = np.einsum("tn,tn->t", probs, losses)
    return float((confidences * (learner[:, None] - losses)).sum(axis=0).max())


def tree_prunings(parents: np.ndarray) -> list[frozenset[int]]:
    """Every pruning of a template tree, as the set of its terminal edges, by enumeration.

    ``parents[e]`` is the edge above edge e (−1 below the root; see :mod:`arena.metrics.tree`).
    An edge either ends the pruning (a leaf) or, if its child node is an inner template node, is
    split, and then each edge below it is pruned independently; the root always keeps its edges
    (Luo 2016, §2.3.4). The count grows doubly exponentially with the depth (25 prunings at
    depth 3, 676 at depth 4).

    Examples
    --------
    >>> sorted(sorted(p) for p in tree_prunings(np.array([-1, -1, 0, 0, 1, 1])))
    [[0, 1], [0, 4, 5], [1, 2, 3], [2, 3, 4, 5]]
    """
    parents = [int(v) for v in parents]

    def below(e: int) -> list[int]:
        return [c for c, p in enumerate(parents) if p == e]

    def options(e: int) -> list[frozenset[int]]:
        out = [frozenset({e})]
        kids = below(e)
        if kids:
            for parts in itertools.product(*(options(c) for c in kids)):
                out.append(frozenset().union(*parts))
        return out

    return [
        frozenset().union(*parts) for parts in itertools.product(*(options(c) for c in below(-1)))
    ]


def pruning_coins(parents: np.ndarray, pruning: frozenset[int]) -> int:
    """``c(P)``: the edges of pruning P into inner template nodes, each a fair coin of Helmbold &
    Schapire's prior ``2^{−c(P)}`` (made a leaf or split; the root always splits).

    The edges of P are its terminal edges and every edge above one of them.

    Examples
    --------
    >>> parents = np.array([-1, -1, 0, 0, 1, 1])
    >>> pruning_coins(parents, frozenset({0, 1})), pruning_coins(parents, frozenset({2, 3, 1}))
    (2, 2)
    """
    inner = {int(p) for p in parents if p >= 0}
    edges = set()
    for e in pruning:
        while e >= 0:
            edges.add(e)
            e = int(parents[e])
    return sum(1 for e in edges if e in inner)


def tree_regret(
    probs: np.ndarray, losses: np.ndarray, reached: np.ndarray, parents: np.ndarray
) -> float:
    """Tree regret ``Σ_t p_t·l_t − min_P Σ_t l_{t, e_P(x_t)}`` over every pruning, enumerated.

    ``reached`` (T, N) marks the edges ``x_t`` traverses; a pruning's loss in round t is the loss
    of its one terminal edge on that path (Luo 2016, §2.3.4). Each pruning is scored round by
    round, without the dynamic program of :mod:`arena.metrics.tree`.

    Examples
    --------
    >>> parents = np.array([-1, -1, 0, 0, 1, 1])
    >>> reached = np.array([[1, 0, 1, 0, 0, 0], [0, 1, 0, 0, 0, 1.0]])
    >>> losses = np.array([[0.5, 0, 0, 1, 1, 1], [1, 1, 1, 1, 1, 0.0]])
    >>> tree_regret(np.array([[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0.0]]), losses, reached, parents)
    1.5
    """
    probs, losses = _history(probs, losses)
    learner = float(_learner_losses(probs, losses).sum())
    best = math.inf
    for pruning in tree_prunings(parents):
        total = 0.0
        for t in range(losses.shape[0]):
            (leaf,) = [e for e in pruning if reached[t, e] != 0.0]  # exactly one per round
            total += losses[t, leaf]
        best = min(best, total)
    return float(learner - best)


def evaluate(
    name: str,
    param: float,
    probs: np.ndarray,
    losses: np.ndarray,
    actions: np.ndarray,
    means: np.ndarray | None = None,
    confidences: np.ndarray | None = None,
    previous: int = 0,
    competitor: np.ndarray | None = None,
    tree: tuple[np.ndarray, np.ndarray] | None = None,
) -> float:
    """Return the brute-force value of the built-in metric ``name`` at the last round given.

    Parameters
    ----------
    name : str
        Registry name of a built-in metric (one of :data:`BRUTE_FORCE_METRICS`).
    param : float
        The value of the metric's ``param`` column (ε, k or τ); ignored (NaN) for the others.
    probs, losses : ndarray, shape (T, N)
    actions : ndarray of int, shape (T,)
    means : ndarray, shape (T, N), optional
        Needed by ``pseudo_regret`` only.
    confidences : ndarray, shape (T, N), optional
        Needed by ``sleeping_regret`` only.
    previous : int
        The previous checkpoint (0 for the first): the window of ``window_regret`` and
        ``window_pseudo_regret``.
    competitor : ndarray, shape (T, N), optional
        Needed by ``tv_regret``, ``tv_variation`` and ``tv_loss`` only.
    tree : tuple of ndarray, optional
        ``(parents, reached)``: the template tree and the (T, N) indicators of the edges each
        ``x_t`` traverses; needed by ``tree_regret`` only.

    Returns
    -------
    float
    """
    if name == "loss":
        return loss(probs, losses)
    if name == "realized_loss":
        return realized_loss(losses, actions)
    if name == "regret":
        return regret(probs, losses)
    if name == "realized_regret":
        return realized_regret(losses, actions)
    if name == "quantile_regret":
        return quantile_regret(probs, losses, float(param))
    if name == "subset_quantile_regret":
        return subset_quantile_regret(probs, losses, float(param))
    if name == "instant_leader_regret":
        return instant_leader_regret(probs, losses)
    if name == "window_leader_regret":
        return window_leader_regret(probs, losses, previous)
    if name == "shifting_regret":
        return shifting_regret(probs, losses, int(param))
    if name == "adaptive_regret":
        return adaptive_regret(probs, losses)
    if name == "sa_regret":
        return sa_regret(probs, losses, int(param))
    if name == "dynamic_regret":
        return dynamic_regret(probs, losses)
    if name == "pseudo_regret":
        if means is None:
            raise ValueError("pseudo_regret needs the mean losses")
        return pseudo_regret(probs, means)
    if name == "instant_regret":
        return instant_regret(probs, losses)
    if name == "instant_pseudo_regret":
        if means is None:
            raise ValueError("instant_pseudo_regret needs the mean losses")
        return instant_pseudo_regret(probs, means)
    if name == "window_regret":
        return window_regret(probs, losses, previous)
    if name == "window_pseudo_regret":
        if means is None:
            raise ValueError("window_pseudo_regret needs the mean losses")
        return window_pseudo_regret(probs, means, previous)
    if name == "zero_weight_frac":
        return zero_weight_frac(probs)
    if name == "entropy":
        return entropy(probs)
    if name == "dg_score":
        from arena.metrics.drifting import dg_score_bruteforce

        return dg_score_bruteforce(probs, losses, float(param))
    if name == "sleeping_regret":
        if confidences is None:
            raise ValueError("sleeping_regret needs the confidences")
        return sleeping_regret(probs, losses, confidences)
    if name == "arm_pulls":
        from arena.bandit.metrics import arm_pulls_bruteforce

        return arm_pulls_bruteforce(actions, int(param))
    if name == "arm_pseudo_regret":
        from arena.bandit.metrics import arm_pseudo_regret_bruteforce

        if means is None:
            raise ValueError("arm_pseudo_regret needs the mean losses")
        return arm_pseudo_regret_bruteforce(probs, means, int(param))
    if name in ("tv_regret", "tv_variation", "tv_loss"):
        if competitor is None:
            raise ValueError(f"{name} needs the competitor sequence")
        return tv_rows(name, probs[None], losses[None], np.asarray(competitor)[None])[0][2][0]
    if name == "tree_regret":
        if tree is None:
            raise ValueError("tree_regret needs the template tree and the reached edges")
        parents, reached = tree
        return tree_regret(probs, losses, reached, parents)
    raise NotImplementedError(
        f"no brute-force definition of metric {name!r} (known: {', '.join(BRUTE_FORCE_METRICS)})"
    )
