"""KL-UCB: the Bernoulli Kullback–Leibler index policy (Garivier & Cappé 2011)."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from numba import njit

from arena.params import Interval
from arena.players._empirical_means import EmpiricalMeansPlayer
from arena.spec import GameSpec, PlayerTags

MAX_ITER = 200
"""Iteration cap of the index solve (bisection alone needs about 40 steps to 1e-12)."""

WALK = 64
"""At most this many floats are stepped over after Newton to settle the index's last bit."""


@njit(cache=True, nogil=True)
def bernoulli_kl(p, q):
    """Return ``kl(p, q) = p ln(p/q) + (1 − p) ln((1 − p)/(1 − q))``, with ``0 ln 0 = 0``.

    Examples
    --------
    >>> round(bernoulli_kl(0.5, 0.25), 6), bernoulli_kl(0.0, 0.5) == math.log(2.0)
    (0.143841, True)
    """
    out = 0.0
    if p > 0.0:
        out += p * math.log(p / q)
    if p < 1.0:
        out += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return out


@njit(cache=True, nogil=True)
def kl_upper(mean, delta):
    """Return ``max{q ∈ [mean, 1) : kl(mean, q) ≤ delta}``, as a bisection on q to the last bit
    finds it: the largest float q < 1 with ``kl(mean, q) ≤ delta`` (where kl is evaluated
    monotonically; within 1e-12 of the root everywhere).

    The root is solved in ``z = −ln(1 − q)``, where ``g(z) = kl(mean, q(z)) − delta`` is
    increasing and convex (``g' = (q − mean)/q``) and nearly linear as q approaches 1, so indices
    next to 1 (few pulls, large δ) keep their precision. The bracket is ``[−ln(1 − mean),
    (δ + H(mean))/(1 − mean)]`` (``kl(mean, q) ≥ (1 − mean) z − H(mean)``, H the binary entropy);
    Newton's method from its right end descends monotonically by convexity, a step that leaves
    the bracket is replaced by bisection, so the solve always ends; a final walk of at most 64
    floats settles the last bit, so that equal indices (e.g. the float below 1) tie exactly.

    Examples
    --------
    >>> round(kl_upper(0.5, 0.5 * math.log(4.0 / 3.0)), 12)  # kl(½, ¾) = ½ ln(4/3)
    0.75
    >>> kl_upper(0.2, 0.0), bool(kl_upper(0.9, 50.0) == np.nextafter(1.0, 0.0))
    (0.2, True)
    """
    top = np.nextafter(1.0, 0.0)
    if mean >= 1.0:
        return top
    if delta <= 0.0:
        return mean
    entropy = bernoulli_kl(mean, 0.5) * -1.0 + math.log(2.0)  # H(mean) = ln 2 − kl(mean, ½)
    lo = -math.log1p(-mean)
    hi = (delta + entropy) / (1.0 - mean)
    z = hi
    for _ in range(MAX_ITER):
        q = -math.expm1(-z)
        g = (mean * math.log(mean / q) if mean > 0.0 else 0.0) - delta
        g += (1.0 - mean) * (math.log1p(-mean) + z)
        if g > 0.0:
            hi = z
        elif g < 0.0:
            lo = z
        else:
            break
        slope = (q - mean) / q
        z_new = z - g / slope if slope > 0.0 else lo
        if not (z_new > lo and z_new < hi):
            z_new = 0.5 * (lo + hi)
        if abs(z_new - z) <= 1e-15 * z or hi - lo <= 1e-15 * hi:
            z = z_new
            break
        z = z_new
    q = min(max(-math.expm1(-z), mean), top)
    # the last bits, as a bisection on q evaluating kl(mean, q) would settle them
    for _ in range(WALK):
        if q <= mean or bernoulli_kl(mean, q) <= delta:
            break
        q = np.nextafter(q, -1.0)
    for _ in range(WALK):
        up = np.nextafter(q, 2.0)
        if up >= 1.0 or bernoulli_kl(mean, up) > delta:
            break
        q = up
    return max(q, mean)


def kl_ucb_exploration(plays: int, c: float) -> float:
    """Return ``f(n) = ln n + c ln ln n`` (0 below n = 1, the ln ln term only from n ≥ 3)."""
    return _exploration(plays, c)


@njit(cache=True, nogil=True)
def _exploration(plays, c):
    n = max(plays, 1)
    out = math.log(n)
    if c > 0.0 and n >= 3:
        out += c * math.log(math.log(n))
    return out


def kl_ucb_arm(sums: np.ndarray, counts: np.ndarray, plays: int, c: float) -> np.ndarray:
    """Return KL-UCB's arm per row: an unplayed arm first, else the least optimistic loss.

    For loss means ``ℓ̄_i`` (rewards ``1 − ℓ̄_i``), the index is
    ``1 − max{q : n_i kl(1 − ℓ̄_i, q) ≤ f(n)}``; ties go to the lowest index.

    Examples
    --------
    >>> kl_ucb_arm(np.array([[3.0, 1.0]]), np.array([[4.0, 4.0]]), 8, 0.0).tolist()
    [1]
    """
    explore = kl_ucb_exploration(plays, c)
    out = np.empty(sums.shape[0], dtype=np.int64)
    for r in range(sums.shape[0]):
        index = [
            -np.inf if n == 0 else 1.0 - kl_upper(1.0 - s / n, explore / n)
            for s, n in zip(sums[r], counts[r], strict=True)
        ]
        out[r] = int(np.argmin(index))
    return out


