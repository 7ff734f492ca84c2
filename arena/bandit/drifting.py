"""Drifting games with random chips (DGv2): the bandit metric ``dg2_score``.

Luo 2016 (Appendix A.2) models the bandit problem as a drifting game, beyond the experts game of
DGv1 (:mod:`arena.metrics.drifting`; the OCO game of DGv3 is :mod:`arena.oco.drifting`). Arm i is
a chip at ``s_{t,i}``; after the arena draws ``I_t ~ p_t`` the chips move by the
importance-weighted amounts (Figure A.1 and Algorithm 24)

``z_{t,i} = 1{i = I_t} ℓ_{t,I_t}/p_{t,I_t} − ℓ_{t,I_t}``,   ``s_t = s_{t−1} + z_t``,

which are random but satisfy, given the past and ``p_t``, ``z_{t,i} ≥ −1``,
``E_t[z_{t,i}] ≤ 1``, ``E_t[z_{t,i}²] ≤ 1/p_{t,i}`` and ``E_t[p_t·z_t] ≥ 0`` (the DGv2
conditions; the proof of Theorem 21 shows ``E_t[z_{t,i}] = ℓ_{t,i} − p_t·ℓ_t``,
``E_t[z_{t,i}²] ≤ 1/p_{t,i} − 1`` and ``E_t[p_t·z_t] = 0``). ``−s_{t,i} = Σ_{τ≤t} ℓ_{τ,I_τ} −
L̂_{t,i}`` is the learner's *estimated* regret to arm i, and the DGv2 loss is
``(1/K) Σ_i 1{s_{t,i} ≤ −R}`` (:class:`DG2Score`). :func:`dgv2_moments` gives the four
conditional quantities in closed form and :func:`dgv2_slack` how far each condition is from
failing, so a test can verify the conditions exactly, round by round.

References
----------
Luo 2016, *Optimal and Adaptive Online Learning*, PhD thesis, Princeton University, §2.1.5 and
Appendix A.2 (DGv2, Algorithm 24, Theorems 20 and 21).
"""

from __future__ import annotations

import math
from typing import ClassVar, NamedTuple

import numpy as np
from numba import njit

from arena.metrics.base import Block, Core, ExpertsRecord
from arena.metrics.drifting import TIE_TOL, DGScore, _fractions
from arena.spec import GameSpec

# ---------------------------------------------------------------------------------------------
# DGv2: the bandit game's random chip movements


class DGv2Moments(NamedTuple):
    """The conditional moments of one round's DGv2 movements given ``p_t`` and ``ℓ_t``.

    Attributes
    ----------
    mean : ndarray (..., K)
        ``E_t[z_{t,i}] = ℓ_{t,i} − p_t·ℓ_t`` (``−p_t·ℓ_t`` for an arm with ``p_{t,i} = 0``,
        which is never drawn: importance weighting is unbiased only where ``p_{t,i} > 0``).
    second : ndarray (..., K)
        ``E_t[z_{t,i}²] = ℓ_{t,i}² (1 − p_{t,i})²/p_{t,i} + Σ_{j≠i} p_{t,j} ℓ_{t,j}²`` (the first
        term is 0 where ``p_{t,i} = 0``).
    weighted_mean : ndarray (...)
        ``E_t[p_t·z_t]``.
    minimum : ndarray (..., K)
        ``min z_{t,i}`` over the actions ``I_t`` of positive probability.
    """

    mean: np.ndarray
    second: np.ndarray
    weighted_mean: np.ndarray
    minimum: np.ndarray


