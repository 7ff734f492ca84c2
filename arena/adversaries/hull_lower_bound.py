"""The lower-bound environment of online gradient boosting against CH(F) (Theorem 3)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.adversaries._oco_stream import StreamAdversary
from arena.errors import ConfigError
from arena.oco.losses import RoundData
from arena.params import Interval, IsNone
from arena.spec import AdversaryTags, GameSpec

THEOREM_FUNCTIONS_PER_LEARNER = 4000
"""M/N in the theorem: ``M = N/c`` functions with ``c = 1/4000``."""


def mean_function_loss(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Return ``½(f̄(x_t) − y*_t)²`` of the comparator ``f̄ = (1/M)Σ_j f_j``, shape ``x.shape[:-1]``.

    Examples
    --------
    >>> float(mean_function_loss(np.array([[1.0, 0.0, 1.0, 1.0]]), np.array([0.5]))[0])
    0.03125
    """
    return 0.5 * (np.asarray(x).mean(axis=-1) - np.asarray(y)) ** 2


class HullLowerBound(StreamAdversary):
    """Regression rounds whose features are the values of M random {0, 1} functions.

    Round t (Beygelzimer, Hazan, Kale & Luo 2015, Theorem 3; Luo 2016, Theorem 15): the label is
    ``y*_t`` uniform on ``{½ + ε, ½ − ε}`` with ``ε = 1/(10√N)``, and the features are the values
    ``x_{t,j} = f_j(x_t) ~ Bernoulli(y*_t)`` of the M functions of F, independent over t and j;
    the loss is the arena's ``½(y − y*_t)²`` (1-smooth, D = 1). The class F is the M coordinate
    functions, so Hedge over them that outputs one sampled function (``hedge_features`` with
    ``sample=True``) is the theorem's base learner (the averaging Hedge reads all M values per
    call, escapes the theorem's N-bits argument and tracks ``f̄`` itself), and the
    comparator ``f̄ = (1/M)Σ_j f_j ∈ CH(F)`` (oracle ``comparator``: the linear predictor
    ``w = (1/M)·1``) has expected loss ``y*(1 − y*)/(2M) ≤ 1/(8M)`` per round
    (:func:`mean_function_loss`).

    The theorem: with ``M = 4000·N`` and ``T ≥ 12M``, **no** booster that calls its weak
    learners N times per round has regret at most ``c·T/N`` (``c = 1/4000``) against CH(F) with
    probability 0.9: at a random round, a prediction that close to ``y*_τ`` would tell from N
    Bernoulli bits whether their mean is ``½ + ε`` or ``½ − ε`` with advantage 0.4, above their
    total-variation distance. So regret ``Ω(T/N)`` is unavoidable.

    No ``lower_bound`` is declared: the theorem says regret exceeds ``c·T/N`` with probability
    above 0.1 for some booster-dependent event, not that it does in every run (nor in
    expectation with an explicit constant), so no inequality holds run by run.

    Parameters
    ----------
    n_boost : int
        N, the boosters' calls per round the construction is built against (sets ε).
    m_functions : int or None
        M, the number of functions (the dimension d); None: ``4000·N`` as in the theorem. A
        smaller M (e.g. ``50·N``) makes a demonstration of the 1/N scaling affordable but is no
        longer the theorem's environment (its comparator is then worse, ``≈ 1/(8M)`` per round).

    Examples
    --------
    >>> adv = HullLowerBound(n_boost=4, m_functions=200)
    >>> adv.resolve_dim(None), adv.epsilon
    (200, 0.05)
    >>> adv.reset(GameSpec("regression", 200, 10, dim=200), [np.random.default_rng(0)])
    >>> data = adv.data_block(1, 10)
    >>> sorted(set(np.round(data.y[0], 2).tolist()))  # labels ½ ± ε
    [0.45, 0.55]
    >>> sorted(set(data.x[0].ravel().tolist()))
    [0.0, 1.0]

    References
    ----------
    Beygelzimer, Hazan, Kale & Luo 2015, Theorem 3 and its proof; Luo 2016, §3.2.3, Theorem 15.
    """

    name = "hull_lower_bound"
    tags: ClassVar[AdversaryTags] = AdversaryTags(
        protocol="regression", oblivious=True, oracle=frozenset({"comparator"})
    )
    parameter_constraints: ClassVar = {
        "n_boost": [Interval(1, None, integer=True)],
        "m_functions": [Interval(1, None, integer=True), IsNone()],
    }

    def __init__(self, n_boost: int = 5, m_functions: int | None = None):
        self.n_boost = n_boost
        self.m_functions = m_functions

    @property
    def epsilon(self) -> float:
        """ε = 1/(10√N): the labels are ½ ± ε."""
        return 1.0 / (10.0 * math.sqrt(int(self.n_boost)))

    def n_functions(self) -> int:
        """M: ``m_functions``, or ``4000·N`` (the theorem's)."""
        if self.m_functions is None:
            return THEOREM_FUNCTIONS_PER_LEARNER * int(self.n_boost)
        return int(self.m_functions)

    def resolve_dim(self, requested: int | None, horizon: int | None = None) -> int:
        m = self.n_functions()
        if requested is not None and int(requested) != m:
            raise ConfigError(
                self.label(),
                "n_actions",
                f"the features are the M = {m} functions, not {requested}",
            )
        return m

    def declared_loss(self) -> str:
        return "squared"

    def feature_bound(self) -> float:
        return math.sqrt(self.n_functions())

    def comparator(self) -> np.ndarray:
        return np.full((len(self._rngs), self._m), 1.0 / self._m)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._m = self.resolve_dim(int(spec.dim))
        self._rngs = list(rngs)
        self._start_stream()

    def _generate(self, n: int) -> RoundData:
        m, eps, n_rep = self._m, self.epsilon, len(self._rngs)
        x = np.empty((n_rep, n, m))
        y = np.empty((n_rep, n))
        for r, rng in enumerate(self._rngs):
            u = rng.random((n, m + 1))  # m + 1 draws per round: any split gives the same data
            y[r] = np.where(u[:, m] < 0.5, 0.5 + eps, 0.5 - eps)
            x[r] = (u[:, :m] < y[r][:, None]).astype(np.float64)
        return RoundData(x=x, y=y)

    @classmethod
    def _unit_test_params(cls):
        yield {"n_boost": 2, "m_functions": 6}
        yield {"n_boost": 1, "m_functions": 3}
