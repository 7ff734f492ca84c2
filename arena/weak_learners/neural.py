"""A one-hidden-layer sigmoidal network trained by online SGD, per lane."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import numpy as np
from scipy.special import expit

from arena.base import Footprint, shape_text
from arena.boosting.components import WeakLearner, WeakSpec
from arena.params import POSITIVE, Interval
from arena.weak_learners._lanes import active_lanes, logistic_slope, sign_output, with_bias


class Neural(WeakLearner):
    """Two-layer network, H sigmoid hidden units, one online SGD step per weighted example.

    With ``x̃ = (x, 1)`` and ``h̃ = (h, 1)`` (biases last), each lane computes
    ``h = σ(W x̃)`` (``W ∈ ℝ^{H×(d+1)}``, ``σ(a) = 1/(1 + e^{−a})``) and the score
    ``z = v·h̃`` (``v ∈ ℝ^{H+1}``), and outputs ``sign(z)`` (+1 on a tie) in classification,
    ``clip(z, −D, D)`` in regression. Lane i of replicate r draws its initial weights from its
    own stream: ``W`` with entries ``N(0, 1)/√(d+1)``, then ``v`` with entries ``N(0, 1)/√(H+1)``
    (so lanes differ, are independent and are fixed by the seed).

    An update with target y and weight w > 0 takes one gradient step of size η on the weighted
    example loss, back-propagated through the current weights: with ``δ = ∂(w·ℓ)/∂z``,
    ``v ← v − η·δ·h̃`` and ``W ← W − η·(δ·v_{1:H} ⊙ h ⊙ (1 − h)) x̃ᵀ`` (both gradients at the
    weights before the step), where

    * classification: the logistic loss ``log(1 + e^{−y z})``, ``δ = −w·y·σ(−y z)``;
    * regression: the squared loss ``½(A(x) − y)²`` with the clipped output in the residual,
      ``δ = w·(A(x) − y)`` (online gradient boosting's target ``y = A(x) − c`` makes it the
      linear loss ``c·z``'s gradient; Beygelzimer, Hazan, Kale & Luo 2015, Algorithms 1–2).

    A weight of exactly 0 leaves the lane untouched.

    Parameters
    ----------
    hidden : int
        H, hidden units (the experiments use 10).
    rate : float
        SGD step size η > 0.

    Notes
    -----
    No guarantee: the loss is not convex in (W, v). This is the "two-layer sigmoidal neural
    network with 10 hidden units" that Luo (2016, §3.2.5) and Beygelzimer et al. (2015, §6) boost;
    their step size and initialization are not given, so these are ours.

    Examples
    --------
    >>> wl = Neural(hidden=3, rate=0.5)
    >>> lanes = [[np.random.default_rng(0), np.random.default_rng(1)]]  # R = 1, L = 2
    >>> wl.reset(WeakSpec("regression", n_features=1, n_lanes=2, bound=2.0), lanes)
    >>> x, y = np.array([[1.0]]), np.array([[1.5, 1.5]])
    >>> first = wl.predict(x)
    >>> for _ in range(20):
    ...     wl.update(x, y, np.array([[1.0, 0.0]]))
    >>> after = wl.predict(x)  # lane 0 moved towards 1.5; lane 1 (weight 0) did not move
    >>> bool(abs(after[0, 0] - 1.5) < abs(first[0, 0] - 1.5)), bool(after[0, 1] == first[0, 1])
    (True, True)

    References
    ----------
    Luo 2016, §3.2.5, and Beygelzimer, Hazan, Kale & Luo 2015, §6 (the neural-network base
    learner of the regression experiments).
    """

    parameter_constraints: ClassVar = {
        "hidden": [Interval(1, None, integer=True)],
        "rate": [POSITIVE],
    }

    def __init__(self, hidden: int = 10, rate: float = 0.1):
        self.hidden = hidden
        self.rate = rate

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {"hidden": 3, "rate": 0.3}

    def footprint(self, spec: WeakSpec) -> Footprint:
        """Per lane, an h × (d + 1) first layer (and the update's temporaries of that shape)."""
        n_rep, lanes = int(spec.n_replicates), int(spec.n_lanes)
        h, d1 = int(self.hidden), int(spec.n_features) + 1
        return Footprint(
            memory=8 * 3 * n_rep * lanes * (h * d1 + h + 1),
            work=8 * n_rep * lanes * h * d1,
            parameter="hidden",
            what=f"hidden={h}: {lanes} lanes of {shape_text(n_rep, h, d1)} first layers",
        )

    def reset(self, spec: WeakSpec, rngs: Sequence[Sequence[np.random.Generator]]) -> None:
        self._spec = spec
        h, d1 = int(self.hidden), spec.n_features + 1
        first = np.empty((spec.n_replicates, spec.n_lanes, h, d1))
        second = np.empty((spec.n_replicates, spec.n_lanes, h + 1))
        for r, replicate in enumerate(rngs):
            for i, lane in enumerate(replicate):
                first[r, i] = lane.standard_normal((h, d1)) / np.sqrt(d1)
                second[r, i] = lane.standard_normal(h + 1) / np.sqrt(h + 1)
        self._first, self._second = first, second

    def _forward(self, xt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hidden = expit(np.einsum("rlhk,rk->rlh", self._first, xt))
        score = np.einsum("rlh,rlh->rl", self._second[:, :, :-1], hidden) + self._second[:, :, -1]
        return hidden, score

    def _output(self, score: np.ndarray) -> np.ndarray:
        if self._spec.task == "classification":
            return sign_output(score)
        return np.clip(score, -self._spec.bound, self._spec.bound)

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self._output(self._forward(with_bias(x))[1])

    def update(self, x: np.ndarray, target: np.ndarray, weight: np.ndarray) -> None:
        xt = with_bias(x)
        target = np.asarray(target, dtype=np.float64)
        weight = np.asarray(weight, dtype=np.float64)
        active = active_lanes(weight, self._second.shape[:2], self.label())
        hidden, score = self._forward(xt)
        if self._spec.task == "classification":
            delta = -weight * target * logistic_slope(target * score)
        else:
            delta = weight * (self._output(score) - target)
        hidden1 = np.concatenate([hidden, np.ones((*hidden.shape[:2], 1))], axis=2)
        grad_second = delta[:, :, None] * hidden1
        back = delta[:, :, None] * self._second[:, :, :-1] * hidden * (1.0 - hidden)
        grad_first = back[:, :, :, None] * xt[:, None, None, :]
        self._second = np.where(
            active[:, :, None], self._second - self.rate * grad_second, self._second
        )
        self._first = np.where(
            active[:, :, None, None], self._first - self.rate * grad_first, self._first
        )
