"""Weak learners with a controlled edge, written into the data: Online BBM's lower-bound stream."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import ClassVar

import numpy as np

from arena.adversaries._oco_stream import (
    DOMAIN,
    EXAMPLE_LOSS,
    InstanceTags,
    StreamAdversary,
    make_domain,
)
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import POSITIVE, Interval, IsNone
from arena.spec import AdversaryTags, GameSpec


@lru_cache(maxsize=4096)
def majority_error(n_bits: int, edge: float) -> float:
    """Return the Bayes error of predicting ``y`` from n i.i.d. bits, each ``y`` w.p. ``½ + edge``.

    With ``y`` uniform on ±1 the posterior log-odds are ``(#agree − #disagree)·ln((½+e)/(½−e))``,
    so the Bayes rule is the majority vote, and a tie (even n) is a fair guess:
    ``P[Bin(n, ½+e) < n/2] + ½·P[Bin(n, ½+e) = n/2]``; for odd n this is
    ``P[Bin(n, ½+e) ≤ ⌊n/2⌋]`` (Luo 2016, proof of Theorem 10). Hoeffding bounds it by
    ``exp(−2n·e²)`` (``exp(−8nγ²)`` in the thesis's ``e = 2γ``). scipy's binomial CDF is exact to
    ~1e-15 relative here.

    Examples
    --------
    >>> round(majority_error(51, 0.2), 6), round(math.exp(-2 * 51 * 0.2**2), 6)
    (0.001364, 0.016907)
    >>> round(majority_error(2, 0.0), 12)
    0.5
    """
    n, p = int(n_bits), 0.5 + float(edge)
    from scipy.stats import binom  # scipy.stats costs ~1 s to import: only where used

    below = float(binom.cdf((n - 1) // 2, n, p))  # P[Bin < n/2]
    tie = 0.5 * float(binom.pmf(n // 2, n, p)) if n % 2 == 0 else 0.0
    return below + tie


class EdgeOracle(StreamAdversary):
    """``y_t`` a fair sign, ``x_t ∈ {±1}^d`` with ``x_{t,i} = y_t`` w.p. ``½ + edge`` independently.

    The lower-bound construction for the number of weak learners of online boosters (Luo 2016,
    §3.1.3, proof of Theorem 10; Beygelzimer, Kale & Luo 2015) with the weak learners' outputs
    written into the features: the ``oracle`` weak learner's lane i reads ``x_{t,i}``, so N ≤ d
    lanes are independent weak learners correct with probability ``½ + edge`` on every example.
    ``warmup > 0`` is the proof's second construction (for the sample complexity): the first
    ``warmup`` rounds carry no information (``edge`` 0 there), so any learner errs at rate ½
    during them (``T_0 = S/(4γ)`` in the proof).

    **Edges.** ``edge = P(x_{t,i} = y_t) − ½``. Theorem 10's construction uses ``½ + 2γ`` and
    calls such learners weak learners with edge γ: its γ is ``edge/2``. Online BBM's potentials
    assume learners correct w.p. ``(1+γ)/2``: they are matched by ``γ_BBM = 2·edge``.

    **Declared lower bound** (``lower_bound:mistakes``). Given ``x_t``, the Bayes-optimal
    prediction is the majority of the d bits (the posterior log-odds are proportional to ``Σ_i
    x_{t,i}y``), with error ``majority_error(d, edge)`` (:func:`majority_error`); past rounds
    are independent of ``y_t``. So every player of this stream, a booster with any N or a linear
    learner, has expected mistakes (``y·ŷ ≤ 0``) after t rounds at least
    ``½·min(t, T_0) + majority_error(d, edge)·max(t − T_0, 0)``: a bound on the *mean* over
    replicates, not on each. For a booster with ``N = d`` oracle lanes this is Theorem 10's
    ``P[Bin(N, ½+2γ) ≤ N/2]`` per round; a booster with N < d oracle lanes that predicts from its
    lanes only errs at ``majority_error(N, edge)`` at best, which this stream does not declare
    (a player may read all of ``x_t``).

    Parameters
    ----------
    edge : float
        ``P(x_{t,i} = y_t) − ½`` ∈ [0, ½].
    warmup : int
        T_0 ≥ 0 rounds with edge 0 first (the sample-complexity construction); 0: none.
    loss : {"hinge", "logistic", "absolute", "squared"}
        The example loss charged each round (linear learners; boosters' ``loss`` metric).
    domain : {"unconstrained", "ball", "box", "simplex"}
        The feasible set of a linear learner's ``w_t``.
    radius : float or None
        Radius of a ball or box domain (None: 1).
    test_size : int
        Number m ≥ 0 of held-out examples per replicate of the informative law (edge ``edge``),
        drawn at reset and never streamed (oracle ``test_split``).

    Notes
    -----
    ``‖x_t‖₂ = √d``, but d is not known when the arena asks for a gradient bound (before
    ``reset``), so none is declared. Every round consumes ``d + 1`` uniforms from the
    replicate's stream (the label, then the d bits), so any split into blocks gives the same
    data, and games at two edges differ only in the thresholds: they are coupled.

    Examples
    --------
    >>> adv = EdgeOracle(edge=0.3)
    >>> adv.reset(GameSpec("classification", 5, 1000, dim=5), [np.random.default_rng(0)])
    >>> rd = adv.data_block(1, 1000)
    >>> round(float((rd.x[0] == rd.y[0][:, None]).mean()), 1)  # P(correct) = ½ + 0.3
    0.8

    References
    ----------
    Luo 2016, §3.1.3, Theorem 10 and its proof (the two constructions); Beygelzimer, Kale & Luo
    2015.
    """

    parameter_constraints: ClassVar = {
        "edge": [Interval(0, 0.5)],
        "warmup": [Interval(0, None, integer=True)],
        "loss": EXAMPLE_LOSS,
        "domain": DOMAIN,
        "radius": [POSITIVE, IsNone()],
        "test_size": [Interval(0, None, integer=True)],
    }
    tags = InstanceTags(AdversaryTags(protocol="classification", oblivious=True))

    def __init__(
        self,
        edge: float = 0.1,
        warmup: int = 0,
        loss: str = "hinge",
        domain: str = "unconstrained",
        radius: float | None = None,
        test_size: int = 0,
    ):
        self.edge = edge
        self.warmup = warmup
        self.loss = loss
        self.domain = domain
        self.radius = radius
        self.test_size = test_size

    def _instance_tags(self) -> AdversaryTags:
        oracle = frozenset({"test_split"}) if self.test_size else frozenset()
        return AdversaryTags(protocol="classification", oblivious=True, oracle=oracle)

    def resolve_dim(self, requested: int | None, horizon: int | None = None) -> int:
        return 21 if requested is None else int(requested)

    def declared_domain(self) -> Domain:
        return make_domain(self.domain, self.radius)

    def declared_loss(self) -> str:
        return self.loss

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._dim, self._rngs = int(spec.dim), list(rngs)
        self._test = None
        if self.test_size:
            self._test = self._draw(int(self.test_size), int(self.warmup) + 1)
        self._start_stream()

    def _draw(self, n: int, t_first: int) -> RoundData:
        """Rounds ``t_first … t_first + n − 1``: d + 1 uniforms per round and replicate."""
        d, n_rep = self._dim, len(self._rngs)
        rounds = np.arange(t_first, t_first + n)
        p_correct = np.where(rounds <= int(self.warmup), 0.5, 0.5 + float(self.edge))
        x, y = np.empty((n_rep, n, d)), np.empty((n_rep, n))
        for r, rng in enumerate(self._rngs):
            u = rng.random((n, d + 1))
            y[r] = np.where(u[:, 0] < 0.5, 1.0, -1.0)
            x[r] = np.where(u[:, 1:] < p_correct[:, None], y[r][:, None], -y[r][:, None])
        return RoundData(x=x, y=y)

    def _generate(self, n: int) -> RoundData:
        return self._draw(n, self._next_t)

    def lower_bounds(self, t: int, player=None) -> dict[tuple[str, float], float]:
        """Declare the Bayes error's expected mistakes after t rounds (class docstring): a bound
        on the mean over replicates of every player's ``mistakes``."""
        t, t0 = int(t), int(self.warmup)
        informative = max(t - t0, 0) * majority_error(self._dim, float(self.edge))
        return {("mistakes", math.nan): 0.5 * min(t, t0) + informative}

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"edge": 0.25, "warmup": 5, "loss": "logistic", "test_size": 20}
        yield {"edge": 0.0, "domain": "ball", "loss": "squared"}
