"""A structured target-concept stream: label strings of a hidden linear model, with margin."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.params import POSITIVE, Interval
from arena.spec import AdversaryTags, GameSpec
from arena.structured.chain import ChainStructure
from arena.structured.components import StructuredAdversary

MAX_TRIES = 10_000
"""Most inputs drawn for one round before the stream gives up on finding the margin."""


class StructuredStream(StructuredAdversary):
    """Strings labelled by a hidden ``w*`` with margin γ, optionally noisy (Shalev-Shwartz 2007,
    §3 target-concept generator (iv): structured strings with a cost).

    Per replicate, ``w* ∈ ℝ^{dim}`` is drawn once (standard normal, the transition block scaled
    by ``transition_scale``, then normalized to ``‖w*‖ = 1``). Each round draws ``x_t`` with
    i.i.d. standard normal entries (m × d) until the clean answer ``y*_t = argmax_y ⟨w*,
    φ(x_t, y)⟩`` has margin γ in the cost, ``⟨w*, φ(x_t, y*) − φ(x_t, y′)⟩ ≥ γ ρ(y*, y′)`` for
    every ``y′`` (checked by loss-augmented Viterbi; ``w*`` is redrawn at reset until its
    emission rows are pairwise ``2γ`` apart, so that the margin is within reach), then replaces
    each label of ``y*_t`` by a uniform one with probability ``noise``.

    Comparator (oracle ``comparator``): ``u = w*/γ``, whose maximal loss (5.22) is 0 on every
    clean round, so with ``noise = 0`` Theorem 7 bounds the cost of Fig 5.4 by ``8X²U``
    (``U ≥ ‖u‖²/2 = 1/(2γ²)``).

    Parameters
    ----------
    n_labels, length, n_features : int
        The alphabet size k, the string length m and the per-position dimension d.
    margin : float
        γ > 0.
    noise : float
        Probability in [0, 1] that each label is replaced by a uniform one.
    transition_scale : float
        Weight (≥ 0) of the transition block of ``w*`` before normalizing.

    Notes
    -----
    Draws in round order from the replicate's stream, so any split of the rounds into chunks
    gives the same examples. A margin too large for the model raises ``RuntimeError`` after
    ``MAX_TRIES`` inputs in one round.

    Examples
    --------
    >>> from arena.game import run_game
    >>> rows = run_game("structured_self_tuned", "structured_stream", horizon=5, replicates=1,
    ...                 metrics=["structured_cost"]).rows
    >>> sorted(set(rows.metric))
    ['structured_cost']
    """

    tags: ClassVar[AdversaryTags] = AdversaryTags(
        protocol="structured", oblivious=True, oracle=frozenset({"comparator"})
    )
    parameter_constraints: ClassVar = {
        "n_labels": [Interval(2, 64, integer=True)],
        "length": [Interval(1, 1000, integer=True)],
        "n_features": [Interval(1, 10_000, integer=True)],
        "margin": [POSITIVE],
        "noise": [Interval(0, 1)],
        "transition_scale": [Interval(0, None)],
    }

    def __init__(
        self,
        n_labels: int = 3,
        length: int = 4,
        n_features: int = 3,
        margin: float = 0.1,
        noise: float = 0.0,
        transition_scale: float = 1.0,
    ):
        self.n_labels = n_labels
        self.length = length
        self.n_features = n_features
        self.margin = margin
        self.noise = noise
        self.transition_scale = transition_scale

    def structure(self) -> ChainStructure:
        return ChainStructure(int(self.n_labels), int(self.length), int(self.n_features))

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._s = self.structure()
        self._rngs = list(rngs)
        self._w = np.array([self._target(rng) for rng in self._rngs])

    def _target(self, rng: np.random.Generator) -> np.ndarray:
        # a w* whose emission rows nearly coincide cannot separate two labels by γ at any input
        # that is likely to be drawn: redraw until every two rows are 2γ apart
        k = self._s.n_labels
        for _ in range(MAX_TRIES):
            w = rng.standard_normal(self._s.dim)
            emit, _, trans = self._s.split(w)
            trans *= self.transition_scale
            w /= np.linalg.norm(w)
            gaps = [np.linalg.norm(emit[a] - emit[b]) for a in range(k) for b in range(a)]
            if min(gaps) >= 2.0 * self.margin:
                return w
        raise RuntimeError(f"no target with emission rows {2.0 * self.margin} apart")

    def comparator(self) -> np.ndarray:
        """``u = w*/γ`` per replicate, shape (R, dim)."""
        return self._w / self.margin

    def _one(self, r: int) -> tuple[np.ndarray, np.ndarray]:
        s, rng, w = self._s, self._rngs[r], self._w[r]
        m, d = s.length, s.n_features
        for _ in range(MAX_TRIES):
            x = rng.standard_normal((m, d))
            y = s.argmax(w, x)
            # margin γ in the cost: max_y′ γρ(y, y′) − ⟨w*, φ(y) − φ(y′)⟩ is 0 (at y′ = y)
            y_aug = s.argmax(w, x, augment=y, scale=self.margin)
            gap = float(w @ (s.features(x, y) - s.features(x, y_aug)))
            if self.margin * s.cost(y, y_aug) - gap <= 0.0:
                break
        else:
            raise RuntimeError(f"no input with margin {self.margin} in {MAX_TRIES} draws")
        flip = rng.random(m) < self.noise
        noisy = rng.integers(0, s.n_labels, size=m)
        return x, np.where(flip, noisy, y)

    def examples(self, t0: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        s, n_rep = self._s, len(self._rngs)
        x = np.empty((n_rep, n, s.length, s.n_features))
        y = np.empty((n_rep, n, s.length), dtype=np.int64)
        for r in range(n_rep):
            for j in range(n):
                x[r, j], y[r, j] = self._one(r)
        return x, y

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"n_labels": 2, "length": 3, "n_features": 2, "noise": 0.2}
