"""Built-in regret metrics and their numba kernels (the regret notions of Luo 2016, Chapter 2).

Notation: ``h_t = p_t·l_t`` (expected learner loss), ``r_{t,i} = h_t − l_{t,i}``,
``R_{t,i} = Σ_{s≤t} r_{s,i}``, ``L_{t,i} = Σ_{s≤t} l_{s,i}``, ``Ĥ_t = Σ_{s≤t} h_s``.
Every metric is exact (no sampling of intervals or comparators) and its state never grows with T.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import ClassVar

import numpy as np
from numba import njit

from arena.base import Footprint, shape_text
from arena.metric import EVERY_PROTOCOL, Metric
from arena.metrics.base import (
    Block,
    Core,
    ExpertsMetric,
    ExpertsRecord,
    exact_quantile_rank,
    regret_increments,
)
from arena.metrics.literal import (
    check_history,
    check_losses,
    learner_losses,
    realized_losses,
    required,
)
from arena.spec import GameSpec

# ----------------------------------------------------------------------------------------------
# metrics read straight off the running totals


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
    probs, losses = check_history(probs, losses)
    return float(learner_losses(probs, losses).sum())


class Loss(ExpertsMetric):
    """Cumulative expected loss ``Ĥ_t = Σ_{s≤t} p_s·l_s``.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ftl", "ftl_killer", n_actions=2, horizon=4, metrics={"loss": {}})
    >>> float(df[df.t == 4].value.iloc[0])  # ¼ in round 1 (a tie), then 1 per round
    3.25
    """

    name = "loss"

    def values(self, core: Core) -> np.ndarray:
        return core.learner[:, None].copy()

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`loss`."""
        return loss(record.probs, record.losses)


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
    losses = check_losses(losses)
    return float(realized_losses(losses, actions).sum())


class RealizedLoss(ExpertsMetric):
    """Cumulative realized loss ``Σ_{s≤t} l_{s,I_s}`` with ``I_s ~ p_s`` drawn by the arena."""

    name = "realized_loss"

    def values(self, core: Core) -> np.ndarray:
        return core.realized[:, None].copy()

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`realized_loss`."""
        return realized_loss(record.losses, record.actions)


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
    probs, losses = check_history(probs, losses)
    learner = learner_losses(probs, losses).sum()
    per_expert = learner - losses.sum(axis=0)  # R_{T,i}
    return float(per_expert.max())


class Regret(ExpertsMetric):
    """Expected regret to the best fixed expert, ``Ĥ_t − min_i L_{t,i} = max_i R_{t,i}``.

    References
    ----------
    Luo 2016, Chapter 1 and §2.3 (``R(u)`` at point masses).
    """

    name = "regret"

    def values(self, core: Core) -> np.ndarray:
        return (core.learner - core.cum_losses.min(axis=1))[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`regret`."""
        return regret(record.probs, record.losses)


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
    losses = check_losses(losses)
    return float(realized_losses(losses, actions).sum() - losses.sum(axis=0).min())


