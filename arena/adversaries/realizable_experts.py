"""Classification with expert advice, realizable: the label is always one hidden expert's advice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.adversaries._oco_stream import StreamAdversary
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import Interval
from arena.spec import AdversaryTags, GameSpec


class RealizableExperts(StreamAdversary):
    """N experts advise ±1 on every round; the label is the advice of one of them, the target.

    Classification with expert advice in the ``classification`` protocol: the features ``x_t ∈
    {−1, +1}^N`` are the N experts' predictions ``h_i(x_t) = x_{t,i}``, shown before the player
    predicts, and the label is ``y_t = x_{t,i*}`` for a target expert ``i*`` drawn uniformly at
    reset for each replicate. The stream is realizable by the finite class ``{h_1, …, h_N}``:
    the setting of Halving (Srebro, Lecture 16; Littlestone 1988), whose mistakes are at most
    ``⌊log₂ N⌋`` here.

    Parameters
    ----------
    agreement : float
        The probability ``q`` that a non-target expert's advice equals the label, independently
        for each expert and round. ``q = ½``: fair coins, the version space halves each round in
        expectation; q near 1: experts that are rarely wrong, so consistent ones survive long and
        a majority vote errs more often.

    Notes
    -----
    Each round draws N + 1 uniforms from the replicate's stream, in round order: the label
    ``y_t = +1`` iff ``U_0 < ½``, and expert i ≠ i* agrees with it iff ``U_{i+1} < q`` (the
    target's uniform is drawn and ignored, so the draws do not depend on i*). Declared: the
    ``hinge`` loss on ℝ^N (the player's point ``w_t`` scores ``⟨w_t, x_t⟩``), the comparator
    ``e_{i*}`` (oracle ``comparator``: margin 1 on every round, hinge loss 0), and
    :meth:`realizable_coordinate`, which the Halving player reads to declare its mistake bound.

    Examples
    --------
    >>> from arena import play
    >>> df = play("halving", RealizableExperts(), n_actions=64, horizon=200, replicates=4,
    ...           checkpoints=[200], metrics=["mistakes", "bound"])
    >>> last = df.pivot_table(index="replicate", columns="metric", values="value")
    >>> bool((last["mistakes"] <= last["bound:mistakes"]).all())
    True
    >>> float(last["bound:mistakes"].iloc[0])  # ⌊log₂ 64⌋
    6.0

    References
    ----------
    Srebro, Lecture 16, "Halving" (realizable finite classes); Littlestone 1988 (the halving
    algorithm).
    """

    parameter_constraints: ClassVar = {"agreement": [Interval(0.0, 1.0)]}
    tags = AdversaryTags(
        protocol="classification", oblivious=True, oracle=frozenset({"comparator"})
    )

    def __init__(self, agreement: float = 0.5):
        self.agreement = agreement

    def resolve_dim(self, requested: int | None, horizon: int | None = None) -> int:
        dim = 16 if requested is None else int(requested)
        if dim < 1:
            raise ConfigError(self.label(), "n_actions", f"needs N ≥ 1 experts, got {dim}")
        return dim

    def declared_domain(self) -> Domain:
        return Domain("unconstrained")

    def declared_loss(self) -> str:
        return "hinge"

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._rngs = list(rngs)
        self._dim = int(spec.dim)
        self._target = np.array([int(rng.integers(self._dim)) for rng in self._rngs])
        self._start_stream()

    def realizable_coordinate(self) -> bool:
        """True: every label equals the sign of one coordinate of the features (the target)."""
        return True

    def target(self) -> np.ndarray:
        """The target expert ``i*`` of every replicate, (R,)."""
        return self._target.copy()

    def comparator(self) -> np.ndarray:
        u = np.zeros((len(self._rngs), self._dim))
        u[np.arange(len(self._rngs)), self._target] = 1.0
        return u

    def _generate(self, n: int) -> RoundData:
        n_rep, d, q = len(self._rngs), self._dim, float(self.agreement)
        x = np.empty((n_rep, n, d))
        y = np.empty((n_rep, n))
        for r, rng in enumerate(self._rngs):
            u = rng.random((n, d + 1))
            y[r] = np.where(u[:, 0] < 0.5, 1.0, -1.0)
            x[r] = np.where(u[:, 1:] < q, 1.0, -1.0) * y[r][:, None]
            x[r, :, self._target[r]] = y[r]
        return RoundData(x=x, y=y)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"agreement": 0.9}
