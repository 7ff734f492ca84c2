"""The Streeter–McMahan lower bound (Kotłowski 2017, Lemma 3.1): constant origin regret costs
``≈ |u|√(T log(|u|√T/ε))`` against ``u``.

The proof's probabilistic argument made into an oblivious OCO adversary: fair ±1 coins conditioned
on the event that the walk ends far below 0, where a player that risks at most ε against the
origin must lose to the comparator ``u > 0``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, NamedTuple

import numpy as np
from numba import njit

from arena.adversaries._oco_stream import StreamAdversary
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import NON_NEGATIVE, POSITIVE
from arena.spec import AdversaryTags, GameSpec

MAX_HORIZON = 10**7
"""Longest game: :func:`streeter_mcmahan_bound` holds the (T + 1) binomial weights at reset."""


class Threshold(NamedTuple):
    """The event ``E = {D_T ≥ k}`` of the proof, ``D_T = −Σ_{t≤T} s_t``, and its bound.

    ``minus`` is the least number of −1 coins of the event (``k = 2·minus − T``), ``prob`` is
    ``P(E)`` under fair coins, ``mean_drop`` is ``E[D_T | E]`` and ``value`` the bound
    ``G·u·E[D_T | E] − ε(1 − P(E))/P(E)`` at t = T.
    """

    minus: int
    prob: float
    mean_drop: float
    value: float


def _tails(horizon: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Binomial(T, ½) weights of m (the number of −1 coins), ``P(m ≥ j)`` and ``E[D_T; m ≥ j]``."""
    m = np.arange(horizon + 1)
    from scipy.stats import binom  # scipy.stats costs ~1 s to import: only where used

    pmf = binom.pmf(m, horizon, 0.5)
    # summed from the top so that the small tails keep their relative accuracy
    prob = np.cumsum(pmf[::-1])[::-1]
    drop = np.cumsum((pmf * (2 * m - horizon))[::-1])[::-1]
    return pmf, prob, drop


def streeter_mcmahan_bound(u: float, horizon: int, eps: float, G: float = 1.0) -> Threshold:
    """Return the best event of the proof of Kotłowski 2017, Lemma 3.1, and its lower bound.

    For every player whose origin regret ``R_t(0) = Σ_{s≤t} g_s w_s`` is at most ``ε`` on every
    sequence of coins ``g_s = G·s_s``, ``s_s = ±1``, and every event ``E = {D_T ≥ k}`` with
    ``D_T = −Σ_{s≤T} s_s``, fair coins give (Notes of :class:`StreeterMcMahan`)

        ``E[R_t(u) | E] ≥ G·u·(t/T)·E[D_T | E] − ε(1 − P(E))/P(E)``,  t ≤ T,

    so some sequence of E forces regret ``R_T(u)`` at least the right side at t = T. This returns
    the threshold maximizing it at t = T, computed exactly from the binomial law (no Gaussian tail
    approximation). It has the lemma's order ``u√(T ln(u√T/ε))``: ``(u, ε) = (1, 1)`` gives
    10.05 at T = 100, 194.8 at T = 10⁴ and 2,718.8 at T = 10⁶, against ``√(T ln √T)`` = 15.17,
    214.6 and 2,628.3 (ratios 0.66, 0.91, 1.03, rising slowly towards √2 as the penalty term
    fades).

    Parameters
    ----------
    u : float
        The comparator ``u ≥ 0`` (the case ``u < 0`` is the mirror image).
    horizon : int
        T ≥ 1.
    eps : float
        The player's guarantee ``ε ≥ 0`` on its origin regret.
    G : float
        The size of the coins.

    Returns
    -------
    Threshold
        ``minus``, ``prob``, ``mean_drop`` and ``value`` of the best event.

    Examples
    --------
    >>> b = streeter_mcmahan_bound(1.0, 100, 1.0)
    >>> b.minus, round(b.prob, 4), round(b.mean_drop, 3), round(b.value, 3)
    (55, 0.1841, 14.482, 10.05)
    >>> streeter_mcmahan_bound(1.0, 4, 0.0).value  # ε = 0: all four coins −1, regret 4u
    4.0
    """
    horizon = int(horizon)
    _, prob, drop = _tails(horizon)
    ok = prob > 0.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mean_drop = np.where(ok, drop / np.where(ok, prob, 1.0), 0.0)
        penalty = np.where(ok, float(eps) * (1.0 - prob) / np.where(ok, prob, 1.0), np.inf)
    value = float(G) * float(u) * mean_drop - penalty
    j = int(np.argmax(value))
    return Threshold(j, float(prob[j]), float(mean_drop[j]), float(value[j]))


