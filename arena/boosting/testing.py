"""Minimal boosting components for the conformance suite, doctests and protocol tests.

The suite plays every booster against these partners (never against the registered built-ins):
a one-dimensional threshold stream with label noise (classification) and a noisy linear stream
(regression), the perceptron-per-lane weak learner :class:`LaneSGD`, and the booster
:class:`MajorityVote`, which feeds every learner every example and predicts their mean vote.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from arena.boosting.components import WEAK_LEARNER_CONSTRAINTS, Booster, WeakLearner, WeakSpec
from arena.oco.components import ObliviousOCOAdversary
from arena.oco.losses import RoundData
from arena.params import Interval, IsNone
from arena.spec import AdversaryTags, GameSpec


class _UniformFeatureStream(ObliviousOCOAdversary):
    """``x_t`` uniform on ``[−1, 1]^d`` and one more uniform ``u_t`` per round for the label's
    noise, drawn in round order from the replicate's stream (any split into chunks gives the same
    examples); subclasses turn them into the label (:meth:`_labels`)."""

    def __init__(self, noise: float = 0.1):
        self.noise = noise

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._rngs, self._d = list(rngs), int(spec.dim)

    def _labels(self, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def data_block(self, t0: int, n: int) -> RoundData:
        x = np.empty((len(self._rngs), n, self._d))
        y = np.empty((len(self._rngs), n))
        for r, rng in enumerate(self._rngs):
            u = rng.random((n, self._d + 1))
            x[r] = 2.0 * u[:, : self._d] - 1.0
            y[r] = self._labels(x[r], u[:, self._d])
        return RoundData(x=x, y=y)


class ThresholdStream(_UniformFeatureStream):
    """``x_t`` uniform on ``[−1, 1]^d``, ``y_t = sign(x_{t,1})`` flipped with probability ``noise``
    (classification)."""

    name = "threshold_stream"
    tags: ClassVar[AdversaryTags] = AdversaryTags(protocol="classification", oblivious=True)
    parameter_constraints: ClassVar = {"noise": [Interval(0, 0.5)]}

    def declared_loss(self) -> str:
        return "logistic"

    def resolve_dim(self, requested: int | None, horizon: int | None = None) -> int:
        return 2 if requested is None else int(requested)

    def _labels(self, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        sign = np.where(x[:, 0] > 0.0, 1.0, -1.0)
        return np.where(u < self.noise, -sign, sign)


class LinearTargetStream(_UniformFeatureStream):
    """Regression: ``x_t`` uniform on ``[−1, 1]^d``, ``y_t = clip(x_{t,1}·|x_{t,2}| + ε, −1, 1)``
    with ``ε`` uniform on ``[−noise, noise]`` (nonlinear, so boosting a linear learner helps)."""

    name = "linear_target_stream"
    tags: ClassVar[AdversaryTags] = AdversaryTags(protocol="regression", oblivious=True)
    parameter_constraints: ClassVar = {"noise": [Interval(0, 1)]}

    def declared_loss(self) -> str:
        return "squared"

    def resolve_dim(self, requested: int | None, horizon: int | None = None) -> int:
        return 2 if requested is None else max(2, int(requested))

    def _labels(self, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        eps = self.noise * (2.0 * u - 1.0)
        return np.clip(x[:, 0] * np.abs(x[:, 1]) + eps, -1.0, 1.0)


class LaneSGD(WeakLearner):
    """A linear learner per lane: the perceptron (classification) or projected SGD (regression).

    Lane i keeps ``θ_i ∈ ℝ^{d+1}`` (a bias last), starting at a small random vector drawn from
    its own stream (so lanes differ). Classification: ``A(x) = sign(θ·x̃)`` (+1 on 0) and, when
    ``A(x) ≠ y``, ``θ ← θ + rate·weight·y·x̃``. Regression: ``A(x) = clip(θ·x̃, −D, D)`` and
    ``θ ← θ − rate·weight·(A(x) − y)·x̃``.
    """

    name = "lane_sgd"
    parameter_constraints: ClassVar = {"rate": [Interval(0, None, closed="neither")]}

    def __init__(self, rate: float = 0.1):
        self.rate = rate

    def reset(self, spec: WeakSpec, rngs: Sequence[Sequence[np.random.Generator]]) -> None:
        self._spec = spec
        d1 = spec.n_features + 1
        self._theta = np.array(
            [[0.01 * lane.standard_normal(d1) for lane in rep] for rep in rngs]
        ).reshape(spec.n_replicates, spec.n_lanes, d1)

    def _raw(self, x: np.ndarray) -> np.ndarray:
        xt = np.concatenate([x, np.ones((x.shape[0], 1))], axis=1)
        return np.einsum("rld,rd->rl", self._theta, xt), xt

    def predict(self, x: np.ndarray) -> np.ndarray:
        raw, _ = self._raw(np.asarray(x, dtype=np.float64))
        if self._spec.task == "classification":
            return np.where(raw >= 0.0, 1.0, -1.0)
        return np.clip(raw, -self._spec.bound, self._spec.bound)

    def update(self, x: np.ndarray, target: np.ndarray, weight: np.ndarray) -> None:
        x = np.asarray(x, dtype=np.float64)
        pred = self.predict(x)
        _, xt = self._raw(x)
        if self._spec.task == "classification":
            step = np.where(pred != target, self.rate * weight * target, 0.0)
        else:
            step = -self.rate * weight * (pred - target)
        self._theta += step[:, :, None] * xt[:, None, :]


class MajorityVote(Booster):
    """Feeds every weak learner every example with weight 1; predicts their mean output.

    Not a booster of the sources: the suite's partner, and the simplest ensemble (in
    classification ``ŷ ∈ [−1, 1]`` is the vote's mean, whose sign is the majority). Its weak
    learner defaults to :class:`LaneSGD` (``weak_learner=None``).
    """

    name = "majority_vote"
    tasks: ClassVar[frozenset[str]] = frozenset({"classification", "regression"})
    parameter_constraints: ClassVar = {
        **WEAK_LEARNER_CONSTRAINTS,
        "weak_learner": [*WEAK_LEARNER_CONSTRAINTS["weak_learner"], IsNone()],
    }

    def __init__(
        self,
        n_learners: int = 5,
        weak_learner: str | WeakLearner | None = None,
        weak_learner_params: dict[str, Any] | None = None,
    ):
        self.n_learners = n_learners
        self.weak_learner = weak_learner
        self.weak_learner_params = weak_learner_params

    def _weak_prototype(self) -> WeakLearner:
        if self.weak_learner is None:  # the suite's own learner (not registered)
            return LaneSGD(**dict(self.weak_learner_params or {}))
        return super()._weak_prototype()

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._learners = self.make_learners(spec, rngs)
        self._n_rep = spec.n_replicates
        self._calls = np.zeros((spec.n_replicates, self.n_learners))
        self._edge = np.zeros((spec.n_replicates, self.n_learners))
        self._classification = spec.task == "classification"

    def _votes(self, x: np.ndarray) -> np.ndarray:
        """Every learner's output on ``x``, checked: a learner under test may return any shape,
        and the suite names it rather than let numpy fail on the mean."""
        out = np.asarray(self._learners.predict(x), dtype=np.float64)
        shape = (self._n_rep, self.n_learners)
        if out.shape != shape:
            raise ValueError(
                f"weak learner {self._learners!r}: predict returned shape {out.shape}, "
                f"expected {shape} (replicates, lanes)"
            )
        return out

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self._votes(x).mean(axis=1)

    def update(self, x: np.ndarray, y: np.ndarray) -> None:
        if self._classification:
            self._edge += y[:, None] * self._votes(x)
        ones = np.ones((self._n_rep, self.n_learners))
        self._learners.update(x, np.repeat(y[:, None], self.n_learners, axis=1), ones)
        self._calls += 1.0

    def learner_totals(self) -> dict[str, np.ndarray]:
        calls = self._calls.copy()
        return {"weight": calls, "edge": self._edge.copy(), "calls": calls.copy()}
