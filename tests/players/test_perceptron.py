"""Perceptron: literal Fig 5.1 transcription, invariances, Novikoff and Cor 5, the orthogonal
adversary (Shalev-Shwartz 2007, Theorem 4)."""

from __future__ import annotations

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import validate_params
from arena.players.perceptron import Perceptron
from tests.helpers.classification import (
    drive,
    drive_blocks,
    fresh,
    hinge_sum,
    mistakes_of,
    orthogonal_adversary,
    random_stream,
    separable_stream,
    spec_for,
)

SPLITS = ([], [1], [7, 8, 50], [33, 100, 101, 150])


def literal_perceptron(x, y, c=1.0):
    """Shalev-Shwartz 2007 Fig 5.1 (§5.1) with Link(θ) = θ, one game, plain loops.

    θ_1 = 0; w_t = θ_t; ŷ_t = sign⟨w_t, x_t⟩ (zero counts as a mistake);
    on a mistake θ_{t+1} = θ_t + (1/c) y_t x_t.
    """
    T, d = x.shape
    theta = [0.0] * d
    out = np.empty((T, d))
    for t in range(T):
        w = list(theta)
        out[t] = w
        s = sum(w[i] * x[t, i] for i in range(d))
        if y[t] * s <= 0:
            for i in range(d):
                theta[i] += y[t] * x[t, i] / c
    return out


@pytest.mark.parametrize("c", [1.0, 0.3])
def test_transcription_predict_update_and_blocks(c):
    rng = np.random.default_rng(11)
    R, T, d = 3, 200, 5
    data = random_stream(rng, R, T, d)
    spec = spec_for(d, T, R)
    want = np.stack([literal_perceptron(data.x[r], data.y[r], c) for r in range(R)])
    got = drive(fresh(Perceptron(c=c), spec), spec, data)
    # same float operations in a different order (vectorized over R): agreement to round-off
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)
    for splits in SPLITS:
        blocks = drive_blocks(fresh(Perceptron(c=c), spec), spec, data, splits)
        np.testing.assert_allclose(blocks, want, rtol=0, atol=1e-10)


def test_lecture_form_is_c_equal_one():
    # Srebro, Lecture 16: w_{t+1} = w_t + [[y_t⟨w_t, x_t⟩ ≤ 0]] y_t x_t, w_1 = 0
    rng = np.random.default_rng(3)
    data = random_stream(rng, 1, 100, 4)
    w = np.zeros(4)
    ws = []
    for t in range(100):
        ws.append(w.copy())
        if data.y[0, t] * (w @ data.x[0, t]) <= 0:
            w = w + data.y[0, t] * data.x[0, t]
    spec = spec_for(4, 100)
    np.testing.assert_allclose(drive(fresh(Perceptron(), spec), spec, data)[0], np.array(ws))


def test_invariant_to_c_and_to_positive_scaling():
    rng = np.random.default_rng(5)
    R, T, d = 2, 300, 6
    data, _ = separable_stream(rng, R, T, d, gamma=0.05, flip=0.1)
    spec = spec_for(d, T, R)
    base = drive(fresh(Perceptron(c=1.0), spec), spec, data)
    m0 = mistakes_of(base, data)
    for c, scale in [(7.0, 1.0), (0.01, 1.0), (1.0, 3.5), (0.2, 1e-3)]:
        scaled = RoundData(x=scale * data.x, y=data.y)
        w = drive(fresh(Perceptron(c=c), spec), spec, scaled)
        np.testing.assert_array_equal(mistakes_of(w, scaled), m0)
        # w_t = (scale/c) Σ_M y x: the same vector up to a positive factor (summation round-off
        # is relative to the largest entry, hence the atol)
        want = base * scale / c
        np.testing.assert_allclose(w, want, rtol=1e-10, atol=1e-12 * np.abs(want).max())


def test_conservative_never_moves_on_correct_rounds():
    rng = np.random.default_rng(8)
    data = random_stream(rng, 2, 150, 3)
    spec = spec_for(3, 150, 2)
    W = drive(fresh(Perceptron(), spec), spec, data)
    m = mistakes_of(W, data)
    moved = np.any(W[:, 1:] != W[:, :-1], axis=2)
    assert np.all(moved <= m[:, :-1])  # only mistake rounds move w
    assert np.all(moved == m[:, :-1])  # and every mistake does (x_t ≠ 0 a.s.)