SLACK = 1e-8
"""Margin of the index bounds that spare the exact solves: :func:`kl_upper` is within 1e-12 of the
true root, so a bound widened by ``SLACK`` holds for the computed index too, and an arm whose upper
bound is ``SLACK`` below another's computed index has a strictly larger loss index ``1 − U``."""


@njit(cache=True, nogil=True)
def _tangent_slope(mean, q):
    """An upper bound on ``dU/dδ`` at the index ``q`` of ``mean``: ``1/kl'(q − SLACK)``, +inf when
    ``q − SLACK ≤ mean`` (``kl' = (q − mean)/(q(1 − q))`` is increasing, and the exact root lies
    above ``q − SLACK``), widened by 1e-9 relative for rounding."""
    qm = q - SLACK
    if qm <= mean:
        return np.inf
    return qm * (1.0 - qm) / (qm - mean) * (1.0 + 1e-9)


@njit(cache=True, nogil=True)
def _kl_ucb_play_arms(losses, sums, counts, rounds_done, c, lo, scale, arms):
    """Play a chunk of KL-UCB: fill ``arms`` (R, n) with the pulled arms; reads only their losses.

    Every arm's index moves each round (δ_i = f(n)/n_i, f increasing), but the winner is settled
    by about one exact solve a round, from bounds kept per arm. For a fixed mean p the index
    ``U(p, δ)`` is increasing and concave in δ (the inverse of the convex, increasing
    ``q ↦ kl(p, q)``) with ``U(p, 0) = p``, and increasing in p. An arm last solved at
    ``(p₀, δ₀)`` with index ``q₀`` and now at ``(p, δ)`` therefore has

    * ``U(p, δ) ≥ U(p₀, δ) ≥ q₀`` (δ ≥ δ₀) or the chord ``p₀ + (q₀ − p₀) δ/δ₀`` (δ < δ₀) when
      ``p ≥ p₀``, and ``U ≥ p`` always;
    * ``U(p, δ) ≤ U(p₀, δ) ≤ q₀`` (δ ≤ δ₀) or ``q₀ + (δ − δ₀)/kl'(q₀)`` (the tangent, δ > δ₀)
      when ``p ≤ p₀``, else ``U ≤ p + sqrt(δ/2)`` (Pinsker); and ``U ≤ 1``.

    The bounds are widened by ``SLACK`` (the solve is within 1e-12 of the root). If the arm of
    the largest upper bound has its lower bound above every other upper bound, it is the winner
    unsolved; otherwise arms are solved exactly (:func:`kl_upper`, the same call with the same
    arguments as the readable :func:`kl_ucb_arm`) in decreasing order of their upper bounds until
    the next one lies ``SLACK`` below the best index solved. Either way the pulled arm is the
    argmin of ``1 − U`` that solving all K indices gives, ties to the lowest index included.
    """
    n_rep, n, n_act = losses.shape
    mean = np.empty(n_act)  # the reward means 1 − S_i/n_i of the played arms
    ref_mean = np.empty(n_act)  # each arm's last solve: at (ref_mean, ref_delta), index ref_u
    ref_delta = np.empty(n_act)
    ref_u = np.empty(n_act)
    ref_slope = np.empty(n_act)  # an upper bound on dU/dδ there (+inf: none)
    solved = np.empty(n_act, dtype=np.bool_)
    low = np.empty(n_act)
    high = np.empty(n_act)
    delta = np.empty(n_act)
    for r in range(n_rep):
        unplayed = 0
        for i in range(n_act):
            solved[i] = False
            if counts[r, i] == 0.0:
                unplayed += 1
            else:
                mean[i] = 1.0 - sums[r, i] / counts[r, i]
        for j in range(n):
            explore = _exploration(rounds_done + j, c)
            best = 0
            if unplayed > 0:
                while counts[r, best] != 0.0:
                    best += 1
                unplayed -= 1
            else:
                top, second = 0, -np.inf
                for i in range(n_act):
                    d = explore / counts[r, i]
                    delta[i] = d
                    p = mean[i]
                    lo_i, hi_i = -np.inf, np.inf
                    if solved[i]:
                        p0, d0, u0 = ref_mean[i], ref_delta[i], ref_u[i]
                        lo_i = p
                        if p >= p0:
                            if d >= d0:
                                lo_i = max(lo_i, u0)
                            elif d0 > 0.0:
                                lo_i = max(lo_i, p0 + (u0 - p0) * (d / d0))
                        if p <= p0 and d <= d0:
                            hi_i = u0
                        elif p <= p0 and ref_slope[i] < np.inf:
                            hi_i = u0 + ref_slope[i] * (d - d0)
                        else:
                            hi_i = p + math.sqrt(0.5 * d)
                        lo_i -= SLACK
                        hi_i = min(hi_i, 1.0) + SLACK
                    low[i], high[i] = lo_i, hi_i
                    if i == 0:
                        continue
                    if hi_i > high[top]:
                        second = max(second, high[top])
                        top = i
                    else:
                        second = max(second, hi_i)
                if low[top] > second:
                    best = top  # its index is below every other arm's: nothing to solve
                else:
                    best_index = np.inf
                    best_u = -np.inf
                    while True:
                        i = -1
                        for k in range(n_act):
                            if high[k] > -np.inf and (i < 0 or high[k] > high[i]):
                                i = k
                        if i < 0 or high[i] < best_u - SLACK:
                            break
                        high[i] = -np.inf
                        u = kl_upper(mean[i], delta[i])
                        solved[i] = True
                        ref_mean[i], ref_delta[i], ref_u[i] = mean[i], delta[i], u
                        ref_slope[i] = _tangent_slope(mean[i], u)
                        index = 1.0 - u
                        if index < best_index or (index == best_index and i < best):
                            best, best_index = i, index
                        best_u = max(best_u, u)
            arms[r, j] = best
            sums[r, best] += (losses[r, j, best] - lo) / scale
            counts[r, best] += 1.0
            mean[best] = 1.0 - sums[r, best] / counts[r, best]


