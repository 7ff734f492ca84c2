"""The linear weak learner: per-lane transcription, conformance, and a boosting game on data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.boosting.components import WeakSpec
from arena.testing import check_component
from arena.weak_learners.linear import LinearLearner, lane_output, lane_score, lane_update
from tests.helpers.weak_learners import assert_matches_reference, sanity_game


class LinearLane:
    """One lane, literally: θ = 0; a step on the weighted loss's gradient when the weight is > 0."""

    def __init__(self, spec: WeakSpec, rng, step: str, loss: str, rate: float):
        self.task, self.bound = spec.task, spec.bound
        self.step, self.loss, self.rate = step, loss, rate
        self.theta = [0.0] * (spec.n_features + 1)
        self.sq_grads = [0.0] * (spec.n_features + 1)

    def score(self, x):
        xt = [*x, 1.0]
        return sum(self.theta[k] * xt[k] for k in range(len(xt)))

    def predict(self, x):
        m = self.score(x)
        if self.task == "classification":
            return 1.0 if m >= 0 else -1.0
        return min(max(m, -self.bound), self.bound)

    def update(self, x, y, w):
        if w == 0.0:
            return
        xt, m = [*x, 1.0], self.score(x)
        if self.task == "regression":
            s = self.predict(x) - y
        elif self.loss == "logistic":
            s = -y / (1.0 + math.exp(y * m))  # −y·σ(−y m)
        elif self.loss == "hinge":
            s = -y if y * m < 1 else 0.0
        else:  # perceptron: a step on the mistake rounds y·m ≤ 0
            s = -y if y * m <= 0 else 0.0
        for k in range(len(xt)):
            g = w * s * xt[k]
            if self.step == "sgd":
                self.theta[k] -= self.rate * g
            else:
                self.sq_grads[k] += g * g
                if self.sq_grads[k] > 0:
                    self.theta[k] -= self.rate * g / math.sqrt(self.sq_grads[k])


CASES = [
    ("classification", "sgd", "perceptron", 1.0),
    ("classification", "sgd", "logistic", 0.3),
    ("classification", "sgd", "hinge", 0.2),
    ("classification", "adagrad", "logistic", 0.5),
    ("classification", "adagrad", "perceptron", 0.7),
    ("regression", "sgd", "logistic", 0.3),  # regression: the squared loss, whatever `loss` says
    ("regression", "adagrad", "hinge", 0.5),
]


@pytest.mark.parametrize(("task", "step", "loss", "rate"), CASES)
def test_equals_per_lane_transcription(task, step, loss, rate):
    assert_matches_reference(
        LinearLearner(step=step, loss=loss, rate=rate),
        lambda spec, rng: LinearLane(spec, rng, step, loss, rate),
        task,
        bound=0.8,
    )


def test_perceptron_predictions_do_not_depend_on_the_rate():
    x = np.random.default_rng(1).standard_normal((1, 30, 2))
    y = np.where(x[:, :, 0] + 0.3 * x[:, :, 1] > 0.1, 1.0, -1.0)
    outs = []
    for rate in (0.1, 7.0):
        wl = LinearLearner(step="sgd", loss="perceptron", rate=rate)
        wl.reset(WeakSpec("classification", 2, 1), [[np.random.default_rng(0)]])
        out = []
        for j in range(30):
            out.append(wl.predict(x[:, j])[0, 0])
            wl.update(x[:, j], y[:, j, None], np.full((1, 1), 0.5))
        outs.append(out)
    assert outs[0] == outs[1]


def test_conformance_of_the_default():
    # the registry sweep (tests/arena/testing) checks the `_unit_test_params` sets
    check_component(LinearLearner())


def test_boosted_on_data_beats_the_constant_predictor():
    # one pass, 2 replicates, a 3-learner MajorityVote of the default (AdaGrad, logistic) learner
    error, _ = sanity_game(LinearLearner(), "breast_cancer")
    assert error < 0.1  # measured 0.037 (chance 0.5, the majority label errs 0.373)
    loss, mean = sanity_game(LinearLearner(), "diabetes")
    assert loss < 0.8 * mean  # measured 0.348 per round against the mean's 0.5 in hindsight


def test_gradient_boosting_target_is_a_linear_loss_step():
    """Online gradient boosting passes ``target = A(x) − c`` with weight 1 (the protocol's
    regression convention): the step is then the linear loss ``c·θ·x̃``'s, ``θ ← θ − η·c·x̃``."""
    wl = LinearLearner(step="sgd", rate=0.1)
    wl.reset(WeakSpec("regression", 2, 2, bound=5.0), [[np.random.default_rng(0)] * 2])
    x, probe = np.array([[0.5, -1.0]]), np.array([[2.0, 1.0]])
    wl.update(x, np.array([[1.0, -0.4]]), np.ones((1, 2)))  # θ ≠ 0, scores inside [−5, 5]
    before, out = wl.predict(probe), wl.predict(x)
    c = np.array([[0.7, -1.3]])
    wl.update(x, out - c, np.ones((1, 2)))
    x_tilde, probe_tilde = np.array([0.5, -1.0, 1.0]), np.array([2.0, 1.0, 1.0])
    expected = before - 0.1 * c * (x_tilde @ probe_tilde)
    np.testing.assert_allclose(wl.predict(probe), expected, atol=1e-14, rtol=0)


@pytest.mark.parametrize(("task", "step", "loss", "rate"), CASES)
def test_compiled_lane_equals_the_numpy_path(task, step, loss, rate):
    """:func:`lane_score`/:func:`lane_output`/:func:`lane_update`, lane by lane, leave θ and G
    where :meth:`LinearLearner.update` does (1e-12: the dot product's grouping differs by a few
    ulps; a changed rule moves θ by ≥ 1e-3) and give the same outputs; weight 0 moves nothing."""
    n_rep, n_lanes, d, bound = 2, 4, 3, 0.8
    rng = np.random.default_rng(7)
    spec = WeakSpec(task, n_features=d, n_lanes=n_lanes, n_replicates=n_rep, bound=bound)
    numpy_path, compiled = LinearLearner(step, loss, rate), LinearLearner(step, loss, rate)
    for wl in (numpy_path, compiled):
        wl.reset(spec, [[np.random.default_rng(0)] * n_lanes] * n_rep)
    theta, sq_grads = compiled.kernel_state()
    code, classification = compiled.kernel_code(), task == "classification"
    for _ in range(60):
        x = rng.standard_normal((n_rep, d))
        if classification:
            target = rng.choice([-1.0, 1.0], (n_rep, n_lanes))
        else:
            target = rng.uniform(-1.0, 1.0, (n_rep, n_lanes))
        weight = np.where(rng.random((n_rep, n_lanes)) < 0.3, 0.0, rng.random((n_rep, n_lanes)))
        expected = numpy_path.predict(x)
        for r in range(n_rep):
            for lane in range(n_lanes):
                score = lane_score(theta, r, lane, x[r])
                output = lane_output(score, classification, bound)
                assert (
                    output == expected[r, lane]
                    if classification
                    else abs(output - expected[r, lane]) <= 1e-12
                )
                lane_update(theta, sq_grads, r, lane, x[r], score, target[r, lane],
                            weight[r, lane], code, rate, bound)  # fmt: skip
        numpy_path.update(x, target, weight)
    for a, b in zip(numpy_path.kernel_state(), (theta, sq_grads), strict=True):
        np.testing.assert_allclose(b, a, atol=1e-12, rtol=1e-12)
    assert np.abs(theta).max() > 1e-3  # the rule moved the lanes
