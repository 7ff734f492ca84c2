"""Thompson sampling: play the arm that is best under one draw from the posterior."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.bandit.components import BanditPlayer
from arena.bandit.point_masses import fill_point_masses
from arena.params import OneOf
from arena.spec import GameSpec, PlayerTags
from arena.streams import generator_handles, jit_disabled, stream
from arena.validation import kernel_views

BETA, GAUSSIAN = 0, 1
"""Kernel codes of the priors."""


@njit(cache=True, nogil=True)
def _gamma_constants(shape):
    """The constants ``b = a − 1/3`` and ``c = 1/sqrt(9 b)`` of Marsaglia & Tsang's method for
    ``Gamma(a)``, as numpy computes them (``a ≥ 1``)."""
    b = shape - 1.0 / 3.0
    return b, 1.0 / np.sqrt(9 * b)


@njit(cache=True, nogil=True)
def _standard_gamma(rng, shape, b, c):
    """``Gamma(shape)`` for ``shape ≥ 1`` from ``rng``, numpy's ``random_standard_gamma`` step for
    step (an exponential at shape 1; else Marsaglia & Tsang 2000, with numpy's squeeze and the
    same operations), given the constants of :func:`_gamma_constants`: its draws and the stream
    it leaves are numpy's, bit for bit, and a kernel that keeps the constants per arm saves a
    square root and a division per variate."""
    if shape == 1.0:
        return rng.standard_exponential()
    while True:
        while True:
            x = rng.standard_normal()
            v = 1.0 + c * x
            if v > 0.0:
                break
        v = v * v * v
        u = rng.random()
        if u < 1.0 - 0.0331 * (x * x) * (x * x):
            return b * v
        if np.log(u) < 0.5 * x * x + b * (1.0 - v + np.log(v)):
            return b * v


@njit(cache=True, nogil=True)
def _beta(rng, a, b, a_b, a_c, b_b, b_c):
    """``Beta(a, b)`` for ``a, b ≥ 1`` as numpy's ``Generator.beta`` draws it: Jöhnk's method when
    ``a, b ≤ 1`` (numba's ``Generator.beta``, numpy's algorithm), else ``G_a/(G_a + G_b)`` with
    two :func:`_standard_gamma` variates, given their constants ``(a_b, a_c)``, ``(b_b, b_c)``."""
    if a <= 1.0 and b <= 1.0:
        return rng.beta(a, b)
    ga = _standard_gamma(rng, a, a_b, a_c)
    gb = _standard_gamma(rng, b, b_b, b_c)
    return ga / (ga + gb)


@njit(cache=True, nogil=True)
def _posterior_sample(prior, successes, failures, total, pulls, rng):
    """Draw one arm's posterior sample from ``rng``, given its counts (scalars): ``Beta(S + 1,
    F + 1)`` (:func:`_beta`, the kernel's sampler: bit for bit numpy's ``rng.beta``), or
    ``N(μ̂, 1/(k + 1))`` with ``μ̂ = total/(k + 1)`` and k the pulls."""
    if prior == BETA:
        a, b = successes + 1.0, failures + 1.0
        a_b, a_c = _gamma_constants(a)
        b_b, b_c = _gamma_constants(b)
        return _beta(rng, a, b, a_b, a_c, b_b, b_c)
    return rng.normal(total / (pulls + 1.0), 1.0 / math.sqrt(pulls + 1.0))


@njit(cache=True, nogil=True)
def _thompson_play_arms(losses, prior, successes, failures, rewards, counts, arms, lo, scale,
                        handles, rngs, pulled):  # fmt: skip
    """Play a chunk of every replicate r from its own stream ``rngs[r]``: fill ``pulled`` (R, n)
    with the arms pulled; ``arms`` (R,) holds the sampled arm of each replicate's next round;
    reads only the pulled arm's loss.

    A round pulls the sampled arm (it commits the point mass on it, and the arena's draw from a
    point mass is its arm: :mod:`arena.bandit.point_masses`), records the reward (Beta: the
    Bernoulli trick, a success with probability ``reward``, one uniform of the stream; Gaussian:
    the reward itself), then draws K posterior samples in arm order and keeps the arm of the
    largest (the lowest index on ties). The Beta draws are :func:`_beta`'s with each arm's Gamma
    constants kept (only the pulled arm's change); the Gaussian ones :func:`_posterior_sample`'s.
    The state is indexed in place, with no row views or helper calls per round (with them the
    kernel cost 1.4x the K Beta draws alone; now about 1.04x,
    ``benchmarks/profile_bandit_path.py --thompson``).

    Replicate r draws from its own generator, :func:`arena.streams.stream` of ``handles``
    (``rngs``, the generators themselves, without JIT): one call for the whole chunk, where a
    ``Generator`` argument per replicate would cost numba's ctypes unboxing, tens of microseconds,
    R times a chunk."""
    n_rep, n, n_act = losses.shape
    s_b, s_c = np.empty(n_act), np.empty(n_act)  # Gamma constants of S_i + 1 and F_i + 1
    f_b, f_c = np.empty(n_act), np.empty(n_act)
    for r in range(n_rep):
        rng = stream(handles, rngs, r)
        arm = arms[r]
        for i in range(n_act):
            s_b[i], s_c[i] = _gamma_constants(successes[r, i] + 1.0)
            f_b[i], f_c[i] = _gamma_constants(failures[r, i] + 1.0)
        for j in range(n):
            pulled[r, j] = arm
            reward = 1.0 - (losses[r, j, arm] - lo) / scale
            counts[r, arm] += 1.0
            rewards[r, arm] += reward
            best = 0
            best_theta = -np.inf
            if prior == BETA:
                if rng.random() < reward:
                    successes[r, arm] += 1.0
                    s_b[arm], s_c[arm] = _gamma_constants(successes[r, arm] + 1.0)
                else:
                    failures[r, arm] += 1.0
                    f_b[arm], f_c[arm] = _gamma_constants(failures[r, arm] + 1.0)
                for i in range(n_act):
                    theta = _beta(rng, successes[r, i] + 1.0, failures[r, i] + 1.0, s_b[i],
                                  s_c[i], f_b[i], f_c[i])  # fmt: skip
                    if theta > best_theta:
                        best, best_theta = i, theta
            else:
                for i in range(n_act):
                    theta = _posterior_sample(prior, 0.0, 0.0, rewards[r, i], counts[r, i], rng)
                    if theta > best_theta:
                        best, best_theta = i, theta
            arm = best
        arms[r] = arm


class Thompson(BanditPlayer):
    """Thompson sampling: commit the point mass on the best arm of one posterior sample.

    Rewards are ``1 − ℓ`` with losses mapped to [0, 1] by the declared range. Each replicate keeps
    its own random stream (the generator ``reset`` receives), so a replicate plays the same game
    alone or in any batch and the arena's action draws stay common random numbers. After each
    round (and at reset, for round 1) the player draws ``θ_i`` for every arm, in arm order, and
    commits ``p_t = e_{argmax θ}`` (the lowest index on ties); ``predict`` only reads that arm.

    * ``"beta"`` (default): Beta-Bernoulli with the Bernoulli trick for [0, 1] rewards: the
      observed reward ``r`` becomes a success with probability ``r`` (one uniform), and
      ``θ_i ~ Beta(S_i + 1, F_i + 1)`` (Agrawal & Goyal 2012, Algorithm 2).
    * ``"gaussian"``: ``θ_i ~ N(μ̂_i, 1/(k_i + 1))`` with ``μ̂_i = (Σ_s r_{s,i})/(k_i + 1)``,
      ``k_i`` the pulls (Agrawal & Goyal 2013, Algorithm 2).

    Parameters
    ----------
    prior : {"beta", "gaussian"}
        The posterior family (above).

    Notes
    -----
    For stochastic arms with rewards in [0, 1], the Beta version's expected regret is
    ``O(Σ_{i: Δ_i > 0} ln T / Δ_i)`` with the optimal constant asymptotically (Agrawal & Goyal
    2012, Theorem 2; Kaufmann, Korda & Munos 2012), and both versions are ``O(√(K T ln T))`` in the
    worst case (Agrawal & Goyal 2013, Theorem 1). The constants are not explicit and the bounds
    hold for stochastic arms only (Thompson sampling can suffer almost linear regret against
    stochastically constrained adversaries, Zimmert & Seldin 2021, §7), so it declares no
    ``bound`` rows. It keeps no importance-weighted estimates.

    Examples
    --------
    >>> from arena import play
    >>> df = play(Thompson(), "bernoulli", n_actions=3, horizon=500, replicates=2,
    ...           adversary_params={"gap": 0.3}, metrics={"arm_pulls": {}})
    >>> pulls = df[(df.t == 500) & (df.replicate == 0)].value.tolist()
    >>> pulls[0] > pulls[1] and pulls[0] > pulls[2]  # the best arm (0) is pulled most
    True

    References
    ----------
    Agrawal & Goyal (2012), "Analysis of Thompson sampling for the multi-armed bandit problem",
    COLT, Algorithm 2 (the Bernoulli trick) and Theorem 2.
    Agrawal & Goyal (2013), "Further optimal regret bounds for Thompson sampling", AISTATS,
    Algorithm 2 (Gaussian priors) and Theorem 1.
    Kaufmann, Korda & Munos (2012), "Thompson sampling: an asymptotically optimal finite-time
    analysis", ALT.
    """

    tags = PlayerTags(protocols=frozenset({"bandit"}), block_kernel=True)
    parameter_constraints: ClassVar = {"prior": [OneOf("beta", "gaussian")]}

    def __init__(self, prior: str = "beta"):
        self.prior = prior

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._code = BETA if self.prior == "beta" else GAUSSIAN
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        shape = (spec.n_replicates, spec.n_actions)
        self._successes, self._failures = np.zeros(shape), np.zeros(shape)
        self._rewards, self._counts = np.zeros(shape), np.zeros(shape)
        self._rngs = list(rngs)
        self._handles = None  # the generators' interface for the kernel, read at first use
        self._arm = np.array([self._sample(r) for r in range(spec.n_replicates)], dtype=np.int64)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_handles"] = None  # pointers into this process's generators: read them again
        return state

    def _sample(self, r: int) -> int:
        """Draw replicate r's posterior sample (K variates from its stream); return its best arm."""
        rng, k = self._rngs[r], self._counts.shape[1]
        if self._code == BETA:
            theta = [
                rng.beta(self._successes[r, i] + 1, self._failures[r, i] + 1) for i in range(k)
            ]
        else:
            theta = [
                rng.normal(self._rewards[r, i] / (self._counts[r, i] + 1),
                           1 / math.sqrt(self._counts[r, i] + 1))
                for i in range(k)
            ]  # fmt: skip
        return int(np.argmax(theta))

    def predict(self) -> np.ndarray:
        p = np.zeros_like(self._counts)
        p[np.arange(p.shape[0]), self._arm] = 1.0
        return p

    def update(self, actions: np.ndarray, losses: np.ndarray, probs: np.ndarray) -> None:
        rewards = 1.0 - (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale
        for r, (a, reward) in enumerate(zip(actions.tolist(), rewards.tolist(), strict=True)):
            self._counts[r, a] += 1
            self._rewards[r, a] += reward
            if self._code == BETA:  # the Bernoulli trick
                if self._rngs[r].random() < reward:
                    self._successes[r, a] += 1
                else:
                    self._failures[r, a] += 1
            self._arm[r] = self._sample(r)

    plays_arms = True
    play_block_out = True

    def play_block(
        self, losses: np.ndarray, uniforms: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        probs = np.empty(losses.shape) if out is None else out
        fill_point_masses(self.play_arms(losses), probs)
        return probs

    def play_arms(self, losses: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        (losses,) = kernel_views(losses)
        pulled = np.empty(losses.shape[:2], dtype=np.int64) if out is None else out
        if self._handles is None:
            self._handles = generator_handles(self._rngs)
        _thompson_play_arms(
            losses,
            self._code,
            self._successes,
            self._failures,
            self._rewards,
            self._counts,
            self._arm,
            self._lo,
            self._scale,
            self._handles,
            self._rngs if jit_disabled() else None,
            pulled,
        )
        return pulled

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"prior": "gaussian"}
