"""Literal plain-Python transcriptions of online gradient boosting and its weak learners.

One replicate at a time, one learner at a time, scalars only (Beygelzimer, Hazan, Kale & Luo
2015, Algorithms 1 and 2; Luo 2016, Algorithms 9 and 10). The weak learners are transcriptions of
:class:`arena.boosting.testing.LaneSGD` (regression) and of the ``hedge_features`` learner, fed
the linear loss ``coef·v`` as the protocol's regression convention passes it.
"""

from __future__ import annotations

import math

import numpy as np


def lane_seeds(seeds: list[int]) -> list[int]:
    """The per-replicate seed ``s_r`` a booster draws from its stream ``default_rng(seed_r)``."""
    return [int(np.random.default_rng(s).integers(2**63)) for s in seeds]


class SGDLane:
    """LaneSGD's regression lane: ``θ`` (bias last), ``A(x) = clip(θ·x̃, −1, 1)``,
    ``θ ← θ − rate·coef·x̃`` for the linear loss ``coef·A``."""

    def __init__(self, seed: int, lane: int, d: int, rate: float):
        rng = np.random.default_rng([seed, lane])
        self.theta = [float(v) for v in 0.01 * rng.standard_normal(d + 1)]
        self.rate = rate

    def predict(self, x: list[float]) -> float:
        xt = [*x, 1.0]
        raw = sum(self.theta[k] * xt[k] for k in range(len(xt)))
        return max(-1.0, min(1.0, raw))

    def learn(self, x: list[float], coef: float) -> None:
        xt = [*x, 1.0]
        self.theta = [self.theta[k] - self.rate * coef * xt[k] for k in range(len(xt))]


class HedgeLane:
    """Hedge over the features clipped to [−1, 1]: ``A(x) = Σ_k p_k f_k(x)``,
    ``log w_k ← log w_k − η·coef·f_k(x)``."""

    def __init__(self, d: int, rate: float):
        self.log_w = [0.0] * d
        self.rate = rate

    def values(self, x: list[float]) -> list[float]:
        return [max(-1.0, min(1.0, v)) for v in x]

    def predict(self, x: list[float]) -> float:
        top = max(self.log_w)
        w = [math.exp(v - top) for v in self.log_w]
        f = self.values(x)
        return sum(w[k] * f[k] for k in range(len(w))) / sum(w)

    def learn(self, x: list[float], coef: float) -> None:
        f = self.values(x)
        self.log_w = [self.log_w[k] - self.rate * coef * f[k] for k in range(len(f))]


def span_reference(xs, ys, lanes, eta: float, radius: float, lipschitz: float, scale=1.0):
    """Algorithm 1 on one replicate: return the predictions and every round's σ (T, N)."""
    n = len(lanes)
    sigma = [0.0] * n
    preds, sigmas = [], []
    for t in range(len(ys)):
        x = [float(v) for v in xs[t]]
        outputs = [lane.predict(x) for lane in lanes]
        partial = [0.0]
        for i in range(n):
            raw = (1.0 - sigma[i] * eta) * partial[i] + eta * scale * outputs[i]
            partial.append(max(-radius, min(radius, raw)))
        preds.append(partial[n])
        for i in range(n):
            grad = partial[i] - float(ys[t])
            lanes[i].learn(x, grad / lipschitz)
            step = 1.0 / (lipschitz * radius * math.sqrt(t + 1))
            sigma[i] = max(0.0, min(1.0, sigma[i] + step * grad * partial[i]))
        sigmas.append(list(sigma))
    return preds, sigmas


def hull_reference(xs, ys, lanes, lipschitz: float):
    """Algorithm 2 on one replicate: return the predictions."""
    n = len(lanes)
    preds = []
    for t in range(len(ys)):
        x = [float(v) for v in xs[t]]
        outputs = [lane.predict(x) for lane in lanes]
        partial = [0.0]
        for i in range(1, n + 1):
            step = 2.0 / (i + 1)
            partial.append((1.0 - step) * partial[i - 1] + step * outputs[i - 1])
        preds.append(partial[n])
        for i in range(n):
            lanes[i].learn(x, (partial[i] - float(ys[t])) / lipschitz)
    return preds
