"""Aggressive Perceptron (Srebro, Lecture 16): literal transcription, OGD hinge, mistake bounds."""

from __future__ import annotations

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.params import validate_params
from arena.players.aggressive_perceptron import AggressivePerceptron
from tests.helpers.classification import (
    drive,
    drive_blocks,
    fresh,
    hinge_sum,
    mistakes_of,
    random_stream,
    separable_stream,
    spec_for,
)


def literal_aggressive(x, y, eta=1.0):
    """Srebro, Lecture 16 ("...back to the Perceptron"): w_1 = 0;
    w_{t+1} = w_t + η [[y_t⟨w_t, x_t⟩ ≤ 1]] y_t x_t."""
    T, d = x.shape
    w = [0.0] * d
    out = np.empty((T, d))
    for t in range(T):
        out[t] = w
        if y[t] * sum(w[i] * x[t, i] for i in range(d)) <= 1:
            w = [w[i] + eta * y[t] * x[t, i] for i in range(d)]
    return out


@pytest.mark.parametrize("eta", [1.0, 0.07])
def test_transcription(eta):
    rng = np.random.default_rng(2)
    R, T, d = 3, 200, 4
    data = random_stream(rng, R, T, d)
    spec = spec_for(d, T, R)
    want = np.stack([literal_aggressive(data.x[r], data.y[r], eta) for r in range(R)])
    # same operations, vectorized over R: agreement to round-off
    np.testing.assert_allclose(
        drive(fresh(AggressivePerceptron(eta), spec), spec, data), want, rtol=0, atol=1e-10
    )
    for splits in ([5], [1, 2, 3, 150]):
        got = drive_blocks(fresh(AggressivePerceptron(eta), spec), spec, data, splits)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)


def test_updates_on_correct_rounds_with_small_margin():
    rng = np.random.default_rng(4)
    data, _ = separable_stream(rng, 2, 400, 5, gamma=0.1)
    spec = spec_for(5, 400, 2)
    p = fresh(AggressivePerceptron(), spec)
    W = drive(p, spec, data)
    margins = data.y * np.einsum("rtd,rtd->rt", W, data.x)
    moved = np.any(W[:, 1:] != W[:, :-1], axis=2)
    np.testing.assert_array_equal(moved, margins[:, :-1] <= 1.0)
    assert np.any(moved & (margins[:, :-1] > 0))  # it does update on correct rounds
    np.testing.assert_array_equal(p.updates, (margins <= 1.0).sum(axis=1))


@pytest.mark.parametrize("eta", [1.0, 0.1, 3.0])
def test_hinge_regret_and_mistake_bounds_for_many_comparators(eta):
    rng = np.random.default_rng(9)
    R, T, d = 3, 1500, 6
    data, u_star = separable_stream(rng, R, T, d, gamma=0.1, flip=0.1)
    spec = spec_for(d, T, R)
    p = fresh(AggressivePerceptron(eta), spec)
    W = drive(p, spec, data)
    own = np.maximum(1.0 - data.y * np.einsum("rtd,rtd->rt", W, data.x), 0.0).sum(axis=1)
    m = mistakes_of(W, data).sum(axis=1)
    np.testing.assert_array_equal(m, p.mistakes)
    for u in [np.zeros((R, d)), W[:, -1], *[s * u_star for s in (1.0, 10.0, 50.0)]]:
        h = hinge_sum(data, u)
        un = np.linalg.norm(u, axis=1)
        # sums of T float64 terms: 1e-9 relative slack
        assert np.all(own - h <= p.hinge_regret_bound(un) * (1 + 1e-9) + 1e-9)
        assert np.all(m <= p.mistake_bound(un, h) * (1 + 1e-9))


def test_rejects_bad_eta():
    with pytest.raises(ConfigError, match=r"'eta': must be a real number in \(0, inf\)") as err:
        validate_params(AggressivePerceptron(eta=-1.0))
    assert err.value.component == "player aggressive_perceptron"
