"""Sleeping / specialist experts: awake masks announced over any oblivious loss adversary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np

from arena import registry
from arena.base import canonical_json
from arena.errors import ConfigError, UnknownComponentError
from arena.experts.components import ObliviousAdversary
from arena.params import InstanceOf, Interval, IsNone, OneOf
from arena.spec import AdversaryTags, GameSpec

MODES = ("random", "arrivals", "specialists", "confidence")


class Sleeping(ObliviousAdversary):
    """Sleeping experts: before each round, announces which experts are awake (``I_t ∈ {0,1}^N``).

    The losses are those of an oblivious ``base`` adversary; this wrapper only adds the awake
    masks, so the game is the sleeping-experts protocol of Luo 2016, §2.3.2: the player
    must put zero mass on sleeping experts and is judged by the sleeping regret
    ``max_i Σ_t I_{t,i}(p_t·ℓ_t − ℓ_{t,i})``.

    Parameters
    ----------
    base : str
        Registry name of an oblivious loss adversary (default ``"bernoulli"``); it fixes N and the
        loss range.
    base_params : dict, optional
        Parameters of the base adversary.
    mode : {"random", "arrivals", "specialists", "confidence"}
        ``"random"``: each expert is awake independently with probability ``awake_prob`` each
        round; if none is, the expert with the smallest uniform is woken (so at least one is).
        ``"arrivals"``: expert 0 is awake from round 1, expert i ≥ 1 from an arrival round drawn
        uniformly from ``1..T`` at reset, and stays awake (experts that appear over time; needs
        the horizon). ``"specialists"``: each round a context ``c_t`` uniform on
        ``n_contexts`` buckets; expert i is awake iff its bucket set contains ``c_t``. Expert i's
        set is its home bucket ``i mod n_contexts`` plus each other bucket with probability
        ``awake_prob`` (drawn at reset); a bucket no expert drew goes to expert ``b mod N``, so
        every context wakes someone. ``"confidence"``: confidence-rated experts (Luo 2016,
        §2.3.2, ``I_t ∈ [0, 1]^N``): awake as in ``"random"``, and an awake expert's confidence is
        ``1 − v`` for a uniform ``v`` (so in (0, 1]); a sleeping one's is 0.
    awake_prob : float
        Probability of being awake (``"random"`` and ``"confidence"``, in (0, 1]) or of
        covering an extra bucket (``"specialists"``, in [0, 1]).
    n_contexts : int
        Number of context buckets (``"specialists"``), ≥ 1.

    Notes
    -----
    Streams: each replicate's generator is split with ``rng.spawn(2)``; the first child is the
    base adversary's stream, the second draws the masks (arrival rounds and bucket sets at
    reset; per round ``N`` uniforms in ``"random"`` mode, ``2N`` in ``"confidence"`` mode (the
    awake draws, then the levels), one in ``"specialists"`` mode, in round order). The losses
    therefore do not depend on the mode, and any split of the rounds into blocks gives the same
    masks. The base's oracles (e.g. ``means``) are not passed on:
    pseudo-regret is not defined for sleeping experts.

    Examples
    --------
    >>> from arena import play
    >>> from arena.players.ada_normal_hedge import AdaNormalHedge
    >>> df = play(AdaNormalHedge(), Sleeping(mode="specialists", n_contexts=3), n_actions=4,
    ...           horizon=300, metrics={"sleeping_regret": {}, "bound": {}})
    >>> last = df[df.t == 300].set_index("metric").value
    >>> bool(last["sleeping_regret"] <= last["bound:sleeping_regret"])
    True

    References
    ----------
    Luo 2016, §2.3.2. Freund, Schapire, Singer
    & Warmuth (1997), "Using and combining predictors that specialize", STOC. Blum (1997).
    """

    tags = AdversaryTags(oblivious=True, emits_confidences=True)
    parameter_constraints: ClassVar = {
        "base": [InstanceOf(str, "an oblivious adversary's registry name")],
        "base_params": [InstanceOf(Mapping, "a mapping of the base's parameters"), IsNone()],
        "mode": [OneOf(*MODES)],
        "awake_prob": [Interval(0, 1)],
        "n_contexts": [Interval(1, None, integer=True)],
    }

    def __init__(
        self,
        base: str = "bernoulli",
        base_params: dict | None = None,
        mode: str = "random",
        awake_prob: float = 0.5,
        n_contexts: int = 4,
    ):
        self.base = base
        self.base_params = base_params
        self.mode = mode
        self.awake_prob = awake_prob
        self.n_contexts = n_contexts

    def _base(self) -> ObliviousAdversary:
        """Build (once per parameter set) the base adversary and check that it is oblivious."""
        key = canonical_json([self.base, self.base_params])
        if getattr(self, "_base_key", None) != key:
            try:
                adv = registry.make("adversary", self.base, **dict(self.base_params or {}))
            except UnknownComponentError as exc:
                raise ConfigError(self.label(), "base", str(exc)) from exc
            if not (isinstance(adv, ObliviousAdversary) and adv.tags.oblivious):
                raise ConfigError(
                    self.label(),
                    "base",
                    f"{self.base!r} is adaptive; only oblivious adversaries can be wrapped",
                )
            if adv.tags.emits_confidences:
                raise ConfigError(
                    self.label(), "base", f"{self.base!r} already announces confidences"
                )
            self._base_adv = adv
            self._base_key = key
        return self._base_adv

    def declared_range(self) -> tuple[float, float]:
        return self._base().declared_range()

    def resolve_n_actions(self, requested: int | None) -> int:
        return self._base().resolve_n_actions(requested)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        a, k = self.awake_prob, self.n_contexts
        if (
            self.mode in ("random", "confidence") and a == 0
        ):  # the declaration allows 0 (for "specialists")
            message = f"must lie in (0, 1] in mode 'random', got {a}"
            raise ConfigError(self.label(), "awake_prob", message)
        if self.mode == "arrivals" and spec.horizon is None:
            message = "'arrivals' draws arrival rounds in 1..T: needs T"
            raise ConfigError(self.label(), "mode", message)
        base = self._base()
        children = [rng.spawn(2) for rng in rngs]
        base.reset(spec, [c[0] for c in children])
        self._mask_rngs = [c[1] for c in children]
        self._n_act = n = spec.n_actions
        self._n_rep = spec.n_replicates
        if self.mode == "arrivals":
            self._arrivals = np.ones((spec.n_replicates, n), dtype=np.int64)
            for r, rng in enumerate(self._mask_rngs):
                self._arrivals[r, 1:] = rng.integers(1, spec.horizon + 1, n - 1)
        elif self.mode == "specialists":
            k = int(k)
            self._cover = np.zeros((spec.n_replicates, n, k), dtype=bool)
            for r, rng in enumerate(self._mask_rngs):
                cover = rng.random((n, k)) < a
                cover[np.arange(n), np.arange(n) % k] = True
                for b in np.flatnonzero(~cover.any(axis=0)):
                    cover[b % n, b] = True
                self._cover[r] = cover

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        return self._base_adv.losses_block(t0, n)

    def confidences_block(self, t0: int, n: int) -> np.ndarray:
        out = np.zeros((self._n_rep, n, self._n_act))
        for r in range(self._n_rep):
            level = 1.0
            if self.mode == "confidence":  # per round: N awake draws, then N levels
                draws = self._mask_rngs[r].random((n, 2, self._n_act))
                u, level = draws[:, 0], 1.0 - draws[:, 1]
            elif self.mode == "random":
                u = self._mask_rngs[r].random((n, self._n_act))
            if self.mode in ("random", "confidence"):
                awake = u < self.awake_prob
                none = np.flatnonzero(~awake.any(axis=1))
                awake[none, u[none].argmin(axis=1)] = True
            elif self.mode == "arrivals":
                t = np.arange(t0, t0 + n)
                awake = t[:, None] >= self._arrivals[r][None, :]
            else:
                k = self._cover.shape[2]
                ctx = np.minimum((self._mask_rngs[r].random(n) * k).astype(np.int64), k - 1)
                awake = self._cover[r][:, ctx].T
            out[r] = np.where(awake, level, 0.0)
        return out

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"mode": "arrivals"}
        yield {"mode": "specialists", "n_contexts": 3, "awake_prob": 0.2}
        yield {"base": "fair_coin", "mode": "random", "awake_prob": 0.3}
        yield {"mode": "confidence", "awake_prob": 0.7}
