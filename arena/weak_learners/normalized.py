"""Normalized adaptive invariant gradient descent on the squared loss (Vowpal Wabbit's default)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import numpy as np
from numba import njit

from arena.boosting.components import WeakLearner, WeakSpec
from arena.params import POSITIVE, OneOf
from arena.weak_learners._lanes import active_lanes, sign_output, with_bias

OUTPUTS = ("score", "sign")
"""What a lane answers in classification: its clipped score (a confidence) or the score's sign."""

X_MIN = 1.084202e-19
"""Smallest ``|x|`` the normalizer sees: a smaller non-zero feature counts as ``±X_MIN``."""

TAYLOR_BELOW = 1e-6
"""Below this ``η·w·p`` the invariant step ``(1 − e^{−2ηwp})/p`` is replaced by ``2ηw``."""

SUM_NORM, TOTAL, LOW, HIGH = 0, 1, 2, 3
"""Columns of a lane's scalar statistics: ``Σ w·‖x/s‖²``, ``Σ w``, the label range seen."""


# ----------------------------------------------------------------------------------------------
# the compiled lane: one lane's prediction and update over a row's non-zero entries


@njit(cache=True, nogil=True)
def _normalized_score(theta, r, lane, cols, vals):
    """``θ·x̃`` of lane ``(r, lane)`` over the row's entries ``(cols, vals)``, the bias last."""
    d = theta.shape[2] - 1
    acc = 0.0
    for k in range(cols.shape[0]):
        v = vals[k]
        if v != 0.0:
            acc += theta[r, lane, cols[k]] * v
    return acc + theta[r, lane, d]


@njit(cache=True, nogil=True)
def _normalized_output(stats, r, lane, score, sign):
    """The lane's answer: ``clip(score, lo, hi)`` over the labels seen, or its sign (+1 on 0)."""
    if sign:
        return 1.0 if score >= 0.0 else -1.0
    return min(max(score, stats[r, lane, LOW]), stats[r, lane, HIGH])


@njit(cache=True, nogil=True)
def _normalized_update(theta, sq_grads, scale, stats, r, lane, cols, vals, score, y, w, rate):
    """One step of :meth:`NormalizedLinear.update` on lane ``(r, lane)``; ``w = 0`` is a no-op.

    ``(cols, vals)`` are the row's entries (zeros are skipped, as absent features); ``score``
    is the lane's ``θ·x̃`` before the step. The arithmetic is the numpy path's, in the order of
    the row's columns, then the bias.
    """
    if w <= 0.0:
        return
    d1 = theta.shape[2]
    d = d1 - 1
    lo = min(stats[r, lane, LOW], y)
    hi = max(stats[r, lane, HIGH], y)
    stats[r, lane, LOW] = lo
    stats[r, lane, HIGH] = hi
    p = min(max(score, lo), hi)
    if p == y:
        return
    g2 = w * 4.0 * (p - y) * (p - y)
    norm_x = 0.0
    per_update = 0.0
    n = cols.shape[0]
    for k in range(n + 1):
        if k < n:
            v = vals[k]
            if v == 0.0:
                continue
            c = cols[k]
        else:
            v = 1.0
            c = d
        x2 = v * v
        a = abs(v)
        if a < X_MIN:
            x2 = X_MIN * X_MIN
            a = X_MIN
        sq = sq_grads[r, lane, c] + g2 * x2
        sq_grads[r, lane, c] = sq
        s = scale[r, lane, c]
        if a > s:
            if s > 0.0:
                theta[r, lane, c] = theta[r, lane, c] * (s / a)
            s = a
            scale[r, lane, c] = a
        norm_x += x2 / (s * s)
        decay = 1.0 / (math.sqrt(sq) * s)
        scale[r, lane, d1 + c] = decay  # VW's "spare" slot: read again by the step below
        per_update += x2 * decay
    sum_norm = stats[r, lane, SUM_NORM] + w * norm_x
    total = stats[r, lane, TOTAL] + w
    stats[r, lane, SUM_NORM] = sum_norm
    stats[r, lane, TOTAL] = total
    multiplier = math.sqrt(total / sum_norm)
    per_update *= multiplier
    step = rate * w
    if step * per_update < TAYLOR_BELOW:
        update = 2.0 * (y - p) * step
    else:
        update = (y - p) * (1.0 - math.exp(-2.0 * step * per_update)) / per_update
    update *= multiplier
    for k in range(n + 1):
        if k < n:
            v = vals[k]
            if v == 0.0:
                continue
            c = cols[k]
        else:
            v = 1.0
            c = d
        theta[r, lane, c] = theta[r, lane, c] + update * v * scale[r, lane, d1 + c]


