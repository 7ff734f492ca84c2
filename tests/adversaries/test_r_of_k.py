"""r_of_k: r-of-k Boolean targets with a constant −1 coordinate, the comparator of §5.1.2, noise."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import play
from arena.adversaries.r_of_k import ROfK
from arena.errors import ConfigError
from arena.players.perceptron import Perceptron
from arena.players.winnow import Winnow
from tests.helpers import clt_band
from tests.helpers.oco_adversaries import (
    assert_replicate_determinism,
    assert_split_invariant,
    fresh,
    spec_for,
)


@pytest.mark.parametrize(("r", "k", "dim"), [(1, 1, 2), (2, 4, 12), (3, 5, 30)])
def test_split_invariance_and_determinism(r, k, dim):
    adv = ROfK(r=r, k=k, noise=0.1)
    spec = spec_for(adv, n_rep=3, horizon=40, dim=dim)
    assert_split_invariant(adv, spec)
    assert_replicate_determinism(adv, spec)


@pytest.mark.parametrize(("r", "k", "density"), [(1, 3, 0.2), (2, 4, 0.5), (4, 4, 0.9)])
def test_labels_follow_the_relevant_bits_and_the_comparator_has_margin_one(r, k, density):
    adv = ROfK(r=r, k=k, density=density)
    a = fresh(adv, spec_for(adv, n_rep=3, horizon=500, dim=21))
    rd = a.data_block(1, 500)
    u = a.comparator()
    assert np.all(rd.x[..., -1] == -1.0)
    assert set(np.unique(rd.x[..., :-1])) <= {0.0, 1.0}
    relevant = u[:, :-1] > 0
    np.testing.assert_array_equal(relevant.sum(axis=1), k)
    on = np.einsum("rnd,rd->rn", rd.x[..., :-1], relevant.astype(float))
    np.testing.assert_array_equal(rd.y, np.where(on >= r, 1.0, -1.0))
    # Shalev-Shwartz 2007, §5.1.2: u/γ puts 2 on the relevant bits and 2r − 1 on the constant;
    # ⟨u/γ, x⟩ = 2s − 2r + 1 is an odd integer, so the margin is exactly 1 at the threshold
    np.testing.assert_array_equal(u[:, -1], 2 * r - 1)
    margins = rd.y * np.einsum("rnd,rd->rn", rd.x, u)
    assert margins.min() >= 1.0
    assert np.abs(u).sum(axis=1) == pytest.approx(1 / adv.margin())
    assert adv.margin() == pytest.approx(0.5 / (r + k - 0.5))


def test_density_and_noise_rates():
    adv = ROfK(r=2, k=4, density=0.3, noise=0.2)
    a = fresh(adv, spec_for(adv, n_rep=2, horizon=5000, dim=11))
    rd = a.data_block(1, 5000)
    mean, half = clt_band(rd.x[..., :-1].ravel())  # 4 sd of the mean of 100,000 bits
    assert abs(mean - 0.3) <= half
    clean = fresh(ROfK(r=2, k=4, density=0.3), spec_for(adv, n_rep=2, horizon=5000, dim=11))
    crd = clean.data_block(1, 5000)
    np.testing.assert_array_equal(crd.x, rd.x)  # the noise never changes the features
    mean, half = clt_band((crd.y != rd.y).ravel().astype(float))
    assert abs(mean - 0.2) <= half


def test_parameter_checks():
    with pytest.raises(ConfigError, match="≤ k"):
        fresh(ROfK(r=3, k=2), spec_for(ROfK(r=3, k=2), n_rep=1, horizon=5, dim=10))
    with pytest.raises(ConfigError, match="d ≥ k"):
        fresh(ROfK(r=1, k=5), spec_for(ROfK(r=1, k=5), n_rep=1, horizon=5, dim=5))


def test_winnow_and_perceptron_mistakes_within_their_bounds():
    # noise-free: self-tuned Winnow's Cor 6 gives 16(r + k − ½)² ln d; the Perceptron's Cor 5
    # gives X²‖u/γ‖² with X² ≤ d; the mistake_bound metric evaluates both at the comparator
    d, r, k = 41, 2, 3
    for player in (Winnow(variant="self_tuned"), Perceptron()):
        df = play(
            player,
            ROfK(r=r, k=k),
            n_actions=d,
            horizon=800,
            replicates=3,
            metrics=["mistakes", "mistake_bound"],
        )
        fin = df[df.t == 800]
        m = fin[fin.metric == "mistakes"].value.to_numpy()
        b = fin[fin.metric == "bound:mistakes"].value.to_numpy()
        assert np.all(m <= b) and np.all(m > 0)
        if isinstance(player, Winnow):
            np.testing.assert_allclose(b, 16 * (r + k - 0.5) ** 2 * math.log(d), rtol=1e-12)
        else:
            assert np.all(b <= d * (4 * k + (2 * r - 1) ** 2) + 1e-9)
