"""Multiclass Perceptron: literal transcription (Kesler construction and Crammer & Singer's uniform
update), the k = 2 reduction to the binary Perceptron, invariances, and the mistake bound of
Shalev-Shwartz 2007, Corollary 5 on Kesler's examples (2R²/γ² when separable), on oblivious and
adaptive streams."""

from __future__ import annotations

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.oco.losses import RoundData, feedback
from arena.params import validate_params
from arena.players.multiclass_perceptron import MulticlassPerceptron
from arena.players.perceptron import Perceptron
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


def literal_multiclass_perceptron(x, y, k, c=1.0, variant="max"):
    """One game, plain loops: Θ_1 = 0, W_t = Θ_t/c; scores s_r = ⟨w_r, x_t⟩; a mistake when
    s_y ≤ max_{r≠y} s_r; then θ_y += x_t and θ_s −= x_t for the first top wrong label s ("max",
    Kesler's construction), or θ_r −= x_t/|E| for every r ≠ y with s_r ≥ s_y ("uniform",
    Crammer & Singer 2003)."""
    T, d = x.shape
    theta = [[0.0] * d for _ in range(k)]
    out = np.empty((T, k * d))
    for t in range(T):
        w = [[theta[r][i] / c for i in range(d)] for r in range(k)]
        out[t] = [v for row in w for v in row]
        s = [sum(w[r][i] * x[t, i] for i in range(d)) for r in range(k)]
        lab = int(y[t])
        errors = [r for r in range(k) if r != lab and s[r] >= s[lab]]
        if not errors:
            continue
        for i in range(d):
            theta[lab][i] += x[t, i]
        if variant == "max":
            top = max(s[r] for r in range(k) if r != lab)
            s_idx = next(r for r in range(k) if r != lab and s[r] == top)
            for i in range(d):
                theta[s_idx][i] -= x[t, i]
        else:
            for r in errors:
                for i in range(d):
                    theta[r][i] -= x[t, i] / len(errors)
    return out


@pytest.mark.parametrize(("c", "variant"), [(1.0, "max"), (0.3, "uniform")])
def test_transcription_predict_update_and_blocks(c, variant):
    rng = np.random.default_rng(11)
    R, T, d, k = 2, 120, 3, 4
    data = random_stream(rng, R, T, d, k)
    spec = mc_spec(k, d, T, R)
    want = np.stack(
        [literal_multiclass_perceptron(data.x[r], data.y[r], k, c, variant) for r in range(R)]
    )
    player = MulticlassPerceptron(c=c, variant=variant)
    # the same sums in another order (θ_r −= x/|E| against θ_r += (−1/|E|)·x): round-off only
    np.testing.assert_allclose(drive(fresh(player, spec), spec, data), want, rtol=0, atol=1e-12)
    blocks = drive_blocks(fresh(player, spec), spec, data, [1, 50, 51])
    np.testing.assert_allclose(blocks, want, rtol=0, atol=1e-12)


def test_two_labels_is_the_binary_perceptron_on_the_row_difference():
    # k = 2, max update: u = w_1 − w_0 moves by 2·y'x_t on the binary Perceptron's mistakes
    # (y' = 2y − 1), and a tie of the two scores is its zero margin
    rng = np.random.default_rng(4)
    R, T, d = 2, 200, 3
    data = random_stream(rng, R, T, d, 2)
    spec = mc_spec(2, d, T, R)
    W = drive(fresh(MulticlassPerceptron(), spec), spec, data)
    u = W[..., d:] - W[..., :d]
    bspec = binary_spec(d, T, R)
    binary = drive_binary(
        fresh_binary(Perceptron(c=0.5), bspec), bspec, RoundData(x=data.x, y=2.0 * data.y - 1.0)
    )
    np.testing.assert_allclose(u, binary, rtol=0, atol=1e-12)


def test_invariances_scale_c_and_label_names():
    rng = np.random.default_rng(5)
    R, T, d, k = 2, 300, 4, 3
    data, _, _ = separable_stream(rng, R, T, d, k, flip=0.1)
    spec = mc_spec(k, d, T, R)
    base = drive(fresh(MulticlassPerceptron(), spec), spec, data)
    m0 = mistakes_of(base, data)
    for c, scale in [(7.0, 1.0), (0.01, 3.5)]:
        scaled = RoundData(x=scale * data.x, y=data.y)
        W = drive(fresh(MulticlassPerceptron(c=c), spec), spec, scaled)
        np.testing.assert_array_equal(mistakes_of(W, scaled), m0)
    # renaming the labels by π permutes the rows of W_t under the uniform update, which breaks
    # no ties (the max update's first-on-ties choice at W_1 = 0 is not equivariant)
    perm = np.array([2, 0, 1])
    renamed = RoundData(x=data.x, y=perm[data.y.astype(int)].astype(float))
    player = MulticlassPerceptron(variant="uniform")
    W = drive(fresh(player, spec), spec, renamed).reshape(R, T, k, d)
    first = drive(fresh(player, spec), spec, data).reshape(R, T, k, d)
    np.testing.assert_array_equal(W[:, :, perm], first)