class NormalizedLinear(WeakLearner):
    """Vowpal Wabbit's default learner per lane: normalized, adaptive, invariant squared-loss steps.

    Each lane keeps a linear model ``θ`` on ``x̃ = (x, 1)`` (the bias is a feature of its own, VW's
    constant feature, updated like any other), and per coordinate the sum of squared gradients
    ``G_k`` and the largest ``|x_k|`` seen, ``s_k``; per lane the importance-weighted sums
    ``N = Σ w·Σ_k x_k²/s_k²`` and ``W = Σ w``, and the range ``[lo, hi]`` of the labels seen
    (``lo = min(0, labels)``, ``hi = max(0, labels)``). A feature equal to 0 is absent: nothing of
    its coordinate is read or moved. It outputs ``p = clip(θ·x̃, lo, hi)`` (``output="score"``, a
    confidence in ``[−1, 1]`` in classification, as VW's boosting reduction reads its learners)
    or ``sign(θ·x̃)`` (``output="sign"``, +1 on a tie). An update with label y and importance
    weight w > 0 first widens ``[lo, hi]`` to y and recomputes ``p``; when ``p ≠ y`` it takes the
    step of Ross, Mineiro & Langford (2013), Algorithm 2 (NAG, ``p = 1/2``) with the importance-
    invariant squared-loss update of Karampatziakis & Langford (2011):

    1. for each present coordinate: ``G_k ← G_k + 4w(p − y)²x_k²``; if ``|x_k| > s_k`` then
       ``θ_k ← θ_k·s_k/|x_k|`` (when ``s_k > 0``: the weight is rescaled as if the new scale had
       been the old one) and ``s_k ← |x_k|``; ``d_k = 1/(√G_k·s_k)`` (kept, as VW keeps it in its
       spare slot, for step 4);
    2. ``N ← N + w·Σ_k x_k²/s_k²``, ``W ← W + w``, ``μ = √(W/N)`` (the normalizing multiplier),
       ``h = μ·Σ_k x_k² d_k`` (the prediction's change per unit update);
    3. ``u = μ·(y − p)(1 − e^{−2ηwh})/h`` (``u = μ·2(y − p)ηw`` when ``ηwh < 10⁻⁶``): the limit of
       infinitely many infinitesimal steps of total weight w, which moves the prediction from p
       toward y without passing it;
    4. ``θ_k ← θ_k + u·x_k·d_k`` on the present coordinates.

    A zero weight leaves the lane untouched; ``p = y`` moves only the label range. This is VW's
    ``gd.cc`` with its defaults ``--adaptive --normalized --invariant``, learning rate η = 0.5,
    ``power_t`` = 0.5 (so ``G_k^{−power_t} = 1/√G_k``) and the squared loss, whose prediction is
    clipped to the labels seen. VW computes in float32 and this learner in float64: on the same
    stream their scores agree to VW's rounding (``tests/weak_learners/test_normalized.py`` pins
    VW 9.11.9's own predictions; ``benchmarks/vw_learner_check.py`` re-measures).

    Parameters
    ----------
    rate : float
        Learning rate η > 0 (VW's ``-l``, default 0.5).
    output : {"score", "sign"}
        What a lane answers in classification (regression always answers the clipped score,
        also clipped to ``[−D, D]``).

    Notes
    -----
    The normalized update makes the predictions invariant to rescaling any feature by a
    constant, and the invariant update makes one step with weight w the same as w steps with
    weight 1 in the limit of small steps; Ross et al. (2013, Theorem 2) bound the regret of the
    normalized adaptive update on the scale-free class. No bound is declared (a weak learner has
    no ``bounds`` hook). Weights of all sizes are fed as they come: unlike AdaGrad, this rule is
    not invariant to scaling all of a lane's importance weights by one constant, which is why
    ``online_bbm`` over it passes VW's weights (``mode="potential"``).

    Examples
    --------
    >>> wl = NormalizedLinear()
    >>> wl.reset(WeakSpec("classification", n_features=2, n_lanes=2), [[None, None]])
    >>> x = np.array([[2.0, 0.0]])
    >>> wl.update(x, target=np.array([[1.0, -1.0]]), weight=np.array([[1.0, 0.0]]))
    >>> wl.predict(x).round(6).tolist()  # lane 0: μ = √(1/2), θ = μu(2/8, 1/2); lane 1 untouched
    [[0.506931, 0.0]]

    References
    ----------
    Ross, Mineiro & Langford 2013, Algorithm 2 and §4 (normalized adaptive gradient descent);
    Karampatziakis & Langford 2011, §3 and Table 1 (importance-invariant updates, the squared
    loss); Duchi, Hazan & Singer 2011 (the adaptive part); Luo 2016, §3.1.5 and Beygelzimer, Kale
    & Luo 2015, §5 (the boosting experiments ran over this learner in Vowpal Wabbit).
    """

    parameter_constraints: ClassVar = {"rate": [POSITIVE], "output": [OneOf(*OUTPUTS)]}

    def __init__(self, rate: float = 0.5, output: str = "score"):
        self.rate = rate
        self.output = output

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {"rate": 0.5, "output": "sign"}
        yield {"rate": 1.0, "output": "score"}

    def answers_labels(self) -> bool:
        """Whether a classification lane answers ±1 (``output="sign"``) rather than a score."""
        return self.output == "sign"

    def reset(self, spec: WeakSpec, rngs: Sequence[Sequence[np.random.Generator]]) -> None:
        self._spec = spec
        shape = (spec.n_replicates, spec.n_lanes, spec.n_features + 1)
        self._theta = np.zeros(shape)
        self._sq_grads = np.zeros(shape)  # G_k
        # s_k, then the step's factor d_k = 1/(√G_k·s_k) of the last update (VW's spare slot)
        self._scale = np.zeros((*shape[:2], 2 * shape[2]))
        self._stats = np.zeros((spec.n_replicates, spec.n_lanes, 4))  # N, W, lo, hi

    def kernel_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``θ``, ``G`` (R, L, d + 1), ``s`` and ``d`` side by side (R, L, 2(d + 1)) and the lanes'
        statistics (R, L, 4), for a kernel (which updates them in place)."""
        return self._theta, self._sq_grads, self._scale, self._stats

    def _sign(self) -> bool:
        return self._spec.task == "classification" and self.output == "sign"

    def _clip(self, score: np.ndarray) -> np.ndarray:
        lo, hi = self._stats[:, :, LOW], self._stats[:, :, HIGH]
        if self._spec.task == "regression":
            lo, hi = np.maximum(lo, -self._spec.bound), np.minimum(hi, self._spec.bound)
        return np.minimum(np.maximum(score, lo), hi)

    def _scores(self, xt: np.ndarray) -> np.ndarray:
        return np.einsum("rlk,rk->rl", self._theta, xt)

    def predict(self, x: np.ndarray) -> np.ndarray:
        scores = self._scores(with_bias(x))
        return sign_output(scores) if self._sign() else self._clip(scores)

    def update(self, x: np.ndarray, target: np.ndarray, weight: np.ndarray) -> None:
        xt = with_bias(x)
        y = np.asarray(target, dtype=np.float64)
        w = np.asarray(weight, dtype=np.float64)
        active = active_lanes(w, self._theta.shape[:2], self.label())
        scores = self._scores(xt)
        stats = self._stats
        stats[:, :, LOW] = np.where(active, np.minimum(stats[:, :, LOW], y), stats[:, :, LOW])
        stats[:, :, HIGH] = np.where(active, np.maximum(stats[:, :, HIGH], y), stats[:, :, HIGH])
        p = np.minimum(np.maximum(scores, stats[:, :, LOW]), stats[:, :, HIGH])
        moves = active & (p != y)  # (R, L)
        present = (xt != 0.0)[:, None, :] & moves[:, :, None]  # (R, L, d + 1)
        a = np.maximum(np.abs(xt), X_MIN)[:, None, :]
        x2 = a * a
        g2 = w * 4.0 * (p - y) ** 2
        self._sq_grads = np.where(present, self._sq_grads + g2[:, :, None] * x2, self._sq_grads)
        d1 = self._theta.shape[2]
        s = self._scale[:, :, :d1]
        grows = present & (a > s)
        with np.errstate(divide="ignore", invalid="ignore"):
            rescaled = self._theta * (s / a)
            self._theta = np.where(grows & (s > 0.0), rescaled, self._theta)
            s = np.where(grows, a, s)
            decay = np.where(present, 1.0 / (np.sqrt(self._sq_grads) * s), 0.0)
            norm_x = np.where(present, x2 / (s * s), 0.0).sum(axis=2)
        self._scale[:, :, :d1] = s
        self._scale[:, :, d1:] = np.where(present, decay, self._scale[:, :, d1:])
        per_update = (x2 * decay).sum(axis=2)
        stats[:, :, SUM_NORM] = np.where(
            moves, stats[:, :, SUM_NORM] + w * norm_x, stats[:, :, SUM_NORM]
        )
        stats[:, :, TOTAL] = np.where(moves, stats[:, :, TOTAL] + w, stats[:, :, TOTAL])
        with np.errstate(divide="ignore", invalid="ignore"):
            multiplier = np.sqrt(stats[:, :, TOTAL] / stats[:, :, SUM_NORM])
            per_update = per_update * multiplier
            step = self.rate * w
            exact = (y - p) * (1.0 - np.exp(-2.0 * step * per_update)) / per_update
        update = np.where(step * per_update < TAYLOR_BELOW, 2.0 * (y - p) * step, exact)
        update = np.where(moves, update * multiplier, 0.0)
        moved = self._theta + update[:, :, None] * xt[:, None] * decay
        self._theta = np.where(present, moved, self._theta)
