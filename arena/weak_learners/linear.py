"""Online linear weak learner: the perceptron, SGD or AdaGrad on a surrogate loss, per lane."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import numpy as np
from numba import njit

from arena.boosting.components import WeakLearner, WeakSpec
from arena.params import POSITIVE, OneOf
from arena.weak_learners._lanes import active_lanes, logistic_slope, sign_output, with_bias

STEPS = ("sgd", "adagrad")
"""Step rules: a fixed step size, or AdaGrad's per-coordinate steps."""

CLASSIFICATION_LOSSES = ("logistic", "hinge", "perceptron")
"""Surrogate losses of the margin ``m = θ·x̃`` in classification (regression: squared loss)."""


# ----------------------------------------------------------------------------------------------
# the compiled lane: the same rule on one lane's state arrays, for the boosters' chunk kernels


@njit(cache=True, nogil=True)
def lane_score(theta, r, lane, x):
    """``θ·x̃`` of lane ``(r, lane)`` of ``theta`` (R, L, d + 1) on ``x`` (d,), the bias last."""
    d = x.shape[0]
    acc = 0.0
    for k in range(d):
        acc += theta[r, lane, k] * x[k]
    return acc + theta[r, lane, d]


@njit(cache=True, nogil=True)
def lane_output(score, classification, bound):
    """``A(x)``: ``sign(θ·x̃)`` (+1 on a tie) in classification, else ``clip(θ·x̃, −D, D)``."""
    if classification:
        return 1.0 if score >= 0.0 else -1.0
    return min(max(score, -bound), bound)


@njit(cache=True, nogil=True)
def lane_update(theta, sq_grads, r, lane, x, score, target, weight, code, rate, bound):
    """One step of :meth:`LinearLearner.update` on lane ``(r, lane)``; ``weight = 0`` is a no-op.

    ``score`` is the lane's ``θ·x̃`` before the step; ``code`` is :meth:`LinearLearner.kernel_code`
    (``4·adagrad + loss``, loss 0/1/2 = logistic/hinge/perceptron, 3 = regression's squared loss).
    The arithmetic is the numpy path's, operation for operation.
    """
    if weight <= 0.0:
        return
    loss = code % 4
    if loss == 3:
        slope = lane_output(score, False, bound) - target
    else:
        margin = target * score
        if loss == 0:
            slope = -target * (1.0 / (1.0 + math.exp(margin)))  # expit(−m), as scipy computes it
        elif (loss == 1 and margin < 1.0) or (loss == 2 and margin <= 0.0):
            slope = -target
        else:
            slope = 0.0
    scale = weight * slope
    d = x.shape[0]
    for k in range(d + 1):
        g = scale * (x[k] if k < d else 1.0)
        if code < 4:
            theta[r, lane, k] = theta[r, lane, k] - rate * g
        else:
            sq = sq_grads[r, lane, k] + g * g
            sq_grads[r, lane, k] = sq
            if sq > 0.0:
                theta[r, lane, k] = theta[r, lane, k] - rate * g / math.sqrt(sq)


@njit(cache=True, nogil=True)
def _linear_slope(score, target, code, bound):
    """The factor ``s`` of the gradient ``s·x̃`` (:meth:`LinearLearner._gradient_scale`)."""
    loss = code % 4
    if loss == 3:
        return lane_output(score, False, bound) - target
    margin = target * score
    if loss == 0:
        return -target * (1.0 / (1.0 + math.exp(margin)))  # expit(−m), as scipy computes it
    if (loss == 1 and margin < 1.0) or (loss == 2 and margin <= 0.0):
        return -target
    return 0.0


@njit(cache=True, nogil=True)
def linear_update_row(
    theta, sq_grads, r, lane, cols, vals, score, target, weight, code, rate, bound
):
    """:func:`lane_update` over a row's entries ``(cols, vals)`` (CSR), the bias last.

    A coordinate absent from the row has ``g_k = 0``: its θ and G would not move, so it is not
    visited, and the row of all d entries does :func:`lane_update`'s operations in its order.
    """
    if weight <= 0.0:
        return
    scale = weight * _linear_slope(score, target, code, bound)
    d = theta.shape[2] - 1
    n = cols.shape[0]
    for k in range(n + 1):
        c = cols[k] if k < n else d
        g = scale * (vals[k] if k < n else 1.0)
        if code < 4:
            theta[r, lane, c] = theta[r, lane, c] - rate * g
        else:
            sq = sq_grads[r, lane, c] + g * g
            sq_grads[r, lane, c] = sq
            if sq > 0.0:
                theta[r, lane, c] = theta[r, lane, c] - rate * g / math.sqrt(sq)