def test_conservative_moves_only_on_mistakes():
    rng = np.random.default_rng(8)
    data = random_stream(rng, 2, 150, 3, 4)
    spec = mc_spec(4, 3, 150, 2)
    W = drive(fresh(MulticlassPerceptron(variant="uniform"), spec), spec, data)
    moved = np.any(W[:, 1:] != W[:, :-1], axis=2)
    np.testing.assert_array_equal(moved, mistakes_of(W, data)[:, :-1])


@pytest.mark.parametrize("variant", ["max", "uniform"])
def test_mistake_bounds_separable_and_noisy(variant):
    rng = np.random.default_rng(21)
    R, T, d, k = 3, 800, 6, 4
    data, U, gamma = separable_stream(rng, R, T, d, k)
    spec = mc_spec(k, d, T, R)
    p = fresh(MulticlassPerceptron(variant=variant), spec)
    W = drive(p, spec, data)
    m = mistakes_of(W, data)
    np.testing.assert_array_equal(m.sum(axis=1), p.mistakes)
    big_r = np.linalg.norm(data.x, axis=2).max(axis=1)
    # separable with margin γ by the unit U: 2R²/γ² (Crammer & Singer 2003), and Cor 5 with U/γ
    assert np.all(p.mistakes <= 2 * big_r**2 / gamma**2)
    assert np.all(p.mistakes <= p.mistake_bound(1.0 / gamma, 0.0) * (1 + 1e-12))
    # noisy labels: Cor 5 for many comparators (H over the mistake rounds); float64 sums of
    # ≤ 800 terms: 1e-9 relative slack
    noisy, U, _ = separable_stream(rng, R, T, d, k, flip=0.15)
    p = fresh(MulticlassPerceptron(variant=variant), spec)
    W = drive(p, spec, noisy)
    mist = mistakes_of(W, noisy)
    comps = [np.zeros_like(U), W[:, -1].reshape(R, k, d)]
    comps += [s * U for s in (1.0, 10.0, 100.0)] + [rng.standard_normal(U.shape)]
    for V in comps:
        bound = p.mistake_bound(np.linalg.norm(V, axis=(1, 2)), hinge_sum(noisy, V, rounds=mist))
        assert np.all(mist.sum(axis=1) <= bound * (1 + 1e-9))


def kesler_orthogonal(player, T, k, rng):
    """Adaptive: x_t = e_t (d = T); after seeing W_t the label is a lowest-scoring one. Every
    round is a mistake (coordinate t is untouched: all k scores tie at 0). Returns the labels."""
    spec = mc_spec(k, T, T)
    p = fresh(player, spec)
    labels = np.empty(T)
    mistakes = 0
    for t in range(T):
        x = np.zeros((1, T))
        x[0, t] = 1.0
        w = p.predict(x)
        scores = w.reshape(k, T)[:, t]
        low = np.flatnonzero(scores == scores.min())
        labels[t] = float(rng.choice(low))
        fb = feedback("multiclass_hinge", 0.0, w, RoundData(x=x, y=labels[t : t + 1]))
        mistakes += int(fb.prediction[0] != labels[t])
        p.update(fb)
    return p, mistakes, labels


@pytest.mark.parametrize("variant", ["max", "uniform"])
def test_adaptive_adversary_forces_a_mistake_every_round(variant):
    T, k = 40, 3
    p, mistakes, labels = kesler_orthogonal(
        MulticlassPerceptron(variant=variant), T, k, np.random.default_rng(2)
    )
    assert mistakes == T == p.mistakes[0]
    # U with u_{y_t,t} = (k−1)/k, u_{r,t} = −1/k: margin 1 every round (H = 0), ‖U‖² = T(k−1)/k;
    # X = √2: the bound 2T(k−1)/k ≥ T holds, within a factor 2(k−1)/k of tight
    U = np.full((k, T), -1.0 / k)
    U[labels.astype(int), np.arange(T)] = (k - 1.0) / k
    data = RoundData(x=np.eye(T)[None], y=labels[None])
    assert hinge_sum(data, U[None])[0] == pytest.approx(0.0, abs=1e-12)
    bound = float(p.mistake_bound(np.linalg.norm(U), 0.0)[0])
    assert T <= bound == pytest.approx(2 * T * (k - 1) / k, rel=1e-12)


def test_rejects_bad_parameters():
    for params, name in [
        ({"c": 0.0}, "c"),
        ({"c": float("nan")}, "c"),
        ({"variant": "all"}, "variant"),
    ]:
        with pytest.raises(ConfigError, match=f"'{name}'") as err:
            validate_params(MulticlassPerceptron(**params))
        assert err.value.component == "player multiclass_perceptron"


def test_end_to_end_with_the_engine():
    from arena import play
    from arena.adversaries.multiclass_separable_stream import MulticlassSeparableStream

    gamma = 0.1
    df = play(
        "multiclass_perceptron",
        MulticlassSeparableStream(n_classes=3, margin=gamma),
        horizon=400,
        replicates=2,
        metrics=["mistakes"],
    )
    last = df[df.t == df.t.max()]
    assert len(last) == 2 and np.all(last.value >= 1)
    assert np.all(last.value <= 2.0 / gamma**2)  # R = 1: 2R²/γ²
