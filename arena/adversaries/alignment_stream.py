"""A synthetic speech-like alignment stream: events of a few types spread over noisy frames."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.params import POSITIVE, Interval
from arena.spec import GameSpec
from arena.structured.alignment import AlignmentStructure
from arena.structured.components import StructuredAdversary

MAX_TRIES = 10_000
"""Most draws of the cut points for one utterance."""


class AlignmentStream(StructuredAdversary):
    """Utterances of m events over F frames, each event's frames noisy copies of its type's
    mean (Shalev-Shwartz 2007, Chapter 9's alignment task on synthetic data).

    Per replicate the P type means ``μ_p ~ separation · N(0, I_d)`` are drawn once. Each round
    draws the events (the first uniform over the P types, each next one uniform over the other
    P − 1, so that consecutive events differ as consecutive phonemes do), the m − 1 boundaries
    (distinct frames of ``1 … F−1``, sorted, redrawn until every event lasts at most L frames)
    and the frames ``x_f = μ_{e(f)} + noise · N(0, I_d)``. The answer is the events' start frames
    (:class:`~arena.structured.alignment.AlignmentStructure`, cost: the starts off by more than
    ``tolerance`` frames).

    Parameters
    ----------
    n_frames, n_events, n_types, n_features, max_duration : int
        F, m, P, d and L (``m ≤ F ≤ m·L``).
    tolerance : int
        ε of the cost, in frames.
    separation, noise : float
        The scale of the type means and of the frame noise.

    Notes
    -----
    No comparator is declared: the stream has no hidden linear model, so ``structured_cost``
    is its metric, and ``(1 − cost/(m·t))`` is the fraction of starts within ε (Table 9.1's
    measure; Tables 9.1–9.2 themselves need TIMIT and the piano recordings, which are not
    available offline).

    Examples
    --------
    >>> from arena.game import run_game
    >>> rows = run_game("structured_self_tuned", "alignment_stream", horizon=3, replicates=1).rows
    >>> sorted(set(rows.metric))
    ['structured_cost']
    """

    parameter_constraints: ClassVar = {
        "n_frames": [Interval(2, 10_000, integer=True)],
        "n_events": [Interval(2, 1000, integer=True)],
        "n_types": [Interval(2, 1000, integer=True)],
        "n_features": [Interval(1, 1000, integer=True)],
        "max_duration": [Interval(1, 10_000, integer=True)],
        "tolerance": [Interval(0, 10_000, integer=True)],
        "separation": [POSITIVE],
        "noise": [Interval(0, None)],
    }

    def __init__(
        self,
        n_frames: int = 16,
        n_events: int = 4,
        n_types: int = 3,
        n_features: int = 2,
        max_duration: int = 6,
        tolerance: int = 1,
        separation: float = 1.5,
        noise: float = 1.0,
    ):
        self.n_frames = n_frames
        self.n_events = n_events
        self.n_types = n_types
        self.n_features = n_features
        self.max_duration = max_duration
        self.tolerance = tolerance
        self.separation = separation
        self.noise = noise

    def structure(self) -> AlignmentStructure:
        if not self.n_events <= self.n_frames <= self.n_events * self.max_duration:
            raise ValueError(
                f"n_frames={self.n_frames} must lie in [n_events, n_events·max_duration] = "
                f"[{self.n_events}, {self.n_events * self.max_duration}]"
            )
        return AlignmentStructure(
            int(self.n_frames),
            int(self.n_events),
            int(self.n_types),
            int(self.n_features),
            int(self.max_duration),
            int(self.tolerance),
        )

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._s = self.structure()
        self._rngs = list(rngs)
        shape = (self.n_types, self.n_features)
        self._means = np.array([self.separation * rng.standard_normal(shape) for rng in self._rngs])

    def _one(self, r: int) -> tuple[np.ndarray, np.ndarray]:
        s, rng = self._s, self._rngs[r]
        n_f, m = s.n_frames, s.n_events
        events = np.empty(m, dtype=np.int64)
        events[0] = rng.integers(0, s.n_types)
        for i in range(1, m):
            step = rng.integers(1, s.n_types)  # any type but the previous one
            events[i] = (events[i - 1] + step) % s.n_types
        for _ in range(MAX_TRIES):
            cuts = np.sort(rng.choice(np.arange(1, n_f), size=m - 1, replace=False))
            starts = np.concatenate([[0], cuts]).astype(np.int64)
            if s.valid(starts):
                break
        else:
            raise RuntimeError(f"no boundaries with events of ≤ {s.max_duration} frames")
        kinds = np.repeat(events, np.diff(np.concatenate([starts, [n_f]])))
        x = np.zeros(s.input_shape)
        x[:, : s.n_features] = self._means[r][kinds] + self.noise * rng.standard_normal(
            (n_f, s.n_features)
        )
        x[:m, s.n_features] = events
        return x, starts

    def examples(self, t0: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        s, n_rep = self._s, len(self._rngs)
        x = np.empty((n_rep, n, *s.input_shape))
        y = np.empty((n_rep, n, s.length), dtype=np.int64)
        for r in range(n_rep):
            for j in range(n):
                x[r, j], y[r, j] = self._one(r)
        return x, y

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"n_frames": 7, "n_events": 3, "n_types": 2, "max_duration": 3, "tolerance": 0}