class LinearLearner(WeakLearner):
    """Online linear weak learner: ``θ ∈ ℝ^{d+1}`` per lane, moved by importance-weighted steps.

    Every lane keeps ``θ_1 = 0`` on the features with a bias appended, ``x̃ = (x, 1)``, and outputs
    ``A(x) = sign(θ·x̃)`` (+1 on a tie) in classification, ``A(x) = clip(θ·x̃, −D, D)`` in
    regression (D = :attr:`WeakSpec.bound`). An update with target y and weight w > 0 takes one step
    on the gradient ``g = w·∇ℓ(θ)`` of the weighted example loss (the weight scales the step; a
    weight of 0 leaves the lane untouched):

    * classification, margin ``m = θ·x̃`` and ``y ∈ {−1, +1}``:
      ``logistic`` ``ℓ = log(1 + e^{−y m})``, ``g = −w·y·σ(−y m)·x̃``;
      ``hinge`` ``ℓ = [1 − y m]₊``, ``g = −w·y·x̃`` when ``y m < 1``, else 0;
      ``perceptron`` ``ℓ = [−y m]₊``, ``g = −w·y·x̃`` when ``y m ≤ 0`` (Rosenblatt's mistake
      rounds, ties included so that ``θ_1 = 0`` moves), else 0;
    * regression: ``ℓ = ½(A(x) − y)²`` with the clipped output in the residual,
      ``g = w·(A(x) − y)·x̃``. With the target ``y = A(x) − c`` that online gradient boosting
      passes this is exactly the gradient ``c·x̃`` of the linear loss ``c·θ·x̃`` (Beygelzimer,
      Hazan, Kale & Luo 2015, Algorithms 1–2).

    The step: ``sgd`` ``θ ← θ − η·g``; ``adagrad`` (diagonal) ``G ← G + g²``,
    ``θ_k ← θ_k − η·g_k/√G_k`` on the coordinates with ``G_k > 0`` (Duchi, Hazan & Singer 2011).
    ``sgd`` on the ``perceptron`` loss is the importance-weighted Perceptron (its predictions do not
    depend on η).

    Parameters
    ----------
    step : {"sgd", "adagrad"}
        The step rule.
    loss : {"logistic", "hinge", "perceptron"}
        The classification surrogate (regression always uses the squared loss).
    rate : float
        Step size η > 0.

    Notes
    -----
    Guarantees, per lane and for the importance-weighted losses ``w_t·ℓ_t`` it is fed: ``sgd``
    with a fixed η has regret at most ``‖u‖²/(2η) + (η/2)·Σ_t ‖g_t‖²`` against every ``u`` (the
    online-gradient-descent bound of Zinkevich 2003 with a constant step), and ``sgd`` on the
    ``perceptron`` loss makes at most ``(R/γ)²`` mistakes on data separable with margin γ
    (Novikoff 1962; Shalev-Shwartz 2007, Corollary 5), with unit weights. In regression the clip is
    outside the linear model, so these bounds are for the unclipped ``θ·x̃``; none is declared (a
    weak learner has no ``bounds`` hook). This is the stand-in for the Vowpal Wabbit default
    linear learner, an SGD variant, that Luo (2016, §3.1.5 and §3.2.5) and Beygelzimer et al.
    (2015, §6) boost.

    Examples
    --------
    >>> wl = LinearLearner(step="sgd", loss="perceptron")
    >>> lanes = [[np.random.default_rng(0), np.random.default_rng(1)]]  # R = 1, L = 2
    >>> wl.reset(WeakSpec("classification", n_features=2, n_lanes=2), lanes)
    >>> x = np.array([[1.0, -1.0]])
    >>> wl.update(x, target=np.array([[-1.0, -1.0]]), weight=np.array([[1.0, 0.0]]))
    >>> wl.predict(x).tolist()  # lane 0 learned θ = −x̃; lane 1 (weight 0) is still θ = 0
    [[-1.0, 1.0]]

    References
    ----------
    Rosenblatt (1958) (the Perceptron); Shalev-Shwartz 2007, Figure 5.1 and Corollary 5 (the
    Perceptron as conservative dual ascent); Zinkevich (2003) (online gradient descent); Duchi,
    Hazan & Singer (2011) (AdaGrad); Novikoff (1962); Luo 2016, §3.1.5 and §3.2.5, and
    Beygelzimer, Hazan, Kale & Luo 2015, §6 (linear base learners of the boosting experiments).
    """

    parameter_constraints: ClassVar = {
        "step": [OneOf(*STEPS)],
        "loss": [OneOf(*CLASSIFICATION_LOSSES)],
        "rate": [POSITIVE],
    }

    def __init__(self, step: str = "adagrad", loss: str = "logistic", rate: float = 0.5):
        self.step = step
        self.loss = loss
        self.rate = rate

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {"step": "sgd", "loss": "perceptron", "rate": 1.0}
        yield {"step": "sgd", "loss": "logistic", "rate": 0.3}
        yield {"step": "adagrad", "loss": "hinge", "rate": 0.5}

    def reset(self, spec: WeakSpec, rngs: Sequence[Sequence[np.random.Generator]]) -> None:
        self._spec = spec
        shape = (spec.n_replicates, spec.n_lanes, spec.n_features + 1)
        self._theta = np.zeros(shape)
        self._sq_grads = np.zeros(shape)  # AdaGrad's G, Σ of squared gradient coordinates

    def kernel_code(self) -> int:
        """The rule as one integer for :func:`lane_update`: ``4·[adagrad] + loss code``."""
        loss = 3 if self._spec.task == "regression" else CLASSIFICATION_LOSSES.index(self.loss)
        return 4 * STEPS.index(self.step) + loss

    def kernel_state(self) -> tuple[np.ndarray, np.ndarray]:
        """Return the state arrays ``θ`` and AdaGrad's ``G``, (R, L, d + 1) each, for a kernel.

        A compiled booster updates them in place with :func:`lane_update`, leaving them where the
        numpy path would (to rounding in the order of the dot products).
        """
        return self._theta, self._sq_grads

    def _scores(self, xt: np.ndarray) -> np.ndarray:
        return np.einsum("rlk,rk->rl", self._theta, xt)

    def _output(self, scores: np.ndarray) -> np.ndarray:
        if self._spec.task == "classification":
            return sign_output(scores)
        return np.clip(scores, -self._spec.bound, self._spec.bound)

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self._output(self._scores(with_bias(x)))

    def _gradient_scale(self, scores: np.ndarray, target: np.ndarray) -> np.ndarray:
        """The factor ``s`` of the unweighted gradient ``s·x̃`` of the example loss at θ."""
        if self._spec.task == "regression":
            return self._output(scores) - target
        margin = target * scores
        if self.loss == "logistic":
            return -target * logistic_slope(margin)
        moved = margin < 1.0 if self.loss == "hinge" else margin <= 0.0
        return np.where(moved, -target, 0.0)

    def update(self, x: np.ndarray, target: np.ndarray, weight: np.ndarray) -> None:
        xt = with_bias(x)
        target = np.asarray(target, dtype=np.float64)
        active = active_lanes(weight, self._theta.shape[:2], self.label())
        scores = self._scores(xt)
        grad = (np.asarray(weight) * self._gradient_scale(scores, target))[:, :, None] * xt[:, None]
        moves = active[:, :, None]
        if self.step == "sgd":
            self._theta = np.where(moves, self._theta - self.rate * grad, self._theta)
            return
        sq_grads = np.where(moves, self._sq_grads + grad * grad, self._sq_grads)
        with np.errstate(divide="ignore", invalid="ignore"):
            stepped = self._theta - self.rate * grad / np.sqrt(sq_grads)
        self._theta = np.where(moves & (sq_grads > 0.0), stepped, self._theta)
        self._sq_grads = sq_grads
