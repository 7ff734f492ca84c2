"""The binary-search threshold adversary: VC dimension 1, yet ``log₂ n`` forced mistakes.

Shalev-Shwartz 2007, Appendix B.2, Example 6, with a corrected query and interval updates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.errors import ConfigError
from arena.oco.components import AdaptiveOCOAdversary
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import OneOf
from arena.spec import AdversaryTags, GameSpec

EMBEDDINGS = ("thermometer", "one_hot")


def embed(points: np.ndarray, n: int, embedding: str) -> np.ndarray:
    """Return the features ``φ(x)`` of points ``x ∈ [n]`` (any shape), shape (..., n).

    ``thermometer``: ``φ(x)_j = 1{x ≤ j}``; ``one_hot``: ``φ(x) = e_x`` (j, x are 1-based).

    Examples
    --------
    >>> embed(np.array([1, 3]), 3, "thermometer").tolist()
    [[1.0, 1.0, 1.0], [0.0, 0.0, 1.0]]
    """
    j = np.arange(1, n + 1)
    pts = np.asarray(points)[..., None]
    if embedding == "thermometer":
        return (pts <= j).astype(np.float64)
    return (pts == j).astype(np.float64)


def threshold_separator(i: np.ndarray, n: int, embedding: str) -> np.ndarray:
    """Return ``u_i`` with ``⟨u_i, φ(x)⟩ = h_i(x)`` (= +1 iff ``x ≤ i``) for every ``x ∈ [n]``.

    ``thermometer``: ``u_i = 2e_i − e_n`` (``u_n = e_n``), since ``φ(x)_n = 1``;
    ``one_hot``: ``u_i = Σ_x h_i(x) e_x``. ``i`` has any shape; the result has shape (..., n).

    Examples
    --------
    >>> u = threshold_separator(np.array(2), 4, "thermometer")
    >>> (embed(np.arange(1, 5), 4, "thermometer") @ u).tolist()
    [1.0, 1.0, -1.0, -1.0]
    """
    i = np.asarray(i)
    j = np.arange(1, n + 1)
    if embedding == "thermometer":
        u = 2.0 * (j == i[..., None]) - 1.0 * (j == n)
        return u.astype(np.float64)
    return np.where(j <= i[..., None], 1.0, -1.0)


class ThresholdSearch(AdaptiveOCOAdversary):
    """Query the midpoint of the thresholds still consistent, and reveal the label that errs.

    Parameters
    ----------
    embedding : {"thermometer", "one_hot"}
        How a point ``x ∈ [n]`` becomes the feature vector ``x_t ∈ ℝ^n`` the learner sees
        (``d = n``, the game's ``n_actions``). ``thermometer``: ``φ(x)_j = 1{x ≤ j}``;
        ``one_hot``: ``φ(x) = e_x``. Both make every threshold an exact linear function:
        ``h_i(x) = ⟨u_i, φ(x)⟩`` (margin 1; :func:`threshold_separator`). The declared gradient
        bound is 1 for ``one_hot``; none for ``thermometer`` (``‖φ(1)‖ = √n``, and the engine
        asks before the game fixes n).

    Notes
    -----
    ``X = [n]`` and ``H = {h_i(x) = +1 iff x ≤ i : i ∈ [n]}`` (VC dimension 1). The adversary keeps
    the interval ``[l, r]`` of thresholds consistent with every label so far (``l = 1, r = n``
    at the start). While ``l < r`` (the forcing phase) it queries

    ``x_t = l + ⌊(r − l + 1)/2⌋``

    and, reading the learner's ``ŷ_t = ⟨w_t, φ(x_t)⟩``: if ``ŷ_t > 0`` (the learner says +1) it
    reveals ``y_t = −1`` and sets ``r ← x_t − 1``; otherwise (``ŷ_t ≤ 0``, the learner says −1)
    it reveals ``+1`` and sets ``l ← x_t``. Both halves are non-empty, so ``[l, r]`` never
    empties (the labels stay realizable by ``h_l``) and every forcing round is a mistake
    (``y_t ŷ_t ≤ 0``). For ``n = 2^m`` the interval halves exactly and the phase lasts ``m``
    rounds; for other ``n`` it lasts between ``⌊log₂ n⌋`` and ``⌈log₂ n⌉`` rounds (the larger half
    has ``⌈s/2⌉`` thresholds). Once ``l = r`` the target ``h_l`` is determined; from then on the
    adversary cycles through ``X`` (``x_t = ((t − 1) mod n) + 1``) and reveals ``y_t = h_l(x_t)``.

    The loss is the hinge ``[1 − y⟨w, φ(x)⟩]₊``. Declared (:meth:`lower_bounds`, per
    replicate, ``F_t`` = forcing rounds so far, ``= min(t, log₂ n)`` for ``n = 2^m``):

    * ``mistakes ≥ F_t`` (``≥ min(t, ⌊log₂ n⌋)`` for every ``n``);
    * ``regret ≥ F_t`` and ``comparator_regret`` (param 1) ``≥ F_t``: the comparator
      ``u_l`` (:meth:`comparator`, the separator of ``h_l``) has hinge loss 0 on every round,
      so the best fixed ``u`` has loss 0, and each forcing round costs the learner ``≥ 1``.

    :meth:`comparator` returns ``u_l`` for the current ``l``; every threshold in ``[l, r]`` is
    consistent with the labels so far, and after the forcing phase ``h_l`` is the only one. The
    declared ``comparator_regret`` bound after round ``t`` is against the comparator returned
    after round ``t``; since ``h_l`` stays consistent with every earlier label, it equals the
    bound against the final comparator.

    Corrected from the source: Example 6 prints the query ``(r − l + 1)/2 + 1``, which ignores
    ``l``, and updates ``r ← x_t``, ``l ← x_t + 1``, which are inconsistent with
    ``h_i(x) = [x ≤ i]``.

    Examples
    --------
    >>> adv = ThresholdSearch()
    >>> spec = GameSpec("classification", 8, 4, dim=8, loss="hinge")
    >>> adv.reset(spec, [None])
    >>> w = np.zeros((1, 8))  # ŷ = 0: the learner always says −1
    >>> for t in (1, 2, 3, 4):
    ...     x = adv.features(t)
    ...     print(t, adv.query.tolist(), float(adv.reveal(t, w).y[0]), adv.interval.tolist())
    1 [5] 1.0 [[5, 8]]
    2 [7] 1.0 [[7, 8]]
    3 [8] 1.0 [[8, 8]]
    4 [4] 1.0 [[8, 8]]

    References
    ----------
    Shalev-Shwartz 2007, Appendix B.2: Example 6 and Theorem 8 (VC(H) ≤ M).
    """

    parameter_constraints: ClassVar = {"embedding": [OneOf(*EMBEDDINGS)]}
    comparator_moves = True  # the comparator is built from the player's answers
    tags = AdversaryTags(
        protocol="classification", oblivious=False, oracle=frozenset({"comparator"})
    )

    def __init__(self, embedding: str = "thermometer"):
        self.embedding = embedding

    def resolve_dim(self, requested: int | None) -> int:
        return 16 if requested is None else int(requested)

    def declared_domain(self) -> Domain:
        return Domain("unconstrained")

    def declared_loss(self) -> str:
        return "hinge"

    def gradient_bound(self) -> float | None:
        # |ℓ'| ≤ 1; one-hot: ‖φ(x)‖ = 1. Thermometer: ‖φ(1)‖ = √n, and n = d is only fixed by the
        # game (the engine asks before reset), so no bound is declared
        return 1.0 if self.embedding == "one_hot" else None

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        n = spec.dim if spec.dim is not None else spec.n_actions
        if n < 2:
            raise ConfigError(self.label(), "n_actions", f"needs n = d ≥ 2 points, got {n}")
        self._n, self._n_rep = int(n), spec.n_replicates
        self._l = np.ones(self._n_rep, dtype=np.int64)
        self._r = np.full(self._n_rep, self._n, dtype=np.int64)
        self._forced = np.zeros(self._n_rep, dtype=np.int64)
        self._q = np.zeros(self._n_rep, dtype=np.int64)
        self._q_round = 0

    @property
    def query(self) -> np.ndarray:
        """The points ``x_t ∈ [n]`` queried this round, shape (R,)."""
        return self._q.copy()

    @property
    def interval(self) -> np.ndarray:
        """The consistent thresholds ``[l, r]`` of every replicate, shape (R, 2)."""
        return np.stack([self._l, self._r], axis=1)

    def _queries(self, t: int) -> np.ndarray:
        forcing = self._l < self._r
        mid = self._l + (self._r - self._l + 1) // 2
        cycle = (t - 1) % self._n + 1
        return np.where(forcing, mid, cycle)

    def features(self, t: int) -> np.ndarray:
        self._q = self._queries(t)
        self._q_round = t
        return embed(self._q, self._n, self.embedding)

    def reveal(self, t: int, w: np.ndarray) -> RoundData:
        if self._q_round != t:
            self.features(t)
        q = self._q
        x = embed(q, self._n, self.embedding)
        yhat = np.einsum("...i,...i->...", x, np.asarray(w, dtype=np.float64))
        forcing = self._l < self._r
        says_plus = yhat > 0.0
        y = np.where(forcing, np.where(says_plus, -1.0, 1.0), np.where(q <= self._l, 1.0, -1.0))
        self._r = np.where(forcing & says_plus, q - 1, self._r)
        self._l = np.where(forcing & ~says_plus, q, self._l)
        self._forced += forcing
        return RoundData(x=x, y=y)

    def comparator(self) -> np.ndarray:
        return threshold_separator(self._l, self._n, self.embedding)

    def lower_bounds(self, t: int, player=None) -> dict[tuple[str, float], np.ndarray]:
        forced = self._forced.astype(np.float64)
        return {
            ("mistakes", math.nan): forced,
            ("regret", math.nan): forced.copy(),
            ("comparator_regret", 1.0): forced.copy(),
        }

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"embedding": "one_hot"}
