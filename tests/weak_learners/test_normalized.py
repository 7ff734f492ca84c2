"""The normalized (VW default) weak learner: VW's own scores, a literal loop, the compiled lane."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.boosting.components import WeakSpec
from arena.testing import check_component
from arena.weak_learners.normalized import (
    NormalizedLinear,
    _normalized_output,
    _normalized_score,
    _normalized_update,
)
from tests.helpers.weak_learners import assert_matches_reference, sanity_game


def golden_stream() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """40 examples of 4 features on scales 1, 10, 0.1 and 3, a fifth of the entries 0 (absent),
    labels ±1 and importance weights from 0.05 to about 5 (the weights boosters pass)."""
    rng = np.random.default_rng(2013)
    x = rng.standard_normal((40, 4)) * np.array([1.0, 10.0, 0.1, 3.0])
    x[rng.random(x.shape) < 0.2] = 0.0
    y = np.where(x @ np.array([1.0, 0.05, -4.0, 0.2]) + 0.3 > 0, 1.0, -1.0)
    y[rng.random(40) < 0.1] *= -1.0
    weight = np.round(rng.exponential(1.0, 40) + 0.05, 3)
    return x, y, weight


VW_GOLDEN = [
    0.0,
    0.17836283147335052,
    0.10047432035207748,
    -0.2362910956144333,
    0.5076280236244202,
    0.22634565830230713,
    -0.49736490845680237,
    1.4152013063430786,
    -0.797670841217041,
    -0.3811495900154114,
    -0.982366144657135,
    0.40711867809295654,
    0.518043041229248,
    0.17159996926784515,
    -0.5077054500579834,
    -0.48623600602149963,
    0.08524149656295776,
    -0.07287237048149109,
    0.0730031281709671,
    0.4464980363845825,
    0.3449508547782898,
    0.6129410862922668,
    0.11893246322870255,
    0.4165937304496765,
    -0.16651199758052826,
    -0.12542518973350525,
    0.9061662554740906,
    0.087771937251091,
    0.0692644715309143,
    0.26431286334991455,
    -0.04911255091428757,
    -0.27154257893562317,
    0.3856281042098999,
    -0.3301789462566376,
    0.19221274554729462,
    0.2775333523750305,
    0.5508900284767151,
    -0.5634419918060303,
    -0.18200640380382538,
    0.05197387933731079,
]
"""Vowpal Wabbit 9.11.9's raw scores ``θ·x̃`` (before each update, float32) on
:func:`golden_stream` with its default options (``vw`` with no option: ``--adaptive --normalized
--invariant``, η = 0.5, squared loss, a constant feature), read through ``pyvw`` by
``benchmarks/vw_learner_check.py --golden``."""

VW_FLOAT32_TOL = 1e-6
"""VW keeps θ, G and s in float32 (relative rounding 6e-8 an operation) and this learner in
float64: over the golden stream's 40 updates the scores, of order 1, differ by at most 1.8e-7
(measured); a changed rule (no rescale of θ, the plain instead of the invariant step, another
multiplier) moves them by more than 1e-2."""


def test_scores_equal_vowpal_wabbits_own():
    x, y, weight = golden_stream()
    wl = NormalizedLinear()
    wl.reset(WeakSpec("classification", 4, 1), [[None]])
    scores = []
    for t in range(40):
        theta = wl.kernel_state()[0][0, 0]
        scores.append(theta[:4] @ x[t] + theta[4])
        wl.update(x[t][None], np.array([[y[t]]]), np.array([[weight[t]]]))
    np.testing.assert_allclose(scores, VW_GOLDEN, atol=VW_FLOAT32_TOL, rtol=0)


class NormalizedLane:
    """One lane, literally: Ross, Mineiro & Langford 2013, Algorithm 2 with the invariant step."""

    def __init__(self, spec: WeakSpec, rng, rate: float, output: str):
        d = spec.n_features + 1
        self.task, self.bound, self.rate, self.output = spec.task, spec.bound, rate, output
        self.theta, self.sq, self.scale = [0.0] * d, [0.0] * d, [0.0] * d
        self.sum_norm, self.total, self.lo, self.hi = 0.0, 0.0, 0.0, 0.0

    def score(self, x):
        return sum(t * v for t, v in zip(self.theta, [*x, 1.0], strict=True))

    def predict(self, x):
        m = self.score(x)
        if self.task == "classification" and self.output == "sign":
            return 1.0 if m >= 0 else -1.0
        lo, hi = self.lo, self.hi
        if self.task == "regression":
            lo, hi = max(lo, -self.bound), min(hi, self.bound)
        return min(max(m, lo), hi)

    def update(self, x, y, w):
        if w == 0.0:
            return
        self.lo, self.hi = min(self.lo, y), max(self.hi, y)
        p = min(max(self.score(x), self.lo), self.hi)
        if p == y:
            return
        present = [k for k, v in enumerate([*x, 1.0]) if v != 0.0]
        xt = [*x, 1.0]
        norm_x = per_update = 0.0
        for k in present:
            a = max(abs(xt[k]), 1.084202e-19)
            self.sq[k] += w * 4 * (p - y) ** 2 * a * a
            if a > self.scale[k]:
                if self.scale[k] > 0:
                    self.theta[k] *= self.scale[k] / a
                self.scale[k] = a
            norm_x += a * a / self.scale[k] ** 2
            per_update += a * a / (math.sqrt(self.sq[k]) * self.scale[k])
        self.sum_norm += w * norm_x
        self.total += w
        mu = math.sqrt(self.total / self.sum_norm)
        h = mu * per_update
        step = self.rate * w
        u = 2 * (y - p) * step if step * h < 1e-6 else (y - p) * (1 - math.exp(-2 * step * h)) / h
        for k in present:
            self.theta[k] += mu * u * xt[k] / (math.sqrt(self.sq[k]) * self.scale[k])


CASES = [("classification", 0.5, "score"), ("classification", 1.5, "sign"),
         ("regression", 0.3, "score")]  # fmt: skip


@pytest.mark.parametrize(("task", "rate", "output"), CASES)
def test_equals_per_lane_transcription(task, rate, output):
    assert_matches_reference(
        NormalizedLinear(rate=rate, output=output),
        lambda spec, rng: NormalizedLane(spec, rng, rate, output),
        task,
        bound=0.8,
    )


def test_compiled_lane_equals_the_numpy_path():
    """The compiled lane over a row's non-zero entries (CSR form) leaves θ, G, s and the
    statistics where :meth:`NormalizedLinear.update` does (1e-12: sums grouped differently) and
    answers the same; weight 0 moves nothing. A fifth of the features are 0 (absent)."""
    n_rep, n_lanes, d = 2, 4, 5
    rng = np.random.default_rng(7)
    spec = WeakSpec("classification", n_features=d, n_lanes=n_lanes, n_replicates=n_rep)
    numpy_path, compiled = NormalizedLinear(), NormalizedLinear()
    for wl in (numpy_path, compiled):
        wl.reset(spec, [[None] * n_lanes] * n_rep)
    theta, sq, scale, stats = compiled.kernel_state()
    for _ in range(80):
        x = rng.standard_normal((n_rep, d)) * np.array([1.0, 5.0, 0.2, 1.0, 3.0])
        x[rng.random(x.shape) < 0.2] = 0.0
        target = rng.choice([-1.0, 1.0], (n_rep, n_lanes))
        weight = np.where(
            rng.random((n_rep, n_lanes)) < 0.3, 0.0, rng.exponential(1.0, (n_rep, n_lanes))
        )
        expected = numpy_path.predict(x)
        for r in range(n_rep):
            cols = np.flatnonzero(x[r])
            vals = x[r, cols]
            for lane in range(n_lanes):
                score = _normalized_score(theta, r, lane, cols, vals)
                assert (
                    abs(_normalized_output(stats, r, lane, score, False) - expected[r, lane])
                    <= 1e-12
                )
                _normalized_update(theta, sq, scale, stats, r, lane, cols, vals, score,
                                   target[r, lane], weight[r, lane], 0.5)  # fmt: skip
        numpy_path.update(x, target, weight)
    for a, b in zip(numpy_path.kernel_state(), (theta, sq, scale, stats), strict=True):
        np.testing.assert_allclose(b, a, atol=1e-12, rtol=1e-12)
    assert np.abs(theta).max() > 1e-2  # the rule moved the lanes


def test_rescaling_a_feature_leaves_the_predictions_unchanged():
    """The normalized update's defining property (Ross et al. 2013, §1): scaling feature k by
    c > 0 scales θ_k by 1/c and leaves every prediction as it was (to rounding)."""
    x, y, weight = golden_stream()
    outs = []
    for c in (1.0, 1000.0):
        wl = NormalizedLinear()
        wl.reset(WeakSpec("classification", 4, 1), [[None]])
        xs = x * np.array([1.0, c, 1.0, 1.0])
        out = []
        for t in range(40):
            out.append(wl.predict(xs[t][None])[0, 0])
            wl.update(xs[t][None], np.array([[y[t]]]), np.array([[weight[t]]]))
        outs.append(out)
    np.testing.assert_allclose(outs[0], outs[1], atol=1e-9, rtol=0)
    assert max(abs(v) for v in outs[0]) > 0.3


@pytest.mark.parametrize("output", ["score", "sign"])
def test_conformance(output):
    check_component(NormalizedLinear(output=output))


def test_boosted_on_data_beats_the_constant_predictor():
    error, _ = sanity_game(NormalizedLinear(output="sign"), "breast_cancer")
    assert error < 0.1  # chance 0.5, the majority label errs 0.373
