"""Minimal structured components for the conformance suite, doctests and protocol tests.

The suite plays every structured player against :class:`RandomStrings` and every structured
stream against :class:`StringPerceptron` (never against the registered built-ins).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.params import Interval
from arena.spec import GameSpec
from arena.structured.chain import ChainStructure
from arena.structured.components import StructuredAdversary, StructuredPlayer


class RandomStrings(StructuredAdversary):
    """Uniform labels and standard normal inputs, drawn in round order (no target)."""

    name = "random_strings"
    parameter_constraints: ClassVar = {"n_labels": [Interval(2, 16, integer=True)]}

    def __init__(self, n_labels: int = 2):
        self.n_labels = n_labels

    def structure(self) -> ChainStructure:
        return ChainStructure(int(self.n_labels), 3, 2)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._rngs, self._s = list(rngs), self.structure()

    def examples(self, t0: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        s = self._s
        x = np.empty((len(self._rngs), n, s.length, s.n_features))
        y = np.empty((len(self._rngs), n, s.length), dtype=np.int64)
        for r, rng in enumerate(self._rngs):
            for j in range(n):
                x[r, j] = rng.standard_normal((s.length, s.n_features))
                y[r, j] = rng.integers(0, s.n_labels, size=s.length)
        return x, y


class StringPerceptron(StructuredPlayer):
    """Collins' structured Perceptron: ``θ += φ(x_t, y_t) − φ(x_t, ŷ_t)`` when ``ŷ_t ≠ y_t``."""

    name = "string_perceptron"

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._s = spec.structure
        self.theta = np.zeros((spec.n_replicates, self._s.dim))

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.stack([self._s.argmax(self.theta[r], x[r]) for r in range(len(self.theta))])

    def update(self, x: np.ndarray, y: np.ndarray, y_hat: np.ndarray) -> None:
        for r in range(len(self.theta)):
            if np.any(y[r] != y_hat[r]):
                self.theta[r] += self._s.features(x[r], y[r]) - self._s.features(x[r], y_hat[r])
