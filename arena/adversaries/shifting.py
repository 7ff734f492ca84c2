"""Shifting experts: the best expert changes at k change points."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.adversaries.stochastic import MeanDrivenBernoulli
from arena.errors import ConfigError
from arena.params import Interval, OneOf
from arena.spec import AdversaryTags, GameSpec


class ShiftingExperts(MeanDrivenBernoulli):
    """Bernoulli losses whose best expert changes at ``n_switches`` change points.

    In segment s the best expert ``b_s`` has mean ``base − gap`` and every other expert ``base``.
    ``b_1`` is uniform over the experts and each later ``b_s`` uniform over the others, drawn per
    replicate from its stream at reset.

    Parameters
    ----------
    n_switches : int
        Number of change points k ≥ 0 (k + 1 segments; needs ``k < T``).
    gap : float
        Advantage of the segment's best expert.
    base : float
        Mean loss of the other experts (``0 ≤ base − gap`` and ``base ≤ 1``).
    change_points : {"even", "random"}
        Evenly spaced segments, or k distinct change rounds drawn uniformly from ``2..T``.

    Notes
    -----
    A comparator that switches k times has loss about ``T(base − gap)``, every fixed expert about
    ``T·base − T·gap/(k+1)``: fixed-share-like players keep shifting regret small while the
    external regret of Hedge stays sublinear only against fixed experts (the time-varying
    competitors of Luo 2016, §2.3.3; Herbster & Warmuth 1998). Exposes ``means`` and the
    ``competitor`` oracle: ``u_t = e_{b_s}``, the best expert of the segment holding round t (a
    k-shift path with variation ``V = k + 1``, read by the ``tv_regret`` metric).

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", ShiftingExperts(n_switches=1, gap=0.4), n_actions=2, horizon=400,
    ...           metrics={"shifting_regret": {"k": [0, 1]}})
    >>> last = df[df.t == 400].set_index("param").value
    >>> bool(last[1.0] > last[0.0])
    True

    References
    ----------
    Herbster & Warmuth (1998), "Tracking the best expert".
    """

    parameter_constraints: ClassVar = {
        "n_switches": [Interval(0, None, integer=True)],
        "gap": [Interval(0, 1)],
        "base": [Interval(0, 1)],
        "change_points": [OneOf("even", "random")],
    }
    tags = AdversaryTags(
        oblivious=True, oracle=frozenset({"means", "competitor"}), needs_horizon=True
    )

    def __init__(
        self, n_switches: int = 3, gap: float = 0.2, base: float = 0.5, change_points: str = "even"
    ):
        self.n_switches = n_switches
        self.gap = gap
        self.base = base
        self.change_points = change_points

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        n, horizon, k = spec.n_actions, spec.horizon, int(self.n_switches)
        if n < 2:
            raise ConfigError(who, "n_actions", "needs at least 2 experts")
        if k >= horizon:
            raise ConfigError(who, "n_switches", f"must be an integer in [0, T) = [0, {horizon})")
        if self.gap > self.base:  # two parameters: no declaration says it
            raise ConfigError(who, "gap", "need 0 ≤ gap ≤ base ≤ 1")
        self._starts = []  # first round of segments 2..k+1, per replicate
        self._best = []
        for rng in rngs:
            if self.change_points == "even":
                starts = np.array([1 + (s * horizon) // (k + 1) for s in range(1, k + 1)])
            else:
                starts = np.sort(rng.choice(np.arange(2, horizon + 1), size=k, replace=False))
            best = [int(rng.integers(n))]
            for _ in range(k):
                step = int(rng.integers(1, n))
                best.append((best[-1] + step) % n)
            self._starts.append(starts.astype(np.int64))
            self._best.append(np.array(best))
        self._rngs = list(rngs)
        self._n_act = n

    def _segment_best(self, t0: int, n: int) -> np.ndarray:
        """The best expert ``b_s`` of the segment holding each round, shape (R, n)."""
        t = np.arange(t0, t0 + n)
        return np.stack(
            [best[np.searchsorted(starts, t, side="right")]
             for starts, best in zip(self._starts, self._best, strict=True)]
        )  # fmt: skip

    def _mean_block(self, t0: int, n: int) -> np.ndarray:
        out = np.full((len(self._rngs), n, self._n_act), float(self.base))
        np.put_along_axis(out, self._segment_best(t0, n)[:, :, None], self.base - self.gap, axis=2)
        return out

    def oracle(self, key: str, t0: int, n: int) -> np.ndarray:
        if key != "competitor":
            return super().oracle(key, t0, n)
        out = np.zeros((len(self._rngs), n, self._n_act))
        np.put_along_axis(out, self._segment_best(t0, n)[:, :, None], 1.0, axis=2)
        return out

    @classmethod
    def _unit_test_params(cls):
        yield {"n_switches": 2}
        yield {"n_switches": 1, "change_points": "random"}
