"""Stochastic adversaries: independent Bernoulli losses with per-expert means."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arena.errors import ConfigError
from arena.protocols import ObliviousAdversary
from arena.spec import AdversaryTags, GameSpec


class _BernoulliLosses(ObliviousAdversary):
    """Shared machinery: ``l_{t,i} = 1{U_{t,i} < μ_i}`` with ``U`` drawn in round order."""

    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means"}))

    def _means(self, spec: GameSpec) -> np.ndarray:
        raise NotImplementedError

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._mu = self._means(spec)
        self._rngs = list(rngs)
        self._n_act = spec.n_actions

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        out = np.empty((len(self._rngs), n, self._n_act))
        for r, rng in enumerate(self._rngs):
            # uniforms in round order keep any split into blocks identical to the per-round stream
            np.less(rng.random((n, self._n_act)), self._mu, out=out[r])
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
    The stochastic environment with a gap of seed 000 (Thm 5.2, L672; digest §2.5): the best
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
    Luo (2016), thesis, §2.5 (seed 000, L672); theory-oracles §C.11.
    """

    name = "bernoulli"

    def __init__(self, means: list[float] | None = None, gap: float = 0.1, best: int = 0):
        self.means = means
        self.gap = gap
        self.best = best

    def _means(self, spec: GameSpec) -> np.ndarray:
        n = spec.n_actions
        who = "adversary bernoulli"
        if self.means is not None:
            mu = np.asarray(list(self.means), dtype=np.float64)
            if mu.shape != (n,):
                raise ConfigError(who, "means", f"needs {n} values (n_actions), got {mu.size}")
            if not np.all((mu >= 0) & (mu <= 1)):
                raise ConfigError(who, "means", "every mean must lie in [0, 1]")
            return mu
        if not 0 <= self.gap <= 0.5:
            raise ConfigError(who, "gap", f"must lie in [0, 0.5], got {self.gap!r}")
        if not (isinstance(self.best, int) and 0 <= self.best < n):
            raise ConfigError(
                who, "best", f"must be an expert index in [0, {n}), got {self.best!r}"
            )
        mu = np.full(n, 0.5)
        mu[self.best] = 0.5 - self.gap
        return mu

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"gap": 0.25, "best": 1}


class FairCoin(_BernoulliLosses):
    """Fair coins: i.i.d. Bernoulli(1/2) losses, the classic experts lower-bound construction.

    Every non-anticipating learner has ``E[p_t·l_t | past] = 1/2``, so its expected regret is the
    learner-independent value ``LB(T, N) = T/2 − Σ_{k=1}^{T} P(Bin(T, 1/2) ≥ k)^N``, which tends to
    ``sqrt(T ln N / 2)`` (theory-oracles §A.1.6, §A.4.2, §C.1). A mean regret far below it reveals
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

    name = "fair_coin"

    def __init__(self):
        pass

    def _means(self, spec: GameSpec) -> np.ndarray:
        return np.full(spec.n_actions, 0.5)
