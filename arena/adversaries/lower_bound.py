"""Worst-case and lower-bound constructions: FTL killer, COMB, anti-Hedge, planted coins.

The randomized constructions (COMB, planted blocks and windows) declare reference lower bounds
(``lower_bounds``) on the **mean** over replicates of a regret notion; they are expectation
statements, true for every non-anticipating player (each construction gives every expert loss 1
with probability ½, whatever the past, so every such player's expected loss is ½ per round).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import ClassVar

import numpy as np

from arena.adversaries.stochastic import MeanDrivenBernoulli, fair_coin_lower_bound
from arena.errors import ConfigError
from arena.experts.components import ObliviousAdversary
from arena.params import POSITIVE, Interval, IsNone, OneOf
from arena.spec import AdversaryTags, GameSpec


class FTLKiller(ObliviousAdversary):
    """The FTL killer: ``l_1 = (½, 0)``, then ``(0, 1)`` on even rounds and ``(1, 0)`` on odd ones.

    Experts beyond the first two (if N > 2) get loss 1 every round.

    Notes
    -----
    Forces Follow the Leader to regret exactly ``T/2 − 1/4`` with uniform tie-break (``T/2`` with
    the lowest-index rule): after round 1 the leader is always the expert about to lose. Against
    fixed-η Hedge it forces ``T(σ(η/2) − ½) ≈ ηT/8`` (σ the logistic function; a direct
    computation).

    Examples
    --------
    >>> adv = FTLKiller(); adv.reset(GameSpec("experts", 2, 5), [None])
    >>> adv.losses_block(1, 4)[0].tolist()
    [[0.5, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]

    References
    ----------
    de Rooij, van Erven, Grünwald & Koolen (2014), JMLR, §2; Cesa-Bianchi & Lugosi (2006).
    """

    tags = AdversaryTags(oblivious=True)

    def __init__(self):
        pass

    def resolve_n_actions(self, requested: int | None) -> int:
        return 2 if requested is None else int(requested)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        if spec.n_actions < 2:
            raise ConfigError(self.label(), "n_actions", "needs at least 2 experts")
        self._n_rep, self._n_act = spec.n_replicates, spec.n_actions

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        t = np.arange(t0, t0 + n)
        one = np.ones((n, self._n_act))
        even = t % 2 == 0
        one[:, 0] = np.where(even, 0.0, 1.0)
        one[:, 1] = np.where(even, 1.0, 0.0)
        first = t == 1
        one[first, 0], one[first, 1] = 0.5, 0.0
        return np.broadcast_to(one, (self._n_rep, n, self._n_act)).copy()


# ----------------------------------------------------------------------------------------------
# COMB


COMB_DP_BUDGET = 3_000_000
"""Most (state, round) pairs times K the COMB dynamic program visits before it stops (≈ 2 s)."""

COMB_PRUNE = 1e-25
"""States of probability below this are dropped; their effect is bounded and subtracted."""


def cover_values(horizon: int) -> np.ndarray:
    """Return Cover's two-expert values ``V_t = ½ Σ_{j=0}^{⌊(t−1)/2⌋} C(2j, j)/4^j``, t = 0..T.

    ``V_t = E|S_t − t/2|`` with ``S_t ~ Bin(t, ½)`` is the expected regret of every
    non-anticipating player against random ``(1, 0)/(0, 1)`` losses, i.e. COMB with K = 2
    (Cover 1965).

    Examples
    --------
    >>> (cover_values(10) * 256).tolist()[1:]
    [128.0, 128.0, 192.0, 192.0, 240.0, 240.0, 280.0, 280.0, 315.0, 315.0]
    """
    horizon = int(horizon)
    j_max = max(0, (horizon - 1) // 2)
    c = np.ones(j_max + 1)
    if j_max:
        j = np.arange(j_max, dtype=np.float64)
        c[1:] = np.cumprod((2 * j + 1) / (2 * j + 2))
    partial = 0.5 * np.cumsum(c)  # partial[j] = ½ Σ_{i≤j} c_i
    t = np.arange(horizon + 1)
    out = np.zeros(horizon + 1)
    out[1:] = partial[(t[1:] - 1) // 2]
    return out


@lru_cache(maxsize=32)
def comb_values(n_actions: int, horizon: int) -> tuple[np.ndarray, int]:
    """Return the exact COMB values ``E[R_t]``, t = 0..t_max, and t_max ≤ T.

    Every non-anticipating player has ``E[p_t·l_t | past] = ½`` against COMB, so ``E[R_t] =
    t/2 − E[min_i L_{t,i}]`` for all of them. ``E[min L]`` follows from a forward dynamic
    program over the sorted gap vectors ``L − min L`` (the state of the comb; ties need no order
    because the multiset of cumulative losses is the same either way). K = 2
    uses Cover's closed form (:func:`cover_values`). For K ≥ 3 the program stops at the first
    round after which it has visited :data:`COMB_DP_BUDGET` states times K (t_max < T then);
    states of probability below :data:`COMB_PRUNE` are dropped, and each unit of dropped mass
    can add at most 1 per later round to ``E[min L]``, which is added back so that the returned
    values stay lower bounds (the correction is below 1e-15 in practice).

    Examples
    --------
    >>> values, t_max = comb_values(3, 10)
    >>> round(float(values[10]), 4), t_max
    (1.6729, 10)
    """
    k, horizon = int(n_actions), int(horizon)
    if k <= 1:
        return np.zeros(horizon + 1), horizon
    if k == 2:
        return cover_values(horizon), horizon
    masks = np.array([[1 - (j + par) % 2 for j in range(k)] for par in (0, 1)], dtype=np.int64)
    states = np.zeros((1, k), dtype=np.int64)
    probs = np.ones(1)
    out = np.zeros(horizon + 1)
    e_min = dropped = correction = 0.0
    visited = 0
    t_max = horizon
    for t in range(1, horizon + 1):
        correction += dropped
        v = np.concatenate([states + masks[0], states + masks[1]])
        pr = np.concatenate([probs, probs]) * 0.5
        m = v.min(axis=1)
        e_min += float(pr @ m)
        v = np.sort(v - m[:, None], axis=1)
        key = np.zeros(len(v), dtype=np.int64)
        for j in range(1, k):
            key = key * (t + 2) + v[:, j]
        order = np.argsort(key, kind="stable")
        sorted_key = key[order]
        starts = np.concatenate([[0], np.flatnonzero(np.diff(sorted_key)) + 1])
        probs = np.add.reduceat(pr[order], starts)
        states = v[order[starts]]
        keep = probs >= COMB_PRUNE
        dropped += float(probs[~keep].sum())
        states, probs = states[keep], probs[keep]
        out[t] = t / 2 - e_min - correction
        visited += len(states) * k
        if visited > COMB_DP_BUDGET and t < horizon:
            t_max = t
            break
    return out[: t_max + 1], t_max


class Comb(ObliviousAdversary):
    """COMB, the randomized comb: rank experts by cumulative loss, hit every other rank.

    Each round the experts are sorted by cumulative loss (ties by index). With probability ½ the
    leader and every other rank (ranks 1, 3, 5, …) get loss 1 and the rest 0; otherwise ranks
    2, 4, 6, … get loss 1.

    Notes
    -----
    Every non-anticipating learner has ``E[p_t·l_t | past] = ½``, so its expected regret is the
    learner-independent value ``E[R_T] = T/2 − E[min_i L_{T,i}]``, computed exactly by a dynamic
    program over sorted gap vectors (:func:`comb_values`; the values below are ours):

    ====  ======  ======  ======  =======
    K     T=10    T=50    T=100   T=400
    ====  ======  ======  ======  =======
    2     1.2305  2.8069  3.9795  7.9739
    3     1.6729  3.7553  5.3149  10.6363
    4     1.9492  4.4232  6.2615  12.5305
    ====  ======  ======  ======  =======

    K = 2 is Cover's game (``V_T ≈ sqrt(T/(2π))``), K = 3 gives ≈ ``sqrt(8T/(9π))``; for small
    K it beats fair coins (K = 3, T = 100: 5.315 against 4.226). ``lower_bounds`` declares this
    value on the **mean** regret over replicates. For K ≥ 3 the program is exact up to the round
    where it reaches its work budget (T ≈ 430 for K = 3, ≈ 580 for K = 4, fewer for larger K);
    beyond it the value at that round is declared, which is still a valid lower bound because
    the COMB value is nondecreasing in t (the leader is hit with probability ½, so
    ``E[min L]`` grows by at most ½ per round). The losses depend only on the adversary's own
    coins, so COMB is oblivious (one uniform per replicate per round, drawn in round order).

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", Comb(), n_actions=2, horizon=10, replicates=2,
    ...           metrics={"lower_bound": {}})
    >>> float(df.value.iloc[-1]) == 315 / 256
    True

    References
    ----------
    Gravin, Peres & Sivan (SODA 2016), "Towards optimal algorithms for prediction with expert
    advice"; Abbasi-Yadkori, Bartlett & Gabillon (NeurIPS 2017); Cover (1965).
    """

    tags = AdversaryTags(oblivious=True)

    def __init__(self):
        pass

    def resolve_n_actions(self, requested: int | None) -> int:
        return 3 if requested is None else int(requested)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._rngs = list(rngs)
        self._n_act = spec.n_actions
        self._horizon = spec.horizon
        self._cum = np.zeros((len(self._rngs), spec.n_actions))

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        n_rep, n_act = len(self._rngs), self._n_act
        coins = np.stack([rng.random(n) for rng in self._rngs])  # (R, n), round order
        hit_rank = np.arange(n_act) % 2  # rank positions 0, 2, 4, … are ranks 1, 3, 5, …
        out = np.empty((n_rep, n, n_act))
        rows = np.arange(n_rep)[:, None]
        for j in range(n):
            order = np.argsort(self._cum, axis=1, kind="stable")
            parity = (coins[:, j] >= 0.5).astype(np.int64)  # 0: ranks 1, 3, … ; 1: ranks 2, 4, …
            loss = np.empty((n_rep, n_act))
            loss[rows, order] = (hit_rank[None, :] == parity[:, None]).astype(np.float64)
            out[:, j] = loss
            self._cum += loss
        return out

    def lower_bounds(self, t: int, player=None) -> dict[tuple[str, float], float]:
        """Declare the exact COMB value ``T/2 − E[min_i L_{t,i}]`` on the mean regret."""
        horizon = self._horizon if self._horizon is not None else int(t)
        values, t_max = comb_values(self._n_act, max(int(horizon), int(t)))
        return {("regret", math.nan): float(values[min(int(t), t_max)])}

    def exact_values(self, n_actions: int, horizon: int) -> frozenset[str]:
        """``{"regret"}`` when the dynamic program reaches T (:func:`comb_values`), else none.

        Up to that round the declared value is every non-anticipating player's expected regret;
        past it, the value at the program's last round is declared, a lower bound only.

        Examples
        --------
        >>> sorted(Comb().exact_values(3, 400)), sorted(Comb().exact_values(5, 400))
        (['regret'], [])
        """
        _, t_max = comb_values(int(n_actions), int(horizon))
        return frozenset({"regret"}) if t_max >= int(horizon) else frozenset()

    @classmethod
    def _unit_test_params(cls):
        yield {}


# ----------------------------------------------------------------------------------------------
# two-phase construction against a fixed learning rate


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


class AntiHedge(ObliviousAdversary):
    """Two-phase construction that makes fixed-η Hedge pay nearly ``ln N/η + ηT/8``.

    Phase 1 (rounds ``1..T₁``): experts 0 and 1 get loss 0, all others 1. Phase 2: the FTL
    killer on experts 0 and 1 (``(½, 0)``, then ``(0, 1)`` and ``(1, 0)`` alternately), all
    others loss 1.

    Parameters
    ----------
    eta : float
        The learning rate η > 0 the construction targets.
    phase1 : int, optional
        T₁ ≥ 0; default ``⌈3 ln N/η⌉``, long enough for Hedge to concentrate on experts 0, 1.

    Notes
    -----
    Against Hedge with rate η, phase 1 costs ≈ ``ln(N/2)/η`` (while Hedge moves its mass to the
    two good experts) and phase 2 ≈ ``T(σ(η/2) − ½) ≈ ηT/8`` (σ the logistic function), so the
    forced regret is ≈ ``ln(N/2)/η + T(σ(η/2) − ½)`` (:meth:`prediction`; simulated: T = 10⁴,
    N = 10, η = 0.05 forces 94.4 against the bound 108.6).

    ``lower_bounds`` declares, on ``("regret", nan)``, a **rigorous lower bound on the regret of
    fixed-η Hedge with this η only** (other players, other rates: not a bound): phase 1 is
    exact, ``A(t) = Σ_{s<min(t,T₁)} (N−2)e^{−ηs}/(2 + (N−2)e^{−ηs})``, and after ``m = t − T₁ ≥ 1``
    phase-2 rounds Hedge's loss is at least that of two-expert Hedge on the killer (the other
    experts lose 1, above any average), which gives regret ≥ ``A(T₁) + (m − 1)(σ(η/2) − ½) + ¼``.
    The prediction is not used there because it can exceed the true value (94.7 vs the
    simulated 94.4 at T = 10⁴, N = 10, η = 0.05). The construction is deterministic and oblivious.

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", AntiHedge(eta=0.05), n_actions=10, horizon=10000,
    ...           player_params={"eta": 0.05}, checkpoints=[10000],
    ...           metrics={"regret": {}, "lower_bound": {}})
    >>> v = df.set_index("metric").value
    >>> bool(v["lower_bound:regret"] <= v["regret"] <= math.log(10) / 0.05 + 0.05 * 10000 / 8)
    True

    References
    ----------
    Gravin, Peres & Sivan (ICALP 2017), "Tight lower bounds for multiplicative weights
    algorithmic families"; de Rooij et al. (2014).
    """

    parameter_constraints: ClassVar = {
        "eta": [POSITIVE],
        "phase1": [Interval(0, None, integer=True), IsNone()],
    }
    tags = AdversaryTags(oblivious=True)

    def __init__(self, eta: float = 0.1, phase1: int | None = None):
        self.eta = eta
        self.phase1 = phase1

    def resolve_n_actions(self, requested: int | None) -> int:
        return 10 if requested is None else int(requested)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        eta = self.eta
        if spec.n_actions < 2:
            raise ConfigError(self.label(), "n_actions", "needs at least 2 experts")
        if self.phase1 is None:
            t1 = math.ceil(3.0 * math.log(spec.n_actions) / eta)
        else:
            t1 = int(self.phase1)
        self._t1 = t1
        self._eta = float(eta)
        self._n_rep, self._n_act = spec.n_replicates, spec.n_actions

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        t = np.arange(t0, t0 + n)
        out = np.ones((n, self._n_act))
        j = t - self._t1 - 1  # phase-2 round index (0-based), negative in phase 1
        first, odd = j == 0, (j > 0) & (j % 2 == 1)
        even = (j > 0) & (j % 2 == 0)
        out[j < 0, 0], out[j < 0, 1] = 0.0, 0.0
        out[first, 0], out[first, 1] = 0.5, 0.0
        out[odd, 0], out[odd, 1] = 0.0, 1.0
        out[even, 0], out[even, 1] = 1.0, 0.0
        return np.broadcast_to(out, (self._n_rep, n, self._n_act)).copy()

    def phase1_length(self) -> int:
        """Return T₁ (after reset)."""
        return self._t1

    def lower_bounds(self, t: int, player=None) -> dict[tuple[str, float], float]:
        """Declare the rigorous bound of the Notes, for fixed-η Hedge with this η only.

        It is a lower bound on that player's regret, not on every player's, so nothing is declared
        against any other player (or when the player is unknown). The player is recognized by its
        registry name and parameters (a subclass of Hedge has a name of its own), so this module
        does not depend on the player's.
        """
        if player is None or type(player).registry_name() != "hedge":
            return {}
        eta = player.get_params().get("eta")
        if isinstance(eta, str) or eta is None or float(eta) != float(self._eta):
            return {}
        eta, n_bad, t = self._eta, self._n_act - 2, int(t)
        s = np.arange(min(t, self._t1), dtype=np.float64)
        w_bad = n_bad * np.exp(-eta * s)
        value = float((w_bad / (2.0 + w_bad)).sum())
        m = t - self._t1
        if m >= 1:
            value += (m - 1) * (_sigmoid(eta / 2) - 0.5) + 0.25
        return {("regret", math.nan): value}

    def prediction(self, t: int) -> float:
        """Return the approximate forced regret ``ln(N/2)/η + t(σ(η/2) − ½)`` (see the class)."""
        eta = self._eta
        return math.log(self._n_act / 2) / eta + t * (_sigmoid(eta / 2) - 0.5)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"eta": 0.5, "phase1": 5}


# ----------------------------------------------------------------------------------------------
# planted fair coins


def _draw_other(rng: np.random.Generator, n: int, avoid: int) -> int:
    """A uniform expert index different from ``avoid``."""
    return (avoid + int(rng.integers(1, n))) % n


class PlantedBlocks(MeanDrivenBernoulli):
    """Fair coins in m + 1 blocks, optionally with a planted good expert per block.

    Parameters
    ----------
    n_switches : int
        m ≥ 0: the horizon is cut into m + 1 blocks (needs m < T).
    gap : float
        Δ ∈ [0, ½]: in each block a planted expert (uniform, different from the previous block's)
        has mean ½ − Δ; the others are fair coins. Δ = 0 (default): pure fair coins.
    boundaries : {"even", "random"}
        Evenly spaced blocks, or m distinct block starts drawn uniformly from ``2..T`` per
        replicate (probes the log(T/m) cost of unknown switch times).

    Notes
    -----
    With Δ = 0 every non-anticipating player has expected loss ½ per round, and the comparator
    that plays each block's best expert switches at most m times, so
    ``E[Ĥ_t − L*_m(t)] ≥ Σ_b LB(|b ∩ [1, t]|, N)``, which is ``(m+1)·LB(T/(m+1), N)`` at
    t = T for even blocks (e.g. N = 10, T = 1000, m = 4: 54.35). ``lower_bounds`` declares it on
    ``("shifting_regret", m)``, for the **mean** over replicates (per replicate with random
    boundaries); with Δ > 0 nothing is declared. With planted experts the external regret is
    linear, which separates Hedge from Fixed Share and AdaNormalHedge.TV. Exposes ``means``.

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", PlantedBlocks(n_switches=4), n_actions=10, horizon=1000,
    ...           checkpoints=[1000], metrics={"lower_bound": {}})
    >>> round(float(df.value.iloc[0]), 2)
    54.35

    References
    ----------
    Herbster & Warmuth (1998) (the m-switch comparator).
    """

    parameter_constraints: ClassVar = {
        "n_switches": [Interval(0, None, integer=True)],
        "gap": [Interval(0, 0.5)],
        "boundaries": [OneOf("even", "random")],
    }
    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means"}), needs_horizon=True)

    def __init__(self, n_switches: int = 4, gap: float = 0.0, boundaries: str = "even"):
        self.n_switches = n_switches
        self.gap = gap
        self.boundaries = boundaries

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        n, horizon, m = spec.n_actions, spec.horizon, int(self.n_switches)
        if m >= horizon:
            raise ConfigError(who, "n_switches", f"must be an integer in [0, T) = [0, {horizon})")
        if self.gap > 0 and n < 2:
            raise ConfigError(who, "n_actions", "a planted expert needs at least 2 experts")
        self._edges, self._planted = [], []
        for rng in rngs:
            if self.boundaries == "even":
                starts = np.array([1 + (b * horizon) // (m + 1) for b in range(1, m + 1)])
            else:
                starts = np.sort(rng.choice(np.arange(2, horizon + 1), size=m, replace=False))
            self._edges.append(np.concatenate([[1], starts, [horizon + 1]]).astype(np.int64))
            planted = [int(rng.integers(n))]
            for _ in range(m):
                planted.append(_draw_other(rng, n, planted[-1]) if n > 1 else 0)
            self._planted.append(np.array(planted))
        self._rngs = list(rngs)
        self._n_act = n

    def _mean_block(self, t0: int, n: int) -> np.ndarray:
        out = np.full((len(self._rngs), n, self._n_act), 0.5)
        if self.gap > 0:
            t = np.arange(t0, t0 + n)
            for r in range(len(self._rngs)):
                block = np.searchsorted(self._edges[r], t, side="right") - 1
                out[r, np.arange(n), self._planted[r][block]] = 0.5 - self.gap
        return out

    def lower_bounds(self, t: int, player=None) -> dict[tuple[str, float], np.ndarray]:
        """Declare ``Σ_b LB(|b ∩ [1, t]|, N)`` on the mean m-switch regret (Δ = 0 only)."""
        if self.gap > 0:
            return {}
        t = int(t)
        values = np.empty(len(self._rngs))
        for r, edges in enumerate(self._edges):
            lengths = np.clip(np.minimum(edges[1:], t + 1) - edges[:-1], 0, None)
            values[r] = sum(fair_coin_lower_bound(int(v), self._n_act) for v in lengths)
        return {("shifting_regret", float(self.n_switches)): values}

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"n_switches": 2, "gap": 0.3, "boundaries": "random"}


WINDOW_MODES = ("coins", "switch")


class PlantedWindows(MeanDrivenBernoulli):
    """Windows of length τ planted after lead-in phases in which one expert is perfect.

    The horizon is cut into ``n_windows`` equal segments; each ends (or, with
    ``placement="random"``, contains) a window of τ rounds, and the rest of the segment is a
    lead-in where expert A (uniform per replicate, the same in every segment) has loss 0 and all
    others loss 1, so the learner concentrates on A.

    Parameters
    ----------
    tau : int
        Window length τ ≥ 1 (each segment needs at least τ + 1 rounds).
    n_windows : int
        Number of disjoint windows (≥ 1).
    mode : {"coins", "switch"}
        Inside a window: i.i.d. fair coins for every expert ("coins"), or A gets loss 1 and a
        fresh expert B (uniform among the others, per window) gets 0, the rest 1 ("switch").
    placement : {"end", "random"}
        The window ends its segment, or starts uniformly at random leaving at least one lead-in
        round (per replicate and window).

    Notes
    -----
    * ``coins``: on the window every non-anticipating player has expected loss ½ per round, so
      the regret on the window alone has mean ``LB(τ, N)`` and the strongly adaptive regret
      ``SA(τ)`` (max over intervals of length ≤ τ) has mean at least ``LB(τ, N)``
      (planting fair coins on the window). ``lower_bounds`` declares, on ``("sa_regret", τ)``
      and for the **mean** over replicates, ``LB(min(τ, t − s₁ + 1), N)`` (0 before the first
      window starts at s₁; the partial window is an interval too).
    * ``switch``: interval regret ≈ τ for players that cannot forget (Hedge with a fixed small η),
      ``O(sqrt(τ log T))`` for strongly adaptive ones (Daniely et al. 2015); nothing is declared.

    Many windows show the ``sqrt(τ ln(T/τ))`` growth of the maximum. Losses use one
    uniform per expert and round (in round order), also outside the windows. Exposes ``means``.

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", PlantedWindows(tau=100), n_actions=10, horizon=1000,
    ...           checkpoints=[1000], metrics={"lower_bound": {}})
    >>> round(float(df.value.iloc[0]), 3)
    7.678

    References
    ----------
    Daniely, Gonen & Shalev-Shwartz (ICML 2015), "Strongly adaptive online learning".
    """

    parameter_constraints: ClassVar = {
        "tau": [Interval(1, None, integer=True)],
        "n_windows": [Interval(1, None, integer=True)],
        "mode": [OneOf(*WINDOW_MODES)],
        "placement": [OneOf("end", "random")],
    }
    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means"}), needs_horizon=True)

    def __init__(
        self, tau: int = 100, n_windows: int = 1, mode: str = "coins", placement: str = "end"
    ):
        self.tau = tau
        self.n_windows = n_windows
        self.mode = mode
        self.placement = placement

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        n, horizon, tau, k = spec.n_actions, spec.horizon, int(self.tau), int(self.n_windows)
        if n < 2:
            raise ConfigError(who, "n_actions", "needs at least 2 experts")
        edges = np.array([1 + (w * horizon) // k for w in range(k + 1)], dtype=np.int64)
        if np.diff(edges).min() < tau + 1:
            raise ConfigError(
                who,
                "tau",
                f"each of the {k} segments of T = {horizon} rounds needs at least τ + 1 = "
                f"{tau + 1} rounds (a lead-in round and the window)",
            )
        self._starts, self._a, self._b = [], [], []
        for rng in rngs:
            a = int(rng.integers(n))
            if self.placement == "end":
                starts = edges[1:] - tau
            else:
                starts = np.array(
                    [int(rng.integers(edges[w] + 1, edges[w + 1] - tau + 1)) for w in range(k)]
                )
            self._a.append(a)
            self._b.append(np.array([_draw_other(rng, n, a) for _ in range(k)]))
            self._starts.append(np.asarray(starts, dtype=np.int64))
        self._rngs = list(rngs)
        self._n_act = n

    def window_starts(self) -> list[np.ndarray]:
        """Return the first round of each window, one array per replicate (after reset)."""
        return [s.copy() for s in self._starts]

    def _mean_block(self, t0: int, n: int) -> np.ndarray:
        t = np.arange(t0, t0 + n)
        out = np.ones((len(self._rngs), n, self._n_act))
        rows = np.arange(n)
        for r in range(len(self._rngs)):
            starts = self._starts[r]
            w = np.searchsorted(starts, t, side="right") - 1  # the last window started by t
            inside = (w >= 0) & (t < starts[np.maximum(w, 0)] + self.tau)
            out[r, ~inside, self._a[r]] = 0.0
            if self.mode == "coins":
                out[r, inside] = 0.5
            else:
                out[r, rows[inside], self._b[r][w[inside]]] = 0.0
        return out

    def lower_bounds(self, t: int, player=None) -> dict[tuple[str, float], np.ndarray]:
        """Declare ``LB(min(τ, t − s₁ + 1), N)`` on the mean SA(τ) regret ("coins" only)."""
        if self.mode != "coins":
            return {}
        t = int(t)
        lengths = [min(self.tau, max(0, t - int(s[0]) + 1)) for s in self._starts]
        values = np.array([fair_coin_lower_bound(v, self._n_act) for v in lengths])
        return {("sa_regret", float(self.tau)): values}

    @classmethod
    def _unit_test_params(cls):
        yield {"tau": 5}
        yield {"tau": 4, "n_windows": 3, "mode": "switch", "placement": "random"}
