"""The neural weak learner: per-lane transcription, conformance, and a boosting game on data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.boosting.components import WeakSpec
from arena.testing import check_component
from arena.weak_learners.neural import Neural
from tests.helpers.weak_learners import assert_matches_reference, lane_rng, sanity_game


def sigmoid(a: float) -> float:
    return 1.0 / (1.0 + math.exp(-a)) if a >= 0 else math.exp(a) / (1.0 + math.exp(a))


class NeuralLane:
    """One lane, literally: h = σ(W x̃), z = v·(h, 1); backpropagation, one SGD step per example."""

    def __init__(self, spec: WeakSpec, rng, hidden: int, rate: float):
        self.task, self.bound, self.hidden, self.rate = spec.task, spec.bound, hidden, rate
        d1 = spec.n_features + 1
        self.W = (rng.standard_normal((hidden, d1)) / math.sqrt(d1)).tolist()
        self.v = (rng.standard_normal(hidden + 1) / math.sqrt(hidden + 1)).tolist()

    def forward(self, x):
        xt = [*x, 1.0]
        h = [sigmoid(sum(self.W[u][k] * xt[k] for k in range(len(xt)))) for u in range(self.hidden)]
        z = sum(self.v[u] * h[u] for u in range(self.hidden)) + self.v[self.hidden]
        return xt, h, z

    def output(self, z):
        if self.task == "classification":
            return 1.0 if z >= 0 else -1.0
        return min(max(z, -self.bound), self.bound)

    def predict(self, x):
        return self.output(self.forward(x)[2])

    def update(self, x, y, w):
        if w == 0.0:
            return
        xt, h, z = self.forward(x)
        if self.task == "classification":
            delta = -w * y * sigmoid(-y * z)
        else:
            delta = w * (self.output(z) - y)
        back = [delta * self.v[u] * h[u] * (1.0 - h[u]) for u in range(self.hidden)]
        for u in range(self.hidden):
            self.v[u] -= self.rate * delta * h[u]
            for k in range(len(xt)):
                self.W[u][k] -= self.rate * back[u] * xt[k]
        self.v[self.hidden] -= self.rate * delta


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_equals_per_lane_transcription(task):
    assert_matches_reference(
        Neural(hidden=4, rate=0.3),
        lambda spec, rng: NeuralLane(spec, rng, 4, 0.3),
        task,
        bound=0.7,
    )


def test_lanes_start_apart_and_the_seed_fixes_them():
    spec = WeakSpec("regression", 3, 4, 2)
    x = np.random.default_rng(5).standard_normal((2, 3))
    outs = []
    for _ in range(2):
        wl = Neural()
        wl.reset(spec, [[lane_rng(7, r, i) for i in range(4)] for r in range(2)])
        outs.append(wl.predict(x))
    np.testing.assert_array_equal(outs[0], outs[1])
    assert len(np.unique(outs[0])) == 8  # every (replicate, lane) its own initial network


def test_conformance_of_the_default():
    # the registry sweep (tests/arena/testing) checks the `_unit_test_params` set
    check_component(Neural())


def test_boosted_on_data_beats_the_constant_predictor():
    # one pass, 2 replicates, a 3-learner MajorityVote of default networks (10 hidden units)
    error, _ = sanity_game(Neural(), "breast_cancer")
    assert error < 0.1  # measured 0.054 (chance 0.5, the majority label errs 0.373)
    loss, mean = sanity_game(Neural(), "diabetes")
    assert loss < 0.8 * mean  # measured 0.337 per round against the mean's 0.5 in hindsight
