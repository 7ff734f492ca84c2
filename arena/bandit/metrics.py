"""Metrics of the bandit protocol: arm pulls, the pseudo-regret by arm, the estimates' error.

The bandit protocol hands its metrics the experts block (:class:`~arena.metrics.base.Block`: the
arena knows the whole ``l_t``), so every experts metric is exact there too; these two read what
only a bandit report needs. Both have the arm index ``i`` (0-based) in the ``param`` column.

Notation: ``T_i(t) = #{s ≤ t : I_s = i}`` (pulls of arm i), ``μ_{s,i}`` the adversary's mean loss
of arm i at round s (oracle ``means``), ``Δ_{s,i} = μ_{s,i} − min_j μ_{s,j}`` its gap. With
stationary means, ``Σ_i Δ_i E[T_i(t)]`` is the pseudo-regret of Bubeck & Cesa-Bianchi 2012
(§1, "pseudo-regret"; Lattimore & Szepesvári 2020, Lemma 4.5, the regret decomposition).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numba import njit

from arena.metrics.base import Block, Core, ExpertsMetric, ExpertsRecord
from arena.metrics.literal import required
from arena.spec import GameSpec


@njit(cache=True, nogil=True)
def _count_pulls(actions, counts):
    """Add one to ``counts[r, I]`` for every drawn arm ``I = actions[r, j]`` of a chunk."""
    n_rep, n = actions.shape
    for r in range(n_rep):
        for j in range(n):
            counts[r, actions[r, j]] += 1.0


@njit(cache=True, nogil=True)
def _gap_weights_advance(probs, means, cum):
    """Add ``p_{s,i} (μ_{s,i} − min_j μ_{s,j})`` of every round of a chunk to ``cum[r, i]``."""
    n_rep, n, n_act = probs.shape
    for r in range(n_rep):
        for j in range(n):
            best = np.inf
            for i in range(n_act):
                m = means[r, j, i]
                best = m if m < best else best
            for i in range(n_act):
                cum[r, i] += probs[r, j, i] * (means[r, j, i] - best)


@njit(cache=True, nogil=True)
def _add_unit_losses(losses, lo, scale, cum):
    """Add ``(l_{s,i} − lo)/scale`` of every round of a chunk to ``cum[r, i]``, round by round
    (the order of the reference loop's sum, so both agree to the last bit)."""
    n_rep, n, n_act = losses.shape
    for r in range(n_rep):
        for j in range(n):
            for i in range(n_act):
                cum[r, i] += (losses[r, j, i] - lo) / scale


class _PerArm(ExpertsMetric):
    """A metric with one column per arm (``param`` = the arm index)."""

    param_name = "arm"
    protocols: ClassVar[frozenset[str] | None] = frozenset({"bandit"})

    def __init__(self, arms=None):
        self.arms = arms

    def param_values(self, spec: GameSpec) -> list[float]:
        n_act = spec.n_actions
        if self.arms is None:
            return [float(i) for i in range(n_act)]
        arms = self._param_list(
            self.arms, int, lambda v: None if 0 <= v < n_act else f"an arm in [0, {n_act - 1}]"
        )
        return [float(i) for i in arms]

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._columns = np.array(self.param_values(spec), dtype=np.int64)
        self._state = np.zeros((spec.n_replicates, spec.n_actions))

    def values(self, core: Core) -> np.ndarray:
        return self._state[:, self._columns].copy()


class ArmPulls(_PerArm):
    """Pull counts ``T_i(t) = #{s ≤ t : I_s = i}`` of the arms the arena drew, one row per arm.

    Parameters
    ----------
    arms : list of int, optional
        The arms to log (default: every arm, ``0 .. K−1``).

    Examples
    --------
    >>> from arena import play
    >>> df = play("ucb1", "bernoulli", n_actions=3, horizon=30, metrics={"arm_pulls": {}})
    >>> int(df[df.t == 30].groupby("replicate").value.sum().iloc[0])
    30
    """

    name = "arm_pulls"

    def advance(self, block: Block, core: Core) -> None:
        _count_pulls(np.ascontiguousarray(block.actions, dtype=np.int64), self._state)

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`arm_pulls_bruteforce` (param: the arm)."""
        return arm_pulls_bruteforce(record.actions, int(param))


class ArmPseudoRegret(_PerArm):
    """The pseudo-regret carried by each arm: ``Σ_{s≤t} p_{s,i} Δ_{s,i}``, one row per arm.

    ``Δ_{s,i} = μ_{s,i} − min_j μ_{s,j}`` is arm i's gap to the round's best mean. Given the
    history, ``p_{s,i}`` is the probability that arm i is pulled at round s, so the expectation of
    the value is ``Σ_s Δ_{s,i} P(I_s = i)``, which for stationary means is ``Δ_i E[T_i(t)]``, and
    the sum over arms is the pseudo-regret ``Σ_i Δ_i E[T_i(t)]`` (Lattimore & Szepesvári 2020,
    Lemma 4.5; equal then to ``pseudo_regret``). Logged only when the adversary exposes ``means``.

    Parameters
    ----------
    arms : list of int, optional
        The arms to log (default: every arm).

    Examples
    --------
    >>> from arena import play
    >>> df = play("ucb1", "bernoulli", n_actions=2, horizon=50,
    ...           metrics={"arm_pseudo_regret": {}, "pseudo_regret": {}})
    >>> last = df[df.t == 50]
    >>> split = last[last.metric == "arm_pseudo_regret"].groupby("replicate").value.sum()
    >>> bool(np.allclose(split, last[last.metric == "pseudo_regret"].value))
    True
    """

    name = "arm_pseudo_regret"
    requires = frozenset({"means"})

    def advance(self, block: Block, core: Core) -> None:
        _gap_weights_advance(block.probs, np.ascontiguousarray(block.means), self._state)

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`arm_pseudo_regret_bruteforce` (param: the arm)."""
        return arm_pseudo_regret_bruteforce(
            record.probs, required(record, "means", self.name), int(param)
        )


def _estimates_reason(player) -> str | None:
    """Why ``player`` has no loss estimates to compare (None when it has them)."""
    from arena.bandit.components import BanditPlayer

    method = getattr(type(player), "estimates", None)
    if method is None or method is BanditPlayer.estimates:
        return "the player keeps no loss estimates (estimates() is not overridden)"
    return None


class EstimateBias(_PerArm):
    """The error of the player's cumulative loss estimate, ``L̂_{t,i} − L_{t,i}``, one row per arm.

    ``L̂_{t,i} = Σ_{s≤t} ℓ̂_{s,i}`` is what the player's :meth:`~arena.bandit.components.BanditPlayer.
    estimates` returns after round t, and ``L_{t,i} = Σ_{s≤t} ℓ_{s,i}`` the true cumulative loss,
    both of losses normalized to [0, 1] with the declared range, ``ℓ = (l − lo)/(hi − lo)`` (the
    units every bandit player estimates in). The value is random; its mean over replicates
    estimates the cumulative bias ``E[L̂_{t,i} − L_{t,i}] = E[Σ_{s≤t} (E[ℓ̂_{s,i} | p_s] −
    ℓ_{s,i})]``: 0 for importance weighting ``ℓ̂ = 1{I = i} ℓ / p_i`` (Bubeck & Cesa-Bianchi
    2012, §3.1), and ``E[Σ_s (p_{s,i} ℓ_{s,i} / (p_{s,i} + γ_s) − ℓ_{s,i})] = −E[Σ_s γ_s
    ℓ_{s,i} / (p_{s,i} + γ_s)]`` for implicit exploration (Neu 2015, Lemma 1). The per-round
    conditional expectation is the player's declared
    :meth:`~arena.bandit.components.BanditPlayer.estimate_expectation`; ``L̂ − L`` minus the sum
    of those conditional biases is a martingale, which the tests use to check Exp3-IX.

    Computed only for players that override ``estimates()`` (``exp3``, ``exp3_ix``,
    ``tsallis_inf``, ``bandit_wrapper``, …); for the others (``ucb1``, ``thompson``, …) the metric
    is skipped before round 1 with the reason "keeps no loss estimates" (:meth:`applicable`),
    and logs nothing. Cost: O(R·K) per round and per checkpoint. The reference loop
    (:mod:`arena.bandit.reference`) reads the same ``estimates()`` at each checkpoint and sums
    the normalized losses round by round (:func:`estimate_bias_bruteforce`).

    A companion logging the exact conditional bias ``Σ_s (E[ℓ̂_s | p_s] − ℓ_s)`` online is not
    provided: the engine hands metrics whole chunks of rounds after the player has played them,
    so ``estimate_expectation`` could only be evaluated with the player's end-of-chunk state,
    which is wrong for a schedule ``γ_s`` that changes every round (Exp3-IX's anytime rate).

    Parameters
    ----------
    arms : list of int, optional
        The arms to log (default: every arm).

    Examples
    --------
    >>> from arena import play
    >>> df = play("exp3", "bernoulli", n_actions=3, horizon=200, replicates=2,
    ...           metrics={"estimate_bias": {}})
    >>> sorted(df.param.unique().tolist()), bool(np.isfinite(df.value).all())
    ([0.0, 1.0, 2.0], True)
    """

    name = "estimate_bias"

    def applicable(self, player, adversary) -> str | None:
        return _estimates_reason(player) or super().applicable(player, adversary)

    def attach(self, player, adversary) -> None:
        self._player = player

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._lo, self._scale = float(spec.loss_range[0]), spec.loss_scale

    def advance(self, block: Block, core: Core) -> None:
        _add_unit_losses(np.ascontiguousarray(block.losses), self._lo, self._scale, self._state)

    def values(self, core: Core) -> np.ndarray:
        est = self._player.estimates()
        if est is None:
            return np.full((self._state.shape[0], len(self._columns)), np.nan)
        est = np.asarray(est, dtype=np.float64)
        return est[:, self._columns] - self._state[:, self._columns]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """:func:`estimate_bias_bruteforce` of the player's own estimate of the arm (what the
        metric is defined from) against the record's losses mapped to [0, 1]."""
        lo, scale = record.spec.loss_range[0], record.spec.loss_scale
        estimates = np.asarray(record.player.estimates(), dtype=np.float64)[record.replicate]
        unit = (record.losses - lo) / scale
        return estimate_bias_bruteforce(estimates, unit, int(param))


BANDIT_METRICS = ("arm_pulls", "arm_pseudo_regret", "estimate_bias")
"""The metrics only the bandit protocol computes (other protocols skip them)."""


def arm_pulls_bruteforce(actions: np.ndarray, arm: int) -> float:
    """Return ``T_i(t)`` from a replicate's whole draw history (reference loop, tests).

    Examples
    --------
    >>> arm_pulls_bruteforce(np.array([0, 2, 2, 1]), 2)
    2.0
    """
    return float(sum(1 for a in np.asarray(actions).tolist() if a == arm))


def arm_pseudo_regret_bruteforce(probs: np.ndarray, means: np.ndarray, arm: int) -> float:
    """Return ``Σ_s p_{s,i} (μ_{s,i} − min_j μ_{s,j})`` from a replicate's whole history.

    Examples
    --------
    >>> arm_pseudo_regret_bruteforce(np.array([[0.5, 0.5]]), np.array([[0.25, 0.75]]), 1)
    0.25
    """
    total = 0.0
    for p, mu in zip(np.asarray(probs), np.asarray(means), strict=True):
        total += float(p[arm]) * (float(mu[arm]) - float(min(mu)))
    return total


def estimate_bias_bruteforce(estimates: np.ndarray, losses: np.ndarray, arm: int) -> float:
    """Return ``L̂_{t,i} − Σ_s ℓ_{s,i}`` from the player's cumulative estimate of arm i and the
    replicate's whole history of normalized losses (T, K) (reference loop, tests).

    Examples
    --------
    >>> estimate_bias_bruteforce(np.array([4.0, 0.0]), np.array([[1.0, 0.0], [0.5, 1.0]]), 0)
    2.5
    """
    total = 0.0
    for row in np.asarray(losses):
        total += float(row[arm])
    return float(np.asarray(estimates)[arm]) - total