class KLUCB(EmpiricalMeansPlayer):
    """KL-UCB: pull each arm once, then the arm whose Bernoulli-KL confidence bound is least.

    After ``n`` rounds, arm i has ``n_i`` pulls and mean reward ``μ̂_i = 1 − ℓ̄_i`` (losses
    mapped to [0, 1] with the declared range); KL-UCB commits the point mass on an arm not yet
    pulled (the lowest index), else on the arm maximizing
    ``U_i = max{q ∈ [μ̂_i, 1] : n_i kl(μ̂_i, q) ≤ ln n + c ln ln n}`` (:func:`kl_upper`, solved to
    1e-12; the lowest index on ties), i.e. minimizing the loss index ``1 − U_i``. Deterministic.
    An index that reaches 1 in floating point is the float below 1, so such arms tie.

    Parameters
    ----------
    c : float
        The ``c ≥ 0`` of the exploration function ``ln n + c ln ln n``: 0 (default) is the
        choice Garivier & Cappé recommend in practice, 3 the one their Theorem 1 is proven for.

    Notes
    -----
    For Bernoulli arms (and, by the same proof, any [0, 1] rewards, with the Bernoulli kl as the
    divergence) KL-UCB with ``c = 3`` pulls a suboptimal arm ``E[N_i(n)] ≤ (1 + ε) ln n /
    kl(μ_i, μ*) + O(ln ln n) + O(n^{−β(ε)})`` times (Garivier & Cappé 2011, Theorem 1), matching
    the Lai–Robbins lower bound; ``kl ≥ 2(μ − q)²`` (Pinsker) makes the index never looser than
    UCB's Hoeffding index with the same exploration. The constants are not explicit, so KL-UCB
    declares no ``bound`` rows (and, an index policy, it has no guarantee against an adversary);
    its tests compare it with UCB1 on the same Bernoulli games.

    Examples
    --------
    >>> from arena import play
    >>> df = play(KLUCB(), "bernoulli", n_actions=3, horizon=500, replicates=2,
    ...           adversary_params={"gap": 0.3}, metrics={"arm_pulls": {}})
    >>> pulls = df[(df.t == 500) & (df.replicate == 0)].value.tolist()
    >>> pulls[0] > pulls[1] and pulls[0] > pulls[2]  # the best arm (0) is pulled most
    True

    References
    ----------
    Garivier & Cappé (2011), "The KL-UCB algorithm for bounded stochastic bandits and beyond",
    COLT, Algorithm 1 (KL-UCB) and Theorem 1.
    Cappé, Garivier, Maillard, Munos & Stoltz (2013), "Kullback–Leibler upper confidence bounds
    for optimal sequential allocation", Annals of Statistics 41(3), §2 (the kl-UCB index).
    """

    tags = PlayerTags(protocols=frozenset({"bandit"}), block_kernel=True, randomized=False)
    plays_arms = True
    parameter_constraints: ClassVar = {"c": [Interval(0, None)]}

    def __init__(self, c: float = 0.0):
        self.c = c

    def start(self, spec: GameSpec) -> None:
        self._c = float(self.c)

    def arms(self) -> np.ndarray:
        return kl_ucb_arm(self._sums, self._counts, self._rounds, self._c)

    def _arms_kernel(self, losses: np.ndarray, arms: np.ndarray) -> None:
        _kl_ucb_play_arms(
            losses,
            self._sums,
            self._counts,
            self._rounds,
            self._c,
            self._lo,
            self._scale,
            arms,
        )

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"c": 3.0}
