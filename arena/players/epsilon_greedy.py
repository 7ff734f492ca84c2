"""ε-greedy: the empirically best arm, with a uniform exploration of weight ε_t."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numba import njit

from arena.params import Interval, OneOf
from arena.players._empirical_means import INTERLEAVE, EmpiricalMeansPlayer
from arena.spec import GameSpec, PlayerTags


@njit(cache=True, nogil=True)
def _epsilon(decaying, epsilon, c, d, n_act, t):
    """ε_t: the constant ε, or ``min(1, c K / (d² t))`` (decaying)."""
    if decaying:
        return min(1.0, c * n_act / (d * d * t))
    return epsilon


def epsilon_greedy_probs(sums: np.ndarray, counts: np.ndarray, epsilon: float) -> np.ndarray:
    """Return ``p_t = (1 − ε) e_g + ε/K`` row-wise, ``g`` the greedy arm: an unplayed arm first
    (the lowest index), else the least mean loss (the lowest index on ties).

    Examples
    --------
    >>> epsilon_greedy_probs(np.array([[3.0, 1.0]]), np.array([[4.0, 4.0]]), 0.5).tolist()
    [[0.25, 0.75]]
    """
    n_rep, n_act = sums.shape
    unplayed = counts == 0.0
    mean = np.where(unplayed, -np.inf, sums / np.where(unplayed, 1.0, counts))
    p = np.full((n_rep, n_act), epsilon / n_act)
    p[np.arange(n_rep), mean.argmin(axis=-1)] += 1.0 - epsilon
    return p


@njit(cache=True, nogil=True, inline="always")
def _counted_draw(share, top, greedy, u, n_act):
    """:func:`~arena.sampling.sample_action` of ``p = (share, …, top, …, share)`` (``top`` at
    ``greedy``) at ``u`` as the count of its running sums ``≤ u``, or ``n_act`` where every sum
    is (the caller then takes the last positive entry).

    The sums never fall (every entry ≥ 0), so the count is the first i whose sum exceeds u; it
    needs no early exit, whose exit point is random where ε_t is large.
    """
    below = 0
    cum = 0.0
    for i in range(n_act):
        cum += top if i == greedy else share
        below += cum <= u
    return below


@njit(cache=True, nogil=True, inline="always")
def _uniform_draw(share, u, n_act):
    """:func:`~arena.sampling.sample_action` of ``p = (share, …, share)`` at ``u``, share > 0:
    :func:`_counted_draw` with no greedy arm above the others.

    The running sums ``share + … + share`` do not depend on the player's state, so the draw is
    off the chain of rounds; none exceeds u only where rounding leaves the last sum ``≤ u``, and
    the last positive entry is then the last.
    """
    below = _counted_draw(share, share, 0, u, n_act)
    return below if below < n_act else n_act - 1


@njit(cache=True, nogil=True)
def _eg_uniform_rounds(
    losses, uniforms, sums, counts, mean, rounds_done, decaying, eps, c, d, lo, scale, probs
):
    """Play one replicate's leading rounds whose ``p_t`` is uniform (``ε_t/K + (1 − ε_t)`` is
    ``ε_t/K``: ε_t = 1) and return how many it played (1-D state, 2-D chunk arrays).

    Their draw is :func:`_uniform_draw`'s, which does not wait on the previous round: 40 ns a
    round by the early exit (random exit points), 8 ns so. The decaying schedule's ε_t never
    rises, so its uniform rounds are a prefix of the game; a constant ε = 1 is uniform
    throughout.
    """
    n, n_act = losses.shape
    for j in range(n):
        e = _epsilon(decaying, eps, c, d, n_act, rounds_done + j + 1)
        share = e / n_act
        if share + (1.0 - e) != share:
            return j
        for i in range(n_act):
            probs[j, i] = share
        a = _uniform_draw(share, uniforms[j], n_act)
        total = sums[a] + (losses[j, a] - lo) / scale
        k = counts[a] + 1.0
        sums[a] = total
        counts[a] = k
        mean[a] = total / k
    return n


@njit(cache=True, nogil=True)
def _eg_play_block(
    losses, uniforms, sums, counts, rounds_done, decaying, eps, c, d, lo, scale, probs
):
    """Play a chunk of ε-greedy; reads only the drawn arm's loss.

    Each replicate caches its arms' means (−inf for an arm not yet pulled), recomputed for the
    drawn arm only: a round costs one division, not K. ε_t, ε_t/K and 1 − ε_t are the same in
    every replicate, so they are computed once per round of the chunk. The draw is
    :func:`~arena.sampling.sample_action` of the row just written, computed from the same values
    in registers and with selects instead of its early exit (whose exit point is random), and
    :data:`~arena.players._empirical_means.INTERLEAVE` replicates advance round by round together so
    that their independent chains overlap; each replicate's arithmetic is unchanged. A replicate
    with no others beside it (a group of one: R = 1, the last of R = 5) plays its rounds in
    :func:`_eg_play_alone`."""
    n_rep, n, n_act = losses.shape
    mean = np.empty((n_rep, n_act))
    explore = np.empty(n)  # ε_t / K, every arm's share
    exploit = np.empty(n)  # 1 − ε_t, added to the greedy arm's
    for j in range(n if n_rep > 1 else 0):
        e = _epsilon(decaying, eps, c, d, n_act, rounds_done + j + 1)
        explore[j] = e / n_act
        exploit[j] = 1.0 - e
    for r in range(n_rep):
        for i in range(n_act):
            k = counts[r, i]
            mean[r, i] = -np.inf if k == 0.0 else sums[r, i] / k
    for r0 in range(0, n_rep, INTERLEAVE):
        r1 = min(n_rep, r0 + INTERLEAVE)
        if r1 - r0 == 1:
            _eg_play_alone(
                losses,
                uniforms,
                sums,
                counts,
                mean,
                rounds_done,
                decaying,
                eps,
                c,
                d,
                lo,
                scale,
                probs,
                r0,
            )
            continue
        for j in range(n):
            share = explore[j]
            top = share + exploit[j]  # the greedy arm's p, as probs[best] += 1 − ε_t makes it
            for r in range(r0, r1):
                best = 0
                best_mean = np.inf
                for i in range(n_act):
                    if mean[r, i] < best_mean:
                        best, best_mean = i, mean[r, i]
                u = uniforms[r, j]
                cum = 0.0
                found = n_act  # none yet: the first i with u < p_1 + … + p_i
                last = 0  # the last i with p_i > 0
                for i in range(n_act):
                    p = top if i == best else share
                    probs[r, j, i] = p
                    last = i if p > 0.0 else last
                    cum += p
                    found = i if (u < cum) & (found == n_act) else found
                a = found if found < n_act else last
                total = sums[r, a] + (losses[r, j, a] - lo) / scale
                k = counts[r, a] + 1.0
                sums[r, a] = total
                counts[r, a] = k
                mean[r, a] = total / k


@njit(cache=True, nogil=True)
def _eg_play_alone(
    losses, uniforms, sums, counts, mean, rounds_done, decaying, eps, c, d, lo, scale, probs, r
):
    """Play a chunk of ε-greedy for replicate ``r`` alone (:func:`_eg_play_block`'s arithmetic).

    A single replicate's rounds form one chain: round j+1's greedy arm waits on round j's update,
    and nothing interleaved beside it hides that wait. Four changes shorten it, each leaving
    every value the same to the bit:

    * while ``p_t`` is uniform (ε_t = 1: the first cK/d² rounds of the decaying schedule, 4,500
      at its defaults and K = 9) the draw needs no greedy arm (:func:`_eg_uniform_rounds`);
    * after that the draw is :func:`~arena.sampling.sample_action`'s, with its early exit: the
      processor runs ahead on the predicted exit (the greedy arm, with probability
      1 − ε_t + ε_t/K), where :func:`_eg_play_block`'s selects put K dependent additions on the
      chain. Beside other replicates the selects are the faster: a mispredicted exit stalls
      every interleaved chain (35.7 against 23.7 ns a replicate-round at R = 100);
    * ε_t is computed in the loop, off the chain, instead of in a pass of its own;
    * the replicate's state is read through 1-D views.

    At K = 9 (the kernel alone on pre-drawn losses, fresh ones each call): 49.5 ns a round
    before the last three, 17.8 after at T = 10⁵; the first took T = 10⁴ from 35–39 ns a round
    to 22–26 (constant ε = 1: 40 to 8).
    """
    own_losses, own_uniforms, own_probs = losses[r], uniforms[r], probs[r]
    own_sums, own_counts, own_mean = sums[r], counts[r], mean[r]
    # ε_t = 1 (the first cK/d² rounds of the decaying schedule): a prefix of uniform rounds
    start = _eg_uniform_rounds(
        own_losses, own_uniforms, own_sums, own_counts, own_mean, rounds_done,
        decaying, eps, c, d, lo, scale, own_probs,
    )  # fmt: skip
    # the others on views from there, in a loop of their own
    _eg_greedy_rounds(
        own_losses[start:], own_uniforms[start:], own_sums, own_counts, own_mean,
        rounds_done + start, decaying, eps, c, d, lo, scale, own_probs[start:],
    )  # fmt: skip


COUNTED_DRAW_EPSILON = 0.3
"""ε_t from which a replicate alone draws by counting sums (:func:`_eg_greedy_rounds`): where
exploring rounds are frequent, the early exit's random exit points are mispredicted; where they
are rare, the count's K additions cost more than the few misses (measured at K = 9: thresholds
0.2–0.3 best at T = 10⁴ and 10⁵, 0.6 and 0.1 each slower at one of them)."""


@njit(cache=True, nogil=True)
def _eg_greedy_rounds(
    losses, uniforms, sums, counts, mean, rounds_done, decaying, eps, c, d, lo, scale, probs
):
    """Play one replicate's rounds by :func:`_eg_play_alone`'s early-exit draw (1-D state, 2-D
    chunk arrays).

    While ε_t ≥ :data:`COUNTED_DRAW_EPSILON` the draw is computed before the greedy arm, for the
    previous round's: the count of its running sums at or below u (the first i with
    ``u < p_1 + … + p_i``, the sums never falling), off the chain of rounds. Where the greedy arm
    stays, that count is the arm; where it changes, the early exit draws on the new sums. At
    K = 9, T = 10⁴ (the kernel alone): 26 ns a round before, 17 after; at T = 10⁵ 17.8 and 17.1.
    """
    n, n_act = losses.shape
    last_best = 0  # the previous round's greedy arm
    for j in range(n):
        e = _epsilon(decaying, eps, c, d, n_act, rounds_done + j + 1)
        share = e / n_act
        top = share + (1.0 - e)
        u = uniforms[j]
        # the draw should the greedy arm stay the previous round's, before this round's is known
        # (its sums are p_t's if it does: the same additions in the same order)
        counted = e >= COUNTED_DRAW_EPSILON
        below = _counted_draw(share, top, last_best, u, n_act) if counted else 0
        best = 0
        best_mean = np.inf
        for i in range(n_act):
            if mean[i] < best_mean:
                best, best_mean = i, mean[i]
        for i in range(n_act):
            probs[j, i] = top if i == best else share
        # none drawn: the last i with p_i > 0 (every arm's ε_t/K, else the greedy arm's alone)
        a = n_act - 1 if share > 0.0 else best
        if counted & (best == last_best):
            a = below if below < n_act else a
        else:
            cum = 0.0
            for i in range(n_act):
                cum += top if i == best else share
                if u < cum:  # the first i with u < p_1 + … + p_i
                    a = i
                    break
        last_best = best
        total = sums[a] + (losses[j, a] - lo) / scale
        k = counts[a] + 1.0
        sums[a] = total
        counts[a] = k
        mean[a] = total / k


class EpsilonGreedy(EmpiricalMeansPlayer):
    """ε-greedy: commit ``p_t = (1 − ε_t) e_{g_t} + ε_t/K`` on the empirically best arm ``g_t``.

    ``g_t`` is an arm not yet pulled (the lowest index) if any, else the arm of least mean loss
    ``ℓ̄_i`` (losses mapped to [0, 1] with the declared range; the lowest index on ties). The
    arena draws ``I_t ~ p_t``: with probability ``1 − ε_t`` the greedy arm, else a uniform arm.

    Parameters
    ----------
    epsilon : float or "decaying"
        A constant ε ∈ [0, 1], or ``"decaying"`` (default): ``ε_t = min(1, c K / (d² t))``, the
        ε_n-greedy schedule of Auer, Cesa-Bianchi & Fischer 2002.
    c : float
        The ``c > 0`` of the decaying schedule (their Theorem 3 takes ``c > 5``).
    d : float
        The ``d ∈ (0, 1]`` of the decaying schedule: a lower bound on the smallest gap for their
        Theorem 3 to apply.

    Notes
    -----
    With the decaying schedule, ``c > 5`` and ``0 < d ≤ min_{i: Δ_i > 0} Δ_i``, on i.i.d. losses in
    [0, 1] the probability of pulling a suboptimal arm at round t is at most ``c/(d² t)`` for
    ``t ≥ cK/d²`` plus ``o(1/t)`` terms (Auer et al. 2002, Theorem 3), so the regret grows
    logarithmically; a constant ε pays ``ε t (K − 1)/K · Δ̄`` linearly. The bound is asymptotic
    and needs the gap, so ε-greedy declares no ``bound`` rows (nor any guarantee against an
    adversary). It keeps no importance-weighted estimates.

    Examples
    --------
    >>> from arena import play
    >>> df = play(EpsilonGreedy(), "bernoulli", n_actions=3, horizon=3000, replicates=2,
    ...           adversary_params={"gap": 0.3}, metrics={"arm_pulls": {}})
    >>> pulls = df[(df.t == 3000) & (df.replicate == 0)].value.tolist()
    >>> pulls[0] > pulls[1] and pulls[0] > pulls[2]  # the best arm (0) is pulled most
    True

    References
    ----------
    Auer, Cesa-Bianchi & Fischer (2002), "Finite-time analysis of the multiarmed bandit problem",
    Machine Learning 47, Figure 3 (ε_n-greedy) and Theorem 3.
    """

    tags = PlayerTags(protocols=frozenset({"bandit"}), block_kernel=True)
    parameter_constraints: ClassVar = {
        "epsilon": [Interval(0, 1), OneOf("decaying")],
        "c": [Interval(0, None, closed="neither")],
        "d": [Interval(0, 1, closed="right")],
    }

    def __init__(self, epsilon: float | str = "decaying", c: float = 5.0, d: float = 0.1):
        self.epsilon = epsilon
        self.c = c
        self.d = d

    def start(self, spec: GameSpec) -> None:
        self._decaying = self.epsilon == "decaying"
        self._eps = 0.0 if self._decaying else float(self.epsilon)
        self._c, self._d = float(self.c), float(self.d)
        self._n_act = spec.n_actions

    def exploration(self) -> float:
        """Return ε_t for the next round (``t = rounds played + 1``)."""
        return float(
            _epsilon(self._decaying, self._eps, self._c, self._d, self._n_act, self._rounds + 1)
        )

    def predict(self) -> np.ndarray:
        return epsilon_greedy_probs(self._sums, self._counts, self.exploration())

    def _play_kernel(self, losses: np.ndarray, uniforms: np.ndarray, probs: np.ndarray) -> None:
        _eg_play_block(
            losses,
            uniforms,
            self._sums,
            self._counts,
            self._rounds,
            self._decaying,
            self._eps,
            self._c,
            self._d,
            self._lo,
            self._scale,
            probs,
        )

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"epsilon": 0.1}
        yield {"epsilon": 0.0}
