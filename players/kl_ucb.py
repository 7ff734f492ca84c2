"""KL-UCB: the Bernoulli Kullback–Leibler index policy (Garivier & Cappé 2011)."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from numba import njit

from arena.params import Interval
from arena.sampling import sample_action
from arena.spec import GameSpec, PlayerTags
from players._empirical_means import EmpiricalMeansPlayer

MAX_ITER = 200
"""Iteration cap of the index solve (bisection alone needs about 40 steps to 1e-12)."""

WALK = 64
"""At most this many floats are stepped over after Newton to settle the index's last bit."""


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def _kl_ucb_play_block(losses, uniforms, sums, counts, rounds_done, c, lo, scale, probs):
    """Play a chunk of KL-UCB (point masses); reads only the pulled arm's loss."""
    n_rep, n, n_act = losses.shape
    for r in range(n_rep):
        for j in range(n):
            explore = _exploration(rounds_done + j, c)
            best = 0
            best_index = np.inf
            for i in range(n_act):
                k = counts[r, i]
                if k == 0.0:
                    index = -np.inf
                else:
                    index = 1.0 - kl_upper(1.0 - sums[r, i] / k, explore / k)
                if index < best_index:
                    best, best_index = i, index
            for i in range(n_act):
                probs[r, j, i] = 0.0
            probs[r, j, best] = 1.0
            a = sample_action(probs[r, j], uniforms[r, j])
            sums[r, a] += (losses[r, j, a] - lo) / scale
            counts[r, a] += 1.0


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
    parameter_constraints: ClassVar = {"c": [Interval(0, None)]}

    def __init__(self, c: float = 0.0):
        self.c = c

    def start(self, spec: GameSpec) -> None:
        self._c = float(self.c)

    def arms(self) -> np.ndarray:
        return kl_ucb_arm(self._sums, self._counts, self._rounds, self._c)

    def _play_kernel(self, losses: np.ndarray, uniforms: np.ndarray, probs: np.ndarray) -> None:
        _kl_ucb_play_block(
            losses,
            uniforms,
            self._sums,
            self._counts,
            self._rounds,
            self._c,
            self._lo,
            self._scale,
            probs,
        )

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"c": 3.0}