def dgv2_moments(probs: np.ndarray, losses: np.ndarray) -> DGv2Moments:
    """Return the exact conditional moments of the DGv2 movements of Algorithm 24.

    With ``z_{t,i} = 1{i = I} ℓ_I/p_I − ℓ_I`` and ``I ~ p``: ``z_i = ℓ_i (1/p_i − 1)`` when
    ``I = i`` and ``−ℓ_I`` otherwise, whence (Luo 2016, proof of Theorem 21)
    ``E[z_i] = ℓ_i − p·ℓ`` (where ``p_i > 0``),
    ``E[z_i²] = ℓ_i²(1 − p_i)²/p_i + Σ_{j≠i} p_j ℓ_j² ≤ 1/p_i − 1`` and
    ``E[p·z] = Σ_I p_I (ℓ_I − ℓ_I Σ_i p_i) = 0`` (exactly, for a distribution p).

    Parameters
    ----------
    probs, losses : ndarray (..., K)
        ``p_t`` and the losses ``ℓ_t`` of one or many rounds (in [0, 1] for the conditions to
        hold; any reals for the moments).

    Examples
    --------
    >>> m = dgv2_moments(np.array([0.5, 0.5]), np.array([1.0, 0.0]))
    >>> m.mean.tolist(), m.second.tolist(), float(m.weighted_mean), m.minimum.tolist()
    ([0.5, -0.5], [0.5, 0.5], 0.0, [0.0, -1.0])
    """
    p = np.asarray(probs, dtype=np.float64)
    loss = np.asarray(losses, dtype=np.float64)
    expected = np.einsum("...k,...k->...", p, loss)
    drawable = p > 0
    mean = np.where(drawable, loss, 0.0) - expected[..., None]
    sq = p * loss * loss
    others = sq.sum(axis=-1, keepdims=True) - sq  # Σ_{j≠i} p_j ℓ_j²
    with np.errstate(divide="ignore", invalid="ignore"):
        own = np.where(drawable, loss * loss * (1.0 - p) ** 2 / p, 0.0)
        drawn_self = np.where(drawable, loss * (1.0 / p - 1.0), np.inf)
    second = own + others
    # E[p·z] = Σ_I p_I ℓ_I (1 − Σ_i p_i): Σ p = 1 up to rounding
    weighted = expected * (1.0 - p.sum(axis=-1))
    # min over the other drawable arms j ≠ i of −ℓ_j (K × K: the arms are few)
    neg = np.where(p > 0, 0.0 - loss, np.inf)  # 0 − 0 is +0
    eye = np.eye(p.shape[-1], dtype=bool)
    other_min = np.where(eye, np.inf, neg[..., None, :]).min(axis=-1)
    minimum = np.minimum(drawn_self, other_min)
    return DGv2Moments(mean, second, weighted, minimum)


DGV2_CONDITIONS = ("z_min", "mean", "second", "weighted")
"""The DGv2 conditions in the order of :func:`dgv2_slack`'s last axis."""


