"""Metric base, the per-chunk data the engine hands to metrics, and the shared running totals."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, ClassVar, NamedTuple

import numpy as np

from arena.base import Component
from arena.errors import ConfigError
from arena.spec import GameSpec


class Block(NamedTuple):
    """One chunk of consecutive rounds of R replicates, as seen by the metrics.

    Attributes
    ----------
    probs, losses : ndarray, shape (R, n, N)
        ``p_t`` and ``l_t`` of rounds ``t0 .. t0+n-1``.
    expected : ndarray, shape (R, n)
        Expected learner loss ``p_t·l_t``.
    realized : ndarray, shape (R, n)
        Realized learner loss ``l_{t, I_t}``.
    actions : ndarray, shape (R, n)
        The drawn actions ``I_t`` (0-based expert index).
    means : ndarray, shape (R, n, N) or None
        Mean losses, when the adversary exposes them.
    t0 : int
        First round of the chunk (1-based).
    confidences : ndarray, shape (R, n, N) or None
        Confidences ``I_t`` of a sleeping / confidence-rated game.
    increments : ndarray, shape (n, R, N) or None
        The instantaneous regrets ``r_{t,i} = p_t·l_t − l_{t,i}`` in round-major order, filled by
        the engine once per chunk when an active metric sets :attr:`Metric.reads_increments`;
        read them through :func:`regret_increments`, which computes them when they are absent
        (a hand-built block, or a metric that did not declare it reads them).
    """

    probs: np.ndarray
    losses: np.ndarray
    expected: np.ndarray
    realized: np.ndarray
    actions: np.ndarray
    means: np.ndarray | None
    t0: int
    confidences: np.ndarray | None = None
    increments: np.ndarray | None = None


def regret_increments(block: Block) -> np.ndarray:
    """Return ``r_{t,i} = p_t·l_t − l_{t,i}`` of a block as a C-contiguous (n, R·N) array.

    Round-major with the replicates and experts of a round side by side, so that a per-round
    update of per-(replicate, expert) state is one long vectorized loop even when N is small.

    Examples
    --------
    >>> import numpy as np
    >>> losses = np.array([[[0.0, 1.0], [1.0, 1.0]]])  # R = 1, n = 2 rounds, N = 2
    >>> probs = np.full_like(losses, 0.5)
    >>> expected = (probs * losses).sum(axis=2)
    >>> block = Block(probs, losses, expected, expected, np.zeros((1, 2), int), None, 1)
    >>> regret_increments(block).tolist()
    [[0.5, -0.5], [0.0, 0.0]]
    """
    inc = block.increments
    if inc is None:
        inc = np.ascontiguousarray((block.expected[:, :, None] - block.losses).transpose(1, 0, 2))
    n_rep, n, n_act = block.losses.shape
    return inc.reshape(n, n_rep * n_act)


class Core:
    """Running totals every metric may read, maintained by the engine's core kernel.

    Attributes
    ----------
    t : int
        Rounds completed.
    cum_losses : ndarray (R, N)
        ``L_{t,i}``.
    learner : ndarray (R,)
        Cumulative expected loss ``Ĥ_t = Σ p_s·l_s``.
    realized : ndarray (R,)
        Cumulative realized loss ``Σ l_{s,I_s}``.
    sum_min : ndarray (R,)
        ``Σ_s min_i l_{s,i}`` (the per-round best comparator of dynamic regret).
    last_probs : ndarray (R, N)
        ``p_t`` of the last completed round.
    """

    def __init__(self, n_replicates: int, n_actions: int):
        self.t = 0
        self.cum_losses = np.zeros((n_replicates, n_actions))
        self.learner = np.zeros(n_replicates)
        self.realized = np.zeros(n_replicates)
        self.sum_min = np.zeros(n_replicates)
        self.last_probs = np.full((n_replicates, n_actions), 1.0 / n_actions)


def protocol_reason(cls: type[Metric], protocol: str) -> str | None:
    """Return why metric class ``cls`` is not computed in a game of ``protocol``, or None.

    Examples
    --------
    >>> from arena.bandit.metrics import ArmPulls
    >>> protocol_reason(ArmPulls, "experts")
    'defined for the bandit protocol only, not experts'
    >>> protocol_reason(ArmPulls, "bandit") is None
    True
    """
    only = getattr(cls, "protocols", None)
    if only is None or protocol in only:
        return None
    plural = "s" if len(only) > 1 else ""
    return f"defined for the {'/'.join(sorted(only))} protocol{plural} only, not {protocol}"


def exact_quantile_rank(eps: float, n_actions: int) -> int:
    """Return ``k = ⌈εN⌉`` computed in exact rational arithmetic from ε's shortest decimal form.

    ``math.ceil(N * eps)`` in floats is wrong for hundreds of (N, k) pairs, e.g. ``0.07 * 100``
    is ``7.000000000000001``; ``ceil(N·(j/N)) ≠ j`` for 590 pairs with N < 200 (N = 25, j = 7
    gives 8).

    Examples
    --------
    >>> exact_quantile_rank(0.07, 100), math.ceil(0.07 * 100)
    (7, 8)
    """
    return math.ceil(Fraction(repr(float(eps))) * n_actions)


class Metric(Component):
    """Base of streaming metrics.

    A metric is a component whose hyperparameter (if any) is the list of values of its ``param``
    column (ε, k or τ). ``start`` allocates O(N·params) state, ``advance`` consumes one chunk of
    rounds, ``values`` returns the snapshot ``(R, n_params)`` at the end of a chunk.
    """

    kind: ClassVar[str] = "metric"
    param_name: ClassVar[str | None] = None
    requires: ClassVar[frozenset[str]] = frozenset()
    protocols: ClassVar[frozenset[str] | None] = None
    """The protocols whose games compute it; None: every protocol that plays the experts block
    (experts and bandit). A protocol refuses the others with :func:`protocol_reason`."""
    reads_increments: ClassVar[bool] = False
    """Whether :meth:`advance` reads :func:`regret_increments`: the engine then fills
    ``Block.increments`` once per chunk for every metric, and skips that pass otherwise."""
    infinite_values: ClassVar[bool] = False
    """Whether ±inf is one of the metric's defined values (a relative error against an exact 0):
    the engine otherwise stops a game whose metric value at a checkpoint is infinite, an overflow
    that would be written as a result."""

    def param_values(self, spec: GameSpec) -> list[float]:
        """Return the values of the ``param`` column (``[nan]`` for a metric without parameter)."""
        return [math.nan]

    def applicable(self, player: Any, adversary: Any) -> str | None:
        """Return why this metric cannot be computed in this game, or None if it can."""
        provided = set(adversary.tags.oracle)
        if adversary.tags.emits_confidences:
            provided.add("confidences")
        missing = self.requires - provided
        return f"adversary exposes no {', '.join(sorted(missing))}" if missing else None

    def game_reason(self, spec: GameSpec) -> str | None:
        """Return why this metric cannot be computed in the game ``spec`` describes, or None.

        Checked before any round, after :meth:`applicable` and :meth:`param_values` (e.g. a
        comparator set that has no minimizer for the game's loss). Default: always computable.
        """
        return None

    def attach(self, player: Any, adversary: Any) -> None:
        """See the game's (reset) components; called before :meth:`start`. Default: nothing."""

    def row_keys(self, spec: GameSpec) -> list[tuple[str, float]]:
        """Return the ``(metric, param)`` label of each column of :meth:`values`."""
        return [(self.name, float(p)) for p in self.param_values(spec)]

    def start(self, spec: GameSpec) -> None:
        """Allocate the state for ``spec.n_replicates`` replicates."""
        self._spec = spec

    def advance(self, block: Block, core: Core) -> None:
        """Consume one chunk of rounds (``core`` already includes the chunk)."""

    def values(self, core: Core) -> np.ndarray:
        """Return the snapshot after the last advanced round, shape (R, n_params)."""
        raise NotImplementedError

    def _param_list(self, values, kind: type, check) -> list:
        name = self.param_name
        if values is None:
            raise ConfigError(f"metric {self.name}", name, "must be a list of values, got None")
        if isinstance(values, int | float | str):
            values = [values]
        out = []
        for v in values:
            try:
                cv = kind(v)
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"metric {self.name}", name, f"invalid value {v!r}") from exc
            if kind is int and float(v) != cv:
                raise ConfigError(f"metric {self.name}", name, f"must be an integer, got {v!r}")
            msg = check(cv)
            if msg:
                raise ConfigError(f"metric {self.name}", name, f"{msg}, got {v!r}")
            out.append(cv)
        return out
