"""p-norm Perceptron: literal Fig 5.1 transcription with link (5.9), invariances, Cor 7."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.oco.losses import RoundData
from arena.params import validate_params
from arena.players._quasi_additive import pnorm_link
from arena.players.perceptron import Perceptron
from arena.players.pnorm_perceptron import PNormPerceptron
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


def literal_link(theta, p):
    """(5.9), Shalev-Shwartz 2007, §5.1.4: Link_i(θ) = sign(θ_i)|θ_i|^{p−1} / ‖θ‖_p^{p−2}; Link(0) =
    0 (no 0/0)."""
    norm = sum(abs(v) ** p for v in theta) ** (1.0 / p)
    if norm == 0.0:
        return [0.0] * len(theta)
    return [math.copysign(abs(v) ** (p - 1), v) / norm ** (p - 2) for v in theta]


def literal_pnorm(x, y, p, c=1.0):
    """Shalev-Shwartz 2007 Fig 5.1 (§5.1) with the p-norm link, one game, plain loops."""
    T, d = x.shape
    theta = [0.0] * d
    out = np.empty((T, d))
    for t in range(T):
        w = literal_link(theta, p)
        out[t] = w
        if y[t] * sum(w[i] * x[t, i] for i in range(d)) <= 0:
            theta = [theta[i] + y[t] * x[t, i] / c for i in range(d)]
    return out


@pytest.mark.parametrize(("p", "c"), [(2.0, 1.0), (3.0, 0.5), (5.5, 2.0)])
def test_transcription(p, c):
    rng = np.random.default_rng(int(10 * p))
    R, T, d = 3, 150, 5
    data = random_stream(rng, R, T, d)
    spec = spec_for(d, T, R)
    want = np.stack([literal_pnorm(data.x[r], data.y[r], p, c) for r in range(R)])
    got = drive(fresh(PNormPerceptron(p=p, c=c), spec), spec, data)
    # the player evaluates the link with ‖θ‖_p factored out (overflow-safe): same value up to
    # a few ulps of the largest entry
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    got = drive_blocks(fresh(PNormPerceptron(p=p, c=c), spec), spec, data, [1, 40, 41])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_p_two_is_the_perceptron():
    rng = np.random.default_rng(1)
    data = random_stream(rng, 2, 200, 4)
    spec = spec_for(4, 200, 2)
    a = drive(fresh(PNormPerceptron(p=2.0), spec), spec, data)
    b = drive(fresh(Perceptron(), spec), spec, data)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)  # Link = identity at p = 2


def test_auto_p_and_validation():
    p = fresh(PNormPerceptron(), spec_for(100, 3))
    assert p.p_value == pytest.approx(2 * math.log(100))
    assert fresh(PNormPerceptron(), spec_for(2, 3)).p_value == 2.0  # 2 ln 2 < 2: clipped
    for bad in (1.5, "x", float("inf")):
        with pytest.raises(ConfigError, match=r"'p': must be a real number in \[2, inf\) or one"):
            validate_params(PNormPerceptron(p=bad))


def test_invariant_to_c_and_positive_scaling():
    rng = np.random.default_rng(6)
    data, _ = separable_stream(rng, 2, 300, 6, gamma=0.05, flip=0.1)
    spec = spec_for(6, 300, 2)
    base = drive(fresh(PNormPerceptron(p=4.0), spec), spec, data)
    m0 = mistakes_of(base, data)
    for c, scale in [(9.0, 1.0), (1.0, 0.01), (0.3, 40.0)]:
        scaled = RoundData(x=scale * data.x, y=data.y)
        w = drive(fresh(PNormPerceptron(p=4.0, c=c), spec), spec, scaled)
        np.testing.assert_array_equal(mistakes_of(w, scaled), m0)
        want = base * scale / c  # the link is 1-homogeneous
        np.testing.assert_allclose(w, want, rtol=1e-10, atol=1e-12 * np.abs(want).max())


def test_link_is_overflow_safe_for_large_p():
    theta = np.array([[1e200, -3e199, 0.0], [1e-150, 0.0, -2e-150]])
    w = pnorm_link(theta, 60.0)
    assert np.all(np.isfinite(w))
    assert np.all(np.sign(w) == np.sign(theta))
    np.testing.assert_allclose(pnorm_link(theta * 7.0, 60.0), 7.0 * w, rtol=1e-12)


@pytest.mark.parametrize("p", [2.0, 3.0, 8.0])
def test_cor7_for_many_comparators(p):
    rng = np.random.default_rng(int(p))
    R, T, d = 3, 1500, 12
    data, u_star = separable_stream(rng, R, T, d, gamma=0.1, flip=0.1)
    spec = spec_for(d, T, R)
    pl = fresh(PNormPerceptron(p=p), spec)
    W = drive(pl, spec, data)
    mist = mistakes_of(W, data)
    m = mist.sum(axis=1)
    q = p / (p - 1.0)
    for u in [np.zeros((R, d)), W[:, -1], *[s * u_star for s in (1, 10, 30)]]:
        uq = (np.abs(u) ** q).sum(axis=1) ** (1 / q)
        h = hinge_sum(data, u, rounds=mist)
        assert np.all(m <= pl.mistake_bound(uq, h) * (1 + 1e-9))  # float sums: 1e-9 slack


def test_separable_bound():
    rng = np.random.default_rng(12)
    R, T, d, p = 3, 2000, 20, 6.0
    data, u = separable_stream(rng, R, T, d, gamma=0.2)
    spec = spec_for(d, T, R)
    pl = fresh(PNormPerceptron(p=p), spec)
    drive(pl, spec, data)
    margin = (data.y * np.einsum("rtd,rd->rt", data.x, u)).min(axis=1)
    q = p / (p - 1.0)
    uq = (np.abs(u / margin[:, None]) ** q).sum(axis=1) ** (1 / q)
    x_p = ((np.abs(data.x) ** p).sum(axis=2) ** (1 / p)).max(axis=1)
    assert np.all(pl.mistakes <= (p - 1) * x_p**2 * uq**2 * (1 + 1e-12))
