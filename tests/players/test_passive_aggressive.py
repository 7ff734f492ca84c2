"""Passive-Aggressive PA / PA-I / PA-II: literal transcription of Crammer et al. (2006) Fig 1
(classification) and §5 (regression), and Thms 2–5."""

from __future__ import annotations

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.oco.losses import RoundData
from arena.params import validate_params
from arena.players.passive_aggressive import PassiveAggressive
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


def literal_pa(x, y, variant, C=1.0, regression=False, eps=0.0):
    """Crammer et al. (2006), Fig 1 (and §5 for regression), one game, plain loops.

    w_1 = 0; ŷ = ⟨w, x⟩; ℓ = max(0, 1 − y ŷ) (regression: max(0, |ŷ − y| − ε));
    τ = ℓ/‖x‖² (PA), min(C, ℓ/‖x‖²) (PA-I), ℓ/(‖x‖² + 1/(2C)) (PA-II);
    w ← w + τ y x (regression: w + sign(y − ŷ) τ x).
    """
    T, d = x.shape
    w = [0.0] * d
    out = np.empty((T, d))
    for t in range(T):
        out[t] = w
        pred = sum(w[i] * x[t, i] for i in range(d))
        if regression:
            loss = max(0.0, abs(pred - y[t]) - eps)
            s = 1.0 if y[t] > pred else (-1.0 if y[t] < pred else 0.0)
        else:
            loss = max(0.0, 1.0 - y[t] * pred)
            s = y[t]
        sq = sum(v * v for v in x[t])
        if variant == "pa":
            tau = loss / sq
        elif variant == "pa1":
            tau = min(C, loss / sq)
        else:
            tau = loss / (sq + 1.0 / (2.0 * C))
        w = [w[i] + tau * s * x[t, i] for i in range(d)]
    return out


@pytest.mark.parametrize("variant", ["pa", "pa1", "pa2"])
@pytest.mark.parametrize("C", [0.05, 1.0])
def test_classification_transcription(variant, C):
    rng = np.random.default_rng(3)
    R, T, d = 3, 150, 4
    data = random_stream(rng, R, T, d)
    spec = spec_for(d, T, R)
    want = np.stack([literal_pa(data.x[r], data.y[r], variant, C) for r in range(R)])
    got = drive(fresh(PassiveAggressive(variant, C), spec), spec, data)
    # same operations vectorized over R; PA's unclipped steps amplify round-off: 1e-10 relative
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    got = drive_blocks(fresh(PassiveAggressive(variant, C), spec), spec, data, [3, 4, 100])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("variant", ["pa", "pa1", "pa2"])
@pytest.mark.parametrize("eps", [0.0, 0.3])
def test_regression_transcription(variant, eps):
    rng = np.random.default_rng(4)
    R, T, d = 2, 150, 3
    x = rng.standard_normal((R, T, d))
    y = x @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.standard_normal((R, T))
    data = RoundData(x=x, y=y)
    spec = spec_for(d, T, R, protocol="regression", loss="absolute")
    want = np.stack(
        [literal_pa(x[r], y[r], variant, 0.5, regression=True, eps=eps) for r in range(R)]
    )
    got = drive(fresh(PassiveAggressive(variant, 0.5, eps), spec), spec, data)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    # it learns: the last quarter's absolute error is well below that of w = 0 (|y| ≈ 1.8)
    err = np.abs(np.einsum("rtd,rtd->rt", got, x) - y)
    assert np.all(err[:, -T // 4 :].mean(axis=1) < 0.5 * np.abs(y).mean(axis=1))


def test_zero_features_do_not_move():
    spec = spec_for(2, 2)
    for variant in ("pa", "pa1", "pa2"):
        data = RoundData(x=np.zeros((1, 2, 2)), y=np.ones((1, 2)))
        w = drive(fresh(PassiveAggressive(variant), spec), spec, data)
        assert np.all(w == 0.0)


def test_pa_separable_and_unit_norm_bounds():
    rng = np.random.default_rng(8)
    R, T, d, radius = 3, 1500, 6, 2.0
    data, u = separable_stream(rng, R, T, d, gamma=0.1, radius=radius)
    spec = spec_for(d, T, R)
    p = fresh(PassiveAggressive("pa"), spec)
    W = drive(p, spec, data)
    margin = (data.y * np.einsum("rtd,rd->rt", data.x, u)).min(axis=1)
    u_sep = u / margin[:, None]  # every ℓ*_t = 0
    assert np.all(hinge_sum(data, u_sep) <= 1e-9)
    bound = p.squared_loss_bound(np.linalg.norm(u_sep, axis=1), 0.0)  # Thm 2
    assert np.all(p.squared_loss <= bound * (1 + 1e-9))
    assert np.all(mistakes_of(W, data).sum(axis=1) <= bound)
    # Thm 3 on unit-norm instances with label noise, for several comparators
    xs = data.x / np.linalg.norm(data.x, axis=2, keepdims=True)
    noisy = RoundData(x=xs, y=np.where(rng.random((R, T)) < 0.1, -data.y, data.y))
    p = fresh(PassiveAggressive("pa"), spec)
    drive(p, spec, noisy)
    for s in (0.5, 2.0, 10.0, 40.0):
        v = s * u
        h2 = (np.maximum(1 - noisy.y * np.einsum("rtd,rd->rt", xs, v), 0) ** 2).sum(axis=1)
        assert np.all(p.squared_loss <= p.squared_loss_bound(np.linalg.norm(v, axis=1), h2) * 1.0)


@pytest.mark.parametrize("C", [0.01, 0.3, 5.0])
def test_pa1_and_pa2_bounds_on_noisy_data(C):
    rng = np.random.default_rng(int(C * 100))
    R, T, d = 3, 1500, 6
    data, u_star = separable_stream(rng, R, T, d, gamma=0.1, radius=1.5, flip=0.15)
    spec = spec_for(d, T, R)
    p1 = fresh(PassiveAggressive("pa1", C), spec)
    w1 = drive(p1, spec, data)
    p2 = fresh(PassiveAggressive("pa2", C), spec)
    drive(p2, spec, data)
    m1 = mistakes_of(w1, data).sum(axis=1)
    np.testing.assert_array_equal(m1, p1.mistakes)
    for u in [np.zeros((R, d)), *[s * u_star for s in (1.0, 10.0, 50.0)]]:
        un = np.linalg.norm(u, axis=1)
        marg = data.y * np.einsum("rtd,rd->rt", data.x, u)
        h = np.maximum(1 - marg, 0).sum(axis=1)
        h2 = (np.maximum(1 - marg, 0) ** 2).sum(axis=1)
        # sums of T float64 terms: 1e-9 relative slack
        assert np.all(m1 <= p1.mistake_bound(un, h, h2) * (1 + 1e-9))  # Thm 4
        assert np.all(p2.squared_loss <= p2.squared_loss_bound(un, h2) * (1 + 1e-9))  # Thm 5
        assert np.all(p2.mistakes <= p2.mistake_bound(un, h, h2) * (1 + 1e-9))


def test_validation():
    spec = spec_for(2, 3)
    for params in ({"variant": "pa3"}, {"C": 0.0}, {"epsilon": -1.0}):
        with pytest.raises(
            ConfigError, match=f"player passive_aggressive: parameter {next(iter(params))!r}"
        ):
            validate_params(PassiveAggressive(**params))
    for params in PassiveAggressive._unit_test_params():
        assert fresh(PassiveAggressive(**params), spec).predict().shape == (1, 2)