@njit(cache=True, nogil=True)
def _draw_signs(uniforms, state, out):  # pragma: no cover - compiled
    """Coin ``s = −1`` with probability ``minus left / rounds left``: a uniform arrangement."""
    minus, left = state[0], state[1]
    for j in range(uniforms.size):
        if uniforms[j] < minus / left:
            out[j] = -1.0
            minus -= 1
        else:
            out[j] = 1.0
        left -= 1
    state[0], state[1] = minus, left


class StreeterMcMahan(StreamAdversary):
    """Fair ±G coins conditioned on ``−Σ_t s_t ≥ k``: Kotłowski 2017's Lemma 3.1 environment.

    One-dimensional unconstrained online linear optimization, ``f_t(w) = g_t·w`` with
    ``g_t = G·s_t``, ``s_t = ±1`` (Kotłowski 2017, §3: ``x_t = 1`` and the loss's derivative
    ``g_t ∈ [−1, 1]``). The sequence is drawn, before round 1, uniformly among the ``s ∈ {±1}^T``
    whose walk ends at ``D_T = −Σ_t s_t ≥ k``, with ``k`` the threshold that maximizes the proof's
    bound for the comparator ``u`` and the origin-regret guarantee ``ε``
    (:func:`streeter_mcmahan_bound`).

    Parameters
    ----------
    u : float
        The comparator ``u > 0`` (declared, oracle ``comparator``: ``comparator_regret`` with
        param c evaluates ``c·u``).
    origin_regret : float
        ``ε ≥ 0``: the guarantee ``R_t(0) ≤ ε`` (every sequence, every t) of the players the
        declared bound is about, in loss units (KT with initial wealth ε₀ against coins of size G
        has ``ε = G·ε₀``; fixed-step OGD from 0, ``ε = ηG²T/2``).
    G : float
        The size of the coins, declared as the gradient bound.

    Notes
    -----
    *Kotłowski 2017, Lemma 3.1* (Streeter & McMahan 2012, Theorem 7): in one dimension, any
    algorithm with constant regret against ``u = 0`` suffers, for every u, on some gradient
    sequence, regret of order ``|u|√T·√(log(|u|√T/ε))``. The paper cites it and does not build the
    sequence; this adversary is the proof's argument, written out. For fair coins and any
    non-anticipating player, ``w_t`` is independent of ``s_t``, so ``E[R_t(0)] = 0``. With
    ``R_t(0) ≤ ε`` everywhere, ``E[R_t(0); Eᶜ] ≤ ε(1 − P(E))``, hence ``E[R_t(0); E] ≥
    −ε(1 − P(E))``; and ``R_t(u) = R_t(0) + G·u·D_t``, with ``E[D_t | E] = (t/T)·E[D_T | E]`` by
    exchangeability of the coins given their sum. Dividing by ``P(E)``:
    ``E[R_t(u) | E] ≥ G·u·(t/T)·E[D_T | E] − ε(1 − P(E))/P(E)``. The left side is the expected
    regret against this adversary, so :meth:`lower_bounds` declares the right side on the **mean**
    over replicates of ``comparator_regret`` at ``c = 1``. It holds for players whose origin
    regret is at most ``origin_regret`` (KT, OGD with that ε); a player that bets boldly has
    a larger ε, and the bound says nothing of it. With ``P(E) ≈ e^{−k²/2T}`` the best ``k ≈
    √(2T ln(u√T/ε))`` gives the lemma's order.

    Sampling: at reset each replicate draws the number ``m ≥ (T + k)/2`` of −1 coins from the
    conditioned Binomial(T, ½) law (one uniform, inverse CDF); round t then is −1 with probability
    ``(−1 coins left)/(rounds left)`` (one uniform a round, in round order), which makes every
    arrangement of the m coins equally likely, so the sequence is uniform on E.

    Examples
    --------
    >>> from arena import play
    >>> df = play("kt", StreeterMcMahan(u=1.0, origin_regret=1.0), n_actions=1, horizon=100,
    ...           replicates=2, checkpoints=[100], metrics=["comparator_regret", "lower_bound"])
    >>> round(float(df[df.metric == "lower_bound:comparator_regret"].value.iloc[0]), 3)
    10.05

    References
    ----------
    Kotłowski 2017, §3, Lemma 3.1; Streeter & McMahan 2012, Theorem 7.
    """

    parameter_constraints: ClassVar = {
        "u": [POSITIVE],
        "origin_regret": [NON_NEGATIVE],
        "G": [POSITIVE],
    }
    tags = AdversaryTags(protocol="oco", oblivious=True, oracle=frozenset({"comparator"}))

    def __init__(self, u: float = 1.0, origin_regret: float = 1.0, G: float = 1.0):
        self.u = u
        self.origin_regret = origin_regret
        self.G = G

    def resolve_dim(self, requested: int | None, horizon: int | None = None) -> int:
        if requested not in (None, 1):
            raise ConfigError(self.label(), "n_actions", f"the game is 1-d, got {requested}")
        return 1

    def declared_domain(self) -> Domain:
        return Domain("unconstrained")

    def declared_loss(self) -> str:
        return "linear"

    def gradient_bound(self) -> float:
        return float(self.G)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        horizon = spec.horizon
        if horizon is None or not 1 <= int(horizon) <= MAX_HORIZON:
            raise ConfigError(
                self.label(),
                "horizon",
                f"the conditioning event needs a horizon 1 ≤ T ≤ {MAX_HORIZON:,}, got {horizon}",
            )
        horizon = int(horizon)
        self._horizon = horizon
        self._bound = streeter_mcmahan_bound(self.u, horizon, self.origin_regret, self.G)
        pmf, _, _ = _tails(horizon)
        tail = pmf[self._bound.minus :]
        cdf = np.cumsum(tail / tail.sum())
        self._rngs = list(rngs)
        self._state = np.empty((len(self._rngs), 2), dtype=np.int64)
        for r, rng in enumerate(self._rngs):
            j = min(int(np.searchsorted(cdf, rng.random(), side="right")), tail.size - 1)
            self._state[r] = (self._bound.minus + j, horizon)
        self._n_rep = len(self._rngs)
        self._start_stream()

    def _generate(self, n: int) -> RoundData:
        g = np.empty((self._n_rep, n, 1))
        for r, rng in enumerate(self._rngs):
            _draw_signs(rng.random(n), self._state[r], g[r, :, 0])
        g *= float(self.G)
        return RoundData(g=g)

    def comparator(self) -> np.ndarray:
        return np.full((self._n_rep, 1), float(self.u))

    def threshold(self) -> Threshold:
        """The event and bound of this game (:func:`streeter_mcmahan_bound`), after reset."""
        return self._bound

    def lower_bounds(self, t: int, player=None) -> dict[tuple[str, float], float]:
        """Declare ``G·u·(t/T)·E[D_T | E] − ε(1 − P(E))/P(E)`` on the mean ``comparator_regret``
        at c = 1, for players whose origin regret never exceeds ``origin_regret`` (Notes)."""
        b = self._bound
        prob = b.prob
        value = float(self.G) * float(self.u) * (int(t) / self._horizon) * b.mean_drop
        value -= float(self.origin_regret) * (1.0 - prob) / prob
        return {("comparator_regret", 1.0): value}

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"u": 3.0, "origin_regret": 0.5, "G": 2.0}