class RealizedRegret(ExpertsMetric):
    """Realized regret ``Σ_s l_{s,I_s} − min_i L_{t,i}`` (a random variable; Luo 2016, §2.1.5)."""

    name = "realized_regret"

    def values(self, core: Core) -> np.ndarray:
        return (core.realized - core.cum_losses.min(axis=1))[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`realized_regret`."""
        return realized_regret(record.losses, record.actions)


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
    probs, losses = check_history(probs, losses)
    return float(learner_losses(probs, losses).sum() - losses.min(axis=1).sum())


class DynamicRegret(ExpertsMetric):
    """Regret to the per-round best expert, ``Ĥ_t − Σ_{s≤t} min_i l_{s,i}`` (Zinkevich 2003)."""

    name = "dynamic_regret"

    def values(self, core: Core) -> np.ndarray:
        return (core.learner - core.sum_min)[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`dynamic_regret`."""
        return dynamic_regret(record.probs, record.losses)


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


@njit(cache=True)
def _add_in_round_order(per_round, sums):
    """Add ``per_round[r, j]`` to ``sums[r]`` one round after the other, so that the sum is the
    same to the last bit however the rounds were split into chunks."""
    n_rep, n = per_round.shape
    for r in range(n_rep):
        for j in range(n):
            sums[r] += per_round[r, j]


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
        _add_in_round_order(block.expected - block.losses.min(axis=2), self._sum)
        self._rounds += block.expected.shape[1]

    def values(self, core: Core) -> np.ndarray:
        out = (self._sum / self._rounds)[:, None]
        self._sum = np.zeros_like(self._sum)
        self._rounds = 0
        return out

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`window_regret`."""
        return window_regret(record.probs, record.losses, record.previous)


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
        _add_in_round_order((block.probs * mu).sum(axis=2) - mu.min(axis=2), self._sum)
        self._rounds += mu.shape[1]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`window_pseudo_regret`."""
        return window_pseudo_regret(
            record.probs, required(record, "means", self.name), record.previous
        )


@njit(cache=True)
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
        own = np.take_along_axis(self._last_losses, leader[:, None], axis=1)[:, 0]
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
        own = np.take_along_axis(self._sum_losses, leader[:, None], axis=1)[:, 0]
        out = ((self._sum_h - own) / self._rounds)[:, None]
        self._reset_window(*self._sum_losses.shape)
        return out

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`window_leader_regret`."""
        return window_leader_regret(record.probs, record.losses, record.previous)


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


class ZeroWeightFraction(ExpertsMetric):
    """Fraction of experts with ``p_{t,i} = 0`` exactly, at the round (Luo 2016, Figure 2.2)."""

    name = "zero_weight_frac"

    def values(self, core: Core) -> np.ndarray:
        return (core.last_probs == 0.0).mean(axis=1)[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`zero_weight_frac`."""
        return zero_weight_frac(record.probs)


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


class Entropy(ExpertsMetric):
    """Shannon entropy ``−Σ_i p_{t,i} ln p_{t,i}`` (nats) of ``p_t`` at the checkpoint round."""

    name = "entropy"

    def values(self, core: Core) -> np.ndarray:
        p = core.last_probs
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)
        return terms.sum(axis=1)[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`entropy`."""
        return entropy(record.probs)


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
    probs, losses = check_history(probs, losses)
    k = exact_quantile_rank(eps, losses.shape[1])
    per_expert = learner_losses(probs, losses).sum() - losses.sum(axis=0)  # R_{T,i}
    descending = np.sort(per_expert)[::-1]
    return float(descending[k - 1])


class QuantileRegret(ExpertsMetric):
    """ε-quantile regret: the k-th largest ``R_{t,i}`` with ``k = ⌈εN⌉`` computed exactly.

    Equals ``Ĥ_t − L_{t,(k)}`` with ``L_{(k)}`` the k-th smallest cumulative loss (Chaudhuri, Freund
    & Hsu 2009; Luo 2016, §2.1.2). ``k = 1`` is the ordinary regret.

    Parameters
    ----------
    eps : list of float
        Quantiles ε in (0, 1].
    """

    name = "quantile_regret"
    param_name = "eps"

    def __init__(self, eps=(0.01, 0.1, 0.25)):
        self.eps = eps

    def param_values(self, spec: GameSpec) -> list[float]:
        return self._param_list(
            self.eps, float, lambda e: None if 0 < e <= 1 else "ε must be in (0, 1]"
        )

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._ranks = [exact_quantile_rank(e, spec.n_actions) for e in self.param_values(spec)]

    def values(self, core: Core) -> np.ndarray:
        losses = core.cum_losses
        ks = sorted(set(self._ranks))
        part = np.partition(losses, [k - 1 for k in ks], axis=1)
        kth = {k: part[:, k - 1] for k in ks}
        return np.stack([core.learner - kth[k] for k in self._ranks], axis=1)

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`quantile_regret`."""
        return quantile_regret(record.probs, record.losses, float(param))


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
    probs, losses = check_history(probs, losses)
    k = exact_quantile_rank(eps, losses.shape[1])
    subset = np.argsort(losses.sum(axis=0), kind="stable")[:k]
    total = 0.0
    for t in range(losses.shape[0]):
        learner = float(probs[t] @ losses[t])
        total += sum(learner - float(losses[t, i]) for i in subset) / k
    return total


class SubsetQuantileRegret(QuantileRegret):
    """Subset-uniform ε-quantile regret: the regret ``R(u_{S_ε}) = Ĥ_t − (1/k) Σ_{j≤k} L_{t,(j)}``
    to the uniform distribution over the ``k = ⌈εN⌉`` experts with the smallest cumulative
    losses.

    The competitor of Luo 2016, §2.3 (after Theorem 4): ``R_{(k)} ≤ R(u_{S_ε})`` always, and
    AdaNormalHedge's Theorem 4 bound (2.6) for subset-uniform competitors is stated for it (Luo
    & Schapire 2015). ``k = 1`` is the ordinary regret, ``ε = 1`` the regret to the uniform
    mixture.

    Parameters
    ----------
    eps : list of float
        Quantiles ε in (0, 1].

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", "fair_coin", n_actions=4, horizon=100,
    ...           metrics={"quantile_regret": {"eps": [0.5]},
    ...                    "subset_quantile_regret": {"eps": [0.5]}})
    >>> v = df[df.t == 100].set_index("metric").value
    >>> bool(v.subset_quantile_regret >= v.quantile_regret)
    True
    """

    name = "subset_quantile_regret"

    def values(self, core: Core) -> np.ndarray:
        ascending = np.sort(core.cum_losses, axis=1)
        prefix = np.cumsum(ascending, axis=1)
        return np.stack([core.learner - prefix[:, k - 1] / k for k in self._ranks], axis=1)

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`subset_quantile_regret`."""
        return subset_quantile_regret(record.probs, record.losses, float(param))


# ----------------------------------------------------------------------------------------------
# pseudo-regret


@njit(cache=True)
def _pseudo_advance(probs, means, cum_means, learner_mean):
    n_rep, n, n_act = probs.shape
    for r in range(n_rep):
        for j in range(n):
            s = 0.0
            for i in range(n_act):
                mu = means[r, j, i]
                s += probs[r, j, i] * mu
                cum_means[r, i] += mu
            learner_mean[r] += s


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
    probs, means = check_history(probs, means)
    return float(learner_losses(probs, means).sum() - means.sum(axis=0).min())


class PseudoRegret(ExpertsMetric):
    """Pseudo-regret ``Σ_s p_s·μ_s − min_i Σ_s μ_{s,i}`` against the adversary's mean losses.

    Logged only when the adversary exposes the oracle ``means`` (Luo 2016, Appendix A.2,
    Theorem 21; Bubeck & Cesa-Bianchi 2012).
    """

    name = "pseudo_regret"
    requires = frozenset({"means"})

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._cum_means = np.zeros((spec.n_replicates, spec.n_actions))
        self._learner_mean = np.zeros(spec.n_replicates)

    def advance(self, block: Block, core: Core) -> None:
        _pseudo_advance(block.probs, block.means, self._cum_means, self._learner_mean)

    def values(self, core: Core) -> np.ndarray:
        return (self._learner_mean - self._cum_means.min(axis=1))[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`pseudo_regret`."""
        return pseudo_regret(record.probs, required(record, "means", self.name))


# ----------------------------------------------------------------------------------------------
# shifting regret: O(kN) dynamic program per round


@njit(cache=True)
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


# ----------------------------------------------------------------------------------------------
# adaptive regret: Kadane per expert


@njit(cache=True)
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


@njit(cache=True)
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


# ----------------------------------------------------------------------------------------------
# sleeping / confidence-rated regret


@njit(cache=True)
def _sleeping_advance(losses, expected, confidences, cum):
    n_rep, n, n_act = losses.shape
    for r in range(n_rep):
        for j in range(n):
            h = expected[r, j]
            for i in range(n_act):
                cum[r, i] += confidences[r, j, i] * (h - losses[r, j, i])


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


class SleepingRegret(ExpertsMetric):
    """Sleeping / confidence-rated regret ``max_i Σ_{s≤t} I_{s,i} (p_s·l_s − l_{s,i})``.

    Each expert's regret counts only the rounds it is awake, weighted by its confidence (Luo
    2016, §2.3.2). Logged only when the adversary announces confidences.
    """

    name = "sleeping_regret"
    requires = frozenset({"confidences"})
    protocols: ClassVar[frozenset[str] | None] = frozenset({"experts"})  # bandit: no sleeping

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._cum = np.zeros((spec.n_replicates, spec.n_actions))

    def advance(self, block: Block, core: Core) -> None:
        _sleeping_advance(block.losses, block.expected, block.confidences, self._cum)

    def values(self, core: Core) -> np.ndarray:
        return self._cum.max(axis=1)[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`sleeping_regret`."""
        return sleeping_regret(
            record.probs, record.losses, required(record, "confidences", self.name)
        )


# ----------------------------------------------------------------------------------------------
# declared guarantees


def _labels(keys: list[tuple[str, float]]) -> list[tuple[str, float | None]]:
    """Keys comparable with ``==`` (NaN params, which never equal themselves, become None)."""
    return [(m, None if p != p else p) for m, p in keys]


class _Declared(Metric):
    """Rows ``<prefix>:<metric>`` read from a component's declaration at each checkpoint.

    Protocol-generic: the value comes from the component, not from a protocol's block, so every
    protocol computes it (:data:`~arena.metric.EVERY_PROTOCOL`); ``values`` reads ``core.t``
    only.
    """

    protocols: ClassVar[frozenset[str] | None] = EVERY_PROTOCOL
    prefix: ClassVar[str] = ""

    def _declared(self, t: int) -> dict:
        raise NotImplementedError

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._keys: list[tuple[str, float]] | None = None

    def values(self, core: Core) -> np.ndarray:
        declared = self._declared(core.t)
        keys = [(str(m), float(p)) for m, p in declared]
        if self._keys is None:
            self._keys = keys
        elif _labels(keys) != _labels(self._keys):
            raise ValueError(f"{self.name}: the declared keys changed from {self._keys} to {keys}")
        n_rep = self._spec.n_replicates
        cols = [
            np.broadcast_to(np.asarray(v, dtype=np.float64), (n_rep,)) for v in declared.values()
        ]
        return np.stack(cols, axis=1) if cols else np.empty((n_rep, 0))

    def row_keys(self, spec: GameSpec) -> list[tuple[str, float]]:
        return [(f"{self.prefix}:{m}", p) for m, p in (self._keys or [])]

    def _declaration(self, player, adversary, t: int) -> dict:
        raise NotImplementedError

    def reference_rows(self, records) -> list[tuple[str, float, list[float]]]:
        """The declaration itself, read from the game's component after round t: a value a
        component declares has no definition but the declaration, whatever the protocol."""
        first = records[0]
        declared = self._declaration(first.player, first.adversary, first.t)
        return [
            (f"{self.prefix}:{metric}", float(param), np.broadcast_to(value, (len(records),)))
            for (metric, param), value in declared.items()
        ]


class Bound(_Declared):
    """The player's proven regret bound, evaluated on the run's own quantities.

    A player declares ``bounds(t) -> {(metric, param): value}``; each entry becomes rows with
    metric ``bound:<metric>`` and the bounded metric's param (e.g. ``bound:regret`` next to
    ``regret``, ``bound:quantile_regret`` with ε), so reports overlay them and tests assert them.
    A player whose bounds exist only in some games (``pruning_hedge``: tree games) also defines
    ``bounds_reason(adversary) -> str | None``, why it declares none against this adversary.
    """

    name = "bound"
    prefix = "bound"

    def applicable(self, player, adversary) -> str | None:
        method = getattr(type(player), "bounds", None)
        # a protocol's base class declares none (arena.components.declares_nothing)
        declares = method is not None and not getattr(method, "declares_nothing", False)
        if not declares:
            return "the player declares no bound"
        reason = getattr(player, "bounds_reason", None)
        return reason(adversary) if callable(reason) else None

    def attach(self, player, adversary) -> None:
        self._source = player

    def _declared(self, t: int) -> dict:
        return self._source.bounds(t)

    def _declaration(self, player, adversary, t: int) -> dict:
        return player.bounds(t)


class LowerBound(_Declared):
    """The adversary's reference lower bound on a metric (e.g. fair coins: ``LB(T, N)``).

    Logged as metric ``lower_bound:<metric>`` with the bounded metric's param.
    """

    name = "lower_bound"
    prefix = "lower_bound"

    def applicable(self, player, adversary) -> str | None:
        from arena.components import Adversary

        declares = getattr(type(adversary), "lower_bounds", None) is not Adversary.lower_bounds
        return None if declares else "the adversary declares no lower bound"

    def attach(self, player, adversary) -> None:
        self._source = adversary
        self._player = player

    def _declared(self, t: int) -> dict:
        return self._source.lower_bounds(t, self._player)

    def _declaration(self, player, adversary, t: int) -> dict:
        return adversary.lower_bounds(t, player)


DEFAULT_METRICS: dict[str, dict] = {
    "loss": {},
    "realized_loss": {},
    "regret": {},
    "realized_regret": {},
    "quantile_regret": {"eps": [0.01, 0.1, 0.25]},
    "subset_quantile_regret": {"eps": [0.1, 0.25]},
    "shifting_regret": {"k": [1, 2, 4, 8, 16]},
    "adaptive_regret": {},
    "sa_regret": {"tau": [100, 1000]},
    "dynamic_regret": {},
    "pseudo_regret": {},
    "instant_regret": {},
    "instant_pseudo_regret": {},
    "window_regret": {},
    "window_pseudo_regret": {},
    "instant_leader_regret": {},
    "window_leader_regret": {},
    "zero_weight_frac": {},
    "entropy": {},
    "sleeping_regret": {},
    "tv_regret": {},
    "tv_variation": {},
    "tv_loss": {},
    "bound": {},
    "lower_bound": {},
    "dg_score": {"R": [1.0, 5.0, 10.0, 20.0]},
    "dg_loss": {"R": [1.0, 5.0, 10.0, 20.0]},
    "dg2_score": {"R": [1.0, 5.0, 10.0, 20.0]},
    "dg_volume": {"R": [1.0, 5.0, 10.0, 20.0], "grid": None},
    "volume_quantile_regret": {"eps": [0.01, 0.1], "grid": None},
    "duality_gap": {},
    "tree_regret": {},
    "last_iterate_gap": {},
    "vote_train_error": {},
    "vote_test_error": {},
    "margin_frac": {"theta": [0.0, 0.1, 0.2, 0.3]},
    "mean_edge": {},
    "mistakes": {},
    "comparator_regret": {"c": [0.5, 1.0, 2.0, 4.0]},
    "path_length": {},
    "online_to_batch": {},
    "arm_pulls": {},
    "arm_pseudo_regret": {},
    "estimate_bias": {},
    "sketch_error": {"k": [10]},
    "base_mistakes": {},
    "base_loss": {},
    "improvement": {},
    "learners_used": {},
    "weighted_edge": {},
    "test_error": {},
}
"""The default metric set of ``arena run`` and :func:`arena.play` (issue #2, item 4)."""
