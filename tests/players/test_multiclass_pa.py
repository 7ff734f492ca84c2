"""Multiclass PA / PA-I / PA-II: literal transcription of Crammer et al. (2006) §7 (max-loss) and
§8 (prediction-based), the k = 2 reduction to the binary PA, and the multiclass forms of Thms 2,
4 and 5 on oblivious and adaptive streams."""

from __future__ import annotations

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.oco.losses import RoundData
from arena.params import validate_params
from arena.players.multiclass_pa import MulticlassPA
from arena.players.passive_aggressive import PassiveAggressive
from tests.helpers.classification import drive as drive_binary
from tests.helpers.classification import fresh as fresh_binary
from tests.helpers.classification import spec_for as binary_spec
from tests.helpers.multiclass import (
    drive,
    drive_blocks,
    fresh,
    hinge_sum,
    mc_spec,
    mistakes_of,
    random_stream,
    separable_stream,
)
from tests.players.test_multiclass_perceptron import kesler_orthogonal


def literal_multiclass_pa(x, y, k, variant, C=1.0, rule="max_loss"):
    """Crammer et al. (2006), §7 (multi-prototype) and §8, one game, plain loops.

    W_1 = 0; s = the first highest-scoring label r ≠ y; m = ⟨w_y − w_s, x⟩; ℓ = max(0, 1 − m)
    ("prediction": ℓ = 0 unless m ≤ 0); ‖z‖² = 2‖x‖²; τ = ℓ/‖z‖² (PA), min(C, ℓ/‖z‖²) (PA-I),
    ℓ/(‖z‖² + 1/(2C)) (PA-II); w_y += τx, w_s −= τx.
    """
    T, d = x.shape
    w = [[0.0] * d for _ in range(k)]
    out = np.empty((T, k * d))
    for t in range(T):
        out[t] = [v for row in w for v in row]
        s = [sum(w[r][i] * x[t, i] for i in range(d)) for r in range(k)]
        lab = int(y[t])
        top = max(s[r] for r in range(k) if r != lab)
        run = next(r for r in range(k) if r != lab and s[r] == top)
        margin = s[lab] - s[run]
        loss = max(0.0, 1.0 - margin)
        if rule == "prediction" and margin > 0:
            loss = 0.0
        sq = 2.0 * sum(v * v for v in x[t])
        if variant == "pa":
            tau = loss / sq
        elif variant == "pa1":
            tau = min(C, loss / sq)
        else:
            tau = loss / (sq + 1.0 / (2.0 * C))
        for i in range(d):
            w[lab][i] += tau * x[t, i]
            w[run][i] -= tau * x[t, i]
    return out


@pytest.mark.parametrize(
    ("variant", "C", "rule"),
    [
        ("pa", 1.0, "max_loss"),
        ("pa1", 0.05, "max_loss"),
        ("pa2", 0.5, "prediction"),
        ("pa1", 2.0, "prediction"),
    ],
)
def test_transcription(variant, C, rule):
    rng = np.random.default_rng(3)
    R, T, d, k = 2, 120, 3, 4
    data = random_stream(rng, R, T, d, k)
    spec = mc_spec(k, d, T, R)
    want = np.stack(
        [literal_multiclass_pa(data.x[r], data.y[r], k, variant, C, rule) for r in range(R)]
    )
    player = MulticlassPA(variant, C, rule)
    # the same float operations vectorized over R and the labels: agreement to round-off
    np.testing.assert_allclose(drive(fresh(player, spec), spec, data), want, rtol=0, atol=1e-12)
    got = drive_blocks(fresh(player, spec), spec, data, [3, 4, 100])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("variant", ["pa", "pa1", "pa2"])
def test_two_labels_is_the_binary_pa_with_twice_c(variant):
    # k = 2: u = w_1 − w_0 moves by 2τ·y'x with ‖z‖² = 2‖x‖², i.e. the binary step of C' = 2C
    rng = np.random.default_rng(6)
    R, T, d = 2, 150, 3
    data = random_stream(rng, R, T, d, 2)
    spec = mc_spec(2, d, T, R)
    W = drive(fresh(MulticlassPA(variant, C=0.3), spec), spec, data)
    bspec = binary_spec(d, T, R)
    binary = drive_binary(
        fresh_binary(PassiveAggressive(variant, C=0.6), bspec),
        bspec,
        RoundData(x=data.x, y=2.0 * data.y - 1.0),
    )
    np.testing.assert_allclose(W[..., d:] - W[..., :d], binary, rtol=1e-12, atol=1e-12)


