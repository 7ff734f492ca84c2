"""Small OCO components for the engine tests (independent of the registered players/adversaries)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from arena.oco.components import AdaptiveOCOAdversary
from arena.oco.losses import RoundData
from arena.oco.testing import GaussianClassification, GaussianData, GaussianRegression
from arena.oco.testing import ProjectedGradient as TinyOGD
from arena.spec import AdversaryTags

GaussianStream = GaussianData

__all__ = ["Contrary", "GaussianClassification", "GaussianRegression", "GaussianStream", "TinyOGD"]


class Contrary(AdaptiveOCOAdversary):
    """Adaptive classification: x_t ~ N(0, I), label y_t = −sign(ŷ_t) (+1 at ŷ = 0)."""

    name = "contrary_test"
    tags: ClassVar[AdversaryTags] = AdversaryTags(protocol="classification", oblivious=False)

    def __init__(self, loss="hinge"):
        self.loss = loss

    def declared_loss(self):
        return self.loss

    def reset(self, spec, rngs):
        self._spec = spec
        self._rngs = list(rngs)

    def features(self, t):
        self._x = np.stack([rng.standard_normal(self._spec.dim) for rng in self._rngs])
        return self._x

    def reveal(self, t, w):
        pred = np.einsum("rd,rd->r", w, self._x)
        return RoundData(x=self._x, y=np.where(pred > 0, -1.0, 1.0))