@pytest.mark.parametrize("gamma", [0.3, 0.1, 0.05])
def test_novikoff_on_separable_data(gamma):
    rng = np.random.default_rng(int(gamma * 100))
    R, T, d, radius = 4, 3000, 10, 2.0
    data, u = separable_stream(rng, R, T, d, gamma=gamma, radius=radius)
    spec = spec_for(d, T, R)
    p = fresh(Perceptron(), spec)
    W = drive(p, spec, data)
    margin = (data.y * np.einsum("rtd,rd->rt", data.x, u)).min(axis=1)
    big_r = np.linalg.norm(data.x, axis=2).max(axis=1)
    assert np.all(margin >= gamma * radius * (1 - 1e-12))
    m = mistakes_of(W, data).sum(axis=1)
    np.testing.assert_array_equal(m, p.mistakes)
    assert np.all(m <= (big_r / margin) ** 2)
    assert np.all(m >= 1)
    # Cor 5 with u/margin (hinge 0 on every round) is Novikoff with X over the mistake rounds
    assert np.all(m <= p.mistake_bound(1.0 / margin, 0.0) + 1e-9)


def test_cor5_relative_bound_on_noisy_data_for_many_comparators():
    rng = np.random.default_rng(21)
    R, T, d = 4, 2000, 8
    data, u_star = separable_stream(rng, R, T, d, gamma=0.1, flip=0.15)
    spec = spec_for(d, T, R)
    p = fresh(Perceptron(), spec)
    W = drive(p, spec, data)
    mist = mistakes_of(W, data)
    comps = [np.zeros((R, d)), W[:, -1]]
    comps += [s * u_star for s in (0.5, 1.0, 5.0, 20.0, 100.0)]
    comps += [rng.standard_normal((R, d)) * s for s in (0.1, 1.0, 10.0)]
    for u in comps:
        h = hinge_sum(data, u, 1.0, rounds=mist)
        bound = p.mistake_bound(np.linalg.norm(u, axis=1), h)
        # bound evaluated in float64 from sums of T terms: 1e-9 relative slack
        assert np.all(mist.sum(axis=1) <= bound * (1 + 1e-9)), (u, bound)


def test_orthogonal_adversary_forces_a_mistake_every_round_and_cor5_is_tight():
    T = 60
    m, labels = orthogonal_adversary(Perceptron(), T)
    assert m == T
    assert np.all(labels == -1.0)  # w_{t,t} = 0 always, so the adversary always says −1
    # u = (y_1..y_T) has zero hinge and X = 1: Cor 5 gives X²‖u‖² = T — attained
    spec = spec_for(T, T)
    p = fresh(Perceptron(), spec)
    x = np.eye(T)[None]
    drive(p, spec, RoundData(x=x, y=labels[None]))
    assert float(p.mistake_bound(np.sqrt(T), 0.0)[0]) == pytest.approx(T, rel=1e-12)


def test_rejects_bad_c():
    for bad in (0.0, -1.0, float("nan"), "x"):
        with pytest.raises(ConfigError, match=r"'c': must be a real number in \(0, inf\)") as err:
            validate_params(Perceptron(c=bad))
        assert err.value.component == "player perceptron"


def test_unit_test_params_reset():
    spec = spec_for(3, 5, 2, domain=Domain())
    for params in Perceptron._unit_test_params():
        p = fresh(Perceptron(**params), spec)
        assert p.predict().shape == (2, 3)


def test_end_to_end_with_the_engine():
    import arena.adversaries.orthogonal_hinge as orthogonal
    import arena.adversaries.separable_stream as separable
    from arena import play

    gamma = 0.2
    df = play(
        Perceptron(),
        separable.SeparableStream(margin=gamma),
        n_actions=6,
        horizon=2000,
        replicates=4,
        metrics=["mistakes"],
    )
    last = df[df.t == df.t.max()]
    assert len(last) == 4
    assert np.all(last.value <= (1.0 / gamma) ** 2)  # Novikoff, R = 1
    df = play(
        Perceptron(c=3.0),
        orthogonal.OrthogonalHinge(),
        n_actions=40,
        horizon=40,
        metrics=["mistakes"],
    )
    assert float(df.value.iloc[-1]) == 40.0  # Shalev-Shwartz 2007, §3.7: a mistake every round
