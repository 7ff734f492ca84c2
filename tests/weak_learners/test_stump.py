"""The stump weak learner: per-lane transcription, conformance, and a boosting game on data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.boosting.components import WeakSpec
from arena.testing import check_component
from arena.weak_learners.stump import Stump
from tests.helpers.weak_learners import assert_matches_reference, sanity_game


class ClassificationStumpLane:
    """One lane, literally: thresholds from the first K weighted examples, exact weighted errors,
    the least-error (feature, threshold, sign) in the order j, k, + before −."""

    def __init__(self, spec: WeakSpec, rng, n_thresholds: int):
        self.d, self.k = spec.n_features, n_thresholds
        self.thresholds: list[list[float]] = []  # one x per candidate
        self.errors: list[list[float]] = []  # errors[k][j] = E_{j,k,+}
        self.kept: list[tuple[list[float], float, float]] = []
        self.total = 0.0

    @staticmethod
    def stump(value, threshold, sign):
        return sign if value >= threshold else -sign

    def predict(self, x):
        if not self.thresholds:
            return 1.0
        best, choice = math.inf, None
        for j in range(self.d):
            for k in range(len(self.thresholds)):
                for sign in (1.0, -1.0):
                    e = self.errors[k][j] if sign > 0 else self.total - self.errors[k][j]
                    if e < best:
                        best, choice = e, (j, k, sign)
        j, k, sign = choice
        return self.stump(x[j], self.thresholds[k][j], sign)

    def update(self, x, y, w):
        if w == 0.0:
            return
        if len(self.thresholds) < self.k:
            errors = [0.0] * self.d
            for xs, ys, ws in self.kept:
                for j in range(self.d):
                    if self.stump(xs[j], x[j], 1.0) != ys:
                        errors[j] += ws
            self.thresholds.append(list(x))
            self.errors.append(errors)
            self.kept.append((list(x), y, w))
        for k in range(len(self.thresholds)):
            for j in range(self.d):
                if self.stump(x[j], self.thresholds[k][j], 1.0) != y:
                    self.errors[k][j] += w
        self.total += w


class RegressionStumpLane:
    """One lane, literally: SGD on each feature (the bias one of them), predicting with the
    least-cumulative-loss feature that is non-zero in x."""

    def __init__(self, spec: WeakSpec, rng, rate: float):
        self.bound, self.rate = spec.bound, rate
        self.theta = [0.0] * (spec.n_features + 1)
        self.losses = [0.0] * (spec.n_features + 1)

    def output(self, xt, j):
        return min(max(self.theta[j] * xt[j], -self.bound), self.bound)

    def predict(self, x):
        xt = [*x, 1.0]
        best = min((j for j in range(len(xt)) if xt[j] != 0), key=lambda j: self.losses[j])
        return self.output(xt, best)

    def update(self, x, y, w):
        if w == 0.0:
            return
        xt = [*x, 1.0]
        for j in range(len(xt)):
            residual = self.output(xt, j) - y
            self.losses[j] += w * 0.5 * residual**2
            self.theta[j] -= self.rate * w * residual * xt[j]


@pytest.mark.parametrize("n_thresholds", [1, 5])
def test_classification_equals_per_lane_transcription(n_thresholds):
    assert_matches_reference(
        Stump(n_thresholds=n_thresholds),
        lambda spec, rng: ClassificationStumpLane(spec, rng, n_thresholds),
        "classification",
        d=4,
    )


def test_classification_ties_and_unit_weights_match_too():
    """Integer features and unit weights make many exact ties between candidate stumps."""
    spec = WeakSpec("classification", 3, 2, 2, 50)
    wl, rng = Stump(n_thresholds=4), np.random.default_rng(3)
    wl.reset(spec, [[rng, rng], [rng, rng]])
    refs = [[ClassificationStumpLane(spec, None, 4) for _ in range(2)] for _ in range(2)]
    x = rng.integers(-2, 3, (2, 50, 3)).astype(float)
    y = np.where(rng.random((2, 50, 2)) < 0.5, -1.0, 1.0)
    w = rng.integers(0, 2, (2, 50, 2)).astype(float)
    for j in range(50):
        expected = [[refs[r][i].predict(x[r, j].tolist()) for i in range(2)] for r in range(2)]
        assert wl.predict(x[:, j]).tolist() == expected
        wl.update(x[:, j], y[:, j], w[:, j])
        for r in range(2):
            for i in range(2):
                refs[r][i].update(x[r, j].tolist(), y[r, j, i], w[r, j, i])


def test_regression_equals_per_lane_transcription():
    rate = 0.2
    assert_matches_reference(
        Stump(rate=rate),
        lambda spec, rng: RegressionStumpLane(spec, rng, rate),
        "regression",
        bound=0.9,
    )


def test_regression_skips_features_that_are_zero_in_x():
    wl = Stump(rate=0.5)
    wl.reset(WeakSpec("regression", 2, 1), [[np.random.default_rng(0)]])
    for _ in range(30):  # y = x_1: feature 1 learns it, the bias and feature 2 cannot
        wl.update(np.array([[0.8, 0.0]]), np.array([[0.8]]), np.ones((1, 1)))
        wl.update(np.array([[-0.8, 0.0]]), np.array([[-0.8]]), np.ones((1, 1)))
    assert wl.predict(np.array([[0.5, 0.0]]))[0, 0] == pytest.approx(0.5, abs=1e-6)
    # x_1 = 0: feature 1 is not eligible, and the bias (θ ≈ 0) is the best of the others
    assert wl.predict(np.array([[0.0, 3.0]]))[0, 0] == pytest.approx(0.0, abs=1e-6)


def test_conformance_of_a_single_threshold():
    # the registry sweep (tests/arena/testing) checks the `_unit_test_params` set
    check_component(Stump(n_thresholds=1, rate=1.0))


def test_boosted_on_data_beats_the_constant_predictor():
    # one pass, 2 replicates, a 3-learner MajorityVote of default stumps
    error, _ = sanity_game(Stump(), "breast_cancer")
    assert error < 0.2  # measured 0.107 (chance 0.5, the majority label errs 0.373)
    loss, mean = sanity_game(Stump(), "diabetes")
    assert loss < 0.85 * mean  # measured 0.358 per round against the mean's 0.5 in hindsight
