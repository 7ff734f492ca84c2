"""Stochastic and intermediate-regime adversaries for bandits: Gaussian arms, stochastically
constrained, corrupted, rotting, and a trap for optimistic index policies.

They are oblivious experts adversaries (:class:`arena.experts.components.ObliviousAdversary`), so
they also play the bandit protocol unchanged, with the same losses for the same seed (common
random numbers). Each exposes the oracle ``means`` (R, n, N) of its per-round mean losses, so
``pseudo_regret`` and ``arm_pseudo_regret`` are exact. Every loss lies in [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.adversaries.stochastic import EXPERT_INDEX, MeanDrivenBernoulli, _default_means
from arena.errors import ConfigError
from arena.experts.components import ObliviousAdversary
from arena.params import (
    NON_NEGATIVE,
    POSITIVE,
    InstanceOf,
    Interval,
    IsNone,
    ListOf,
    OneOf,
    per_expert,
)
from arena.spec import AdversaryTags, GameSpec


def clipped_normal_mean(loc: np.ndarray, scale: float) -> np.ndarray:
    """Return ``E[clip(X, 0, 1)]`` for ``X ~ N(loc, scale²)``, exactly (``scale > 0``).

    With ``a = −loc/σ``, ``b = (1 − loc)/σ``:
    ``E = loc(Φ(b) − Φ(a)) + σ(φ(a) − φ(b)) + 1 − Φ(b)`` (the mass above 1 is moved to 1, the
    mass below 0 to 0). ``1 − Φ(b)`` is evaluated as ``Φ(−b)`` to keep its tail accurate.

    Examples
    --------
    >>> float(clipped_normal_mean(np.array([0.5]), 0.2)[0])
    0.5
    >>> bool(clipped_normal_mean(np.array([0.0]), 1.0)[0] > 0.3)
    True
    """
    loc = np.asarray(loc, dtype=np.float64)
    a, b = -loc / scale, (1.0 - loc) / scale
    from scipy.stats import norm  # scipy.stats costs ~1 s to import: only where used

    inside = norm.cdf(b) - norm.cdf(a)
    return loc * inside + scale * (norm.pdf(a) - norm.pdf(b)) + norm.cdf(-b)


class GaussianArms(ObliviousAdversary):
    """Gaussian losses clipped to [0, 1]: ``l_{t,i} = clip(m_i + σ Z_{t,i}, 0, 1)``, i.i.d.

    Parameters
    ----------
    locations : list of float, optional
        Per-arm Gaussian locations ``m_i`` in [0, 1] (before clipping); when given, N is their
        number. Default: 0.5 for every arm except ``best``.
    gap : float
        With default locations, the best arm's location is ``0.5 − gap`` (0 ≤ gap ≤ 0.5).
    best : int
        Index of the best arm with default locations.
    scale : float
        Standard deviation σ > 0 of the Gaussian noise.

    Notes
    -----
    The Gaussian stochastic bandit (Lattimore & Szepesvári 2020, Chapters 5 and 7), made bounded by
    clipping so that the losses stay in the declared range [0, 1]. The oracle ``means`` reports
    the mean of the **clipped** law, computed exactly (:func:`clipped_normal_mean`), not the
    location ``m_i``: clipping moves a location below ½ up and one above ½ down, so the gap in
    means is slightly smaller than ``gap`` (equal when σ is small against the distance to the
    ends). Clipping keeps the law σ-sub-Gaussian and the ordering of the arms (the clipped mean is
    increasing in the location). It forces what every stochastic instance with gaps forces:
    ``Ω(Σ_i log T / Δ_i)`` pseudo-regret for consistent players (Lai & Robbins 1985), while
    Gaussian-tuned players (``thompson`` with the Gaussian prior) meet their model.
    Losses are drawn per replicate with ``rng.standard_normal((n, N))``, in round order, so any
    split of the rounds into blocks gives the same losses.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ucb1", GaussianArms(gap=0.3, scale=0.1), n_actions=3, horizon=500,
    ...           metrics={"pseudo_regret": {}})
    >>> bool(df.value.iloc[-1] < 100)
    True

    References
    ----------
    Lattimore & Szepesvári (2020), *Bandit Algorithms*, Chapters 5 and 7; Lai & Robbins (1985).
    """

    parameter_constraints: ClassVar = {
        "locations": [ListOf(Interval(0, 1)), IsNone()],
        "gap": [Interval(0, 0.5)],
        "best": [EXPERT_INDEX],
        "scale": [POSITIVE],
    }
    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means"}))

    def __init__(
        self,
        locations: list[float] | None = None,
        gap: float = 0.1,
        best: int = 0,
        scale: float = 0.1,
    ):
        self.locations = locations
        self.gap = gap
        self.best = best
        self.scale = scale

    def declared_range(self) -> tuple[float, float]:
        return (0.0, 1.0)

    def resolve_n_actions(self, requested: int | None) -> int:
        from arena.adversaries.stochastic import _n_from_list

        return _n_from_list(self, "locations", requested)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        loc = per_expert(self, "locations", spec.n_actions)
        self._loc = _default_means(self, spec.n_actions) if loc is None else loc
        self._mu = clipped_normal_mean(self._loc, float(self.scale))
        self._rngs = list(rngs)
        self._n_act = spec.n_actions

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        out = np.empty((len(self._rngs), n, self._n_act))
        for r, rng in enumerate(self._rngs):
            out[r] = self._loc + self.scale * rng.standard_normal((n, self._n_act))
        return np.clip(out, 0.0, 1.0, out=out)

    def oracle(self, key: str, t0: int, n: int) -> np.ndarray:
        if key != "means":
            return super().oracle(key, t0, n)
        return np.broadcast_to(self._mu, (len(self._rngs), n, self._n_act))

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"locations": [0.0, 0.3, 1.0], "scale": 0.5}


# ----------------------------------------------------------------------------------------------
# stochastically constrained adversarial regime


def phase_starts(growth: float, until: int) -> np.ndarray:
    """First rounds of the phases ``1, 1 + L_0, 1 + L_0 + L_1, ...`` that start at or before
    ``until``, with ``L_0 = 1`` and ``L_{k+1} = ⌈growth · L_k⌉`` (geometric growth, ≥ 1 more
    round per phase).

    Examples
    --------
    >>> phase_starts(1.6, 40).tolist()  # lengths 1, 2, 4, 7, 12, 20
    [1, 2, 4, 8, 15, 27]
    """
    starts, start, length = [], 1, 1
    while start <= until:
        starts.append(start)
        start += length
        length = max(length + 1, math.ceil(growth * length - 1e-9))
    return np.array(starts, dtype=np.int64)


class StochasticallyConstrained(MeanDrivenBernoulli):
    """Bernoulli losses whose gaps are fixed while the common level jumps at geometric phases.

    ``μ_{t,i} = λ_t + Δ_i`` with ``Δ_{i*} = 0`` and ``Δ_i = gap`` otherwise; the level ``λ_t``
    is ``low`` in even phases and ``high`` in odd ones, phase k having length ``L_k``
    (``L_0 = 1``, ``L_{k+1} = ⌈growth · L_k⌉``, :func:`phase_starts`), and
    ``l_{t,i} ~ Bernoulli(μ_{t,i})`` independently.

    Parameters
    ----------
    gap : float
        Δ ∈ (0, 1): every suboptimal arm's mean loss exceeds the best arm's by exactly Δ in every
        round.
    best : int
        Index ``i*`` of the best arm.
    growth : float
        Phase growth factor g > 1.
    low : float
        The best arm's mean loss in even phases (the first phase is even).
    high : float, optional
        The best arm's mean loss in odd phases; default ``1 − gap`` (needs ``high + gap ≤ 1``).

    Notes
    -----
    The stochastically constrained adversarial regime (Wei & Luo 2018; Zimmert & Seldin 2021,
    §2 and §3): ``E[l_{t,i} − l_{t,i*}] = Δ_i`` in every round whatever the drift of the common
    level, so the pseudo-regret is ``Σ_t Σ_i p_{t,i} Δ_i`` exactly as in a stochastic bandit
    and Tsallis-INF keeps its ``O(Σ_i log T / Δ_i)`` bound (Zimmert & Seldin 2021, Theorem 2,
    stated for the adversarial regime with a self-bounding constraint, which contains this
    one), while index policies that average observations taken at different levels are fooled. The
    defaults are the construction of Zimmert & Seldin's experiments (stated in rewards there:
    the best arm's mean reward alternates between 1 and Δ, the others' between 1 − Δ and 0, with
    phases growing by the factor 1.6, where UCB1 and Thompson sampling suffer almost linear
    regret): ``low = 0``, ``high = 1 − Δ``, ``growth = 1.6``. We could not read the paper's
    text here, so the recursion ``L_{k+1} = ⌈1.6 L_k⌉`` (rather than ``⌊1.6^k⌋``) and the
    low-loss first phase follow a public reproduction of that experiment; both are parameters of
    the family, not of the regime. Exposes ``means``; the means depend on t only, never on the
    replicate, and the Bernoulli uniforms are drawn in round order.

    Measured (K = 2, T = 10⁴, 20 replicates, defaults, seed 0; mean pseudo-regret):
    ``ucb1`` 89, ``thompson`` 86, ``exp3`` 99, ``tsallis_inf`` 24; with ``growth = 2``:
    ``ucb1`` 243, ``thompson`` 212, ``tsallis_inf`` 33. At this horizon the index policies pay
    3 to 10 times Tsallis-INF, not yet the "almost linear" regret that Zimmert & Seldin report
    at much longer horizons (``test_stochastically_constrained_separates_ucb``).

    Examples
    --------
    >>> from arena import play
    >>> df = play("tsallis_inf", StochasticallyConstrained(gap=0.2), n_actions=2,
    ...           horizon=500, metrics={"pseudo_regret": {}})
    >>> bool(df.value.iloc[-1] < 60)
    True

    References
    ----------
    Zimmert & Seldin (2021), JMLR 22(28), §2 (stochastically constrained adversarial regime),
    Theorem 2, and the experiments' stochastically constrained environment; Wei & Luo (2018).
    """

    parameter_constraints: ClassVar = {
        "gap": [Interval(0, 1, closed="neither")],
        "best": [EXPERT_INDEX],
        "growth": [Interval(1, None, closed="neither")],
        "low": [Interval(0, 1)],
        "high": [Interval(0, 1), IsNone()],
    }
    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means"}))

    def __init__(
        self,
        gap: float = 0.1,
        best: int = 0,
        growth: float = 1.6,
        low: float = 0.0,
        high: float | None = None,
    ):
        self.gap = gap
        self.best = best
        self.growth = growth
        self.low = low
        self.high = high

    def declared_range(self) -> tuple[float, float]:
        return (0.0, 1.0)

    def _levels(self) -> tuple[float, float]:
        high = 1.0 - self.gap if self.high is None else float(self.high)
        return float(self.low), high

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who, n = self.label(), spec.n_actions
        if int(self.best) >= n:
            raise ConfigError(who, "best", f"must be an arm index in [0, {n}), got {self.best!r}")
        low, high = self._levels()
        for name, level in (("low", low), ("high", high)):
            if level + self.gap > 1.0 + 1e-12:  # two parameters: no declaration says it
                raise ConfigError(who, name, f"need {name} + gap ≤ 1, got {level} + {self.gap}")
        self._gaps = np.full(n, float(self.gap))
        self._gaps[int(self.best)] = 0.0
        self._rngs = list(rngs)
        self._n_act = n
        self._starts = phase_starts(float(self.growth), 1)

    def level(self, t0: int, n: int) -> np.ndarray:
        """The common level ``λ_t`` of rounds ``t0 .. t0+n−1``, shape (n,)."""
        if n and self._starts[-1] <= t0 + n - 1:
            self._starts = phase_starts(float(self.growth), 2 * (t0 + n))
        t = np.arange(t0, t0 + n)
        phase = np.searchsorted(self._starts, t, side="right") - 1
        low, high = self._levels()
        return np.where(phase % 2 == 0, low, high)

    def _mean_block(self, t0: int, n: int) -> np.ndarray:
        mu = self.level(t0, n)[:, None] + self._gaps[None, :]
        return np.repeat(np.minimum(mu, 1.0)[None], len(self._rngs), axis=0)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"gap": 0.3, "best": 1, "growth": 2.0, "low": 0.2, "high": 0.6}


# ----------------------------------------------------------------------------------------------
# stochastic bandits with adversarial corruptions

CORRUPTION_STRATEGIES = ("early", "periodic", "random")


@njit(cache=True, nogil=True)
def _corrupt_block(losses, eligible, best, decoy, budget, spent):
    """Corrupt ``losses`` (R, n, N) in place, in round order, while the budget lasts.

    On an eligible round the corrupted vector sets the best arm's loss to 1 and the decoy's to
    0; its cost is ``max_i |l̃_i − l_i|``, paid from ``budget − spent[r]`` only if it fits
    (otherwise the round stays clean). ``spent`` (R,) carries over between blocks.
    """
    n_rep, n, _ = losses.shape
    for r in range(n_rep):
        for j in range(n):
            if not eligible[r, j]:
                continue
            cost = max(abs(1.0 - losses[r, j, best]), abs(losses[r, j, decoy]))
            if spent[r] + cost <= budget:
                losses[r, j, best] = 1.0
                losses[r, j, decoy] = 0.0
                spent[r] += cost


class Corrupted(ObliviousAdversary):
    """Bernoulli stochastic bandit with a gap, corrupted by an adversary of total budget C.

    The clean losses are ``l_{t,i} = 1{U_{t,i} < μ_i}`` (the losses of :class:`Bernoulli` with
    the same means and seed); on corrupted rounds the adversary makes the best arm look worst
    and a decoy arm look best: ``l̃_{t,i*} = 1`` and ``l̃_{t,d} = 0``, other arms unchanged, so
    long as the total corruption ``Σ_t max_i |l̃_{t,i} − l_{t,i}| ≤ C`` (a round whose cost does
    not fit in what is left stays clean).

    Parameters
    ----------
    means : list of float, optional
        Per-arm means μ in [0, 1] (when given, N is their number). Default: 0.5 everywhere except
        ``best``, with ``0.5 − gap``.
    gap : float
        With default means, the best arm's advantage (0 ≤ gap ≤ 0.5).
    best : int
        Index ``i*`` of the arm the corruption hits (the best one, with default means).
    decoy : int, optional
        The arm the corruption favours; default the arm after ``best`` (``(best + 1) mod N``).
    budget : float
        Total corruption budget C ≥ 0.
    strategy : {"early", "periodic", "random"}
        Which rounds are corrupted: ``early`` every round from the first on, until the budget is
        spent (the attack of Lykouris et al. 2018 that hurts most: the player locks onto the
        decoy before the clean data arrive); ``periodic`` every ``period``-th round; ``random``
        each round independently with probability ``rate`` (spread over time).
    period : int
        ``periodic``: corrupt rounds ``period, 2·period, ...``.
    rate : float
        ``random``: probability that a round is attacked.

    Notes
    -----
    Stochastic bandits with adversarial corruptions (Lykouris, Mirrokni & Paes Leme 2018) in the
    form of Zimmert & Seldin (2021, §2 and Theorem 2: corrupted stochastic bandits satisfy their
    self-bounding constraint): the corruption is measured by
    ``C = Σ_t max_i |l̃_{t,i} − l_{t,i}|``, and Tsallis-INF's pseudo-regret is
    ``O(Σ_i log T / Δ_i + sqrt(C Σ_i log T / Δ_i))``. The oracle ``means`` reports the
    **uncorrupted** means μ: pseudo-regret is measured against the stochastic instance, as in the
    corruption literature. The Bernoulli uniforms are the stream's, in round order, exactly as
    :class:`Bernoulli` draws them (common random numbers with the clean instance: the corruption
    is the only difference); the ``random`` strategy's coin flips come from a child
    generator spawned at reset from the replicate's stream (``Generator.spawn``, which draws
    nothing from it). The budget spent so far, per replicate, is the attribute ``spent``.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ucb1", Corrupted(gap=0.3, budget=50.0), n_actions=2, horizon=1000,
    ...           metrics={"pseudo_regret": {}})
    >>> bool(df.value.iloc[-1] > 0)
    True

    References
    ----------
    Lykouris, Mirrokni & Paes Leme (2018), STOC, §2; Zimmert & Seldin (2021), JMLR 22(28),
    §2 and Theorem 2.
    """

    parameter_constraints: ClassVar = {
        "means": [ListOf(Interval(0, 1)), IsNone()],
        "gap": [Interval(0, 0.5)],
        "best": [EXPERT_INDEX],
        "decoy": [EXPERT_INDEX, IsNone()],
        "budget": [NON_NEGATIVE],
        "strategy": [OneOf(*CORRUPTION_STRATEGIES)],
        "period": [Interval(1, None, integer=True)],
        "rate": [Interval(0, 1)],
    }
    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means"}))

    def __init__(
        self,
        means: list[float] | None = None,
        gap: float = 0.1,
        best: int = 0,
        decoy: int | None = None,
        budget: float = 100.0,
        strategy: str = "early",
        period: int = 10,
        rate: float = 0.1,
    ):
        self.means = means
        self.gap = gap
        self.best = best
        self.decoy = decoy
        self.budget = budget
        self.strategy = strategy
        self.period = period
        self.rate = rate

    def declared_range(self) -> tuple[float, float]:
        return (0.0, 1.0)

    def resolve_n_actions(self, requested: int | None) -> int:
        from arena.adversaries.stochastic import _n_from_list

        return _n_from_list(self, "means", requested)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who, n = self.label(), spec.n_actions
        if n < 2:
            raise ConfigError(who, "n_actions", "needs at least 2 arms")
        mu = per_expert(self, "means", n)
        self._mu = _default_means(self, n) if mu is None else mu
        self._best = int(self.best)
        if self._best >= n:
            raise ConfigError(who, "best", f"must be an arm index in [0, {n}), got {self.best!r}")
        self._decoy = (self._best + 1) % n if self.decoy is None else int(self.decoy)
        if self._decoy >= n or self._decoy == self._best:
            raise ConfigError(who, "decoy", f"must be an arm index in [0, {n}) other than best")
        self._rngs = list(rngs)
        self._n_act = n
        self.spent = np.zeros(len(self._rngs))
        # spawned children leave the replicate's stream untouched: the loss uniforms stay
        # those of Bernoulli with the same seed
        self._coin_rngs = [rng.spawn(1)[0] for rng in rngs] if self.strategy == "random" else []

    def _eligible(self, t0: int, n: int) -> np.ndarray:
        n_rep = len(self._rngs)
        if self.strategy == "early":
            return np.ones((n_rep, n), dtype=np.bool_)
        if self.strategy == "periodic":
            t = np.arange(t0, t0 + n)
            return np.broadcast_to(t % int(self.period) == 0, (n_rep, n)).copy()
        return np.stack([g.random(n) < self.rate for g in self._coin_rngs])

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        out = np.empty((len(self._rngs), n, self._n_act))
        for r, rng in enumerate(self._rngs):
            rng.random(out=out[r])  # the uniforms of Bernoulli, in round order
        out = (out < self._mu).astype(np.float64)
        eligible = self._eligible(t0, n)
        _corrupt_block(out, eligible, self._best, self._decoy, float(self.budget), self.spent)
        return out

    def oracle(self, key: str, t0: int, n: int) -> np.ndarray:
        if key != "means":
            return super().oracle(key, t0, n)
        return np.broadcast_to(self._mu, (len(self._rngs), n, self._n_act))

    @classmethod
    def _unit_test_params(cls):
        yield {"budget": 5.0}
        yield {"budget": 3.0, "strategy": "periodic", "period": 3, "best": 1, "decoy": 0}
        yield {"budget": 4.0, "strategy": "random", "rate": 0.3}


# ----------------------------------------------------------------------------------------------
# rotting bandits (time-dependent, oblivious)


class Rotting(MeanDrivenBernoulli):
    """Bernoulli losses whose mean rewards decay as a power of time (restless rotting bandit).

    ``μ_{t,i} = 1 − c_i t^{−θ_i}`` (mean reward ``c_i t^{−θ_i}``, non-increasing in t) and
    ``l_{t,i} ~ Bernoulli(μ_{t,i})``.

    Parameters
    ----------
    initial : list of float, optional
        Initial mean rewards ``c_i`` ∈ [0, 1] (when given, N is their number). Default: evenly
        spaced from 0.9 (arm 0) down to 0.5 (arm N − 1).
    decay : list of float, optional
        Decay exponents ``θ_i ≥ 0`` (one per arm). Default: evenly spaced from 0.5 (arm 0) down
        to 0 (arm N − 1: a stationary arm).

    Notes
    -----
    Rotting bandits (Levine, Crammer & Mannor 2017) let arms' rewards decay; in the *restless*
    (time-dependent) variant studied by Seznec et al. (2020) the decay depends on the round,
    not on the arm's own pulls, so the adversary is oblivious. The power law is the
    "asymptotically vanishing" shape of Levine et al.'s parametric experiments. With the
    defaults the arm that is best early (high ``c``, fast decay) is soon overtaken by slowly
    decaying arms: the best arm changes over time, which tests dynamic regret and forgetting,
    while the best fixed arm in hindsight is the stationary one. Exposes ``means``.

    Examples
    --------
    >>> from arena import play
    >>> df = play("exp3", Rotting(), n_actions=3, horizon=300,
    ...           metrics={"pseudo_regret": {}})
    >>> int(df.t.max())
    300

    References
    ----------
    Levine, Crammer & Mannor (2017), NeurIPS; Seznec, Menard, Lazaric & Valko (2020), AISTATS.
    """

    parameter_constraints: ClassVar = {
        "initial": [ListOf(Interval(0, 1)), IsNone()],
        "decay": [ListOf(NON_NEGATIVE), IsNone()],
    }
    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means"}))

    def __init__(self, initial: list[float] | None = None, decay: list[float] | None = None):
        self.initial = initial
        self.decay = decay

    def declared_range(self) -> tuple[float, float]:
        return (0.0, 1.0)

    def resolve_n_actions(self, requested: int | None) -> int:
        from arena.adversaries.stochastic import _n_from_list

        for name in ("initial", "decay"):
            if getattr(self, name) is not None:
                return _n_from_list(self, name, requested)
        return 10 if requested is None else int(requested)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        n = spec.n_actions
        c, theta = per_expert(self, "initial", n), per_expert(self, "decay", n)
        frac = np.linspace(0.0, 1.0, n) if n > 1 else np.zeros(1)
        self._c = 0.9 - 0.4 * frac if c is None else c
        self._theta = 0.5 * (1.0 - frac) if theta is None else theta
        self._rngs = list(rngs)
        self._n_act = n

    def _mean_block(self, t0: int, n: int) -> np.ndarray:
        t = np.arange(t0, t0 + n, dtype=np.float64)
        mu = 1.0 - self._c[None, :] * t[:, None] ** (-self._theta[None, :])
        return np.repeat(mu[None], len(self._rngs), axis=0)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"initial": [1.0, 0.3], "decay": [2.0, 0.0]}


# ----------------------------------------------------------------------------------------------
# a trap for deterministic (optimistic index) bandit policies


class UCBTrap(ObliviousAdversary):
    """Loss 1 on the arm a simulated copy of a deterministic bandit player will pull, 0 elsewhere.

    The adversary runs its own copy of ``target`` (default ``ucb1``) on the losses it emits and,
    each round, puts loss 1 on the arm that copy commits to and 0 on every other arm.

    Parameters
    ----------
    target : str
        Registered bandit player, with its default parameters, that the trap simulates; it must be
        deterministic (tag ``randomized=False``: ``ucb1``, ``kl_ucb``, ``moss``, ...).

    Notes
    -----
    A deterministic player's arm at round t is a function of its past observations, so an
    oblivious adversary that knows the algorithm can compute it in advance (the classical reason
    why adversarial bandit algorithms must randomize: Auer, Cesa-Bianchi, Freund & Schapire
    2002, §1; Bubeck & Cesa-Bianchi 2012, §3; Lattimore & Szepesvári 2020, §11.1). Against the
    target itself the losses are those it sees, so it loses every round: loss T, while the best
    arm has loss at most T/K, hence regret ``≥ T(1 − 1/K)`` (exactly ``T − min_i L_{T,i}``).
    The sequence is oblivious (it does not depend on the game's player), so Exp3 and
    Tsallis-INF keep their adversarial ``O(sqrt(KT))`` bounds on it. It is the bandit analogue of
    :class:`arena.adversaries.lower_bound.FTLKiller`. Zimmert & Seldin (2021) show that UCB1 and
    Thompson sampling also fail in a *stochastically constrained* environment (gaps fixed in
    expectation): that is :class:`StochasticallyConstrained`, which also reaches Thompson
    sampling, which no deterministic simulation can trap.

    Measured (K = 2, T = 10⁴, seed 0, 4 replicates; mean regret): ``ucb1`` 5000 (every round
    lost; the arms alternate, so ``min_i L_{T,i} = T/2``), ``exp3`` 9.9 (its declared bound
    ``sqrt(2 T K ln K)`` is 166.5), ``tsallis_inf`` 63 (bound 483) and ``thompson`` 61
    (``test_ucb_trap_separates`` in the tests).

    The means (the oracle ``means``) are the losses themselves: the sequence is deterministic,
    the same in every replicate. It is generated forward only (rounds are asked in order, as the
    arena does) and only the current block is kept, so memory does not grow with T.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ucb1", UCBTrap(), n_actions=2, horizon=100, metrics={"regret": {}})
    >>> float(df.value.iloc[-1])
    50.0

    References
    ----------
    Auer, Cesa-Bianchi, Freund & Schapire (2002), SIAM J. Comput., §1; Auer, Cesa-Bianchi &
    Fischer (2002), Figure 1 (UCB1); Zimmert & Seldin (2021), JMLR 22(28), experiments.
    """

    parameter_constraints: ClassVar = {"target": [InstanceOf(str)]}
    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means"}))

    def __init__(self, target: str = "ucb1"):
        self.target = target

    def declared_range(self) -> tuple[float, float]:
        return (0.0, 1.0)

    def resolve_n_actions(self, requested: int | None) -> int:
        return 2 if requested is None else int(requested)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        from arena import registry

        who = self.label()
        try:
            cls = registry.load("player", self.target)
        except Exception as exc:  # unknown names come with close matches from the registry
            raise ConfigError(who, "target", str(exc)) from exc
        tags = cls.tags
        if "bandit" not in tags.protocols or tags.randomized:
            raise ConfigError(
                who, "target", f"{self.target!r} must be a deterministic bandit player"
            )
        self._player = cls()
        sim = GameSpec("bandit", spec.n_actions, spec.horizon, (0.0, 1.0), n_replicates=1)
        self._player.reset(sim, [np.random.default_rng(0)])
        self._n_rep = len(rngs)
        self._n_act = spec.n_actions
        self._next_t = 1
        self._block_t0, self._block = 1, np.empty((0, spec.n_actions))

    def _step(self) -> np.ndarray:
        p = np.asarray(self._player.predict(), dtype=np.float64)
        arm = int(np.argmax(p[0]))
        loss = np.zeros(self._n_act)
        loss[arm] = 1.0
        self._player.update(np.array([arm]), np.array([1.0]), p)
        self._next_t += 1
        return loss

    def _rows(self, t0: int, n: int) -> np.ndarray:
        end = t0 + n
        cached_end = self._block_t0 + self._block.shape[0]
        if t0 >= self._block_t0 and end <= cached_end:
            return self._block[t0 - self._block_t0 : end - self._block_t0]
        if t0 < self._block_t0 or t0 > cached_end or cached_end != self._next_t:
            raise ValueError(
                f"ucb_trap: rounds {t0}..{end - 1} asked out of order (the sequence is "
                "generated forward only; ask for rounds in order)"
            )
        parts = [self._block[t0 - self._block_t0 :]]
        parts += [self._step()[None] for _ in range(end - self._next_t)]
        self._block_t0, self._block = t0, np.concatenate(parts, axis=0)
        return self._block

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        return np.repeat(self._rows(t0, n)[None], self._n_rep, axis=0)

    def oracle(self, key: str, t0: int, n: int) -> np.ndarray:
        if key != "means":
            return super().oracle(key, t0, n)
        return self.losses_block(t0, n)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"target": "moss"}
