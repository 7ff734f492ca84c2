"""Halving: the majority vote of the hypotheses consistent so far (finite class, realizable)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from arena.oco.components import OCOPlayer, game_dim
from arena.oco.losses import EXAMPLE_LOSSES, Feedback, is_sparse
from arena.players._quasi_additive import read_example
from arena.spec import GameSpec, PlayerTags

TINY = np.finfo(np.float64).tiny
"""Advice smaller than this in magnitude is read as 0 (its reciprocal would overflow)."""


def halving_bound(n_hypotheses: int) -> int:
    """Return ``⌊log₂ N⌋``, Halving's mistake bound on a stream realizable by N hypotheses.

    Examples
    --------
    >>> [halving_bound(n) for n in (1, 2, 3, 64, 100)]
    [0, 1, 1, 6, 6]
    """
    return int(n_hypotheses).bit_length() - 1


def signs(x: np.ndarray) -> np.ndarray:
    """The experts' advice ``h_i(x) = sign(x_i)`` (0 where ``|x_i| < TINY``)."""
    return np.where(x >= TINY, 1.0, np.where(x <= -TINY, -1.0, 0.0))


class Halving(OCOPlayer):
    """Halving over the N experts of classification with expert advice: the majority vote of the
    version space.

    The hypotheses are the coordinates: expert i predicts ``h_i(x_t) = sign(x_{t,i})``. The
    version space ``V_t`` holds the experts right on every round so far (``V_1`` = all N). Round
    t predicts the majority vote ``ŷ_t = Σ_{i∈V_t} h_i(x_t)`` (its sign is the label; a tie,
    ``ŷ_t = 0``, counts as a mistake, the arena's rule), then keeps ``V_{t+1} = {i ∈ V_t :
    h_i(x_t) = y_t}``. As a point of the ``classification`` protocol, ``w_{t,i} = 1/|x_{t,i}|``
    for ``i ∈ V_t`` (0 elsewhere), so that ``⟨w_t, x_t⟩`` is the vote. If the version space
    empties (the stream was not realizable), it restarts from all N experts.

    Notes
    -----
    Guarantee (Srebro, Lecture 16, "Halving"; Littlestone 1988, the halving algorithm): if
    some expert is right on every round, Halving makes at most ``⌊log₂ N⌋`` mistakes. A mistake
    (a tie included) means at least half of ``V_t`` was wrong and is removed, so after M
    mistakes ``1 ≤ |V| ≤ N/2^M``: the version space never empties and ``M ≤ log₂ N``, an
    integer. ``bounds`` declares ``⌊log₂ N⌋`` on ``mistakes`` against adversaries whose labels
    are one coordinate's sign (``realizable_coordinate()``, e.g. ``realizable_experts``) and
    nothing against others (:meth:`bounds_reason`). A round costs O(N); the state is the version
    space, N booleans per replicate. The randomized relative for non-realizable streams is
    Hedge (the experts protocol).

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("classification", 4, 5, dim=4, domain=Domain("unconstrained"),
    ...                 loss="hinge")
    >>> p = Halving()
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> x = np.array([[1.0, 1.0, -1.0, -1.0]])  # a tie: a mistake whatever the label
    >>> rd = RoundData(x=x, y=np.array([-1.0]))
    >>> p.update(feedback("hinge", 0.0, p.predict(x), rd))
    >>> p.version_space().astype(int).tolist(), p.mistakes().tolist()
    ([[0, 0, 1, 1]], [1])

    References
    ----------
    Srebro, Lecture 16, "Halving" (finite class, realizable case: log|ℋ| mistakes; the version
    space's majority vote); Littlestone 1988 (the halving algorithm and its ⌊log₂ N⌋ bound, the
    benchmark Winnow is compared with).
    """

    tags = PlayerTags(
        protocols=frozenset({"classification"}),
        randomized=False,
        domains=frozenset({"unconstrained"}),
        losses=frozenset(EXAMPLE_LOSSES),
    )

    def __init__(self):
        pass

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._n = game_dim(spec)
        self._alive = np.ones((spec.n_replicates, self._n), dtype=bool)
        self._mistakes = np.zeros(spec.n_replicates, dtype=np.int64)
        self._restarts = np.zeros(spec.n_replicates, dtype=np.int64)

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        if x is None:  # no advice shown: the version space's indicator
            return self._alive.astype(np.float64)
        x = x.densify() if is_sparse(x) else np.asarray(x, dtype=np.float64)
        mag = np.abs(x)
        inv = np.divide(1.0, mag, out=np.zeros_like(mag), where=mag >= TINY)
        return np.where(self._alive, inv, 0.0)

    def update(self, fb: Feedback) -> None:
        x, y, pred = read_example(fb)
        x = x.densify() if is_sparse(x) else x
        self._mistakes += y * pred <= 0.0
        self._alive &= signs(x) == y[:, None]
        empty = ~self._alive.any(axis=1)
        self._alive[empty] = True
        self._restarts += empty

    def version_space(self) -> np.ndarray:
        """The experts consistent so far (since the last restart), (R, N) booleans."""
        return self._alive.copy()

    def mistakes(self) -> np.ndarray:
        """Mistakes so far (R,), ties included."""
        return self._mistakes.copy()

    def restarts(self) -> np.ndarray:
        """How many times the version space emptied (R,): 0 on a realizable stream."""
        return self._restarts.copy()

    def bounds_reason(self, adversary) -> str | None:
        """Why no bound is declared: the guarantee needs labels realizable by an expert."""
        check = getattr(adversary, "realizable_coordinate", None)
        if callable(check) and check():
            return None
        return "halving declares its bound on streams realizable by one expert only"

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare ``⌊log₂ N⌋`` on ``mistakes`` (realizable streams: :meth:`bounds_reason`)."""
        return {("mistakes", math.nan): float(halving_bound(self._n))}
