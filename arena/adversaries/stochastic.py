"""Stochastic adversaries: independent Bernoulli or Beta losses, fixed, piecewise or drifting means.

Also the exact fair-coin lower bound ``LB(T, N)`` (:func:`fair_coin_lower_bound`) shared with the
planted lower-bound constructions of :mod:`arena.adversaries.lower_bound`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
from numba import njit
from scipy.special import bdtr, bdtrc

from arena.errors import ConfigError
from arena.experts.components import ObliviousAdversary, zero_one_losses
from arena.params import NON_NEGATIVE, POSITIVE, Interval, IsNone, ListOf, OneOf, per_expert
from arena.spec import AdversaryTags, GameSpec
from arena.streams import (
    generator_handles,
    jit_disabled,
    pcg64_load,
    pcg64_next,
    pcg64_save,
    pcg64_streams,
    stream,
)


@njit(cache=True, nogil=True)
def _bernoulli_threshold(uniforms, means):
    """Replace each ``U[r, j, i]`` by ``1.0`` if ``U < μ_i`` else ``0.0``, in place.

    One compiled pass; numpy's ``np.less(..., out=float_array)`` casts through a buffer and costs
    about as much as drawing the uniforms.
    """
    n_rep, n, n_act = uniforms.shape
    for r in range(n_rep):
        for j in range(n):
            for i in range(n_act):
                uniforms[r, j, i] = 1.0 if uniforms[r, j, i] < means[i] else 0.0


@njit(cache=True, nogil=True)
def _bernoulli_draw(handles, losses, means):
    """Fill ``losses[r, j, i]`` with ``1.0`` if replicate r's next uniform is below ``μ_i``, else
    ``0.0``, drawing in round order from each replicate's own generator.

    The uniforms are ``Generator.random``'s, bit for bit (:mod:`arena.streams`), and the states
    advance in place, so this equals ``rng.random(out=losses[r])`` followed by the threshold. One
    call per chunk replaces R Python calls that hold the GIL (what limits a game split over
    threads) and a second pass over the chunk.
    """
    n_rep, n, n_act = losses.shape
    for r in range(n_rep):
        rng = stream(handles, None, r)
        for j in range(n):
            for i in range(n_act):
                losses[r, j, i] = 1.0 if rng.random() < means[i] else 0.0


@njit(cache=True, nogil=True)
def _bernoulli_draw_pcg64(handles, losses, means):
    """Fill ``losses[r, j, i]`` with ``1.0`` if replicate r's next uniform is below
    ``means[r, j, i]``, else ``0.0``: :func:`_bernoulli_draw` (``means`` a broadcast of μ) and
    :func:`_bernoulli_draw_means` (``means`` the losses array itself, thresholded in place) for
    generators that :func:`arena.streams.pcg64_streams` accepts.

    The same uniforms in the same order, stepped by :func:`arena.streams.pcg64_next` with each
    state in registers and four replicates' generators side by side (their chains are
    independent): 1.43–1.46 ns a uniform against 1.96 through the generators' function pointers
    (64 replicates; the broadcast means cost 2 % against a fixed vector)."""
    n_rep, n, n_act = losses.shape
    r = 0
    while r + 4 <= n_rep:
        a, b = pcg64_load(handles, r), pcg64_load(handles, r + 1)
        c, d = pcg64_load(handles, r + 2), pcg64_load(handles, r + 3)
        for j in range(n):
            for i in range(n_act):
                a, u = pcg64_next(a)
                losses[r, j, i] = 1.0 if u < means[r, j, i] else 0.0
                b, u = pcg64_next(b)
                losses[r + 1, j, i] = 1.0 if u < means[r + 1, j, i] else 0.0
                c, u = pcg64_next(c)
                losses[r + 2, j, i] = 1.0 if u < means[r + 2, j, i] else 0.0
                d, u = pcg64_next(d)
                losses[r + 3, j, i] = 1.0 if u < means[r + 3, j, i] else 0.0
        pcg64_save(handles, r, a)
        pcg64_save(handles, r + 1, b)
        pcg64_save(handles, r + 2, c)
        pcg64_save(handles, r + 3, d)
        r += 4
    while r < n_rep:
        words = pcg64_load(handles, r)
        for j in range(n):
            for i in range(n_act):
                words, u = pcg64_next(words)
                losses[r, j, i] = 1.0 if u < means[r, j, i] else 0.0
        pcg64_save(handles, r, words)
        r += 1


@njit(cache=True, nogil=True)
def _bernoulli_draw_means(handles, means):
    """Replace ``means[r, j, i]`` by ``1.0`` if replicate r's next uniform is below it, else
    ``0.0``, in round order (per-round means: :class:`MeanDrivenBernoulli`)."""
    n_rep, n, n_act = means.shape
    for r in range(n_rep):
        rng = stream(handles, None, r)
        for j in range(n):
            for i in range(n_act):
                means[r, j, i] = 1.0 if rng.random() < means[r, j, i] else 0.0


class _DrawHandles:
    """The replicates' generators as :func:`arena.streams.generator_handles` for the draw kernels,
    read at first use and dropped on copy or pickle (they are pointers into this process's
    generators). ``_pcg64`` says whether the kernels may step their PCG64 states themselves
    (:func:`arena.streams.pcg64_streams`), read with the handles. Without JIT the kernels would
    call ``Generator.random`` once per number from Python; the adversaries then draw with numpy
    instead (the same numbers)."""

    _handles: np.ndarray | None = None
    _handles_of: list | None = None
    _pcg64: bool = False  # whether the handles' generators are stepped in the kernel

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_handles", None)
        state.pop("_handles_of", None)
        state.pop("_means_view", None)  # a game's broadcast of μ (a copy would materialize it)
        return state

    def _draw_handles(self) -> np.ndarray | None:
        # keyed on the list object ``reset`` stores: a new game's generators get new handles
        # (and JIT is asked once per game: the environment lookup cost 1 µs of every chunk)
        if self._handles_of is not self._rngs:
            self._handles_of = self._rngs
            self._handles = None if jit_disabled() else generator_handles(self._rngs)
            self._pcg64 = self._handles is not None and pcg64_streams(self._rngs)
        return self._handles


EXPERT_INDEX = Interval(0, None, integer=True)
"""An expert's index (that it is below N is checked at reset: N is the game's)."""


def _default_means(adversary: Any, n: int) -> np.ndarray:
    """The default means of ``n`` experts: 0.5 everywhere except ``0.5 − gap`` at ``best``."""
    best = int(adversary.best)
    if best >= n:
        message = f"must be an expert index in [0, {n}), got {adversary.best!r}"
        raise ConfigError(adversary.label(), "best", message)
    mu = np.full(n, 0.5)
    mu[best] = 0.5 - adversary.gap
    return mu


class _BernoulliLosses(_DrawHandles, ObliviousAdversary):
    """Shared machinery: ``l_{t,i} = 1{U_{t,i} < μ_i}`` with ``U`` drawn in round order."""

    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means"}))

    def _means(self, spec: GameSpec) -> np.ndarray:
        raise NotImplementedError

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._mu = self._means(spec)
        self._rngs = list(rngs)
        self._n_act = spec.n_actions
        self._means_view: np.ndarray | None = None

    def _means_as(self, shape: tuple[int, ...]) -> np.ndarray:
        """μ broadcast to a chunk's ``shape`` (R, n, N), kept while the chunks keep their shape
        (``np.broadcast_to`` cost 3 µs of every chunk)."""
        view = getattr(self, "_means_view", None)
        if view is None or view.shape != shape:
            view = self._means_view = np.broadcast_to(self._mu, shape)
        return view

    @zero_one_losses
    def losses_block(self, t0: int, n: int) -> np.ndarray:
        out = np.empty((len(self._rngs), n, self._n_act))
        handles = self._draw_handles()
        if handles is not None:
            if self._pcg64:
                _bernoulli_draw_pcg64(handles, out, self._means_as(out.shape))
            else:
                _bernoulli_draw(handles, out, self._mu)
            return out
        for r, rng in enumerate(self._rngs):
            # uniforms in round order keep any split into blocks identical to the per-round
            # stream; drawn into the output itself, then thresholded in place
            rng.random(out=out[r])
        _bernoulli_threshold(out, self._mu)
        return out

    def oracle(self, key: str, t0: int, n: int) -> np.ndarray:
        if key != "means":
            return super().oracle(key, t0, n)
        return np.broadcast_to(self._mu, (len(self._rngs), n, self._n_act))


class Bernoulli(_BernoulliLosses):
    """Independent Bernoulli losses ``l_{t,i} ~ Bernoulli(μ_i)``, i.i.d. over rounds.

    Parameters
    ----------
    means : list of float, optional
        Per-expert means μ in [0, 1] (length N). Default: 0.5 for every expert except ``best``.
    gap : float
        With default means, the best expert's mean is ``0.5 − gap`` (0 ≤ gap ≤ 0.5).
    best : int
        Index of the best expert with default means.

    Notes
    -----
    The stochastic environment with a gap of Luo 2016, §2.3, Theorem 5, part 2: the best
    expert is better than every other by ``gap`` in expectation, so adaptive players' regret to it
    stays bounded while fixed-rate Hedge's grows. Exposes ``means`` for ``pseudo_regret``.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ftl", Bernoulli(gap=0.2), n_actions=3, horizon=200,
    ...           metrics={"pseudo_regret": {}})
    >>> bool(df.value.iloc[-1] < 10)
    True

    References
    ----------
    Luo 2016, §2.3, Theorem 5 (part 2); van Erven, Grünwald, Koolen & de Rooij (2011).
    """

    parameter_constraints: ClassVar = {
        "means": [ListOf(Interval(0, 1)), IsNone()],
        "gap": [Interval(0, 0.5)],
        "best": [EXPERT_INDEX],
    }

    def __init__(self, means: list[float] | None = None, gap: float = 0.1, best: int = 0):
        self.means = means
        self.gap = gap
        self.best = best

    def _means(self, spec: GameSpec) -> np.ndarray:
        mu = per_expert(self, "means", spec.n_actions)
        return _default_means(self, spec.n_actions) if mu is None else mu

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"gap": 0.25, "best": 1}


class FairCoin(_BernoulliLosses):
    """Fair coins: i.i.d. Bernoulli(1/2) losses, the classic experts lower-bound construction.

    Every non-anticipating learner has ``E[p_t·l_t | past] = 1/2``, so its expected regret is the
    learner-independent value ``LB(T, N) = T/2 − Σ_{k=1}^{T} P(Bin(T, 1/2) ≥ k)^N``, which tends to
    ``sqrt(T ln N / 2)`` (Cesa-Bianchi et al. 1997; Cesa-Bianchi & Lugosi 2006, Theorem 3.7).
    A mean regret far below it reveals
    a player that peeked at ``l_t``.

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", "fair_coin", n_actions=2, horizon=10, metrics={"loss": {}})
    >>> int(df.t.max())
    10

    References
    ----------
    Cesa-Bianchi, Freund, Haussler, Helmbold, Schapire & Warmuth (1997), JACM; CBL Thm 3.7.
    """

    def __init__(self):
        pass

    def _means(self, spec: GameSpec) -> np.ndarray:
        return np.full(spec.n_actions, 0.5)

    def lower_bounds(self, t: int, player=None) -> dict[tuple[str, float], float]:
        """Declare ``LB(t, N)`` (:func:`fair_coin_lower_bound`) on the regret after t rounds.

        It is the exact value of the **mean** regret over replicates of every non-anticipating
        player (an expectation statement: single replicates scatter around it).
        """
        return {("regret", math.nan): fair_coin_lower_bound(int(t), self._n_act)}

    def exact_values(self, n_actions: int, horizon: int) -> frozenset[str]:
        """``{"regret"}``: ``LB(t, N)`` is every non-anticipating player's expected regret.

        Examples
        --------
        >>> sorted(FairCoin().exact_values(10, 1000))
        ['regret']
        """
        return frozenset({"regret"})


# ----------------------------------------------------------------------------------------------
# the exact fair-coin lower bound


LB_WINDOW_FROM = 4096
"""From this t on, :func:`fair_coin_lower_bound` sums only the terms in a Hoeffding window."""


@lru_cache(maxsize=65536)
def fair_coin_lower_bound(t: int, n_actions: int) -> float:
    """Return ``LB(t, N) = t/2 − Σ_{k=1}^{t} P(Bin(t, ½) ≥ k)^N``, the exact fair-coin value.

    Under i.i.d. Bernoulli(½) losses every non-anticipating learner has ``E[p_s·l_s | past] = ½``,
    so its expected regret after t rounds is ``t/2 − E[min_i L_{t,i}]`` and ``E[min_i L_{t,i}] =
    Σ_{k≥1} P(min_i L_{t,i} ≥ k) = Σ_k P(Bin(t, ½) ≥ k)^N``. The
    tails are evaluated in log space and raised to the N-th power with ``exp(N log P)``. For
    ``t < 4096`` every term is computed from scipy's binomial CDF (``log1p(−bdtr)`` below the
    median, ``log(bdtrc)`` above). From ``t = 4096`` on, only the k with ``|k − t/2| ≤ w``,
    ``w = sqrt(t (75 + ln(tN))/2)``, are summed, from accumulated log-pmfs (``binom.logpmf``,
    accurate for large t where the CDF routine drifts by ~1e-9 relative per term); by Hoeffding
    the terms below the window differ from 1, and those above it from 0, by less than
    ``e^{−75}/(tN)`` each. Results are cached per ``(t, N)``.

    Examples
    --------
    >>> fair_coin_lower_bound(10, 2) == 230945 / 262144
    True
    >>> round(fair_coin_lower_bound(1000, 10), 3)
    24.325
    """
    t, n = int(t), int(n_actions)
    if t <= 0 or n <= 1:
        return 0.0
    if t < LB_WINDOW_FROM:
        k = np.arange(1, t + 1, dtype=np.float64)
        with np.errstate(divide="ignore"):
            log_tail = np.where(
                k - 1 < t / 2, np.log1p(-bdtr(k - 1, t, 0.5)), np.log(bdtrc(k - 1, t, 0.5))
            )
        return t / 2 - float(np.exp(n * log_tail).sum())
    from scipy.stats import binom

    w = math.sqrt(0.5 * t * (75.0 + math.log(t * n)))
    k_lo, k_hi = max(1, math.floor(t / 2 - w)), min(t, math.ceil(t / 2 + w))
    k = np.arange(k_lo, k_hi + 1, dtype=np.float64)
    log_pmf = binom.logpmf(k, t, 0.5)
    upper = np.logaddexp.accumulate(log_pmf[::-1])[::-1]  # log P(k ≤ B ≤ k_hi) ≈ log P(B ≥ k)
    lower = np.concatenate([[-np.inf], np.logaddexp.accumulate(log_pmf)[:-1]])  # P(k_lo ≤ B < k)
    with np.errstate(invalid="ignore"):
        log_tail = np.where(k - 1 < t / 2, np.log1p(-np.exp(lower)), upper)
    return t / 2 - ((k_lo - 1) + float(np.exp(n * log_tail).sum()))


# ----------------------------------------------------------------------------------------------
# Beta losses


def _n_from_list(adversary: Any, param: str, requested: int | None) -> int:
    """N fixed by a per-expert list parameter (when given), else the requested or default 10."""
    values = getattr(adversary, param)
    if values is None:
        return 10 if requested is None else int(requested)
    n = len(list(values))
    if requested is not None and int(requested) != n:
        raise ConfigError(
            adversary.label(),
            "n_actions",
            f"{param} has {n} values but n_actions = {requested} was requested",
        )
    return n


class MeanDrivenBernoulli(_DrawHandles, ObliviousAdversary):
    """Base of Bernoulli adversaries whose means vary by round: ``l_{t,i} ~ Bernoulli(μ_{t,i})``.

    Subclasses set ``_rngs`` and ``_n_act`` in ``reset`` and implement ``_mean_block(t0, n)``
    (R, n, N); this base draws the losses from uniforms in round order (so any split into blocks
    gives the same losses) and serves the means as the ``means`` oracle.
    """

    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means"}))

    def _mean_block(self, t0: int, n: int) -> np.ndarray:
        raise NotImplementedError

    @zero_one_losses
    def losses_block(self, t0: int, n: int) -> np.ndarray:
        mu = self._mean_block(t0, n)
        handles = self._draw_handles()
        if handles is not None and mu.flags.c_contiguous and mu.flags.writeable:
            if self._pcg64:
                _bernoulli_draw_pcg64(handles, mu, mu)
            else:
                _bernoulli_draw_means(handles, mu)
            return mu
        for r, rng in enumerate(self._rngs):
            mu[r] = rng.random((n, self._n_act)) < mu[r]
        return mu

    def oracle(self, key: str, t0: int, n: int) -> np.ndarray:
        if key != "means":
            return super().oracle(key, t0, n)
        return self._mean_block(t0, n)


class Beta(ObliviousAdversary):
    """Independent Beta losses ``l_{t,i} ~ Beta(κμ_i, κ(1 − μ_i))``, i.i.d. over rounds.

    Parameters
    ----------
    means : list of float, optional
        Per-expert means μ in the open interval (0, 1); when given, N is their number. Default:
        0.5 for every expert except ``best``.
    gap : float
        With default means, the best expert's mean is ``0.5 − gap`` (0 ≤ gap < 0.5).
    best : int
        Index of the best expert with default means.
    concentration : float
        κ > 0: the Beta shape parameters are ``a_i = κμ_i`` and ``b_i = κ(1 − μ_i)``, so
        ``Var l_{t,i} = μ_i(1 − μ_i)/(κ + 1)``. κ = 2 with μ = ½ is the uniform law.

    Notes
    -----
    The stochastic environment with a gap of Luo 2016, §2.3, Theorem 5 (part 2), with
    continuous losses in [0, 1] instead of Bernoulli ones: the best expert is better than every
    other by ``gap`` in expectation, and the loss variance is tunable through κ (large κ: nearly
    deterministic losses, small κ: nearly Bernoulli). Exposes ``means`` for ``pseudo_regret``.
    Losses are drawn per replicate with ``rng.beta(a, b, size=(n, N))``, which consumes the
    stream element by element in round order, so any split of the rounds into blocks gives the
    same losses (checked in the tests).

    Examples
    --------
    >>> from arena import play
    >>> df = play("ftl", Beta(gap=0.2, concentration=5.0), n_actions=3, horizon=200,
    ...           metrics={"pseudo_regret": {}})
    >>> bool(df.value.iloc[-1] < 10)
    True

    References
    ----------
    Luo 2016, §2.3, Theorem 5 (part 2).
    """

    parameter_constraints: ClassVar = {
        "means": [ListOf(Interval(0, 1, closed="neither")), IsNone()],
        "gap": [Interval(0, 0.5, closed="left")],
        "best": [EXPERT_INDEX],
        "concentration": [POSITIVE],
    }
    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means"}))

    def __init__(
        self,
        means: list[float] | None = None,
        gap: float = 0.1,
        best: int = 0,
        concentration: float = 2.0,
    ):
        self.means = means
        self.gap = gap
        self.best = best
        self.concentration = concentration

    def resolve_n_actions(self, requested: int | None) -> int:
        return _n_from_list(self, "means", requested)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        mu = per_expert(self, "means", spec.n_actions)
        mu = _default_means(self, spec.n_actions) if mu is None else mu
        kappa = float(self.concentration)
        self._mu = mu
        self._a, self._b = kappa * mu, kappa * (1.0 - mu)
        self._rngs = list(rngs)
        self._n_act = spec.n_actions

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        out = np.empty((len(self._rngs), n, self._n_act))
        for r, rng in enumerate(self._rngs):
            out[r] = rng.beta(self._a, self._b, size=(n, self._n_act))
        return out

    def oracle(self, key: str, t0: int, n: int) -> np.ndarray:
        if key != "means":
            return super().oracle(key, t0, n)
        return np.broadcast_to(self._mu, (len(self._rngs), n, self._n_act))

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"gap": 0.3, "best": 1, "concentration": 0.5}


# ----------------------------------------------------------------------------------------------
# piecewise-stochastic losses


class PiecewiseStochastic(MeanDrivenBernoulli):
    """Bernoulli losses in K segments, each with its own best expert, gap α and random means.

    In segment s the best expert ``b_s`` has mean ``best_mean`` and every other expert i the mean
    ``best_mean + gap + spread·U_{s,i}`` with ``U_{s,i}`` uniform on [0, 1]. ``b_1`` is uniform
    over the experts and each later ``b_s`` uniform over the others; the change points and all
    means are drawn per replicate from its stream at reset.

    Parameters
    ----------
    n_segments : int
        Number of segments K ≥ 1 (K − 1 change points; needs K ≤ T).
    gap : float
        α > 0: in every segment ``E[l_{t,i} − l_{t,b_s}] ≥ α`` for every ``i ≠ b_s``.
    best_mean : float
        Mean loss of the segment's best expert (≥ 0).
    spread : float
        Width of the extra random part of the other experts' means (≥ 0); needs
        ``best_mean + gap + spread ≤ 1``.
    change_points : {"even", "random"}
        Evenly spaced segments, or K − 1 distinct change rounds drawn uniformly from ``2..T``.

    Notes
    -----
    The piecewise-stochastic environment of Luo 2016, §2.3.3 ("tracking the best expert", the
    open problem of Warmuth & Koolen 2014): within a segment the data is stochastic with a gap,
    so players that adapt to both
    the gap and the change points (AdaNormalHedge.TV, Fixed Share with a gap-adaptive rate) keep
    the (K−1)-switch regret small, while the external regret of any player grows linearly once
    the best expert changes. Exposes ``means``.

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", PiecewiseStochastic(n_segments=2, gap=0.3), n_actions=3,
    ...           horizon=400, metrics={"shifting_regret": {"k": [0, 1]}})
    >>> last = df[df.t == 400].set_index("param").value
    >>> bool(last[1.0] > last[0.0])
    True

    References
    ----------
    Luo 2016, §2.3, Theorem 5 (part 2), §2.3.3 and Table 2.3; Warmuth & Koolen (2014).
    """

    parameter_constraints: ClassVar = {
        "n_segments": [Interval(1, None, integer=True)],
        "gap": [POSITIVE],
        "best_mean": [NON_NEGATIVE],
        "spread": [NON_NEGATIVE],
        "change_points": [OneOf("even", "random")],
    }
    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means"}), needs_horizon=True)

    def __init__(
        self,
        n_segments: int = 4,
        gap: float = 0.1,
        best_mean: float = 0.4,
        spread: float = 0.0,
        change_points: str = "even",
    ):
        self.n_segments = n_segments
        self.gap = gap
        self.best_mean = best_mean
        self.spread = spread
        self.change_points = change_points

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        n, horizon, k = spec.n_actions, spec.horizon, int(self.n_segments)
        if n < 2:
            raise ConfigError(who, "n_actions", "needs at least 2 experts")
        if k > horizon:
            raise ConfigError(who, "n_segments", f"must be an integer in [1, T] = [1, {horizon}]")
        if self.best_mean + self.gap + self.spread > 1:  # three parameters: no declaration says it
            raise ConfigError(who, "spread", "need best_mean + gap + spread ≤ 1")
        self._starts, self._mu = [], []
        for rng in rngs:
            if self.change_points == "even":
                starts = np.array([1 + (s * horizon) // k for s in range(1, k)], dtype=np.int64)
            else:
                starts = np.sort(rng.choice(np.arange(2, horizon + 1), size=k - 1, replace=False))
            best = [int(rng.integers(n))]
            for _ in range(k - 1):
                best.append((best[-1] + int(rng.integers(1, n))) % n)
            mu = self.best_mean + self.gap + self.spread * rng.random((k, n))
            mu[np.arange(k), best] = self.best_mean
            self._starts.append(np.asarray(starts, dtype=np.int64))
            self._mu.append(np.clip(mu, 0.0, 1.0))
        self._rngs = list(rngs)
        self._n_act = n

    def _mean_block(self, t0: int, n: int) -> np.ndarray:
        t = np.arange(t0, t0 + n)
        out = np.empty((len(self._rngs), n, self._n_act))
        for r in range(len(self._rngs)):
            out[r] = self._mu[r][np.searchsorted(self._starts[r], t, side="right")]
        return out

    @classmethod
    def _unit_test_params(cls):
        yield {"n_segments": 3}
        yield {"n_segments": 2, "spread": 0.2, "change_points": "random"}


# ----------------------------------------------------------------------------------------------
# drifting means


def fold_unit(x: np.ndarray) -> np.ndarray:
    """Reflect real numbers into [0, 1] (the triangle wave of period 2).

    Examples
    --------
    >>> fold_unit(np.array([-0.25, 0.5, 1.25, 2.5])).tolist()
    [0.25, 0.5, 0.75, 0.5]
    """
    y = np.mod(x, 2.0)
    return np.where(y > 1.0, 2.0 - y, y)


DRIFT_MODES = ("random_walk", "sinusoid")


class DriftingMeans(MeanDrivenBernoulli):
    """Bernoulli losses whose means drift slowly: a reflected random walk or a sinusoid.

    Parameters
    ----------
    mode : {"random_walk", "sinusoid"}
        How the means move (see Notes).
    step : float
        ``random_walk``: standard deviation σ ≥ 0 of each mean's Gaussian step per round.
    period : float
        ``sinusoid``: period P > 0 in rounds.
    amplitude : float
        ``sinusoid``: amplitude A ≥ 0 around ½ (A > ½ is reflected back into [0, 1]).
    initial : list of float, optional
        Means at round 1 (in [0, 1]; when given, N is their number); default uniform per replicate
        (``random_walk``) or evenly spaced phases (``sinusoid``, where it is not used).

    Notes
    -----
    * ``random_walk``: ``μ_t = fold(W_t)`` with ``W_1 = μ_1`` and ``W_{t+1} = W_t + σ ξ_t``,
      ``ξ_t ~ N(0, I_N)``, where ``fold`` reflects into [0, 1] (:func:`fold_unit`): the
      reflected random walk. Its steps come from a generator seeded at reset from the
      replicate's stream, so the means never depend on how rounds are split into blocks or on
      whether the oracle is asked before the losses; the Bernoulli uniforms come from the
      replicate's stream in round order.
    * ``sinusoid``: ``μ_{t,i} = fold(½ + A sin(2π t/P + φ + 2π i/N))`` with φ uniform per
      replicate (drawn at reset): the best expert rotates smoothly through all experts.

    Losses are ``l_{t,i} = 1{U_{t,i} < μ_{t,i}}``. The best expert changes continually, so this
    is a test bed for dynamic and adaptive regret (the time-varying competitors of Luo 2016,
    §2.3.3). Exposes ``means`` and the ``competitor`` oracle: ``u_t = e_{i_t}`` with
    ``i_t = argmin_i μ_{t,i}`` (lowest index among ties), the expert of least mean in each round,
    whose variation ``V`` is one plus its number of changes (read by the ``tv_regret`` metric).

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", DriftingMeans(mode="sinusoid", period=200.0), n_actions=4,
    ...           horizon=400, metrics={"pseudo_regret": {}})
    >>> int(df.t.max())
    400

    References
    ----------
    Luo 2016, §2.3.3; Besbes, Gur & Zeevi (2015), "Non-stationary
    stochastic optimization".
    """

    parameter_constraints: ClassVar = {
        "mode": [OneOf(*DRIFT_MODES)],
        "step": [NON_NEGATIVE],
        "period": [POSITIVE],
        "amplitude": [NON_NEGATIVE],
        "initial": [ListOf(Interval(0, 1)), IsNone()],
    }
    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means", "competitor"}))

    def __init__(
        self,
        mode: str = "random_walk",
        step: float = 0.01,
        period: float = 1000.0,
        amplitude: float = 0.4,
        initial: list[float] | None = None,
    ):
        self.mode = mode
        self.step = step
        self.period = period
        self.amplitude = amplitude
        self.initial = initial

    def resolve_n_actions(self, requested: int | None) -> int:
        return _n_from_list(self, "initial", requested)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        n = spec.n_actions
        init = per_expert(self, "initial", n)
        self._rngs = list(rngs)
        self._n_act = n
        n_rep = len(self._rngs)
        if self.mode == "sinusoid":
            self._phase = np.array([2 * math.pi * rng.random() for rng in self._rngs])
            return
        start = np.empty((n_rep, n))
        self._walk_rngs = []
        for r, rng in enumerate(self._rngs):
            start[r] = init if init is not None else rng.random(n)
            self._walk_rngs.append(np.random.default_rng(int(rng.integers(2**63))))
        self._next_t = 1  # first round whose mean is not generated yet
        self._w_next = start  # W at round _next_t
        self._cache_t0 = 1
        self._cache = np.empty((n_rep, 0, n))

    def _walk(self, n: int) -> np.ndarray:
        """Generate the unfolded walk for the next n rounds and advance the generator."""
        n_rep = len(self._rngs)
        out = np.empty((n_rep, n, self._n_act))
        for r, g in enumerate(self._walk_rngs):
            steps = self.step * g.standard_normal((n, self._n_act))
            # W_{t+1} = W_t + σξ_t, one addition per round whatever the blocks (cumsum is
            # sequential), so the walk is bitwise independent of how rounds are split
            path = np.cumsum(np.concatenate([self._w_next[r][None], steps]), axis=0)
            out[r] = path[:-1]
            self._w_next[r] = path[-1]
        self._next_t += n
        return out

    def _mean_block(self, t0: int, n: int) -> np.ndarray:
        if self.mode == "sinusoid":
            t = np.arange(t0, t0 + n, dtype=np.float64)
            shift = 2 * math.pi * np.arange(self._n_act) / self._n_act
            angle = (
                2 * math.pi * t[None, :, None] / self.period
                + self._phase[:, None, None]
                + shift[None, None, :]
            )
            return fold_unit(0.5 + self.amplitude * np.sin(angle))
        if n == 0:
            return np.empty((len(self._rngs), 0, self._n_act))
        end = t0 + n  # one past the last round asked
        if t0 < self._cache_t0:
            raise ValueError(
                f"drifting_means: rounds {t0}.. were already passed (the walk is generated "
                "forward only; ask for rounds in order)"
            )
        # the cache holds every generated round from the last one asked on (it ends at
        # _next_t): a chunk's rounds may be asked again piecewise, in order (a span of
        # segments asks its means segment by segment after its losses)
        cached_end = self._cache_t0 + self._cache.shape[1]
        if end <= cached_end:  # generated already: a slice, the cache kept as it is
            return self._cache[:, t0 - self._cache_t0 : end - self._cache_t0].copy()
        parts = []
        if t0 < cached_end:
            parts.append(self._cache[:, t0 - self._cache_t0 :])
        if t0 > self._next_t:
            self._walk(t0 - self._next_t)  # skipped rounds: generated and discarded
        if end > self._next_t:
            parts.append(fold_unit(self._walk(end - self._next_t)))
        cache = np.concatenate(parts, axis=1)
        self._cache_t0, self._cache = t0, cache
        return cache[:, :n].copy()

    def oracle(self, key: str, t0: int, n: int) -> np.ndarray:
        if key != "competitor":
            return super().oracle(key, t0, n)
        mu = self._mean_block(t0, n)
        out = np.zeros(mu.shape)
        np.put_along_axis(out, mu.argmin(axis=2)[:, :, None], 1.0, axis=2)
        return out

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"mode": "sinusoid", "period": 30.0, "amplitude": 0.6}
        yield {"step": 0.2, "initial": [0.1, 0.5, 0.9]}