def dgv2_slack(probs: np.ndarray, losses: np.ndarray) -> np.ndarray:
    """Return how far each round's movements are from violating the DGv2 conditions.

    The last axis holds, per :data:`DGV2_CONDITIONS`: ``min_i (min z_{t,i} + 1)``,
    ``min_i (1 − E_t[z_{t,i}])``, ``min_i (1/p_{t,i} − E_t[z_{t,i}²])`` (over arms with
    ``p_{t,i} > 0``; ``inf`` if none) and ``E_t[p_t·z_t]``. All four are ≥ 0 exactly when the
    round is a valid DGv2 round (Luo 2016, Figure A.1); for losses in [0, 1] the proof of Theorem
    21 gives slacks ≥ 0, ≥ 0, ≥ 1 and = 0 (the last up to the rounding of ``Σ p``).

    Parameters
    ----------
    probs, losses : ndarray (..., K)
        ``p_t`` and the normalized losses ``ℓ_t``.

    Returns
    -------
    ndarray (..., 4)

    Examples
    --------
    >>> np.round(dgv2_slack(np.array([0.25, 0.75]), np.array([1.0, 1.0])), 12).tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    p = np.asarray(probs, dtype=np.float64)
    m = dgv2_moments(p, losses)
    with np.errstate(divide="ignore"):
        variance_room = np.where(p > 0, 1.0 / p - m.second, np.inf)
    return np.stack(
        [
            (m.minimum + 1.0).min(axis=-1),
            (1.0 - m.mean).min(axis=-1),
            variance_room.min(axis=-1),
            m.weighted_mean,
        ],
        axis=-1,
    )


def dgv2_moments_bruteforce(probs, losses) -> DGv2Moments:
    """Return :func:`dgv2_moments` of one round by a plain loop over the outcomes ``I`` (tests).

    Examples
    --------
    >>> m = dgv2_moments_bruteforce([0.5, 0.5], [1.0, 0.0])
    >>> m.mean, m.second, m.weighted_mean, m.minimum
    ([0.5, -0.5], [0.5, 0.5], 0.0, [0.0, -1.0])
    """
    p, loss = [float(v) for v in probs], [float(v) for v in losses]
    k = len(p)
    mean, second, minimum = [0.0] * k, [0.0] * k, [math.inf] * k
    weighted = 0.0
    for drawn in range(k):
        if p[drawn] == 0.0:
            continue
        z = [(loss[drawn] / p[drawn] if i == drawn else 0.0) - loss[drawn] for i in range(k)]
        for i in range(k):
            mean[i] += p[drawn] * z[i]
            second[i] += p[drawn] * z[i] * z[i]
            minimum[i] = min(minimum[i], z[i])
        weighted += p[drawn] * sum(p[i] * z[i] for i in range(k))
    return DGv2Moments(mean, second, weighted, minimum)


@njit(cache=True, nogil=True)
def _dgv2_advance(probs, losses, actions, lo, scale, estimates, paid):
    """Move the chips of every round of a chunk: ``L̂_{I} += ℓ_I/p_I`` and ``C += ℓ_I``.

    The chips are ``s = L̂ − C·1``; the two sums are kept apart (as Algorithm 24's player does)
    so that the large importance weights do not cancel against the learner's loss in every round.
    """
    n_rep, n, _ = probs.shape
    for r in range(n_rep):
        for j in range(n):
            a = actions[r, j]
            unit = (losses[r, j, a] - lo) / scale
            estimates[r, a] += unit / probs[r, j, a]
            paid[r] += unit


def dg2_score_bruteforce(probs, losses, actions, threshold: float) -> float:
    """Return ``dg2_score`` at the last round of one game by a plain loop over rounds and arms.

    ``probs, losses`` (T, K) with losses already in [0, 1], ``actions`` (T,).

    Examples
    --------
    >>> p = [[0.5, 0.5], [0.5, 0.5]]; l = [[1.0, 0.0], [1.0, 0.0]]
    >>> dg2_score_bruteforce(p, l, [0, 1], 1.0)  # s = (2 − 1, 0 − 1): arm 1 leads by 1
    0.5
    """
    k = len(probs[0])
    s = [0.0] * k
    for p, loss, drawn in zip(probs, losses, actions, strict=True):
        drawn = int(drawn)
        for i in range(k):
            s[i] += (loss[drawn] / p[drawn] if i == drawn else 0.0) - loss[drawn]
    reached = [1.0 if -v >= threshold - TIE_TOL * max(1.0, abs(threshold)) else 0.0 for v in s]
    return sum(reached) / k


class DG2Score(DGScore):
    """Fraction of the bandit chips whose estimated regret ``−s_{t,i}`` is at least R (DGv2).

    The chips move as in Luo 2016, Algorithm 24, line 8: ``z_{t,i} = 1{i = I_t}
    ℓ_{t,I_t}/p_{t,I_t} − ℓ_{t,I_t}``, so ``s_{t,i} = L̂_{t,i} − Σ_{τ≤t} ℓ_{τ,I_τ}`` with the
    importance-weighted estimate ``L̂_{t,i} = Σ_τ 1{I_τ = i} ℓ_{τ,i}/p_{τ,i}``; the value is the
    DGv2 loss ``(1/K) Σ_i 1{s_{t,i} ≤ −R}``. It is computed from what the arena knows of every
    bandit game (``p_t``, the drawn ``I_t`` and its loss), for any player, with losses mapped to
    [0, 1] by the declared range (R is in those units). ``E[s_{t,i}] = E[L_{t,i} − Σ_τ
    ℓ_{τ,I_τ}]`` while every ``p_{τ,i} > 0``: the chips are unbiased for minus the true
    regrets, but random; ``dg_score`` is
    the same fraction on the true regrets. Ties within :data:`~arena.metrics.drifting.TIE_TOL`
    count as reaching R. A player that gives an arm probability 0 (UCB1, Thompson sampling's
    argmax, any deterministic rule) leaves that arm's estimate at 0 while the learner pays, so its
    chip drifts down by the learner's whole loss: for such players the value is near 1 and says
    nothing about the true regrets (measured, bernoulli, K = 5, T = 10⁴: ucb1 gives 1.0 at every
    R up to 1000, where ``dg_score`` gives 0.2 at R = 100 and 0 at R = 600).

    Guarantee. For Algorithm 24 (``dg_bandit``, fixed η, K arms), Theorems 20 and 21 show
    ``E[dg2_score_t(R)] ≤ (1/K) Σ_i E[Φ_t(s_{t,i})] ≤ Φ_0(0) =
    exp(−ηR) ((e^η + e^{−η} + K e^η η²)/2)^t`` for every t and R (the potential
    ``Φ_T(s) = exp(−η(s + R))`` dominates ``1{s ≤ −R}``; the algorithm does not depend on T, so
    each prefix is a game of its own), against adaptive adversaries too. ``dg_bandit`` does not
    declare this (its ``bounds`` declares the regret form of Theorem 21); the tests check it.

    Parameters
    ----------
    R : list of float
        Thresholds, in normalized loss units.

    Examples
    --------
    >>> from arena import play
    >>> df = play("exp3", "bernoulli", n_actions=3, horizon=200, replicates=2,
    ...           metrics={"dg2_score": {"R": [0.0, 50.0]}})
    >>> last = df[df.t == 200]
    >>> bool((last[last.param == 0.0].value > 0).all())  # some chip is ahead of the learner
    True

    References
    ----------
    Luo 2016, PhD thesis, Appendix A.2: Figure A.1 (DGv2), Algorithm 24, Theorems 20 and 21.
    """

    name = "dg2_score"
    protocols: ClassVar[frozenset[str] | None] = frozenset({"bandit"})

    def start(self, spec: GameSpec) -> None:
        super().start(spec)  # the thresholds R, checked as dg_score checks them
        self._lo, self._scale = float(spec.loss_range[0]), spec.loss_scale
        self._estimates = np.zeros((spec.n_replicates, spec.n_actions))
        self._paid = np.zeros(spec.n_replicates)

    def advance(self, block: Block, core: Core) -> None:
        _dgv2_advance(
            np.ascontiguousarray(block.probs),
            np.ascontiguousarray(block.losses),
            np.ascontiguousarray(block.actions, dtype=np.int64),
            self._lo,
            self._scale,
            self._estimates,
            self._paid,
        )

    def chips(self) -> np.ndarray:
        """Return the chip positions ``s_t = L̂_t − C_t·1`` after the last advanced round."""
        return self._estimates - self._paid[:, None]

    def values(self, core: Core) -> np.ndarray:
        return _fractions(-self.chips(), self._reach)

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """:func:`dg2_score_bruteforce` on the record, its losses mapped to [0, 1] by the
        declared range (the chips move with normalized losses)."""
        unit = (record.losses - record.spec.loss_range[0]) / record.spec.loss_scale
        return dg2_score_bruteforce(record.probs, unit, record.actions, float(param))
