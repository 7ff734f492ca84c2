"""separable_stream: margin γ, radius R, exact conditional law, label noise, comparator u*/γ."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import ks_2samp

from arena.adversaries.separable_stream import SeparableStream
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import prediction_loss
from arena.params import validate_params
from tests.helpers import clt_band, rngs
from tests.helpers.oco_adversaries import (
    assert_replicate_determinism,
    assert_split_invariant,
    blocks,
    fresh,
    gradient_norms,
    spec_for,
)

REL = 1e-12
"""Slack on ‖x‖ ≤ R and |⟨u*, x⟩| ≥ γ: the constructions hold exactly up to float64 rounding."""


@pytest.mark.parametrize("dim", [1, 2, 6])
def test_split_invariance_and_determinism(dim):
    adv = SeparableStream(margin=0.2, noise=0.1)
    spec = spec_for(adv, n_rep=3, horizon=40, dim=dim)
    assert_split_invariant(adv, spec)
    assert_replicate_determinism(adv, spec)


@pytest.mark.parametrize("dim", [1, 2, 5, 40])
def test_radius_margin_labels_and_comparator(dim):
    gamma, big_r = 0.3, 2.0
    adv = SeparableStream(margin=gamma, feature_radius=big_r)
    spec = spec_for(adv, n_rep=2, horizon=3000, dim=dim)
    a = fresh(adv, spec)
    rd = a.data_block(1, 3000)
    u = a.comparator()
    np.testing.assert_allclose(np.linalg.norm(u, axis=1), 1 / gamma, rtol=1e-14)
    assert np.all(np.linalg.norm(rd.x, axis=-1) <= big_r * (1 + REL))
    scores = np.einsum("rnd,rd->rn", rd.x, u)  # ⟨u*/γ, x⟩ = ⟨u*, x⟩/γ
    assert np.all(np.abs(scores) >= 1 - REL)
    np.testing.assert_array_equal(rd.y, np.sign(scores))
    # the comparator's hinge loss is 0 on clean data (margin ≥ 1 after the 1/γ scaling)
    hinge, _ = prediction_loss("hinge", scores, rd.y)
    assert np.all(hinge <= REL)
    # the margin is attained in the limit: the smallest |⟨u*, x⟩| is close to γ
    assert np.abs(scores).min() < 1.05


@pytest.mark.parametrize("dim", [3, 10])
def test_law_equals_rejection_sampling_from_the_ball(dim):
    # the construction must give the law of x uniform in the R-ball conditioned on |⟨u*,x⟩| ≥ γ:
    # compare |⟨u*, x⟩| and ‖x‖ with rejection samples (two-sample KS; p-value threshold 1e-3 at
    # fixed seeds)
    gamma, big_r, n = 0.25, 1.5, 6000
    adv = SeparableStream(margin=gamma, feature_radius=big_r)
    a = fresh(adv, spec_for(adv, n_rep=1, horizon=n, dim=dim), seed=5)
    x = a.data_block(1, n).x[0]
    u = a.comparator()[0] * gamma
    rng = np.random.default_rng(11)
    z = rng.standard_normal((8 * n, dim))
    pts = z / np.linalg.norm(z, axis=1, keepdims=True)
    pts *= big_r * rng.random(8 * n)[:, None] ** (1 / dim)
    ref = pts[np.abs(pts @ u) >= gamma][:n]
    assert ref.shape[0] == n
    assert ks_2samp(np.abs(x @ u), np.abs(ref @ u)).pvalue > 1e-3
    assert ks_2samp(np.linalg.norm(x, axis=1), np.linalg.norm(ref, axis=1)).pvalue > 1e-3
    # the orthogonal part is isotropic: its first coordinate after removing u* has mean 0
    perp = x - np.outer(x @ u, u)
    mean, half = clt_band(perp[:, 0])
    assert abs(mean) <= half


def test_label_noise_rate_and_features_independent_of_noise():
    clean = SeparableStream(margin=0.1)
    noisy = SeparableStream(margin=0.1, noise=0.25)
    spec = spec_for(clean, n_rep=2, horizon=8000, dim=4)
    a, b = blocks(clean, spec, [8000]), blocks(noisy, spec, [8000])
    np.testing.assert_array_equal(a.x, b.x)  # the noise draw is consumed either way
    flips = (a.y != b.y).astype(float).ravel()
    mean, half = clt_band(flips)
    assert abs(mean - 0.25) <= half


def test_perceptron_mistake_bound_on_clean_data():
    # Novikoff / Shalev-Shwartz 2007 Cor 5 (§5.1.1): at most (R/γ)² mistakes on data separable with
    # margin γ
    gamma, big_r = 0.2, 1.0
    adv = SeparableStream(margin=gamma, feature_radius=big_r)
    spec = spec_for(adv, n_rep=5, horizon=3000, dim=8)
    rd = blocks(adv, spec, [3000], seed=2)
    w = np.zeros((5, 8))
    mistakes = np.zeros(5)
    for t in range(3000):
        x, y = rd.x[:, t], rd.y[:, t]
        wrong = y * np.einsum("rd,rd->r", w, x) <= 0
        mistakes += wrong
        w += (wrong * y)[:, None] * x
    assert np.all(mistakes <= (big_r / gamma) ** 2)
    assert np.all(mistakes >= 1)


@pytest.mark.parametrize(
    ("loss", "domain", "radius", "expected"),
    [
        ("hinge", "unconstrained", None, 2.0),
        ("logistic", "ball", None, 2.0),
        ("absolute", "box", 1.0, 2.0),
        ("squared", "ball", 3.0, 2.0 * (3.0 * 2.0 + 1.0)),
        ("squared", "simplex", None, 2.0 * (2.0 + 1.0)),
        ("squared", "unconstrained", None, None),
        ("squared", "box", 1.0, None),
    ],
)
def test_gradient_bound_is_declared_and_holds(loss, domain, radius, expected):
    adv = SeparableStream(
        margin=0.5, feature_radius=2.0, noise=0.2, loss=loss, domain=domain, radius=radius
    )
    bound = adv.gradient_bound()
    assert bound == expected
    if domain == "ball" and radius is None:
        assert adv.declared_domain() == Domain("ball", 2.0)  # default radius 1/γ
    if bound is None:
        return
    spec = spec_for(adv, n_rep=2, horizon=500, dim=3)
    rd = blocks(adv, spec, [500])
    dom = spec.domain
    rng = np.random.default_rng(0)
    # worst points of the domain: along ±x (ball/unconstrained), the box corner sign(x), and
    # random points
    scale = dom.max_norm(3) if dom.bounded else 5.0
    unit = rd.x / np.linalg.norm(rd.x, axis=-1, keepdims=True)
    candidates = [scale * unit, -scale * unit, dom.project(rng.standard_normal(rd.x.shape) * 3)]
    if domain == "box":
        candidates += [np.sign(rd.x) * dom.radius, -np.sign(rd.x) * dom.radius]
    if domain == "simplex":
        e = np.zeros_like(rd.x)
        e[..., np.argmax(np.abs(rd.x[0, 0]))] = 1.0
        candidates.append(e)
    for w in candidates:
        w = dom.project(w.reshape(-1, 3)).reshape(w.shape)
        assert dom.contains(w.reshape(-1, 3)).all()
        assert np.all(gradient_norms(spec, rd, w) <= bound * (1 + REL))


@pytest.mark.parametrize(
    ("params", "parameter"),
    [
        ({"margin": 1.0}, "margin"),
        ({"margin": 0.0}, "margin"),
        ({"feature_radius": -1.0}, "feature_radius"),
        ({"noise": 1.5}, "noise"),
        ({"loss": "linear"}, "loss"),
        ({"domain": "sphere"}, "domain"),
    ],
)
def test_invalid_parameters(params, parameter):
    adv = SeparableStream(**params)
    with pytest.raises(ConfigError) as err:
        validate_params(adv)  # the declared constraints first, as the driver checks them
        spec = spec_for(SeparableStream(), n_rep=1, dim=2)
        adv.reset(spec, rngs(0, 1))  # then what depends on the game
    assert err.value.parameter == parameter and err.value.component == "adversary separable_stream"


def test_end_to_end_through_the_engine():
    from arena import play
    from arena.oco.testing import ProjectedGradient

    df = play(
        ProjectedGradient(eta=1.0),
        SeparableStream(margin=0.2),
        n_actions=5,
        horizon=300,
        replicates=3,
        metrics={"loss": {}, "mistakes": {}, "comparator_regret": {"c": [1.0]}},
    )
    last = df[df.t == 300]
    mistakes = last[last.metric == "mistakes"].value.to_numpy()
    assert np.all(mistakes >= 1) and np.all(mistakes < 300)
    # the comparator u*/γ has zero hinge loss: comparator regret at c = 1 equals the loss
    loss = last[last.metric == "loss"].value.to_numpy()
    comp = last[last.metric == "comparator_regret"].value.to_numpy()
    np.testing.assert_allclose(comp, loss, rtol=1e-12)
    assert math.isfinite(loss.sum())