def test_prediction_rule_is_conservative_and_zero_features_do_not_move():
    rng = np.random.default_rng(9)
    data = random_stream(rng, 2, 150, 3, 3)
    spec = mc_spec(3, 3, 150, 2)
    W = drive(fresh(MulticlassPA("pa1", rule="prediction"), spec), spec, data)
    moved = np.any(W[:, 1:] != W[:, :-1], axis=2)
    np.testing.assert_array_equal(moved, mistakes_of(W, data)[:, :-1])
    zero = RoundData(x=np.zeros((1, 3, 2)), y=np.zeros((1, 3)))
    for variant in ("pa", "pa1", "pa2"):
        s = mc_spec(3, 2, 3)
        assert np.all(drive(fresh(MulticlassPA(variant), s), s, zero) == 0.0)


@pytest.mark.parametrize("rule", ["max_loss", "prediction"])
def test_bounds_of_thms_2_4_5(rule):
    rng = np.random.default_rng(8)
    R, T, d, k = 3, 600, 5, 4
    data, U, gamma = separable_stream(rng, R, T, d, k, radius=2.0)
    spec = mc_spec(k, d, T, R)
    # PA, separable (Thm 2): U/γ has zero multiclass hinge on every round
    p = fresh(MulticlassPA("pa", rule=rule), spec)
    W = drive(p, spec, data)
    u_sep = U / gamma[:, None, None]
    assert np.all(hinge_sum(data, u_sep) <= 1e-9)
    bound = p.squared_loss_bound(1.0 / gamma, 0.0)
    big_r = np.linalg.norm(data.x, axis=2).max(axis=1)
    np.testing.assert_allclose(bound, 2 * big_r**2 / gamma**2, rtol=1e-12)  # 2R²/γ²
    # sums of ≤ 600 float64 terms: 1e-9 relative slack
    assert np.all(p.squared_loss <= bound * (1 + 1e-9))
    assert np.all(mistakes_of(W, data).sum(axis=1) <= bound)
    # PA-I (Thm 4) and PA-II (Thm 5) with label noise, for several comparators
    noisy, U, _ = separable_stream(rng, R, T, d, k, radius=2.0, flip=0.1)
    for variant, C in [("pa1", 0.1), ("pa1", 2.0), ("pa2", 0.5)]:
        p = fresh(MulticlassPA(variant, C, rule), spec)
        W = drive(p, spec, noisy)
        mist = mistakes_of(W, noisy).sum(axis=1)
        np.testing.assert_array_equal(mist, p.mistakes)
        for V in [np.zeros_like(U), 3.0 * U, 30.0 * U, W[:, -1].reshape(R, k, d)]:
            norm = np.linalg.norm(V, axis=(1, 2))
            h, h2 = hinge_sum(noisy, V), hinge_sum(noisy, V, power=2)
            assert np.all(mist <= p.mistake_bound(norm, h, h2) * (1 + 1e-9))
            if variant == "pa2":
                assert np.all(p.squared_loss <= p.squared_loss_bound(norm, h2) * (1 + 1e-9))


@pytest.mark.parametrize("variant", ["pa", "pa1", "pa2"])
def test_adaptive_adversary_and_the_bounds(variant):
    # the adaptive Kesler-orthogonal stream forces a mistake every round; U (margin 1 on every
    # round, ‖U‖² = T(k−1)/k) keeps every bound above T
    T, k = 30, 4
    p, mistakes, labels = kesler_orthogonal(
        MulticlassPA(variant, C=0.5), T, k, np.random.default_rng(5)
    )
    assert mistakes == T
    U = np.full((k, T), -1.0 / k)
    U[labels.astype(int), np.arange(T)] = (k - 1.0) / k
    bound = float(p.mistake_bound(np.linalg.norm(U), 0.0, 0.0)[0])
    assert T <= bound
    if variant == "pa":  # every ℓ_t = 1 and τ_t = 1/2: Thm 2 is 2‖U‖² = 2T(k−1)/k
        assert p.squared_loss[0] == T and bound == pytest.approx(2 * T * (k - 1) / k)


def test_rejects_bad_parameters():
    for params, name in [
        ({"C": 0.0}, "C"),
        ({"variant": "pa3"}, "variant"),
        ({"rule": "x"}, "rule"),
    ]:
        with pytest.raises(ConfigError, match=f"'{name}'") as err:
            validate_params(MulticlassPA(**params))
        assert err.value.component == "player multiclass_pa"


def test_end_to_end_with_the_engine():
    from arena import play
    from arena.adversaries.multiclass_separable_stream import MulticlassSeparableStream

    gamma = 0.1
    df = play(
        MulticlassPA("pa"),
        MulticlassSeparableStream(n_classes=3, margin=gamma),
        horizon=400,
        replicates=2,
        metrics=["mistakes"],
    )
    last = df[df.t == df.t.max()]
    assert np.all(last.value <= 2.0 / gamma**2)  # Thm 2 with U/γ, R = 1
